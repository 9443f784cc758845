"""Per-example gradients: one gradient per data row of a 2-layer tanh MLP (width 64, batch
128) by ``vmap(grad)``, beside one gradient of the mean loss (what the per-example gradients
should cost about as much as) and the loop of ``grad`` calls (what users write without vmap)."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload

MEAN, LOOP = "fgrad mean grad", "fgrad loop"


def example_loss(ns, params, x, y):
    h = ns.tanh(x @ params["w1"] + params["b1"])
    out = h @ params["w2"] + params["b2"]
    return ns.sum((out - y) ** 2)


def per_example_by_hand(params, X, Y):
    """Each row's gradient by hand-written backprop, batched over the rows in numpy."""
    h = numpy.tanh(X @ params["w1"] + params["b1"])
    dout = 2.0 * (h @ params["w2"] + params["b2"] - Y)
    da = (dout @ params["w2"].T) * (1.0 - h * h)
    return {"w1": X[:, :, None] * da[:, None, :], "b1": da,
            "w2": h[:, :, None] * dout[:, None, :], "b2": dout}


def build_per_example(backends, size):
    width, batch, n_in = (64, 128, 16) if size == "full" else (4, 5, 3)
    rng = numpy.random.default_rng(8)
    params = {"w1": rng.standard_normal((n_in, width)) / numpy.sqrt(n_in),
              "b1": numpy.zeros(width),
              "w2": rng.standard_normal((width, 1)) / numpy.sqrt(width), "b2": numpy.zeros(1)}
    X = rng.standard_normal((batch, n_in))
    Y = numpy.sin(X.sum(axis=1, keepdims=True))
    fg, np_ = backends["fgrad"], backends["numpy"]
    import fgrad
    fnp = fg.ns

    per_example = fgrad.vmap(fgrad.grad(lambda p, x, y: example_loss(fnp, p, x, y)),
                             in_axes=(None, 0, 0))
    one = fgrad.grad(lambda p, x, y: example_loss(fnp, p, x, y))
    mean = fgrad.value_and_grad(
        lambda p: fnp.mean(fgrad.vmap(lambda x, y: example_loss(fnp, p, x, y))(X, Y)))

    def loop():
        grads = [one(params, X[i], Y[i]) for i in range(batch)]
        return {k: numpy.stack([g[k] for g in grads]) for k in params}

    def forward():  # the per-example losses, by numpy, batched by hand
        h = numpy.tanh(X @ params["w1"] + params["b1"])
        return ((h @ params["w2"] + params["b2"] - Y) ** 2).sum(axis=1)

    refs = {"deriv": loop(), "mean": mean(params),
            "forward": fgrad.vmap(lambda x, y: example_loss(fnp, params, x, y))(X, Y)}
    impls = [Impl(FGRAD, fg, lambda: per_example(params, X, Y)),
             Impl(MEAN, fg, lambda: mean(params), "mean"),
             Impl(LOOP, fg, loop),
             Impl(FWD, np_, forward, "forward"),
             Impl(HAND, np_, lambda: per_example_by_hand(params, X, Y))]
    return [Case(f"width {width}, batch {batch}", impls, refs, rtol=1e-10, atol=1e-12)]


PER_EXAMPLE = Workload(
    "per_example", "per-example gradients of a 2-layer tanh MLP",
    "vmap(grad(loss), in_axes=(None, 0, 0)): one gradient per row, width 64, batch 128; beside "
    "one value_and_grad of the mean loss and the loop of grad calls", build_per_example)
