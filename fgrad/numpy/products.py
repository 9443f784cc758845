"""Products: tensordot, dot, matmul, outer, vdot, inner, kron, cross, convolve, correlate,
matvec, vecmat, vecdot (numpy's polynomial functions, built on them, are in polynomials.py).

All products are bilinear, so the JVPs come from ``linear=True`` and only the two transposes
are written. ``tensordot``'s transposes are the general case; ``dot`` and ``inner`` reuse them
(each is a tensordot over fixed axes), and ``matmul`` promotes 1-d operands to matrices and
undoes batch broadcasting. Each primitive's forward value is numpy's own function, so values
are numpy's bit for bit.

Complex values follow JAX's convention: the VJP is the plain (unconjugated) transpose of the
JVP under the pairing ``Re sum(x * y)``. The functions numpy defines with a conjugate
(``vdot``, ``vecdot`` and ``vecmat`` conjugate their first argument, ``correlate`` its
second) are real-linear, not complex-linear, in that argument: the JVP is still the function
of the tangent, and the transpose carries a conjugate.
"""
import numpy as _onp
from numpy.lib.array_utils import normalize_axis_index

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Spec, define
from ..core.tracer import value_for_shape
from .broadcasting import dtype_of, shape_of, unbroadcast_like
from .wrapping import as_tuple, differentiable, inverse_permutation, unsupported_kwargs

COMPLEX2 = ("complex", "complex")


def _ndim(x):
    return len(shape_of(x))


def _ndims(a, b):
    """``(a.ndim, b.ndim)`` in one call (the key of matmul's transposes, on every backward)."""
    try:
        return len(a.shape), len(b.shape)
    except AttributeError:  # a list operand
        return _ndim(a), _ndim(b)


def _is_complex(x):
    return _onp.iscomplexobj(value_for_shape(x))


def _conj(x):
    """The conjugate where it is one (a real array is its own)."""
    return fnp.conjugate(x) if _is_complex(x) else x


def _flip(x):
    return fnp.getitem(x, slice(None, None, -1))


# ---------------------------------------------------------------------------------------------
# tensordot, dot, inner, outer, matmul, vdot, kron

def tensordot_vjp_a(g, a, b, axes):
    ia, ib = axes
    free_a = [i for i in range(_ndim(a)) if i not in ia]
    free_b = [i for i in range(_ndim(b)) if i not in ib]
    g_free_b = list(range(len(free_a), len(free_a) + len(free_b)))
    res = fnp.tensordot(g, b, axes=(g_free_b, free_b))  # axes: free_a, then ib in b's order
    order = free_a + [ia[j] for j in _onp.argsort(ib)]
    return fnp.transpose(res, inverse_permutation(order))


def tensordot_vjp_b(g, a, b, axes):
    ia, ib = axes
    free_a = [i for i in range(_ndim(a)) if i not in ia]
    free_b = [i for i in range(_ndim(b)) if i not in ib]
    res = fnp.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))  # ia in a's order, free_b
    order = [ib[j] for j in _onp.argsort(ia)] + free_b
    return fnp.transpose(res, inverse_permutation(order))


# The primitives' specs draw complex operands; the public functions' specs (below) real ones.
tensordot_p = define(
    "tensordot", lambda a, b, axes: _onp.tensordot(a, b, axes),
    [lambda g, ans, a, b, axes: tensordot_vjp_a(g, a, b, axes),
     lambda g, ans, a, b, axes: tensordot_vjp_b(g, a, b, axes)],
    linear=True,
    spec=Spec([(((2, 3), (3, 4)), {"axes": ((1,), (0,))}),
               (((2, 3, 4), (4, 3)), {"axes": ((2, 1), (0, 1))}),
               (((3,), (2,)), {"axes": ((), ())}),
               (((2, 3), (2, 3)), {"axes": ((0, 1), (0, 1))})], domain=COMPLEX2),
                     batch=batch_rules.tensordot)


@differentiable(_onp.tensordot, Spec([(((2, 3), (3, 2)), {"axes": 1}),
                                      (((2, 3, 2), (3, 2, 2)), {}),
                                      (((3,), (2,)), {"axes": 0}),
                                      (((2, 3), (3, 4)), {"axes": (1, 0)}),
                                      (((2, 3, 4), (4, 3)), {"axes": ([1, 2], [1, 0])}),
                                      (((2, 3), (2, 3)), {"axes": ((-1, -2), (1, 0))})]))
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
                          (((), (3,)), {})], domain=COMPLEX2), batch=batch_rules.dot)


@differentiable(_onp.dot, Spec([(((3,), (3,)), {}), (((2, 3), (3, 2)), {}),
                                (((2, 2, 3), (2, 3, 2)), {}), (((), (3,)), {})]))
def dot(a, b, out=None):
    """``out=`` is refused on traced values."""
    unsupported_kwargs("dot", {"out": out})
    return dot_p(fnp.asarray(a), fnp.asarray(b))


def _inner_axes(a, b):
    """The tensordot axes numpy.inner contracts: the last of each (none with a scalar)."""
    na, nb = _ndim(a), _ndim(b)
    return ((), ()) if na == 0 or nb == 0 else ((na - 1,), (nb - 1,))


inner = define("inner", _onp.inner,
               [lambda g, ans, a, b: tensordot_vjp_a(g, a, b, _inner_axes(a, b)),
                lambda g, ans, a, b: tensordot_vjp_b(g, a, b, _inner_axes(a, b))],
               linear=True,
               spec=Spec([(((3,), (3,)), {}), (((2, 3), (4, 3)), {}),
                          (((2, 2, 3), (3,)), {}), (((), (2,)), {})]), batch=batch_rules.inner)


def _matrices(g, a, b):
    """Promote 1-d operands of matmul to matrices, and the cotangent to match."""
    if _ndim(b) == 1:
        g, b = fnp.expand_dims(g, -1), fnp.expand_dims(b, -1)
    if _ndim(a) == 1:
        g, a = fnp.expand_dims(g, -2), fnp.expand_dims(a, 0)
    return g, a, b


# Operands of at most two dimensions (the usual case: layers, matrix-vector products) need no
# promotion or batch sums: their transposes are one product each, indexed by (a.ndim, b.ndim).
# (An outer product as a broadcast product: numpy.outer's ravelling is Python-level work.)
_SMALL_VJP_A = {(1, 1): lambda g, b: g * b, (2, 1): lambda g, b: g[:, None] * b,
                (1, 2): lambda g, b: fnp.matmul(b, g), (2, 2): lambda g, b: fnp.matmul(g, b.T)}
_SMALL_VJP_B = {(1, 1): lambda g, a: g * a, (2, 1): lambda g, a: fnp.matmul(g, a),
                (1, 2): lambda g, a: a[:, None] * g, (2, 2): lambda g, a: fnp.matmul(a.T, g)}


def _dense(g):
    """A cotangent with zero strides (a reduction's, broadcast back) as a real array: BLAS takes
    no zero strides, and numpy's own loop for them is slower than the copy (at 512 x 512,
    7.7 ms against 5.4 ms for the product and 0.05 ms for the copy)."""
    if g.__class__ is _onp.ndarray and g.size > 1 and 0 in g.strides:
        return g.copy()
    return g


def _matmul_vjp_a(g, ans, a, b):
    g = _dense(g)
    small = _SMALL_VJP_A.get(_ndims(a, b))
    if small is not None:
        return small(g, b)
    g2, a2, b2 = _matrices(g, a, b)
    ga = unbroadcast_like(fnp.matmul(g2, fnp.swapaxes(b2, -1, -2)), a2)
    return fnp.reshape(ga, shape_of(a))


def _matmul_vjp_b(g, ans, a, b):
    g = _dense(g)
    small = _SMALL_VJP_B.get(_ndims(a, b))
    if small is not None:
        return small(g, a)
    g2, a2, b2 = _matrices(g, a, b)
    gb = unbroadcast_like(fnp.matmul(fnp.swapaxes(a2, -1, -2), g2), b2)
    return fnp.reshape(gb, shape_of(b))


matmul = define("matmul", _onp.matmul, [_matmul_vjp_a, _matmul_vjp_b], linear=True,
                spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((3,), (3, 2)), {}),
                           (((2, 3), (3, 4)), {}), (((2, 2, 3), (3, 2)), {}),
                           (((2, 1, 2, 3), (3, 3, 2)), {})]), batch=batch_rules.matmul,
                fresh_output=True)

# numpy.outer ravels n-d operands: the transposes reshape back
outer = define("outer", _onp.outer,
               [lambda g, ans, a, b: fnp.reshape(fnp.dot(g, fnp.ravel(b)), shape_of(a)),
                lambda g, ans, a, b: fnp.reshape(fnp.dot(fnp.ravel(a), g), shape_of(b))],
               linear=True,
               spec=Spec([(((3,), (2,)), {}), (((2, 2), (3,)), {}), (((), (2,)), {})]),
               batch=batch_rules.outer)

# vdot ravels both operands and conjugates the first: sum(conj(a) * b). Under the pairing
# Re(g * sum(conj(ta) * b)) = Re sum(ta * conj(g * b)), the transpose for a is conj(g * b).
vdot = define("vdot", _onp.vdot,
              [lambda g, ans, a, b: fnp.reshape(_conj(g * b), shape_of(a)),
               lambda g, ans, a, b: fnp.reshape(g * _conj(a), shape_of(b))],
              linear=True,
              spec=Spec([(((3,), (3,)), {}), (((2, 2), (4,)), {}), (((), ()), {})],
                        domain=COMPLEX2), batch=batch_rules.vdot)


def _kron_layout(a, b):
    """Both shapes padded with leading ones to a common rank, and the output's shape split
    into interleaved (a-axis, b-axis) pairs, the layout numpy.kron's result has."""
    na, nb = _ndim(a), _ndim(b)
    nd = max(na, nb)
    sa = (1,) * (nd - na) + tuple(shape_of(a))
    sb = (1,) * (nd - nb) + tuple(shape_of(b))
    return sa, sb, tuple(d for pair in zip(sa, sb) for d in pair)


def _kron_vjp_a(g, ans, a, b):
    sa, sb, pairs = _kron_layout(a, b)
    nd = len(sa)
    ga = fnp.tensordot(fnp.reshape(g, pairs), fnp.reshape(b, sb),
                       axes=(tuple(range(1, 2 * nd, 2)), tuple(range(nd))))
    return fnp.reshape(ga, shape_of(a))


def _kron_vjp_b(g, ans, a, b):
    sa, sb, pairs = _kron_layout(a, b)
    nd = len(sa)
    gb = fnp.tensordot(fnp.reshape(a, sa), fnp.reshape(g, pairs),
                       axes=(tuple(range(nd)), tuple(range(0, 2 * nd, 2))))
    return fnp.reshape(gb, shape_of(b))


kron = define("kron", _onp.kron, [_kron_vjp_a, _kron_vjp_b], linear=True,
              spec=Spec([(((2,), (3,)), {}), (((2, 2), (2, 3)), {}), (((3,), (2, 1, 2)), {}),
                         (((), (2,)), {})]), batch=batch_rules.kron)


# ---------------------------------------------------------------------------------------------
# cross

def _levi_civita(na, nb, dtype):
    """The tensor e with cross(a, b)_k = sum_ij e_ijk a_i b_j for vectors of lengths na and nb
    (a 2-vector is a 3-vector with zero z); for two 2-vectors only the z component."""
    e = _onp.zeros((3, 3, 3), dtype)
    for i, j, k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
        e[i, j, k], e[j, i, k] = 1, -1
    e = e[:na, :nb]
    return e[..., 2] if na == nb == 2 else e


def _cross_vjp(which, g, ans, a, b, axisa, axisb, axisc):
    av, bv = fnp.moveaxis(a, axisa, -1), fnp.moveaxis(b, axisb, -1)
    e = _levi_civita(shape_of(av)[-1], shape_of(bv)[-1], dtype_of(g))
    k = "k" if e.ndim == 3 else ""
    gv = fnp.moveaxis(g, axisc, -1) if k else g
    if which == 0:
        ga = fnp.einsum(f"...j,...{k},ij{k}->...i", bv, gv, e)
        return fnp.moveaxis(unbroadcast_like(ga, av), -1, axisa)
    gb = fnp.einsum(f"...i,...{k},ij{k}->...j", av, gv, e)
    return fnp.moveaxis(unbroadcast_like(gb, bv), -1, axisb)


cross_p = define(
    "cross", lambda a, b, axisa, axisb, axisc: _onp.cross(a, b, axisa=axisa, axisb=axisb,
                                                          axisc=axisc),
    [lambda g, ans, a, b, **axes: _cross_vjp(0, g, ans, a, b, **axes),
     lambda g, ans, a, b, **axes: _cross_vjp(1, g, ans, a, b, **axes)],
    linear=True,
    spec=Spec([(((3,), (3,)), {"axisa": 0, "axisb": 0, "axisc": 0}),
               (((2, 3), (3,)), {"axisa": 1, "axisb": 0, "axisc": 1}),
               (((3, 2), (2, 1, 3)), {"axisa": 0, "axisb": 2, "axisc": 0})],
              domain=COMPLEX2), batch=batch_rules.cross)


@differentiable(_onp.cross, Spec([(((2, 3), (2, 3)), {}),
                                  (((3, 2), (2, 3)), {"axisa": 0, "axisc": 0}),
                                  (((3, 2), (3, 1)), {"axis": 0})]))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """For 3-vectors, and 2-vectors where numpy takes them (before numpy 2.5), with
    ``axisa``, ``axisb``, ``axisc`` or ``axis``."""
    a, b = fnp.asarray(a), fnp.asarray(b)
    if axis is not None:
        axisa = axisb = axisc = axis
    axisa = normalize_axis_index(int(axisa), _ndim(a), "axisa")
    axisb = normalize_axis_index(int(axisb), _ndim(b), "axisb")
    na, nb = shape_of(a)[axisa], shape_of(b)[axisb]
    if 3 in (na, nb) and na in (2, 3) and nb in (2, 3):
        batch = _onp.broadcast_shapes(_without(shape_of(a), axisa), _without(shape_of(b), axisb))
        axisc = normalize_axis_index(int(axisc), len(batch) + 1, "axisc")
    return cross_p(a, b, axisa=axisa, axisb=axisb, axisc=int(axisc))


def _without(shape, axis):
    return tuple(n for i, n in enumerate(shape) if i != axis)


# ---------------------------------------------------------------------------------------------
# convolve, correlate

def _mode(mode):
    """The window numpy's ``mode`` names. Which spellings numpy accepts (names, numbers)
    differs between versions, so numpy itself decides, on a tiny example (raising its own
    error for a mode it refuses)."""
    if isinstance(mode, str) and mode in ("full", "same", "valid"):
        return mode
    length = len(_onp.convolve(_onp.ones(3), _onp.ones(2), mode))
    return {4: "full", 3: "same", 2: "valid"}[length]


def _window(na, nv, mode, swapped):
    """Where numpy's result sits in the full convolution: ``(start, length)``. ``swapped``:
    a correlate whose second operand is the longer (numpy swaps them, which moves the
    'same' window by one when the shorter length is even)."""
    n, m = max(na, nv), min(na, nv)
    if mode == "full":
        return 0, n + m - 1
    if mode == "valid":
        return m - 1, n - m + 1
    return (m // 2 if swapped else (m - 1) // 2), n


def _full_cotangent(g, na, nv, mode, swapped):
    """The cotangent of the full-length result: ``g`` in numpy's window, zeros around it."""
    start, length = _window(na, nv, mode, swapped)
    total = na + nv - 1
    if length == total:
        return g
    zeros = _onp.zeros(start, dtype_of(g)), _onp.zeros(total - start - length, dtype_of(g))
    return fnp.concatenate([zeros[0], g, zeros[1]])


# convolve(a, v) is the full convolution cut to the mode's window. The transpose of the full
# convolution in a is a 'valid' convolution of the cotangent with v reversed (and likewise in
# v); the window's transpose pads with zeros.
def _convolve_vjp(which, g, ans, a, v, mode):
    na, nv = shape_of(a)[0], shape_of(v)[0]
    gf = _full_cotangent(g, na, nv, mode, False)
    return convolve_p(gf, _flip(v if which == 0 else a), mode="valid")


convolve_p = define(
    "convolve", lambda a, v, mode: _onp.convolve(a, v, mode),
    [lambda g, ans, a, v, mode: _convolve_vjp(0, g, ans, a, v, mode),
     lambda g, ans, a, v, mode: _convolve_vjp(1, g, ans, a, v, mode)],
    linear=True,
    spec=Spec([(((4,), (2,)), {"mode": "full"}), (((2,), (4,)), {"mode": "same"}),
               (((4,), (3,)), {"mode": "valid"})], domain=COMPLEX2),
    batch=batch_rules.convolution)


# correlate(a, v) = convolve(a, w) with w = reversed conj(v), in numpy's window; the
# transpose for v is the transpose for w, reversed and conjugated.
def _correlate_vjp(which, g, ans, a, v, mode):
    na, nv = shape_of(a)[0], shape_of(v)[0]
    gf = _full_cotangent(g, na, nv, mode, nv > na)
    if which == 0:
        return convolve_p(gf, _conj(v), mode="valid")
    return _conj(_flip(convolve_p(gf, _flip(a), mode="valid")))


correlate_p = define(
    "correlate", lambda a, v, mode: _onp.correlate(a, v, mode),
    [lambda g, ans, a, v, mode: _correlate_vjp(0, g, ans, a, v, mode),
     lambda g, ans, a, v, mode: _correlate_vjp(1, g, ans, a, v, mode)],
    linear=True,
    spec=Spec([(((4,), (2,)), {"mode": "full"}), (((2,), (4,)), {"mode": "same"}),
               (((4,), (3,)), {"mode": "same"}), (((2,), (3,)), {"mode": "valid"})],
              domain=COMPLEX2),
    batch=batch_rules.correlation)


def _1d(x):
    """numpy's ``array(x, ndmin=1)``."""
    x = fnp.asarray(x)
    return fnp.reshape(x, (1,)) if _ndim(x) == 0 else x


@differentiable(_onp.convolve, Spec([(((4,), (2,)), {}), (((2,), (3,)), {"mode": "same"}),
                                     (((3,), (4,)), {"mode": "valid"})]))
def convolve(a, v, mode="full"):
    return convolve_p(_1d(a), _1d(v), mode=_mode(mode))


@differentiable(_onp.correlate, Spec([(((4,), (2,)), {}), (((2,), (4,)), {"mode": "same"}),
                                      (((3,), (2,)), {"mode": "full"})]))
def correlate(a, v, mode="valid"):
    return correlate_p(_1d(a), _1d(v), mode=_mode(mode))


# ---------------------------------------------------------------------------------------------
# matvec, vecmat, vecdot (numpy 2.x gufuncs: batch dimensions broadcast)

def _col(x):
    return fnp.expand_dims(x, -1)


def _row(x):
    return fnp.expand_dims(x, -2)


# vecdot(x1, x2) = sum(conj(x1) * x2, -1): conjugate-linear in x1 (see the module docstring)
vecdot_p = define(
    "vecdot", _onp.vecdot,
    [lambda g, ans, x1, x2: unbroadcast_like(_conj(_col(g) * x2), x1),
     lambda g, ans, x1, x2: unbroadcast_like(_col(g) * _conj(x1), x2)],
    linear=True,
    spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 1, 3), (2, 3)), {})],
              domain=COMPLEX2), batch=batch_rules.stacked(1, 1))

# matvec(A, x)_m = sum_n A_mn x_n
matvec_p = define(
    "matvec", _onp.matvec,
    [lambda g, ans, a, x: unbroadcast_like(_col(g) * _row(x), a),
     lambda g, ans, a, x: unbroadcast_like(fnp.sum(_col(g) * a, axis=-2), x)],
    linear=True,
    spec=Spec([(((2, 3), (3,)), {}), (((2, 2, 3), (3,)), {}), (((2, 3), (2, 1, 3)), {})],
              domain=COMPLEX2), batch=batch_rules.stacked(2, 1))

# vecmat(x, A)_m = sum_n conj(x_n) A_nm: conjugate-linear in x
vecmat_p = define(
    "vecmat", _onp.vecmat,
    [lambda g, ans, x, a: unbroadcast_like(_conj(fnp.sum(a * _row(g), axis=-1)), x),
     lambda g, ans, x, a: unbroadcast_like(_col(_conj(x)) * _row(g), a)],
    linear=True,
    spec=Spec([(((3,), (3, 2)), {}), (((2, 3), (3, 2)), {}), (((3,), (2, 3, 2)), {})],
              domain=COMPLEX2), batch=batch_rules.stacked(1, 2))


def _gufunc_kwargs(name, kwargs):
    # numpy's defaults ask for nothing; anything else (axes, keepdims, dtype, ...) is refused
    defaults = {"casting": "same_kind", "order": "K", "subok": True, "keepdims": False}
    unsupported_kwargs(name, {k: v for k, v in kwargs.items()
                              if not (k in defaults and v == defaults[k])})


@differentiable(_onp.vecdot, Spec([(((2, 3), (3,)), {}), (((3, 2), (3, 2)), {"axis": 0})]))
def vecdot(x1, x2, /, out=None, *, axis=None, **kwargs):
    """Conjugates ``x1`` as numpy does; ``axis`` is supported; ``out``, ``axes`` and the other
    ufunc arguments are refused on traced values."""
    _gufunc_kwargs("vecdot", dict(kwargs, out=out))
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    if axis is not None:
        x1, x2 = fnp.moveaxis(x1, axis, -1), fnp.moveaxis(x2, axis, -1)
    return vecdot_p(x1, x2)


@differentiable(_onp.matvec, Spec([(((2, 3), (3,)), {}), (((2, 2, 3), (2, 1, 3)), {})]))
def matvec(x1, x2, /, out=None, **kwargs):
    """``out``, ``axes`` and the other ufunc arguments are refused on traced
    values."""
    _gufunc_kwargs("matvec", dict(kwargs, out=out))
    return matvec_p(fnp.asarray(x1), fnp.asarray(x2))


@differentiable(_onp.vecmat, Spec([(((3,), (3, 2)), {}), (((2, 1, 3), (2, 3, 2)), {})]))
def vecmat(x1, x2, /, out=None, **kwargs):
    """Conjugates ``x1`` as numpy does; ``out``, ``axes`` and the other ufunc arguments are
    refused on traced values."""
    _gufunc_kwargs("vecmat", dict(kwargs, out=out))
    return vecmat_p(fnp.asarray(x1), fnp.asarray(x2))
