"""The transforms (grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev, hessian,
stop_gradient) against closed forms, numpy and finite differences.

Every test asserts values; structure/dtype checks go with value checks.
"""
import functools
import gc
import itertools

import numpy as onp
import pytest
from numpy.polynomial import Polynomial

import fgrad
import fgrad.numpy as np
from fgrad.traces.tape import Node
from fgrad.testing import check_grads
from fgrad.core.tracer import Tracer

def is_plain(v):
    """A plain numpy value: ndarray or numpy scalar, never a tracer."""
    return isinstance(v, (onp.ndarray, onp.generic)) and not isinstance(v, Tracer)


def leaves(tree):
    return fgrad.tree_flatten(tree)[0]


def assert_all_plain(tree):
    for v in leaves(tree):
        assert is_plain(v), f"{type(v).__name__} is not a plain numpy value"


def fd_jacobian(f, x, eps=1e-6):
    """Central-difference Jacobian of an array function of one array, shape out + in."""
    x = onp.asarray(x, dtype=float)
    out = onp.asarray(f(x))
    jac = onp.zeros(out.shape + x.shape)
    for k in range(x.size):
        e = onp.zeros_like(x)
        e.flat[k] = eps
        d = (onp.asarray(f(x + e)) - onp.asarray(f(x - e))) / (2 * eps)
        jac[(Ellipsis,) + onp.unravel_index(k, x.shape)] = d
    return jac


# --- the worked example: f(x1, x2) = ln(x1) + x1 x2 - sin(x2) at (2, 5) ---------------

def f_example(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


X1, X2 = 2.0, 5.0
F_VALUE = onp.log(2.0) + 10.0 - onp.sin(5.0)
F_GRAD = (1 / 2.0 + 5.0, 2.0 - onp.cos(5.0))


def test_example_closed_form_numbers():
    # the numbers quoted in the docs
    assert round(F_VALUE, 3) == 11.652
    assert round(F_GRAD[0], 3) == 5.5 and round(F_GRAD[1], 3) == 1.716


def test_example_grad():
    g = fgrad.grad(f_example, argnums=(0, 1))(X1, X2)
    assert isinstance(g, tuple) and len(g) == 2
    onp.testing.assert_allclose(g, F_GRAD, rtol=1e-14)
    assert [round(float(v), 3) for v in g] == [5.5, 1.716]
    assert fgrad.grad(f_example)(X1, X2) == pytest.approx(F_GRAD[0], rel=1e-14)
    assert fgrad.grad(f_example, argnums=1)(X1, X2) == pytest.approx(F_GRAD[1], rel=1e-14)


def test_example_value_and_grad():
    v, g = fgrad.value_and_grad(f_example, argnums=(0, 1))(X1, X2)
    assert v == pytest.approx(F_VALUE, rel=1e-14)
    assert round(float(v), 3) == 11.652
    onp.testing.assert_allclose(g, F_GRAD, rtol=1e-14)


def test_example_jvp_columns():
    for k, t in enumerate([(1.0, 0.0), (0.0, 1.0)]):
        out, tan = fgrad.jvp(f_example, (X1, X2), t)
        assert out == pytest.approx(F_VALUE, rel=1e-14)
        assert tan == pytest.approx(F_GRAD[k], rel=1e-14)
    # linear in the tangent
    _, tan = fgrad.jvp(f_example, (X1, X2), (2.0, -3.0))
    assert tan == pytest.approx(2 * F_GRAD[0] - 3 * F_GRAD[1], rel=1e-13)


def test_example_linearize():
    out, f_jvp = fgrad.linearize(f_example, X1, X2)
    assert out == pytest.approx(F_VALUE, rel=1e-14)
    assert f_jvp(1.0, 0.0) == pytest.approx(F_GRAD[0], rel=1e-14)
    assert f_jvp(0.0, 1.0) == pytest.approx(F_GRAD[1], rel=1e-14)
    assert f_jvp(2.0, -3.0) == pytest.approx(2 * F_GRAD[0] - 3 * F_GRAD[1], rel=1e-13)


def test_example_vjp():
    out, f_vjp = fgrad.vjp(f_example, X1, X2)
    assert out == pytest.approx(F_VALUE, rel=1e-14)
    ct = f_vjp(1.0)
    assert isinstance(ct, tuple) and len(ct) == 2
    onp.testing.assert_allclose(ct, F_GRAD, rtol=1e-14)
    onp.testing.assert_allclose(f_vjp(-2.5), -2.5 * onp.array(F_GRAD), rtol=1e-14)


@pytest.mark.parametrize("jac", [fgrad.jacfwd, fgrad.jacrev, fgrad.jacobian])
def test_example_jacobian_stacked_input(jac):
    J = jac(lambda x: f_example(x[0], x[1]))(onp.array([X1, X2]))
    assert isinstance(J, onp.ndarray) and J.shape == (2,) and J.dtype == onp.float64
    onp.testing.assert_allclose(J, F_GRAD, rtol=1e-14)
    # vector output: the Jacobian of (f, x1 * x2) has shape (2, 2)
    J2 = jac(lambda x: np.stack([f_example(x[0], x[1]), x[0] * x[1]]))(onp.array([X1, X2]))
    onp.testing.assert_allclose(J2, [F_GRAD, [X2, X1]], rtol=1e-14)


# --- higher derivatives of tanh against their closed form --------------------------------

def tanh_derivative_polys(kmax):
    """P_k with d^k/dx^k tanh(x) = P_k(tanh x): P_0 = t, P_{k+1} = P_k' (1 - t^2)."""
    polys = [Polynomial([0.0, 1.0])]
    one_minus_t2 = Polynomial([1.0, 0.0, -1.0])
    for _ in range(kmax):
        polys.append(polys[-1].deriv() * one_minus_t2)
    return polys


TANH_P = tanh_derivative_polys(6)
TANH_POINTS = [-1.7, -0.6, 0.0, 0.3, 1.1, 2.4]


def test_tanh_polys_sanity():
    # the closed form itself, against values known by hand and finite differences
    t = onp.tanh(0.7)
    assert TANH_P[1](t) == pytest.approx(1 - t ** 2)
    assert TANH_P[2](t) == pytest.approx(-2 * t * (1 - t ** 2))
    h = 1e-4
    fd3 = (TANH_P[2](onp.tanh(0.7 + h)) - TANH_P[2](onp.tanh(0.7 - h))) / (2 * h)
    assert TANH_P[3](t) == pytest.approx(fd3, rel=1e-6)


def d_grad(f):
    return fgrad.grad(f)


def d_jvp(f):
    return lambda x: fgrad.jvp(f, (x,), (1.0,))[1]


def d_lin(f):
    return lambda x: fgrad.linearize(f, x)[1](1.0)


def d_vjp(f):
    return lambda x: fgrad.vjp(f, x)[1](1.0)[0]


def d_jacfwd(f):
    return fgrad.jacfwd(f)


def d_jacrev(f):
    return fgrad.jacrev(f)


def nth(f, ops):
    for op in ops:
        f = op(f)
    return f


@pytest.mark.parametrize("k", range(1, 7))
def test_tanh_nested_grad(k):
    df = nth(np.tanh, [d_grad] * k)
    for x in TANH_POINTS:
        got = df(x)
        assert is_plain(got) and onp.asarray(got).dtype == onp.float64
        assert abs(got - TANH_P[k](onp.tanh(x))) <= 1e-10, (k, x)


@pytest.mark.parametrize("k", range(1, 5))
def test_tanh_nested_jvp(k):
    df = nth(np.tanh, [d_jvp] * k)
    for x in TANH_POINTS:
        assert abs(df(x) - TANH_P[k](onp.tanh(x))) <= 1e-10, (k, x)


@pytest.mark.parametrize("k", range(1, 4))
def test_tanh_nested_linearize(k):
    df = nth(np.tanh, [d_lin] * k)
    for x in TANH_POINTS[:3]:
        assert abs(df(x) - TANH_P[k](onp.tanh(x))) <= 1e-10, (k, x)


@pytest.mark.parametrize("ops", list(itertools.product([d_grad, d_jvp, d_lin, d_vjp], repeat=3)),
                         ids=lambda ops: "-".join(o.__name__[2:] for o in ops))
def test_tanh_mixed_modes_order3(ops):
    df = nth(np.tanh, ops)
    for x in (-0.6, 1.1):
        assert abs(df(x) - TANH_P[3](onp.tanh(x))) <= 1e-10


@pytest.mark.parametrize("ops", [(d_grad, d_jvp, d_grad, d_jvp), (d_jvp, d_grad, d_jvp, d_grad),
                                 (d_jvp, d_jvp, d_grad, d_grad), (d_grad, d_grad, d_jvp, d_jvp),
                                 (d_jacfwd, d_jacrev, d_jacfwd, d_jacrev),
                                 (d_lin, d_vjp, d_jvp, d_grad)],
                         ids=lambda ops: "-".join(o.__name__[2:] for o in ops))
def test_tanh_mixed_modes_order4(ops):
    df = nth(np.tanh, ops)
    for x in (-1.7, 0.3, 2.4):
        assert abs(df(x) - TANH_P[4](onp.tanh(x))) <= 1e-10


def test_tanh_mixed_modes_order6():
    df = nth(np.tanh, [d_jvp, d_grad, d_jacfwd, d_jacrev, d_jvp, d_grad])
    for x in (-0.6, 1.1):
        assert abs(df(x) - TANH_P[6](onp.tanh(x))) <= 1e-10


def test_tanh_derivative_on_arrays():
    # elementwise k-th derivative of an array: grad of sum, nested
    x = onp.array(TANH_POINTS)
    d1 = lambda x: fgrad.grad(lambda y: np.sum(np.tanh(y)))(x)  # noqa: E731
    onp.testing.assert_allclose(d1(x), TANH_P[1](onp.tanh(x)), atol=1e-12)
    _, d2 = fgrad.jvp(d1, (x,), (onp.ones_like(x),))
    onp.testing.assert_allclose(d2, TANH_P[2](onp.tanh(x)), atol=1e-12)


def test_tanh_derivative_on_arrays_rev_over_rev():
    x = onp.array(TANH_POINTS)
    d1 = lambda x: fgrad.grad(lambda y: np.sum(np.tanh(y)))(x)  # noqa: E731
    d2 = fgrad.grad(lambda x: np.sum(d1(x)))(x)
    onp.testing.assert_allclose(d2, TANH_P[2](onp.tanh(x)), atol=1e-12)


# --- Rosenbrock Hessian ------------------------------------------------------------------

def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def rosenbrock_grad(x):
    n = len(x)
    g = onp.zeros(n)
    g[:-1] += -400 * x[:-1] * (x[1:] - x[:-1] ** 2) - 2 * (1 - x[:-1])
    g[1:] += 200 * (x[1:] - x[:-1] ** 2)
    return g


def rosenbrock_hessian(x):
    n = len(x)
    H = onp.zeros((n, n))
    for i in range(n):
        if i < n - 1:
            H[i, i] += 1200 * x[i] ** 2 - 400 * x[i + 1] + 2
            H[i, i + 1] = H[i + 1, i] = -400 * x[i]
        if i > 0:
            H[i, i] += 200
    return H


ROSEN_POINTS = [(n, seed) for n in (2, 5, 10) for seed in (0, 1)]


def _rosen_point(n, seed):
    return onp.random.default_rng(seed).uniform(-1.5, 1.5, n)


@pytest.mark.parametrize("n,seed", ROSEN_POINTS)
def test_rosenbrock_gradient(n, seed):
    x = _rosen_point(n, seed)
    onp.testing.assert_allclose(fgrad.grad(rosenbrock)(x), rosenbrock_grad(x), rtol=1e-12,
                                atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(rosenbrock)(x), rosenbrock_grad(x), rtol=1e-12,
                                atol=1e-12)
    # the closed forms agree with finite differences
    onp.testing.assert_allclose(fd_jacobian(rosenbrock, x), rosenbrock_grad(x), rtol=1e-6,
                                atol=1e-5)
    onp.testing.assert_allclose(fd_jacobian(rosenbrock_grad, x), rosenbrock_hessian(x),
                                rtol=1e-6, atol=1e-4)


def test_rosenbrock_hessian_at_minimum():
    # at (1, ..., 1) for n = 2: [[802, -400], [-400, 200]]
    H = fgrad.jacfwd(fgrad.grad(rosenbrock))(onp.ones(2))
    onp.testing.assert_array_equal(H, [[802.0, -400.0], [-400.0, 200.0]])


@pytest.mark.parametrize("n,seed", ROSEN_POINTS)
def test_rosenbrock_hessian(n, seed):
    x = _rosen_point(n, seed)
    H = fgrad.hessian(rosenbrock)(x)
    assert isinstance(H, onp.ndarray) and H.shape == (n, n) and H.dtype == onp.float64
    onp.testing.assert_allclose(H, rosenbrock_hessian(x), rtol=1e-12, atol=1e-10)


@pytest.mark.parametrize("outer,inner", [(fgrad.jacrev, fgrad.jacrev),
                                         (fgrad.jacfwd, fgrad.jacfwd),
                                         (fgrad.jacrev, fgrad.jacfwd)])
def test_rosenbrock_hessian_all_modes(outer, inner):
    for n, seed in ROSEN_POINTS:
        x = _rosen_point(n, seed)
        H = outer(inner(rosenbrock))(x)
        assert H.shape == (n, n)
        onp.testing.assert_allclose(H, fgrad.jacfwd(fgrad.grad(rosenbrock))(x), rtol=1e-12,
                                    atol=1e-10)
        onp.testing.assert_allclose(H, rosenbrock_hessian(x), rtol=1e-12, atol=1e-10)


def test_hessian_tuple_argnums_and_pytree():
    # JAX layout: H[i][j] = d2f / dx_i dx_j, each block shaped x_i.shape + x_j.shape
    def f(x, y):
        return np.sum(x ** 2 * y[0]) + y[1] ** 3

    x, y = onp.array([1.0, 2.0]), onp.array([3.0, 4.0])
    H = fgrad.hessian(f, argnums=(0, 1))(x, y)
    assert isinstance(H, tuple) and all(isinstance(h, tuple) and len(h) == 2 for h in H)
    onp.testing.assert_allclose(H[0][0], 2 * y[0] * onp.eye(2))
    onp.testing.assert_allclose(H[0][1], [[2 * x[0], 0.0], [2 * x[1], 0.0]])
    onp.testing.assert_allclose(H[1][0], onp.transpose(H[0][1]))
    onp.testing.assert_allclose(H[1][1], [[0.0, 0.0], [0.0, 6 * y[1]]])

    Hd = fgrad.hessian(lambda d: np.sum(d["a"] ** 2) * d["b"])({"a": x, "b": 3.0})
    assert sorted(Hd) == ["a", "b"] and sorted(Hd["a"]) == ["a", "b"]
    onp.testing.assert_allclose(Hd["a"]["a"], 6.0 * onp.eye(2))
    onp.testing.assert_allclose(Hd["a"]["b"], 2 * x)
    onp.testing.assert_allclose(Hd["b"]["a"], 2 * x)
    assert Hd["b"]["b"] == 0.0 and is_plain(Hd["b"]["b"])


def test_nested_tracer_shape_queries():
    # .shape / np.shape of a tracer whose value is another transform's tracer (second order)
    def f(x):
        assert x.shape == (3,) and np.shape(x) == (3,) and x.ndim == 1 and len(x) == 3
        return np.sum(x ** 3) / x.shape[0]

    x = onp.array([1.0, 2.0, -1.0])
    onp.testing.assert_allclose(fgrad.hessian(f)(x), onp.diag(2 * x))
    onp.testing.assert_allclose(fgrad.grad(lambda x: np.sum(fgrad.grad(f)(x)))(x), 2 * x)


# --- Jacobians of a vector function: fwd == rev == finite differences -----------------------

_RNG = onp.random.default_rng(42)
A_MAT = _RNG.standard_normal((3, 5))
X5 = _RNG.uniform(-1.0, 1.0, 5)


def vec_fn(x):
    """R^5 -> R^3 through sin, exp, matmul, sum, indexing and power."""
    y = A_MAT @ np.sin(x)                                  # (3,)
    z = np.exp(x[[0, 2, 4]]) * y                            # fancy indexing
    w = (1.0 + x[1:4] ** 2) ** 1.5 * np.sum(x ** 3)         # slicing, power, sum
    return z + w - x[::-1][:3] ** 2


def vec_fn_numpy(x):
    y = A_MAT @ onp.sin(x)
    z = onp.exp(x[[0, 2, 4]]) * y
    w = (1.0 + x[1:4] ** 2) ** 1.5 * onp.sum(x ** 3)
    return z + w - x[::-1][:3] ** 2


def test_vec_fn_value_matches_numpy():
    out, _ = fgrad.vjp(vec_fn, X5)
    onp.testing.assert_allclose(out, vec_fn_numpy(X5), rtol=1e-14)
    onp.testing.assert_allclose(vec_fn(X5), vec_fn_numpy(X5), rtol=1e-14)


def test_jacfwd_jacrev_agree_and_match_fd():
    Jf = fgrad.jacfwd(vec_fn)(X5)
    Jr = fgrad.jacrev(vec_fn)(X5)
    assert Jf.shape == Jr.shape == (3, 5)
    assert Jf.dtype == Jr.dtype == onp.float64
    onp.testing.assert_allclose(Jf, Jr, rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(Jr, fd_jacobian(vec_fn_numpy, X5), rtol=1e-6, atol=1e-7)
    # rows are VJPs, columns are JVPs
    _, f_vjp = fgrad.vjp(vec_fn, X5)
    for i in range(3):
        onp.testing.assert_allclose(f_vjp(onp.eye(3)[i])[0], Jr[i], rtol=1e-12, atol=1e-12)
    for j in range(5):
        onp.testing.assert_allclose(fgrad.jvp(vec_fn, (X5,), (onp.eye(5)[j],))[1], Jf[:, j],
                                    rtol=1e-12, atol=1e-12)
    check_grads(vec_fn, (X5,), order=1)


def test_jacobian_shapes_matrix_in_matrix_out():
    X = _RNG.standard_normal((2, 3))
    B = _RNG.standard_normal((3, 4))

    def f(X):
        return np.tanh(X @ B)  # (2, 4)

    Jf, Jr = fgrad.jacfwd(f)(X), fgrad.jacrev(f)(X)
    assert Jf.shape == Jr.shape == (2, 4, 2, 3)
    onp.testing.assert_allclose(Jf, Jr, rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(Jr, fd_jacobian(lambda X: onp.tanh(X @ B), X), rtol=1e-6,
                                atol=1e-8)
    # scalar output and scalar input
    assert fgrad.jacrev(lambda X: np.sum(X ** 2))(X).shape == (2, 3)
    assert fgrad.jacfwd(lambda t: t * onp.arange(3.0))(2.0).shape == (3,)
    onp.testing.assert_allclose(fgrad.jacrev(lambda t: t * onp.arange(3.0))(2.0), [0, 1, 2])


def _tree_fn(d):
    """dict input -> tuple output (a (2,) vector and a scalar)."""
    a, b = d["a"], d["b"]                       # a: (3,), b: (2, 2)
    y = b @ np.sin(a[:2]) + a[2]                # (2,)
    s = np.sum(a ** 2) * b[0, 1]                # ()
    return (y, s)


_TREE_IN = {"b": _RNG.standard_normal((2, 2)), "a": _RNG.standard_normal(3)}


def _tree_fn_expected(d):
    a, b = d["a"], d["b"]
    dy_da = onp.zeros((2, 3))
    dy_da[:, :2] = b * onp.cos(a[:2])[None, :]
    dy_da[:, 2] = 1.0
    dy_db = onp.zeros((2, 2, 2))
    for i in range(2):
        dy_db[i, i, :] = onp.sin(a[:2])
    ds_da = 2 * a * b[0, 1]
    ds_db = onp.zeros((2, 2))
    ds_db[0, 1] = onp.sum(a ** 2)
    return ({"a": dy_da, "b": dy_db}, {"a": ds_da, "b": ds_db})


@pytest.mark.parametrize("jac", [fgrad.jacfwd, fgrad.jacrev])
def test_jacobian_pytree_dict_in_tuple_out(jac):
    J = jac(_tree_fn)(_TREE_IN)
    want = _tree_fn_expected(_TREE_IN)
    # output tree at the top, input tree inside
    assert isinstance(J, tuple) and len(J) == 2
    assert all(isinstance(j, dict) and sorted(j) == ["a", "b"] for j in J)
    for got_block, want_block in zip(J, want):
        for k in ("a", "b"):
            assert got_block[k].shape == want_block[k].shape
            assert is_plain(got_block[k])
            onp.testing.assert_allclose(got_block[k], want_block[k], rtol=1e-12, atol=1e-12)


def test_jacobian_pytree_fwd_equals_rev():
    Jf, Jr = fgrad.jacfwd(_tree_fn)(_TREE_IN), fgrad.jacrev(_tree_fn)(_TREE_IN)
    assert fgrad.tree_flatten(Jf)[1] == fgrad.tree_flatten(Jr)[1]
    for a, b in zip(leaves(Jf), leaves(Jr)):
        onp.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("jac", [fgrad.jacfwd, fgrad.jacrev])
def test_jacobian_tuple_argnums_dict_out(jac):
    x = _RNG.standard_normal(3)
    y = _RNG.standard_normal(2)

    def f(x, y):
        return {"u": x[:2] * y, "v": np.sum(x) * y[0]}

    J = jac(f, argnums=(0, 1))(x, y)
    assert isinstance(J, dict) and sorted(J) == ["u", "v"]
    assert isinstance(J["u"], tuple) and isinstance(J["v"], tuple)
    ux, uy = J["u"]
    vx, vy = J["v"]
    assert ux.shape == (2, 3) and uy.shape == (2, 2) and vx.shape == (3,) and vy.shape == (2,)
    onp.testing.assert_allclose(ux, onp.hstack([onp.diag(y), onp.zeros((2, 1))]), atol=1e-15)
    onp.testing.assert_allclose(uy, onp.diag(x[:2]), atol=1e-15)
    onp.testing.assert_allclose(vx, onp.full(3, y[0]), atol=1e-15)
    onp.testing.assert_allclose(vy, [onp.sum(x), 0.0], atol=1e-15)
    # int argnums: the input level is not a tuple
    J1 = jac(f, argnums=1)(x, y)
    assert isinstance(J1["u"], onp.ndarray)
    onp.testing.assert_allclose(J1["u"], uy)
    onp.testing.assert_allclose(J1["v"], vy)


# --- perturbation confusion --------------------------------------------------------------

X0, Y0 = 1.7, -0.4


def _conf_grad_grad(x0):
    return fgrad.grad(lambda x: x * fgrad.grad(lambda y: x + y)(Y0))(x0)


def _conf_jvp_jvp(x0):
    return fgrad.jvp(lambda x: x * fgrad.jvp(lambda y: x + y, (Y0,), (1.0,))[1],
                     (x0,), (1.0,))[1]


def _conf_grad_jvp(x0):
    return fgrad.grad(lambda x: x * fgrad.jvp(lambda y: x + y, (Y0,), (1.0,))[1])(x0)


def _conf_jvp_grad(x0):
    return fgrad.jvp(lambda x: x * fgrad.grad(lambda y: x + y)(Y0), (x0,), (1.0,))[1]


def _conf_jacfwd_jacrev(x0):
    J = fgrad.jacfwd(lambda x: x * fgrad.jacrev(lambda y: x + y)(onp.array([Y0]))[0])(
        onp.array([x0]))
    assert J.shape == (1, 1)
    return J[0, 0]


def _conf_jacrev_jacfwd(x0):
    return fgrad.jacrev(lambda x: x * fgrad.jacfwd(lambda y: x + y)(Y0))(x0)


def _conf_linearize(x0):
    def outer(x):
        _, f_jvp = fgrad.linearize(lambda y: x + y, Y0)
        return x * f_jvp(1.0)
    return fgrad.linearize(outer, x0)[1](1.0)


def _conf_grad_linearize(x0):
    return fgrad.grad(lambda x: x * fgrad.linearize(lambda y: x + y, Y0)[1](1.0))(x0)


def _conf_vjp_vjp(x0):
    def outer(x):
        return x * fgrad.vjp(lambda y: x + y, Y0)[1](1.0)[0]
    return fgrad.vjp(outer, x0)[1](1.0)[0]


CONFUSION = [_conf_grad_grad, _conf_jvp_jvp, _conf_grad_jvp, _conf_jvp_grad,
             _conf_jacfwd_jacrev, _conf_jacrev_jacfwd, _conf_linearize, _conf_grad_linearize,
             _conf_vjp_vjp]


@pytest.mark.parametrize("fn", CONFUSION, ids=lambda f: f.__name__[6:])
def test_perturbation_confusion(fn):
    got = fn(X0)
    assert not isinstance(got, Tracer)
    assert got == 1.0


def test_perturbation_confusion_dependent_inner():
    # d/dx [x * d/dy (x * y)] = d/dx x^2 = 2x: the inner derivative does depend on x
    g = fgrad.grad(lambda x: x * fgrad.grad(lambda y: x * y)(Y0))(X0)
    assert g == pytest.approx(2 * X0, rel=1e-14)
    t = fgrad.jvp(lambda x: x * fgrad.jvp(lambda y: x * y, (Y0,), (1.0,))[1], (X0,), (1.0,))[1]
    assert t == pytest.approx(2 * X0, rel=1e-14)
    # d/dx [d/dy exp(x y)] at y=Y0 = d/dx [x exp(x y)] = exp(x y) (1 + x y)
    h = fgrad.grad(lambda x: fgrad.grad(lambda y: np.exp(x * y))(Y0))(X0)
    assert h == pytest.approx(onp.exp(X0 * Y0) * (1 + X0 * Y0), rel=1e-13)


# --- argnums, kwargs, has_aux, pytrees -----------------------------------------------------

def _g3(x, y, z):
    return x * y ** 2 + np.sin(z)


def test_argnums_int_and_tuple():
    x, y, z = 1.5, -2.0, 0.3
    g0 = fgrad.grad(_g3)(x, y, z)
    assert is_plain(g0) and g0 == pytest.approx(y ** 2)
    g1 = fgrad.grad(_g3, argnums=1)(x, y, z)
    assert g1 == pytest.approx(2 * x * y)
    g = fgrad.grad(_g3, argnums=(2, 0))(x, y, z)
    assert isinstance(g, tuple) and len(g) == 2
    assert g[0] == pytest.approx(onp.cos(z)) and g[1] == pytest.approx(y ** 2)
    single = fgrad.grad(_g3, argnums=(1,))(x, y, z)
    assert isinstance(single, tuple) and len(single) == 1
    assert single[0] == pytest.approx(2 * x * y)


def test_argnums_negative():
    x, y, z = 1.5, -2.0, 0.3
    assert fgrad.grad(_g3, argnums=-1)(x, y, z) == pytest.approx(onp.cos(z))
    assert fgrad.grad(_g3, argnums=-2)(x, y, z) == pytest.approx(2 * x * y)
    g = fgrad.grad(_g3, argnums=(-3, -1))(x, y, z)
    assert g[0] == pytest.approx(y ** 2) and g[1] == pytest.approx(onp.cos(z))
    J = fgrad.jacrev(lambda a, b: a * b, argnums=-1)(onp.array([1.0, 2.0]), onp.array([3.0, 4.0]))
    onp.testing.assert_array_equal(J, onp.diag([1.0, 2.0]))
    J = fgrad.jacfwd(lambda a, b: a * b, argnums=-1)(onp.array([1.0, 2.0]), onp.array([3.0, 4.0]))
    onp.testing.assert_array_equal(J, onp.diag([1.0, 2.0]))


def test_argnums_out_of_range():
    with pytest.raises(ValueError):
        fgrad.grad(_g3, argnums=3)(1.0, 2.0, 3.0)
    with pytest.raises(ValueError):
        fgrad.grad(_g3, argnums=-4)(1.0, 2.0, 3.0)


def test_kwargs_passed_through_not_differentiated():
    def f(x, scale=1.0, power=2):
        return scale * x ** power

    assert fgrad.grad(f)(3.0, scale=2.0) == pytest.approx(12.0)
    assert fgrad.grad(f)(3.0, scale=2.0, power=3) == pytest.approx(54.0)
    v, g = fgrad.value_and_grad(f)(3.0, power=3, scale=0.5)
    assert v == pytest.approx(13.5) and g == pytest.approx(13.5)
    onp.testing.assert_allclose(fgrad.jacrev(f)(onp.array([1.0, 2.0]), scale=3.0),
                                onp.diag([6.0, 12.0]))
    onp.testing.assert_allclose(fgrad.jacfwd(f)(onp.array([1.0, 2.0]), scale=3.0),
                                onp.diag([6.0, 12.0]))
    # an integer keyword is fine: it is not differentiated
    assert fgrad.grad(lambda x, n=0: x * n)(2.0, n=5) == pytest.approx(5.0)


def _aux_fn(x):
    y = np.sum(x ** 2)
    return y, {"y": y, "x2": x * 2, "const": "label"}


def _check_aux(aux, x):
    assert isinstance(aux, dict) and aux["const"] == "label"
    assert is_plain(aux["y"]) and is_plain(aux["x2"])
    assert aux["y"] == pytest.approx(onp.sum(x ** 2))
    onp.testing.assert_allclose(aux["x2"], 2 * x)


AUX_X = onp.array([1.0, -2.0, 0.5])


def test_has_aux_grad():
    g, aux = fgrad.grad(_aux_fn, has_aux=True)(AUX_X)
    onp.testing.assert_allclose(g, 2 * AUX_X)
    _check_aux(aux, AUX_X)


def test_has_aux_value_and_grad():
    (v, aux), g = fgrad.value_and_grad(_aux_fn, has_aux=True)(AUX_X)
    assert v == pytest.approx(onp.sum(AUX_X ** 2))
    onp.testing.assert_allclose(g, 2 * AUX_X)
    _check_aux(aux, AUX_X)


def test_has_aux_vjp():
    out, f_vjp, aux = fgrad.vjp(_aux_fn, AUX_X, has_aux=True)
    assert out == pytest.approx(onp.sum(AUX_X ** 2))
    (ct,) = f_vjp(3.0)
    onp.testing.assert_allclose(ct, 6 * AUX_X)
    _check_aux(aux, AUX_X)


def test_has_aux_jvp():
    t = onp.array([1.0, 0.0, 2.0])
    out, tan, aux = fgrad.jvp(_aux_fn, (AUX_X,), (t,), has_aux=True)
    assert out == pytest.approx(onp.sum(AUX_X ** 2))
    assert tan == pytest.approx(2 * onp.dot(AUX_X, t))
    _check_aux(aux, AUX_X)


@pytest.mark.parametrize("jac", [fgrad.jacfwd, fgrad.jacrev])
def test_has_aux_jacobians(jac):
    J, aux = jac(_aux_fn, has_aux=True)(AUX_X)
    onp.testing.assert_allclose(J, 2 * AUX_X)
    _check_aux(aux, AUX_X)


def test_has_aux_requires_pair():
    with pytest.raises(TypeError):
        fgrad.grad(lambda x: x ** 2, has_aux=True)(1.0)


def test_pytree_argument_containers_preserved():
    params = {"w": onp.array([1.0, 2.0]), "layers": [onp.array(0.5), (onp.array([3.0]), None)],
              "b": 4.0}

    def f(p):
        w = p["w"]
        a = p["layers"][0]
        c = p["layers"][1][0]
        return np.sum(w ** 2) * a + np.sum(c) * p["b"]

    g = fgrad.grad(f)(params)
    assert isinstance(g, dict) and sorted(g) == ["b", "layers", "w"]
    assert isinstance(g["layers"], list) and len(g["layers"]) == 2
    assert isinstance(g["layers"][1], tuple) and g["layers"][1][1] is None
    onp.testing.assert_allclose(g["w"], 2 * params["w"] * 0.5)
    assert g["layers"][0] == pytest.approx(5.0) and is_plain(g["layers"][0])
    onp.testing.assert_allclose(g["layers"][1][0], [4.0])
    assert g["layers"][1][0].shape == (1,)
    assert g["b"] == pytest.approx(3.0) and is_plain(g["b"])
    assert_all_plain(g)


def test_pytree_grad_of_list_and_tuple_args():
    xs = [1.0, 2.0, 3.0]
    g = fgrad.grad(lambda xs, t: xs[0] * xs[1] * xs[2] + t[0] * t[1], argnums=(0, 1))(
        xs, (2.0, -1.0))
    assert isinstance(g[0], list) and isinstance(g[1], tuple)
    onp.testing.assert_allclose(g[0], [6.0, 3.0, 2.0])
    onp.testing.assert_allclose(g[1], [-1.0, 2.0])


def test_pytree_vjp_jvp_linearize():
    p = {"u": onp.array([1.0, 2.0]), "v": [onp.array(3.0), None]}

    def f(p):
        return {"s": np.sum(p["u"]) * p["v"][0], "t": (p["u"] ** 2, None)}

    out, f_vjp = fgrad.vjp(f, p)
    assert out["s"] == pytest.approx(9.0) and out["t"][1] is None
    (ct,) = f_vjp({"s": 1.0, "t": (onp.array([1.0, 1.0]), None)})
    assert isinstance(ct["v"], list) and ct["v"][1] is None
    onp.testing.assert_allclose(ct["u"], [3.0 + 2.0, 3.0 + 4.0])
    assert ct["v"][0] == pytest.approx(3.0)
    tan = {"u": onp.array([1.0, 0.0]), "v": [onp.array(1.0), None]}
    out2, t = fgrad.jvp(f, (p,), (tan,))
    assert t["s"] == pytest.approx(3.0 + 3.0)
    onp.testing.assert_allclose(t["t"][0], [2.0, 0.0])
    _, f_lin = fgrad.linearize(f, p)
    t2 = f_lin(tan)
    assert t2["s"] == pytest.approx(t["s"])
    onp.testing.assert_allclose(t2["t"][0], t["t"][0])


def test_vjp_single_primal_returns_tuple():
    out, f_vjp = fgrad.vjp(np.sin, 0.5)
    ct = f_vjp(1.0)
    assert isinstance(ct, tuple) and len(ct) == 1
    assert ct[0] == pytest.approx(onp.cos(0.5))
    out, f_vjp = fgrad.vjp(lambda x: x * 2, onp.ones(3))
    ct = f_vjp(onp.arange(3.0))
    assert isinstance(ct, tuple) and len(ct) == 1
    onp.testing.assert_allclose(ct[0], [0.0, 2.0, 4.0])


def test_vjp_fn_many_calls_linear():
    out, f_vjp = fgrad.vjp(vec_fn, X5)
    c1, c2 = _RNG.standard_normal(3), _RNG.standard_normal(3)
    (g1,), (g2,) = f_vjp(c1), f_vjp(c2)
    (g12,) = f_vjp(2.0 * c1 - 3.0 * c2)
    onp.testing.assert_allclose(g12, 2.0 * g1 - 3.0 * g2, rtol=1e-12, atol=1e-12)
    # calling again gives the same answer (the tape is not consumed)
    onp.testing.assert_array_equal(f_vjp(c1)[0], g1)
    J = fgrad.jacrev(vec_fn)(X5)
    onp.testing.assert_allclose(g1, c1 @ J, rtol=1e-12, atol=1e-12)
    (z,) = f_vjp(onp.zeros(3))
    onp.testing.assert_array_equal(z, onp.zeros(5))


def test_vjp_cotangent_shape_mismatch():
    _, f_vjp = fgrad.vjp(vec_fn, X5)
    with pytest.raises(ValueError):
        f_vjp(onp.ones(4))
    with pytest.raises(ValueError):
        f_vjp(onp.ones((3, 1)))


def test_vjp_structure_and_jvp_shape_mismatch():
    _, f_vjp = fgrad.vjp(lambda x: (x, 2 * x), onp.ones(2))
    with pytest.raises(ValueError):
        f_vjp((onp.ones(2),))
    cx = f_vjp((onp.ones(2), onp.array([1.0, -1.0])))[0]
    onp.testing.assert_array_equal(cx, [3.0, -1.0])
    with pytest.raises(ValueError):
        fgrad.jvp(np.sin, (onp.ones(2),), (onp.ones(3),))
    with pytest.raises(ValueError):
        fgrad.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,))
    _, f_lin = fgrad.linearize(np.sin, onp.ones(2))
    with pytest.raises(ValueError):
        f_lin(onp.ones(3))


def test_differentiating_vjp_fn_and_linearized_fn():
    # vjp_fn and linearize's jvp_fn are linear functions that transforms can differentiate,
    # even though the tape they use was recorded earlier
    f = lambda x: np.sin(x) * x  # noqa: E731
    x = onp.array([0.3, 1.0])
    J = fgrad.jacrev(f)(x)
    _, f_vjp = fgrad.vjp(f, x)
    onp.testing.assert_allclose(fgrad.jacrev(lambda c: f_vjp(c)[0])(onp.ones(2)), J.T,
                                rtol=1e-14)
    c = onp.array([1.0, 2.0])
    onp.testing.assert_allclose(fgrad.grad(lambda c: np.sum(f_vjp(c)[0] ** 2))(c),
                                2 * J @ (J.T @ c), rtol=1e-13)
    _, f_lin = fgrad.linearize(f, x)
    onp.testing.assert_allclose(fgrad.jacfwd(f_lin)(onp.ones(2)), J, rtol=1e-14)
    onp.testing.assert_allclose(fgrad.jacrev(f_lin)(onp.ones(2)), J, rtol=1e-14)


def test_aux_holding_outer_tracer_stays_differentiable():
    # aux computed from an outer transform's variable is that transform's value: d/dx x^2 = 2x
    g = fgrad.grad(lambda x: fgrad.grad(lambda y: (x * y, x * x), has_aux=True)(2.0)[1])(3.0)
    assert g == pytest.approx(6.0)
    t = fgrad.jvp(lambda x: fgrad.jvp(lambda y: (x * y, x * x), (2.0,), (1.0,),
                                      has_aux=True)[2], (3.0,), (1.0,))[1]
    assert t == pytest.approx(6.0)


def test_linearize_jvp_fn_reusable_and_linear():
    out, f_jvp = fgrad.linearize(vec_fn, X5)
    onp.testing.assert_allclose(out, vec_fn_numpy(X5), rtol=1e-14)
    t1, t2 = _RNG.standard_normal(5), _RNG.standard_normal(5)
    a, b = f_jvp(t1), f_jvp(t2)
    onp.testing.assert_allclose(f_jvp(0.5 * t1 + 4.0 * t2), 0.5 * a + 4.0 * b, rtol=1e-12,
                                atol=1e-12)
    onp.testing.assert_array_equal(f_jvp(t1), a)
    J = fgrad.jacfwd(vec_fn)(X5)
    onp.testing.assert_allclose(a, J @ t1, rtol=1e-12, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jvp(vec_fn, (X5,), (t1,))[1], a, rtol=1e-12, atol=1e-12)


# --- plain numpy results and dtypes --------------------------------------------------------

def test_results_are_plain_numpy():
    x = onp.array([0.3, -1.2])
    f = lambda x: np.sum(np.sin(x) * x)  # noqa: E731
    results = [
        fgrad.grad(f)(x),
        fgrad.grad(lambda s: s ** 2)(3.0),
        fgrad.value_and_grad(f)(x),
        fgrad.vjp(f, x)[0], fgrad.vjp(f, x)[1](1.0),
        fgrad.jvp(f, (x,), (x,)),
        fgrad.linearize(f, x)[0], fgrad.linearize(f, x)[1](x),
        fgrad.jacfwd(np.sin)(x), fgrad.jacrev(np.sin)(x),
        fgrad.jacfwd(fgrad.grad(f))(x),
        fgrad.grad(fgrad.grad(lambda s: s ** 3))(2.0),
        fgrad.jvp(fgrad.grad(f), (x,), (x,)),
    ]
    for r in results:
        assert_all_plain(r)
    # 0-d results are numpy scalars
    assert isinstance(fgrad.grad(lambda s: s ** 2)(3.0), onp.float64)
    assert isinstance(fgrad.value_and_grad(f)(x)[0], onp.float64)
    assert isinstance(fgrad.jvp(f, (x,), (x,))[1], onp.float64)


@pytest.mark.parametrize("dtype", [onp.float64, onp.float32])
def test_dtypes_preserved(dtype):
    x = onp.array([0.3, -1.2, 2.0], dtype=dtype)
    f = lambda x: np.sum(np.tanh(x) * x)  # noqa: E731
    v, g = fgrad.value_and_grad(f)(x)
    assert g.dtype == dtype and onp.asarray(v).dtype == dtype
    want = onp.tanh(x.astype(float)) + x.astype(float) * (1 - onp.tanh(x.astype(float)) ** 2)
    tol = 1e-6 if dtype == onp.float32 else 1e-14
    onp.testing.assert_allclose(g, want, rtol=tol)
    assert fgrad.vjp(f, x)[1](dtype(1.0))[0].dtype == dtype
    out, t = fgrad.jvp(f, (x,), (onp.ones(3, dtype),))
    assert onp.asarray(out).dtype == dtype and onp.asarray(t).dtype == dtype
    assert fgrad.linearize(f, x)[1](onp.ones(3, dtype)).dtype == dtype
    assert fgrad.jacfwd(np.tanh)(x).dtype == dtype
    assert fgrad.jacrev(np.tanh)(x).dtype == dtype
    s = dtype(0.7)
    assert onp.asarray(fgrad.grad(np.sin)(s)).dtype == dtype


def test_results_plain_with_python_scalar_seeds():
    results = {
        "vjp_fn(python float) of x * 2.0": fgrad.vjp(lambda x: x * 2.0, 1.5)[1](1.0),
        "vjp_fn(python float) of identity": fgrad.vjp(lambda x: x, 1.5)[1](1.0),
        "jvp tangent of identity": fgrad.jvp(lambda x: x, (1.5,), (1.0,)),
        "linearize jvp_fn of identity": fgrad.linearize(lambda x: x, 1.5)[1](1.0),
        "value_and_grad of a constant": fgrad.value_and_grad(lambda x: 3.0)(1.5),
        "jvp of a constant": fgrad.jvp(lambda x: 3.0, (1.5,), (1.0,)),
        "vjp of a vjp": _conf_vjp_vjp(X0),
    }
    bad = {k: v for k, v in results.items() if not all(is_plain(x) for x in leaves(v))}
    assert not bad, f"Python scalars in results: {bad}"


def test_python_float_gives_float64():
    assert isinstance(fgrad.grad(np.sin)(0.5), onp.float64)
    assert isinstance(fgrad.jvp(np.sin, (0.5,), (1.0,))[1], onp.float64)
    assert isinstance(fgrad.vjp(np.sin, 0.5)[1](1.0)[0], onp.float64)


def test_float32_not_upcast_by_python_float_tangent():
    x = onp.float32(0.5)
    _, t = fgrad.jvp(lambda x: x * 3.0, (x,), (1.0,))
    assert onp.asarray(t).dtype == onp.float32 and t == pytest.approx(3.0)


def test_float32_grad_with_float64_constants():
    # float32 input mixed with float64 arrays inside: the gradient keeps the input's dtype
    x = onp.ones(3, onp.float32)
    c = onp.array([1.0, 2.0, 3.0])
    g = fgrad.grad(lambda x: np.sum(x * c))(x)
    assert g.dtype == onp.float32
    onp.testing.assert_allclose(g, c)


# --- stop_gradient --------------------------------------------------------------------------

def _sg(x):
    return x * fgrad.stop_gradient(x)  # d/dx = stop(x) = x (treated as constant)


def test_stop_gradient_value():
    x = onp.array([1.0, 2.0])
    onp.testing.assert_array_equal(fgrad.stop_gradient(x), x)
    assert fgrad.stop_gradient(3.0) == 3.0


def test_stop_gradient_every_mode():
    x = 3.0
    assert fgrad.grad(_sg)(x) == pytest.approx(3.0)
    assert fgrad.grad(lambda x: fgrad.stop_gradient(x) ** 2)(x) == 0.0
    assert fgrad.jvp(_sg, (x,), (1.0,))[1] == pytest.approx(3.0)
    assert fgrad.jvp(lambda x: np.sin(fgrad.stop_gradient(x)), (x,), (1.0,))[1] == 0.0
    assert fgrad.linearize(_sg, x)[1](1.0) == pytest.approx(3.0)
    assert fgrad.vjp(_sg, x)[1](1.0)[0] == pytest.approx(3.0)
    xs = onp.array([1.0, -2.0, 0.5])
    onp.testing.assert_allclose(fgrad.jacfwd(_sg)(xs), onp.diag(xs))
    onp.testing.assert_allclose(fgrad.jacrev(_sg)(xs), onp.diag(xs))


def test_stop_gradient_nested():
    x = 3.0
    # second derivative of x * c(x) with c constant is 0
    assert fgrad.grad(fgrad.grad(_sg))(x) == 0.0
    assert d_jvp(d_jvp(_sg))(x) == 0.0
    assert d_grad(d_jvp(_sg))(x) == 0.0
    assert d_jvp(d_grad(_sg))(x) == 0.0
    assert d_lin(d_grad(_sg))(x) == 0.0
    # x^2 * stop(x): first derivative 2 x stop(x) = 18, second 2 stop(x) = 6, third 0
    f = lambda x: x ** 2 * fgrad.stop_gradient(x)  # noqa: E731
    assert fgrad.grad(f)(x) == pytest.approx(18.0)
    assert fgrad.grad(fgrad.grad(f))(x) == pytest.approx(6.0)
    assert fgrad.grad(fgrad.grad(fgrad.grad(f)))(x) == 0.0
    # stop_gradient of an outer variable inside an inner transform stops it for the outer too
    g = fgrad.grad(lambda x: fgrad.grad(lambda y: y * fgrad.stop_gradient(x) ** 2)(1.0))(x)
    assert g == 0.0


def test_stop_gradient_hessian_small():
    xs = onp.array([1.0, -2.0])
    H = fgrad.jacfwd(fgrad.jacrev(lambda x: x ** 2 * fgrad.stop_gradient(x)))(xs)
    # d2/dx2 (x^2 c) = 2 c, on the diagonal of the (2, 2, 2) second-derivative tensor
    want = onp.zeros((2, 2, 2))
    want[0, 0, 0], want[1, 1, 1] = 2 * xs
    onp.testing.assert_allclose(H, want)


# --- zero gradients -------------------------------------------------------------------------

def test_unused_input_gives_zeros():
    x, y = 2.0, onp.ones((2, 3))
    g = fgrad.grad(lambda x, y: x ** 2, argnums=(0, 1))(x, y)
    assert g[0] == pytest.approx(4.0)
    assert isinstance(g[1], onp.ndarray) and g[1].shape == (2, 3) and g[1].dtype == onp.float64
    onp.testing.assert_array_equal(g[1], 0.0)
    y32 = onp.ones(4, onp.float32)
    g32 = fgrad.grad(lambda x, y: x ** 2, argnums=1)(x, y32)
    assert g32.dtype == onp.float32 and g32.shape == (4,) and not g32.any()
    # jvp / linearize / vjp / jacobians
    _, t = fgrad.jvp(lambda x, y: x ** 2, (x, y), (1.0, onp.ones((2, 3))))
    assert t == pytest.approx(4.0)
    _, t = fgrad.jvp(lambda x, y: x ** 2, (x, y), (0.0, onp.ones((2, 3))))
    assert t == 0.0
    (cx, cy) = fgrad.vjp(lambda x, y: x ** 2, x, y)[1](1.0)
    assert cy.shape == (2, 3) and not cy.any()
    J = fgrad.jacrev(lambda x, y: x * 2, argnums=1)(onp.ones(3), y)
    assert J.shape == (3, 2, 3) and not J.any()
    J = fgrad.jacfwd(lambda x, y: x * 2, argnums=1)(onp.ones(3), y)
    assert J.shape == (3, 2, 3) and not J.any()


def test_constant_output_gives_zeros():
    x = onp.array([1.0, 2.0])
    g = fgrad.grad(lambda x: 3.0)(x)
    assert isinstance(g, onp.ndarray) and g.shape == (2,) and not g.any()
    g = fgrad.grad(lambda x: onp.float64(3.0))(1.5)
    assert is_plain(g) and g == 0.0
    v, g = fgrad.value_and_grad(lambda x: np.sum(fgrad.stop_gradient(x)))(x)
    assert v == 3.0 and not g.any() and g.shape == (2,)
    out, t = fgrad.jvp(lambda x: onp.ones(3), (x,), (x,))
    onp.testing.assert_array_equal(out, onp.ones(3))
    assert t.shape == (3,) and not t.any()
    J = fgrad.jacrev(lambda x: onp.ones(3))(x)
    assert J.shape == (3, 2) and not J.any()
    J = fgrad.jacfwd(lambda x: onp.ones(3))(x)
    assert J.shape == (3, 2) and not J.any()
    _, f_lin = fgrad.linearize(lambda x: onp.ones(3), x)
    assert not f_lin(x).any() and f_lin(x).shape == (3,)
    assert fgrad.grad(fgrad.grad(lambda x: 2.0 * x))(1.0) == 0.0


# --- Python control flow --------------------------------------------------------------------

def _branchy(x):
    if x > 0:
        return x ** 3
    return np.sin(x) * 2.0


def _doubling(x):
    # doubles until >= 10: f(x) = 2^n x with n depending on x
    y = x
    while y < 10.0:
        y = y * 2.0
    return y


@pytest.mark.parametrize("x", [1.5, -0.7])
def test_control_flow_if(x):
    want = 3 * x ** 2 if x > 0 else 2 * onp.cos(x)
    want2 = 6 * x if x > 0 else -2 * onp.sin(x)
    assert fgrad.grad(_branchy)(x) == pytest.approx(want, rel=1e-14)
    assert fgrad.jvp(_branchy, (x,), (1.0,))[1] == pytest.approx(want, rel=1e-14)
    assert fgrad.linearize(_branchy, x)[1](1.0) == pytest.approx(want, rel=1e-14)
    assert fgrad.jacfwd(_branchy)(x) == pytest.approx(want, rel=1e-14)
    assert fgrad.grad(fgrad.grad(_branchy))(x) == pytest.approx(want2, rel=1e-14)
    assert d_jvp(d_grad(_branchy))(x) == pytest.approx(want2, rel=1e-14)


@pytest.mark.parametrize("x,n", [(1.0, 4), (3.0, 2), (0.3, 6), (12.0, 0)])
def test_control_flow_while(x, n):
    assert fgrad.grad(_doubling)(x) == 2.0 ** n
    assert fgrad.jvp(_doubling, (x,), (1.0,))[1] == 2.0 ** n
    assert fgrad.jacrev(_doubling)(x) == 2.0 ** n
    v, g = fgrad.value_and_grad(lambda x: _doubling(x) ** 2)(x)
    assert v == pytest.approx((2.0 ** n * x) ** 2)
    assert g == pytest.approx(2 * 4.0 ** n * x)
    assert fgrad.grad(fgrad.grad(lambda x: _doubling(x) ** 2))(x) == pytest.approx(2 * 4.0 ** n)


def test_control_flow_elementwise_where_and_loop_over_elements():
    def f(x):
        total = 0.0
        for i in range(len(x)):
            total = total + (x[i] ** 2 if x[i] > 0 else -x[i])
        return total

    x = onp.array([1.0, -2.0, 3.0, -0.5])
    onp.testing.assert_allclose(fgrad.grad(f)(x), [2.0, -1.0, 6.0, -1.0])


# --- deep nesting and second-order checks ----------------------------------------------------

def test_grad_four_times():
    d4 = fgrad.grad(fgrad.grad(fgrad.grad(fgrad.grad(lambda x: x ** 5))))
    for x in (-1.3, 0.0, 0.5, 2.0):
        assert d4(x) == pytest.approx(120 * x, rel=1e-13, abs=1e-13)
    d5 = fgrad.grad(d4)
    assert d5(0.7) == pytest.approx(120.0, rel=1e-13)
    assert fgrad.grad(d5)(0.7) == 0.0


def _mat_fn(X):
    return np.sum(np.tanh(X @ X)) + X[0, 1] * X[1, 0] ** 2


def _mat_fn_numpy(X):
    return onp.sum(onp.tanh(X @ X)) + X[0, 1] * X[1, 0] ** 2


def _fd_hessian(f, x, h=1e-4):
    """Second-order central differences of a scalar function of an array."""
    n = x.size
    H = onp.zeros((n, n))
    eye = onp.eye(n).reshape((n,) + x.shape)
    for i in range(n):
        for j in range(n):
            ei, ej = eye[i] * h, eye[j] * h
            H[i, j] = (f(x + ei + ej) - f(x + ei - ej) - f(x - ei + ej) + f(x - ei - ej)) \
                / (4 * h * h)
    return H.reshape(x.shape + x.shape)


_XMAT = onp.array([[0.3, -0.8], [0.5, 0.2]])


def test_hessian_of_matrix_function_via_jacfwd_grad():
    H = fgrad.jacfwd(fgrad.grad(_mat_fn))(_XMAT)
    assert H.shape == (2, 2, 2, 2)
    onp.testing.assert_allclose(H, _fd_hessian(_mat_fn_numpy, _XMAT), rtol=1e-5, atol=1e-6)
    onp.testing.assert_allclose(H, H.transpose(2, 3, 0, 1), atol=1e-12)  # symmetric


def test_hessian_of_matrix_function():
    H = fgrad.hessian(_mat_fn)(_XMAT)
    assert isinstance(H, onp.ndarray) and H.shape == (2, 2, 2, 2)
    onp.testing.assert_allclose(H, _fd_hessian(_mat_fn_numpy, _XMAT), rtol=1e-5, atol=1e-6)


def _mlp(W, x, b):
    return np.sum(np.tanh(W @ x + b))


def _xent(z):
    return np.log(np.sum(np.exp(z))) - z[0]


_W = _RNG.standard_normal((3, 4))
_x = _RNG.standard_normal(4)
_b = _RNG.standard_normal(3)
_z = _RNG.standard_normal(5)


def test_check_grads_order2_mlp():
    check_grads(_mlp, (_W, _x, _b), order=2, modes=("fwd", "rev"))


def test_check_grads_order2_xent():
    check_grads(_xent, (_z,), order=2, modes=("fwd", "rev"))


def test_check_grads_order2_fwd_only():
    check_grads(_mlp, (_W, _x, _b), order=2, modes=("fwd",))
    check_grads(_xent, (_z,), order=2, modes=("fwd",))


def test_check_grads_order1():
    check_grads(_mlp, (_W, _x, _b), order=1)
    check_grads(_xent, (_z,), order=1)


def test_check_grads_detects_a_wrong_rule():
    # the checker itself can fail: a primitive with a deliberately wrong derivative
    bad = fgrad.primitive(onp.sin, name="sin_with_wrong_rule_for_tests")
    fgrad.defvjp(bad, lambda g, ans, x: g * 2.0 * np.cos(x))
    fgrad.defjvp(bad, lambda t, ans, x: t * 2.0 * np.cos(x))
    try:
        with pytest.raises(AssertionError):
            check_grads(bad, (onp.array([0.3, 0.4]),), order=1, modes=("fwd",))
        with pytest.raises(AssertionError):
            check_grads(bad, (onp.array([0.3, 0.4]),), order=1, modes=("rev",))
    finally:
        fgrad.PRIMITIVES.pop("sin_with_wrong_rule_for_tests", None)


def test_xent_gradient_closed_form():
    g = fgrad.grad(_xent)(_z)
    p = onp.exp(_z) / onp.sum(onp.exp(_z))
    onp.testing.assert_allclose(g, p - onp.eye(5)[0], rtol=1e-12, atol=1e-14)
    # Hessian diag(p) - p p^T by forward-over-reverse through grad
    H = fgrad.jacfwd(fgrad.grad(_xent))(_z)
    onp.testing.assert_allclose(H, onp.diag(p) - onp.outer(p, p), rtol=1e-10, atol=1e-14)


# --- threads ------------------------------------------------------------------------------

def test_threads_independent(in_threads):
    n_iter = 150
    errors = []

    def work(f, df, xs):
        for i in range(n_iter):
            x = xs[i % len(xs)]
            got = fgrad.grad(f)(x)
            want = df(x)
            if not onp.allclose(got, want, rtol=1e-12, atol=1e-12):
                errors.append((f.__name__, x, got, want))
            got2 = fgrad.grad(fgrad.grad(f))(x)
            if not onp.isfinite(got2):
                errors.append((f.__name__, "second", x, got2))

    def f1(x):
        return np.sin(x) * x ** 2

    def f2(x):
        return np.exp(-x) + x ** 3

    errors += in_threads(work, [(f1, lambda x: onp.cos(x) * x ** 2 + 2 * x * onp.sin(x),
                                 [0.1, 0.7, 1.3]),
                                (f2, lambda x: -onp.exp(-x) + 3 * x ** 2, [-0.4, 0.9, 2.2])],
                         timeout=30)
    assert errors == []


# --- nothing of the tape survives ---------------------------------------------------------

def _count_nodes():
    gc.collect()
    return sum(1 for o in gc.get_objects() if type(o) is Node)


def test_tape_freed_after_transforms():
    before = _count_nodes()
    seen_inside = []

    def f(x):
        y = np.sin(x) * x
        z = np.sum(np.exp(y) * 2.0)
        if not seen_inside:
            seen_inside.append(_count_nodes())
        return z

    x = onp.array([0.1, 0.2, 0.3])
    g = fgrad.grad(f)(x)
    # the counter does see nodes while a tape is alive (so this test can fail)
    assert seen_inside[0] > before
    del g
    assert _count_nodes() <= before
    for run in (lambda: fgrad.value_and_grad(f)(x),
                lambda: fgrad.jacrev(f)(x),
                lambda: fgrad.jacfwd(f)(x),
                lambda: fgrad.jvp(f, (x,), (x,)),
                lambda: fgrad.grad(fgrad.grad(lambda s: np.sin(s) * s))(0.3),
                lambda: fgrad.jacfwd(fgrad.grad(f))(x)):
        r = run()
        del r
        assert _count_nodes() <= before


def test_tape_freed_after_vjp_fn_dropped():
    before = _count_nodes()
    x = onp.array([0.1, 0.2, 0.3])
    out, f_vjp = fgrad.vjp(lambda x: np.sum(np.sin(x) * x), x)
    f_vjp(1.0)
    assert _count_nodes() > before  # the closure keeps its tape for further calls
    del f_vjp
    assert _count_nodes() <= before
    out, f_lin = fgrad.linearize(lambda x: np.sin(x) * x, x)
    f_lin(x)
    del f_lin
    assert _count_nodes() <= before


def test_tape_freed_after_exception():
    before = _count_nodes()

    def f(x):
        y = np.sin(x) * x
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError):
        fgrad.grad(f)(0.5)
    assert _count_nodes() <= before


def test_hessian_has_aux_and_a_keyword_argument_message_say_what_jax_does():
    h, aux = fgrad.hessian(lambda x: (np.sum(x ** 3), {"s": np.sum(x)}), has_aux=True)(
        onp.array([1.0, 2.0]))
    assert h.tolist() == [[6.0, 0.0], [0.0, 12.0]] and aux == {"s": 3.0}
    assert not isinstance(aux["s"], Tracer)
    with pytest.raises(ValueError, match=r"argnums=0 does not fit a call with 0 positional "
                                         r"argument\(s\); the argument\(s\) x were passed by "
                                         r"keyword.*pass them by position"):
        fgrad.grad(lambda x: x ** 2)(x=1.0)


# --- holomorphic=True and allow_int=True (JAX's semantics) ----------------------------------

# analytic functions and their complex derivatives, in closed form
ANALYTIC = [(lambda z: z ** 3, lambda z: 3 * z ** 2, lambda z: 6 * z),
            (np.exp, onp.exp, onp.exp),
            (np.sin, onp.cos, lambda z: -onp.sin(z)),
            (lambda z: np.log(z) * z, lambda z: onp.log(z) + 1, lambda z: 1 / z),
            (lambda z: 1 / (1 + z * z), lambda z: -2 * z / (1 + z * z) ** 2,
             lambda z: (6 * z * z - 2) / (1 + z * z) ** 3)]


@pytest.mark.parametrize("k", range(len(ANALYTIC)))
def test_holomorphic_derivatives_are_the_complex_derivative(k):
    f, df, d2f = ANALYTIC[k]
    z = 0.7 - 1.3j
    assert fgrad.grad(f, holomorphic=True)(z) == pytest.approx(df(z), rel=1e-13)
    value, g = fgrad.value_and_grad(f, holomorphic=True)(z)
    assert value == pytest.approx(complex(f(z)), rel=1e-15) and g == pytest.approx(df(z), 1e-13)
    assert fgrad.grad(fgrad.grad(f, holomorphic=True), holomorphic=True)(z) == \
        pytest.approx(d2f(z), rel=1e-12)
    zs = onp.array([z, 0.2 + 0.5j, -1.1 + 0.1j])
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        onp.testing.assert_allclose(jac(f, holomorphic=True)(zs), onp.diag(df(zs)), rtol=1e-13)
    onp.testing.assert_allclose(
        fgrad.hessian(lambda z: np.sum(f(z)), holomorphic=True)(zs), onp.diag(d2f(zs)),
        rtol=1e-12)


def test_holomorphic_derivative_matches_a_complex_finite_difference_in_any_direction():
    """f'(z) is the limit (f(z + h) - f(z)) / h along every complex h: the real and the
    imaginary step give the same number."""
    f = lambda z: np.tan(z) * np.exp(z / 2)  # noqa: E731
    z, h = 0.3 + 0.4j, 1e-6
    g = fgrad.grad(f, holomorphic=True)(z)
    for step in (h, 1j * h):
        fd = (complex(f(z + step)) - complex(f(z - step))) / (2 * step)
        assert g == pytest.approx(fd, rel=1e-8)


# the transform named in the message (hessian is jacfwd of jacrev: the one that checks)
NAMED = {"grad": ("grad", "grad"), "value_and_grad": ("grad", "grad"),
         "jacfwd": ("jacfwd", "jacfwd"), "jacrev": ("jacrev", "jacrev"),
         "hessian": ("jacfwd", "jacrev")}


@pytest.mark.parametrize("name", list(NAMED))
def test_holomorphic_refuses_real_inputs_and_outputs_by_name(name):
    transform = getattr(fgrad, name)
    for_input, for_output = NAMED[name]
    with pytest.raises(TypeError, match=rf"^{for_input}\(\.\.\., holomorphic=True\) requires "
                                        r"complex inputs, but input leaf 0 has dtype float64; "
                                        r"pass complex values"):
        transform(lambda z: np.sum(z * 1j), holomorphic=True)(onp.array([1.0]))
    with pytest.raises(TypeError, match=rf"^{for_output}\(\.\.\., holomorphic=True\) requires "
                                        r"complex outputs, but output leaf 0 has dtype float64; "
                                        "a real-valued function is not holomorphic"):
        transform(lambda z: np.sum(np.abs(z)), holomorphic=True)(onp.array([1j]))


def test_jacrev_of_a_complex_output_needs_holomorphic():
    # a real unit cotangent would drop the imaginary part: the Jacobian of x (1 + 1j) is
    # 1 + 1j, and pulling back real cotangents gave 1 without a word
    f = lambda x: x * (1 + 1j)  # noqa: E731
    with pytest.raises(TypeError, match=r"jacrev: output leaf 0 is complex \(complex128\)\. "
                                        r".*pass holomorphic=True .* use jacfwd"):
        fgrad.jacrev(f)(onp.array([1.0]))
    assert fgrad.jacfwd(f)(onp.array([1.0])) == 1 + 1j
    # a real function of complex inputs is jacrev's without holomorphic (conjugate gradient)
    z = onp.array([1.0 + 2.0j])
    assert fgrad.jacrev(lambda z: np.abs(z) ** 2)(z) == 2 * onp.conj(z)


def test_allow_int_lets_integer_inputs_through_with_float0_gradients():
    g = fgrad.grad(lambda x, n: x ** n, argnums=(0, 1), allow_int=True)(2.0, 3)
    assert g[0] == 12.0
    assert g[1].dtype == fgrad.float0 and g[1].shape == ()
    idx = onp.array([2, 0])
    (value, aux), (gx, gi) = fgrad.value_and_grad(
        lambda x, i: (np.sum(x[i] ** 2), i), argnums=(0, 1), has_aux=True,
        allow_int=True)(onp.array([1.0, 2.0, 3.0]), idx)
    assert value == 10.0 and aux is idx
    onp.testing.assert_array_equal(gx, [2.0, 0.0, 6.0])
    assert gi.dtype == fgrad.float0 and gi.shape == (2,)
    jx, jb = fgrad.jacrev(lambda x, b: x * b, argnums=(0, 1), allow_int=True)(
        onp.ones(2), onp.array([True, False]))
    onp.testing.assert_array_equal(jx, onp.diag([1.0, 0.0]))
    assert jb.dtype == fgrad.float0 and jb.shape == (2, 2)
    with pytest.raises(TypeError, match=r"grad requires float or complex inputs, but input "
                                        r"leaf 1 is a int \(3\)"):
        fgrad.grad(lambda x, n: x ** n, argnums=(0, 1))(2.0, 3)


def test_jacobians_of_a_large_input_are_batched_in_chunks_with_the_same_values():
    # 1200 inputs: the unit vectors go through vmap in chunks (fgrad.transforms._CHUNK)
    import fgrad.transforms
    x = onp.random.default_rng(3).normal(size=(30, 40))
    assert fgrad.transforms._CHUNK // x.size < x.size
    f = lambda x: np.sin(x) * np.sum(x ** 2)
    flat = x.ravel()
    want = (onp.diag(onp.cos(flat) * onp.sum(flat ** 2))
            + onp.outer(onp.sin(flat), 2 * flat)).reshape(x.shape + x.shape)
    onp.testing.assert_allclose(fgrad.jacrev(f)(x), want, rtol=1e-13, atol=1e-13)
    onp.testing.assert_allclose(fgrad.jacfwd(f)(x), want, rtol=1e-13, atol=1e-13)


def test_transforms_of_a_partial_or_a_callable_object_are_named_by_its_function():
    def scaled(scale, x):
        return scale * np.sin(x)

    class Halved:
        def __call__(self, x):
            return np.sum(x) / 2

    part = functools.partial(functools.partial(scaled, 2.0))
    for fun, name in [(part, "scaled"), (Halved(), "Halved")]:
        assert fgrad.grad(fun).__name__ == f"grad({name})"
        assert fgrad.value_and_grad(fun).__name__ == f"value_and_grad({name})"
        assert fgrad.jacfwd(fun).__name__ == f"jacfwd({name})"
        assert fgrad.jacrev(fun).__name__ == f"jacrev({name})"
        assert fgrad.vmap(fun).__name__ == f"vmap({name})"
        assert fgrad.jit(fun).__name__ == name
        assert repr(fgrad.checkpoint(fun)) == f"<fgrad.checkpoint({name})>"
        assert fgrad.grad(fun)(1.5) == fgrad.grad(lambda x: fun(x))(1.5)
