"""Norms: norm (every ``ord``), vector_norm, matrix_norm, cond; matrix_rank (zero
derivative)."""
import operator

import numpy as _onp

import fgrad.numpy as fnp
from ...core.table import Spec, define
from .. import batch_rules
from ...core.tracer import without_derivative, value_for_shape
from ..broadcasting import REDUCE, dtype_of, kept_shape, mask, shape_of
from ..namespace import zero_derivative
from ..wrapping import differentiable, numpy_reference
from .common import _la, _min_gap, _ndim, _shift, _shifted
from .solving import inv
from .decompositions import _svdvals


# --- norms -------------------------------------------------------------------------------
# Every norm has gradient 0 at x = 0 (the subgradient of least norm): the square root and the
# p-th root are taken as 0, with zero derivative, where their argument is exactly 0. Kinks
# inside (|x_i| = 0, ties in max/min) follow fgrad's conventions for abs, max and min.

def _root0(s, p=2):
    """``s ** (1/p)``, with value and derivative 0 where ``s`` is exactly 0."""
    zero = mask(without_derivative(s) == 0, s)
    r = fnp.sqrt(s + zero) if p == 2 else (s + zero) ** (1.0 / p)
    return r * (1 - zero)


def _sum_squares(x, axis, keepdims):
    if _onp.iscomplexobj(value_for_shape(x)):
        return fnp.sum(fnp.real(fnp.conjugate(x) * x), axis=axis, keepdims=keepdims)
    axis = None if axis is None else tuple(a % _ndim(x) for a in axis)
    return _sum_squares_p(x, axis=axis, keepdims=keepdims)


def _sum_squares_impl(x, axis, keepdims):
    """The sum of squares of a real array; over every axis numpy's ``norm`` takes it as
    ``x.dot(x)`` of the ravelled array (BLAS), and so does this, in the same bits."""
    if axis is None and not keepdims and x.__class__ is _onp.ndarray:
        v = x.ravel(order="K")
        return v.dot(v)
    return _onp.sum(x * x, axis=axis, keepdims=keepdims)


def _kept(g, x, axis, keepdims):
    """A reduction's cotangent shaped to broadcast against ``x`` (not broadcast yet)."""
    if axis is None or keepdims:
        return g
    return fnp.reshape(g, kept_shape(shape_of(x), axis))


# One primitive rather than x * x and sum: the gradient of the Frobenius norm of a
# 1000 x 1000 matrix (pymanopt's suite) took 11 ms through the two primitives' rules, several
# passes over the matrix; this one's VJP is one pass, as autograd's norm's is.
_sum_squares_p = define(
    "linalg.sum_squares", _sum_squares_impl,
    [lambda g, ans, x, axis, keepdims: x * _kept(2 * g, x, axis, keepdims)],
    [lambda t, ans, x, axis, keepdims: 2 * fnp.sum(x * t, axis=axis, keepdims=keepdims)],
    spec=Spec(REDUCE), batch=batch_rules.along())


def _vector_norm(x, ord, axis, keepdims, value):
    """The vector norm of ``x`` over the axes ``axis`` (a tuple); ``value`` is numpy's."""
    if ord is None or ord == 2:
        return _root0(_sum_squares(x, axis, keepdims))
    if ord == _onp.inf:
        return fnp.max(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -_onp.inf:
        return fnp.min(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # the number of nonzero entries: zero derivative
        if value is None:  # (numpy's is not known under vmap)
            return fnp.sum(mask(without_derivative(x) != 0, fnp.real(x)), axis=axis,
                           keepdims=keepdims)
        return value
    if ord == 1:
        return fnp.sum(fnp.abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    ax = fnp.abs(x)
    zero = mask(without_derivative(ax) == 0, ax)  # |0|^p is left out (it is 0 or, for p < 0, inf)
    r = _root0(fnp.sum((ax + zero) ** p * (1 - zero), axis=axis, keepdims=keepdims), p)
    if p < 0:  # a zero entry makes the norm 0 around it (it is about |x_i|): derivative 0
        hit = fnp.any(without_derivative(zero) != 0, axis=axis, keepdims=keepdims)
        r = r * (1 - mask(hit, r))
    return r


def _matrix_norm(x, ord, row, col, keepdims):
    nd = _ndim(x)
    if ord in (None, "fro", "f"):
        r = _root0(_sum_squares(x, (row, col), False))
    else:
        if ord in (2, -2, "nuc"):
            rest = [i for i in range(nd) if i not in (row, col)]
            s = _svdvals(fnp.transpose(x, rest + [row, col]))
            reduce = {2: fnp.max, -2: fnp.min, "nuc": fnp.sum}[ord]
            r = reduce(s, axis=-1)
        elif ord in (1, -1):
            reduce = fnp.max if ord == 1 else fnp.min
            r = reduce(fnp.sum(fnp.abs(x), axis=row), axis=col - 1 if col > row else col)
        else:  # inf, -inf
            reduce = fnp.max if ord == _onp.inf else fnp.min
            r = reduce(fnp.sum(fnp.abs(x), axis=col), axis=row - 1 if row > col else row)
    if keepdims:
        shape = list(shape_of(x))
        shape[row] = shape[col] = 1
        r = fnp.reshape(r, tuple(shape))
    return r


def _norm(x, ord, axis, keepdims, value):
    nd = _ndim(x)
    if axis is None:
        if ord is None or (ord in ("f", "fro") and nd == 2) or (ord == 2 and nd == 1):
            r = _root0(_sum_squares(fnp.ravel(x), None, False))
            return fnp.reshape(r, (1,) * nd) if keepdims else r
        axis = tuple(range(nd))
    elif not isinstance(axis, tuple):
        axis = (operator.index(axis),)
    if len(axis) == 1:
        return _vector_norm(x, ord, (axis[0] % nd,), keepdims, value)
    return _matrix_norm(x, ord, axis[0] % nd, axis[1] % nd, keepdims)


def _no_kinks(x, margin=0.02):
    """Whether ``x`` is ``margin`` away from every norm's kinks: entries away from 0 and from
    each other in absolute value, sums of |x| along any axis distinct, singular values of
    every pair of axes distinct and away from 0."""
    x = _onp.asarray(x, float)
    ax = _onp.abs(x)
    if x.ndim == 0:
        return bool(ax > margin)
    if _onp.min(ax) < margin or _min_gap(ax.ravel()) < margin:
        return False
    for k in range(x.ndim):
        if _min_gap(_onp.sum(ax, axis=k).ravel()) < margin:
            return False
    for i in range(x.ndim):
        for j in range(i + 1, x.ndim):
            rest = [k for k in range(x.ndim) if k not in (i, j)]
            sv = _la.svd(_onp.transpose(x, rest + [i, j]), compute_uv=False)
            if _onp.min(sv) < margin or _all_gaps(sv.reshape(-1, sv.shape[-1])) < margin:
                return False
    return True


_GENERIC = {}


def _generic(shape):
    """A fixed array of ``shape`` 0.3 away from every norm's kink (its entries' moduli
    0.5, 0.9, 1.3, ... in a scrambled order, with scrambled signs)."""
    if shape not in _GENERIC:
        n = int(_onp.prod(shape, dtype=int))
        for seed in range(1000):
            rng = _onp.random.default_rng(seed)
            c = (0.5 + 0.4 * rng.permutation(n)).reshape(shape)
            c = c * _onp.where(rng.random(shape) < 0.5, -1, 1)
            if _no_kinks(c, 0.3):
                break
        _GENERIC[shape] = c
    return _GENERIC[shape]


# The norm specs draw small offsets from a generic point: draws from the whole range would
# mostly land near some kink (hypothesis favours zeros and repeated values).
def _norm_call(f, x, **params):
    return f(x + _generic(shape_of(x)).astype(dtype_of(x)), **params)


def _norm_valid(x):
    return _no_kinks(x + _generic(_onp.shape(x)))


def _norm_spec(cases):
    return Spec(cases, domain=(-0.02, 0.02), valid=_norm_valid, call=_norm_call)


def _all_gaps(sv):
    return min(_min_gap(row) for row in sv)


@differentiable(_la.norm, _norm_spec([(((2, 3),), {}), (((4,),), {"ord": 3}),
                                 (((2, 3),), {"ord": 1, "axis": 1, "keepdims": True}),
                                 (((3, 2),), {"ord": "nuc"}),
                                 (((2, 3, 2),), {"ord": 2, "axis": (0, 2)}),
                                 (((2, 2),), {"ord": -_onp.inf, "axis": (1, 0),
                                              "keepdims": True}),
                                 (((3,),), {"ord": -1}), (((2, 3),), {"ord": _onp.inf})]),
                 name="linalg.norm", numpy_values=True)
def norm(x, ord=None, axis=None, keepdims=False):
    """numpy.linalg.norm, every ``ord``. At ``x = 0`` every norm has gradient 0 (the
    subgradient of least norm; for the 2-norm the derivative does not exist there);
    ``ord=0`` counts nonzeros and has zero derivative; kinks where an entry is 0, where a
    max/min ties or where a singular value is 0 follow fgrad's conventions for ``abs``,
    ``max``/``min`` (ties share evenly) and ``svdvals``. For 0 < p < 1 or p < 0 an entry
    exactly 0 gets derivative 0 (the average of infinite one-sided slopes). Complex input is
    differentiated for every ``ord`` (through ``abs`` and ``svdvals``)."""
    x = fnp.asarray(x)
    value = numpy_reference(_la.norm, x, ord, axis, keepdims)  # numpy's errors
    return _norm(x, ord, axis, keepdims, value)


def _axis_tuple(axis, nd):
    if axis is None:
        return tuple(range(nd))
    return tuple(a % nd for a in (axis if isinstance(axis, tuple) else (operator.index(axis),)))


@differentiable(_la.vector_norm, _norm_spec([(((2, 3),), {}), (((4,),), {"ord": 1}),
                                        (((2, 3, 2),), {"axis": (0, 2), "ord": _onp.inf}),
                                        (((2, 3),), {"axis": 0, "ord": -_onp.inf,
                                                     "keepdims": True}),
                                        (((3,),), {"ord": -2}), (((2, 2),), {"ord": 0.5}),
                                        (((3, 2),), {"axis": -1, "ord": 0})]),
                 name="linalg.vector_norm", numpy_values=True)
def vector_norm(x, /, *, axis=None, keepdims=False, ord=2):
    """numpy.linalg.vector_norm; the conventions of ``norm`` (gradient 0 at 0, ``ord=0`` has
    zero derivative)."""
    x = fnp.asarray(x)
    value = numpy_reference(_la.vector_norm, x, axis=axis, keepdims=keepdims, ord=ord)
    nd = _ndim(x)
    if nd == 0:
        return _vector_norm(fnp.reshape(x, (1,)), ord, (0,), False, value)
    return _vector_norm(x, ord, _axis_tuple(axis, nd), bool(keepdims), value)


@differentiable(_la.matrix_norm, _norm_spec([(((2, 3),), {}), (((3, 2),), {"ord": "nuc"}),
                                        (((2, 2),), {"ord": 1}), (((2, 3),), {"ord": -1}),
                                        (((2, 2, 3),), {"ord": 2}), (((3, 2),), {"ord": -2}),
                                        (((2, 3),), {"ord": _onp.inf, "keepdims": True}),
                                        (((2, 2),), {"ord": -_onp.inf})]),
                 name="linalg.matrix_norm", numpy_values=True)
def matrix_norm(x, /, *, keepdims=False, ord="fro"):
    """numpy.linalg.matrix_norm; the conventions of ``norm`` (gradient 0 at 0)."""
    x = fnp.asarray(x)
    value = numpy_reference(_la.matrix_norm, x, keepdims=keepdims, ord=ord)
    return _norm(x, ord, (-2, -1), bool(keepdims), value)


def _cond_valid(a):
    a = _onp.asarray(a, float) + _shift(_onp.asarray(a, float))
    s = _la.svd(a, compute_uv=False)
    return _all_gaps(s.reshape(-1, s.shape[-1])) > 0.05


@differentiable(_la.cond, Spec([(((2, 2),), {}), (((3, 3),), {"p": 2}),
                                 (((2, 3, 3),), {"p": -2}), (((3, 3),), {"p": "fro"}),
                                 (((2, 2),), {"p": "nuc"})],
                                domain=(-1.0, 1.0), valid=_cond_valid, call=_shifted),
                 name="linalg.cond", numpy_values=True)
def cond(x, p=None):
    """numpy.linalg.cond, real or complex input: ``s_max / s_min`` for p None/2 (its inverse
    for -2), else ``norm(x, p) * norm(inv(x), p)`` (the kinks of those norms apply). Singular
    input (an infinite condition number) has no derivative."""
    x = fnp.asarray(x)
    numpy_reference(_la.cond, x, p)  # numpy's errors
    if p is None or p == 2 or p == -2:
        s = _svdvals(x)
        first, last = fnp.getitem(s, (Ellipsis, 0)), fnp.getitem(s, (Ellipsis, -1))
        return last / first if p == -2 else first / last
    return _norm(x, p, (-2, -1), False, None) * _norm(inv(x), p, (-2, -1), False, None)


matrix_rank = zero_derivative(_la.matrix_rank)
