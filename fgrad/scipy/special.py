"""fgrad.scipy.special: scipy.special with derivatives, each rule beside its function.

Each function is a primitive whose implementation is scipy's own, so plain values give
exactly scipy's result; the rules are written with ``fgrad.numpy`` and with the functions of
this module (``gammaln' = digamma``, ``digamma' = polygamma(1, .)``, ``iv(v)' = (iv(v - 1) +
iv(v + 1)) / 2``), so every derivative can be differentiated again.

Arguments that are orders or counts (``polygamma``'s ``n``, the Bessel orders ``v``,
``expn``'s ``n``, ``multigammaln``'s ``d``) are static: derivatives are taken in the other
argument, and a traced order raises ``NoDerivativeRuleError`` naming it. Also refused by name
when traced: ``hyp1f1`` and ``hyp2f1`` in their parameters, and the Riemann ``zeta(x)`` (scipy
has no closed form for those derivatives; the Hurwitz ``zeta(x, q)`` is differentiable in both,
its exponent by Euler-Maclaurin's formula). ``gammainc`` and
``gammaincc`` are differentiable in ``a``, ``betainc`` and ``betaincc`` in ``a`` and ``b``
too, by series and continued fractions of fixed lengths (``_gammainc_d_a``,
``_betainc_d``), and with them the chi-square, gamma, F and Student's t distribution
functions in their parameters.
"""
import functools
import math

import numpy as _onp
import scipy.special as _sc

import fgrad.numpy as fnp
from ..core import table
from . import defining
from ..numpy import batch_rules, taylor_rules
from ..numpy.broadcasting import broadcast_like, cast_like, dtype_of, unbroadcast_like
from ..numpy.elementwise import UNARY, binary, unary
from ..numpy.wrapping import numpy_reference, refuse_traced, traced_version_of
from ..core.table import Spec
from ..numpy.namespace import values_only
from ..core.other_arrays import surely_none
from ..core.tracer import without_derivative, value_for_shape
from ..traces.taylor import jet as _jet

# the family's functions batch by broadcasting (those of whole vectors say otherwise)
define = functools.partial(defining.define, batch=batch_rules.elementwise)

_SQRT_PI = math.sqrt(math.pi)
_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)
POSITIVE = (0.2, 4.0)


def _name(fn):
    return "scipy.special." + fn.__name__


def _ufunc(fn, d, domain=(-2.0, 2.0), **spec):
    """A scipy ufunc of one argument with derivative ``d(ans, x)``."""
    return unary(_name(fn), d, domain=domain, impl=fn, **spec)


def _ufunc2(fn, dx, dy, domain=POSITIVE, **spec):
    """A scipy ufunc of two arguments with partial derivatives ``dx``, ``dy``."""
    return binary(_name(fn), dx, dy, domain=domain, impl=fn, **spec)


def _with_static(fn, static, d, cases, domain=POSITIVE, first=True, name=None,
                 why="it is an order or count", taylor=None, operand=True, **spec):
    """``fn(static, x)`` (``fn(x, static)`` if not ``first``) differentiable in ``x`` only: a
    primitive ``p(x, static)``, and the public function in scipy's argument order, which
    refuses a differentiated ``static`` with ``why`` (a staged or batched one, an order passed
    to a jitted function, is an operand). ``d(ans, x, static)`` is the derivative. ``static``
    may name several (``("n", "alpha")``: ``fn(n, alpha, x)``, ``d(ans, x, n, alpha)``).
    ``operand=False`` where a rule needs ``static``'s value (``multigammaln``'s dimension
    counts its terms): a parameter ``p(x, <static>=...)``, refused whenever traced."""
    name = name or fn.__name__
    qualname = "scipy.special." + name
    statics = (static,) if isinstance(static, str) else tuple(static)

    def impl(x, /, *ns):  # (positional-only: the static one may be called "x")
        return fn(*ns, x) if first else fn(x, *ns)

    def vjp(g, ans, x, /, *ns):
        return cast_like(unbroadcast_like(g * d(ans, x, *ns), x), x)

    def jvp(t, ans, x, /, *ns):
        return broadcast_like(t * d(ans, x, *ns), ans)

    if operand:
        refusals = [table.no_derivative(qualname, k, why) for k in statics]

        def rule(series, ans, x, /, *ns):
            for refuse, t in zip(refusals, series[1:]):
                if t is not None:
                    refuse()
            return taylor(series[:1], ans, x, **dict(zip(statics, ns)))
        p = define(qualname, impl, [vjp, *refusals], [jvp, *refusals],
                   taylor=None if taylor is None else rule,
                   spec=Spec(cases, domain=domain, call=lambda f, x, /, **params: f(
                       x, *(params[k] for k in statics)), **spec))
    else:
        p = define(qualname, lambda x, /, **params: impl(x, *(params[k] for k in statics)),
                   [lambda g, ans, x, /, **params: vjp(g, ans, x,
                                                       *(params[k] for k in statics))],
                   [lambda t, ans, x, /, **params: jvp(t, ans, x,
                                                       *(params[k] for k in statics))],
                   spec=Spec(cases, domain=domain, **spec), taylor=taylor)

    @traced_version_of(fn)
    def public(*args, **kwargs):
        if len(args) != len(statics) + 1 or kwargs:
            shown = ", ".join(statics)
            raise NotImplementedError(
                f"fgrad.scipy.special.{name}: on traced values only {name}"
                f"({f'{shown}, x' if first else f'x, {shown}'}) is supported, positionally")
        ns, x = (args[:-1], args[-1]) if first else (args[1:], args[0])
        if operand:
            for k, n in zip(statics, ns):
                defining.refuse_differentiated(qualname, k, n, why)
            return p(x, *ns)
        for k, n in zip(statics, ns):
            refuse_traced(qualname, k, n, why)
        return p(x, **dict(zip(statics, ns)))

    public._fgrad_entry, public._fgrad_not_in = p, statics
    return public


# --- gamma and relatives -------------------------------------------------------------------

polygamma = _with_static(
    _sc.polygamma, "n", lambda ans, x, n: polygamma(n + 1, x),
    [(((),), {"n": 1}), (((3,),), {"n": 2}), (((2, 2),), {"n": 0})], domain=(0.5, 4.0))
digamma = _ufunc(_sc.digamma, lambda ans, x: polygamma(1, x), domain=POSITIVE, reads="x")
psi = digamma
gammaln = _ufunc(_sc.gammaln, lambda ans, x: digamma(x), domain=POSITIVE, reads="x")
# loggamma of a real argument is real (log|Gamma| = gammaln for x > 0)
loggamma = _ufunc(_sc.loggamma, lambda ans, x: digamma(x), domain=POSITIVE, reads="x")


def _finite_nonzero(ans, *args, **params):
    return bool(_onp.all(_onp.isfinite(ans) & (ans != 0)))


# (jet: gamma, rgamma and beta are their sign at the point times exp of the log-magnitude)
gamma = _ufunc(_sc.gamma, lambda ans, x: ans * digamma(x), domain=POSITIVE,
               taylor=table.Composed(
                   lambda x: taylor_rules.sign_of(_sc.gamma, x) * fnp.exp(gammaln(x)),
                   where=_finite_nonzero))
rgamma = _ufunc(_sc.rgamma, lambda ans, x: -ans * digamma(x), domain=POSITIVE,
                taylor=table.Composed(
                    lambda x: taylor_rules.sign_of(_sc.gamma, x) * fnp.exp(-gammaln(x)),
                    where=_finite_nonzero))
beta = _ufunc2(_sc.beta, lambda ans, a, b: ans * (digamma(a) - digamma(a + b)),
               lambda ans, a, b: ans * (digamma(b) - digamma(a + b)), domain=(0.3, 3.0),
               taylor=table.Composed(
                   lambda a, b: taylor_rules.sign_of(_sc.beta, a, b) * fnp.exp(betaln(a, b)),
                   where=_finite_nonzero))
betaln = _ufunc2(_sc.betaln, lambda ans, a, b: digamma(a) - digamma(a + b),
                 lambda ans, a, b: digamma(b) - digamma(a + b), domain=(0.3, 3.0))
multigammaln = _with_static(
    _sc.multigammaln, "d", lambda ans, a, d: sum(digamma(a - 0.5 * j) for j in range(d)),
    [(((),), {"d": 2}), (((3,),), {"d": 3})], domain=(1.5, 4.0), first=False,
    why="it is a dimension", operand=False)


def _lower_gamma_density(x, a):
    """d/dx of the regularised lower incomplete gamma function: x^(a-1) e^-x / Gamma(a)."""
    return fnp.exp((a - 1) * fnp.log(x) - x - gammaln(a))


_SERIES_BLOCKS, _BLOCK, _CF_DEPTH = 8, 16, 48
_CHUNK = 8192


def _in_chunks(count):
    """A rule ``rule(*arrays, *rest)`` of ``count`` arrays run on them broadcast, 8192 entries
    at a time, joined: the series and fractions below hold some hundred values per entry (2
    KiB), so on 10^6 entries they would hold gigabytes at once (measured on 2 * 10^5 entries:
    a peak of 532 MiB before, 28 MiB chunked, and a third of the time). Shapes are no values:
    staged and batched calls chunk alike."""
    def decorate(rule):
        @functools.wraps(rule)
        def chunked(*args):
            arrays, rest = fnp.broadcast_arrays(*args[:count]), args[count:]
            shape = _onp.shape(value_for_shape(arrays[0]))
            n = math.prod(shape)
            if n <= _CHUNK:
                return rule(*arrays, *rest)
            flat = [fnp.ravel(a) for a in arrays]
            parts = [rule(*(f[i:i + _CHUNK] for f in flat), *rest) for i in range(0, n, _CHUNK)]
            return fnp.reshape(fnp.concatenate(parts), shape)
        return chunked
    return decorate
# the complex step of the continued fractions' derivatives (``_betainc_d``)
_STEP = 1e-20


@_in_chunks(2)
def _gammainc_d_a(a, x):
    """d/da of the regularised lower incomplete gamma function P(a, x) (scipy has no closed
    form), written with fgrad.numpy so that it is differentiated, batched and staged again.

    For x < a + 1 the series P = sum_n t_n, t_n = x^(a+n) e^-x / Gamma(a+n+1), whose
    derivative is sum_n t_n (log x - digamma(a+n+1)): 128 terms, 16 at a time, their logs
    by cumsum (t_n / t_(n-1) = x / (a+n) < 1 there). Else minus that of Q = 1 - P = x^a e^-x /
    (Gamma(a) D), with D Legendre's continued fraction ``x+1-a - 1(1-a)/(x+3-a - 2(2-a)/...)``
    evaluated from depth 48 up, its derivative in a by a complex step (``_betainc_d``). A
    rule reads no values, so the lengths are fixed; where they fall short (a above about 250
    with x within a few sqrt(a) of a: the series' last term, or the fraction from depth 40
    against 48, says so) the derivative is nan rather than a wrong number. Against mpmath at
    40 digits, a from 0.01 to 3000 and x from 1e-3 to 5a: relative error below 2e-13,
    1.4e-11 at worst (a near 0 just past x = a + 1). Each branch is given values of its own
    region where the other's are taken, so neither's derivative is nan there."""
    a0, x0 = fnp.broadcast_arrays(a, x)
    inside = (a0 > 0) & (x0 > 0) & (x0 < _onp.inf)  # (the others are given 1 and set below)
    a, x = fnp.where(inside, a0, 1.0), fnp.where(inside, x0, 1.0)
    series = x < a + 1
    xs = fnp.where(series, x, 0.5 * (a + 1))  # (each branch on its own region)
    xc = fnp.where(series, a + 1, x)
    lx = fnp.log(xs)
    # the series: t_0 * sum_n c_n (log x - psi_n), c_n = t_n / t_0 = x^n / prod_k (a+k) (its
    # log a cumsum: cumprod's derivatives cost jet four times as much), psi_n = digamma(a+n+1)
    log_c, psi = fnp.zeros_like(a), digamma(a + 1)
    total = lx - psi
    a_, lx_ = a[..., None], lx[..., None]
    for k in range(_SERIES_BLOCKS):
        n = _onp.arange(k * _BLOCK + 1, (k + 1) * _BLOCK + 1)
        terms = a_ + n
        log_cs = log_c[..., None] + fnp.cumsum(lx_ - fnp.log(terms), axis=-1)
        psis = psi[..., None] + fnp.cumsum(1.0 / terms, axis=-1)
        total = total + fnp.sum(fnp.exp(log_cs) * (lx_ - psis), axis=-1)
        log_c, psi = log_cs[..., -1], psis[..., -1]
    c = fnp.exp(log_c)
    low = fnp.exp(a * lx - xs - gammaln(a + 1)) * total
    past = _SERIES_BLOCKS * _BLOCK + 1  # (the terms left: at most c_128 / (1 - x/(a+129)))
    low_converged = c * (a + past) / (a + past - xs) < 1e-13
    # the continued fraction: D_k = b_k - a_(k+1) / D_(k+1), b_k = x + 2k + 1 - a,
    # a_k = k (k - a), from depth 48, at a + 1e-20 i (its derivative in a by the complex
    # step, as ``_betainc_d``'s); beside it on a last axis from depth 40: where the two
    # differ the fraction has not converged
    y, shallow = xc - (a + _STEP * 1j), _CF_DEPTH - 8
    k = _onp.arange(_CF_DEPTH)
    b, num = y[..., None] + (2 * k + 1), (k + 1) * (k + 1 - (a + _STEP * 1j)[..., None])
    d = y + (2 * _CF_DEPTH + 1)
    for k in range(_CF_DEPTH - 1, -1, -1):
        if k == shallow - 1:
            d = fnp.stack([d, y + (2 * shallow + 1)], -1)
        at = (..., k, None) if k < shallow else (..., k)
        d = b[at] - num[at] / d
    up_converged = fnp.abs(d[..., 0] - d[..., 1]) <= 1e-9 * fnp.abs(d[..., 0])
    d, dd = fnp.real(d[..., 0]), fnp.imag(d[..., 0]) / _STEP
    lxc = fnp.log(xc)
    upper = fnp.exp(a * lxc - xc - gammaln(a)) / d * (digamma(a) + dd / d - lxc)
    out = fnp.where(series, fnp.where(low_converged, low, _onp.nan),
                    fnp.where(up_converged, upper, _onp.nan))
    # P is 0 at x = 0 and 1 at x = inf for every a; scipy's nan outside a > 0, x >= 0
    edge = fnp.where((a0 > 0) & (x0 >= 0), 0.0, _onp.nan)
    return fnp.where(inside, out, edge)


# in a and x: a the shape of the gamma distribution, x the point
gammainc = _ufunc2(_sc.gammainc, lambda ans, a, x: _gammainc_d_a(a, x),
                   lambda ans, a, x: _lower_gamma_density(x, a), domain=[(0.2, 4.0), (0.1, 8.0)],
                   slow=True)
gammaincc = _ufunc2(_sc.gammaincc, lambda ans, a, x: -_gammainc_d_a(a, x),
                    lambda ans, a, x: -_lower_gamma_density(x, a),
                    domain=[(0.2, 4.0), (0.1, 8.0)], slow=True)
# their inverses in y, x = ans: by the implicit function, dx/dy = (+-) 1 / density and
# dx/da = -(dP/da) / density (P(a, x) = y and Q(a, x) = y alike)
gammaincinv = _ufunc2(
    _sc.gammaincinv, lambda ans, a, y: -_gammainc_d_a(a, ans) / _lower_gamma_density(ans, a),
    lambda ans, a, y: 1 / _lower_gamma_density(ans, a), domain=[(0.5, 4.0), (0.1, 0.9)],
    slow=True)
gammainccinv = _ufunc2(
    _sc.gammainccinv, lambda ans, a, y: -_gammainc_d_a(a, ans) / _lower_gamma_density(ans, a),
    lambda ans, a, y: -1 / _lower_gamma_density(ans, a), domain=[(0.5, 4.0), (0.1, 0.9)],
    slow=True)

# the Pochhammer symbol (z)_m = Gamma(z + m) / Gamma(z), in both arguments
poch = _ufunc2(_sc.poch, lambda ans, z, m: ans * (digamma(z + m) - digamma(z)),
               lambda ans, z, m: ans * digamma(z + m), domain=(0.3, 3.0))


def _boxcox_d_lmbda(ans, log_x, lmbda):
    """d/d lmbda of (x^lmbda - 1) / lmbda, ``log_x`` = log x: (x^lmbda log x - ans) / lmbda,
    which cancels as lmbda -> 0, where its series ``L^2/2 + lmbda L^3/3 + lmbda^2 L^4/8`` is
    taken (|lmbda| < 1e-4: its error is below rounding's)."""
    small = fnp.abs(without_derivative(lmbda)) < 1e-4
    safe = fnp.where(small, 1.0, lmbda)
    series = log_x * log_x * (0.5 + lmbda * log_x / 3 + lmbda * lmbda * log_x * log_x / 8)
    return fnp.where(small, series, (fnp.exp(lmbda * log_x) * log_x - ans) / safe)


# Box-Cox: (x^lmbda - 1) / lmbda (log x at lmbda = 0), of x and of (1 + x)
boxcox = _ufunc2(_sc.boxcox, lambda ans, x, lmbda: x ** (lmbda - 1),
                 lambda ans, x, lmbda: _boxcox_d_lmbda(ans, fnp.log(x), lmbda),
                 domain=[(0.3, 3.0), (-2.0, 2.0)])
boxcox1p = _ufunc2(_sc.boxcox1p, lambda ans, x, lmbda: (1 + x) ** (lmbda - 1),
                   lambda ans, x, lmbda: _boxcox_d_lmbda(ans, fnp.log1p(x), lmbda),
                   domain=[(-0.7, 3.0), (-2.0, 2.0)])

# the sign of gamma: piecewise constant, no derivative (autograd has it)
gammasgn = values_only(_sc.gammasgn, "scipy.special.gammasgn", batch=batch_rules.elementwise)


def _in_last(fn, params, d, cases, domain, why, doc):
    """``fn(*params, x)`` differentiable in its last argument only, ``d(x, ans, **params)``
    its derivative (``ans`` the value: an inverse's derivative is taken there): a primitive
    ``p(x, **params)``, and the public function in scipy's argument order, which refuses
    traced ``params`` by name with ``why``."""
    name = _name(fn)
    p = define(name, lambda x, /, **kw: fn(*(kw[k] for k in params), x),
               [lambda g, ans, x, /, **kw: cast_like(unbroadcast_like(g * d(x, ans, **kw), x),
                                                     x)],
               [lambda t, ans, x, /, **kw: broadcast_like(t * d(x, ans, **kw), ans)],
               spec=Spec(cases, domain=domain))

    @traced_version_of(fn)
    def public(*args):  # (out= is the wrapper's: written into, or refused, before this)
        if len(args) != len(params) + 1:
            raise TypeError(f"{fn.__name__}() takes {', '.join(params)} and x")
        for k, v in zip(params, args):
            refuse_traced(name, k, v, why)
        return p(args[-1], **dict(zip(params, args)))

    public.__doc__ = f"fgrad: {doc}\n\n{fn.__doc__ or ''}"
    public._fgrad_entry, public._fgrad_not_in = p, params
    return public


def _betainc_density(x, a, b):
    """d/dx of the regularised incomplete beta function: x^(a-1) (1-x)^(b-1) / B(a, b)."""
    return fnp.exp((a - 1) * fnp.log(x) + (b - 1) * fnp.log1p(-x) - betaln(a, b))


def _no_closed_form(params):
    return (f"scipy has no closed form for the derivative in {params}; differentiate in x, or "
            "wrap a series of your own in fgrad.custom_jvp")


_BETA_DEPTH, _BETA_SHALLOW = 56, 48


@_in_chunks(3)
def _betainc_d(a, b, x, i, over_x_a=False):
    """The derivative in a (i = 0) or b (i = 1) of the regularised incomplete beta function
    I_x(a, b) (scipy has no closed form), written with fgrad.numpy so that it is
    differentiated, batched and staged again, as ``_gammainc_d_a``.

    Below the mean (x < (a+1)/(a+b+2); above it I_x(a, b) = 1 - I_(1-x)(b, a)) I = x^a
    (1-x)^b / (a B(a, b) f_1), with the continued fraction f_j = 1 + d_j / f_(j+1),
    d_(2m+1) = -(a+m)(a+b+m) x / ((a+2m)(a+2m+1)), d_(2m) = m(b-m) x / ((a+2m-1)(a+2m)),
    from depth 56 up. The fraction's derivative by a complex step: f at the parameter plus
    1e-20 i, whose imaginary part over the step is the derivative to rounding (no difference
    is taken), and whose own derivatives, the rule differentiated, are f's to O(1e-40):
    three operations a level where carrying the derivative beside f took nine. Beside it,
    on a last axis, the fraction from depth 48: where the two differ by more than 1e-9 (a
    and b of some hundreds, x near the mean), nan rather than a wrong number. Against
    mpmath at 40 digits, a and b from 0.05 to 100 and x from 1e-4 to 0.999: relative error
    below 2e-13; at a = b = 300 and 1000 the same, nan at x within about 0.05 of 1/2.

    ``over_x_a``: the derivative in b over x^a, from x = 0 on, where I's x^a goes to zero
    (for Student's t, ``_stdtr_d_df``); below the mean that factor is left out of the
    formula, so it is smooth in x through 0."""
    a0, b0, x0 = fnp.broadcast_arrays(a, b, x)
    low = (x0 >= 0) if over_x_a else (x0 > 0)
    inside = (a0 > 0) & (b0 > 0) & low & (x0 < 1)  # (the others: set below)
    a, b, x = fnp.where(inside, a0, 1.0), fnp.where(inside, b0, 1.0), fnp.where(inside, x0, 0.5)
    flip = x >= (a + 1) / (a + b + 2)
    a, b, x = fnp.where(flip, b, a), fnp.where(flip, a, b), fnp.where(flip, 1 - x, x)
    in_a = flip if i else ~flip  # (the parameter differentiated is the fraction's a there)
    step = _STEP * 1j
    ac, bc = a + fnp.where(in_a, step, 0.0), b + fnp.where(in_a, 0.0, step)
    j = _onp.arange(1, _BETA_DEPTH + 1)
    odd, m = j % 2 == 1, j // 2
    a_, b_, x_ = ac[..., None], bc[..., None], x[..., None]
    n = fnp.where(odd, -(a_ + m) * (a_ + b_ + m), m * (b_ - m))
    d = x_ * n / ((a_ + 2 * m - 1 + odd) * (a_ + 2 * m + odd))
    f = fnp.ones_like(ac)
    for k in range(_BETA_DEPTH - 1, -1, -1):
        if k == _BETA_SHALLOW - 1:  # (from here on with the shallower fraction beside it)
            f = fnp.stack([f, fnp.ones_like(ac)], -1)
        f = 1 + d[..., k, None] / f if k < _BETA_SHALLOW else 1 + d[..., k] / f
    converged = fnp.abs(f[..., 0] - f[..., 1]) <= 1e-9 * fnp.abs(f[..., 0])
    f = f[..., 0]
    log_f = fnp.imag(f) / _STEP / fnp.real(f)  # (d log f)
    lx, l1x, psi_ab = fnp.log(fnp.where(x > 0, x, 1.0)), fnp.log1p(-x), digamma(a + b)
    # (x^a over x0^a0: 1 below the mean, x0 > 0 above it)
    pre = fnp.where(flip, a * lx - a0 * fnp.log(fnp.where(flip, x0, 1.0)), 0.0) if over_x_a \
        else a * lx
    value = fnp.exp(pre + b * l1x - fnp.log(a) - betaln(a, b)) / fnp.real(f)
    dl = fnp.where(in_a, lx - 1 / a - digamma(a), l1x - digamma(b)) + psi_ab - log_f
    out = fnp.where(flip, -value * dl, value * dl)
    # I is 0 at x = 0 and 1 at x = 1 for every a, b; scipy's nan outside a, b > 0, 0 <= x <= 1
    edge = fnp.where((a0 > 0) & (b0 > 0) & (x0 >= 0) & (x0 <= 1), 0.0, _onp.nan)
    return fnp.where(inside, fnp.where(converged, out, _onp.nan), edge)


def _betainc_partial(sign):
    """betainc(a, b, x)'s partial derivatives times ``sign`` (betaincc's, -1)."""
    def partial(i, ans, a, b, x):
        return sign * (_betainc_density(x, a, b) if i == 2 else _betainc_d(a, b, x, i))
    return partial


_BETAINC = Spec([(((), (), ()), {}), (((3,), (), (3,)), {}), (((2, 3), (3,), ()), {})],
                domain=[(0.3, 3.0), (0.3, 3.0), (0.05, 0.95)], slow=True)
# in a, b and x
betainc = defining.elementwise(_name(_sc.betainc), _sc.betainc, _betainc_partial(1.0), _BETAINC)
betaincc = defining.elementwise(_name(_sc.betaincc), _sc.betaincc, _betainc_partial(-1.0),
                                _BETAINC)


def _inverse_of_last(partial, sign=1.0):
    """The partial derivatives of x(p0, p1, y), where F(p0, p1, x) = y (or 1 - y: ``sign``
    -1), from ``partial``, F's in p0, p1 and x: by the implicit function, -(dF/dp_i) / (dF/dx)
    and (+-) 1 / (dF/dx), at x = ans."""
    def inverse(i, ans, p0, p1, y):
        dx = partial(2, None, p0, p1, ans)
        return (sign if i == 2 else -partial(i, None, p0, p1, ans)) / dx
    return inverse


_BETAINCINV = Spec(_BETAINC.cases, domain=[(0.5, 3.0), (0.5, 3.0), (0.1, 0.9)], slow=True)
betaincinv = defining.elementwise(_name(_sc.betaincinv), _sc.betaincinv,
                                  _inverse_of_last(_betainc_partial(1.0)), _BETAINCINV)
betainccinv = defining.elementwise(_name(_sc.betainccinv), _sc.betainccinv,
                                   _inverse_of_last(_betainc_partial(1.0), -1.0), _BETAINCINV)
# the hypergeometric functions' derivatives in x are the functions at shifted parameters
hyp1f1 = _in_last(
    _sc.hyp1f1, ("a", "b"), lambda x, ans, a, b: (a / b) * hyp1f1(a + 1, b + 1, x),
    [(((),), {"a": 1.5, "b": 2.5}), (((3,),), {"a": -0.7, "b": 1.2})], (-2.0, 2.0),
    _no_closed_form("a or b"),
    "scipy.special.hyp1f1(a, b, x): differentiable in ``x`` (``(a / b) 1F1(a + 1, b + 1, "
    "x)``); ``a`` and ``b`` traced are refused by name.")
hyp2f1 = _in_last(
    _sc.hyp2f1, ("a", "b", "c"),
    lambda x, ans, a, b, c: (a * b / c) * hyp2f1(a + 1, b + 1, c + 1, x),
    [(((),), {"a": 1.5, "b": 0.5, "c": 2.5}), (((3,),), {"a": -0.7, "b": 1.2, "c": 1.6})],
    (-0.8, 0.8), _no_closed_form("a, b or c"),
    "scipy.special.hyp2f1(a, b, c, x): differentiable in ``x`` (``(a b / c) 2F1(a + 1, "
    "b + 1, c + 1, x)``, inside the unit disc); ``a``, ``b`` and ``c`` traced are refused by "
    "name.")


# --- error function and the normal distribution ----------------------------------------------

def _gauss(x):
    return fnp.exp(-(x * x))


erf = _ufunc(_sc.erf, lambda ans, x: (2 / _SQRT_PI) * _gauss(x), reads="x")
erfc = _ufunc(_sc.erfc, lambda ans, x: (-2 / _SQRT_PI) * _gauss(x), reads="x")
# (jet: the inverses by Newton's method on the series, where their JVP rules read the output)
erfinv = _ufunc(_sc.erfinv, lambda ans, x: (_SQRT_PI / 2) * fnp.exp(ans * ans),
                domain=(-0.9, 0.9), reads="ans",
                taylor=table.Inverse(erf, lambda y: (2 / _SQRT_PI) * _gauss(y),
                                     where=taylor_rules.all_finite))
erfcinv = _ufunc(_sc.erfcinv, lambda ans, x: (-_SQRT_PI / 2) * fnp.exp(ans * ans),
                 domain=(0.1, 1.9), reads="ans",
                 taylor=table.Inverse(erfc, lambda y: (-2 / _SQRT_PI) * _gauss(y),
                                      where=taylor_rules.all_finite))
erfcx = _ufunc(_sc.erfcx, lambda ans, x: 2 * x * ans - 2 / _SQRT_PI,
               # (jet: exp(x^2) erfc(x) where neither factor overflows nor underflows)
               taylor=table.Composed(lambda x: fnp.exp(x * x) * erfc(x),
                                     where=lambda ans, x: bool(_onp.all(_onp.abs(x) < 25))))
erfi = _ufunc(_sc.erfi, lambda ans, x: (2 / _SQRT_PI) * fnp.exp(x * x), reads="x")
ndtr = _ufunc(_sc.ndtr, lambda ans, x: fnp.exp(-0.5 * (x * x) - _LOG_SQRT_2PI), reads="x")
ndtri = _ufunc(_sc.ndtri, lambda ans, x: fnp.exp(0.5 * (ans * ans) + _LOG_SQRT_2PI),
               domain=(0.05, 0.95), reads="ans",
               taylor=table.Inverse(ndtr, lambda y: fnp.exp(-0.5 * (y * y) - _LOG_SQRT_2PI),
                                    where=taylor_rules.all_finite))
# the normal density over its cdf, in logs: stays finite far in the left tail
log_ndtr = _ufunc(_sc.log_ndtr, lambda ans, x: fnp.exp(-0.5 * (x * x) - _LOG_SQRT_2PI - ans),
                  domain=(-6.0, 4.0),
                  # (jet: log(ndtr(x)) where ndtr does not underflow)
                  taylor=table.Composed(lambda x: fnp.log(ndtr(x)),
                                        where=lambda ans, x: bool(_onp.all(ans > -600.0))))


# Owen's T: dT/dh = -phi(h) erf(a h / sqrt 2) / 2, dT/da = exp(-h^2 (1 + a^2) / 2) / (2 pi
# (1 + a^2))
owens_t = _ufunc2(
    _sc.owens_t, lambda ans, h, a: -0.5 * fnp.exp(-0.5 * (h * h) - _LOG_SQRT_2PI) *
    erf(a * h / math.sqrt(2)),
    lambda ans, h, a: fnp.exp(-0.5 * (h * h) * (1 + a * a)) / (2 * math.pi * (1 + a * a)),
    domain=(-2.0, 2.0))
# Dawson's integral D(x) = exp(-x^2) int_0^x exp(t^2) dt: D' = 1 - 2 x D
dawsn = _ufunc(_sc.dawsn, lambda ans, x: 1 - 2 * x * ans, domain=(-3.0, 3.0))


# --- logistic, entropies, x log y ----------------------------------------------------------------

# (jet: the JVP rule reads the output; tanh's recurrence gives the terms in O(K^2))
expit = _ufunc(_sc.expit, lambda ans, x: ans * (1 - ans), domain=(-4.0, 4.0), reads="ans",
               taylor=table.Composed(lambda x: 0.5 + 0.5 * fnp.tanh(0.5 * x)))
logit = _ufunc(_sc.logit, lambda ans, x: 1 / (x * (1 - x)), domain=(0.05, 0.95), reads="x")
log_expit = _ufunc(_sc.log_expit, lambda ans, x: expit(-x), domain=(-4.0, 4.0), reads="x")
softplus = _ufunc(_sc.softplus, lambda ans, x: expit(x), domain=(-4.0, 4.0), reads="x")
entr = _ufunc(_sc.entr, lambda ans, x: -(fnp.log(x) + 1), domain=(0.1, 3.0), reads="x")
xlogy = _ufunc2(_sc.xlogy, lambda ans, x, y: fnp.log(y), lambda ans, x, y: x / y,
                domain=[(-2.0, 2.0), (0.2, 3.0)])
xlog1py = _ufunc2(_sc.xlog1py, lambda ans, x, y: fnp.log1p(y), lambda ans, x, y: x / (1 + y),
                  domain=[(-2.0, 2.0), (-0.8, 3.0)])
rel_entr = _ufunc2(_sc.rel_entr, lambda ans, x, y: fnp.log(x / y) + 1,
                   lambda ans, x, y: -x / y, domain=(0.2, 3.0))
kl_div = _ufunc2(_sc.kl_div, lambda ans, x, y: fnp.log(x / y), lambda ans, x, y: 1 - x / y,
                 domain=(0.2, 3.0))


# --- elementary functions in scipy's own evaluation ---------------------------------------------

_DEG = math.pi / 180
expm1 = _ufunc(_sc.expm1, lambda ans, x: ans + 1, reads="ans")
log1p = _ufunc(_sc.log1p, lambda ans, x: 1 / (1 + x), domain=(-0.8, 3.0), reads="x")
cbrt = _ufunc(_sc.cbrt, lambda ans, x: 1 / (3 * ans * ans), domain=(0.2, 4.0), reads="ans")
exp2 = _ufunc(_sc.exp2, lambda ans, x: ans * math.log(2), reads="ans")
exp10 = _ufunc(_sc.exp10, lambda ans, x: ans * math.log(10), reads="ans")
cosm1 = _ufunc(_sc.cosm1, lambda ans, x: -fnp.sin(x), reads="x")  # (cos x - 1 near 0, exact)
sindg = _ufunc(_sc.sindg, lambda ans, x: _DEG * cosdg(x), domain=(-200.0, 200.0), reads="x")
cosdg = _ufunc(_sc.cosdg, lambda ans, x: -_DEG * sindg(x), domain=(-200.0, 200.0), reads="x")
tandg = _ufunc(_sc.tandg, lambda ans, x: _DEG * (1 + ans * ans), domain=(-80.0, 80.0),
               reads="ans")
cotdg = _ufunc(_sc.cotdg, lambda ans, x: -_DEG * (1 + ans * ans), domain=(10.0, 170.0),
               reads="ans")


# d/dx of (e^x - 1) / x = sum_k (k + 1) x^k / (k + 2)!: its first 18 terms (for |x| < 1/2
# their error is below 1e-22), with no cancellation in any derivative of theirs
_EXPREL_D = [(k + 1) / math.factorial(k + 2) for k in range(18)]


def _exprel_d(ans, x):
    """d/dx of (e^x - 1) / x: (e^x - ans) / x, which cancels near 0 (and so do its own
    derivatives, more at each order), where the series is taken (|x| < 1/2)."""
    small = fnp.abs(without_derivative(x)) < 0.5
    safe = fnp.where(small, 1.0, x)
    series = 0.0
    for c in reversed(_EXPREL_D):
        series = series * x + c
    return fnp.where(small, series, (fnp.exp(x) - ans) / safe)


exprel = _ufunc(_sc.exprel, _exprel_d)
# x^y - 1, exact near y log x = 0: d/dx = y x^(y-1), d/dy = x^y log x
powm1 = _ufunc2(_sc.powm1, lambda ans, x, y: y * (ans + 1) / x,
                lambda ans, x, y: (ans + 1) * fnp.log(x), domain=[(0.2, 3.0), (-2.0, 2.0)])
# the binomial coefficient of real arguments, Gamma(n + 1) / (Gamma(k + 1) Gamma(n - k + 1))
binom = _ufunc2(_sc.binom, lambda ans, n, k: ans * (digamma(n + 1) - digamma(n - k + 1)),
                lambda ans, n, k: ans * (digamma(n - k + 1) - digamma(k + 1)),
                domain=[(2.2, 6.0), (0.2, 1.8)])
# the inverse of boxcox: (1 + lmbda y)^(1/lmbda), exp(y) at lmbda = 0; d/dy = ans^(1 - lmbda)
inv_boxcox = _ufunc2(
    _sc.inv_boxcox, lambda ans, y, lmbda: ans ** (1 - lmbda),
    lambda ans, y, lmbda: -ans * _boxcox_d_lmbda(y, fnp.log(ans), lmbda) * ans ** -lmbda,
    # (the tests' lmbda stays off 0, where the rule's cancellation, as boxcox's, grows with
    # each order past the sixth-order comparison's tolerance: tests/test_scipy.py checks the
    # first derivatives there)
    domain=[(0.2, 2.0), (0.3, 2.0)])
# the Huber loss of r at delta, and its smooth form delta^2 (sqrt(1 + (r/delta)^2) - 1)
huber = _ufunc2(_sc.huber,
                lambda ans, delta, r: fnp.where(fnp.abs(r) <= delta, 0.0, fnp.abs(r) - delta),
                lambda ans, delta, r: fnp.where(fnp.abs(r) <= delta, r, delta * fnp.sign(r)),
                domain=[(0.5, 2.0), (-3.0, 3.0)],
                valid=lambda delta, r: bool(_onp.all(_onp.abs(_onp.abs(r) - delta) > 0.05)))


def _pseudo_huber_d_delta(ans, delta, r):
    s = ans / (delta * delta) + 1  # sqrt(1 + (r/delta)^2)
    return 2 * delta * (s - 1) - r * r / (s * delta)


pseudo_huber = _ufunc2(_sc.pseudo_huber, _pseudo_huber_d_delta,
                       lambda ans, delta, r: r / fnp.sqrt(1 + (r / delta) * (r / delta)),
                       domain=[(0.5, 2.0), (-3.0, 3.0)])
# x with ndtr(x) = exp(y): dx/dy = exp(y) / phi(x)
ndtri_exp = _ufunc(_sc.ndtri_exp,
                   lambda ans, y: fnp.exp(y + 0.5 * (ans * ans) + _LOG_SQRT_2PI),
                   domain=(-5.0, -0.1), reads="both")


# --- distribution functions: in the point, the parameter (degrees of freedom, count) static ---


def _t_log_density(t, df):
    return (gammaln((df + 1) / 2) - gammaln(df / 2) - 0.5 * fnp.log(df * math.pi)
            - (df + 1) / 2 * fnp.log1p(t * t / df))


def _chi2_density(x, v):
    return fnp.exp((v / 2 - 1) * fnp.log(x) - x / 2 - (v / 2) * math.log(2) - gammaln(v / 2))


def _poisson_mass(k, m):  # (at the count floor(k), as scipy's pdtr)
    k = fnp.floor(k)
    return fnp.exp(k * fnp.log(m) - m - gammaln(k + 1))


def _stdtr_d_df(df, t):
    """d/d df of Student's t cdf, 1/2 + sign(t) I_z(1/2, df/2) / 2 at z = t^2 / (df + t^2).
    sign(t) sqrt(z) = t / sqrt(s), s = df + t^2, is taken out of I's derivative in b
    analytically (``over_x_a``): t / (2 sqrt(s)) (G / 2 - (1 - z)^(df/2 - 1) / (B(1/2, df/2)
    s)), G that derivative over sqrt(z). It is smooth through t = 0, where it is 0 (written
    through sign(t), its derivative in t was wrong at exactly t = 0, which the generated
    tests found); 0 at t = +-inf; scipy's nan for df <= 0. Against mpmath at 40 digits, df
    from 0.1 to 100 and |t| from 1e-6 to 50: relative error below 1e-11; at df = 300, 2e-10
    (|t| = 1e-3, where the two terms cancel)."""
    finite, positive = fnp.isfinite(t), df > 0
    t, df = fnp.where(finite, t, 0.0), fnp.where(positive, df, 1.0)
    s = df + t * t
    z, b = t * t / s, df / 2
    density = fnp.exp((b - 1) * fnp.log1p(-z) - betaln(0.5, b))
    d = t / (2 * fnp.sqrt(s)) * (_betainc_d(0.5, b, z, 1, True) / 2 - density / s)
    return fnp.where(positive, d, _onp.nan)


# Student's t: the cdf in df and t, its inverse in df and p (by the implicit function)
stdtr = _ufunc2(_sc.stdtr, lambda ans, df, t: _stdtr_d_df(df, t),
                lambda ans, df, t: fnp.exp(_t_log_density(t, df)),
                domain=[(1.0, 8.0), (-2.0, 2.0)], slow=True)
stdtrit = _ufunc2(_sc.stdtrit,
                  lambda ans, df, p: -_stdtr_d_df(df, ans) * fnp.exp(-_t_log_density(ans, df)),
                  lambda ans, df, p: fnp.exp(-_t_log_density(ans, df)),
                  domain=[(1.0, 8.0), (0.1, 0.9)], slow=True)
# and its inverse in df, df with stdtr(df, t) = p (the implicit function)
stdtridf = _ufunc2(_sc.stdtridf, lambda ans, p, t: 1 / _stdtr_d_df(ans, t),
                   lambda ans, p, t: -fnp.exp(_t_log_density(t, ans)) / _stdtr_d_df(ans, t),
                   domain=[(0.88, 0.92), (2.0, 2.5)], slow=True)
# chi-square: the cdf and its complement, gammainc(v / 2, x / 2) and gammaincc's
chdtr = _ufunc2(_sc.chdtr, lambda ans, v, x: 0.5 * _gammainc_d_a(v / 2, x / 2),
               lambda ans, v, x: _chi2_density(x, v), domain=[(1.0, 6.0), (0.2, 8.0)],
               slow=True)
chdtrc = _ufunc2(_sc.chdtrc, lambda ans, v, x: -0.5 * _gammainc_d_a(v / 2, x / 2),
                 lambda ans, v, x: -_chi2_density(x, v), domain=[(1.0, 6.0), (0.2, 8.0)],
                 slow=True)
# its inverse, x with chdtrc(v, x) = p: by the implicit function
chdtri = _ufunc2(_sc.chdtri,
                 lambda ans, v, p: -0.5 * _gammainc_d_a(v / 2, ans / 2) / _chi2_density(ans, v),
                 lambda ans, v, p: -1 / _chi2_density(ans, v), domain=[(1.0, 6.0), (0.1, 0.9)],
                 slow=True)


def _fdtr_d(dfn, dfd, x, i):
    """d/d dfn, d/d dfd, d/dx (i = 0, 1, 2) of the F distribution's cdf, I_w(dfn/2, dfd/2) at
    w = dfn x / (dfn x + dfd); 0 at x <= 0 for every df (the rule takes x = 1 there)."""
    zero = x <= 0
    x = fnp.where(zero, 1.0, x)
    s = dfn * x + dfd
    w = dfn * x / s
    dw = (dfd * x if i == 0 else -dfn * x if i == 1 else dfn * dfd) / (s * s)
    d = _betainc_density(w, dfn / 2, dfd / 2) * dw
    if i < 2:
        d = d + 0.5 * _betainc_d(dfn / 2, dfd / 2, w, i)
    return fnp.where(zero, 0.0, d)


_FDTR = Spec([(((), (), ()), {}), (((3,), (), (3,)), {})],
             domain=[(2.0, 8.0), (3.0, 10.0), (0.2, 3.0)], slow=True)
fdtr = defining.elementwise(_name(_sc.fdtr), _sc.fdtr,
                            lambda i, ans, dfn, dfd, x: _fdtr_d(dfn, dfd, x, i), _FDTR)
fdtrc = defining.elementwise(_name(_sc.fdtrc), _sc.fdtrc,
                             lambda i, ans, dfn, dfd, x: -_fdtr_d(dfn, dfd, x, i), _FDTR)
# its quantile, x with fdtr(dfn, dfd, x) = p (stats.f.ppf): by the implicit function
fdtri = defining.elementwise(
    _name(_sc.fdtri), _sc.fdtri,
    _inverse_of_last(lambda i, ans, dfn, dfd, x: _fdtr_d(dfn, dfd, x, i)),
    Spec(_FDTR.cases, domain=[(2.0, 8.0), (3.0, 10.0), (0.1, 0.9)], slow=True))
# Poisson: P(N <= k) and P(N > k) in the mean m, the count k static
_K = [(((),), {"k": 3.0}), (((3,),), {"k": 1.0})]
pdtr = _with_static(_sc.pdtr, "k", lambda ans, m, k: -_poisson_mass(k, m), _K,
                    why="it is a count")
pdtrc = _with_static(_sc.pdtrc, "k", lambda ans, m, k: _poisson_mass(k, m), _K,
                     why="it is a count")
# its inverse in m (m with pdtr(k, m) = y): 1 / (d pdtr / dm) there
pdtri = _in_last(_sc.pdtri, ("k",), lambda y, ans, k: -1 / _poisson_mass(k, ans),
                 [(((),), {"k": 3}), (((3,),), {"k": 1})], (0.1, 0.9), "it is a count",
                 "scipy.special.pdtri(k, y): differentiable in ``y`` (the implicit function: "
                 "1 / (d pdtr / dm)); ``k`` is a count, refused by name when traced.")


# binomial and negative binomial distribution functions in p (k and n counts, which scipy
# truncates), as regularised incomplete beta functions: bdtr = I_(1-p)(n - k, k + 1),
# nbdtr = I_p(n, k + 1); at k = n bdtr is 1 for every p, past it scipy's nan


def _bdtr_d_p(p, k, n):
    k, n = _onp.trunc(k), _onp.trunc(n)
    inside = k < n  # (the other entries are given n = k + 2 and set below)
    m = _onp.where(inside, n, k + 2)
    d = -fnp.exp(k * fnp.log(p) + (m - k - 1) * fnp.log1p(-p) - _sc.betaln(m - k, k + 1))
    return fnp.where(inside, d, _onp.where(k == n, 0.0, _onp.nan))


def _nbdtr_d_p(p, k, n):
    k, n = _onp.trunc(k), _onp.trunc(n)
    return fnp.exp((n - 1) * fnp.log(p) + k * fnp.log1p(-p) - _sc.betaln(n, k + 1))


_KN = [(((),), {"k": 2, "n": 5}), (((3,),), {"k": 1, "n": 3})]
_COUNTS = "they are counts (scipy truncates them)"
bdtr = _in_last(_sc.bdtr, ("k", "n"), lambda p, ans, k, n: _bdtr_d_p(p, k, n), _KN,
                (0.1, 0.9), _COUNTS,
                "scipy.special.bdtr(k, n, p): differentiable in ``p``; ``k`` and ``n`` are "
                "counts, refused by name when traced.")
bdtrc = _in_last(_sc.bdtrc, ("k", "n"), lambda p, ans, k, n: -_bdtr_d_p(p, k, n), _KN,
                 (0.1, 0.9), _COUNTS,
                 "scipy.special.bdtrc(k, n, p): differentiable in ``p``; ``k`` and ``n`` are "
                 "counts, refused by name when traced.")
nbdtr = _in_last(_sc.nbdtr, ("k", "n"), lambda p, ans, k, n: _nbdtr_d_p(p, k, n), _KN,
                 (0.1, 0.9), _COUNTS,
                 "scipy.special.nbdtr(k, n, p): differentiable in ``p``; ``k`` and ``n`` are "
                 "counts, refused by name when traced.")
# their inverses in p (p with bdtr(k, n, p) = y): 1 / (d bdtr / dp) there
bdtri = _in_last(_sc.bdtri, ("k", "n"), lambda y, ans, k, n: 1 / _bdtr_d_p(ans, k, n),
                 _KN, (0.1, 0.9), _COUNTS,
                 "scipy.special.bdtri(k, n, y): differentiable in ``y`` (the implicit "
                 "function: 1 / (d bdtr / dp)); ``k`` and ``n`` are counts, refused by name "
                 "when traced.")
nbdtri = _in_last(_sc.nbdtri, ("k", "n"), lambda y, ans, k, n: 1 / _nbdtr_d_p(ans, k, n),
                  _KN, (0.1, 0.9), _COUNTS,
                  "scipy.special.nbdtri(k, n, y): differentiable in ``y`` (the implicit "
                  "function: 1 / (d nbdtr / dp)); ``k`` and ``n`` are counts, refused by name "
                  "when traced.")
nbdtrc = _in_last(_sc.nbdtrc, ("k", "n"), lambda p, ans, k, n: -_nbdtr_d_p(p, k, n), _KN,
                  (0.1, 0.9), _COUNTS, "scipy.special.nbdtrc(k, n, p): differentiable in "
                  "``p``; ``k`` and ``n`` are counts, refused by name when traced.")


def _gdtr_partial(sign):
    """gdtr(a, b, x) = gammainc(b, a x) (a the rate, b the shape): its partial derivatives,
    times ``sign`` (gdtrc's, -1)."""
    def partial(i, ans, a, b, x):
        if i == 1:
            return sign * _gammainc_d_a(b, a * x)
        return sign * _lower_gamma_density(a * x, b) * (x if i == 0 else a)
    return partial


_GDTR = Spec([(((), (), ()), {}), (((3,), (), (3,)), {}), (((2, 3), (3,), ()), {})],
             domain=[(0.5, 2.0), (0.5, 3.0), (0.2, 3.0)], slow=True)
gdtr = defining.elementwise(_name(_sc.gdtr), _sc.gdtr, _gdtr_partial(1.0), _GDTR)
gdtrc = defining.elementwise(_name(_sc.gdtrc), _sc.gdtrc, _gdtr_partial(-1.0), _GDTR)
# its quantile, x with gdtr(a, b, x) = p: by the implicit function
gdtrix = defining.elementwise(_name(_sc.gdtrix), _sc.gdtrix, _inverse_of_last(_gdtr_partial(1.0)),
                              Spec(_GDTR.cases, domain=[(0.5, 2.0), (0.5, 3.0), (0.1, 0.9)],
                                   slow=True))


# --- complete elliptic integrals of the first and second kinds (parameter m) ------------------

def _elliptic_derivatives(k, e, m, order):
    """``([K', ..., K^(order)], [E', ..., E^(order)])`` at ``m`` from ``K = k``, ``E = e``, by
    the system 2 m (1 - m) K' = E - (1 - m) K, 2 m E' = E - K (DLMF 19.4.1) differentiated
    n times (Leibniz): each derivative from the ones before, O(order) (the JVP rules' jets
    would branch in two per order, each kind's derivative holding the other kind)."""
    ks, es = [k], [e]
    for n in range(order):
        k_before = ks[n - 1] if n else 0.0
        ks.append((es[n] - (1 - m) * ks[n] + n * k_before - n * (2 - 4 * m) * ks[n] +
                   2 * n * (n - 1) * k_before) / (2 * m * (1 - m)))
        es.append(((1 - 2 * n) * es[n] - ks[n]) / (2 * m))
    return ks[1:], es[1:]


ellipk = _ufunc(_sc.ellipk, lambda ans, m: (ellipe(m) - (1 - m) * ans) / (2 * m * (1 - m)),
                domain=(0.15, 0.9), reads="both",
                taylor=taylor_rules.by_derivatives(
                    lambda m, order: _elliptic_derivatives(ellipk(m), ellipe(m), m, order)[0]))
# (the tests' domain starts at 0.15: below, E - K cancels, in the JVP rule's derivatives and
# in the recurrence alike, past the sixth-order comparison's tolerance)
ellipe = _ufunc(_sc.ellipe, lambda ans, m: (ans - ellipk(m)) / (2 * m), domain=(0.15, 0.9),
                reads="both",
                taylor=taylor_rules.by_derivatives(
                    lambda m, order: _elliptic_derivatives(ellipk(m), ellipe(m), m, order)[1]))

# ellipkm1(p) = ellipk(1 - p), scipy's form accurate near m = 1: the derivatives in p are K's
# in m with every odd order's sign turned
ellipkm1 = _ufunc(
    _sc.ellipkm1, lambda ans, p: -(ellipe(1 - p) - p * ans) / (2 * p * (1 - p)),
    domain=(0.1, 0.85), reads="both",
    taylor=taylor_rules.by_derivatives(lambda p, order: [
        -d if n % 2 else d for n, d in enumerate(
            _elliptic_derivatives(ellipkm1(p), ellipe(1 - p), 1 - p, order)[0], start=1)]))
# the incomplete ones, F(phi | m) and E(phi | m): in phi the integrands 1 / D and D, with
# D = sqrt(1 - m sin^2 phi); in m (DLMF 19.4.4 in k = sqrt(m)), E's (E - F) / (2 m) and F's
# E / (2 m (1 - m)) - F / (2 m) - sin(2 phi) / (4 (1 - m) D)
def _delta(phi, m):
    return fnp.sqrt(1 - m * fnp.sin(phi) ** 2)


def _elliptic_coefficients(phi, m):
    """Along a path, ``F' = a + b E + c F`` and ``E' = d + e E - e F`` with ``a = phi' / D -
    s m'``, ``b = u m'``, ``c = -e``, ``d = D phi'``, ``e = h m'``: these give ``1 / D``, ``D``,
    ``s = sin(2 phi) / (4 (1 - m) D)``, ``u = 1 / (2 m (1 - m))`` and ``h = 1 / (2 m)``."""
    delta = _delta(phi, m)
    return 1 / delta, delta, fnp.sin(2 * phi) / (4 * (1 - m) * delta), \
        1 / (2 * m * (1 - m)), 1 / (2 * m)


def _incomplete_elliptic_terms(series, phi, m):
    """``(F's terms, E's terms)`` along the path of ``(phi, m)``: the linear system above,
    each term from the ones before (O(K^2); the JVP rules' jets would branch in two per
    order, each kind's derivative holding the other kind)."""
    order = len(next(s for s in series if s is not None))
    paths = [[x] + (list(s) if s is not None else [None] * order) for x, s in zip((phi, m),
                                                                                series)]
    # the coefficient functions' terms to order K - 1, then times the path's derivatives
    ts = [[fnp.zeros_like(x) if t is None else t for t in p[1:order]] for x, p in
          zip((phi, m), paths)]
    values, terms = _jet(_elliptic_coefficients, (phi, m), tuple(ts)) if order > 1 else \
        (_elliptic_coefficients(phi, m), [[]] * 5)
    inv_d, d, s_, u, h = ([v] + list(t) for v, t in zip(values, terms))
    dphi, dm = paths[0][1:], paths[1][1:]
    lz = taylor_rules.leibniz
    a = [taylor_rules.minus(lz(inv_d, dphi, k), lz(s_, dm, k)) for k in range(order)]
    b, e, dd = ([lz(c, dx, k) for k in range(order)] for c, dx in ((u, dm), (h, dm), (d, dphi)))
    fs, es = [ellipkinc(phi, m)], [ellipeinc(phi, m)]
    for k in range(order):
        f_next = taylor_rules.plus(a[k], taylor_rules.minus(lz(b, es, k), lz(e, fs, k)))
        e_next = taylor_rules.plus(dd[k], taylor_rules.minus(lz(e, es, k), lz(e, fs, k)))
        fs.append(f_next)
        es.append(e_next)
    return fs[1:], es[1:]


ellipkinc = _ufunc2(
    _sc.ellipkinc, lambda ans, phi, m: 1 / _delta(phi, m),
    lambda ans, phi, m: (ellipeinc(phi, m) / (1 - m) - ans -
                         m * fnp.sin(2 * phi) / (2 * (1 - m) * _delta(phi, m))) / (2 * m),
    domain=[(0.2, 1.4), (0.15, 0.9)],
    taylor=lambda series, ans, phi, m: _incomplete_elliptic_terms(series, phi, m)[0])
ellipeinc = _ufunc2(_sc.ellipeinc, lambda ans, phi, m: _delta(phi, m),
                    lambda ans, phi, m: (ans - ellipkinc(phi, m)) / (2 * m),
                    domain=[(0.2, 1.4), (0.15, 0.9)],
                    taylor=lambda series, ans, phi, m: _incomplete_elliptic_terms(
                        series, phi, m)[1])
# the Wright omega function, w + log w = z: w' = w / (1 + w)
wrightomega = _ufunc(_sc.wrightomega, lambda ans, z: ans / (1 + ans), reads="ans")


# --- Bessel functions: derivatives by the recurrences ----------------------------------------

def _sign(x):
    return fnp.sign(without_derivative(x))  # the kink of |x| in the exponentially scaled ones


def _off_zero(x):
    return _onp.all(_onp.abs(x) > 0.05)


def _not_tiny(x, *rest):
    """scipy's iv(v, x) is nan for 0 < |x| < 2.5e-308 (scipy 1.17; its value, which the
    derivatives of i0, i1 and iv that use it inherit): the tests stay off that range."""
    x = _onp.abs(_onp.asarray(x))
    return _onp.all((x == 0) | (x > 1e-300))


_ORDERS = [(((),), {"v": 0.5}), (((3,),), {"v": 2.0}), (((2, 2),), {"v": 1.0})]


def _bessel(fn, half, sign, scaled=None):
    """``jet``'s rule for ``fn(v, x)`` from its derivatives by the recurrence (JVP rules'
    jets would branch in two per order): ``half``, ``sign`` as in
    ``taylor_rules.bessel_derivatives``; ``scaled(x)``: the exponent's slope of a scaled
    one. ``rule.at(v)``: the rule of ``fn(v, .)``, a function of ``x`` alone."""
    def derivatives(x, order, v):
        scale = 0 if scaled is None else scaled(x)
        return taylor_rules.bessel_derivatives(lambda m, y: fn(m, y), half, sign,
                                               scale)(x, order, v=v)

    rule = taylor_rules.by_derivatives(derivatives)
    rule.at = lambda v: taylor_rules.by_derivatives(
        lambda x, order: derivatives(x, order, v))
    return rule


_I = _bessel(lambda v, x: iv(v, x), 0.5, 1)
_IE = _bessel(lambda v, x: ive(v, x), 0.5, 1, lambda x: -_sign(x))
_J = _bessel(lambda v, x: jv(v, x), 0.5, -1)
_Y = _bessel(lambda v, x: yv(v, x), 0.5, -1)
_K = _bessel(lambda v, x: kv(v, x), -0.5, 1)
_KE = _bessel(lambda v, x: kve(v, x), -0.5, 1, lambda x: 1)
iv = _with_static(_sc.iv, "v", lambda ans, x, v: 0.5 * (iv(v - 1, x) + iv(v + 1, x)), _ORDERS,
                  valid=_not_tiny, taylor=_I)
ive = _with_static(
    _sc.ive, "v", lambda ans, x, v: 0.5 * (ive(v - 1, x) + ive(v + 1, x)) - _sign(x) * ans,
    _ORDERS, taylor=_IE)
jv = _with_static(_sc.jv, "v", lambda ans, x, v: 0.5 * (jv(v - 1, x) - jv(v + 1, x)), _ORDERS,
                  taylor=_J)
yv = _with_static(_sc.yv, "v", lambda ans, x, v: 0.5 * (yv(v - 1, x) - yv(v + 1, x)), _ORDERS,
                  domain=(0.5, 4.0), taylor=_Y)
# (for real arguments the exponentially scaled jve and yve are jv and yv: the scale is
# exp(-|Im z|); fgrad differentiates them on the real line, as jv and yv)
_JE = _bessel(lambda v, x: jve(v, x), 0.5, -1)
_YE = _bessel(lambda v, x: yve(v, x), 0.5, -1)
jve = _with_static(_sc.jve, "v", lambda ans, x, v: 0.5 * (jve(v - 1, x) - jve(v + 1, x)),
                   _ORDERS, taylor=_JE)
yve = _with_static(_sc.yve, "v", lambda ans, x, v: 0.5 * (yve(v - 1, x) - yve(v + 1, x)),
                   _ORDERS, domain=(0.5, 4.0), taylor=_YE)
# scipy's integer-order names (autograd has them): jn is jv itself; yn takes an integer order
jn = jv
yn = _with_static(_sc.yn, "n", lambda ans, x, n: 0.5 * (yv(n - 1, x) - yv(n + 1, x)),
                  [(((),), {"n": 0}), (((3,),), {"n": 2}), (((2, 2),), {"n": 1})],
                  domain=(0.5, 4.0))
kv = _with_static(_sc.kv, "v", lambda ans, x, v: -0.5 * (kv(v - 1, x) + kv(v + 1, x)), _ORDERS,
                  domain=(0.3, 4.0), taylor=_K)
kve = _with_static(
    _sc.kve, "v", lambda ans, x, v: ans - 0.5 * (kve(v - 1, x) + kve(v + 1, x)), _ORDERS,
    domain=(0.3, 4.0), taylor=_KE)
i0 = _ufunc(_sc.i0, lambda ans, x: i1(x), reads="x", valid=_not_tiny, taylor=_I.at(0))
i1 = _ufunc(_sc.i1, lambda ans, x: 0.5 * (i0(x) + iv(2, x)), reads="x", valid=_not_tiny,
            taylor=_I.at(1))
i0e = _ufunc(_sc.i0e, lambda ans, x: i1e(x) - _sign(x) * ans, valid=_off_zero,
             taylor=_IE.at(0))
i1e = _ufunc(_sc.i1e, lambda ans, x: 0.5 * (i0e(x) + ive(2, x)) - _sign(x) * ans,
             valid=_off_zero, taylor=_IE.at(1))
j0 = _ufunc(_sc.j0, lambda ans, x: -j1(x), reads="x", taylor=_J.at(0))
j1 = _ufunc(_sc.j1, lambda ans, x: 0.5 * (j0(x) - jv(2, x)), reads="x", taylor=_J.at(1))
y0 = _ufunc(_sc.y0, lambda ans, x: -y1(x), domain=(0.5, 4.0), reads="x", taylor=_Y.at(0))
y1 = _ufunc(_sc.y1, lambda ans, x: 0.5 * (y0(x) - yv(2, x)), domain=(0.5, 4.0), reads="x",
            taylor=_Y.at(1))
k0 = _ufunc(_sc.k0, lambda ans, x: -k1(x), domain=(0.3, 4.0), reads="x", taylor=_K.at(0))
k1 = _ufunc(_sc.k1, lambda ans, x: -0.5 * (k0(x) + kv(2, x)), domain=(0.3, 4.0), reads="x",
            taylor=_K.at(1))
k0e = _ufunc(_sc.k0e, lambda ans, x: ans - k1e(x), domain=(0.3, 4.0), taylor=_KE.at(0))
k1e = _ufunc(_sc.k1e, lambda ans, x: ans - 0.5 * (k0e(x) + kve(2, x)), domain=(0.3, 4.0),
             taylor=_KE.at(1))
kn = _with_static(_sc.kn, "n", lambda ans, x, n: -0.5 * (kv(n - 1, x) + kv(n + 1, x)),
                  [(((),), {"n": 0}), (((3,),), {"n": 2}), (((2, 2),), {"n": 1})],
                  domain=(0.3, 4.0))


# --- spherical Bessel functions and Struve functions: Taylor rules from their ODEs ---------

def _spherical(fn, s):
    """scipy's ``fn(n, z, derivative=False)`` (``spherical_jn``, ...), differentiable in
    ``z``: the value's derivative is scipy's own ``derivative=True``, and every higher one
    follows from those two by the ODE ``z^2 y'' + 2 z y' + (s z^2 - n (n + 1)) y = 0`` (``s``
    1 for j and y, -1 for the modified i and k), differentiated: ``_ode_derivatives``."""
    name = fn.__name__

    def value(n, z):
        return fn(n, z)

    def slope(n, z):
        return fn(n, z, True)

    def derivatives(first):  # (the jet's rule: f', ..., f^(K) at z, by the recurrence)
        def of(z, order, n):
            ys = _ode_derivatives(of_value(n, z), of_slope(n, z), z, 2, s, n * (n + 1),
                                  order + first)
            return ys[1 + first:]
        return taylor_rules.by_derivatives(of)

    value.__name__, slope.__name__ = name, name + "_derivative"
    cases = [(((),), {"n": 0}), (((3,),), {"n": 2}), (((2, 2),), {"n": 1})]
    of_value = _with_static(value, "n", lambda ans, z, n: of_slope(n, z), cases,
                            domain=(0.5, 4.0), taylor=derivatives(0))
    of_slope = _with_static(
        slope, "n", lambda ans, z, n: -2 * ans / z - (s - n * (n + 1) / (z * z)) * of_value(n, z),
        cases, domain=(0.5, 4.0), taylor=derivatives(1))

    @traced_version_of(fn)
    def public(n, z, derivative=False):
        return (of_slope if derivative else of_value)(n, z)

    public._fgrad_entry, public._fgrad_not_in = of_value._fgrad_entry, ("n",)
    return public


def _ode_derivatives(y, dy, z, b, s, m, order, rhs=None):
    """``[y, y', ..., y^(order)]`` at ``z`` of a solution of ``z^2 y'' + b z y' + (s z^2 - m)
    y = r(z)`` from ``y`` and ``y'`` (``rhs(k)``: ``r``'s k-th derivative; None: ``r = 0``).
    The ODE differentiated k times (Leibniz) gives ``z^2 y^(k+2) = r^(k) - ((2 k + b) z
    y^(k+1) + (k (k - 1) + b k + s z^2 - m) y^(k) + 2 s k z y^(k-1) + s k (k - 1)
    y^(k-2))``."""
    ys = [y, dy]
    for k in range(order - 1):
        total = (2 * k + b) * z * ys[k + 1] + (k * (k - 1) + b * k + s * z * z - m) * ys[k]
        if k >= 1:
            total = total + 2 * s * k * z * ys[k - 1]
        if k >= 2:
            total = total + s * k * (k - 1) * ys[k - 2]
        if rhs is not None:
            total = total - rhs(k)
        ys.append(-total / (z * z))
    return ys[:order + 1]


spherical_jn = _spherical(_sc.spherical_jn, 1)
spherical_yn = _spherical(_sc.spherical_yn, 1)
spherical_in = _spherical(_sc.spherical_in, -1)
spherical_kn = _spherical(_sc.spherical_kn, -1)


def _struve_derivatives(of, s):
    """The jet's rule of a Struve function ``of(v, x)`` (``s`` 1 for H, -1 for the modified
    L): its derivatives at ``x`` from the ODE ``x^2 y'' + x y' + (s x^2 - v^2) y = c
    x^(v+1)``, ``c = 4 / (2^(v+1) sqrt(pi) gamma(v + 1/2))`` (``_ode_derivatives``), after
    ``y' = of(v - 1, x) - (v / x) y``."""
    def derivatives(x, order, v):
        c = 4 / (2 ** (v + 1) * _SQRT_PI * gamma(v + 0.5))

        def rhs(k):  # (c x^(v+1))^(k)
            falling = c
            for j in range(k):
                falling = falling * (v + 1 - j)
            return falling * x ** (v + 1 - k)

        y = of(v, x)
        ys = _ode_derivatives(y, of(v - 1, x) - v / x * y, x, 1, s, v * v, order, rhs)
        return ys[1:]
    return taylor_rules.by_derivatives(derivatives)


# Struve functions: H_v' = H_{v-1} - (v / x) H_v, L_v' = L_{v-1} - (v / x) L_v
struve = _with_static(_sc.struve, "v", lambda ans, x, v: struve(v - 1, x) - v / x * ans,
                      _ORDERS, domain=(0.5, 4.0),
                      taylor=_struve_derivatives(lambda v, x: struve(v, x), 1))
modstruve = _with_static(_sc.modstruve, "v",
                         lambda ans, x, v: modstruve(v - 1, x) - v / x * ans, _ORDERS,
                         domain=(0.5, 4.0),
                         taylor=_struve_derivatives(lambda v, x: modstruve(v, x), -1))
hyp0f1 = _with_static(_sc.hyp0f1, "v", lambda ans, x, v: hyp0f1(v + 1, x) / v, _ORDERS,
                      domain=(-2.0, 2.0), why="it is a parameter of the series")


# --- orthogonal polynomials in x: derivatives by the Gegenbauer and Laguerre relations -----
# (d/dx C_n^a = 2a C_{n-1}^{a+1}, d/dx L_n^a = -L_{n-1}^{a+1}; they hold for scipy's
# non-integer degrees too, the hypergeometric series, and give 0 at degree 0: scipy's degree
# -1 is 0. The Hermite polynomials take integer degrees only.)
_DEGREES = [(((),), {"n": 0}), (((3,),), {"n": 3}), (((2, 2),), {"n": 2.5})]
_INTEGER_DEGREES = [(((),), {"n": 0}), (((3,),), {"n": 3}), (((2, 2),), {"n": 1})]
_DEGREE = "it is the degree"


def _below(n):  # (a Hermite polynomial's degree less one, 0 at degree 0, where n is too)
    return fnp.maximum(n - 1, 0)


eval_gegenbauer = _with_static(
    _sc.eval_gegenbauer, ("n", "alpha"),
    lambda ans, x, n, alpha: 2 * alpha * eval_gegenbauer(n - 1, alpha + 1, x),
    [(((),), {"n": 0, "alpha": 1.5}), (((3,),), {"n": 3, "alpha": 0.75}),
     (((2, 2),), {"n": 2.5, "alpha": 2.0})], domain=(-0.9, 0.9),
    why="it is the degree or a parameter")
eval_genlaguerre = _with_static(
    _sc.eval_genlaguerre, ("n", "alpha"),
    lambda ans, x, n, alpha: -eval_genlaguerre(n - 1, alpha + 1, x),
    [(((),), {"n": 0, "alpha": 1.0}), (((3,),), {"n": 3, "alpha": 0.5}),
     (((2, 2),), {"n": 2.5, "alpha": 2.0})], why="it is the degree or a parameter")

eval_legendre = _with_static(_sc.eval_legendre, "n",
                             lambda ans, x, n: eval_gegenbauer(n - 1, 1.5, x), _DEGREES,
                             domain=(-0.9, 0.9), why=_DEGREE)
eval_chebyt = _with_static(_sc.eval_chebyt, "n", lambda ans, x, n: n * eval_chebyu(n - 1, x),
                           _DEGREES, domain=(-0.9, 0.9), why=_DEGREE)
eval_chebyu = _with_static(_sc.eval_chebyu, "n",
                           lambda ans, x, n: 2 * eval_gegenbauer(n - 1, 2.0, x), _DEGREES,
                           domain=(-0.9, 0.9), why=_DEGREE)
eval_laguerre = _with_static(_sc.eval_laguerre, "n",
                             lambda ans, x, n: -eval_genlaguerre(n - 1, 1.0, x), _DEGREES,
                             why=_DEGREE)
eval_hermite = _with_static(_sc.eval_hermite, "n",
                            lambda ans, x, n: 2 * n * eval_hermite(_below(n), x),
                            _INTEGER_DEGREES, domain=(-2.0, 2.0), why=_DEGREE)
eval_hermitenorm = _with_static(_sc.eval_hermitenorm, "n",
                                lambda ans, x, n: n * eval_hermitenorm(_below(n), x),
                                _INTEGER_DEGREES, domain=(-2.0, 2.0), why=_DEGREE)


# --- exponential integrals, zeta, dilogarithm, Lambert W ----------------------------------

expi = _ufunc(_sc.expi, lambda ans, x: fnp.exp(x) / x, domain=(-3.0, 3.0),
              valid=lambda x: _onp.all(_onp.abs(x) > 0.2), reads="x")
exp1 = _ufunc(_sc.exp1, lambda ans, x: -fnp.exp(-x) / x, domain=(0.2, 3.0), reads="x")


def _expn_d(ans, x, n):
    """E_n' = -E_{n-1}, with E_0(x) = exp(-x) / x written out (scipy's expn(0, x) is that
    too, but its own derivative would need E_{-1})."""
    n = _onp.asarray(n)
    if _onp.all(n > 1):
        return -expn(n - 1, x)
    if _onp.all(n == 1):
        return -fnp.exp(-x) / x
    if _onp.all(n == 0):
        return -fnp.exp(-x) * (x + 1) / (x * x)
    raise NotImplementedError("fgrad.scipy.special.expn: on traced x, n must be one integer "
                              "(or all n >= 2, or all equal)")


expn = _with_static(_sc.expn, "n", _expn_d,
                    [(((),), {"n": 1}), (((3,),), {"n": 2}), (((2, 2),), {"n": 0})],
                    domain=(0.3, 3.0), dtypes=("float64", "float32"), operand=False)
# spence(z) is the integral from 1 to z of log(t) / (1 - t), so its derivative is the integrand
spence = _ufunc(_sc.spence, lambda ans, z: fnp.log(z) / (1 - z), domain=(0.1, 3.0),
                valid=lambda z: _onp.all(_onp.abs(z - 1) > 0.05), reads="x")


def _several(fn, names, derivatives, domain, valid=None, doc=None):
    """scipy's ufunc ``fn`` of one argument and several outputs (``sici``, ``fresnel``,
    ``shichi``, ``airy``): a primitive per output (scipy computes all at each; a primitive's
    output is one array), ``derivatives[i](x, outputs)`` output ``i``'s (``outputs``: the
    outputs' primitives, for a derivative that is another output), and the public function
    giving them all, scipy's own on plain values."""
    # (not ufuncs: scipy's module takes only numpy arrays, ``defining.define``; the rules
    # read the input only)
    parts: list = []
    for i, (name, d) in enumerate(zip(names, derivatives)):
        parts.append(define(f"scipy.special.{fn.__name__}.{name}", lambda x, i=i: fn(x)[i],
                            [lambda g, ans, x, d=d: g * d(x, parts)],
                            [lambda t, ans, x, d=d: t * d(x, parts)],
                            spec=Spec(UNARY, domain=domain, valid=valid),
                            residuals=((0,), False)))

    @traced_version_of(fn)
    def public(x):
        return tuple(part(x) for part in parts)

    public._fgrad_entry = parts[0]
    if doc:
        public.__doc__ = f"fgrad: {doc}\n\n{fn.__doc__ or ''}"
    return public


# Si(x) = integral of sin(t) / t from 0, Ci(x) = gamma + log x + integral of (cos t - 1) / t:
# Si' = sinc, Ci' = cos(x) / x (scipy's Ci of a negative x is Ci(-x)'s real part: the same)
sici = _several(_sc.sici, ("si", "ci"), (lambda x, o: fnp.sinc(x / fnp.pi),
                                         lambda x, o: fnp.cos(x) / x),
                domain=(-4.0, 4.0), valid=lambda x: _onp.all(_onp.abs(x) > 0.2),
                doc="differentiable in x in both outputs: Si' = sin(x)/x, Ci' = cos(x)/x.")
# Shi(x), Chi(x): sinh's and cosh's as Si and Ci are sin's and cos's, Shi' = sinh(x) / x
# (written (exprel(x) + exprel(-x)) / 2: exact at 0, to every order), Chi' = cosh(x) / x
# (scipy's Chi of a negative x is Chi(-x)'s real part: the same derivative)
shichi = _several(_sc.shichi, ("shi", "chi"), (lambda x, o: 0.5 * (exprel(x) + exprel(-x)),
                                               lambda x, o: fnp.cosh(x) / x),
                  domain=(-3.0, 3.0), valid=lambda x: _onp.all(_onp.abs(x) > 0.2),
                  doc="differentiable in x in both outputs: Shi' = sinh(x)/x, Chi' = "
                      "cosh(x)/x.")
# S(z), C(z): the integrals of sin(pi t^2 / 2) and cos(pi t^2 / 2) from 0 to z
fresnel = _several(_sc.fresnel, ("S", "C"), (lambda z, o: fnp.sin(0.5 * fnp.pi * z * z),
                                             lambda z, o: fnp.cos(0.5 * fnp.pi * z * z)),
                   domain=(-2.0, 2.0),
                   doc="differentiable in z in both outputs: S' = sin(pi z^2 / 2), C' = "
                       "cos(pi z^2 / 2).")
# Ai, Ai', Bi, Bi' solve y'' = x y: each one's derivative is the next, or x times the last
airy = _several(_sc.airy, ("ai", "aip", "bi", "bip"),
                (lambda x, o: o[1](x), lambda x, o: x * o[0](x),
                 lambda x, o: o[3](x), lambda x, o: x * o[2](x)),
                domain=(-4.0, 2.0),
                doc="differentiable in x (real) in all four outputs: Ai' and Bi' are outputs, "
                    "Ai'' = x Ai, Bi'' = x Bi.")

_ZETA_TERMS = 16
# B_2k / (2k)!, k = 1 .. 10: Euler-Maclaurin's corrections (the Bernoulli numbers asked of
# scipy once: once per k, they were 0.6 ms of the import)
_ZETA_CORRECTIONS = [float(b / math.factorial(2 * k))
                     for k, b in enumerate(_sc.bernoulli(20)[2::2], 1)]


def _zeta_d_x(x, q):
    """d/dx of the Hurwitz zeta function zeta(x, q) = sum_n (n + q)^-x, for x > 1 and q > 0
    (scipy has no closed form): Euler-Maclaurin's formula, the first 16 terms, the integral
    of the rest and 10 Bernoulli corrections, differentiated term by term and written with
    fgrad.numpy, so it is differentiated, batched and staged again. Against mpmath at 40
    digits, x from 1.01 to 60 and q from 1e-3 to 1e4: relative error below 1e-12. scipy's
    zeta(x, q) is nan for x < 1 and q <= 0, and so is this; -inf at x = 1."""
    x0, q0 = fnp.broadcast_arrays(x, q)
    inside = (x0 > 1) & (q0 > 0)
    x, q = fnp.where(inside, x0, 2.0), fnp.where(inside, q0, 1.0)
    a = _onp.arange(_ZETA_TERMS) + q[..., None]
    head = -fnp.sum(fnp.log(a) * a ** -x[..., None], axis=-1)
    w = _ZETA_TERMS + q
    lw, s1 = fnp.log(w), x - 1
    # the rest's integral w^(1-x) / (x-1) and half its first term, differentiated
    out = head - w ** -s1 * (lw / s1 + 1 / (s1 * s1)) - 0.5 * lw * w ** -x
    # the corrections c_k (x)_(2k-1) w^(-x-2k+1), the rising factorial and its derivative
    rising, d_rising = x, fnp.ones_like(x)
    for k, c in enumerate(_ZETA_CORRECTIONS, 1):
        out = out + c * (d_rising - rising * lw) * w ** (1 - x - 2 * k)
        lo, hi = x + 2 * k - 1, x + 2 * k
        rising, d_rising = rising * lo * hi, d_rising * lo * hi + rising * (lo + hi)
    edge = fnp.where((x0 == 1) & (q0 > 0), -_onp.inf, _onp.nan)
    return fnp.where(inside, out, edge)


# the Hurwitz zeta function zeta(x, q), in both (scipy's zeta is no ufunc: numpy arrays only)
_zeta_xq = defining.elementwise(
    _name(_sc.zeta), _sc.zeta,
    lambda i, ans, x, q: _zeta_d_x(x, q) if i == 0 else -x * _zeta_xq(x + 1, q),
    Spec([(((), ()), {}), (((3,), ()), {}), (((2, 3), (3,)), {})],
         domain=[(1.2, 4.0), (0.3, 3.0)]))


# the Riemann zeta function zeta(x): staged or batched, an operand; differentiated, refused
# (not in the table: it has no rule to test)
_NO_X = ("scipy has no derivative of the Riemann zeta function; zeta(x, 1.0), the Hurwitz "
         "function at q = 1, is differentiable in x for x > 1")
_refuse_x = table.no_derivative("scipy.special.zeta", "x", _NO_X)
_riemann_zeta = table.Primitive("scipy.special.zeta", _sc.zeta, batch=batch_rules.elementwise,
                                vjps={0: _refuse_x}, jvps={0: _refuse_x})


@traced_version_of(_sc.zeta)
def zeta(x, q=None):
    """scipy.special.zeta: the Hurwitz zeta function ``zeta(x, q)`` differentiable in both,
    ``d/dq zeta(x, q) = -x zeta(x + 1, q)`` and the exponent's by Euler-Maclaurin's formula
    (``_zeta_d_x``; a power law's normaliser, a Zipf likelihood in its exponent); the Riemann
    zeta function ``zeta(x)`` not in ``x`` (``zeta(x, 1.0)`` is, for x > 1)."""
    if q is None:
        defining.refuse_differentiated("scipy.special.zeta", "x", x, _NO_X)
        return _riemann_zeta(x)
    return _zeta_xq(x, q)


zeta._fgrad_entry, zeta._fgrad_not_in = _zeta_xq, ()


def _lambertw_d(ans, z, k):
    """W' = W / (z (1 + W)), and 1 at z = 0 on the principal branch."""
    zero = without_derivative(z) == 0
    if surely_none(zero):
        return ans / (z * (1 + ans))
    return fnp.where(zero, 1.0, ans / (fnp.where(zero, 1.0, z) * (1 + ans)))


def _lambertw_vjp(g, ans, z, k=0, tol=1e-8):
    # (a real z gets the real part, the transpose of the real-to-complex JVP: cast_like's)
    return cast_like(g * _lambertw_d(ans, z, k), z)


_lambertw = define("scipy.special.lambertw",
                   lambda z, k=0, tol=1e-8: _sc.lambertw(z, k, tol),
                   [_lambertw_vjp], [lambda t, ans, z, k=0, tol=1e-8: t * _lambertw_d(ans, z, k)],
                   spec=Spec([(((),), {}), (((3,),), {})], domain=(0.1, 3.0)))


@traced_version_of(_sc.lambertw)
def lambertw(z, k=0, tol=1e-8):
    """scipy.special.lambertw: complex like scipy's, differentiable in ``z`` (holomorphic:
    ``W'(z) = W / (z (1 + W))``, 1 at 0 on branch 0); a real ``z`` gets a real gradient (of
    the real part). Take ``np.real(lambertw(x))`` for the real branch as a real function."""
    refuse_traced("scipy.special.lambertw", "k", k, "it is a branch index")
    refuse_traced("scipy.special.lambertw", "tol", tol, "it is a tolerance")
    return _lambertw(z, k=k, tol=tol)


lambertw._fgrad_entry, lambertw._fgrad_not_in = _lambertw, ("k",)


# the Faddeeva function w(z) = exp(-z^2) erfc(-i z): w' = -2 z w + 2 i / sqrt(pi), holomorphic
def _wofz_d(ans, z):
    return -2 * z * ans + 2j / math.sqrt(math.pi)


wofz = define("scipy.special.wofz", _sc.wofz,
              # (a real z gets the real part, as lambertw's: cast_like's)
              [lambda g, ans, z: cast_like(g * _wofz_d(ans, z), z)],
              [lambda t, ans, z: t * _wofz_d(ans, z)],
              spec=Spec([(((),), {}), (((3,),), {}), (((2, 3),), {})], domain=(-2.0, 2.0)))


# the Voigt profile V = Re w(z) / (sigma sqrt(2 pi)), z = (x + i gamma) / (sigma sqrt 2): its
# partials by w' (above) times z's own in x, sigma and gamma (1, -z, i over sigma sqrt 2;
# -z / sigma), and in sigma the prefactor's too (-V / sigma)
def _voigt_partial(i, ans, x, sigma, gamma):
    root2 = sigma * math.sqrt(2)
    z = (x + 1j * gamma) / root2
    dz = (1 / root2, -z / sigma, 1j / root2)[i]
    d = fnp.real(_wofz_d(wofz(z), z) * dz) / (sigma * math.sqrt(2 * math.pi))
    return d - ans / sigma if i == 1 else d


voigt_profile = defining.elementwise(
    _name(_sc.voigt_profile), _sc.voigt_profile, _voigt_partial,
    Spec([(((), (), ()), {}), (((3,), (), (3,)), {}), (((2, 3), (3,), ()), {})],
         domain=[(-2.0, 2.0), (0.5, 2.0), (0.2, 2.0)]),
    doc="scipy.special.voigt_profile(x, sigma, gamma), differentiable in all three (for "
        "sigma > 0: the Lorentzian limit sigma = 0 has no derivative here) through the "
        "Faddeeva function ``wofz``.")


# --- reductions: logsumexp, softmax, log_softmax ---------------------------------------

def _kept(y, axis, ndim, keepdims):
    """A reduction's result ``y`` with its reduced axes put back as length 1."""
    if keepdims:
        return y
    if axis is None:
        return fnp.reshape(y, (1,) * ndim)
    axes = (axis,) if isinstance(axis, (int, _onp.integer)) else tuple(axis)
    return fnp.expand_dims(y, tuple(a % ndim for a in axes))


def _lse_impl(a, *b, axis=None, keepdims=False, signed=False):
    r = _sc.logsumexp(a, axis=axis, b=b[0] if b else None, keepdims=keepdims,
                      return_sign=signed)
    return r[0] if signed else r


def _lse_weights(ans, a, b, axis, keepdims, signed):
    """d logsumexp / d(b e^a) = 1 / (sign * e^lse): the weights exp(a - lse) / sign. (The
    sign and the limits at infinities are computed from the values below the differentiating
    transforms: plain, or batched or staged, never read here.)"""
    ndim = max(_onp.ndim(value_for_shape(x)) for x in (a, *b))
    lse = _kept(ans, axis, ndim, keepdims)
    if not surely_none(~fnp.isfinite(without_derivative(ans))):
        return _lse_limit_weights(lse, a, b, axis, signed)
    return _signed(fnp.exp(a - lse), a, b, axis, signed)


def _signed(w, a, b, axis, signed):
    """The weights ``w`` divided by the sum's sign, where the result is signed."""
    return w * _lse_sign(a, *b, axis=axis) if signed else w


_lse_sign = values_only(
    lambda a, *b, axis: _sc.logsumexp(a, axis=axis, b=b[0] if b else None, keepdims=True,
                                      return_sign=True)[1], "scipy.special.logsumexp_sign")


def _lse_limit_impl(a_, lse_, *b, axis):
    """The weights at an infinite result: the entries equal to it share it (in proportion to
    ``b``), the others get 0 (where the result is finite these are not used)."""
    b_ = b[0] if b else _onp.ones_like(a_)
    tie = _onp.broadcast_to(a_ == lse_, _onp.broadcast_shapes(_onp.shape(a_), _onp.shape(b_)))
    share = _onp.sum(_onp.where(tie, b_, 0.0), axis=axis, keepdims=True)
    with _onp.errstate(divide="ignore", invalid="ignore"):
        return _onp.where(tie, 1.0 / share, 0.0)


_lse_limit = values_only(_lse_limit_impl, "scipy.special.logsumexp_limit")


def _lse_limit_weights(lse, a, b, axis, signed):
    """The weights where the result is infinite, where ``exp(a - lse)`` is inf - inf: the
    entries equal to the result share it (in proportion to ``b``, whose sum carries the
    sign), the others get 0; elsewhere the finite weights, signed as ``_lse_weights``'s
    (a staged or batched result, which may be either, selects between the two)."""
    limit = _lse_limit(a, lse, *b, axis=axis)
    finite = fnp.isfinite(without_derivative(lse))
    safe = fnp.where(finite, lse, 0.0)
    w = _signed(fnp.exp(fnp.where(finite, a, 0.0) - safe), a, b, axis, signed)
    return fnp.where(finite, w, fnp.astype(limit, dtype_of(w)))


def _lse_vjp(i, g, ans, a, *b, axis=None, keepdims=False, signed=False):
    w = _lse_weights(ans, a, b, axis, keepdims, signed)
    ndim = _onp.ndim(value_for_shape(w))
    gk = _kept(g, axis, ndim, keepdims)
    if i == 0:
        return unbroadcast_like(gk * (w * b[0] if b else w), a)
    return unbroadcast_like(gk * w, b[0])


def _lse_jvp(tangents, ans, a, *b, axis=None, keepdims=False, signed=False):
    w = _lse_weights(ans, a, b, axis, keepdims, signed)
    ta, tb = tangents[0], tangents[1] if b else None
    dot = None if ta is None else ta * (w * b[0] if b else w)
    if tb is not None:
        dot = tb * w if dot is None else dot + tb * w
    if dot is None:
        return None
    return broadcast_like(fnp.sum(dot, axis=axis, keepdims=keepdims), ans)


def _lse_composed(a, *b, axis=None, keepdims=False, signed=False):
    """logsumexp as exp, sum and log, shifted by the largest entry (a constant: the shift
    cancels), with the sum's sign (a constant of the point) taken out: for ``jet``, whose
    expansion of these does not read the output, as logsumexp's JVP rule does."""
    m = _onp.max(taylor_rules.constant(a), axis=axis, keepdims=True)
    e = fnp.exp(a - m)
    s = fnp.sum(e * b[0] if b else e, axis=axis, keepdims=True)
    if signed:
        s = s * _onp.sign(taylor_rules.constant(s))
    y = m + fnp.log(s)
    return y if keepdims else fnp.squeeze(y, axis=axis)


_LSE_CASES = [(((3,),), {}), (((2, 3),), {"axis": 1}), (((2, 3),), {"axis": 0, "keepdims": True}),
              (((2, 3), (3,)), {"axis": -1}), (((2, 3), (2, 3)), {"signed": True}),
              (((2, 2, 2),), {"axis": (0, 2)})]
_logsumexp = define("scipy.special.logsumexp", _lse_impl, vjp_by_argnum=_lse_vjp,
                    spec=Spec(_LSE_CASES, domain=[(-3.0, 3.0), (0.3, 2.0)]),
                    batch=batch_rules.along("axis"),
                    taylor=table.Composed(_lse_composed, where=taylor_rules.all_finite),
                    jvp_joint=_lse_jvp)


@traced_version_of(_sc.logsumexp)
def logsumexp(a, axis=None, b=None, keepdims=False, return_sign=False):
    """scipy.special.logsumexp, differentiable in ``a`` and ``b``: the gradient in ``a`` is
    ``b exp(a - logsumexp) / sign``; with ``return_sign=True`` the sign comes back as a plain
    array (piecewise constant: zero derivative)."""
    args = (a,) if b is None else (a, b)
    lse = _logsumexp(*args, axis=axis, keepdims=keepdims, signed=bool(return_sign))
    if not return_sign:
        return lse
    # (scipy's sign from the values below the transforms: a node where they are staged)
    sign = numpy_reference(_sc.logsumexp, a, axis=axis, b=b, keepdims=keepdims,
                           return_sign=True)[1]
    return lse, sign


logsumexp._fgrad_entry = _logsumexp


def _sum_kept(x, axis):
    return fnp.sum(x, axis=axis, keepdims=True)


_softmax = define(
    "scipy.special.softmax", lambda x, axis=None: _sc.softmax(x, axis=axis),
    [lambda g, ans, x, axis=None: ans * (g - _sum_kept(g * ans, axis))],
    [lambda t, ans, x, axis=None: ans * (t - _sum_kept(t * ans, axis))],
    spec=Spec([(((3,),), {}), (((2, 3),), {"axis": 1}), (((2, 3),), {"axis": 0})],
              domain=(-3.0, 3.0)), residuals=((), True), batch=batch_rules.along("axis"),
    taylor=table.Composed(lambda x, axis=None: fnp.exp(x - _lse_composed(x, axis=axis,
                                                                         keepdims=True)),
                          where=taylor_rules.all_finite))
_log_softmax = define(
    "scipy.special.log_softmax", lambda x, axis=None: _sc.log_softmax(x, axis=axis),
    [lambda g, ans, x, axis=None: g - fnp.exp(ans) * _sum_kept(g, axis)],
    [lambda t, ans, x, axis=None: t - _sum_kept(fnp.exp(ans) * t, axis)],
    spec=Spec([(((3,),), {}), (((2, 3),), {"axis": 1}), (((2, 3),), {"axis": 0})],
              domain=(-3.0, 3.0)), residuals=((), True), batch=batch_rules.along("axis"),
    taylor=table.Composed(lambda x, axis=None: x - _lse_composed(x, axis=axis, keepdims=True),
                          where=taylor_rules.all_finite))


@traced_version_of(_sc.softmax)
def softmax(x, axis=None):
    """scipy.special.softmax: the VJP is ``s * (g - sum(g * s, axis))``."""
    return _softmax(x, axis=axis)


@traced_version_of(_sc.log_softmax)
def log_softmax(x, axis=None):
    """scipy.special.log_softmax: the VJP is ``g - softmax(x) * sum(g, axis)``."""
    return _log_softmax(x, axis=axis)


softmax._fgrad_entry, log_softmax._fgrad_entry = _softmax, _log_softmax


# scipy.special's other functions: scipy's own on plain values, refused by name on traced ones
__getattr__ = defining.plain_only_fallback(__name__, _sc)
