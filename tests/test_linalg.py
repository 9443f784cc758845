"""numpy.linalg with derivatives: closed forms, modes against each other, batches, edge cases.

The generated tests (tests/test_rules.py) check every entry's rules against finite differences
on random draws; here are the known answers, the documented conventions at kinks and repeated
values, and the arguments that are refused.
"""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import TracerMutationError
from fgrad.testing import check_grads

RNG = onp.random.default_rng(1234)


def well_conditioned(*shape):
    n = shape[-1]
    return RNG.uniform(-1, 1, shape) + (n + 1) * onp.eye(n)


def spd(*shape):
    a = RNG.uniform(-1, 1, shape)
    return a @ onp.swapaxes(a, -1, -2) + onp.eye(shape[-1])


def symmetric(*shape):
    a = RNG.uniform(-1, 1, shape)
    return a + onp.swapaxes(a, -1, -2)


def read_lower(g):
    """The gradient with respect to a matrix of which only the lower triangle is read, from the
    symmetric gradient ``g`` of the symmetric matrix read: the diagonal once, each entry below
    it twice (it stands for two entries), zero above."""
    return onp.tril(2 * g) - g * onp.eye(g.shape[-1])


# --- closed forms ----------------------------------------------------------------------------

def test_det_gradient_is_det_times_inverse_transpose():
    a = well_conditioned(3, 3)
    want = onp.linalg.det(a) * onp.linalg.inv(a).T
    onp.testing.assert_allclose(fgrad.grad(np.linalg.det)(a), want, rtol=1e-12)


def test_logabsdet_gradient_is_inverse_transpose_with_negative_determinant():
    a = -well_conditioned(3, 3)
    assert onp.linalg.det(a) < 0
    g = fgrad.grad(lambda a: np.linalg.slogdet(a).logabsdet)(a)
    onp.testing.assert_allclose(g, onp.linalg.inv(a).T, rtol=1e-12)
    # the sign has zero derivative
    onp.testing.assert_array_equal(fgrad.grad(lambda a: np.linalg.slogdet(a)[0])(a), 0.0)


def test_gradient_of_trace_of_inverse():
    a = well_conditioned(3, 3)
    ainv = onp.linalg.inv(a)
    g = fgrad.grad(lambda a: np.trace(np.linalg.inv(a)))(a)
    onp.testing.assert_allclose(g, -(ainv @ ainv).T, rtol=1e-12)


def test_largest_singular_value_gradient_is_u1_v1():
    a = RNG.uniform(-1, 1, (3, 2))
    u, s, vh = onp.linalg.svd(a)
    want = onp.outer(u[:, 0], vh[0])
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.linalg.norm(a, 2))(a), want, rtol=1e-10)
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.linalg.svdvals(a)[0])(a), want,
                                rtol=1e-10)
    onp.testing.assert_allclose(
        fgrad.grad(lambda a: np.linalg.svd(a, full_matrices=False).S[0])(a), want, rtol=1e-10)


def test_hessian_of_log_det():
    a = well_conditioned(3, 3)
    ainv = onp.linalg.inv(a)
    h = fgrad.hessian(lambda a: np.linalg.slogdet(a)[1])(a)
    # d/dA_kl (A^-T)_ij = -(A^-1)_jk (A^-1)_li
    want = -onp.einsum("jk,li->ijkl", ainv, ainv)
    onp.testing.assert_allclose(h, want, rtol=1e-10, atol=1e-14)


def test_solve_gradients():
    a, b, c = well_conditioned(3, 3), RNG.standard_normal(3), RNG.standard_normal(3)
    ga, gb = fgrad.grad(lambda a, b: np.sum(np.linalg.solve(a, b) * c), argnums=(0, 1))(a, b)
    lam = onp.linalg.solve(a.T, c)
    onp.testing.assert_allclose(gb, lam, rtol=1e-12)
    onp.testing.assert_allclose(ga, -onp.outer(lam, onp.linalg.solve(a, b)), rtol=1e-12)


def test_cholesky_log_det_gradient_is_inverse():
    a = spd(3, 3)
    g = fgrad.grad(lambda a: 2 * np.sum(np.log(np.diagonal(np.linalg.cholesky(a)))))(a)
    onp.testing.assert_allclose(g, read_lower(onp.linalg.inv(a)), rtol=1e-10, atol=1e-15)


def test_condition_number_gradient():
    a = well_conditioned(3, 3)
    u, s, vh = onp.linalg.svd(a)
    want = (onp.outer(u[:, 0], vh[0]) * s[-1] - s[0] * onp.outer(u[:, -1], vh[-1])) / s[-1] ** 2
    onp.testing.assert_allclose(fgrad.grad(np.linalg.cond)(a), want, rtol=1e-10)


def test_eigenvalue_derivative_from_left_and_right_eigenvectors():
    a = onp.array([[0.0, -2.0, 0.3], [1.0, 0.5, 0.2], [0.1, 0.4, 1.5]])  # a complex pair
    w, v = onp.linalg.eig(a)
    assert onp.iscomplexobj(w)
    left = onp.linalg.inv(v)  # rows: left eigenvectors scaled so that left @ v = I
    t = RNG.standard_normal((3, 3))
    _, dw = fgrad.jvp(np.linalg.eigvals, (a,), (t,))
    onp.testing.assert_allclose(dw, onp.einsum("ij,jk,ki->i", left, t, v), rtol=1e-10)
    # reverse mode: the real part of the cotangent's pairing (JAX's convention)
    c = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    (ga,) = fgrad.vjp(np.linalg.eigvals, a)[1](c)
    assert ga.dtype == onp.float64
    onp.testing.assert_allclose(onp.sum(ga * t), onp.sum(c * dw).real, rtol=1e-10)


def _eig_loss(a):
    # uses eigenvectors' real and imaginary parts, which numpy's normalisation (unit norm,
    # largest entry real) fixes, and both parts of the eigenvalues
    w, v = np.linalg.eig(a)
    return (np.sum(np.real(w) * np.imag(w)) + np.sum(np.real(v) ** 2 * np.arange(3.0)[:, None])
            + np.sum(np.imag(v[1]) * np.real(w)))


@pytest.mark.parametrize("f", [_eig_loss, lambda a: np.sum(np.real(np.linalg.eigvals(a)) ** 3
                                                          + np.imag(np.linalg.eigvals(a)))],
                         ids=["eig", "eigvals"])
def test_eig_of_a_complex_matrix_in_both_modes_and_at_second_order(f):
    a = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    d = RNG.standard_normal((3, 3)) + 1j * RNG.standard_normal((3, 3))
    h = 1e-6
    fd = (f(a + h * d) - f(a - h * d)) / (2 * h)
    g = fgrad.grad(f)(a)  # JAX's convention: df/dRe - i df/dIm, so df = Re(sum(g * d))
    assert g.dtype == onp.complex128
    onp.testing.assert_allclose(onp.sum(g * d).real, fd, rtol=1e-7)
    onp.testing.assert_allclose(fgrad.jvp(f, (a,), (d,))[1], fd, rtol=1e-7)
    hd = fgrad.jvp(fgrad.grad(f), (a,), (d,))[1]
    fdh = (fgrad.grad(f)(a + h * d) - fgrad.grad(f)(a - h * d)) / (2 * h)
    onp.testing.assert_allclose(hd, fdh, rtol=1e-6, atol=1e-7 * onp.abs(hd).max())


# --- modes, batches, orders ------------------------------------------------------------------

CASES = {
    "inv": (np.linalg.inv, lambda: (well_conditioned(2, 3, 3),)),
    "det": (np.linalg.det, lambda: (well_conditioned(2, 3, 3),)),
    "slogdet": (lambda a: np.linalg.slogdet(a).logabsdet, lambda: (well_conditioned(2, 3, 3),)),
    "solve-vector": (np.linalg.solve, lambda: (well_conditioned(2, 3, 3),
                                               RNG.standard_normal(3))),
    "solve-matrix": (np.linalg.solve, lambda: (well_conditioned(2, 3, 3),
                                               RNG.standard_normal((2, 3, 2)))),
    "solve-broadcast": (np.linalg.solve, lambda: (well_conditioned(3, 3),
                                                  RNG.standard_normal((2, 3, 1)))),
    "pinv-tall": (np.linalg.pinv, lambda: (RNG.uniform(-1, 1, (2, 4, 3)),)),
    "pinv-wide": (np.linalg.pinv, lambda: (RNG.uniform(-1, 1, (2, 4)),)),
    "cholesky": (lambda a: np.linalg.cholesky(a @ np.swapaxes(a, -1, -2) + np.eye(3)),
                 lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "cholesky-upper": (lambda a: np.linalg.cholesky(a @ a.T + np.eye(3), upper=True),
                       lambda: (RNG.uniform(-1, 1, (3, 3)),)),
    "eigh": (lambda a: np.linalg.eigh(a + np.swapaxes(a, -1, -2)),
             lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "eigh-U": (lambda a: np.linalg.eigh(a + a.T, UPLO="U"), lambda: (RNG.uniform(-1, 1, (3, 3)),)),
    "eigvalsh": (lambda a: np.linalg.eigvalsh(a + np.swapaxes(a, -1, -2)),
                 lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "svd-tall": (lambda a: np.linalg.svd(a, full_matrices=False),
                 lambda: (RNG.uniform(-1, 1, (2, 4, 3)),)),
    "svd-wide": (lambda a: np.linalg.svd(a, full_matrices=False),
                 lambda: (RNG.uniform(-1, 1, (2, 3)),)),
    "svd-square-full": (np.linalg.svd, lambda: (RNG.uniform(-1, 1, (3, 3)),)),
    "svd-values": (lambda a: np.linalg.svd(a, compute_uv=False),
                   lambda: (RNG.uniform(-1, 1, (2, 3, 2)),)),
    "svdvals": (np.linalg.svdvals, lambda: (RNG.uniform(-1, 1, (3, 4)),)),
    "qr-tall": (np.linalg.qr, lambda: (RNG.uniform(-1, 1, (2, 4, 3)),)),
    "qr-square": (np.linalg.qr, lambda: (RNG.uniform(-1, 1, (3, 3)),)),
    "qr-wide": (np.linalg.qr, lambda: (RNG.uniform(-1, 1, (2, 4)),)),
    "qr-complete-wide": (lambda a: np.linalg.qr(a, mode="complete"),
                         lambda: (RNG.uniform(-1, 1, (2, 3)),)),
    "qr-r": (lambda a: np.linalg.qr(a, mode="r"), lambda: (RNG.uniform(-1, 1, (2, 4, 3)),)),
    "eig": (np.linalg.eig, lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "eigvals": (np.linalg.eigvals, lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "matrix_power-5": (lambda a: np.linalg.matrix_power(a, 5),
                       lambda: (RNG.uniform(-1, 1, (2, 3, 3)),)),
    "matrix_power--2": (lambda a: np.linalg.matrix_power(a, -2), lambda: (well_conditioned(3, 3),)),
    "lstsq": (lambda a, b: np.linalg.lstsq(a, b)[:2],
              lambda: (RNG.uniform(-1, 1, (4, 2)), RNG.standard_normal((4, 3)))),
    "lstsq-vector": (lambda a, b: np.linalg.lstsq(a, b)[:2],
                     lambda: (RNG.uniform(-1, 1, (4, 3)), RNG.standard_normal(4))),
    "lstsq-underdetermined": (lambda a, b: np.linalg.lstsq(a, b, rcond=None)[0],
                              lambda: (RNG.uniform(-1, 1, (2, 4)), RNG.standard_normal(2))),
    "lstsq-singular-values": (lambda a, b: np.linalg.lstsq(a, b)[3],
                              lambda: (RNG.uniform(-1, 1, (4, 2)), RNG.standard_normal(4))),
    "cond": (np.linalg.cond, lambda: (well_conditioned(2, 3, 3),)),
    "cond-fro": (lambda a: np.linalg.cond(a, "fro"), lambda: (well_conditioned(3, 3),)),
    "cond-1": (lambda a: np.linalg.cond(a, 1), lambda: (well_conditioned(3, 3),)),
    "cond-inf": (lambda a: np.linalg.cond(a, -onp.inf), lambda: (well_conditioned(2, 3, 3),)),
    "cond-tall": (np.linalg.cond, lambda: (RNG.uniform(-1, 1, (4, 3)),)),
    "tensorsolve": (lambda a, b: np.linalg.tensorsolve(a, b),
                    lambda: (well_conditioned(6, 6).reshape(2, 3, 6), RNG.standard_normal((2, 3)))),
    "tensorinv": (lambda a: np.linalg.tensorinv(a, ind=1),
                  lambda: (well_conditioned(4, 4).reshape(4, 2, 2),)),
    "multi_dot": (lambda a, b, c, d: np.linalg.multi_dot([a, b, c, d]),
                  lambda: (RNG.standard_normal(3), RNG.standard_normal((3, 4)),
                           RNG.standard_normal((4, 2)), RNG.standard_normal(2))),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_batched_inputs_both_modes_to_order_two(name):
    f, args = CASES[name]
    check_grads(f, args(), order=2, modes=("fwd", "rev"), rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("name", ["inv", "eigh", "svd-tall", "qr-wide", "eig", "pinv-tall",
                                  "lstsq", "cholesky"])
def test_jacfwd_equals_jacrev(name):
    f, args = CASES[name]
    args = args()

    def g(*xs):
        out = f(*xs)
        leaves = tuple(out) if isinstance(out, tuple) else (out,)
        return tuple(np.real(o) for o in leaves) + tuple(np.imag(o) for o in leaves)

    for fwd, rev in zip(fgrad.jacfwd(g)(*args), fgrad.jacrev(g)(*args)):
        onp.testing.assert_allclose(fwd, rev, rtol=1e-9, atol=1e-12)


def test_forward_values_are_numpys_bit_for_bit():
    a = RNG.uniform(-1, 1, (2, 3, 3))
    s = a + onp.swapaxes(a, -1, -2)
    pairs = [(np.linalg.eigh, onp.linalg.eigh, s), (np.linalg.svd, onp.linalg.svd, a),
             (np.linalg.qr, onp.linalg.qr, a), (np.linalg.eig, onp.linalg.eig, a),
             (np.linalg.slogdet, onp.linalg.slogdet, a)]
    for ours, theirs, x in pairs:
        got, _ = fgrad.vjp(ours, x)
        want = theirs(x)
        assert type(got) is type(want)
        for g, w in zip(got, want):
            onp.testing.assert_array_equal(g, w)
            assert g.dtype == w.dtype
    x = RNG.uniform(-1, 1, (4, 2))
    b = RNG.standard_normal(4)
    for f, arg in [(lambda x: np.linalg.lstsq(x, b), x), (lambda b: np.linalg.lstsq(x, b), b)]:
        got, _ = fgrad.vjp(f, arg)
        for g, w in zip(got, onp.linalg.lstsq(x, b), strict=True):
            onp.testing.assert_array_equal(g, w)
            assert onp.result_type(g) == onp.result_type(w)


@pytest.mark.parametrize("library", ["numpy", "scipy"])
def test_lstsq_of_a_batch_of_matrices_equals_the_loop(library):
    # (vmap refused a batched a: its rank, read from the values, decides the residuals)
    if library == "numpy":
        lstsq, plain = np.linalg.lstsq, onp.linalg.lstsq
    else:
        lstsq = pytest.importorskip("fgrad.scipy.linalg").lstsq
        plain = pytest.importorskip("scipy.linalg").lstsq
    a, b = RNG.uniform(-1, 1, (5, 4, 2)), RNG.standard_normal((5, 4))
    got = fgrad.vmap(lstsq)(a, b)
    loop = [plain(*ab) for ab in zip(a, b)]
    for k in range(4):  # (solution, residuals, rank, singular values: numpy's, bit for bit)
        want = onp.stack([onp.asarray(out[k]) for out in loop])
        onp.testing.assert_array_equal(got[k], want)
        assert onp.result_type(got[k]) == want.dtype
    loss = lambda a, b: np.sum(lstsq(a, b)[0] ** 2) + np.sum(lstsq(a, b)[1])  # noqa: E731
    batched = fgrad.vmap(fgrad.grad(loss, (0, 1)))(a, b)
    for i, ab in enumerate(zip(a, b)):
        for g, w in zip(batched, fgrad.grad(loss, (0, 1))(*ab)):
            onp.testing.assert_allclose(g[i], w, rtol=1e-12, atol=1e-14)
    under = fgrad.vmap(lstsq)(a[:, :2].transpose(0, 2, 1), b[:, :2])  # (2 x 2: no residuals)
    assert onp.shape(under[1]) == (5, 0)
    deficient = a.copy()
    deficient[1, :, 1] = deficient[1, :, 0]  # (rank 1: numpy gives it no residuals)
    loop = [plain(*ab)[1] for ab in zip(deficient, b)]
    if len({onp.shape(r) for r in loop}) > 1:
        with pytest.raises(ValueError, match=r"^vmap: lstsq gives results of different shapes "
                                             r"for the examples of the batch \(\(.*\), \(.*\)\)"):
            fgrad.vmap(lstsq)(deficient, b)
    else:  # (scipy 1.18 gives nan residuals there: the batch holds them)
        onp.testing.assert_array_equal(fgrad.vmap(lstsq)(deficient, b)[1], onp.stack(loop))


def test_lstsq_of_a_fixed_matrix_batches_and_stages_its_right_hand_side():
    # the rank is a's: b's values are not read, so vmap maps over b and jit traces once
    a = RNG.uniform(-1, 1, (4, 3))
    bs = RNG.standard_normal((5, 4))
    for part in (0, 1):
        got = fgrad.vmap(lambda b: np.linalg.lstsq(a, b, rcond=None)[part])(bs)
        want = [onp.linalg.lstsq(a, b, rcond=None)[part] for b in bs]
        onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-14)
    loss = lambda b: np.sum(np.linalg.lstsq(a, b, rcond=None)[0] ** 2)  # noqa: E731
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(loss))(bs),
                                [fgrad.grad(loss)(b) for b in bs], rtol=1e-12)
    staged = fgrad.jit(lambda b: np.linalg.lstsq(a, b, rcond=None)[:2])
    for b in bs:
        for g, w in zip(staged(b), onp.linalg.lstsq(a, b, rcond=None)):
            onp.testing.assert_array_equal(g, w)
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1


def test_float32_stays_float32():
    a = well_conditioned(3, 3).astype(onp.float32)
    for f in [np.linalg.det, lambda a: np.sum(np.linalg.inv(a)),
              lambda a: np.sum(np.linalg.svd(a)[1]), lambda a: np.linalg.norm(a, "nuc")]:
        g = fgrad.grad(f)(a)
        assert g.dtype == onp.float32


def test_plain_calls_are_numpys():
    a = well_conditioned(3, 3)
    assert np.linalg.LinAlgError is onp.linalg.LinAlgError
    onp.testing.assert_array_equal(np.linalg.inv(a), onp.linalg.inv(a))
    assert type(np.linalg.eigh(a)) is type(onp.linalg.eigh(a))
    assert np.linalg.matrix_rank(a) == onp.linalg.matrix_rank(a)


# --- repeated eigenvalues and singular values --------------------------------------------------

def test_eigvalsh_gradient_is_exact_at_a_repeated_eigenvalue():
    q, _ = onp.linalg.qr(RNG.standard_normal((3, 3)))
    for a in [onp.diag([1.0, 1.0, 2.0]), q @ onp.diag([1.0, 1.0, 2.0]) @ q.T]:
        onp.testing.assert_allclose(fgrad.grad(lambda a: np.sum(np.linalg.eigvalsh(a)))(a),
                                    onp.eye(3), atol=1e-14)
        onp.testing.assert_allclose(
            fgrad.grad(lambda a: np.sum(np.linalg.eigvalsh(a) ** 2))(a), read_lower(2 * a),
            atol=1e-13)
        # the simple eigenvalue: v v^T
        v = onp.linalg.eigh(a)[1][:, 2]
        onp.testing.assert_allclose(fgrad.grad(lambda a: np.linalg.eigvalsh(a)[2])(a),
                                    read_lower(onp.outer(v, v)), atol=1e-13)


def test_eigh_at_an_exactly_repeated_eigenvalue_has_no_nan():
    a = onp.diag([1.0, 1.0, 2.0])
    # through eigh's eigenvalues: exact, the equal pair's 1/0 is left out
    g = fgrad.grad(lambda a: np.sum(np.linalg.eigh(a)[0] ** 2))(a)
    onp.testing.assert_array_equal(g, 2 * a)
    # through the eigenvectors the derivative does not exist; the result is finite all the same
    g = fgrad.grad(lambda a: np.sum(np.linalg.eigh(a)[1] ** 3))(a)
    assert onp.all(onp.isfinite(g))


def test_svdvals_gradient_is_exact_at_repeated_singular_values():
    a = onp.array([[2.0, 0.0], [0.0, 2.0], [0.0, 0.0]])
    onp.testing.assert_array_equal(fgrad.grad(lambda a: np.sum(np.linalg.svdvals(a)))(a),
                                   [[1.0, 0.0], [0.0, 1.0], [0.0, 0.0]])
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.sum(np.linalg.svdvals(a) ** 2))(a),
                                2 * a, atol=1e-14)


# --- norms -----------------------------------------------------------------------------------

VECTOR_ORDS = [None, 2, 1, onp.inf, -onp.inf, 0, -1, -2, 3, 0.5]
MATRIX_ORDS = [None, "fro", "nuc", 1, -1, 2, -2, onp.inf, -onp.inf]


@pytest.mark.parametrize("ord", VECTOR_ORDS)
def test_vector_norm_every_ord(ord):
    x = onp.array([[0.7, -1.3, 2.1], [-0.4, 1.8, -2.6]])
    for axis, keepdims in [(1, False), (0, True), (-1, True)]:
        f = lambda x: np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)  # noqa: E731
        onp.testing.assert_array_equal(fgrad.vjp(f, x)[0],
                                       onp.linalg.norm(x, ord, axis, keepdims))
        check_grads(f, (x,), order=2)
    check_grads(lambda x: np.linalg.vector_norm(x, ord=2 if ord is None else ord), (x,))
    check_grads(lambda x: np.linalg.vector_norm(x, axis=(0, 1), keepdims=True,
                                                ord=2 if ord is None else ord), (x,))


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_every_ord(ord):
    x = onp.array([[[0.7, -1.3, 2.1], [-0.4, 1.8, -2.6]], [[1.1, 0.3, -0.9], [2.2, -1.6, 0.5]]])
    for axis, keepdims in [((1, 2), False), ((2, 0), True), ((-1, -2), False)]:
        f = lambda x: np.linalg.norm(x, ord=ord, axis=axis, keepdims=keepdims)  # noqa: E731
        onp.testing.assert_array_equal(fgrad.vjp(f, x)[0],
                                       onp.linalg.norm(x, ord, axis, keepdims))
        check_grads(f, (x,), order=2)
    check_grads(lambda x: np.linalg.matrix_norm(x, ord="fro" if ord is None else ord), (x,))
    check_grads(lambda x: np.linalg.norm(x[0], ord=ord), (x,))


def test_matrix_norm_closed_forms():
    x = RNG.uniform(-1, 1, (3, 3))
    u, s, vh = onp.linalg.svd(x)
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.linalg.norm(x, "nuc"))(x), u @ vh,
                                rtol=1e-10)
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.linalg.norm(x))(x),
                                x / onp.linalg.norm(x), rtol=1e-12)
    col = onp.argmax(onp.abs(x).sum(axis=0))
    want = onp.zeros_like(x)
    want[:, col] = onp.sign(x[:, col])
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.norm(x, 1))(x), want)


@pytest.mark.parametrize("ord", VECTOR_ORDS)
@pytest.mark.filterwarnings("ignore:divide by zero")  # numpy's own value for ord < 0
def test_vector_norm_at_zero_has_zero_gradient(ord):
    z = onp.zeros(3)
    f = lambda x: np.linalg.norm(x, ord)  # noqa: E731
    onp.testing.assert_array_equal(fgrad.grad(f)(z), onp.zeros(3))
    _, t = fgrad.jvp(f, (z,), (onp.ones(3),))
    assert t == 0.0


@pytest.mark.parametrize("ord", MATRIX_ORDS)
def test_matrix_norm_at_zero_has_zero_gradient(ord):
    z = onp.zeros((2, 3))
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.norm(x, ord))(z), 0 * z)


def test_two_norm_at_zero_second_order():
    z = onp.zeros(3)
    h = fgrad.hessian(np.linalg.norm)(z)
    onp.testing.assert_array_equal(h, onp.zeros((3, 3)))
    # away from 0 the Hessian is (I - x x^T / |x|^2) / |x|
    x = onp.array([3.0, 0.0, 4.0])
    want = (onp.eye(3) - onp.outer(x, x) / 25) / 5
    onp.testing.assert_allclose(fgrad.hessian(np.linalg.norm)(x), want, rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero")
def test_norm_kinks_inside():
    # an entry at 0 in the 1-norm: abs'(0) = 0; a tie in the inf-norm: shared evenly
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.norm(x, 1))(
        onp.array([0.0, -2.0, 3.0])), [0.0, -1.0, 1.0])
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.norm(x, onp.inf))(
        onp.array([3.0, -3.0, 1.0])), [0.5, -0.5, 0.0])
    # ord=0 counts nonzeros: zero derivative everywhere
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.norm(x, 0))(
        onp.array([1.0, 0.0, 2.0])), [0.0, 0.0, 0.0])
    # p < 0 with an entry at 0: the norm is 0 around it, derivative 0
    g = fgrad.grad(lambda x: np.linalg.norm(x, -1))(onp.array([0.0, 2.0, 3.0]))
    onp.testing.assert_array_equal(g, [0.0, 0.0, 0.0])


def test_complex_norms_of_every_order():
    z = onp.array([1.0 + 2.0j, -0.5 + 0.3j, 0.2 - 1.1j])
    for ord in (None, 1, 3, 0.5, onp.inf, -onp.inf, -2):
        check_grads(lambda z: np.linalg.norm(z, ord), (z,))
    m = RNG.standard_normal((3, 4)) + 1j * RNG.standard_normal((3, 4))
    for ord in ("fro", "nuc", 1, -1, 2, -2, onp.inf):
        check_grads(lambda m: np.linalg.norm(m, ord), (m,))
        assert np.linalg.norm(m, ord) == onp.linalg.norm(m, ord)


# For complex input the decompositions' vectors have arbitrary phases: functions that do not
# depend on them (values, moduli, reconstructions) are differentiated exactly, in both modes
# and to second order, against finite differences of numpy's own functions.
_COMPLEX_CHECKS = {
    "eigvalsh": lambda a: np.linalg.eigvalsh(a),
    "eigvalsh U": lambda a: np.linalg.eigvalsh(a, UPLO="U"),
    "eigh w, |v|": lambda a: (np.linalg.eigh(a)[0], np.abs(np.linalg.eigh(a)[1])),
    "eigh v f(w) v^H": lambda a: np.matmul(np.linalg.eigh(a, "U")[1] * np.sin(
        np.linalg.eigh(a, "U")[0])[..., None, :], np.conj(np.swapaxes(np.linalg.eigh(a, "U")[1],
                                                                      -1, -2))),
    "svd |u|, s, |vh|": lambda a: tuple(np.abs(x) for x in np.linalg.svd(a, False)),
    "svd u f(s) vh": lambda a: np.matmul(np.linalg.svd(a, False)[0] * np.sin(
        np.linalg.svd(a, False)[1])[..., None, :], np.linalg.svd(a, False)[2]),
    "svdvals": lambda a: np.linalg.svdvals(a),
    "slogdet": lambda a: tuple(np.linalg.slogdet(a)),
    "cholesky": lambda a: np.linalg.cholesky(_hermitian_pd(a)),
    "cholesky upper": lambda a: np.linalg.cholesky(_hermitian_pd(a), upper=True),
    # (qr's factors are unique: LAPACK's R has a real diagonal)
    "qr": lambda a: tuple(np.linalg.qr(a)),
    "pinv": lambda a: np.linalg.pinv(a),
    "cond": lambda a: (np.linalg.cond(a), np.linalg.cond(a, "fro"), np.linalg.cond(a, 1)),
}


def _hermitian_pd(a):
    """A hermitian positive definite matrix, its upper triangle left as ``a``'s (which
    cholesky does not read)."""
    h = np.matmul(a, np.conj(np.swapaxes(a, -1, -2))) + 2.0 * onp.eye(a.shape[-1])
    return np.tril(h) + np.triu(a, 1)


@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
@pytest.mark.parametrize("name", sorted(_COMPLEX_CHECKS))
def test_complex_decompositions_in_both_modes(name, shape):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    check_grads(_COMPLEX_CHECKS[name], (a,), order=2)


@pytest.mark.parametrize("shape", [(4, 2), (2, 4)])
def test_complex_svd_of_rectangular_matrices(shape):
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    check_grads(_COMPLEX_CHECKS["svd u f(s) vh"], (a,), order=2)
    check_grads(_COMPLEX_CHECKS["svd |u|, s, |vh|"], (a,), order=1)


def test_complex_decompositions_give_numpys_dtypes_and_batch():
    a = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))

    def dtypes(a):
        outs = [*np.linalg.eigh(a), *np.linalg.svd(a), *np.linalg.slogdet(a)]
        return [o.dtype for o in outs]
    want = [o.dtype for o in [*onp.linalg.eigh(a), *onp.linalg.svd(a), *onp.linalg.slogdet(a)]]
    seen = []
    fgrad.grad(lambda a: seen.append(dtypes(a)) or np.sum(np.linalg.eigvalsh(a)))(a)
    assert seen == [want]
    f = lambda a: np.sum(np.linalg.svdvals(a) ** 3) + np.sum(np.linalg.slogdet(a)[1])  # noqa: E731
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(a),
                                onp.stack([fgrad.grad(f)(x) for x in a]), rtol=1e-12)
    onp.testing.assert_array_equal(fgrad.jit(fgrad.grad(f))(a), fgrad.grad(f)(a))


@pytest.mark.parametrize("shape", [(4, 2), (2, 4), (2, 4, 3)])
def test_complex_qr_pinv_and_lstsq_of_rectangular_matrices(shape):
    # (refused on traced values before)
    a = RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)
    check_grads(lambda a: tuple(np.linalg.qr(a)), (a,), order=2)
    check_grads(lambda a: np.linalg.qr(a, mode="r"), (a,), order=1)
    check_grads(np.linalg.pinv, (a,), order=2)
    if len(shape) == 2:
        b = RNG.standard_normal(shape[0]) + 1j * RNG.standard_normal(shape[0])
        # the residuals, given for a tall matrix, are real (numpy's sums of |r|^2)
        want = onp.linalg.lstsq(a, b, rcond=None)
        got = np.linalg.lstsq(a, b, rcond=None)
        assert all(onp.array_equal(x, y) for x, y in zip(got[:2], want[:2]))
        check_grads(lambda a, b: tuple(np.linalg.lstsq(a, b, rcond=None)[:2]) if shape[0] > 2
                    else np.linalg.lstsq(a, b, rcond=None)[0], (a, b), order=2)


# --- the rest --------------------------------------------------------------------------------


def test_a_traced_singular_value_cutoff_is_refused_by_name():
    # (it reached LAPACK's wrappers, which failed on it with their own message)
    A = onp.array([[1.0, 2.0], [3.0, 4.0], [5.0, 7.0]])
    b = onp.array([1.0, 2.0, 3.0])
    for name, f in (("rcond", lambda c: np.linalg.pinv(A, rcond=c)),
                    ("rtol", lambda c: np.linalg.pinv(A, rtol=c)),
                    ("rcond", lambda c: np.linalg.lstsq(A, b, rcond=c)[0])):
        with pytest.raises(fgrad.NoDerivativeRuleError,
                           match=f"has no derivative in its argument '{name}' \\(a cutoff"):
            fgrad.jacrev(f)(1e-10)
        with pytest.raises(fgrad.ConcretizationError, match=f"make '{name}' static"):
            fgrad.jit(f)(1e-10)
    onp.testing.assert_array_equal(fgrad.jit(lambda a: np.linalg.pinv(a, rcond=1e-10))(A),
                                   onp.linalg.pinv(A, rcond=1e-10))

def test_pinv_full_rank_equals_inverse_derivative():
    a = well_conditioned(3, 3)
    t = RNG.standard_normal((3, 3))
    _, dp = fgrad.jvp(np.linalg.pinv, (a,), (t,))
    _, di = fgrad.jvp(np.linalg.inv, (a,), (t,))
    onp.testing.assert_allclose(dp, di, rtol=1e-10, atol=1e-13)


def test_pinv_rank_deficient_is_the_truncated_pinvs_derivative():
    # rank 1, with rcond cutting off the exactly-zero singular value: the derivative (along
    # every direction) is the truncated pinv's, to first order
    u, v = RNG.standard_normal(3), RNG.standard_normal(2)
    a = onp.outer(u, v)
    check_grads(lambda a: np.linalg.pinv(a, rcond=1e-3), (a,), order=1)


def test_lstsq_residuals_and_rank():
    a, b = RNG.uniform(-1, 1, (5, 2)), RNG.standard_normal(5)
    x, res, rank, s = fgrad.vjp(lambda b: np.linalg.lstsq(a, b), b)[0]
    assert rank == 2 and res.shape == (1,)
    # d residual / db = 2 (b - a x)
    g = fgrad.grad(lambda b: np.linalg.lstsq(a, b)[1][0])(b)
    onp.testing.assert_allclose(g, 2 * (b - a @ x), rtol=1e-10)


def test_matrix_power_zero_and_one():
    a = RNG.uniform(-1, 1, (3, 3))
    out, tangent = fgrad.jvp(lambda a: np.linalg.matrix_power(a, 0), (a,), (onp.ones((3, 3)),))
    onp.testing.assert_array_equal(out, onp.eye(3))
    onp.testing.assert_array_equal(tangent, 0.0)
    onp.testing.assert_array_equal(fgrad.jacfwd(lambda a: np.linalg.matrix_power(a, 1))(a),
                                   onp.eye(9).reshape(3, 3, 3, 3))
    g = fgrad.grad(lambda a: np.trace(np.linalg.matrix_power(a, 3)))(a)
    onp.testing.assert_allclose(g, 3 * (a @ a).T, rtol=1e-12)


# --- functions that read one triangle ------------------------------------------------------

ONE_TRIANGLE = {  # name -> (fgrad's function, numpy's, the keyword choosing the triangle)
    "cholesky": (np.linalg.cholesky, onp.linalg.cholesky, "upper", (False, True)),
    "eigvalsh": (np.linalg.eigvalsh, onp.linalg.eigvalsh, "UPLO", ("L", "U")),
    "eigh-values": (lambda a, **k: np.linalg.eigh(a, **k)[0],
                    lambda a, **k: onp.linalg.eigh(a, **k)[0], "UPLO", ("L", "u")),
    "eigh-vectors": (lambda a, **k: np.linalg.eigh(a, **k)[1],
                     lambda a, **k: onp.linalg.eigh(a, **k)[1], "UPLO", ("L", "U")),
}


@pytest.mark.parametrize("name", list(ONE_TRIANGLE))
@pytest.mark.parametrize("shape", [(3, 3), (2, 3, 3)])
def test_one_triangle_functions_match_finite_differences_of_numpy_in_any_direction(name, shape):
    """numpy reads one triangle: along a non-symmetric direction the derivative is that of
    numpy's function (a symmetrised rule is off by up to 100% here), and the gradient is zero
    in the triangle numpy does not read."""
    ours, theirs, key, choices = ONE_TRIANGLE[name]
    # distinct eigenvalues, diagonally dominant: each triangle reads as a positive definite
    # matrix, and the eigenvectors' signs stay put under the finite-difference steps
    a = RNG.uniform(-1, 1, shape) + onp.diag([6.0, 12.0, 18.0])
    t = RNG.uniform(-1, 1, shape)
    h = 1e-6
    for choice in choices:
        kw = {key: choice}
        fd = (theirs(a + h * t, **kw) - theirs(a - h * t, **kw)) / (2 * h)
        out, tangent = fgrad.jvp(lambda a: ours(a, **kw), (a,), (t,))
        onp.testing.assert_array_equal(out, theirs(a, **kw))
        onp.testing.assert_allclose(tangent, fd, atol=1e-7)
        c = RNG.standard_normal(out.shape)

        def loss(a):
            return np.sum(ours(a, **kw) * c)

        g = fgrad.grad(loss)(a)
        assert onp.sum(g * t) == pytest.approx(onp.sum(c * fd), abs=1e-7)
        unread = onp.triu(onp.ones(shape[-2:]), 1)
        if choice in (True, "U", "u"):
            unread = unread.T
        assert onp.all(g[..., unread == 1] == 0)
        # and forward over reverse, the second derivative, against numpy's finite differences
        hv = fgrad.jvp(fgrad.grad(loss), (a,), (t,))[1]
        fd2 = (fgrad.grad(loss)(a + h * t) - fgrad.grad(loss)(a - h * t)) / (2 * h)
        onp.testing.assert_allclose(hv, fd2, atol=1e-6)


@pytest.mark.parametrize("upper", [False, True])
def test_one_triangle_gradient_is_the_read_triangle_of_the_symmetric_one(upper):
    """For a symmetric input: each entry of the triangle read stands for two entries of the
    symmetric matrix, so its gradient is twice the symmetric gradient there."""
    a = spd(3, 3)
    g = fgrad.grad(lambda a: np.linalg.slogdet(np.linalg.cholesky(a, upper=upper))[1])(a)
    want = read_lower(0.5 * onp.linalg.inv(a))   # d log det L = tr(S^-1 dS) / 2
    onp.testing.assert_allclose(g, want.T if upper else want, rtol=1e-10, atol=1e-15)


def test_array_api_functions():
    x = RNG.standard_normal((2, 3, 3))
    y = RNG.standard_normal((2, 3, 3))
    for f, args in [(lambda x: np.linalg.trace(x, offset=1), (x,)),
                    (lambda x: np.linalg.diagonal(x, offset=-1), (x,)),
                    (np.linalg.matrix_transpose, (x,)),
                    (np.linalg.outer, (x[0, 0], y[0, 0])),
                    (np.linalg.cross, (x, y)),
                    (lambda a, b: np.linalg.vecdot(a, b, axis=0), (x, y)),
                    (np.linalg.matmul, (x, y)),
                    (lambda a, b: np.linalg.tensordot(a, b, axes=((1, 2), (2, 1))), (x, y))]:
        check_grads(f, args)
    onp.testing.assert_array_equal(fgrad.grad(lambda x: np.linalg.trace(x).sum())(x),
                                   onp.broadcast_to(onp.eye(3), x.shape))


# --- refused arguments -----------------------------------------------------------------------

def test_refused_arguments():
    a = RNG.uniform(-1, 1, (3, 2))
    s = symmetric(3, 3)
    with pytest.raises(NotImplementedError, match="hermitian"):
        fgrad.grad(lambda s: np.sum(np.linalg.svd(s, hermitian=True)[1]))(s)
    with pytest.raises(NotImplementedError, match="hermitian"):
        fgrad.grad(lambda s: np.sum(np.linalg.pinv(s, hermitian=True)))(s)
    with pytest.raises(NotImplementedError, match="full_matrices"):
        fgrad.grad(lambda a: np.sum(np.linalg.svd(a)[0]))(a)
    with pytest.raises(NotImplementedError, match="complete"):
        fgrad.grad(lambda a: np.sum(np.linalg.qr(a, mode="complete")[0]))(a)
    with pytest.raises(NotImplementedError, match="raw"):
        fgrad.grad(lambda a: np.sum(np.linalg.qr(a, mode="raw")[0]))(a)
    with pytest.raises(TracerMutationError):
        fgrad.grad(lambda s: np.sum(np.linalg.multi_dot([s, s], out=onp.empty((3, 3)))))(s)
    with pytest.raises(ValueError, match="UPLO"):
        fgrad.grad(lambda s: np.sum(np.linalg.eigh(s, UPLO="X")[0]))(s)
    with pytest.raises(ValueError, match="Invalid norm order"):
        fgrad.grad(lambda a: np.linalg.norm(a[0], "nuc"))(a)
    with pytest.raises(TypeError, match="integer"):
        fgrad.grad(lambda s: np.sum(np.linalg.matrix_power(s, 1.5)))(s)
    with pytest.raises(onp.linalg.LinAlgError):
        fgrad.grad(lambda a: np.sum(np.linalg.matrix_power(a, 2)))(a)
    with pytest.raises(ValueError, match="one-dimensional"):
        fgrad.grad(lambda a: np.sum(np.linalg.outer(a, a)))(a)


def test_slogdet_at_a_singular_matrix_has_numpys_value_and_says_why_no_derivative():
    a = onp.array([[1.0, 2.0], [2.0, 4.0]])
    assert tuple(np.linalg.slogdet(a)) == tuple(onp.linalg.slogdet(a)) == (0.0, -onp.inf)
    with pytest.raises(onp.linalg.LinAlgError,
                       match=r"^fgrad\.numpy\.linalg\.slogdet: the derivative of logabsdet is "
                             r"inv\(a\)\^T, which does not exist at a singular matrix"):
        fgrad.grad(lambda a: np.linalg.slogdet(a)[1])(a)
    with pytest.raises(onp.linalg.LinAlgError, match="Singular matrix"):  # numpy's own
        fgrad.grad(lambda a: np.sum(np.linalg.inv(a)))(a)


def test_complex_inverse_determinant_solve_and_powers():
    a = well_conditioned(2, 3, 3) + 1j * RNG.uniform(-1, 1, (2, 3, 3))
    b = RNG.standard_normal(3) + 1j * RNG.standard_normal(3)
    for f, args in [(np.linalg.inv, (a,)), (np.linalg.det, (a,)), (np.linalg.solve, (a, b)),
                    (lambda a: np.linalg.matrix_power(a, -3), (a,)),
                    (lambda a: np.linalg.multi_dot([a[0], a[1], a[0]]), (a,))]:
        check_grads(f, args, order=2)
    # holomorphic: d det = det tr(a^-1 da), with complex tangents
    t = RNG.standard_normal((2, 3, 3)) + 1j * RNG.standard_normal((2, 3, 3))
    _, dd = fgrad.jvp(np.linalg.det, (a,), (t,))
    want = onp.linalg.det(a) * onp.einsum("bij,bji->b", onp.linalg.inv(a), t)
    onp.testing.assert_allclose(dd, want, rtol=1e-10)


def test_matrix_rank_has_zero_derivative():
    a = RNG.uniform(-1, 1, (3, 3))

    def f(a):
        r = np.linalg.matrix_rank(a)
        assert isinstance(r, onp.integer)  # a plain value, not a tracer
        return np.sum(a) * r

    onp.testing.assert_array_equal(fgrad.grad(f)(a), onp.full((3, 3), 3.0))
