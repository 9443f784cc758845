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
from ..tracer import Tracer, innermost_meta


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


def _plus(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return a + b


def _minus(a, b):
    """``a - b`` of two terms, None standing for zero."""
    if b is None:
        return a
    return -b if a is None else a - b


def _times(c, a):
    return None if a is None else c * a


def shaped(t, ans):
    """A term shaped like the output (a broadcast argument's)."""
    shape = _onp.shape(innermost_meta(ans))
    if t is None or _onp.shape(innermost_meta(t)) == shape:
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
        num = _minus(as_[k], leibniz(qs + [None], bs, k))
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
        num = _minus(_times(p, leibniz(ws, xs[1:], k)),
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
        num = _minus(xs[k + 1], leibniz([None] + xs[1:k + 1], ls[1:] + [None], k))
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
        return [shaped(_plus(None if a is None else a[k],
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
    if _onp.iscomplexobj(innermost_meta(x)):
        return NotImplemented
    sign = fnp.sign(x)
    return [sign * t for t in series[0]]
