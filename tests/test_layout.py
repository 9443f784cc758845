"""Shape, layout and joining: exact derivative values, numpy's values, errors.

The generated tests (test_rules.py) check every public function of the family against finite
differences from its Spec; these pin down what finite differences cannot: exact counts of
copies (tile, repeat, pad), the conventions at ties and trimmed zeros, the container types
of several outputs, lists mixing tracers and floats, and the errors of unsupported arguments.
"""
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import TracerMutationError
from fgrad.testing import check_grads
from fgrad.core.tracer import Tracer

# numpy 2.4 takes pad widths by axis in a dict
PAD_DICT = onp.lib.NumpyVersion(onp.__version__) >= "2.4.0"

rng = onp.random.default_rng(0)
A = rng.uniform(-1, 1, (3, 4))
V = rng.uniform(0.5, 1.5, 5)
C = rng.uniform(-1, 1, (2, 3, 2))


def grad_of_sum(f, x):
    return fgrad.grad(lambda x: np.sum(f(x)))(x)


def vjp_of(f, x, ct):
    out, f_vjp = fgrad.vjp(f, x)
    return f_vjp(ct)[0]


# --- exact derivatives: how many copies of each element ----------------------------------

def test_tile_gradient_counts_copies():
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.tile(x, 3), V), onp.full(5, 3.0))
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.tile(x, (2, 1, 3)), A),
                                   onp.full((3, 4), 6.0))
    # each copy carries its own cotangent: the VJP sums the tiles
    ct = onp.arange(10.0).reshape(2, 5)
    onp.testing.assert_array_equal(vjp_of(lambda x: np.tile(x, (2, 1)), V, ct), ct.sum(0))


def test_repeat_gradient_with_per_element_counts():
    x = onp.array([0.5, -1.0, 2.0])
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.repeat(x, [2, 0, 3]), x),
                                   [2.0, 0.0, 3.0])
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.repeat(x, 4), x), [4.0] * 3)
    # along an axis, each row's cotangent gathers from its copies
    ct = onp.arange(12.0).reshape(3, 4)
    got = vjp_of(lambda x: np.repeat(x, [1, 3], axis=-1), A[:3, :2], ct)
    onp.testing.assert_array_equal(got, onp.stack([ct[:, 0], ct[:, 1:].sum(1)], axis=1))
    assert fgrad.jacfwd(lambda x: np.repeat(x, 2))(x).tolist() == \
        onp.repeat(onp.eye(3), 2, axis=0).tolist()


@pytest.mark.parametrize("mode, counts", [
    ("reflect", [1, 3, 3, 1]),      # [c b | a b c d | c b]
    ("symmetric", [2, 2, 2, 2]),    # [b a | a b c d | d c]
    ("wrap", [2, 3, 2, 2]),         # [b c d | a b c d | a b]
    ("edge", [3, 1, 1, 3]),         # [a a | a b c d | d d]
])
def test_pad_gradient_counts_reflections(mode, counts):
    width = (2, 2) if mode != "wrap" else (3, 2)
    x = onp.array([0.1, 0.2, 0.3, 0.4])
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.pad(x, width, mode), x), counts)


def test_pad_wider_than_the_array_reflects_repeatedly():
    x = onp.array([1.0, 2.0, 3.0])
    padded = onp.pad(onp.arange(3), (5, 6), "reflect")
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.pad(x, (5, 6), "reflect"), x),
                                   onp.bincount(padded, minlength=3))
    # 2-d: the corners copy the corner element, through both axes' reflections
    g = grad_of_sum(lambda x: np.pad(x, 1, "symmetric"), A)
    assert g[0, 0] == 4.0 and g[0, 1] == 2.0 and g[1, 1] == 1.0 and g.sum() == 6 * 5


def test_pad_constant_and_its_traced_constant_values():
    x = onp.ones((2, 3))
    assert onp.all(grad_of_sum(lambda x: np.pad(x, 2), x) == 1.0)
    # ((before0, after0), (before1, after1)): the corners belong to axis 1 (padded last)
    c = onp.array([[1.0, 2.0], [3.0, 4.0]])
    g = fgrad.grad(lambda c: np.sum(np.pad(x, ((1, 2), (3, 1)), constant_values=c)))(c)
    onp.testing.assert_array_equal(g, [[3.0, 6.0], [5 * 3, 5 * 1]])
    out, _ = fgrad.vjp(lambda c: np.pad(x, ((1, 2), (3, 1)), constant_values=c), c)
    onp.testing.assert_array_equal(out, onp.pad(x, ((1, 2), (3, 1)), constant_values=c))
    # one traced scalar fills every side
    assert fgrad.grad(lambda c: np.sum(np.pad(x, 1, constant_values=c)))(0.5) == 4 * 5 - 6


def test_pad_linear_ramp_mean_and_odd_reflection():
    x = onp.array([2.0, 5.0])
    # left ramp of width 3 from e: e, e + (x0 - e)/3, e + 2 (x0 - e)/3
    g = fgrad.grad(lambda x: np.sum(np.pad(x, (3, 0), "linear_ramp", end_values=0.5)))(x)
    onp.testing.assert_allclose(g, [2.0, 1.0], rtol=1e-15)
    ge = fgrad.grad(lambda e: np.sum(np.pad(x, (3, 0), "linear_ramp", end_values=e)))(0.5)
    onp.testing.assert_allclose(ge, 2.0, rtol=1e-15)
    # mean of the whole row on each side: every element gets 1 + 2/3
    g = grad_of_sum(lambda x: np.pad(x, 1, "mean"), onp.array([1.0, 2.0, 4.0]))
    onp.testing.assert_allclose(g, [5 / 3] * 3, rtol=1e-15)
    # odd reflection: [2a - c, 2a - b | a b c]
    g = grad_of_sum(lambda x: np.pad(x, (2, 0), "reflect", reflect_type="odd"),
                    onp.array([1.0, 2.0, 4.0]))
    onp.testing.assert_array_equal(g, [5.0, 0.0, 0.0])


def test_pad_statistics_at_a_tie_share_evenly():
    x = onp.array([1.0, 1.0, 0.0])  # the maximum is tied: its copy's cotangent is split
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.pad(x, (1, 0), "maximum"), x),
                                   [1.5, 1.5, 1.0])
    onp.testing.assert_array_equal(
        grad_of_sum(lambda x: np.pad(x, (0, 2), "minimum", stat_length=2), x), [1.0, 1.0, 3.0])
    # median of an even count: the two middle elements share; of [1, 1, 0] the tie shares
    onp.testing.assert_array_equal(
        grad_of_sum(lambda x: np.pad(x, (2, 0), "median", stat_length=2),
                    onp.array([3.0, 1.0, 0.0])), [2.0, 2.0, 1.0])
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.pad(x, (1, 0), "median"), x),
                                   [1.5, 1.5, 1.0])


def test_pad_empty_is_zero_filled_with_no_derivative():
    out, f_vjp = fgrad.vjp(lambda x: np.pad(x, (1, 2), "empty"), V)
    onp.testing.assert_array_equal(out[1:-2], V)
    assert out.shape == (8,) and onp.all(out[[0, 6, 7]] == 0.0)
    onp.testing.assert_array_equal(f_vjp(onp.arange(8.0))[0], onp.arange(1.0, 6.0))


def test_insert_delete_append_gradients():
    x = onp.array([1.0, 2.0, 3.0])
    # a scalar value inserted at two places has both copies' derivatives
    assert fgrad.grad(lambda v: np.sum(np.insert(x, [1, 2], v) ** 2))(0.5) == 2 * 2 * 0.5
    g = fgrad.grad(lambda x: np.sum(np.insert(x, 1, [7.0, 8.0]) * np.arange(5.0)))(x)
    onp.testing.assert_array_equal(g, [0.0, 3.0, 4.0])
    onp.testing.assert_array_equal(vjp_of(lambda x: np.delete(x, [0, 2]), x, onp.array([5.0])),
                                   [0.0, 5.0, 0.0])
    onp.testing.assert_array_equal(grad_of_sum(lambda x: np.delete(x, 1) * 2.0, x),
                                   [2.0, 0.0, 2.0])
    ga, gb = fgrad.grad(lambda a, b: np.sum(np.append(a, b) * np.arange(5.0)),
                        argnums=(0, 1))(x, x[:2])
    onp.testing.assert_array_equal(ga, [0.0, 1.0, 2.0])
    onp.testing.assert_array_equal(gb, [3.0, 4.0])


def test_resize_gradient_counts_cyclic_copies():
    onp.testing.assert_array_equal(
        grad_of_sum(lambda x: np.resize(x, 7), onp.array([1.0, 2.0, 3.0])), [3.0, 2.0, 2.0])


def test_trim_zeros_differentiates_the_kept_part():
    x = onp.array([0.0, 2.0, 0.0, 3.0, 0.0])
    g = grad_of_sum(lambda x: np.trim_zeros(x) * np.array([1.0, 10.0, 100.0]), x)
    # the inner zero is kept (with its derivative), the end zeros are dropped
    onp.testing.assert_array_equal(g, [0.0, 1.0, 10.0, 100.0, 0.0])
    g = grad_of_sum(lambda x: np.trim_zeros(x, "f"), x)
    onp.testing.assert_array_equal(g, [0.0, 1.0, 1.0, 1.0, 1.0])
    # a list in gives a list out, as numpy
    out, _ = fgrad.vjp(lambda a: np.trim_zeros([0.0, a, 0.0]), 1.5)
    assert out == [1.5]


def test_split_family_each_piece_differentiable():
    ct = [onp.full((3, 1), 1.0), onp.full((3, 2), 2.0), onp.full((3, 1), 3.0)]
    out, f_vjp = fgrad.vjp(lambda x: np.split(x, [1, 3], axis=1), A)
    assert type(out) is list and len(out) == 3
    onp.testing.assert_array_equal(f_vjp(ct)[0], onp.concatenate(ct, axis=1))
    w = [1.0, 2.0, 3.0]
    g = grad_of_sum(lambda x: sum(p.sum() * w[i] for i, p in enumerate(np.array_split(x, 3))),
                    onp.arange(7.0))
    onp.testing.assert_array_equal(g, [1.0] * 3 + [2.0] * 2 + [3.0] * 2)
    out, _ = fgrad.vjp(lambda x: np.unstack(x, axis=-1), A)
    assert type(out) is tuple and len(out) == 4
    jac = fgrad.jacrev(lambda x: np.hsplit(x, 2)[1])(A)
    assert jac.shape == (3, 2, 3, 4) and jac.sum() == 6.0 and jac[0, 0, 0, 2] == 1.0


def test_meshgrid_and_broadcast_arrays():
    x, y = onp.array([1.0, 2.0, 3.0]), onp.array([0.5, -1.0])
    gx, gy = fgrad.grad(lambda x, y: np.sum(np.prod(np.meshgrid(x, y), axis=0)),
                        argnums=(0, 1))(x, y)
    onp.testing.assert_array_equal(gx, [y.sum()] * 3)
    onp.testing.assert_array_equal(gy, [x.sum()] * 2)
    out, _ = fgrad.vjp(lambda x, y: np.meshgrid(x, y, indexing="ij"), x, y)
    assert type(out) is tuple and out[0].shape == (3, 2)
    g = grad_of_sum(lambda v: np.broadcast_arrays(v, onp.ones((4, 1)))[0], x)
    onp.testing.assert_array_equal(g, [4.0] * 3)


def test_nested_lists_mixing_tracers_and_floats():
    g = fgrad.grad(lambda x: np.sum(np.array([[x[0], 1.0], [2.0, x[1] ** 2]]) ** 2))(V)
    onp.testing.assert_allclose(g, [2 * V[0], 4 * V[1] ** 3, 0, 0, 0], rtol=1e-15)
    g = grad_of_sum(lambda x: np.concatenate([[x[0], 1.0], x[2:4], [[x[4]]][0]]) * 3.0, V)
    onp.testing.assert_array_equal(g, [3.0, 0.0, 3.0, 3.0, 3.0])
    g = grad_of_sum(lambda x: np.stack([[x[0], 2.0], [x[1], x[1]]], axis=1) * 2.0, V)
    onp.testing.assert_array_equal(g, [2.0, 4.0, 0.0, 0.0, 0.0])
    out, _ = fgrad.vjp(lambda x: np.array([x[0], 1, 2.0], ndmin=3), V.astype(onp.float32))
    want = onp.array([onp.float32(V[0]), 1, 2.0], ndmin=3)
    onp.testing.assert_array_equal(out, want)
    assert out.dtype == want.dtype and out.shape == (1, 1, 3)


def test_full_and_full_like_and_astype():
    x = onp.array([[0.5, 1.5], [2.0, 0.7]])
    assert onp.all(fgrad.grad(lambda x: np.sum(np.full_like(x, 3.0) * x))(x) == 3.0)
    assert fgrad.grad(lambda c: np.sum(np.full_like(x, c, shape=(3,))))(2.0) == 3.0
    assert fgrad.grad(lambda c: np.sum(np.full(4, c)))(2.0) == 4.0
    assert fgrad.grad(lambda x: np.real(np.sum(np.astype(x, np.complex128) * 1j + x)))(1.5) \
        == 1.0
    # to an integer dtype the result is plain: no derivative
    assert fgrad.grad(lambda x: np.sum(np.astype(x, int) * x))(A).tolist() == \
        A.astype(int).tolist()


def test_ndarray_methods_take_numpys_keywords():
    # (x.max(initial=...), x.sum(where=...), x.reshape(copy=...) and the like raised
    # TypeError on a traced x)
    x = onp.array([0.3, -1.2, 2.5])

    def f(x):
        return (x.max(initial=5.0) + x.sum(where=x > 0) + x.mean(where=x > 0)
                + x.prod(initial=2.0) + x.min(initial=-5.0) + x.clip(min=0.0).sum()
                + x.dot(b=x) + x.reshape(3, copy=False).swapaxes(0, 0)[0])

    assert fgrad.value_and_grad(f)(x)[0] == f(x)
    prod = x.prod()
    onp.testing.assert_allclose(fgrad.grad(f)(x), [1 + 0.5 + 2 * prod / 0.3 + 1 + 0.6 + 1,
                                                   2 * prod / -1.2 - 2.4,
                                                   1 + 0.5 + 2 * prod / 2.5 + 1 + 5.0])
    seen = []

    def g(x):
        seen.append((x.itemsize, x.nbytes, x.device))
        return x.astype(onp.float32, casting="same_kind").sum()

    fgrad.grad(g)(x)
    assert seen == [(x.itemsize, x.nbytes, x.device)]
    with pytest.raises(TypeError, match="according to the rule 'safe'"):
        fgrad.grad(lambda x: x.astype(onp.float32, casting="safe").sum())(x)

@pytest.mark.parametrize("name", ["zeros_like", "ones_like", "empty_like"])
def test_like_constructors_have_zero_derivative(name):
    seen = []

    def f(x):
        r = getattr(np, name)(x)
        seen.append(r)
        return np.sum(x * 2.0) + np.sum(onp.zeros_like(r))

    onp.testing.assert_array_equal(fgrad.grad(f)(A), onp.full_like(A, 2.0))
    assert type(seen[0]) is onp.ndarray and seen[0].shape == A.shape
    assert np.ones_like(A).tolist() == onp.ones_like(A).tolist()


def test_aliases_are_the_same_functions():
    assert np.concat is np.concatenate
    assert np.permute_dims is np.transpose
    from fgrad.core.table import FUNCTIONS
    for name in ["reshape", "concatenate", "pad", "meshgrid", "atleast_3d", "unstack"]:
        assert FUNCTIONS[name].fn is getattr(np, name)


# --- numpy's values and types on plain and traced input -----------------------------------

CALLS = {
    "moveaxis": (lambda m, x: m.moveaxis(x, [0, -1], [-1, 0]), (C,)),
    "rollaxis": (lambda m, x: m.rollaxis(x, -1, 1), (C,)),
    "matrix_transpose": (lambda m, x: m.matrix_transpose(x), (C,)),
    "transpose negative": (lambda m, x: m.transpose(x, (-1, 0, 1)), (C,)),
    "reshape F int": (lambda m, x: m.reshape(x, 12, order="F"), (A,)),
    "atleast_3d several": (lambda m, x, v: m.atleast_3d(x, v, 2.0), (A, V)),
    "atleast_2d one": (lambda m, x: m.atleast_2d(x), (V,)),
    "broadcast_arrays": (lambda m, x, v: m.broadcast_arrays(x[:, :1], v), (A, V)),
    "meshgrid xy 3": (lambda m, x, v: m.meshgrid(x[0], v, x[1, :2]), (A, V)),
    "hstack": (lambda m, x, v: m.hstack((x[0], v, 3.0)), (A, V)),
    "vstack": (lambda m, x, v: m.vstack([x, v[:4]]), (A, V)),
    "dstack": (lambda m, x: m.dstack([x, x]), (A,)),
    "column_stack": (lambda m, x, v: m.column_stack([x[0], x[1:].T]), (A, V)),
    "block": (lambda m, x, v: m.block([[x, v[:3, None]], [v[:4], 1.0]]), (A, V)),
    "split": (lambda m, x: m.split(x, 2, axis=-1), (A,)),
    "array_split": (lambda m, x: m.array_split(x, [1, -1, 9], axis=1), (A,)),
    "vsplit": (lambda m, x: m.vsplit(x, [1]), (A,)),
    "dsplit": (lambda m, x: m.dsplit(x, 2), (C,)),
    "unstack": (lambda m, x: m.unstack(x, axis=1), (C,)),
    "tile": (lambda m, x: m.tile(x, (2, 1, 2)), (A,)),
    "repeat": (lambda m, x: m.repeat(x, [1, 0, 2], axis=0), (A,)),
    "pad reflect 2d": (lambda m, x: m.pad(x, ((1, 5), (6, 0)), "reflect"), (A,)),
    # (widths by axis in a dict: numpy 2.4's; PAD_DICT)
    "pad wrap": (lambda m, x: m.pad(x, {1: 9} if PAD_DICT else ((0, 0), (9, 9)), "wrap"),
                 (A,)),
    "pad median": (lambda m, x: m.pad(x, ((1, 2), (3, 1)), "median", stat_length=3), (A,)),
    "pad ramp float32": (lambda m, x: m.pad(x, 3, "linear_ramp", end_values=(1, 2)),
                         (A.astype(onp.float32),)),
    "pad symmetric odd": (lambda m, x: m.pad(x, (4, 5), "symmetric", reflect_type="odd"),
                          (V,)),
    "append axis": (lambda m, x: m.append(x, x[:1], axis=0), (A,)),
    "insert": (lambda m, x, v: m.insert(x, [1, 1, -1], v[:3], axis=None), (A, V)),
    "delete": (lambda m, x: m.delete(x, [0, 2], axis=-1), (A,)),
    "resize": (lambda m, x: m.resize(x, (2, 7)), (A,)),
    "trim_zeros": (lambda m, x: m.trim_zeros(m.pad(x, 2), "b"), (A,)),
    "copy": (lambda m, x: m.copy(x), (A,)),
    "ascontiguousarray 0-d": (lambda m, x: m.ascontiguousarray(x[0, 0]), (A,)),
    "asfortranarray float32": (lambda m, x: m.asfortranarray(x, dtype=m.float32), (A,)),
    "require": (lambda m, x: m.require(x, requirements="FW"), (A,)),
    "asarray_chkfinite": (lambda m, x: m.asarray_chkfinite(x), (A,)),
    "asanyarray list": (lambda m, x: m.asanyarray([x[0], x[1]]), (A,)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_values_are_numpys_plain_and_traced(name):
    call, args = CALLS[name]
    want = call(onp, *args)
    plain = call(np, *args)
    traced, _ = fgrad.vjp(lambda *xs: call(np, *xs), *args)
    for got in (plain, traced):
        assert type(got) is type(want)
        for g, w in zip(*((v if isinstance(v, (list, tuple)) else [v]) for v in (got, want))):
            onp.testing.assert_array_equal(g, w)
            assert onp.result_type(g) == onp.result_type(w)
    low = "float32" in name  # float32 results need a long step and a loose tolerance
    check_grads(lambda *xs: call(np, *xs), tuple(a.astype(float) for a in args), order=1,
                rtol=1e-3 if low else 1e-5, eps=1e-2 if low else 1e-6)


# --- realistic compositions: forward and reverse Jacobians agree ---------------------------

def _smooth_image(img):
    """A 3x3 box blur with reflected borders, written with pad and shifted slices."""
    p = np.pad(img, 1, "reflect")
    h, w = img.shape
    return sum(p[i:i + h, j:j + w] for i in range(3) for j in range(3)) / 9.0


def _patches_loss(x):
    """Non-overlapping 2x2 patches by split/stack, a nonlinear score per patch."""
    rows = np.vsplit(x, 2)
    patches = np.stack([p for r in rows for p in np.hsplit(r, 2)])
    return np.sum(np.tanh(np.reshape(patches, (4, -1))) ** 2, axis=1)


def _spline_features(t):
    """Polynomial features of a grid, joined and padded for a 'same'-size convolution."""
    X, Y = np.meshgrid(t, t[::-1] * 0.5)
    feats = np.dstack([X, Y, X * Y, np.tile(t, (t.shape[0], 1))])
    padded = np.pad(feats, ((1, 1), (0, 0), (0, 0)), "edge")
    return np.sum(padded[:-2] * padded[2:], axis=(0, 1))


def _assemble(x):
    """A block matrix with a repeated diagonal, inserted columns and a trimmed row."""
    d = np.repeat(x[:2], 2)
    M = np.block([[np.outer(d, d), x[:4, None]],
                  [np.atleast_2d(x[:4]), np.array([[x[0] ** 2]])]])
    M = np.insert(M, 2, np.sin(x[:5]), axis=1)
    return np.delete(np.column_stack([M, np.append(x[:4], 1.0)]), 0, axis=0)


@pytest.mark.parametrize("f, x", [(_smooth_image, A), (_patches_loss, rng.uniform(-1, 1, (4, 4))),
                                  (_spline_features, V[:4]), (_assemble, V)])
def test_jacfwd_equals_jacrev_on_compositions(f, x):
    jf, jr = fgrad.jacfwd(f)(x), fgrad.jacrev(f)(x)
    onp.testing.assert_allclose(jf, jr, rtol=1e-12, atol=1e-14)
    check_grads(f, (x,), order=2)


def test_hessian_through_pad_and_tile():
    def energy(x):
        p = np.pad(np.tile(x, 2), 2, "symmetric")
        return np.sum((p[1:] - p[:-1]) ** 2 * p[1:])

    x = onp.array([0.3, -0.5, 0.8])
    h = fgrad.hessian(energy)(x)
    onp.testing.assert_allclose(h, h.T, rtol=1e-12)
    check_grads(energy, (x,), order=3)


def test_blur_is_linear_its_jacobian_is_the_stencil():
    jac = fgrad.jacrev(_smooth_image)(A)
    # an inner pixel's output is the mean of its 3x3 neighbourhood
    onp.testing.assert_allclose(jac[1, 1], onp.pad(onp.ones((3, 3)), ((0, 0), (0, 1))) / 9.0)
    # reflected borders: row 0 also sees row 1 through its reflection (weight 2/9 there)
    onp.testing.assert_allclose(jac[0, 1, 1, :3], [2 / 9] * 3)


# --- errors -------------------------------------------------------------------------------

def _raises(exc, match, f):
    with pytest.raises(exc, match=match):
        fgrad.grad(lambda x: np.sum(f(x)))(A)


def test_pad_refuses_what_it_cannot_do():
    _raises(NotImplementedError, "function as mode", lambda x: np.pad(x, 1, lambda *a: None))
    _raises(ValueError, "mode 'cubic' is not supported", lambda x: np.pad(x, 1, "cubic"))
    _raises(ValueError, "unsupported keyword arguments for mode 'edge'",
            lambda x: np.pad(x, 1, "edge", constant_values=1.0))
    _raises(ValueError, "unsupported keyword arguments for mode 'constant'",
            lambda x: np.pad(x, 1, stat_length=2))
    _raises(ValueError, "stat_length of 0", lambda x: np.pad(x, 1, "maximum", stat_length=0))


def test_unsupported_keywords_are_refused_by_name():
    with pytest.raises(TracerMutationError):
        fgrad.grad(lambda x: np.sum(np.concatenate([x, x], out=onp.empty((6, 4)))))(A)
    _raises(NotImplementedError, "like", lambda x: np.asarray(x, like=onp.ones(1)))
    _raises(NotImplementedError, "ndmax", lambda x: np.array(x, ndmax=1))
    _raises(NotImplementedError, "device", lambda x: np.full(2, x[0, 0], device="gpu"))
    _raises(TypeError, "cannot cast", lambda x: np.stack([x, x], dtype=int, casting="safe"))


@pytest.mark.parametrize("call, exc, match", [
    (lambda x: np.concatenate([x, x], axis=2), onp.exceptions.AxisError, "out of bounds"),
    (lambda x: np.concatenate([x[0, 0], x[0, 1]]), ValueError, "zero-dimensional"),
    (lambda x: np.transpose(x, (0, 0)), ValueError, "repeated axis"),
    (lambda x: np.stack([x, x], axis=-4), onp.exceptions.AxisError, "out of bounds"),
    (lambda x: np.split(x, 3, axis=1), ValueError, "equal division"),
    (lambda x: np.array_split(x, 0), ValueError, "larger than 0"),
    (lambda x: np.hsplit(x[0, 0], 2), ValueError, "1 or more dimensions"),
    (lambda x: np.dsplit(x, 2), ValueError, "3 or more dimensions"),
    (lambda x: np.unstack(x[0, 0]), ValueError, "at least 1-d"),
    (lambda x: np.matrix_transpose(x[0]), ValueError, "at least 2-dimensional"),
    (lambda x: np.rollaxis(x, 0, 5), onp.exceptions.AxisError, "'start' arg"),
    (lambda x: np.moveaxis(x, [0, 1], [0]), ValueError, "same number"),
    (lambda x: np.meshgrid(x, indexing="yx"), ValueError, "'xy' and 'ij'"),
    (lambda x: np.block([x, (x, x)]), TypeError, r"arrays\[1\] is a tuple"),
    (lambda x: np.block([[x], x]), ValueError, "depths are mismatched"),
    (lambda x: np.block([[x], []]), ValueError, "cannot be empty"),
    (lambda x: np.trim_zeros(x, "x"), ValueError, "unexpected character"),
    (lambda x: np.repeat(x, [1, 2]), ValueError, "could not be broadcast"),
    (lambda x: np.asarray_chkfinite(x / 0.0), ValueError, "infs or NaNs"),
    (lambda x: np.require(x, requirements="CF"), ValueError, "both \"C\" and \"F\""),
])
def test_errors_are_numpys(call, exc, match):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(exc, match=match):
            call(A)  # numpy's own error on plain values ...
        _raises(exc, match, call)  # ... and the same on traced values


def test_asarray_chkfinite_checks_at_each_replay_and_on_a_batch():
    # the check read the values: under jit a guard (a trace per call), under vmap a refusal
    def f(x):
        return np.sum(np.asarray_chkfinite(x / x[0]) ** 2)

    staged = fgrad.jit(fgrad.grad(f))
    for x in (V + 1.0, V + 2.0):
        onp.testing.assert_array_equal(staged(x), fgrad.grad(f)(x))
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        with pytest.raises(ValueError, match="infs or NaNs"):
            staged(V * 0.0)
        with pytest.raises(ValueError, match="infs or NaNs"):  # (one example is enough)
            fgrad.vmap(f)(onp.stack([V + 1.0, V * 0.0]))
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(f))(onp.stack([V + 1.0, V + 2.0])),
                                   [fgrad.grad(f)(V + 1.0), fgrad.grad(f)(V + 2.0)])


def test_row_stack_warns_as_numpy_does():
    if not hasattr(onp, "row_stack"):  # (numpy 2.5 removed it: fgrad.numpy follows)
        assert not hasattr(np, "row_stack")
        return
    with pytest.warns(DeprecationWarning, match="row_stack"):
        out, _ = fgrad.vjp(lambda x: np.row_stack([x, x]), V)
    assert out.shape == (2, 5) and not isinstance(out, Tracer)


@pytest.mark.parametrize("build", [
    lambda m, x: m.r_[x, 3.0, 0:2, x * 2],
    lambda m, x: m.r_["0,2", x, x ** 2],
    lambda m, x: m.r_["-1,2,0", x, x],
    lambda m, x: m.c_[x, x ** 2, onp.ones(2)],
    lambda m, x: m.c_[onp.array([[1.0, 2.0, 3.0]]), 0, 0, m.reshape(x, (1, 2))],
])
def test_r_and_c_with_traced_entries_equal_numpys_and_differentiate(build):
    x = onp.array([0.7, -1.3])
    onp.testing.assert_array_equal(build(np, x), build(onp, x))  # plain: numpy's object
    traced = fgrad.jvp(lambda v: build(np, v), (x,), (onp.ones(2),))[0]
    onp.testing.assert_array_equal(traced, build(onp, x))
    check_grads(lambda v: build(np, v), (x,))


def test_r_with_a_matrix_directive_on_traced_values_says_what_works():
    with pytest.raises(NotImplementedError, match=r"the directive 'r' is not supported on "
                                                  r"traced values; use 'axis'"):
        fgrad.grad(lambda v: np.sum(np.r_["r", v, v]))(onp.ones(2))
