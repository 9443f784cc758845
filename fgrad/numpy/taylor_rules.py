"""Taylor rules (``fgrad.jet``) for the elementwise functions whose derivative reads their own
output, and for arithmetic: each by the recurrence of its ODE, O(K^2) for K terms.

Terms follow JAX's ``jet`` convention: ``x(t) = x0 + sum_k x_k t^k / k!``, so a term is a
derivative of the path at 0 and the product rule is Leibniz's,
``(a b)_n = sum_j C(n, j) a_j b_{n-j}``, with integer coefficients: polynomials with integer
coefficients come out exact. A function ``y = f(x)`` with ``y' = D x'`` has
``y_{k+1} = (D x')_k = sum_j C(k, j) D_j x_{k+1-j}``, where ``D_j`` needs ``y`` only up to
``y_j``: the terms follow one by one (``exp``: ``D = y``; ``tanh``: ``D = 1 - y^2``).

A rule is ``rule(series, ans, *args, **params) -> [y_1, ..., y_K]``: ``series`` holds, per
argument, its K terms or ``None`` for a constant. Rules use ``fgrad.numpy``, so a jet's terms
can be differentiated, batched and staged again.
"""
import math
from math import comb

import numpy as _onp

import fgrad.numpy as fnp
from ..core.tracer import Tracer, value_for_shape, map_tracers
from .namespace import stopped, values_only


def constant(x):
    """``x``'s value below every differentiating transform, a jet's included: a constant of
    a composition along the path (a shift that cancels, a sign, a residual's rounding). A
    primitive without derivative, so a staged jet keeps it constant under ``grad``."""
    return map_tracers(x, stopped)


_SIGNS: dict = {}


def sign_of(fn, *xs):
    """The sign of ``fn`` (a numpy or scipy function) at the point, a constant along a jet's
    path where ``fn`` is nonzero: a composition writes gamma, beta or det as that sign times
    the exponential of their log-magnitude, whose jets do not read the output. Computed by a
    primitive without derivative, so a staged jet computes it anew at each replay."""
    prim = _SIGNS.get(fn)
    if prim is None:
        prim = _SIGNS[fn] = values_only(lambda *v: _onp.sign(fn(*v)),
                                        f"sign_of_{fn.__name__}")
    return prim(*xs)


def all_finite(ans, *args, **params):
    """A composition's ``where``: the output is finite (no inf - inf in its terms)."""
    return bool(_onp.all(_onp.isfinite(ans)))


def leibniz(a, b, n):
    """The n-th derivative of ``a * b`` at 0, from full lists (index 0 the value; None for a
    zero term): ``sum_j C(n, j) a_j b_{n-j}``."""
    out = None
    for j in range(n + 1):
        x, y = a[j], b[n - j]
        if x is None or y is None:
            continue
        c = comb(n, j)
        term = x * y if c == 1 else c * (x * y)
        out = term if out is None else out + term
    return out


def _full(x, s, order):
    """The full list ``[x, x_1, ..., x_K]`` of an argument (zeros for a constant)."""
    return [x] + (list(s) if s is not None else [None] * order)


def plus(a, b):
    """``a + b`` of two terms, None standing for zero."""
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def minus(a, b):
    """``a - b`` of two terms, None standing for zero."""
    if b is None:
        return a
    return -b if a is None else a - b


def _times(c, a):
    return None if a is None else c * a


def shaped(t, ans):
    """A term shaped like the output (a broadcast argument's)."""
    shape = _onp.shape(value_for_shape(ans))
    if t is None or _onp.shape(value_for_shape(t)) == shape:
        return t
    return fnp.broadcast_to(t, shape)


def by_ode(d_term):
    """The rule of ``y = f(x)`` with ``y' = D x'``, where ``d_term(j, y)`` gives ``D_j`` from
    ``y``'s full list known up to ``y_j``."""
    def rule(series, ans, x, **params):
        s = series[0]
        xs = [x] + list(s)
        ys = [ans]
        ds = []
        for k in range(len(s)):
            ds.append(d_term(k, ys))
            ys.append(leibniz(ds, xs[1:], k))
        return ys[1:]
    return rule


def _square_term(ys, j):
    return leibniz(ys, ys, j)


exp = by_ode(lambda j, ys: ys[j])
exp2 = by_ode(lambda j, ys: math.log(2) * ys[j])
expm1 = by_ode(lambda j, ys: ys[0] + 1 if j == 0 else ys[j])
tanh = by_ode(lambda j, ys: (1 - _square_term(ys, 0)) if j == 0 else -_square_term(ys, j))
tan = by_ode(lambda j, ys: (1 + _square_term(ys, 0)) if j == 0 else _square_term(ys, j))


def divide(series, ans, a, b):
    """``q = a / b``: ``q_k = (a_k - sum_{j<k} C(k, j) q_j b_{k-j}) / b_0``."""
    order = len(series[0] if series[0] is not None else series[1])
    as_, bs = _full(a, series[0], order), _full(b, series[1], order)
    qs = [ans]
    for k in range(1, order + 1):
        num = minus(as_[k], leibniz(qs + [None], bs, k))
        qs.append(shaped(None if num is None else num / b, ans))
    return qs[1:]


def reciprocal(series, ans, x):
    return divide([None, series[0]], ans, 1.0, x)


def _power_terms(xs, p, ans, order):
    """``w = u^p`` for a constant ``p``: from ``u w' = p w u'``,
    ``w_{k+1} = (p sum_{j<=k} C(k, j) w_j u_{k+1-j} - sum_{1<=j<=k} C(k, j) u_j w_{k+1-j})
    / u_0``. (Needs ``u_0 != 0``; a non-negative integer power is a product instead.)"""
    ws = [ans]
    for k in range(order):
        num = minus(_times(p, leibniz(ws, xs[1:], k)),
                     leibniz([None] + xs[1:k + 1], ws[1:] + [None], k))
        ws.append(None if num is None else num / xs[0])
    return ws[1:]


def _integer_power_terms(xs, n, order):
    """``u^n`` for a small non-negative integer ``n`` by repeated products (exact, and right at
    ``u_0 = 0`` too)."""
    full = [fnp.ones_like(xs[0])] + [None] * order
    for _ in range(n):
        full = [leibniz(full, xs, k) for k in range(order + 1)]
    return full[1:]


def _constant_power(series, ans, x, p):
    order = len(series[0])
    xs = [x] + list(series[0])
    # (a traced exponent keeps the recurrence, which carries its derivative)
    if not isinstance(p, Tracer) and _onp.ndim(p) == 0 and float(p) == int(p) and \
            0 <= int(p) <= 16:
        return [shaped(t, ans) for t in _integer_power_terms(xs, int(p), order)]
    return [shaped(t, ans) for t in _power_terms(xs, p, ans, order)]


def power(series, ans, x, y):
    """``x ** y``: a constant exponent by the power recurrence; a varying one as
    ``exp(y log x)``."""
    if series[1] is None:
        return _constant_power(series, ans, x, y)
    order = len(series[1])
    logs = [fnp.log(x)] + _log_terms(_full(x, series[0], order), order)
    m = [leibniz(_full(y, series[1], order), logs, k) for k in range(1, order + 1)]
    return [shaped(t, ans) for t in exp([m], ans, None)]


def _log_terms(xs, order):
    """``log u``'s terms: from ``u l' = u'``, ``l_{k+1} = (u_{k+1} - sum_{1<=j<=k} C(k, j)
    u_j l_{k+1-j}) / u_0``."""
    ls = [None]
    for k in range(order):
        num = minus(xs[k + 1], leibniz([None] + xs[1:k + 1], ls[1:] + [None], k))
        ls.append(None if num is None else num / xs[0])
    return ls[1:]


def sqrt(series, ans, x):
    return _constant_power(series, ans, x, 0.5)


def cbrt(series, ans, x):
    return _constant_power(series, ans, x, 1 / 3)


def square(series, ans, x):
    xs = [x] + list(series[0])
    return [leibniz(xs, xs, k) for k in range(1, len(series[0]) + 1)]


def _pair(sign):
    """``sin``/``cos`` (``sign = -1``) and ``sinh``/``cosh`` (``+1``): ``s' = c x'``,
    ``c' = sign * s x'``, each pair's terms together."""
    def terms(series, x, s0, c0):
        xs = [x] + list(series[0])
        ss, cs = [s0], [c0]
        for k in range(len(series[0])):
            ds, dc = leibniz(cs, xs[1:], k), leibniz(ss, xs[1:], k)
            ss.append(ds)
            cs.append(dc if sign > 0 else -dc)
        return ss[1:], cs[1:]
    return terms


_trig, _hyperbolic = _pair(-1), _pair(+1)


def sin(series, ans, x):
    return _trig(series, x, ans, fnp.cos(x))[0]


def cos(series, ans, x):
    return _trig(series, x, fnp.sin(x), ans)[1]


def sinh(series, ans, x):
    return _hyperbolic(series, x, ans, fnp.cosh(x))[0]


def cosh(series, ans, x):
    return _hyperbolic(series, x, fnp.sinh(x), ans)[1]


def _signed_sum(sign):
    """``x + sign * y``'s rule: the terms added (a broadcast argument's shaped like the
    output)."""
    def rule(series, ans, x, y):
        a, b = series
        order = len(a if a is not None else b)
        return [shaped(plus(None if a is None else a[k],
                             None if b is None else (b[k] if sign > 0 else -b[k])), ans)
                for k in range(order)]
    return rule


add, subtract = _signed_sum(+1), _signed_sum(-1)


def where(series, ans, c, x, y):
    """Piece by piece: each term from the branch the condition picks."""
    if series[0] is not None:
        return NotImplemented  # (a condition has no series)
    a, b = series[1], series[2]
    order = len(a if a is not None else b)
    return [shaped(fnp.where(c, 0 if a is None else a[k], 0 if b is None else b[k]), ans)
            for k in range(order)]


def absolute(series, ans, x):
    """``|x| = sign(x0) x`` near a real ``x0 != 0`` (0 at 0, the derivative's convention); a
    complex argument is expanded otherwise."""
    if _onp.iscomplexobj(value_for_shape(x)):
        return NotImplemented
    sign = fnp.sign(x)
    return [sign * t for t in series[0]]


def by_derivatives(derivatives):
    """The rule of an elementwise ``y = f(x)`` (further arguments static) from ``f``'s
    derivatives at the point, ``derivatives(x, K, **params) -> [f'(x), ..., f^(K)(x)]``:
    ``y = sum_j f^(j) / j! (x(t) - x0)^j``, the powers of the path's increment by Cauchy
    products (O(K^3)). For functions whose derivatives are other functions' values (Bessel
    functions: ``I_v' = (I_{v-1} + I_{v+1}) / 2``), where a JVP rule's jet would branch."""
    def rule(series, ans, x, **params):
        order = len(series[0])
        ds = derivatives(x, order, **params)
        inc = [None] + [t / math.factorial(k + 1) for k, t in enumerate(series[0])]
        power, out = inc, [None] * (order + 1)
        for j in range(1, order + 1):
            if j > 1:  # (x - x0)^j: it starts at t^j
                power = [None] * j + [_sum(power[i] * inc[n - i] for i in range(j - 1, n))
                                      for n in range(j, order + 1)]
            c = ds[j - 1] / math.factorial(j)
            for n in range(j, order + 1):
                out[n] = plus(out[n], c * power[n])
        return [shaped(out[n] * math.factorial(n), ans) for n in range(1, order + 1)]
    return rule


def _sum(terms):
    total = None
    for t in terms:
        total = plus(total, t)
    return total


def bessel_derivatives(f, half, sign, scale=0):
    """``[f'(x), ..., f^(K)(x)]`` for ``f(v, x)`` with ``f_v' = half (f_{v-1} + sign
    f_{v+1})`` (``half``: 1/2 for I, J, Y; -1/2 for K), from the 2K + 1 values ``f(v + m, x)``,
    ``|m| <= K``: ``f_v^(k) = half^k sum_j C(k, j) sign^j f_{v-k+2j}``. ``scale``: the
    exponentially scaled ``e^(scale x) f`` (``ive``: -sign(x), ``kve``: +1), by Leibniz."""
    def derivatives(x, order, v):
        values = {m: f(v + m, x) for m in range(-order, order + 1)}
        plain = [_sum(comb(k, j) * sign ** j * values[2 * j - k] for j in range(k + 1))
                 * half ** k for k in range(order + 1)]
        if not isinstance(scale, Tracer) and not _onp.any(scale):
            return plain[1:]
        return [_sum(comb(k, m) * scale ** (k - m) * plain[m] for m in range(k + 1))
                for k in range(1, order + 1)]
    return derivatives


def summed(jvps):
    """The per-argument JVP rules ``jvps`` as one ``(tangents, ans, *args, **params)``."""
    def jvp(tangents, ans, *args, **params):
        return _sum(jvps[i](t, ans, *args, **params)
                    for i, t in enumerate(tangents) if t is not None)
    return jvp


def linear_equation(jvp, rhs):
    """The rule of a solver ``y = prim(*args)`` of an equation linear in ``y``: ``F(m) y =
    r``, ``F`` linear in the matrix arguments ``m``, ``r`` in the arguments ``rhs`` (``solve``:
    ``a y = b``; Sylvester's ``a y + y b = q``), given its JVP rule ``jvp(tangents, y, *args,
    **params)`` (tangents None for zero). Its JVP rule ``J(t; y)`` is
    ``F(m)^-1 (t_r - F(t_m) y)``, so Leibniz's rule on ``F(m(t)) y(t) = r(t)`` gives
    ``y_k = J(all k-th terms; y_0) + sum_{0<j<k} C(k, j) J(m's j-th terms; y_{k-j})``:
    O(K^2) solves with the matrix at the point (a JVP rule's jet would solve with the
    matrix's jet, recursively)."""
    def rule(series, ans, *args, **params):
        order = len(next(s for s in series if s is not None))
        ys = [ans]
        for k in range(1, order + 1):
            y = jvp([None if s is None else s[k - 1] for s in series], ans, *args, **params)
            for j in range(1, k):
                ts = [None if s is None or i in rhs else s[j - 1] for i, s in enumerate(series)]
                if any(t is not None for t in ts):
                    y = plus(y, _times(comb(k, j), jvp(ts, ys[k - j], *args, **params)))
            ys.append(y)
        return ys[1:]
    return rule
