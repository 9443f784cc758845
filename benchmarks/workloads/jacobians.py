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


def cox_loglik(ns, exp, beta, X, events):
    """Cox's partial log-likelihood, rows sorted by decreasing time (no ties), so that row
    i's risk set is rows 0..i: the model lifelines fits, written as it writes it."""
    eta = X @ beta
    return ns.sum(events * (eta - ns.log(ns.cumsum(exp(eta)))))


def cox_hessian_by_hand(beta, X, events):
    """Closed form: -sum_i d_i (Q_i / W_i - S_i S_i^T / W_i^2) over risk-set sums of w = e^eta,
    w x and w x x^T."""
    w = numpy.exp(X @ beta)
    W = numpy.cumsum(w)
    S = numpy.cumsum(w[:, None] * X, axis=0)
    Q = numpy.cumsum(w[:, None, None] * X[:, :, None] * X[:, None, :], axis=0)
    terms = Q / W[:, None, None] - S[:, :, None] * S[:, None, :] / (W * W)[:, None, None]
    return -numpy.einsum("i,ijk->jk", events, terms)


def _exp_with_a_vjp_only(b):
    """``exp`` as a library written for autograd defines its own (lifelines' ``safe_exp``):
    a primitive with a VJP rule and no JVP rule, in fgrad's and in autograd's API."""
    if b.name == "fgrad":
        import fgrad
        p = fgrad.primitive(numpy.exp, name="bench_exp_with_a_vjp_only")
        fgrad.defvjp(p, lambda g, ans, x: g * ans)
        return p
    if b.name == "autograd":
        from autograd.extend import defvjp, primitive
        p = primitive(numpy.exp)
        defvjp(p, lambda ans, x: lambda g: g * ans)
        return p
    return None  # (JAX and torch have no VJP-only primitive that their hessian accepts)


REV_REV, BUILT_IN = "fgrad rev-over-rev", "fgrad built-in exp"


def build_vjp_only_hessian(backends, size):
    n, d = (300, 10) if size == "full" else (8, 3)
    rng = numpy.random.default_rng(8)
    X = rng.standard_normal((n, d)) / numpy.sqrt(d)
    events = (rng.uniform(size=n) < 0.7).astype(float)
    beta = 0.3 * rng.standard_normal(d)
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b, transform=None, exp=None):
        exp = exp or _exp_with_a_vjp_only(b)
        if exp is None:
            return None
        h = (transform or b.hessian)(lambda v: cox_loglik(b.ns, exp, v, X, events))
        return lambda: h(beta)

    import fgrad
    refs = {"deriv": of(fg)(), "forward": cox_loglik(numpy, numpy.exp, beta, X, events)}
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(REV_REV, fg, of(fg, lambda f: fgrad.jacrev(fgrad.jacrev(f)))),
             Impl(BUILT_IN, fg, of(fg, exp=fg.ns.exp)),
             Impl(FWD, np_, lambda: cox_loglik(numpy, numpy.exp, beta, X, events), "forward"),
             Impl(HAND, np_, lambda: cox_hessian_by_hand(beta, X, events))]
    return [Case("hessian", impls + peer_impls(backends, of, skip=("fgrad.jit",)), refs,
                 rtol=1e-9, atol=1e-9)]


VJP_ONLY_HESSIAN = Workload(
    "vjp_only_hessian", "hessian through a primitive with a VJP rule only",
    "hessian of a Cox partial log-likelihood (300 rows, 10 coefficients) whose exp is a user "
    "primitive with a VJP rule only, as libraries written for autograd define them; beside the "
    "same with fgrad's exp, and reverse over reverse; numpy hand = the closed form",
    build_vjp_only_hessian)
