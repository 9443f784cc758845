"""fgrad.autograd: autograd's spellings, checked against closed forms and, where HIPS/autograd is
installed (the ``bench`` extra), against autograd itself on the same programs."""
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import autograd as ag

X = onp.array([0.3, -1.2, 2.0])


def f(x, y):
    return np.sum(np.sin(x) * y ** 2)


def test_grad_argnum_value_and_grad_and_grad_and_aux():
    y = onp.array([1.5, 0.5, -2.0])
    onp.testing.assert_allclose(ag.grad(f)(X, y), onp.cos(X) * y ** 2, rtol=1e-15)
    onp.testing.assert_allclose(ag.grad(f, argnum=1)(X, y), 2 * onp.sin(X) * y, rtol=1e-15)
    gx, gy = ag.grad(f, argnum=(0, 1))(X, y)
    onp.testing.assert_allclose(gy, 2 * onp.sin(X) * y, rtol=1e-15)
    value, g = ag.value_and_grad(f, 1)(X, y)
    assert value == pytest.approx(onp.sum(onp.sin(X) * y ** 2), rel=1e-15)
    onp.testing.assert_allclose(g, gy, rtol=1e-15)
    g, aux = ag.grad_and_aux(lambda x: (np.sum(x ** 2), "aux"))(X)
    onp.testing.assert_allclose(g, 2 * X)
    assert aux == "aux"


def test_operators_are_named_as_autograd_names_them():
    def foo(x, y):
        """foo's own doc."""
        return x * y

    g = ag.grad(foo, 1)
    assert g.__name__ == "grad_of_foo_wrt_argnum_1"
    assert g.__doc__.startswith("    grad of function foo with respect to argument number 1")
    assert g.__doc__.endswith("foo's own doc.")
    assert ag.jacobian(foo).__name__ == "jacobian_of_foo_wrt_argnum_0"
    assert ag.elementwise_grad(foo).__name__ == "elementwise_grad_of_foo_wrt_argnum_0"
    # (Python 3.13 strips a docstring's indentation when it compiles it)
    assert ag.grad.__doc__.lstrip().startswith("Returns a function which")
    assert float(g(3.0, 2.0)) == 3.0


def test_autograd_numpys_where_gives_python_values_for_python_values():
    from fgrad.autograd import numpy as anp
    one = anp.where(True, 1, 2)
    assert one == 1 and type(one) is int
    assert type(anp.where(False, 1, 2.0)) is float
    assert anp.where([True, False], [1, 2], [3, 4]) == [1, 4]
    for c, x, y in [(onp.array(True), 1, 2), (True, onp.float32(1.0), 2.0),
                    ([True, False], [onp.float64(1.0), 2.0], 3.0)]:  # arrays stay arrays
        out = anp.where(c, x, y)
        assert isinstance(out, onp.ndarray), (c, x, y)
        assert onp.array_equal(out, onp.where(c, x, y))
        assert out.dtype == onp.where(c, x, y).dtype
    kw = anp.where(condition=[True, False, True], x=onp.arange(3.0), y=-onp.ones(3))
    assert kw.tolist() == [0.0, -1.0, 2.0]
    assert anp.where([False, True, True])[0].tolist() == [1, 2]
    with pytest.raises(ValueError, match="either both or neither of x and y"):
        anp.where([True], 1.0)
    # a traced condition or branch gives a traced result, differentiated as numpy's where
    assert float(ag.grad(lambda t: anp.where(t > 0, t ** 2, 0.0))(3.0)) == 6.0
    assert ag.grad(lambda t: np.sum(anp.where([True, False], t, 1.0)))(
        onp.array([2.0, 5.0])).tolist() == [1.0, 0.0]


def test_elementwise_grad_and_deriv_are_the_derivative_entry_by_entry():
    onp.testing.assert_allclose(ag.elementwise_grad(np.tanh)(X), 1 - onp.tanh(X) ** 2,
                                rtol=1e-15)
    onp.testing.assert_allclose(ag.deriv(np.tanh)(X), 1 - onp.tanh(X) ** 2, rtol=1e-15)
    # for a function that mixes entries: the gradient of the outputs' sum (a cotangent of ones)
    mix = lambda x: np.cumsum(x ** 2)  # noqa: E731
    onp.testing.assert_allclose(ag.elementwise_grad(mix)(X), 2 * X * onp.array([3, 2, 1]),
                                rtol=1e-15)
    assert ag.deriv(lambda t: t ** 3, argnum=0)(2.0) == 12.0


def test_make_vjp_make_jvp_and_the_products():
    g = lambda x: np.outer(x, x)  # noqa: E731
    vjp, ans = ag.make_vjp(g)(X)
    onp.testing.assert_array_equal(ans, onp.outer(X, X))
    c = onp.arange(9.0).reshape(3, 3)
    onp.testing.assert_allclose(vjp(c), (c + c.T) @ X, rtol=1e-14)
    onp.testing.assert_allclose(ag.vector_jacobian_product(g)(X, c), (c + c.T) @ X, rtol=1e-14)
    v = onp.array([1.0, 0.0, -1.0])
    ans, t = ag.make_jvp(g)(X)(v)
    onp.testing.assert_allclose(t, onp.outer(v, X) + onp.outer(X, v), rtol=1e-15)
    # Hessian-vector products of sum(x^4): H = diag(12 x^2)
    quartic = lambda x: np.sum(x ** 4)  # noqa: E731
    onp.testing.assert_allclose(ag.hessian_vector_product(quartic)(X, v), 12 * X ** 2 * v,
                                rtol=1e-14)
    hvp, grad = ag.make_hvp(quartic)(X)
    onp.testing.assert_allclose(grad, 4 * X ** 3, rtol=1e-15)
    onp.testing.assert_allclose(hvp(v), 12 * X ** 2 * v, rtol=1e-14)
    onp.testing.assert_allclose(ag.hessian(quartic)(X), onp.diag(12 * X ** 2), rtol=1e-14)
    onp.testing.assert_allclose(ag.jacobian(np.sin)(X), onp.diag(onp.cos(X)), rtol=1e-15)


def test_holomorphic_grad_is_the_complex_derivative_and_warns_on_real_input():
    z = 0.5 - 0.25j
    assert ag.holomorphic_grad(np.exp)(z) == pytest.approx(onp.exp(z), rel=1e-15)
    assert ag.holomorphic_grad(lambda z: z ** 3)(z) == fgrad.grad(
        lambda z: z ** 3, holomorphic=True)(z)
    with pytest.warns(UserWarning, match="Input to holomorphic_grad is not complex"):
        assert ag.holomorphic_grad(np.sin)(0.5) == pytest.approx(onp.cos(0.5))


def test_multigrad_dict_names_every_argument_with_defaults_and_varargs():
    def loss(w, b=0.5, *rest, scale=2.0):
        return scale * np.sum(w * b) + sum(r ** 2 for r in rest)

    g = ag.multigrad_dict(loss)(X, 1.5, 3.0, 4.0)
    assert list(g) == ["w", "b", "rest", "scale"]
    onp.testing.assert_allclose(g["w"], 2.0 * 1.5 * onp.ones(3))
    assert g["b"] == pytest.approx(2.0 * X.sum()) and g["scale"] == pytest.approx(1.5 * X.sum())
    assert isinstance(g["rest"], tuple) and [float(r) for r in g["rest"]] == [6.0, 8.0]


def test_primitives_defined_the_autograd_way_work_in_every_transform():
    @ag.primitive
    def logsumexp(x):  # autograd's tutorial example; fgrad has its own logsumexp primitive
        m = onp.max(x)
        return m + onp.log(onp.sum(onp.exp(x - m)))

    ag.defvjp(logsumexp, lambda ans, x: lambda g: g * np.exp(x - ans))
    softmax = onp.exp(X) / onp.exp(X).sum()
    onp.testing.assert_allclose(fgrad.grad(logsumexp)(X), softmax, rtol=1e-14)
    assert logsumexp.name == f"{__name__}.{logsumexp.impl.__qualname__}"  # (not fgrad's name)

    @ag.primitive
    def mul(x, y):
        return x * y

    ag.defvjp_argnum(mul, lambda i, ans, args, kwargs: lambda g: g * args[1 - i])
    ag.defjvp(mul, lambda g, ans, x, y: g * y, lambda g, ans, x, y: g * x)
    assert fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0) == (5.0, 2.0)
    assert fgrad.hessian(lambda v: mul(v[0], v[1]))(onp.array([2.0, 5.0])).tolist() == \
        [[0.0, 1.0], [1.0, 0.0]]

    @ag.primitive
    def scale(a, x):
        return a * x

    ag.def_linear(scale)
    assert fgrad.jvp(scale, (3.0, 2.0), (1.0, 0.5))[1] == 2.0 + 1.5


def test_fgrads_own_defvjp_points_to_the_autograd_module_for_curried_rules():
    cube = fgrad.primitive(lambda x: x ** 3, name="my_cube_for_autograd_test")
    with pytest.raises(TypeError, match=r"autograd's curried form .* fgrad\.autograd\.defvjp"):
        fgrad.defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    ag.defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    assert fgrad.grad(cube)(2.0) == 12.0


def test_the_same_programs_give_autograds_numbers():
    autograd = pytest.importorskip("autograd", reason="HIPS/autograd is in the bench extra")
    anp = autograd.numpy
    warnings.simplefilter("ignore", DeprecationWarning)

    def program(np):
        return lambda x, y: np.sum(np.tanh(x) * np.exp(y) / (1 + x ** 2))

    y = onp.array([0.1, 0.2, -0.3])
    v = onp.array([1.0, -2.0, 0.5])
    theirs, ours = program(anp), program(np)
    pairs = [(autograd.grad(theirs, 1)(X, y), ag.grad(ours, 1)(X, y)),
             (autograd.elementwise_grad(anp.tanh)(X), ag.elementwise_grad(np.tanh)(X)),
             (autograd.jacobian(lambda x: anp.outer(x, x))(X),
              ag.jacobian(lambda x: np.outer(x, x))(X)),
             (autograd.hessian(theirs)(X, y), ag.hessian(ours)(X, y)),
             (autograd.hessian_vector_product(theirs)(X, y, v),
              ag.hessian_vector_product(ours)(X, y, v)),
             (autograd.make_vjp(theirs)(X, y)[0](1.0), ag.make_vjp(ours)(X, y)[0](1.0)),
             (autograd.make_jvp(theirs)(X, y)(v)[1], ag.make_jvp(ours)(X, y)(v)[1]),
             (autograd.deriv(anp.sin)(0.3), ag.deriv(np.sin)(0.3)),
             (autograd.holomorphic_grad(lambda z: z ** 3)(1 + 1j),
              ag.holomorphic_grad(lambda z: z ** 3)(1 + 1j))]
    for want, got in pairs:
        onp.testing.assert_allclose(got, want, rtol=1e-13)
    # (autograd's own multigrad_dict needs the funcsigs package, gone from Python 3)
