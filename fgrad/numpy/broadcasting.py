"""Undoing broadcasting, in one place.

A binary elementwise rule computes a cotangent shaped like the (broadcast) output; the
argument may have been smaller. ``unbroadcast`` sums the cotangent back down to the argument's
shape; ``broadcast_like`` does the reverse for tangents. Both are written with fgrad.numpy, so
they are recorded like any other operation when derivatives are nested.

The two primitives they rest on live here too, since each is the other's transpose: ``sum``
(its VJP spreads the cotangent back by ``broadcast_to``) and ``broadcast_to`` (its VJP sums it
down by ``unbroadcast``). The reductions and the layout functions build on them.
"""
import math

import numpy as _onp

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Spec, define
from ..core.other_arrays import as_array
from ..core.values import foreign_array
from ..core.tracer import Tracer, value_for_shape


def shape_of(x):
    try:  # arrays, numpy scalars and tracers (free when it succeeds: the common case)
        return x.shape
    except AttributeError:  # Python numbers, lists
        return _onp.shape(x)


def dtype_of(x):
    return _onp.result_type(value_for_shape(x))


def unbroadcast(g, shape):
    """Sum ``g`` over the axes broadcasting added or stretched, giving it ``shape``.

    For VJP rules of functions that broadcast their arguments (also as ``fgrad.unbroadcast``):

    >>> import numpy, fgrad
    >>> fgrad.unbroadcast(numpy.ones((2, 3)), (3,)).tolist()
    [2.0, 2.0, 2.0]
    """
    gshape = shape_of(g)
    if gshape == shape:
        return g
    lead = len(gshape) - len(shape)
    stretched = tuple(lead + i for i, n in enumerate(shape) if n == 1 and gshape[lead + i] != 1) \
        if 1 in shape else ()  # (only a length-1 axis can have been stretched)
    # (the axes are already numpy's normal form: the primitive itself, not fnp.sum's checks)
    g = sum_p(g, axis=tuple(range(lead)) + stretched, keepdims=bool(stretched))
    if stretched:
        g = fnp.reshape(g, shape)
    return g


def unbroadcast_like(g, x):
    """``g`` summed down to the shape of ``x``: the cotangent of a broadcasting rule's argument
    ``x``. Most arguments were not broadcast at all, so that case is answered first."""
    try:
        shape = x.shape
        if g.shape == shape:
            return g
    except AttributeError:  # a Python number or list on either side
        shape = _onp.shape(x)
    return unbroadcast(g, shape)


def broadcast_like(t, ans):
    """``t`` broadcast to the shape of ``ans`` (a tangent must have the output's shape)."""
    shape = shape_of(ans)
    return t if shape_of(t) == shape else broadcast_to_p(t, shape=tuple(shape))


def cast_like(c, x):
    """A cotangent in ``x``'s real float dtype: a rule computing in float64 for a float32
    argument (``float_power``, scipy's functions) gives a float32 gradient, and a real
    argument of a complex-valued rule gets the real part."""
    want = dtype_of(x)
    if want.kind == "f" and dtype_of(c) != want:
        return fnp.astype(fnp.real(c) if dtype_of(c).kind == "c" else c, want)
    return c


def mask(cond, like):
    """A 0/1 array of ``like``'s float dtype (a float64 mask would upcast float32): plain,
    or staged where ``cond`` is (a comparison recorded by a staged function)."""
    if isinstance(cond, Tracer):
        return fnp.astype(cond, dtype_of(like))
    return as_array(cond).astype(dtype_of(like))


# --- the transpose pair: sum and broadcast_to ---------------------------------------------

REDUCE = [(((4,),), {"axis": None, "keepdims": False}),
          (((2, 3),), {"axis": None, "keepdims": False}),
          (((2, 3),), {"axis": (0,), "keepdims": False}),
          (((2, 3),), {"axis": (1,), "keepdims": True}),
          (((2, 3, 2),), {"axis": (0, 2), "keepdims": False}),
          (((),), {"axis": None, "keepdims": False})]


def kept_shape(shape, axis):
    """The shape of the reduction's output with keepdims=True."""
    if axis is None:
        return (1,) * len(shape)
    return tuple(1 if i in axis else n for i, n in enumerate(shape))


def spread(g, x, axis, keepdims):
    """Cotangent of a reduction, broadcast back to the input's shape."""
    shape = shape_of(x)
    if not keepdims and axis is not None:  # (over every axis g broadcasts as it is)
        g = fnp.reshape(g, kept_shape(shape, axis))
    return broadcast_to_p(g, shape=tuple(shape))


def _sum_impl(x, axis, keepdims):
    """numpy.sum: for an ndarray add.reduce, the same values without numpy.sum's Python layer;
    another library's array (Dask has no ufunc reductions) goes to numpy.sum's dispatch."""
    if x.__class__ is _onp.ndarray:
        return _onp.add.reduce(x, axis=axis, keepdims=keepdims)
    return _onp.sum(x, axis=axis, keepdims=keepdims)


sum_p = define("sum", _sum_impl,
               [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)],
               linear=True, spec=Spec(REDUCE), batch=batch_rules.along())


def _broadcast_impl(x, shape):
    """numpy.broadcast_to's values; a small result is filled in rather than made a view, which
    numpy builds at several times the cost (a reduction's cotangent goes through here)."""
    if foreign_array(x):
        return _onp.broadcast_to(x, shape)
    x = _onp.asarray(x)
    if math.prod(shape) > 1024 or x.ndim > len(shape):  # (numpy's errors for more axes)
        return _onp.broadcast_to(x, shape)
    out = _onp.empty(shape, x.dtype)  # (a shape that does not fit: the assignment's ValueError)
    out[...] = x
    return out


broadcast_to_p = define("broadcast_to", _broadcast_impl,
                        [lambda g, ans, x, shape: unbroadcast_like(g, x)],
                        linear=True,
                        spec=Spec([(((3,),), {"shape": (2, 3)}), (((2, 1),), {"shape": (2, 4)}),
                                   (((),), {"shape": (3,)})]), batch=batch_rules.broadcast_to)
