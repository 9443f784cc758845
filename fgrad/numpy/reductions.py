"""Reductions over an axis (int, tuple or None), with ``keepdims``.

The backward pass of a reduction spreads the output cotangent back over the reduced axes:
``spread`` restores the reduced axes (as size 1) and broadcasts. ``max``/``min`` share the
cotangent evenly among tied maxima, the same convention as ``maximum``.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define
from ..tracer import innermost
from .broadcasting import mask, shape_of
from .wrapping import as_tuple, traced_version_of, unsupported_kwargs

REDUCE = [(((4,),), {"axis": None, "keepdims": False}),
          (((2, 3),), {"axis": None, "keepdims": False}),
          (((2, 3),), {"axis": (0,), "keepdims": False}),
          (((2, 3),), {"axis": (1,), "keepdims": True}),
          (((2, 3, 2),), {"axis": (0, 2), "keepdims": False}),
          (((),), {"axis": None, "keepdims": False})]


def _axes(axis, ndim):
    """Normalise ``axis`` to a sorted tuple of non-negative ints, or None for all axes."""
    if axis is None:
        return None
    return tuple(sorted(int(a) % ndim if ndim else int(a) for a in as_tuple(axis)))


def kept_shape(shape, axis):
    """The shape of the reduction's output with keepdims=True."""
    if axis is None:
        return (1,) * len(shape)
    return tuple(1 if i in axis else n for i, n in enumerate(shape))


def spread(g, x, axis, keepdims):
    """Cotangent of a reduction, broadcast back to the input's shape."""
    shape = shape_of(x)
    if not keepdims:
        g = fnp.reshape(g, kept_shape(shape, axis))
    return fnp.broadcast_to(g, shape)


def _count(x, axis):
    shape = shape_of(x)
    if axis is None:
        return int(_onp.prod(shape, dtype=int))
    return int(_onp.prod([shape[a] for a in axis], dtype=int))


sum_p = define("sum", lambda x, axis, keepdims: _onp.sum(x, axis=axis, keepdims=keepdims),
               [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)],
               linear=True, spec=Spec(REDUCE))
mean_p = define("mean", lambda x, axis, keepdims: _onp.mean(x, axis=axis, keepdims=keepdims),
                [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims) / _count(x, axis)],
                linear=True, spec=Spec(REDUCE))


def _prod_partials(x, axis):
    """d prod / dx_i: the product of the other entries along ``axis`` (shaped like x).

    Without zeros that is ``prod / x_i``, smooth and exact to every order. With a zero along
    the axis the quotient is undefined, so each entry is replaced by 1 in turn and the rows
    multiplied out: O(n^2) work, but the result, and every derivative of it, is exact (a
    masked quotient would have the right value and the wrong second derivative)."""
    if not (innermost(x) == 0).any():
        return fnp.prod(x, axis=axis, keepdims=True) / x
    shape = shape_of(x)
    reduced = tuple(range(len(shape))) if axis is None else axis
    kept = [i for i in range(len(shape)) if i not in reduced]
    perm = kept + list(reduced)
    lead = [shape[i] for i in kept]
    n = int(_onp.prod([shape[i] for i in reduced], dtype=int))
    rows = fnp.reshape(fnp.transpose(x, perm), lead + [1, n])
    others = fnp.prod(fnp.where(_onp.eye(n, dtype=bool), 1, rows), axis=-1)
    others = fnp.reshape(others, lead + [shape[i] for i in reduced])
    return fnp.transpose(others, tuple(int(i) for i in _onp.argsort(perm)))


prod_p = define("prod", lambda x, axis, keepdims: _onp.prod(x, axis=axis, keepdims=keepdims),
                [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)
                 * _prod_partials(x, axis)],
                [lambda t, ans, x, axis, keepdims: fnp.sum(t * _prod_partials(x, axis),
                                                           axis=axis, keepdims=keepdims)],
                spec=Spec(REDUCE, domain=(0.3, 1.5)))


def _extreme_weights(ans, x, axis, keepdims):
    """1/count on the entries that attain the extreme value along ``axis``, else 0."""
    xv, av = innermost(x), innermost(ans)
    if not keepdims:
        av = _onp.reshape(av, kept_shape(_onp.shape(xv), axis))
    hit = mask(xv == av, x)
    return hit / _onp.sum(hit, axis=axis, keepdims=True)


def _extreme(name, fn):
    return define(
        name, lambda x, axis, keepdims: fn(x, axis=axis, keepdims=keepdims),
        [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)
         * _extreme_weights(ans, x, axis, keepdims)],
        [lambda t, ans, x, axis, keepdims: fnp.sum(t * _extreme_weights(ans, x, axis, keepdims),
                                                   axis=axis, keepdims=keepdims)],
        spec=Spec(REDUCE, valid=_distinct))


def _distinct(x):
    v = _onp.sort(_onp.ravel(x))
    return v.size < 2 or _onp.min(_onp.diff(v)) > 0.05


max_p = _extreme("max", _onp.max)
min_p = _extreme("min", _onp.min)


def _traced(prim, a, axis, dtype, keepdims, kwargs):
    unsupported_kwargs(prim.name, kwargs)
    a = fnp.asarray(a)
    if dtype is not None:
        a = fnp.astype(a, dtype)
    return prim(a, axis=_axes(axis, len(shape_of(a))), keepdims=bool(keepdims))


def _reduction(prim, np_fn):
    @traced_version_of(np_fn)
    def reduce(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return _traced(prim, a, axis, dtype, keepdims, dict(kwargs, out=out))
    return reduce


def _reduction_nodtype(prim, np_fn):
    @traced_version_of(np_fn)
    def reduce(a, axis=None, out=None, keepdims=False, **kwargs):
        return _traced(prim, a, axis, None, keepdims, dict(kwargs, out=out))
    return reduce


sum = _reduction(sum_p, _onp.sum)
mean = _reduction(mean_p, _onp.mean)
prod = _reduction(prod_p, _onp.prod)
max = _reduction_nodtype(max_p, _onp.max)
min = _reduction_nodtype(min_p, _onp.min)
amax, amin = max, min
