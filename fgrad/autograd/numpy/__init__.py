"""``autograd.numpy``: ``fgrad.numpy``, with autograd's leniencies and its submodules
``numpy_boxes`` (``ArrayBox``) and ``numpy_vjps`` (``unbroadcast_f``).

Every name is ``fgrad.numpy``'s, but ``stack``, which takes any iterable of arrays as
autograd's does (``np.stack(d.values())``; numpy itself asks for a sequence); autograd's own
``make_diagonal`` is added, and ``__version__`` is numpy's, as in ``autograd.numpy``; the integer
types ``int8`` ... ``int64`` convert traced values, as autograd's do."""
from typing import Any

import numpy as _onp

import fgrad.numpy as _fnp
from fgrad.numpy import *  # noqa: F401,F403
from fgrad.numpy import linalg, fft, random  # noqa: F401

from . import numpy_boxes, numpy_vjps  # noqa: F401
from ...core.tracer import contains_tracer


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

__version__ = _onp.__version__


def __getattr__(name):  # (the names fgrad.numpy makes on demand)
    return getattr(_fnp, name)
