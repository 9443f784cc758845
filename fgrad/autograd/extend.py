"""``autograd.extend``: defining primitives and their derivatives, with autograd's names.

``primitive``, ``defvjp``, ``defvjp_argnum``, ``defjvp`` and ``def_linear`` are
``fgrad.autograd``'s own; this module adds the rest of autograd's ``extend``: the by-argnum
forms, ``notrace_primitive``, and the classes libraries test values against (``Box``: every
traced value of fgrad's is one; ``VSpace``/``vspace``: a value's space, for its zeros)."""
from typing import Any, Callable

import numpy as _onp

from . import def_linear, defjvp, defvjp, defvjp_argnum, primitive  # noqa: F401
from ..core import table
from ..numpy.array_tracer import ArrayTracer
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tracer import Tracer, value_for_shape, value_dtype, read_values

__all__ = ["primitive", "defvjp", "defvjp_argnum", "defvjp_argnums", "defjvp",
           "defjvp_argnum", "defjvp_argnums", "def_linear", "notrace_primitive", "Box",
           "VSpace", "vspace", "SparseObject"]

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


class VSpace:
    """autograd's ``VSpace`` of a value (an array, a number, or a tuple, list or dict of
    them): its shape and dtype, and the vectors of that space (``zeros``, ``ones``,
    ``randn``, ``standard_basis``) and operations (``add``, ``scalar_mul``,
    ``inner_prod``), as autograd's libraries use them."""

    def __init__(self, value):
        leaves, self._tree = tree_flatten(value)
        self._metas = [value_for_shape(x) for x in leaves]
        if len(self._metas) == 1 and not isinstance(value, (tuple, list, dict)):
            m = self._metas[0]
            self.shape, self.dtype = _onp.shape(m), value_dtype(m)
            self.size, self.ndim = int(_onp.prod(self.shape)), len(self.shape)
        else:
            self.shape = self.dtype = None
            self.size = sum(int(_onp.size(m)) for m in self._metas)
            self.ndim = None
        self.iscomplex = any(value_dtype(m).kind == "c" for m in self._metas)

    def _like(self, make):
        leaves = [make(_onp.shape(m), _float(m)) for m in self._metas]
        return tree_unflatten(self._tree, [
            (complex if value_dtype(m).kind == "c" else float)(x[()])
            if m.__class__ in (float, int, complex) else x[()] if x.ndim == 0 else x
            for x, m in zip(leaves, self._metas)])

    def zeros(self):
        return self._like(_onp.zeros)

    def ones(self):
        return self._like(_onp.ones)

    def randn(self):
        return self._like(lambda shape, dtype: _onp.asarray(_onp.random.randn(*shape),
                                                            dtype))

    def standard_basis(self):
        for k in range(self.size):
            flat = _onp.zeros(self.size)
            flat[k] = 1.0
            yield self._unflatten(flat)

    def _unflatten(self, flat):
        out, start = [], 0
        for m in self._metas:
            n = int(_onp.size(m))
            out.append(flat[start:start + n].reshape(_onp.shape(m)).astype(_float(m)))
            start += n
        return tree_unflatten(self._tree, out)

    def add(self, x, y):
        return _map(lambda a, b: a + b, x, y)

    def scalar_mul(self, x, a):
        return _map(lambda v: v * a, x)

    def inner_prod(self, x, y):
        xs, ys = tree_flatten(x)[0], tree_flatten(y)[0]
        return sum(_onp.real(_onp.vdot(_onp.ravel(a), _onp.ravel(b))) for a, b in zip(xs, ys))

    def covector(self, x):
        return _map(_onp.conj, x)

    def __eq__(self, other):
        return type(other) is VSpace and self._tree == other._tree and all(
            _onp.shape(a) == _onp.shape(b) and value_dtype(a) == value_dtype(b)
            for a, b in zip(self._metas, other._metas))

    def __repr__(self):
        return f"VSpace(shape={self.shape}, dtype={self.dtype})"


def _float(m):
    dtype = value_dtype(m)
    return dtype if dtype.kind in "fc" else _onp.dtype(float)


def _map(f, *trees):
    leaves = [tree_flatten(t)[0] for t in trees]
    return tree_unflatten(tree_flatten(trees[0])[1], [f(*xs) for xs in zip(*leaves)])


def vspace(value: Any) -> VSpace:
    """autograd's ``vspace(value)``: the space of ``value``.

    >>> from fgrad.autograd.extend import vspace
    >>> vspace((1.0, [2.0, 3.0])).zeros()
    (0.0, [0.0, 0.0])
    """
    return VSpace(value)


class SparseObject:
    """autograd's ``SparseObject`` (a cotangent written by a function into a zero vector).
    fgrad's rules return dense cotangents; one given here is refused by name."""

    def __init__(self, vs, mut_add):
        raise NotImplementedError(
            "fgrad.autograd.extend.SparseObject: fgrad's VJP rules return dense cotangents; "
            "return the cotangent as an array (e.g. np.at(np.zeros(shape))[idx].add(g)).")


#: autograd's ``ArrayBox``, for ``isinstance`` tests
ArrayBox = ArrayTracer
