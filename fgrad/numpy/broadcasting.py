"""Undoing broadcasting, in one place.

A binary elementwise rule computes a cotangent shaped like the (broadcast) output; the
argument may have been smaller. ``unbroadcast`` sums the cotangent back down to the argument's
shape; ``broadcast_like`` does the reverse for tangents. Both are written with fgrad.numpy, so
they are recorded like any other operation when derivatives are nested.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..tracer import innermost


def shape_of(x):
    try:  # arrays, numpy scalars and tracers (free when it succeeds: the common case)
        return x.shape
    except AttributeError:  # Python numbers, lists
        return _onp.shape(x)


def dtype_of(x):
    return _onp.result_type(innermost(x))


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
    g = _reductions.sum_p(g, axis=tuple(range(lead)) + stretched, keepdims=bool(stretched))
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
    return t if shape_of(t) == shape else _layout.broadcast_to_p(t, shape=tuple(shape))


def mask(cond, like):
    """A plain 0/1 array of ``like``'s float dtype (a float64 mask would upcast float32)."""
    return _onp.asarray(cond).astype(dtype_of(like))


# reductions and layout build on the functions above, and these on their sum and broadcast
# primitives (the rules' own calls, whose arguments are already in normal form): imported
# last, so the cycle resolves whichever module is imported first
from . import layout as _layout, reductions as _reductions  # noqa: E402
