"""The pseudo-inverse and least squares: pinv, lstsq (built on the SVD)."""

import numpy as _onp

import fgrad.numpy as fnp
from .. import batch_rules
from ...core.table import Spec, define
from ...core.tracer import concrete, contains_tracer, read_values, value_for_shape
from ..broadcasting import shape_of
from ..wrapping import differentiable, refuse_traced
from .common import (_adjoint, _conj, _eye, _la, _mT, _min_gap, _real_part,
                     _well_conditioned)
from .decompositions import _refuse_hermitian, _svdvals


# --- pseudo-inverse ------------------------------------------------------------------------

# Golub and Pereyra's formula, with conjugate transposes for complex input (the derivative
# of a function that is not holomorphic: it reads dA^H); the VJP is the JVP's transpose under
# fgrad's pairing ``Re sum(x * y)``. For real input both are the real formulas, node for node.

def _pinv_jvp(t, ans, a, kw=()):
    x, tt = ans, _adjoint(t)
    m, n = shape_of(a)[-2:]
    out = -fnp.matmul(fnp.matmul(x, t), x)
    out = out + fnp.matmul(fnp.matmul(fnp.matmul(x, _adjoint(x)), tt),
                           _eye(m, x) - fnp.matmul(a, x))
    return out + fnp.matmul(fnp.matmul(_eye(n, x) - fnp.matmul(x, a), tt),
                            fnp.matmul(_adjoint(x), x))


def _pinv_vjp(g, ans, a, kw=()):
    x, gt = ans, _mT(g)
    m, n = shape_of(a)[-2:]
    out = -fnp.matmul(fnp.matmul(_mT(x), g), _mT(x))
    out = out + _conj(fnp.matmul(fnp.matmul(_eye(m, x) - fnp.matmul(a, x), gt),
                                 fnp.matmul(x, _adjoint(x))))
    return out + _conj(fnp.matmul(fnp.matmul(fnp.matmul(_adjoint(x), x), gt),
                                  _eye(n, x) - fnp.matmul(x, a)))


_PINV_CASES = [(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}), (((2, 3, 2),), {})]

_pinv = define("linalg.pinv", lambda a, kw=(): _la.pinv(a, **dict(kw)),
               [_pinv_vjp], [_pinv_jvp],
               spec=Spec(_PINV_CASES, domain=(-1.0, 1.0), valid=_well_conditioned),
               batch=batch_rules.stacked(2))

_NO_VALUE = object()
# (handed to LAPACK's wrappers, a traced cutoff fails in their conversion, with their message)
CUTOFF = "a cutoff for small singular values: the result jumps where one crosses it"


@differentiable(_la.pinv, Spec(_PINV_CASES + [(((3, 2),), {"rcond": 1e-3}),
                                               (((2, 3),), {"rtol": None})],
                                domain=(-1.0, 1.0), valid=_well_conditioned),
                 name="linalg.pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """numpy.linalg.pinv, real or complex input. The derivative is that of full-rank input
    (Golub and Pereyra's formula). When ``rcond``/``rtol`` cut off singular values
    (rank-deficient input) it is the derivative along perturbations that keep the rank,
    which is the derivative of numpy's truncated pinv when the cut singular values are
    exactly 0, and only an approximation of it otherwise. ``hermitian=True`` is refused on
    traced values."""
    a = fnp.asarray(a)
    _refuse_hermitian("pinv", hermitian)
    refuse_traced("numpy.linalg.pinv", "rcond", rcond, CUTOFF)
    refuse_traced("numpy.linalg.pinv", "rtol", rtol, CUTOFF)
    kw = (() if rcond is None else (("rcond", rcond),)) + \
        (() if rtol is _NO_VALUE else (("rtol", rtol),))
    return _pinv(a, kw=kw)


# --- least squares, powers ---------------------------------------------------------------

def _lstsq_valid(a, b):
    # distinct singular values: at a repeated one the returned singular values have a kink
    s = _la.svd(_onp.asarray(a, float), compute_uv=False)
    return _well_conditioned(a) and _min_gap(s) > 0.1


@differentiable(_la.lstsq, Spec([(((3, 2), (3,)), {}), (((4, 2), (4, 2)), {}),
                                  (((2, 3), (2,)), {}), (((3, 3), (3, 1)), {"rcond": 1e-3}),
                                  (((4, 3), (4,)), {"rcond": None})],
                                 domain=((-1.0, 1.0), (-2.0, 2.0)), valid=_lstsq_valid),
                 name="linalg.lstsq", numpy_values=True)
def lstsq(a, b, rcond=None):
    """numpy.linalg.lstsq, real or complex input. The solution is ``pinv(a, rcond) @ b``,
    differentiated as such: exact for full column rank (and for full row rank, the least-norm
    solution); for rank-deficient ``a`` see ``pinv``. The residuals are differentiated too
    (they are given, as in numpy, when the rank is N < M; real, sums of ``|r|^2``); the rank
    has no derivative; the singular values are ``svdvals(a)``'s."""
    refuse_traced("numpy.linalg.lstsq", "rcond", rcond, CUTOFF)
    a, b = fnp.asarray(a), fnp.asarray(b)
    # numpy's errors and its rank, which read a's values and only b's shape (b's values are
    # not read: a staged function does not guard them, vmap batches them)
    ref = _la.lstsq(_values(a), value_for_shape(b), rcond)
    m, n = shape_of(a)[-2:]
    if rcond is None:  # numpy's default, for its double-precision computation
        rcond = _onp.finfo(_onp.float64).eps * max(m, n)
    x = fnp.matmul(_pinv(a, kw=(("rcond", rcond),)), b)
    rank, resid = _rank_and_residuals(a, b, x, ref, rcond)
    # numpy's singular values come from another LAPACK routine than svdvals': the traced ones
    # get numpy's values from ``numpy_values``, plain ones are taken from numpy directly
    return x, resid, rank, _svdvals(a) if contains_tracer(a) else ref[3]


def _values(a):
    """``a``'s values for lstsq's rank, or under ``vmap`` (a batch in their place) one
    example's, which decide only the residuals' shape (``_rank_and_residuals``)."""
    return read_values(a) if concrete(a) else value_for_shape(a)


def _rank_and_residuals(a, b, x, ref, cutoff):
    """The rank and residuals of numpy's (or scipy's) ``lstsq`` for the solution ``x``:
    ``ref`` is its result on ``_values(a)``. The residuals are given where the rank is
    N < M, as numpy gives them. Under ``vmap`` ``ref`` is one example's: the residuals'
    shape is that example's and the rank a traced count, so that ``numpy_values`` gives
    each example numpy's own rank and residuals (a batch whose examples differ in rank where
    residuals are given fails there, as numpy.stack of the loop's results would; scipy 1.18
    gives nan residuals at a rank drop, which the batch holds)."""
    m, n = shape_of(a)[-2:]
    rank, resid = ref[2], ref[1]
    if rank == n and m > n:
        r = fnp.matmul(a, x) - b
        resid = fnp.reshape(fnp.sum(_real_part(r * _conj(r)), axis=0), shape_of(ref[1]))
    if not concrete(a):
        s = _svdvals(a)
        rank = fnp.sum(s > cutoff * fnp.max(s))
    return rank, resid
