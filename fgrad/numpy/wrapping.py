"""How fgrad.numpy's functions stand in for numpy's.

``traced_version_of(np_fn)`` decorates the traced path of a function: a call holding no tracer
(anywhere in its arguments, lists included) goes to numpy itself, untouched, so values, dtypes
and errors are numpy's exactly; a call holding one runs the decorated function, which
normalises the arguments and calls primitives.
"""
import functools

import numpy as _onp

from .. import errors
from ..tracer import contains_tracer


def traced_version_of(np_fn):
    def decorate(traced):
        @functools.wraps(np_fn)
        def wrapper(*args, **kwargs):
            if contains_tracer(args) or (kwargs and contains_tracer(kwargs)):
                return traced(*args, **kwargs)
            return np_fn(*args, **kwargs)

        wrapper._fgrad_traced = traced
        return wrapper

    return decorate


def as_tuple(x):
    """An int-or-sequence argument (a shape, an axis) as a tuple."""
    return (x,) if isinstance(x, (int, _onp.integer)) else tuple(x)


def unsupported_kwargs(name, kwargs):
    """Traced calls take numpy's core arguments; the rest (``out=``, ``casting=``, ...) are
    refused by name rather than ignored. Arguments left at None are no request at all."""
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if "out" in kwargs:
        raise errors.out_argument(name)
    if kwargs:
        raise NotImplementedError(
            f"fgrad.numpy.{name}: the argument(s) {', '.join(sorted(kwargs))} are not supported "
            "on traced values; call it without them (or on fgrad.stop_gradient(x)).")
