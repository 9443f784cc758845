"""``autograd.numpy.numpy_wrapper``: the namespace ``autograd.numpy`` re-exports, and the
helpers of autograd's of that name that libraries import from it.

Every name is ``fgrad.numpy``'s, but ``stack``, which takes any iterable of arrays as
autograd's does (``np.stack(d.values())``; numpy itself asks for a sequence); autograd's own
``make_diagonal`` is added, and ``__version__`` is numpy's, as in ``autograd.numpy``; the integer
types ``int8`` ... ``int64`` convert traced values, as autograd's do. autograd's helpers:
``wrap_namespace(old, new)`` (a module's functions as primitives, to be given rules: libraries
wrap ``scipy.linalg``'s this way), ``array_from_args``, ``concatenate_args``, ``metadata``,
``parse_einsum_input``, ``wrap_if_boxes_inside``, ``wrap_intdtype``, ``notrace_functions``,
``numpy_version``, ``_astype``."""
import builtins as _py
from typing import Any

import numpy as _onp

import fgrad.numpy as _fnp
from fgrad.numpy import *  # noqa: F401,F403
from fgrad.numpy import linalg, fft, random  # noqa: F401

from ...core.tracer import contains_tracer
from ..extend import notrace_primitive, primitive  # noqa: F401  (autograd's module has them)


def stack(arrays: Any, axis: int = 0, out: Any = None, **kwargs: Any) -> Any:
    """``numpy.stack`` of any iterable of arrays (autograd's leniency: ``dict.values()``).

    >>> import fgrad.autograd.numpy as anp
    >>> anp.stack({"a": anp.ones(2), "b": anp.zeros(2)}.values()).shape
    (2, 2)
    """
    return _fnp.stack(list(arrays), axis=axis, out=out, **kwargs)


def where(condition: Any, *args: Any, **kwargs: Any) -> Any:
    """autograd's ``where``: numpy's, ``condition``, ``x`` and ``y`` also by keyword; where
    none of them holds an array or a traced value (Python numbers, lists of them), the result
    is a Python one too, as autograd gives it (a number, or a list).

    >>> import fgrad.autograd.numpy as anp
    >>> anp.where(True, 1, 2), anp.where([True, False], [1.0, 2.0], [3.0, 4.0])
    (1, [1.0, 4.0])
    >>> anp.where(condition=anp.array([True, False]), x=1.0, y=0.0).tolist()
    [1.0, 0.0]
    """
    if not args and not kwargs:
        return _fnp.where(condition)
    if len(args) + len(kwargs) != 2:
        raise ValueError("where: either both or neither of x and y should be given")
    x = args[0] if args else kwargs.get("x")
    y = args[1] if len(args) > 1 else kwargs.get("y")
    out = _fnp.where(condition, x, y)
    # (``any`` here is numpy's, from the star import: the loops are written out)
    if isinstance(out, _onp.ndarray) and not (_holds_array(condition) or _holds_array(x) or
                                             _holds_array(y)):
        return out.tolist()
    return out


def _holds_array(x):
    if isinstance(x, (list, tuple)):
        for item in x:
            if _holds_array(item):
                return True
        return False
    return isinstance(x, (_onp.ndarray, _onp.generic)) or contains_tracer(x)


def make_diagonal(D: Any, offset: int = 0, axis1: int = -1, axis2: int = -2) -> Any:
    """autograd's ``make_diagonal``: the arrays whose diagonals (over two new last axes) are
    ``D``'s last axis, zero elsewhere; the inverse of ``diagonal(A, axis1=-1, axis2=-2)``.
    As in autograd, only ``offset=0``, ``axis1=-1``, ``axis2=-2``.

    >>> import fgrad.autograd.numpy as anp
    >>> anp.make_diagonal(anp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("make_diagonal: only offset=0, axis1=-1, axis2=-2 (as in "
                                  "autograd)")
    n = _fnp.shape(D)[-1]
    return _fnp.expand_dims(D, -1) * _fnp.eye(n, dtype=_fnp.result_type(D, 0.0))


class _IntType(type):
    """The type of autograd's integer scalar types: an instance or a subclass of numpy's type
    is one of them. (autograd's are plain subclasses, so ``isinstance(numpy.int64(1),
    autograd.numpy.int64)`` is False there; fgrad keeps numpy's answer.)"""

    def __instancecheck__(cls, obj):
        return isinstance(obj, cls.numpy_type)

    def __subclasscheck__(cls, sub):
        return issubclass(sub, cls.numpy_type)


def _int_type(numpy_type):
    """numpy's ``numpy_type`` that also converts a traced value (autograd's
    ``wrap_intdtype``): the integers, indices for instance, have no derivative; staged or
    batched, the conversion is too."""
    def __new__(cls, *args, **kwargs):
        if len(args) == 1 and not kwargs and contains_tracer(args[0]):
            return _fnp.astype(_fnp.asarray(args[0]), numpy_type)
        return numpy_type(*args, **kwargs)

    return _IntType(numpy_type.__name__, (numpy_type,),
                    {"__new__": __new__, "numpy_type": numpy_type, "__module__": __name__,
                     "__doc__": f"numpy.{numpy_type.__name__}, also of traced values: "
                                f"``{numpy_type.__name__}(W[:, -1])`` as integer indices."})


int8, int16, int32, int64 = map(_int_type, (_onp.int8, _onp.int16, _onp.int32, _onp.int64))
wrap_intdtype = _int_type

__version__ = numpy_version = _onp.__version__

# (autograd's: functions of a value's shape and type, run on plain values)
notrace_functions = [_onp.ndim, _onp.shape, _onp.iscomplexobj, _onp.result_type]


def wrap_namespace(old: dict, new: dict) -> None:
    """autograd's ``wrap_namespace(old, new)``: each function of the namespace ``old`` (a
    module's ``__dict__``) put into ``new`` as a primitive, to be given rules with ``defvjp``
    (``notrace_functions`` run on plain values); numbers, ``None`` and classes copied, numpy's
    integer types made to convert traced values; anything else left out. Libraries written for
    autograd wrap ``scipy.linalg`` or ``numpy.linalg`` this way and give their own rules.

    >>> import math, fgrad
    >>> from fgrad.autograd.extend import defvjp
    >>> from fgrad.autograd.numpy.numpy_wrapper import wrap_namespace
    >>> ns = {}
    >>> wrap_namespace({"erf": math.erf, "pi": math.pi}, ns)
    >>> defvjp(ns["erf"], lambda ans, x: lambda g: g * 2 / math.sqrt(math.pi) * math.exp(-x * x))
    >>> float(fgrad.grad(ns["erf"])(0.0)) == 2 / math.sqrt(math.pi), ns["pi"] == math.pi
    (True, True)
    """
    int_types = {_onp.int8, _onp.int16, _onp.int32, _onp.int64, _onp.integer}
    wrapped: list = []  # (object, its wrapper): a function of two names is one primitive
    for name, obj in old.items():
        done = next((w for o, w in wrapped if o is obj), None)
        if done is not None:
            new[name] = done
            continue
        if _py.any(obj is f for f in notrace_functions):  # (``any``: numpy's, here)
            done = notrace_primitive(obj)
        elif callable(obj) and type(obj) is not type:
            done = primitive(obj)
        elif type(obj) is type and obj in int_types:
            done = _int_type(obj)
        elif type(obj) in (float, int, type(None), type):
            new[name] = obj
            continue
        else:
            continue
        new[name] = done
        wrapped.append((obj, done))


def array_from_args(array_args: tuple, array_kwargs: dict, *args: Any) -> Any:
    """autograd's ``array_from_args(array_args, array_kwargs, *values)``: the array of the
    values, ``numpy.array(values, *array_args, **array_kwargs)``, traced values too.

    >>> from fgrad.autograd.numpy.numpy_wrapper import array_from_args
    >>> array_from_args((), {"dtype": float}, 1, 2).tolist()
    [1.0, 2.0]
    """
    return _fnp.array(list(args), *array_args, **array_kwargs)


def concatenate_args(axis: int, *args: Any) -> Any:
    """autograd's ``concatenate_args(axis, *arrays)``: ``concatenate(arrays, axis)``.

    >>> from fgrad.autograd.numpy.numpy_wrapper import concatenate_args
    >>> concatenate_args(0, [1.0], [2.0, 3.0]).tolist()
    [1.0, 2.0, 3.0]
    """
    return _fnp.concatenate(args, axis)


def wrap_if_boxes_inside(raw_array: Any, slow_op_name: Any = None) -> Any:
    """autograd's ``wrap_if_boxes_inside``: an object array holding traced values as one
    traced array of their values (its shape kept); any other array as it is."""
    if isinstance(raw_array, _onp.ndarray) and raw_array.dtype == object:
        return _fnp.reshape(_fnp.array(list(raw_array.ravel())), raw_array.shape)
    return raw_array


@notrace_primitive
def metadata(A: Any) -> tuple:
    """autograd's ``metadata(A)``: ``(shape, ndim, dtype, iscomplex)`` of a value, traced or
    not (what ``unbroadcast`` takes).

    >>> from fgrad.autograd.numpy.numpy_wrapper import metadata
    >>> metadata(1.5)
    ((), 0, dtype('float64'), False)
    """
    return _onp.shape(A), _onp.ndim(A), _onp.result_type(A), _onp.iscomplexobj(A)


@notrace_primitive
def parse_einsum_input(*args: Any) -> Any:
    """autograd's ``parse_einsum_input(*operands)``: numpy's parse of ``einsum``'s operands,
    ``(input subscripts, output subscripts, operands)``."""
    try:  # (numpy's own, imported on the first call; its place moved in numpy 2)
        from numpy._core.einsumfunc import _parse_einsum_input
    except ImportError:
        from numpy.core.einsumfunc import _parse_einsum_input
    return _parse_einsum_input(args)


_astype = _fnp.astype  # (autograd's name of its astype primitive, which some libraries give rules)


def __getattr__(name):  # (the names fgrad.numpy makes on demand)
    return getattr(_fnp, name)
