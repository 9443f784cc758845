"""``autograd.extend``: defining primitives and their derivatives, with autograd's names.

``primitive``, ``defvjp``, ``defvjp_argnum``, ``defjvp`` and ``def_linear`` are
``fgrad.autograd``'s own; this module adds the rest of autograd's ``extend``: the by-argnum
forms, ``notrace_primitive``, and the classes libraries test values against (``Box``: every
traced value of fgrad's is one; ``VSpace``/``vspace``: a value's space, for its zeros)."""
from typing import Any, Callable

from . import def_linear, defjvp, defvjp, defvjp_argnum, primitive  # noqa: F401
from .vspaces import VSpace, vspace  # noqa: F401
from ..core import table
from ..numpy.array_tracer import ArrayTracer
from ..core.tracer import Tracer, read_values
from ..user_primitives import UserPrimitive

__all__ = ["primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp",
           "defjvp_argnum", "defjvp_argnums", "def_linear", "notrace_primitive", "Box",
           "VSpace", "vspace", "SparseObject", "register_notrace", "VJPNode", "JVPNode"]

#: autograd's base class of traced values: every fgrad tracer is an instance
Box = Tracer


def defvjp_argnums(fun: Any, vjpmaker: Callable[..., Any]) -> None:
    """autograd's ``defvjp_argnums``: ``vjpmaker(argnums, ans, args, kwargs)`` gives a
    function of the cotangent returning the cotangents of those arguments (a tuple). Each
    argument's rule asks it for that argument alone.

    >>> import fgrad
    >>> from fgrad.autograd.extend import primitive, defvjp_argnums
    >>> @primitive
    ... def mul(x, y):
    ...     return x * y
    >>> defvjp_argnums(mul, lambda nums, ans, args, kwargs: lambda g: tuple(
    ...     g * args[1 - i] for i in nums))
    >>> [float(v) for v in fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0)]
    [5.0, 2.0]
    """
    def maker_for(i):
        return lambda g, ans, *args, **kwargs: vjpmaker((i,), ans, args, kwargs)(g)[0]

    table.defvjp(fun, *[maker_for(i) for i in range(_count(fun, "defvjp_argnums"))])


def defjvp_argnum(fun: Any, jvpmaker: Callable[..., Any]) -> None:
    """autograd's ``defjvp_argnum``: ``jvpmaker(argnum, g, ans, args, kwargs)`` gives the
    output tangent for the tangent ``g`` of argument ``argnum``.

    >>> import fgrad
    >>> from fgrad.autograd.extend import primitive, defjvp_argnum
    >>> @primitive
    ... def mul(x, y):
    ...     return x * y
    >>> defjvp_argnum(mul, lambda i, g, ans, args, kwargs: g * args[1 - i])
    >>> float(fgrad.jvp(lambda x: mul(x, 3.0), (2.0,), (1.0,))[1])
    3.0
    """
    def rule_for(i):
        return lambda g, ans, *args, **kwargs: jvpmaker(i, g, ans, args, kwargs)

    table.defjvp(fun, *[rule_for(i) for i in range(_count(fun, "defjvp_argnum"))])


def defjvp_argnums(fun: Any, jvpmaker: Callable[..., Any]) -> None:
    """autograd's ``defjvp_argnums``: ``jvpmaker(argnums, gs, ans, args, kwargs)`` gives the
    output tangent for the tangents ``gs`` of the arguments ``argnums``; asked here for one
    argument at a time (the output tangents add up)."""
    def rule_for(i):
        return lambda g, ans, *args, **kwargs: jvpmaker((i,), (g,), ans, args, kwargs)

    table.defjvp(fun, *[rule_for(i) for i in range(_count(fun, "defjvp_argnums"))])


def _count(fun, caller):
    from . import _positional_count
    return _positional_count(fun, caller)


def notrace_primitive(f: Callable[..., Any]) -> Callable[..., Any]:
    """autograd's ``notrace_primitive``: ``f`` runs on the plain values of its arguments and
    its result is a constant (no derivative flows through it).

    >>> import fgrad, fgrad.numpy as np
    >>> from fgrad.autograd.extend import notrace_primitive
    >>> shape_of = notrace_primitive(lambda x: x.shape)
    >>> float(fgrad.grad(lambda x: np.sum(x) * len(shape_of(x)))(np.ones(3))[0])
    1.0
    """
    def plain(*args, **kwargs):
        return f(*read_values(args), **read_values(kwargs))

    plain.__name__ = getattr(f, "__name__", "notrace")
    plain.__doc__ = f.__doc__
    return plain


class VJPNode:
    """autograd's node of reverse mode; here only what :func:`register_notrace` takes."""


class JVPNode:
    """autograd's node of forward mode; here only what :func:`register_notrace` takes."""


def register_notrace(trace_type: type, primitive_fun: Any) -> None:
    """autograd's ``register_notrace(VJPNode, f)``: no derivative flows through the primitive
    ``f`` in reverse mode (``JVPNode``: forward mode). A primitive made with ``primitive``
    gets zero rules for every argument in that mode; fgrad's own functions keep theirs
    (those libraries register, ``zeros_like``, ``full_like``, ``shape``, ``result_type``, have
    none to give already).

    >>> import fgrad
    >>> from fgrad.autograd.extend import primitive, register_notrace, VJPNode
    >>> @primitive
    ... def step(x):
    ...     return float(x > 0)
    >>> register_notrace(VJPNode, step)
    >>> float(fgrad.grad(lambda x: x * step(x))(2.0))
    1.0
    """
    if trace_type not in (VJPNode, JVPNode):
        raise TypeError(f"register_notrace: the trace type is VJPNode or JVPNode (from "
                        f"autograd.extend), not {trace_type!r}")
    if isinstance(primitive_fun, UserPrimitive):
        zeros = [None] * _count(primitive_fun, "register_notrace")
        (table.defvjp if trace_type is VJPNode else table.defjvp)(primitive_fun, *zeros)


class SparseObject:
    """autograd's ``SparseObject`` (a cotangent written by a function into a zero vector).
    fgrad's rules return dense cotangents; one given here is refused by name."""

    def __init__(self, vs, mut_add):
        raise NotImplementedError(
            "fgrad.autograd.extend.SparseObject: fgrad's VJP rules return dense cotangents; "
            "return the cotangent as an array (e.g. np.at(np.zeros(shape))[idx].add(g)).")


#: autograd's ``ArrayBox``, for ``isinstance`` tests
ArrayBox = ArrayTracer
