"""Shared by the linalg modules: numpy's result types, small matrix helpers, and the Spec
helpers that draw well-conditioned, symmetric positive definite or well-separated matrices."""

import numpy as _onp

import fgrad.numpy as fnp
from ...core.tracer import without_derivative, value_for_shape
from ..broadcasting import dtype_of, mask, shape_of

_la = _onp.linalg


def _result_type(name, call):
    """numpy's result type ``name`` (a namedtuple, which fgrad treats as a pytree node), named
    in the private ``numpy.linalg._linalg``; should it move, the type of a call's result (the
    five calls on a 1 x 1 matrix took 0.9 ms at import, most of it LAPACK's first call)."""
    found = getattr(getattr(_la, "_linalg", None), name, None)
    return found if isinstance(found, type) else type(call(_onp.eye(1)))


SlogdetResult = _result_type("SlogdetResult", _la.slogdet)
EighResult = _result_type("EighResult", _la.eigh)
SVDResult = _result_type("SVDResult", _la.svd)
QRResult = _result_type("QRResult", _la.qr)
EigResult = _result_type("EigResult", _la.eig)


# --- helpers ---------------------------------------------------------------------------

def _ndim(x):
    return len(shape_of(x))


def _mT(x):
    """The matrix transpose of the last two axes."""
    return fnp.swapaxes(x, -1, -2)


def _eye(n, like):
    return _onp.eye(n, dtype=dtype_of(like))


def _read_masks(like, lower):
    """The diagonal and the strict triangle (lower, or upper) that a one-triangle function
    reads, as 0/1 masks shaped for ``like``."""
    n = shape_of(like)[-1]
    strict = _onp.tri(n, k=-1, dtype=bool)
    return _eye(n, like), mask(strict if lower else strict.T, like)


def _is_complex(x):
    return _onp.iscomplexobj(value_for_shape(x))


def _conj(x):
    """The complex conjugate (``x`` itself, with no node, for real ``x``)."""
    return fnp.conj(x) if _is_complex(x) else x


def _adjoint(x):
    """The conjugate transpose of the last two axes (the transpose, for real ``x``)."""
    return _conj(_mT(x))


def _real_part(x):
    """The real part of a complex ``x`` (``x`` itself when real): for values numpy gives real
    that a primitive of several outputs packs into one complex array with others, and for
    their derivatives."""
    return fnp.real(x) if _is_complex(x) else x


def _read_triangle(t, lower):
    """The symmetric (hermitian, for complex ``t``) matrix that numpy's one-triangle functions
    (cholesky, eigh, eigvalsh) see when given ``t``: its lower (or upper) triangle, mirrored
    (and conjugated, the diagonal's imaginary part taken as zero, as LAPACK does). Linear in
    ``t`` over the reals: the tangent of their input, the entries of the other triangle left
    out."""
    diag, strict = _read_masks(t, lower)
    if _is_complex(t):
        below = t * strict
        return below + fnp.conj(_mT(below)) + fnp.real(t) * diag
    return t * (diag + strict) + _mT(t * strict)


def _read_triangle_adjoint(g, lower):
    """The transpose of :func:`_read_triangle` (under fgrad's pairing ``Re sum(x * y)``): a
    cotangent of the matrix read, as one of the input (zero in the triangle that is not
    read)."""
    diag, strict = _read_masks(g, lower)
    if _is_complex(g):
        return (g + fnp.conj(_mT(g))) * strict + fnp.real(g) * diag
    return g * (diag + strict) + _mT(g) * strict


def _diag(x):
    """The diagonal of the last two axes, shape ``(..., n)``."""
    r = _onp.arange(min(shape_of(x)[-2:]))
    return fnp.getitem(x, (Ellipsis, r, r))


def _diag_embed(d):
    """``(..., n)`` to diagonal matrices ``(..., n, n)``."""
    return fnp.expand_dims(d, -1) * _eye(shape_of(d)[-1], d)


def _lift(x):
    """A stack of scalars ``(...)`` as ``(..., 1, 1)``, to scale a stack of matrices."""
    return fnp.expand_dims(x, (-2, -1))


def _strictly_lower(like):
    n = shape_of(like)[-1]
    return mask(_onp.tri(n, k=-1, dtype=bool), like)


def _gap_inverse(v):
    """``F[..., i, j] = 1 / (v_j - v_i)``, and 0 where ``v_i == v_j`` exactly (the diagonal,
    and exactly repeated values), so no ``inf``/``nan`` enters the rules."""
    d = fnp.expand_dims(v, -2) - fnp.expand_dims(v, -1)
    tie = mask(without_derivative(d) == 0, d)
    return (1 - tie) / (d + tie)


def _noted(np_fn, note):
    return f"fgrad: {note}\n\n{np_fn.__doc__ or ''}"


def _shift(a):
    """``c I`` such that ``a + c I``, with ``a``'s entries in [-1, 1], is far from singular
    (Gershgorin: each eigenvalue is at least ``c - n >= 1`` away from 0)."""
    n = shape_of(a)[-1]
    return max(4, n + 1) * _eye(n, a)


def _shifted(f, a, *rest, **params):
    """Spec.call: a well-conditioned square matrix from a draw in [-1, 1]."""
    return f(a + _shift(a), *rest, **params)


def _dominant(a):
    """For the tests: from ``a`` in [-1, 1], a matrix whose lower and upper triangles each
    read as a positive definite matrix (diagonally dominant: eigenvalues >= n), with every
    entry free, so that the tests perturb the triangle not read too."""
    n = shape_of(a)[-1]
    return a + 2 * n * _eye(n, a)


# --- Spec helpers for the decompositions -------------------------------------------------
# Eigenvectors, singular vectors and QR factors are unique only up to the sign (phase) of
# each column, which LAPACK picks by branches that a finite-difference step can flip. The
# specs compare derivatives of a normalised form (each column's largest entry positive,
# R's diagonal positive); the rules themselves follow numpy's own output.

def _outputs(out, shapes):
    """A packed ``define_multi`` output (or a tuple) as a tuple of arrays of ``shapes``."""
    if isinstance(out, tuple):
        return tuple(out)
    parts, start = [], 0
    for shape in shapes:
        n = int(_onp.prod(shape, dtype=int))
        parts.append(fnp.reshape(fnp.getitem(out, slice(start, start + n)), shape))
        start += n
    return tuple(parts)


def _column_signs(v):
    """+-1 per column of ``v``, without derivative: the sign of the real part of its largest
    entry, shaped ``(..., 1, k)`` to multiply ``v`` with (a batch of them under vmap)."""
    vv = without_derivative(v)
    re = fnp.real(vv)
    top = fnp.argmax(fnp.abs(vv), axis=-2)[..., None, :]
    hit = fnp.equal(top, _onp.arange(shape_of(v)[-2])[:, None])
    top = fnp.sum(fnp.where(hit, re, 0), axis=-2, keepdims=True)
    return fnp.astype(fnp.where(top < 0, -1, 1), dtype_of(re))


def _min_gap(v):
    """The smallest distance between two entries of each last-axis vector of ``v``."""
    v = _onp.asarray(v)
    d = _onp.where(_onp.eye(v.shape[-1], dtype=bool), _onp.inf,
                   _onp.abs(v[..., :, None] - v[..., None, :]))
    return _onp.min(d) if v.shape[-1] > 1 else _onp.inf


def _clear_top(v, margin=0.02):
    """Each column's largest entry leads the next by ``margin`` (its sign is then stable)."""
    a = _onp.sort(_onp.abs(_onp.asarray(v)), axis=-2)
    return v.shape[-2] < 2 or _onp.min(a[..., -1, :] - a[..., -2, :]) > margin


def _eigh_valid(a):
    """Eigenvalues apart and eigenvectors' signs stable, for whichever triangle is read (the
    tests perturb ``a`` in every entry, the unread triangle included)."""
    a = _onp.asarray(a, float)
    for uplo in "LU":
        w, v = _la.eigh(a, UPLO=uplo)
        if not (_min_gap(w) > 0.1 and _clear_top(v)):
            return False
    return True


def _eigh_call(f, a, **params):
    shape = shape_of(a)
    w, v = _outputs(f(a, **params), [shape[:-1], shape])
    return w, v * _column_signs(v)


def _svd_valid(a):
    a = _onp.asarray(a, float)
    s = _la.svd(a, compute_uv=False)
    u = _la.svd(a, full_matrices=False)[0]
    return _min_gap(s) > 0.1 and _onp.min(s) > 0.1 and _clear_top(u)


def _svd_call(f, a, **params):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    out = f(a, **params)
    if params.get("compute_uv", True) is False:
        return out
    u, s, vh = _outputs(out, [(*batch, m, k), (*batch, k), (*batch, k, n)])
    sign = _column_signs(u)
    return u * sign, s, vh * _mT(sign)


def _qr_valid(a):
    r = _la.qr(_onp.asarray(a, float), mode="r")
    return _onp.min(_onp.abs(_onp.diagonal(r, axis1=-2, axis2=-1))) > 0.1


def _diagonal_signs(r):
    return fnp.sign(fnp.diagonal(without_derivative(r), axis1=-2, axis2=-1))


def _qr_call(f, a, mode="reduced"):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    out = f(a, mode=mode)
    if mode == "r":
        r = out
        return r * _diagonal_signs(r)[..., :, None]
    q, r = _outputs(out, [(*batch, m, k), (*batch, k, n)])
    sign = _diagonal_signs(r)[..., None, :]
    return q * sign, r * _mT(sign)


# LAPACK's order of the eigenvalues of a general matrix can jump under a tiny perturbation
# (at a triangular matrix, say); the specs sort them by ``real + imag / 2``, a key that is
# distinct for the draws ``_eig_valid`` accepts.

def _eig_key(w):
    return fnp.real(w) + 0.5 * fnp.imag(w)


def _eig_valid(a):
    a = _onp.asarray(a, float)
    w, v = _la.eig(a)
    # badly scaled draws (entries like 1e-38 beside 1) get inaccurate vectors from LAPACK:
    # keep draws whose decomposition is accurate and whose eigenvalues are well-conditioned
    accurate = _onp.max(_onp.abs(a @ v - v * w[..., None, :])) < 1e-9
    return bool(accurate and _onp.all(_la.cond(v) < 20) and _min_gap(w) > 0.2
                and _min_gap(_eig_key(w)) > 0.05 and _clear_top(v, 0.05))


def _sorting(w):
    """A permutation matrix ``p`` (``(..., n, n)``, without derivative; a batch of them under
    vmap): ``w @ p`` is sorted by the key."""
    wv = without_derivative(w)
    # (numpy's eigenvalues are real or complex by their values: a staged graph replays a
    # real trace on complex ones, so the key is taken of complex values either way)
    order = fnp.argsort(_eig_key(fnp.astype(wv, _onp.complex128)), axis=-1)
    n = shape_of(w)[-1]
    return mask(fnp.equal(order[..., None, :], _onp.arange(n)[:, None]), fnp.real(wv))


def _eig_call(f, a):
    shape = shape_of(a)
    w, v = _outputs(f(a), [shape[:-1], shape])
    p = _sorting(w)
    v = fnp.matmul(v, p)
    return fnp.sum(fnp.expand_dims(w, -1) * p, axis=-2), v * _column_signs(v)


def _eigvals_call(f, a):
    w = f(a)
    return fnp.sum(fnp.expand_dims(w, -1) * _sorting(w), axis=-2)


def _well_conditioned(*args):
    s = _la.svd(_onp.asarray(args[0], float), compute_uv=False)
    return bool(_onp.all(s[..., -1] > 0.1) and _onp.all(s[..., 0] < 8 * s[..., -1]))
