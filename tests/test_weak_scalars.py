"""A Python number passed to a transform is promoted as numpy promotes it: weakly (issue 31,
item 5). ``x + numpy.float32(0.25)`` at the Python float ``x = 0.41`` is float32 in numpy (and
in JAX); so is every transform's value and derivative of it."""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np

F32 = onp.float32(0.25)


def f(x):
    return x + F32


def _value_and_dtype(v):
    return float(v), onp.result_type(v)


def test_numpy_promotes_a_python_float_weakly():
    assert onp.result_type(f(0.41)) == onp.float32
    assert onp.result_type(f(onp.float64(0.41))) == onp.float64  # a numpy float64 is not weak


WANT = _value_and_dtype(f(0.41))


@pytest.mark.parametrize("run", [
    lambda: fgrad.jit(f)(0.41),
    lambda: fgrad.make_graph(f)(0.41)(0.41),
    lambda: fgrad.jet(f, (0.41,), ([1.0],))[0],
    lambda: fgrad.value_and_grad(f)(0.41)[0],
    lambda: fgrad.jvp(f, (0.41,), (1.0,))[0],
    lambda: fgrad.vjp(f, 0.41)[0],
    lambda: fgrad.vmap(lambda c, x: x + c, in_axes=(0, None))(onp.array([F32]), 0.41)[0],
], ids=["jit", "make_graph", "jet", "value_and_grad", "jvp", "vjp", "vmap"])
def test_values_keep_numpys_promotion(run):
    assert _value_and_dtype(run()) == WANT


@pytest.mark.parametrize("run", [
    lambda: fgrad.grad(f)(0.41),
    lambda: fgrad.value_and_grad(f)(0.41)[1],
    lambda: fgrad.jvp(f, (0.41,), (1.0,))[1],
    lambda: fgrad.jet(f, (0.41,), ([1.0],))[1][0],
    lambda: fgrad.jacfwd(f)(0.41),
    lambda: fgrad.jacrev(f)(0.41),
    lambda: fgrad.grad(fgrad.jit(f))(0.41),
    lambda: fgrad.jit(fgrad.grad(f))(0.41),
], ids=["grad", "value_and_grad", "jvp", "jet", "jacfwd", "jacrev", "grad-jit", "jit-grad"])
def test_derivatives_have_the_dtype_the_computation_gives(run):
    # (a Python number has no dtype of its own: its derivative is float32 here, as JAX's is)
    assert _value_and_dtype(run()) == (1.0, onp.dtype(onp.float32))


def test_a_python_int_is_weak_under_jit_too_and_replays_keep_it():
    g = fgrad.jit(lambda x, n: x * n)
    x = onp.float32(0.41)
    for n in (3, 5):
        got = g(x, n)
        assert got == x * n and onp.result_type(got) == onp.float32
    got = g(x, onp.int64(3))  # a numpy int64 is strong: another signature, numpy's float64
    assert got == x * onp.int64(3) and onp.result_type(got) == onp.float64
    h = fgrad.jit(f)
    assert _value_and_dtype(h(0.5)) == _value_and_dtype(f(0.5))  # a replay
    assert _value_and_dtype(h(onp.float64(0.5))) == (0.75, onp.dtype(onp.float64))


def test_python_floats_alone_still_give_float64():
    assert onp.result_type(fgrad.grad(lambda x: x * 2.0)(1.0)) == onp.float64
    assert onp.result_type(fgrad.jit(lambda x: np.sin(x))(1.0)) == onp.float64
    assert onp.result_type(fgrad.hessian(lambda x: x ** 3)(2.0)) == onp.float64


def test_rules_see_a_python_input_as_numpy_would():
    # (its rules get a numpy scalar: Python's arithmetic would raise at 1 / 0.0 and give a
    # complex number for (-2.0) ** -0.5)
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        assert fgrad.grad(np.log)(0.0) == onp.inf
        assert fgrad.jvp(np.log, (0.0,), (1.0,))[1] == onp.inf
        assert fgrad.jet(np.log, (0.0,), ([1.0],))[1][0] == onp.inf
        assert fgrad.hessian(np.log)(0.0) == -onp.inf
        g = fgrad.grad(lambda x: x ** 0.5)(-2.0)
    assert onp.isnan(g) and not isinstance(g, complex)


def test_a_python_number_indexed_by_an_empty_tuple_or_ellipsis():
    assert fgrad.grad(lambda x: x[()] * 2.0)(0.5) == 2.0
    assert fgrad.grad(lambda x: x[...] * 3.0)(0.5) == 3.0
