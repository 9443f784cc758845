"""``autograd.core``: the unary ``make_vjp``/``make_jvp`` autograd's operators are built
from, vector spaces, the rule-defining functions, and ``primitive_vjps``/``primitive_jvps``,
autograd's tables of rules, here views of fgrad's primitive table."""
from collections.abc import MutableMapping
from typing import Any, Callable, Iterator

from .. import transforms
from ..core import table
from ..core.table import Primitive
from . import def_linear, defjvp, defvjp, defvjp_argnum, primitive  # noqa: F401
from .extend import (JVPNode, SparseObject, VJPNode, defjvp_argnum,  # noqa: F401
                     defjvp_argnums, defvjp_argnums)
from .vspaces import VSpace, vspace  # noqa: F401
from .tracer import Box, getval, isbox  # noqa: F401  (autograd's core has them too)

__all__ = ["make_vjp", "make_jvp", "vspace", "VSpace", "SparseObject", "primitive",
           "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp", "defjvp_argnum",
           "defjvp_argnums", "def_linear", "primitive_vjps", "primitive_jvps", "VJPNode",
           "JVPNode", "Box", "getval", "isbox"]


def make_vjp(fun: Callable[[Any], Any], x: Any) -> tuple[Callable[[Any], Any], Any]:
    """autograd's core ``make_vjp(fun, x)``: ``(vjp, fun(x))`` for a function of one
    argument, ``vjp(g)`` the cotangent of ``x`` (zeros where ``fun(x)`` does not depend on
    ``x``).

    >>> from fgrad.autograd.core import make_vjp
    >>> vjp, ans = make_vjp(lambda x: x ** 3, 2.0)
    >>> float(ans), float(vjp(1.0))
    (8.0, 12.0)
    """
    ans, vjp_fn = transforms.vjp(fun, x)
    return (lambda g: vjp_fn(g)[0]), ans


def make_jvp(fun: Callable[[Any], Any], x: Any) -> Callable[[Any], tuple[Any, Any]]:
    """autograd's core ``make_jvp(fun, x)``: the function ``g -> (fun(x), J g)``.

    >>> from fgrad.autograd.core import make_jvp
    >>> [float(v) for v in make_jvp(lambda x: x ** 3, 2.0)(1.0)]
    [8.0, 12.0]
    """
    return lambda g: transforms.jvp(fun, (x,), (g,))


_VJP_FORMS = ("vjps", "vjp_by_argnum", "vjp_joint")
_JVP_FORMS = ("jvps", "jvp_joint", "jvp_with_output")


class _Rules(MutableMapping):
    """autograd's ``primitive_vjps`` (or ``primitive_jvps``): primitive -> its rules. A view
    of the table: the values are the rules in fgrad's forms (opaque, to be put back as they
    are), ``pop`` takes a primitive's rules away (its derivative is then refused by name) and
    setting an item puts them back. Only primitives have rules here: ``np.sin`` (a ufunc) and a
    user's ``@primitive`` do, ``np.sum`` (a function of several primitives) does not."""

    def __init__(self, forms):
        self._forms = forms

    def _has(self, prim):
        return isinstance(prim, Primitive) and any(getattr(prim, f) for f in self._forms)

    def __getitem__(self, prim):
        if not self._has(prim):
            raise KeyError(prim)
        return {f: getattr(prim, f) for f in self._forms}

    def __setitem__(self, prim, rules):
        if not isinstance(prim, Primitive) or set(rules) != set(self._forms):
            raise TypeError("primitive_vjps/primitive_jvps: put back only what was taken "
                            "from them; define rules with defvjp/defjvp")
        for f, r in rules.items():
            setattr(prim, f, r)
        prim.derived_jvps = {}
        prim.rules_changed()

    def __delitem__(self, prim):
        if not self._has(prim):
            raise KeyError(prim)
        self[prim] = {f: {} if f in ("vjps", "jvps") else None for f in self._forms}

    def __iter__(self) -> Iterator[Any]:
        return (p for p in list(table.PRIMITIVES.values()) if self._has(p))

    def __len__(self):
        return sum(1 for _ in self)


primitive_vjps = _Rules(_VJP_FORMS)
primitive_jvps = _Rules(_JVP_FORMS)
