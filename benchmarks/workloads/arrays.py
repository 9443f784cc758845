"""Workloads where numpy's own work dominates: a 20-op elementwise chain on 1e6 floats (time
and peak memory of the gradient over the forward pass) and a chain of 10 matmuls 512 x 512."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload, peer_impls

# --- 20-op elementwise chain on 1e6 elements ------------------------------------------------

BLOCKS = 5  # of 4 ops each


def elementwise_chain(ns, x):
    for _ in range(BLOCKS):
        x = ns.sin(x)
        x = x * 1.5
        x = x + 0.5
        x = ns.tanh(x)
    return ns.sum(x)


def elementwise_grad_by_hand(x):
    saved = []
    for _ in range(BLOCKS):
        t = numpy.tanh(numpy.sin(x) * 1.5 + 0.5)
        saved.append((x, t))
        x = t
    g = numpy.ones_like(x)
    for x0, t in reversed(saved):
        g = g * (1.0 - t * t)
        g *= 1.5
        g *= numpy.cos(x0)
    return g


def build_elementwise(backends, size):
    n = 1_000_000 if size == "full" else 1000
    x = numpy.random.default_rng(4).uniform(-2.0, 2.0, n)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        g = b.grad(lambda v: elementwise_chain(b.ns, v))
        xb = b.asarray(x)
        return lambda: g(xb)

    value, deriv = fg.value_and_grad(lambda v: elementwise_chain(fg.ns, v))(x)
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, lambda: elementwise_chain(numpy, x), "forward"),
             Impl(HAND, np_, lambda: elementwise_grad_by_hand(x))]
    impls += peer_impls(backends, of)
    memory = tuple(i.label for i in impls
                   if i.label in (FGRAD, FWD, HAND, "autograd", "fgrad.jit"))
    return [Case("grad", impls, {"deriv": deriv, "forward": value}, rtol=1e-9, atol=1e-12,
                 memory=memory,
                 notes=["peak memory by tracemalloc, which sees numpy's buffers only "
                        "(not torch's or JAX's)"])]


ELEMENTWISE = Workload(
    "elementwise_1e6", "20-op elementwise chain on 1e6 floats",
    "grad of sum(5 x (sin, *1.5, +0.5, tanh)) on 1e6 float64: time and peak memory over the "
    "forward pass", build_elementwise)


# --- a chain of 10 matmuls 512 x 512 ------------------------------------------------------

def matmul_chain(ns, As, X):
    H = X
    for A in As:
        H = H @ A
    return ns.sum(H)


def matmul_grad_by_hand(As, X):
    Hs, H = [X], X
    for A in As:
        H = H @ A
        Hs.append(H)
    G = numpy.ones_like(H)
    grads = [None] * len(As)
    for i in reversed(range(len(As))):
        grads[i] = Hs[i].T @ G
        if i > 0:
            G = G @ As[i].T
    return grads


def build_matmul(backends, size):
    n, k = (512, 10) if size == "full" else (6, 3)
    rng = numpy.random.default_rng(5)
    As = [rng.standard_normal((n, n)) / numpy.sqrt(n) for _ in range(k)]
    X = rng.standard_normal((n, n))
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        g = b.grad(lambda a, xx: matmul_chain(b.ns, a, xx))
        Ab, Xb = b.asarray(As), b.asarray(X)
        return lambda: g(Ab, Xb)

    value, deriv = fg.value_and_grad(lambda a: matmul_chain(fg.ns, a, X))(As)
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, lambda: matmul_chain(numpy, As, X), "forward"),
             Impl(HAND, np_, lambda: matmul_grad_by_hand(As, X))]
    return [Case("grad", impls + peer_impls(backends, of), {"deriv": deriv, "forward": value},
                 rtol=1e-7, atol=1e-8)]


MATMUL = Workload(
    "matmul_chain", "chain of 10 matmuls 512 x 512",
    "grad of sum(X A1 ... A10) w.r.t. the list [A1..A10]: 10 forward and 19 backward matmuls",
    build_matmul)
