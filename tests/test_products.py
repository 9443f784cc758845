"""Products, einsum and polynomials: exact derivative values, numpy's values, errors.

The generated tests (test_rules.py) check every entry of the family against finite
differences from its Spec; these pin down closed forms (the gradient of ``vdot`` is the other
operand, of a trace the identity, a Hessian of a quadratic form ``A + A^T``), numpy's values
over many einsum subscripts, complex operands under JAX's convention, the conventions at
trimmed zeros and multiple roots, and the errors of unsupported arguments.
"""
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import TracerMutationError
from fgrad.testing import check_grads

rng = onp.random.default_rng(0)


def _takes_two_vectors():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        try:
            onp.cross([1.0, 0.0], [0.0, 1.0])
        except ValueError:
            return False
    return True


# whether numpy's cross takes 2-vectors (deprecated in numpy 2.0, refused from 2.5)
TWO_VECTORS = _takes_two_vectors()


def real(*shape):
    return rng.uniform(-1, 1, shape)


def cplx(*shape):
    return real(*shape) + 1j * real(*shape)


def assert_same(got, want):
    """Equal bit for bit, dtype included."""
    onp.testing.assert_array_equal(got, want)
    assert onp.result_type(got) == onp.result_type(want)


def traced_value(f, *xs):
    """``f``'s value computed under a transform (a traced forward pass)."""
    return fgrad.vjp(f, *xs)[0]


# --- closed forms --------------------------------------------------------------------------

def test_vdot_gradient_is_the_other_operand():
    a, b = real(2, 3), real(6)
    ga, gb = fgrad.grad(np.vdot, argnums=(0, 1))(a, b)
    onp.testing.assert_array_equal(ga, b.reshape(2, 3))
    onp.testing.assert_array_equal(gb, a.ravel())


def test_vdot_complex_conjugates_its_first_operand():
    a, b = cplx(3), cplx(3)
    assert_same(traced_value(np.vdot, a, b), onp.vdot(a, b))
    ga, gb = fgrad.vjp(np.vdot, a, b)[1](1.0 + 0j)
    # sum(conj(a) b) is conjugate-linear in a: its transpose carries the conjugate
    onp.testing.assert_allclose(ga, onp.conj(b), rtol=1e-15)
    onp.testing.assert_allclose(gb, onp.conj(a), rtol=1e-15)
    # the JVP is vdot of the tangent
    ta = cplx(3)
    onp.testing.assert_allclose(fgrad.jvp(lambda a: np.vdot(a, b), (a,), (ta,))[1],
                                onp.vdot(ta, b), rtol=1e-14)
    check_grads(np.vdot, (a, b))
    check_grads(np.vdot, (a.real, b))  # a real operand gets the real part of its cotangent


def test_einsum_trace_gradient_is_identity():
    x = real(3, 3)
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.einsum("ii", x))(x), onp.eye(3))
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.einsum("ii->", x))(x), onp.eye(3))
    # the diagonal: each output reads one diagonal entry
    jac = fgrad.jacrev(lambda x: np.einsum("ii->i", x))(x)
    want = onp.zeros((3, 3, 3))
    for i in range(3):
        want[i, i, i] = 1.0
    onp.testing.assert_array_equal(jac, want)
    onp.testing.assert_array_equal(fgrad.jacfwd(lambda x: np.einsum("ii->i", x))(x), want)


def test_einsum_repeated_index_with_a_free_one():
    x = real(2, 2, 3)
    g = real(2, 3)
    got = fgrad.vjp(lambda x: np.einsum("iij->ij", x), x)[1](g)[0]
    want = onp.zeros((2, 2, 3))
    want[0, 0], want[1, 1] = g[0], g[1]
    onp.testing.assert_array_equal(got, want)


def test_hessian_of_quadratic_form_by_einsum():
    a, x = real(3, 3), real(3)
    hess = fgrad.hessian(lambda x: np.einsum("i,ij,j->", x, a, x))(x)
    onp.testing.assert_allclose(hess, a + a.T, rtol=1e-14, atol=1e-15)
    # and the gradient with respect to the matrix is the outer product
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.einsum("i,ij,j", x, a, x))(a),
                                onp.outer(x, x), rtol=1e-15)


def test_kron_jacobians_closed_form():
    a, b = real(2), real(3)
    onp.testing.assert_array_equal(fgrad.jacrev(lambda a: np.kron(a, b))(a),
                                   onp.kron(onp.eye(2), b[:, None]))
    onp.testing.assert_array_equal(fgrad.jacfwd(lambda b: np.kron(a, b))(b),
                                   onp.kron(a[:, None], onp.eye(3)))
    # matrices: d sum(kron(A, B) * G) / dA_ij = sum_kl G[i*p+k, j*q+l] B_kl
    A, B, G = real(2, 2), real(2, 3), real(4, 6)
    got = fgrad.vjp(lambda A: np.kron(A, B), A)[1](G)[0]
    want = onp.einsum("ikjl,kl->ij", G.reshape(2, 2, 2, 3), B)
    onp.testing.assert_allclose(got, want, rtol=1e-14)


def test_convolve_transpose_is_correlate():
    a, v, g = real(5), real(3), real(7)
    ga, gv = fgrad.vjp(np.convolve, a, v)[1](g)
    onp.testing.assert_allclose(ga, onp.correlate(g, v, "valid"), rtol=1e-14, atol=1e-15)
    onp.testing.assert_allclose(gv, onp.correlate(g, a, "valid"), rtol=1e-14, atol=1e-15)
    # the gradient of a smoothing loss: d/da sum(convolve(a, v)) = correlate(ones, v)
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.sum(np.convolve(a, v)))(a),
                                onp.full(5, v.sum()), rtol=1e-14)


@pytest.mark.parametrize("fn", ["convolve", "correlate"])
@pytest.mark.parametrize("mode", ["full", "same", "valid", 1])
@pytest.mark.parametrize("na, nv", [(4, 2), (2, 4), (3, 3), (4, 3), (1, 3)])
def test_convolve_correlate_every_mode_and_length(fn, mode, na, nv):
    f = lambda a, v: getattr(np, fn)(a, v, mode)  # noqa: E731
    for a, v in [(real(na), real(nv)), (cplx(na), cplx(nv)), (real(na), cplx(nv))]:
        assert_same(traced_value(f, a, v), getattr(onp, fn)(a, v, mode))
        check_grads(f, (a, v))


def test_correlate_conjugates_its_second_operand():
    a, v = cplx(4), cplx(2)
    # correlate(a, v) is conjugate-linear in v: the JVP is the correlation with the tangent
    t = cplx(2)
    onp.testing.assert_allclose(fgrad.jvp(lambda v: np.correlate(a, v), (v,), (t,))[1],
                                onp.correlate(a, t), rtol=1e-14)


def test_cross_triple_product():
    a, b, c = real(3), real(3), real(3)
    ga = fgrad.grad(lambda a: np.dot(c, np.cross(a, b)))(a)
    onp.testing.assert_allclose(ga, onp.cross(b, c), rtol=1e-14, atol=1e-15)
    gb = fgrad.grad(lambda b: np.dot(c, np.cross(a, b)))(b)
    onp.testing.assert_allclose(gb, onp.cross(c, a), rtol=1e-14, atol=1e-15)


@pytest.mark.parametrize("shapes, kw", [
    (((2, 3), (2, 3)), {}),
    (((3, 2), (2, 3)), {"axisa": 0}),
    (((2, 3), (3, 2)), {"axisb": -2, "axisc": 0}),
    (((3, 2), (3, 1)), {"axis": 0}),
    (((1, 3), (2, 3)), {}),
    (((2,), (2,)), {}),
    (((2, 2), (3,)), {}),
    (((3,), (2, 2)), {"axisc": 0}),
])
def test_cross_axes_and_two_vectors(shapes, kw):
    f = lambda a, b: np.cross(a, b, **kw)  # noqa: E731
    pairs = [(real(*shapes[0]), real(*shapes[1])), (cplx(*shapes[0]), cplx(*shapes[1]))]
    if 2 in (shapes[0][kw.get("axisa", kw.get("axis", -1))],
             shapes[1][kw.get("axisb", kw.get("axis", -1))]) and not TWO_VECTORS:
        for a, b in pairs:  # (numpy 2.5 refuses 2-vectors: so does fgrad, with its error)
            with pytest.raises(ValueError, match="3-dimensional vectors"):
                traced_value(f, a, b)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # numpy: 2-vectors are deprecated
        for a, b in pairs:
            assert_same(traced_value(f, a, b), onp.cross(a, b, **kw))
            check_grads(f, (a, b))


@pytest.mark.skipif(not TWO_VECTORS, reason="numpy 2.5 refuses 2-vectors in cross")
def test_cross_of_two_2_vectors_is_the_z_component():
    a, b = real(2), real(2)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        ga = fgrad.grad(lambda a: np.cross(a, b))(a)
    onp.testing.assert_array_equal(ga, [b[1], -b[0]])


def test_polyval_derivatives():
    p, x = real(4), real(3)
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(np.polyval(p, x)))(x),
                                onp.polyval(onp.polyder(p), x), rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacrev(lambda p: np.polyval(p, x))(p),
                                onp.vander(x, 4), rtol=1e-15)


def test_roots_derivative_of_simple_roots():
    p = onp.array([1.0, -3.0, 2.0])  # (x - 2)(x - 1)
    assert_same(traced_value(np.roots, p), onp.roots(p))
    jac = fgrad.jacrev(np.roots)(p)
    # dr/dp_k = -r^(2-k) / p'(r), p'(x) = 2x - 3
    onp.testing.assert_allclose(jac, [[-4.0, -2.0, -1.0], [1.0, 1.0, 1.0]], rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(np.roots)(p), jac, rtol=1e-12)
    # complex roots of a real polynomial: real coefficients get the cotangent's real part
    q = onp.array([1.0, 0.4, 2.0, -1.0])
    check_grads(np.roots, (q,))
    check_grads(np.roots, (cplx(3),))


def test_roots_at_zero_and_multiple_roots():
    # a trailing zero is a simple root at 0: dr/dp_3 = -1 / p'(0) = -1 / p_2
    p = onp.array([1.0, -3.0, 2.0, 0.0])
    r = onp.roots(p)
    k = int(onp.argmin(abs(r)))
    onp.testing.assert_allclose(fgrad.jacrev(np.roots)(p)[k], [0.0, 0.0, 0.0, -0.5], atol=1e-12)
    # at a double root the derivative is unbounded: reported as non-finite, never a number
    with onp.errstate(divide="ignore", invalid="ignore"):
        jac = fgrad.jacrev(np.roots)(onp.array([1.0, -2.0, 1.0]))
    assert not onp.isfinite(jac).all()


def test_poly_and_polyfit_closed_forms():
    z = onp.array([1.0, 2.0])
    assert_same(traced_value(np.poly, z), onp.poly(z))
    # poly = [1, -(z0 + z1), z0 z1]
    onp.testing.assert_array_equal(fgrad.jacrev(np.poly)(z), [[0, 0], [-1, -1], [2, 1]])
    # conjugate pairs give real coefficients
    f = lambda a, b: np.poly(np.stack([a + 1j * b, a - 1j * b]))  # noqa: E731
    assert_same(traced_value(f, 0.3, 0.7), onp.poly([0.3 + 0.7j, 0.3 - 0.7j]))
    # a fit is linear in y: its Jacobian is the pseudo-inverse of the Vandermonde matrix
    x, y = onp.array([-1.0, -0.2, 0.5, 1.3]), real(4)
    onp.testing.assert_allclose(fgrad.jacrev(lambda y: np.polyfit(x, y, 2))(y),
                                onp.linalg.pinv(onp.vander(x, 3)), rtol=1e-10, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(lambda x: np.polyfit(x, y, 2))(x),
                                fgrad.jacrev(lambda x: np.polyfit(x, y, 2))(x), rtol=1e-10)


def test_poly_of_a_matrix_is_its_characteristic_polynomial():
    m = onp.array([[2.0, 1.0], [0.5, -1.0]])
    assert_same(traced_value(np.poly, m), onp.poly(m))
    # [1, -trace, det]: gradients -I and det * inv^T
    onp.testing.assert_allclose(fgrad.grad(lambda m: np.poly(m)[1])(m), -onp.eye(2),
                                atol=1e-15)
    onp.testing.assert_allclose(fgrad.grad(lambda m: np.poly(m)[2])(m),
                                onp.linalg.det(m) * onp.linalg.inv(m).T, rtol=1e-12)


def test_polydiv_quotient_and_remainder():
    u, v = onp.array([1.0, 0.0, -1.0]), onp.array([1.0, -1.0])  # x^2 - 1 = (x - 1)(x + 1)
    q, r = traced_value(np.polydiv, u, v)
    assert_same(q, onp.polydiv(u, v)[0])
    assert_same(r, onp.polydiv(u, v)[1])
    # q = [u0 / v0, ...]: d q0 / d u0 = 1 / v0
    dq = fgrad.jacrev(lambda u: np.polydiv(u, v)[0])(u)
    onp.testing.assert_allclose(dq, [[1.0, 0.0, 0.0], [1.0, 1.0, 0.0]], rtol=1e-14)
    check_grads(np.polydiv, (cplx(4), cplx(2)))
    check_grads(np.polydiv, (real(2), real(3)))  # a lower degree: q = 0, r = u


def test_polymul_drops_leading_zeros_with_zero_derivative():
    a, b = onp.array([0.0, 1.0, 2.0]), real(2)
    assert_same(traced_value(np.polymul, a, b), onp.polymul(a, b))
    jac = fgrad.jacrev(lambda a: np.polymul(a, b))(a)
    assert jac.shape == (3, 3)
    onp.testing.assert_array_equal(jac[:, 0], 0.0)


def test_polynomial_arithmetic_values_and_float32():
    cases = [(np.polyadd, (real(2), real(4))), (np.polysub, (real(4), real(1))),
             (np.polymul, (real(3), real(2))), (np.polyval, (real(3), real(2, 2))),
             (lambda p: np.polyder(p, 2), (real(4),)), (lambda p: np.polyint(p, 2), (real(3),)),
             (lambda p, k: np.polyint(p, 2, k), (real(3), real(2))), (np.vander, (real(3),))]
    for f, xs in cases:
        for dtype in ("float64", "float32"):
            xs_d = tuple(x.astype(dtype) for x in xs)
            out, f_vjp = fgrad.vjp(f, *xs_d)
            assert_same(out, f(*xs_d))  # fgrad on plain arrays is numpy
            for x, g in zip(xs_d, f_vjp(out)):
                assert g.dtype == x.dtype
        check_grads(f, xs)


# --- numpy's values, many subscripts --------------------------------------------------------

EINSUMS = [
    ("ij,jk->ik", [(2, 3), (3, 4)]), ("ij,jk", [(2, 3), (3, 4)]), ("ij->ji", [(2, 3)]),
    ("ii", [(3, 3)]), ("ii->i", [(3, 3)]), ("iij->ij", [(2, 2, 3)]), ("iji->j", [(2, 3, 2)]),
    ("ij->", [(2, 3)]), ("ij->j", [(2, 3)]), ("i,j->ij", [(2,), (3,)]), ("i,i", [(3,), (3,)]),
    ("...ij,...jk->...ik", [(2, 1, 2, 3), (3, 3, 2)]), ("...i,...i", [(2, 1, 3), (4, 3)]),
    ("i...->...", [(3, 2, 2)]), ("...ii->...i", [(2, 3, 3)]), ("ij,ij->ij", [(2, 1), (2, 3)]),
    ("ij,j,k", [(2, 3), (3,), (2,)]), ("bij,bjk->bik", [(2, 2, 3), (2, 3, 2)]),
    (",i->i", [(), (3,)]), ("Ba,aB", [(2, 3), (3, 2)]),
    ("i,ij,jk,k->", [(2,), (2, 3), (3, 2), (2,)]),
    (" i j , j k -> i k ", [(2, 3), (3, 2)]),
]


@pytest.mark.parametrize("subscripts, shapes", EINSUMS, ids=[s for s, _ in EINSUMS])
def test_einsum_values_and_derivatives(subscripts, shapes):
    f = lambda *xs: np.einsum(subscripts, *xs)  # noqa: E731
    xs = [real(*s) for s in shapes]
    for dtype in ("float64", "float32"):
        xd = [x.astype(dtype) for x in xs]
        assert_same(traced_value(f, *xd), onp.einsum(subscripts, *xd))
    check_grads(f, xs)
    check_grads(f, [cplx(*s) for s in shapes], order=1)


def test_einsum_optimize_is_numpys_and_accepted_in_every_form():
    a, b, c = real(2, 3), real(3, 4), real(4, 2)
    path = onp.einsum_path("ij,jk,kl->il", a, b, c, optimize="optimal")[0]
    for optimize in (False, True, "greedy", "optimal", path):
        f = lambda a, b, c: np.einsum("ij,jk,kl->il", a, b, c, optimize=optimize)  # noqa: E731
        assert_same(traced_value(f, a, b, c),
                    onp.einsum("ij,jk,kl->il", a, b, c, optimize=optimize))
        check_grads(f, (a, b, c), order=1)
    assert np.einsum_path("ij,jk->ik", a, b)[0] == onp.einsum_path("ij,jk->ik", a, b)[0]


@pytest.mark.parametrize("sub_a, sub_b, out, shape_b", [
    ([0, 1], [1, 2], None, (3, 4)), ([0, 1], [1, 2], [2, 0], (3, 4)),
    ([Ellipsis, 1], [1, Ellipsis], None, (3, 2)), ([27, 1], [1, 2], None, (3, 4)),
    ([0, 1], [1, 0], [], (3, 2))])
def test_einsum_interleaved_sublists(sub_a, sub_b, out, shape_b):
    a, b = real(2, 3), real(*shape_b)
    tail = [] if out is None else [out]
    f = lambda a, b: np.einsum(a, sub_a, b, sub_b, *tail)  # noqa: E731
    assert_same(traced_value(f, a, b), onp.einsum(a, sub_a, b, sub_b, *tail))
    check_grads(f, (a, b))


def test_einsum_nests_jacfwd_vs_jacrev():
    a, x = real(3, 3), real(3)

    def f(x):
        return np.einsum("ij,j,i->i", a, np.sin(x), x)

    onp.testing.assert_allclose(fgrad.jacfwd(f)(x), fgrad.jacrev(f)(x), rtol=1e-13)
    h = fgrad.hessian(lambda x: np.einsum("i,i", f(x), x))(x)
    onp.testing.assert_allclose(h, h.T, rtol=1e-12, atol=1e-14)
    check_grads(lambda x: np.einsum("i,i", f(x), x), (x,), order=3)


@pytest.mark.parametrize("f, shapes", [
    (lambda a, b: np.tensordot(a, b), [(2, 3, 2), (3, 2, 2)]),
    (lambda a, b: np.tensordot(a, b, 1), [(2, 3), (3, 2)]),
    (lambda a, b: np.tensordot(a, b, 0), [(2,), (3,)]),
    (lambda a, b: np.tensordot(a, b, (1, 0)), [(2, 3), (3, 4)]),
    (lambda a, b: np.tensordot(a, b, axes=([1, 2], [1, 0])), [(2, 3, 4), (4, 3)]),
    (lambda a, b: np.tensordot(a, b, axes=((-1, -2), (1, 0))), [(2, 3), (2, 3)]),
    (lambda a, b: np.dot(a, b), [(2, 2, 3), (2, 3, 2)]),
    (lambda a, b: np.inner(a, b), [(2, 3), (4, 3)]),
    (lambda a, b: np.outer(a, b), [(2, 2), (3,)]),
    (lambda a, b: np.matmul(a, b), [(2, 1, 2, 3), (3, 3, 2)]),
    (lambda a, b: a @ b, [(3,), (3, 2)]),
    (lambda a, b: np.kron(a, b), [(3,), (2, 1, 2)]),
    (lambda a, b: np.matvec(a, b), [(2, 2, 3), (2, 1, 3)]),
    (lambda a, b: np.vecmat(a, b), [(2, 1, 3), (2, 3, 2)]),
    (lambda a, b: np.vecdot(a, b), [(2, 3), (3,)]),
    (lambda a, b: np.vecdot(a, b, axis=0), [(3, 2), (3, 2)]),
])
def test_products_values_real_and_complex(f, shapes):
    xs = [real(*s) for s in shapes]
    zs = [cplx(*s) for s in shapes]
    for args in (xs, zs, [xs[0], zs[1]], [x.astype("float32") for x in xs]):
        out = traced_value(f, *args)
        assert_same(out, f(*args))  # f on plain arrays is numpy's function
    check_grads(f, xs)
    check_grads(f, zs)
    jf, jr = fgrad.jacfwd(f, argnums=(0, 1))(*xs), fgrad.jacrev(f, argnums=(0, 1))(*xs)
    for a, b in zip(jf, jr):
        onp.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)


def test_outer_ravels_nd_operands():
    a, b = real(2, 2), real(3, 1)
    assert_same(traced_value(np.outer, a, b), onp.outer(a, b))
    g = real(4, 3)
    ga, gb = fgrad.vjp(np.outer, a, b)[1](g)
    onp.testing.assert_allclose(ga, (g @ b.ravel()).reshape(2, 2), rtol=1e-14)
    onp.testing.assert_allclose(gb, (a.ravel() @ g).reshape(3, 1), rtol=1e-14)


def test_vecdot_and_vecmat_conjugate_the_first_operand():
    x, y, m = cplx(3), cplx(3), cplx(3, 2)
    gx = fgrad.vjp(lambda x: np.vecdot(x, y), x)[1](1.0 + 0j)[0]
    onp.testing.assert_allclose(gx, onp.conj(y), rtol=1e-15)
    g = cplx(2)
    gx = fgrad.vjp(lambda x: np.vecmat(x, m), x)[1](g)[0]
    onp.testing.assert_allclose(gx, onp.conj(m @ g), rtol=1e-14)
    gm = fgrad.vjp(lambda m: np.matvec(m, x), cplx(2, 3))[1](g)[0]
    onp.testing.assert_allclose(gm, onp.outer(g, x), rtol=1e-14)  # matvec: no conjugate


# --- errors ---------------------------------------------------------------------------------

X = onp.ones((3, 3))


@pytest.mark.parametrize("call, error", [
    (lambda x: np.einsum("ij->i", x, out=onp.zeros(3)), TracerMutationError),
    (lambda x: np.dot(x, x, out=onp.zeros((3, 3))), TracerMutationError),
    (lambda x: np.vecdot(x, x, out=onp.zeros(3)), TracerMutationError),
    (lambda x: np.einsum("ij->i", x, dtype=onp.float32), NotImplementedError),
    (lambda x: np.einsum("ij->i", x, casting="unsafe"), NotImplementedError),
    (lambda x: np.vecdot(x, x, axes=[(0,), (0,), ()]), NotImplementedError),
    (lambda x: np.matvec(x, x[0], keepdims=True), NotImplementedError),
    (lambda x: np.vecmat(x[0], x, dtype=onp.float32), NotImplementedError),
    (lambda x: np.polyfit(x[0], x[1], 1, full=True), NotImplementedError),
    (lambda x: np.polyfit(x[0], x[1], 1, cov=True), NotImplementedError),
    (lambda x: np.polyfit(x[0], x[1], 2), NotImplementedError),  # one x value: rank 1
    (lambda x: np.polyval(onp.poly1d([1.0, 2.0]), x), NotImplementedError),
    (lambda x: np.convolve(x[0], x[1], mode="middle"), ValueError),
    (lambda x: np.einsum(x, [0, 60]), ValueError),
    (lambda x: np.cross(x, onp.ones((3, 4))), ValueError),
    (lambda x: np.polyder(x[0], -1), ValueError),
])
def test_unsupported_arguments_are_refused(call, error):
    with pytest.raises(error):
        fgrad.grad(lambda x: np.sum(call(x)))(X)


def test_unsupported_messages_name_the_argument():
    with pytest.raises(NotImplementedError, match="dtype"):
        fgrad.grad(lambda x: np.sum(np.einsum("ij->i", x, dtype=onp.float32)))(X)
    with pytest.raises(NotImplementedError, match="rank-deficient"):
        fgrad.grad(lambda x: np.sum(np.polyfit(x[0], x[1], 2)))(X)


def test_plain_calls_are_numpys():
    a, b = real(2, 3), real(3, 2)
    assert np.einsum is not onp.einsum and np.einsum("ij,jk", a, b).tolist() == \
        onp.einsum("ij,jk", a, b).tolist()
    assert_same(np.polyfit(a[0], b[:, 0], 1), onp.polyfit(a[0], b[:, 0], 1))
    q, r = np.polydiv(a[0], b[:, 1])
    assert_same(q, onp.polydiv(a[0], b[:, 1])[0])
    assert_same(np.roots(a[0]), onp.roots(a[0]))
