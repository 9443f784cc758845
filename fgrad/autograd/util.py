"""``autograd.util``: ``subvals`` (a tuple with some items replaced), which libraries built on
autograd's internals use, and ``quick_grad_check``, deprecated since autograd 1.2."""
import warnings
from typing import Any, Callable, Iterable

from .test_util import check_grads

__all__ = ["subvals", "quick_grad_check"]


def subvals(x: Iterable[Any], ivs: Iterable[tuple[int, Any]]) -> tuple[Any, ...]:
    """``x`` as a tuple, with item ``i`` replaced by ``v`` for each ``(i, v)`` of ``ivs``.

    >>> from fgrad.autograd.util import subvals
    >>> subvals((1, 2, 3), [(0, "a"), (2, "c")])
    ('a', 2, 'c')
    """
    out = list(x)
    for i, v in ivs:
        out[i] = v
    return tuple(out)


def quick_grad_check(fun: Callable[..., Any], arg0: Any, extra_args: tuple = (),
                     kwargs: dict | None = None, verbose: bool = True, eps: float = 1e-4,
                     rtol: float = 1e-4, atol: float = 1e-6, rs: Any = None) -> None:
    """autograd's deprecated ``quick_grad_check``: checks the reverse-mode gradient of ``fun``
    in its first argument at ``arg0`` (the others ``extra_args`` and ``kwargs``), as
    ``check_grads(f, modes=["rev"], order=1)``; raises ``AssertionError`` on a mismatch."""
    warnings.warn("quick_grad_check is deprecated (autograd 1.2); use "
                  "check_grads(fun, modes=['rev'], order=1)(x)", stacklevel=2)
    check_grads(lambda x: fun(x, *extra_args, **(kwargs or {})), modes=["rev"], order=1)(arg0)
