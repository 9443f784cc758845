"""numpy.linalg's array-API functions over the last axes (trace, diagonal, matrix_transpose,
outer, cross, vecdot, matmul, tensordot), composed from fgrad.numpy's."""

import fgrad.numpy as fnp
from ...core.table import Spec
from ...core.tracer import value_for_shape, map_tracers
from ..wrapping import differentiable
from .common import _la, _mT

# --- numpy.linalg's array-API functions over the last axes ---------------------------------

@differentiable(_la.trace, Spec([(((3, 3),), {}), (((2, 3, 4),), {"offset": 1}),
                                  (((2, 3),), {"offset": -1})]),
                 name="linalg.trace", numpy_values=True)
def trace(x, /, *, offset=0, dtype=None):
    """numpy.linalg.trace: the trace of the last two axes."""
    x = fnp.asarray(x)
    _la.trace(map_tracers(x, value_for_shape), offset=offset, dtype=dtype)  # numpy's errors
    d = fnp.diagonal(x, offset, -2, -1)
    return fnp.sum(d if dtype is None else fnp.astype(d, dtype), axis=-1)

@differentiable(_la.diagonal, Spec([(((3, 3),), {}), (((2, 3, 4),), {"offset": 1}),
                                     (((2, 3),), {"offset": -1})]),
                 name="linalg.diagonal")
def diagonal(x, /, *, offset=0):
    """numpy.linalg.diagonal: the diagonal of the last two axes."""
    x = fnp.asarray(x)
    _la.diagonal(map_tracers(x, value_for_shape), offset=offset)  # numpy's errors
    return fnp.diagonal(x, offset, -2, -1)

@differentiable(_la.matrix_transpose, Spec([(((2, 3),), {}), (((2, 3, 4),), {})]),
                 name="linalg.matrix_transpose")
def matrix_transpose(x, /):
    x = fnp.asarray(x)
    _la.matrix_transpose(value_for_shape(x))  # numpy's error for fewer than 2 dimensions
    return _mT(x)

@differentiable(_la.outer, Spec([(((3,), (2,)), {}), (((2,), (2,)), {})]),
                 name="linalg.outer")
def outer(x1, x2, /):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    # numpy's error for arrays that are not 1-d
    _la.outer(map_tracers(x1, value_for_shape), map_tracers(x2, value_for_shape))
    return fnp.outer(x1, x2)

@differentiable(_la.cross, Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}),
                                  (((3, 2), (3, 1)), {"axis": 0})]),
                 name="linalg.cross", numpy_values=True)
def cross(x1, x2, /, *, axis=-1):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    # numpy's error for vectors not of size 3
    _la.cross(map_tracers(x1, value_for_shape), map_tracers(x2, value_for_shape), axis=axis)
    return fnp.cross(x1, x2, axis=axis)

@differentiable(_la.vecdot, Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}),
                                   (((3, 2), (3, 1)), {"axis": 0})]),
                 name="linalg.vecdot", numpy_values=True)
def vecdot(x1, x2, /, *, axis=-1):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    _la.vecdot(value_for_shape(x1), value_for_shape(x2), axis=axis)  # numpy's errors
    return fnp.vecdot(x1, x2, axis=axis)

@differentiable(_la.matmul, Spec([(((3,), (3,)), {}), (((2, 3), (3, 2)), {}),
                                   (((2, 2, 3), (3,)), {})]),
                 name="linalg.matmul")
def matmul(x1, x2, /):
    return fnp.matmul(x1, x2)

@differentiable(_la.tensordot, Spec([(((2, 3), (3, 2)), {"axes": 1}),
                                      (((2, 3), (2, 3)), {}),
                                      (((2, 3, 2), (3, 2)), {"axes": ((1, 2), (0, 1))})]),
                 name="linalg.tensordot")
def tensordot(x1, x2, /, *, axes=2):
    return fnp.tensordot(x1, x2, axes=axes)
