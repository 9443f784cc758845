"""``autograd.misc.tracers``: ``const_graph``, autograd's cache of a function's graph of
primitives, replayed on new values; fgrad's staging (``fgrad.jit``) is that cache."""
import functools
from typing import Any, Callable

from ...jitting import jit

__all__ = ["const_graph"]


def const_graph(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., Any]:
    """autograd's ``const_graph(fun, *args, **kwargs)``: ``fun`` with its leading positional
    arguments and keywords fixed to ``args`` and ``kwargs``, traced at its first call and
    replayed afterwards: a replay runs the primitives that depend on the arguments, no Python
    of ``fun``. It is ``fgrad.jit`` of that partial function, so a call with other shapes or
    dtypes, or on which Python control flow goes another way, is traced again (autograd's
    would replay the first graph regardless).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd.misc import const_graph
    >>> calls = []
    >>> def f(scale, x):
    ...     calls.append(x)
    ...     return scale * np.sin(x)
    >>> g = const_graph(f, 2.0)
    >>> [round(float(g(v)), 6) for v in (0.5, 1.0)], len(calls)
    ([0.958851, 1.682942], 1)
    """
    return functools.wraps(fun)(jit(functools.partial(fun, *args, **kwargs)))
