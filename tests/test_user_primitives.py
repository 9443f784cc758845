"""Users add primitives to the same table the built-ins use, and every transform uses them."""
import re

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.tools.check import check_primitive
from fgrad.testing import check_grads

X = onp.array([-1.0, 0.3, 2.0])
Y = onp.array([0.5, -0.7, 1.0])


def make_logaddexp():
    # the README's example, verbatim
    logaddexp = fgrad.primitive(onp.logaddexp, name="my_logaddexp")
    fgrad.defvjp(logaddexp,
                 lambda g, ans, x, y: fgrad.unbroadcast(g * np.exp(x - ans), np.shape(x)),
                 lambda g, ans, x, y: fgrad.unbroadcast(g * np.exp(y - ans), np.shape(y)))
    fgrad.defjvp(logaddexp,
                 lambda t, ans, x, y: t * np.exp(x - ans),
                 lambda t, ans, x, y: t * np.exp(y - ans))
    return logaddexp


def test_user_primitive_is_in_the_table_and_runs_numpy_on_plain_values():
    lae = make_logaddexp()
    assert fgrad.PRIMITIVES["my_logaddexp"] is lae
    onp.testing.assert_array_equal(lae(X, Y), onp.logaddexp(X, Y))


def test_user_primitive_derivatives_in_every_mode_to_second_order():
    lae = make_logaddexp()
    gx, gy = fgrad.grad(lambda x, y: np.sum(lae(x, y)), argnums=(0, 1))(X, Y)
    onp.testing.assert_allclose(gx, 1 / (1 + onp.exp(Y - X)), rtol=1e-14)
    onp.testing.assert_allclose(gy, 1 / (1 + onp.exp(X - Y)), rtol=1e-14)
    check_grads(lae, (X, Y), order=2, modes=("fwd", "rev"))


def test_user_primitive_with_a_spec_is_checked_like_a_builtin():
    lae = make_logaddexp()
    lae.spec = fgrad.Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {})])
    vjp_ok, jvp_ok, worst, msg = check_primitive(lae, onp.random.default_rng(0))
    assert vjp_ok and jvp_ok and worst < 1e-6, msg


def test_a_rule_that_forgets_broadcasting_is_caught_by_the_check():
    mul = fgrad.primitive(onp.multiply, name="my_mul",
                          spec=fgrad.Spec([(((3,), (3,)), {}), (((2, 3), (3,)), {})]))
    fgrad.defvjp(mul, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    fgrad.defjvp(mul, lambda t, ans, x, y: t * y, lambda t, ans, x, y: x * t)
    vjp_ok, jvp_ok, _, msg = check_primitive(mul, onp.random.default_rng(0))
    assert jvp_ok and not vjp_ok, msg
    # and in use, the wrongly shaped gradient is an error rather than a silent result
    with pytest.raises(ValueError, match=r"cotangent of shape \(2, 3\) for an input of "
                                         r"shape \(3,\).*fgrad.unbroadcast"):
        fgrad.grad(lambda y: np.sum(mul(onp.ones((2, 3)), y)))(Y)


def test_a_wrong_user_rule_is_caught_by_the_check():
    bad = fgrad.primitive(onp.sin, name="my_bad_sin", spec=fgrad.Spec([(((3,),), {})]))
    fgrad.defvjp(bad, lambda g, ans, x: g * np.cos(x))
    fgrad.defjvp(bad, lambda t, ans, x: t * np.cos(x) * 1.001)  # 0.1 % off
    vjp_ok, jvp_ok, _, msg = check_primitive(bad, onp.random.default_rng(0))
    assert vjp_ok and not jvp_ok
    assert "disagrees with finite differences" in msg


def test_deflinear_gives_the_jvp_from_the_transpose():
    def cumsum_impl(x):
        return onp.cumsum(x)

    cs = fgrad.primitive(cumsum_impl, name="my_cumsum")
    # transpose of a running sum: reversed running sum of the reversed cotangent
    fgrad.deflinear(cs, lambda g, ans, x: cs(g[::-1])[::-1])
    onp.testing.assert_array_equal(fgrad.jvp(cs, (X,), (Y,))[1], onp.cumsum(Y))
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.sum(cs(x) * Y))(X),
                                   onp.cumsum(Y[::-1])[::-1])
    check_grads(cs, (X,), order=2)


def test_missing_rule_for_a_user_primitive_names_it():
    half = fgrad.primitive(lambda x: x / 2, name="my_half")
    fgrad.defjvp(half, lambda t, ans, x: t / 2)
    assert fgrad.jvp(half, (1.0,), (1.0,))[1] == 0.5
    with pytest.raises(fgrad.NoDerivativeRuleError, match=re.escape(
            "primitive my_half has no VJP rule for argument 0, which is being differentiated. "
            "Add one with fgrad.defvjp(my_half, lambda g, ans, *args: ..., argnums=(0,)), or "
            "use forward mode (jvp, jacfwd).")):
        fgrad.grad(half)(1.0)
    bare = fgrad.primitive(lambda x: x / 2, name="my_bare_half")
    with pytest.raises(fgrad.NoDerivativeRuleError, match=re.escape(
            "primitive my_bare_half has no JVP rule for argument 0, which is being "
            "differentiated, nor a VJP rule to transpose in its place. Add one with "
            "fgrad.defjvp(my_bare_half, lambda t, ans, *args: ..., argnums=(0,)) or "
            "fgrad.defvjp(my_bare_half, lambda g, ans, *args: ..., argnums=(0,)).")):
        fgrad.jvp(bare, (1.0,), (1.0,))


def test_none_rule_means_zero_derivative():
    scaled = fgrad.primitive(lambda x, s: x * s, name="my_scaled")
    fgrad.defvjp(scaled, lambda g, ans, x, s: g * s, None)
    fgrad.defjvp(scaled, lambda t, ans, x, s: t * s, None)
    assert fgrad.grad(scaled, argnums=1)(3.0, 2.0) == 0.0
    assert fgrad.grad(scaled, argnums=0)(3.0, 2.0) == 2.0


def test_registrations_do_not_leak_between_tests():
    assert "my_logaddexp" not in fgrad.PRIMITIVES


def test_autograds_curried_vjp_rule_is_refused_when_registered_with_the_expected_form():
    cube = fgrad.primitive(lambda x: x ** 3, name="my_curried_cube")
    with pytest.raises(TypeError, match=r"defvjp\(my_curried_cube\): the rule for argument 0 "
                                        r"takes 2 positional arguments, autograd's curried "
                                        r"form .*lambda g, ans, \*args: \.\.\. \(3 arguments"):
        fgrad.defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    fgrad.defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)  # fgrad's form
    assert float(fgrad.grad(cube)(2.0)) == 12.0
    # a rule taking *args, or a primitive of numpy's (no countable signature), is not checked
    fgrad.defvjp(cube, lambda g, ans, *args: g * 3 * args[0] ** 2)
    sq = fgrad.primitive(onp.square, name="my_square_ufunc")
    fgrad.defvjp(sq, lambda g, ans, x: 2 * g * x)
    assert float(fgrad.grad(sq)(3.0)) == 6.0


def make_sincos(with_jvp):
    """A primitive returning two arrays, its rules written with fgrad.numpy."""
    sincos = fgrad.primitive(lambda x: (onp.sin(x), onp.cos(x)),
                             name=f"my_sincos_{with_jvp}")
    fgrad.defvjp(sincos, lambda g, ans, x: g[0] * ans[1] - g[1] * ans[0])
    if with_jvp:
        fgrad.defjvp(sincos, lambda t, ans, x: (t * ans[1], None if t is None else -t * ans[0]))
    return sincos


@pytest.mark.parametrize("with_jvp", [True, False], ids=["jvp rule", "vjp rule transposed"])
def test_a_primitive_returning_a_tuple_under_every_transform(with_jvp):
    sincos = make_sincos(with_jvp)
    s, c = sincos(X)  # plain values: the function's own tuple
    onp.testing.assert_array_equal(s, onp.sin(X))
    f = lambda x: np.sum(sincos(x)[0] * 3.0 + sincos(x)[1] ** 2)
    df = lambda x: 3.0 * onp.cos(x) - 2 * onp.cos(x) * onp.sin(x)
    d2f = lambda x: -3.0 * onp.sin(x) - 2 * onp.cos(2 * x)
    onp.testing.assert_allclose(fgrad.grad(f)(X), df(X), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jvp(f, (X,), (Y,))[1], onp.dot(df(X), Y), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.hessian(f)(X), onp.diag(d2f(X)), rtol=1e-13, atol=1e-15)
    onp.testing.assert_allclose(fgrad.jit(fgrad.grad(f))(X), df(X), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(onp.stack([X, Y])),
                                onp.stack([df(X), df(Y)]), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacfwd(lambda x: sincos(x)[1])(X), onp.diag(-onp.sin(X)),
                                rtol=1e-14)
    # jet expands the JVP rule: d^k/dt^k sin(x + t) at 0 is sin's k-th derivative
    _, (s1, s2) = fgrad.jet(lambda x: sincos(x)[0], (X,), ((onp.ones(3), onp.zeros(3)),))
    onp.testing.assert_allclose(s1, onp.cos(X), rtol=1e-14)
    onp.testing.assert_allclose(s2, -onp.sin(X), rtol=1e-14)
    check_grads(f, (X,), order=2, modes=("fwd", "rev"))


def test_a_tuple_primitive_keeps_numpys_result_type_and_complex_outputs():
    # numpy.linalg.eig as autograd users wrap it (grcwa): a namedtuple of complex results
    eig = fgrad.primitive(onp.linalg.eig, name="my_eig")
    seen = []

    def eig_vjp(g, ans, a):
        seen.append((type(g).__name__, type(ans).__name__))
        w, v = ans
        vinv = np.linalg.inv(v)
        return np.real(np.matmul(np.matmul(vinv.T, np.diag(g[0])), v.T))  # eigenvalues only

    fgrad.defvjp(eig, eig_vjp)
    a = onp.array([[2.0, 1.0], [-3.0, 0.5]])  # complex eigenvalues
    w = eig(a)[0]
    assert w.dtype == onp.complex128
    # d/da of sum(Re w) = trace(a) is the identity
    g = fgrad.grad(lambda a: np.sum(np.real(eig(a).eigenvalues)))(a)
    onp.testing.assert_allclose(g, onp.eye(2), atol=1e-14)
    assert seen == [("EigResult", "EigResult")]
    # |w|^2 = det(a) for a complex pair: its gradient is det(a) inv(a)^T
    g = fgrad.grad(lambda a: np.abs(eig(a)[0][0]) ** 2)(a)
    onp.testing.assert_allclose(g, onp.linalg.det(a) * onp.linalg.inv(a).T, rtol=1e-12)


def test_a_tuple_primitives_jvp_rule_must_give_one_tangent_per_output():
    bad = fgrad.primitive(lambda x: (x * 2.0, x * 3.0), name="my_bad_pair")
    fgrad.defjvp(bad, lambda t, ans, x: t * 2.0)
    with pytest.raises(TypeError, match=r"primitive my_bad_pair: its JVP rule must return a "
                                        r"tuple with one tangent per output \(2\)"):
        fgrad.jvp(lambda x: bad(x)[0], (X,), (Y,))


def test_a_spec_reads_compares_and_prints_as_its_fields():
    # (a plain class since it stopped being a dataclass: the same constructor, == and repr)
    s = fgrad.Spec([(((3,),), {})], (-1.0, 1.0), order=1)
    assert (s.cases, s.domain, s.valid, s.order, s.rtol, s.atol, s.eps, s.dtypes, s.call,
            s.exact) == ([(((3,),), {})], (-1.0, 1.0), None, 1, 1e-5, 1e-6, 1e-6,
                         ("float64", "float32"), None, True)
    assert s == fgrad.Spec([(((3,),), {})], domain=(-1.0, 1.0), order=1)
    assert s != fgrad.Spec([(((3,),), {})], domain=(-1.0, 1.0), order=2)
    assert s != "Spec"
    assert repr(s) == ("Spec(cases=[(((3,),), {})], domain=(-1.0, 1.0), valid=None, order=1, "
                       "rtol=1e-05, atol=1e-06, eps=1e-06, dtypes=('float64', 'float32'), "
                       "call=None, exact=True, slow=False)")
    with pytest.raises(TypeError, match="unhashable"):
        hash(s)
