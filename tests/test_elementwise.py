"""Elementwise functions: closed-form derivatives, kinks, complex inputs, realistic uses.

The generated tests (test_rules.py) check every rule against finite differences away from
kinks; these pin the values that finite differences cannot see (the chosen derivative at a
kink, at NaN and infinite entries), the closed forms of the derivatives, JAX's convention for
complex inputs, dtypes, and the errors for keywords a traced call cannot honour.
"""
import functools
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.table import FUNCTIONS, Primitive
from fgrad.testing import check_grads

from numeric import central_gradient

rng = onp.random.default_rng(1)
X = rng.uniform(-2, 2, 5)
Y = rng.uniform(-2, 2, 5)


def grad_sum(f, argnums=0):
    """The gradient of ``sum(f(*args))`` (the elementwise derivative for elementwise f)."""
    return fgrad.grad(lambda *a: np.sum(f(*a)), argnums=argnums)


def sigmoid(z):
    return 1 / (1 + onp.exp(-z))


# --- closed-form derivatives ---------------------------------------------------------------

def test_logaddexp_derivatives_are_sigmoids():
    gx, gy = grad_sum(np.logaddexp, (0, 1))(X, Y)
    onp.testing.assert_allclose(gx, sigmoid(X - Y), rtol=1e-14)
    onp.testing.assert_allclose(gy, sigmoid(Y - X), rtol=1e-14)
    # second derivative: sigmoid' = s (1 - s)
    h = fgrad.grad(lambda x: np.sum(grad_sum(np.logaddexp)(x, Y)))(X)
    onp.testing.assert_allclose(h, sigmoid(X - Y) * sigmoid(Y - X), rtol=1e-12)


def test_logaddexp_is_stable_where_the_naive_formula_overflows():
    x, y = onp.array([1000.0, -1000.0]), onp.array([999.0, -1001.0])
    gx = grad_sum(np.logaddexp)(x, y)
    onp.testing.assert_allclose(gx, sigmoid(onp.array([1.0, 1.0])), rtol=1e-12)


def test_logaddexp2_derivative():
    gx = grad_sum(np.logaddexp2)(X, Y)
    onp.testing.assert_allclose(gx, 2 ** X / (2 ** X + 2 ** Y), rtol=1e-13)


def test_arctan2_derivatives():
    y, x = X, Y
    gy, gx = grad_sum(np.arctan2, (0, 1))(y, x)
    onp.testing.assert_allclose(gy, x / (x ** 2 + y ** 2), rtol=1e-13)
    onp.testing.assert_allclose(gx, -y / (x ** 2 + y ** 2), rtol=1e-13)


def test_hypot_derivatives():
    gx, gy = grad_sum(np.hypot, (0, 1))(X, Y)
    r = onp.hypot(X, Y)
    onp.testing.assert_allclose(gx, X / r, rtol=1e-14)
    onp.testing.assert_allclose(gy, Y / r, rtol=1e-14)


def test_float_power_derivatives():
    x, y = onp.array([0.5, 1.5, 2.0]), onp.array([-1.5, 0.5, 3.0])
    gx, gy = grad_sum(np.float_power, (0, 1))(x, y)
    onp.testing.assert_allclose(gx, y * x ** (y - 1), rtol=1e-14)
    onp.testing.assert_allclose(gy, x ** y * onp.log(x), rtol=1e-14)


def test_fmod_derivatives_follow_truncation_not_floor():
    x, y = onp.array([-2.5, 2.5, -0.3]), onp.array([1.0, 1.0, 0.7])
    gx, gy = grad_sum(np.fmod, (0, 1))(x, y)
    onp.testing.assert_array_equal(gx, [1.0, 1.0, 1.0])
    onp.testing.assert_array_equal(gy, -onp.trunc(x / y))  # [2, -2, 0]; mod would give 3 there
    assert grad_sum(np.mod, 1)(x, y)[0] == 3.0


def test_angle_conversions_are_scalings():
    for f, scale in ((np.deg2rad, math.pi / 180), (np.radians, math.pi / 180),
                     (np.rad2deg, 180 / math.pi), (np.degrees, 180 / math.pi)):
        onp.testing.assert_allclose(grad_sum(f)(X), scale, rtol=1e-15)
        assert fgrad.jvp(f, (X,), (onp.ones(5),))[1].tolist() == f(onp.ones(5)).tolist()


def test_sinc_derivative_and_its_exact_values_at_zero():
    x = onp.array([-1.3, 0.5, 0.05, 2.2])
    s = onp.sinc(x)
    onp.testing.assert_allclose(grad_sum(np.sinc)(x), (onp.cos(math.pi * x) - s) / x,
                                rtol=1e-10)
    d1 = fgrad.grad(np.sinc)
    assert d1(0.0) == 0.0
    # sinc(x) = 1 - (pi x)^2 / 6 + ...: the second derivative at 0 is -pi^2 / 3
    assert fgrad.grad(d1)(0.0) == pytest.approx(-math.pi ** 2 / 3, rel=1e-14)
    assert fgrad.grad(fgrad.grad(d1))(0.0) == 0.0
    # the series near 0 and the formula away from it meet without a visible seam
    check_grads(np.sinc, (onp.array([0.0999, 0.1001, -0.1, 1e-8]),), order=3)


def test_i0_derivative_is_bessel_i1():
    x = onp.array([0.0, 1.0, 2.0, -1.0])
    i1 = onp.array([0.0, 0.5651591039924850, 1.590636854637329, -0.5651591039924850])
    onp.testing.assert_allclose(grad_sum(np.i0)(x), i1, rtol=1e-14, atol=1e-300)
    # I1' = I0 - I1 / x, and I1'(0) = 1/2
    second = fgrad.grad(lambda x: np.sum(grad_sum(np.i0)(x)))(x)
    onp.testing.assert_allclose(second[1:], onp.i0(x[1:]) - i1[1:] / x[1:], rtol=1e-13)
    assert second[0] == 0.5
    check_grads(np.i0, (onp.array([-5.0, 0.3, 12.0, 40.0]),), order=3, rtol=1e-6)


def test_copysign_derivative_is_sign_agreement_and_zero_for_the_sign_source():
    x, y = onp.array([1.5, 1.5, -2.0, -2.0, 0.0]), onp.array([3.0, -3.0, 1.0, -0.0, -1.0])
    gx, gy = grad_sum(np.copysign, (0, 1))(x, y)
    onp.testing.assert_array_equal(gx, [1.0, -1.0, -1.0, 1.0, 0.0])  # 0 at the kink x == 0
    onp.testing.assert_array_equal(gy, onp.zeros(5))


def test_ldexp_is_differentiable_in_the_mantissa_only():
    x, e = onp.array([0.5, -1.5, 3.0]), onp.array([3, -2, 0])
    assert onp.array_equal(np.ldexp(x, e), onp.ldexp(x, e))
    onp.testing.assert_array_equal(grad_sum(np.ldexp)(x, e), 2.0 ** e)
    _, t = fgrad.jvp(lambda x: np.ldexp(x, e), (x,), (onp.ones(3),))
    onp.testing.assert_array_equal(t, 2.0 ** e)
    with pytest.raises(TypeError, match="integer"):
        grad_sum(np.ldexp, 1)(x, e)


def test_frexp_mantissa_derivative_is_two_to_minus_the_exponent():
    x = onp.array([3.0, -0.3, 1000.0])
    m, e = np.frexp(x)
    assert onp.array_equal(m, onp.frexp(x)[0]) and e.dtype == onp.frexp(x)[1].dtype
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.sum(np.frexp(x)[0]))(x), 2.0 ** -e)
    jm, je = fgrad.jacfwd(np.frexp)(x)
    onp.testing.assert_array_equal(jm, onp.diag(2.0 ** -e))
    assert not je.any()


def test_modf_and_divmod_derivatives():
    x = onp.array([-2.25, 0.5, 3.75])
    jf, ji = fgrad.jacrev(np.modf)(x)
    onp.testing.assert_array_equal(jf, onp.eye(3))
    onp.testing.assert_array_equal(ji, onp.zeros((3, 3)))
    y = onp.array([1.5, 0.3, -1.0])
    (jqx, jqy), (jrx, jry) = fgrad.jacfwd(np.divmod, argnums=(0, 1))(x, y)
    assert not jqx.any() and not jqy.any()
    onp.testing.assert_array_equal(jrx, onp.eye(3))
    onp.testing.assert_array_equal(jry, onp.diag(-onp.floor_divide(x, y)))
    q, r = fgrad.jvp(lambda x: np.divmod(x, y), (x,), (onp.ones(3),))[0]
    assert onp.array_equal(q, onp.floor_divide(x, y)) and onp.array_equal(r, onp.mod(x, y))


def test_nextafter_follows_its_first_argument_and_spacing_has_none():
    gx, gy = grad_sum(np.nextafter, (0, 1))(X, Y)
    onp.testing.assert_array_equal(gx, onp.ones(5))
    onp.testing.assert_array_equal(gy, onp.zeros(5))
    assert fgrad.grad(lambda x: np.sum(x + np.spacing(x)))(X).tolist() == [1.0] * 5


def test_heaviside_derivative_is_in_the_value_at_zero_only():
    x1, x2 = onp.array([-1.0, 0.0, 2.0, -0.0]), onp.array([0.5, 0.25, 0.75, 0.5])
    g1, g2 = grad_sum(np.heaviside, (0, 1))(x1, x2)
    onp.testing.assert_array_equal(g1, onp.zeros(4))
    onp.testing.assert_array_equal(g2, [0.0, 1.0, 0.0, 1.0])


def test_real_if_close():
    z = onp.array([1.5 + 1e-17j, -0.5 + 0j])
    out = np.real_if_close(z)
    assert out.dtype == onp.float64
    g = fgrad.grad(lambda z: np.sum(np.real_if_close(z) ** 2))(z)
    onp.testing.assert_array_equal(g, 2 * z.real + 0j)
    far = onp.array([1.0 + 1.0j])
    _, t = fgrad.jvp(np.real_if_close, (far,), (onp.array([2.0 - 1.0j]),))
    assert t.tolist() == [2.0 - 1.0j]  # not close: the complex array itself


# --- kinks and edges: the chosen derivative, exactly ---------------------------------------

def test_abs_and_fabs_have_derivative_zero_at_zero():
    x = onp.array([-1.5, 0.0, 2.0, -0.0])
    for f in (np.abs, np.absolute, np.fabs):
        onp.testing.assert_array_equal(grad_sum(f)(x), [-1.0, 0.0, 1.0, 0.0])
        onp.testing.assert_array_equal(fgrad.jvp(f, (x,), (onp.ones(4),))[1], [-1, 0, 1, 0])


@pytest.mark.parametrize("f", [np.maximum, np.minimum, np.fmax, np.fmin])
def test_ties_split_evenly(f):
    x, y = onp.array([1.0, 2.0, -3.0]), onp.array([1.0, 0.5, -3.0])
    gx, gy = grad_sum(f, (0, 1))(x, y)
    winner = 1.0 if f in (np.maximum, np.fmax) else 0.0
    onp.testing.assert_array_equal(gx, [0.5, winner, 0.5])
    onp.testing.assert_array_equal(gy, [0.5, 1 - winner, 0.5])
    _, t = fgrad.jvp(f, (x, y), (onp.ones(3), onp.zeros(3)))
    onp.testing.assert_array_equal(t, [0.5, winner, 0.5])


@pytest.mark.parametrize("f", [np.fmax, np.fmin])
def test_fmax_fmin_derivative_follows_the_non_nan_argument(f):
    x, y = onp.array([onp.nan, 1.0, onp.nan]), onp.array([2.0, onp.nan, onp.nan])
    out = f(x, y)
    onp.testing.assert_array_equal(out, [2.0, 1.0, onp.nan])
    gx, gy = grad_sum(f, (0, 1))(x, y)
    onp.testing.assert_array_equal(gx, [0.0, 1.0, 0.0])
    onp.testing.assert_array_equal(gy, [1.0, 0.0, 0.0])


def test_maximum_propagates_nan_and_gives_it_no_derivative():
    x, y = onp.array([onp.nan, 1.0]), onp.array([2.0, onp.nan])
    gx, gy = grad_sum(np.maximum, (0, 1))(x, y)
    onp.testing.assert_array_equal(gx, [0.0, 0.0])
    onp.testing.assert_array_equal(gy, [0.0, 0.0])


def test_clip_at_a_bound_gives_half_to_the_value_and_half_to_a_traced_bound():
    a = onp.array([-1.0, 0.0, 1.0, 2.0])
    lo, hi = onp.array([-1.0, -1.0, -1.0, -1.0]), onp.array([1.0, 1.0, 1.0, 1.0])
    ga, glo, ghi = grad_sum(np.clip, (0, 1, 2))(a, lo, hi)
    onp.testing.assert_array_equal(ga, [0.5, 1.0, 0.5, 0.0])
    onp.testing.assert_array_equal(glo, [0.5, 0.0, 0.0, 0.0])
    onp.testing.assert_array_equal(ghi, [0.0, 0.0, 0.5, 1.0])
    # scalar bounds, and one bound left out
    onp.testing.assert_array_equal(grad_sum(lambda a: np.clip(a, 0.0, 1.0))(a), [0, .5, .5, 0])
    onp.testing.assert_array_equal(grad_sum(lambda a: np.clip(a, None, 1.0))(a), [1, 1, .5, 0])
    onp.testing.assert_array_equal(grad_sum(lambda a: np.clip(a, min=0.0))(a), [0, .5, 1, 1])
    assert fgrad.grad(lambda lo: np.sum(np.clip(a, lo, 1.0)))(-0.5) == 1.0


def test_sqrt_derivative_at_zero_is_inf():
    with onp.errstate(divide="ignore"):
        assert fgrad.grad(np.sqrt)(0.0) == onp.inf
        assert fgrad.jvp(np.sqrt, (0.0,), (1.0,))[1] == onp.inf


def test_hypot_and_arctan2_at_the_origin_have_zero_derivatives_of_every_order():
    zero = onp.zeros(2)
    for f in (np.hypot, np.arctan2):
        gx, gy = grad_sum(f, (0, 1))(zero, zero)
        assert not gx.any() and not gy.any()
        hess = fgrad.hessian(lambda v: f(v[0], v[1]))(zero)
        onp.testing.assert_array_equal(hess, onp.zeros((2, 2)))
    # away from the origin arctan2 is smooth to second order
    check_grads(np.arctan2, (X, Y), order=2)


def test_angle_of_zero_has_zero_derivative():
    g = fgrad.grad(lambda z: np.sum(np.angle(z)))(onp.array([0j, 1j]))
    onp.testing.assert_array_equal(g, [0.0, -1.0 + 0j])


def test_nan_to_num_derivative_is_one_on_finite_entries_and_zero_on_replaced_ones():
    x = onp.array([1.5, onp.nan, onp.inf, -onp.inf, -2.0])
    out = np.nan_to_num(x, nan=7.0, posinf=8.0)
    onp.testing.assert_array_equal(out, onp.nan_to_num(x, nan=7.0, posinf=8.0))
    g = fgrad.grad(lambda x: np.sum(np.nan_to_num(x, posinf=8.0, neginf=-8.0) * 3.0))(x)
    onp.testing.assert_array_equal(g, [3.0, 0.0, 0.0, 0.0, 3.0])
    _, t = fgrad.jvp(np.nan_to_num, (x,), (onp.full(5, 2.0),))
    onp.testing.assert_array_equal(t, [2.0, 0.0, 0.0, 0.0, 2.0])
    # complex: the real and imaginary parts are replaced (and lose their derivative) apart
    z = onp.array([complex(onp.nan, 2.0), complex(1.0, onp.inf)])
    _, t = fgrad.jvp(np.nan_to_num, (z,), (onp.array([1 + 1j, 1 + 1j]),))
    assert t.tolist() == [1j, 1]
    check_grads(np.nan_to_num, (z,), order=2)


def test_interp_slopes_kinks_and_ends():
    xp, fp = onp.array([0.0, 1.0, 3.0]), onp.array([0.0, 2.0, 3.0])
    x = onp.array([-1.0, 0.0, 0.5, 1.0, 2.0, 3.0, 4.0])
    assert onp.array_equal(np.interp(x, xp, fp), onp.interp(x, xp, fp))
    g = grad_sum(np.interp)(x, xp, fp)
    # outside: 0; at the ends half of the inner slope; at the inner knot the mean of 2 and 0.5
    onp.testing.assert_array_equal(g, [0.0, 1.0, 2.0, 1.25, 0.5, 0.25, 0.0])
    # linear in fp: the weights of the two neighbouring values
    jfp = fgrad.jacrev(lambda fp: np.interp(onp.array([0.25, 2.0]), xp, fp))(fp)
    onp.testing.assert_allclose(jfp, [[0.75, 0.25, 0.0], [0.0, 0.5, 0.5]], rtol=1e-15)
    # left/right replacement values receive the derivative of the points outside
    gl, gr = fgrad.grad(lambda l, r: np.sum(np.interp(x, xp, fp, left=l, right=r)),
                        argnums=(0, 1))(-5.0, 5.0)
    assert (gl, gr) == (1.0, 1.0)


def test_interp_is_differentiable_in_xp_and_with_a_period():
    xp, fp = onp.array([0.0, 1.0, 3.0]), onp.array([0.0, 2.0, 3.0])
    x = onp.array([0.5, 2.0])
    # d/d xp_i of fp_i + (x - xp_i) (fp_{i+1} - fp_i) / (xp_{i+1} - xp_i)
    jxp = fgrad.jacrev(lambda xp: np.interp(x, xp, fp))(xp)
    onp.testing.assert_allclose(jxp, [[-1.0, -1.0, 0.0], [0.0, -0.25, -0.25]], rtol=1e-15)
    check_grads(lambda x, xp, fp: np.interp(x, xp, fp), (x, xp, fp), order=2)
    angles = onp.array([-0.4, 1.0, 7.2])
    check_grads(lambda x, fp: np.interp(x, [0.0, 2.0, 4.0, 5.5], fp, period=6.0),
                (angles, onp.array([1.0, -1.0, 0.5, 2.0])), order=2)
    with pytest.raises(NotImplementedError, match="period"):
        fgrad.grad(lambda p: np.sum(np.interp(x, xp, fp, period=p)))(6.0)


def test_interp_of_complex_values():
    xp, fp = onp.array([0.0, 1.0, 2.0]), onp.array([1 + 1j, 2 - 1j, 0.5j])
    x = onp.array([0.3, 1.6])
    assert onp.array_equal(np.interp(x, xp, fp), onp.interp(x, xp, fp))
    check_grads(lambda x, fp: np.interp(x, xp, fp), (x, fp), order=2)


def test_unwrap_has_the_identity_as_derivative():
    p = onp.array([0.0, 3.0, 6.5, 0.2, -3.0])
    assert onp.array_equal(np.unwrap(p), onp.unwrap(p))
    onp.testing.assert_array_equal(fgrad.jacfwd(np.unwrap)(p), onp.eye(5))
    onp.testing.assert_array_equal(fgrad.jacrev(lambda p: np.unwrap(p, period=4.0))(p),
                                   onp.eye(5))


def test_select_routes_derivatives_to_the_chosen_entries():
    a, b = onp.array([1.0, 2.0, 3.0, 4.0]), onp.array([-1.0, -2.0, -3.0, -4.0])
    conds = [a < 2, a > 3]
    ga, gb, gd = grad_sum(lambda a, b, d: np.select(conds, [a, b ** 2], d), (0, 1, 2))(a, b, 0.5)
    onp.testing.assert_array_equal(ga, [1.0, 0.0, 0.0, 0.0])
    onp.testing.assert_array_equal(gb, [0.0, 0.0, 0.0, -8.0])
    assert gd == 2.0
    # the first matching condition wins, as in numpy
    both = [a > 0, a > 0]
    assert grad_sum(lambda b: np.select(both, [a, b]))(b).tolist() == [0.0] * 4
    x32 = a.astype(onp.float32)
    assert np.select(conds, [x32, x32]).dtype == onp.select(conds, [x32, x32]).dtype


def test_piecewise_calls_each_function_on_its_entries_only():
    x = onp.array([-4.0, -1.0, 0.25, 4.0])

    def f(x):
        # sqrt would warn (and give nan derivatives) on the negative entries if called there
        return np.piecewise(x, [x < 0, x >= 0], [lambda v: -v ** 3, np.sqrt])

    with onp.errstate(invalid="raise"):
        assert onp.array_equal(f(x), onp.piecewise(x, [x < 0, x >= 0], [lambda v: -v ** 3,
                                                                         onp.sqrt]))
        g = fgrad.grad(lambda x: np.sum(f(x)))(x)
    onp.testing.assert_allclose(g, [-48.0, -3.0, 1.0, 0.25], rtol=1e-15)
    # constants and the default (last function for what no condition covers)
    h = grad_sum(lambda x: np.piecewise(x, [x < 0], [2.0, lambda v: v * 5]))(x)
    onp.testing.assert_array_equal(h, [0.0, 0.0, 5.0, 5.0])
    # a traced constant receives the derivative of its entries
    gc = fgrad.grad(lambda c: np.sum(np.piecewise(x, [x < 0], [c, 1.0])))(3.0)
    assert gc == 2.0


# --- complex inputs: JAX's convention ------------------------------------------------------

Z = onp.array([0.7 + 0.4j, -0.3 + 1.1j, 1.2 - 0.6j])  # off every branch cut

HOLOMORPHIC = {
    "exp": (np.exp, onp.exp), "log": (np.log, lambda z: 1 / z),
    "sin": (np.sin, onp.cos), "cos": (np.cos, lambda z: -onp.sin(z)),
    "tan": (np.tan, lambda z: 1 / onp.cos(z) ** 2),
    "sqrt": (np.sqrt, lambda z: 0.5 / onp.sqrt(z)), "square": (np.square, lambda z: 2 * z),
    "reciprocal": (np.reciprocal, lambda z: -1 / z ** 2),
    "exp2": (np.exp2, lambda z: math.log(2) * 2 ** z), "expm1": (np.expm1, onp.exp),
    "log2": (np.log2, lambda z: 1 / (z * math.log(2))),
    "log10": (np.log10, lambda z: 1 / (z * math.log(10))),
    "log1p": (np.log1p, lambda z: 1 / (1 + z)),
    "sinh": (np.sinh, onp.cosh), "cosh": (np.cosh, onp.sinh),
    "tanh": (np.tanh, lambda z: 1 / onp.cosh(z) ** 2),
    "arcsin": (np.arcsin, lambda z: 1 / onp.sqrt(1 - z ** 2)),
    "arccos": (np.arccos, lambda z: -1 / onp.sqrt(1 - z ** 2)),
    "arctan": (np.arctan, lambda z: 1 / (1 + z ** 2)),
    "arcsinh": (np.arcsinh, lambda z: 1 / onp.sqrt(1 + z ** 2)),
    "arccosh": (np.arccosh, lambda z: 1 / (onp.sqrt(z - 1) * onp.sqrt(z + 1))),
    "arctanh": (np.arctanh, lambda z: 1 / (1 - z ** 2)),
    "negative": (np.negative, lambda z: -onp.ones_like(z)),
    "positive": (np.positive, onp.ones_like),
    "sinc": (np.sinc, lambda z: (onp.cos(math.pi * z) - onp.sinc(z)) / z),
}


@pytest.mark.parametrize("name", sorted(HOLOMORPHIC))
def test_holomorphic_functions_jvp_and_vjp_multiply_by_the_complex_derivative(name):
    f, df = HOLOMORPHIC[name]
    t = onp.array([1.0 - 2.0j, 0.5j, -1.5 + 0.3j])
    out, jt = fgrad.jvp(f, (Z,), (t,))
    assert onp.array_equal(out, getattr(onp, name)(Z))
    onp.testing.assert_allclose(jt, t * df(Z), rtol=1e-12)
    _, f_vjp = fgrad.vjp(f, Z)
    onp.testing.assert_allclose(f_vjp(t)[0], t * df(Z), rtol=1e-12)  # unconjugated
    check_grads(f, (Z,), order=2)


def test_arccosh_derivative_has_arccosh_branch_left_of_the_imaginary_axis():
    # 1 / sqrt(z**2 - 1) has the opposite sign here; the derivative must not
    z = onp.array([-2.0 + 0.5j])
    onp.testing.assert_allclose(fgrad.jvp(np.arccosh, (z,), (onp.ones(1) + 0j,))[1],
                                1 / (onp.sqrt(z - 1) * onp.sqrt(z + 1)), rtol=1e-13)
    check_grads(np.arccosh, (z,), order=2)


def test_complex_absolute_real_imag_conj_angle():
    # grad of a real function of z is df/dx - i df/dy (JAX's convention)
    x, y = Z.real, Z.imag
    r = onp.abs(Z)
    onp.testing.assert_allclose(grad_sum(np.abs)(Z), onp.conj(Z) / r, rtol=1e-14)
    onp.testing.assert_allclose(grad_sum(lambda z: np.abs(z) ** 2)(Z), 2 * onp.conj(Z),
                                rtol=1e-14)
    onp.testing.assert_allclose(grad_sum(np.angle)(Z), (-y - 1j * x) / r ** 2, rtol=1e-14)
    onp.testing.assert_allclose(grad_sum(lambda z: np.angle(z, deg=True))(Z),
                                (-y - 1j * x) / r ** 2 * 180 / math.pi, rtol=1e-14)
    assert grad_sum(np.real)(Z).tolist() == [1 + 0j] * 3
    assert grad_sum(np.imag)(Z).tolist() == [-1j] * 3
    t = onp.array([1 + 2j, 3 - 1j, -1j])
    assert fgrad.jvp(np.conj, (Z,), (t,))[1].tolist() == onp.conj(t).tolist()
    assert fgrad.vjp(np.conjugate, Z)[1](t)[0].tolist() == onp.conj(t).tolist()
    assert onp.abs(fgrad.grad(np.abs)(0j)) == 0.0
    for f in (np.abs, np.real, np.imag, np.angle, np.conj,
              lambda z: np.angle(z, deg=True), lambda z: np.abs(z) * np.exp(z)):
        check_grads(f, (Z,), order=2)


def test_angle_of_real_input_is_constant_almost_everywhere():
    x = onp.array([-1.5, 2.0])
    assert onp.array_equal(np.angle(x), onp.angle(x))
    assert grad_sum(np.angle)(x).tolist() == [0.0, 0.0]


def test_complex_arithmetic_and_mixed_real_complex():
    a = onp.array([1.0 + 0.5j, -0.7 + 0.2j, 0.4 - 1.3j])
    for f in (np.add, np.subtract, np.multiply, np.divide, np.true_divide, np.power,
              np.float_power, lambda u, v: u ** 2 / v + u * v):
        check_grads(f, (Z, a), order=2)
    # holomorphic in each argument: the VJP is the unconjugated partial derivative
    g = onp.array([1.0, 1j, -1.0])
    gz, ga = fgrad.vjp(np.multiply, Z, a)[1](g)
    onp.testing.assert_allclose(gz, g * a, rtol=1e-15)
    onp.testing.assert_allclose(ga, g * Z, rtol=1e-15)
    # a real input of a complex output gets a real cotangent: Re of g * a
    r = onp.array([0.5, 2.0, -1.0])
    gr = fgrad.vjp(lambda r: np.multiply(r, a), r)[1](g)[0]
    assert gr.dtype == onp.float64
    onp.testing.assert_allclose(gr, (g * a).real, rtol=1e-15)
    check_grads(lambda r: np.exp(r * a), (r,), order=2)


# --- realistic uses ------------------------------------------------------------------------

def logsumexp(x):
    m = np.max(x)
    return m + np.log(np.sum(np.exp(x - m)))


def test_stable_logsumexp_gradient_is_softmax_and_hessian_its_covariance():
    x = onp.array([1000.0, 999.0, 998.5, -3.0])
    s = onp.exp(x - x.max())
    s /= s.sum()
    assert fgrad.grad(logsumexp)(x) == pytest.approx(s, rel=1e-13)
    h = fgrad.hessian(logsumexp)(x)
    onp.testing.assert_allclose(h, onp.diag(s) - onp.outer(s, s), atol=1e-15)
    check_grads(logsumexp, (X,), order=2)


def test_logaddexp_patterns_without_reduce():
    # a running log-sum-exp by folding logaddexp, and softplus as logaddexp(0, x)
    x = onp.array([0.3, -1.2, 2.5, 0.0])
    fold = lambda x: functools.reduce(np.logaddexp, [x[i] for i in range(4)])
    assert fold(x) == pytest.approx(onp.log(onp.sum(onp.exp(x))), rel=1e-14)
    e = onp.exp(x)
    onp.testing.assert_allclose(fgrad.grad(fold)(x), e / e.sum(), rtol=1e-14)
    onp.testing.assert_allclose(grad_sum(lambda x: np.logaddexp(0.0, x))(x), sigmoid(x),
                                rtol=1e-14)
    check_grads(fold, (x,), order=2)
    # binary cross-entropy on logits, the stable form
    labels = onp.array([1.0, 0.0, 1.0, 0.0])
    bce = lambda z: np.mean(np.logaddexp(0.0, z) - labels * z)
    onp.testing.assert_allclose(fgrad.grad(bce)(x), (sigmoid(x) - labels) / 4, rtol=1e-14)


def test_polar_coordinates_jacobian_both_modes():
    def polar(v):
        return np.stack([np.hypot(v[0], v[1]), np.arctan2(v[1], v[0])])

    v = onp.array([0.6, -0.8])
    r = 1.0
    want = onp.array([[v[0] / r, v[1] / r], [-v[1] / r ** 2, v[0] / r ** 2]])
    onp.testing.assert_allclose(fgrad.jacfwd(polar)(v), want, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacrev(polar)(v), want, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacfwd(fgrad.jacrev(polar))(v),
                                fgrad.jacrev(fgrad.jacfwd(polar))(v), rtol=1e-14)


def test_huber_loss_with_where_and_clip():
    def huber(r, delta=1.0):
        a = np.abs(r)
        return np.sum(np.where(a < delta, 0.5 * r ** 2, delta * (a - 0.5 * delta)))

    r = onp.array([-3.0, -0.5, 0.2, 2.0])
    onp.testing.assert_array_equal(fgrad.grad(huber)(r), onp.clip(r, -1.0, 1.0))
    onp.testing.assert_array_equal(fgrad.grad(lambda r: np.sum(np.clip(r, -1, 1) ** 2))(r),
                                   [0.0, -1.0, 0.4, 0.0])
    check_grads(huber, (r,), order=2)


def test_degree_trigonometry_and_sinc_filter():
    deg = onp.array([10.0, 45.0, 100.0])
    g = grad_sum(lambda d: np.sin(np.radians(d)))(deg)
    onp.testing.assert_allclose(g, onp.cos(onp.radians(deg)) * math.pi / 180, rtol=1e-14)
    t = onp.linspace(-2, 2, 9)

    def lowpass(cutoff):
        h = np.sinc(2 * cutoff * t)
        return np.sum(h ** 2)

    check_grads(lowpass, (0.35,), order=2)


# --- dtypes ---------------------------------------------------------------------------------

F32 = onp.array([0.3, -1.2, 0.8], dtype=onp.float32)


@pytest.mark.parametrize("f", [
    np.sinc, np.i0, np.fabs, np.positive, np.deg2rad, np.degrees,
    lambda x: np.logaddexp(x, x * 2), lambda x: np.hypot(x, 1.0), lambda x: np.arctan2(x, 2.0),
    lambda x: np.fmax(x, 0.0), lambda x: np.copysign(x, -1.0), lambda x: np.fmod(x, 0.7),
    lambda x: np.clip(x, -0.5, 0.5), lambda x: np.where(x > 0, x, 0.0),
    lambda x: np.nan_to_num(x), lambda x: np.ldexp(x, 2), lambda x: np.heaviside(x, x),
    lambda x: np.modf(x)[0], lambda x: np.frexp(x)[0], lambda x: np.divmod(x, 0.5)[1],
    lambda x: np.select([x > 0], [x], x * 2), lambda x: np.unwrap(x),
])
def test_float32_stays_float32(f):
    out, f_vjp = fgrad.vjp(f, F32)
    assert out.dtype == onp.float32
    assert f_vjp(onp.ones_like(out))[0].dtype == onp.float32
    assert fgrad.jvp(f, (F32,), (onp.ones_like(F32),))[1].dtype == onp.float32


def test_float64_results_give_float32_arguments_float32_gradients():
    # float_power and interp compute in float64, as numpy does
    for f in (lambda x: np.float_power(np.abs(x), 1.5), lambda x: np.interp(x, [-2, 0, 2],
                                                                             [0, 1, 0])):
        out, f_vjp = fgrad.vjp(f, F32)
        assert out.dtype == onp.float64
        assert f_vjp(onp.ones(3))[0].dtype == onp.float32
        assert fgrad.jvp(f, (F32,), (onp.ones_like(F32),))[1].dtype == onp.float64


def test_complex64_stays_complex64():
    z = Z.astype(onp.complex64)
    for f in (np.exp, np.sqrt, lambda z: np.abs(z) * z, np.conj):
        out, f_vjp = fgrad.vjp(f, z)
        assert out.dtype == f(z).dtype
        assert f_vjp(onp.ones_like(out))[0].dtype == onp.complex64
    assert fgrad.grad(lambda z: np.sum(np.angle(z)))(z).dtype == onp.complex64


# --- plain values, names and errors ----------------------------------------------------------

PLAIN = [
    (np.positive, (X,)), (np.fmod, (X, Y)), (np.float_power, (onp.abs(X), Y)),
    (np.logaddexp, (X, Y)), (np.logaddexp2, (X, Y)), (np.arctan2, (X, Y)), (np.hypot, (X, Y)),
    (np.deg2rad, (X,)), (np.rad2deg, (X,)), (np.degrees, (X,)), (np.radians, (X,)),
    (np.sinc, (X,)), (np.fabs, (X,)), (np.fmax, (X, Y)), (np.fmin, (X, Y)),
    (np.copysign, (X, Y)), (np.nextafter, (X, Y)), (np.spacing, (X,)), (np.heaviside, (X, Y)),
    (np.i0, (X,)), (np.nan_to_num, (X,)), (np.angle, (Z,)), (np.divmod, (X, Y)),
    (np.modf, (X,)), (np.frexp, (X,)), (np.real_if_close, (Z,)),
    (np.interp, (X, onp.sort(Y), X)), (np.unwrap, (X * 3,)),
    (np.select, ([X > 0, X < -1], [X, Y], 0.5)), (np.where, (X > 0, X, Y)),
    (np.clip, (X, -1, 1)), (np.ldexp, (X, onp.arange(5))),
]


@pytest.mark.parametrize("f, args", PLAIN, ids=lambda v: getattr(v, "__name__", ""))
def test_plain_calls_are_numpys(f, args):
    want = getattr(onp, f.__name__)(*args)
    got = f(*args)
    assert type(got) is type(want)
    for g, w in zip(*(v if isinstance(v, tuple) else (v,) for v in (got, want))):
        assert onp.array_equal(g, w, equal_nan=True) and g.dtype == w.dtype


def test_plain_calls_keep_ufunc_keywords():
    buf = onp.zeros(5)
    assert np.sin(X, out=buf) is buf and onp.array_equal(buf, onp.sin(X))
    got = np.hypot(X, Y, where=X > 0, out=onp.full(5, -1.0))
    onp.testing.assert_array_equal(got, onp.where(X > 0, onp.hypot(X, Y), -1.0))
    assert np.exp(X, dtype=onp.float32).dtype == onp.float32


NAMES = """positive fmod float_power logaddexp logaddexp2 arctan2 hypot deg2rad rad2deg degrees
radians sinc fabs fmax fmin copysign ldexp nan_to_num angle heaviside nextafter divmod modf
frexp real_if_close interp unwrap select piecewise i0 where clip absolute abs true_divide
remainder mod conj conjugate pow power real imag exp log sin cos sqrt square reciprocal
acos asin atan acosh asinh atanh atan2""".split()


@pytest.mark.parametrize("name", NAMES)
def test_names_are_differentiable_fgrad_objects(name):
    obj = getattr(np, name)
    assert (isinstance(obj, Primitive) and obj.spec is not None) or \
        any(f.fn is obj for f in FUNCTIONS.values()), name


def test_numpy_aliases_resolve_to_the_same_fgrad_objects():
    assert np.true_divide is np.divide and np.remainder is np.mod
    assert np.abs is np.absolute and np.conj is np.conjugate and np.pow is np.power
    assert np.acos is np.arccos and np.asin is np.arcsin and np.atan is np.arctan
    assert np.acosh is np.arccosh and np.asinh is np.arcsinh and np.atanh is np.arctanh
    assert np.atan2 is np.arctan2
    assert np.spacing(onp.float64(1.0)) == onp.spacing(1.0)


ONE = onp.array([0.5, 1.5])


@pytest.mark.parametrize("call", [
    lambda x: np.sin(x, out=onp.zeros(2)),
    lambda x: np.sin(x, onp.zeros(2)),               # numpy's positional out
    lambda x: np.hypot(x, 1.0, out=onp.zeros(2)),
    lambda x: np.logaddexp(x, x, onp.zeros(2)),
    lambda x: np.clip(x, 0.0, 1.0, out=onp.zeros(2)),
    lambda x: np.divmod(x, 1.0, out=(onp.zeros(2), onp.zeros(2)))[1],
    lambda x: np.modf(x, onp.zeros(2), onp.zeros(2))[0],
])
def test_out_on_a_traced_call_is_refused(call):
    with pytest.raises(fgrad.TracerMutationError, match=r"out=\.\.\..*would write a traced"):
        fgrad.grad(lambda x: np.sum(call(x)))(ONE)


@pytest.mark.parametrize("call, word", [
    (lambda x: np.sin(x, where=x > 1), "where"),
    (lambda x: np.maximum(x, 1.0, where=x > 1), "where"),
    (lambda x: np.exp(x, dtype=onp.float32), "dtype"),
    (lambda x: np.add(x, x, casting="unsafe"), "casting"),
    (lambda x: onp.sin(x, where=x > 1), "where"),   # plain numpy handed a tracer
    (lambda x: np.frexp(x, where=x > 1)[0], "where"),
])
def test_other_ufunc_keywords_on_a_traced_call_are_refused_by_name(call, word):
    with pytest.raises(NotImplementedError, match=rf"fgrad\.numpy\.\w+: the argument\(s\) {word}"):
        fgrad.grad(lambda x: np.sum(call(x)))(ONE)


def test_keywords_left_at_their_defaults_are_accepted_on_traced_calls():
    g = fgrad.grad(lambda x: np.sum(np.sin(x, out=None, where=None)))(ONE)
    onp.testing.assert_allclose(g, onp.cos(ONE))


def test_nan_to_num_refuses_in_place_and_differentiates_traced_replacements():
    with pytest.raises(fgrad.TracerMutationError, match="copy=False"):
        fgrad.grad(lambda x: np.sum(np.nan_to_num(x, copy=False)))(ONE)
    # each replaced entry has its replacement's derivative: 1 (nan) + 2 (posinf) + 2c (neginf)
    v = onp.array([onp.nan, 1.0, onp.inf, -onp.inf])
    f = lambda c: np.sum(np.nan_to_num(v, nan=c, posinf=2 * c, neginf=c ** 2))  # noqa: E731
    assert f(0.5) == onp.sum(onp.nan_to_num(v, nan=0.5, posinf=1.0, neginf=0.25))
    assert fgrad.grad(f)(0.5) == 4.0


@pytest.mark.parametrize("ufunc, kwargs", [
    ("hypot", {}), ("hypot", {"axis": 1}),
    ("logaddexp", {"where": [[True, False, True], [True, True, False]]}),
    ("logaddexp", {"where": [True, False, True], "axis": 1, "keepdims": True}),
    ("subtract", {"initial": 0.5}), ("subtract", {"initial": 0.5, "where": [True, False, True],
                                                  "axis": 1}),
    ("add", {"where": [True, False, True], "axis": 1}), ("add", {"initial": 2.0, "axis": None}),
    ("maximum", {"where": [True, False, True], "initial": -5.0, "axis": 1}),
    ("multiply", {"dtype": onp.float32}), ("maximum", {"dtype": onp.float32, "axis": 1}),
    ("logaddexp2", {"dtype": onp.float32}), ("divide", {"initial": 3.0}),
    ("fmax", {"axis": 1, "where": [True, False, True], "initial": 0.0})])
def test_ufunc_reduce_takes_initial_where_and_dtype_on_traced_values(ufunc, kwargs):
    x = onp.array([[1.0, -2.0, 0.5], [0.3, 1.5, -1.0]])
    ours, theirs = getattr(np, ufunc).reduce, getattr(onp, ufunc).reduce
    want = theirs(x, **kwargs)
    got = fgrad.jit(lambda v: ours(v, **kwargs))(x)
    onp.testing.assert_array_equal(got, want)
    assert got.dtype == want.dtype
    # float32 results: differences of the float64 inputs' function, derivatives to its rounding
    g = fgrad.grad(lambda v: np.sum(ours(v, **kwargs)))(x)
    wide = want.dtype == float
    fd = central_gradient(lambda v: onp.sum(theirs(v.astype(want.dtype), **kwargs)
                                            .astype(float)), x, 1e-6 if wide else 1e-2)
    onp.testing.assert_allclose(g, fd, atol=1e-6 if wide else 1e-4)


def test_ufunc_reduce_folds_from_numpys_identity_and_raises_numpys_errors():
    # numpy's hypot.reduce starts from its identity 0: hypot(0, -3) = 3, slope -1 (a fold
    # from the first entry gave -3 and 1)
    assert fgrad.jit(np.hypot.reduce)(onp.array([-3.0])) == onp.hypot.reduce([-3.0]) == 3.0
    assert fgrad.grad(np.hypot.reduce)(onp.array([-3.0])).tolist() == [-1.0]
    x = onp.ones((2, 2))
    with pytest.raises(ValueError, match="'subtract' does not have an identity, so to use a "
                                         "where mask one has to specify 'initial'"):
        fgrad.grad(lambda v: np.subtract.reduce(v, where=[True, False]).sum())(x)
    with pytest.raises(ValueError, match="'subtract' is not reorderable"):
        fgrad.grad(lambda v: np.subtract.reduce(v, axis=None))(x)
    # an empty fold is numpy's initial; a batched where mask is each example's
    assert fgrad.jit(lambda v: np.subtract.reduce(v, initial=2.5))(onp.zeros(0)) == 2.5
    w = onp.array([[True, False], [False, True]])
    got = fgrad.vmap(lambda v, m: np.logaddexp.reduce(v, where=m))(x, w)
    onp.testing.assert_array_equal(got, [onp.logaddexp.reduce(r, where=m) for r, m in zip(x, w)])


def test_ufunc_methods_on_plain_values_are_numpys_and_at_writes_as_numpys():
    x = onp.array([3.0, 1.0, 2.0])
    assert np.add.outer(x, x).tolist() == onp.add.outer(x, x).tolist()
    assert np.maximum.accumulate(x).tolist() == [3.0, 3.0, 3.0]
    y = x.copy()
    np.add.at(y, [0, 0], 1.0)  # plain: numpy's, in place
    assert y.tolist() == [5.0, 1.0, 2.0]
    # a traced array: written as numpy writes it (tests/test_writes.py); a plain one given
    # traced values cannot hold them
    assert fgrad.grad(lambda v: (np.multiply.at(v, [0, 0], v[1]), np.sum(v))[1])(x).tolist() \
        == [1.0, 1.0 + 2 * 3.0 * 1.0, 1.0]
    with pytest.raises(fgrad.TracerMutationError,
                       match=r"add\.at writes into its first argument in place.*"
                             r"fgrad\.numpy\.at\(x\)\[idx\]\.add\(v\)"):
        fgrad.grad(lambda v: np.sum(np.add.at(onp.zeros(3), [0], v[0]) or v))(x)
    # traced: the same values as numpy's, and derivatives (the generated tests check the
    # registered entries np.add.outer, np.logaddexp.reduce, ... against finite differences)
    got = fgrad.jvp(lambda v: np.logaddexp.accumulate(v), (x,), (onp.ones(3),))
    assert got[0].tolist() == onp.logaddexp.accumulate(x).tolist()
    onp.testing.assert_allclose(got[1], onp.ones(3))  # d/dt logaddexp of (x + t) along ones


@pytest.mark.parametrize("name", ["sqrt", "log", "log2", "log10", "arcsin", "arccos",
                                  "arctanh"])
@pytest.mark.parametrize("module", ["fgrad.numpy.emath", "numpy.emath"])
def test_emath_gives_numpys_complex_values_and_their_derivatives(name, module):
    # (numpy's emath on a traced value went to the real function of its name: nan where
    # numpy gives a complex number, emath.sqrt(-2.0) = 1.414j; and arcsin's derivative on its
    # cut beyond 1 had the other side's sign)
    fn = getattr(np.emath if module == "fgrad.numpy.emath" else onp.emath, name)
    x = onp.array([-2.0, 8.0, 0.25, -0.3])
    want = getattr(onp.emath, name)(x)
    assert want.dtype == onp.complex128
    value, tangent = fgrad.jvp(fn, (x,), (onp.ones(4),))
    onp.testing.assert_array_equal(value, want)
    h = 1e-6  # (the real line's restriction, on the cuts too: numpy's side of them)
    fd = (getattr(onp.emath, name)(x + h) - getattr(onp.emath, name)(x - h)) / (2 * h)
    onp.testing.assert_allclose(tangent, fd, rtol=1e-6)
    onp.testing.assert_array_equal(fgrad.jit(fn)(x), want)
    real = onp.array([0.25, 0.5])  # (inside the real domain the result stays real, as numpy's)
    assert fgrad.jvp(fn, (real,), (onp.ones(2),))[0].dtype == onp.float64
    with pytest.raises(fgrad.ConcretizationError, match="vmap"):
        fgrad.vmap(fn)(onp.stack([x, x]))  # (the dtype follows the values: a batch has many)


def test_emath_logn_and_power_and_other_numpy_modules_on_traced_values():
    x = onp.array([-2.0, 3.0])
    onp.testing.assert_array_equal(fgrad.jvp(lambda v: onp.emath.logn(3.0, v), (x,),
                                             (onp.ones(2),))[0], onp.emath.logn(3.0, x))
    # d/dx emath.power(x, -2) = -2 x^-3, a negative integer power taken in floats
    onp.testing.assert_allclose(fgrad.grad(lambda v: np.real(np.emath.power(v, -2)))(-2.0),
                                0.25)
    with pytest.raises(fgrad.ConcretizationError, match=r"numpy\.strings\.multiply was called "
                       "on a traced value.*fgrad has no version of it"):
        fgrad.grad(lambda v: onp.strings.multiply(v, 2))(1.0)
