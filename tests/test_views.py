"""Augmented assignment through views and aliases keeps numpy's meaning or raises
TracerMutationError (fgrad/numpy/views.py); it never rebinds one name while numpy would change
another's array. Where another name sees the memory, the write goes through: to an alias (the
same tracer), to the arrays a view was indexed, reshaped or transposed from and to their
other such views; a view of another kind (a diagonal) read again refuses it."""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
import fgrad.tools.check  # noqa: F401  (the whole table)
from fgrad import TracerMutationError
from fgrad.core.pytree import tree_flatten
from fgrad.core.table import checked
from fgrad.core.tracer import Tracer
from fgrad.testing import as_function, check_grads, random_case
from numeric import central_gradient


def _jvp(f):
    return lambda x: fgrad.jvp(f, (x,), (onp.ones_like(x),))


TRANSFORMS = {"grad": fgrad.grad, "value_and_grad": fgrad.value_and_grad, "jvp": _jvp,
              "jit": fgrad.jit, "jacfwd": fgrad.jacfwd, "hessian": fgrad.hessian,
              "make_graph": fgrad.make_graph}


def view_scaled(x):
    v = x[:1]
    v *= 3.0  # numpy: x is now [3 x0, x1]
    return np.sum(x * x)


def alias_shifted(x):
    y = x
    y += 1.0
    return np.sum(x * y)


def rows_normalised(P):
    for i in range(P.shape[0]):
        row = P[i]
        row /= row.sum()
    return np.sum(P ** 2)


def list_of_params(x):
    params = [x, x * 2.0]
    for p in params:
        p -= 0.1
    return np.sum(params[0])


def transposed_view(x):
    A = np.reshape(x, (2, 1))
    t = A.T
    t *= 2.0
    return np.sum(A)


def base_changed_under_its_view(x):
    v = x[1:]
    x += 1.0
    return np.sum(v)


def _in_helper(h, d):
    h += d
    return h


def helper_called_with_a_kept_name(x):
    h = x * 1.0
    out = _in_helper(h, x)
    return np.sum(out * h)


WRITES_THROUGH = [view_scaled, alias_shifted, rows_normalised, list_of_params,
                  base_changed_under_its_view, helper_called_with_a_kept_name, transposed_view]


def diagonal_written(x):
    A = np.outer(x, x)
    d = np.einsum("ii->i", A)  # (numpy's view of A's diagonal, writable)
    d *= 2.0  # numpy: A's diagonal doubles
    return np.sum(A)


def _agrees_with_numpy(f, x):
    """``f``'s values under grad, jit (traced and replayed), jvp and vmap are numpy's (on
    copies: numpy writes into its argument), its gradient finite differences'."""
    plain, other = f(x.copy()), f(x[::-1].copy())
    value, g = fgrad.value_and_grad(f)(x)
    onp.testing.assert_allclose(value, plain)
    onp.testing.assert_allclose(g, central_gradient(lambda v: f(v.copy()), x), atol=1e-6)
    staged = fgrad.jit(f)
    onp.testing.assert_allclose([staged(x), staged(x[::-1].copy())], [plain, other])
    onp.testing.assert_allclose(fgrad.jvp(f, (x,), (onp.ones_like(x),)),
                                (plain, onp.sum(g)))
    onp.testing.assert_allclose(fgrad.vmap(f)(onp.stack([x, x[::-1]])), [plain, other])
    onp.testing.assert_allclose(fgrad.hessian(f)(x), fgrad.jacfwd(fgrad.grad(f))(x))


def _x_for(f):
    return onp.array([[1.0, 3.0], [2.0, 2.5]]) if f is rows_normalised else \
        onp.array([1.0, 2.0])


@pytest.mark.parametrize("f", WRITES_THROUGH, ids=[f.__name__ for f in WRITES_THROUGH])
def test_a_write_another_name_sees_goes_through_to_it_in_every_transform(f):
    _agrees_with_numpy(f, _x_for(f))


def test_these_programs_change_the_other_name_in_numpy():
    # (so rebinding the one name would compute another function)
    x = onp.array([1.0, 2.0])
    assert view_scaled(x.copy()) == 13.0  # the number: rebinding gave 5
    assert alias_shifted(x.copy()) == 4.0 + 9.0
    P = onp.array([[1.0, 3.0], [2.0, 2.0]])
    assert onp.isclose(rows_normalised(P.copy()), 0.0625 + 0.5625 + 0.25 + 0.25)
    assert base_changed_under_its_view(x.copy()) == 3.0  # v sees x + 1


@pytest.mark.parametrize("transform", list(TRANSFORMS) + ["vmap"])
def test_a_write_through_a_view_of_another_kind_read_again_is_refused(transform):
    # (einsum's diagonal is no indexing, reshaping or transposing of A: the write cannot be
    # taken back to A)
    x = onp.array([1.0, 2.0])
    run = fgrad.vmap if transform == "vmap" else TRANSFORMS[transform]
    with pytest.raises(TracerMutationError) as info:
        run(diagonal_written)(onp.stack([x, x]) if transform == "vmap" else x)
    message = str(info.value)
    assert message.startswith("`d *= ...` writes in place into an array that another name sees")
    assert "(`A` is the array it views)" in message
    assert ".at[idx]." in message and "fgrad.numpy.at(base)[idx]." in message
    assert diagonal_written(x.copy()) == 2.0 + 2.0 + 2.0 + 8.0  # numpy's: A changed through d


# numpy's functions that give views of their argument (before, only indexing, reshape, ravel,
# the transposes, squeeze, expand_dims, moveaxis and .real were marked: a write through the
# others rebound, and f computed another function than numpy's)
def through_flip(x):
    r = np.flip(x)
    r *= 2.0
    return np.sum(x * x)


def through_rot90(x):
    A = np.reshape(x * 1.0, (1, 2))
    r = np.rot90(A)
    r += 1.0
    return np.sum(A * A)


def through_split(x):
    A = x * 1.0
    a, _ = np.split(A, 2)
    a *= 3.0
    return np.sum(A * A)


def through_unstack(x):
    A = np.reshape(x * 1.0, (1, 2))
    (row,) = np.unstack(A)
    row -= 1.0
    return np.sum(A * A)


def through_diagonal(x):
    A = np.outer(x, x)
    d = np.einsum("ii->i", A)
    d *= 2.0
    return np.sum(A)


def through_trim_zeros(x):
    t = np.trim_zeros(x)
    t += 1.0
    return np.sum(x * x)


# (the views numpy's functions take by indexing or transposing, flip's, split's, unstack's,
# trim_zeros', rot90's, go through; the diagonal's is refused)
FUNCTION_VIEWS = [through_flip, through_split, through_unstack, through_trim_zeros,
                  through_rot90]
OTHER_FUNCTION_VIEWS = [through_diagonal]


@pytest.mark.parametrize("f", FUNCTION_VIEWS, ids=[f.__name__ for f in FUNCTION_VIEWS])
def test_a_write_through_an_indexed_view_a_numpy_function_gave_goes_through(f):
    x = onp.array([1.0, 2.0])
    if f is through_trim_zeros:  # (reads its values: no vmap)
        value, g = fgrad.value_and_grad(f)(x)
        onp.testing.assert_allclose(value, f(x.copy()))
        onp.testing.assert_allclose(g, central_gradient(lambda v: f(v.copy()), x), atol=1e-6)
        onp.testing.assert_allclose(fgrad.jit(f)(x), f(x.copy()))
        return
    _agrees_with_numpy(f, x)


@pytest.mark.parametrize("f", OTHER_FUNCTION_VIEWS,
                         ids=[f.__name__ for f in OTHER_FUNCTION_VIEWS])
def test_a_write_through_another_view_a_numpy_function_gave_is_refused(f):
    x = onp.array([1.0, 2.0])
    for transform in (fgrad.grad, fgrad.jit, fgrad.jacfwd, fgrad.make_graph):
        with pytest.raises(TracerMutationError, match="views"):
            transform(f)(x)


def test_the_function_views_change_the_other_name_in_numpy():
    x = onp.array([1.0, 2.0])
    assert through_flip(x.copy()) == 4.0 + 16.0
    assert through_rot90(x.copy()) == 4.0 + 9.0
    assert through_split(x.copy()) == 9.0 + 4.0
    assert through_unstack(x.copy()) == 0.0 + 1.0
    assert through_trim_zeros(x.copy()) == 4.0 + 9.0
    assert through_diagonal(x.copy()) == 1.0 + 2.0 + 2.0 + 4.0 + 1.0 + 4.0


# where a traced result's being a view of an argument is not numpy's, and why (strict)
_NOT_NUMPYS_VIEWS = {
    "np.asfortranarray": "a copy or the array itself by its memory order, which a traced "
                         "value does not have: taken for a view",
    "np.ravel": "in Fortran order, as asfortranarray",
    "np.reshape": "in Fortran order, as asfortranarray",
    "np.broadcast_to": "numpy's read-only view: not marked, as tile, repeat and full use it",
    "np.broadcast_arrays": "as broadcast_to"}


def _views_of(out, args):
    """(argument, output leaf) pairs where the leaf is the argument or a view of it."""
    def related(t, x):
        while t is not None:
            if t is x:
                return True
            t = getattr(t, "_base", None)
        return False
    leaves = tree_flatten(out)[0]
    return {(i, j) for j, leaf in enumerate(leaves) for i, x in enumerate(args)
            if isinstance(leaf, Tracer) and onp.size(leaf) and related(leaf, x)}


def test_every_entry_gives_a_view_exactly_where_numpy_does():
    rng = onp.random.default_rng(0)
    differ = set()
    for name, entry in sorted(checked().items()):
        if not name.startswith("np."):
            continue
        for case in entry.spec.cases:
            args, params = random_case(entry, rng, case)
            f, xs = as_function(entry, args, params)
            if not all(onp.result_type(x).kind in "fc" for x in xs):
                continue
            plain = [onp.array(x) for x in xs]
            leaves = tree_flatten(f(*plain))[0]
            want = {(i, j) for j, leaf in enumerate(leaves) for i, x in enumerate(plain)
                    if isinstance(leaf, onp.ndarray) and leaf.size and
                    onp.shares_memory(leaf, x)}
            got = []
            fgrad.jvp(lambda *ts: got.append(_views_of(f(*ts), ts)) or 0.0, tuple(xs),
                      tuple(onp.ones_like(x) for x in xs))
            if got[0] != want:
                differ.add(name)
    assert differ == set(_NOT_NUMPYS_VIEWS)


def test_a_traced_arrays_methods_give_views_where_numpys_do():
    # (a real array's conj() is the array itself in numpy, a complex one's imag a view of it:
    # a write through either changes the array; x.flat[idx] is a copy)
    def through_conj(x):
        c = x.conj()
        c += 1.0
        return np.sum(x * x)

    def through_imag(x):
        z = x * (1.0 + 1.0j)
        i = z.imag
        i *= 2.0
        return np.sum(np.abs(z))

    def flat_copy(x):
        f = x.flat[0:2]
        f += 1.0
        return np.sum(f * x)

    x = onp.array([1.0, 2.0])
    assert through_conj(x.copy()) == 4.0 + 9.0
    _agrees_with_numpy(through_conj, x)  # (the same tracer: the write goes through)
    with pytest.raises(TracerMutationError):  # (.imag is no indexing of z)
        fgrad.grad(through_imag)(x)
    assert fgrad.value_and_grad(flat_copy)(x)[0] == flat_copy(x.copy())

def positive_copy(x):
    y = +x  # numpy: a new array (as np.positive, np.roll by 0, np.asarray(copy=True))
    y += 1.0
    z = np.roll(x, 0)
    z *= 2.0
    w = np.asarray(x, copy=True)
    w -= 0.5
    return np.sum(y * z * w * x)


def copied_grids(x):
    g, h = np.meshgrid(x, x)  # copies (copy=True): no view of x
    g += 1.0
    a = np.array(x, ndmin=2)  # a copy, however many dimensions it gains
    a *= 3.0
    return np.sum(g * h) + np.sum(a * x)

def accumulate(x):
    total = 0.0
    for i in range(1, 4):
        total += x * i  # a fresh array each time: seen by `total` alone
    total *= 2.0
    total /= 3.0
    return np.sum(total ** 2)


def argument_rebound(x):
    x += 1.0  # the caller's array in numpy; f's value is the same either way
    x *= x
    return np.sum(x)


def copy_of_an_element(x):
    h = x[0]  # a scalar: numpy copies
    h += 1.0
    return h * x[1]


def view_of_a_temporary(x):
    r = (x * 2.0)[:1]  # the temporary's memory: no other name sees it
    r *= 3.0
    return np.sum(r) + np.sum(x)


def fancy_index_copy(x):
    c = x[[0, 1]]  # advanced indexing: numpy copies
    c *= 5.0
    return np.sum(c * x)


def flattened_copy(x):
    c = x.flatten()  # a copy in numpy
    c += 1.0
    return np.sum(c * x)


def astype_copy(x):
    c = x.astype(np.float64)  # numpy copies, to the same dtype too (copy=True by default)
    c += 1.0
    d = np.astype(x, x.dtype)
    d *= 2.0
    return np.sum(c * d * x)


def reshaped_copy(x):
    c = x.reshape(2, copy=True)
    c -= 0.5
    return np.sum(c * x)


REBINDS = [accumulate, argument_rebound, copy_of_an_element, view_of_a_temporary,
           fancy_index_copy, flattened_copy, astype_copy, reshaped_copy, positive_copy,
           copied_grids]


@pytest.mark.parametrize("f", REBINDS, ids=[f.__name__ for f in REBINDS])
def test_writes_no_other_name_sees_keep_numpy_values_and_derivatives(f):
    x = onp.array([0.7, -1.3])
    plain = f(x.copy())  # (numpy writes into its argument: pass copies)
    value, g = fgrad.value_and_grad(f)(x)
    assert onp.allclose(value, plain)
    assert onp.allclose(g, central_gradient(lambda v: f(v.copy()), x), atol=1e-6)
    assert onp.allclose(fgrad.jit(f)(x), plain)
    assert onp.allclose(fgrad.jit(f)(x + 1.0), f(x + 1.0))  # a replay
    assert onp.allclose(fgrad.jvp(f, (x,), (onp.ones(2),))[1], g.sum())
    assert onp.allclose(fgrad.vmap(f)(onp.stack([x, x + 1.0])), [plain, f(x + 1.0)])


def test_a_plain_array_written_with_a_traced_value_is_refused():
    def through_view(x):
        buf = onp.zeros(3)
        part = buf[:2]
        part += x[:2]
        return np.sum(buf)

    def directly(x):
        buf = onp.ones(2)
        buf *= x
        return np.sum(buf)

    for f in (through_view, directly):
        x = onp.ones(3) if f is through_view else onp.ones(2)
        for transform, arg in ((fgrad.grad, x), (fgrad.jit, x), (fgrad.vmap, onp.stack([x, x]))):
            with pytest.raises(TracerMutationError,
                               match=r"would write a traced value into a plain numpy array"):
                transform(f)(arg)


def test_a_plain_scratch_array_filled_with_plain_values_replays_as_eager():
    def f(x):
        w = onp.zeros(3)
        head = w[:2]
        head += 1.0  # plain into plain: numpy's own write, every call
        return np.sum(w * x)

    jitted = fgrad.jit(f)
    for x in (onp.arange(3.0), onp.arange(3.0) + 5.0):
        assert jitted(x) == f(x)
        assert onp.array_equal(fgrad.grad(jitted)(x), [1.0, 1.0, 0.0])


# --- names that are never read again see no difference: the write rebinds ------------------

def _project(v, w):
    v -= 0.5 * w  # numpy writes into the caller's `upd`, which it rebinds before reading
    return v


def dead_temporary_of_the_caller(x):
    # autograd's fluid simulation: `vx_updated = advect(...); vx = project(vx_updated)`
    v = x
    for _ in range(3):
        upd = np.sin(v) * 1.0
        v = _project(upd, x)
    return np.sum(v ** 2)


def dead_alias_in_the_same_function(x):
    y = x * 2.0
    z = y
    z += 1.0  # numpy changes y too, which nothing reads again
    return np.sum(z * x)


@pytest.mark.parametrize("f, rebound", [
    (dead_temporary_of_the_caller, lambda x: onp.sum(_sin_loop(x) ** 2)),
    (dead_alias_in_the_same_function, lambda x: onp.sum((x * 2.0 + 1.0) * x)),
])
def test_a_write_that_only_dead_names_see_is_numpys_result(f, rebound):
    x = onp.array([0.3, -1.2, 2.0])
    assert onp.isclose(f(x.copy()), rebound(x))  # numpy's in-place writes: the same number
    check_grads(f, (x,), order=2)  # (finite differences of the plain function, both modes)
    assert onp.array_equal(fgrad.jit(f)(x), f(x.copy()))
    assert onp.array_equal(fgrad.jit(fgrad.grad(f))(x), fgrad.grad(f)(x))


def _sin_loop(x):
    v = x
    for _ in range(3):
        v = onp.sin(v) - 0.5 * x
    return v


def read_on_the_next_iteration(x):
    a = x * 1.0
    out = 0.0
    for _ in range(2):
        out = out + np.sum(a * a)
        b = a
        b *= 2.0  # numpy doubles `a`, read again by the loop's next pass
    return out


def read_by_an_exception_handler(x):
    a = x * 1.0
    b = a
    try:
        b += 1.0
        r = np.sum(b)
    except ValueError:
        r = np.sum(a)
    return r


def held_by_a_closure(x):
    a = x * 1.0
    later = lambda: np.sum(a)  # noqa: E731
    b = a
    b += 1.0
    return np.sum(b) + later()


def read_through_locals(x):
    a = x * 1.0
    b = a
    b += 1.0
    return np.sum(b) + np.sum(locals()["a"])


@pytest.mark.parametrize("f", [read_on_the_next_iteration, read_by_an_exception_handler,
                               held_by_a_closure, read_through_locals])
def test_a_name_that_may_be_read_again_sees_the_write(f):
    # (the same array under two names: it is written in place, as numpy's)
    _agrees_with_numpy(f, onp.array([1.0, 2.0]))


def transposed_read_again(x):
    A = np.reshape(x * 1.0, (2, 1))
    out = 0.0
    for _ in range(2):
        out = out + np.sum(A)
        t = A.T
        t *= 2.0  # numpy doubles `A`, read again by the loop's next pass
    return out


def diagonal_read_again(x):
    A = np.outer(x, x)
    out = 0.0
    for _ in range(2):
        out = out + np.sum(A)
        d = np.einsum("ii->i", A)
        d *= 2.0  # numpy doubles A's diagonal, read again by the loop's next pass
    return out


def test_a_view_that_may_be_read_again_sees_the_write_or_refuses_it():
    _agrees_with_numpy(transposed_read_again, onp.array([1.0, 2.0]))
    with pytest.raises(TracerMutationError, match="`A` is the array it views"):
        fgrad.grad(diagonal_read_again)(onp.array([1.0, 2.0]))


def test_liveness_follows_loops_handlers_and_rebinding():
    import sys
    from fgrad.core.liveness import may_read

    def probe():
        return may_read(sys._getframe(1), "a"), may_read(sys._getframe(1), "c")

    def rebinds_in_the_loop():
        for i in range(2):
            answers = probe()
            a = c = i  # (stored before any read on every path)
            del a, c
        return answers

    def reads_after_the_loop():
        a = c = 0
        for i in range(2):
            answers = probe()
            if i:
                c = i  # (not on every path: c may be read as it was)
        return answers, a + c

    def rebinds_c_before_reading_it():
        a = 0
        for i in range(2):
            answers = probe()
            c = i
        return answers, a + c

    assert rebinds_in_the_loop() == (False, False)
    assert reads_after_the_loop()[0] == (True, True)
    assert rebinds_c_before_reading_it()[0] == (True, False)
