"""``autograd.builtins``: autograd boxes tuples, lists and dicts of traced values, and gives
``isinstance``, ``type``, ``tuple``, ``list`` and ``dict`` that see through its boxes. fgrad
takes containers as pytrees and never boxes one, so ``tuple``, ``list`` and ``dict`` are
Python's own; ``isinstance`` and ``type`` see through fgrad's tracers to the value's class (a
traced array is an ``ndarray`` to them, as autograd's boxed one is), and
``SequenceBox``/``DictBox`` are classes no value of fgrad's is an instance of (what a
library's ``isinstance(x, DictBox)`` test means: not a traced container)."""
import builtins as _builtins
from typing import Any

from ..core.tracer import value_for_shape

__all__ = ["isinstance", "type", "tuple", "list", "dict", "SequenceBox", "DictBox"]

tuple = _builtins.tuple
list = _builtins.list
dict = _builtins.dict


def isinstance(obj: Any, classinfo: Any) -> bool:
    """Python's ``isinstance`` of the value under ``obj``'s tracers (of ``obj`` itself where
    it is not traced).

    >>> import numpy, fgrad
    >>> from fgrad.autograd.builtins import isinstance
    >>> fgrad.grad(lambda x: float(isinstance(x, numpy.ndarray)) * x.sum())(numpy.ones(2))
    array([1., 1.])
    """
    return _builtins.isinstance(value_for_shape(obj), classinfo)


def type(obj: Any) -> Any:
    """Python's ``type`` of the value under ``obj``'s tracers."""
    return _builtins.type(value_for_shape(obj))


class SequenceBox:
    """autograd's box of a traced tuple or list (fgrad has none: see the module's text)."""


class DictBox:
    """autograd's box of a traced dict (fgrad has none: see the module's text)."""
