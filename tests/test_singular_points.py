"""Derivatives numpy's functions have at singular points and near zeros (issue 31, items 3-4):
det's gradient is the cofactor matrix at every matrix, and the higher derivatives of the
polynomials det, prod and cumprod are exact at and near their zeros, in every mode and in jet."""
import itertools
import math

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads

SINGULAR_2 = onp.array([[1.0, 2.0], [2.0, 4.0]])
RANK_1_3 = onp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [-1.0, -2.0, -3.0]])
RANK_2_3 = onp.array([[1.0, 2.0, 3.0], [2.0, 4.0, 6.0], [1.0, 0.0, 1.0]])


def cofactors_by_minors(a):
    """adj(a)^T from its definition: signed determinants of the minors."""
    n = a.shape[0]
    out = onp.empty_like(a)
    for i, j in itertools.product(range(n), repeat=2):
        minor = onp.delete(onp.delete(a, i, 0), j, 1)
        out[i, j] = (-1) ** (i + j) * onp.linalg.det(minor)
    return out


@pytest.mark.parametrize("a", [SINGULAR_2, RANK_1_3, RANK_2_3, onp.zeros((3, 3)),
                               onp.diag([1.0, 0.0, 0.0, 2.0])])
def test_det_gradient_at_singular_matrices_is_the_cofactor_matrix(a):
    want = cofactors_by_minors(a)
    onp.testing.assert_allclose(fgrad.grad(np.linalg.det)(a), want, atol=1e-12)
    t = onp.arange(a.size, dtype=float).reshape(a.shape) / a.size
    value, tangent = fgrad.jvp(np.linalg.det, (a,), (t,))
    assert value == onp.linalg.det(a)
    onp.testing.assert_allclose(tangent, onp.sum(want * t), atol=1e-12)
    onp.testing.assert_allclose(fgrad.jit(fgrad.grad(np.linalg.det))(a), want, atol=1e-12)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(np.linalg.det))(onp.stack([a, a])),
                                [want, want], atol=1e-12)


def test_the_issues_singular_matrix_has_the_adjugate_as_jax_gives():
    onp.testing.assert_array_equal(fgrad.grad(np.linalg.det)(SINGULAR_2),
                                   [[4.0, -2.0], [-2.0, 1.0]])
    assert fgrad.jvp(np.linalg.det, (SINGULAR_2,), (onp.eye(2),)) == (0.0, 5.0)


def _det_path_derivatives(a, t, order):
    """d^k/ds^k det(a + s t) at 0, exactly: det(a + s t) is a polynomial of degree n, read
    off from n + 1 values by exact rational interpolation at s = 0..n."""
    n = a.shape[0]
    ss = onp.arange(n + 1.0)
    values = [onp.linalg.det(a + s * t) for s in ss]
    coefs = onp.linalg.solve(onp.vander(ss, increasing=True), values)
    return [math.factorial(k) * (coefs[k] if k <= n else 0.0) for k in range(1, order + 1)]


@pytest.mark.parametrize("a", [SINGULAR_2, RANK_1_3, RANK_2_3,
                               onp.array([[1.0, 2.0], [2.0, 4.0 + 1e-6]])])
def test_det_higher_derivatives_are_exact_at_and_near_singular_matrices(a):
    n = a.shape[0]
    t = onp.eye(n)
    want = _det_path_derivatives(a, t, 4)
    _, terms = fgrad.jet(np.linalg.det, (a,), ([t] + [onp.zeros_like(a)] * 3,))
    onp.testing.assert_allclose(terms, want, atol=1e-9)
    # nested jvp, and reverse over forward
    along = lambda f: (lambda x: fgrad.jvp(f, (x,), (t,))[1])
    d = np.linalg.det
    for k in range(1, 5):
        d = along(d)
        onp.testing.assert_allclose(d(a), want[k - 1], atol=1e-9)
    hessian = fgrad.hessian(np.linalg.det)(a)
    onp.testing.assert_allclose(onp.einsum("ijkl,ij,kl", hessian, t, t), want[1], atol=1e-9)


def test_the_issues_near_singular_det_jet_is_exact():
    a = onp.array([[1.0, 2.0], [2.0, 4.0 + 1e-6]])
    _, terms = fgrad.jet(np.linalg.det, (a,), ([onp.eye(2)] + [onp.zeros((2, 2))] * 3,))
    assert terms[2] == 0.0 and terms[3] == 0.0  # was 0.0299 and 466644.5


def test_det_and_cofactors_agree_with_finite_differences_to_third_order():
    rng = onp.random.default_rng(0)
    for a in (rng.standard_normal((3, 3)), rng.standard_normal((2, 4, 4)),
              rng.standard_normal((3, 3)) + 1j * rng.standard_normal((3, 3))):
        check_grads(np.linalg.det, (a,), order=3)


def _prod_path_derivatives(x, t, order):
    """d^k/ds^k prod(x + s t) at 0, from the polynomial's coefficients."""
    poly = onp.poly1d([1.0])
    for xi, ti in zip(x, t):
        poly = poly * onp.poly1d([ti, xi])
    coefs = poly.coeffs[::-1]
    return [math.factorial(k) * (coefs[k] if k < len(coefs) else 0.0)
            for k in range(1, order + 1)]


@pytest.mark.parametrize("x", [onp.array([1e-6, 2.0, 3.0]), onp.array([0.0, 2.0, 3.0]),
                               onp.array([0.0, 0.0, 3.0, -1.5]), onp.array([1e-8, -1e-7, 5.0])])
def test_prod_and_cumprod_higher_derivatives_are_exact_near_zeros(x):
    t = onp.ones_like(x)
    want = _prod_path_derivatives(x, t, 4)
    zeros = [onp.zeros_like(x)] * 3
    _, terms = fgrad.jet(np.prod, (x,), ([t] + zeros,))
    onp.testing.assert_allclose(terms, want, rtol=1e-12, atol=1e-12)
    _, terms = fgrad.jet(lambda v: np.cumprod(v)[-1], (x,), ([t] + zeros,))
    onp.testing.assert_allclose(terms, want, rtol=1e-12, atol=1e-12)
    d = np.prod
    for k in range(1, 5):
        d = (lambda f: (lambda v: fgrad.jvp(f, (v,), (t,))[1]))(d)
        onp.testing.assert_allclose(d(x), want[k - 1], rtol=1e-12, atol=1e-12)


def test_the_issues_prod_jet_is_exact():
    _, terms = fgrad.jet(np.prod, (onp.array([1e-6, 2.0, 3.0]),),
                         ([onp.ones(3)] + [onp.zeros(3)] * 3,))
    assert terms[2] == 6.0 and terms[3] == 0.0  # was 5.9993 and 1397.8


def test_cumprod_jacobians_through_zeros_in_both_modes():
    x = onp.array([0.0, 2.0, 3.0, 0.5])
    # d cumprod(x)_j / d x_i = prod_{k <= j, k != i} x_k for i <= j
    want = onp.array([[onp.prod([x[k] for k in range(j + 1) if k != i]) if i <= j else 0.0
                       for i in range(4)] for j in range(4)])
    onp.testing.assert_array_equal(fgrad.jacrev(np.cumprod)(x), want)
    onp.testing.assert_array_equal(fgrad.jacfwd(np.cumprod)(x), want)
    check_grads(lambda v: np.cumprod(v, axis=1), (onp.array([[0.0, 1.2, -0.7, 0.9, 1.1],
                                                               [0.3, 0.0, 0.0, 2.0, 0.5]]),),
                order=3)
    check_grads(lambda v: np.prod(v, axis=(0, 2)), (onp.array([[[0.0, 1.0], [2.0, 0.5]],
                                                                 [[1.5, -1.0], [0.0, 0.0]]]),),
                order=3)


def test_products_over_an_empty_axis_have_empty_derivatives():
    # (the division-free rules first gave a one-entry partial for an empty axis)
    for f, x in [(np.prod, onp.zeros(0)), (lambda v: np.sum(np.prod(v, axis=1)), onp.zeros((2, 0))),
                 (lambda v: np.sum(np.cumprod(v, axis=1)), onp.zeros((2, 0)))]:
        assert fgrad.grad(f)(x).shape == x.shape
        assert fgrad.jvp(f, (x,), (x,))[1] == 0.0
