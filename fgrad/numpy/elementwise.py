"""Elementwise functions: each derivative in one line, beside the function.

``unary(name, d)`` takes the derivative ``d(ans, x)`` and makes both rules from it
(VJP ``g * d``, JVP ``t * d``). Binary functions give each partial derivative; broadcasting is
undone by ``unbroadcast``. Kinks follow one convention, the average of the one-sided
derivatives: ``abs'(0) = 0``, and ``maximum``/``minimum`` split a tie 0.5/0.5 (so does
``clip`` at its bounds, which is built from them).
"""
import math

import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define
from ..tracer import innermost, strip
from .broadcasting import broadcast_like, mask, unbroadcast
from .wrapping import traced_version_of, unsupported_kwargs

UNARY = [(((),), {}), (((4,),), {}), (((2, 3),), {})]
BINARY = [(((), ()), {}), (((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 1), (1, 3)), {}),
          (((), (2, 2)), {})]


def _away_from(points, margin=0.05):
    """A ``valid`` predicate keeping the first argument ``margin`` away from ``points``."""
    return lambda x, *rest: all(_onp.all(_onp.abs(_onp.asarray(x) - p) > margin) for p in points)


def unary(name, d, domain=(-2.0, 2.0), valid=None, order=2, **spec):
    """Register the numpy ufunc ``name`` with derivative ``d(ans, x)``."""
    return define(name, getattr(_onp, name),
                  [lambda g, ans, x: g * d(ans, x)], [lambda t, ans, x: t * d(ans, x)],
                  spec=Spec(UNARY, domain=domain, valid=valid, order=order, **spec))


negative = define("negative", _onp.negative, [lambda g, ans, x: -g], linear=True,
                  spec=Spec(UNARY))
sqrt = unary("sqrt", lambda ans, x: 0.5 / ans, domain=(0.1, 4.0))
cbrt = unary("cbrt", lambda ans, x: 1 / (3 * ans ** 2), domain=(0.1, 4.0))
square = unary("square", lambda ans, x: 2 * x)
reciprocal = unary("reciprocal", lambda ans, x: -ans ** 2, domain=(0.3, 3.0))
exp = unary("exp", lambda ans, x: ans)
exp2 = unary("exp2", lambda ans, x: math.log(2) * ans)
expm1 = unary("expm1", lambda ans, x: ans + 1)
log = unary("log", lambda ans, x: 1 / x, domain=(0.1, 4.0))
log2 = unary("log2", lambda ans, x: 1 / (x * math.log(2)), domain=(0.1, 4.0))
log10 = unary("log10", lambda ans, x: 1 / (x * math.log(10)), domain=(0.1, 4.0))
log1p = unary("log1p", lambda ans, x: 1 / (1 + x), domain=(-0.9, 3.0))
sin = unary("sin", lambda ans, x: fnp.cos(x))
cos = unary("cos", lambda ans, x: -fnp.sin(x))
tan = unary("tan", lambda ans, x: 1 + ans ** 2, domain=(-1.2, 1.2))
arcsin = unary("arcsin", lambda ans, x: 1 / fnp.sqrt(1 - x ** 2), domain=(-0.9, 0.9))
arccos = unary("arccos", lambda ans, x: -1 / fnp.sqrt(1 - x ** 2), domain=(-0.9, 0.9))
arctan = unary("arctan", lambda ans, x: 1 / (1 + x ** 2))
sinh = unary("sinh", lambda ans, x: fnp.cosh(x))
cosh = unary("cosh", lambda ans, x: fnp.sinh(x))
tanh = unary("tanh", lambda ans, x: 1 - ans ** 2)
arcsinh = unary("arcsinh", lambda ans, x: 1 / fnp.sqrt(x ** 2 + 1))
arccosh = unary("arccosh", lambda ans, x: 1 / fnp.sqrt(x ** 2 - 1), domain=(1.1, 4.0))
arctanh = unary("arctanh", lambda ans, x: 1 / (1 - x ** 2), domain=(-0.9, 0.9))
# abs has a kink at 0; sign is a constant (zero-derivative) array there, giving abs'(0) = 0.
absolute = unary("absolute", lambda ans, x: _onp.sign(innermost(x)), valid=_away_from([0.0]))
abs = absolute


# Complex parts are linear over the reals; their transposes follow JAX (real -> g + 0j,
# imag -> -1j g, conj -> conj g). On real input they pass the derivative through or give zero.
def _is_complex(x):
    return _onp.iscomplexobj(innermost(x))


real = define("real", _onp.real, [lambda g, ans, x: g + 0j if _is_complex(x) else g],
              linear=True, spec=Spec(UNARY))
imag = define("imag", _onp.imag, [lambda g, ans, x: -1j * g if _is_complex(x) else None],
              linear=True, spec=Spec(UNARY))
conjugate = define("conjugate", _onp.conjugate,
                   [lambda g, ans, x: fnp.conjugate(g) if _is_complex(x) else g],
                   linear=True, spec=Spec(UNARY))
conj = conjugate


add = define("add", _onp.add,
             [lambda g, ans, x, y: unbroadcast(g, x.shape),
              lambda g, ans, x, y: unbroadcast(g, y.shape)],
             [lambda t, ans, x, y: broadcast_like(t, ans),
              lambda t, ans, x, y: broadcast_like(t, ans)],
             spec=Spec(BINARY))
subtract = define("subtract", _onp.subtract,
                  [lambda g, ans, x, y: unbroadcast(g, x.shape),
                   lambda g, ans, x, y: unbroadcast(-g, y.shape)],
                  [lambda t, ans, x, y: broadcast_like(t, ans),
                   lambda t, ans, x, y: broadcast_like(-t, ans)],
                  spec=Spec(BINARY))
multiply = define("multiply", _onp.multiply,
                  [lambda g, ans, x, y: unbroadcast(g * y, x.shape),
                   lambda g, ans, x, y: unbroadcast(x * g, y.shape)],
                  linear=True, spec=Spec(BINARY))
divide = define("divide", _onp.divide,
                [lambda g, ans, x, y: unbroadcast(g / y, x.shape),
                 lambda g, ans, x, y: unbroadcast(-g * ans / y, y.shape)],
                [lambda t, ans, x, y: broadcast_like(t / y, ans),
                 lambda t, ans, x, y: -t * ans / y],
                spec=Spec(BINARY, domain=((-2.0, 2.0), (0.5, 2.0))))
true_divide = divide


def _dpow_base(ans, x, y):
    # y * x**(y-1). At the single point x == 0, y == 0 it is 0 * inf; there the base is
    # replaced by 1 (giving 0). Guarding the exponent instead would change the derivative
    # with respect to y at y == 0.
    singular = (innermost(x) == 0) & (innermost(y) == 0)
    return y * fnp.where(singular, 1, x) ** (y - 1)


def _dpow_exponent(ans, x, y):
    # d(x**y)/dy = x**y * log(x); 0**y has zero derivative (for y > 0), so log(0) is avoided
    return ans * fnp.log(fnp.where(innermost(x) == 0, 1, x))


power = define("power", _onp.power,
               [lambda g, ans, x, y: unbroadcast(g * _dpow_base(ans, x, y), x.shape),
                lambda g, ans, x, y: unbroadcast(g * _dpow_exponent(ans, x, y), y.shape)],
               [lambda t, ans, x, y: broadcast_like(t * _dpow_base(ans, x, y), ans),
                lambda t, ans, x, y: t * _dpow_exponent(ans, x, y)],
               spec=Spec(BINARY, domain=((0.2, 2.0), (-2.0, 2.0))))

mod = define("mod", _onp.mod,
             [lambda g, ans, x, y: unbroadcast(g, x.shape),
              lambda g, ans, x, y: unbroadcast(-g * _onp.floor_divide(innermost(x),
                                                                       innermost(y)), y.shape)],
             [lambda t, ans, x, y: broadcast_like(t, ans),
              lambda t, ans, x, y: -t * _onp.floor_divide(innermost(x), innermost(y))],
             # keep x / y away from integers, where mod jumps
             spec=Spec(BINARY, domain=((0.1, 3.0), (0.7, 1.3)),
                       valid=lambda x, y: _onp.all(_frac_distance(x / y) > 0.05)))
remainder = mod


def _frac_distance(r):
    return _onp.abs(r - _onp.round(r))


def _tie_split(x, y):
    """d max(x, y)/dx: 1 where x wins, 0.5 at a tie, 0 where y wins (as a plain mask)."""
    xv, yv = innermost(x), innermost(y)
    return mask(xv > yv, x) + 0.5 * mask(xv == yv, x)


def _extremum(name, fn, wins):
    """``maximum``/``minimum``: ``wins(x, y)`` is d fn(x, y)/dx (1, 0.5 at a tie, or 0)."""
    return define(name, fn,
                  [lambda g, ans, x, y: unbroadcast(g * wins(x, y), x.shape),
                   lambda g, ans, x, y: unbroadcast(g * wins(y, x), y.shape)],
                  [lambda t, ans, x, y: broadcast_like(t * wins(x, y), ans),
                   lambda t, ans, x, y: broadcast_like(t * wins(y, x), ans)],
                  spec=Spec(BINARY, valid=lambda x, y: _onp.all(_onp.abs(x - y) > 0.05)))


maximum = _extremum("maximum", _onp.maximum, _tie_split)
minimum = _extremum("minimum", _onp.minimum, lambda x, y: _tie_split(y, x))


def _where_impl(c, x, y):
    return _onp.where(c, x, y)


where_p = define("where", _where_impl,
                 [None,
                  lambda g, ans, c, x, y: unbroadcast(fnp.where(c, g, 0), _shape(x)),
                  lambda g, ans, c, x, y: unbroadcast(fnp.where(c, 0, g), _shape(y))],
                 [None,
                  lambda t, ans, c, x, y: broadcast_like(fnp.where(c, t, 0), ans),
                  lambda t, ans, c, x, y: broadcast_like(fnp.where(c, 0, t), ans)],
                 spec=Spec([(((3,), (3,), (3,)), {}), (((2, 3), (3,), (2, 3)), {}),
                            (((2, 1), (), (1, 3)), {})],
                           domain=("bool", (-2.0, 2.0), (-2.0, 2.0))))


def _shape(x):
    return _onp.shape(innermost(x))


def where(condition, x=None, y=None):
    """numpy.where; the condition has no derivative, ``x`` and ``y`` are selected from."""
    condition = strip(condition)  # tracers anywhere in it, lists included, count as values
    if x is None and y is None:
        return _onp.where(condition)
    return where_p(condition, x, y)


@traced_version_of(_onp.clip)
def clip(a, a_min=None, a_max=None, out=None, **kwargs):
    """numpy.clip, built from ``maximum``/``minimum``: derivative 1 inside, 0 outside and 0.5
    exactly at a bound (ties split evenly, as in ``maximum``). Bounds may be traced too."""
    a_min, a_max = kwargs.pop("min", a_min), kwargs.pop("max", a_max)
    unsupported_kwargs("clip", dict(kwargs, out=out))
    if a_min is not None:
        a = maximum(a, a_min)
    if a_max is not None:
        a = minimum(a, a_max)
    return a
