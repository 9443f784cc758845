"""Scalar workloads, where the library's overhead per primitive call is all there is to time:
a 1000-op scalar chain, and the k-th derivative of tanh by nested ``grad``."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload, peer_impls

# --- a 1000-op scalar chain ------------------------------------------------------------

OPS_PER_BLOCK = 4


def chain(ns, x, blocks):
    """``blocks`` repetitions of x <- x + 0.01 tanh(sin(x)): four primitive calls each, two of
    them binary with both sides traced. The derivative stays O(1) over any length."""
    for _ in range(blocks):
        y = ns.sin(x)
        y = ns.tanh(y)
        y = y * 0.01
        x = x + y
    return x


def chain_grad_by_hand(x, blocks):
    """d chain / dx by hand-written backprop, in numpy."""
    saved = []
    for _ in range(blocks):
        t = numpy.tanh(numpy.sin(x))
        saved.append((x, t))
        x = x + t * 0.01
    g = 1.0
    for x0, t in reversed(saved):
        g = g + g * (0.01 * (1.0 - t * t) * numpy.cos(x0))
    return g


def build_scalar_chain(backends, size):
    blocks = 250 if size == "full" else 5
    ops = blocks * OPS_PER_BLOCK
    x = 0.3
    fg, np_ = backends["fgrad"], backends["numpy"]
    value, deriv = fg.value_and_grad(lambda v: chain(fg.ns, v, blocks))(x)
    refs = {"deriv": deriv, "forward": value}

    def grad_of(b):
        g = b.grad(lambda v: chain(b.ns, v, blocks))
        xb = b.asarray(x)
        return lambda: g(xb)

    def forward_of(b):
        if b.name in ("jax.jit", "fgrad.jit"):
            return None  # a compiled forward is no tracer-free path
        xb = b.asarray(x)
        return lambda: chain(b.ns, xb, blocks)

    x64 = numpy.float64(x)
    grad_case = Case("grad", [Impl(FGRAD, fg, grad_of(fg)),
                              Impl(FWD, np_, lambda: chain(numpy, x64, blocks), "forward"),
                              Impl(HAND, np_, lambda: chain_grad_by_hand(x64, blocks))]
                     + peer_impls(backends, grad_of), refs, ops=ops)
    # the same chain with no transform running: fgrad.numpy's fast path on plain values
    plain_case = Case("forward, no tracer",
                      [Impl(FGRAD, fg, forward_of(fg), "forward"),
                       Impl(FWD, np_, lambda: chain(numpy, x64, blocks), "forward")]
                      + peer_impls(backends, forward_of, "forward"), refs, ops=ops)
    return [grad_case, plain_case]


SCALAR_CHAIN = Workload(
    "scalar_chain", "1000-op scalar chain",
    "grad of 250 x (sin, tanh, *, +) on a float64 scalar: the cost of one primitive call",
    build_scalar_chain)


# --- k-th derivative of tanh by nested grad ----------------------------------------------

def tanh_derivative_polys(kmax):
    """Coefficients (highest first) of P_k with tanh^(k)(x) = P_k(tanh x):
    P_0(t) = t, P_{k+1}(t) = P_k'(t) (1 - t^2)."""
    p = numpy.polynomial.Polynomial([0.0, 1.0])
    one_minus_t2 = numpy.polynomial.Polynomial([1.0, 0.0, -1.0])
    polys = []
    for _ in range(kmax):
        p = p.deriv() * one_minus_t2
        polys.append([float(c) for c in p.coef[::-1]])
    return polys


def _horner(coefs, t):
    acc = 0.0
    for c in coefs:
        acc = acc * t + c
    return acc


def nested_grad(b, k):
    f = b.ns.tanh
    for _ in range(k):
        f = b.grad(f)
    return f


def build_tanh_derivatives(backends, size):
    kmax = 6 if size == "full" else 3
    x = 0.4
    fg, np_ = backends["fgrad"], backends["numpy"]
    polys = tanh_derivative_polys(kmax)
    forward = fg.value_and_grad(fg.ns.tanh)(x)[0]
    cases = []
    for k in range(1, kmax + 1):
        refs = {"deriv": nested_grad(fg, k)(x), "forward": forward}

        def of(b, k=k):
            f = nested_grad(b, k)
            xb = b.asarray(x)
            return lambda: f(xb)

        coefs = polys[k - 1]
        impls = [Impl(FGRAD, fg, of(fg)),
                 Impl(FWD, np_, lambda: numpy.tanh(x), "forward"),
                 Impl(HAND, np_, lambda c=coefs: _horner(c, numpy.tanh(x)))]
        cases.append(Case(f"k={k}", impls + peer_impls(backends, of), refs, rtol=1e-9,
                          atol=1e-12))
    return cases


def summarise_tanh(case_results):
    """Per backend: the time of the highest order and the growth per order,
    (t_kmax / t_1) ** (1 / (kmax - 1))."""
    ks = [r for r in case_results if r.name.startswith("k=")]
    first, last = ks[0], ks[-1]
    out = {}
    for label, st in last.stats.items():
        if label in first.stats and label not in (FWD,):
            growth = (st.median / first.stats[label].median) ** (1.0 / (len(ks) - 1))
            out[label] = {f"{last.name} median (ms)": st.median * 1e3,
                          "growth per order (x)": growth}
    return out


TANH_DERIVATIVES = Workload(
    "tanh_derivatives", "k-th derivative of tanh by nested grad",
    "grad(grad(...grad(tanh))) at x = 0.4 for k = 1..6; numpy hand = P_k(tanh x) in closed form",
    build_tanh_derivatives, summarise_tanh)
