"""``autograd.test_util``: ``check_grads`` with autograd's spelling,
``check_grads(f, argnum=0, modes=..., order=...)(*args)``, checked by
``fgrad.testing.check_grads`` (finite differences along random directions, every mode
combination to ``order``); ``combo_check``, which runs it over every combination of argument
and keyword values; ``check_equivalent`` and ``scalar_close``, autograd's comparisons."""
import itertools
import re
from typing import Any, Callable, Sequence

import numpy as _onp

from ..core.pytree import tree_map
from ..traces import arguments
from ..testing import check_grads as _check
from .vspaces import vspace
from .wrap_util import get_name

__all__ = ["check_grads", "combo_check", "check_equivalent", "scalar_close"]

#: autograd's tolerances of ``scalar_close``
TOL = RTOL = 1e-6


def check_grads(f: Callable[..., Any], argnum: Any = 0, modes: Sequence[str] = ("fwd", "rev"),
                order: int = 2) -> Any:
    """autograd's ``check_grads``: ``check_grads(f, argnum, modes=["rev"], order=1)(*args)``
    checks ``f``'s derivatives with respect to argument ``argnum`` (an int, or a tuple of
    them) at ``args``. Raises ``AssertionError`` on a mismatch. autograd's older form,
    ``check_grads(f, x)``, checks at ``x`` at once.

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd.test_util import check_grads
    >>> check_grads(lambda x, y: np.sin(x) * y, modes=["rev"], order=2)(0.3, 2.0)
    >>> check_grads(lambda x, y: np.sin(x) * y, (0, 1))(0.3, 2.0)
    """
    def at(*args, **kwargs):
        along, x = arguments.argnums_partial(f, "check_grads", args, kwargs, argnum)
        try:
            _check(along, tuple(_as_float(v) for v in x), order=order, modes=tuple(modes))
        except AssertionError as e:
            raise _in_autograds_words(e, f) from None

    if not _is_argnum(argnum):  # (the older form: the point itself)
        x, argnum = argnum, 0
        return at(x)
    return at


# fgrad.testing's failure names the mode and the function checked, "vjp of jvp(f) ...";
# autograd's, "Derivative (VJP) check of jvp_foo failed", which tests match on
_FAILED = re.compile(r"(jvp|vjp) of ((?:[jv]jp\()*)f\)*")


def _in_autograds_words(error, f):
    m = _FAILED.match(str(error))
    if m is None:
        return error
    name = m.group(2).replace("(", "_") + get_name(getattr(f, "__wrapped__", f))
    return AssertionError(f"Derivative ({m.group(1).upper()}) check of {name} failed: {error}")


def _is_argnum(a):
    return type(a) is int or (type(a) in (tuple, list) and all(type(n) is int for n in a))


def _as_float(tree):
    """Integer leaves as floats (autograd differentiates at their values)."""
    def leaf(v):
        a = _onp.asarray(v)
        return a.astype(float) if a.dtype.kind not in "fc" else v
    return tree_map(leaf, tree)


def combo_check(fun: Callable[..., Any], *args: Any, **kwargs: Any) -> Callable[..., None]:
    """autograd's ``combo_check(fun, argnum, modes=..., order=...)(*value_lists,
    **keyword_lists)``: :func:`check_grads` at every combination of the values listed for
    each positional argument and each keyword.

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd.test_util import combo_check
    >>> combo_check(np.sum, (0,), modes=["rev"])([np.ones((2, 3))], axis=[0, 1, None])
    """
    def check_all(*value_lists, **keyword_lists):
        keyword_pairs = [[(k, v) for v in vs] for k, vs in keyword_lists.items()]
        for values in itertools.product(*value_lists):
            for keywords in itertools.product(*keyword_pairs):
                check_grads(fun, *args, **kwargs)(*values, **dict(keywords))
    return check_all


def scalar_close(a: Any, b: Any) -> bool:
    """Whether two numbers agree to autograd's tolerance (1e-6 absolute or relative)."""
    d = abs(a - b)
    return bool(d < TOL or d / abs(a + b) < RTOL)


def check_equivalent(x: Any, y: Any) -> None:
    """Assert that ``x`` and ``y`` (numbers, arrays or containers of them) lie in the same
    space and agree along a random direction, to autograd's tolerance."""
    x_vs, y_vs = vspace(x), vspace(y)
    assert x_vs == y_vs, f"VSpace mismatch:\nx: {x_vs}\ny: {y_vs}"
    v = x_vs.randn()
    assert scalar_close(x_vs.inner_prod(x, v), x_vs.inner_prod(y, v)), \
        f"Value mismatch:\nx: {x}\ny: {y}"
