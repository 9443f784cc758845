"""linspace/logspace/geomspace, apply_along_axis/apply_over_axes/fromfunction and bincount:
closed-form derivatives and agreement with numpy."""
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
