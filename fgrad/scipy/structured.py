"""scipy.linalg's structured matrices and the functions that solve or multiply by them.

The matrices (``toeplitz``, ``hankel``, ``circulant``, ``companion``, ``leslie``,
``block_diag``, ``diagsvd``, ``khatri_rao``) are copies and products of their arguments'
entries, so their derivatives are the copies'. The solves and products (``solve_toeplitz``,
``solve_circulant``, ``matmul_toeplitz``) are the dense solve or product of the matrix they
name, differentiated as such, with scipy's values (Levinson's recursion, FFTs): ``x =
T^-1 b`` has ``dx = T^-1 (db - dT x)`` whichever algorithm computed ``x``.

>>> import fgrad, fgrad.numpy as np
>>> from fgrad.scipy.linalg import solve_toeplitz
>>> fgrad.grad(lambda c: np.sum(solve_toeplitz(c, np.ones(2))))(np.array([2.0, 0.0])).tolist()
[-0.5, -0.5]
"""
import numpy as _onp
import scipy.linalg as _sl

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import contains_tracer, value_for_shape, value_dtype
from ..numpy.broadcasting import shape_of
from ..numpy.wrapping import differentiable


@differentiable(_sl.toeplitz, Spec([(((3,),), {}), (((3,), (4,)), {})]),
                name="scipy.linalg.toeplitz")
def toeplitz(c, r=None):
    """scipy.linalg.toeplitz: each entry a copy of ``c`` or ``r`` (``r[0]`` is unused)."""
    c = fnp.ravel(fnp.asarray(c))
    r = fnp.conjugate(c) if r is None else fnp.ravel(fnp.asarray(r))
    m, n = shape_of(c)[0], shape_of(r)[0]
    # entry (i, j) is c[i - j] on and below the diagonal, r[j - i] above it
    vals = fnp.concatenate([fnp.flip(c), fnp.getitem(r, slice(1, None))])
    idx = _onp.arange(n)[None, :] - _onp.arange(m)[:, None] + (m - 1)
    return fnp.getitem(vals, idx)


@differentiable(_sl.hankel, Spec([(((3,),), {}), (((3,), (4,)), {})]),
                name="scipy.linalg.hankel", numpy_values=True)
def hankel(c, r=None):
    """scipy.linalg.hankel: entry (i, j) is ``c[i + j]``, then ``r[i + j - m + 1]`` past
    ``c``'s end (``r[0]`` is unused; zeros without ``r``)."""
    c = fnp.ravel(fnp.asarray(c))
    r = fnp.zeros_like(c) if r is None else fnp.ravel(fnp.asarray(r))
    m, n = shape_of(c)[0], shape_of(r)[0]
    vals = fnp.concatenate([c, fnp.getitem(r, slice(1, None))])
    return fnp.getitem(vals, _onp.arange(m)[:, None] + _onp.arange(n)[None, :])


@differentiable(_sl.companion, Spec([(((3,),), {}), (((5,),), {})],
                                    call=lambda f, a: f(a + 3.0 * (_onp.arange(
                                        shape_of(a)[-1]) == 0))),  # (a[0] away from 0)
                name="scipy.linalg.companion", numpy_values=True)
def companion(a):
    """scipy.linalg.companion of one polynomial's coefficients (highest first, ``a[0]`` not
    0): the first row ``-a[1:] / a[0]``, ones below the diagonal."""
    a = fnp.asarray(a)
    if _onp.ndim(value_for_shape(a)) != 1:
        raise NotImplementedError("fgrad.scipy.linalg.companion: one polynomial (a 1-d array) "
                                  "on traced values; use fgrad.vmap for a stack of them")
    top = -fnp.getitem(a, slice(1, None)) / (1.0 * fnp.getitem(a, slice(0, 1)))
    n = shape_of(top)[0]
    ones = _onp.eye(n, n, -1, value_dtype(top))[1:]  # row i has 1 in column i - 1
    return fnp.concatenate([fnp.expand_dims(top, 0), ones], axis=0)


@differentiable(_sl.leslie, Spec([(((3,), (2,)), {}), (((4,), (3,)), {})]),
                name="scipy.linalg.leslie", numpy_values=True)
def leslie(f, s):
    """scipy.linalg.leslie: the fecundities ``f`` in the first row, the survival rates ``s``
    below the diagonal."""
    f, s = fnp.ravel(fnp.asarray(f)), fnp.ravel(fnp.asarray(s))
    n = shape_of(f)[0]
    dtype = _onp.result_type(value_for_shape(f), value_for_shape(s))
    below = fnp.concatenate([fnp.diag(s), _onp.zeros((n - 1, 1), dtype)], axis=1)
    return fnp.concatenate([fnp.expand_dims(fnp.astype(f, dtype), 0),
                            fnp.astype(below, dtype)], axis=0)


@differentiable(_sl.circulant, Spec([(((3,),), {}), (((4,),), {})]),
                name="scipy.linalg.circulant")
def circulant(c):
    """scipy.linalg.circulant: entry (i, j) is ``c[(i - j) mod n]``."""
    c = fnp.ravel(fnp.asarray(c))
    n = shape_of(c)[0]
    return fnp.getitem(c, (_onp.arange(n)[:, None] - _onp.arange(n)[None, :]) % n)


@differentiable(_sl.block_diag, Spec([(((2, 2), (1, 3)), {}), (((3,), (2, 2), ()), {})]),
                name="scipy.linalg.block_diag")
def block_diag(*arrs):
    """scipy.linalg.block_diag: the arrays on the diagonal, zeros elsewhere."""
    blocks = [fnp.atleast_2d(fnp.asarray(a)) for a in arrs]
    rows = [shape_of(b)[0] for b in blocks]
    cols = [shape_of(b)[1] for b in blocks]
    out, start = [], 0
    dtype = _onp.result_type(*[value_for_shape(b) for b in blocks])
    for b, r, c in zip(blocks, rows, cols):
        left = _onp.zeros((r, start), dtype)
        right = _onp.zeros((r, sum(cols) - start - c), dtype)
        out.append(fnp.concatenate([left, fnp.astype(b, dtype), right], axis=1))
        start += c
    return fnp.concatenate(out, axis=0)


def _c_and_r(c_or_cr):
    """scipy's ``c_or_cr``: the first column, or a tuple of the first column and row."""
    return tuple(c_or_cr) if isinstance(c_or_cr, (tuple, list)) and len(c_or_cr) == 2 \
        else (c_or_cr, None)


def _dominant_first(c):
    """``c`` with its first entry moved far from the others' sum (a draw in [-1, 1]): the
    Toeplitz and circulant matrices of the tests, well conditioned."""
    return c + 2.0 * (shape_of(c)[-1] + 1) * (_onp.arange(shape_of(c)[-1]) == 0)


def _solve_call(f, c, b, *r):
    """Spec.call: ``c`` dominant, and a first row ``r`` where the case draws one."""
    c = _dominant_first(c)
    return f((c, r[0]) if r else c, b)


@differentiable(_sl.solve_toeplitz,
                Spec([(((3,), (3,)), {}), (((4,), (4, 2)), {}), (((3,), (3,), (3,)), {})],
                     call=_solve_call),
                name="scipy.linalg.solve_toeplitz", numpy_values=True)
def solve_toeplitz(c_or_cr, b, check_finite=True):
    """scipy.linalg.solve_toeplitz: ``solve(toeplitz(c, r), b)`` differentiated as the dense
    solve (in ``c``, ``r`` and ``b``), scipy's values (Levinson's recursion)."""
    c, r = _c_and_r(c_or_cr)
    return fnp.linalg.solve(toeplitz(c, r), fnp.asarray(b))


@differentiable(_sl.matmul_toeplitz,
                Spec([(((3,), (3,)), {}), (((3,), (4, 2), (4,)), {})],
                     call=lambda f, c, x, *r: f((c, r[0]) if r else c, x)),
                name="scipy.linalg.matmul_toeplitz", numpy_values=True)
def matmul_toeplitz(c_or_cr, x, check_finite=False, workers=None):
    """scipy.linalg.matmul_toeplitz: ``toeplitz(c, r) @ x`` differentiated as the dense
    product, scipy's values (by FFTs)."""
    c, r = _c_and_r(c_or_cr)
    return fnp.matmul(toeplitz(c, r), fnp.asarray(x))


@differentiable(_sl.solve_circulant, Spec([(((3,), (3,)), {}), (((4,), (4, 2)), {})],
                                          call=lambda f, c, b: f(_dominant_first(c), b)),
                name="scipy.linalg.solve_circulant", numpy_values=True)
def solve_circulant(c, b, singular="raise", tol=None, caxis=-1, baxis=0, outaxis=0):
    """scipy.linalg.solve_circulant of one circulant matrix (``c`` 1-d): ``solve(circulant(c),
    b)`` differentiated as the dense solve, scipy's values (by FFTs). ``singular="lstsq"``,
    ``tol`` and other axes are refused on traced values."""
    given = {"singular": singular != "raise", "tol": tol is not None,
             "caxis": caxis != -1, "baxis": baxis != 0, "outaxis": outaxis != 0}
    bad = sorted(k for k, v in given.items() if v)
    if bad or _onp.ndim(value_for_shape(c)) != 1:
        raise NotImplementedError(
            f"fgrad.scipy.linalg.solve_circulant: {', '.join(bad) or 'a stack of c'} not "
            "supported on traced values (one circulant matrix, its solve raising where it is "
            "singular); use fgrad.vmap for a stack, or call it on fgrad.stop_gradient(c)")
    return fnp.linalg.solve(circulant(c), fnp.asarray(b))


@differentiable(_sl.khatri_rao, Spec([(((2, 3), (4, 3)), {}), (((1, 2), (3, 2)), {})]),
                name="scipy.linalg.khatri_rao", numpy_values=True)
def khatri_rao(a, b):
    """scipy.linalg.khatri_rao: column ``j`` is ``kron(a[:, j], b[:, j])``."""
    a, b = fnp.asarray(a), fnp.asarray(b)
    if contains_tracer((a, b)) and (_onp.ndim(value_for_shape(a)) != 2
                                    or shape_of(a)[1:] != shape_of(b)[1:]):
        _sl.khatri_rao(value_for_shape(a), value_for_shape(b))  # scipy's own error
    (n, k), m = shape_of(a), shape_of(b)[0]
    return fnp.reshape(fnp.expand_dims(a, 1) * fnp.expand_dims(b, 0), (n * m, k))


@differentiable(_sl.diagsvd, Spec([(((3,),), {"M": 3, "N": 5}), (((2,),), {"M": 4, "N": 2})]),
                name="scipy.linalg.diagsvd")
def diagsvd(s, M, N):
    """scipy.linalg.diagsvd: the ``M`` x ``N`` matrix with ``s`` on its diagonal."""
    s = fnp.asarray(s)
    k = shape_of(s)[-1]
    if k not in (M, N):
        raise ValueError("Length of s must be M or N.")  # (scipy's message)
    return fnp.pad(fnp.diag(s), ((0, M - k), (0, N - k)))
