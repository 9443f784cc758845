"""Primitives of the user's own (``fgrad.primitive``), including ones that return several
arrays.

A user's function may return a tuple of arrays (``numpy.linalg.eig`` made a primitive, as
grcwa does). The table's primitives have one output, so on traced values such a call goes
through a *twin*: a primitive whose output is the outputs ravelled into one vector, and whose
one extra parameter, ``_outputs`` (an :class:`_Outputs`), learns the outputs' shapes and
dtypes when the function runs on plain values below every trace, and splits the vector (or its
tangent or cotangent) again with ``getitem``/``reshape``, which are differentiable: every trace
and every nesting of them takes the twin as it takes any primitive. The user's rules see
tuples, as autograd's do: a VJP rule gets ``g`` and ``ans`` as tuples (of numpy's type, e.g.
``EigResult``), a JVP rule gets ``ans`` as one and returns one.

Whether a primitive returns several arrays is learnt at its first call on traced values
(through the twin, which serves one array too); later calls of a one-array primitive skip the
twin.
"""
from typing import Any, Callable

import numpy as _onp

from .core import errors
from .numpy import astype, concatenate, getitem, ravel, real, reshape, zeros
from .core.table import _BUILTIN, PRIMITIVES, STAGING, Primitive, Spec
from .traces.rules import derived, jvp_all, jvp_rule
from .core.tracer import add_any, ambient, first_tracer

__all__ = ["primitive"]


class _Outputs:
    """The outputs of one traced call of a user primitive: ``kind`` (None for one array, else
    the tuple's type), and per output its shape and dtype, filled when the function runs."""

    __slots__ = ("kind", "shapes", "dtypes", "dtype")

    def __init__(self):
        self.kind = None

    def __repr__(self):  # as a parameter in a printed tape or graph
        return "<one output>" if self.kind is None else f"<outputs {self.shapes}>"

    def packed(self, out):
        """The function's plain output as the twin's one array (noting its structure)."""
        if not isinstance(out, (tuple, list)):
            return out
        outs = [_onp.asarray(o) for o in out]
        self.kind = type(out)
        self.shapes = [o.shape for o in outs]
        self.dtypes = [o.dtype for o in outs]
        self.dtype = _onp.result_type(*self.dtypes)
        return _onp.concatenate([o.ravel().astype(self.dtype, copy=False) for o in outs])

    def split(self, packed):
        """The twin's output, tangent or cotangent as the function's outputs."""
        if self.kind is None:
            return packed
        parts, start = [], 0
        for shape, dtype in zip(self.shapes, self.dtypes):
            n = int(_onp.prod(shape, dtype=int))
            part, have = reshape(getitem(packed, slice(start, start + n)), shape), self.dtype
            if dtype.kind != "c" and have.kind == "c":
                part, have = real(part), _onp.finfo(have).dtype
            parts.append(part if dtype == have else astype(part, dtype))
            start += n
        return self.kind(*parts) if hasattr(self.kind, "_fields") else self.kind(parts)

    def pack(self, parts, owner):
        """Output tangents (a tuple from the user's JVP rule; None for zero) as one."""
        if not isinstance(parts, (tuple, list)) or len(parts) != len(self.shapes):
            raise TypeError(f"primitive {owner.name}: its JVP rule must return a tuple with one "
                            f"tangent per output ({len(self.shapes)}), but it returned "
                            f"{type(parts).__name__} {parts!r:.60}")
        return concatenate([ravel(zeros(s, self.dtype) if p is None else p)
                            for p, s in zip(parts, self.shapes)])


class UserPrimitive(Primitive):
    """A primitive made by :func:`primitive`: a table entry whose function may return a tuple
    of arrays (see the module's text)."""

    def __init__(self, name, impl, spec=None):
        super().__init__(name, impl, spec)
        self.several = None  # whether it returns several arrays (None: not known yet)
        self._twin = None

    def __call__(self, *args, **params):
        if self.several is False or (first_tracer(args) is None
                                     and (not STAGING or ambient() is None)):
            return Primitive.__call__(self, *args, **params)
        outputs, twin = _Outputs(), self.twin()
        twin.other_arrays = self.other_arrays  # (a user may set it after making the primitive)
        packed = twin(*args, _outputs=outputs, **params)
        self.several = outputs.kind is not None
        return outputs.split(packed)

    def twin(self):
        if self._twin is None:
            self._twin = _twin_of(self)
        return self._twin


def _twin_of(prim):
    """The primitive ``prim`` is on traced values: one packed output, the user's rules
    (looked up at each call, so rules given later count) adapted to it."""
    def impl(*args, _outputs, **params):
        return _outputs.packed(prim.impl(*args, **params))

    def vjp_by_argnum(i, g, ans, *args, _outputs, **params):
        return prim.vjp_rule(i)(_outputs.split(g), _outputs.split(ans), *args, **params)

    def jvp_joint(tangents, ans, *args, _outputs, **params):
        if _outputs.kind is None:  # one array: the primitive's own rules, as on later calls
            return jvp_all(prim)(args, tangents, params, ans)[1]
        out = None
        for i, t in enumerate(tangents):
            if t is None:
                continue
            rule = prim.jvps.get(i)
            if rule is not None:
                c = _outputs.pack(rule(t, _outputs.split(ans), *args, **params), prim)
            elif derived(prim, i):  # (the VJP rule, transposed: ``fgrad.traces.rules``)
                c = jvp_rule(twin, i)(t, ans, *args, _outputs=_outputs, **params)
            else:
                raise errors.missing_rule(prim.name, i, "JVP")
            if c is not None:
                out = c if out is None else add_any(out, c)
        return out

    twin = Primitive(prim.name, impl, doc=prim.__doc__, vjp_by_argnum=vjp_by_argnum,
                     jvp_joint=jvp_joint)
    return twin


def primitive(f: Callable[..., Any] | None = None, *, name: str | None = None,
              spec: "Spec | None" = None) -> Any:
    """Register a numpy-level function as a new primitive in the table; returns it.

    Give it rules with :func:`fgrad.defvjp` and :func:`fgrad.defjvp` (written with
    ``fgrad.numpy``), and a :class:`Spec` if you want the generated tests to check it.

    >>> import numpy, fgrad
    >>> cube = fgrad.primitive(lambda x: x ** 3, name="cube")
    >>> fgrad.defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
    >>> fgrad.defjvp(cube, lambda t, ans, x: t * 3 * x ** 2)
    >>> float(fgrad.grad(cube)(2.0))
    12.0

    A function may return a tuple of arrays; its rules then see tuples: a VJP rule gets one
    cotangent per output (zeros for an output not used) and the outputs, a JVP rule returns
    one tangent per output (None for zero):

    >>> import fgrad.numpy as np
    >>> polar = fgrad.primitive(lambda x, y: (numpy.hypot(x, y), numpy.arctan2(y, x)),
    ...                         name="my_polar")
    >>> fgrad.defvjp(polar, lambda g, ans, x, y: (g[0] * x - g[1] * y / ans[0]) / ans[0],
    ...                     lambda g, ans, x, y: (g[0] * y + g[1] * x / ans[0]) / ans[0])
    >>> fgrad.defjvp(polar, lambda t, ans, x, y: (t * x / ans[0], -t * y / ans[0] ** 2))
    >>> [round(float(v), 12) for v in fgrad.grad(
    ...     lambda x, y: polar(x, y)[0] + 2 * polar(x, y)[1], argnums=(0, 1))(3.0, 4.0)]
    [0.28, 1.04]
    >>> float(fgrad.jvp(lambda x: polar(x, 4.0)[1], (3.0,), (1.0,))[1])     # -y / r^2
    -0.16
    """
    if f is None:
        return lambda f: primitive(f, name=name, spec=spec)
    p = UserPrimitive(name or f.__name__, f, spec)
    if p.name in _BUILTIN:
        raise ValueError(f"fgrad.primitive: {p.name!r} is a built-in primitive's name; choose "
                         "another (e.g. 'my_" + p.name + "')")
    PRIMITIVES[p.name] = p  # re-registering one's own name (re-running a cell) replaces it
    return p
