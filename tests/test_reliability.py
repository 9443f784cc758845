"""No silent wrong answers: the cases of docs/reliability.md, each giving the right derivative
or a named error. Cases already pinned elsewhere are listed in that file with their tests;
this module holds the rest (and the ones that needed a fix)."""
import gc
import math
import re
import tracemalloc

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.traces.tape import Node

X = onp.array([0.3, 0.4, 0.5])


def cos_x_times_x_plus_sin(x):
    return onp.cos(x) * x + onp.sin(x)


# --- 1. a plain numpy array the tape keeps, changed in place afterwards ------------------
# Decision: the tape keeps its own copy (see fgrad/traces/tape.py, Tape); outputs handed back by
# vjp/linearize and stop_gradient's result are copies too. Every case below gave a wrong
# number before.

def test_constant_changed_after_vjp_does_not_change_vjp_fn():
    w = onp.array([1.0, 2.0, 3.0])
    out, f_vjp = fgrad.vjp(lambda x: np.sum(np.sin(w * x)), X)
    want = w * onp.cos(w * X)
    w[0] = 100.0
    onp.testing.assert_array_equal(f_vjp(1.0)[0], want)


def test_input_changed_after_vjp_does_not_change_vjp_fn():
    x = X.copy()
    out, f_vjp = fgrad.vjp(lambda x: np.sin(x) * x, x)
    x[:] = 7.0
    onp.testing.assert_array_equal(f_vjp(onp.ones(3))[0], cos_x_times_x_plus_sin(X))


def test_output_and_aux_changed_after_vjp_do_not_change_vjp_fn():
    out, f_vjp, aux = fgrad.vjp(lambda x: (np.exp(x), np.exp(x) * 2.0), X, has_aux=True)
    out += 1.0        # exp's rule reads its output
    aux[:] = 0.0
    onp.testing.assert_array_equal(f_vjp(onp.ones(3))[0], onp.exp(X))


def test_index_array_changed_after_vjp_does_not_change_vjp_fn():
    idx, mask, lst = onp.array([0, 0, 2]), onp.array([True, False, True]), [2, 1]
    out, f_vjp = fgrad.vjp(lambda x: (x[idx], np.where(mask, x, 0.0), np.take(x, lst)), X)
    idx[:] = 1
    mask[:] = False
    lst[0] = 0
    cts = f_vjp((onp.ones(3), onp.ones(3), onp.ones(2)))[0]
    onp.testing.assert_array_equal(cts, [2.0, 0.0, 1.0] + onp.array([1.0, 0.0, 1.0])
                                   + onp.array([0.0, 1.0, 1.0]))


def test_constant_changed_inside_the_function_after_use():
    def f(x):
        buf = onp.array([1.0, 2.0, 3.0])
        y = np.sum(buf * x)
        buf[:] = 50.0     # a reused work array
        return y + np.sum(buf * x)
    onp.testing.assert_array_equal(fgrad.grad(f)(X), [51.0, 52.0, 53.0])


def test_stop_gradient_result_written_in_place():
    def f(x):
        e = np.exp(x)
        frozen = fgrad.stop_gradient(e)
        frozen[0] = 7.0   # a plain array: writing it must not touch the tape's value
        return np.sum(e) + np.sum(frozen * 0.0)
    onp.testing.assert_array_equal(fgrad.grad(f)(X), onp.exp(X))


def test_constant_and_output_changed_after_linearize_do_not_change_jvp_fn():
    w = onp.array([1.0, 2.0, 3.0])
    out, f_jvp = fgrad.linearize(lambda x: np.exp(w * x), X)
    want = w * onp.exp(w * X)
    w[:] = 0.0
    out *= 0.0
    onp.testing.assert_array_equal(f_jvp(onp.ones(3)), want)


def test_large_constant_changed_between_uses_inside_the_function():
    big = onp.linspace(0.0, 1.0, 20000)  # above the size where unchanged copies are shared

    def f(x):
        y = np.sum(big * x)
        big[:3] += 1.0
        return y + np.sum(big * x)

    try:
        base = onp.linspace(0.0, 1.0, 20000)
        want = base + base
        want[:3] = base[:3] + (base[:3] + 1.0)
        onp.testing.assert_array_equal(fgrad.grad(f)(onp.ones(20000)), want)
    finally:
        big[:3] -= 1.0


def test_a_large_constant_used_many_times_is_copied_once():
    big = onp.linspace(0.0, 1.0, 50000)  # 400 kB

    def f(x):
        for _ in range(20):
            x = x * big
        return np.sum(x)

    x = onp.ones(50000)
    gc.collect()
    tracemalloc.start()
    try:
        fgrad.grad(f)(x)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # 20 products are kept (8 MB); one private copy of big, not 20 (another 8 MB)
    assert peak < 12e6, f"peak {peak / 1e6:.1f} MB: the constant was copied at each use"


def test_custom_vjp_residual_changed_after_vjp():
    w = onp.array([1.0, 2.0, 3.0])

    @fgrad.custom_vjp
    def f(x):
        return w * x

    f.defvjp(lambda x: (f(x), w), lambda res, g: (res * g,))
    out, f_vjp = fgrad.vjp(f, X)
    w[:] = -1.0
    onp.testing.assert_array_equal(f_vjp(onp.ones(3))[0], [1.0, 2.0, 3.0])


# --- 2. np.concatenate, np.array, np.stack of nested lists mixing tracers and floats ------

@pytest.mark.parametrize("f, jac", [
    (lambda x: np.concatenate([[x[0], 1.0], [2.0 * x[1]], x]),
     [[1, 0], [0, 0], [0, 2], [1, 0], [0, 1]]),
    (lambda x: np.array([[x[0], 1.0], [onp.float64(2.0), x[0] * x[1]]]).ravel(),
     [[1, 0], [0, 0], [0, 0], [2, 1]]),
    (lambda x: np.array([x, [1.0, 2.0]]).ravel(), [[1, 0], [0, 1], [0, 0], [0, 0]]),
    (lambda x: np.stack([[x[0], 2.0], [3.0, x[1]]], axis=1).ravel(),
     [[1, 0], [0, 0], [0, 0], [0, 1]]),
    (lambda x: np.array([[x[1], 2]], ndmin=3).ravel(), [[0, 1], [0, 0]]),
    (lambda x: np.asarray([x[0] * 3.0, onp.array(4.0)]), [[3, 0], [0, 0]]),
])
def test_nested_lists_mixing_tracers_and_floats_in_both_modes(f, jac):
    x = onp.array([1.0, 2.0])
    for j in (fgrad.jacfwd, fgrad.jacrev):
        onp.testing.assert_array_equal(j(f)(x), jac)
    onp.testing.assert_array_equal(fgrad.jvp(f, (x,), (onp.array([1.0, 10.0]),))[1],
                                   onp.array(jac) @ [1.0, 10.0])


def test_ragged_nested_lists_with_tracers_are_value_errors_as_in_numpy():
    x = onp.array([1.0, 2.0])
    with pytest.raises(ValueError):
        onp.array([x, [1.0]])
    with pytest.raises(ValueError, match="all input arrays must have the same shape"):
        fgrad.grad(lambda x: np.sum(np.array([x, [1.0]])))(x)
    with pytest.raises(ValueError, match="same number of dimensions"):
        fgrad.grad(lambda x: np.sum(np.concatenate([x, [[1.0]]])))(x)


# --- 3. plain numpy functions on tracers ----------------------------------------------------

@pytest.mark.parametrize("name, plain, want", [
    ("numpy.concatenate", lambda x: onp.sum(onp.concatenate([x, x]) ** 2), lambda x: 4 * x),
    ("numpy.stack", lambda x: onp.sum(onp.stack([x, 2 * x]) ** 2), lambda x: 10 * x),
    ("numpy.where", lambda x: onp.sum(onp.where(x > 0.35, x ** 2, 0.0)),
     lambda x: onp.where(x > 0.35, 2 * x, 0.0)),
    ("numpy.einsum", lambda x: onp.einsum("i,i", x, x), lambda x: 2 * x),
    ("numpy.matmul", lambda x: onp.matmul(x, x), lambda x: 2 * x),
    ("numpy.convolve", lambda x: onp.sum(onp.convolve(x, x)), lambda x: 2 * onp.sum(x) + 0 * x),
    ("numpy.polyval", lambda x: onp.polyval(x, 2.0), lambda x: onp.array([4.0, 2.0, 1.0])),
    ("numpy.interp", lambda x: onp.sum(onp.interp(x, [0.0, 5.0], [0.0, 10.0])),
     lambda x: onp.full(3, 2.0)),
    ("numpy.linalg.norm", lambda x: onp.linalg.norm(x), lambda x: x / onp.linalg.norm(x)),
    ("numpy.fft.fft", lambda x: onp.sum(onp.abs(onp.fft.fft(x)) ** 2), lambda x: 6 * x),
    ("numpy.apply_along_axis", lambda x: onp.sum(onp.apply_along_axis(lambda r: r * r, 0, x)),
     lambda x: 2 * x),
    ("builtin sum", lambda x: sum(x * x), lambda x: 2 * x),
])
def test_plain_numpy_functions_run_through_fgrad_numpy(name, plain, want):
    onp.testing.assert_allclose(fgrad.grad(plain)(X), want(X), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jvp(plain, (X,), (onp.ones(3),))[1],
                                onp.sum(want(X)), rtol=1e-14)


CONVERSION = "of a traced value would silently drop its derivative"


@pytest.mark.parametrize("call, error, match", [
    (lambda x: onp.asarray(x), fgrad.ConcretizationError, "numpy.asarray"),
    (lambda x: onp.float64(x[0]), fgrad.ConcretizationError, CONVERSION),
    (lambda x: onp.sum([x[0], x[1]]), fgrad.ConcretizationError, CONVERSION),
    (lambda x: onp.vectorize(lambda a: a * 2)(x), fgrad.ConcretizationError,
     "numpy.vectorize calls its function on plain numbers"),
    (lambda x: onp.frompyfunc(lambda a: a * 2, 1, 1)(x), fgrad.ConcretizationError,
     "was called on a traced value: plain numpy cannot record derivatives"),
    (lambda x: math.fsum(x), fgrad.ConcretizationError, r"float\(\) " + CONVERSION),
    (lambda x: onp.random.permutation(x), fgrad.ConcretizationError, CONVERSION),
    # (numpy's in-place functions and ufunc.at on a traced array write it:
    # tests/test_writes.py)
    (lambda x: onp.cos(x, out=onp.zeros(3)), fgrad.TracerMutationError, "out="),
])
def test_plain_numpy_calls_that_would_drop_the_derivative_raise(call, error, match):
    for run in (lambda: fgrad.grad(lambda x: np.sum(call(x)))(X),
                lambda: fgrad.jvp(lambda x: call(x), (X,), (onp.ones(3),))):
        with pytest.raises(error, match=match):
            run()


# --- 4. tracers that escape their transform ---------------------------------------------------

def _leak(transform):
    box = []

    def f(x):
        box.append(x)
        return x * 2.0

    transform(f)
    return box[0]


LEAKS = {
    "grad": lambda f: fgrad.grad(f)(1.5),
    "vjp": lambda f: fgrad.vjp(f, 1.5)[1](1.0),
    "jvp": lambda f: fgrad.jvp(f, (1.5,), (1.0,)),
    "linearize": lambda f: fgrad.linearize(f, 1.5)[1](1.0),
    "jacfwd": lambda f: fgrad.jacfwd(f)(onp.ones(2)),
    "hessian": lambda f: fgrad.hessian(lambda x: np.sum(f(x)))(onp.ones(2)),
}
LATER = {
    "plain": lambda t: np.sin(t),
    "grad": lambda t: fgrad.grad(lambda y: np.sum(y * t))(1.0),
    "jvp": lambda t: fgrad.jvp(lambda y: y * t, (1.0,), (1.0,)),
    "jacrev": lambda t: fgrad.jacrev(lambda y: y + t)(onp.ones(2)),
    "custom_vjp": lambda t: fgrad.grad(lambda y: _scale(y, t))(1.0),
    "checkpoint": lambda t: fgrad.grad(lambda y: np.sum(fgrad.checkpoint(
        lambda a, b: a * b)(y, t)))(1.0),
}


@fgrad.custom_vjp
def _scale(x, s):
    return x * s


_scale.defvjp(lambda x, s: (_scale(x, s), (x, s)),
              lambda r, g: (g * r[1], fgrad.unbroadcast(g * r[0], np.shape(r[1]))))


@pytest.mark.parametrize("later", LATER)
@pytest.mark.parametrize("made_by", LEAKS)
def test_an_escaped_tracer_mixed_into_a_later_transform_raises(made_by, later):
    t = _leak(LEAKS[made_by])
    with pytest.raises(fgrad.EscapedTracerError, match=r"A traced value from <\w+ trace #\d+> "
                                                       "was used after that transform "
                                                       "finished"):
        LATER[later](t)


def test_an_inner_tracer_leaked_into_the_outer_function_raises():
    box = []

    def outer(x):
        g = fgrad.grad(lambda y: box.append(y) or y * x)(x)
        return g * box[0]

    with pytest.raises(fgrad.EscapedTracerError, match="<grad trace"):
        fgrad.grad(outer)(2.0)


def test_an_escaped_tracer_still_compares_and_prints():
    # comparisons give plain values (no derivative), so control flow on a stale value works
    t = _leak(LEAKS["grad"])  # (of the Python float 1.5: a Python comparison's bool)
    assert (t > 1.0) is True and "1.5" in repr(t)


# --- 5. integer, boolean, None, empty, 0-d, float32, complex -----------------------------

@pytest.mark.parametrize("transform", ["grad", "jvp", "vjp", "jacfwd", "jacrev", "hessian"])
@pytest.mark.parametrize("arg, shown", [(2, r"int \(2\)"), (True, r"bool \(True\)"),
                                        (onp.arange(2), "dtype int64"),
                                        (onp.array([True]), "dtype bool")])
def test_integer_and_boolean_inputs_are_type_errors_in_every_transform(transform, arg, shown):
    f = lambda x: np.sum(x * 2.0)  # noqa: E731
    run = {"grad": lambda: fgrad.grad(f)(arg),
           "jvp": lambda: fgrad.jvp(f, (arg,), (arg,)),
           "vjp": lambda: fgrad.vjp(f, arg),
           "jacfwd": lambda: fgrad.jacfwd(f)(arg),
           "jacrev": lambda: fgrad.jacrev(f)(arg),
           "hessian": lambda: fgrad.hessian(f)(arg)}[transform]
    name = "jacfwd" if transform == "hessian" else transform
    with pytest.raises(TypeError, match=f"{name} requires float or complex inputs.*{shown}"):
        run()


def test_integer_and_boolean_values_closed_over_or_as_other_arguments_are_constants():
    n, mask = 3, onp.array([True, False, True])
    f = lambda x, k: np.sum(np.where(mask, x ** n, 0.0)) * k  # noqa: E731
    onp.testing.assert_array_equal(fgrad.grad(f)(X, 2), 2 * 3 * X ** 2 * mask)


def test_none_leaves_are_empty_in_every_transform():
    p = {"w": 2.0, "frozen": None, "pair": (3.0, None)}
    f = lambda p: p["w"] * p["pair"][0]  # noqa: E731
    assert fgrad.grad(f)(p) == {"w": 3.0, "frozen": None, "pair": (2.0, None)}
    t = {"w": 1.0, "frozen": None, "pair": (0.0, None)}
    assert fgrad.jvp(f, (p,), (t,)) == (6.0, 3.0)
    assert fgrad.jacfwd(f)(p) == fgrad.jacrev(f)(p) == {"w": 3.0, "frozen": None,
                                                        "pair": (2.0, None)}
    out, f_vjp = fgrad.vjp(lambda x: (x * 2.0, None), 1.5)
    assert out == (3.0, None) and f_vjp((1.0, None)) == (2.0,)


@pytest.mark.parametrize("shape", [(0,), (0, 3), (2, 0)])
@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128"])
def test_empty_arrays_give_empty_derivatives_of_the_right_shape_and_dtype(shape, dtype):
    x = onp.zeros(shape, dtype)
    if dtype != "complex128":
        g = fgrad.grad(lambda x: np.sum(x ** 2))(x)
        assert g.shape == shape and g.dtype == dtype
        assert fgrad.hessian(lambda x: np.sum(x ** 3))(x).shape == shape + shape
    out, t = fgrad.jvp(lambda x: x * 2, (x,), (x,))
    assert t.shape == shape and t.dtype == dtype
    # (complex inputs and outputs: for holomorphic functions only, said explicitly)
    holomorphic = dtype == "complex128"
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        j = jac(lambda x: x * 2, holomorphic=holomorphic)(x)
        assert j.shape == shape + shape and j.dtype == dtype


def test_zero_dimensional_arrays_give_numpy_scalars():
    x = onp.array(0.5)
    for got in (fgrad.grad(np.sin)(x), fgrad.jvp(np.sin, (x,), (x,))[1],
                fgrad.jacfwd(np.sin)(x), fgrad.jacrev(np.sin)(x), fgrad.hessian(np.sin)(x)):
        assert type(got) is onp.float64
    assert fgrad.grad(np.sin)(x) == onp.cos(0.5)


@pytest.mark.parametrize("run", [
    lambda f, x: fgrad.grad(lambda x: np.sum(f(x)))(x),
    lambda f, x: fgrad.jvp(f, (x,), (x,))[1],
    lambda f, x: fgrad.vjp(f, x)[1](x)[0],
    lambda f, x: fgrad.linearize(f, x)[1](x),
    lambda f, x: fgrad.jacfwd(f)(x),
    lambda f, x: fgrad.jacrev(f)(x),
    lambda f, x: fgrad.hessian(lambda x: np.sum(f(x)))(x),
    lambda f, x: fgrad.jacrev(fgrad.jacrev(f))(x),
], ids=["grad", "jvp", "vjp", "linearize", "jacfwd", "jacrev", "hessian", "jacrev(jacrev)"])
@pytest.mark.parametrize("f", [lambda x: np.tanh(x) * x, lambda x: _scale(x, onp.float32(2)),
                               lambda x: fgrad.checkpoint(np.tanh)(x),
                               # (var divides in float64 as numpy does, clip's bounds are
                               # Python floats: jacrev and hessian gave float64)
                               lambda x: np.var(x) * x, lambda x: np.clip(x, -0.3, 0.4)],
                         ids=["primitives", "custom_vjp", "checkpoint", "var", "clip"])
def test_float32_stays_float32_in_every_transform(f, run):
    x = X.astype(onp.float32)
    assert f(x).dtype == onp.float32
    assert run(f, x).dtype == onp.float32


def test_a_jacobians_rows_take_the_inputs_dtype_and_its_columns_the_outputs():
    # as vjp's cotangents and jvp's tangents do (JAX's rule): float32 in, float64 out
    x = X.astype(onp.float32)

    def f(x):
        return np.sin(x) * onp.float64(2.0)
    assert f(x).dtype == onp.float64
    assert fgrad.vjp(f, x)[1](f(x))[0].dtype == fgrad.jacrev(f)(x).dtype == onp.float32
    assert fgrad.jvp(f, (x,), (x,))[1].dtype == fgrad.jacfwd(f)(x).dtype == onp.float64
    onp.testing.assert_allclose(fgrad.jacrev(f)(x), fgrad.jacfwd(f)(x), rtol=1e-6)


def test_complex_inputs_follow_jax_conventions():
    z = 1.0 + 2.0j
    # a real function of a complex input: the conjugate of the steepest-ascent direction
    assert fgrad.grad(lambda z: np.abs(z) ** 2)(z) == 2 * onp.conj(z)
    assert fgrad.grad(lambda z: np.real(z * z))(z) == 2 * z
    # a holomorphic function: its complex derivative, in both modes
    assert fgrad.jvp(lambda z: z ** 3, (z,), (1.0 + 0j,))[1] == 3 * z ** 2
    assert fgrad.jacfwd(lambda z: z ** 3, holomorphic=True)(z) == \
        fgrad.jacrev(lambda z: z ** 3, holomorphic=True)(z) == 3 * z ** 2
    with pytest.raises(TypeError, match=r"grad requires a function returning a real scalar .* "
                                        "dtype complex128"):
        fgrad.grad(lambda z: z ** 3)(z)


# --- 6. an exception inside the differentiated function leaves nothing behind --------------

def _nodes():
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Node)


def _raising_custom(where):
    @fgrad.custom_vjp
    def f(x):
        return x * 2.0

    def fwd(x):
        if where == "fwd":
            raise RuntimeError("boom")
        return f(x), None

    def bwd(res, g):
        if where == "bwd":
            raise RuntimeError("boom")
        return (2.0 * g,)

    f.defvjp(fwd, bwd)
    return f


def _boom(x):
    raise RuntimeError("boom")


@pytest.mark.parametrize("where, run", [
    ("function", lambda: fgrad.grad(lambda x: _boom(np.sin(x)))(1.0)),
    ("custom fwd", lambda: fgrad.grad(_raising_custom("fwd"))(1.0)),
    ("custom bwd", lambda: fgrad.grad(_raising_custom("bwd"))(1.0)),
    ("custom bwd in jvp", lambda: fgrad.jvp(_raising_custom("bwd"), (1.0,), (1.0,))),
    ("checkpoint recomputation", lambda: fgrad.grad(fgrad.checkpoint(
        lambda x: np.sin(x) if _flip() else _boom(x)))(1.0)),
    ("inner transform", lambda: fgrad.grad(lambda x: fgrad.jvp(
        lambda y: _boom(y * x), (x,), (1.0,)))(1.0)),
])
def test_an_exception_anywhere_leaves_no_state_behind(where, run):
    before = _nodes()
    with pytest.raises(RuntimeError, match="boom"):
        run()
    assert _nodes() <= before
    # the next calls, in every mode and nesting, are right
    assert fgrad.grad(lambda x: x ** 3)(2.0) == 12.0
    assert fgrad.jvp(lambda x: x ** 3, (2.0,), (1.0,))[1] == 12.0
    assert fgrad.grad(fgrad.grad(lambda x: x ** 3))(2.0) == 12.0
    assert fgrad.grad(_scale)(2.0, 3.0) == 3.0


_flips = [0]


def _flip():
    """True on the forward pass, False on the recomputation (to raise there)."""
    _flips[0] += 1
    return _flips[0] % 2 == 1


def test_an_inner_exception_caught_by_the_outer_function_does_not_disturb_it():
    def outer(x):
        try:
            fgrad.grad(lambda y: _boom(y * x))(x)
        except RuntimeError:
            pass
        return x ** 3

    assert fgrad.grad(outer)(2.0) == 12.0
    assert fgrad.jvp(outer, (2.0,), (1.0,))[1] == 12.0


def test_a_vjp_fn_that_raised_gives_the_right_cotangent_next_time():
    """Backward passes keep cotangents on the tape's nodes; one stopped by a raising rule must
    leave none behind for the next pass over the same tape."""
    fail = [True]
    p = fgrad.primitive(lambda x: x * 1.0, name="raises_once")

    def rule(g, ans, x):
        if fail[0]:
            fail[0] = False
            raise RuntimeError("boom")
        return 2.0 * g

    fgrad.defvjp(p, rule)
    xs = onp.array([0.5, 1.0])
    out, f_vjp = fgrad.vjp(lambda x: p(np.sin(x)) + x * x, xs)
    with pytest.raises(RuntimeError, match="boom"):
        f_vjp(onp.ones(2))
    onp.testing.assert_allclose(f_vjp(onp.ones(2))[0], 2.0 * onp.cos(xs) + 2.0 * xs, rtol=1e-14)
    onp.testing.assert_allclose(f_vjp(onp.ones(2))[0], 2.0 * onp.cos(xs) + 2.0 * xs, rtol=1e-14)


def test_a_rule_calling_the_vjp_fn_of_its_own_tape_is_refused():
    calls = {}
    p = fgrad.primitive(lambda x: x * 1.0, name="calls_its_own_vjp_fn")
    fgrad.defvjp(p, lambda g, ans, x: calls["vjp"](g)[0])
    out, f_vjp = fgrad.vjp(p, 1.0)
    calls["vjp"] = f_vjp
    for _ in range(2):  # (and the refusal leaves the tape walkable: no lock is left held)
        with pytest.raises(RuntimeError, match="same tape"):
            f_vjp(1.0)


# --- 7. threads ------------------------------------------------------------------------

def test_one_vjp_fn_called_from_two_threads_at_once(in_threads):
    xs = onp.linspace(0.0, 1.0, 50)
    out, f_vjp = fgrad.vjp(lambda x: np.sin(x) * x, xs)
    errors = []

    def work(scale):
        for _ in range(200):
            ct = onp.full(50, scale)
            if not onp.allclose(f_vjp(ct)[0], scale * cos_x_times_x_plus_sin(xs), rtol=1e-14):
                errors.append(scale)

    errors += in_threads(work, [(1.0,), (-3.0,)])
    assert errors == []


def test_nested_transforms_in_two_threads_give_independent_results(in_threads):
    errors = []

    def work(f, d2f, xs):
        for _ in range(30):
            for x in xs:
                got = (fgrad.hessian(f)(x), fgrad.jvp(fgrad.grad(f), (x,), (1.0,))[1],
                       fgrad.grad(fgrad.grad(fgrad.checkpoint(f)))(x))
                if not onp.allclose(got, d2f(x), rtol=1e-12):
                    errors.append((x, got))

    errors += in_threads(work, [(np.sin, lambda x: -onp.sin(x), [0.1, 1.3]),
                                (lambda x: x ** 4, lambda x: 12 * x ** 2, [-0.5, 2.0])])
    assert errors == []


def test_an_aux_output_that_is_the_input_comes_back_as_a_copy():
    x = onp.array([1.0, 2.0])
    (value, aux), g = fgrad.value_and_grad(lambda v: (np.sum(v * v), v), has_aux=True)(x)
    assert not onp.shares_memory(aux, x) and aux.tolist() == [1.0, 2.0]
    jac, aux = fgrad.jacrev(lambda v: (v * 2.0, v), has_aux=True)(x)
    assert not onp.shares_memory(aux, x) and jac.tolist() == [[2.0, 0.0], [0.0, 2.0]]
    assert g.tolist() == [2.0, 4.0] and float(value) == 5.0


# --- second round (the outside differential tester's cases) -------------------------------

@pytest.mark.parametrize("transform", [fgrad.grad, fgrad.jacrev, fgrad.jacfwd,
                                       lambda f: lambda x: fgrad.value_and_grad(f)(x)[1]])
def test_the_input_array_changed_inside_f_after_its_use(transform):
    x = onp.array([1.0, 2.0])

    def f(t):
        y = np.sum(t * t)
        x[0] = 100.0  # the caller's own array, written by the caller's own code
        return y

    onp.testing.assert_array_equal(transform(f)(x), [2.0, 4.0])


def test_a_large_input_written_inside_f_is_refused_and_given_back_writable():
    big = onp.ones(10_000)  # 80 kB: guarded (read-only) while grad runs, not copied

    def f(t):
        y = np.sum(t * t)
        big[0] = 100.0
        return y

    for transform in (fgrad.grad, fgrad.jacrev, fgrad.jacfwd):
        with pytest.raises(ValueError, match="wrote into one of its input arrays"):
            transform(f)(big)
        assert big.flags.writeable and big[0] == 1.0
    for failing in (lambda t: 1 / 0, lambda t: (t, t)):  # errors in f and after it
        with pytest.raises((ZeroDivisionError, TypeError)):
            fgrad.grad(failing)(big)
        assert big.flags.writeable
    onp.testing.assert_array_equal(fgrad.grad(lambda t: np.sum(t * t))(big), 2 * big)
    assert big.flags.writeable
    frozen = onp.ones(10_000)
    frozen.flags.writeable = False
    fgrad.grad(lambda t: np.sum(t))(frozen)
    assert not frozen.flags.writeable  # left as it was


def test_a_large_view_input_is_copied_so_writes_through_its_base_do_not_count():
    base = onp.ones((200, 100))
    x = base[:, :50]  # a view of 80 kB: its memory is writable through base, so it is copied

    def f(t):
        y = np.sum(t * t)
        base[0, 0] = 100.0
        return y

    g = fgrad.grad(f)(x)
    assert g[0, 0] == 2.0 and base[0, 0] == 100.0 and base.flags.writeable


MATRIX = re.escape("is a numpy.matrix, which fgrad does not differentiate: its * and ** are "
                   "matrix products")


def test_a_numpy_matrix_input_is_refused_by_name():
    with pytest.warns(PendingDeprecationWarning):  # (numpy discourages matrix itself)
        m = onp.matrix([[1.0, 2.0], [3.0, 4.0]])
    for f in (lambda m: np.trace(m * m), lambda m: np.trace(m ** 2), lambda m: (m * m).sum()):
        with pytest.raises(TypeError, match=f"grad: argument {MATRIX}"):
            fgrad.grad(f)(m)
    with pytest.raises(TypeError, match=f"jvp: argument {MATRIX}"):
        fgrad.jvp(lambda m: m * m, (m,), (m,))


def test_a_numpy_matrix_constant_is_refused_by_name():
    with pytest.warns(PendingDeprecationWarning):  # (numpy discourages matrix itself)
        m = onp.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(TypeError, match=f"fgrad.numpy.multiply: argument 1 {MATRIX}"):
        fgrad.grad(lambda x: np.trace(x * m))(onp.eye(2))
    with pytest.raises(TypeError, match=f"fgrad.numpy.multiply: argument 1 {MATRIX}"):
        fgrad.jvp(lambda x: x * m, (onp.eye(2),), (onp.eye(2),))


MASKED = re.escape("is a numpy.ma.MaskedArray, which fgrad does not differentiate: fgrad's "
                   "rules ignore")


def test_masked_arrays_are_refused_by_name():
    ma = onp.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0])
    assert float(onp.sum(ma * ma)) == 10.0  # what numpy computes, and fgrad would not
    with pytest.raises(TypeError, match=f"grad: argument {MASKED}"):
        fgrad.value_and_grad(lambda x: np.sum(x * x))(ma)
    with pytest.raises(TypeError, match=f"jvp: argument {MASKED}"):
        fgrad.jvp(lambda x: np.sum(x * x), (ma,), (onp.ones(3),))
    with pytest.raises(TypeError, match=f"argument 1 {MASKED}"):
        fgrad.grad(lambda x: np.sum(x * ma))(onp.ones(3))


def test_jacfwd_of_complex_inputs_needs_holomorphic():
    z = onp.array([1.0 + 2.0j, 0.5 - 1.0j])

    def f(z):  # real-valued, not holomorphic
        return np.sum(np.abs(z) ** 2) + np.real(z[0])

    with pytest.raises(TypeError, match="jacfwd: input leaf 0 is complex .* holomorphic=True"):
        fgrad.jacfwd(f)(z)
    with pytest.raises(TypeError, match="holomorphic=True"):
        fgrad.hessian(f)(z)
    # the real function's gradient (JAX's convention) from reverse mode is unaffected
    onp.testing.assert_allclose(fgrad.grad(f)(z), 2 * onp.conj(z) + [1, 0])
    # a holomorphic function with holomorphic=True: df/dz
    onp.testing.assert_allclose(fgrad.jacfwd(lambda z: z * z, holomorphic=True)(z),
                                onp.diag(2 * z))


def test_results_never_alias_the_callers_cotangent_or_tangent():
    x = onp.array([1.0, 2.0])
    ct = onp.array([1.0, 1.0])
    _, f_vjp = fgrad.vjp(lambda x: x + 1.0, x)
    g = f_vjp(ct)[0]
    g *= 5.0
    assert ct.tolist() == [1.0, 1.0] and f_vjp(ct)[0].tolist() == [1.0, 1.0]
    _, f_vjp = fgrad.vjp(lambda x: np.reshape(x, (2, 1)), x)
    assert not onp.shares_memory(f_vjp(ct.reshape(2, 1))[0], ct)
    t = onp.array([1.0, 1.0])
    out, tangent = fgrad.jvp(lambda x: x + 1.0, (x,), (t,))
    assert not onp.shares_memory(tangent, t)
    out, tangent = fgrad.jvp(lambda x: x, (x,), (t,))
    assert not onp.shares_memory(tangent, t) and not onp.shares_memory(out, x)
    _, f_jvp = fgrad.linearize(lambda x: x * 1.0 + 0.0, x)
    assert not onp.shares_memory(f_jvp(t), t)


@pytest.mark.parametrize("f", [np.logaddexp, np.logaddexp2])
def test_two_argument_log_sums_at_infinities_take_their_limits(f):
    inf = onp.inf
    for x, y, want in [(inf, 0.0, (1.0, 0.0)), (0.0, inf, (0.0, 1.0)), (inf, inf, (0.5, 0.5)),
                       (-inf, -inf, (0.5, 0.5)), (-inf, 0.0, (0.0, 1.0))]:
        assert tuple(map(float, fgrad.grad(f, argnums=(0, 1))(x, y))) == want, (x, y)
        assert float(fgrad.jvp(f, (x, y), (1.0, 0.0))[1]) == want[0]


def test_logsumexp_at_infinities_takes_its_limit():
    special = pytest.importorskip("fgrad.scipy.special", reason="needs scipy")
    inf = onp.inf
    assert fgrad.grad(special.logsumexp)(onp.array([inf, 1.0, 0.0])).tolist() == [1, 0, 0]
    assert fgrad.grad(special.logsumexp)(onp.array([inf, inf, 0.0])).tolist() == [.5, .5, 0]


def test_ordereddict_defaultdict_and_namedtuple_are_pytrees():
    from collections import OrderedDict, defaultdict, namedtuple
    od = OrderedDict([("b", 2.0), ("a", 3.0)])
    g = fgrad.grad(lambda d: d["a"] * d["b"])(od)
    assert type(g) is OrderedDict and list(g) == ["b", "a"] and list(g.values()) == [3.0, 2.0]
    dd = defaultdict(float, a=3.0, b=2.0)
    g = fgrad.grad(lambda d: d["a"] * d["b"])(dd)
    assert type(g) is defaultdict and g.default_factory is float and dict(g) == {"a": 2.0,
                                                                                   "b": 3.0}
    P = namedtuple("P", "a b")
    out, f_vjp = fgrad.vjp(lambda x: P(x * 2.0, x * 3.0), 1.0)
    assert type(out) is P and float(f_vjp(P(1.0, 1.0))[0]) == 5.0
    jac = fgrad.jacrev(lambda x: OrderedDict([("z", x), ("y", 2 * x)]))(onp.ones(2))
    assert list(jac) == ["z", "y"]


def test_other_containers_are_named_in_the_error():
    import dataclasses

    @dataclasses.dataclass
    class Params:
        w: float

    class Pair(tuple):
        pass

    known = "neither an array nor a container fgrad knows"
    with pytest.raises(TypeError, match=f"grad: argument is a .*Params, which is {known}"):
        fgrad.grad(lambda p: p.w)(Params(1.0))
    with pytest.raises(TypeError, match=f"grad: an output is a .*Params, which is {known}"):
        fgrad.grad(lambda x: Params(x))(1.0)
    with pytest.raises(TypeError, match=f"vjp: an output is a .*Pair, which is {known}"):
        fgrad.vjp(lambda x: Pair((x, x)), 1.0)
    with pytest.raises(TypeError, match=f"jvp: an output is a .*object, which is {known}"):
        fgrad.jvp(lambda x: object(), (1.0,), (1.0,))
    # every transform reads its outputs back the same way (traces.arguments.outputs_of)
    with pytest.raises(TypeError, match=f"vmap: an output is a .*str, which is {known}"):
        fgrad.vmap(lambda x: (x, "label"))(onp.ones(2))
    with pytest.raises(TypeError, match=f"jet: an output is a .*str, which is {known}"):
        fgrad.jet(lambda x: (x, "label"), (1.0,), ((1.0,),))
    with pytest.raises(TypeError, match=rf"jit\(f\): an output is a .*str, which is {known}"):
        def f(x):
            return x, "label"
        fgrad.jit(f)(1.0)


def test_an_escaped_tracer_returned_by_another_transform_is_named():
    kept = []
    fgrad.jvp(lambda x: kept.append(x) or x, (1.0,), (1.0,))
    def f(x):
        return x, kept[0]

    calls = [lambda: fgrad.vjp(f, 1.0), lambda: fgrad.jvp(f, (1.0,), (1.0,)),
             lambda: fgrad.vmap(f)(onp.ones(2)), lambda: fgrad.jit(f)(1.0),
             lambda: fgrad.jet(f, (1.0,), ((1.0,),))]
    for call in calls:
        with pytest.raises(fgrad.EscapedTracerError, match="used after that transform finished"):
            call()


def test_deepcopy_of_a_traced_value_works_and_stays_checked():
    import copy
    import pickle
    assert float(fgrad.grad(lambda x: copy.deepcopy({"a": [x, x]})["a"][0] * x)(3.0)) == 6.0
    assert float(fgrad.grad(lambda x: copy.copy(x) * x)(3.0)) == 6.0
    assert float(fgrad.jvp(lambda x: copy.deepcopy(x) * x, (3.0,), (1.0,))[1]) == 6.0
    kept = []
    fgrad.jvp(lambda x: kept.append(copy.deepcopy(x)) or x, (1.0,), (1.0,))
    with pytest.raises(fgrad.EscapedTracerError):
        kept[0] + 1.0
    with pytest.raises(fgrad.ConcretizationError, match="Pickling of a traced value"):
        fgrad.grad(lambda x: pickle.dumps(x))(1.0)


def test_a_dict_with_keys_of_mixed_types_says_so():
    with pytest.raises(TypeError, match=r"keys of several types \(int, str\).*sorted order"):
        fgrad.grad(lambda d: d[1] + d["a"])({1: 1.0, "a": 2.0})


INTO_PLAIN = "a traced value was written into a plain numpy array"


def test_fromiter_over_traced_values_gives_fgrads_error():
    with pytest.raises(fgrad.ConcretizationError, match=INTO_PLAIN):
        fgrad.grad(lambda x: np.sum(onp.fromiter((v for v in x), float)))(onp.array([1., 2.]))


def test_item_assignment_of_a_traced_value_gives_fgrads_error():
    def f(x):
        out = onp.zeros(2)
        out[0] = x[0]
        return np.sum(out)

    with pytest.raises(fgrad.ConcretizationError, match=f"grad: {INTO_PLAIN}.*np.at\\(out\\)"):
        fgrad.grad(f)(onp.array([1.0, 2.0]))
    with pytest.raises(fgrad.ConcretizationError, match=f"jvp: {INTO_PLAIN}"):
        fgrad.jvp(f, (onp.array([1.0, 2.0]),), (onp.ones(2),))


def test_a_traced_array_written_into_a_slice_of_a_plain_one_is_said_so():
    def f(x):  # (numpy converts the value itself here, not through its own ValueError)
        out = onp.zeros(4)
        out[::2] = x
        return np.sum(out)

    x = onp.array([1.0, 2.0])
    for name, run in [("grad", lambda: fgrad.grad(f)(x)),
                      ("jacfwd", lambda: fgrad.jacfwd(f)(x)),
                      ("vmap", lambda: fgrad.vmap(f)(onp.stack([x, x]))),
                      ("jet", lambda: fgrad.jet(f, (x,), ([onp.ones(2)],)))]:
        with pytest.raises(fgrad.ConcretizationError, match=f"{name}: {INTO_PLAIN}.*np.at"):
            run()
    # an integer traced value there may be the index: under vmap a batch, which numpy's
    # indexing of a plain array cannot take, said with the way out
    with pytest.raises(fgrad.ConcretizationError,
                       match=r"vmap: a plain numpy array was indexed by a batched index .* "
                             r"np.take\(x, i, axis=0\)"):
        fgrad.vmap(lambda i: onp.arange(3.0)[i])(onp.array([0, 1]))
    onp.testing.assert_array_equal(
        fgrad.vmap(lambda i: np.take(onp.arange(3.0), i, axis=0))(onp.array([2, 0])), [2, 0])


def _named_fgrad_functions(message):
    """Every ``fgrad.numpy.<name>`` or ``fgrad.scipy.<module>.<name>`` a message names."""
    return re.findall(r"fgrad\.(numpy|scipy\.\w+)\.(\w+)", message)


def test_every_name_a_plain_numpy_message_suggests_exists():
    import importlib
    seen = 0
    for name in dir(onp):
        u = getattr(onp, name)
        if not isinstance(u, onp.ufunc):
            continue
        calls = [lambda t, u=u: u(*[t] * u.nin)]
        if u.nin == 2:
            calls += [lambda t, u=u: u.reduce(t), lambda t, u=u: u.accumulate(t),
                      lambda t, u=u: u.outer(t, t), lambda t, u=u: u.reduceat(t, [0]),
                      lambda t, u=u: u.at(t, [0], 1.0)]
        for call in calls:
            try:
                with onp.errstate(all="ignore"):  # (the values are outside some domains)
                    fgrad.grad(lambda t: np.sum(call(t)))(onp.array([0.5, 0.25]))
            except Exception as e:  # (numpy's own errors too: no reduce for some ufuncs)
                for module, attr in _named_fgrad_functions(str(e)):
                    seen += 1
                    assert callable(getattr(importlib.import_module("fgrad." + module), attr,
                                            None)), (name, str(e))
    assert seen > 50

