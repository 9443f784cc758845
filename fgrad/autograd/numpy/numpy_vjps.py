"""``autograd.numpy.numpy_vjps``: the helpers autograd's VJP rules are written with, which
libraries call in their own rules: ``unbroadcast_f``, ``unbroadcast``."""
from typing import Any, Callable

import fgrad.numpy as fnp
from ...numpy.broadcasting import unbroadcast as _unbroadcast
from ...core.tracer import value_for_shape

__all__ = ["unbroadcast", "unbroadcast_f"]


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
