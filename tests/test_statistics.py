"""Reductions and statistics: closed-form derivatives, the kink conventions pinned exactly,
numpy's values bit for bit (plain and traced, float64 and float32), jacfwd against jacrev,
second derivatives against finite differences, and the errors.

The generated tests (test_rules.py) check every registered function on random draws away
from kinks; here the kinks themselves (ties, zero spread, a quantile on a sample, zeros in a
product, NaN entries) are checked against the values the conventions promise.
"""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import TracerMutationError
from fgrad.testing import check_grads

rng = onp.random.default_rng(0)
A = rng.uniform(-1, 1, (3, 4))
V = onp.array([0.3, -1.2, 0.7, 2.0, -0.4])
EPS = onp.finfo(float).eps


def grad_sum(f):
    """The gradient of ``sum(f(x))``: the VJP of f with a cotangent of ones."""
    return fgrad.grad(lambda x: np.sum(f(x)))


# ---- var and std --------------------------------------------------------------------------

@pytest.mark.parametrize("ddof", [0, 1, 2])
def test_var_gradient_is_two_deviations_over_dof(ddof):
    n = V.size
    g = fgrad.grad(lambda x: np.var(x, ddof=ddof))(V)
    onp.testing.assert_allclose(g, 2 * (V - V.mean()) / (n - ddof), rtol=1e-14, atol=1e-15)
    h = fgrad.hessian(lambda x: np.var(x, ddof=ddof))(V)
    onp.testing.assert_allclose(h, 2 / (n - ddof) * (onp.eye(n) - 1 / n), atol=1e-15)


def test_var_along_axes_and_correction():
    g = grad_sum(lambda x: np.var(x, axis=-1, correction=1, keepdims=True))(A)
    want = 2 * (A - A.mean(-1, keepdims=True)) / (A.shape[1] - 1)
    onp.testing.assert_allclose(g, want, rtol=1e-14, atol=1e-15)
    g = grad_sum(lambda x: np.var(x, axis=(0, 1)))(A)
    onp.testing.assert_allclose(g, 2 * (A - A.mean()) / A.size, rtol=1e-14, atol=1e-15)


def test_std_gradient():
    for ddof in (0, 1):
        s = V.std(ddof=ddof)
        g = fgrad.grad(lambda x: np.std(x, ddof=ddof))(V)
        onp.testing.assert_allclose(g, (V - V.mean()) / ((V.size - ddof) * s), rtol=1e-14)
    check_grads(lambda x: np.std(x, axis=0, ddof=1), (A,))


def test_std_at_zero_spread_has_zero_derivative_at_every_order():
    """Chosen convention: std is |t| std(v) along any line through a constant x, so 0 is the
    average of the one-sided derivatives; numpy's formula (x - mean) / (n std) is 0/0."""
    x = onp.full(4, 0.5)  # the mean is exactly 0.5, so the variance is exactly 0
    assert onp.std(x) == 0.0
    onp.testing.assert_array_equal(fgrad.grad(np.std)(x), onp.zeros(4))
    onp.testing.assert_array_equal(fgrad.hessian(np.std)(x), onp.zeros((4, 4)))
    onp.testing.assert_array_equal(fgrad.jacfwd(np.std)(x), onp.zeros(4))
    # per slice: only the constant row has the zero derivative
    m = onp.array([[1.0, 1.0, 1.0], [0.0, 1.0, 2.0]])
    g = grad_sum(lambda x: np.std(x, axis=1))(m)
    onp.testing.assert_array_equal(g[0], onp.zeros(3))
    onp.testing.assert_allclose(g[1], (m[1] - 1.0) / (3 * m[1].std()), rtol=1e-14)
    onp.testing.assert_array_equal(fgrad.grad(np.nanstd)(onp.array([2.0, onp.nan, 2.0])),
                                   onp.zeros(3))


def test_var_with_a_traced_mean_and_where():
    x = onp.array([1.0, 2.0, 4.0, 7.0])
    # the mean given as an input: d/dm var = -2 sum(x - m) / n
    g = fgrad.grad(lambda m: np.var(x, mean=m))(onp.array([3.0]))
    onp.testing.assert_allclose(g, [-2 * onp.sum(x - 3.0) / 4], rtol=1e-15)
    w = onp.array([True, False, True, True])
    g = fgrad.grad(lambda x: np.var(x, where=w))(x)
    xs = x[w]
    onp.testing.assert_allclose(g[w], 2 * (xs - xs.mean()) / 3, rtol=1e-14)
    assert g[1] == 0.0


def test_complex_variance():
    z = rng.uniform(-1, 1, 4) + 1j * rng.uniform(-1, 1, 4)
    out, _ = fgrad.vjp(np.var, z)
    onp.testing.assert_array_equal(out, onp.var(z))
    check_grads(lambda z: np.var(z), (z,))
    g = fgrad.grad(lambda re: np.var(re + 1j * z.imag))(z.real)
    onp.testing.assert_allclose(g, 2 * (z.real - z.real.mean()) / 4, rtol=1e-14)


# ---- average ------------------------------------------------------------------------------

def test_average_with_weights():
    a, w = onp.array([1.0, 2.0, 4.0]), onp.array([0.5, 1.0, 2.5])
    avg = onp.average(a, weights=w)
    ga, gw = fgrad.grad(lambda a, w: np.average(a, weights=w), argnums=(0, 1))(a, w)
    onp.testing.assert_allclose(ga, w / w.sum(), rtol=1e-15)
    onp.testing.assert_allclose(gw, (a - avg) / w.sum(), rtol=1e-14)
    # weights along one axis, with the sum of weights returned (traced, derivative 1)
    (avg2, scl), f_vjp = fgrad.vjp(lambda a, w: np.average(a, axis=0, weights=w,
                                                           returned=True), A, w[:3])
    want_avg, want_scl = onp.average(A, axis=0, weights=w[:3], returned=True)
    onp.testing.assert_array_equal(avg2, want_avg)
    onp.testing.assert_array_equal(scl, want_scl)
    ga, gw = f_vjp((onp.zeros(4), onp.ones(4)))
    onp.testing.assert_array_equal(ga, onp.zeros_like(A))
    onp.testing.assert_allclose(gw, onp.full(3, 4.0))
    check_grads(lambda a, w: np.average(a, axis=(0, 1), weights=w), (A, rng.uniform(1, 2, A.shape)))


def test_average_without_weights_returns_a_constant_count():
    (avg, scl), f_vjp = fgrad.vjp(lambda a: np.average(a, axis=1, returned=True), A)
    want = onp.average(A, axis=1, returned=True)
    onp.testing.assert_array_equal(avg, want[0])
    onp.testing.assert_array_equal(scl, want[1])
    assert scl.dtype == want[1].dtype
    onp.testing.assert_allclose(f_vjp((onp.ones(3), onp.ones(3)))[0], onp.full_like(A, 0.25))


# ---- max, min, ptp at ties ------------------------------------------------------------------

def test_extremes_share_ties_evenly():
    x = onp.array([[1.0, 3.0, 3.0, 3.0], [2.0, -1.0, 0.0, -1.0]])
    onp.testing.assert_array_equal(grad_sum(lambda x: np.max(x, axis=1))(x),
                                   [[0, 1 / 3, 1 / 3, 1 / 3], [1, 0, 0, 0]])
    onp.testing.assert_array_equal(grad_sum(lambda x: np.amin(x, axis=-1))(x),
                                   [[1, 0, 0, 0], [0, 0.5, 0, 0.5]])
    onp.testing.assert_array_equal(grad_sum(lambda x: np.ptp(x, axis=1))(x),
                                   [[-1, 1 / 3, 1 / 3, 1 / 3], [1, -0.5, 0, -0.5]])
    # forward mode gives the same shares
    t = onp.ones_like(x)
    onp.testing.assert_array_equal(fgrad.jvp(lambda x: np.max(x, axis=1), (x,), (t,))[1], [1, 1])
    onp.testing.assert_array_equal(fgrad.grad(np.max)(onp.full((2, 2), 0.5)),
                                   onp.full((2, 2), 0.25))


def test_initial_counts_as_one_more_entry_at_a_tie():
    x = onp.array([1.0, 2.0, 2.0])
    g = fgrad.grad(lambda x, i: np.max(x, initial=i), argnums=(0, 1))(x, 2.0)
    onp.testing.assert_array_equal(g[0], [0, 1 / 3, 1 / 3])
    assert g[1] == 1 / 3
    g = fgrad.grad(lambda x, i: np.max(x, initial=i), argnums=(0, 1))(x, 5.0)
    onp.testing.assert_array_equal(g[0], [0, 0, 0])
    assert g[1] == 1.0
    # where masks entries out; a slice with none left takes initial
    m = onp.array([[True, False], [False, False]])
    y = onp.array([[0.5, 3.0], [4.0, 5.0]])
    out, f_vjp = fgrad.vjp(lambda y: np.min(y, axis=1, where=m, initial=1.0), y)
    onp.testing.assert_array_equal(out, onp.min(y, axis=1, where=m, initial=1.0))
    onp.testing.assert_array_equal(f_vjp(onp.ones(2))[0], [[1, 0], [0, 0]])


def test_nanmax_skips_nan_and_shares_ties():
    x = onp.array([[onp.nan, 2.0, 2.0], [1.0, onp.nan, 0.0]])
    out, f_vjp = fgrad.vjp(lambda x: np.nanmax(x, axis=1), x)
    onp.testing.assert_array_equal(out, onp.nanmax(x, axis=1))
    onp.testing.assert_array_equal(f_vjp(onp.ones(2))[0], [[0, 0.5, 0.5], [1, 0, 0]])
    onp.testing.assert_array_equal(grad_sum(lambda x: np.nanmin(x, axis=0))(x),
                                   [[0, 1, 0], [1, 0, 1]])


def test_nanmax_of_an_all_nan_slice_is_nan_with_zero_derivative():
    x = onp.array([[onp.nan, onp.nan], [1.0, 3.0]])
    with pytest.warns(RuntimeWarning, match="All-NaN"):
        out, f_vjp = fgrad.vjp(lambda x: np.nanmax(x, axis=1), x)
    onp.testing.assert_array_equal(out, [onp.nan, 3.0])
    onp.testing.assert_array_equal(f_vjp(onp.ones(2))[0], [[0, 0], [0, 1]])


def _lse(x, axis=-1):
    m = np.max(x, axis, keepdims=True)
    return m + np.log(np.sum(np.exp(x - m), axis, keepdims=True))


def _softmax(x):
    e = onp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


@pytest.mark.parametrize("x", [onp.array([[0.3, -1.0, 2.0, 0.5]]),
                               onp.array([[1.0, 3.0, 3.0, -1.0]]),      # a tie at the max
                               onp.array([[0.5, 0.5, 0.5, 0.5]])])      # all tied
def test_stable_logsumexp_has_softmax_gradient(x):
    """The max's share (its cotangent, 1 - sum(softmax), spread over the tied entries) cancels:
    what is left is rounding, the gradient is softmax, and tied entries get the same bits."""
    g = fgrad.grad(lambda x: np.sum(_lse(x)))(x)
    s = _softmax(x)
    onp.testing.assert_allclose(g, s, rtol=0, atol=2 * EPS)
    tied = x[0] == x[0].max()
    assert len(set(g[0][tied].tolist())) == 1
    # the max's own cotangent is what cancels: 1 - sum(softmax), at rounding level
    _, f_vjp = fgrad.vjp(lambda m: m + np.log(np.sum(np.exp(x - m), -1, keepdims=True)),
                         x.max(-1, keepdims=True))
    assert abs(f_vjp(onp.ones((1, 1)))[0][0, 0]) <= 2 * EPS
    h = fgrad.hessian(lambda x: np.sum(_lse(x)))(x)[0, :, 0, :]
    onp.testing.assert_allclose(h, onp.diag(s[0]) - onp.outer(s[0], s[0]), rtol=0, atol=4 * EPS)
    check_grads(lambda x: _lse(x), (x,), order=2)
    onp.testing.assert_allclose(fgrad.jacfwd(_lse)(x), fgrad.jacrev(_lse)(x), rtol=0,
                                atol=2 * EPS)


# ---- median and quantiles -----------------------------------------------------------------

def test_median_of_an_odd_count_picks_one_entry():
    g = fgrad.grad(np.median)(V)
    want = onp.zeros(5)
    want[onp.argsort(V)[2]] = 1.0
    onp.testing.assert_array_equal(g, want)


@pytest.mark.parametrize("x, want", [
    ([4.0, 1.0, 3.0, 2.0], [0, 0, 0.5, 0.5]),          # even: the two middle ones halve
    ([1.0, 2.0, 2.0], [0, 0.5, 0.5]),                  # odd, tied middle: shared
    ([1.0, 2.0, 2.0, 3.0], [0, 0.5, 0.5, 0]),          # even, the middle pair tied
    ([2.0, 1.0, 2.0, 2.0], [1 / 3, 0, 1 / 3, 1 / 3]),  # a tie of three around the middle
    ([5.0, 5.0, 5.0], [1 / 3, 1 / 3, 1 / 3])])
def test_median_at_ties_and_even_counts(x, want):
    x = onp.array(x)
    onp.testing.assert_array_equal(fgrad.grad(np.median)(x), want)
    onp.testing.assert_array_equal(fgrad.jacfwd(np.median)(x), want)


def test_median_along_axes_is_numpys():
    x = rng.uniform(-1, 1, (2, 3, 4))
    for axis, keepdims in [(None, False), (1, True), ((0, 2), False), (-1, True)]:
        out, _ = fgrad.vjp(lambda x: np.median(x, axis=axis, keepdims=keepdims), x)
        want = onp.median(x, axis=axis, keepdims=keepdims)
        onp.testing.assert_array_equal(out, want)
        assert out.shape == want.shape
        check_grads(lambda x: np.median(x, axis=axis, keepdims=keepdims), (x,))


def test_percentile_at_a_sample_point():
    """On a sample the quantile is that sample (derivative 1 on it); the slope in q is a kink
    there, taken as the average of the one-sided slopes (one-sided at q = 0 and q = 100)."""
    x = onp.array([3.0, 0.0, 1.0, 6.0])          # sorted: 0, 1, 3, 6; v = 3 q / 100
    s = onp.sort(x)
    for q, k in [(100 / 3, 1), (200 / 3, 2)]:
        gx, gq = fgrad.grad(np.percentile, argnums=(0, 1))(x, q)
        want = onp.zeros(4)
        want[onp.argsort(x)[k]] = 1.0
        onp.testing.assert_allclose(gx, want, atol=1e-15)
        assert gq == pytest.approx(3 / 100 * (s[k + 1] - s[k - 1]) / 2, rel=1e-14)
    assert fgrad.grad(np.percentile, argnums=1)(x, 0.0) == pytest.approx(3 / 100 * (1 - 0))
    assert fgrad.grad(np.percentile, argnums=1)(x, 100.0) == pytest.approx(3 / 100 * (6 - 3))
    # between samples: the slope of the segment; derivative in x the interpolation weights
    gx, gq = fgrad.grad(np.quantile, argnums=(0, 1))(x, 0.5)    # v = 1.5
    onp.testing.assert_allclose(gx, [0.5, 0, 0.5, 0], atol=1e-15)
    assert gq == pytest.approx(3 * (3 - 1), rel=1e-14)
    check_grads(lambda x, q: np.quantile(x, q), (x, onp.array([0.2, 0.9])))


@pytest.mark.parametrize("method, q, want", [
    ("lower", 0.5, [0, 0, 1, 0]),       # v = 1.5: sorted index 1 (value 1.0 at position 2)
    ("higher", 0.5, [1, 0, 0, 0]),      # index 2 (value 3.0 at position 0)
    ("nearest", 0.6, [1, 0, 0, 0]),     # v = 1.8 -> 2
    ("midpoint", 0.5, [0.5, 0, 0.5, 0]),
    ("midpoint", 1 / 3, [0, 0, 1, 0]),  # v = 1 exactly: the sample itself
    ("linear", 0.25, [0, 0.25, 0.75, 0]),  # v = 0.75 between sorted 0 and 1
    ("hazen", 0.5, [0.5, 0, 0.5, 0]),
    ("inverted_cdf", 0.5, [0, 0, 1, 0])])
def test_quantile_methods(method, q, want):
    x = onp.array([3.0, 0.0, 1.0, 6.0])
    out, f_vjp = fgrad.vjp(lambda x: np.quantile(x, q, method=method), x)
    onp.testing.assert_array_equal(out, onp.quantile(x, q, method=method))
    onp.testing.assert_allclose(f_vjp(onp.float64(1.0))[0], want, atol=1e-15)


def test_discrete_methods_have_zero_derivative_in_q():
    x = onp.array([3.0, 0.0, 1.0, 6.0])
    for method in ("lower", "higher", "nearest", "midpoint", "closest_observation"):
        assert fgrad.grad(lambda q: np.quantile(x, q, method=method))(0.4) == 0.0


def test_nan_quantiles_skip_nan():
    x = onp.array([[onp.nan, 1.0, 4.0, 2.0], [3.0, onp.nan, onp.nan, 5.0]])
    for fn, q in [(np.nanmedian, None), (np.nanquantile, 0.25), (np.nanpercentile, 50.0)]:
        def f(x):
            return fn(x, axis=1) if q is None else fn(x, q, axis=1)
        out, f_vjp = fgrad.vjp(f, x)
        onp.testing.assert_array_equal(out, (onp.nanmedian(x, axis=1) if q is None else
                                             getattr(onp, fn.__name__)(x, q, axis=1)))
        g = f_vjp(onp.ones(2))[0]
        assert onp.all(g[onp.isnan(x)] == 0) and onp.all(onp.isfinite(g))
    onp.testing.assert_array_equal(grad_sum(lambda x: np.nanmedian(x, axis=1))(x),
                                   [[0, 0, 0, 1], [0.5, 0, 0, 0.5]])


def test_weighted_quantiles_are_an_entry_with_its_derivative():
    # numpy's weights (inverted_cdf): the first sorted entry whose cumulative weight reaches
    # q of the total; derivative 1 there, none in the weights or in q (constant between jumps)
    x = onp.array([[0.3, -1.2, 0.7, 2.0, -0.4], [1.0, 0.5, -0.5, 3.0, 2.5]])
    w = onp.array([[1.0, 2.0, 0.5, 1.5, 1.0], [0.5, 0.5, 3.0, 1.0, 1.0]])
    for fn, q in [(np.quantile, 0.4), (np.percentile, [25.0, 80.0]), (np.nanquantile, 0.6)]:
        def f(x, w):
            return fn(x, q, axis=1, method="inverted_cdf", weights=w)
        want = getattr(onp, fn.__name__)(x, q, axis=1, method="inverted_cdf", weights=w)
        out, f_vjp = fgrad.vjp(f, x, w)
        onp.testing.assert_array_equal(out, want)
        gx, gw = f_vjp(onp.ones_like(want))
        picked = onp.reshape(want, (-1, 2)).T[..., None] == x[:, None, :]  # row, q, entry
        onp.testing.assert_array_equal(gx, picked.sum(1))
        assert not gw.any()
        onp.testing.assert_array_equal(fgrad.jit(f)(x, w), want)
        onp.testing.assert_array_equal(fgrad.vmap(f, in_axes=(0, 0))(x[:, None], w[:, None]),
                                       onp.moveaxis(want, -1, 0)[..., None])
    # 1-d weights along the axis; a traced q has zero derivative
    q_of = lambda q: np.quantile(x, q, axis=1, method="inverted_cdf", weights=w[0])
    onp.testing.assert_array_equal(q_of(0.5), onp.quantile(x, 0.5, axis=1,
                                                           method="inverted_cdf", weights=w[0]))
    assert fgrad.grad(lambda q: np.sum(q_of(q)))(0.5) == 0.0


def test_median_of_a_slice_with_nan_is_nan():
    x = onp.array([[onp.nan, 1.0, 2.0], [0.0, 1.0, 2.0]])
    out, f_vjp = fgrad.vjp(lambda x: np.median(x, axis=1), x)
    onp.testing.assert_array_equal(out, onp.median(x, axis=1))
    g = f_vjp(onp.ones(2))[0]
    assert onp.all(onp.isnan(g[0])) and onp.array_equal(g[1], [0, 1, 0])


# ---- products and running reductions through zeros ------------------------------------------

def _cumprod_jacobian(x):
    n = len(x)
    J = onp.zeros((n, n))
    for j in range(n):
        for i in range(j + 1):
            J[j, i] = onp.prod([x[k] for k in range(j + 1) if k != i])
    return J


@pytest.mark.parametrize("x", [[0.5, 2.0, -1.5, 3.0], [0.5, 0.0, -1.5, 3.0],
                               [0.0, 2.0, 0.0, 3.0], [0.0, 0.0, 0.0, 1.0]])
def test_cumprod_is_exact_through_zeros(x):
    x = onp.array(x)
    J = _cumprod_jacobian(x)
    onp.testing.assert_allclose(fgrad.jacrev(np.cumprod)(x), J, rtol=1e-15)
    onp.testing.assert_allclose(fgrad.jacfwd(np.cumprod)(x), J, rtol=1e-15)
    check_grads(np.cumprod, (x,), order=2)
    check_grads(lambda x: np.prod(x), (x,), order=2)
    check_grads(lambda x: np.cumulative_prod(x, include_initial=True), (x,), order=2)


def test_cumsum_cumulative_sum_and_their_transposes():
    g = grad_sum(lambda x: np.cumsum(x, axis=1))(A)
    onp.testing.assert_array_equal(g, onp.broadcast_to([4.0, 3.0, 2.0, 1.0], A.shape))
    out, _ = fgrad.vjp(lambda x: np.cumulative_sum(x, axis=0, include_initial=True), A)
    onp.testing.assert_array_equal(out, onp.cumulative_sum(A, axis=0, include_initial=True))
    onp.testing.assert_array_equal(grad_sum(lambda x: np.cumsum(x))(A).ravel(),
                                   onp.arange(12, 0, -1))


def test_nan_running_sums_give_nan_entries_zero_derivative():
    x = onp.array([1.0, onp.nan, 2.0, 0.5])
    onp.testing.assert_array_equal(grad_sum(np.nancumsum)(x), [4, 0, 2, 1])
    # running products 1, 1 (NaN as 1), 1 * 2, 1 * 2 * 0.5
    onp.testing.assert_array_equal(grad_sum(np.nancumprod)(x), [1 + 1 + 2 + 1, 0, 1 + 0.5, 2])
    onp.testing.assert_array_equal(fgrad.grad(np.nansum)(x), [1, 0, 1, 1])
    onp.testing.assert_array_equal(fgrad.grad(np.nanprod)(x), [1, 0, 0.5, 2])
    onp.testing.assert_allclose(fgrad.grad(np.nanmean)(x), [1 / 3, 0, 1 / 3, 1 / 3])
    xs = x[~onp.isnan(x)]
    onp.testing.assert_allclose(fgrad.grad(np.nanvar)(x)[~onp.isnan(x)],
                                2 * (xs - xs.mean()) / 3, rtol=1e-14)


# ---- differences, integrals, gradients --------------------------------------------------------

def test_diff_ediff1d_trapezoid_closed_forms():
    x = onp.array([1.0, 4.0, 9.0, 16.0])
    onp.testing.assert_array_equal(fgrad.jacrev(lambda x: np.diff(x, n=2))(x),
                                   [[1, -2, 1, 0], [0, 1, -2, 1]])
    g = fgrad.grad(lambda p, a: np.sum(np.diff(x, prepend=p, append=a) ** 2),
                   argnums=(0, 1))(0.5, 20.0)
    assert g == (2 * (0.5 - 1.0), 2 * (20.0 - 16.0))
    onp.testing.assert_array_equal(
        fgrad.jacrev(lambda x: np.ediff1d(x, to_begin=x[0], to_end=[7.0, 8.0]))(x),
        [[1, 0, 0, 0], [-1, 1, 0, 0], [0, -1, 1, 0], [0, 0, -1, 1], [0, 0, 0, 0],
         [0, 0, 0, 0]])
    # trapezoid: d/dy = dx * (1/2, 1, ..., 1, 1/2); d/dx_i = (y_{i-1} - y_{i+1}) / 2 inside,
    # -(y_0 + y_1) / 2 and (y_{n-2} + y_{n-1}) / 2 at the ends
    y = onp.array([1.0, 3.0, 2.0, 5.0])
    onp.testing.assert_array_equal(fgrad.grad(lambda y: np.trapezoid(y, dx=0.5))(y),
                                   [0.25, 0.5, 0.5, 0.25])
    onp.testing.assert_array_equal(fgrad.grad(lambda t: np.trapezoid(y, x=t))(x),
                                   [-(y[0] + y[1]) / 2, (y[0] - y[2]) / 2, (y[1] - y[3]) / 2,
                                    (y[2] + y[3]) / 2])
    assert fgrad.grad(lambda d: np.trapezoid(y, dx=d))(0.5) == onp.trapezoid(y)


def test_gradient_is_the_difference_matrix():
    f = onp.array([1.0, 2.0, 4.0, 7.0, 11.0])
    J = fgrad.jacrev(lambda f: np.gradient(f, 0.5))(f)
    want = onp.array([[-2, 2, 0, 0, 0], [-1, 0, 1, 0, 0], [0, -1, 0, 1, 0], [0, 0, -1, 0, 1],
                      [0, 0, 0, -2, 2]])
    onp.testing.assert_array_equal(J, want)
    J2 = fgrad.jacfwd(lambda f: np.gradient(f, edge_order=2))(f)
    onp.testing.assert_array_equal(J2[0], [-1.5, 2, -0.5, 0, 0])
    onp.testing.assert_array_equal(J2[-1], [0, 0, 0.5, -2, 1.5])
    # several axes: a tuple, as numpy 2 gives; traced scalar spacing per axis
    out, _ = fgrad.vjp(lambda a, d: np.gradient(a, d, 2.0), A, 0.5)
    assert type(out) is tuple and len(out) == 2
    for o, w in zip(out, onp.gradient(A, 0.5, 2.0)):
        onp.testing.assert_array_equal(o, w)
    check_grads(lambda a, d: np.gradient(a, d, 2.0), (A, 0.5))
    # sample coordinates, traced and not
    xs = onp.array([0.0, 0.5, 1.5, 2.0, 3.5])
    out, _ = fgrad.vjp(lambda f, xs: np.gradient(f, xs, edge_order=2), f, xs)
    onp.testing.assert_array_equal(out, onp.gradient(f, xs, edge_order=2))
    check_grads(lambda f, xs: np.gradient(f, xs), (f, xs))
    check_grads(lambda f: np.gradient(f, xs, edge_order=2), (f,))


# ---- covariance and correlation ---------------------------------------------------------------

def test_cov_closed_form():
    X = rng.uniform(-1, 1, (2, 5))
    n = X.shape[1]
    # sum of all entries of cov: (1/(n-1)) sum_k (sum_i Xc_ik)^2
    Xc = X - X.mean(1, keepdims=True)
    col = Xc.sum(0)
    g = fgrad.grad(lambda X: np.sum(np.cov(X)))(X)
    onp.testing.assert_allclose(g, onp.broadcast_to(2 * (col - col.mean()) / (n - 1), X.shape),
                                rtol=1e-13, atol=1e-15)
    # a diagonal entry is the variance with ddof=1
    g = fgrad.grad(lambda X: np.cov(X)[0, 0])(X)
    onp.testing.assert_allclose(g[0], 2 * Xc[0] / (n - 1), rtol=1e-13)
    onp.testing.assert_array_equal(g[1], onp.zeros(n))


def test_cov_and_corrcoef_forms():
    x, y = rng.uniform(-1, 1, 5), rng.uniform(-1, 1, 5)
    fw, aw = onp.array([1, 2, 1, 3, 1]), rng.uniform(0.5, 1.5, 5)
    calls = [lambda x, y: np.cov(x, y), lambda x, y: np.cov(np.stack([x, y]), bias=True),
             lambda x, y: np.cov(np.stack([x, y], axis=1), rowvar=False, ddof=0),
             lambda x, y: np.cov(x, y, fweights=fw, aweights=aw),
             lambda x, y: np.corrcoef(x, y), lambda x, y: np.corrcoef(np.stack([x, y, x * y]))]
    for call in calls:
        want = call(x, y)  # on plain arrays: numpy's own
        out, _ = fgrad.vjp(call, x, y)
        onp.testing.assert_array_equal(out, want)
        check_grads(call, (x, y), order=2)
        onp.testing.assert_allclose(fgrad.jacfwd(call, argnums=(0, 1))(x, y),
                                    fgrad.jacrev(call, argnums=(0, 1))(x, y), atol=1e-13)
    # traced analytic weights
    check_grads(lambda x, w: np.cov(x, y, aweights=w), (x, aw))
    # correlation is scale-free: its derivative along x itself is 0
    t = fgrad.jvp(lambda x: np.corrcoef(x, y), (x,), (x,))[1]
    onp.testing.assert_allclose(t, onp.zeros((2, 2)), atol=1e-14)


# ---- numpy's values, plain and traced ---------------------------------------------------------

B = rng.uniform(0.2, 1.5, (2, 3, 4))
NAN = onp.zeros(B.shape, bool)
NAN[0, 1, 2] = NAN[1, 0, 0] = NAN[1, 2, 3] = True  # at most one NaN along any line
CALLS = {
    "sum where initial": lambda m, x: m.sum(x, axis=1, where=x > 0.5, initial=1.0),
    "sum dtype keepdims": lambda m, x: m.sum(x, axis=(0, -1), dtype=m.float64, keepdims=True),
    "mean where": lambda m, x: m.mean(x, axis=-1, where=x < 1.2),
    "prod initial": lambda m, x: m.prod(x, axis=0, initial=2.0),
    "max keepdims": lambda m, x: m.max(x, axis=(0, 2), keepdims=True),
    "amin where": lambda m, x: m.amin(x, axis=1, where=x > 0.3, initial=9.0),
    "var ddof": lambda m, x: m.var(x, axis=1, ddof=1),
    "var float32 dtype": lambda m, x: m.var(x, axis=-1, dtype=m.float32),
    "std keepdims": lambda m, x: m.std(x, axis=(1, 2), keepdims=True),
    "cumsum": lambda m, x: m.cumsum(x, axis=1),
    "cumprod flat": lambda m, x: m.cumprod(x),
    "cumulative_prod": lambda m, x: m.cumulative_prod(x, axis=-1, include_initial=True),
    "average weights": lambda m, x: m.average(x, axis=-1, weights=m.arange(1.0, 5.0)),
    "ptp": lambda m, x: m.ptp(x, axis=-1),
    "median": lambda m, x: m.median(x, axis=(0, 1)),
    "percentile list": lambda m, x: m.percentile(x, [10, 50, 90], axis=-1),
    "quantile weibull": lambda m, x: m.quantile(x, 0.3, axis=1, method="weibull",
                                                keepdims=True),
    "nansum": lambda m, x: m.nansum(m.where(NAN, m.nan, x), axis=0),
    "nanmean": lambda m, x: m.nanmean(m.where(NAN, m.nan, x), axis=-1),
    "nanstd": lambda m, x: m.nanstd(m.where(NAN, m.nan, x), axis=1, ddof=1),
    "nanmedian": lambda m, x: m.nanmedian(m.where(NAN, m.nan, x), axis=-1),
    "nanquantile": lambda m, x: m.nanquantile(m.where(NAN, m.nan, x), [0.2, 0.7], axis=2),
    "nanmax": lambda m, x: m.nanmax(m.where(NAN, m.nan, x), axis=0),
    "diff": lambda m, x: m.diff(x, n=2, axis=1, append=0.5),
    "ediff1d": lambda m, x: m.ediff1d(x, to_begin=[1.0, 2.0]),
    "trapezoid": lambda m, x: m.trapezoid(x, dx=0.3, axis=1),
    "gradient": lambda m, x: m.gradient(x, 0.5, axis=(0, 2)),
    "cov": lambda m, x: m.cov(x[0], rowvar=False),
    "corrcoef": lambda m, x: m.corrcoef(x[1]),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_are_numpys(name, dtype):
    call, x = CALLS[name], B.astype(dtype)
    want = call(onp, x)
    plain = call(np, x)
    got, _ = fgrad.vjp(lambda x: call(np, x), x)
    for g in (plain, got):
        for a, b in zip(*(v if isinstance(v, tuple) else (v,) for v in (g, want)), strict=True):
            onp.testing.assert_array_equal(a, b)
            assert onp.result_type(a) == onp.result_type(b), name


@pytest.mark.parametrize("name", sorted(CALLS))
def test_jacfwd_equals_jacrev(name):
    call = CALLS[name]
    if "gradient" in name:  # a tuple of outputs: compare each
        f = (lambda k: lambda x: call(np, x)[k])
        fs = [f(0), f(1)]
    else:
        fs = [lambda x: call(np, x)]
    tol = 1e-6 if "float32" in name else 1e-12  # float32 sums round differently per mode
    for f in fs:
        onp.testing.assert_allclose(fgrad.jacfwd(f)(B), fgrad.jacrev(f)(B), rtol=tol,
                                    atol=tol / 10)


@pytest.mark.parametrize("name", ["var ddof", "std keepdims", "median", "percentile list",
                                  "nanstd", "nanquantile", "average weights", "corrcoef"])
def test_second_order_against_finite_differences(name):
    call = CALLS[name]
    check_grads(lambda x: call(np, x), (B,), order=2)


def test_lists_of_tracers_and_methods():
    x = onp.array([0.5, 1.5, -0.2])
    out, f_vjp = fgrad.vjp(lambda x: np.mean([x, x + 2]), x)
    assert out == onp.mean([x, x + 2])
    onp.testing.assert_allclose(f_vjp(onp.float64(1.0))[0], onp.full(3, 1 / 3))
    g = fgrad.grad(lambda x: np.median([x[0], x[1], x[2]]))(x)
    onp.testing.assert_array_equal(g, [1, 0, 0])
    g = fgrad.grad(lambda x: np.max([x[0], 2 * x[1]]))(x)
    onp.testing.assert_array_equal(g, [0, 2, 0])
    # ndarray methods on a tracer are these functions
    f = lambda x: x.var(ddof=1) + x.std() + x.cumsum()[-1] + x.cumprod()[1] + x.max()  # noqa
    check_grads(f, (x,))
    assert fgrad.value_and_grad(f)(x)[0] == f(x)


# ---- errors ---------------------------------------------------------------------------------

def _traced(f):
    return lambda: fgrad.grad(lambda x: np.sum(f(x)))(onp.array([1.0, 2.0, 4.0]))


@pytest.mark.parametrize("f, error, match", [
    (lambda x: np.sum(x, out=onp.empty(())), TracerMutationError, "out="),
    (lambda x: np.var(x, out=onp.empty(())), TracerMutationError, "out="),
    (lambda x: np.cumsum(x, out=onp.empty(3)), TracerMutationError, "out="),
    (lambda x: np.quantile(x, 0.5, weights=onp.ones(3)), ValueError,
     "Only method 'inverted_cdf' supports weights"),
    (lambda x: np.percentile(x, 150), ValueError, r"range \[0, 100\]"),
    (lambda x: np.quantile(x, 0.5, method="nope"), ValueError, "not a valid method"),
    (lambda x: np.sum(x, axis=1), onp.exceptions.AxisError, "out of bounds"),
    (lambda x: np.median(x, axis=(0, 0)), ValueError, "repeated axis"),
    (lambda x: np.max(x, where=x > 1), ValueError, "initial"),
    (lambda x: np.var(x, ddof=1, correction=1), ValueError, "simultaneously"),
    (lambda x: np.average(x, weights=x - x), ZeroDivisionError, "Weights sum to zero"),
    (lambda x: np.average(x, weights=onp.ones(2)), TypeError, "Axis must be specified"),
    (lambda x: np.diff(x, n=-1), ValueError, "order must be non-negative"),
    (lambda x: np.ediff1d(x, to_begin=1j), TypeError, "same_kind"),
    (lambda x: np.gradient(x[:1]), ValueError, "too small"),
    (lambda x: np.gradient(x, 1.0, 2.0), TypeError, "invalid number of arguments"),
    (lambda x: np.cumulative_sum(x[None]), ValueError, "``axis`` argument is required"),
])
def test_errors(f, error, match):
    with pytest.raises(error, match=match):
        _traced(f)()
