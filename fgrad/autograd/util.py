"""``autograd.util``: the helpers libraries built on autograd's internals use (``subvals``,
``subval``, ``func``, ``toposort``), and ``quick_grad_check``, deprecated since autograd
1.2."""
import operator
import warnings
from typing import Any, Callable, Iterable, Iterator

from .test_util import check_grads

__all__ = ["subvals", "subval", "func", "toposort", "quick_grad_check"]


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


def subval(x: Iterable[Any], i: int, v: Any) -> tuple[Any, ...]:
    """``x`` as a tuple, with item ``i`` replaced by ``v``."""
    return subvals(x, [(i, v)])


def func(f: Any) -> Any:
    """``f`` itself (autograd's way to name a method, ``func(Class.method)``, for ``defvjp``).
    """
    return f


def toposort(end_node: Any, parents: Callable[[Any], Iterable[Any]] = operator.attrgetter(
        "parents")) -> Iterator[Any]:
    """The nodes ``end_node`` depends on, ``end_node`` first, each before every node it
    depends on (``parents(node)`` gives a node's parents).

    >>> class N:
    ...     def __init__(self, name, *parents):
    ...         self.name, self.parents = name, parents
    >>> a = N("a")
    >>> [n.name for n in toposort(N("c", a, N("b", a)))]
    ['c', 'b', 'a']
    """
    children = {}
    stack = [end_node]
    while stack:
        node = stack.pop()
        if node in children:
            children[node] += 1
        else:
            children[node] = 1
            stack.extend(parents(node))
    ready = [end_node]
    while ready:
        node = ready.pop()
        yield node
        for p in parents(node):
            children[p] -= 1
            if children[p] == 0:
                ready.append(p)


def quick_grad_check(fun: Callable[..., Any], arg0: Any, extra_args: tuple = (),
                     kwargs: dict | None = None, verbose: bool = True, eps: float = 1e-4,
                     rtol: float = 1e-4, atol: float = 1e-6, rs: Any = None) -> None:
    """autograd's deprecated ``quick_grad_check``: checks the reverse-mode gradient of ``fun``
    in its first argument at ``arg0`` (the others ``extra_args`` and ``kwargs``), as
    ``check_grads(f, modes=["rev"], order=1)``; raises ``AssertionError`` on a mismatch."""
    warnings.warn("quick_grad_check is deprecated (autograd 1.2); use "
                  "check_grads(fun, modes=['rev'], order=1)(x)", stacklevel=2)
    check_grads(lambda x: fun(x, *extra_args, **(kwargs or {})), modes=["rev"], order=1)(arg0)
