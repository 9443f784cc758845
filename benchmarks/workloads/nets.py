"""Small networks and Python loops: a tanh MLP (two sizes, parameters as a pytree), a
200-step RNN, and a 200-step logistic-regression training loop."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload, peer_impls

# --- tanh MLP ------------------------------------------------------------------------------

DEPTH = 3


def mlp_params(rng, width, depth=DEPTH):
    return {"W": [rng.standard_normal((width, width)) / numpy.sqrt(width) for _ in range(depth)],
            "b": [0.1 * rng.standard_normal(width) for _ in range(depth)]}


def mlp_loss(ns, params, x, y):
    """Mean squared error of a ``DEPTH``-layer MLP, tanh between the layers."""
    h = x
    for i in range(DEPTH):
        h = h @ params["W"][i] + params["b"][i]
        if i < DEPTH - 1:
            h = ns.tanh(h)
    d = h - y
    return ns.mean(d * d)


def mlp_value_and_grad_by_hand(params, x, y):
    Ws, bs = params["W"], params["b"]
    hs, h = [x], x
    for i in range(DEPTH):
        h = h @ Ws[i] + bs[i]
        if i < DEPTH - 1:
            h = numpy.tanh(h)
        hs.append(h)
    d = h - y
    loss = numpy.mean(d * d)
    g = (2.0 / d.size) * d
    gW, gb = [None] * DEPTH, [None] * DEPTH
    for i in reversed(range(DEPTH)):
        gW[i] = hs[i].T @ g
        gb[i] = g.sum(axis=0)
        if i > 0:
            g = (g @ Ws[i].T) * (1.0 - hs[i] * hs[i])
    return loss, {"W": gW, "b": gb}


def _mlp_case(backends, width, batch, seed):
    rng = numpy.random.default_rng(seed)
    params = mlp_params(rng, width)
    x = rng.standard_normal((batch, width))
    y = rng.standard_normal((batch, width))
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        vg = b.value_and_grad(lambda p, xx, yy: mlp_loss(b.ns, p, xx, yy))
        pb, xb, yb = b.asarray(params), b.asarray(x), b.asarray(y)
        return lambda: vg(pb, xb, yb)

    value, grads = of(fg)()
    refs = {"deriv": (value, grads), "forward": value}
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, lambda: mlp_loss(numpy, params, x, y), "forward"),
             Impl(HAND, np_, lambda: mlp_value_and_grad_by_hand(params, x, y))]
    return Case(f"width {width}, batch {batch}", impls + peer_impls(backends, of), refs,
                rtol=1e-7, atol=1e-10)


def build_mlp(backends, size):
    if size == "full":
        return [_mlp_case(backends, 16, 8, 0), _mlp_case(backends, 256, 128, 1)]
    return [_mlp_case(backends, 4, 3, 0), _mlp_case(backends, 6, 5, 1)]


MLP = Workload(
    "mlp", "value_and_grad of a tanh MLP",
    f"{DEPTH} layers width x width, tanh between, MSE loss; gradient for a dict of lists of "
    "weights and biases (a pytree)", build_mlp)


# --- 200-step RNN ------------------------------------------------------------------------

def rnn_loss(ns, params, xs, h0):
    """h <- tanh(h W + x_t U + b) over the steps (a Python loop); loss = sum(h_T^2)."""
    h = h0
    for x_t in xs:
        h = ns.tanh(h @ params["W"] + x_t @ params["U"] + params["b"])
    return ns.sum(h * h)


def rnn_grad_by_hand(params, xs, h0):
    W, U, b = params["W"], params["U"], params["b"]
    hs, h = [h0], h0
    for x_t in xs:
        h = numpy.tanh(h @ W + x_t @ U + b)
        hs.append(h)
    g = 2.0 * h
    gW, gU, gb = numpy.zeros_like(W), numpy.zeros_like(U), numpy.zeros_like(b)
    for t in reversed(range(len(xs))):
        da = g * (1.0 - hs[t + 1] * hs[t + 1])
        gW += numpy.outer(hs[t], da)
        gU += numpy.outer(xs[t], da)
        gb += da
        g = W @ da
    return {"W": gW, "U": gU, "b": gb}


def build_rnn(backends, size):
    steps, hidden, n_in = (200, 32, 8) if size == "full" else (5, 4, 3)
    rng = numpy.random.default_rng(2)
    params = {"W": 0.5 * rng.standard_normal((hidden, hidden)) / numpy.sqrt(hidden),
              "U": rng.standard_normal((n_in, hidden)) / numpy.sqrt(n_in),
              "b": 0.1 * rng.standard_normal(hidden)}
    xs = [rng.standard_normal(n_in) for _ in range(steps)]
    h0 = numpy.zeros(hidden)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        g = b.grad(lambda p, xx, hh: rnn_loss(b.ns, p, xx, hh))
        pb, xb, hb = b.asarray(params), b.asarray(xs), b.asarray(h0)
        return lambda: g(pb, xb, hb)

    value, grads = fg.value_and_grad(lambda p: rnn_loss(fg.ns, p, xs, h0))(params)
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, lambda: rnn_loss(numpy, params, xs, h0), "forward"),
             Impl(HAND, np_, lambda: rnn_grad_by_hand(params, xs, h0))]
    return [Case("grad", impls + peer_impls(backends, of), {"deriv": grads, "forward": value},
                 ops=5 * steps + 2)]


RNN = Workload(
    "rnn", "200-step Python-loop RNN, hidden 32",
    "grad of sum(h_T^2) w.r.t. {W, U, b}; each step tanh(h W + x_t U + b), input 8",
    build_rnn)


# --- 200-step logistic-regression training loop ------------------------------------------

def logreg_loss(ns, w, X, y):
    """Mean logistic loss, labels y in {-1, +1}."""
    z = (X @ w) * y
    return ns.mean(ns.log(1.0 + ns.exp(-z)))


def logreg_grad_by_hand(w, X, y):
    z = (X @ w) * y
    return -(X.T @ (y / (1.0 + numpy.exp(z)))) / len(y)


def train(grad_fn, w, X, y, steps, lr):
    for _ in range(steps):
        w = w - lr * grad_fn(w, X, y)
    return w


def build_logreg(backends, size):
    steps, n, d = (200, 256, 16) if size == "full" else (5, 10, 3)
    lr = 0.5
    rng = numpy.random.default_rng(3)
    X = rng.standard_normal((n, d))
    y = numpy.sign(X @ rng.standard_normal(d) + 0.5 * rng.standard_normal(n))
    w0 = numpy.zeros(d)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        g = b.grad(lambda w, XX, yy: logreg_loss(b.ns, w, XX, yy))
        wb, Xb, yb = b.asarray(w0), b.asarray(X), b.asarray(y)
        return lambda: train(g, wb, Xb, yb, steps, lr)

    def forwards():  # the forward passes alone: the loss evaluated once per step
        for _ in range(steps):
            loss = logreg_loss(numpy, w0, X, y)
        return loss

    refs = {"deriv": of(fg)(), "forward": fg.value_and_grad(
        lambda w: logreg_loss(fg.ns, w, X, y))(w0)[0]}
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, forwards, "forward"),
             Impl(HAND, np_, lambda: train(logreg_grad_by_hand, w0, X, y, steps, lr))]
    return [Case("train", impls + peer_impls(backends, of), refs, ops=7 * steps)]


LOGREG = Workload(
    "logreg", "200-step logistic-regression training loop",
    "200 steps of w <- w - 0.5 grad(loss)(w), X 256 x 16; the result compared is the final w",
    build_logreg)
