"""Taylor mode: every derivative of tanh up to order k by one ``jet``, against the k-th
derivative by k nested ``grad`` (issue 18)."""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload
from .scalar import _horner, nested_grad, tanh_derivative_polys

NESTED = "fgrad nested grad"
PEER_KMAX = 8  # nested grad costs ~2-3.5x per order: autograd's 12th would take seconds


def build_taylor_tanh(backends, size):
    ks = (1, 2, 3, 4, 6, 8, 12) if size == "full" else (1, 2)
    x = 0.4
    fg, np_ = backends["fgrad"], backends["numpy"]
    import fgrad  # (the backend's namespace is fgrad.numpy; jet is fgrad's own)
    polys = tanh_derivative_polys(max(ks))
    cases = []
    for k in ks:
        refs = {"deriv": nested_grad(fg, k)(x), "forward": numpy.tanh(x)}
        by_jet = fgrad.derivatives(fg.ns.tanh, k)
        nested = nested_grad(fg, k)
        impls = [Impl(FGRAD, fg, lambda f=by_jet, k=k: f(x)[k]),
                 Impl(NESTED, fg, lambda f=nested: f(x)),
                 Impl(FWD, np_, lambda: numpy.tanh(x), "forward"),
                 Impl(HAND, np_, lambda c=polys[k - 1]: _horner(c, numpy.tanh(x)))]
        if k <= PEER_KMAX:
            impls += _peers(backends, k, x)
        cases.append(Case(f"k={k}", impls, refs, rtol=1e-9, atol=1e-12))
    return cases


def _peers(backends, k, x):
    """JAX by its own jet (jax.experimental.jet), autograd and torch.func by nested grad
    (they have no Taylor mode)."""
    out = []
    for name in ("autograd", "torch"):
        b = backends.get(name)
        if b is not None:
            f, xb = nested_grad(b, k), b.asarray(x)
            out.append(Impl(name, b, lambda f=f, xb=xb: f(xb)))
    b = backends.get("jax")
    if b is not None:
        from jax.experimental.jet import jet
        series = ([b.asarray(1.0)] + [b.asarray(0.0)] * (k - 1),)
        xb = b.asarray(x)
        out.append(Impl("jax", b, lambda: jet(b.ns.tanh, (xb,), series)[1][k - 1]))
    return out


def summarise(case_results):
    """Per row: the time at k = 8 and the growth from k to 2k."""
    by_k = {int(r.name[2:]): r for r in case_results}
    out = {}
    for label in by_k[min(by_k)].stats:
        if label == FWD:
            continue
        ks = [k for k in sorted(by_k) if label in by_k[k].stats]
        row = {"k=8 median (ms)": by_k[8].stats[label].median * 1e3} if 8 in ks else {}
        for k in ks:
            if 2 * k in ks:
                row[f"k={k} -> {2 * k} (x)"] = (by_k[2 * k].stats[label].median /
                                                by_k[k].stats[label].median)
        out[label] = row
    return out


TAYLOR_TANH = Workload(
    "taylor_tanh", "every derivative of tanh to order k by one jet",
    "fgrad.derivatives(tanh, k) (one jet) against k nested grad at x = 0.4, k = 1..12; JAX by "
    "its jet, autograd and torch by nested grad (k <= 8); numpy hand = P_k(tanh x)",
    build_taylor_tanh, summarise)
