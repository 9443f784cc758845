"""A primitive with a VJP rule only (as libraries written for autograd define them) works in
forward mode too: its JVP is the VJP rule transposed (fgrad.traces.rules), so jvp, jacfwd,
linearize and hessian work on it, to every order."""
import re

import numpy as onp
import pytest

import fgrad
import fgrad.autograd
import fgrad.numpy as np
from fgrad.tools.check import check_primitive
from fgrad.testing import check_grads

X = onp.array([-0.7, 0.3, 1.1])
T = onp.array([0.5, -1.0, 2.0])


def safe_exp():
    """lifelines' ``safe_exp``: exp with its argument clipped, and a VJP rule only."""
    p = fgrad.primitive(lambda x: onp.exp(onp.clip(x, -700.0, 700.0)), name="my_safe_exp")
    fgrad.defvjp(p, lambda g, ans, x: g * ans)
    return p


def scaled_power():
    """``x ** a``, two arguments, each with a VJP rule only."""
    p = fgrad.primitive(lambda x, a: x ** a, name="my_power")
    fgrad.defvjp(p, lambda g, ans, x, a: g * a * x ** (a - 1.0),
                 lambda g, ans, x, a: np.sum(g * ans * np.log(x)))
    return p


def test_jvp_and_jacfwd_of_a_vjp_only_primitive_are_exact():
    e = safe_exp()
    out, tan = fgrad.jvp(e, (X,), (T,))
    onp.testing.assert_array_equal(out, onp.exp(X))
    onp.testing.assert_allclose(tan, onp.exp(X) * T, rtol=1e-15)
    onp.testing.assert_allclose(fgrad.jacfwd(e)(X), onp.diag(onp.exp(X)), rtol=1e-15)
    lin_out, push = fgrad.linearize(lambda x: np.sin(e(x)), X)
    onp.testing.assert_allclose(push(T), onp.cos(onp.exp(X)) * onp.exp(X) * T, rtol=1e-14)


def test_hessian_through_a_vjp_only_primitive_matches_the_closed_form():
    e = safe_exp()

    def f(x):
        return np.sum(e(2.0 * x) * x)  # d2/dx2 of x e^{2x}: (4 + 4x) e^{2x}

    onp.testing.assert_allclose(fgrad.hessian(f)(X), onp.diag((4 + 4 * X) * onp.exp(2 * X)),
                                rtol=1e-13)
    # forward over reverse over forward: the third derivative, (12 + 8x) e^{2x}
    third = fgrad.jvp(lambda x: fgrad.jvp(fgrad.grad(f), (x,), (T,))[1], (X,), (T,))[1]
    onp.testing.assert_allclose(third, (12 + 8 * X) * onp.exp(2 * X) * T * T, rtol=1e-13)


@pytest.mark.parametrize("order", [1, 2])
def test_a_vjp_only_primitive_against_finite_differences(order):
    e, pw = safe_exp(), scaled_power()

    def f(x, a):
        return np.tanh(pw(e(x) + 0.5, a)) * x

    check_grads(f, (X, onp.array(1.7)), order=order, modes=("fwd", "rev"))
    check_grads(lambda x: fgrad.jvp(fgrad.grad(lambda y: np.sum(f(y, 1.3))), (x,), (T,))[1],
                (X,), order=1)


def test_every_transform_through_a_vjp_only_primitive():
    e, pw = safe_exp(), scaled_power()

    def f(x):
        return np.sum(pw(e(x) + 1.0, 2.5))

    def g_np(x):  # the same with fgrad's own rules
        return np.sum((np.exp(x) + 1.0) ** 2.5)

    want = fgrad.jacrev(fgrad.jacrev(g_np))(X)
    onp.testing.assert_allclose(fgrad.hessian(f)(X), want, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.jit(fgrad.hessian(f))(X), want, rtol=1e-13)
    onp.testing.assert_allclose(fgrad.hessian(fgrad.jit(f))(X), want, rtol=1e-13)
    xs = onp.stack([X, 0.5 * X])
    onp.testing.assert_allclose(fgrad.vmap(fgrad.hessian(f))(xs),
                                onp.stack([want, fgrad.hessian(g_np)(0.5 * X)]), rtol=1e-13)


def test_a_complex_vjp_only_primitive():
    sq = fgrad.primitive(lambda z: z * z, name="my_complex_square")
    fgrad.defvjp(sq, lambda g, ans, z: 2.0 * g * z)  # JAX's convention: no conjugate
    z = onp.array([1.0 + 2.0j, -0.5 + 0.1j])
    t = onp.array([0.3 - 1.0j, 2.0 + 0.5j])
    onp.testing.assert_allclose(fgrad.jvp(sq, (z,), (t,))[1], 2 * z * t, rtol=1e-15)
    check_grads(lambda z: np.sin(sq(z)), (z,), order=2)
    # a real argument, complex output: the real part of the cotangent is its derivative
    phase = fgrad.primitive(lambda x: onp.exp(1j * x), name="my_phase")
    fgrad.defvjp(phase, lambda g, ans, x: 1j * ans * g)
    onp.testing.assert_allclose(fgrad.jvp(phase, (X,), (T,))[1], 1j * onp.exp(1j * X) * T,
                                rtol=1e-15)
    check_grads(lambda x: np.real(phase(x) * (1 + 2j)), (X,), order=2)


def test_autograd_style_primitives_as_lifelines_defines_them():
    safe = fgrad.autograd.primitive(lambda x: onp.exp(onp.clip(x, -700.0, 700.0)))
    fgrad.autograd.defvjp(safe, lambda ans, x: lambda g: g * ans)

    def loglik(beta):
        return np.sum(safe(beta * X) - 0.5 * beta ** 2)

    h = fgrad.autograd.hessian(loglik)(onp.array(0.4))
    onp.testing.assert_allclose(h, onp.sum(X * X * onp.exp(0.4 * X)) - 3.0, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.hessian(loglik)(0.4), h, rtol=1e-15)


def test_a_jvp_rule_where_given_is_used_instead():
    p = fgrad.primitive(onp.sin, name="my_sin_with_both")
    # right for reverse mode, but not linear in g: transposing it would be refused
    fgrad.defvjp(p, lambda g, ans, x: g * np.cos(x) + 0.0 * g * g)
    fgrad.defjvp(p, lambda t, ans, x: t * np.cos(x))
    onp.testing.assert_allclose(fgrad.jvp(p, (X,), (T,))[1], onp.cos(X) * T, rtol=1e-15)
    onp.testing.assert_allclose(fgrad.hessian(lambda x: np.sum(p(x)))(X), onp.diag(-onp.sin(X)),
                                rtol=1e-15)


def test_replacing_the_vjp_rule_replaces_the_derived_jvp():
    p = fgrad.primitive(lambda x: 3.0 * x, name="my_triple")
    fgrad.defvjp(p, lambda g, ans, x: 2.0 * g)  # wrong
    assert fgrad.jvp(p, (1.0,), (1.0,))[1] == 2.0
    fgrad.defvjp(p, lambda g, ans, x: 3.0 * g)
    assert fgrad.jvp(p, (1.0,), (1.0,))[1] == 3.0


def test_check_marks_derived_jvp_rules(capsys):
    from fgrad.tools.check import main
    p = fgrad.primitive(onp.sinh, name="my_checked_sinh", spec=fgrad.Spec([(((3,),), {})]))
    fgrad.defvjp(p, lambda g, ans, x: g * np.cosh(x))
    vjp_ok, jvp_ok, _, msg = check_primitive(p, onp.random.default_rng(0))
    assert vjp_ok and jvp_ok, msg
    assert main(["check", "my_checked_sinh"]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^my_checked_sinh +ok +ok\(T\) ", out, re.M), out
    assert "ok(T): the JVP rule is derived from the VJP rule by transposing it (1 entry; " \
        "forward mode costs a transpose per call there)" in out


WHERE = ("primitive {name}: forward mode (jvp, jacfwd, hessian) transposes its VJP rule for "
         "argument 0, since it has no JVP rule; ")


@pytest.mark.parametrize("rule, why", [
    (lambda g, ans, x: g * g * x,
     r"that rule must be linear in its cotangent g, but for two random cotangents "
     r"rule\(g1 - 2 g2\) differs from rule\(g1\) - 2 rule\(g2\) by [0-9.e+-]+ relative to "
     r"their size"),
    (lambda g, ans, x: np.abs(g) * x, r"that rule must be linear in its cotangent g"),
    (lambda g, ans, x: np.clip(g, -0.1, 0.1), r"that rule must be linear in its cotangent g"),
    (lambda g, ans, x: g * x + 1.0,
     r"that rule must be linear in its cotangent g, but for two random cotangents"),
    (lambda g, ans, x: np.sum(g * x),
     r"that rule returns shape \(\) for an argument of shape \(3,\): a VJP rule returns the "
     r"cotangent of its argument, shaped like it"),
])
def test_a_vjp_rule_that_is_not_linear_in_the_cotangent_is_refused(rule, why):
    p = fgrad.primitive(lambda x: x * x, name="my_bad_square")
    fgrad.defvjp(p, rule)
    message = re.escape(WHERE.format(name="my_bad_square")) + why
    with pytest.raises(ValueError, match=message):
        fgrad.jvp(p, (X,), (T,))
    if "shape" not in why:  # (reverse mode, which hessian runs first, refuses that one itself)
        with pytest.raises(ValueError, match=message):
            fgrad.hessian(lambda x: np.sum(p(x)))(X)


def test_a_rule_affine_in_g_is_refused_at_the_transpose_too():
    # the probe runs on the first call only; the transpose checks each call at g = 0
    p = fgrad.primitive(lambda x: x * x, name="my_shifted")
    fgrad.defvjp(p, lambda g, ans, x: 2.0 * g * x + (x > 5.0))
    fgrad.jvp(p, (X,), (T,))  # linear where x <= 5: probed and accepted
    with pytest.raises(ValueError, match=re.escape(
            "that rule must be linear in its cotangent g, but for g = 0 it gives "
            "[0.0, 1.0] rather than zero: give it a JVP rule with "
            "fgrad.defjvp(my_shifted, ..., argnums=(0,))")):
        fgrad.jvp(p, (onp.array([1.0, 6.0]),), (onp.ones(2),))


def test_a_rule_written_with_plain_numpy_on_g_says_what_to_do():
    p = fgrad.primitive(onp.exp, name="my_numpy_rule_exp")
    fgrad.defvjp(p, lambda g, ans, x: onp.multiply(onp.asarray(g), ans))
    assert fgrad.grad(lambda x: np.sum(p(x)))(X) == pytest.approx(onp.exp(X))
    with pytest.raises(fgrad.ConcretizationError, match=re.escape(
            "primitive my_numpy_rule_exp: forward mode (jvp, jacfwd, hessian) transposes its "
            "VJP rule for argument 0, since it has no JVP rule, running it on a traced "
            "cotangent g, so the rule must handle g with fgrad.numpy, or give it a JVP rule "
            "with fgrad.defjvp(my_numpy_rule_exp, ..., argnums=(0,)): ")):
        fgrad.jvp(p, (X,), (T,))


def test_autograd_gamma_style_primitive_of_a_scipy_ufunc():
    """autograd-gamma wraps scipy's ufuncs (which have no ``__module__``) with autograd's
    ``@primitive`` and gives them VJP rules only: lifelines' generalized gamma model's
    Hessian goes through them."""
    sc = pytest.importorskip("scipy.special", reason="scipy is an optional extra")
    erf = fgrad.autograd.primitive(sc.erf)
    assert erf.name == "numpy.ufunc.erf"
    fgrad.autograd.defvjp(erf, lambda ans, x: lambda g: g * 2.0 / onp.sqrt(onp.pi) *
                          np.exp(-x * x))
    # d2/dx2 erf(x) = -4x / sqrt(pi) e^{-x^2}
    onp.testing.assert_allclose(fgrad.hessian(lambda x: np.sum(erf(x)))(X),
                                onp.diag(-4 * X / onp.sqrt(onp.pi) * onp.exp(-X * X)),
                                rtol=1e-14)


def test_a_vjp_only_rule_that_is_nan_at_a_point_passes_the_nan_on():
    # (issue 32, item 5: autograd-gamma's rules are inf times a zero cotangent at some
    # points; the transpose's check for linearity looks at finite values only)
    import warnings
    from fgrad.autograd import defvjp, primitive

    @primitive
    def xlogx(x):
        return onp.where(x > 0, x * onp.log(onp.where(x > 0, x, 1.0)), 0.0)

    defvjp(xlogx, lambda ans, x: lambda g: g * (np.log(x) + 1.0))
    f = lambda x: np.sum(xlogx(x))
    onp.testing.assert_allclose(fgrad.hessian(f)(onp.array([0.5, 2.0])), onp.diag([2.0, 0.5]))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert fgrad.hessian(f)(0.0) == onp.inf  # the derivative of log(x) + 1 at 0
        assert fgrad.jvp(f, (0.0,), (1.0,))[1] == -onp.inf
