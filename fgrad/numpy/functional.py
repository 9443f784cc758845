"""numpy's higher-order functions, which call a user's function: apply_along_axis,
apply_over_axes, fromfunction.

Each calls the user's function on traced slices from Python, so whatever that function does is
recorded as usual; only the assembling of the results (``stack``, ``moveaxis``) is added.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from .broadcasting import shape_of
from .wrapping import differentiable


def _summary(v):
    return fnp.sum(fnp.sin(v) * v)


@differentiable(_onp.apply_along_axis,
                Spec([(((3, 2),), {"axis": 0}), (((2, 3, 2),), {"axis": 1}),
                      (((3, 2),), {"axis": -1, "scalar": True})],
                     call=lambda f, x, axis, scalar=False: f(
                         _summary if scalar else lambda v: fnp.outer(v, v), axis, x)))
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Runs ``func1d`` on each 1-d slice in Python (as numpy does) and stacks the results,
    which take the place of ``axis``; derivatives flow through whatever ``func1d`` does."""
    arr = fnp.asarray(arr)
    nd = len(shape_of(arr))
    axis = int(axis) % nd
    rest = [i for i in range(nd) if i != axis]
    moved = fnp.transpose(arr, rest + [axis])
    outer = shape_of(moved)[:-1]
    results = [fnp.asarray(func1d(moved[idx], *args, **kwargs)) for idx in _onp.ndindex(outer)]
    out = fnp.reshape(fnp.stack(results), outer + shape_of(results[0]))
    # the function's k output dims (last in ``out``) go where ``axis`` was
    k = len(shape_of(results[0]))
    lead = list(range(axis))
    return fnp.transpose(out, lead + list(range(nd - 1, nd - 1 + k)) + list(range(axis, nd - 1)))


@differentiable(_onp.apply_over_axes,
                Spec([(((2, 3),), {"axes": (0,)}), (((2, 3, 2),), {"axes": (0, 2)})],
                     call=lambda f, x, axes: f(fnp.sum, x, axes)))
def apply_over_axes(func, a, axes):
    """``func(a, axis)`` for each axis in turn, a reduced axis restored as size 1 (numpy's
    rule); derivatives flow through ``func``."""
    a = fnp.asarray(a)
    for axis in (axes,) if _onp.ndim(axes) == 0 else axes:
        nd = len(shape_of(a))
        b = func(a, axis)
        if len(shape_of(b)) == nd - 1:
            b = fnp.expand_dims(b, int(axis) % nd)
        elif len(shape_of(b)) != nd:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


@differentiable(_onp.fromfunction,
                Spec([(((3, 2),), {})],
                     call=lambda f, x: f(lambda i, j: x * i + fnp.sin(x) * j, (3, 2))))
def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """Calls ``function`` on index grids, as numpy does: derivatives come from the traced
    values ``function`` closes over."""
    return _onp.fromfunction(function, shape, dtype=dtype, **kwargs)
