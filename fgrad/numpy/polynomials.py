"""numpy's polynomial functions (coefficients highest power first): polyval, polyadd, polysub,
polymul, polyder, polyint, polydiv, polyfit, roots, vander, poly.

Each repeats numpy's own sequence of operations with fgrad.numpy, so values are numpy's bit for
bit; where numpy promotes (float32 coefficients times integer powers give float64), the cast
is made explicit so that a float32 input still gets a float32 gradient. ``polyfit`` and
``polydiv`` take numpy's values (``numpy_values``) and the composite's derivatives.
"""
import numpy as _onp

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Spec, define
from ..core.tracer import Tracer, read_value, value_for_shape
from .broadcasting import dtype_of, shape_of
from .namespace import values_only
from .products import convolve
from .wrapping import differentiable, unsupported_kwargs


def _ndim(x):
    return len(shape_of(x))


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


def separated(*xs):
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
    y = _onp.zeros(shape_of(x), dtype_of(x))
    for k in range(shape_of(p)[0]):
        y = y * x + p[k]
    return y


def _padded_pair(a1, a2):
    """Both coefficient vectors padded with leading zeros to one length (numpy's polyadd)."""
    a1, a2 = fnp.atleast_1d(a1), fnp.atleast_1d(a2)
    diff = shape_of(a2)[0] - shape_of(a1)[0]
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
    nonzero = _onp.flatnonzero(read_value(p))
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
        n = shape_of(p)[0] - 1
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
    if shape_of(k)[0] == 1 and m > 1:
        k = k[0] * _onp.ones(m, float)
    if shape_of(k)[0] < m:
        raise ValueError("k must be a scalar or a rank-1 array of length 1 or >m.")
    p = fnp.asarray(p)
    for i in range(m):
        powers = _onp.arange(shape_of(p)[0], 0, -1)
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
@differentiable(_onp.polydiv, Spec([(((4,), (2,)), {}), (((3,), (3,)), {}), (((2,), (3,)), {}),
                                   (((), ()), {})],
                                  valid=lambda u, v: _full_remainder(u, v)),
                numpy_values=True)
def polydiv(u, v):
    """Quotient and remainder by numpy's long division. Like numpy, the
    remainder loses its leading coefficients that are zero to within ``allclose`` (the ones
    the division eliminates, and any true remainder coefficient below 1e-8): the derivative
    of those is dropped with them."""
    _no_poly1d("polydiv", u, v)
    u, v = fnp.atleast_1d(u) + 0.0, fnp.atleast_1d(v) + 0.0
    dtype = _onp.result_type(dtype_of(u), dtype_of(v))
    m, n = shape_of(u)[0] - 1, shape_of(v)[0] - 1
    scale = 1. / v[0]
    r = u if dtype_of(u) == dtype else fnp.astype(u, dtype)
    quotient = []
    for k in range(m - n + 1):
        d = scale * r[k]
        quotient.append(d)
        r = fnp.index_set(r, r[k:k + n + 1] - d * v, slice(k, k + n + 1))
    q = fnp.stack(quotient) if quotient else _onp.zeros(1, dtype)
    while _onp.allclose(read_value(r)[0], 0, rtol=1e-14) and shape_of(r)[-1] > 1:
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
    if N <= 1:  # no power of x appears: a constant, whatever x's values (none is read)
        return _onp.vander(value_for_shape(x), N, increasing)
    columns = [_onp.ones(n, dtype), x if dtype_of(x) == dtype else fnp.astype(x, dtype)]
    while len(columns) < N:
        columns.append(columns[-1] * columns[1])
    return fnp.stack(columns if increasing else columns[::-1], axis=1)


def fit_call(f, x, y, *w, **params):
    """Spec call of a fit: a third drawn argument is its weights ``w``."""
    return f(x, y, w=w[0], **params) if w else f(x, y, **params)


# numpy's values come from an SVD-based lstsq
@differentiable(_onp.polyfit, Spec([(((4,), (4,)), {"deg": 1}), (((4,), (4,)), {"deg": 2}),
                                   (((3,), (3, 2)), {"deg": 1}),
                                   (((4,), (4,), (4,)), {"deg": 2})],
                                  domain=((-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)),
                                  valid=separated, call=fit_call),
                numpy_values=True)
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
    check_fit_points(x, y)
    if rcond is None:
        rcond = shape_of(x)[0] * _onp.finfo(dtype_of(x)).eps
    if w is not None:
        w = fnp.asarray(w) + 0.0
        if _ndim(w) != 1:
            raise TypeError("expected a 1-d array for weights")
        if shape_of(w)[0] != shape_of(y)[0]:
            raise TypeError("expected w and y to have the same length")
    return least_squares("polyfit", vander(x, order), y, w, rcond)


def check_fit_points(x, y):
    """numpy's checks of a fit's points and values (``polyfit``'s and ``chebfit``'s alike), in
    its order, with its messages."""
    if _ndim(x) != 1:
        raise TypeError("expected 1D vector for x")
    if shape_of(x)[0] == 0:
        raise TypeError("expected non-empty vector for x")
    if _ndim(y) < 1 or _ndim(y) > 2:
        raise TypeError("expected 1D or 2D array for y")
    if shape_of(x)[0] != shape_of(y)[0]:
        raise TypeError("expected x and y to have same length")


def least_squares(name, lhs, y, w, rcond):
    """The least-squares coefficients of ``y`` (1-d, or 2-d with a fit per column) by the
    columns of ``lhs``, each point weighted by ``w`` (None, or 1-d), as numpy's fits set it
    up (columns scaled to unit norm): through the normal equations, whose derivatives are the
    solution's. A rank-deficient fit has none and is refused (NaN in a batch or a graph,
    where the rank is not known yet)."""
    rhs = fnp.astype(y, _onp.result_type(dtype_of(lhs), dtype_of(y)))
    if w is not None:
        w = fnp.astype(w, dtype_of(lhs))
        lhs = lhs * w[:, None]
        rhs = rhs * (w[:, None] if _ndim(rhs) == 2 else w)
    order = shape_of(lhs)[1]
    scale = fnp.sqrt(fnp.sum(lhs * lhs, axis=0))
    scale = fnp.where(scale == 0, 1.0, scale)  # (a column of zeros, as numpy's fits take it)
    lhs = lhs / scale
    rank = _rank(lhs, rcond=rcond)
    if not isinstance(rank, Tracer) and rank < order:
        raise NotImplementedError(
            f"fgrad.numpy.{name}: the fit is rank-deficient (numpy warns that it 'may be "
            "poorly conditioned'), so its solution has no derivative; lower deg or use more "
            "distinct points")
    lhs_t = fnp.swapaxes(lhs, 0, 1)
    c = fnp.linalg.solve(fnp.matmul(lhs_t, lhs), fnp.matmul(lhs_t, rhs))
    c = c / (scale[:, None] if _ndim(c) == 2 else scale)
    if isinstance(rank, Tracer):  # a batch (vmap) or a staged fit: rank-deficient is NaN
        c = fnp.where(rank >= order, c, _onp.nan)
    return c


def _rank_impl(a, rcond):
    s = _onp.linalg.svd(a, compute_uv=False)
    return _onp.sum(s > rcond * s[0])


_rank = values_only(_rank_impl, "polyfit_rank")


# A simple root r of p (p(r) = 0, p'(r) != 0) moves by dr = -dp(r) / p'(r) when the
# coefficients move by dp. Written with fgrad.numpy on the output r itself, the rules are
# differentiable again (r's own derivative comes from this rule one level up).
def _roots_jvp(t, ans, p):
    return -polyval(t, ans) / polyval(polyder(p), ans)


def _roots_vjp(g, ans, p):
    n = shape_of(p)[0]
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
    v = read_value(r)
    return r[_onp.lexsort((_onp.imag(v), _onp.real(v)))]


roots = define(
    "roots", _onp.roots, [_roots_vjp], [_roots_jvp],
    spec=Spec([(((2,),), {}), (((3,),), {}), (((4,),), {})], valid=_simple_roots, call=_sorted),
    doc="fgrad: each root's derivative is that of a simple root, dr = -dp(r) / p'(r), real or "
        "complex (for a real p, JAX's convention: the cotangent's real part). At a multiple "
        "root p'(r) = 0 and the derivative is infinite (inf/nan): it is truly unbounded there. "
        "A leading zero coefficient keeps its derivative (the finite roots' sensitivity to "
        "it); trailing zeros give roots at 0, a simple one with its true derivative.\n\n"
        + _onp.roots.__doc__,
    # numpy's roots takes one polynomial, and drops its leading zeros (its output's length
    # depends on the values, its dtype too: real or complex roots): one call per example
    batch=batch_rules.one_at_a_time, dtype_from_values=True, shape_from_values=True)



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
    if _onp.iscomplexobj(value_for_shape(a)):
        zeros = _onp.asarray(read_value(z), complex)
        if _onp.all(_onp.sort(zeros) == _onp.sort(zeros.conjugate())):
            a = fnp.real(a)
    return a


