"""Indexing, functional updates and selection: exact derivatives, numpy's values, the errors.

Every function here moves entries, so its Jacobian is a 0/1 matrix (a permutation, a selection,
or sums of them when an index repeats) that can be written down exactly; both modes must give
it. The generated tests in test_rules.py check the rules against finite differences; these pin
the exact values, the tie conventions and the error messages.
"""
import numpy as onp
import pytest
from numpy.testing import assert_allclose, assert_array_equal

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads
from fgrad.core.tracer import Tracer

rng = onp.random.default_rng(7)
X = rng.uniform(-1, 1, (2, 3, 4))
M = rng.uniform(-1, 1, (3, 4))
V = onp.array([0.5, -1.5, 2.0, 1.25])


def jacobians(f, x):
    """The Jacobian of ``f`` at ``x`` in both modes; they must agree exactly."""
    fwd, rev = fgrad.jacfwd(f)(x), fgrad.jacrev(f)(x)
    assert_array_equal(fwd, rev)
    return fwd


def moved_matrix(move, shape):
    """The exact Jacobian of a function that only moves entries: a 1 from each output entry to
    the input entry it reads, found by applying numpy's own ``move`` to the positions."""
    n = int(onp.prod(shape))
    pos = move(onp.arange(n).reshape(shape))
    return onp.eye(n)[onp.ravel(pos)].reshape(onp.shape(pos) + tuple(shape))


def selection_matrix(shape, idx):
    """The exact Jacobian of ``x[idx]``."""
    return moved_matrix(lambda p: p[idx], shape)


def assert_same(got, want):
    """Bit for bit, dtype and shape included."""
    got, want = onp.asarray(got), onp.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape
    assert got.tobytes() == want.tobytes()


def traced_value(f, *xs):
    return fgrad.vjp(f, *xs)[0]


# --- x[idx] for every index kind --------------------------------------------------------------

INDICES = {
    "int": 1,
    "negative int": -1,
    "stepped slice": (slice(None), slice(None, None, -2)),
    "slice with start, stop, step": (Ellipsis, slice(3, 0, -2)),
    "Ellipsis and None": (Ellipsis, None, 2),
    "newaxis first": (np.newaxis, 0, slice(1, None)),
    "integer array with repeats": onp.array([1, 1, 0]),
    "negative integer array": (0, onp.array([-1, 0, -1])),
    "boolean mask": X[..., 0] > 0,
    "boolean mask of every axis": X > 0.2,
    "list": [0, 1, 1],
    "list of lists": ([[0, 1], [1, 1]], [2, 2]),
    "advanced, adjacent": (slice(None), [2, 0, 2], [1, 1, 3]),
    "advanced, separated by a slice": ([1, 1, 0], slice(None), [3, 3, 0]),
    "0-d integer array": onp.array(1),
    "0-d array and slice": (onp.array(0), slice(None), onp.array(-2)),
}


@pytest.mark.parametrize("kind", sorted(INDICES))
def test_getitem_values_and_exact_jacobian(kind):
    idx = INDICES[kind]
    assert_same(traced_value(lambda x: x[idx], X), X[idx])
    assert_array_equal(jacobians(lambda x: x[idx], X), selection_matrix(X.shape, idx))


def test_repeated_fancy_index_accumulates_in_reverse_mode():
    g = fgrad.grad(lambda v: np.sum(v[[0, 0, 2, 0, -1]] * onp.array([1.0, 2.0, 3.0, 4.0, 5.0])))(V)
    assert_array_equal(g, [1.0 + 2.0 + 4.0, 0.0, 3.0, 5.0])
    _, t = fgrad.jvp(lambda v: v[[0, 0, 3]], (V,), (onp.array([1.0, 10.0, 100.0, 1000.0]),))
    assert_array_equal(t, [1.0, 1.0, 1000.0])


def test_advanced_indices_separated_by_a_slice_put_their_dimension_first():
    f = lambda x: x[[1, 0], :, [3, 3]]
    assert traced_value(f, X).shape == (2, 3) == X[[1, 0], :, [3, 3]].shape
    # output row i reads x[idx0[i], :, idx1[i]]: the cotangent lands back there
    c = onp.arange(6.0).reshape(2, 3)
    (g,) = fgrad.vjp(f, X)[1](c)
    expected = onp.zeros_like(X)
    expected[1, :, 3] = c[0]
    expected[0, :, 3] = c[1]
    assert_array_equal(g, expected)


def test_boolean_mask_gradient_is_the_mask():
    mask = M > 0
    assert_array_equal(fgrad.grad(lambda m: np.sum(m[mask] * 3.0))(M), 3.0 * mask)


def test_indexing_inside_a_loss_checks_to_second_order():
    f = lambda x: np.sum(np.sin(x[[1, 1, 0], :, [0, 0, 3]]) * x[0, ::-1, 1:3].T[0] ** 2)
    check_grads(f, (X,), order=2)
    assert_allclose(fgrad.hessian(f)(X), fgrad.jacrev(fgrad.jacfwd(f))(X), rtol=1e-12, atol=1e-14)


# --- x.at[idx]: functional updates ------------------------------------------------------------

A3 = onp.array([1.5, -2.0, 0.75])


def test_at_multiply_with_repeats_is_numpys_multiply_at_bit_for_bit():
    x, v = rng.uniform(-2, 2, 5), rng.uniform(-2, 2, (2, 4))
    idx = onp.array([[0, 3, 0, 4], [0, 3, 1, 0]])
    expected = x.copy()
    onp.multiply.at(expected, idx, v)
    assert_same(traced_value(lambda x, v: x.at[idx].multiply(v), x, v), expected)
    assert_same(np.index_multiply(x, v, idx), expected)
    x32, v32 = x.astype(onp.float32), v.astype(onp.float32)
    expected32 = x32.copy()
    onp.multiply.at(expected32, idx, v32)
    assert_same(traced_value(lambda x, v: x.at[idx].multiply(v), x32, v32), expected32)


def test_at_multiply_derivatives_follow_the_product_rule_even_at_zero():
    v = onp.array([0.0, 3.0, -2.0])  # entry 0 is multiplied by 0 and by 3
    f = lambda x, v: x.at[[0, 0, 2]].multiply(v)
    jx = onp.diag([0.0 * 3.0, 1.0, -2.0])
    jv = onp.array([[A3[0] * 3.0, A3[0] * 0.0, 0.0],
                    [0.0, 0.0, 0.0],
                    [0.0, 0.0, A3[2]]])
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        got_x, got_v = jac(f, argnums=(0, 1))(A3, v)
        assert_array_equal(got_x, jx)
        assert_array_equal(got_v, jv)
    # finite differences run f on plain arrays, which have no .at: the function form
    g = lambda x, v: np.index_multiply(x, v, [0, 0, 2])
    check_grads(lambda x, v: np.sum(g(x, v) ** 2), (A3, v), order=2)
    check_grads(g, (A3, onp.array([0.5, 3.0, -2.0])), order=2)


def test_at_max_repeats_take_the_largest_and_ties_split_evenly():
    x = onp.array([1.0, 5.0, 2.0])
    f = lambda x, v: x.at[[0, 0, 1, 1]].max(v)
    v = onp.array([3.0, 3.0, 5.0, 4.0])
    assert_same(traced_value(f, x, v), onp.array([3.0, 5.0, 2.0]))
    # entry 0: the two 3s tie above x[0]; entry 1: x[1] and v[2] tie at 5
    jx = onp.array([[0.0, 0.0, 0.0], [0.0, 0.5, 0.0], [0.0, 0.0, 1.0]])
    jv = onp.array([[0.5, 0.5, 0.0, 0.0], [0.0, 0.0, 0.5, 0.0], [0.0, 0.0, 0.0, 0.0]])
    for jac in (fgrad.jacfwd, fgrad.jacrev):
        got_x, got_v = jac(f, argnums=(0, 1))(x, v)
        assert_array_equal(got_x, jx)
        assert_array_equal(got_v, jv)


def test_at_min_three_way_tie_shares_in_thirds():
    x = onp.array([2.0, 7.0])
    f = lambda x, v: np.sum(x.at[[0, 0]].min(v))
    g = fgrad.grad(f, argnums=(0, 1))(x, onp.array([2.0, 2.0]))
    assert_array_equal(g[0], [1 / 3, 1.0])
    assert_array_equal(g[1], [1 / 3, 1 / 3])


def test_at_min_max_away_from_ties_check_to_second_order():
    x, v = onp.array([0.3, -1.2, 0.9, 1.7]), onp.array([0.1, 0.6, -0.4])
    idx = onp.array([0, 0, 2])
    for op in ("min", "max"):
        f = lambda x, v: np.sum(np.sin(getattr(np, "index_" + op)(x, v * v, idx)) * x)
        check_grads(f, (x, v), order=2)
        want = x.copy()
        getattr(onp, {"min": "minimum", "max": "maximum"}[op]).at(want, idx, v)
        assert_same(traced_value(lambda x, v: getattr(x.at[idx], op)(v), x, v), want)
        assert_same(getattr(np, "index_" + op)(x, v, idx), want)



# --- np.at(x)[idx]: the same updates on plain arrays and traced values ------------------------

# operation -> (numpy's in-place form, a value for it); with repeats where numpy's ufunc.at has a
# meaning for them
AT_OPS = {
    "set": (lambda out, idx, v: out.__setitem__(idx, v), onp.array([0.5, -1.5])),
    "add": (lambda out, idx, v: onp.add.at(out, idx, v), onp.array([0.5, -1.5])),
    "multiply": (lambda out, idx, v: onp.multiply.at(out, idx, v), onp.array([0.5, -1.5])),
    "divide": (lambda out, idx, v: onp.divide.at(out, idx, v), onp.array([0.5, -1.5])),
    "power": (lambda out, idx, v: onp.power.at(out, idx, v), onp.array([2.0, 3.0])),
    "min": (lambda out, idx, v: onp.minimum.at(out, idx, v), onp.array([0.5, -1.5])),
    "max": (lambda out, idx, v: onp.maximum.at(out, idx, v), onp.array([0.5, -1.5])),
}


@pytest.mark.parametrize("op", list(AT_OPS))
@pytest.mark.parametrize("idx", [onp.array([0, 2]), (slice(None), 1), onp.array([3, 3])],
                         ids=["fancy", "slice", "repeated"])
def test_at_function_on_plain_arrays_is_numpy_in_place_and_traced_it_differentiates(op, idx):
    x = onp.array([1.5, 2.0, 0.75, 1.25]) if not isinstance(idx, tuple) else \
        onp.array([[1.5, 2.0], [0.75, 1.25]])
    numpy_form, v = AT_OPS[op]
    repeated = isinstance(idx, onp.ndarray) and len(set(idx.tolist())) < len(idx)
    update = lambda x, v: getattr(np.at(x)[idx], op)(v)  # noqa: E731
    if repeated and op in ("set", "power"):
        with pytest.raises(ValueError, match=r"^x\[idx\] = v \(or at\(x\)\[idx\]\.set\(v\), "
                                             r".*\): idx names some element more than once"):
            update(x, v)
        return
    want = x.copy()
    numpy_form(want, idx, v)
    got = update(x, v)
    assert type(got) is onp.ndarray and not isinstance(got, Tracer)
    assert_allclose(got, want, rtol=1e-15)
    assert_same(traced_value(update, x, v), got)
    if op not in ("min", "max"):  # (those have ties at no point drawn here, but kinks)
        check_grads(lambda x, v: np.sum(update(x, v) ** 2), (x, v), order=2)
    # a traced value's JAX spelling is the same function
    assert_same(traced_value(lambda x, v: getattr(x.at[idx], op)(v), x, v), got)


def test_at_get_and_apply_on_plain_and_traced_arrays():
    x = onp.array([0.5, 1.0, 1.5])
    assert_same(np.at(x)[1:].get(), x[1:])
    want = x.copy()
    want[1:] = onp.exp(want[1:])
    assert_same(np.at(x)[1:].apply(np.exp), want)
    g = fgrad.grad(lambda x: np.sum(np.at(x)[1:].apply(np.exp)))(x)
    assert_allclose(g, [1.0, onp.exp(1.0), onp.exp(1.5)], rtol=1e-15)
    assert x.tolist() == [0.5, 1.0, 1.5]  # never written


def test_a_loss_written_with_at_runs_under_scipy_optimize_and_under_grad():
    so = pytest.importorskip("scipy.optimize", reason="scipy is an optional extra")
    target = onp.array([1.0, -2.0, 0.5, 3.0])

    def loss(w):  # w's two entries are written into the middle of a fixed vector
        full = np.at(np.zeros(4))[1:3].set(w)
        return np.sum((full - target) ** 2)

    res = so.minimize(loss, onp.zeros(2), jac=fgrad.grad(loss), method="BFGS")
    assert_allclose(res.x, [-2.0, 0.5], atol=1e-8)
    w = onp.array([0.3, -0.7])
    assert_allclose(fgrad.grad(loss)(w), 2 * (w - target[1:3]), rtol=1e-15)


def test_preallocate_and_fill_says_what_works_in_every_transform():
    def f(x):
        out = np.zeros(2)
        out[0] = x[0]
        return np.sum(out)

    x = onp.array([1.0, 2.0])
    runs = {"grad": lambda: fgrad.grad(f)(x), "jvp": lambda: fgrad.jvp(f, (x,), (x,)),
            "jacfwd": lambda: fgrad.jacfwd(f)(x), "vmap": lambda: fgrad.vmap(f)(onp.ones((3, 2)))}
    for name, run in runs.items():
        with pytest.raises(fgrad.ConcretizationError,
                           match=rf"^{name}: a traced value was written into a plain numpy "
                                 r"array .* np\.stack\(\[\.\.\.\]\) .* out = np\.at\(out\)"
                                 r"\[i\]\.set\(x\)"):
            run()

    def filled(x):  # what the message recommends, which runs without a transform too
        return np.sum(np.at(np.zeros(2))[0].set(x[0]))

    assert filled(x) == 1.0 and fgrad.grad(filled)(x).tolist() == [1.0, 0.0]

def test_at_max_scalar_value_broadcasts_and_float32_stays_float32():
    x = onp.array([[0.5, -1.0], [2.0, 0.25]], dtype=onp.float32)
    out, g = fgrad.value_and_grad(lambda x: np.sum(x.at[:, 1].max(onp.float32(0.0))))(x)
    assert out.dtype == onp.float32 and g.dtype == onp.float32
    assert_array_equal(g, [[1.0, 0.0], [1.0, 1.0]])


def test_at_set_with_repeated_index_is_an_error():
    with pytest.raises(ValueError, match=r"names some element more than once"):
        fgrad.grad(lambda x: np.sum(x.at[[1, 1]].set(0.0)))(A3)
    with pytest.raises(ValueError, match=r"names some element more than once"):
        np.index_set(A3, 0.0, [2, 2])


def test_at_get_add_set_values_and_gradients():
    f = lambda x: x.at[::2].get() * 2 + x.at[[0, 0]].add(x[1])[::2] + x.at[2].set(x[0])[::2]
    assert_same(traced_value(f, A3), A3[::2] * 2 + onp.array([A3[0] + 2 * A3[1], A3[2]])
                + onp.array([A3[0], A3[0]]))
    assert_array_equal(jacobians(f, A3), [[4.0, 2.0, 0.0], [1.0, 0.0, 3.0]])


def test_plain_arrays_have_no_at_but_the_index_functions_work():
    assert not hasattr(onp.ones(2), "at")
    y = np.index_add(A3, 1.0, [0, 0])
    assert type(y) is onp.ndarray and y.tolist() == [3.5, -2.0, 0.75]
    assert np.index_max(A3, 1.0, slice(None)).tolist() == [1.5, 1.0, 1.0]
    assert np.index_min(A3, 1.0, slice(None)).tolist() == [1.0, -2.0, 0.75]
    assert np.index_multiply(A3, 2.0, [1, 1]).tolist() == [1.5, -8.0, 0.75]
    assert A3.tolist() == [1.5, -2.0, 0.75]  # never modified


# --- take and friends -------------------------------------------------------------------------

@pytest.mark.parametrize("kwargs", [
    {"indices": [3, 0, 3, -1]},
    {"indices": [[1], [2]], "axis": 1},
    {"indices": [5, -1], "axis": 0, "mode": "wrap"},
    {"indices": [7, -3], "axis": -1, "mode": "clip"},
])
def test_take_exact_jacobian(kwargs):
    f = lambda m: np.take(m, **kwargs)
    assert_same(traced_value(f, M), onp.take(M, **kwargs))
    assert_array_equal(jacobians(f, M), moved_matrix(lambda p: onp.take(p, **kwargs), M.shape))


def test_take_errors_are_numpys():
    with pytest.raises(ValueError, match="clipmode"):
        fgrad.grad(lambda m: np.sum(np.take(m, [0], mode="nearest")))(M)
    with pytest.raises(IndexError):
        fgrad.grad(lambda m: np.sum(np.take(m, [12])))(M)


def test_take_along_axis_with_argsort_sorts_and_routes_the_gradient():
    order = onp.argsort(M, axis=1)
    f = lambda m: np.take_along_axis(m, order, axis=1)
    assert_same(traced_value(f, M), onp.sort(M, axis=1))
    g = fgrad.grad(lambda m: np.sum(f(m)[:, 0]))(M)  # the row minima
    assert_array_equal(g, M == M.min(axis=1, keepdims=True))


def test_compress_and_extract():
    f = lambda m: np.compress([False, True, True], m, axis=0)
    assert_same(traced_value(f, M), onp.compress([False, True, True], M, axis=0))
    assert_array_equal(jacobians(f, M), moved_matrix(
        lambda p: onp.compress([False, True, True], p, axis=0), M.shape))
    cond = M > 0
    assert_same(traced_value(lambda m: np.extract(cond, m), M), onp.extract(cond, M))
    assert_array_equal(fgrad.grad(lambda m: np.sum(np.extract(cond, m)))(M), cond)


def test_compress_method_on_a_tracer_takes_the_condition_first():
    got = fgrad.grad(lambda v: np.sum(v.compress([True, False, True, True])))(V)
    assert_array_equal(got, [1.0, 0.0, 1.0, 1.0])


def test_compress_with_a_traced_condition_and_plain_array_is_refused():
    # np.compress(x, cond) with the array and condition swapped would answer wrongly
    with pytest.raises(TypeError, match=r"write np\.compress\(condition, x\) instead"):
        fgrad.grad(lambda v: np.sum(np.compress(v, onp.array([1.0, 2.0, 3.0, 4.0]))))(V)


def test_choose_picks_from_the_chosen_array():
    a = onp.array([[0, 2, 1, 0]])
    f = lambda x, y: np.choose(a, [x, y, 2 * x])
    x, y = M, M[0] + 1
    assert_same(traced_value(f, x, y), onp.choose(a, [x, y, 2 * x]))
    gx, gy = fgrad.grad(lambda x, y: np.sum(f(x, y)), argnums=(0, 1))(x, y)
    assert_array_equal(gx, onp.broadcast_to([1.0, 2.0, 0.0, 1.0], M.shape))
    assert_array_equal(gy, [0.0, 0.0, 3.0, 0.0])
    with pytest.raises(ValueError, match="invalid entry in choice array"):
        fgrad.grad(lambda x: np.sum(np.choose([0, 2], [x, x])))(V[:2])
    assert_array_equal(fgrad.grad(lambda x: np.sum(np.choose([0, 3], [x, 2 * x], mode="wrap")))(
        V[:2]), [1.0, 2.0])


# --- sort, partition, unique ------------------------------------------------------------------

def test_sort_jacobian_is_the_sorting_permutation():
    for axis in (-1, 0, None):
        f = lambda m: np.sort(m, axis=axis)
        assert_same(traced_value(f, M), onp.sort(M, axis=axis))
        J = jacobians(f, M).reshape(-1, M.size)
        assert_array_equal(J @ M.ravel(), onp.ravel(onp.sort(M, axis=axis)))
        assert_array_equal(J.sum(axis=0), 1.0)  # a permutation
        assert_array_equal(J.sum(axis=1), 1.0)


def test_sort_tie_takes_the_entry_the_stable_sort_puts_there():
    x = onp.array([2.0, 1.0, 2.0, 2.0])
    # numpy's stable sort gives [x1, x0, x2, x3]: the tied 2s keep their order
    expected = onp.eye(4)[[1, 0, 2, 3]]
    assert_array_equal(jacobians(lambda x: np.sort(x, kind="quicksort"), x), expected)
    # so at a tie the last sorted entry is not max's even split
    assert_array_equal(fgrad.grad(lambda x: np.sort(x)[-1])(x), [0.0, 0.0, 0.0, 1.0])
    assert_array_equal(fgrad.grad(np.max)(x), [1 / 3, 0.0, 1 / 3, 1 / 3])


def test_sort_checks_to_second_order_in_a_loss():
    f = lambda m: np.sum(np.sort(m * m, axis=0)[0] * onp.arange(1.0, 5.0))
    check_grads(f, (M,), order=2)
    assert_allclose(fgrad.hessian(f)(M), fgrad.jacrev(fgrad.jacrev(f))(M), rtol=1e-12, atol=1e-14)


def test_sort_complex():
    z = onp.array([1 + 2j, -1 + 0.5j, 1 - 1j])
    f = lambda z: np.sort_complex(z)
    assert_same(traced_value(f, z), onp.sort_complex(z))
    r = onp.array([3.0, -1.0, 2.0], dtype=onp.float32)
    assert_same(traced_value(f, r), onp.sort_complex(r))
    assert_array_equal(fgrad.grad(lambda r: np.sum(np.real(f(r)) * onp.float32([1, 10, 100])))(r),
                       [100.0, 1.0, 10.0])


def test_partition_jacobian_is_the_permutation_numpy_applied():
    x = onp.array([0.3, -1.0, 2.5, 0.1, 1.7, -0.4])
    for kth in (0, 2, (1, 4), -1):
        f = lambda x: np.partition(x, kth)
        want = onp.partition(x, kth)
        assert_same(traced_value(f, x), want)
        J = jacobians(f, x)
        assert_array_equal(J @ x, want)
        assert_array_equal(J.sum(axis=0), 1.0)


def test_partition_ties_are_matched_in_order():
    x = onp.array([3.0, 1.0, 3.0, 0.0])
    J = jacobians(lambda x: np.partition(x, 1), x)
    out = onp.partition(x, 1)
    first, second = onp.flatnonzero(out == 3.0)
    assert J[first, 0] == 1.0 and J[second, 2] == 1.0


def test_unique_duplicates_share_the_derivative_evenly():
    x = onp.array([2.0, 1.0, 2.0, 5.0, 2.0])
    f = lambda x: np.unique(x)
    assert_same(traced_value(f, x), onp.unique(x))
    assert_array_equal(jacobians(f, x), [[0, 1, 0, 0, 0], [1 / 3, 0, 1 / 3, 0, 1 / 3],
                                         [0, 0, 0, 1, 0]])
    vals, counts = traced_value(lambda x: np.unique(x, return_counts=True), x)
    assert not isinstance(counts, Tracer) and counts.tolist() == [1, 3, 1]


def test_unique_values_in_numpys_order_and_unique_all():
    x = onp.array([5.0, 1.0, 5.0, -3.0])
    u = traced_value(np.unique_values, x)
    assert_same(u, onp.unique_values(x))
    J = jacobians(np.unique_values, x)
    for i, value in enumerate(u):  # each output shares among the inputs equal to it
        hits = x == value
        assert_array_equal(J[i], hits / hits.sum())
    res = traced_value(np.unique_all, x)
    want = onp.unique_all(x)
    assert type(res) is type(want)
    for g, w in zip(res, want):
        assert_same(g, w)


def test_unique_rows():
    m = onp.array([[1.0, 2.0], [0.0, 4.0], [1.0, 2.0]])
    f = lambda m: np.unique(m, axis=0)
    assert_same(traced_value(f, m), onp.unique(m, axis=0))
    assert_array_equal(fgrad.grad(lambda m: np.sum(f(m)[1] * onp.array([1.0, 10.0])))(m),
                       [[0.5, 5.0], [0.0, 0.0], [0.5, 5.0]])


# --- flips, rotations, rolls: the VJP is the inverse move -------------------------------------

C = rng.uniform(-1, 1, (3, 4))


@pytest.mark.parametrize("move, inverse", [
    (lambda m: np.roll(m, 1), lambda c: onp.roll(c, -1)),
    (lambda m: np.roll(m, (1, -5), axis=(0, 1)), lambda c: onp.roll(c, (-1, 5), axis=(0, 1))),
    (lambda m: np.roll(m, (2, 1), axis=(1, 1)), lambda c: onp.roll(c, -3, axis=1)),
    (lambda m: np.flip(m), lambda c: onp.flip(c)),
    (lambda m: np.flip(m, axis=(-1,)), lambda c: onp.flip(c, -1)),
    (lambda m: np.fliplr(m), lambda c: onp.fliplr(c)),
    (lambda m: np.flipud(m), lambda c: onp.flipud(c)),
    (lambda m: np.rot90(m), lambda c: onp.rot90(c, -1)),
    (lambda m: np.rot90(m, 3, axes=(1, 0)), lambda c: onp.rot90(c, -3, axes=(1, 0))),
    (lambda m: np.rot90(m, 2), lambda c: onp.rot90(c, 2)),
])
def test_move_transpose_is_the_inverse_move(move, inverse):
    out, f_vjp = fgrad.vjp(move, M)
    ct = rng.uniform(-1, 1, out.shape)
    assert_array_equal(f_vjp(ct)[0], inverse(ct))
    _, t = fgrad.jvp(move, (M,), (C,))
    assert_array_equal(t, move(C))  # linear: the JVP is the move of the tangent


def test_moves_are_numpys_values():
    for name, args in [("roll", (3,)), ("roll", ((1, 2), (0, 1))), ("flip", ()), ("fliplr", ()),
                       ("flipud", ()), ("rot90", (1,)), ("rot90", (-1, (1, 0)))]:
        assert_same(traced_value(lambda m: getattr(np, name)(m, *args), M),
                    getattr(onp, name)(M, *args))


def test_rot90_errors_are_numpys():
    with pytest.raises(ValueError, match="Axes must be different"):
        fgrad.grad(lambda m: np.sum(np.rot90(m, 1, (0, 0))))(M)
    with pytest.raises(ValueError, match="len\\(axes\\) must be 2"):
        fgrad.grad(lambda m: np.sum(np.rot90(m, 1, (0,))))(M)
    with pytest.raises(ValueError, match="Input must be >= 2-d"):
        fgrad.grad(lambda v: np.sum(np.fliplr(v)))(V)


# --- diagonals, triangles, trace --------------------------------------------------------------

def test_trace_is_the_sum_of_the_diagonal():
    big = rng.uniform(-1, 1, (40, 40))
    # the diagonal is numpy's strided view, so even the rounding of its sum is numpy's
    assert_same(traced_value(np.trace, big), onp.trace(big))
    assert_same(traced_value(lambda m: np.sum(np.diagonal(m, 3)), big),
                onp.sum(onp.diagonal(big, 3)))
    for offset in (0, 1, -2):
        g = fgrad.grad(lambda m: np.trace(m, offset))(M)
        assert_array_equal(g, onp.eye(3, 4, offset))
        assert_array_equal(g, fgrad.grad(lambda m: np.sum(np.diagonal(m, offset)))(M))
    # axis1=2 runs i, axis2=0 runs i + 1: only X[1, :, 0] is on that diagonal
    assert_array_equal(fgrad.grad(lambda x: np.sum(np.trace(x, 1, 2, 0)))(X),
                       onp.broadcast_to(onp.eye(2, 4, -1)[:, None, :], X.shape))


def test_diagonal_and_diag_both_directions():
    f = lambda x: np.diagonal(x, 1, 2, 0)
    assert_same(traced_value(f, X), onp.diagonal(X, 1, 2, 0))
    assert_array_equal(jacobians(f, X), moved_matrix(lambda p: onp.diagonal(p, 1, 2, 0), X.shape))
    for k in (0, 1, -2):
        assert_same(traced_value(lambda v: np.diag(v, k), V), onp.diag(V, k))
        J = jacobians(lambda v: np.diag(v, k), V)
        assert_array_equal(onp.einsum("ijk,k->ij", J, V), onp.diag(V, k))
        assert_same(traced_value(lambda m: np.diag(m, k), M), onp.diag(M, k))
        assert_array_equal(fgrad.grad(lambda m: np.sum(np.diag(m, k)))(M), onp.eye(3, 4, k))
    assert_same(traced_value(lambda m: np.diagflat(m, -1), M[:2, :2]), onp.diagflat(M[:2, :2], -1))
    assert_array_equal(fgrad.grad(lambda m: np.sum(np.diagflat(m, 1) * 2.0))(M[:2, :2]),
                       onp.full((2, 2), 2.0))


@pytest.mark.parametrize("k", [0, 1, -1])
def test_triu_tril_gradients_are_their_masks(k):
    for name, mask in (("triu", onp.triu(onp.ones((3, 4)), k)),
                       ("tril", onp.tril(onp.ones((3, 4)), k))):
        f = getattr(np, name)
        assert_same(traced_value(lambda m: f(m, k), M), getattr(onp, name)(M, k))
        assert_array_equal(fgrad.grad(lambda m: np.sum(f(m, k)))(M), mask)
        assert_array_equal(fgrad.grad(lambda x: np.sum(f(x, k)))(X),
                           onp.broadcast_to(mask, X.shape))


# --- zero-derivative helpers and in-place functions -------------------------------------------

@pytest.mark.parametrize("name, call", [
    ("argpartition", lambda m, x: m.argpartition(x, 1, axis=0)),
    ("lexsort", lambda m, x: m.lexsort((x[0], x[1]))),
    ("diag_indices_from", lambda m, x: m.diag_indices_from(x[:3, :3])),
    ("tril_indices_from", lambda m, x: m.tril_indices_from(x, 1)),
    ("triu_indices_from", lambda m, x: m.triu_indices_from(x, -1)),
])
def test_index_helpers_take_tracers_and_return_plain_arrays(name, call):
    seen = []
    fgrad.grad(lambda x: seen.append(call(np, x)) or np.sum(x))(M)
    want = call(onp, M)
    for got, w in zip(*(r if isinstance(r, tuple) else (r,) for r in (seen[0], want))):
        assert not isinstance(got, Tracer)
        assert_same(got, w)


# (a traced array written to: tests/test_writes.py; a plain one cannot hold traced values)
@pytest.mark.parametrize("name, call, instead", [
    ("put", lambda m, x: m.put(onp.zeros((3, 4)), [0], x[0, 0]),
     r"np\.at\(np\.ravel\(x\)\)\[ind\]\.set\(v\)"),
    ("place", lambda m, x: m.place(onp.zeros((3, 4)), M > 0, x[0]),
     r"np\.at\(x\)\[mask\]\.set\(vals\)"),
    ("putmask", lambda m, x: m.putmask(onp.zeros((3, 4)), M > 0, x),
     r"np\.where\(mask, values, x\)"),
    ("copyto", lambda m, x: m.copyto(onp.zeros((3, 4)), x), r"np\.where\(where, src, dst\)"),
    ("fill_diagonal", lambda m, x: m.fill_diagonal(onp.zeros((3, 4)), x[0, 0]),
     r"np\.at\(x\)\[np\.diag_indices_from\(x\)\]\.set\(val\)"),
    ("put_along_axis", lambda m, x: m.put_along_axis(onp.zeros((3, 4)), onp.array([[0]]),
                                                     x[0, 0], 0),
     r"np\.at\(x\)\[idx\]\.set\(values\)"),
])
@pytest.mark.parametrize("module", ["fgrad.numpy", "numpy"])
def test_in_place_functions_refuse_traced_values_into_a_plain_array(name, call, instead,
                                                                     module):
    m = np if module == "fgrad.numpy" else onp
    if m is onp and name == "fill_diagonal":  # (numpy's dispatch asks the array only: numpy
        # writes the traced value itself, which fgrad's error says)
        with pytest.raises(fgrad.ConcretizationError, match="written into a plain numpy array"):
            fgrad.grad(lambda x: call(m, x) or np.sum(x))(M)
        return
    with pytest.raises(fgrad.TracerMutationError,
                       match=rf"np\.{name}\(.*\) modifies a traced array in place.*{instead}"):
        fgrad.grad(lambda x: call(m, x) or np.sum(x))(M)


def test_in_place_functions_on_plain_arrays_are_numpys():
    a = onp.zeros((2, 2))
    np.put(a, [3], 1.0)
    np.fill_diagonal(a, 2.0)
    np.putmask(a, a == 0, -1.0)
    assert a.tolist() == [[2.0, -1.0], [-1.0, 2.0]]
