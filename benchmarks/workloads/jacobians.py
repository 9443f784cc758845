"""Second order and Jacobians: the Hessian of a 50-dim Rosenbrock, and jacfwd/jacrev of an
R^100 -> R^100 layer."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload, peer_impls


def rosenbrock(ns, x):
    a = x[1:] - x[:-1] * x[:-1]
    b = 1.0 - x[:-1]
    return ns.sum(100.0 * a * a + b * b)


def rosenbrock_hessian_by_hand(x):
    """Closed form: tridiagonal."""
    n = x.size
    h = numpy.zeros((n, n))
    d = numpy.zeros(n)
    d[:-1] += 1200.0 * x[:-1] ** 2 - 400.0 * x[1:] + 2.0
    d[1:] += 200.0
    h[numpy.arange(n), numpy.arange(n)] = d
    off = -400.0 * x[:-1]
    h[numpy.arange(n - 1), numpy.arange(1, n)] = off
    h[numpy.arange(1, n), numpy.arange(n - 1)] = off
    return h


def build_rosenbrock(backends, size):
    n = 50 if size == "full" else 5
    x = numpy.random.default_rng(6).uniform(-1.5, 1.5, n)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        h = b.hessian(lambda v: rosenbrock(b.ns, v))
        xb = b.asarray(x)
        return lambda: h(xb)

    refs = {"deriv": of(fg)(), "forward": fg.value_and_grad(lambda v: rosenbrock(fg.ns, v))(x)[0]}
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, lambda: rosenbrock(numpy, x), "forward"),
             Impl(HAND, np_, lambda: rosenbrock_hessian_by_hand(x))]
    return [Case("hessian", impls + peer_impls(backends, of), refs, rtol=1e-9, atol=1e-9)]


ROSENBROCK = Workload(
    "rosenbrock_hessian", "hessian of a 50-dim Rosenbrock",
    "hessian(sum(100 (x[1:] - x[:-1]^2)^2 + (1 - x[:-1])^2)) at one point; numpy hand = the "
    "tridiagonal closed form", build_rosenbrock)


def layer(ns, W, b, x):
    return ns.tanh(W @ x + b)


def build_layer_jacobian(backends, size):
    n = 100 if size == "full" else 5
    rng = numpy.random.default_rng(7)
    W = rng.standard_normal((n, n)) / numpy.sqrt(n)
    bias = 0.1 * rng.standard_normal(n)
    x = rng.standard_normal(n)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def by_hand():
        y = numpy.tanh(W @ x + bias)
        return (1.0 - y * y)[:, None] * W

    cases = []
    for mode in ("jacfwd", "jacrev"):
        def of(b, mode=mode):
            Wb, bb, xb = b.asarray(W), b.asarray(bias), b.asarray(x)
            jac = getattr(b, mode)(lambda v: layer(b.ns, Wb, bb, v))
            return lambda: jac(xb)

        refs = {"deriv": of(fg)(), "forward": numpy.tanh(W @ x + bias)}
        impls = [Impl(FGRAD, fg, of(fg)),
                 Impl(FWD, np_, lambda: layer(numpy, W, bias, x), "forward"),
                 Impl(HAND, np_, by_hand)]
        cases.append(Case(mode, impls + peer_impls(backends, of), refs, rtol=1e-9, atol=1e-12))
    return cases


LAYER_JACOBIAN = Workload(
    "layer_jacobian", "jacfwd and jacrev of an R^100 -> R^100 layer",
    "the 100 x 100 Jacobian of tanh(W x + b) w.r.t. x; numpy hand = diag(1 - y^2) W",
    build_layer_jacobian)
