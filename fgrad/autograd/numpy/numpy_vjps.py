"""``autograd.numpy.numpy_vjps``: the helpers autograd's VJP rules are written with, which
libraries call in their own rules: ``unbroadcast_f``, ``unbroadcast``, ``match_complex``,
``repeat_to_match_shape`` (and ``defvjp``, ``primitive``, ``register_notrace``, which
libraries import from here too)."""
import math
from typing import Any, Callable

import numpy as _onp

import fgrad.numpy as fnp
from ...numpy.broadcasting import unbroadcast as _unbroadcast
from ...core.tracer import value_for_shape
from .. import defvjp, primitive  # noqa: F401
from ..extend import register_notrace  # noqa: F401

__all__ = ["unbroadcast", "unbroadcast_f", "match_complex", "repeat_to_match_shape"]


def unbroadcast(x: Any, target_meta: Any, broadcast_idx: int = 0) -> Any:
    """``x`` summed down to the shape of ``target_meta`` (autograd's ``metadata(target)``,
    ``(shape, ndim, dtype, iscomplex)``, or a shape)."""
    shape = target_meta[0] if target_meta and isinstance(target_meta[0], tuple) else target_meta
    return _unbroadcast(x, tuple(shape))


def unbroadcast_f(target: Any, f: Callable[[Any], Any]) -> Callable[[Any], Any]:
    """autograd's ``unbroadcast_f(target, f)``: ``g -> f(g)`` summed down to ``target``'s
    shape, the cotangent of a broadcast argument.

    >>> import numpy
    >>> from fgrad.autograd.numpy.numpy_vjps import unbroadcast_f
    >>> unbroadcast_f(numpy.ones(3), lambda g: 2 * g)(numpy.ones((4, 3))).tolist()
    [8.0, 8.0, 8.0]
    """
    shape = fnp.shape(value_for_shape(target))
    return lambda g: _unbroadcast(f(g), tuple(shape))


def match_complex(target: Any, x: Any) -> Any:
    """autograd's ``match_complex(target, x)``: ``x`` made real or complex as ``target`` is
    (the real part of a complex cotangent of a real argument).

    >>> from fgrad.autograd.numpy.numpy_vjps import match_complex
    >>> match_complex(1.0, 2.0 + 3.0j), match_complex(1j, 2.0)
    (2.0, (2+0j))
    """
    if fnp.iscomplexobj(x) and not fnp.iscomplexobj(target):
        return fnp.real(x)
    return x + 0j if fnp.iscomplexobj(target) and not fnp.iscomplexobj(x) else x


def repeat_to_match_shape(g: Any, shape: tuple, dtype: Any, axis: Any,
                          keepdims: bool) -> tuple[Any, int]:
    """autograd's ``repeat_to_match_shape(g, shape, dtype, axis, keepdims)``: the cotangent
    ``g`` of a reduction over ``axis`` spread back over an argument of ``shape``, and the
    number of elements each output summed (a mean's divisor).

    >>> import numpy
    >>> from fgrad.autograd.numpy.numpy_vjps import repeat_to_match_shape
    >>> g, n = repeat_to_match_shape(numpy.array([1.0, 2.0]), (2, 3), float, 1, False)
    >>> g.tolist(), n
    ([[1.0, 1.0, 1.0], [2.0, 2.0, 2.0]], 3)
    """
    shape = tuple(shape)
    if shape == ():
        return g, 1
    axes = range(len(shape)) if axis is None else axis if isinstance(axis, (tuple, list)) \
        else (axis,)
    axes = [a % len(shape) for a in axes]
    kept = tuple(1 if i in axes else n for i, n in enumerate(shape))
    spread = fnp.reshape(g, kept) + _onp.zeros(shape, dtype=dtype)
    return spread, math.prod(shape[a] for a in axes)
