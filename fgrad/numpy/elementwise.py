"""Elementwise functions: each derivative in one line, beside the function.

``unary(name, d)`` takes the derivative ``d(ans, x)`` and makes both rules from it
(VJP ``g * d``, JVP ``t * d``); ``binary(name, dx, dy)`` does the same with the two partial
derivatives, undoing broadcasting with ``unbroadcast``.

Kinks follow one convention, the average of the one-sided derivatives: ``abs'(0) = 0``
(also ``fabs``, ``copysign`` in its first argument at 0, ``hypot`` at the origin),
``maximum``/``minimum``/``fmax``/``fmin`` split a tie 0.5/0.5 (so does ``clip`` at its
bounds, which is built from them), and ``interp`` takes the mean of the two slopes at a knot.
Where no average exists the choice is stated in the function's docstring (``sqrt'(0)`` is
inf, ``arctan2`` has derivative 0 at the origin).

Complex inputs follow JAX: a holomorphic function's JVP is ``t * f'(z)`` and its VJP
``g * f'(z)`` (unconjugated); ``absolute``, ``real``, ``imag``, ``conjugate`` and ``angle`` are
transposed under the pairing ``Re sum(x * y)``.

The ufunc primitives take every numpy keyword on plain values; on traced values the ufunc
keywords (``out=``, ``where=``, ``dtype=``, ``casting=``, ...) are refused by name.
"""
import builtins as _builtins
import functools
import math
import operator

import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors
from ..core import table
from ..core.table import Spec, register_function
from ..core.other_arrays import as_array, surely_none
from . import batch_rules, taylor_rules, ufunc_methods
from ..core.tracer import (Tracer, without_derivative, contains_tracer, read_value, value_for_shape,
                           map_tracers, read_values)
from .broadcasting import (broadcast_like, cast_like, dtype_of, mask, shape_of,
                           unbroadcast_like)
from .indexing import gather_p
from .namespace import values_only, zero_derivative
from .wrapping import differentiable, unsupported_kwargs

def define(*args, **kwargs):
    """The table's ``define`` for this family: every function batches by broadcasting (its
    batch axis in front), and a ufunc's primitive gets the ufunc's methods (``outer``,
    ``reduce``, ``accumulate``, ``reduceat``, ``at``)."""
    impl = args[1] if len(args) > 1 else kwargs["impl"]
    cls = ufunc_methods.UfuncPrimitive if isinstance(impl, _onp.ufunc) else None
    return table.define(*args, batch=batch_rules.elementwise, cls=cls, **kwargs)

UNARY = [(((),), {}), (((4,),), {}), (((2, 3),), {})]
BINARY = [(((), ()), {}), (((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 1), (1, 3)), {}),
          (((), (2, 2)), {})]


def _ufunc_call(prim, args, params):
    """Traced calls of a ufunc primitive: ``out=`` (or a positional ``out``) writes the result
    into a traced array as numpy does (``ufunc_methods.call_into``); the other ufunc keywords
    are refused by name rather than let them reach the rules. Plain calls are numpy's, every
    keyword included."""
    nin = prim.impl.nin
    if len(args) > nin:  # numpy's positional out argument
        if "out" in params:
            raise TypeError("cannot specify 'out' as both a positional and keyword argument")
        params = dict(params, out=args[nin:])
        args = args[:nin]
    if params.get("out") is not None:
        params = dict(params)
        return table.Answered(ufunc_methods.call_into(prim, args, params.pop("out"), params))
    if params:
        unsupported_kwargs(prim.name, params)
    return {}


_shape = shape_of


def _away_from(points, margin=0.05):
    """A ``valid`` predicate keeping the first argument ``margin`` away from ``points``."""
    return lambda x, *rest: all(_onp.all(_onp.abs(_onp.asarray(x) - p) > margin) for p in points)


def _separated(margin=0.05):
    """A ``valid`` predicate: the two arguments differ by more than ``margin`` (no ties)."""
    return lambda x, y: _onp.all(_onp.abs(x - y) > margin)


_READS = {"x": ((0,), False), "ans": ((), True), "both": ((0,), True)}


def unary(name, d, domain=(-2.0, 2.0), valid=None, order=2, reads="both", impl=None,
          taylor=None, fresh_output=False, **spec):
    """Register the numpy ufunc ``name`` with derivative ``d(ans, x)``, which ``reads`` the
    input ``"x"``, the output ``"ans"`` or ``"both"`` (what a backward-only tape keeps).
    ``taylor``: its rule for ``jet`` (``fgrad.numpy.taylor_rules``; without one, ``jet``
    expands ``d``). ``impl``: another library's ufunc (``scipy.special.erf``) in place of
    numpy's ``name``. ``fresh_output``: see ``Primitive``."""
    return define(name, impl or getattr(_onp, name),
                  [lambda g, ans, x: g * d(ans, x)], [lambda t, ans, x: t * d(ans, x)],
                  spec=Spec(UNARY, domain=domain, valid=valid, order=order, **spec),
                  check_call=_ufunc_call, residuals=_READS[reads], taylor=taylor,
                  writes_into=True, fresh_output=fresh_output)


def binary(name, dx, dy, domain=(-2.0, 2.0), valid=None, cases=BINARY, cast=False, impl=None,
           taylor=None, **spec):
    """Register the numpy ufunc ``name`` with partial derivatives ``dx(ans, x, y)`` and
    ``dy(ans, x, y)`` (``None`` for a zero derivative). ``cast``: the output's dtype may be
    wider than the arguments' (``float_power``); cotangents are cast back to theirs.
    ``impl``: another library's ufunc in place of numpy's ``name``. ``taylor``: its rule for
    ``jet`` (without one, ``jet`` expands ``dx`` and ``dy``)."""
    def vjp(d, arg):
        if d is None:
            return None
        if cast:
            return lambda g, ans, x, y: cast_like(
                unbroadcast_like(g * d(ans, x, y), (x, y)[arg]), (x, y)[arg])
        return lambda g, ans, x, y: unbroadcast_like(g * d(ans, x, y), (x, y)[arg])

    def jvp(d):
        if d is None:
            return None
        return lambda t, ans, x, y: broadcast_like(t * d(ans, x, y), ans)

    return define(name, impl or getattr(_onp, name), [vjp(dx, 0), vjp(dy, 1)], [jvp(dx), jvp(dy)],
                  spec=Spec(cases, domain=domain, valid=valid, **spec), check_call=_ufunc_call,
                  taylor=taylor)


def linear_unary(name, transpose, **fields):
    """Register the numpy ufunc ``name``, linear in its argument, by its transpose."""
    return define(name, getattr(_onp, name), [lambda g, ans, x: transpose(g)],
                  linear=True, spec=Spec(UNARY), check_call=_ufunc_call, residuals=((), False),
                  **fields)


def _safe_div(num, den):
    """``num / den``, and 0 (with zero derivatives of every order) where ``den`` is 0: the
    derivative at a point where no one-sided limit agrees (``hypot``, ``arctan2`` at 0)."""
    zero = without_derivative(den) == 0  # (a mask: plain, or batched or staged with den)
    if surely_none(zero):
        return num / den
    return where_p(zero, 0, num / where_p(zero, 1, den))


def _is_complex(x):
    return _onp.iscomplexobj(value_for_shape(x))


def _by_operator(op, ufunc):
    """``ufunc`` computed by numpy's operator ``op`` on the values a transform hands down: the
    same result without the ufunc call's overhead on scalars. Where Python's own arithmetic
    answers instead (a Python complex times a numpy float64, which subclasses float), the
    result is not numpy's type, and the ufunc is called after all."""
    def fast(*args):
        try:
            r = op(*args)
        except ZeroDivisionError:  # (two Python numbers: numpy's inf, not Python's error)
            return ufunc(*args)
        return r if isinstance(r, _NUMPY_VALUES) else ufunc(*args)
    fast.numpy_only = True  # (see Primitive: numpy's operators call no fgrad code)
    fast.operator = op  # (what the stand-in comes to where an operand is a numpy value)
    return fast


_NUMPY_VALUES = (_onp.ndarray, _onp.generic)
# (squares in the rules are written x * x: a product, where ``x ** 2`` would record ``power``
# and its rules, several times dearer when derivatives are nested)
negative = linear_unary("negative", lambda g: -g, operator="-", fresh_output=True,
                        fast_impl=_by_operator(operator.neg, _onp.negative))
positive = linear_unary("positive", lambda g: g)
sqrt = unary("sqrt", lambda ans, x: 0.5 / ans, domain=(0.1, 4.0), reads="ans",
             taylor=taylor_rules.sqrt, fresh_output=True)
sqrt.__doc__ = (_onp.sqrt.__doc__ or "") + """
fgrad: the derivative ``0.5 / sqrt(x)`` is inf at ``x = 0`` (only the one-sided derivative
exists there, and it is infinite), as numpy's formula gives; a zero cotangent there gives nan.
"""
cbrt = unary("cbrt", lambda ans, x: 1 / (3 * (ans * ans)), domain=(0.1, 4.0), reads="ans",
             taylor=taylor_rules.cbrt)
square = unary("square", lambda ans, x: 2 * x, reads="x", taylor=taylor_rules.square,
               fresh_output=True)
reciprocal = unary("reciprocal", lambda ans, x: -(ans * ans), domain=(0.3, 3.0), reads="ans",
                   taylor=taylor_rules.reciprocal)
exp = unary("exp", lambda ans, x: ans, reads="ans", taylor=taylor_rules.exp, fresh_output=True)
exp2 = unary("exp2", lambda ans, x: math.log(2) * ans, reads="ans", taylor=taylor_rules.exp2)
expm1 = unary("expm1", lambda ans, x: ans + 1, reads="ans", taylor=taylor_rules.expm1)
log = unary("log", lambda ans, x: 1 / x, domain=(0.1, 4.0), reads="x", fresh_output=True)
log2 = unary("log2", lambda ans, x: 1 / (x * math.log(2)), domain=(0.1, 4.0), reads="x")
log10 = unary("log10", lambda ans, x: 1 / (x * math.log(10)), domain=(0.1, 4.0), reads="x")
log1p = unary("log1p", lambda ans, x: 1 / (1 + x), domain=(-0.9, 3.0), reads="x")
sin = unary("sin", lambda ans, x: fnp.cos(x), reads="x", taylor=taylor_rules.sin,
            fresh_output=True)
cos = unary("cos", lambda ans, x: -fnp.sin(x), reads="x", taylor=taylor_rules.cos,
            fresh_output=True)
tan = unary("tan", lambda ans, x: 1 + ans * ans, domain=(-1.2, 1.2), reads="ans",
            taylor=taylor_rules.tan)


def _sqrt_one_minus_square(x):
    """``sqrt(1 - x^2)``; for complex ``x`` as ``sqrt(-(x - 1)) sqrt(1 + x)`` (Kahan's), whose
    sign of zero keeps arcsin's and arccos's side of their cuts: on the real axis beyond 1
    (``emath.arcsin(8.0)``) the one-factor form gave the other side's derivative, of the
    other sign."""
    if _is_complex(x):
        return fnp.sqrt(-(x - 1)) * fnp.sqrt(1 + x)
    return fnp.sqrt(1 - x * x)


arcsin = unary("arcsin", lambda ans, x: 1 / _sqrt_one_minus_square(x), domain=(-0.9, 0.9),
               reads="x")
arccos = unary("arccos", lambda ans, x: -1 / _sqrt_one_minus_square(x), domain=(-0.9, 0.9),
               reads="x")
arctan = unary("arctan", lambda ans, x: 1 / (1 + x * x), reads="x")
sinh = unary("sinh", lambda ans, x: fnp.cosh(x), reads="x", taylor=taylor_rules.sinh)
cosh = unary("cosh", lambda ans, x: fnp.sinh(x), reads="x", taylor=taylor_rules.cosh)
tanh = unary("tanh", lambda ans, x: 1 - ans * ans, reads="ans", taylor=taylor_rules.tanh,
             fresh_output=True)
arcsinh = unary("arcsinh", lambda ans, x: 1 / fnp.sqrt(x * x + 1), reads="x")
# sqrt(x - 1) * sqrt(x + 1), not sqrt(x**2 - 1): the same for real x > 1, and for complex x
# the only form whose branch cut is arccosh's (the real axis left of 1)
arccosh = unary("arccosh", lambda ans, x: 1 / (fnp.sqrt(x - 1) * fnp.sqrt(x + 1)),
                domain=(1.1, 4.0), reads="x")
arctanh = unary("arctanh", lambda ans, x: 1 / (1 - x * x), domain=(-0.9, 0.9), reads="x")
deg2rad = linear_unary("deg2rad", lambda g: fnp.deg2rad(g))
radians = linear_unary("radians", lambda g: fnp.radians(g))
rad2deg = linear_unary("rad2deg", lambda g: fnp.rad2deg(g))
degrees = linear_unary("degrees", lambda g: fnp.degrees(g))


# abs has a kink at 0; for real x the derivative is sign(x), a constant array, giving
# abs'(0) = 0. For complex z it is the direction conj(z) / |z| (JAX's convention), 0 at z = 0.
def _abs_vjp(g, ans, x):
    if _is_complex(x):
        return g * _safe_div(fnp.conjugate(x), ans)
    return g * fnp.sign(x)  # (zero derivative: a staged function records it, guards nothing)


def _abs_jvp(t, ans, x):
    if _is_complex(x):
        return _safe_div(fnp.real(fnp.conjugate(x) * t), ans)
    return t * fnp.sign(x)


absolute = define("absolute", _onp.absolute, [_abs_vjp], [_abs_jvp],
                  spec=Spec(UNARY, valid=_away_from([0.0])), check_call=_ufunc_call,
                  taylor=taylor_rules.absolute)
absolute.__doc__ = (_onp.absolute.__doc__ or "") + """
fgrad: the derivative at 0 is 0 (the average of -1 and 1); of a complex z it is the direction
``conj(z) / |z|`` (JAX's convention), also 0 at z = 0.
"""
abs = absolute
fabs = unary("fabs", lambda ans, x: fnp.sign(x), valid=_away_from([0.0]), reads="x")
fabs.__doc__ = (_onp.fabs.__doc__ or "") + "\nfgrad: the derivative at 0 is 0, as for abs.\n"


# Complex parts are linear over the reals; their transposes follow JAX (real -> g + 0j,
# imag -> -1j g, conj -> conj g). On real input they pass the derivative through or give zero.
real = define("real", _onp.real, [lambda g, ans, x: g + 0j if _is_complex(x) else g],
              linear=True, spec=Spec(UNARY))
imag = define("imag", _onp.imag, [lambda g, ans, x: -1j * g if _is_complex(x) else None],
              linear=True, spec=Spec(UNARY))
conjugate = define("conjugate", _onp.conjugate,
                   [lambda g, ans, x: fnp.conjugate(g) if _is_complex(x) else g],
                   linear=True, spec=Spec(UNARY), check_call=_ufunc_call)
conj = conjugate


add = define("add", _onp.add,
             [lambda g, ans, x, y: unbroadcast_like(g, x),
              lambda g, ans, x, y: unbroadcast_like(g, y)],
             [lambda t, ans, x, y: broadcast_like(t, ans),
              lambda t, ans, x, y: broadcast_like(t, ans)],
             spec=Spec(BINARY), check_call=_ufunc_call, residuals=((), False),
             taylor=taylor_rules.add, fast_impl=_by_operator(operator.add, _onp.add),
             operator="+", commutative=True, writes_into=True, fresh_output=True)
subtract = define("subtract", _onp.subtract,
                  [lambda g, ans, x, y: unbroadcast_like(g, x),
                   lambda g, ans, x, y: unbroadcast_like(-g, y)],
                  [lambda t, ans, x, y: broadcast_like(t, ans),
                   lambda t, ans, x, y: broadcast_like(-t, ans)],
                  spec=Spec(BINARY), check_call=_ufunc_call, residuals=((), False),
                  taylor=taylor_rules.subtract, operator="-", writes_into=True,
                  fast_impl=_by_operator(operator.sub, _onp.subtract), fresh_output=True)
multiply = define("multiply", _onp.multiply,
                  [lambda g, ans, x, y: unbroadcast_like(g * y, x),
                   lambda g, ans, x, y: unbroadcast_like(x * g, y)],
                  linear=True, spec=Spec(BINARY), check_call=_ufunc_call,
                  residuals=("others", False), operator="*", commutative=True, writes_into=True,
                  fast_impl=_by_operator(operator.mul, _onp.multiply), fresh_output=True)
divide = define("divide", _onp.divide,
                [lambda g, ans, x, y: unbroadcast_like(g / y, x),
                 lambda g, ans, x, y: unbroadcast_like(-g * ans / y, y)],
                [lambda t, ans, x, y: broadcast_like(t / y, ans),
                 lambda t, ans, x, y: -t * ans / y],
                spec=Spec(BINARY, domain=((-2.0, 2.0), (0.5, 2.0))), check_call=_ufunc_call,
                residuals=((1,), True), taylor=taylor_rules.divide, operator="/",
                fast_impl=_by_operator(operator.truediv, _onp.divide), fresh_output=True)
true_divide = divide


def _dpow_base(ans, x, y, power):
    # y * x**(y-1). At the single point x == 0, y == 0 it is 0 * inf; there the base is
    # replaced by 1 (giving 0). Guarding the exponent instead would change the derivative
    # with respect to y at y == 0. (The masks compare one level down, not innermost values,
    # so a staging trace records them instead of guarding the values; bool * bool is "and".)
    if not isinstance(y, Tracer) and surely_none(_onp.equal(y, 0)):
        return y * power(x, y - 1)  # (a constant exponent with no zero: no singular point)
    singular = (x == 0) * (y == 0)
    return y * power(fnp.where(singular, 1, x), y - 1)


def _dpow_exponent(ans, x, y):
    # d(x**y)/dy = x**y * log(x); 0**y has zero derivative (for y > 0), so log(0) is avoided
    return ans * fnp.log(fnp.where(x == 0, 1, x))


power = binary("power", lambda ans, x, y: _dpow_base(ans, x, y, fnp.power), _dpow_exponent,
               domain=((0.2, 2.0), (-2.0, 2.0)), taylor=taylor_rules.power)


def _pow(x, y):
    """numpy's ``x ** y``: the ufunc on arrays, numpy's scalar arithmetic on scalars."""
    return x ** y


# ``x ** y`` on a tracer computes what numpy's ``**`` computes on the values, which is not
# ``numpy.power`` on every CPU: on numpy scalars numpy's ``**`` calls the C library's ``pow``,
# and with AVX-512 the ufunc's SIMD code differs in the last bit for some inputs (a staged
# ``x ** y + x`` on float64 scalars was one bit off the plain call). Its derivatives are
# power's; ``fgrad.numpy.power`` stays the ufunc. A graph lists it as numpy names it, ``power``.
power_operator = define("power_operator", _pow, like=power, operator="**", listed_name="power",
                        fast_impl=_by_operator(operator.pow, _onp.power),
                        spec=Spec(BINARY, domain=((0.2, 2.0), (-2.0, 2.0))))


def _python_number(v):
    """A numpy scalar as the Python number of its kind (``float``, ``int``, ``complex``,
    ``bool``); an array as it is."""
    return v.item() if isinstance(v, _onp.generic) else v


# Python's operators on Python numbers give Python numbers, which numpy then promotes weakly:
# ``lr * 0.5 * w`` is float32 for a float32 ``w`` and a Python float ``lr``. A tracer over a
# Python number (a transform's input that was one) keeps this: its operators make numpy's
# scalar result a Python number again (``ArrayTracer``'s operators; without it
# ``jit(step)(w32, 0.1)`` gave float64 where the eager call gives float32). This identity is
# how a staged function records that; a graph keeps it only where it can change a dtype
# (``passes.idle_conversions_dropped``).
python_number = define("python_number", _python_number, [lambda g, ans, x: g], linear=True,
                       spec=Spec(UNARY))


float_power = binary("float_power", lambda ans, x, y: _dpow_base(ans, x, y, fnp.float_power),
                     _dpow_exponent, domain=((0.2, 2.0), (-2.0, 2.0)), cast=True,
                     taylor=taylor_rules.power)


def _frac_distance(r):
    return _onp.abs(r - _onp.round(r))


def _floor_quotient(ans, x, y):
    return -fnp.floor_divide(without_derivative(x), without_derivative(y))


def _trunc_quotient(ans, x, y):
    return -fnp.trunc(without_derivative(x) / without_derivative(y))


# mod and fmod jump where x / y crosses an integer; keep the tests' draws away from there
mod = binary("mod", lambda ans, x, y: 1, _floor_quotient,
             domain=((0.1, 3.0), (0.7, 1.3)),
             valid=lambda x, y: _onp.all(_frac_distance(x / y) > 0.05))
remainder = mod
fmod = binary("fmod", lambda ans, x, y: 1, _trunc_quotient,
              domain=((-3.0, 3.0), (0.7, 1.3)),
              valid=lambda x, y: _onp.all(_frac_distance(x / y) > 0.05))


def _tie_split(x, y, like):
    """d max(x, y)/dx: 1 where x wins, 0.5 at a tie, 0 where y wins (as a plain mask, in the
    dtype of ``like``, the output: a float64 mask for a float32 ``x`` beside a Python float
    would make the derivative float64)."""
    return mask(fnp.greater(x, y), like) + 0.5 * mask(fnp.equal(x, y), like)


def _nan_ignoring(wins):
    """``wins`` for ``fmax``/``fmin``: also 1 where only the other argument is NaN (then the
    result is this argument)."""
    def split(x, y, like):
        return wins(x, y, like) + mask(
            fnp.logical_and(fnp.isnan(y), fnp.logical_not(fnp.isnan(x))), like)
    return split


def _extremum(name, wins):
    """``maximum``/``fmin``...: ``wins(x, y, like)`` is d fn(x, y)/dx (1, 0.5 at a tie, or
    0)."""
    return binary(name, lambda ans, x, y: wins(x, y, ans), lambda ans, x, y: wins(y, x, ans),
                  valid=_separated())


maximum = _extremum("maximum", _tie_split)
minimum = _extremum("minimum", lambda x, y, like: _tie_split(y, x, like))
fmax = _extremum("fmax", _nan_ignoring(_tie_split))
fmin = _extremum("fmin", _nan_ignoring(lambda x, y, like: _tie_split(y, x, like)))
for _f, _what in ((maximum, "the larger"), (minimum, "the smaller"), (fmax, "the larger"),
                  (fmin, "the smaller")):
    _f.__doc__ = (_f.impl.__doc__ or "") + f"""
fgrad: the derivative follows {_what} argument; at a tie ``x == y`` each argument gets half
(0.5), the average of the one-sided derivatives.""" + ("""
Where one argument is NaN the other is returned, and the derivative follows it; where both are
NaN neither gets any derivative.""" if _f.name.startswith("f") else "")

def _log_add_weight(exp, x, y, ans):
    """d/dx of log(e^x + e^y) (in base e or 2): ``exp(x - ans)``, and at infinities its
    limit, which the formula would give as nan (inf - inf): 1 where x alone is +inf, 1/2
    where x and y are the same infinity (the tie convention), 0 where y alone is +inf."""
    a = without_derivative(ans)  # (plain, or batched or staged with ans: no value is read)
    inf = fnp.isinf(a)
    if surely_none(fnp.isnan(a) | inf):
        return exp(x - ans)
    xv, yv = without_derivative(x), without_derivative(y)
    limit = fnp.astype(fnp.where(xv == yv, 0.5, fnp.where(xv == a, 1.0, 0.0)), dtype_of(ans))
    # (the formula only where it is finite: inf - inf would warn and give nan)
    return where_p(inf, limit, exp(where_p(inf, 0.0, x) - where_p(inf, 0.0, ans)))


def _log_add_composed(exp_, log_):
    """log(exp(x) + exp(y)) in base e or 2, shifted by the larger argument (a constant, which
    cancels): for ``jet``, whose expansion of these reads only ``exp`` and ``log`` (O(K^2)),
    where the JVP rule reads the output."""
    def composed(x, y):
        m = _onp.maximum(taylor_rules.constant(x), taylor_rules.constant(y))
        return m + log_(exp_(x - m) + exp_(y - m))
    return table.Composed(composed, where=taylor_rules.all_finite)


logaddexp = binary("logaddexp", lambda ans, x, y: _log_add_weight(fnp.exp, x, y, ans),
                   lambda ans, x, y: _log_add_weight(fnp.exp, y, x, ans),
                   taylor=_log_add_composed(exp, log))
logaddexp2 = binary("logaddexp2", lambda ans, x, y: _log_add_weight(fnp.exp2, x, y, ans),
                    lambda ans, x, y: _log_add_weight(fnp.exp2, y, x, ans),
                    taylor=_log_add_composed(exp2, log2))
# arctan2(y, x): the argument order is numpy's (y first)
arctan2 = binary("arctan2", lambda ans, y, x: _safe_div(x, x * x + y * y),
                 lambda ans, y, x: _safe_div(-y, x * x + y * y),
                 # away from the origin and from the branch cut (x < 0, y = 0)
                 valid=lambda y, x: _onp.all(_onp.abs(y) > 0.05))
arctan2.__doc__ = (_onp.arctan2.__doc__ or "") + """
fgrad: at the origin, where arctan2 has no limit, every derivative is 0 (the average of its
gradient around the origin).
"""
def _hypot_composed(x, y):
    """sqrt(x^2 + y^2), scaled by the larger magnitude (a constant) against overflow: for
    ``jet``, where hypot's JVP rule reads its output."""
    m = _onp.maximum(_onp.abs(taylor_rules.constant(x)), _onp.abs(taylor_rules.constant(y)))
    return m * fnp.sqrt(fnp.square(x / m) + fnp.square(y / m))


hypot = binary("hypot", lambda ans, x, y: _safe_div(x, ans), lambda ans, x, y: _safe_div(y, ans),
               valid=lambda x, y: _onp.all(_onp.abs(x) + _onp.abs(y) > 0.1),
               taylor=table.Composed(_hypot_composed,  # (away from the cone's tip)
                                     where=lambda ans, x, y: bool(_onp.all(ans > 0))))
hypot.__doc__ = (_onp.hypot.__doc__ or "") + """
fgrad: at the origin (a cone, like abs at 0) every derivative is 0.
"""


def _sign_agreement(ans, x, y):
    # d copysign(x, y)/dx: +1 where x already has y's sign, -1 where it is flipped, and 0 at
    # x == 0, the kink of |x| * sign(y)
    xv, yv = without_derivative(x), without_derivative(y)
    return fnp.sign(xv) * fnp.astype(fnp.where(fnp.signbit(yv), -1, 1), dtype_of(x))


copysign = binary("copysign", _sign_agreement, None,
                  valid=lambda x, y: _onp.all(_onp.abs(x) > 0.05) and _onp.all(_onp.abs(y) > 0.05))
copysign.__doc__ = (_onp.copysign.__doc__ or "") + """
fgrad: the derivative with respect to x1 is 1 where x1 already has x2's sign and -1 where it is
flipped; at x1 == 0 (the kink of |x1| * sign(x2)) it is 0. There is no derivative with respect
to x2, whose sign only is used.
"""
# nextafter(x, y) is x moved by one unit in the last place: its derivative follows x
nextafter = binary("nextafter", lambda ans, x, y: 1, None, valid=_separated())
nextafter.__doc__ = (_onp.nextafter.__doc__ or "") + """
fgrad: the result is x1 moved by one unit in the last place, so its derivative is 1 with
respect to x1 and 0 with respect to x2 (whose sign relative to x1 only is used).
"""
spacing = zero_derivative(_onp.spacing)


def _at_zero(ans, x1, x2):
    return mask(without_derivative(x1) == 0, ans)


# heaviside(x1, x2) is a step in x1 (zero derivative), and equals x2 exactly where x1 == 0;
# the tests put zeros into x1, or that derivative would never be exercised
_ZEROS = _onp.array([0.0, 1.0, 0.0, 1.0, 1.0, 0.0])
heaviside = binary("heaviside", None, _at_zero,
                   call=lambda f, x1, x2: f(x1 * _ZEROS[:math.prod(_shape(x1))].reshape(
                       _shape(x1)).astype(dtype_of(x1)), x2),
                   cases=[(((3,), (3,)), {}), (((2, 3), (3,)), {}), (((2, 1), (1, 3)), {})],
                   valid=_away_from([0.0]))
heaviside.__doc__ = (_onp.heaviside.__doc__ or "") + """
fgrad: the step has zero derivative with respect to x1; the result is x2 exactly where
x1 == 0, so the derivative with respect to x2 is 1 there and 0 elsewhere.
"""


def _ldexp_vjp(g, ans, x, i):
    return unbroadcast_like(fnp.ldexp(g, i), x)


ldexp = define(
    "ldexp", _onp.ldexp, [_ldexp_vjp, None],
    [lambda t, ans, x, i: broadcast_like(fnp.ldexp(t, i), ans), None],
    spec=Spec([(((3,),), {"i": _onp.array([-1, 0, 3])}), (((2, 3),), {"i": _onp.array([2, -3, 1])}),
               (((2, 1),), {"i": _onp.array([[1, -1, 0]])}), (((),), {"i": 2})],
              call=lambda f, x, i: f(x, i)), check_call=_ufunc_call)
ldexp.__doc__ = (_onp.ldexp.__doc__ or "") + """
fgrad: differentiable in the mantissa x1 (derivative 2**x2); the integer exponent x2 has none.
"""


def _dsinc(ans, x):
    """sinc'(x) = (cos(pi x) - sinc(x)) / x, by its Taylor series near 0 where that formula
    cancels (so every order is exact at 0, where sinc'' = -pi**2 / 3)."""
    near = fnp.abs(without_derivative(x)) < 0.1
    far = (fnp.cos(math.pi * x) - ans) / (x if surely_none(near) else where_p(near, 1, x))
    if surely_none(near):
        return far
    x2 = x * x
    series = _SINC_SERIES[-1]
    for c in _SINC_SERIES[-2::-1]:
        series = c + x2 * series
    return where_p(near, x * series, far)


# coefficients of x**(2k-1) in sinc'(x), k = 1..8 (the 9th term is below 1e-23 for |x| < 0.1)
_SINC_SERIES = [(-1) ** k * 2 * k * math.pi ** (2 * k) / math.factorial(2 * k + 1)
                for k in range(1, 9)]
sinc = define("sinc", _onp.sinc, [lambda g, ans, x: g * _dsinc(ans, x)],
              [lambda t, ans, x: t * _dsinc(ans, x)], spec=Spec(UNARY, domain=(-3.0, 3.0)),
              # (jet: sin(pi x) / (pi x) away from 0, where the quotient's terms cancel)
              taylor=table.Composed(lambda x: sin(math.pi * x) / (math.pi * x),
                                    where=lambda ans, x: bool(_onp.all(_onp.abs(x) > 0.5))))


def _bessel_i_impl(x, n):
    """The modified Bessel function I_n(x), integer n >= 0, by its power series
    sum_k (x/2)**(2k+n) / (k! (k+n)!): every term has the sign of x**n, so nothing cancels and
    the sum is accurate to rounding wherever it does not overflow (like numpy.i0 itself)."""
    x = as_array(x)
    h = x.astype(_onp.float64) / 2
    q = h * h
    term = h ** n / math.factorial(n)
    total = term
    k = 0
    with _onp.errstate(over="ignore", invalid="ignore"):
        while True:
            k += 1
            term = term * q / (k * (k + n))
            total = total + term
            if not _onp.any(_onp.abs(term) > 1e-17 * _onp.abs(total)):
                break
    return total.astype(x.dtype if x.dtype.kind == "f" else _onp.float64)


def _dbessel_i(x, n):
    # I_n' = (I_{n-1} + I_{n+1}) / 2, with I_{-1} = I_1
    return 0.5 * (_bessel_i(x, n=_builtins.abs(n - 1)) + _bessel_i(x, n=n + 1))


# Not a numpy function: the derivatives of i0 (I1 = i0', and so on to any order).
_bessel_i = define("bessel_i", _bessel_i_impl,
                   [lambda g, ans, x, n: g * _dbessel_i(x, n)],
                   [lambda t, ans, x, n: t * _dbessel_i(x, n)],
                   spec=Spec([(((),), {"n": 1}), (((4,),), {"n": 2}), (((2, 2),), {"n": 1})],
                             domain=(-3.0, 3.0)),
                   taylor=taylor_rules.by_derivatives(lambda x, order, n: (
                       taylor_rules.bessel_derivatives(
                           lambda m, y: _bessel_i(y, n=_builtins.abs(m)), 0.5, 1)(x, order, n))))
i0 = define("i0", _onp.i0, [lambda g, ans, x: g * _bessel_i(x, n=1)],
            [lambda t, ans, x: t * _bessel_i(x, n=1)], spec=Spec(UNARY, domain=(-3.0, 3.0)),
            taylor=lambda series, ans, x: _bessel_i.taylor(series, ans, x, n=0))
i0.__doc__ = (_onp.i0.__doc__ or "") + """
fgrad: the derivative is the modified Bessel function I1, computed by its power series.
"""


@differentiable(_onp.kaiser, Spec([(((),), {"M": 6}), (((),), {"M": 1})],
                                  call=lambda f, beta, M: f(M, beta), domain=(0.5, 5.0)),
                numpy_values=True)
def kaiser(M, beta):
    """Differentiable in ``beta`` (the window is ``i0(beta * r) / i0(beta)``, ``r`` a fixed
    profile); ``M`` counts the samples."""
    M = float(read_value(M))
    dtype = _onp.result_type(0.0, value_for_shape(beta))  # (numpy's: at least float64)
    beta = fnp.astype(beta, dtype)
    if M == 1:
        return _onp.ones(1, dtype)
    n = _onp.arange(0, M)
    alpha = (M - 1) / 2.0
    return i0(beta * _onp.sqrt(1 - ((n - alpha) / alpha) ** 2.0)) / i0(beta)


def _where_impl(c, x, y):
    return _onp.where(c, x, y)


where_p = define("where", _where_impl,
                 [None,
                  lambda g, ans, c, x, y: unbroadcast_like(fnp.where(c, g, 0), x),
                  lambda g, ans, c, x, y: unbroadcast_like(fnp.where(c, 0, g), y)],
                 [None,
                  lambda t, ans, c, x, y: broadcast_like(fnp.where(c, t, 0), ans),
                  lambda t, ans, c, x, y: broadcast_like(fnp.where(c, 0, t), ans)],
                 spec=Spec([(((3,), (3,), (3,)), {}), (((2, 3), (3,), (2, 3)), {}),
                            (((2, 1), (), (1, 3)), {})],
                           domain=("bool", (-2.0, 2.0), (-2.0, 2.0))),
                 taylor=taylor_rules.where)


@differentiable(_onp.where, Spec(
    [(((3,), (3,), (3,)), {}), (((2, 3), (3,), (2, 3)), {}), (((2, 1), (), (1, 3)), {}),
     (((2, 2), (2, 2), ()), {"scalar_y": True})],
    domain=("bool", (-2.0, 2.0), (-2.0, 2.0)),
    call=lambda f, c, x, y, scalar_y=False: f(c, x, 0.5 if scalar_y else y)))
def where(condition, x=None, y=None):
    """numpy.where; the condition has no derivative, ``x`` and ``y`` are selected from."""
    if x is None and y is None:
        return _onp.where(read_values(condition))
    # tracers anywhere in it, lists included, count as values (a staged one stays staged)
    return where_p(map_tracers(condition, without_derivative), x, y)


def _clip_valid(*xs):
    """No ties between the clipped values and the bounds (drawn or the cases' constants)."""
    vals = [_onp.asarray(x) for x in xs] + [_onp.asarray(-0.5), _onp.asarray(0.5)]
    return all(_onp.all(_onp.abs(a - b) > 0.05)
               for i, a in enumerate(vals) for b in vals[i + 1:])


@differentiable(_onp.clip, Spec(
    [(((3,), (3,), (3,)), {}), (((2, 3), (), ()), {}), (((2, 3), (3,), ()), {}),
     (((4,),), {"a_min": -0.5, "a_max": 0.5}), (((4,),), {"a_min": None, "a_max": 0.5}),
     (((2, 2), ()), {"a_max": None})],
    valid=_clip_valid))
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


_COMPLEX = ("complex",)


@differentiable(_onp.angle, Spec(
    [(((3,),), {}), (((2, 2),), {"deg": True}), (((),), {}), (((4,),), {"real_input": True}),
     (((2, 1),), {"real_input": True, "deg": True})],
    domain=_COMPLEX,
    # away from the origin and the branch cut (the negative real axis); for real input away
    # from 0, where angle jumps from pi to 0
    valid=lambda z: _onp.all(_onp.abs(z.real) > 0.05) and _onp.all(_onp.abs(z.imag) > 0.05),
    call=lambda f, z, real_input=False, **p: f(fnp.real(z) if real_input else z, **p)))
def angle(z, deg=False):
    """numpy.angle: ``arctan2(imag(z), real(z))``, differentiable in complex and real ``z``
    (for real input it is 0 or pi, with zero derivative). At ``z = 0`` the derivative is 0,
    as for ``arctan2`` at the origin."""
    z = fnp.asarray(z)
    if _is_complex(z):
        a = arctan2(fnp.imag(z), fnp.real(z))
    else:
        a = arctan2(0, z)
    if deg:
        a = a * (180 / math.pi)
    return a


# entries the nan_to_num tests add to their draws, so every case has values to replace
_NONFINITE = _onp.array([0.0, _onp.inf, 0.0, _onp.nan, -_onp.inf, 0.0])


def _with_nonfinite(x):
    extra = _NONFINITE[:_onp.size(value_for_shape(x))].reshape(_shape(x)).astype(dtype_of(x))
    return x + extra


@differentiable(_onp.nan_to_num, Spec(
    [(((4,),), {}), (((2, 3),), {"nan": 1.5, "posinf": 10.0, "neginf": -10.0}),
     (((3,),), {"copy": True, "posinf": 2.0})],
    call=lambda f, x, **p: f(_with_nonfinite(x), **p)), numpy_values=True)
def nan_to_num(x, copy=True, nan=0.0, posinf=None, neginf=None):
    """numpy.nan_to_num: derivative 1 on finite entries and 0 on the replaced ones (NaN and
    infinities, whose replacements are constants); for complex input the real and imaginary
    parts are treated separately. The replacement values may be traced (the replaced
    entries then have their derivative); ``copy=False`` (which writes into x) is refused on
    traced values."""
    if not copy:
        raise errors.mutation("nan_to_num(x, copy=False)", "y = np.nan_to_num(x)")
    x = fnp.asarray(x)
    if _is_complex(x):
        parts = [nan_to_num(p, nan=nan, posinf=posinf, neginf=neginf)
                 for p in (fnp.real(x), fnp.imag(x))]
        return parts[0] + 1j * parts[1]
    dt = dtype_of(x)
    if dt.kind != "f":
        return x
    # the replacements are constants chosen by the values (below the differentiating
    # transforms: a batch of them under vmap)
    xv = without_derivative(x)
    big = _onp.finfo(dt).max

    def value(v, default):  # (in x's dtype, as numpy writes it)
        v = default if v is None else v
        return fnp.astype(v, dt) if isinstance(v, Tracer) else dt.type(v)

    inf = fnp.where(xv > 0, value(posinf, big), value(neginf, -big))
    return where_p(fnp.isfinite(xv), x, fnp.where(fnp.isnan(xv), value(nan, 0.0), inf))


def _no_out(name, outs, kwargs):
    """Ufuncs with two outputs take ``out1, out2`` positionally or ``out=(o1, o2)``."""
    if any(o is not None for o in outs) or any(o is not None for o in _as_tuple_or_none(
            kwargs.pop("out", None))):
        raise errors.out_argument(name)
    unsupported_kwargs(name, kwargs)


def _as_tuple_or_none(out):
    return () if out is None else out if isinstance(out, tuple) else (out,)


@differentiable(_onp.divmod, Spec(
    [(((), ()), {}), (((3,), (3,)), {}), (((2, 3), (3,)), {})],
    domain=((-3.0, 3.0), (0.7, 1.3)),
    valid=lambda x, y: _onp.all(_frac_distance(x / y) > 0.05)))
def divmod(x1, x2, *outs, **kwargs):
    """numpy.divmod: ``(floor_divide(x1, x2), mod(x1, x2))``; the quotient has zero
    derivative, the remainder that of ``mod``."""
    _no_out("divmod", outs, kwargs)
    return fnp.floor_divide(x1, x2), mod(x1, x2)


@differentiable(_onp.modf, Spec(UNARY, domain=(-3.0, 3.0),
                                valid=lambda x: _onp.all(_frac_distance(x) > 0.05)),
                numpy_values=True)
def modf(x, *outs, **kwargs):
    """numpy.modf: ``(fractional part, integral part)``; the fractional part has derivative
    1, the integral part (a step) zero derivative."""
    _no_out("modf", outs, kwargs)
    whole = fnp.trunc(x)
    return subtract(x, whole), whole


def _off_powers_of_two(x):
    """Away from 0 and from +-2**k, where the mantissa jumps."""
    a = _onp.abs(x)
    return bool(_onp.all(a > 0.05) and _onp.all(_frac_distance(_onp.log2(a)) > 0.02))


@differentiable(_onp.frexp, Spec(UNARY, domain=(-3.0, 3.0), valid=_off_powers_of_two))
def frexp(x, *outs, **kwargs):
    """numpy.frexp: ``(mantissa, exponent)``; the mantissa ``x * 2**-exponent`` has derivative
    ``2**-exponent`` (1 at x = 0, where the exponent is 0), the integer exponent none."""
    _no_out("frexp", outs, kwargs)
    exponent = _frexp_exponent(x)
    return ldexp(x, -exponent), exponent


_frexp_exponent = values_only(lambda x: _onp.frexp(x)[1], "frexp_exponent")


@differentiable(_onp.real_if_close, Spec(
    [(((3,),), {"squash": False}), (((2, 2),), {"squash": True}), (((),), {"squash": True})],
    domain=_COMPLEX, valid=lambda z: _onp.all(_onp.abs(z.imag) > 0.05),
    # squash: the imaginary parts made tiny, so that the real part is returned
    call=lambda f, z, squash: f(fnp.real(z) + 1e-20j * fnp.imag(z) if squash else z)))
def real_if_close(a, tol=100):
    """numpy.real_if_close: the real part (with its derivative) when every imaginary part is
    within ``tol`` of zero, else ``a`` itself."""
    a = fnp.asarray(a)
    av = read_value(a)
    if not _onp.iscomplexobj(av):
        return a
    tol = read_values(tol)
    if tol > 1:
        tol = _onp.finfo(_onp.result_type(av)).eps * tol
    return fnp.real(a) if _onp.all(_onp.abs(av.imag) < tol) else a


def _interp_piece(x, xp, fp, i, left, right):
    """The value of the piece with index ``i`` (a plain int array shaped like x): the line
    through (xp[i], fp[i]) and (xp[i+1], fp[i+1]); i = -1 is the constant left of xp[0], and
    i = len(xp) - 1 the constant right of xp[-1]. Exactly at xp[0] and xp[-1] those constants
    are fp[0] and fp[-1], the values there, whatever ``left`` and ``right`` are."""
    n = _shape(xp)[0]
    xv, xpv = without_derivative(x), without_derivative(xp)
    below, above = i < 0, i >= n - 1
    if n == 1:
        line = _pick(fp, i * 0)
    else:
        j = fnp.minimum(fnp.maximum(i, 0), n - 2)
        x0, f0 = _pick(xp, j), _pick(fp, j)
        line = f0 + (x - x0) * ((_pick(fp, j + 1) - f0) / (_pick(xp, j + 1) - x0))
    out = line
    if _maybe(above):
        last = fp[n - 1]
        out = where_p(above, last if right is None else where_p(xv > xpv[-1], right, last), out)
    if _maybe(below):
        first = fp[0]
        out = where_p(below, first if left is None else where_p(xv < xpv[0], left, first), out)
    return out


def _maybe(mask):
    """Whether any entry of a mask is set; always, for a batch of masks (under vmap) or a
    staged one, which cannot be read."""
    return isinstance(mask, Tracer) or bool(mask.any())


def _pick(arr, i):
    """``arr[i]`` (``arr`` a vector) for an index array ``i``: numpy's indexing, or where
    ``i`` is traced (a batch of them under vmap, or staged) a ``gather``."""
    if not isinstance(i, Tracer):
        return arr[i]
    return fnp.reshape(gather_p(arr, fnp.ravel(i), axis=0), _shape(i))


def _interp_valid(x, xp, fp):
    knots = xp + _KNOT_OFFSETS[:_onp.size(xp)]
    pts = _onp.concatenate([_onp.ravel(x), knots])
    circle = _onp.mod(pts, 2.5)
    gaps = _onp.abs(pts[:, None] - pts[None, :])
    wrapped = _onp.abs(circle[:, None] - circle[None, :])
    wrapped = _onp.minimum(wrapped, 2.5 - wrapped)
    off = ~_onp.eye(len(pts), dtype=bool)
    return bool(_onp.all(gaps[off] > 0.05) and _onp.all(wrapped[off] > 0.05))


# the tests draw xp in [0, 0.9] and add these, which makes it increasing
_KNOT_OFFSETS = _onp.arange(6.0)


@differentiable(_onp.interp, Spec(
    [(((3,), (4,), (4,)), {}), (((), (3,), (3,)), {}),
     (((2, 3), (4,), (4,)), {"left": -1.0, "right": 3.0}),
     (((4,), (4,), (4,)), {"period": 2.5})],
    domain=((-0.5, 4.5), (0.0, 0.9), (-2.0, 2.0)), valid=_interp_valid,
    call=lambda f, x, xp, fp, **p: f(x, xp + _KNOT_OFFSETS[:_shape(xp)[0]].astype(dtype_of(xp)),
                                     fp, **p)),
    numpy_values=True)
def interp(x, xp, fp, left=None, right=None, period=None):
    """numpy.interp, differentiable in ``x``, ``xp``, ``fp`` and traced ``left``/``right``.

    The derivative with respect to x is the slope of the piece x falls in, and 0 outside
    [xp[0], xp[-1]]; exactly at a knot it is the mean of the slopes on either side (at xp[0]
    and xp[-1] half the inner slope). ``period`` may not be traced."""
    if contains_tracer(period):
        raise NotImplementedError("fgrad.numpy.interp: a traced period is not supported")
    x, xp = fnp.astype(fnp.asarray(x), _onp.float64), fnp.astype(fnp.asarray(xp), _onp.float64)
    fp = fnp.asarray(fp)
    fp = fnp.astype(fp, _onp.complex128 if _is_complex(fp) else _onp.float64)
    if period is not None:
        if period == 0:
            raise ValueError("period must be a non-zero value")
        period = _builtins.abs(period)
        left = right = None
        x, xp = fnp.mod(x, period), fnp.mod(xp, period)
        order = fnp.argsort(without_derivative(xp))  # (a node: a staged xp is not guarded)
        xp, fp = xp[order], fp[order]
        xp = fnp.concatenate([xp[-1:] - period, xp, xp[0:1] + period])
        fp = fnp.concatenate([fp[-1:], fp, fp[0:1]])
    xv, xpv = without_derivative(x), without_derivative(xp)
    right_piece = fnp.searchsorted(xpv, xv, side="right") - 1
    left_piece = fnp.searchsorted(xpv, xv, side="left") - 1
    y = _interp_piece(x, xp, fp, right_piece, left, right)
    at_knot = right_piece != left_piece
    if _maybe(at_knot):
        other = _interp_piece(x, xp, fp, left_piece, left, right)
        y = where_p(at_knot, 0.5 * (y + other), y)
    return y


def _unwrap_valid(p):
    """Consecutive differences (along any axis) away from the jumps of the correction,
    at odd multiples of pi (the default period) and of 2 (period 4)."""
    p = _onp.asarray(p)
    for axis in range(p.ndim):
        d = _onp.abs(_onp.diff(p, axis=axis))
        for jump in (math.pi, 3 * math.pi, 2.0, 6.0):
            if _onp.any(_onp.abs(d - jump) < 0.05):
                return False
    return True


@differentiable(_onp.unwrap, Spec(
    [(((5,),), {}), (((2, 4),), {"axis": 0}), (((3, 3),), {"period": 4.0}),
     (((4,),), {"discont": 4.0})],
    domain=(-4.0, 4.0), valid=_unwrap_valid), numpy_values=True)
def unwrap(p, discont=None, axis=-1, *, period=2 * math.pi):
    """numpy.unwrap: ``p`` plus multiples of ``period``, which are constant between the
    jumps, so the derivative is the identity. ``discont`` and ``period`` may not be traced."""
    if contains_tracer((discont, period)):
        raise NotImplementedError("fgrad.numpy.unwrap: traced discont or period is not supported")
    p = fnp.asarray(p)
    return p + _unwrap_correction(p, discont=discont, axis=axis, period=period)


_unwrap_correction = values_only(
    lambda p, discont, axis, period: _onp.unwrap(p, discont=discont, axis=axis,
                                                 period=period) - p, "unwrap_correction")


def _piecewise_selected(x, condlist, funclist, args, kw):
    conds = list(condlist) if isinstance(condlist, (list, tuple)) else [condlist]
    if len(conds) == len(funclist) - 1:  # the last function covers what no condition does
        anyc = conds[0]
        for c in conds[1:]:
            anyc = fnp.logical_or(anyc, c)
        conds.append(fnp.logical_not(anyc))
    elif len(conds) != len(funclist):
        raise ValueError(f"with {len(conds)} condition(s), either {len(conds)} or "
                         f"{len(conds) + 1} functions are expected")
    y = _onp.zeros(_shape(x), dtype_of(x))
    for cond, func in zip(conds, funclist):
        value = func(x, *args, **kw) if callable(func) else func
        y = where_p(cond, fnp.astype(fnp.asarray(value), dtype_of(x)), y)
    return y


@differentiable(_onp.select, Spec(
    [(((3,), (3,), (3,), (3,), (3,)), {}), (((2, 3), (2, 3), (3,), (), ()), {}),
     (((3,), (3,)), {}), (((2, 2), (2, 2), (2, 2), (2, 2)), {})],
    domain=("bool", (-2.0, 2.0), "bool", (-2.0, 2.0), (-2.0, 2.0)),
    # arguments interleaved (cond, choice, cond, choice, [default]) so that the domains of
    # every case line up
    call=lambda f, *xs: f(list(xs[0:len(xs) // 2 * 2:2]), list(xs[1:len(xs) // 2 * 2:2]),
                          *xs[len(xs) // 2 * 2:])))
def select(condlist, choicelist, default=0):
    """numpy.select: the conditions have no derivative; each entry has the derivative of the
    choice (or the default) it is taken from."""
    condlist = [map_tracers(c, without_derivative) for c in condlist]  # (batched under vmap)
    # numpy's own call on stand-ins checks the arguments and gives the result's dtype
    dtype = _onp.select([value_for_shape(c) for c in condlist],
                        [value_for_shape(c) for c in choicelist], value_for_shape(default)).dtype
    out = fnp.astype(fnp.asarray(default), dtype)
    for cond, choice in zip(condlist[::-1], choicelist[::-1]):
        out = where_p(cond, fnp.astype(fnp.asarray(choice), dtype), out)
    shape = _onp.broadcast_shapes(*[_onp.shape(value_for_shape(c)) for c in condlist],
                                  _shape(out))
    return out if _shape(out) == shape else fnp.broadcast_to(out, shape)


_PIECES = {
    "functions": lambda x: ([x < -1.0, x > 1.0],
                            [lambda v: v ** 2, lambda v: fnp.exp(v), lambda v: fnp.sin(v) * v]),
    "constants": lambda x: ([x < 0.0, x > 1.0], [1.5, lambda v: v ** 3]),
    "extra args": lambda x: ([x < 0.5], [lambda v, a, b=0.0: a * v + b, lambda v, a, b=0.0: v],
                             (2.0,), {"b": 0.5}),
}


def _piecewise_call(f, x, pieces):
    conds, funcs, *extra = _PIECES[pieces](x)
    args, kw = extra if extra else ((), {})
    return f(x, conds, funcs, *args, **kw)


@differentiable(_onp.piecewise, Spec(
    [(((4,),), {"pieces": "functions"}), (((2, 3),), {"pieces": "constants"}),
     (((),), {"pieces": "functions"}), (((3,),), {"pieces": "extra args"})],
    domain=(-2.5, 2.5), valid=_away_from([-1.0, 0.0, 0.5, 1.0]), call=_piecewise_call))
def piecewise(x, condlist, funclist, *args, **kw):
    """numpy.piecewise: each function is called only on its entries (as numpy does), and its
    derivative flows back to them; a constant in ``funclist`` has zero derivative (or its own,
    if traced). The conditions have no derivative. Under ``vmap`` or ``jit``, where the
    conditions are a batch or staged, each function is called on every entry and its values
    selected (as in JAX), so no condition is read."""
    x = fnp.asarray(x)
    xv = value_for_shape(x)
    n2 = len(funclist)
    condlist = map_tracers(condlist, without_derivative)
    if contains_tracer(condlist):  # (a batch of conditions, or staged ones)
        return _piecewise_selected(x, condlist, funclist, args, kw)
    if _onp.isscalar(condlist) or (not isinstance(condlist[0], (list, _onp.ndarray))
                                   and xv.ndim != 0):
        condlist = [condlist]
    condlist = _onp.asarray(condlist, dtype=bool)
    n = len(condlist)
    if n == n2 - 1:  # the last function covers what no condition does
        otherwise = ~_onp.any(condlist, axis=0, keepdims=True)
        condlist = _onp.concatenate([condlist, otherwise], axis=0)
        n += 1
    elif n != n2:
        raise ValueError(f"with {n} condition(s), either {n} or {n + 1} functions are expected")
    y = _onp.zeros_like(xv)
    for cond, func in zip(condlist, funclist):
        if callable(func):
            vals = x[cond]
            if _onp.size(value_for_shape(vals)) == 0:
                continue
            value = func(vals, *args, **kw)
        else:
            value = func
        if isinstance(y, Tracer) or contains_tracer(value):
            y = fnp.index_set(y, fnp.astype(fnp.asarray(value), xv.dtype), cond)
        else:
            y[cond] = value  # y is still the plain array made above
    return y


# --- ufunc methods (ufunc_methods.py), checked as table entries ---------------------------

def _apart(x):
    """No two entries within 0.05 (ties in max/min-like folds are kinks)."""
    v = _onp.sort(_onp.ravel(x))
    return v.size < 2 or _onp.min(_onp.diff(v)) > 0.05


_AXES = [(((4,),), {}), (((2, 3),), {"axis": 1}), (((3, 2),), {"axis": 0})]
for _name, _cases, _valid, *_domain in [
        ("add.outer", [(((3,), (2,)), {}), (((2, 2), (3,)), {})], None),
        ("multiply.outer", [(((3,), (2,)), {}), (((), (2, 2)), {})], None),
        ("subtract.outer", [(((2,), (3,)), {})], None),
        ("add.reduce", _AXES + [(((2, 3),), {"axis": 1, "where": [True, False, True],
                                               "initial": 0.5})], None),
        ("multiply.reduce", _AXES, None, (0.3, 1.5)),  # (prod's domain)
        ("minimum.reduce", _AXES + [(((3, 2),), {"axis": 0, "where": [[True, False]] * 3,
                                                 "initial": 3.0})], _apart),
        ("logaddexp.reduce", _AXES + [(((2, 3),), {"axis": 1, "where": [[True, False, True],
                                                                        [False, True, True]]}),
                                      (((2, 3),), {"axis": 0, "initial": 0.5})], None),
        # (folded from numpy's identity 0: |x| at one entry, away from its kink)
        ("hypot.reduce", _AXES, None, (0.3, 2.0)),
        ("subtract.reduce", [(((2, 3),), {"axis": 1, "where": [True, False, True],
                                          "initial": 0.5})], None),
        ("add.accumulate", _AXES, None),
        ("maximum.accumulate", _AXES, _apart),
        ("logaddexp.accumulate", _AXES, None),
        ("add.reduceat", [(((5,),), {"indices": [0, 3, 1]}),
                          (((2, 4),), {"indices": [0, 2], "axis": 1})], None)]:
    _uf, _method = _name.split(".")
    # (a partial, not the bound method: the table marks its functions with an attribute)
    register_function(_name, functools.partial(getattr(ufunc_methods.UfuncPrimitive, _method),
                                               globals()[_uf]),
                      getattr(getattr(_onp, _uf), _method),
                      Spec(_cases, valid=_valid, domain=(_domain or [(-2.0, 2.0)])[0]))
