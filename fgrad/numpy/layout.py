"""Shape and layout: reshape, transpose, axes, broadcasting, joining, dtype changes.

All of these are linear, so each needs only its VJP (the transpose), given in one line; the
JVP is the function itself applied to the tangent (``linear=True``). Joining several arrays
(``concatenate``, ``stack``) is linear jointly, so their JVP takes all tangents at once.
The public functions take numpy's signatures (negative axes, int-or-tuple shapes, lists
holding tracers) and are registered with Specs exercising them; the rest (``moveaxis``,
``atleast_2d``, ``meshgrid``, ``asfortranarray``, ...) are composed of these primitives.
"""
import functools

import numpy as _onp

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Primitive, Spec, define, register_function
from ..core.other_arrays import as_array
from ..core.values import foreign_array
from ..core.tracer import (Tracer, contains_tracer, value_for_shape, read_values,
                           without_derivative)
from .namespace import values_only
from .views import Relaid, copied, view_of
from .broadcasting import broadcast_to_p, dtype_of, shape_of
from .wrapping import as_tuple, differentiable, inverse_permutation, unsupported_kwargs

# how reshaped and transposed views were taken, both ways (``views.Relaid``): shared objects,
# or one per explicit permutation, so nothing is made per view (an object per reshape cost a
# traced loop of reshapes and transposes 5%)
RESHAPED = {order: Relaid(lambda b, t, order=order: fnp.reshape(b, t.shape, order=order),
                          lambda v, base, order=order: fnp.reshape(v, base.shape, order=order))
            for order in "CF"}
_RESHAPED_C = RESHAPED["C"]  # (read without a call: a plain reshape's cost)
TRANSPOSED = Relaid(lambda b, t: fnp.transpose(b), lambda v, base: fnp.transpose(v))


def _permuted(axes):
    """The view ``transpose(base, axes)`` both ways."""
    back = inverse_permutation(axes)
    return Relaid(lambda b, t: fnp.transpose(b, axes), lambda v, base: fnp.transpose(v, back))

try:
    from numpy.lib.array_utils import normalize_axis_index as _normalize_axis_index
    from numpy.lib.array_utils import normalize_axis_tuple as _normalize_axis_tuple
except ImportError:  # numpy < 2
    from numpy.core.multiarray import normalize_axis_index as _normalize_axis_index
    from numpy.core.numeric import normalize_axis_tuple as _normalize_axis_tuple

_AxisError = getattr(_onp, "exceptions", _onp).AxisError  # numpy.exceptions is numpy >= 1.25
_F32 = _onp.dtype("float32")
_F64 = _onp.dtype("float64")


def _ndim(x):
    return len(shape_of(x))


def axis_index(axis, ndim):
    """``axis`` as a non-negative int; out of range raises numpy's AxisError."""
    return _normalize_axis_index(_onp.asarray(read_values(axis)).item(), ndim)


def axis_tuple(axis, ndim):
    """An int-or-sequence ``axis`` as a tuple of non-negative ints (repeats refused)."""
    return tuple(_normalize_axis_tuple(read_values(axis), ndim))


def list_call(f, *xs, **params):
    """``Spec.call`` for functions taking one sequence of arrays (``stack([a, b])``)."""
    return f(list(xs), **params)


def _reshaped_back(g, ans, x, shape=None, order="C"):
    """reshape's and ravel's VJP: ``g`` in ``x``'s shape (``order`` passed only when not C:
    Dask's reshape takes none)."""
    if order == "C":
        return fnp.reshape(g, shape_of(x))
    return fnp.reshape(g, shape_of(x), order=order)


reshape_p = define("reshape", lambda x, shape, order: as_array(x).reshape(shape, order=order) if
                   order != "C" else as_array(x).reshape(shape),  # (Dask's takes no order)
                   [_reshaped_back],
                   linear=True,
                   spec=Spec([(((6,),), {"shape": (2, 3), "order": "C"}),
                              (((2, 3),), {"shape": (3, -1), "order": "F"}),
                              (((),), {"shape": (1, 1), "order": "C"})]),
                   batch=batch_rules.reshape)


@differentiable(_onp.reshape, Spec([(((6,),), {"shape": (2, 3)}),
                                    (((2, 3),), {"shape": 6, "order": "F"}),
                                    (((2, 3),), {"shape": (-1, 2), "order": "F"}),
                                    (((),), {"shape": (1, 1)})]))
def reshape(a, shape=None, order="C", *, newshape=None, copy=None):
    shape = as_tuple(newshape if shape is None else shape)
    a = fnp.asarray(a)
    out = reshape_p(a, shape=shape, order=order)
    link = _RESHAPED_C if order == "C" else RESHAPED.get(order)
    return copied(out) if copy else view_of(out, a, link)


ravel_p = define("ravel", lambda x, order: _onp.ravel(x, order=order) if order != "C" else
                 _onp.ravel(x),  # (Dask's ravel takes no order)
                 [_reshaped_back],
                 linear=True,
                 spec=Spec([(((2, 3),), {"order": "C"}), (((2, 3),), {"order": "F"})]),
                 batch=batch_rules.ravel)


@differentiable(_onp.ravel, Spec([(((2, 3),), {}), (((2, 3),), {"order": "F"}),
                                  (((),), {})]))
def ravel(a, order="C"):
    a = fnp.asarray(a)
    return view_of(ravel_p(a, order=order), a,
                   _RESHAPED_C if order == "C" else RESHAPED.get(order))


def _transpose_method(x, axes):
    # the array's own method: numpy.transpose's dispatch wrappers cost more than the
    # transposition (a view) on the small arrays rules hand down; the same view either way
    return x.transpose(axes) if x.__class__ is _onp.ndarray else _onp.transpose(x, axes)


transpose_p = define("transpose", lambda x, axes: _onp.transpose(x, axes),
                     [lambda g, ans, x, axes: fnp.transpose(
                         g, None if axes is None else inverse_permutation(axes))],
                     linear=True,
                     spec=Spec([(((2, 3),), {"axes": None}), (((2, 3, 4),), {"axes": (1, 2, 0)}),
                                (((3,),), {"axes": None})]), batch=batch_rules.transpose,
                     fast_impl=_transpose_method)


@differentiable(_onp.transpose, Spec([(((2, 3),), {}), (((2, 3, 4),), {"axes": (-1, 0, 1)}),
                                      (((3,),), {"axes": None})]))
def transpose(a, axes=None):
    a = fnp.asarray(a)
    if axes is not None:
        axes = axis_tuple(axes, _ndim(a))
    return view_of(transpose_p(a, axes=axes), a, TRANSPOSED if axes is None else
                   _permuted(axes) if isinstance(a, Tracer) else None)


swapaxes_p = define("swapaxes", lambda x, axis1, axis2: _onp.swapaxes(x, axis1, axis2),
                    [lambda g, ans, x, axis1, axis2: fnp.swapaxes(g, axis1, axis2)],
                    linear=True,
                    spec=Spec([(((2, 3),), {"axis1": 0, "axis2": 1}),
                               (((2, 3, 4),), {"axis1": -1, "axis2": 0})]),
                    batch=batch_rules.swapaxes)


@differentiable(_onp.swapaxes, Spec([(((2, 3, 4),), {"axis1": -1, "axis2": 0}),
                                     (((2, 3),), {"axis1": 1, "axis2": 1})]))
def swapaxes(a, axis1, axis2):
    a = fnp.asarray(a)
    n = _ndim(a)
    axis1, axis2 = axis_index(axis1, n), axis_index(axis2, n)
    axes = list(range(n))
    axes[axis1], axes[axis2] = axis2, axis1
    return view_of(swapaxes_p(a, axis1=axis1, axis2=axis2), a,
                   _permuted(tuple(axes)) if isinstance(a, Tracer) else None)


expand_dims_p = define("expand_dims", lambda x, axis: _onp.expand_dims(x, axis),
                       [lambda g, ans, x, axis: fnp.reshape(g, shape_of(x))],
                       linear=True,
                       spec=Spec([(((3,),), {"axis": (0,)}), (((2, 3),), {"axis": (1, -1)}),
                                  (((),), {"axis": (0,)})]), batch=batch_rules.expand_dims)


@differentiable(_onp.expand_dims, Spec([(((3,),), {"axis": 0}), (((2, 3),), {"axis": (1, -1)}),
                                        (((),), {"axis": -1})]))
def expand_dims(a, axis):
    a = fnp.asarray(a)
    out = expand_dims_p(a, axis=tuple(int(i) for i in as_tuple(read_values(axis))))
    return view_of(out, a, _RESHAPED_C)


squeeze_p = define("squeeze", lambda x, axis: _onp.squeeze(x, axis),
                   [lambda g, ans, x, axis: fnp.reshape(g, shape_of(x))],
                   linear=True,
                   spec=Spec([(((1, 3, 1),), {"axis": None}), (((2, 1),), {"axis": (1,)})]),
                   batch=batch_rules.squeeze)


@differentiable(_onp.squeeze, Spec([(((1, 3, 1),), {}), (((2, 1),), {"axis": -1}),
                                    (((1, 2, 1),), {"axis": (0, 2)})]))
def squeeze(a, axis=None):
    a = fnp.asarray(a)
    out = squeeze_p(a, axis=None if axis is None else as_tuple(read_values(axis)))
    return view_of(out, a, _RESHAPED_C)


@differentiable(_onp.broadcast_to, Spec([(((3,),), {"shape": (2, 3)}), (((),), {"shape": 3}),
                                         (((2, 1),), {"shape": (2, 2, 3)})]))
def broadcast_to(array, shape, subok=False):
    # (numpy's result is a read-only view, which no write reaches: not marked as a view,
    # since tile, repeat and full, numpy's copies, are built on this function)
    return broadcast_to_p(fnp.asarray(array), shape=as_tuple(read_values(shape)))


def _concatenate_vjp(i, g, ans, *xs, axis):
    start = sum(shape_of(x)[axis] for x in xs[:i])
    idx = (slice(None),) * axis + (slice(start, start + shape_of(xs[i])[axis]),)
    return fnp.getitem(g, idx)


concatenate_p = define("concatenate", lambda *xs, axis: _onp.concatenate(xs, axis=axis),
                       vjp_by_argnum=_concatenate_vjp, jointly_linear=True,
                       spec=Spec([(((2,), (3,)), {"axis": 0}),
                                  (((2, 3), (1, 3), (2, 3)), {"axis": 0}),
                                  (((2, 1), (2, 3)), {"axis": 1})]), batch=batch_rules.joining)


def cast_all(name, arrays, dtype, casting):
    """numpy's ``dtype=`` and ``casting=`` of the joining functions: every array cast to the
    result dtype, after checking the cast is allowed (numpy's TypeError if not)."""
    if dtype is None and casting == "same_kind":
        return arrays
    target = _onp.dtype(dtype) if dtype is not None else \
        _onp.result_type(*[dtype_of(a) for a in arrays])
    for a in arrays:
        if not _onp.can_cast(dtype_of(a), target, casting=casting):
            raise TypeError(f"fgrad.numpy.{name}: cannot cast array data from "
                            f"{dtype_of(a)!r} to {target!r} according to the rule {casting!r}")
    return [astype(a, target) for a in arrays]


@differentiable(_onp.concatenate, Spec([(((2, 3), (1, 3)), {"axis": 0}),
                                        (((2, 1), (2, 3)), {"axis": -1}),
                                        (((2, 2), (3,)), {"axis": None}),
                                        (((2,), (3,)), {"dtype": _F64})], call=list_call))
def concatenate(arrays, axis=0, out=None, *, dtype=None, casting="same_kind", **kwargs):
    """Lists holding tracers and floats may be joined; ``dtype=`` and ``casting=`` work on
    traced values, ``out=`` raises TracerMutationError (use the returned array)."""
    unsupported_kwargs("concatenate", dict(kwargs, out=out))
    arrays = cast_all("concatenate", [fnp.asarray(a) for a in arrays], dtype, casting)
    if axis is None:
        arrays, axis = [fnp.ravel(a) for a in arrays], 0
    if any(_ndim(a) == 0 for a in arrays):
        raise ValueError("zero-dimensional arrays cannot be concatenated")
    return concatenate_p(*arrays, axis=axis_index(axis, _ndim(arrays[0])))


def _stack_vjp(i, g, ans, *xs, axis):
    return fnp.getitem(g, (slice(None),) * axis + (i,))


stack_p = define("stack", lambda *xs, axis: _onp.stack(xs, axis=axis),
                 vjp_by_argnum=_stack_vjp, jointly_linear=True,
                 spec=Spec([(((3,), (3,)), {"axis": 0}), (((2, 3), (2, 3), (2, 3)), {"axis": 2}),
                            (((), ()), {"axis": 0})]), batch=batch_rules.joining)


@differentiable(_onp.stack, Spec([(((3,), (3,)), {"axis": -1}), (((2, 3), (2, 3)), {"axis": 1}),
                                  (((), (), ()), {})], call=list_call))
def stack(arrays, axis=0, out=None, *, dtype=None, casting="same_kind", **kwargs):
    """Lists holding tracers and floats may be stacked; ``dtype=`` and ``casting=`` work on
    traced values, ``out=`` raises TracerMutationError (use the returned array)."""
    unsupported_kwargs("stack", dict(kwargs, out=out))
    arrays = cast_all("stack", [fnp.asarray(a) for a in arrays], dtype, casting)
    return stack_p(*arrays, axis=axis_index(axis, _ndim(arrays[0]) + 1))


def _astype_vjp(g, ans, x, dtype):
    if _onp.iscomplexobj(value_for_shape(g)) and not _onp.iscomplexobj(value_for_shape(x)):
        g = fnp.real(g)  # the real part is the real input's share of a complex cotangent
    return fnp.astype(g, dtype_of(x))


astype_p = define("astype", lambda x, dtype: as_array(x).astype(dtype), [_astype_vjp],
                  linear=True,
                  spec=Spec([(((3,),), {"dtype": _F32}),
                             (((2, 2),), {"dtype": _F64})],
                            rtol=1e-4, eps=1e-2),  # float32 outputs need a long step
                  batch=batch_rules.elementwise)


def astype(x, dtype, /, *, copy=True, device=None):
    """numpy.astype: to a float or complex dtype the derivative passes through; to an integer
    or boolean dtype the result is a plain array (zero derivative)."""
    dtype = _onp.dtype(dtype)
    if not contains_tracer(x):
        return _onp.astype(x, dtype, copy=copy) if isinstance(x, _onp.ndarray) else \
            as_array(x).astype(dtype)
    if device not in (None, "cpu"):
        unsupported_kwargs("astype", {"device": device})
    x = asarray(x)
    if not _onp.issubdtype(dtype, _onp.inexact):
        return _to_integers(x, dtype=dtype)
    if dtype_of(x) == dtype:  # (numpy's copy by default: a new name, no alias of x)
        return copied(x) if copy else x
    return astype_p(x, dtype=dtype)


# to an integer or boolean dtype: no derivative (staged or batched, never read)
_to_integers = values_only(lambda x, dtype: as_array(x).astype(dtype), "astype_values",
                           batch=batch_rules.elementwise)


# float32 outputs of float64 inputs need a long finite-difference step, and the reverse-mode
# check's inner products, rounded to float32, may cancel (1.8e-4 relative seen at 0.04)
register_function("astype", astype, _onp.astype,
                  Spec([(((3,),), {"dtype": "float32"}), (((2, 2),), {"dtype": _F64}),
                        (((),), {"dtype": _onp.complex128})], rtol=1e-4, atol=1e-5, eps=1e-2,
                       call=lambda f, x, dtype: f(x, dtype)))


def _from_nested(obj, dtype):
    """An array from a (nested) list or tuple holding tracers: stacked, so it is traced."""
    if isinstance(obj, Tracer):
        return obj if dtype is None else astype(obj, dtype, copy=False)
    if isinstance(obj, (list, tuple)) and contains_tracer(obj):
        return stack_p(*[asarray(_from_nested(o, dtype)) for o in obj], axis=0)
    return _onp.asarray(obj, dtype=dtype)


def _nested_call(f, *xs, **params):
    """``Spec.call`` for the array constructors: one array as itself; several scalars as a
    nested list mixing them with Python floats (``[[x, 1.0], [y, 2.0]]``)."""
    if len(xs) == 1:
        return f(xs[0], **params)
    return f([[x, float(i)] for i, x in enumerate(xs)], **params)


def _no_like(name, like, device):
    unsupported_kwargs(name, {"like": like, "device": None if device == "cpu" else device})


@functools.wraps(_onp.asarray)
def _asarray(a, dtype=None, *args, **kwargs):
    # numpy.asarray, except that another library's array stays in its library: numpy would
    # compute a Dask array and CuPy refuses, while code (fgrad's rules too) calls asarray to
    # make sure it holds an array, which that already is
    if foreign_array(a):
        return a if dtype is None else a.astype(dtype)
    return _onp.asarray(a, dtype, *args, **kwargs)


@differentiable(_asarray, Spec([(((2, 3),), {}), (((3,),), {"dtype": _F64}),
                                    (((), ()), {})], call=_nested_call))
def asarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    """A (nested) list or tuple holding tracers (and plain numbers) gives one traced array,
    with numpy's dtype. ``like=`` (and a device other than 'cpu') is refused on traced
    values. Another library's array (Dask, CuPy) is returned as it is, in its own library."""
    _no_like("asarray", like, device)
    out = _from_nested(a, None if dtype is None else _onp.dtype(dtype))
    return copied(out) if copy and out is a else out


@differentiable(_onp.array, Spec([(((2, 3),), {}), (((3,),), {"ndmin": 3}),
                                  (((), ()), {"ndmin": 3}), (((), (), ()), {})],
                                 call=_nested_call))
def array(object, dtype=None, *, copy=True, order="K", subok=False, ndmin=0, ndmax=0,
          like=None):
    """A (nested) list or tuple holding tracers (and plain numbers) gives one traced array,
    with numpy's dtype; ``ndmin`` works. ``ndmax`` (which makes object arrays) and ``like``
    are refused on traced values."""
    unsupported_kwargs("array", {"like": like, "ndmax": ndmax or None})
    out = _from_nested(object, None if dtype is None else _onp.dtype(dtype))
    if _ndim(out) < ndmin:
        out = reshape(out, (1,) * (ndmin - _ndim(out)) + shape_of(out))
    return copied(out) if copy and isinstance(object, Tracer) else out


def _filled(fill_value, shape, dtype):
    """An array of ``shape`` holding a traced ``fill_value`` (a broadcast, so differentiable)."""
    fill = asarray(fill_value)
    return broadcast_to(fill if dtype is None else astype(fill, dtype), shape)


@differentiable(_onp.full_like, Spec([(((2, 3), ()), {}), (((2, 3), (3,)), {"dtype": _F64}),
                                      (((2,), ()), {"shape": (2, 2)})]))
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, *, device=None):
    """No derivative with respect to ``a`` (only its shape and dtype are
    used); a traced ``fill_value`` is broadcast, with its derivative."""
    _no_like("full_like", None, device)
    template = _onp.empty_like(value_for_shape(a), dtype=dtype, shape=shape)
    if not contains_tracer(fill_value):
        return _onp.full_like(template, fill_value)
    return _filled(fill_value, template.shape, template.dtype)


@differentiable(_onp.full, Spec([(((),), {"shape": (2, 3)}), (((3,),), {"shape": (2, 3)}),
                                 (((),), {"shape": 2, "dtype": _F64})],
                                call=lambda f, x, shape, **p: f(shape, x, **p)))
def full(shape, fill_value, dtype=None, order="C", *, device=None, like=None):
    """A traced ``fill_value`` is broadcast, with its derivative."""
    _no_like("full", like, device)
    return _filled(fill_value, as_tuple(read_values(shape)), dtype)


# --- composed of the primitives above ----------------------------------------------------

@differentiable(_onp.moveaxis, Spec([(((2, 3, 4),), {"source": 0, "destination": -1}),
                                     (((2, 3, 4),), {"source": (0, -1), "destination": (2, 0)})]))
def moveaxis(a, source, destination):
    a = asarray(a)
    n = _ndim(a)
    source, destination = axis_tuple(source, n), axis_tuple(destination, n)
    if len(source) != len(destination):
        raise ValueError("`source` and `destination` arguments must have the same number of "
                         "elements")
    order = [i for i in range(n) if i not in source]
    for dest, src in sorted(zip(destination, source)):
        order.insert(dest, src)
    return transpose(a, order)


@differentiable(_onp.rollaxis, Spec([(((2, 3, 4),), {"axis": -1}),
                                     (((2, 3, 4),), {"axis": 0, "start": 3}),
                                     (((2, 3),), {"axis": 1, "start": 1})]))
def rollaxis(a, axis, start=0):
    a = asarray(a)
    n = _ndim(a)
    axis = axis_index(axis, n)
    start = int(start)
    if start < 0:
        start += n
    if not 0 <= start < n + 1:
        raise _AxisError(
            f"'start' arg requires {-n} <= start < {n + 1}, but {start} was passed in")
    if axis < start:
        start -= 1
    if axis == start:
        return a
    order = list(range(n))
    order.remove(axis)
    order.insert(start, axis)
    return transpose(a, order)


@differentiable(_onp.matrix_transpose, Spec([(((2, 3),), {}), (((2, 3, 4),), {})]))
def matrix_transpose(x, /):
    x = asarray(x)
    if _ndim(x) < 2:
        raise ValueError(f"Input array must be at least 2-dimensional, but it is {_ndim(x)}")
    return swapaxes(x, -1, -2)


@differentiable(_onp.broadcast_arrays, Spec([(((3,), (2, 1)), {}), (((), (2,), (2, 2)), {})]))
def broadcast_arrays(*args, subok=False):
    """A tuple of (traced) arrays, each with its own derivative."""
    args = [asarray(a) for a in args]
    shape = _onp.broadcast_shapes(*[shape_of(a) for a in args])
    return tuple(a if shape_of(a) == shape else broadcast_to(a, shape) for a in args)


def _at_least(ndim, place):
    """``atleast_{ndim}d``: arrays of fewer dimensions get ones where ``place`` says."""
    def traced(*arys):
        out = []
        for a in arys:
            a = asarray(a)
            shape = shape_of(a)
            out.append(a if len(shape) >= ndim else reshape(a, place[len(shape)](shape)))
        return out[0] if len(out) == 1 else tuple(out)
    return traced


_AT_LEAST = [(((),), {}), (((3,),), {}), (((2, 3),), {}), (((), (3,), (2, 2, 2)), {})]
atleast_1d = differentiable(_onp.atleast_1d, Spec(_AT_LEAST))(
    _at_least(1, {0: lambda s: (1,)}))
atleast_2d = differentiable(_onp.atleast_2d, Spec(_AT_LEAST))(
    _at_least(2, {0: lambda s: (1, 1), 1: lambda s: (1,) + s}))
atleast_3d = differentiable(_onp.atleast_3d, Spec(_AT_LEAST))(
    _at_least(3, {0: lambda s: (1, 1, 1), 1: lambda s: (1,) + s + (1,),
                  2: lambda s: s + (1,)}))


@differentiable(_onp.meshgrid, Spec([(((3,), (2,)), {}), (((2,), (3,), (2,)), {"indexing": "ij"}),
                                     (((3,), (2,)), {"sparse": True}), (((3,),), {})]))
def meshgrid(*xi, copy=True, sparse=False, indexing="xy"):
    """A tuple of (traced) grids; each input's derivative is spread over the
    grid it fills (broadcast), so ``grad`` sums over the repeated axes."""
    if indexing not in ("xy", "ij"):
        raise ValueError("Valid values for `indexing` are 'xy' and 'ij'.")
    n = len(xi)
    shapes = [(1,) * i + (-1,) + (1,) * (n - i - 1) for i in range(n)]
    if indexing == "xy" and n > 1:
        shapes[0], shapes[1] = (1, -1) + (1,) * (n - 2), (-1, 1) + (1,) * (n - 2)
    out = [reshape(asarray(x), s) for x, s in zip(xi, shapes)]
    out = out if sparse else broadcast_arrays(*out)
    return tuple(copied(o) for o in out) if copy else tuple(out)


@differentiable(_onp.copy, Spec([(((2, 3),), {}), (((),), {"order": "F"})]))
def copy(a, order="K", subok=False):
    """A new tracer of the same traced value (a name of its own: ``views.py``)."""
    return copied(asarray(a))


@differentiable(_onp.asanyarray, Spec([(((2, 3),), {}), (((), ()), {})], call=_nested_call))
def asanyarray(a, dtype=None, order=None, *, device=None, copy=None, like=None):
    _no_like("asanyarray", like, device)
    return asarray(a, dtype)


def _contiguous(name):
    def traced(a, dtype=None, *, like=None):
        _no_like(name, like, None)
        a = asarray(a, dtype)
        return reshape(a, (1,)) if _ndim(a) == 0 else a  # numpy gives 0-d input one axis
    return traced


_CONTIGUOUS = Spec([(((2, 3),), {}), (((),), {}), (((3,),), {"dtype": _F64})])
ascontiguousarray = differentiable(_onp.ascontiguousarray, _CONTIGUOUS)(
    _contiguous("ascontiguousarray"))
asfortranarray = differentiable(_onp.asfortranarray, _CONTIGUOUS)(_contiguous("asfortranarray"))


@differentiable(_onp.require, Spec([(((2, 3),), {"requirements": "CW"}),
                                    (((3,),), {"dtype": _F64, "requirements": ["F", "A"]}),
                                    (((),), {})]))
def require(a, dtype=None, requirements=None, *, like=None):
    """The memory-layout requirements are checked, and hold trivially for
    traced values, which are immutable."""
    _no_like("require", like, None)
    _onp.require(_onp.zeros(1), None, requirements)  # numpy's errors for bad requirements
    return asarray(a, dtype)


@differentiable(_onp.asarray_chkfinite, Spec([(((2, 3),), {}), (((3,),), {"dtype": _F64})]))
def asarray_chkfinite(a, dtype=None, order=None):
    """The check is a primitive with an effect where the values are staged or batched: a
    replay (every example of a batch) raises numpy's ``ValueError``, and no value is read."""
    a = asarray(a, dtype)
    v = without_derivative(a)
    if isinstance(v, Tracer):
        _finite_check(v)
    else:
        _check_finite(v)
    return a


def _check_finite(v):
    if _onp.issubdtype(_onp.result_type(v), _onp.inexact) and not _onp.isfinite(v).all():
        raise ValueError("array must not contain infs or NaNs")
    return _onp.zeros(0)


# (kept by a staged graph though nothing reads it, and run at each replay; a batch is
# checked whole: an example with an inf raises, as the loop would)
_finite_check = Primitive("asarray_chkfinite_check", _check_finite, differentiable=False,
                          effect=True, batch=lambda prim, size, vals, dims: (prim(vals[0]), None))
