"""The seams between transforms (issue 30): each reproduction of the issue, asserting the
right number or the same error as the transform of ``f`` itself gives.

The generated side is ``tests/test_compositions.py`` (every table entry under every
composition); these are the programs users wrote that found the classes of bugs.
"""
import functools
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
import fgrad.scipy.special as sp
from fgrad.core.errors import ConcretizationError

RNG = onp.random.default_rng(30)


def _loop(f, xs):
    return onp.stack([onp.asarray(f(x)) for x in xs])


# --- 1. a transform of jit(f) gives what the transform of f gives --------------------------

CONVERSIONS = {
    "math.sin": lambda x: math.sin(x) + x,
    "float": lambda x: float(x) * x,
    "item": lambda x: x.item() * x,
    "numpy.asarray": lambda x: onp.asarray(x) * x,
    "int": lambda x: int(x) * x,
}


@pytest.mark.parametrize("how", sorted(CONVERSIONS))
@pytest.mark.parametrize("outer", ["grad", "jvp", "jacfwd", "jacrev", "hessian", "jet", "vmap"])
@pytest.mark.parametrize("staged", ["jit", "make_graph"])
def test_a_concretisation_under_a_staged_function_raises_as_it_does_eagerly(how, outer,
                                                                            staged):
    f = CONVERSIONS[how]
    x = onp.float64(0.5)

    def under(g):
        return {"grad": lambda: fgrad.grad(g)(x),
                "jvp": lambda: fgrad.jvp(g, (x,), (1.0,)),
                "jacfwd": lambda: fgrad.jacfwd(g)(x),
                "jacrev": lambda: fgrad.jacrev(g)(x),
                "hessian": lambda: fgrad.hessian(g)(x),
                "jet": lambda: fgrad.jet(g, (x,), ([1.0, 0.0],)),
                "vmap": lambda: fgrad.vmap(g)(onp.array([x, 2 * x]))}[outer]()

    with pytest.raises(ConcretizationError) as eager:
        under(f)
    g = fgrad.jit(f) if staged == "jit" else fgrad.make_graph(f)(x)
    with pytest.raises(ConcretizationError) as composed:
        under(g)
    assert str(composed.value) == str(eager.value)
    if staged == "jit":
        assert f(x) == g(x)  # (the staged function itself runs: the conversion is a guard)


def test_the_issues_jitted_likelihood_raises_instead_of_a_wrong_gradient():
    data = onp.array([0.3, -1.2, 0.8, 2.0])

    def nll(theta):
        mu, log_sigma = theta[0], theta[1]
        sigma = math.exp(log_sigma)  # the user's mistake: math on a traced value
        return np.sum(((data - mu) / sigma) ** 2) / 2 + data.size * log_sigma

    theta = onp.array([0.1, 0.2])
    with pytest.raises(ConcretizationError):
        fgrad.grad(nll)(theta)
    step = fgrad.grad(fgrad.jit(nll))
    for _ in range(9):  # (never a number, on the first call or after the cache fills)
        with pytest.raises(ConcretizationError):
            step(theta)
        theta = theta - 0.01


def test_a_branch_on_a_value_keeps_working_under_every_transform_of_jit():
    def f(x):
        return np.sin(x) if x > 0 else x ** 3

    g = fgrad.jit(f)
    for x in (0.7, -0.7):
        assert fgrad.grad(g)(x) == fgrad.grad(f)(x)
        assert fgrad.jvp(g, (x,), (1.0,)) == fgrad.jvp(f, (x,), (1.0,))
    with pytest.raises(ConcretizationError):  # (a branch on a batch, as under vmap(f))
        fgrad.vmap(g)(onp.array([0.7, -0.7]))


def test_grad_of_jit_keeps_a_stop_gradient_and_a_cast_to_integers_constant():
    x = onp.array([2.5, 3.5])
    for f in (lambda x: np.sum(x * fgrad.stop_gradient(x)),
              lambda x: np.sum(x * np.astype(x, int))):
        onp.testing.assert_array_equal(fgrad.grad(fgrad.jit(f))(x), fgrad.grad(f)(x))
        onp.testing.assert_array_equal(fgrad.grad(fgrad.make_graph(f)(x))(x),
                                       fgrad.grad(f)(x))


class _Model:
    def __init__(self, w):
        self.w = w


# Programs calling a jit made inside the differentiated function (``stage(g)`` is the jit),
# which reaches the outer transform's value ``x`` other than through its arguments.
CLOSURES = {
    "a closure": lambda stage, x: stage(lambda y: np.sin(x) * y)(onp.arange(3.0)),
    "an output of the closure only": lambda stage, x: stage(lambda y: (x + 1.0, y))(2.0)[0],
    "in a list": lambda stage, x: stage(lambda y: np.stack([x, y]) ** 2)(onp.ones(3)),
    "also as its argument": lambda stage, x: (lambda g: g(x) + g(3.0))(stage(lambda y: x * y)),
    "a partial": lambda stage, x: stage(functools.partial(
        lambda w, y: np.tanh(w * y), x))(onp.arange(3.0)),
    "an attribute": lambda stage, x: stage(lambda m, y: np.exp(m.w) / y)(_Model(x), 2.0),
    "called twice, a jit inside": lambda stage, x: sum(
        stage(lambda y: stage(lambda z: z * x)(y) + x)(onp.full(3, k)) for k in (1.0, 2.0)),
}

OUTER = {
    "grad": lambda f: fgrad.grad(lambda x: np.sum(f(x))),
    "jvp": lambda f: lambda x: fgrad.jvp(f, (x,), (onp.linspace(0.5, 1.5, 3),)),
    "vmap": lambda f: lambda x: fgrad.vmap(f)(onp.stack([x, 2 * x])),
    "hessian": lambda f: fgrad.hessian(lambda x: np.sum(f(x))),
    "jacfwd": fgrad.jacfwd,
    "jacrev": fgrad.jacrev,
    "linearize": lambda f: lambda x: fgrad.linearize(f, x)[1](onp.ones(3)),
    "jet": lambda f: lambda x: fgrad.jet(f, (x,), ([onp.ones(3), onp.zeros(3)],)),
    "vmap(grad)": lambda f: fgrad.vmap(fgrad.grad(lambda x: np.sum(f(x)))),
    "jit(grad)": lambda f: fgrad.jit(fgrad.grad(lambda x: np.sum(f(x)))),
}


@pytest.mark.parametrize("outer", sorted(OUTER))
@pytest.mark.parametrize("program", sorted(CLOSURES))
def test_a_jit_closing_over_an_outer_transforms_value_gives_what_the_function_gives(program,
                                                                                      outer):
    # (JAX stages the closure's tracers as inputs; fgrad runs such a function eagerly under
    # the transforms: it was a ClosedOverTracerError, or an escaped staging tracer where the
    # closure's value was returned as it came)
    prog = CLOSURES[program]
    x = onp.array([0.3, -0.7, 1.1])
    if outer == "vmap(grad)":
        x = onp.stack([x, 2 * x])
    want = OUTER[outer](lambda x: prog(lambda g: g, x))(x)
    got = OUTER[outer](lambda x: prog(fgrad.jit, x))(x)
    for w, g in zip(*(fgrad.tree_util.tree_leaves(t) for t in (want, got))):
        onp.testing.assert_array_equal(g, w)
    assert len(fgrad.tree_util.tree_leaves(got)) == len(fgrad.tree_util.tree_leaves(want))


def test_a_graph_returning_an_outer_transforms_value_says_so():
    with pytest.raises(fgrad.ClosedOverTracerError, match="make_graph: an output closed over"):
        fgrad.grad(lambda x: fgrad.make_graph(lambda y: x * 2.0)(1.0))(3.0)


# --- 2. random draws under vmap --------------------------------------------------------------

def test_vmap_draws_per_example_as_the_loop_does():
    f = lambda x: x + np.random.normal(size=3)  # noqa: E731
    xs = onp.zeros((6, 3))
    np.random.seed(0)
    batched = fgrad.vmap(f)(xs)
    np.random.seed(0)
    onp.testing.assert_array_equal(batched, _loop(f, xs))
    assert len({tuple(row) for row in batched}) == 6
    np.random.seed(0)  # (jit inside vmap, and a draw with a batched argument, the same)
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.jit(f))(xs), batched)
    locs = onp.array([0.0, 100.0, 200.0])
    np.random.seed(1)
    a = fgrad.vmap(lambda m: np.random.normal(loc=m))(locs)
    np.random.seed(1)
    onp.testing.assert_array_equal(a, [onp.random.normal(loc=m) for m in locs])


def test_per_example_dropout_gradients_differ_by_example():
    w = onp.ones(4)

    def loss(w, x):
        keep = np.random.uniform(size=4) < 0.5
        return np.sum(np.where(keep, w * x, 0.0))

    np.random.seed(3)
    grads = fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0))(w, onp.ones((8, 4)))
    np.random.seed(3)
    onp.testing.assert_array_equal(grads, _loop(lambda x: fgrad.grad(loss)(w, x),
                                                onp.ones((8, 4))))
    assert len({tuple(g) for g in grads}) > 1


def test_a_jitted_function_of_unbatched_values_inside_vmap(monkeypatch):
    # without draws it runs its generated code (it went node by node: an ODE's system under
    # jacfwd, which scipy calls at every step for each example, 5.7x slower); with draws it
    # still draws per example, as the loop does
    from fgrad.traces.graph import Graph
    c, xs = onp.arange(3.0), onp.ones((4, 3))
    calm = fgrad.jit(lambda c: np.sin(c) * 2.0)
    noisy = fgrad.jit(lambda c: c + np.random.normal())
    with monkeypatch.context() as m:
        m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
        for _ in range(3):  # (the first call, the passes and code, a replay)
            onp.testing.assert_array_equal(fgrad.vmap(lambda x: x * calm(c))(xs),
                                           xs * (onp.sin(c) * 2.0))
    for _ in range(3):
        np.random.seed(0)
        got = fgrad.vmap(lambda x: x + noisy(c))(xs)
        np.random.seed(0)
        onp.testing.assert_array_equal(got, [x + c + onp.random.normal() for x in xs])


def test_a_jitted_vmap_draws_anew_at_each_call():
    f = fgrad.jit(fgrad.vmap(lambda x: x + np.random.normal()))
    a, b = f(onp.zeros(3)), f(onp.zeros(3))
    assert len(set(a)) == 3 and not onp.array_equal(a, b)


# --- 3. numpy.matrix, refused by every trace ---------------------------------------------

@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
@pytest.mark.parametrize("transform", ["grad", "jvp", "jet", "vmap", "jit", "hessian"])
def test_a_numpy_matrix_constant_is_refused_by_every_transform(transform):
    m = onp.matrix([[1.0, 2.0], [3.0, 4.0]])
    x = onp.ones((2, 2))
    f = lambda x: x * m  # noqa: E731
    run = {"grad": lambda: fgrad.grad(lambda x: np.sum(f(x)))(x),
           "jvp": lambda: fgrad.jvp(f, (x,), (x,)),
           "jet": lambda: fgrad.jet(f, (x,), ([x],)),
           "vmap": lambda: fgrad.vmap(f)(onp.ones((3, 2, 2))),
           "jit": lambda: fgrad.jit(f)(x),
           "hessian": lambda: fgrad.hessian(lambda x: np.sum(f(x)))(x)}[transform]
    with pytest.raises(TypeError, match="numpy.matrix, which fgrad does not differentiate"):
        run()


# --- 4. vmap(jit(f)) traces on the batch's values -------------------------------------------

def test_vmap_of_jit_traces_on_an_example_not_on_zeros():
    X = RNG.normal(size=(4, 3, 3))
    onp.testing.assert_allclose(fgrad.vmap(fgrad.jit(np.linalg.inv))(X), onp.linalg.inv(X),
                                rtol=1e-12)
    # a branch on a batched value raises as under vmap(f), never a side taken from zeros
    f = lambda x: np.sum(x) if np.sum(x) > 0 else -np.sum(x)  # noqa: E731
    xs = onp.array([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(ConcretizationError) as eager:
        fgrad.vmap(f)(xs)
    with pytest.raises(ConcretizationError) as staged:
        fgrad.vmap(fgrad.jit(f))(xs)
    assert str(staged.value) == str(eager.value)


@pytest.mark.parametrize("name", ["sort", "norm", "qr", "pad", "cov", "median"])
def test_vmap_of_jit_of_grad_equals_the_loop(name):
    f = {"sort": lambda x: np.sum(np.sort(x) * onp.arange(4.0)),
         "norm": lambda x: np.linalg.norm(x),
         "qr": lambda x: np.sum(np.linalg.qr(np.reshape(x, (2, 2)))[1]),
         "pad": lambda x: np.sum(np.pad(x, 1, mode="reflect") ** 2),
         "cov": lambda x: np.sum(np.cov(np.reshape(x, (2, 2)))),
         "median": lambda x: np.median(x)}[name]
    xs = RNG.normal(size=(5, 4))
    want = _loop(fgrad.grad(f), xs)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.jit(fgrad.grad(f)))(xs), want, rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jit(fgrad.vmap(fgrad.grad(f)))(xs), want, rtol=1e-12)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(xs), want, rtol=1e-12)


# --- 5. replays bit for bit -------------------------------------------------------------------

def test_jit_replays_of_derivatives_through_products_are_bit_for_bit():
    for f in (lambda x: np.prod(np.cos(x)), lambda x: np.sum(np.cumprod(x)),
              lambda x: np.sum(np.sin(x) * x ** 2) + np.prod(np.cos(x))):
        staged = fgrad.jit(lambda x, f=f: fgrad.jvp(f, (x,), (onp.ones(3),)))
        for x in RNG.normal(size=(4, 3)):
            got, want = staged(x), fgrad.jvp(f, (x,), (onp.ones(3),))
            assert got[0] == want[0] and got[1] == want[1]


def test_jit_replays_equal_eager_bit_for_bit_through_the_issues_cases():
    import fgrad.scipy.linalg as sl
    f = lambda A, b: np.sum(sl.cho_solve(sl.cho_factor(A), b) ** 2)  # noqa: E731
    g = fgrad.grad(f, argnums=(0, 1))
    staged = fgrad.jit(g)
    power = fgrad.jit(lambda x, y: x ** y + x)
    w = onp.array([0.5 - 1j, 2.0 + 0.25j, -1.0 + 0.5j])
    product = fgrad.grad(lambda z: np.real(np.sum(z * w * z)))
    expand = lambda z: fgrad.jet(lambda z: np.sum(np.exp(z) * z), (z,),  # noqa: E731
                                 ([w, onp.zeros(3, complex)],))
    for _ in range(20):
        A = RNG.normal(size=(3, 3))
        A = A @ A.T + 3 * onp.eye(3)
        for M in (A, onp.asfortranarray(A)):  # (the tape keeps an input's memory order)
            b = RNG.normal(size=3)
            for got, want in zip(staged(M, b), g(M, b)):
                onp.testing.assert_array_equal(got, want)
        x, y = onp.float64(RNG.uniform(0.5, 2.0)), onp.float64(RNG.uniform(-2.0, 2.0))
        # (numpy's ``**`` on scalars, the C library's pow, not numpy.power: a last bit apart
        # on CPUs with AVX-512; a traced ``**`` is numpy's operator, ``power_operator``)
        assert power(x, y) == x ** y + x
        assert fgrad.jit(lambda x, y: np.power(x, y) + x)(x, y) == onp.power(x, y) + x
        z = RNG.normal(size=3) + 1j * RNG.normal(size=3)
        onp.testing.assert_array_equal(fgrad.jit(product)(z), product(z))
        got, want = fgrad.jit(expand)(z), expand(z)
        onp.testing.assert_array_equal(got[0], want[0])
        for a, b in zip(got[1], want[1]):
            onp.testing.assert_array_equal(a, b)


def test_staged_derivatives_of_complex_scalar_code_equal_eager_bit_for_bit():
    # numpy multiplies and divides complex scalars by another formula than the ufunc's loop
    # (a last bit apart in about half of all products); a rule calling the primitive on
    # complex scalars ran the ufunc where its replay ran numpy's operator, so jvp(jit(f)),
    # jit(jet(f)) and jet(jit(f)) could be a last bit off eager jvp and jet
    def f(x):
        z = x[0] + 1j * x[1]
        w = np.exp(z) * np.conj(z) + z * z / (1 + np.abs(z))
        return np.real(w) + np.imag(w) ** 2 + np.angle(z)

    def expand(x, t1, t2):
        return fgrad.jet(f, (x,), ((t1, t2),))

    staged, staged_expand = fgrad.jit(f), fgrad.jit(expand)
    for x, t1, t2 in RNG.normal(size=(8, 3, 2)):
        assert fgrad.jvp(lambda a: staged(a), (x,), (t1,)) == fgrad.jvp(f, (x,), (t1,))
        want = expand(x, t1, t2)
        for got in (staged_expand(x, t1, t2), fgrad.jet(lambda a: staged(a), (x,), ((t1, t2),))):
            assert got[0] == want[0] and list(got[1]) == list(want[1])


# --- 6-10: crashes on valid input -------------------------------------------------------------

@pytest.mark.parametrize("fn", ["median", "percentile", "quantile", "nanmedian", "unwrap"])
def test_derivatives_of_jit_and_of_vmap_through_internal_weight_primitives(fn):
    f = {"median": lambda x: np.median(x), "percentile": lambda x: np.percentile(x, 30.0),
         "quantile": lambda x: np.quantile(x, 0.3), "nanmedian": lambda x: np.nanmedian(x),
         "unwrap": lambda x: np.sum(np.unwrap(x) ** 2)}[fn]
    x = onp.array([0.3, 2.9, -1.4, 5.2, 0.8])
    want = fgrad.grad(f)(x)
    onp.testing.assert_array_equal(fgrad.grad(fgrad.jit(f))(x), want)
    onp.testing.assert_array_equal(fgrad.jacrev(fgrad.jit(f))(x), want)
    onp.testing.assert_array_equal(fgrad.jvp(fgrad.jit(f), (x,), (onp.ones(5),))[1],
                                   fgrad.jvp(f, (x,), (onp.ones(5),))[1])
    xs = onp.stack([x, x[::-1]])
    onp.testing.assert_allclose(fgrad.grad(lambda X: np.sum(fgrad.vmap(f)(X)))(xs),
                                _loop(fgrad.grad(f), xs), rtol=1e-12)


def test_jvp_of_jit_of_partition():
    x = onp.array([3.0, 1.0, 2.0, 5.0, 4.0])
    t = onp.arange(5.0)
    got = fgrad.jvp(fgrad.jit(lambda x: np.partition(x, 2)), (x,), (t,))
    want = fgrad.jvp(lambda x: np.partition(x, 2), (x,), (t,))
    onp.testing.assert_array_equal(got[0], want[0])
    onp.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("fn", [np.round, np.sign, np.floor, np.nanmean, np.linalg.norm])
def test_grad_of_a_sum_over_vmap_of_zero_derivative_and_masked_functions(fn):
    X = RNG.normal(size=(4, 3))
    got = fgrad.grad(lambda X: np.sum(fgrad.vmap(fn)(X)))(X)
    onp.testing.assert_allclose(got, _loop(fgrad.grad(lambda x: np.sum(fn(x))), X),
                                rtol=1e-12)


@pytest.mark.parametrize("fn", ["gamma", "beta", "rgamma"])
def test_jit_of_jet_of_gamma_and_beta(fn):
    f = {"gamma": sp.gamma, "rgamma": sp.rgamma, "beta": lambda x: sp.beta(x, 1.5)}[fn]
    x = onp.array([1.5, 2.0, 2.5])
    series = ([onp.ones(3), onp.zeros(3)],)
    staged = fgrad.jit(lambda x: fgrad.jet(f, (x,), series))
    for v in (x, x + 0.25):
        got, want = staged(v), fgrad.jet(f, (v,), series)
        onp.testing.assert_array_equal(got[0], want[0])
        for a, b in zip(got[1], want[1]):
            onp.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("fn", ["hypot", "logsumexp", "softmax", "erfinv", "ndtri", "sinc",
                                "det", "prod", "norm.pdf"])
def test_vmap_of_jet_where_a_taylor_rule_tests_values(fn):
    import fgrad.scipy.stats as stats
    f = {"hypot": lambda x: np.hypot(x, 2.0), "logsumexp": sp.logsumexp,
         "softmax": sp.softmax, "erfinv": lambda x: sp.erfinv(0.3 * x),
         "ndtri": lambda x: sp.ndtri(0.2 + 0.1 * x ** 2), "sinc": np.sinc,
         "det": lambda x: np.linalg.det(np.reshape(x, (2, 2)) + 2 * onp.eye(2)),
         "prod": np.prod, "norm.pdf": stats.norm.pdf}[fn]
    xs, ts = RNG.normal(size=(3, 4)), RNG.normal(size=(3, 4))

    def expand(x, t):
        return fgrad.jet(f, (x,), ([t, onp.zeros(4), onp.zeros(4)],))

    got = fgrad.vmap(expand)(xs, ts)
    for i in range(3):
        want = expand(xs[i], ts[i])
        onp.testing.assert_allclose(got[0][i], want[0], rtol=1e-12)
        for a, b in zip(got[1], want[1]):
            onp.testing.assert_allclose(a[i], b, rtol=1e-9, atol=1e-12)


def test_logsumexp_with_b_broadcasting_a_onto_more_axes():
    a = onp.array([0.2, -0.4, 1.1])
    b = onp.array([[1.0, 2.0, 0.5], [0.3, 1.0, 1.0]])
    f = lambda a: sp.logsumexp(a, b=b, axis=-1)  # noqa: E731
    t = onp.array([1.0, -0.5, 0.25])
    y, (y1, y2) = fgrad.jet(f, (a,), ([t, onp.zeros(3)],))
    _, want1 = fgrad.jvp(f, (a,), (t,))
    onp.testing.assert_allclose(y1, want1, rtol=1e-12)
    _, want2 = fgrad.jvp(lambda a: fgrad.jvp(f, (a,), (t,))[1], (a,), (t,))
    onp.testing.assert_allclose(y2, want2, rtol=1e-10)
    A = onp.stack([a, a[::-1]])
    got = fgrad.grad(lambda A: np.sum(fgrad.vmap(f)(A)))(A)
    onp.testing.assert_allclose(got, _loop(fgrad.grad(lambda a: np.sum(f(a))), A), rtol=1e-12)


# --- 11. vmap of derivatives whose rules once read values ------------------------------------

COMMON = {
    "logaddexp": lambda x: np.sum(np.logaddexp(x, 0.3)),
    "logaddexp2": lambda x: np.sum(np.logaddexp2(x, 0.3)),
    "hypot": lambda x: np.sum(np.hypot(x, 0.5)),
    "arctan2": lambda x: np.sum(np.arctan2(x, 0.5)),
    "sinc": lambda x: np.sum(np.sinc(x)),
    "prod": lambda x: np.prod(x),
    "cumprod": lambda x: np.sum(np.cumprod(x)),
    "mod": lambda x: np.sum(np.mod(3.0, x)),
    "fmod": lambda x: np.sum(np.fmod(3.0, x)),
    "copysign": lambda x: np.sum(np.copysign(x, -1.0)),
    "sigmoid": lambda x: np.sum(fgrad.nn.sigmoid(x)),
    "softplus": lambda x: np.sum(fgrad.nn.softplus(x)),
    "log_sigmoid": lambda x: np.sum(fgrad.nn.log_sigmoid(x)),
    "silu": lambda x: np.sum(fgrad.nn.silu(x)),
    "i0e": lambda x: np.sum(sp.i0e(x)),
    "i1e": lambda x: np.sum(sp.i1e(x)),
    "lambertw": lambda x: np.sum(np.real(sp.lambertw(x ** 2 + 0.1))),
    "logsumexp": lambda x: sp.logsumexp(x),
    "corrcoef": lambda x: np.sum(np.corrcoef(np.reshape(x, (2, 2)) + onp.eye(2))),
    "svd": lambda x: np.sum(np.linalg.svd(np.outer(x, x) + onp.eye(4))[1]),
    "eigh": lambda x: np.sum(np.linalg.eigh(np.outer(x, x) + onp.eye(4))[0] ** 2),
}


@pytest.mark.parametrize("name", sorted(COMMON))
@pytest.mark.parametrize("derivative", ["grad", "jacfwd", "jvp", "hessian"])
def test_vmap_of_a_derivative_of_common_functions_equals_the_loop(name, derivative):
    f = COMMON[name]
    d = {"grad": fgrad.grad(f), "jacfwd": fgrad.jacfwd(f), "hessian": fgrad.hessian(f),
         "jvp": lambda x: fgrad.jvp(f, (x,), (onp.ones(4),))[1]}[derivative]
    xs = RNG.uniform(0.2, 1.5, size=(3, 4)) * onp.array([1.0, -1.0, 1.0])[:, None]
    onp.testing.assert_allclose(fgrad.vmap(d)(xs), _loop(d, xs), rtol=1e-10, atol=1e-12)


def test_a_value_read_in_a_users_rule_under_vmap_says_it_is_the_rule():
    from fgrad.core.tracer import read_value
    p = fgrad.primitive(lambda x: onp.abs(x), name="my_abs_reading_its_sign")
    fgrad.defvjp(p, lambda g, ans, x: g * onp.sign(read_value(x)))
    fgrad.defjvp(p, lambda t, ans, x: t * onp.sign(read_value(x)))
    xs = onp.ones((2, 3))
    for run in (lambda: fgrad.vmap(fgrad.grad(lambda x: np.sum(p(x))))(xs),
                lambda: fgrad.vmap(lambda x: fgrad.jvp(p, (x,), (x,)))(xs)):
        with pytest.raises(ConcretizationError, match="read inside the [VJ]+P rule of "
                           "my_abs_reading_its_sign, a rule you registered"):
            run()


def test_per_example_logistic_regression_gradients():
    def loss(w, x, y):
        return np.logaddexp(0.0, -y * np.dot(x, w))

    w, X, Y = RNG.normal(size=3), RNG.normal(size=(6, 3)), onp.sign(RNG.normal(size=6))
    got = fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0, 0))(w, X, Y)
    onp.testing.assert_allclose(got, onp.stack([fgrad.grad(loss)(w, x, y)
                                                for x, y in zip(X, Y)]), rtol=1e-12)


# --- 12-13: vmap of value-dependent indexing --------------------------------------------------

def test_vmap_of_indexing_by_a_computed_order_and_of_average_and_vander():
    xs = RNG.normal(size=(4, 5))
    onp.testing.assert_array_equal(fgrad.vmap(lambda x: x[np.argsort(x)])(xs),
                                   onp.sort(xs, axis=1))
    ws = RNG.uniform(0.5, 1.5, size=(4, 5))
    onp.testing.assert_allclose(fgrad.vmap(lambda x, w: np.average(x, weights=w))(xs, ws),
                                [onp.average(x, weights=w) for x, w in zip(xs, ws)],
                                rtol=1e-12)
    onp.testing.assert_array_equal(fgrad.vmap(lambda x: np.vander(x, 1))(xs),
                                   _loop(lambda x: onp.vander(x, 1), xs))


def test_vmap_over_index_arrays_and_the_gradient_of_a_repeated_gather():
    X = RNG.normal(size=(4, 6))
    I = onp.array([[0, 2], [1, 1], [5, 0], [3, 3]])
    onp.testing.assert_array_equal(fgrad.vmap(lambda x, i: x[i] * 2.0)(X, I),
                                   onp.stack([x[i] * 2.0 for x, i in zip(X, I)]))
    x = X[0]
    f = lambda x, i: np.take(x, i) + np.take(x, (i + 1) % 6)  # noqa: E731
    idx = onp.array([0, 3, 5])
    onp.testing.assert_array_equal(fgrad.vmap(f, in_axes=(None, 0))(x, idx),
                                   [f(x, i) for i in idx])
    g = fgrad.vmap(fgrad.grad(lambda x, i: np.sum(x[i] ** 2)), in_axes=(None, 0))(x, I)
    want = onp.stack([fgrad.grad(lambda x: np.sum(x[i] ** 2))(x) for i in I])
    onp.testing.assert_array_equal(g, want)
    assert want[1][1] == 4 * x[1]  # (the repeated index accumulates: a scatter-add)


def _graphs(staged):
    """How many graphs a ``jit`` function traced, over all its signatures."""
    return sum(len(graphs) for graphs in staged.cache.values())


def test_a_tuple_index_holding_a_batched_or_staged_integer_array_is_a_gather():
    # the per-example cross-entropy's x[np.arange(n), labels]: vmap refused it, and jit
    # guarded the labels, tracing again for each new batch of them
    def xent(x, labels):
        return -np.sum(x[np.arange(4), labels] - np.log(np.sum(np.exp(x), axis=1)))

    X, L = RNG.normal(size=(5, 4, 3)), RNG.integers(0, 3, size=(5, 4))
    want = onp.stack([fgrad.grad(xent)(x, l) for x, l in zip(X, L)])
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(xent))(X, L), want)
    staged = fgrad.jit(fgrad.grad(xent))
    for x, l, w in zip(X, L, want):
        onp.testing.assert_array_equal(staged(x, l), w)
    assert _graphs(staged) == 1
    # numpy's placement of the indexed dimensions (adjacent: where they were; apart: first),
    # with slices, an Ellipsis, an int, None (a new axis, which separates as a slice does) and
    # negative indices beside them
    Y = RNG.normal(size=(2, 3, 4, 5, 6))
    I, J = RNG.integers(-3, 3, size=(2, 2)), RNG.integers(-4, 4, size=(2, 2))
    for index in [lambda i, j: (i, j), lambda i, j: (slice(None), i, j),
                  lambda i, j: (i, slice(None), j), lambda i, j: (Ellipsis, i, j),
                  lambda i, j: (slice(1, 3), i, slice(None, None, -1), j),
                  lambda i, j: (0, slice(None), i), lambda i, j: (i, Ellipsis, j),
                  lambda i, j: (i[:, None], slice(None), j[None, :]),
                  lambda i, j: (i, None, j), lambda i, j: (None, i, j),
                  lambda i, j: (slice(None), i, None, j), lambda i, j: (i, Ellipsis, None),
                  lambda i, j: (None, Ellipsis, i, j), lambda i, j: (i[0], None)]:
        def f(y, i, j):
            return np.sin(y[index(i, j)])

        want = onp.stack([onp.sin(y[index(i, j)]) for y, i, j in zip(Y, I, J)])
        onp.testing.assert_array_equal(fgrad.vmap(f)(Y, I, J), want)
        onp.testing.assert_array_equal(fgrad.jit(f)(Y[0], I[0], J[0]), want[0])
        loss = lambda y, i, j: np.sum(f(y, i, j) ** 2)  # noqa: E731
        onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(loss))(Y, I, J),
                                       onp.stack([fgrad.grad(loss)(y, i, j)
                                                  for y, i, j in zip(Y, I, J)]))
    # an index out of bounds is numpy's IndexError, on a batch and on a replay
    with pytest.raises(IndexError, match="index 9 is out of bounds for axis with size 4"):
        fgrad.vmap(lambda y, i: y[0, i])(Y, onp.array([[1], [9]]))
    staged = fgrad.jit(lambda y, i: y[0, i])
    staged(Y[0], onp.array([1, -4]))
    with pytest.raises(IndexError, match="index -5 is out of bounds for axis with size 4"):
        staged(Y[0], onp.array([1, -5]))


def test_a_plain_array_indexed_by_staged_indices_under_grad_of_jit():
    # piecewise-linear interpolation by hand: numpy tries the staged index array's __index__,
    # which fails, before its __array__; the failed try was kept as a guard, and every
    # replay of the graph under grad raised numpy's TypeError
    knots, q = onp.array([0.0, 0.5, 1.2, 2.0, 3.0]), onp.array([0.2, 0.9, 1.7, 2.5])

    def f(x):
        vals = np.cumsum(np.exp(x))
        i = np.searchsorted(knots, q) - 1
        w = (q - knots[i]) / (knots[i + 1] - knots[i])
        return np.sum((1 - w) * vals[i] + w * vals[i + 1])

    staged = fgrad.jit(f)
    for x in RNG.normal(size=(2, 5)):
        onp.testing.assert_array_equal(fgrad.grad(lambda a: staged(a))(x), fgrad.grad(f)(x))
        onp.testing.assert_array_equal(staged(x), f(x))
    assert _graphs(staged) == 1


def test_a_slice_bound_computed_in_a_staged_function():
    # x[:n] with n = np.argmax(...) under jit: the staged n was kept inside the slice, a
    # static parameter, and the replay met the finished trace's tracer (EscapedTracerError)
    q = onp.array([0.3, 1.4, -0.2, 2.2, 0.1])

    def f(x):
        n, k = np.argmax(q), np.sum(q > 0)
        return np.sum(x[:n] ** 2) + np.sum(x[k::-1] * x[n]) + np.sum(x[:, None][1:n, 0])

    staged = fgrad.jit(f)
    for x in RNG.normal(size=(2, 5)):
        assert staged(x) == f(x)
        onp.testing.assert_array_equal(fgrad.grad(lambda a: staged(a))(x), fgrad.grad(f)(x))
    assert _graphs(staged) == 1


def test_at_updates_by_a_batched_or_staged_index_are_scatters():  # (.add, .set, .min, .max)
    # one-hot targets and per-example updates: vmap refused them, jit guarded the indices
    X = RNG.normal(size=(4, 3, 5))
    K = RNG.integers(-5, 5, size=4)
    L = onp.stack([RNG.permutation(3)[:2] for _ in range(4)])  # (distinct rows: set takes them)
    R = RNG.integers(0, 2, size=(4, 5))  # (repeats: add sums them in numpy's order)
    fs = [lambda x, k, l: np.sum(np.at(np.zeros(5))[k].set(1.0) * x),
          lambda x, k, l: np.sum(np.at(x)[l].add(x[:2] ** 2) ** 2),
          lambda x, k, l: np.sum(np.sin(np.at(x)[0, k].set(x[1, 0] * 3.0))),
          lambda x, k, l: np.sum(np.at(x)[:, k].add(np.arange(3.0)) * x),
          lambda x, k, l: np.sum(np.at(x)[l, k].set(x[2, :2] ** 3) ** 2),
          lambda x, k, l: np.sum(np.at(x[None] * x[:, :1, None])[l, :, k].add(x[:2, :3]) ** 2),
          lambda x, k, l: np.sum(np.at(x)[l, k].max(x[2, :2] * 0.5) ** 2),
          lambda x, k, l: np.sum(np.at(x)[:, k].min(np.arange(3.0)) * x),
          lambda x, k, r: np.sum(np.at(x[0] * 0.1)[r].add(x[1] / 3.0) ** 3),
          lambda x, k, r: np.sum(np.at(x[0])[r].max(x[1]) ** 3)]
    for f in fs:
        I = R if f in fs[-2:] else L
        want = [f(x, k, l) for x, k, l in zip(X, K, I)]
        onp.testing.assert_allclose(fgrad.vmap(f)(X, K, I), want, rtol=1e-13)
        grads = [fgrad.value_and_grad(f)(x, k, l) for x, k, l in zip(X, K, I)]
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(X, K, I),
                                    onp.stack([g for _, g in grads]), rtol=1e-13)
        staged = fgrad.jit(fgrad.value_and_grad(f))  # (SPEC: the eager values, bit for bit)
        for x, k, l, (v, g) in zip(X, K, I, grads):
            got = staged(x, k, l)
            assert got[0] == v
            onp.testing.assert_array_equal(got[1], g)
        assert _graphs(staged) == 1
    # dtypes as eagerly (a Python number takes the array's kind)
    f32 = fgrad.vmap(lambda x, i: np.at(x)[i].add(2.0))(onp.zeros((2, 4), onp.float32),
                                                      onp.array([1, 2]))
    assert f32.dtype == onp.float32 and f32.tolist() == [[0, 2, 0, 0], [0, 0, 2, 0]]
    # set with a repeated index is ambiguous: the eager error, on a batch and on a replay
    with pytest.raises(ValueError, match="names some element more than once"):
        fgrad.vmap(lambda x, i: np.at(x)[i].set(1.0))(X[:2, 0], onp.array([[0, 1], [2, 2]]))
    staged = fgrad.jit(lambda x, i: np.at(x)[i].set(1.0))
    staged(X[0, 0], onp.array([0, 1]))
    with pytest.raises(ValueError, match="names some element more than once"):
        staged(X[0, 0], onp.array([3, 3]))


@pytest.mark.parametrize("f", [
    lambda x: np.max(x, initial=0.9), lambda x: np.min(x, axis=1, initial=0.1),
    lambda x: np.sum(x, where=x > 0.5), lambda x: np.mean(x, axis=0, where=x > np.min(x)),
    lambda x: np.prod(x, initial=2.0, where=x > 0.2),
    lambda x: np.max(x, axis=1, where=x < 0.8, initial=0.0),
    lambda x: np.pad(x, 1, constant_values=x[0, 0]),
    lambda x: np.pad(x, (1, 2), mode="linear_ramp", end_values=x[1, 1]),
    lambda x: np.pad(x, 2, mode="reflect", reflect_type="odd"),
    lambda x: np.pad(x, 1, mode="mean", stat_length=2),
    lambda x: np.var(x, axis=1, where=x > 0.3), lambda x: np.nanstd(x, where=x < 0.8),
    lambda x: np.interp(np.linspace(0.0, 1.0, 5), x[0], x[1] ** 2, period=1.0),
    lambda x: np.prod(sp.logsumexp(x, b=x - 0.5, return_sign=True)),
    lambda x: np.cov(x, aweights=x[0]), lambda x: np.ediff1d(x, to_end=x[0, 0]),
    lambda x: np.nan_to_num(np.where(x > 0.8, np.nan, x), nan=x[0, 0] * 2)],
    ids=["max initial", "min initial", "sum where", "mean where", "prod both", "max both",
         "pad constant", "pad ramp", "pad odd", "pad mean", "var where", "nanstd where",
         "interp period", "logsumexp sign", "cov aweights", "ediff1d to_end",
         "nan_to_num nan"])
def test_functions_that_read_no_value_of_their_input(f):
    # numpy's value, the masks of initial's ties, the padding values, a where mask, interp's
    # order of a periodic xp and logsumexp's sign were read: under jit a guard on the whole
    # input (a trace per call), under vmap a refusal
    X = RNG.uniform(0.0, 1.0, size=(3, 2, 3))
    X[0, 0, 1] = 0.9  # (a tie with initial)
    loss = lambda x: np.sum(f(x) ** 2)  # noqa: E731
    staged, grads = fgrad.jit(fgrad.grad(loss)), [fgrad.grad(loss)(x) for x in X]
    for x, g in zip(X, grads):
        onp.testing.assert_array_equal(staged(x), g)
        onp.testing.assert_array_equal(fgrad.jit(f)(x), f(x))
    assert _graphs(staged) == 1
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(loss))(X), grads, rtol=1e-13)
    onp.testing.assert_array_equal(fgrad.vmap(f)(X), onp.stack([f(x) for x in X]))


def test_a_staged_jet_branches_on_where_a_composition_holds_not_on_the_values():
    # jet's choice between a composition and the JVP rule read the output's values: under
    # jit a guard on them, a trace per call; now a guard on the choice alone
    X = RNG.uniform(0.2, 0.9, size=(3, 4))
    series = ([onp.ones(4), onp.zeros(4), onp.zeros(4)],)
    for fn in (lambda y: np.logaddexp(y, 2 * y), sp.gamma, sp.erfinv,
               lambda y: sp.logsumexp(y)):
        def terms(x, fn=fn):
            return fgrad.jet(lambda y: np.sum(fn(y)), (x,), series)[1]

        staged = fgrad.jit(terms)
        for x in X:
            for got, want in zip(staged(x), terms(x)):
                onp.testing.assert_array_equal(got, want)
        assert _graphs(staged) == 1
    # where the composition fails (an infinite output) the other side is traced, once
    staged = fgrad.jit(lambda x: fgrad.jet(lambda y: np.sum(np.logaddexp(y, 0.0)), (x,),
                                           series)[1])
    for x in (X[0], onp.array([0.1, onp.inf, 0.3, 0.4]), X[1], X[2] + [onp.inf, 0, 0, 0]):
        staged(x)
    assert _graphs(staged) == 2


_BRANCHES = [  # (Python branches on a verdict: under jit one graph per side; vmap refuses)
    lambda x, k: np.sum(x ** 2) if np.allclose(x, 0.5) else np.sum(x),
    lambda x, k: np.sum(x) if np.array_equal(x > 0.5, x > 0.6) else np.prod(x)]
_NODES = [
    lambda x, k: np.sum(x) * np.count_nonzero(x > 0.5),
    lambda x, k: np.sum(np.where(np.isin(np.round(x, 1), [0.5, 0.6]), x, 0.0)),
    lambda x, k: np.sum(x[np.argpartition(x, 2)[:2]]),
    lambda x, k: np.sum(np.roll(x, k) * np.arange(6.0)),
    lambda x, k: np.sum(np.roll(x.reshape(2, 3), (k, 1), (1, 0)) * x.reshape(2, 3)),
    lambda x, k: np.sum(np.linalg.matrix_power(x[:4].reshape(2, 2), 0) * x[:4].reshape(2, 2)),
    lambda x, k: np.sum(np.choose(np.array([0, 1, 0]) * (k % 2), [x[:3], x[3:]]) ** 2),
    lambda x, k: np.sum(np.choose(np.array([0, 1, 2]) + k, [x[:3], x[3:], x[1:4]],
                                  mode="wrap") ** 2),
    lambda x, k: np.sum(x * np.spacing(x * k)),
    lambda x, k: np.sum(x * np.unpackbits(np.packbits(x > 0.5))[:6])
    * np.bitwise_count(np.packbits(x > 0.6))[0],
    lambda x, k: np.sum(x[np.lexsort((x, np.round(x, 1)))] * np.arange(6.0))]


@pytest.mark.parametrize("f", _BRANCHES + _NODES,
                         ids=["allclose", "array_equal", "count_nonzero", "isin", "argpartition",
                              "roll", "roll two axes", "matrix_power 0", "choose",
                              "choose wrap", "spacing", "packbits", "lexsort"])
def test_verdicts_counts_and_a_traced_shift_are_nodes(f):
    # these read the values (numpy's verdict, count or order; roll's shift): under jit a
    # guard on them, a trace per call; under vmap a refusal. A branch now guards its boolean
    X = RNG.uniform(0.2, 0.9, size=(4, 6))
    X[1] = 0.5
    K = onp.array([1, 2, 4, 5])
    staged = fgrad.jit(fgrad.value_and_grad(f))
    for x, k in zip(X, K):
        got, want = staged(x, k), fgrad.value_and_grad(f)(x, k)
        assert got[0] == want[0]
        onp.testing.assert_array_equal(got[1], want[1])
    assert _graphs(staged) == (2 if f in _BRANCHES else 1)
    if f in _NODES:
        onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(f))(X[2:], K[2:]),
                                       [fgrad.grad(f)(x, k) for x, k in zip(X[2:], K[2:])])


def test_choose_by_staged_or_batched_choices_raises_numpys_error_at_the_replay():
    staged = fgrad.jit(lambda a, x: np.choose(a, [x, 2 * x]))
    onp.testing.assert_array_equal(staged(onp.array([0, 1]), onp.ones(2)), [1.0, 2.0])
    for run in (lambda: staged(onp.array([0, 2]), onp.ones(2)),
                lambda: fgrad.vmap(lambda a: np.choose(a, [onp.ones(2), onp.zeros(2)]))(
                    onp.array([[0, 1], [1, -1]]))):
        with pytest.raises(ValueError, match="invalid entry in choice array"):
            run()


def test_take_along_axis_by_a_batched_or_staged_order():
    xs = RNG.normal(size=(3, 4, 5))

    def top(x):  # (each row's largest entry, through the order argsort gives)
        return np.take_along_axis(x, np.argsort(x, axis=1), axis=1)[:, -1]

    onp.testing.assert_array_equal(fgrad.vmap(top)(xs), onp.max(xs, axis=2))
    g = fgrad.vmap(fgrad.grad(lambda x: np.sum(top(x))))(xs)
    onp.testing.assert_array_equal(g, (xs == onp.max(xs, axis=2, keepdims=True)) * 1.0)
    staged = fgrad.jit(top)
    for x in xs:
        onp.testing.assert_array_equal(staged(x), onp.max(x, axis=1))
    assert _graphs(staged) == 1


def test_vmap_of_hessian_with_prod():
    f = lambda x: np.sum(np.sin(x) * x ** 2) + np.prod(x)  # noqa: E731
    xs = RNG.normal(size=(3, 4))
    onp.testing.assert_allclose(fgrad.vmap(fgrad.hessian(f))(xs),
                                _loop(fgrad.hessian(f), xs), rtol=1e-10, atol=1e-12)


# --- a plain list beside a traced operand ---------------------------------------------------

_LIST = [1.5, -2.0, 0.5]
LIST_OPERANDS = {  # (f(x, c), with c the list or the array numpy makes of it)
    "x @ c": lambda x, c: x @ c,
    "c @ x": lambda x, c: c @ x,
    "x ** c": lambda x, c: np.sum(x ** c),
    "power": lambda x, c: np.sum(np.power(x, c)),
    "float_power": lambda x, c: np.sum(np.float_power(x, c)),
    "arctan2": lambda x, c: np.sum(np.arctan2(x, c) + np.arctan2(c, x)),
    "vdot": lambda x, c: np.vdot(c, x),
    "dot": lambda x, c: np.dot(x, c),
    "matrix @ x": lambda x, c: np.sum([c, c[::-1]] @ x),
}


@pytest.mark.parametrize("transform", ["grad", "jvp", "hessian", "jit(grad)", "vmap(grad)"])
@pytest.mark.parametrize("name", sorted(LIST_OPERANDS))
def test_a_plain_list_operand_beside_a_traced_one_acts_as_its_array(name, transform):
    # (the rules met the list itself: x @ [1.5, ...] under grad computed g * [1.5, ...])
    f = LIST_OPERANDS[name]
    x = onp.array([0.7, 1.3, 0.4])
    with_list, with_array = (functools.partial(lambda c, x: f(x, c), c) for c in
                             (_LIST, onp.asarray(_LIST)))
    if transform == "jvp":
        got, want = (fgrad.jvp(g, (x,), (x[::-1],)) for g in (with_list, with_array))
    elif transform == "vmap(grad)":
        xs = onp.stack([x, x * 1.1])
        got, want = (fgrad.vmap(fgrad.grad(g))(xs) for g in (with_list, with_array))
    else:
        t = {"grad": fgrad.grad, "hessian": fgrad.hessian,
             "jit(grad)": lambda g: fgrad.jit(fgrad.grad(g))}[transform]
        got, want = (t(g)(x) for g in (with_list, with_array))
    for a, b in zip(*(fgrad.tree_util.tree_flatten(v)[0] for v in (got, want))):
        onp.testing.assert_array_equal(a, b)


POSITIONAL_LISTS = {  # (numpy functions given lists where arrays or shapes go)
    "reshape": lambda x: np.reshape(x, [2, 3]),
    "transpose": lambda x: np.transpose(x.reshape(2, 3), [1, 0]),
    "tile": lambda x: np.tile(x, [2, 1]),
    "broadcast_to": lambda x: np.broadcast_to(x, [2, 6]),
    "pad": lambda x: np.pad(x, [(1, 2)]),
    "take": lambda x: np.take(x, [0, 2, 2]),
    "repeat": lambda x: np.repeat(x, [1, 2, 1, 1, 1, 0]),
    "roll": lambda x: np.roll(x.reshape(2, 3), [1, 1], [0, 1]),
    "percentile": lambda x: np.percentile(x, [10, 50]),
    "interp": lambda x: np.interp(x, [0.0, 3.0, 7.0], [1.0, 2.0, 0.0]),
    "clip": lambda x: np.clip(x, [1, 1, 1, 2, 2, 2], [3, 3, 3, 5, 5, 5]),
    "choose": lambda x: np.choose([0, 1, 0, 1, 0, 1], [x, x * 2]),
    "insert": lambda x: np.insert(x, [1, 3], [9.0, 8.0]),
    "tensordot": lambda x: np.tensordot(x.reshape(2, 3), onp.ones((3, 2)), [[1], [0]]),
    "at.add": lambda x: np.at(x)[[0, 2]].add([1.0, 2.0]),
    "where": lambda x: np.where([True, False] * 3, x, [0.0] * 6),
    "linalg.solve": lambda x: np.linalg.solve([[2.0, 0.0], [0.0, 3.0]], x[:2]),
    "average": lambda x: np.average(x, weights=[1, 2, 3, 4, 5, 6]),
}


@pytest.mark.parametrize("name", sorted(POSITIONAL_LISTS))
def test_lists_where_numpy_takes_arrays_or_shapes(name):
    # (at.add's list of values raised TypeError on plain and traced arrays alike)
    f, x = POSITIONAL_LISTS[name], onp.arange(1.0, 7.0)
    want = f(x.copy())
    onp.testing.assert_array_equal(fgrad.jit(f)(x), want)
    onp.testing.assert_array_equal(fgrad.jvp(f, (x,), (onp.ones(6),))[0], want)
