"""``autograd.tracer``: ``primitive``, ``notrace_primitive``, ``Box`` and the two questions a
library asks of a value, ``isbox`` (is it traced?) and ``getval`` (its value, untraced)."""
from typing import Any

from . import primitive  # noqa: F401
from .extend import Box, notrace_primitive  # noqa: F401
from ..core.tracer import Tracer, without_derivative

__all__ = ["primitive", "notrace_primitive", "Box", "isbox", "getval"]


def isbox(x: Any) -> bool:
    """Whether ``x`` is a traced value (autograd's box, fgrad's tracer).

    >>> import fgrad
    >>> from fgrad.autograd.tracer import isbox
    >>> isbox(1.0), bool(fgrad.grad(lambda x: float(isbox(x)) * x)(1.0))
    (False, True)
    """
    return isinstance(x, Tracer)


def getval(x: Any) -> Any:
    """``x``'s value without its derivative: the plain number or array under it (``x``
    itself when it is not traced), a constant to every differentiating transform, as
    autograd's is. Under ``jit`` or ``vmap`` it stays staged or batched (a value that staging
    or batching did not see would be a stale constant or one example's).

    >>> import fgrad
    >>> from fgrad.autograd.tracer import getval
    >>> float(fgrad.grad(lambda x: x * getval(x))(3.0))
    3.0
    """
    return without_derivative(x)
