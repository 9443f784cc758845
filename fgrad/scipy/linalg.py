"""fgrad.scipy.linalg: scipy.linalg with derivatives.

Primitives whose implementations are scipy's: ``inv``, ``det``, ``solve``, ``cholesky``,
``eigh``, ``eigvalsh``, ``svd``, ``svdvals``, ``qr`` reuse ``fgrad.numpy.linalg``'s rules (the
same mathematics), ``eigh_tridiagonal`` eigh's on the tridiagonal matrix; ``solve_triangular``,
``solve_banded``, ``cho_factor``, ``lu_factor``, ``solve_sylvester``, ``polar``,
``solve_discrete_lyapunov`` and the algebraic Riccati equations (``solve_continuous_are``,
``solve_discrete_are``: tangents solve the closed loop's Lyapunov equation) have their own;
``expm``'s (and ``cosm``, ``sinm``, ``tanm``, their hyperbolic forms' and ``signm``'s) is the
Fréchet derivative read off the function of a block matrix, ``f([[A, E], [0, A]]) = [[f(A),
L_f(A, E)], [0, f(A)]]``, which is the function
itself again, so it nests to any order; ``sqrtm``'s the Sylvester equation
``X dX + dX X = dA``, and ``logm``'s the block matrix's logarithm taken at ``sqrtm(A)``
(``log A = 2 log A^(1/2)``), whose eigenvalues stay off the logarithm's branch cut.
``cho_solve``, ``lu_solve``, ``lu``, ``expm_frechet``, ``norm``,
``solve_continuous_lyapunov`` are composed of primitives, with scipy's own values; the
structured matrices and their solves (``toeplitz``, ``solve_toeplitz``, ...) are in
``structured.py``.

Conventions, as in ``fgrad.numpy.linalg``: functions that read one triangle of their input
(``cholesky``, ``cho_factor``, ``eigh``) are differentiated as the functions scipy computes,
with zero derivative with respect to the triangle not read; pivoting (``lu_factor``'s ``piv``)
is piecewise constant; only real input. On traced values the arguments that change how scipy
checks or overwrites its inputs (``overwrite_*``, ``check_finite``) are accepted and ignored;
others are refused by name.
"""

from math import comb

import numpy as _onp
import scipy.linalg as _sl

import fgrad.numpy as fnp
from ..numpy import batch_rules, taylor_rules
from ..numpy.broadcasting import cast_like, mask, shape_of
from ..numpy.linalg import (decompositions as _dec, least_squares as _lsq, norms as _norms,
                            solving as _solving)
from ..numpy.linalg.common import (_clear_top, _column_signs, _min_gap, _outputs,
                                   _dominant, _eye, _mT, _qr_call, _qr_valid, _real_part, _shift,
                                   _shifted, _svd_call, _svd_valid)
from ..numpy.multi_output import define_multi
from ..numpy.indexing import gather_p
from ..numpy.namespace import values_only
from ..numpy.wrapping import differentiable, refuse_traced, traced_version_of
from ..core.table import Spec
from . import defining
from .defining import define
from .structured import (block_diag, circulant, companion, diagsvd, hankel,  # noqa: F401
                         khatri_rao, leslie, matmul_toeplitz, solve_circulant, solve_toeplitz,
                         toeplitz)
from ..core.tracer import read_value, value_for_shape, value_dtype

_IGNORED = ("overwrite_a", "overwrite_b", "check_finite", "overwrite_c")
SQUARE = [(((2, 2),), {}), (((3, 3),), {})]


def _name(fn):
    return "scipy.linalg." + fn.__name__


def _only(fn_name, kwargs, allowed=()):
    """The keyword arguments a traced call may take: ``allowed`` ones, and the ignored."""
    bad = sorted(k for k, v in kwargs.items()
                 if k not in allowed and k not in _IGNORED and v not in (None, False))
    if bad:
        raise NotImplementedError(
            f"fgrad.scipy.linalg.{fn_name}: the argument(s) {', '.join(bad)} are not supported "
            "on traced values; call it without them (or on fgrad.stop_gradient(x))")
    return {k: v for k, v in kwargs.items() if k in allowed}


def _tri(x, lower, k=0):
    """The lower (upper) triangle of ``x``, from diagonal ``k`` on (0: with the diagonal)."""
    n = shape_of(x)[-1]
    m = _onp.tri(n, k=-k, dtype=bool)  # entries with j <= i - k
    return x * mask(m if lower else m.T, x)


def _batched(rule):
    """``rule`` (numpy.linalg's stacked forms) where scipy.linalg takes stacks of matrices
    (scipy >= 1.16); one call per example before."""
    return rule if _STACKS else batch_rules.one_at_a_time


_STACKS = batch_rules.scipy_batches()
_STACKED = _batched(batch_rules.stacked(2))


def _same_rules(name, impl, np_prim, spec, doc=None):
    """A primitive computing with scipy's ``impl`` and differentiating (and batching) as
    numpy's ``np_prim`` does (same function; their rules use numpy's primitive, equal in
    value)."""
    return define(name, impl, spec=spec, doc=doc, batch=_batched(np_prim.batch), like=np_prim)


# --- inverse, determinant, solve: numpy's rules ------------------------------------------

_inv = _same_rules("scipy.linalg.inv", lambda a: _sl.inv(a), _solving.inv,
                   Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted))
_det = _same_rules("scipy.linalg.det", lambda a: _sl.det(a), _solving.det,
                   Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted))
_solve = _same_rules("scipy.linalg.solve", lambda a, b: _sl.solve(a, b), _solving.solve,
                     Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {})], domain=(-1.0, 1.0),
                          call=_shifted))


@traced_version_of(_sl.inv)
def inv(a, **kwargs):
    """scipy.linalg.inv: the derivative ``-inv(a) da inv(a)`` (an invertible ``a``)."""
    _only("inv", kwargs)
    return _inv(a)


@traced_version_of(_sl.det)
def det(a, **kwargs):
    """scipy.linalg.det: the gradient ``det(a) inv(a)^T`` (an invertible ``a``)."""
    _only("det", kwargs)
    return _det(a)


@traced_version_of(_sl.solve)
def solve(a, b, **kwargs):
    """scipy.linalg.solve, in ``a`` and ``b`` (a vector or a matrix of right-hand sides);
    ``assume_a`` is taken for the value and ignored by the derivative, which holds for any
    invertible ``a`` (for ``assume_a='pos'``/``'sym'`` the input is taken as given)."""
    kw = _only("solve", kwargs, ("assume_a", "lower", "transposed"))
    if kw.get("transposed"):
        a = _mT(a)
    if kw.get("assume_a") not in (None, "gen", "general"):
        raise NotImplementedError("fgrad.scipy.linalg.solve: on traced values assume_a is "
                                  "'gen' only; for a symmetric positive definite a use "
                                  "cho_solve(cho_factor(a), b)")
    return _solve(a, b)


inv._fgrad_entry, det._fgrad_entry, solve._fgrad_entry = _inv, _det, _solve


# --- pseudo-inverse: numpy's rules, scipy's cutoffs ------------------------------------------

_pinv = _same_rules("scipy.linalg.pinv", lambda a, kw=(): _sl.pinv(a, **dict(kw)), _lsq._pinv,
                    Spec([(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}),
                          (((3, 2),), {"kw": (("rtol", 1e-3),)})],
                         domain=(-1.0, 1.0), valid=_lsq._well_conditioned))


@traced_version_of(_sl.pinv)
def pinv(a, *, atol=None, rtol=None, return_rank=False, **kwargs):
    """scipy.linalg.pinv: scipy's values (its SVD cutoffs ``atol``, ``rtol``), numpy's
    ``pinv``'s derivative (Golub and Pereyra's formula: exact for full-rank input; where the
    cutoffs drop singular values, along perturbations that keep the rank).
    ``return_rank=True`` also gives the rank, an int."""
    _only("pinv", kwargs)
    for name, value in (("atol", atol), ("rtol", rtol)):
        refuse_traced("scipy.linalg.pinv", name, value, _lsq.CUTOFF)
    kw = tuple((k, v) for k, v in (("atol", atol), ("rtol", rtol)) if v is not None)
    out = _pinv(a, kw=kw)
    if not return_rank:
        return out
    # (the rank is read from the values: a guard under jit, refused under vmap)
    return out, int(_sl.pinv(read_value(a), atol=atol, rtol=rtol, return_rank=True)[1])


pinv._fgrad_entry = _pinv


@differentiable(_sl.lstsq, Spec([(((3, 2), (3,)), {}), (((4, 2), (4, 2)), {}),
                                 (((2, 3), (2,)), {}), (((3, 3), (3, 1)), {"cond": 1e-3}),
                                 (((4, 3), (4,)), {"lapack_driver": "gelss"})],
                                domain=((-1.0, 1.0), (-2.0, 2.0)), valid=_lsq._lstsq_valid),
                name="scipy.linalg.lstsq", numpy_values=True)
def lstsq(a, b, cond=None, overwrite_a=False, overwrite_b=False, check_finite=True,
          lapack_driver=None):
    """scipy.linalg.lstsq: scipy's values (its driver, and its cutoff ``cond``, by default
    the dtype's epsilon), ``numpy.linalg.lstsq``'s derivatives: the solution as
    ``pinv(a) @ b`` at scipy's cutoff (exact for full column rank, and for full row rank the
    least-norm solution's), the residues where scipy gives them (rank N < M), no derivative
    for the rank, the singular values ``svdvals(a)``'s (None from ``gelsy``, as scipy's)."""
    refuse_traced("scipy.linalg.lstsq", "cond", cond, _lsq.CUTOFF)
    a, b = fnp.asarray(a), fnp.asarray(b)
    # scipy's errors and rank: a's values, b's shape (as numpy.linalg.lstsq's, b stays unread)
    ref = _sl.lstsq(_lsq._values(a), value_for_shape(b), cond, lapack_driver=lapack_driver)
    if cond is None:  # (scipy's default: LAPACK's own epsilon for the computation's dtype)
        cond = _onp.finfo(_onp.result_type(ref[0])).eps
    x = fnp.matmul(_lsq._pinv(a, kw=(("rcond", cond),)), b)
    rank, resid = _lsq._rank_and_residuals(a, b, x, ref, cond)
    return x, resid, rank, None if ref[3] is None else _svdvals(a)


# --- Cholesky: numpy's rules, scipy's upper default ---------------------------------------

_SPD = Spec([(((2, 2),), {}), (((3, 3),), {"lower": True})], domain=(-1.0, 1.0),
            call=_dec._SPD.call)

_cholesky = define(
    "scipy.linalg.cholesky", lambda a, lower=False: _sl.cholesky(a, lower=lower),
    [lambda g, ans, a, lower=False: _dec._cholesky_vjp(g, ans, a, upper=not lower)],
    [lambda t, ans, a, lower=False: _dec._cholesky_jvp(t, ans, a, upper=not lower)],
    spec=_SPD, batch=_STACKED)


@traced_version_of(_sl.cholesky)
def cholesky(a, lower=False, **kwargs):
    """scipy.linalg.cholesky (upper by default, as scipy), differentiated as the function scipy
    computes: it reads the upper triangle of ``a`` (the lower with ``lower=True``), so the
    derivative with respect to the other triangle is zero."""
    _only("cholesky", kwargs)
    return _cholesky(a, lower=bool(lower))


cholesky._fgrad_entry = _cholesky


# whether cho_factor leaves a's own entries in the other triangle (scipy before 1.18) rather
# than zeros (1.18 on): its derivative there is that of a, or zero
_CHO_KEEPS_A = _sl.cho_factor(_onp.array([[1.0, 0.0], [2.0, 1.0]]))[0][1, 0] == 2.0


def _cho_factor_jvp(t, ans, a, lower=False):
    # the factor's triangle moves as cholesky's; the other triangle as scipy fills it
    lo = _tri(ans, lower)
    dc = _tri(_dec._cholesky_jvp(t, lo, a, upper=not lower), lower)
    return dc + _tri(t, not lower, 1) if _CHO_KEEPS_A else dc


def _cho_factor_vjp(g, ans, a, lower=False):
    lo = _tri(ans, lower)
    ga = _dec._cholesky_vjp(_tri(g, lower), lo, a, upper=not lower)
    return ga + _tri(g, not lower, 1) if _CHO_KEEPS_A else ga


_cho_factor = define("scipy.linalg.cho_factor",
                     lambda a, lower=False: _sl.cho_factor(a, lower=lower)[0],
                     [_cho_factor_vjp], [_cho_factor_jvp], spec=_SPD, batch=_STACKED)


@traced_version_of(_sl.cho_factor)
def cho_factor(a, lower=False, **kwargs):
    """scipy.linalg.cho_factor: ``(c, lower)``, ``c`` holding the factor in one triangle and
    in the other what scipy leaves there (``a``'s own entries; zeros from scipy 1.18 on), each
    with its derivative."""
    _only("cho_factor", kwargs)
    return _cho_factor(a, lower=bool(lower)), bool(lower)


cho_factor._fgrad_entry = _cho_factor


def _cho_solve_traced(c_and_lower, b, **kwargs):
    _only("cho_solve", kwargs)
    c, lower = c_and_lower
    lo = _tri(c, True) if lower else _mT(_tri(c, False))
    y = solve_triangular(lo, b, lower=True)
    return solve_triangular(lo, y, lower=True, trans=1)


cho_solve = differentiable(
    _sl.cho_solve,
    Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {"lower": True})], domain=(-1.0, 1.0),
         call=lambda f, a, b, lower=False: f(_sl_cho_factor_of(_dominant(a), lower), b)),
    name="scipy.linalg.cho_solve", numpy_values=True)(_cho_solve_traced)
cho_solve.__doc__ = ("fgrad: scipy.linalg.cho_solve, in the factor ``c`` (its triangle) and "
                     "``b``; scipy's values.\n\n" + (_sl.cho_solve.__doc__ or ""))


def _sl_cho_factor_of(a, lower):
    return cho_factor(a, lower=lower)


# --- triangular solves ----------------------------------------------------------------------

def _trans(trans):
    t = {0: 0, 1: 1, 2: 1, "N": 0, "T": 1, "C": 1}.get(trans)
    if t is None:
        raise ValueError(f"scipy.linalg.solve_triangular: unknown trans {trans!r}")
    return t


def _tri_of(a, lower, unit_diagonal):
    """The triangle solve_triangular reads (the strict one, with unit_diagonal)."""
    return _tri(a, lower, 1 if unit_diagonal else 0)


def _st_impl(a, b, trans=0, lower=False, unit_diagonal=False):
    return _sl.solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


def _outer(u, v):
    """``u v^T`` for vectors, ``u @ v^T`` for matrices of columns."""
    if len(shape_of(u)) == 1:
        return fnp.expand_dims(u, -1) * v
    return fnp.matmul(u, _mT(v))


def _st_vjp_a(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    y = _solve_tri(a, g, 1 - trans, lower, unit_diagonal)  # op(T)^-T g
    ga = -_outer(y, ans) if not trans else -_outer(ans, y)
    return cast_like(_tri_of(ga, lower, unit_diagonal), a)


def _st_vjp_b(g, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    return cast_like(_solve_tri(a, g, 1 - trans, lower, unit_diagonal), b)


def _st_jvp_a(t, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    tt = _tri_of(t, lower, unit_diagonal)
    return -_solve_tri(a, fnp.matmul(_mT(tt) if trans else tt, ans), trans, lower,
                       unit_diagonal)


def _st_jvp_b(t, ans, a, b, trans=0, lower=False, unit_diagonal=False):
    return _solve_tri(a, t, trans, lower, unit_diagonal)


_solve_triangular = define(
    "scipy.linalg.solve_triangular", _st_impl, [_st_vjp_a, _st_vjp_b], [_st_jvp_a, _st_jvp_b],
    spec=Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {"lower": True}),
               (((3, 3), (3,)), {"trans": 1, "lower": True}),
               (((3, 3), (3, 2)), {"trans": 1, "unit_diagonal": True})],
              domain=(-1.0, 1.0), call=_shifted), batch=_batched(batch_rules.solve_like),
    taylor=taylor_rules.linear_equation(taylor_rules.summed([_st_jvp_a, _st_jvp_b]), rhs=(1,)))


def _solve_tri(a, b, trans, lower, unit_diagonal):
    return _solve_triangular(a, b, trans=trans, lower=lower, unit_diagonal=unit_diagonal)


@traced_version_of(_sl.solve_triangular)
def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, **kwargs):
    """scipy.linalg.solve_triangular, in ``a`` (the triangle it reads) and ``b``."""
    _only("solve_triangular", kwargs)
    return _solve_tri(a, b, _trans(trans), bool(lower), bool(unit_diagonal))


solve_triangular._fgrad_entry = _solve_triangular


# --- banded systems ---------------------------------------------------------------------------
# scipy's banded storage: ab[u + i - j, j] = a[i, j], for the l bands below the diagonal and the
# u above it; entries of ab outside the matrix are not read (their derivative is zero).

def _band_rows(l, u, n):
    """The matrix row ``i`` of each entry ``(r, j)`` of a banded storage (clipped into range),
    and whether it lies inside the matrix."""
    i = _onp.arange(l + u + 1)[:, None] - u + _onp.arange(n)[None, :]
    return _onp.clip(i, 0, n - 1), (i >= 0) & (i < n)


def _band_transposed(ab, l, u):
    """The banded storage of ``a^T`` (its bands ``(u, l)``): ``abT[r, j] = ab[u + l - r,
    r - l + j]``, zero outside the matrix."""
    n = shape_of(ab)[-1]
    r = _onp.arange(l + u + 1)[:, None]
    col = r - l + _onp.arange(n)[None, :]
    inside = (col >= 0) & (col < n)
    rows = _onp.broadcast_to(u + l - r, col.shape)
    return fnp.getitem(ab, (rows, _onp.clip(col, 0, n - 1))) * mask(inside, ab)


def _banded_vjp(g, ans, ab, b, l, u):
    y = _solve_banded(_band_transposed(ab, l, u), g, l=u, u=l)     # a^-T g
    rows, inside = _band_rows(l, u, shape_of(ab)[-1])
    ys = fnp.getitem(y, rows)                                          # y_i at (r, j)
    if len(shape_of(ans)) == 1:
        gab = -ys * ans                                                # -y_i x_j
    else:  # (columns of b: summed over them)
        gab = -fnp.sum(ys * fnp.expand_dims(ans, 0), axis=-1)
    return [cast_like(gab * mask(inside, gab), ab), cast_like(y, b)]


def _band_matvec(ab, x, l, u):
    """``a x`` for ``a`` in banded storage: band ``r`` holds ``a[j + r - u, j]``, so it adds
    ``ab[r] * x`` shifted down by ``r - u`` rows."""
    n = shape_of(ab)[-1]
    rest = [(0, 0)] * (len(shape_of(x)) - 1)
    total = None
    for r in range(l + u + 1):
        k = r - u
        if abs(k) >= n:
            continue
        row = fnp.getitem(ab, r)
        v = (row if len(shape_of(x)) == 1 else fnp.expand_dims(row, -1)) * x
        v = fnp.pad(fnp.getitem(v, slice(0, n - k)), [(k, 0)] + rest) if k >= 0 else \
            fnp.pad(fnp.getitem(v, slice(-k, n)), [(0, -k)] + rest)
        total = v if total is None else total + v
    return total


def _banded_jvp_ab(t, ans, ab, b, l, u):
    return -_solve_banded(ab, _band_matvec(t, ans, l, u), l=l, u=u)


def _banded_jvp_b(t, ans, ab, b, l, u):
    return _solve_banded(ab, t, l=l, u=u)


def _banded_impl(ab, b, l, u):
    return _sl.solve_banded((l, u), ab, b)


def _banded_batch(prim, size, vals, dims, **params):
    """A batch of right-hand sides for one band matrix (vmap over examples, a Jacobian's
    columns) is one solve with the examples as more columns of ``b``; a batch of band
    matrices, one solve per example (scipy solves one matrix at a time)."""
    (ab, b), (dab, db) = vals, dims
    if dab is not None:
        return batch_rules.one_at_a_time(prim, size, vals, dims, **params)
    b = batch_rules.to_front(b, db)
    rest = shape_of(b)[1:]                                  # (n,) or (n, k)
    cols = fnp.reshape(fnp.moveaxis(b, 0, -1), (rest[0], -1))
    x = fnp.reshape(prim(ab, cols, **params), (*rest, size))
    return fnp.moveaxis(x, -1, 0), 0


_solve_banded = define(
    "scipy.linalg.solve_banded", _banded_impl, vjp_joint=_banded_vjp, batch=_banded_batch,
    jvps=[_banded_jvp_ab, _banded_jvp_b],
    taylor=taylor_rules.linear_equation(taylor_rules.summed([_banded_jvp_ab, _banded_jvp_b]),
                                        rhs=(1,)),
    spec=Spec([(((3, 4), (4,)), {"l": 1, "u": 1}), (((2, 3), (3, 2)), {"l": 1, "u": 0}),
               (((3, 5), (5,)), {"l": 0, "u": 2})],
              domain=(-1.0, 1.0), call=lambda f, ab, b, l, u: f(
                  ab + 4.0 * (_onp.arange(l + u + 1) == u)[:, None], b, l=l, u=u)))


@traced_version_of(_sl.solve_banded)
def solve_banded(l_and_u, ab, b, **kwargs):
    """scipy.linalg.solve_banded, in the banded storage ``ab`` (the entries inside the matrix)
    and ``b``: ``b``'s cotangent is ``solve_banded`` of the transposed bands, ``ab``'s the
    band of ``-y x^T``; the tangent ``a^-1 (db - da x)``. scipy's values."""
    _only("solve_banded", kwargs)
    l, u = (int(v) for v in l_and_u)
    return _solve_banded(ab, b, l=l, u=u)


solve_banded._fgrad_entry = _solve_banded


# --- LU ------------------------------------------------------------------------------------

def _lu_perm_impl(a):
    if _onp.ndim(a) > 2:  # (a stack of matrices: vmap's batched call, walked backward)
        return _onp.stack([_lu_perm_impl(m) for m in a])
    return _perm(_sl.lu_factor(a)[1])


# the row order ``perm`` with ``a[perm] = L U`` (per matrix of a stack), from the values (no
# derivative: staged or batched where ``a`` is)
_lu_perm = values_only(_lu_perm_impl, "scipy.linalg.lu_perm")
_lu_pivots = values_only(lambda a: _sl.lu_factor(a)[1], "scipy.linalg.lu_pivots")


def _rows_in_order(x, order):
    """``x[..., order, :]`` for each matrix of a stack (``order`` traced or plain)."""
    shape = shape_of(x)
    idx = fnp.broadcast_to(fnp.expand_dims(order, -1), shape)
    return gather_p(x, idx, axis=len(shape) - 2)


def _perm(piv):
    """The row order from LAPACK's row interchanges (row i swapped with row piv[i]), per
    row of a stack."""
    if _onp.ndim(piv) > 1:
        return _onp.stack([_perm(p) for p in piv])
    perm = _onp.arange(len(piv))
    for i, p in enumerate(piv):
        perm[i], perm[p] = perm[p], perm[i]
    return perm


# (lu_solve's pivots are staged or batched where lu_factor's matrix was)
_row_order = values_only(_perm, "scipy.linalg.lu_pivots_to_perm")


def _lu_parts(lu):
    return _tri(lu, True, 1) + _onp.eye(shape_of(lu)[-1]), _tri(lu, False)


def _lu_factor_jvp(t, ans, a):
    lo, up = _lu_parts(ans)
    x = _solve_tri(lo, _rows_in_order(t, _lu_perm(a)), 0, True, True)   # L^-1 P^T t
    f = _mT(_solve_tri(up, _mT(x), 1, False, False))                 # ... U^-1
    return fnp.matmul(lo, _tri(f, True, 1)) + fnp.matmul(_tri(f, False), up)


def _lu_factor_vjp(g, ans, a):
    lo, up = _lu_parts(ans)
    fbar = _tri(fnp.matmul(_mT(lo), _tri(g, True, 1)), True, 1) + \
        _tri(fnp.matmul(_tri(g, False), _mT(up)), False)
    x = _solve_tri(lo, fbar, 1, True, True)                      # L^-T fbar
    x = _mT(_solve_tri(up, _mT(x), 0, False, False))             # ... U^-T
    inverse = fnp.argsort(_lu_perm(a), axis=-1)
    return cast_like(_rows_in_order(x, inverse), a)


_lu_factor = define("scipy.linalg.lu_factor", lambda a: _sl.lu_factor(a)[0],
                    [_lu_factor_vjp], [_lu_factor_jvp],
                    spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted), batch=_STACKED)


@traced_version_of(_sl.lu_factor)
def lu_factor(a, **kwargs):
    """scipy.linalg.lu_factor: ``(lu, piv)``, ``lu`` differentiable (``L``'s strict lower
    triangle and ``U``), the pivots piecewise constant (a plain array)."""
    _only("lu_factor", kwargs)
    return _lu_factor(a), _lu_pivots(a)


lu_factor._fgrad_entry = _lu_factor


def _lu_solve_traced(lu_and_piv, b, trans=0, **kwargs):
    _only("lu_solve", kwargs)
    lu, piv = lu_and_piv
    perm = _row_order(piv)
    if _trans(trans):  # A^T x = b: U^T L^T P^T x = b
        y = _solve_tri(lu, _solve_tri(lu, b, 1, False, False), 1, True, True)
        return fnp.take(y, fnp.argsort(perm), axis=0)
    y = _solve_tri(lu, fnp.take(b, perm, axis=0), 0, True, True)
    return _solve_tri(lu, y, 0, False, False)


lu_solve = differentiable(
    _sl.lu_solve,
    Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {}), (((3, 3), (3,)), {"trans": 1})],
         domain=(-1.0, 1.0), call=lambda f, a, b, **p: f(lu_factor(a + _shift(a)), b, **p)),
    name="scipy.linalg.lu_solve", numpy_values=True)(_lu_solve_traced)


# --- eigh: numpy's rules -------------------------------------------------------------------

_UPLO = {True: "L", False: "U"}  # scipy's lower= as numpy's UPLO=: the triangle read

_eigh = define_multi("scipy.linalg.eigh", lambda a, lower=True: tuple(_sl.eigh(a, lower=lower)),
                     lambda a, lower=True: (shape_of(a)[:-1], shape_of(a)),
                     lambda i, gs, outs, a, lower=True: _dec._eigh_vjp(i, gs, outs, a,
                                                                       _UPLO[lower]),
                     lambda ts, outs, a, lower=True: _dec._eigh_jvp(ts, outs, a, _UPLO[lower]),
                     spec=Spec(
                         [(((2, 2),), {}), (((3, 3),), {"lower": False})],
                         domain=(-1.0, 1.0), valid=_dec._EIGH.valid, call=_dec._EIGH.call),
                     batch=_STACKED, other_arrays=False)  # (see defining.define)
_eigvalsh = define(
    "scipy.linalg.eigvalsh",
    lambda a, lower=True: _sl.eigh(a, lower=lower, eigvals_only=True),
    [lambda g, ans, a, lower=True: _dec._eigvalsh_vjp(g, ans, a, _UPLO[lower])],
    [lambda t, ans, a, lower=True: _dec._eigvalsh_jvp(t, ans, a, _UPLO[lower])],
    spec=Spec([(((2, 2),), {}), (((3, 3),), {"lower": False})], domain=(-1.0, 1.0),
              valid=_dec._EIGVALSH.valid, call=_dec._EIGVALSH.call), batch=_STACKED)


# --- the generalized problem: a v = w b v, with v^H b v = I --------------------------------
# With P = V^H da V and Q = V^H db V (the triangles read, mirrored), differentiating
# a V = b V diag(w) and V^H b V = I gives dw = diag(P) - w diag(Q) and dV = V C, where
# C_ij = (P_ij - w_j Q_ij) / (w_j - w_i) off the diagonal and C_ii = -Q_ii / 2 (its imaginary
# part, a complex eigenvector's phase, taken as zero, as eigh's rules take it).

def _geigh_jvp(ts, outs, a, b, lower=True):
    w, v = outs
    p, q = (None if t is None else fnp.matmul(fnp.matmul(_dec._adjoint(v),
                                                         _dec._read_triangle(t, lower)), v)
            for t in ts)
    dw = 0 if p is None else _dec._diag(p)
    c = 0 if p is None else p
    if q is not None:
        dw = dw - w * _dec._diag(q)
        c = c - q * fnp.expand_dims(w, -2)
    c = _dec._gap_inverse(w) * c
    if q is not None:
        c = c - 0.5 * _dec._diag_embed(_real_part(_dec._diag(q)))
    return _real_part(dw), fnp.matmul(v, c)


def _geigh_vjp(i, gs, outs, a, b, lower=True):
    (gw, gv), (w, v) = gs, outs
    gw, vt_gv = _real_part(gw), fnp.matmul(_mT(v), gv)
    g = _dec._gap_inverse(w) * vt_gv
    if i == 0:
        inner = _dec._diag_embed(gw) + g
    else:
        diag_g = _real_part(_dec._diag(vt_gv))
        inner = -_dec._diag_embed(gw * w + 0.5 * diag_g) - g * fnp.expand_dims(w, -2)
    return _dec._read_triangle_adjoint(fnp.matmul(fnp.matmul(_dec._conj(v), inner), _mT(v)),
                                       lower)


def _pencil(b):
    """For the tests: from ``b`` in [-1, 1], a ``b`` whose triangles each read as a positive
    definite matrix with eigenvalues in [0.5, 1.5] (the pencil's eigenvalues stay apart)."""
    n = shape_of(b)[-1]
    return _dominant(b) / (2 * n)


def _geigh_valid(a, b):
    for lower in (True, False):
        w, v = _sl.eigh(a, _onp.asarray(_pencil(b)), lower=lower)
        if not (_min_gap(w) > 0.1 and _clear_top(v)):
            return False
    return True


def _geigh_call(f, a, b, **params):
    shape = shape_of(a)
    w, v = _outputs(f(a, _pencil(b), **params), [shape[:-1], shape])
    return w, v * _column_signs(v)


_geigh = define_multi(
    "scipy.linalg.eigh(b=)", lambda a, b, lower=True: tuple(_sl.eigh(a, b, lower=lower)),
    lambda a, b, lower=True: (shape_of(a)[:-1], shape_of(a)), _geigh_vjp, _geigh_jvp,
    spec=Spec([(((2, 2), (2, 2)), {}), (((3, 3), (3, 3)), {"lower": False})],
              domain=(-1.0, 1.0), valid=_geigh_valid, call=_geigh_call),
    batch=_batched(batch_rules.stacked(2, 2)), other_arrays=False)  # (see defining.define)


@traced_version_of(_sl.eigh)
def eigh(a, b=None, *, lower=True, eigvals_only=False, type=1, **kwargs):
    """scipy.linalg.eigh of one symmetric (or hermitian) matrix, or of the pencil ``(a, b)``
    (``a v = w b v``, ``b`` positive definite, ``v^H b v = I``), differentiated as the function
    scipy computes (it reads the lower triangles, the upper with ``lower=False``; the
    derivative with respect to the others is zero), with numpy.linalg.eigh's conventions at
    repeated eigenvalues and for complex eigenvectors' phases. ``type=2`` and ``3`` (``a b v =
    w v``, ``b a v = w v``) are refused on traced values."""
    if b is not None:
        if type != 1:
            raise NotImplementedError(f"fgrad.scipy.linalg.eigh: type={type} (the problems "
                                      "a b v = w v and b a v = w v) is not supported on traced "
                                      "values; type=1, a v = w b v, is")
        _only("eigh", kwargs, ("driver",))
        w, v = _geigh(a, b, lower=bool(lower))
        return _real_part(w) if eigvals_only else (_real_part(w), v)
    _only("eigh", kwargs, ("driver",))
    if eigvals_only:
        return _eigvalsh(a, lower=bool(lower))
    w, v = _eigh(a, lower=bool(lower))
    return _dec._real_part(w), v


eigh._fgrad_entry = _eigh.prim


@traced_version_of(_sl.eigvalsh)
def eigvalsh(a, b=None, *, lower=True, **kwargs):
    """scipy.linalg.eigvalsh of one symmetric (or hermitian) matrix: ``eigh``'s eigenvalues
    (the derivative of each ``v_i^H da v_i``, exact at repeated eigenvalues for functions
    symmetric in them)."""
    return eigh(a, b, lower=lower, eigvals_only=True, **kwargs)


eigvalsh._fgrad_entry = _eigvalsh


# --- eig and eigvals: numpy's (LAPACK's geev, the same vectors), scipy's complex w ---------

def _one_matrix(name, b, homogeneous_eigvals, left=False):
    if b is not None or left or homogeneous_eigvals:
        raise NotImplementedError(f"fgrad.scipy.linalg.{name}: on traced values the "
                                  "eigenvalues and right eigenvectors of one matrix (b=None, "
                                  "left=False, homogeneous_eigvals=False)")


_SCIPY_EIG = dict(domain=(-1.0, 1.0), valid=_dec._eig_valid)


@differentiable(_sl.eig, Spec(_dec._EIG_CASES[:2], call=_dec._eig_call, **_SCIPY_EIG),
                name="scipy.linalg.eig", numpy_values=True)
def eig(a, b=None, left=False, right=True, overwrite_a=False, overwrite_b=False,
        check_finite=True, homogeneous_eigvals=False):
    """scipy.linalg.eig of one matrix, differentiable as ``fgrad.numpy.linalg.eig`` (whose
    eigenvectors, LAPACK's, are scipy's): ``w`` complex, as scipy gives it, ``vr`` real where
    every eigenvalue is; the generalized problem and left eigenvectors refused."""
    _one_matrix("eig", b, homogeneous_eigvals, left)
    a = fnp.asarray(a)
    w, v = fnp.linalg.eig(a)
    w = fnp.astype(w, _onp.result_type(value_dtype(a), _onp.complex64))
    return (w, v) if right else w


@differentiable(_sl.eigvals, Spec(_dec._EIG_CASES[:2], call=_dec._eigvals_call, **_SCIPY_EIG),
                name="scipy.linalg.eigvals", numpy_values=True)
def eigvals(a, b=None, overwrite_a=False, check_finite=True, homogeneous_eigvals=False):
    """scipy.linalg.eigvals of one matrix, differentiable as ``fgrad.numpy.linalg.eigvals``,
    complex as scipy gives them."""
    _one_matrix("eigvals", b, homogeneous_eigvals)
    a = fnp.asarray(a)
    return fnp.astype(fnp.linalg.eigvals(a), _onp.result_type(value_dtype(a), _onp.complex64))


# --- SVD and QR: numpy's rules, scipy's values and defaults ---------------------------------

def _svd_impl(a, full_matrices=False, lapack_driver="gesdd"):
    return tuple(_sl.svd(a, full_matrices=full_matrices, lapack_driver=lapack_driver))


_svd = define_multi(
    "scipy.linalg.svd", _svd_impl,
    lambda a, full_matrices=False, lapack_driver="gesdd": _dec._svd_shapes(a, full_matrices),
    lambda i, gs, outs, a, **params: _dec._svd_vjp(i, gs, outs, a),
    lambda ts, outs, a, **params: _dec._svd_jvp(ts, outs, a),
    spec=Spec(_dec._SVD_CASES + [(((3, 2),), {"lapack_driver": "gesvd"})], domain=(-1.0, 1.0),
              valid=_svd_valid, call=_svd_call), batch=_STACKED,
    other_arrays=False)  # (see defining.define)
_svdvals = define(
    "scipy.linalg.svdvals",
    lambda a, lapack_driver="gesdd": _sl.svd(a, compute_uv=False, lapack_driver=lapack_driver),
    [lambda g, ans, a, **params: _dec._svdvals_vjp(g, ans, a)],
    [lambda t, ans, a, **params: _dec._svdvals_jvp(t, ans, a)],
    spec=Spec(_dec._SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid), batch=_STACKED)


@traced_version_of(_sl.svd)
def svd(a, full_matrices=True, compute_uv=True, **kwargs):
    """scipy.linalg.svd, with numpy.linalg.svd's rules (its notes hold: the singular vectors'
    derivatives divide by the gaps ``s_j^2 - s_i^2``; the singular values' need none).
    scipy's default ``full_matrices=True`` is refused for a non-square traced matrix (the
    completed basis is any orthonormal completion, with no derivative): pass
    ``full_matrices=False``."""
    kw = _only("svd", kwargs, ("lapack_driver",))
    a = fnp.asarray(a)
    if not compute_uv:
        return _svdvals(a, **kw)
    if full_matrices:
        _dec._refuse_completion("fgrad.scipy.linalg.svd", a, " (scipy's default)")
    u, s, vh = _svd(a, full_matrices=bool(full_matrices), **kw)
    return u, _real_part(s), vh


@traced_version_of(_sl.svdvals)
def svdvals(a, **kwargs):
    """scipy.linalg.svdvals: each singular value's derivative ``u_i v_i^H``."""
    _only("svdvals", kwargs)
    return _svdvals(fnp.asarray(a))


svd._fgrad_entry, svdvals._fgrad_entry = _svd.prim, _svdvals

_qr = define_multi(
    "scipy.linalg.qr", lambda a: tuple(_sl.qr(a, mode="economic")),
    lambda a: _dec._qr_shapes(a), _dec._qr_vjp, _dec._qr_jvp,
    spec=Spec([(((3, 3),), {}), (((3, 2),), {}), (((2, 3),), {}), (((2, 3, 2),), {})],
              domain=(-1.0, 1.0), valid=_qr_valid,
              call=lambda f, a: _qr_call(lambda x, mode: f(x), a)), batch=_STACKED,
    other_arrays=False)  # (see defining.define)


@traced_version_of(_sl.qr)
def qr(a, mode="full", pivoting=False, **kwargs):
    """scipy.linalg.qr, with numpy.linalg.qr's rules (``r``'s diagonal must be nonzero: full
    rank), modes 'full', 'economic' and 'r' (``(r,)``, as scipy). On a tall traced matrix
    'full' is refused (the completed columns of ``q`` are any orthonormal completion, with no
    derivative: use 'economic'), and so are 'raw' and ``pivoting=True``."""
    _only("qr", kwargs, ("lwork",))
    a = fnp.asarray(a)
    m, n = shape_of(a)[-2:]
    if pivoting or mode == "raw" or (mode == "full" and m > n):
        what = ("pivoting=True (the column order is a separate algorithm's)" if pivoting else
                "mode='raw' (Householder reflectors)" if mode == "raw" else
                "mode='full' (scipy's default) on a tall matrix (the completed columns of q "
                "are not unique, so they have no derivative)")
        raise NotImplementedError(f"fgrad.scipy.linalg.qr: {what} is not supported on traced "
                                  "values; use mode='economic' (or 'r').")
    if mode not in ("full", "economic", "r"):
        _sl.qr(_onp.eye(2), mode=mode)  # scipy's own error for an unknown mode
    q, r = _qr(a)
    if mode != "r":
        return q, r
    if m > n:  # (scipy's r has m rows, the last m - n of them zero)
        r = fnp.concatenate([r, _onp.zeros((*shape_of(r)[:-2], m - n, n), value_dtype(r))],
                            axis=-2)
    return (r,)


qr._fgrad_entry = _qr.prim


# --- LU: lu_factor's factors, the permutation a constant -----------------------------------

_LU_INDEX = _sl.lu(_onp.eye(2), p_indices=True)[0].dtype  # (a 1 x 1 matrix's is int64)


@traced_version_of(_sl.lu)
def lu(a, permute_l=False, p_indices=False, **kwargs):
    """scipy.linalg.lu of a square matrix, ``a = p @ l @ u``: ``l`` and ``u`` differentiate as
    ``lu_factor``'s factors; the permutation is piecewise constant (no derivative, as the
    pivots). ``permute_l=True`` gives ``(p @ l, u)``, ``p_indices=True`` the row indices
    ``p`` with ``a = l[p] @ u``. A non-square traced matrix is refused."""
    _only("lu", kwargs)
    a = fnp.asarray(a)
    m, n = shape_of(a)[-2:]
    if m != n:
        raise NotImplementedError(
            f"fgrad.scipy.linalg.lu: a {m} x {n} matrix on traced values: only square ones "
            "are supported (lu_factor's rules); factor a square matrix, or call it on "
            "fgrad.stop_gradient(a).")
    lo, up = _lu_parts(_lu_factor(a))
    order = fnp.argsort(_lu_perm(a), axis=-1)  # a = l[order] @ u
    if p_indices:
        return fnp.astype(order, _LU_INDEX), lo, up
    if permute_l:
        return _rows_in_order(lo, order), up
    p = fnp.equal(fnp.expand_dims(order, -1), _onp.arange(n))  # p[i, j]: order[i] == j
    return fnp.astype(p, value_dtype(lo)), lo, up


lu._fgrad_entry = _lu_factor


# --- matrix functions: the Fréchet derivative by a block matrix ----------------------------

def _frechet(f, a, e):
    """L_f(a, e): the upper right block of f([[a, e], [0, a]])."""
    n = shape_of(a)[-1]
    zero = _onp.zeros(shape_of(a), value_dtype(a))
    top = fnp.concatenate([a, e], axis=-1)
    bottom = fnp.concatenate([zero, a], axis=-1)
    big = f(fnp.concatenate([top, bottom], axis=-2))
    return fnp.getitem(big, (Ellipsis, slice(0, n), slice(n, 2 * n)))


def _matrix_function(fn, domain_call, exact=True, dtype_from_values=False):
    """A primitive for scipy's matrix function ``fn`` whose JVP is its Fréchet derivative
    and whose VJP is the Fréchet derivative at the transpose (for the functions of a matrix
    given by a power series with real coefficients, ``L_f(A, .)^T = L_f(A^T, .)``)."""
    p = define(_name(fn), lambda a: fn(a),
               [lambda g, ans, a: cast_like(_frechet(p, _mT(a), g), a)],
               [lambda t, ans, a: _frechet(p, a, t)],
               spec=Spec(SQUARE, domain=(-1.0, 1.0), call=domain_call, exact=exact),
               batch=_STACKED, dtype_from_values=dtype_from_values)
    return p


def _near_identity(f, a):
    """Matrices with eigenvalues near 1 (logm and sqrtm stay real and well conditioned)."""
    return f(0.3 * a + _onp.eye(shape_of(a)[-1]))


expm = _matrix_function(_sl.expm, lambda f, a: f(a))


cosm = _matrix_function(_sl.cosm, lambda f, a: f(a))
sinm = _matrix_function(_sl.sinm, lambda f, a: f(a))
coshm = _matrix_function(_sl.coshm, lambda f, a: f(a))
sinhm = _matrix_function(_sl.sinhm, lambda f, a: f(a))
# (tan has poles at +-pi/2: the draws, eigenvalues up to n in modulus, are scaled below them)
tanm = _matrix_function(_sl.tanm, lambda f, a: f(0.4 * a))
tanhm = _matrix_function(_sl.tanhm, lambda f, a: f(0.4 * a))
# (sign: constant where no eigenvalue crosses the imaginary axis; the draws get diagonals
# +-(n + 1), Gershgorin discs off the axis on both sides)
signm = _matrix_function(_sl.signm, lambda f, a: f(a + _onp.diag(
    (shape_of(a)[-1] + 1.0) * (-1.0) ** _onp.arange(shape_of(a)[-1]))))


@differentiable(_sl.expm_frechet,
                Spec([(((2, 2), (2, 2)), {}), (((3, 3), (3, 3)), {"compute_expm": False})],
                     domain=(-1.0, 1.0)),
                name="scipy.linalg.expm_frechet", numpy_values=True)
def expm_frechet(A, E, method=None, compute_expm=True, check_finite=True):
    """scipy.linalg.expm_frechet: ``(expm(A), L)`` with ``L`` the Fréchet derivative of
    ``expm`` at ``A`` in the direction ``E`` (``L`` alone with ``compute_expm=False``), in both
    arguments and to any order: ``L`` is read off ``expm([[A, E], [0, A]])``, whose derivative
    is again ``expm``'s. The values are scipy's own."""
    frechet = _frechet(expm, fnp.asarray(A), fnp.asarray(E))
    return (expm(A), frechet) if compute_expm else frechet


@differentiable(_sl.norm, _norms._norm_spec([
    (((2, 3),), {}), (((4,),), {"ord": 1}), (((3, 2),), {"ord": "nuc"}), (((2, 2),), {"ord": 2}),
    (((2, 3),), {"ord": _onp.inf, "axis": 1, "keepdims": True})]),
    name="scipy.linalg.norm", numpy_values=True)
def norm(a, ord=None, axis=None, keepdims=False, check_finite=True):
    """scipy.linalg.norm: numpy.linalg.norm's derivatives (and its conventions at kinks: 0 at
    0, ties shared), scipy's values."""
    return fnp.linalg.norm(a, ord=ord, axis=axis, keepdims=keepdims)


# --- Sylvester and Lyapunov equations ----------------------------------------------------------

def _sylvester_jvp(tangents, ans, a, b, q):
    ta, tb, tq = tangents
    rhs = [x for x in (tq, None if ta is None else -fnp.matmul(ta, ans),
                       None if tb is None else -fnp.matmul(ans, tb)) if x is not None]
    total = rhs[0]
    for r in rhs[1:]:
        total = total + r
    return solve_sylvester(a, b, total)


def _sylvester_vjp(i, g, ans, a, b, q):
    y = solve_sylvester(_mT(a), _mT(b), g)  # the adjoint equation A^T Y + Y B^T = G
    if i == 2:
        return cast_like(y, q)
    return cast_like(-fnp.matmul(y, _mT(ans)) if i == 0 else -fnp.matmul(_mT(ans), y),
                     (a, b)[i])


solve_sylvester = define(
    "scipy.linalg.solve_sylvester", lambda a, b, q: _sl.solve_sylvester(a, b, q),
    vjp_by_argnum=_sylvester_vjp,
    spec=Spec([(((2, 2), (2, 2), (2, 2)), {}), (((3, 3), (2, 2), (3, 2)), {})],
              domain=(-1.0, 1.0), call=lambda f, a, b, q: f(a + _shift(a), b + _shift(b), q)),
                         batch=_batched(batch_rules.stacked(2, 2, 2)), jvp_joint=_sylvester_jvp,
    taylor=taylor_rules.linear_equation(_sylvester_jvp, rhs=(2,)))


# sqrtm's square root X solves X dX + dX X = dA: its derivative is a Sylvester equation in X
# alone. (The Frechet derivative by a block matrix took the square root of a matrix whose
# eigenvalues repeat; where they are negative, the sums of their computed square roots, on
# either side of the branch cut, vanish, and a second derivative in reverse mode came out
# 1e12 times too large; scipy's own Schur recurrence divides by those sums.)
sqrtm = define(
    _name(_sl.sqrtm), lambda a: _sl.sqrtm(a),
    [lambda g, ans, a: cast_like(solve_sylvester(_mT(ans), _mT(ans), g), a)],
    [lambda t, ans, a: solve_sylvester(ans, ans, t)],
    spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_near_identity), batch=_STACKED,
    dtype_from_values=True)


# logm(A) = 2 logm(S) with S = sqrtm(A), whose eigenvalues lie in the right half-plane, away
# from the logarithm's branch cut: so its Frechet derivative is 2 L_log(S, L_sqrt(A, E)), the
# block matrix's logarithm taken at S. (At A itself, real matrices with negative eigenvalues
# put the block matrix's repeated eigenvalues on the cut: second derivatives came out wrong
# or NaN.) (logm and sqrtm are real or complex by the values, as numpy's eig; scipy's logm
# picks its Pade degree with onenormest, which draws random vectors from numpy's global
# generator: two calls on one matrix may differ in the last bits.)
def _logm_jvp(t, ans, a):
    s = sqrtm(a)
    return 2.0 * _frechet(logm, s, solve_sylvester(s, s, t))


def _logm_vjp(g, ans, a):
    s = _mT(sqrtm(a))
    return cast_like(solve_sylvester(s, s, 2.0 * _frechet(logm, s, g)), a)


logm = define(_name(_sl.logm), lambda a: _sl.logm(a), [_logm_vjp], [_logm_jvp],
              spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_near_identity, exact=False),
              batch=_STACKED, dtype_from_values=True)


# --- the polar decomposition: a Sylvester equation in P ------------------------------------
# a = u p (side 'right') with u^T u = I and p symmetric positive definite: x = u^T da splits
# into u^T du = om, skew, and dp, symmetric, as x = om p + dp, so x - x^T = p om + om p (a
# Sylvester equation, solvable where p is definite, also at repeated singular values, where
# the SVD's rules divide by zero gaps); a tall a adds (da - u x) p^-1 to du. Side 'left'
# (a = p u) is the right decomposition of a^T. Real matrices only.

def _polar_jvp(ts, outs, a, side="right"):
    (t,), (u, p) = ts, outs
    if side == "left":
        du, dp = _polar_jvp((_mT(t),), (_mT(u), p), _mT(a))
        return _mT(du), dp
    x = fnp.matmul(_mT(u), t)
    om = solve_sylvester(p, p, x - _mT(x))
    du = fnp.matmul(u, om)
    if shape_of(a)[-2] > shape_of(a)[-1]:
        du = du + _mT(fnp.linalg.solve(p, _mT(t - fnp.matmul(u, x))))
    return du, x - fnp.matmul(om, p)


def _polar_vjp(i, gs, outs, a, side="right"):
    (gu, gp), (u, p) = gs, outs
    if side == "left":
        return _mT(_polar_vjp(i, (_mT(gu), gp), (_mT(u), p), _mT(a)))
    y = solve_sylvester(p, p, fnp.matmul(_mT(u), gu) - fnp.matmul(gp, p))
    ga = fnp.matmul(u, gp + y - _mT(y))
    if shape_of(a)[-2] > shape_of(a)[-1]:
        ga = ga + _mT(fnp.linalg.solve(p, _mT(gu - fnp.matmul(u, fnp.matmul(_mT(u), gu)))))
    return ga


def _polar_shapes(a, side="right"):
    *batch, m, n = shape_of(a)
    k = n if side == "right" else m
    return (*batch, m, n), (*batch, k, k)


def _full_rank(a):
    return _onp.min(_onp.linalg.svd(_onp.asarray(a, float), compute_uv=False)) > 0.2


_polar = define_multi(
    "scipy.linalg.polar", lambda a, side="right": tuple(_sl.polar(a, side)), _polar_shapes,
    _polar_vjp, _polar_jvp,
    spec=Spec([(((2, 2),), {}), (((3, 3),), {"side": "left"}), (((3, 2),), {}),
               (((2, 3),), {"side": "left"}), (((2, 3, 3),), {})],
              domain=(-1.0, 1.0), valid=_full_rank), batch=_STACKED,
    other_arrays=False)  # (see defining.define)


@traced_version_of(_sl.polar)
def polar(a, side="right"):
    """scipy.linalg.polar of a real matrix of full rank, ``a = u p`` (``side='right'``, for
    ``m >= n``) or ``a = p u`` (``'left'``, ``m <= n``): the derivative solves a Sylvester
    equation in ``p`` (exact at repeated singular values too, an orthogonal ``a`` say, where
    the SVD's rules are not). Complex input and the other shapes are refused on traced
    values."""
    a = fnp.asarray(a)
    m, n = shape_of(a)[-2:]
    if side not in ("right", "left"):
        _sl.polar(_onp.eye(2), side)  # scipy's own error
    if _onp.iscomplexobj(value_for_shape(a)) or (m < n if side == "right" else m > n):
        raise NotImplementedError(
            f"fgrad.scipy.linalg.polar: {'a complex' if m == n else f'a {m} x {n}'} matrix "
            f"with side={side!r} is not supported on traced values (real matrices, m >= n "
            "for 'right', m <= n for 'left', where p is definite at full rank); call it on "
            "fgrad.stop_gradient(a).")
    return _polar(a, side=side)


polar._fgrad_entry = _polar.prim


@differentiable(_sl.solve_continuous_lyapunov,
                Spec([(((2, 2), (2, 2)), {}), (((3, 3), (3, 3)), {})], domain=(-1.0, 1.0),
                     call=lambda f, a, q: f(a + _shift(a), q)),
                name="scipy.linalg.solve_continuous_lyapunov", numpy_values=True)
def solve_continuous_lyapunov(a, q):
    """scipy.linalg.solve_continuous_lyapunov: ``A X + X A^T = Q`` as the Sylvester equation
    ``solve_sylvester(a, a^T, q)`` (real input), with scipy's values."""
    return solve_sylvester(a, _mT(a), q)


# --- discrete Lyapunov: X = A X A^T + Q, its derivatives the same equation again ----------

def _dlyap_jvp(ts, ans, a, q):
    ta, tq = ts
    rhs = tq
    if ta is not None:  # dA X A^T + A X dA^T (X is symmetric only where Q is)
        da = fnp.matmul(fnp.matmul(ta, ans), _mT(a)) + fnp.matmul(fnp.matmul(a, ans), _mT(ta))
        rhs = da if rhs is None else rhs + da
    return solve_discrete_lyapunov(a, rhs)


def _dlyap_vjp(i, g, ans, a, q):
    y = solve_discrete_lyapunov(_mT(a), g)  # the adjoint equation Y = A^T Y A + G
    if i == 1:
        return cast_like(y, q)
    return cast_like(fnp.matmul(fnp.matmul(y, a), _mT(ans))
                     + fnp.matmul(fnp.matmul(_mT(y), a), ans), a)


def _dlyap_taylor(series, ans, a, q):
    """Leibniz's rule on ``X - A X A^T = Q``: the k-th derivative ``X_k`` solves the equation
    with ``Q_k + sum k!/(i! j! l!) A_i X_j A_l^T`` (``i + j + l = k``, ``j < k``), so K orders
    are K solves and O(K^3) products (the JVP rule's jet solved with the jets of A)."""
    sa, sq = series
    order = len(sa if sa is not None else sq)
    terms = [a] + (list(sa) if sa is not None else [None] * order)
    xs = [ans]
    for k in range(1, order + 1):
        rhs = None if sq is None else sq[k - 1]
        for j in range(k):
            for i in range(k - j + 1):
                left, right = terms[i], terms[k - j - i]
                if left is None or right is None:
                    continue
                part = comb(k, j) * comb(k - j, i) * fnp.matmul(fnp.matmul(left, xs[j]),
                                                                _mT(right))
                rhs = part if rhs is None else rhs + part
        xs.append(solve_discrete_lyapunov(a, rhs))
    return xs[1:]


_dlyap = define(
    "scipy.linalg.solve_discrete_lyapunov", lambda a, q: _sl.solve_discrete_lyapunov(a, q),
    vjp_by_argnum=_dlyap_vjp, jvp_joint=_dlyap_jvp, batch=_batched(batch_rules.stacked(2, 2)),
    taylor=_dlyap_taylor,
    spec=Spec([(((2, 2), (2, 2)), {}), (((3, 3), (3, 3)), {})], domain=(-1.0, 1.0),
              call=lambda f, a, q: f(0.25 * a, q)))  # (spectral radius below 1)


@traced_version_of(_sl.solve_discrete_lyapunov)
def solve_discrete_lyapunov(a, q, method=None):
    """scipy.linalg.solve_discrete_lyapunov, ``X = A X A^T + Q`` (real input): its tangent
    solves the same equation with ``dA X A^T + A X dA^T + dQ`` for ``Q``, its cotangent the
    adjoint equation ``Y = A^T Y A + G`` (``dQ: Y``, ``dA: Y A X^T + Y^T A X``), so it nests
    to any order. scipy's values (``method`` is its choice of algorithm: accepted)."""
    return _dlyap(fnp.asarray(a), fnp.asarray(q))


solve_discrete_lyapunov._fgrad_entry = _dlyap


# --- algebraic Riccati equations: their tangents solve Lyapunov equations ------------------
#
# Differentiating the continuous equation A^T X + X A - X B R^-1 B^T X + Q = 0 (gain
# K = R^-1 B^T X, closed loop Ac = A - B K) gives Ac^T dX + dX Ac = -P with
#     P = dA^T X + X dA - X dB K - K^T dB^T X + K^T dR K + dQ,
# the discrete one X = A^T X A - A^T X B (R + B^T X B)^-1 B^T X A + Q (K = (R + B^T X B)^-1
# B^T X A) dX = Ac^T dX Ac + P with
#     P = dA^T X Ac + Ac^T X dA - Ac^T X dB K - K^T dB^T X Ac + K^T dR K + dQ.
# Each term of P is U^T dZ V or U^T dZ^T V, whose cotangent, given the adjoint equation's
# solution Y, is U Y V^T or V Y^T U^T.

def _riccati_terms(x, a, b, r, discrete):
    """P's terms per argument (0: a, 1: b, 2: q, 3: r) as ``(U, V, transposed, sign)``, and
    the closed loop ``Ac``."""
    if discrete:
        bx = fnp.matmul(_mT(b), x)
        k = fnp.linalg.solve(r + fnp.matmul(bx, b), fnp.matmul(bx, a))
        ac = a - fnp.matmul(b, k)
        left, right = fnp.matmul(_mT(x), ac), fnp.matmul(x, ac)  # (X^T Ac)^T = Ac^T X, X Ac
    else:
        k = fnp.linalg.solve(r, fnp.matmul(_mT(b), x))
        ac = a - fnp.matmul(b, k)
        left, right = _mT(x), x
    terms = {0: [(None, right, True, 1.0), (left, None, False, 1.0)],
             1: [(left, k, False, -1.0), (k, right, True, -1.0)],
             2: [(None, None, False, 1.0)],
             3: [(k, k, False, 1.0)]}
    return terms, ac


def _apply(u, t, v, transposed):
    """``U^T t V`` (``transposed``: ``U^T t^T V``), None for an identity factor."""
    t = _mT(t) if transposed else t
    t = t if u is None else fnp.matmul(_mT(u), t)
    return t if v is None else fnp.matmul(t, v)


def _cotangent(u, y, v, transposed):
    """The cotangent of ``t`` in ``<Y, U^T t V>`` (``U Y V^T``; transposed: ``V Y^T U^T``)."""
    if transposed:
        u, v, y = v, u, _mT(y)
    out = y if u is None else fnp.matmul(u, y)
    return out if v is None else fnp.matmul(out, _mT(v))


def _riccati(discrete):
    lyap = solve_discrete_lyapunov if discrete else solve_continuous_lyapunov
    sign = 1.0 if discrete else -1.0  # (dX = L^-1(P), continuous L^-1(-P))

    def jvp(ts, x, a, b, q, r):
        terms, ac = _riccati_terms(x, a, b, r, discrete)
        p = sum(s * _apply(u, t, v, transposed) for i, t in enumerate(ts) if t is not None
                for u, v, transposed, s in terms[i])
        return lyap(_mT(ac), sign * p)

    def vjp(i, g, x, a, b, q, r):
        terms, ac = _riccati_terms(x, a, b, r, discrete)
        y = sign * lyap(ac, g)  # the adjoint equation (Ac Y Ac^T - Y, Ac Y + Y Ac^T)
        out = sum(s * _cotangent(u, y, v, transposed) for u, v, transposed, s in terms[i])
        return cast_like(out, (a, b, q, r)[i])

    return jvp, vjp


def _riccati_spec(discrete):
    """Draws in [-1, 1] made a stable ``a`` (so that a stabilizing solution exists:
    eigenvalues inside the unit circle, or in the left half-plane), ``b`` of full rank
    (scipy's balancing of the pencil overflows on a zero ``b``) and symmetric positive
    definite ``q`` and ``r``."""
    def call(f, a, b, q, r):
        a = 0.25 * a if discrete else a - _shift(a)
        b = b + 2.0 * _onp.eye(*shape_of(b)[-2:], dtype=value_dtype(b))
        return f(a, b, fnp.matmul(q, _mT(q)) + _eye(shape_of(q)[-1], q),
                 fnp.matmul(r, _mT(r)) + _eye(shape_of(r)[-1], r))
    # (scipy's solutions are accurate to about 1e-12: differences over steps of 1e-4; its
    # balancing scales by the entries' magnitudes, which entries like 1e-170 throw off)
    return Spec([(((2, 2), (2, 1), (2, 2), (1, 1)), {}),
                 (((3, 3), (3, 2), (3, 3), (2, 2)), {})], domain=(-1.0, 1.0), call=call,
                valid=lambda *args: all(_onp.all((x == 0) | (_onp.abs(x) > 1e-3))
                                        for x in args),
                eps=1e-4, rtol=2e-4, atol=1e-6)


def _define_riccati(fn, discrete):
    jvp, vjp = _riccati(discrete)
    return define(_name(fn), lambda a, b, q, r: fn(a, b, q, r), vjp_by_argnum=vjp,
                  jvp_joint=jvp, batch=_batched(batch_rules.stacked(2, 2, 2, 2)),
                  spec=_riccati_spec(discrete))


def _riccati_public(fn, prim, doc):
    def solve(a, b, q, r, e=None, s=None, balanced=True):
        if e is not None or s is not None:
            raise NotImplementedError(
                f"fgrad.scipy.linalg.{fn.__name__}: e= and s= (the generalized and cross-term "
                "forms) are not supported on traced values; call it without them (or on "
                "fgrad.stop_gradient values)")
        args = [fnp.asarray(x) for x in (a, b, q, r)]
        if any(_onp.iscomplexobj(value_for_shape(x)) for x in args):
            raise NotImplementedError(f"fgrad.scipy.linalg.{fn.__name__}: complex matrices "
                                      "are not supported on traced values (real only)")
        return prim(*args)
    solve.__doc__ = doc
    public = traced_version_of(fn)(solve)
    public._fgrad_entry = prim
    return public


solve_continuous_are = _riccati_public(
    _sl.solve_continuous_are, _define_riccati(_sl.solve_continuous_are, discrete=False),
    """scipy.linalg.solve_continuous_are, ``A^T X + X A - X B R^-1 B^T X + Q = 0`` (real
    input, no ``e`` or ``s``): the tangent solves the Lyapunov equation of the closed loop
    ``Ac = A - B K``, ``K = R^-1 B^T X``: ``Ac^T dX + dX Ac = -(dA^T X + X dA - X dB K -
    K^T dB^T X + K^T dR K + dQ)``; the cotangent its adjoint ``Ac Y + Y Ac^T = G``. scipy's
    values (``balanced`` is scipy's choice of algorithm: accepted).""")
solve_discrete_are = _riccati_public(
    _sl.solve_discrete_are, _define_riccati(_sl.solve_discrete_are, discrete=True),
    """scipy.linalg.solve_discrete_are, ``X = A^T X A - A^T X B (R + B^T X B)^-1 B^T X A + Q``
    (real input, no ``e`` or ``s``): the tangent solves the discrete Lyapunov equation of the
    closed loop ``Ac = A - B K``, ``K = (R + B^T X B)^-1 B^T X A``: ``dX = Ac^T dX Ac + dA^T
    X Ac + Ac^T X dA - Ac^T X dB K - K^T dB^T X Ac + K^T dR K + dQ``; the cotangent its
    adjoint ``Y = Ac Y Ac^T + G``. scipy's values.""")


# --- the symmetric tridiagonal eigenproblem: eigh's rules on diag(d) + offdiag(e) -----------

def _tridiagonal(d, e):
    """The symmetric matrices with diagonals ``d`` and off-diagonals ``e`` (stacks too)."""
    n = shape_of(d)[-1]
    e = fnp.pad(e, [(0, 0)] * (len(shape_of(e)) - 1) + [(0, 1)])  # e[i] at (i, i + 1)
    above = fnp.expand_dims(e, -1) * _onp.eye(n, k=1, dtype=value_dtype(e))
    return _dec._diag_embed(d) + above + _mT(above)


def _eigh_tri_jvp(ts, outs, d, e):
    td, te = (fnp.zeros_like(x) if t is None else t for t, x in zip(ts, (d, e)))
    return _dec._eigh_jvp((_tridiagonal(td, te),), outs, None)


def _eigh_tri_vjp(i, gs, outs, d, e):
    # eigh's cotangent of the lower triangle it reads: its diagonal is d's, its first
    # subdiagonal e's (the sum of the two mirrored entries' cotangents)
    ga = _dec._eigh_vjp(0, gs, outs, None, "L")
    return fnp.diagonal(ga, 0 if i == 0 else -1, -2, -1)


def _eigh_tri_valid(d, e):
    w, v = _sl.eigh_tridiagonal(_onp.asarray(d, float), _onp.asarray(e, float))
    return _min_gap(w) > 0.1 and _clear_top(v)


def _eigh_tri_call(f, d, e, **params):
    n = shape_of(d)[-1]
    w, v = _outputs(f(d, e, **params), [(n,), (n, n)])
    return w, v * _column_signs(v)


_eigh_tri = define_multi(
    "scipy.linalg.eigh_tridiagonal", lambda d, e: tuple(_sl.eigh_tridiagonal(d, e)),
    lambda d, e: (shape_of(d), shape_of(d) + shape_of(d)[-1:]), _eigh_tri_vjp, _eigh_tri_jvp,
    spec=Spec([(((3,), (2,)), {}), (((4,), (3,)), {})], domain=(-1.0, 1.0),
              valid=_eigh_tri_valid, call=_eigh_tri_call),
    batch=_batched(batch_rules.stacked(1, 1)), other_arrays=False)  # (see defining.define)


@traced_version_of(_sl.eigh_tridiagonal)
def eigh_tridiagonal(d, e, eigvals_only=False, select="a", select_range=None,
                     check_finite=True, tol=0.0, lapack_driver="auto"):
    """scipy.linalg.eigh_tridiagonal of the real symmetric tridiagonal matrix with diagonal
    ``d`` and off-diagonal ``e``: eigh's rules (eigenvector derivatives divide by eigenvalue
    gaps, which an unreduced tridiagonal matrix, ``e`` without zeros, always has), scipy's
    values and eigenvector signs. All eigenvalues only (``select='a'``) on traced values."""
    if select != "a" or select_range is not None:
        raise NotImplementedError(
            "fgrad.scipy.linalg.eigh_tridiagonal: select= and select_range= (a subset of the "
            "eigenvalues) are not supported on traced values; take all of them and index the "
            "result, or call it on fgrad.stop_gradient(d), fgrad.stop_gradient(e)")
    d, e = fnp.asarray(d), fnp.asarray(e)
    plain = [value_for_shape(x) for x in (d, e)]
    if any(_onp.iscomplexobj(x) for x in plain):
        _sl.eigh_tridiagonal(*plain)  # scipy's own error
    if any(_onp.ndim(x) != 1 for x in plain):
        raise NotImplementedError("fgrad.scipy.linalg.eigh_tridiagonal: one matrix (1-d d and "
                                  "e) on traced values; use fgrad.vmap for a stack of them")
    w, v = _eigh_tri(d, e)
    return w if eigvals_only else (w, v)


eigh_tridiagonal._fgrad_entry = _eigh_tri.prim


@differentiable(_sl.eigvalsh_tridiagonal,
                Spec([(((3,), (2,)), {}), (((4,), (3,)), {})], domain=(-1.0, 1.0),
                     valid=_eigh_tri_valid),
                name="scipy.linalg.eigvalsh_tridiagonal", numpy_values=True)
def eigvalsh_tridiagonal(d, e, select="a", select_range=None, check_finite=True, tol=0.0,
                         lapack_driver="auto"):
    """scipy.linalg.eigvalsh_tridiagonal: ``eigh_tridiagonal``'s eigenvalues (the derivative
    of each is ``v_i^2`` in ``d``, ``2 v_i v_(i+1)`` in ``e``), scipy's values."""
    return eigh_tridiagonal(d, e, eigvals_only=True, select=select, select_range=select_range)


# --- banded hermitian solve: solve_banded's rules on the full band --------------------------

def _full_band(ab, lower):
    """The ``(2u + 1, n)`` general banded storage of the symmetric (hermitian) matrix whose
    upper (``lower``: lower) bands ``ab`` holds; the mirrored bands are shifted copies."""
    u, n = shape_of(ab)[0] - 1, shape_of(ab)[1]
    rows = [fnp.getitem(ab, k) for k in range(u + 1)]
    if lower:  # row k: a[j + k, j]; the upper band u - k holds a[j - k, j] = conj(row k)[j - k]
        above = [fnp.pad(fnp.conj(fnp.getitem(rows[k], slice(0, n - k))), (k, 0))
                 for k in range(u, 0, -1)]
        return fnp.stack(above + rows)
    # row r: a[j + r - u, j]; the lower band k holds a[j + k, j] = conj(row u - k)[j + k]
    below = [fnp.pad(fnp.conj(fnp.getitem(rows[u - k], slice(k, n))), (0, k))
             for k in range(1, u + 1)]
    return fnp.stack(rows + below)


@differentiable(_sl.solveh_banded,
                Spec([(((2, 4), (4,)), {}), (((3, 5), (5, 2)), {"lower": True})],
                     domain=(-1.0, 1.0),
                     call=lambda f, ab, b, lower=False: f(
                         ab + 6.0 * (_onp.arange(shape_of(ab)[0]) == (
                             0 if lower else shape_of(ab)[0] - 1))[:, None], b, lower=lower)),
                name="scipy.linalg.solveh_banded", numpy_values=True)
def solveh_banded(ab, b, overwrite_ab=False, overwrite_b=False, lower=False,
                  check_finite=True):
    """scipy.linalg.solveh_banded of a positive definite banded matrix: ``solve_banded``'s
    rules on the full band (its mirrored half copies ``ab``'s, so ``ab``'s cotangent gathers
    both), scipy's values (by Cholesky)."""
    ab = fnp.asarray(ab)
    u = shape_of(ab)[0] - 1
    return _solve_banded(_full_band(ab, bool(lower)), fnp.asarray(b), l=u, u=u)


# --- Procrustes and the hermitian pseudo-inverse: compositions ------------------------------

def _min_gap_and_size(m):
    """The singular values' smallest gap and smallest value (the SVD's derivatives divide by
    both)."""
    s = _onp.linalg.svd(m, compute_uv=False)
    return [_min_gap(s), _onp.min(s)]


@differentiable(_sl.orthogonal_procrustes,
                Spec([(((3, 2), (3, 2)), {}), (((4, 3), (4, 3)), {})], domain=(-1.0, 1.0),
                     valid=lambda a, b: _onp.min(_min_gap_and_size(_onp.asarray(b, float).T
                                                                   @ _onp.asarray(a, float)))
                     > 0.1),
                name="scipy.linalg.orthogonal_procrustes", numpy_values=True)
def orthogonal_procrustes(A, B, check_finite=True):
    """scipy.linalg.orthogonal_procrustes: ``R = U V^T`` from the SVD ``A^T B = U S V^T``
    and ``scale = sum(S)``, differentiated through the SVD (distinct singular values; the
    rotation's derivative divides by their sums and gaps)."""
    A, B = fnp.asarray(A), fnp.asarray(B)
    u, w, vt = fnp.linalg.svd(_mT(fnp.matmul(_mT(B), A)), full_matrices=False)
    return fnp.matmul(u, vt), fnp.sum(w)


@differentiable(_sl.pinvh, Spec([(((2, 2),), {}), (((3, 3),), {"lower": False})],
                                domain=(-1.0, 1.0), call=_shifted),
                name="scipy.linalg.pinvh", numpy_values=True)
def pinvh(a, atol=None, rtol=None, lower=True, return_rank=False, check_finite=True):
    """scipy.linalg.pinvh: the pseudo-inverse of the symmetric matrix read from ``a``'s lower
    (``lower=False``: upper) triangle, differentiated as ``pinv``'s (Golub and Pereyra's
    formula: exact at full rank, at repeated eigenvalues too), scipy's values."""
    refuse_traced("scipy.linalg.pinvh", "atol", atol, _lsq.CUTOFF)
    refuse_traced("scipy.linalg.pinvh", "rtol", rtol, _lsq.CUTOFF)
    a = fnp.asarray(a)
    sym = _dec._read_triangle(a, bool(lower))
    rank = _sl.pinvh(read_value(a), atol=atol, rtol=rtol, lower=lower,
                     return_rank=True)[1] if return_rank else None
    # scipy keeps the eigenvalues |w| > atol + rtol max|w| (rtol by default n eps): pinv's
    # relative cutoff on the singular values |w|, the absolute part relative to the largest
    eps = _onp.finfo(_onp.result_type(value_for_shape(a), _onp.float32)).eps
    cut = shape_of(a)[-1] * eps if rtol is None else rtol
    if atol:
        cut = cut + atol / _onp.max(_onp.abs(_onp.linalg.eigvalsh(read_value(sym))))
    inv = _lsq._pinv(sym, kw=(("rcond", cut),))
    return (inv, rank) if return_rank else inv


# scipy.linalg's other functions (``schur``, ``hessenberg``, ...), as autograd's
# ``scipy.linalg`` has them: scipy's own on plain values, refused by name on traced ones (every
# function numpy's linalg also has is differentiable here)
__getattr__ = defining.plain_only_fallback(__name__, _sl)
