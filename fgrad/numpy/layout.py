"""Shape and layout: reshape, transpose, axes, broadcasting, joining, dtype changes.

All of these are linear, so each needs only its VJP (the transpose), given in one line; the
JVP is the function itself applied to the tangent (``linear=True``). Joining several arrays
(``concatenate``, ``stack``) is linear jointly, so their JVP takes all tangents at once.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define
from ..tracer import Tracer, contains_tracer, innermost
from .broadcasting import dtype_of, shape_of, unbroadcast
from .wrapping import as_tuple, traced_version_of, unsupported_kwargs


def _ndim(x):
    return len(shape_of(x))


reshape_p = define("reshape", lambda x, shape, order: _onp.reshape(x, shape, order=order),
                   [lambda g, ans, x, shape, order: fnp.reshape(g, shape_of(x), order=order)],
                   linear=True,
                   spec=Spec([(((6,),), {"shape": (2, 3), "order": "C"}),
                              (((2, 3),), {"shape": (3, -1), "order": "F"}),
                              (((),), {"shape": (1, 1), "order": "C"})]))


@traced_version_of(_onp.reshape)
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = as_tuple(newshape if shape is None else shape)
    return reshape_p(fnp.asarray(a), shape=shape, order=order)


ravel_p = define("ravel", lambda x, order: _onp.ravel(x, order=order),
                 [lambda g, ans, x, order: fnp.reshape(g, shape_of(x), order=order)],
                 linear=True,
                 spec=Spec([(((2, 3),), {"order": "C"}), (((2, 3),), {"order": "F"})]))


@traced_version_of(_onp.ravel)
def ravel(a, order="C"):
    return ravel_p(fnp.asarray(a), order=order)


def _inverse_perm(axes):
    return tuple(int(i) for i in _onp.argsort(axes))


transpose_p = define("transpose", lambda x, axes: _onp.transpose(x, axes),
                     [lambda g, ans, x, axes: fnp.transpose(
                         g, None if axes is None else _inverse_perm(axes))],
                     linear=True,
                     spec=Spec([(((2, 3),), {"axes": None}), (((2, 3, 4),), {"axes": (1, 2, 0)}),
                                (((3,),), {"axes": None})]))


@traced_version_of(_onp.transpose)
def transpose(a, axes=None):
    a = fnp.asarray(a)
    if axes is not None:
        axes = tuple(int(i) % _ndim(a) for i in axes)
    return transpose_p(a, axes=axes)


swapaxes_p = define("swapaxes", lambda x, axis1, axis2: _onp.swapaxes(x, axis1, axis2),
                    [lambda g, ans, x, axis1, axis2: fnp.swapaxes(g, axis1, axis2)],
                    linear=True,
                    spec=Spec([(((2, 3),), {"axis1": 0, "axis2": 1}),
                               (((2, 3, 4),), {"axis1": -1, "axis2": 0})]))


@traced_version_of(_onp.swapaxes)
def swapaxes(a, axis1, axis2):
    return swapaxes_p(fnp.asarray(a), axis1=int(axis1), axis2=int(axis2))


expand_dims_p = define("expand_dims", lambda x, axis: _onp.expand_dims(x, axis),
                       [lambda g, ans, x, axis: fnp.reshape(g, shape_of(x))],
                       linear=True,
                       spec=Spec([(((3,),), {"axis": (0,)}), (((2, 3),), {"axis": (1, -1)}),
                                  (((),), {"axis": (0,)})]))


@traced_version_of(_onp.expand_dims)
def expand_dims(a, axis):
    return expand_dims_p(fnp.asarray(a), axis=tuple(int(i) for i in as_tuple(axis)))


squeeze_p = define("squeeze", lambda x, axis: _onp.squeeze(x, axis),
                   [lambda g, ans, x, axis: fnp.reshape(g, shape_of(x))],
                   linear=True,
                   spec=Spec([(((1, 3, 1),), {"axis": None}), (((2, 1),), {"axis": (1,)})]))


@traced_version_of(_onp.squeeze)
def squeeze(a, axis=None):
    return squeeze_p(fnp.asarray(a), axis=None if axis is None else as_tuple(axis))


broadcast_to_p = define("broadcast_to", lambda x, shape: _onp.broadcast_to(x, shape),
                        [lambda g, ans, x, shape: unbroadcast(g, shape_of(x))],
                        linear=True,
                        spec=Spec([(((3,),), {"shape": (2, 3)}), (((2, 1),), {"shape": (2, 4)}),
                                   (((),), {"shape": (3,)})]))


@traced_version_of(_onp.broadcast_to)
def broadcast_to(array, shape, subok=False):
    return broadcast_to_p(fnp.asarray(array), shape=as_tuple(shape))


def _concatenate_vjp(i, g, ans, *xs, axis):
    start = sum(shape_of(x)[axis] for x in xs[:i])
    idx = (slice(None),) * axis + (slice(start, start + shape_of(xs[i])[axis]),)
    return fnp.getitem(g, idx)


concatenate_p = define("concatenate", lambda *xs, axis: _onp.concatenate(xs, axis=axis),
                       vjp_any=_concatenate_vjp, jointly_linear=True,
                       spec=Spec([(((2,), (3,)), {"axis": 0}),
                                  (((2, 3), (1, 3), (2, 3)), {"axis": 0}),
                                  (((2, 1), (2, 3)), {"axis": 1})]))


@traced_version_of(_onp.concatenate)
def concatenate(arrays, axis=0, **kwargs):
    unsupported_kwargs("concatenate", kwargs)
    arrays = [fnp.asarray(a) for a in arrays]
    if axis is None:
        arrays, axis = [fnp.ravel(a) for a in arrays], 0
    return concatenate_p(*arrays, axis=int(axis) % _ndim(arrays[0]))


def _stack_vjp(i, g, ans, *xs, axis):
    return fnp.getitem(g, (slice(None),) * axis + (i,))


stack_p = define("stack", lambda *xs, axis: _onp.stack(xs, axis=axis),
                 vjp_any=_stack_vjp, jointly_linear=True,
                 spec=Spec([(((3,), (3,)), {"axis": 0}), (((2, 3), (2, 3), (2, 3)), {"axis": 2}),
                            (((), ()), {"axis": 0})]))


@traced_version_of(_onp.stack)
def stack(arrays, axis=0, **kwargs):
    unsupported_kwargs("stack", kwargs)
    arrays = [fnp.asarray(a) for a in arrays]
    return stack_p(*arrays, axis=int(axis) % (_ndim(arrays[0]) + 1))


astype_p = define("astype", lambda x, dtype: _onp.asarray(x).astype(dtype),
                  [lambda g, ans, x, dtype: fnp.astype(g, dtype_of(x))], linear=True,
                  spec=Spec([(((3,),), {"dtype": _onp.dtype("float32")}),
                             (((2, 2),), {"dtype": _onp.dtype("float64")})],
                            rtol=1e-4, eps=1e-2))  # float32 outputs need a long step


def astype(x, dtype, /, *, copy=True):
    """numpy.astype: to a float or complex dtype the derivative passes through; to an integer
    or boolean dtype the result is a plain array (zero derivative)."""
    dtype = _onp.dtype(dtype)
    if not isinstance(x, Tracer):
        return _onp.astype(x, dtype, copy=copy) if isinstance(x, _onp.ndarray) else \
            _onp.asarray(x).astype(dtype)
    if not _onp.issubdtype(dtype, _onp.inexact):
        return _onp.asarray(innermost(x)).astype(dtype)
    return x if dtype_of(x) == dtype else astype_p(x, dtype=dtype)


def _from_nested(obj, dtype):
    """An array from a (nested) list or tuple holding tracers: stacked, so it is traced."""
    if isinstance(obj, Tracer):
        return obj if dtype is None else astype(obj, dtype)
    if isinstance(obj, (list, tuple)) and contains_tracer(obj):
        return stack([_from_nested(o, dtype) for o in obj])
    return _onp.asarray(obj, dtype=dtype)


@traced_version_of(_onp.asarray)
def asarray(a, dtype=None, order=None, **kwargs):
    return _from_nested(a, dtype)


@traced_version_of(_onp.array)
def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, **kwargs):
    out = _from_nested(object, dtype)
    while _ndim(out) < ndmin:
        out = expand_dims(out, 0)
    return out


def _filled(fill_value, shape, dtype):
    """An array of ``shape`` holding a traced ``fill_value`` (a broadcast, so differentiable)."""
    fill = asarray(fill_value)
    return broadcast_to(fill if dtype is None else astype(fill, dtype), shape)


@traced_version_of(_onp.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None):
    """numpy.full_like: no derivative with respect to ``a`` (only its shape and dtype are
    used); a traced ``fill_value`` is broadcast, with its derivative."""
    template = _onp.empty_like(innermost(a), dtype=dtype, shape=shape)
    if not contains_tracer(fill_value):
        return _onp.full_like(template, fill_value)
    return _filled(fill_value, template.shape, template.dtype)


@traced_version_of(_onp.full)
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    """numpy.full; a traced ``fill_value`` is broadcast, with its derivative."""
    return _filled(fill_value, as_tuple(shape), dtype)
