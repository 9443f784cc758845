"""Products: tensordot, dot, matmul, outer.

All are bilinear, so the JVPs come from ``linear=True`` and only the two transposes are written.
``tensordot``'s transposes are the general case; ``dot`` reuses them (numpy's ``dot`` is a
tensordot over fixed axes), and ``matmul`` promotes 1-d operands to matrices and undoes
batch broadcasting.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define
from .broadcasting import shape_of, unbroadcast
from .wrapping import as_tuple, traced_version_of, unsupported_kwargs


def _ndim(x):
    return len(shape_of(x))


def _inverse_perm(perm):
    return tuple(int(i) for i in _onp.argsort(perm))


def tensordot_vjp_a(g, a, b, axes):
    ia, ib = axes
    free_a = [i for i in range(_ndim(a)) if i not in ia]
    free_b = [i for i in range(_ndim(b)) if i not in ib]
    g_free_b = list(range(len(free_a), len(free_a) + len(free_b)))
    res = fnp.tensordot(g, b, axes=(g_free_b, free_b))  # axes: free_a, then ib in b's order
    order = free_a + [ia[j] for j in _onp.argsort(ib)]
    return fnp.transpose(res, _inverse_perm(order))


def tensordot_vjp_b(g, a, b, axes):
    ia, ib = axes
    free_a = [i for i in range(_ndim(a)) if i not in ia]
    free_b = [i for i in range(_ndim(b)) if i not in ib]
    res = fnp.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))  # ia in a's order, free_b
    order = [ib[j] for j in _onp.argsort(ia)] + free_b
    return fnp.transpose(res, _inverse_perm(order))


tensordot_p = define(
    "tensordot", lambda a, b, axes: _onp.tensordot(a, b, axes),
    [lambda g, ans, a, b, axes: tensordot_vjp_a(g, a, b, axes),
     lambda g, ans, a, b, axes: tensordot_vjp_b(g, a, b, axes)],
    linear=True,
    spec=Spec([(((2, 3), (3, 4)), {"axes": ((1,), (0,))}),
               (((2, 3, 4), (4, 3)), {"axes": ((2, 1), (0, 1))}),
               (((3,), (2,)), {"axes": ((), ())}),
               (((2, 3), (2, 3)), {"axes": ((0, 1), (0, 1))})]))


@traced_version_of(_onp.tensordot)
def tensordot(a, b, axes=2):
    a, b = fnp.asarray(a), fnp.asarray(b)
    na, nb = _ndim(a), _ndim(b)
    if isinstance(axes, (int, _onp.integer)):
        ia, ib = list(range(na - axes, na)), list(range(axes))
    else:
        ia, ib = as_tuple(axes[0]), as_tuple(axes[1])
    axes = (tuple(int(i) % na for i in ia), tuple(int(i) % nb for i in ib))
    return tensordot_p(a, b, axes=axes)


def _dot_axes(a, b):
    """The tensordot axes that numpy.dot contracts."""
    na, nb = _ndim(a), _ndim(b)
    if na == 0 or nb == 0:
        return ((), ())
    return ((na - 1,), (0,) if nb == 1 else (nb - 2,))


dot_p = define("dot", _onp.dot,
               [lambda g, ans, a, b: tensordot_vjp_a(g, a, b, _dot_axes(a, b)),
                lambda g, ans, a, b: tensordot_vjp_b(g, a, b, _dot_axes(a, b))],
               linear=True,
               spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((3,), (3, 2)), {}),
                          (((2, 3), (3, 4)), {}), (((2, 2, 3), (2, 3, 2)), {}),
                          (((), (3,)), {})]))


@traced_version_of(_onp.dot)
def dot(a, b, **kwargs):
    unsupported_kwargs("dot", kwargs)
    return dot_p(a, b)


def _as_matrices(g, a, b):
    """Promote 1-d operands of matmul to matrices, and the cotangent to match."""
    if _ndim(b) == 1:
        g, b = fnp.expand_dims(g, -1), fnp.expand_dims(b, -1)
    if _ndim(a) == 1:
        g, a = fnp.expand_dims(g, -2), fnp.expand_dims(a, 0)
    return g, a, b


def _matmul_vjp_a(g, ans, a, b):
    g2, a2, b2 = _as_matrices(g, a, b)
    ga = unbroadcast(fnp.matmul(g2, fnp.swapaxes(b2, -1, -2)), shape_of(a2))
    return fnp.reshape(ga, shape_of(a))


def _matmul_vjp_b(g, ans, a, b):
    g2, a2, b2 = _as_matrices(g, a, b)
    gb = unbroadcast(fnp.matmul(fnp.swapaxes(a2, -1, -2), g2), shape_of(b2))
    return fnp.reshape(gb, shape_of(b))


matmul = define("matmul", _onp.matmul, [_matmul_vjp_a, _matmul_vjp_b], linear=True,
                spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((3,), (3, 2)), {}),
                           (((2, 3), (3, 4)), {}), (((2, 2, 3), (3, 2)), {}),
                           (((2, 1, 2, 3), (3, 3, 2)), {})]))

outer = define("outer", _onp.outer,
               [lambda g, ans, a, b: fnp.reshape(fnp.dot(g, fnp.ravel(b)), shape_of(a)),
                lambda g, ans, a, b: fnp.reshape(fnp.dot(fnp.ravel(a), g), shape_of(b))],
               linear=True,
               spec=Spec([(((3,), (2,)), {}), (((2, 2), (3,)), {}), (((), (2,)), {})]))
