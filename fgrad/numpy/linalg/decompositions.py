"""Factorizations: cholesky, eigh, eigvalsh, svd, svdvals, qr, eig, eigvals (several outputs
travel through ``define_multi`` and come back as numpy's namedtuples)."""

import numpy as _onp

import fgrad.numpy as fnp
from .. import batch_rules
from ...core.table import Spec, define
from ..multi_output import define_multi
from ...core.tracer import without_derivative, value_for_shape, read_values
from ..namespace import values_only
from ..broadcasting import mask, shape_of
from ..wrapping import differentiable, with_numpy_values
from .common import (EigResult, EighResult, QRResult, SVDResult, _adjoint, _conj, _diag,
                     _diag_embed, _eig_call, _eig_valid, _eigh_call, _eigh_valid, _eigvals_call,
                     _eye, _gap_inverse, _la, _dominant, _mT, _qr_call, _qr_valid,
                     _read_triangle, _read_triangle_adjoint, _is_complex,
                     _real_part, _strictly_lower, _svd_call, _svd_valid)
from .solving import inv, solve


# --- Cholesky --------------------------------------------------------------------------

def _phi(like):
    """The lower triangle with the diagonal halved, as a 0/0.5/1 mask."""
    n = shape_of(like)[-1]
    return mask(_onp.tri(n, dtype=bool), like) - 0.5 * _eye(n, like)


# numpy reads the lower triangle of ``a`` (the upper one with upper=True): the rules work with
# the symmetric matrix S read from it, and map tangents and cotangents through that reading.

# (For complex input, S is hermitian, S = L L^H, numpy's upper factor is L^H, and the
# transposes on the right of L^-1 dS L^-H become adjoints; the VJP is the JVP's transpose
# under fgrad's pairing Re sum(x * y): L^-T phi(L^T g) conj(L)^-1.)

def _cholesky_jvp(t, ans, a, upper=False):
    lo = _adjoint(ans) if upper else ans
    x = solve(lo, _read_triangle(t, not upper))              # L^-1 dS
    dl = fnp.matmul(lo, solve(lo, _adjoint(x)) * _phi(lo))   # L phi(L^-1 dS L^-H)
    return _adjoint(dl) if upper else dl


def _cholesky_vjp(g, ans, a, upper=False):
    lo = _adjoint(ans) if upper else ans
    g = _adjoint(g) if upper else g
    z = solve(_mT(lo), fnp.matmul(_mT(lo), g) * _phi(lo))  # L^-T phi(L^T g)
    gs = _mT(solve(_adjoint(lo), _mT(z)))                     # L^-T phi(L^T g) conj(L)^-1
    return _read_triangle_adjoint(gs, not upper)


_SPD = Spec([(((2, 2),), {}), (((3, 3),), {"upper": True}), (((2, 3, 3),), {})],
            domain=(-1.0, 1.0), call=lambda f, a, **p: f(_dominant(a), **p))

_cholesky = define("linalg.cholesky", lambda a, upper=False: _la.cholesky(a, upper=upper),
                   [_cholesky_vjp], [_cholesky_jvp], spec=_SPD, batch=batch_rules.stacked(2))


@differentiable(_la.cholesky, _SPD, name="linalg.cholesky")
def cholesky(a, /, *, upper=False):
    """numpy.linalg.cholesky, differentiated as the function numpy computes: it reads the lower
    triangle of ``a`` (the upper with ``upper=True``), so the derivative with respect to the
    other triangle is zero.

    >>> import fgrad, fgrad.numpy as np
    >>> a = np.array([[4.0, 9.0], [2.0, 5.0]])     # numpy ignores the 9.0
    >>> fgrad.grad(lambda a: np.sum(np.linalg.cholesky(a)))(a).tolist()
    [[0.1875, 0.0], [0.25, 0.25]]
    """
    a = fnp.asarray(a)
    return _cholesky(a, upper=bool(upper))


# --- symmetric eigenproblem --------------------------------------------------------------

# For a complex (hermitian) input the eigenvectors' phases are any: these rules take
# V^H dV with a zero diagonal (JAX's and autograd's choice), which gives the derivative of
# every function that does not depend on the phases (eigenvalues, |V|, V f(w) V^H).

def _eigh_jvp(ts, outs, a, UPLO="L"):
    w, v = outs
    m = fnp.matmul(fnp.matmul(_adjoint(v), _read_triangle(ts[0], UPLO == "L")), v)
    return _real_part(_diag(m)), fnp.matmul(v, _gap_inverse(w) * m)


def _eigh_vjp(i, gs, outs, a, UPLO="L"):
    (gw, gv), (w, v) = gs, outs
    inner = _diag_embed(_real_part(gw)) + _gap_inverse(w) * fnp.matmul(_mT(v), gv)
    return _read_triangle_adjoint(fnp.matmul(fnp.matmul(_conj(v), inner), _mT(v)), UPLO == "L")


_EIGH = Spec([(((2, 2),), {}), (((3, 3),), {"UPLO": "U"}), (((2, 3, 3),), {})],
             domain=(-1.0, 1.0), valid=_eigh_valid, call=_eigh_call)

_eigh = define_multi("linalg.eigh", lambda a, UPLO="L": tuple(_la.eigh(a, UPLO=UPLO)),
                     lambda a, UPLO="L": (shape_of(a)[:-1], shape_of(a)),
                     _eigh_vjp, _eigh_jvp, spec=_EIGH, batch=batch_rules.stacked(2))


@differentiable(_la.eigh, _EIGH, name="linalg.eigh")
def eigh(a, UPLO="L"):
    """numpy.linalg.eigh, differentiated as the function numpy computes: it reads the lower
    triangle of ``a`` (the upper with ``UPLO="U"``), so the derivative with respect to the
    other triangle is zero. Eigenvector derivatives divide by eigenvalue gaps ``w_j - w_i``; a
    pair of exactly equal eigenvalues contributes nothing (no inf/nan), which is exact for
    functions of the eigenvalues alone but otherwise meaningless: at a repeated eigenvalue the
    eigenvectors are not differentiable. Use ``eigvalsh`` for eigenvalues alone. A complex
    matrix is read as numpy reads it (the hermitian matrix of one triangle, the diagonal's
    imaginary part taken as zero); its eigenvectors' phases are arbitrary, and the rules take
    ``V^H dV`` with a zero diagonal, as JAX and autograd do: exact for functions that do not
    depend on the phases (the eigenvalues, ``abs(V)``, ``V f(w) V^H``)."""
    a = fnp.asarray(a)
    w, v = _eigh(a, UPLO=_uplo(UPLO))  # (w packed with v: complex, for complex a)
    return EighResult(_real_part(w), v)


def _uplo(UPLO):
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def _eigvalsh_vjp(g, ans, a, UPLO="L"):
    _, v = _eigh(a, UPLO=UPLO)
    return _read_triangle_adjoint(fnp.matmul(_conj(v) * fnp.expand_dims(g, -2), _mT(v)),
                                  UPLO == "L")


def _eigvalsh_jvp(t, ans, a, UPLO="L"):
    _, v = _eigh(a, UPLO=UPLO)
    return _real_part(fnp.sum(_conj(v) * fnp.matmul(_read_triangle(t, UPLO == "L"), v),
                              axis=-2))


_EIGVALSH = Spec([(((2, 2),), {}), (((3, 3),), {"UPLO": "U"}), (((2, 3, 3),), {})],
                 domain=(-1.0, 1.0), valid=_eigh_valid)

_eigvalsh = define("linalg.eigvalsh", lambda a, UPLO="L": _la.eigvalsh(a, UPLO=UPLO),
                   [_eigvalsh_vjp], [_eigvalsh_jvp], spec=_EIGVALSH, batch=batch_rules.stacked(2))


@differentiable(_la.eigvalsh, _EIGVALSH, name="linalg.eigvalsh")
def eigvalsh(a, UPLO="L"):
    """numpy.linalg.eigvalsh, differentiated as the function numpy computes: it reads one
    triangle of ``a`` (``UPLO``), so the gradient is zero in the other. The gradient (the read
    triangle of ``V diag(g) V^T``) needs no eigenvalue gaps, so it is exact at repeated
    eigenvalues too (for functions symmetric in the repeated ones, such as sums); second
    derivatives do divide by gaps. A complex matrix is read as hermitian, as ``eigh`` reads
    it."""
    a = fnp.asarray(a)
    return _eigvalsh(a, UPLO=_uplo(UPLO))


# --- singular value decomposition ----------------------------------------------------------

def _svd_shapes(a, full_matrices=False):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    return ((*batch, m, m if full_matrices else k), (*batch, k),
            (*batch, n if full_matrices else k, n))


# For complex input the singular vectors' phases are any (u_i and v_i turn together): the JVP
# takes V^H dV with a zero diagonal and U^H dU's from the rest (JAX's and autograd's choice),
# exact for functions that do not depend on the phases (s, abs(U), U diag(s) V^H); the VJP is
# its transpose under fgrad's pairing ``Re sum(x * y)``.

def _svd_jvp(ts, outs, a, full_matrices=False):
    (t,), (u, s, vh) = ts, outs
    s = _real_part(s)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    v = _adjoint(vh)
    p = fnp.matmul(fnp.matmul(_adjoint(u), t), v)             # U^H dA V
    ph = _adjoint(p)
    f = _gap_inverse(s * s)                                   # 1 / (s_j^2 - s_i^2)
    s_row, s_col = fnp.expand_dims(s, -2), fnp.expand_dims(s, -1)
    du = fnp.matmul(u, f * (p * s_row + s_col * ph))
    dv = fnp.matmul(v, f * (s_col * p + ph * s_row))
    ds = _diag(p)
    if _is_complex(p):  # the phase of u_i that dA gives, v_i's held
        du = du + u * fnp.expand_dims(1j * fnp.imag(ds) / s, -2)
        ds = fnp.real(ds)
    if m > k:  # the part of dA V outside span(U)
        du = du + (fnp.matmul(t, v) - fnp.matmul(u, p)) / s_row
    if n > k:
        dv = dv + (fnp.matmul(_adjoint(t), u) - fnp.matmul(v, ph)) / s_row
    return du, ds, _adjoint(dv)


def _svd_vjp(i, gs, outs, a, full_matrices=False):
    (gu, gsv, gvh), (u, s, vh) = gs, outs
    s, gsv = _real_part(s), _real_part(gsv)
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    v, gv = _adjoint(vh), _adjoint(gvh)
    ub, vhb = _conj(u), _conj(vh)                             # (U-bar, V^T)
    f = _gap_inverse(s * s)
    s_row, s_col = fnp.expand_dims(s, -2), fnp.expand_dims(s, -1)
    ug = fnp.matmul(_mT(u), gu)
    j = f * ug
    kk = f * fnp.matmul(_mT(v), gv)
    inner = _diag_embed(gsv) + (j + _adjoint(j)) * s_row + s_col * (kk + _adjoint(kk))
    if _is_complex(ug):  # the transpose of the JVP's phase term
        inner = inner + _diag_embed(1j * fnp.imag(_diag(ug)) / s)
    ga = fnp.matmul(fnp.matmul(ub, inner), vhb)
    if m > k:
        ga = ga + fnp.matmul((gu - fnp.matmul(ub, ug)) / s_row, vhb)
    if n > k:
        ga = ga + fnp.matmul(ub, _adjoint((gv - fnp.matmul(_conj(v), fnp.matmul(_mT(v), gv)))
                                          / s_row))
    return ga


_SVD_CASES = [(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}), (((2, 3, 2),), {})]

_svd = define_multi("linalg.svd",
                    lambda a, full_matrices=False: tuple(_la.svd(a, full_matrices)),
                    _svd_shapes, _svd_vjp, _svd_jvp,
                    spec=Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid,
                              call=_svd_call), batch=batch_rules.stacked(2))


def _svdvals_vjp(g, ans, a):
    u, _, vh = _svd(a)
    # an exactly zero singular value is a kink (|s|): its derivative is taken as 0
    g = g * (1 - mask(without_derivative(ans) == 0, ans))
    return _conj(fnp.matmul(u * fnp.expand_dims(g, -2), vh))


def _svdvals_jvp(t, ans, a):
    u, _, vh = _svd(a)
    ds = fnp.sum(_conj(u) * fnp.matmul(t, _adjoint(vh)), axis=-2)
    return _real_part(ds) * (1 - mask(without_derivative(ans) == 0, ans))


_svdvals = define("linalg.svdvals", lambda a: _la.svd(a, compute_uv=False),
                  [_svdvals_vjp], [_svdvals_jvp],
                  spec=Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid),
                  batch=batch_rules.stacked(2))


def _refuse_completion(name, a, default=""):
    """``full_matrices=True`` (``default``: how the caller's library defaults to it) is
    refused for a non-square traced matrix."""
    m, n = shape_of(a)[-2:]
    if m != n:
        raise NotImplementedError(
            f"{name}: full_matrices=True{default} on a non-square traced matrix: the extra "
            "columns of u (or rows of vh) are any orthonormal completion, which has no "
            "derivative; pass full_matrices=False.")


def _refuse_hermitian(name, hermitian):
    if hermitian:
        raise NotImplementedError(
            f"fgrad.numpy.linalg.{name}: hermitian=True is not supported on traced values "
            "(numpy then takes another algorithm, through eigh); call it with hermitian=False, "
            "which gives the same result for a hermitian matrix.")


@differentiable(_la.svd, Spec([(((3, 2),), {"full_matrices": False}),
                                (((2, 3),), {"full_matrices": False}),
                                (((2, 3, 2),), {"full_matrices": False}), (((2, 2),), {}),
                                (((3, 2),), {"compute_uv": False})],
                               domain=(-1.0, 1.0), valid=_svd_valid, call=_svd_call),
                 name="linalg.svd")
def svd(a, full_matrices=True, compute_uv=True, hermitian=False):
    """numpy.linalg.svd. ``compute_uv=False`` gives the singular values, whose
    derivative ``u_i v_i^T`` needs no gaps (at repeated singular values it is exact for
    functions symmetric in them, such as sums and norms; an exactly zero singular value, a
    kink, has derivative 0). The singular vectors' derivatives divide by
    ``s_j^2 - s_i^2`` (pairs of exactly equal singular values contribute nothing, as in
    ``eigh``: not meaningful there) and, for non-square input, by the singular values.
    ``full_matrices=True`` is refused for non-square input on traced values (the completed
    basis is not unique, so it has no derivative); ``hermitian=True`` is refused. For complex
    input the phases of the singular vectors are arbitrary (``u_i`` and ``v_i`` turn
    together): the rules hold ``v_i``'s, as JAX and autograd do, exact for functions that do
    not depend on the phases (``s``, ``abs(u)``, ``u diag(s) vh``)."""
    a = fnp.asarray(a)
    _refuse_hermitian("svd", hermitian)
    if not compute_uv:
        return _svdvals(a)
    if full_matrices:
        _refuse_completion("fgrad.numpy.linalg.svd", a)
    u, s, vh = _svd(a, full_matrices=bool(full_matrices))
    return SVDResult(u, _real_part(s), vh)


@differentiable(_la.svdvals, Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid),
                 name="linalg.svdvals")
def svdvals(x, /):
    """numpy.linalg.svdvals: derivative ``u_i v_i^H`` of each singular value (at repeated
    singular values exact for functions symmetric in them, such as sums and norms; an exactly
    zero one, a kink, has derivative 0)."""
    x = fnp.asarray(x)
    return _svdvals(x)


# --- QR ----------------------------------------------------------------------------------

def _right_solve(y, r):
    """``y r^-1``."""
    return _mT(solve(_mT(r), _mT(y)))


# For complex input LAPACK's R has a real diagonal, which makes Q and R unique: Q^H dQ is
# skew-hermitian with the imaginary part of diag(Q^H dA R^-1) on its diagonal, so that
# diag(dR) stays real (JAX's rule). The VJP is the JVP's transpose under fgrad's pairing
# ``Re sum(x * y)``; for real input both are the real rules, node for node.

def _qr_square_jvp(q, r, t):
    """(dQ, dR) for ``a = q r`` with ``q`` of orthonormal columns and ``r`` square."""
    tr = _right_solve(t, r)                                  # dA R^-1
    c = fnp.matmul(_adjoint(q), tr)
    low = c * _strictly_lower(c)
    om = low - _adjoint(low)                                 # Q^H dQ (skew)
    if _is_complex(c):
        om = om + _diag_embed(1j * fnp.imag(_diag(c)))
    dq = fnp.matmul(q, om)
    if shape_of(q)[-2] > shape_of(q)[-1]:
        dq = dq + tr - fnp.matmul(q, c)                      # (I - Q Q^H) dA R^-1
    return dq, fnp.matmul(c - om, r)


def _qr_square_vjp(q, r, gq, gr):
    qg = fnp.matmul(_mT(q), gq)
    rg = fnp.matmul(gr, _mT(r))
    mm = qg - rg
    x = rg + (mm - _adjoint(mm)) * _strictly_lower(mm)
    if _is_complex(mm):
        x = x + _diag_embed(1j * fnp.imag(_diag(mm)))
    return _mT(solve(r, _mT(gq + fnp.matmul(_conj(q), x - qg))))   # (...) R^-T


def _qr_split(a):
    """For wide ``a`` (m < n): its first m columns and the rest."""
    m = shape_of(a)[-2]
    return fnp.getitem(a, (Ellipsis, slice(None, m))), fnp.getitem(a, (Ellipsis, slice(m, None)))


def _qr_jvp(ts, outs, a, mode="reduced"):
    (t,), (q, r) = ts, outs
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_square_jvp(q, r, t)
    (r1, _), (_, a2), (t1, t2) = _qr_split(r), _qr_split(a), _qr_split(t)
    dq, dr1 = _qr_square_jvp(q, r1, t1)
    dr2 = fnp.matmul(_adjoint(dq), a2) + fnp.matmul(_adjoint(q), t2)  # R2 = Q^H A2
    return dq, fnp.concatenate([dr1, dr2], axis=-1)


def _qr_vjp(i, gs, outs, a, mode="reduced"):
    (gq, gr), (q, r) = gs, outs
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_square_vjp(q, r, gq, gr)
    (r1, _), (_, a2), (gr1, gr2) = _qr_split(r), _qr_split(a), _qr_split(gr)
    ga1 = _qr_square_vjp(q, r1, gq + _conj(fnp.matmul(a2, _mT(gr2))), gr1)
    return fnp.concatenate([ga1, fnp.matmul(_conj(q), gr2)], axis=-1)


def _qr_shapes(a, mode="reduced"):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    return (*batch, m, k), (*batch, k, n)


_qr = define_multi("linalg.qr", lambda a, mode="reduced": tuple(_la.qr(a, mode=mode)),
                   _qr_shapes, _qr_vjp, _qr_jvp,
                   spec=Spec([(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}),
                              (((2, 3, 2),), {})],
                             domain=(-1.0, 1.0), valid=_qr_valid, call=_qr_call),
                   batch=batch_rules.stacked(2))


@differentiable(_la.qr, Spec([(((3, 3),), {}), (((3, 2),), {}), (((2, 4, 3),), {}),
                               (((2, 3),), {"mode": "complete"}), (((3, 2),), {"mode": "r"})],
                              domain=(-1.0, 1.0), valid=_qr_valid, call=_qr_call),
                 name="linalg.qr")
def qr(a, mode="reduced"):
    """numpy.linalg.qr, real or complex input, modes 'reduced', 'r' and 'complete' (for m <= n,
    where it equals 'reduced'). R's diagonal must be nonzero (full rank): the rules divide by
    it. (Complex: LAPACK's R has a real diagonal, which makes the factors unique.)
    On traced values 'complete' with m > n is refused (the completed columns of q are any
    orthonormal completion, with no derivative), and so is 'raw' (Householder reflectors)."""
    a = fnp.asarray(a)
    m, n = shape_of(a)[-2:]
    if mode == "raw" or (mode == "complete" and m > n):
        raise NotImplementedError(
            f"fgrad.numpy.linalg.qr: mode={mode!r} is not supported on traced values"
            + (" for a tall matrix (the completed columns of q are not unique, so they have "
               "no derivative)" if mode == "complete" else " (Householder reflectors)")
            + "; use mode='reduced'.")
    if mode == "r":
        _, r = _qr(a, mode="reduced")
        return with_numpy_values(r, _la.qr, (a,), {"mode": "r"})
    if mode not in ("reduced", "complete"):
        _la.qr(read_values(a), mode=mode)  # numpy's own error for an unknown mode
    return QRResult(*_qr(a, mode=mode))


# --- general eigenproblem ------------------------------------------------------------------
# numpy normalises each eigenvector to unit 2-norm with its largest entry real (LAPACK's
# geev); the derivative keeps both: Re(v^H dv) = 0 and Im(dv_k / v_k) = 0 at that entry k.

def _largest_impl(vv):
    k = _onp.argmax(_onp.abs(vv), axis=-2)
    return (_onp.arange(vv.shape[-2])[:, None] == k[..., None, :]).astype(_onp.real(vv).dtype)


# a 0/1 mask of each column's largest entry (by modulus), from the values (no derivative)
_largest = values_only(_largest_impl, "linalg.eig_largest")


def _eig_jvp(ts, outs, a):
    (t,), (w, v) = ts, outs
    p = fnp.matmul(fnp.matmul(inv(v), t), v)
    vt = fnp.matmul(v, _gap_inverse(w) * p)
    d = fnp.sum(fnp.conjugate(v) * vt, axis=-2)
    if _onp.iscomplexobj(value_for_shape(v)):
        top = _largest(v)
        e = fnp.sum(top * vt, axis=-2) / fnp.sum(top * v, axis=-2)
        c = -fnp.real(d) - 1j * fnp.imag(e)
    else:
        c = -d
    return _diag(p), vt + v * fnp.expand_dims(c, -2)


def _eig_vjp(i, gs, outs, a):
    (gw, gv), (w, v) = gs, outs
    gc = fnp.sum(v * gv, axis=-2)
    if _onp.iscomplexobj(value_for_shape(v)):
        top = _largest(v)
        gvt = (gv - fnp.conjugate(v) * fnp.expand_dims(fnp.real(gc), -2)
               - top * fnp.expand_dims(1j * fnp.imag(gc) / fnp.sum(top * v, axis=-2), -2))
    else:
        gvt = gv - v * fnp.expand_dims(gc, -2)
    gp = _gap_inverse(w) * fnp.matmul(_mT(v), gvt) + _diag_embed(gw)
    return _like_input(fnp.matmul(fnp.matmul(_mT(inv(v)), gp), _mT(v)), a)


def _like_input(ct, a):
    """A cotangent, real for a real matrix (the real part: the derivative along real
    perturbations), complex for a complex one."""
    return ct if _onp.iscomplexobj(value_for_shape(a)) else fnp.real(ct)


_EIG_CASES = [(((2, 2),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]

_eig = define_multi("linalg.eig", lambda a: tuple(_la.eig(a)),
                    lambda a: (shape_of(a)[:-1], shape_of(a)), _eig_vjp, _eig_jvp,
                    spec=Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid,
                              call=_eig_call), batch=batch_rules.stacked(2),
                    dtype_from_values=True)  # (numpy's eig: real or complex by the values)


@differentiable(_la.eig, Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid,
                               call=_eig_call), name="linalg.eig")
def eig(a):
    """numpy.linalg.eig, real or complex input (complex results where numpy gives them). For a
    complex matrix the derivative follows JAX's convention for complex inputs. Eigenvalue
    derivatives use the left and right eigenvectors (``dw = diag(V^-1 dA V)``); eigenvector
    derivatives follow numpy's normalisation (unit 2-norm, largest entry real) and divide by
    eigenvalue gaps (exactly equal eigenvalues contribute nothing: not meaningful there).
    The order of the eigenvalues is LAPACK's, which can jump under a tiny perturbation at
    special matrices (triangular ones, say); the derivative is that of each eigenvalue as
    returned at the point."""
    return EigResult(*_eig(fnp.asarray(a)))


def _eig_matching(a, ans):
    """``eig``'s eigenvectors, their columns in the order of ``eigvals``' result."""
    w, v = _eig(a)
    return fnp.matmul(v, _matching_order(w, ans))


def _matching_order_impl(wv, av):
    order = _onp.argmin(_onp.abs(av[..., :, None] - wv[..., None, :]), axis=-1)
    return (_onp.arange(wv.shape[-1])[:, None] == order[..., None, :]).astype(
        _onp.real(wv).dtype)


# the permutation matrix taking eig's eigenvalues to eigvals' order (the identity where LAPACK
# gave both in one order), from the values (no derivative)
_matching_order = values_only(_matching_order_impl, "linalg.eig_matching_order")


def _eigvals_vjp(g, ans, a):
    v = _eig_matching(a, ans)
    return _like_input(fnp.matmul(_mT(inv(v)) * fnp.expand_dims(g, -2), _mT(v)), a)


def _eigvals_jvp(t, ans, a):
    v = _eig_matching(a, ans)
    return fnp.sum(_mT(inv(v)) * fnp.matmul(t, v), axis=-2)


_EIGVALS = Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid, call=_eigvals_call)
_eigvals = define("linalg.eigvals", _la.eigvals, [_eigvals_vjp], [_eigvals_jvp],
                  spec=_EIGVALS, batch=batch_rules.stacked(2), dtype_from_values=True)


@differentiable(_la.eigvals, _EIGVALS, name="linalg.eigvals")
def eigvals(a):
    """numpy.linalg.eigvals, real or complex input: ``dw_i = (V^-1 dA V)_ii``, from the left
    and right eigenvectors. Needs distinct eigenvalues (a defective matrix has none of this). As for
    ``eig``, the order is LAPACK's, which can jump at special (e.g. triangular) matrices."""
    return _eigvals(fnp.asarray(a))

