"""fgrad.scipy.spatial.distance: ``cdist``, ``pdist`` and ``squareform``, differentiable in the
points (scipy's values; the derivatives of the metric written with ``fgrad.numpy``), for the
metrics ``euclidean``, ``sqeuclidean``, ``cityblock``, ``chebyshev``, ``minkowski`` (``p``),
``seuclidean`` (``V``), ``mahalanobis`` (``VI``), ``cosine``, ``correlation`` and a function
of two vectors written with ``fgrad.numpy``. A norm's derivative at a zero difference (a
point's distance to itself) is ``fgrad.numpy.linalg.norm``'s there: zero, not NaN.

>>> import fgrad, fgrad.numpy as np
>>> X = np.array([[0.0, 0.0], [3.0, 4.0]])
>>> fgrad.grad(lambda X: np.sum(cdist(X, X)))(X).round(12).tolist()  # each 5, both ways
[[-1.2, -1.6], [1.2, 1.6]]
"""
import numpy as _onp
import scipy.spatial.distance as _sd

import fgrad.numpy as fnp
from ...core.table import Spec
from ...numpy.broadcasting import shape_of
from ...numpy.wrapping import differentiable, refuse_traced
from .. import defining

_NORMS = {"euclidean": 2, "cityblock": 1, "chebyshev": _onp.inf}


def _between(u, v, metric, p=2, V=None, VI=None, w=None):
    """The metric of the vectors along the last axes of ``u`` and ``v`` (broadcast)."""
    if w is not None:
        raise NotImplementedError(f"fgrad.scipy.spatial.distance: weights (w=) are not "
                                  f"supported on traced values for the metric {metric!r}")
    if callable(metric):
        return _pairwise_call(metric, u, v)
    d = u - v
    if metric in _NORMS:
        return fnp.linalg.norm(d, ord=_NORMS[metric], axis=-1)
    if metric == "minkowski":
        return fnp.linalg.norm(d, ord=p, axis=-1)
    if metric == "sqeuclidean":
        return fnp.sum(d * d, axis=-1)
    if metric == "seuclidean":
        return fnp.linalg.norm(d / fnp.sqrt(fnp.asarray(V)), axis=-1)
    if metric == "mahalanobis":
        return fnp.sqrt(fnp.einsum("...k,kl,...l->...", d, fnp.asarray(VI), d))
    if metric in ("cosine", "correlation"):
        if metric == "correlation":
            u = u - fnp.mean(u, axis=-1, keepdims=True)
            v = v - fnp.mean(v, axis=-1, keepdims=True)
        return 1 - fnp.sum(u * v, axis=-1) / (fnp.linalg.norm(u, axis=-1) *
                                              fnp.linalg.norm(v, axis=-1))
    raise NotImplementedError(f"fgrad.scipy.spatial.distance: the metric {metric!r} is not "
                              "supported on traced values")


def _pairwise_call(metric, u, v):
    """A user's metric of two vectors on every pair of ``u``'s and ``v``'s (broadcast) rows."""
    from ...transforms import vmap
    shape = _onp.broadcast_shapes(shape_of(u)[:-1], shape_of(v)[:-1])
    k = shape_of(u)[-1]
    uu = fnp.reshape(fnp.broadcast_to(u, shape + (k,)), (-1, k))
    vv = fnp.reshape(fnp.broadcast_to(v, shape + (k,)), (-1, k))
    return fnp.reshape(vmap(metric)(uu, vv), shape)


def _settings(fn, kwargs):
    for name in ("p", "V", "VI", "w"):
        refuse_traced(f"scipy.spatial.distance.{fn}", name, kwargs.get(name),
                      "it is a fixed setting of the metric")
    return {k: kwargs[k] for k in ("p", "V", "VI", "w") if k in kwargs}


def _apart(u, v):
    """Spec predicate: every pair's differences away from zero, its largest apart from the
    next (the norms' kinks: |d|, max |d|), and the vectors and their centred ones away from
    zero (cosine's and correlation's norms)."""
    d = _onp.sort(_onp.abs(u[:, None, :] - v[None, :, :]), axis=-1)
    centred = [w - w.mean(axis=-1, keepdims=True) for w in (u, v)]
    return (d.min() > 0.05 and (d[..., -1] - d[..., -2]).min() > 0.05 and
            min(_onp.linalg.norm(w, axis=-1).min() for w in (u, v, *centred)) > 0.3)


def _cdist_valid(XA, XB):
    return _apart(_onp.asarray(XA), _onp.asarray(XB))


def _pdist_valid(X):
    X = _onp.asarray(X)
    i, j = _onp.triu_indices(len(X), 1)
    return all(_apart(X[a:a + 1], X[b:b + 1]) for a, b in zip(i, j))


_METRIC_CASES = [{}, {"metric": "sqeuclidean"}, {"metric": "cityblock"},
                 {"metric": "minkowski", "p": 3.0}, {"metric": "cosine"},
                 {"metric": "correlation"}, {"metric": "chebyshev"}]


# (cdist's cases a few of the metrics, pdist's every one: the metric code is shared)
@differentiable(_sd.cdist, Spec([(((2, 2), (3, 2)), c) for c in _METRIC_CASES[::3]] +
                                [(((2, 3), (2, 3)), {"metric": "seuclidean",
                                                     "V": (0.5, 1.0, 2.0)})],
                                domain=(-2.0, 2.0), valid=_cdist_valid),
                name="scipy.spatial.distance.cdist", numpy_values=True)
def cdist(XA, XB, metric="euclidean", *, out=None, **kwargs):
    """The distances of every row of ``XA`` to every row of ``XB``, differentiable in both."""
    XA, XB = fnp.asarray(XA), fnp.asarray(XB)
    _sd.cdist(_onp.zeros(shape_of(XA)), _onp.zeros(shape_of(XB)))  # (scipy's shape checks)
    return _between(XA[:, None, :], XB[None, :, :], metric, **_settings("cdist", kwargs))


@differentiable(_sd.pdist, Spec([(((3, 2),), c) for c in _METRIC_CASES], domain=(-2.0, 2.0),
                                valid=_pdist_valid),
                name="scipy.spatial.distance.pdist", numpy_values=True)
def pdist(X, metric="euclidean", *, out=None, **kwargs):
    """The distances of every pair of rows ``i < j`` of ``X`` (scipy's condensed order),
    differentiable in ``X``."""
    X = fnp.asarray(X)
    _sd.pdist(_onp.zeros(shape_of(X)))  # (scipy's shape checks)
    i, j = _onp.triu_indices(shape_of(X)[0], 1)
    return _between(X[i], X[j], metric, **_settings("pdist", kwargs))


@differentiable(_sd.squareform, Spec([(((6,),), {}), (((3, 3),), {"checks": False})]),
                name="scipy.spatial.distance.squareform", numpy_values=True)
def squareform(X, force="no", checks=True):
    """A condensed distance vector as its symmetric matrix (zero diagonal), and back: linear
    in ``X``."""
    X = fnp.asarray(X)
    shape = shape_of(X)
    if force == "tomatrix" or force != "tovector" and len(shape) == 1:  # (scipy's reading)
        n = int(round((1 + (1 + 8 * shape[0]) ** 0.5) / 2))
        i, j = _onp.triu_indices(n, 1)
        upper = fnp.at(fnp.zeros((n, n), fnp.result_type(X)))[i, j].set(X)
        return upper + fnp.transpose(upper)
    i, j = _onp.triu_indices(shape[0], 1)
    return X[i, j]


# scipy.spatial.distance's other functions: scipy's own on plain values, refused by name on
# traced ones
__getattr__ = defining.plain_only_fallback(
    __name__, _sd, lambda name: "; fgrad.scipy.spatial.distance has cdist, pdist and "
    "squareform")
