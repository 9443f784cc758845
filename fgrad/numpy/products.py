"""Products: tensordot, dot, matmul, outer, vdot, inner, kron, cross, convolve, correlate,
matvec, vecmat, vecdot, and numpy's polynomial functions, which are built on them.

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
from ..table import Spec, define
from ..tracer import innermost
from .broadcasting import dtype_of, shape_of, unbroadcast
from .layout import add_notes
from .wrapping import as_tuple, differentiable, unsupported_kwargs

COMPLEX2 = ("complex", "complex")


def _ndim(x):
    return len(shape_of(x))


def _inverse_perm(perm):
    return tuple(int(i) for i in _onp.argsort(perm))


def _is_complex(x):
    return _onp.iscomplexobj(innermost(x))


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
    return fnp.transpose(res, _inverse_perm(order))


def tensordot_vjp_b(g, a, b, axes):
    ia, ib = axes
    free_a = [i for i in range(_ndim(a)) if i not in ia]
    free_b = [i for i in range(_ndim(b)) if i not in ib]
    res = fnp.tensordot(a, g, axes=(free_a, list(range(len(free_a)))))  # ia in a's order, free_b
    order = [ib[j] for j in _onp.argsort(ia)] + free_b
    return fnp.transpose(res, _inverse_perm(order))


# The primitives' specs draw complex operands; the public functions' specs (below) real ones.
tensordot_p = define(
    "tensordot", lambda a, b, axes: _onp.tensordot(a, b, axes),
    [lambda g, ans, a, b, axes: tensordot_vjp_a(g, a, b, axes),
     lambda g, ans, a, b, axes: tensordot_vjp_b(g, a, b, axes)],
    linear=True,
    spec=Spec([(((2, 3), (3, 4)), {"axes": ((1,), (0,))}),
               (((2, 3, 4), (4, 3)), {"axes": ((2, 1), (0, 1))}),
               (((3,), (2,)), {"axes": ((), ())}),
               (((2, 3), (2, 3)), {"axes": ((0, 1), (0, 1))})], domain=COMPLEX2))


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
                          (((), (3,)), {})], domain=COMPLEX2))


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
                          (((2, 2, 3), (3,)), {}), (((), (2,)), {})]))


def _matrices(g, a, b):
    """Promote 1-d operands of matmul to matrices, and the cotangent to match."""
    if _ndim(b) == 1:
        g, b = fnp.expand_dims(g, -1), fnp.expand_dims(b, -1)
    if _ndim(a) == 1:
        g, a = fnp.expand_dims(g, -2), fnp.expand_dims(a, 0)
    return g, a, b


def _matmul_vjp_a(g, ans, a, b):
    g2, a2, b2 = _matrices(g, a, b)
    ga = unbroadcast(fnp.matmul(g2, fnp.swapaxes(b2, -1, -2)), shape_of(a2))
    return fnp.reshape(ga, shape_of(a))


def _matmul_vjp_b(g, ans, a, b):
    g2, a2, b2 = _matrices(g, a, b)
    gb = unbroadcast(fnp.matmul(fnp.swapaxes(a2, -1, -2), g2), shape_of(b2))
    return fnp.reshape(gb, shape_of(b))


matmul = define("matmul", _onp.matmul, [_matmul_vjp_a, _matmul_vjp_b], linear=True,
                spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((3,), (3, 2)), {}),
                           (((2, 3), (3, 4)), {}), (((2, 2, 3), (3, 2)), {}),
                           (((2, 1, 2, 3), (3, 3, 2)), {})]))

# numpy.outer ravels n-d operands: the transposes reshape back
outer = define("outer", _onp.outer,
               [lambda g, ans, a, b: fnp.reshape(fnp.dot(g, fnp.ravel(b)), shape_of(a)),
                lambda g, ans, a, b: fnp.reshape(fnp.dot(fnp.ravel(a), g), shape_of(b))],
               linear=True,
               spec=Spec([(((3,), (2,)), {}), (((2, 2), (3,)), {}), (((), (2,)), {})]))

# vdot ravels both operands and conjugates the first: sum(conj(a) * b). Under the pairing
# Re(g * sum(conj(ta) * b)) = Re sum(ta * conj(g * b)), the transpose for a is conj(g * b).
vdot = define("vdot", _onp.vdot,
              [lambda g, ans, a, b: fnp.reshape(_conj(g * b), shape_of(a)),
               lambda g, ans, a, b: fnp.reshape(g * _conj(a), shape_of(b))],
              linear=True,
              spec=Spec([(((3,), (3,)), {}), (((2, 2), (4,)), {}), (((), ()), {})],
                        domain=COMPLEX2))


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
                         (((), (2,)), {})]))


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
        return fnp.moveaxis(unbroadcast(ga, shape_of(av)), -1, axisa)
    gb = fnp.einsum(f"...i,...{k},ij{k}->...j", av, gv, e)
    return fnp.moveaxis(unbroadcast(gb, shape_of(bv)), -1, axisb)


cross_p = define(
    "cross", lambda a, b, axisa, axisb, axisc: _onp.cross(a, b, axisa=axisa, axisb=axisb,
                                                          axisc=axisc),
    [lambda g, ans, a, b, **axes: _cross_vjp(0, g, ans, a, b, **axes),
     lambda g, ans, a, b, **axes: _cross_vjp(1, g, ans, a, b, **axes)],
    linear=True,
    spec=Spec([(((3,), (3,)), {"axisa": 0, "axisb": 0, "axisc": 0}),
               (((2, 3), (3,)), {"axisa": 1, "axisb": 0, "axisc": 1}),
               (((3, 2), (2, 1, 3)), {"axisa": 0, "axisb": 2, "axisc": 0})],
              domain=COMPLEX2))


@differentiable(_onp.cross, Spec([(((2, 3), (2, 3)), {}),
                                  (((3, 2), (2, 3)), {"axisa": 0, "axisc": 0}),
                                  (((3, 2), (3, 1)), {"axis": 0})]))
def cross(a, b, axisa=-1, axisb=-1, axisc=-1, axis=None):
    """For 3-vectors and (deprecated by numpy, still supported) 2-vectors, with
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
               (((4,), (3,)), {"mode": "valid"})], domain=COMPLEX2))


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
              domain=COMPLEX2))


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
    [lambda g, ans, x1, x2: unbroadcast(_conj(_col(g) * x2), shape_of(x1)),
     lambda g, ans, x1, x2: unbroadcast(_col(g) * _conj(x1), shape_of(x2))],
    linear=True,
    spec=Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 1, 3), (2, 3)), {})],
              domain=COMPLEX2))

# matvec(A, x)_m = sum_n A_mn x_n
matvec_p = define(
    "matvec", _onp.matvec,
    [lambda g, ans, a, x: unbroadcast(_col(g) * _row(x), shape_of(a)),
     lambda g, ans, a, x: unbroadcast(fnp.sum(_col(g) * a, axis=-2), shape_of(x))],
    linear=True,
    spec=Spec([(((2, 3), (3,)), {}), (((2, 2, 3), (3,)), {}), (((2, 3), (2, 1, 3)), {})],
              domain=COMPLEX2))

# vecmat(x, A)_m = sum_n conj(x_n) A_nm: conjugate-linear in x
vecmat_p = define(
    "vecmat", _onp.vecmat,
    [lambda g, ans, x, a: unbroadcast(_conj(fnp.sum(a * _row(g), axis=-1)), shape_of(x)),
     lambda g, ans, x, a: unbroadcast(_col(_conj(x)) * _row(g), shape_of(a))],
    linear=True,
    spec=Spec([(((3,), (3, 2)), {}), (((2, 3), (3, 2)), {}), (((3,), (2, 3, 2)), {})],
              domain=COMPLEX2))


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


# ---------------------------------------------------------------------------------------------
# Polynomials (coefficients highest power first, as numpy.poly* take them). Each repeats
# numpy's own sequence of operations with fgrad.numpy, so values are numpy's bit for bit;
# where numpy promotes (float32 coefficients times integer powers give float64), the cast is
# made explicit so that a float32 input still gets a float32 gradient.

def _numpy_valued(np_fn, spec):
    """``differentiable(np_fn, spec, numpy_values=True)``, keeping the traced function's
    docstring for ``add_notes``."""
    def decorate(traced):
        public = differentiable(np_fn, spec, numpy_values=True)(traced)
        public._fgrad_traced.__doc__ = traced.__doc__
        return public
    return decorate


def _no_poly1d(name, *args):
    if any(isinstance(a, _onp.poly1d) for a in args):
        raise NotImplementedError(f"fgrad.numpy.{name}: poly1d objects are not supported on "
                                  "traced values; pass the coefficient arrays instead")


def _promoted(x, other):
    """``x`` cast to the dtype numpy gives it in an operation with an array of ``other``."""
    dtype = _onp.result_type(dtype_of(x), other)
    return x if dtype_of(x) == dtype else fnp.astype(x, dtype)


def _leading_away_from_zero(*ps):
    """Spec predicate: no leading coefficient near 0 (numpy drops exact zeros there)."""
    return all(abs(_onp.ravel(p)[0]) > 0.1 for p in ps)


def _separated(*xs):
    """Spec predicate: the drawn points at least 0.3 apart."""
    v = _onp.sort(_onp.ravel(xs[0]))
    return v.size < 2 or _onp.min(_onp.diff(v)) > 0.3


@differentiable(_onp.polyval, Spec([(((3,), ()), {}), (((4,), (2, 3)), {}), (((1,), (3,)), {}),
                                    (((2, 2), (2,)), {})]))
def polyval(p, x):
    """Horner's scheme, as numpy evaluates it; poly1d is refused on traced
    values."""
    _no_poly1d("polyval", p, x)
    p, x = fnp.asarray(p), fnp.asarray(x)
    y = _onp.zeros_like(innermost(x))
    for k in range(len(innermost(p))):
        y = y * x + p[k]
    return y


def _padded_pair(a1, a2):
    """Both coefficient vectors padded with leading zeros to one length (numpy's polyadd)."""
    a1, a2 = fnp.atleast_1d(a1), fnp.atleast_1d(a2)
    diff = len(innermost(a2)) - len(innermost(a1))
    if diff > 0:
        a1 = fnp.concatenate((_onp.zeros(diff, dtype_of(a1)), a1))
    elif diff < 0:
        a2 = fnp.concatenate((_onp.zeros(-diff, dtype_of(a2)), a2))
    return a1, a2


@differentiable(_onp.polyadd, Spec([(((3,), (3,)), {}), (((2,), (4,)), {}), (((), (2,)), {})]))
def polyadd(a1, a2):
    _no_poly1d("polyadd", a1, a2)
    a1, a2 = _padded_pair(a1, a2)
    return a1 + a2


@differentiable(_onp.polysub, Spec([(((3,), (3,)), {}), (((4,), (2,)), {}), (((2,), ()), {})]))
def polysub(a1, a2):
    _no_poly1d("polysub", a1, a2)
    a1, a2 = _padded_pair(a1, a2)
    return a1 - a2


def _trim_leading_zeros(p):
    """numpy's ``poly1d(p).coeffs``: leading zero coefficients dropped (all zero: ``[0]``)."""
    p = fnp.atleast_1d(p)
    if _ndim(p) > 1:
        raise ValueError("Polynomial must be 1d only.")
    nonzero = _onp.flatnonzero(innermost(p))
    if nonzero.size == 0:
        return _onp.zeros(1, dtype_of(p))
    return p if nonzero[0] == 0 else p[int(nonzero[0]):]


@differentiable(_onp.polymul, Spec([(((3,), (2,)), {}), (((2,), (4,)), {}), (((), (3,)), {})],
                                   valid=lambda a1, a2: _leading_away_from_zero(a1, a2)))
def polymul(a1, a2):
    """Like numpy, it drops exactly-zero leading coefficients (the result is
    shorter): their derivative is taken as zero."""
    _no_poly1d("polymul", a1, a2)
    return convolve(_trim_leading_zeros(a1), _trim_leading_zeros(a2))


@differentiable(_onp.polyder, Spec([(((4,),), {}), (((4,),), {"m": 2}), (((3,),), {"m": 0}),
                                    (((2,),), {"m": 3})]))
def polyder(p, m=1):
    m = int(m)
    if m < 0:
        raise ValueError("Order of derivative must be positive (see polyint)")
    _no_poly1d("polyder", p)
    p = fnp.asarray(p)
    for _ in range(m):
        n = len(innermost(p)) - 1
        p = _promoted(p, _onp.int_)[:-1] * _onp.arange(n, 0, -1)
    return p


def _polyint_call(f, p, *k, **params):
    return f(p, k=k[0], **params) if k else f(p, **params)


@differentiable(_onp.polyint, Spec([(((3,),), {}), (((3,),), {"m": 2}), (((3,), ()), {}),
                                    (((2,), (2,)), {"m": 2})], call=_polyint_call))
def polyint(p, m=1, k=None):
    """The integration constants ``k`` may be traced too."""
    m = int(m)
    if m < 0:
        raise ValueError("Order of integral must be positive (see polyder)")
    _no_poly1d("polyint", p)
    if k is None:
        k = _onp.zeros(m, float)
    k = fnp.atleast_1d(k)
    if len(innermost(k)) == 1 and m > 1:
        k = k[0] * _onp.ones(m, float)
    if len(innermost(k)) < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = fnp.asarray(p)
    for i in range(m):
        powers = _onp.arange(len(innermost(p)), 0, -1)
        p = fnp.concatenate((_promoted(p, _onp.int_) / powers, fnp.reshape(k[i], (1,))))
    return p


def _full_remainder(u, v):
    """Spec predicate: a divisor's leading coefficient away from 0, and a remainder whose
    leading coefficient is too (numpy trims a remainder's leading zeros)."""
    if abs(_onp.ravel(v)[0]) < 0.5:
        return False
    if _onp.size(v) == 1:  # a constant divisor leaves the zero remainder, [0.]
        return True
    r = _onp.polydiv(u, v)[1]
    want = min(_onp.size(u), max(_onp.size(v) - 1, 1))
    return r.size == want and abs(r[0]) > 0.1


# numpy divides and multiplies complex scalars by other formulas than arrays: its values
@_numpy_valued(_onp.polydiv, Spec([(((4,), (2,)), {}), (((3,), (3,)), {}), (((2,), (3,)), {}),
                                    (((), ()), {})],
                                   valid=lambda u, v: _full_remainder(u, v)))
def polydiv(u, v):
    """Quotient and remainder by numpy's long division. Like numpy, the
    remainder loses its leading coefficients that are zero to within ``allclose`` (the ones
    the division eliminates, and any true remainder coefficient below 1e-8): the derivative
    of those is dropped with them."""
    _no_poly1d("polydiv", u, v)
    u, v = fnp.atleast_1d(u) + 0.0, fnp.atleast_1d(v) + 0.0
    dtype = _onp.result_type(dtype_of(u), dtype_of(v))
    m, n = len(innermost(u)) - 1, len(innermost(v)) - 1
    scale = 1. / v[0]
    r = u if dtype_of(u) == dtype else fnp.astype(u, dtype)
    quotient = []
    for k in range(m - n + 1):
        d = scale * r[k]
        quotient.append(d)
        r = fnp.index_set(r, r[k:k + n + 1] - d * v, slice(k, k + n + 1))
    q = fnp.stack(quotient) if quotient else _onp.zeros(1, dtype)
    while _onp.allclose(innermost(r)[0], 0, rtol=1e-14) and shape_of(r)[-1] > 1:
        r = r[1:]
    return q, r


@differentiable(_onp.vander, Spec([(((3,),), {}), (((3,),), {"N": 4, "increasing": True}),
                                   (((2,),), {"N": 3})]))
def vander(x, N=None, increasing=False):
    """The powers by repeated multiplication, as numpy computes them."""
    x = fnp.asarray(x)
    if _ndim(x) != 1:
        raise ValueError("x must be a one-dimensional array or sequence.")
    n = shape_of(x)[0]
    N = n if N is None else N
    dtype = _onp.promote_types(dtype_of(x), int)
    if N <= 1:  # no power of x appears: a constant
        return _onp.vander(innermost(x), N, increasing)
    columns = [_onp.ones(n, dtype), x if dtype_of(x) == dtype else fnp.astype(x, dtype)]
    while len(columns) < N:
        columns.append(columns[-1] * columns[1])
    return fnp.stack(columns if increasing else columns[::-1], axis=1)


def _polyfit_call(f, x, y, *w, **params):
    return f(x, y, w=w[0], **params) if w else f(x, y, **params)


# numpy's values come from an SVD-based lstsq
@_numpy_valued(_onp.polyfit, Spec([(((4,), (4,)), {"deg": 1}), (((4,), (4,)), {"deg": 2}),
                                    (((3,), (3, 2)), {"deg": 1}),
                                    (((4,), (4,), (4,)), {"deg": 2})],
                                   domain=((-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)),
                                   valid=_separated, call=_polyfit_call))
def polyfit(x, y, deg, rcond=None, full=False, w=None, cov=False):
    """Differentiable in ``x``, ``y`` and ``w``. The derivatives are those of
    the least-squares solution, through the normal equations of numpy's scaled Vandermonde
    matrix (``fgrad.numpy.linalg.solve``); the values are numpy's own. A fit whose
    Vandermonde matrix is rank-deficient (numpy's RankWarning) has no derivative and is
    refused, as are ``full=True`` and ``cov`` on traced values."""
    unsupported_kwargs("polyfit", {"full": full or None, "cov": cov or None})
    order = int(deg) + 1
    x, y = fnp.asarray(x) + 0.0, fnp.asarray(y) + 0.0
    if deg < 0:
        raise ValueError("expected deg >= 0")
    if _ndim(x) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if _ndim(y) < 1 or _ndim(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")
    if rcond is None:
        rcond = len(innermost(x)) * _onp.finfo(dtype_of(x)).eps
    lhs = vander(x, order)
    rhs = fnp.astype(y, _onp.result_type(dtype_of(lhs), dtype_of(y)))
    if w is not None:
        w = fnp.asarray(w) + 0.0
        if _ndim(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")
        w = fnp.astype(w, dtype_of(lhs))
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if _ndim(rhs) == 2 else w)
    scale = fnp.sqrt(fnp.sum(lhs * lhs, axis=0))
    lhs = lhs / scale
    s = _onp.linalg.svd(innermost(lhs), compute_uv=False)
    if _onp.sum(s > rcond * s[0]) < order:
        raise NotImplementedError(
            "fgrad.numpy.polyfit: the fit is rank-deficient (numpy warns 'Polyfit may be "
            "poorly conditioned'), so its solution has no derivative; lower deg or use more "
            "distinct points")
    lhs_t = fnp.swapaxes(lhs, 0, 1)
    c = fnp.linalg.solve(fnp.matmul(lhs_t, lhs), fnp.matmul(lhs_t, rhs))
    return c / (scale[:, None] if _ndim(c) == 2 else scale)


# A simple root r of p (p(r) = 0, p'(r) != 0) moves by dr = -dp(r) / p'(r) when the
# coefficients move by dp. Written with fgrad.numpy on the output r itself, the rules are
# differentiable again (r's own derivative comes from this rule one level up).
def _roots_jvp(t, ans, p):
    return -polyval(t, ans) / polyval(polyder(p), ans)


def _roots_vjp(g, ans, p):
    n = len(innermost(p))
    return -fnp.matmul(g / polyval(polyder(p), ans), vander(ans, n))


def _simple_roots(p):
    """Spec predicate: a leading coefficient away from zero, roots 0.3 apart, and the real
    parts of roots that are not a conjugate pair 0.05 apart (so ``_sorted`` keeps its order
    under a finite-difference step)."""
    p = _onp.asarray(p)
    if abs(p[0]) < 0.5:
        return False
    r = _onp.roots(p)
    pairs = [(a, b) for i, a in enumerate(r) for b in r[i + 1:]]
    return all(abs(a - b) > 0.3 and (abs(a - b.conjugate()) < 1e-9 or abs(a.real - b.real) > 0.05)
               for a, b in pairs)


def _sorted(f, p):
    """Spec call: roots sorted by real, then imaginary part. numpy's order (LAPACK's) can
    change under a finite-difference step; the derivatives compared are those of each root."""
    r = f(p)
    v = innermost(r)
    return r[_onp.lexsort((_onp.imag(v), _onp.real(v)))]


roots = define(
    "roots", _onp.roots, [_roots_vjp], [_roots_jvp],
    spec=Spec([(((2,),), {}), (((3,),), {}), (((4,),), {})], valid=_simple_roots, call=_sorted),
    doc="fgrad: each root's derivative is that of a simple root, dr = -dp(r) / p'(r), real or "
        "complex (for a real p, JAX's convention: the cotangent's real part). At a multiple "
        "root p'(r) = 0 and the derivative is infinite (inf/nan): it is truly unbounded there. "
        "A leading zero coefficient keeps its derivative (the finite roots' sensitivity to "
        "it); trailing zeros give roots at 0, a simple one with its true derivative.\n\n"
        + _onp.roots.__doc__)



@differentiable(_onp.poly, Spec([(((3,),), {}), (((1,),), {}), (((2,),), {})]))
def poly(seq_of_zeros):
    """Coefficients from the roots by repeated convolution, as numpy does. Complex
    roots closed under conjugation give real coefficients (numpy's real part). A square
    matrix argument goes through ``fgrad.numpy.linalg.eigvals``."""
    z = fnp.atleast_1d(seq_of_zeros)
    shape = shape_of(z)
    if len(shape) == 2 and shape[0] == shape[1] and shape[0] != 0:
        z = fnp.linalg.eigvals(z)
    elif len(shape) == 1:
        z = fnp.astype(z, _onp.mintypecode(dtype_of(z).char))
    else:
        raise ValueError("input must be 1d or non-empty square 2d array.")
    n = shape_of(z)[0]
    if n == 0:
        return 1.0
    dtype = dtype_of(z)
    a, one = _onp.ones((1,), dtype), _onp.ones((), dtype)
    for k in range(n):
        a = convolve(a, fnp.stack([one, -z[k]]), mode="full")
    if _onp.iscomplexobj(innermost(a)):
        zeros = _onp.asarray(innermost(z), complex)
        if _onp.all(_onp.sort(zeros) == _onp.sort(zeros.conjugate())):
            a = fnp.real(a)
    return a


add_notes(globals())
