"""linspace/logspace/geomspace/arange, the Kaiser window, apply_along_axis/apply_over_axes/
fromfunction, bincount and the histograms: closed-form derivatives and agreement with numpy."""
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads


def test_linspace_weights_are_one_minus_t_and_t():
    da, db = fgrad.grad(lambda a, b: np.sum(np.linspace(a, b, 5) * onp.arange(5.0)),
                        argnums=(0, 1))(1.0, 3.0)
    t = onp.linspace(0, 1, 5)
    assert da == pytest.approx(onp.sum((1 - t) * onp.arange(5.0)))
    assert db == pytest.approx(onp.sum(t * onp.arange(5.0)))


def test_linspace_retstep_and_values_are_numpys():
    (y, step), f_vjp = fgrad.vjp(lambda a, b: np.linspace(a, b, 4, endpoint=False,
                                                          retstep=True), 0.1, 0.7)
    want_y, want_step = onp.linspace(0.1, 0.7, 4, endpoint=False, retstep=True)
    onp.testing.assert_array_equal(y, want_y)
    assert step == want_step
    # d step / d(a, b) = (-1/4, 1/4)
    assert f_vjp((onp.zeros(4), 1.0)) == (pytest.approx(-0.25), pytest.approx(0.25))


def test_logspace_derivative_in_the_base():
    got = fgrad.grad(lambda base: np.sum(np.logspace(0.0, 2.0, 3, base=base)))(3.0)
    assert got == pytest.approx(0 + 1 + 2 * 3.0)  # d/db (1 + b + b^2)


def test_geomspace_of_negative_endpoints_and_complex_refused():
    check_grads(lambda a, b: np.geomspace(a, b, 4), (onp.float64(-1.5), onp.float64(-0.5)))
    with pytest.raises(NotImplementedError, match="complex endpoints"):
        fgrad.jvp(lambda a: np.geomspace(a, 2.0 + 0j, 3), (1.0,), (1.0,))


def test_bincount_is_linear_in_its_weights():
    x = onp.array([0, 2, 2, 3, 0])
    w = onp.array([0.5, 1.0, 2.0, 3.0, 4.0])
    out, f_vjp = fgrad.vjp(lambda w: np.bincount(x, weights=w, minlength=6), w)
    onp.testing.assert_array_equal(out, onp.bincount(x, weights=w, minlength=6))
    g = onp.array([1.0, 10.0, 100.0, 1000.0, 0.0, 0.0])
    onp.testing.assert_array_equal(f_vjp(g)[0], g[x])
    assert np.bincount(x).tolist() == [2, 0, 2, 1]


def test_apply_along_axis_matches_an_explicit_loop():
    x = onp.random.default_rng(0).standard_normal((3, 4))

    def by_apply(x):
        return np.sum(np.apply_along_axis(lambda v: np.sum(np.sin(v) * v), 1, x) ** 2)

    def by_loop(x):
        return np.sum(np.stack([np.sum(np.sin(x[i]) * x[i]) for i in range(3)]) ** 2)

    onp.testing.assert_allclose(fgrad.grad(by_apply)(x), fgrad.grad(by_loop)(x), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.hessian(by_apply)(x), fgrad.hessian(by_loop)(x),
                                rtol=1e-12)


def test_apply_over_axes_keeps_reduced_axes():
    x = onp.arange(24.0).reshape(2, 3, 4)
    out, f_vjp = fgrad.vjp(lambda x: np.apply_over_axes(np.sum, x, [0, 2]), x)
    assert out.shape == (1, 3, 1)
    onp.testing.assert_array_equal(out, onp.apply_over_axes(onp.sum, x, [0, 2]))
    onp.testing.assert_array_equal(f_vjp(onp.ones((1, 3, 1)))[0], onp.ones((2, 3, 4)))


def test_arange_is_start_plus_i_times_step():
    # (its derivative was zero: arange was taken as a constant)
    got = fgrad.grad(lambda s, d: np.sum(np.arange(s, 2.0, d) * onp.arange(1.0, 5.0)),
                     argnums=(0, 1))(0.1, 0.5)  # 0.1, 0.6, 1.1, 1.6
    assert got == (pytest.approx(10.0), pytest.approx(0 * 1 + 1 * 2 + 2 * 3 + 3 * 4))
    assert fgrad.grad(lambda s: np.sum(np.arange(s, 4.3)))(0.7) == 4.0  # 0.7 .. 3.7
    assert fgrad.grad(lambda t: np.sum(np.arange(t)))(3.5) == 0.0  # the stop moves no value
    for f, x in ((lambda s: np.arange(s, 4.3), 0.7), (lambda d: np.arange(0.1, 2.0, d), 0.3),
                 (lambda t: np.arange(t), 3.5), (lambda s: np.arange(s, 6, dtype=int), 1.5)):
        y = fgrad.jvp(f, (x,), (1.0,))[0]
        want = f(x)
        assert y.dtype == want.dtype
        onp.testing.assert_array_equal(y, want)


def test_kaiser_window_in_its_shape_parameter():
    def i(n, x):  # the modified Bessel function I_n by its series
        return sum((x / 2) ** (2 * k + n) / (math.factorial(k) * math.factorial(k + n))
                   for k in range(40))
    beta, m = 2.3, 7
    r = onp.sqrt(1 - ((onp.arange(m) - 3.0) / 3.0) ** 2)
    want = r * i(1, beta * r) / i(0, beta) - i(0, beta * r) * i(1, beta) / i(0, beta) ** 2
    onp.testing.assert_allclose(fgrad.jacfwd(lambda b: np.kaiser(m, b))(beta), want,
                                rtol=1e-12)
    onp.testing.assert_array_equal(fgrad.jit(lambda b: np.kaiser(m, b))(beta),
                                   onp.kaiser(m, beta))
    assert fgrad.grad(lambda b: np.sum(np.kaiser(1, b)))(beta) == 0.0

def test_fromfunction_differentiates_what_the_function_closes_over():
    got = fgrad.grad(lambda s: np.sum(np.fromfunction(lambda i, j: s * i * j, (3, 3))))(2.0)
    assert got == pytest.approx(9.0)  # sum of i * j over 3x3


def test_histogram_is_linear_in_weights_and_its_edges_follow_the_data_range():
    a = onp.array([0.1, 0.5, 0.35, 0.9, 0.75])
    w = onp.array([1.0, 2.0, 3.0, 4.0, 5.0])
    (hist, edges), f_vjp = fgrad.vjp(lambda a, w: np.histogram(a, bins=4, weights=w), a, w)
    want_hist, want_edges = onp.histogram(a, bins=4, weights=w)
    onp.testing.assert_array_equal(hist, want_hist)
    onp.testing.assert_array_equal(edges, want_edges)
    g_hist = onp.array([1.0, 10.0, 100.0, 1000.0])
    ga, gw = f_vjp((g_hist, onp.zeros(5)))
    onp.testing.assert_array_equal(gw, g_hist[[0, 2, 1, 3, 3]])  # each weight's bin
    onp.testing.assert_array_equal(ga, onp.zeros(5))  # counts do not move with the data
    # sum of the 5 edges = 5 (min + max) / 2: derivative 2.5 at the min and the max entries
    ga, _ = f_vjp((onp.zeros(4), onp.ones(5)))
    onp.testing.assert_allclose(ga, [2.5, 0, 0, 2.5, 0])


def test_histogram_without_weights_gives_plain_counts():
    a = onp.array([0.1, 0.5, 0.35, 0.9])
    (hist, _), _ = fgrad.vjp(lambda a: np.histogram(a, bins=2), a)
    assert hist.tolist() == [2, 2] and hist.dtype == onp.histogram(a, bins=2)[0].dtype
    check_grads(lambda a: np.histogram(a, bins=3, density=True)[0], (a,))


def test_histogram_edges_given_or_spread_over_a_range_carry_their_derivative():
    # (these derivatives were zero: given edges, an estimator's edges and histogram_bin_edges
    # were taken as constants)
    a = onp.array([0.1, 0.5, 0.9, 0.3, 0.7])
    # density with given edges e: bins of 2 and 3 entries, d_k = n_k / (5 (e_k+1 - e_k))
    got = fgrad.grad(lambda e: np.sum(np.histogram(a, e, density=True)[0]))(
        onp.array([0.0, 0.5, 1.0]))
    w0, w1 = 0.5, 0.5
    onp.testing.assert_allclose(got, [2 / (5 * w0**2), 3 / (5 * w1**2) - 2 / (5 * w0**2),
                                      -3 / (5 * w1**2)])
    # edges spread over the data: linspace(min, max, n + 1), whatever picked n ("auto": 4)
    n = len(onp.histogram_bin_edges(a, "auto")) - 1
    for bins in (3, "auto"):
        k = 3 if bins == 3 else n
        for f in (lambda v: np.histogram_bin_edges(v, bins), lambda v: np.histogram(v, bins)[1]):
            onp.testing.assert_allclose(fgrad.grad(lambda v: np.sum(f(v)))(a),
                                        [(k + 1) / 2, 0, (k + 1) / 2, 0, 0])
            onp.testing.assert_array_equal(fgrad.jit(f)(a), onp.histogram_bin_edges(a, bins))
    # over a range: the edges' sum is 2 (lo + hi) for 3 bins; given edges are themselves
    onp.testing.assert_allclose(
        fgrad.grad(lambda r: np.sum(np.histogram_bin_edges(a, 3, range=(r[0], r[1]))))(
            onp.array([0.0, 1.0])), [2.0, 2.0])
    e = onp.array([0.0, 0.4, 1.0])
    onp.testing.assert_array_equal(fgrad.jacfwd(lambda e: np.histogram_bin_edges(a, e))(e),
                                   onp.eye(3))


def test_histogramdd_and_histogram2d_are_numpys_and_linear_in_the_weights():
    rng = onp.random.default_rng(3)
    x, y, w = rng.uniform(-1, 1, 40), rng.uniform(0, 2, 40), rng.uniform(0.5, 1.5, 40)
    for bins in (3, [2, 4], [onp.array([-1.0, 0.0, 0.5, 1.0]), 3]):
        want = onp.histogram2d(x, y, bins, weights=w)
        got = fgrad.jit(lambda w: np.histogram2d(x, y, bins, weights=w))(w)
        for g, v in zip(got, want):
            onp.testing.assert_array_equal(g, v)
        want = onp.histogramdd(onp.stack([x, y], 1), bins, weights=w, density=True)
        hist, edges = fgrad.vjp(lambda s, w: np.histogramdd(s, bins, weights=w, density=True),
                                onp.stack([x, y], 1), w)[0]
        onp.testing.assert_array_equal(hist, want[0])
        for g, v in zip(edges, want[1]):
            onp.testing.assert_array_equal(g, v)
    # each weight goes to its bin: the Jacobian in w is the 0/1 matrix of bin membership
    jac = fgrad.jacrev(lambda w: np.histogram2d(x, y, 3, weights=w)[0])(w)
    member = onp.stack([onp.histogram2d(x, y, 3, weights=onp.eye(40)[i])[0]
                        for i in range(40)], -1)
    onp.testing.assert_array_equal(jac, member)
    # density = H / (total volume-weighted): d/d(range end) by finite differences
    s = onp.stack([x, y], 1)
    check_grads(lambda r: np.histogramdd(s, 3, range=[(r[0], r[1]), None], weights=w,
                                         density=True)[0], (onp.array([-1.2, 1.1]),))
    check_grads(lambda v: np.histogram2d(v[:, 0], v[:, 1], [2, 3], weights=w, density=True)[0],
                (s,))

def test_union1d_and_setdiff1d_share_derivatives_like_unique():
    a = onp.array([3.0, 1.0, 3.0, 2.0])
    b = onp.array([2.0, 5.0])
    out, f_vjp = fgrad.vjp(np.union1d, a, b)
    onp.testing.assert_array_equal(out, [1.0, 2.0, 3.0, 5.0])
    ga, gb = f_vjp(onp.array([1.0, 10.0, 100.0, 1000.0]))
    onp.testing.assert_array_equal(ga, [50.0, 1.0, 50.0, 5.0])  # 3 twice, 2 shared with b
    onp.testing.assert_array_equal(gb, [5.0, 1000.0])
    out, f_vjp = fgrad.vjp(np.setdiff1d, a, b)
    onp.testing.assert_array_equal(out, [1.0, 3.0])
    ga, gb = f_vjp(onp.array([1.0, 10.0]))
    onp.testing.assert_array_equal(ga, [5.0, 1.0, 5.0, 0.0])
    onp.testing.assert_array_equal(gb, [0.0, 0.0])


def test_intersect1d_is_refused_with_its_reason():
    with pytest.raises(fgrad.NoDerivativeRuleError, match="exact equality between them"):
        fgrad.grad(lambda a: np.sum(np.intersect1d(a, onp.array([1.0]))))(onp.array([1.0, 2.0]))
    # staged or batched, nothing differentiated: not "argument 0 is being differentiated"
    # (which it said), but what to do under jit and vmap
    for transform in (fgrad.jit, fgrad.vmap):
        with pytest.raises(fgrad.ConcretizationError,
                           match=r"intersect1d takes its argument 'ar1' as a fixed value \(keeps "
                                 r".*static_argnums.*in_axes=None"):
            transform(lambda a: np.intersect1d(a, onp.array([1.0])))(onp.ones((2, 2)))


def test_vectorize_runs_the_function_on_each_traced_element_as_numpy_does():
    # numpy.vectorize's function on each element, a branch on its value included; numpy's
    # values, derivatives from closed forms (it was a ConcretizationError on traced values)
    x = onp.array([-1.0, 2.0, 0.5])
    relu_sq = np.vectorize(lambda v: v * v if v > 0 else 0.0 * v)
    onp.testing.assert_array_equal(relu_sq(x), onp.vectorize(lambda v: v * v if v > 0 else
                                                             0.0 * v)(x))
    g = fgrad.grad(lambda x: np.sum(relu_sq(x)))
    assert g(x).tolist() == [0.0, 4.0, 1.0]
    staged = fgrad.jit(g)  # (the branch is a guard: another sign pattern is traced again)
    assert staged(x).tolist() == [0.0, 4.0, 1.0] and staged(-x).tolist() == [2.0, 0.0, 0.0]
    # broadcasting, several outputs, an excluded argument, otypes
    pair = np.vectorize(lambda a, b, p: (a * b ** p, a + b), excluded={2})
    b = onp.array([[1.0], [2.0]])
    prod, total = pair(x, b, 2)
    onp.testing.assert_array_equal(prod, x * b ** 2)
    assert fgrad.jacfwd(lambda a: pair(a, b, 2)[0])(x).shape == (2, 3, 3)
    assert fgrad.grad(lambda a: np.sum(pair(a, b, 2)[1]))(x).tolist() == [2.0, 2.0, 2.0]
    halves = np.vectorize(lambda v: v / 2, otypes=[onp.float32])
    assert fgrad.jvp(halves, (x,), (x,))[1].dtype == onp.float32
    # a signature: the function gets core slices
    dot = np.vectorize(lambda u, v: np.sum(u * v), signature="(n),(n)->()")
    U = onp.arange(6.0).reshape(2, 3)
    onp.testing.assert_array_equal(dot(U, U), [5.0, 50.0])
    onp.testing.assert_array_equal(fgrad.grad(lambda U: np.sum(dot(U, U)))(U), 2 * U)
    # under vmap a branch on a batched element is refused, as any; without one it maps
    onp.testing.assert_array_equal(fgrad.vmap(np.vectorize(np.sin))(U), onp.sin(U))
    with pytest.raises(fgrad.ConcretizationError, match="vmap: the values of a batched"):
        fgrad.vmap(relu_sq)(U)
    # no element: numpy's error without otypes, an empty result with them
    with pytest.raises(ValueError, match="size 0 inputs unless `otypes` is set"):
        fgrad.grad(lambda x: np.sum(relu_sq(x)))(onp.zeros(0))
    assert fgrad.grad(lambda x: np.sum(halves(x)))(onp.zeros(0)).shape == (0,)
