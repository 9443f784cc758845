"""custom_vjp and custom_jvp: JAX's semantics (decorator, defvjp/defjvp/defjvps,
nondiff_argnums, pytrees, keyword arguments), fgrad's extension (a custom_vjp function under
jvp, linearize, jacfwd and hessian, by transposing bwd), nesting, and every misuse raising a
named error. Derivatives are checked against closed forms and finite differences."""
import functools
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads


def sigmoid(x):
    return onp.exp(-onp.logaddexp(0.0, -x))  # no overflow at either end


def fd(f, x, eps=1e-6):
    """Central difference of a scalar function of a scalar."""
    return (f(x + eps) - f(x - eps)) / (2 * eps)


# --- log1pexp: a numerically stable derivative --------------------------------------------

calls = {"fwd": 0, "bwd": 0}


@fgrad.custom_vjp
def log1pexp(x):
    return np.logaddexp(0.0, x)


def _log1pexp_fwd(x):
    calls["fwd"] += 1
    return log1pexp(x), x


def _log1pexp_bwd(x, g):
    calls["bwd"] += 1
    return (g / (1.0 + np.exp(-x)),)


log1pexp.defvjp(_log1pexp_fwd, _log1pexp_bwd)


@fgrad.custom_jvp
def log1pexp_j(x):
    return np.logaddexp(0.0, x)


@log1pexp_j.defjvp
def _log1pexp_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return log1pexp_j(x), t / (1.0 + np.exp(-x))


XS = onp.array([-30.0, -2.0, 0.0, 0.5, 3.0, 40.0, 1000.0])
STABLE = [log1pexp, log1pexp_j]


def test_the_naive_derivative_is_nan_where_the_custom_one_is_not():
    naive = lambda x: np.log(1.0 + np.exp(x))  # noqa: E731
    with onp.errstate(over="ignore", invalid="ignore"):
        assert onp.isnan(fgrad.grad(naive)(1000.0))
    for f in STABLE:
        assert fgrad.grad(f)(1000.0) == 1.0


@pytest.mark.parametrize("f", STABLE, ids=["custom_vjp", "custom_jvp"])
def test_log1pexp_values_and_first_derivative_in_every_mode(f):
    onp.testing.assert_array_equal(f(XS), onp.logaddexp(0.0, XS))
    want = sigmoid(XS)
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(f(x)))(XS), want, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jvp(f, (XS,), (onp.ones_like(XS),))[1], want,
                                rtol=1e-14)
    onp.testing.assert_allclose(fgrad.linearize(f, XS)[1](onp.ones_like(XS)), want,
                                rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacfwd(f)(XS), onp.diag(want), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacrev(f)(XS), onp.diag(want), rtol=1e-14)


@pytest.mark.parametrize("f", STABLE, ids=["custom_vjp", "custom_jvp"])
def test_log1pexp_second_and_third_derivatives_in_every_nesting(f):
    s, r = sigmoid(XS), sigmoid(-XS)  # r = 1 - s without the cancellation
    d2, d3 = s * r, s * r * (r - s)
    hess = fgrad.hessian(lambda x: np.sum(f(x)))(XS)
    onp.testing.assert_allclose(hess, onp.diag(d2), rtol=1e-12, atol=1e-300)
    scalar = lambda x: f(x)  # noqa: E731
    for outer in (fgrad.grad, lambda g: (lambda x: fgrad.jvp(g, (x,), (1.0,))[1])):
        for inner in (fgrad.grad, lambda g: (lambda x: fgrad.jvp(g, (x,), (1.0,))[1])):
            second = outer(inner(scalar))
            for x, want in zip(XS[1:5], d2[1:5]):
                assert abs(second(x) - want) < 1e-13
    third = fgrad.grad(fgrad.grad(fgrad.grad(scalar)))
    for x, want in zip(XS[1:5], d3[1:5]):
        assert abs(third(x) - want) < 1e-13


@pytest.mark.parametrize("f", STABLE, ids=["custom_vjp", "custom_jvp"])
def test_log1pexp_agrees_with_finite_differences_to_second_order(f):
    assert check_grads(f, (onp.array([-1.5, 0.2, 2.5]),), order=2) < 1e-5


def test_custom_vjp_hessian_agrees_with_finite_differences_of_the_gradient():
    x = onp.array([-0.7, 0.4, 1.9])
    loss = lambda x: np.sum(log1pexp(x) * onp.array([1.0, 2.0, -1.0]))  # noqa: E731
    hess = fgrad.hessian(loss)(x)
    g = fgrad.grad(loss)
    numeric = onp.stack([(g(x + 1e-6 * e) - g(x - 1e-6 * e)) / 2e-6 for e in onp.eye(3)])
    onp.testing.assert_allclose(hess, numeric, rtol=1e-6, atol=1e-9)


def test_fwd_runs_once_on_the_forward_pass_and_bwd_once_per_backward_pass():
    calls.update(fwd=0, bwd=0)
    out, f_vjp = fgrad.vjp(lambda x: log1pexp(x) * 2.0, XS)
    assert calls == {"fwd": 1, "bwd": 0}
    f_vjp(onp.ones_like(XS))
    f_vjp(onp.ones_like(XS))
    assert calls == {"fwd": 1, "bwd": 2}
    calls.update(fwd=0, bwd=0)
    onp.testing.assert_array_equal(log1pexp(XS), onp.logaddexp(0.0, XS))
    assert calls == {"fwd": 0, "bwd": 0}  # on plain values it is just the function


def test_fwd_runs_once_with_a_constant_array_argument_which_a_later_write_cannot_change():
    # the tape keeps its own copy of the constant ``w``; the residuals computed from the
    # caller's ``w`` still serve the rules (equal values), and are copied, so writing into
    # ``w`` before the backward pass changes nothing
    seen = {"fwd": 0}

    @fgrad.custom_vjp
    def scaled(x, w):
        return x * w

    def fwd(x, w):
        seen["fwd"] += 1
        return x * w, w

    scaled.defvjp(fwd, lambda w, g: (g * w, None))
    x, w = onp.array([1.0, 2.0]), onp.array([3.0, 4.0])
    out, f_vjp = fgrad.vjp(lambda x: scaled(x, w), x)
    w[:] = 100.0
    onp.testing.assert_array_equal(f_vjp(onp.ones(2))[0], [3.0, 4.0])
    assert seen["fwd"] == 1


def test_bwd_is_called_once_for_all_arguments():
    seen = []

    @fgrad.custom_vjp
    def f(x, y, z):
        return x * y * z

    def bwd(res, g):
        seen.append(1)
        x, y, z = res
        return g * y * z, g * x * z, g * x * y

    f.defvjp(lambda x, y, z: (f(x, y, z), (x, y, z)), bwd)
    assert fgrad.grad(f, argnums=(0, 1, 2))(2.0, 3.0, 5.0) == (15.0, 10.0, 6.0)
    assert len(seen) == 1


# --- forward mode of custom_vjp: bwd transposed --------------------------------------------

@fgrad.custom_vjp
def sin_times(x, y):
    return np.sin(x) * y


sin_times.defvjp(lambda x, y: (sin_times(x, y), (np.cos(x), np.sin(x), y)),
                 lambda r, g: (r[0] * g * r[2], fgrad.unbroadcast(r[1] * g, np.shape(r[2]))))

X2, Y2 = onp.array([0.3, 0.7]), onp.array([1.5, -0.5])


def test_custom_vjp_forward_mode_agrees_with_finite_differences_to_third_order():
    assert check_grads(sin_times, (X2, Y2), order=3) < 1e-5


def test_custom_vjp_jacobians_both_ways_match_the_closed_form():
    want = (onp.diag(onp.cos(X2) * Y2), onp.diag(onp.sin(X2)))
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        got = jac(sin_times, argnums=(0, 1))(X2, Y2)
        onp.testing.assert_allclose(got[0], want[0], rtol=1e-15)
        onp.testing.assert_allclose(got[1], want[1], rtol=1e-15)
    hess = fgrad.hessian(lambda x: np.sum(sin_times(x, Y2)))(X2)
    onp.testing.assert_allclose(hess, onp.diag(-onp.sin(X2) * Y2), rtol=1e-15)


def test_custom_vjp_broadcasting_argument_gets_a_summed_cotangent():
    g = fgrad.grad(lambda y: np.sum(sin_times(X2, y)))(2.0)
    assert abs(g - onp.sum(onp.sin(X2))) < 1e-15


def test_forward_mode_uses_the_custom_derivative_not_the_primal():
    """A straight-through estimator: round has derivative 0, the rule says 1; jvp, jacfwd
    and grad all follow the rule."""

    @fgrad.custom_vjp
    def ste(x):
        return np.round(x)

    ste.defvjp(lambda x: (ste(x), None), lambda r, g: (g,))
    x = onp.array([0.4, 1.6, -2.2])
    onp.testing.assert_array_equal(fgrad.jvp(ste, (x,), (onp.array([1.0, 2.0, 3.0]),))[1],
                                   [1.0, 2.0, 3.0])
    onp.testing.assert_array_equal(fgrad.jacfwd(ste)(x), onp.eye(3))
    onp.testing.assert_array_equal(fgrad.jacrev(ste)(x), onp.eye(3))
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.sum(ste(x) * x))(x),
                                   onp.round(x) + x)


def test_gradient_clipping_clips_the_cotangent_and_is_the_identity_in_forward_mode():
    @fgrad.custom_vjp
    def clip_gradient(lo, hi, x):
        return x

    clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
                         lambda res, g: (None, None, np.clip(g, res[0], res[1])))
    x = onp.array([1.0, -2.0, 0.1])
    # cotangents 3x^2 = [3, 12, 0.03], clipped to [-1, 1]
    g = fgrad.grad(lambda x: np.sum(clip_gradient(-1.0, 1.0, x) ** 3))(x)
    onp.testing.assert_array_equal(g, onp.clip(3 * x ** 2, -1.0, 1.0))
    # bwd is not linear in g: forward mode is its linearisation at g = 0, the identity
    onp.testing.assert_array_equal(fgrad.jvp(lambda x: clip_gradient(-1.0, 1.0, x), (x,),
                                             (onp.array([5.0, -5.0, 0.5]),))[1],
                                   [5.0, -5.0, 0.5])


def test_second_derivative_differentiates_bwd_itself():
    """bwd is the derivative fgrad uses, so grad of grad is the derivative of bwd (JAX)."""

    @fgrad.custom_vjp
    def cube(x):
        return x ** 3

    cube.defvjp(lambda x: (cube(x), x), lambda x, g: (g * 5.0 * x,))  # deliberately not 3x^2
    assert fgrad.grad(cube)(2.0) == 10.0
    assert fgrad.grad(fgrad.grad(cube))(2.0) == 5.0
    assert fgrad.hessian(cube)(2.0) == 5.0
    assert fgrad.jvp(fgrad.grad(cube), (2.0,), (1.0,))[1] == 5.0


def test_no_perturbation_confusion_through_a_custom_function():
    # d/dx [x * d/dy sin_times(x + y, 1)]_{y=0} = d/dx [x cos x] = cos x - x sin x
    def inner(x):
        return x * fgrad.grad(lambda y: sin_times(x + y, 1.0))(0.0)

    for x in (0.3, 1.1):
        for outer in (fgrad.grad(inner), lambda x: fgrad.jvp(inner, (x,), (1.0,))[1]):
            assert abs(outer(x) - (onp.cos(x) - x * onp.sin(x))) < 1e-14


# --- the implicit function theorem --------------------------------------------------------

def _solve_fixed_point(a, b, iters=400):
    """x = tanh(A x + b) by iteration (a contraction for the A used here)."""
    x = np.zeros_like(b)
    for _ in range(iters):
        x = np.tanh(a @ x + b)
    return x


@fgrad.custom_vjp
def fixed_point(a, b):
    return _solve_fixed_point(fgrad.stop_gradient(a), fgrad.stop_gradient(b))


def _fixed_point_fwd(a, b):
    x = fixed_point(a, b)
    return x, (a, x)


def _fixed_point_bwd(res, g):
    # F(x, a, b) = x - tanh(a x + b) = 0; with D = 1 - x^2 (tanh' at the solution),
    # dx = (I - D a)^-1 D (da x + db), so the cotangent is u = (I - D a)^-T g and
    # then db = D u, da = outer(D u, x).
    a, x = res
    d = 1.0 - x ** 2
    u = np.linalg.solve(np.transpose(np.eye(len(x)) - d[:, None] * a), g)
    return np.outer(d * u, x), d * u


fixed_point.defvjp(_fixed_point_fwd, _fixed_point_bwd)

A = onp.array([[0.3, -0.2, 0.1], [0.1, 0.4, -0.3], [-0.2, 0.1, 0.2]])
B = onp.array([0.5, -0.3, 0.8])


def test_implicit_function_value_solves_the_equation():
    x = fixed_point(A, B)
    onp.testing.assert_allclose(x, onp.tanh(A @ x + B), atol=1e-15)


def test_implicit_function_derivatives_agree_with_differentiating_the_iteration():
    # the loop itself, differentiated step by step, converges to the same derivative
    unrolled = fgrad.jacrev(_solve_fixed_point, argnums=(0, 1))(A, B)
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        got = jac(fixed_point, argnums=(0, 1))(A, B)
        onp.testing.assert_allclose(got[0], unrolled[0], atol=1e-12)
        onp.testing.assert_allclose(got[1], unrolled[1], atol=1e-12)


def test_implicit_function_agrees_with_finite_differences_to_second_order():
    assert check_grads(fixed_point, (A, B), order=2, eps=1e-5, rtol=1e-5, atol=1e-7) < 1e-4


def test_implicit_function_hessian_matches_the_unrolled_loop():
    w = onp.array([1.0, -2.0, 0.5])
    loss = lambda b: np.sum(fixed_point(A, b) * w)  # noqa: E731
    want = fgrad.hessian(lambda b: np.sum(_solve_fixed_point(A, b) * w))(B)
    onp.testing.assert_allclose(fgrad.hessian(loss)(B), want, atol=1e-11)


# --- pytrees ------------------------------------------------------------------------------

@fgrad.custom_vjp
def tree_fn(d, s):
    return {"a": d["u"] * s, "b": (np.sum(d["v"]), 3)}, np.astype(d["u"], "float32") * 2


def _tree_fwd(d, s):
    return tree_fn(d, s), (d, s)


def _tree_bwd(res, g):
    (d, s), (gd, g32) = res, g
    assert gd["b"][1].shape == ()  # the int output's cotangent is a zero array
    return ({"u": gd["a"] * s + 2 * g32, "v": gd["b"][0] * np.ones_like(d["v"])},
            np.sum(gd["a"] * d["u"]))


tree_fn.defvjp(_tree_fwd, _tree_bwd)
D = {"u": onp.array([1.0, 2.0]), "v": onp.array([3.0, 4.0, 5.0])}


def _tree_loss(fn):
    def loss(d, s):
        o, o32 = fn(d, s)
        return np.sum(o["a"] ** 2) + o["b"][0] * 3 + o["b"][1] + np.sum(o32)
    return loss


def _tree_reference(d, s):
    return {"a": d["u"] * s, "b": (np.sum(d["v"]), 3)}, np.astype(d["u"], "float32") * 2


def test_pytree_arguments_and_outputs_keep_their_types():
    out = tree_fn(D, 2.0)
    assert out[0]["b"][1] == 3 and type(out[0]["b"][1]) is int
    assert out[1].dtype == onp.float32
    traced = fgrad.vjp(lambda d: tree_fn(d, 2.0), D)[0]
    assert traced[0]["b"][1] == 3 and traced[1].dtype == onp.float32
    onp.testing.assert_array_equal(traced[0]["a"], [2.0, 4.0])


def test_pytree_gradients_and_tangents_match_the_plain_function():
    want = fgrad.grad(_tree_loss(_tree_reference), argnums=(0, 1))(D, 2.0)
    got = fgrad.grad(_tree_loss(tree_fn), argnums=(0, 1))(D, 2.0)
    onp.testing.assert_allclose(got[0]["u"], want[0]["u"], rtol=1e-15)
    onp.testing.assert_allclose(got[0]["v"], want[0]["v"], rtol=1e-15)
    assert got[1] == want[1] == 20.0
    t = ({"u": onp.array([1.0, -1.0]), "v": onp.array([0.5, 0.0, 2.0])}, 0.25)
    assert (fgrad.jvp(_tree_loss(tree_fn), (D, 2.0), t)
            == fgrad.jvp(_tree_loss(_tree_reference), (D, 2.0), t))


def test_none_cotangents_inside_a_pytree_are_zeros():
    @fgrad.custom_vjp
    def f(p):
        return p["w"] * p["b"][0]

    f.defvjp(lambda p: (f(p), p), lambda p, g: ({"w": g * p["b"][0], "b": (None, None)},))
    p = {"w": 2.0, "b": (3.0, 4.0)}
    assert fgrad.grad(f)(p) == {"w": 3.0, "b": (0.0, 0.0)}


def test_none_leaves_and_empty_arrays_pass_through():
    @fgrad.custom_vjp
    def f(x, nothing, empty):
        return x * 2.0, None, empty * 2.0

    f.defvjp(lambda x, n, e: (f(x, n, e), None), lambda r, g: (g[0] * 2.0, None, g[2] * 2.0))
    out, f_vjp = fgrad.vjp(f, 1.5, None, onp.zeros((0, 2)))
    assert out[0] == 3.0 and out[1] is None and out[2].shape == (0, 2)
    ct = f_vjp((1.0, None, onp.zeros((0, 2))))
    assert ct[0] == 2.0 and ct[1] is None and ct[2].shape == (0, 2)


# --- nondiff_argnums, keyword arguments, methods ------------------------------------------

@functools.partial(fgrad.custom_vjp, nondiff_argnums=(0,))
def apply_to(fn, x):
    return fn(x)


apply_to.defvjp(lambda fn, x: (apply_to(fn, x), x), lambda fn, x, g: (g,))  # the rule: 1


@functools.partial(fgrad.custom_jvp, nondiff_argnums=(1,))
def power(x, n):
    return x ** n


@power.defjvp
def _power_jvp(n, primals, tangents):
    (x,), (t,) = primals, tangents
    return power(x, n), n * x ** (n - 1) * t


def test_nondiff_argnums_come_first_in_the_rules_and_get_no_cotangent():
    assert fgrad.grad(lambda x: apply_to(np.sin, x))(1.0) == 1.0  # the rule says 1
    assert fgrad.jvp(lambda x: apply_to(np.sin, x), (1.0,), (3.0,))[1] == 3.0
    assert fgrad.grad(power)(2.0, 3) == 12.0
    assert fgrad.jvp(lambda x: power(x, 3), (2.0,), (1.0,))[1] == 12.0
    assert fgrad.hessian(lambda x: power(x, 3))(2.0) == 12.0


@pytest.mark.parametrize("f, kind", [(apply_to, "custom_vjp"), (power, "custom_jvp")])
def test_a_traced_value_in_nondiff_argnums_is_a_type_error(f, kind):
    call = (lambda x: f(x, 1.0)) if f is apply_to else (lambda x: f(1.0, x))
    pos = 0 if f is apply_to else 1
    with pytest.raises(TypeError, match=f"{kind} function {f.__name__}: argument {pos} is in "
                                        "nondiff_argnums but holds a traced value"):
        fgrad.grad(call)(2.0)


def test_keyword_arguments_are_bound_to_positions_with_defaults_filled_in():
    seen = []

    @fgrad.custom_vjp
    def scaled(x, scale=2.0):
        return x * scale

    def bwd(scale, g):
        seen.append(scale)
        return g * scale, None  # a cotangent slot for the defaulted argument too

    scaled.defvjp(lambda x, scale: (scaled(x, scale), scale), bwd)
    assert fgrad.grad(scaled)(1.0) == 2.0
    assert fgrad.grad(lambda x: scaled(x, scale=3.0))(1.0) == 3.0
    assert fgrad.grad(lambda x: scaled(scale=4.0, x=x))(1.0) == 4.0
    assert seen == [2.0, 3.0, 4.0]


def test_keyword_only_arguments_are_refused():
    @fgrad.custom_vjp
    def f(x, *, k):
        return x * k

    f.defvjp(lambda x: (x, None), lambda r, g: (g,))
    with pytest.raises(TypeError, match=r"custom_vjp function f: keyword-only arguments \(k\) "
                                        "are not supported"):
        fgrad.grad(lambda x: f(x, k=2.0))(1.0)


def test_a_decorated_method_binds_its_instance():
    class Scaler:
        def __init__(self, s):
            self.s = s

        @fgrad.custom_jvp
        def apply(self, x):
            return x * self.s

    # the instance is argument 0, an object leaf with no tangent (its rule: None)
    Scaler.apply.defjvps(None, lambda t, ans, self, x: t * self.s)
    assert fgrad.grad(lambda x: Scaler(3.0).apply(x))(1.0) == 3.0
    assert fgrad.jvp(lambda x: Scaler(3.0).apply(x), (1.0,), (2.0,))[1] == 6.0


# --- custom_jvp specifics -----------------------------------------------------------------

def test_defjvps_sums_one_rule_per_argument():
    @fgrad.custom_jvp
    def f(x, y):
        return x * y

    f.defjvps(lambda tx, ans, x, y: tx * y, lambda ty, ans, x, y: ty * x)
    assert fgrad.grad(f, argnums=(0, 1))(2.0, 5.0) == (5.0, 2.0)
    assert fgrad.jvp(f, (2.0, 5.0), (1.0, 10.0))[1] == 25.0
    assert check_grads(f, (onp.array([0.5, 2.0]), onp.array([-1.0, 3.0])), order=2) < 1e-6


def test_custom_jvp_rule_tangents_for_undifferentiated_arguments_are_zeros():
    seen = []

    @fgrad.custom_jvp
    def f(x, y):
        return x * y

    @f.defjvp
    def f_jvp(primals, tangents):
        seen.append(tangents[1])
        (x, y), (tx, ty) = primals, tangents
        return f(x, y), tx * y + ty * x

    assert fgrad.jvp(lambda x: f(x, 4.0), (2.0,), (1.0,))[1] == 4.0
    assert seen[-1] == 0.0


def test_custom_jvp_pytree_output_and_float32():
    @fgrad.custom_jvp
    def polar(x):
        return {"r": np.sqrt(np.sum(x ** 2)), "u": x / np.sqrt(np.sum(x ** 2))}

    @polar.defjvp
    def polar_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        out = polar(x)
        dr = np.sum(out["u"] * t)
        return out, {"r": dr, "u": (t - out["u"] * dr) / out["r"]}

    x = onp.array([3.0, 4.0])
    plain = lambda x: {"r": np.sqrt(np.sum(x ** 2)), "u": x / np.sqrt(np.sum(x ** 2))}  # noqa
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        got, want = jac(polar)(x), jac(plain)(x)
        onp.testing.assert_allclose(got["r"], want["r"], rtol=1e-15)
        onp.testing.assert_allclose(got["u"], want["u"], rtol=1e-14, atol=1e-16)
    x32 = x.astype(onp.float32)
    assert fgrad.grad(lambda x: polar(x)["r"])(x32).dtype == onp.float32
    assert fgrad.jvp(polar, (x32,), (x32,))[1]["u"].dtype == onp.float32


def test_a_jvp_rule_that_is_not_linear_is_refused_in_reverse_mode():
    @fgrad.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(p[0]), 2.0 * t[0] + p[0]))  # the primal leaked into the tangent
    with pytest.raises(ValueError, match=r"custom_jvp function f: reverse mode \(grad, vjp, "
                                         r"jacrev\) transposes the jvp rule, which must "
                                         "therefore be linear in the tangents, but for zero "
                                         "tangents its tangent_out is 3.0 rather than zero"):
        fgrad.grad(f)(3.0)


@pytest.mark.parametrize("tangent_out, error, match", [
    (lambda x, t: (t, t), TypeError, r"the jvp rule's tangent_out has the structure \(\*, \*,\)"
                                     r", but the function's output has \*"),
    (lambda x, t: np.stack([t, t]), ValueError, r"the jvp rule's tangent_out has shape \(2,\) "
                                                r"at output leaf 0, where the function's output "
                                                r"has shape \(\)"),
])
def test_a_jvp_rule_with_the_wrong_tangent_structure_or_shape_is_refused(tangent_out, error,
                                                                         match):
    @fgrad.custom_jvp
    def f(x):
        return x * 2.0

    f.defjvp(lambda p, t: (f(p[0]), tangent_out(p[0], t[0])))
    for run in (lambda: fgrad.jvp(f, (1.0,), (1.0,)), lambda: fgrad.grad(f)(1.0)):
        with pytest.raises(error, match="custom_jvp function f: " + match):
            run()


def test_a_jvp_rule_not_returning_a_pair_is_refused():
    @fgrad.custom_jvp
    def f(x):
        return x

    f.defjvp(lambda p, t: t[0])
    with pytest.raises(TypeError, match=r"custom_jvp function f: the jvp rule must return a "
                                        r"pair \(output, tangent_out\), but it returned a "
                                        "float"):
        fgrad.jvp(f, (1.0,), (1.0,))


# --- custom_vjp misuse --------------------------------------------------------------------

def _with_bwd(bwd, fwd=None):
    @fgrad.custom_vjp
    def f(x, y):
        return x * y

    f.defvjp(fwd or (lambda x, y: (f(x, y), (x, y))), bwd)
    return f


@pytest.mark.parametrize("bwd, error, match", [
    (lambda r, g: g * r[1], TypeError,
     r"bwd must return a tuple with one cotangent per differentiable argument \(2: x, y\), but "
     r"it returned a float64\. Return \(g,\) rather than g"),
    (lambda r, g: (g * r[1],), TypeError,
     r"bwd must return a tuple with one cotangent per differentiable argument \(2: x, y\), but "
     "it returned a tuple of length 1"),
    (lambda r, g: (g * r[1], onp.ones(3)), ValueError,
     r"bwd returned a cotangent of shape \(3,\) for argument 1, whose shape is \(\)"),
    (lambda r, g: (g * r[1], {"y": g}), TypeError,
     r"bwd's cotangent for argument 1 is a dict of length 1, but the argument's structure "
     r"is \*"),
])
def test_a_bwd_with_the_wrong_output_is_refused_by_name(bwd, error, match):
    with pytest.raises(error, match="custom_vjp function f: " + match):
        fgrad.grad(_with_bwd(bwd))(1.0, 2.0)


def test_a_fwd_not_returning_a_pair_is_refused():
    f = _with_bwd(lambda r, g: (g, g), fwd=lambda x, y: x * y)
    with pytest.raises(TypeError, match=r"custom_vjp function f: fwd must return a pair "
                                        r"\(output, residuals\), but it returned a float"):
        fgrad.grad(f)(1.0, 2.0)


def test_a_bwd_that_is_not_linear_is_refused_in_forward_mode():
    f = _with_bwd(lambda r, g: (g * r[1] + 1.0, None))
    assert fgrad.grad(f)(1.0, 2.0) == 3.0  # reverse mode uses bwd as written
    with pytest.raises(ValueError, match=r"custom_vjp function f: forward mode \(jvp, jacfwd, "
                                         r"hessian\) transposes bwd, which must therefore be "
                                         "linear in its cotangent g, but bwd.res, 0. gives "
                                         "1.0 rather than zero for argument 0"):
        fgrad.jvp(f, (1.0, 2.0), (1.0, 0.0))


def test_a_bwd_that_concretizes_g_says_why_g_is_traced_in_forward_mode():
    f = _with_bwd(lambda r, g: (2.0 * float(g), None))
    assert fgrad.grad(f)(1.0, 2.0) == 2.0
    with pytest.raises(fgrad.ConcretizationError,
                       match=r"custom_vjp function f: forward mode \(jvp, jacfwd, hessian\) runs "
                             "bwd on a traced cotangent g to transpose it, so bwd must handle g "
                             r"with fgrad.numpy: float\(\) of a traced value"):
        fgrad.jacfwd(f)(1.0, 2.0)


@pytest.mark.parametrize("deco, msg", [(fgrad.custom_vjp, r"call \.defvjp\(fwd, bwd\) first"),
                                       (fgrad.custom_jvp, "decorate one with @f.defjvp first")])
def test_differentiating_before_the_rule_is_given_is_a_type_error(deco, msg):
    @deco
    def f(x):
        return x * 2.0

    assert f(1.5) == 3.0  # plain calls need no rule
    with pytest.raises(TypeError, match=f"{deco.kind} function f is being differentiated but "
                                        f"has no rule: {msg}"):
        fgrad.grad(f)(1.5)


@pytest.mark.parametrize("deco", [fgrad.custom_vjp, fgrad.custom_jvp])
def test_closing_over_a_traced_value_is_refused(deco):
    def make(a):
        @deco
        def f(x):
            return a * x

        if deco is fgrad.custom_vjp:
            f.defvjp(lambda x: (f(x), None), lambda r, g: (g,))
        else:
            f.defjvps(lambda t, ans, x: t)
        return f

    match = (f"{deco.kind} function f closed over a traced value \\(from <grad trace #\\d+>\\) "
             "that its output depends on. Its derivative rule only covers the function's own "
             r"arguments, so that dependence would be lost. Pass it as an argument instead")
    with pytest.raises(fgrad.ClosedOverTracerError, match=match):
        fgrad.grad(lambda a: make(a)(2.0))(3.0)          # the argument is not traced
    with pytest.raises(fgrad.ClosedOverTracerError, match=match):
        fgrad.grad(lambda a: make(a)(a))(3.0)            # it is, by the same transform
    with pytest.raises(fgrad.ClosedOverTracerError, match=match):
        fgrad.grad(lambda a: fgrad.grad(make(a))(2.0))(3.0)  # by an inner one
    # a closed-over value the output does not depend on is fine
    assert fgrad.grad(lambda a: make(np.sign(a))(a))(3.0) == 1.0


def test_a_closed_over_plain_array_is_a_constant():
    w = onp.array([1.0, 2.0])

    @fgrad.custom_vjp
    def f(x):
        return np.sum(w * x)

    f.defvjp(lambda x: (f(x), None), lambda r, g: (g * w,))
    onp.testing.assert_array_equal(fgrad.grad(f)(onp.ones(2)), w)
    onp.testing.assert_array_equal(fgrad.jvp(f, (onp.ones(2),), (onp.ones(2),))[1], 3.0)


def test_nondiff_argnums_must_be_non_negative_ints():
    with pytest.raises(ValueError, match="custom_vjp: nondiff_argnums must be non-negative "
                                         r"ints, got \(-1,\)"):
        fgrad.custom_vjp(lambda x: x, nondiff_argnums=(-1,))


# --- complex values and threads -----------------------------------------------------------

def test_complex_custom_vjp_in_both_modes():
    @fgrad.custom_vjp
    def sq(z):
        return z * z

    sq.defvjp(lambda z: (sq(z), z), lambda z, g: (2 * z * g,))
    z = onp.array([1.0 + 2.0j, -0.5j])
    assert check_grads(sq, (z,), order=2) < 1e-6
    onp.testing.assert_allclose(fgrad.jacfwd(sq, holomorphic=True)(z), onp.diag(2 * z), rtol=1e-15)
    onp.testing.assert_allclose(fgrad.jacrev(sq, holomorphic=True)(z), onp.diag(2 * z), rtol=1e-15)


def test_custom_functions_in_two_threads_give_independent_results(in_threads):
    errors = []

    def work(f, xs, want):
        for _ in range(40):
            for x in xs:
                got = (fgrad.grad(f)(x), fgrad.jvp(f, (x,), (1.0,))[1])
                if abs(got[0] - want(x)) > 1e-12 or abs(got[1] - want(x)) > 1e-12:
                    errors.append((x, got))

    errors += in_threads(work, [(log1pexp, [-1.0, 0.5, 2.0], sigmoid),
                                (lambda x: sin_times(x, 2.0), [0.1, 0.9],
                                 lambda x: 2 * onp.cos(x))])
    assert errors == []


def test_under_jvp_a_custom_jvp_function_runs_once_at_any_nesting():
    # (the rule gives the output, so jvp runs the function once, where fgrad learns its
    # output's structure, and not again beside the rule at any nesting: under vmap a second
    # primal call would run once per example)
    calls = []

    @fgrad.custom_jvp
    def f(x):
        calls.append(1)
        return np.sin(x)

    f.defjvp(lambda p, t: (np.sin(p[0]), np.cos(p[0]) * t[0]))
    for run in (lambda: fgrad.jvp(f, (0.5,), (1.0,)),
                lambda: fgrad.grad(lambda x: fgrad.jvp(f, (x,), (1.0,))[1])(0.5),
                lambda: fgrad.vmap(lambda x: fgrad.jvp(f, (x,), (1.0,))[1])(onp.ones(3))):
        calls.clear()
        run()
        assert calls == [1]


def test_custom_jvp_rules_output_is_what_jvp_returns_as_in_jax():
    @fgrad.custom_jvp
    def f(x):
        return np.sin(x)

    f.defjvp(lambda p, t: (np.sin(p[0]) + 1.0, np.cos(p[0]) * t[0]))  # (an output of its own)
    out, tangent = fgrad.jvp(f, (0.5,), (2.0,))
    assert out == math.sin(0.5) + 1.0 and tangent == 2 * math.cos(0.5)
    assert f(0.5) == math.sin(0.5)  # plain: the function
    assert fgrad.grad(f)(0.5) == math.cos(0.5)  # recorded transforms: the rule's tangent only
    # nested: jvp of jvp sees the rule's output at both levels
    inner = fgrad.jvp(lambda x: fgrad.jvp(f, (x,), (1.0,))[0], (0.5,), (1.0,))
    assert inner[0] == math.sin(0.5) + 1.0
