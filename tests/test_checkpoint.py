"""fgrad.checkpoint: the same derivatives as the plain function in every mode and nesting,
far less tape memory for a deep chain of checkpointed blocks (measured with tracemalloc),
closures over traced values converted to arguments, and a clear error for what recomputation
cannot honour (impure functions)."""
import gc
import tracemalloc

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads


def steps(x, w):
    """Ten small steps of three primitives each (sin, multiply, add): 30 tape nodes."""
    for _ in range(10):
        x = x + w * np.sin(x)
    return x


block = fgrad.checkpoint(steps)


def chain(x, w, blk, n=20):
    for _ in range(n):
        x = blk(x, w)
    return np.sum(x * x)


X = onp.linspace(-1.0, 1.0, 5)


# --- memory ---------------------------------------------------------------------------

def _grad_and_peak(blk, x):
    gc.collect()
    tracemalloc.start()
    try:
        g = fgrad.grad(chain, argnums=(0, 1))(x, 0.05, blk)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    return g, peak


def test_checkpointing_a_deep_chain_cuts_peak_memory_with_identical_gradients():
    x = onp.linspace(-1.0, 1.0, 4000)  # 32 kB per array; 20 blocks x 30 nodes
    g_plain, peak_plain = _grad_and_peak(steps, x)
    g_ckpt, peak_ckpt = _grad_and_peak(block, x)
    # the recomputation runs the same primitives on the same values: bit for bit the same;
    # w's 200 contributions are summed per block first, so only their rounding may differ
    onp.testing.assert_array_equal(g_ckpt[0], g_plain[0])
    assert abs(g_ckpt[1] - g_plain[1]) <= 1e-14 * abs(g_plain[1])
    ratio = peak_plain / peak_ckpt
    figure = (f"peak tape memory {peak_plain / 1e6:.2f} MB without checkpoint, "
              f"{peak_ckpt / 1e6:.2f} MB with it: {ratio:.1f}x less")
    print(figure)
    # 600 intermediates kept against 20 block inputs plus one block's 30 at a time
    assert ratio > 5, figure


def _five_sines(x):
    for _ in range(5):
        x = np.sin(x)
    return x


def test_the_recomputation_tape_keeps_no_copy_of_its_inputs():
    """4 checkpointed blocks of 5 sin steps on 250,000 floats: the peak, counted in arrays of
    the input's size, is 13 (measured with tracemalloc) against 22 without checkpoint. The
    recomputation's tape is made lean and without input copies (its inputs are values fgrad
    holds already); one that copied them peaked at 14."""
    blk = fgrad.checkpoint(_five_sines)
    x = onp.linspace(-1.0, 1.0, 250_000)

    def peak_in_arrays(b):
        gc.collect()
        tracemalloc.start()
        try:
            fgrad.grad(lambda x: np.sum(b(b(b(b(x))))))(x)
            return tracemalloc.get_traced_memory()[1] / x.nbytes
        finally:
            tracemalloc.stop()

    plain, ckpt = peak_in_arrays(_five_sines), peak_in_arrays(blk)
    assert ckpt < 13.5 and plain > 20, (plain, ckpt)


# --- the same derivatives as the plain function, in every mode --------------------------

W = onp.array([0.3, -0.2, 0.5, 0.1, 0.4])


@pytest.mark.parametrize("name, run", [
    ("grad", lambda f: fgrad.grad(lambda x, w: np.sum(f(x, w) ** 2), argnums=(0, 1))(X, W)),
    ("vjp", lambda f: fgrad.vjp(f, X, W)[1](onp.arange(5.0))),
    ("jvp", lambda f: fgrad.jvp(f, (X, W), (onp.ones(5), onp.arange(5.0)))),
    ("linearize", lambda f: fgrad.linearize(f, X, W)[1](onp.ones(5), onp.arange(5.0))),
    ("jacfwd", lambda f: fgrad.jacfwd(f, argnums=(0, 1))(X, W)),
    ("jacrev", lambda f: fgrad.jacrev(f, argnums=(0, 1))(X, W)),
    ("hessian", lambda f: fgrad.hessian(lambda x: np.sum(f(x, W) ** 2))(X)),
    ("grad of grad", lambda f: fgrad.grad(lambda w: np.sum(
        fgrad.grad(lambda x: np.sum(f(x, w) ** 3))(X)))(W)),
])
def test_every_transform_gives_the_plain_functions_result(name, run):
    got, want = fgrad.tree_flatten(run(block))[0], fgrad.tree_flatten(run(steps))[0]
    for g, w in zip(got, want):
        onp.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def test_checkpointed_block_agrees_with_finite_differences_to_third_order():
    assert check_grads(block, (X, W), order=3) < 1e-5


def test_checkpoints_nest():
    outer = fgrad.checkpoint(lambda x, w: block(block(x, w), w) * 2.0)
    plain = lambda x, w: steps(steps(x, w), w) * 2.0  # noqa: E731
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        onp.testing.assert_allclose(jac(outer)(X, W), jac(plain)(X, W), rtol=1e-13,
                                    atol=1e-15)
    assert check_grads(outer, (X, W), order=2) < 1e-5


def test_recomputes_once_per_backward_pass():
    runs = []

    @fgrad.checkpoint
    def f(x):
        runs.append(1)
        return np.sin(x) * x

    out, f_vjp = fgrad.vjp(f, X)
    assert len(runs) == 1          # the forward pass
    ct1, = f_vjp(onp.ones(5))
    ct2, = f_vjp(onp.ones(5))
    assert len(runs) == 3          # once more per backward pass
    onp.testing.assert_array_equal(ct1, onp.cos(X) * X + onp.sin(X))
    onp.testing.assert_array_equal(ct2, ct1)


# --- arguments and outputs ----------------------------------------------------------------

def test_pytrees_with_non_float_leaves_pass_through():
    @fgrad.checkpoint
    def f(params, n, name, act):
        assert isinstance(n, int) and name == "layer" and act is np.tanh
        h = params["x"]
        for _ in range(n):
            h = act(params["w"] * h)
        return {"h": h, "n": n, "name": name}, None

    p = {"x": X, "w": 0.7}
    out = f(p, 3, "layer", np.tanh)
    assert out[0]["n"] == 3 and out[0]["name"] == "layer" and out[1] is None
    g = fgrad.grad(lambda p: np.sum(f(p, 3, "layer", np.tanh)[0]["h"]))(p)
    want = fgrad.grad(lambda p: np.sum(np.tanh(p["w"] * np.tanh(p["w"] * np.tanh(
        p["w"] * p["x"])))))(p)
    onp.testing.assert_allclose(g["x"], want["x"], rtol=1e-14)
    assert abs(g["w"] - want["w"]) < 1e-14


def test_keyword_arguments_are_passed_as_given_and_may_be_traced():
    @fgrad.checkpoint
    def f(x, scale=2.0, *, shift=0.0):
        return np.sin(x) * scale + shift

    assert f.__name__ == "f" and repr(f) == "<fgrad.checkpoint(f)>"
    g = fgrad.grad(lambda s, b: np.sum(f(X, scale=s, shift=b)), argnums=(0, 1))(3.0, 0.5)
    assert abs(g[0] - onp.sum(onp.sin(X))) < 1e-15 and g[1] == 5.0
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.sum(f(x)))(X), 2 * onp.cos(X))


def test_float32_stays_float32():
    x32, w32 = X.astype(onp.float32), onp.float32(0.1)
    assert block(x32, w32).dtype == onp.float32
    assert fgrad.grad(lambda x: np.sum(block(x, w32)))(x32).dtype == onp.float32
    assert fgrad.jvp(lambda x: block(x, w32), (x32,), (x32,))[1].dtype == onp.float32


# --- what recomputation cannot honour -------------------------------------------------------

def test_a_function_that_draws_random_numbers_is_refused_on_the_backward_pass():
    noisy = fgrad.checkpoint(lambda x: x * onp.random.default_rng().random(5))
    with pytest.raises(ValueError, match=r"fgrad.checkpoint\(<lambda>\): running the function "
                                         "again on the backward pass gave a different output "
                                         r"\(leaf 0\) from the forward pass"):
        fgrad.grad(lambda x: np.sum(noisy(x)))(X)


def test_a_staged_gradient_through_a_checkpoint_traces_once_and_still_checks():
    # the check read the outputs' values: under jit a guard on them, a trace per call
    def f(x):
        return np.sum(block(x, 0.1) ** 2)

    staged = fgrad.jit(fgrad.grad(f))
    for x in (X, 2 * X, X - 1):
        onp.testing.assert_array_equal(staged(x), fgrad.grad(f)(x))
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1
    noisy = fgrad.checkpoint(lambda x: x * np.random.uniform(size=5))
    with pytest.raises(ValueError, match="gave a different output"):
        fgrad.jit(fgrad.grad(lambda x: np.sum(noisy(x))))(X)


# --- closures: traced values the function closes over become arguments (as in JAX) -----

def closing(x, w):
    """``steps`` checkpointed with its weights read from the enclosing scope."""
    return fgrad.checkpoint(lambda h: steps(h, w))(x)


class _Layer:
    def __init__(self, w):
        self.w = w

    def __call__(self, h):  # (the tracer is an attribute: found by running the function)
        return steps(h, self.w)


def through_an_attribute(x, w):
    return fgrad.checkpoint(_Layer(w))(x)


X2 = onp.stack([X, X[::-1] * 0.5, X + 0.25])
_loss = lambda f: lambda x, w: np.sum(f(x, w) ** 2)  # noqa: E731


@pytest.mark.parametrize("name, run", [
    ("grad", lambda f: fgrad.grad(_loss(f), argnums=(0, 1))(X, W)),
    ("jvp", lambda f: fgrad.jvp(f, (X, W), (onp.ones(5), onp.arange(5.0)))),
    ("jacfwd", lambda f: fgrad.jacfwd(f, argnums=(0, 1))(X, W)),
    ("jacrev", lambda f: fgrad.jacrev(f, argnums=(0, 1))(X, W)),
    ("hessian", lambda f: fgrad.hessian(_loss(f), argnums=1)(X, W)),
    ("vmap of grad", lambda f: fgrad.vmap(fgrad.grad(_loss(f), argnums=1), (0, None))(X2, W)),
    ("jit of grad", lambda f: fgrad.jit(fgrad.grad(_loss(f), argnums=(0, 1)))(X, W)),
    ("grad of jit", lambda f: fgrad.grad(fgrad.jit(_loss(f)), argnums=(0, 1))(X, W)),
    ("only the closure traced", lambda f: fgrad.grad(lambda w: np.sum(f(X, w)))(W)),
])
@pytest.mark.parametrize("f", [closing, through_an_attribute])
def test_a_closure_over_traced_values_gives_the_plain_functions_derivatives(f, name, run):
    got, want = fgrad.tree_flatten(run(f))[0], fgrad.tree_flatten(run(steps))[0]
    assert len(got) == len(want)
    for g, w in zip(got, want):
        onp.testing.assert_allclose(g, w, rtol=1e-13, atol=1e-15)


def test_a_closure_over_traced_values_keeps_the_memory_saving():
    """The closed-over weights found in the lambda's closure before any run: nothing of the
    block's inside is recorded on the outer tape (a first run on plain values, failing on
    the closure, would record all of it: 14.6 MB, more than without checkpoint)."""
    x = onp.linspace(-1.0, 1.0, 4000)
    g_plain, peak_plain = _grad_and_peak(steps, x)
    g_ckpt, peak_ckpt = _grad_and_peak(closing, x)
    onp.testing.assert_array_equal(g_ckpt[0], g_plain[0])
    assert abs(g_ckpt[1] - g_plain[1]) <= 1e-14 * abs(g_plain[1])
    assert peak_plain / peak_ckpt > 5, (peak_plain, peak_ckpt)


def test_a_closure_runs_the_function_once():
    runs = []

    def loss(w):
        def inside(h):
            runs.append(1)
            return np.sin(w * h)
        return np.sum(fgrad.checkpoint(inside)(X))

    g = fgrad.grad(loss)(0.5)
    assert len(runs) == 1  # staged once; the backward pass recomputes from the graph
    onp.testing.assert_allclose(g, onp.sum(X * onp.cos(0.5 * X)), rtol=1e-14)


def test_closures_nest_and_agree_with_finite_differences():
    def outer(x, w):
        inner = lambda h: closing(h, w) * w  # noqa: E731
        return fgrad.checkpoint(lambda h: inner(inner(h)))(x)

    def plain(x, w):
        return steps(steps(x, w) * w, w) * w

    for jac in (fgrad.jacfwd, fgrad.jacrev):
        onp.testing.assert_allclose(jac(outer, argnums=1)(X, W), jac(plain, argnums=1)(X, W),
                                    rtol=1e-13, atol=1e-15)
    assert check_grads(outer, (X, W), order=2) < 1e-5


@pytest.mark.parametrize("inner, plain", [
    # a branch on the closed-over value, read by Python (both branches)
    (lambda w: lambda h: np.sin(h * w) if w > 0 else h * w,
     lambda h, w: np.sin(h * w) if w > 0 else h * w),
    # a transform inside, closing over it too
    (lambda w: lambda h: fgrad.grad(lambda v: np.sum(np.sin(v * w)))(h),
     lambda h, w: fgrad.grad(lambda v: np.sum(np.sin(v * w)))(h)),
    # the closed-over value returned as it is, and computed on alone
    (lambda w: lambda h: (h * 2.0, w, np.exp(w)), lambda h, w: (h * 2.0, w, np.exp(w))),
])
def test_a_closure_read_by_python_transformed_inside_or_returned(inner, plain):
    x = onp.linspace(0.1, 1.0, 5)
    for w0 in (0.5, -0.5):
        got = fgrad.jacfwd(lambda w: fgrad.checkpoint(inner(w))(x))(w0)
        want = fgrad.jacfwd(lambda w: plain(x, w))(w0)
        for g, v in zip(fgrad.tree_flatten(got)[0], fgrad.tree_flatten(want)[0]):
            onp.testing.assert_allclose(g, v, rtol=1e-14)
        got = fgrad.grad(lambda w: sum(np.sum(o) for o in
                                       fgrad.tree_flatten(fgrad.checkpoint(inner(w))(x))[0]))(w0)
        want = fgrad.grad(lambda w: sum(np.sum(o) for o in
                                        fgrad.tree_flatten(plain(x, w))[0]))(w0)
        onp.testing.assert_allclose(got, want, rtol=1e-14)


def test_closed_over_plain_values_and_pytrees():
    params = {"w": W, "b": 0.1}

    def loss(params, x):
        # a dict of traced values closed over, a plain array too, keywords and statics
        scale = onp.arange(5.0)
        blk = fgrad.checkpoint(lambda h, n, *, c: steps(h, params["w"]) * scale * c
                               + params["b"] * n, static_argnums=1)
        return np.sum(blk(x, 3, c=2.0) ** 2)

    def plain(params, x):
        return np.sum((steps(x, params["w"]) * onp.arange(5.0) * 2.0 + params["b"] * 3) ** 2)

    got, want = fgrad.grad(loss)(params, X), fgrad.grad(plain)(params, X)
    onp.testing.assert_allclose(got["w"], want["w"], rtol=1e-13)
    onp.testing.assert_allclose(got["b"], want["b"], rtol=1e-13)


def test_a_closure_whose_python_reads_a_value_differing_across_vmap_says_what_to_do():
    def branchy(h, w):
        if float(np.sum(fgrad.stop_gradient(h))) > 0:  # (h's examples take both branches)
            return np.tanh(h * w)
        return h * w

    def closing_branchy(h, w):
        return fgrad.checkpoint(lambda h: branchy(h, w))(h)

    H, Ws = onp.stack([X + 2.0, X - 2.0]), onp.stack([W, 2.0 * W])
    with pytest.raises(fgrad.GuardError, match=r"fgrad.checkpoint\(<lambda>\): the function "
                       r"closes over a traced value, .* Pass the closed-over values as "
                       r"arguments, checkpoint\(lambda x, w: \.\.\.\)\(x, w\)"):
        fgrad.vmap(closing_branchy)(H, Ws)
    # passed as arguments, the function runs again on each example
    got = fgrad.vmap(fgrad.checkpoint(branchy))(H, Ws)
    onp.testing.assert_array_equal(got, [branchy(h, w) for h, w in zip(H, Ws)])


def test_custom_rules_still_refuse_a_closure():
    # (their rules cannot see a closed-over value; a checkpoint's recomputation can)
    def loss(w):
        f = fgrad.custom_jvp(lambda h: np.tanh(w * h))
        f.defjvp(lambda primals, tangents: (f(*primals), tangents[0]))
        return np.sum(f(X))

    with pytest.raises(fgrad.ClosedOverTracerError,
                       match=r"custom_jvp function <lambda> closed over a traced value"):
        fgrad.grad(loss)(0.5)


def test_checkpoint_takes_a_function():
    with pytest.raises(TypeError, match="fgrad.checkpoint takes a function, got int"):
        fgrad.checkpoint(3)


def test_jaxs_keywords_static_argnums_prevent_cse_and_policy():
    def layers(x, n, act):
        for _ in range(n):
            x = act(0.9 * x + 0.1)
        return np.sum(x)

    x = onp.linspace(-1.0, 1.0, 4)
    block = fgrad.checkpoint(layers, static_argnums=(1, 2), prevent_cse=False)
    want = fgrad.grad(layers)(x, 3, np.tanh)
    onp.testing.assert_array_equal(fgrad.grad(block)(x, 3, np.tanh), want)
    onp.testing.assert_array_equal(
        fgrad.jit(fgrad.grad(block), static_argnums=(1, 2))(x, 3, np.tanh), want)
    onp.testing.assert_allclose(fgrad.jacfwd(block)(x, 2, np.sin),
                                fgrad.jacfwd(layers)(x, 2, np.sin), rtol=1e-14)
    with pytest.raises(TypeError, match=r"fgrad.checkpoint\(layers\): argument 1 is in "
                                        r"static_argnums but holds a traced value"):
        fgrad.grad(lambda n: block(x, n, np.tanh))(2.0)
    with pytest.raises(ValueError, match="static_argnums must be non-negative ints"):
        fgrad.checkpoint(layers, static_argnums=-1)
    with pytest.raises(NotImplementedError, match="policy=.*nothing_saveable"):
        fgrad.checkpoint(layers, policy=lambda *a, **k: False)
