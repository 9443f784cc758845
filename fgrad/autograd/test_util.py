"""``autograd.test_util``: ``check_grads`` with autograd's spelling,
``check_grads(f, modes=..., order=...)(*args)``, checked by ``fgrad.testing.check_grads``
(finite differences along random directions, every mode combination to ``order``)."""
from typing import Any, Callable, Sequence

import numpy as _onp

from ..traces import arguments
from ..testing import check_grads as _check

__all__ = ["check_grads"]


def check_grads(f: Callable[..., Any], x: Any = None, modes: Sequence[str] = ("fwd", "rev"),
                order: int = 2, argnum: int = 0) -> Any:
    """autograd's ``check_grads``: ``check_grads(f, modes=["rev"], order=1)(*args)`` checks
    ``f``'s derivatives with respect to argument ``argnum`` (0) at ``args``; with ``x`` given
    (``check_grads(f, x)``) it checks at ``x`` at once. Raises ``AssertionError`` on a
    mismatch.

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd.test_util import check_grads
    >>> check_grads(lambda x, y: np.sin(x) * y, modes=["rev"], order=2)(0.3, 2.0)
    """
    def at(*args, **kwargs):
        along, x = arguments.argnums_partial(f, "check_grads", args, kwargs, argnum)
        _check(along, tuple(_as_float(v) for v in x), order=order, modes=tuple(modes))

    if x is not None:
        return at(x)
    return at


def _as_float(v):
    a = _onp.asarray(v)
    return a.astype(float) if a.dtype.kind not in "fc" else v
