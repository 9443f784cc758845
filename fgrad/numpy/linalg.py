"""fgrad.numpy.linalg: numpy.linalg with derivatives.

The factorizations (``inv``, ``det``, ``solve``, ``cholesky``, ``eigh``, ``svd``, ``qr``,
``eig``, ``pinv`` ...) are primitives whose forward values are numpy's own; their rules are
written with fgrad.numpy and with these primitives, so they can be differentiated again.
Several outputs (``slogdet``, ``eigh``, ``svd``, ``qr``, ``eig``) travel through
``define_multi``; the public functions give them back as numpy's namedtuples. Everything else
(``norm``, ``lstsq``, ``matrix_power``, ``cond``, ``tensorsolve`` ...) is composed of them.

Conventions (each is also stated on the function it concerns):

* Functions that read only one triangle of a symmetric input (``cholesky``, ``eigh``,
  ``eigvalsh``) are differentiated as functions of the symmetric part ``(a + a^T) / 2``: the
  gradient is symmetric, and a tangent is symmetrised before it is used.
* Eigenvector and singular-vector derivatives divide by eigenvalue (singular-value) gaps. Where
  two values are exactly equal the corresponding term is left out (never ``inf``/``nan``): the
  derivatives of the values themselves stay exact there, the vectors' have no meaning there.
  ``eigvalsh``, ``svdvals`` and ``eigvals`` do not go through the vectors' derivatives at all.
* Singular inputs: ``inv``, ``det``, ``slogdet``, ``solve`` need an invertible matrix for their
  derivative (numpy's ``LinAlgError`` otherwise); ``pinv`` and ``lstsq`` assume full rank.
* Norms at zero: every norm has gradient 0 at ``x = 0`` (the subgradient of least norm), and
  ``ord=0`` (a count) has zero derivative everywhere.
* Only real inputs are differentiated by the decompositions; complex traced input is refused
  by name. ``inv``, ``det``, ``solve``, ``matrix_power``, ``multi_dot``, the products and the
  2-norm/Frobenius norm take complex values (JAX's convention).
"""
import operator

import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define, define_multi
from ..tracer import contains_tracer, innermost, strip
from .broadcasting import dtype_of, mask, shape_of, unbroadcast
from .namespace import mirror, zero_derivative
from .wrapping import differentiable, unsupported_kwargs, with_numpy_values

_la = _onp.linalg

# numpy's result types (namedtuples, which fgrad treats as pytree nodes)
SlogdetResult = type(_la.slogdet(_onp.eye(1)))
EighResult = type(_la.eigh(_onp.eye(1)))
SVDResult = type(_la.svd(_onp.eye(1)))
QRResult = type(_la.qr(_onp.eye(1)))
EigResult = type(_la.eig(_onp.eye(1)))


# --- helpers ---------------------------------------------------------------------------

def _ndim(x):
    return len(shape_of(x))


def _mT(x):
    """The matrix transpose of the last two axes."""
    return fnp.swapaxes(x, -1, -2)


def _eye(n, like):
    return _onp.eye(n, dtype=dtype_of(like))


def _sym(x):
    return (x + _mT(x)) * 0.5


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
    tie = mask(innermost(d) == 0, d)
    return (1 - tie) / (d + tie)


def _noted(np_fn, note):
    return f"fgrad: {note}\n\n{np_fn.__doc__ or ''}"


def _real_only(name, *xs):
    for x in xs:
        if _onp.iscomplexobj(innermost(x)):
            raise NotImplementedError(
                f"fgrad.numpy.linalg.{name}: complex input is not supported on traced values "
                "(its derivative rules are written for real matrices); differentiate the real "
                "and imaginary parts separately, or call it on fgrad.stop_gradient(x).")


def _shift(a):
    """``c I`` such that ``a + c I``, with ``a``'s entries in [-1, 1], is far from singular
    (Gershgorin: each eigenvalue is at least ``c - n >= 1`` away from 0)."""
    n = shape_of(a)[-1]
    return max(4, n + 1) * _eye(n, a)


def _shifted(f, a, *rest, **params):
    """Spec.call: a well-conditioned square matrix from a draw in [-1, 1]."""
    return f(a + _shift(a), *rest, **params)


def _spd(a):
    """A symmetric positive definite matrix (eigenvalues in [1, 1 + n^2]) from ``a`` in
    [-1, 1]."""
    return fnp.matmul(a, _mT(a)) + _eye(shape_of(a)[-1], a)


# --- inverse, determinant, solve -------------------------------------------------------

SQUARE = [(((2, 2),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]

inv = define(
    "linalg.inv", _la.inv,
    [lambda g, ans, a: -fnp.matmul(fnp.matmul(_mT(ans), g), _mT(ans))],
    [lambda t, ans, a: -fnp.matmul(fnp.matmul(ans, t), ans)],
    spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted),
    doc=_noted(_la.inv, "the derivative -inv(a) da inv(a) needs an invertible a (at a "
                        "singular one numpy raises LinAlgError); complex input is supported."))


def _inv_T(a):
    return _mT(inv(a))


det = define(
    "linalg.det", _la.det,
    [lambda g, ans, a: _lift(g * ans) * _inv_T(a)],
    [lambda t, ans, a: ans * fnp.sum(_inv_T(a) * t, axis=(-2, -1))],
    spec=Spec(SQUARE + [(((2, 2),), {"negative": True})], domain=(-1.0, 1.0),
              call=lambda f, a, negative=False: _shifted(f, -a if negative else a)),
    doc=_noted(_la.det, "the gradient det(a) inv(a)^T is computed through inv(a), so a "
                        "singular a raises LinAlgError rather than giving its adjugate; "
                        "complex input is supported."))

_slogdet = define_multi(
    "linalg.slogdet", lambda a: tuple(_la.slogdet(a)),
    lambda a: (shape_of(a)[:-2],) * 2,
    # the sign is locally constant (zero derivative); log|det a| has gradient inv(a)^T
    lambda i, gs, outs, a: _lift(gs[1]) * _inv_T(a),
    lambda ts, outs, a: (None, fnp.sum(_inv_T(a) * ts[0], axis=(-2, -1))),
    spec=Spec([(((2, 2),), {}), (((2, 3, 3),), {})], domain=(-1.0, 1.0), call=_shifted))


@differentiable(_la.slogdet, Spec(SQUARE + [(((3, 3),), {"negative": True})],
                                   domain=(-1.0, 1.0),
                                   call=lambda f, a, negative=False:
                                   _shifted(f, -a if negative else a)),
                 name="linalg.slogdet")
def slogdet(a):
    """numpy.linalg.slogdet: the sign has zero derivative, ``logabsdet`` has gradient
    ``inv(a)^T`` (real input)."""
    a = fnp.asarray(a)
    _real_only("slogdet", a)
    return SlogdetResult(*_slogdet(a))


def _solve_parts(x, b):
    """The solution ``x`` as a stack of matrices, and whether it was a stack of vectors
    (numpy 2: ``b`` is a vector only when it is 1-d)."""
    return (fnp.expand_dims(x, -1), True) if _ndim(b) == 1 else (x, False)


def _solve_vjp_a(g, ans, a, b):
    x, vec = _solve_parts(ans, b)
    g = fnp.expand_dims(g, -1) if vec else g
    gb = solve(_mT(a), g)
    return unbroadcast(-fnp.matmul(gb, _mT(x)), shape_of(a))


def _solve_vjp_b(g, ans, a, b):
    if _ndim(b) == 1:
        gb = solve(_mT(a), fnp.expand_dims(g, -1))
        return fnp.reshape(unbroadcast(gb, shape_of(b) + (1,)), shape_of(b))
    return unbroadcast(solve(_mT(a), g), shape_of(b))


def _solve_jvp_a(t, ans, a, b):
    x, vec = _solve_parts(ans, b)
    dx = -solve(a, fnp.matmul(t, x))
    return fnp.reshape(dx, shape_of(ans)) if vec else dx


def _solve_jvp_b(t, ans, a, b):
    dx = solve(a, t)
    return dx if shape_of(dx) == shape_of(ans) else fnp.broadcast_to(dx, shape_of(ans))


solve = define(
    "linalg.solve", _la.solve, [_solve_vjp_a, _solve_vjp_b], [_solve_jvp_a, _solve_jvp_b],
    spec=Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {}), (((2, 3, 3), (3,)), {}),
               (((2, 2, 2), (2, 2, 1)), {}), (((2, 2), (3, 2, 2)), {})],
              domain=(-1.0, 1.0), call=_shifted),
    doc=_noted(_la.solve, "derivatives in a (-inv(a) da x) and b, for b a vector (1-d) or "
                          "a stack of matrices, batch dimensions broadcast; a must be "
                          "invertible; complex input is supported."))


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
    """Plain +-1 per column of ``v``: the sign of the real part of its largest entry, shaped
    ``(..., 1, k)`` to multiply ``v`` with."""
    vv = innermost(v)
    top = _onp.take_along_axis(vv, _onp.argmax(_onp.abs(vv), axis=-2)[..., None, :], axis=-2)
    return _onp.where(_onp.real(top) < 0, -1, 1).astype(_onp.real(vv).dtype)


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


def _sym_input(a):
    return a + _mT(a)


def _eigh_valid(a):
    w, v = _la.eigh(_sym_input(_onp.asarray(a, float)))
    return _min_gap(w) > 0.1 and _clear_top(v)


def _eigh_call(f, a, **params):
    s = _sym_input(a)
    shape = shape_of(s)
    w, v = _outputs(f(s, **params), [shape[:-1], shape])
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


def _qr_call(f, a, mode="reduced"):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    out = f(a, mode=mode)
    if mode == "r":
        r = out
        return r * _onp.sign(_onp.diagonal(innermost(r), axis1=-2, axis2=-1))[..., :, None]
    q, r = _outputs(out, [(*batch, m, k), (*batch, k, n)])
    sign = _onp.sign(_onp.diagonal(innermost(r), axis1=-2, axis2=-1))[..., None, :]
    return q * sign, r * _mT(sign)


# LAPACK's order of the eigenvalues of a general matrix can jump under a tiny perturbation
# (at a triangular matrix, say); the specs sort them by ``real + imag / 2``, a key that is
# distinct for the draws ``_eig_valid`` accepts.

def _eig_key(w):
    w = _onp.asarray(w)
    return w.real + 0.5 * w.imag


def _eig_valid(a):
    a = _onp.asarray(a, float)
    w, v = _la.eig(a)
    # badly scaled draws (entries like 1e-38 beside 1) get inaccurate vectors from LAPACK:
    # keep draws whose decomposition is accurate and whose eigenvalues are well-conditioned
    accurate = _onp.max(_onp.abs(a @ v - v * w[..., None, :])) < 1e-9
    return bool(accurate and _onp.all(_la.cond(v) < 20) and _min_gap(w) > 0.2
                and _min_gap(_eig_key(w)) > 0.05 and _clear_top(v, 0.05))


def _sorting(w):
    """A plain permutation matrix ``p`` (``(..., n, n)``): ``w @ p`` is sorted by the key."""
    order = _onp.argsort(_eig_key(innermost(w)), axis=-1)
    n = shape_of(w)[-1]
    return mask(_onp.arange(n)[:, None] == order[..., None, :], _onp.real(innermost(w)))


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


# --- Cholesky --------------------------------------------------------------------------

def _phi(like):
    """The lower triangle with the diagonal halved, as a 0/0.5/1 mask."""
    n = shape_of(like)[-1]
    return mask(_onp.tri(n, dtype=bool), like) - 0.5 * _eye(n, like)


def _cholesky_jvp(t, ans, a, upper=False):
    lo = _mT(ans) if upper else ans
    x = solve(lo, _sym(t))                                   # L^-1 sym(t)
    dl = fnp.matmul(lo, solve(lo, _mT(x)) * _phi(lo))        # L phi(L^-1 sym(t) L^-T)
    return _mT(dl) if upper else dl


def _cholesky_vjp(g, ans, a, upper=False):
    lo = _mT(ans) if upper else ans
    g = _mT(g) if upper else g
    z = solve(_mT(lo), fnp.matmul(_mT(lo), g) * _phi(lo))  # L^-T phi(L^T g)
    return _sym(_mT(solve(_mT(lo), _mT(z))))                # sym(L^-T phi(L^T g) L^-1)


_SPD = Spec([(((2, 2),), {}), (((3, 3),), {"upper": True}), (((2, 3, 3),), {})],
            domain=(-1.0, 1.0), call=lambda f, a, **p: f(_spd(a), **p))

_cholesky = define("linalg.cholesky", lambda a, upper=False: _la.cholesky(a, upper=upper),
                   [_cholesky_vjp], [_cholesky_jvp], spec=_SPD)


@differentiable(_la.cholesky, _SPD, name="linalg.cholesky")
def cholesky(a, /, *, upper=False):
    """numpy.linalg.cholesky. numpy reads one triangle of ``a``; fgrad differentiates it as a
    function of the symmetric part ``(a + a^T) / 2``, so the gradient is symmetric (for a
    symmetric positive definite ``a`` the values are the same)."""
    a = fnp.asarray(a)
    _real_only("cholesky", a)
    return _cholesky(a, upper=bool(upper))


# --- symmetric eigenproblem --------------------------------------------------------------

def _eigh_jvp(ts, outs, a, UPLO="L"):
    w, v = outs
    m = fnp.matmul(fnp.matmul(_mT(v), _sym(ts[0])), v)
    return _diag(m), fnp.matmul(v, _gap_inverse(w) * m)


def _eigh_vjp(i, gs, outs, a, UPLO="L"):
    (gw, gv), (w, v) = gs, outs
    inner = _diag_embed(gw) + _gap_inverse(w) * fnp.matmul(_mT(v), gv)
    return _sym(fnp.matmul(fnp.matmul(v, inner), _mT(v)))


_EIGH = Spec([(((2, 2),), {}), (((3, 3),), {"UPLO": "U"}), (((2, 3, 3),), {})],
             domain=(-1.0, 1.0), valid=_eigh_valid, call=_eigh_call)

_eigh = define_multi("linalg.eigh", lambda a, UPLO="L": tuple(_la.eigh(a, UPLO=UPLO)),
                     lambda a, UPLO="L": (shape_of(a)[:-1], shape_of(a)),
                     _eigh_vjp, _eigh_jvp, spec=_EIGH)


@differentiable(_la.eigh, _EIGH, name="linalg.eigh")
def eigh(a, UPLO="L"):
    """numpy.linalg.eigh. Differentiated as a function of the symmetric part of ``a`` (numpy
    reads one triangle). Eigenvector derivatives divide by eigenvalue gaps ``w_j - w_i``; a
    pair of exactly equal eigenvalues contributes nothing (no inf/nan), which is exact for
    functions of the eigenvalues alone but otherwise meaningless: at a repeated eigenvalue the
    eigenvectors are not differentiable. Use ``eigvalsh`` for eigenvalues alone."""
    a = fnp.asarray(a)
    _real_only("eigh", a)
    return EighResult(*_eigh(a, UPLO=_uplo(UPLO)))


def _uplo(UPLO):
    u = str(UPLO).upper()
    if u not in ("L", "U"):
        raise ValueError("UPLO argument must be 'L' or 'U'")
    return u


def _eigvalsh_vjp(g, ans, a, UPLO="L"):
    _, v = _eigh(a, UPLO=UPLO)
    return fnp.matmul(v * fnp.expand_dims(g, -2), _mT(v))


def _eigvalsh_jvp(t, ans, a, UPLO="L"):
    _, v = _eigh(a, UPLO=UPLO)
    return fnp.sum(v * fnp.matmul(_sym(t), v), axis=-2)


_EIGVALSH = Spec([(((2, 2),), {}), (((3, 3),), {"UPLO": "U"}), (((2, 3, 3),), {})],
                 domain=(-1.0, 1.0), valid=_eigh_valid,
                 call=lambda f, a, **p: f(_sym_input(a), **p))

_eigvalsh = define("linalg.eigvalsh", lambda a, UPLO="L": _la.eigvalsh(a, UPLO=UPLO),
                   [_eigvalsh_vjp], [_eigvalsh_jvp], spec=_EIGVALSH)


@differentiable(_la.eigvalsh, _EIGVALSH, name="linalg.eigvalsh")
def eigvalsh(a, UPLO="L"):
    """numpy.linalg.eigvalsh, differentiated as a function of the symmetric part of ``a``.
    The gradient ``V diag(g) V^T`` needs no eigenvalue gaps, so it is exact at repeated
    eigenvalues too (for functions symmetric in the repeated ones, such as sums); second
    derivatives do divide by gaps."""
    a = fnp.asarray(a)
    _real_only("eigvalsh", a)
    return _eigvalsh(a, UPLO=_uplo(UPLO))


# --- singular value decomposition ----------------------------------------------------------

def _svd_shapes(a, full_matrices=False):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    return ((*batch, m, m if full_matrices else k), (*batch, k),
            (*batch, n if full_matrices else k, n))


def _svd_jvp(ts, outs, a, full_matrices=False):
    (t,), (u, s, vh) = ts, outs
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    v = _mT(vh)
    p = fnp.matmul(fnp.matmul(_mT(u), t), v)                 # U^T dA V
    f = _gap_inverse(s * s)                                   # 1 / (s_j^2 - s_i^2)
    s_row, s_col = fnp.expand_dims(s, -2), fnp.expand_dims(s, -1)
    du = fnp.matmul(u, f * (p * s_row + s_col * _mT(p)))
    dv = fnp.matmul(v, f * (s_col * p + _mT(p) * s_row))
    if m > k:  # the part of dA V outside span(U)
        du = du + (fnp.matmul(t, v) - fnp.matmul(u, p)) / s_row
    if n > k:
        dv = dv + (fnp.matmul(_mT(t), u) - fnp.matmul(v, _mT(p))) / s_row
    return du, _diag(p), _mT(dv)


def _svd_vjp(i, gs, outs, a, full_matrices=False):
    (gu, gsv, gvh), (u, s, vh) = gs, outs
    m, n = shape_of(a)[-2:]
    k = min(m, n)
    v, gv = _mT(vh), _mT(gvh)
    f = _gap_inverse(s * s)
    s_row, s_col = fnp.expand_dims(s, -2), fnp.expand_dims(s, -1)
    j = f * fnp.matmul(_mT(u), gu)
    kk = f * fnp.matmul(_mT(v), gv)
    inner = _diag_embed(gsv) + (j + _mT(j)) * s_row + s_col * (kk + _mT(kk))
    ga = fnp.matmul(fnp.matmul(u, inner), vh)
    if m > k:
        ga = ga + fnp.matmul((gu - fnp.matmul(u, fnp.matmul(_mT(u), gu))) / s_row, vh)
    if n > k:
        ga = ga + fnp.matmul(u, _mT((gv - fnp.matmul(v, fnp.matmul(_mT(v), gv))) / s_row))
    return ga


_SVD_CASES = [(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}), (((2, 3, 2),), {})]

_svd = define_multi("linalg.svd",
                    lambda a, full_matrices=False: tuple(_la.svd(a, full_matrices)),
                    _svd_shapes, _svd_vjp, _svd_jvp,
                    spec=Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid,
                              call=_svd_call))


def _svdvals_vjp(g, ans, a):
    u, _, vh = _svd(a)
    # an exactly zero singular value is a kink (|s|): its derivative is taken as 0
    g = g * (1 - mask(innermost(ans) == 0, ans))
    return fnp.matmul(u * fnp.expand_dims(g, -2), vh)


def _svdvals_jvp(t, ans, a):
    u, _, vh = _svd(a)
    ds = fnp.sum(u * fnp.matmul(t, _mT(vh)), axis=-2)
    return ds * (1 - mask(innermost(ans) == 0, ans))


_svdvals = define("linalg.svdvals", lambda a: _la.svd(a, compute_uv=False),
                  [_svdvals_vjp], [_svdvals_jvp],
                  spec=Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid))


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
    """numpy.linalg.svd, real input. ``compute_uv=False`` gives the singular values, whose
    derivative ``u_i v_i^T`` needs no gaps (at repeated singular values it is exact for
    functions symmetric in them, such as sums and norms; an exactly zero singular value, a
    kink, has derivative 0). The singular vectors' derivatives divide by
    ``s_j^2 - s_i^2`` (pairs of exactly equal singular values contribute nothing, as in
    ``eigh``: not meaningful there) and, for non-square input, by the singular values.
    ``full_matrices=True`` is refused for non-square input on traced values (the completed
    basis is not unique, so it has no derivative); ``hermitian=True`` is refused."""
    a = fnp.asarray(a)
    _real_only("svd", a)
    _refuse_hermitian("svd", hermitian)
    if not compute_uv:
        return _svdvals(a)
    m, n = shape_of(a)[-2:]
    if full_matrices and m != n:
        raise NotImplementedError(
            "fgrad.numpy.linalg.svd: full_matrices=True on a non-square traced matrix: the "
            "extra columns of u (or rows of vh) are any orthonormal completion, which has no "
            "derivative; use full_matrices=False.")
    return SVDResult(*_svd(a, full_matrices=bool(full_matrices)))


@differentiable(_la.svdvals, Spec(_SVD_CASES, domain=(-1.0, 1.0), valid=_svd_valid),
                 name="linalg.svdvals")
def svdvals(x, /):
    """numpy.linalg.svdvals, real input: derivative ``u_i v_i^T`` of each singular value (at
    repeated singular values exact for functions symmetric in them, such as sums and norms;
    an exactly zero one, a kink, has derivative 0)."""
    x = fnp.asarray(x)
    _real_only("svdvals", x)
    return _svdvals(x)


# --- QR ----------------------------------------------------------------------------------

def _right_solve(y, r):
    """``y r^-1``."""
    return _mT(solve(_mT(r), _mT(y)))


def _qr_square_jvp(q, r, t):
    """(dQ, dR) for ``a = q r`` with ``q`` of orthonormal columns and ``r`` square."""
    tr = _right_solve(t, r)                                  # dA R^-1
    c = fnp.matmul(_mT(q), tr)
    low = c * _strictly_lower(c)
    om = low - _mT(low)                                      # Q^T dQ (skew)
    dq = fnp.matmul(q, om)
    if shape_of(q)[-2] > shape_of(q)[-1]:
        dq = dq + tr - fnp.matmul(q, c)                      # (I - Q Q^T) dA R^-1
    return dq, fnp.matmul(c - om, r)


def _qr_square_vjp(q, r, gq, gr):
    qg = fnp.matmul(_mT(q), gq)
    rg = fnp.matmul(gr, _mT(r))
    mm = qg - rg
    x = rg + (mm - _mT(mm)) * _strictly_lower(mm)
    return _mT(solve(r, _mT(gq + fnp.matmul(q, x - qg))))   # (...) R^-T


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
    dr2 = fnp.matmul(_mT(dq), a2) + fnp.matmul(_mT(q), t2)  # R2 = Q^T A2
    return dq, fnp.concatenate([dr1, dr2], axis=-1)


def _qr_vjp(i, gs, outs, a, mode="reduced"):
    (gq, gr), (q, r) = gs, outs
    m, n = shape_of(a)[-2:]
    if m >= n:
        return _qr_square_vjp(q, r, gq, gr)
    (r1, _), (_, a2), (gr1, gr2) = _qr_split(r), _qr_split(a), _qr_split(gr)
    ga1 = _qr_square_vjp(q, r1, gq + fnp.matmul(a2, _mT(gr2)), gr1)
    return fnp.concatenate([ga1, fnp.matmul(q, gr2)], axis=-1)


def _qr_shapes(a, mode="reduced"):
    *batch, m, n = shape_of(a)
    k = min(m, n)
    return (*batch, m, k), (*batch, k, n)


_qr = define_multi("linalg.qr", lambda a, mode="reduced": tuple(_la.qr(a, mode=mode)),
                   _qr_shapes, _qr_vjp, _qr_jvp,
                   spec=Spec([(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}),
                              (((2, 3, 2),), {})],
                             domain=(-1.0, 1.0), valid=_qr_valid, call=_qr_call))


@differentiable(_la.qr, Spec([(((3, 3),), {}), (((3, 2),), {}), (((2, 4, 3),), {}),
                               (((2, 3),), {"mode": "complete"}), (((3, 2),), {"mode": "r"})],
                              domain=(-1.0, 1.0), valid=_qr_valid, call=_qr_call),
                 name="linalg.qr")
def qr(a, mode="reduced"):
    """numpy.linalg.qr, real input, modes 'reduced', 'r' and 'complete' (for m <= n, where it
    equals 'reduced'). R's diagonal must be nonzero (full rank): the rules divide by it.
    On traced values 'complete' with m > n is refused (the completed columns of q are any
    orthonormal completion, with no derivative), and so is 'raw' (Householder reflectors)."""
    a = fnp.asarray(a)
    _real_only("qr", a)
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
        _la.qr(strip(a), mode=mode)  # numpy's own error for an unknown mode
    return QRResult(*_qr(a, mode=mode))


# --- general eigenproblem ------------------------------------------------------------------
# numpy normalises each eigenvector to unit 2-norm with its largest entry real (LAPACK's
# geev); the derivative keeps both: Re(v^H dv) = 0 and Im(dv_k / v_k) = 0 at that entry k.

def _largest(v):
    """A plain 0/1 mask of each column's largest entry (by modulus)."""
    vv = innermost(v)
    k = _onp.argmax(_onp.abs(vv), axis=-2)
    return mask(_onp.arange(vv.shape[-2])[:, None] == k[..., None, :], _onp.real(vv))


def _eig_jvp(ts, outs, a):
    (t,), (w, v) = ts, outs
    p = fnp.matmul(fnp.matmul(inv(v), t), v)
    vt = fnp.matmul(v, _gap_inverse(w) * p)
    d = fnp.sum(fnp.conjugate(v) * vt, axis=-2)
    if _onp.iscomplexobj(innermost(v)):
        top = _largest(v)
        e = fnp.sum(top * vt, axis=-2) / fnp.sum(top * v, axis=-2)
        c = -fnp.real(d) - 1j * fnp.imag(e)
    else:
        c = -d
    return _diag(p), vt + v * fnp.expand_dims(c, -2)


def _eig_vjp(i, gs, outs, a):
    (gw, gv), (w, v) = gs, outs
    gc = fnp.sum(v * gv, axis=-2)
    if _onp.iscomplexobj(innermost(v)):
        top = _largest(v)
        gvt = (gv - fnp.conjugate(v) * fnp.expand_dims(fnp.real(gc), -2)
               - top * fnp.expand_dims(1j * fnp.imag(gc) / fnp.sum(top * v, axis=-2), -2))
    else:
        gvt = gv - v * fnp.expand_dims(gc, -2)
    gp = _gap_inverse(w) * fnp.matmul(_mT(v), gvt) + _diag_embed(gw)
    return fnp.real(fnp.matmul(fnp.matmul(_mT(inv(v)), gp), _mT(v)))


_EIG_CASES = [(((2, 2),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]

_eig = define_multi("linalg.eig", lambda a: tuple(_la.eig(a)),
                    lambda a: (shape_of(a)[:-1], shape_of(a)), _eig_vjp, _eig_jvp,
                    spec=Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid,
                              call=_eig_call))


@differentiable(_la.eig, Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid,
                               call=_eig_call), name="linalg.eig")
def eig(a):
    """numpy.linalg.eig, real input (complex results where numpy gives them). Eigenvalue
    derivatives use the left and right eigenvectors (``dw = diag(V^-1 dA V)``); eigenvector
    derivatives follow numpy's normalisation (unit 2-norm, largest entry real) and divide by
    eigenvalue gaps (exactly equal eigenvalues contribute nothing: not meaningful there).
    The order of the eigenvalues is LAPACK's, which can jump under a tiny perturbation at
    special matrices (triangular ones, say); the derivative is that of each eigenvalue as
    returned at the point."""
    a = fnp.asarray(a)
    _real_only("eig", a)
    return EigResult(*_eig(a))


def _eig_matching(a, ans):
    """``eig``'s eigenvectors, their columns in the order of ``eigvals``' result."""
    w, v = _eig(a)
    wv, av = innermost(w), innermost(ans)
    if not _onp.array_equal(wv, av):
        order = _onp.argmin(_onp.abs(av[..., :, None] - wv[..., None, :]), axis=-1)
        v = fnp.matmul(v, mask(_onp.arange(wv.shape[-1])[:, None] == order[..., None, :],
                               _onp.real(wv)))
    return v


def _eigvals_vjp(g, ans, a):
    v = _eig_matching(a, ans)
    return fnp.real(fnp.matmul(_mT(inv(v)) * fnp.expand_dims(g, -2), _mT(v)))


def _eigvals_jvp(t, ans, a):
    v = _eig_matching(a, ans)
    return fnp.sum(_mT(inv(v)) * fnp.matmul(t, v), axis=-2)


_EIGVALS = Spec(_EIG_CASES, domain=(-1.0, 1.0), valid=_eig_valid, call=_eigvals_call)
_eigvals = define("linalg.eigvals", _la.eigvals, [_eigvals_vjp], [_eigvals_jvp],
                  spec=_EIGVALS)


@differentiable(_la.eigvals, _EIGVALS, name="linalg.eigvals")
def eigvals(a):
    """numpy.linalg.eigvals, real input: ``dw_i = (V^-1 dA V)_ii``, from the left and right
    eigenvectors. Needs distinct eigenvalues (a defective matrix has none of this). As for
    ``eig``, the order is LAPACK's, which can jump at special (e.g. triangular) matrices."""
    a = fnp.asarray(a)
    _real_only("eigvals", a)
    return _eigvals(a)


# --- pseudo-inverse ------------------------------------------------------------------------

def _pinv_jvp(t, ans, a, kw=()):
    x, tt = ans, _mT(t)
    m, n = shape_of(a)[-2:]
    out = -fnp.matmul(fnp.matmul(x, t), x)
    out = out + fnp.matmul(fnp.matmul(fnp.matmul(x, _mT(x)), tt),
                           _eye(m, x) - fnp.matmul(a, x))
    return out + fnp.matmul(fnp.matmul(_eye(n, x) - fnp.matmul(x, a), tt),
                            fnp.matmul(_mT(x), x))


def _pinv_vjp(g, ans, a, kw=()):
    x, gt = ans, _mT(g)
    m, n = shape_of(a)[-2:]
    out = -fnp.matmul(fnp.matmul(_mT(x), g), _mT(x))
    out = out + fnp.matmul(fnp.matmul(_eye(m, x) - fnp.matmul(a, x), gt),
                           fnp.matmul(x, _mT(x)))
    return out + fnp.matmul(fnp.matmul(fnp.matmul(_mT(x), x), gt),
                            _eye(n, x) - fnp.matmul(x, a))


_PINV_CASES = [(((2, 2),), {}), (((3, 2),), {}), (((2, 3),), {}), (((2, 3, 2),), {})]

_pinv = define("linalg.pinv", lambda a, kw=(): _la.pinv(a, **dict(kw)),
               [_pinv_vjp], [_pinv_jvp],
               spec=Spec(_PINV_CASES, domain=(-1.0, 1.0), valid=_well_conditioned))

_NO_VALUE = object()


@differentiable(_la.pinv, Spec(_PINV_CASES + [(((3, 2),), {"rcond": 1e-3}),
                                               (((2, 3),), {"rtol": None})],
                                domain=(-1.0, 1.0), valid=_well_conditioned),
                 name="linalg.pinv")
def pinv(a, rcond=None, hermitian=False, *, rtol=_NO_VALUE):
    """numpy.linalg.pinv, real input. The derivative is that of full-rank input (Golub and
    Pereyra's formula). When ``rcond``/``rtol`` cut off singular values (rank-deficient
    input) it is the derivative along perturbations that keep the rank, which is the
    derivative of numpy's truncated pinv when the cut singular values are exactly 0, and only
    an approximation of it otherwise. ``hermitian=True`` is refused on traced values."""
    a = fnp.asarray(a)
    _real_only("pinv", a)
    _refuse_hermitian("pinv", hermitian)
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
    """numpy.linalg.lstsq, real input. The solution is ``pinv(a, rcond) @ b``, differentiated
    as such: exact for full column rank (and for full row rank, the least-norm solution); for
    rank-deficient ``a`` see ``pinv``. The residuals are differentiated too (they are given,
    as in numpy, when the rank is N < M); the rank has no derivative; the singular values are
    ``svdvals(a)``'s."""
    a, b = fnp.asarray(a), fnp.asarray(b)
    _real_only("lstsq", a, b)
    ref = _la.lstsq(strip(a), strip(b), rcond)  # numpy's errors, and its rank
    m, n = shape_of(a)[-2:]
    if rcond is None:  # numpy's default, for its double-precision computation
        rcond = _onp.finfo(_onp.float64).eps * max(m, n)
    x = fnp.matmul(_pinv(a, kw=(("rcond", rcond),)), b)
    rank = ref[2]
    resid = ref[1]
    if rank == n and m > n:
        r = fnp.matmul(a, x) - b
        resid = fnp.reshape(fnp.sum(r * r, axis=0), shape_of(ref[1]))
    # numpy's singular values come from another LAPACK routine than svdvals': the traced ones
    # get numpy's values from ``numpy_values``, plain ones are taken from numpy directly
    return x, resid, rank, _svdvals(a) if contains_tracer(a) else ref[3]


def _square(a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise _la.LinAlgError("Last 2 dimensions of the array must be square")


@differentiable(_la.matrix_power, Spec([(((2, 2),), {"n": 3}), (((3, 3),), {"n": 2}),
                                         (((2, 2, 2),), {"n": 5}), (((2, 2),), {"n": -1}),
                                         (((3, 3),), {"n": -3}), (((2, 2),), {"n": 1})],
                                        domain=(-1.0, 1.0), call=_shifted),
                 name="linalg.matrix_power", numpy_values=True)
def matrix_power(a, n):
    """numpy.linalg.matrix_power, by numpy's own sequence of products (and ``inv`` for
    negative ``n``); ``n = 0`` gives the identity, with zero derivative."""
    a = fnp.asarray(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    _square(a)
    if n == 0:
        return _la.matrix_power(strip(a), 0)
    if n < 0:
        a, n = inv(a), -n
    result, z = None, None
    while n > 0:
        z = a if z is None else fnp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else fnp.matmul(result, z)
    return result


# --- norms -------------------------------------------------------------------------------
# Every norm has gradient 0 at x = 0 (the subgradient of least norm): the square root and the
# p-th root are taken as 0, with zero derivative, where their argument is exactly 0. Kinks
# inside (|x_i| = 0, ties in max/min) follow fgrad's conventions for abs, max and min.

def _root0(s, p=2):
    """``s ** (1/p)``, with value and derivative 0 where ``s`` is exactly 0."""
    zero = mask(innermost(s) == 0, s)
    r = fnp.sqrt(s + zero) if p == 2 else (s + zero) ** (1.0 / p)
    return r * (1 - zero)


def _sum_squares(x, axis, keepdims):
    sq = fnp.real(fnp.conjugate(x) * x) if _onp.iscomplexobj(innermost(x)) else x * x
    return fnp.sum(sq, axis=axis, keepdims=keepdims)


def _real_norm(name, x, ord):
    if ord not in (None, 2, "fro", "f"):
        _real_only(f"{name} (ord={ord!r})", x)


def _vector_norm(x, ord, axis, keepdims, value):
    """The vector norm of ``x`` over the axes ``axis`` (a tuple); ``value`` is numpy's."""
    if ord is None or ord == 2:
        return _root0(_sum_squares(x, axis, keepdims))
    _real_norm("norm", x, ord)
    if ord == _onp.inf:
        return fnp.max(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == -_onp.inf:
        return fnp.min(fnp.abs(x), axis=axis, keepdims=keepdims)
    if ord == 0:  # the number of nonzero entries: zero derivative
        return value
    if ord == 1:
        return fnp.sum(fnp.abs(x), axis=axis, keepdims=keepdims)
    p = float(ord)
    ax = fnp.abs(x)
    zero = mask(innermost(ax) == 0, ax)  # |0|^p is left out (it is 0 or, for p < 0, inf)
    r = _root0(fnp.sum((ax + zero) ** p * (1 - zero), axis=axis, keepdims=keepdims), p)
    if p < 0:  # a zero entry makes the norm 0 around it (it is about |x_i|): derivative 0
        hit = _onp.any(innermost(zero) != 0, axis=axis, keepdims=keepdims)
        r = r * (1 - mask(hit, r))
    return r


def _matrix_norm(x, ord, row, col, keepdims):
    nd = _ndim(x)
    if ord in (None, "fro", "f"):
        r = _root0(_sum_squares(x, (row, col), False))
    else:
        _real_norm("norm", x, ord)
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
    differentiated for the 2-norm and Frobenius norm only."""
    x = fnp.asarray(x)
    value = _la.norm(strip(x), ord, axis, keepdims)  # numpy's errors
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
    value = _la.vector_norm(strip(x), axis=axis, keepdims=keepdims, ord=ord)
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
    value = _la.matrix_norm(strip(x), keepdims=keepdims, ord=ord)
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
    """numpy.linalg.cond, real input: ``s_max / s_min`` for p None/2 (its inverse for -2),
    else ``norm(x, p) * norm(inv(x), p)`` (the kinks of those norms apply). Singular input
    (an infinite condition number) has no derivative."""
    x = fnp.asarray(x)
    _real_only("cond", x)
    _la.cond(strip(x), p)  # numpy's errors
    if p is None or p == 2 or p == -2:
        s = _svdvals(x)
        first, last = fnp.getitem(s, (Ellipsis, 0)), fnp.getitem(s, (Ellipsis, -1))
        return last / first if p == -2 else first / last
    return _norm(x, p, (-2, -1), False, None) * _norm(inv(x), p, (-2, -1), False, None)


matrix_rank = zero_derivative(_la.matrix_rank)


# --- tensor equations, chains of products ---------------------------------------------------

def _tensor_call(f, a, *rest, shape, **params):
    """Spec.call: a well-conditioned square draw, as the tensor of ``shape`` that
    ``tensorsolve``/``tensorinv`` turn back into it (after moving ``axes`` to the end)."""
    order = list(range(len(shape)))
    for k in params.get("axes") or ():
        order.remove(k)
        order.insert(len(shape), k)
    t = fnp.reshape(a + _shift(a), tuple(shape[i] for i in order))
    return f(fnp.transpose(t, tuple(int(i) for i in _onp.argsort(order))), *rest, **params)


@differentiable(_la.tensorsolve, Spec([(((6, 6), (2, 3)), {"shape": (2, 3, 6)}),
                                        (((4, 4), (4,)), {"shape": (4, 2, 2)}),
                                        (((4, 4), (2, 2)), {"shape": (2, 2, 2, 2),
                                                            "axes": (0, 2)})],
                                       domain=(-1.0, 1.0), call=_tensor_call),
                 name="linalg.tensorsolve", numpy_values=True)
def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve, by numpy's reshapes around ``solve``."""
    a, b = fnp.asarray(a), fnp.asarray(b)
    an = _ndim(a)
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = fnp.transpose(a, order)
    oldshape = shape_of(a)[-(an - _ndim(b)):]
    n = int(_onp.prod(oldshape, dtype=int))
    if int(_onp.prod(shape_of(a), dtype=int)) != n ** 2:
        raise _la.LinAlgError("Input arrays must satisfy the requirement "
                              "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(fnp.reshape(a, (n, n)), fnp.ravel(b))
    return fnp.reshape(x, oldshape)


@differentiable(_la.tensorinv, Spec([(((6, 6),), {"shape": (2, 3, 6)}),
                                      (((4, 4),), {"shape": (4, 2, 2), "ind": 1}),
                                      (((4, 4),), {"shape": (2, 2, 2, 2)})],
                                     domain=(-1.0, 1.0), call=_tensor_call),
                 name="linalg.tensorinv", numpy_values=True)
def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv, by numpy's reshapes around ``inv``."""
    a = fnp.asarray(a)
    shape = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    invshape = shape[ind:] + shape[:ind]
    n = int(_onp.prod(shape[ind:], dtype=int))
    return fnp.reshape(inv(fnp.reshape(a, (n, -1))), invshape)


@differentiable(_la.multi_dot, Spec([(((2, 3), (3, 4), (4, 2)), {}),
                                      (((3,), (3, 2), (2,)), {}), (((2, 2), (2, 3)), {}),
                                      (((3,), (3, 4), (4, 2), (2, 3)), {})],
                                     call=lambda f, *xs: f(list(xs))),
                 name="linalg.multi_dot", numpy_values=True)
def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot (numpy's values, from its cheapest order of products)."""
    unsupported_kwargs("linalg.multi_dot", {"out": out})
    arrays = [fnp.asarray(a) for a in arrays]
    _la.multi_dot([strip(a) for a in arrays])  # numpy's errors
    result = arrays[0]
    for a in arrays[1:]:
        result = fnp.dot(result, a)
    return result


# --- numpy.linalg's array-API functions over the last axes ---------------------------------

@differentiable(_la.trace, Spec([(((3, 3),), {}), (((2, 3, 4),), {"offset": 1}),
                                  (((2, 3),), {"offset": -1})]),
                 name="linalg.trace", numpy_values=True)
def trace(x, /, *, offset=0, dtype=None):
    """numpy.linalg.trace: the trace of the last two axes."""
    x = fnp.asarray(x)
    _la.trace(strip(x), offset=offset, dtype=dtype)  # numpy's errors
    d = fnp.diagonal(x, offset, -2, -1)
    return fnp.sum(d if dtype is None else fnp.astype(d, dtype), axis=-1)


@differentiable(_la.diagonal, Spec([(((3, 3),), {}), (((2, 3, 4),), {"offset": 1}),
                                     (((2, 3),), {"offset": -1})]),
                 name="linalg.diagonal")
def diagonal(x, /, *, offset=0):
    """numpy.linalg.diagonal: the diagonal of the last two axes."""
    x = fnp.asarray(x)
    _la.diagonal(strip(x), offset=offset)  # numpy's errors
    return fnp.diagonal(x, offset, -2, -1)


@differentiable(_la.matrix_transpose, Spec([(((2, 3),), {}), (((2, 3, 4),), {})]),
                 name="linalg.matrix_transpose")
def matrix_transpose(x, /):
    x = fnp.asarray(x)
    _la.matrix_transpose(strip(x))  # numpy's error for fewer than 2 dimensions
    return _mT(x)


@differentiable(_la.outer, Spec([(((3,), (2,)), {}), (((2,), (2,)), {})]),
                 name="linalg.outer")
def outer(x1, x2, /):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    _la.outer(strip(x1), strip(x2))  # numpy's error for arrays that are not 1-d
    return fnp.outer(x1, x2)


@differentiable(_la.cross, Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}),
                                  (((3, 2), (3, 1)), {"axis": 0})]),
                 name="linalg.cross", numpy_values=True)
def cross(x1, x2, /, *, axis=-1):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    _la.cross(strip(x1), strip(x2), axis=axis)  # numpy's error for vectors not of size 3
    return fnp.cross(x1, x2, axis=axis)


@differentiable(_la.vecdot, Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {}),
                                   (((3, 2), (3, 1)), {"axis": 0})]),
                 name="linalg.vecdot", numpy_values=True)
def vecdot(x1, x2, /, *, axis=-1):
    x1, x2 = fnp.asarray(x1), fnp.asarray(x2)
    _la.vecdot(strip(x1), strip(x2), axis=axis)  # numpy's errors
    return fnp.vecdot(x1, x2, axis=axis)


@differentiable(_la.matmul, Spec([(((3,), (3,)), {}), (((2, 3), (3, 2)), {}),
                                   (((2, 2, 3), (3,)), {})]),
                 name="linalg.matmul")
def matmul(x1, x2, /):
    return fnp.matmul(x1, x2)


@differentiable(_la.tensordot, Spec([(((2, 3), (3, 2)), {"axes": 1}),
                                      (((2, 3), (2, 3)), {}),
                                      (((2, 3, 2), (3, 2)), {"axes": ((1, 2), (0, 1))})]),
                 name="linalg.tensordot")
def tensordot(x1, x2, /, *, axes=2):
    return fnp.tensordot(x1, x2, axes=axes)


mirror(_la, globals(), "linalg.")
