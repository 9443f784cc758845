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


# --- Python's arithmetic on such a value gives a Python number, promoted weakly again ---------

def g(x):
    # (eagerly: Python floats until the numpy scalar, so float32)
    return abs(-x * 2 - 1 + x / 4) ** 2 % 5 // 1 + divmod(x, 0.3)[1] + F32


def test_pythons_arithmetic_on_a_python_number_stays_weak():
    assert onp.result_type(g(0.41)) == onp.float32


WANT_G = _value_and_dtype(g(0.41))


@pytest.mark.parametrize("run", [
    lambda: fgrad.jit(g)(0.41),
    lambda: fgrad.make_graph(g)(0.41)(0.41),
    lambda: fgrad.jet(g, (0.41,), ([1.0],))[0],
    lambda: fgrad.value_and_grad(g)(0.41)[0],
    lambda: fgrad.jvp(g, (0.41,), (1.0,))[0],
    lambda: fgrad.vjp(g, 0.41)[0],
], ids=["jit", "make_graph", "jet", "value_and_grad", "jvp", "vjp"])
def test_values_of_pythons_arithmetic_keep_numpys_promotion(run):
    assert _value_and_dtype(run()) == WANT_G  # (float64 here before: the result was strong)


@pytest.mark.parametrize("run", [
    lambda: fgrad.grad(g)(0.41),
    lambda: fgrad.jvp(g, (0.41,), (1.0,))[1],
    lambda: fgrad.jet(g, (0.41,), ([1.0],))[1][0],
    lambda: fgrad.jacfwd(g)(0.41),
    lambda: fgrad.grad(fgrad.jit(g))(0.41),
    lambda: fgrad.jit(fgrad.grad(g))(0.41),
], ids=["grad", "jvp", "jet", "jacfwd", "grad-jit", "jit-grad"])
def test_derivatives_of_pythons_arithmetic_have_the_dtype_the_computation_gives(run):
    # (the floor's derivative is 0, the remainder's 1)
    assert _value_and_dtype(run()) == (1.0, onp.dtype(onp.float32))


def test_a_float32_update_by_a_python_float_keeps_float32_under_jit():
    def step(w, lr):
        return w - lr * 0.5 * w
    w = onp.linspace(0.5, 1.0, 3, dtype=onp.float32)
    want = step(w, 0.1)
    assert want.dtype == onp.float32
    jitted = fgrad.jit(step)
    for _ in range(2):  # (the trace's result, then a replay)
        got = jitted(w, 0.1)
        assert got.dtype == onp.float32 and onp.array_equal(got, want)
    assert fgrad.grad(lambda w: np.sum(step(w, 0.1)))(w).dtype == onp.float32
    assert fgrad.grad(lambda lr: np.sum(step(w, lr)))(0.1).dtype == onp.float32
    assert fgrad.jvp(step, (w, 0.1), (w, 1.0))[1].dtype == onp.float32


def test_a_numpy_function_or_a_numpy_scalar_makes_it_strong_as_in_numpy():
    for h in (lambda x: np.sin(x) + F32, lambda x: x * onp.float64(2) + F32,
              lambda x: np.multiply(x, 2) + F32):
        assert onp.result_type(h(0.41)) == onp.float64
        assert onp.result_type(fgrad.jit(h)(0.41)) == onp.float64
        assert onp.result_type(fgrad.grad(h)(0.41)) == onp.float64


def test_a_graph_keeps_the_conversion_only_where_it_can_change_a_dtype():
    def h(a, b):
        return (a * b + a) / b
    listed = str(fgrad.make_graph(h)(2.0, 5.0))  # (float64 alone: numbered as numpy's calls)
    assert "python_number" not in listed and "v4:f64[] = divide v3 v1" in listed
    graph = fgrad.make_graph(lambda w, lr: w - lr * 0.5 * w)
    w = onp.ones(2, onp.float32)
    kept = graph(w, 0.1)
    assert str(kept).count("python_number") == 1
    assert kept(w, 0.2).dtype == onp.float32 and onp.array_equal(kept(w, 0.2), w - 0.2 * 0.5 * w)


def test_a_recorded_tape_lists_numpys_calls_only():
    tape = fgrad.make_tape(lambda a, b: (a * b + a) / b)(2.0, 5.0)
    assert [e.expression() for e in tape.entries] == [
        "multiply(x0, x1)", "add(v1, x0)", "divide(v2, x1)"]
    assert tape.adjoints()["v2"] == 1 / 5.0 and tape.outputs == ["v3"]


def test_a_checkpointed_or_custom_function_runs_again_on_the_python_number():
    # (its rules run the user's code, which must see what the function saw: at a numpy
    # float64 the recomputed float32 loss would be float64, and so its derivative)
    w = onp.linspace(0.5, 1.0, 3, dtype=onp.float32)

    def loss(w, lr):
        return np.sum((w - lr * 0.5 * w) ** 2)

    want = fgrad.grad(loss, argnums=1)(w, 0.1)
    assert want.dtype == onp.float32
    got = fgrad.grad(fgrad.checkpoint(loss), argnums=1)(w, 0.1)
    assert got.dtype == onp.float32 and got == want
    got = fgrad.jvp(lambda lr: fgrad.checkpoint(loss)(w, lr), (0.1,), (1.0,))[1]
    assert got.dtype == onp.float32 and onp.isclose(got, want, rtol=1e-6)

    seen = []

    @fgrad.custom_vjp
    def scaled(x):
        return x * 3.0

    def fwd(x):
        seen.append(type(x))
        return scaled(x), None

    scaled.defvjp(fwd, lambda res, g: (g * 3.0,))
    assert fgrad.grad(lambda x: scaled(x) + F32)(0.41) == 3.0 and seen == [float]


@pytest.mark.parametrize("w", [onp.ones(2), onp.ones(2, onp.float32)], ids=["f64", "f32"])
def test_a_staged_result_of_pythons_arithmetic_is_a_numpy_scalar_at_every_call(w):
    # (the first call's result comes from the trace, whose value is the Python number; with
    # float32 about, the graph keeps the conversion for later operations only)
    jitted = fgrad.jit(lambda x, w: (x / 2, w * x))
    for _ in range(3):
        half, scaled = jitted(3.0, w)
        assert type(half) is onp.float64 and half == 1.5
        assert scaled.dtype == w.dtype
