"""Pytrees: tree_flatten / tree_unflatten / tree_map and TreeDef equality."""
import numpy as onp
import pytest

import fgrad
from fgrad import tree_flatten, tree_map, tree_unflatten
from fgrad.core.pytree import TreeDef

A = onp.array([1.0, 2.0])
B = onp.eye(2)

TREES = [
    1.0,
    A,
    None,
    (),
    [],
    {},
    (1.0, 2.0),
    [1.0, (2.0, None), [3.0]],
    {"b": 2.0, "a": (1.0, None), "c": [A, {"z": B, "y": None}]},
    ((None, None), [None], {"k": None}),
    [[[[5.0]]]],
    {"x": [], "y": (), "w": {}},
]


def _same(a, b):
    """Structural and leaf equality, container types included."""
    if type(a) is not type(b):
        return False
    if isinstance(a, (tuple, list)):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, dict):
        return sorted(a) == sorted(b) and all(_same(a[k], b[k]) for k in a)
    if a is None:
        return b is None
    return onp.array_equal(a, b)


@pytest.mark.parametrize("tree", TREES, ids=range(len(TREES)))
def test_round_trip(tree):
    leaves, td = tree_flatten(tree)
    assert isinstance(td, TreeDef)
    assert td.num_leaves == len(leaves)
    back = tree_unflatten(td, leaves)
    assert _same(back, tree)
    # leaves are the very objects of the tree, not copies
    leaves2, td2 = tree_flatten(back)
    assert td2 == td
    assert all(x is y for x, y in zip(leaves, leaves2))


def test_leaves_in_order_and_none_is_empty():
    tree = [1.0, (2.0, None), [3.0], {"b": 5.0, "a": 4.0}, None]
    leaves, td = tree_flatten(tree)
    assert leaves == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert tree_flatten(None)[0] == []
    assert tree_flatten((None, None))[0] == []
    assert tree_flatten(3.0)[0] == [3.0]


def test_arrays_are_leaves_not_containers():
    leaves, td = tree_flatten((A, B))
    assert len(leaves) == 2 and leaves[0] is A and leaves[1] is B
    leaves, _ = tree_flatten(onp.float64(3.0))
    assert len(leaves) == 1


def test_container_types_preserved():
    tree = ([1.0], (2.0,), {"k": 3.0})
    back = tree_unflatten(tree_flatten(tree)[1], [10.0, 20.0, 30.0])
    assert type(back) is tuple
    assert type(back[0]) is list and back[0] == [10.0]
    assert type(back[1]) is tuple and back[1] == (20.0,)
    assert type(back[2]) is dict and back[2] == {"k": 30.0}


def test_dict_keys_sorted():
    d1 = {"c": 3.0, "a": 1.0, "b": 2.0}
    d2 = {"a": 1.0, "b": 2.0, "c": 3.0}
    l1, t1 = tree_flatten(d1)
    l2, t2 = tree_flatten(d2)
    assert l1 == l2 == [1.0, 2.0, 3.0]
    assert t1 == t2 and hash(t1) == hash(t2)
    back = tree_unflatten(t1, [10.0, 20.0, 30.0])
    assert back == {"a": 10.0, "b": 20.0, "c": 30.0}
    assert list(back) == ["a", "b", "c"]
    # nested dicts too
    leaves, _ = tree_flatten({"z": {"q": 1.0, "p": 0.0}, "m": [2.0]})
    assert leaves == [2.0, 0.0, 1.0]


def test_treedef_equality():
    td = lambda t: tree_flatten(t)[1]  # noqa: E731
    assert td((1.0, [2.0, None])) == td((A, [B, None]))  # leaves do not matter
    assert td((1.0, 2.0)) != td([1.0, 2.0])              # tuple vs list
    assert td((1.0, 2.0)) != td((1.0, 2.0, 3.0))
    assert td((1.0, None)) != td((1.0, 2.0))             # None is not a leaf
    assert td({"a": 1.0}) != td({"b": 1.0})              # keys matter
    assert td({"a": 1.0}) != td((1.0,))
    assert td([[1.0]]) != td([1.0])
    assert td(1.0) == td(A)
    assert td(None) != td(1.0)
    assert td(()) != td([]) and td(()) != td(None) and td({}) != td(())
    assert (td((1.0, 2.0)) == "not a treedef") is False
    # hashable: usable as a dict key / in sets
    assert len({td((1.0, [2.0])), td((A, [B])), td([1.0, [2.0]])}) == 2


def test_unflatten_too_many_leaves():
    _, td = tree_flatten((1.0, [2.0]))
    with pytest.raises(ValueError, match="holds 2 leaves, but 3 were given"):
        tree_unflatten(td, [1.0, 2.0, 3.0])


def test_unflatten_too_few_leaves():
    # a bare StopIteration here would silently truncate map() or a generator
    _, td = tree_flatten((1.0, [2.0]))
    with pytest.raises(ValueError, match="holds 2 leaves, but 1 were given"):
        tree_unflatten(td, [1.0])
    with pytest.raises(ValueError):
        list(map(lambda n: tree_unflatten(td, [1.0] * n), [2, 1, 2]))


def test_tree_map_single_tree():
    tree = {"a": A, "b": [2.0, None, (3.0,)]}
    out = tree_map(lambda x: x * 10, tree)
    onp.testing.assert_array_equal(out["a"], A * 10)
    assert out["b"][0] == 20.0 and out["b"][1] is None and out["b"][2] == (30.0,)
    assert type(out["b"]) is list and type(out["b"][2]) is tuple


def test_tree_map_several_trees():
    t1 = ([1.0, 2.0], {"x": 3.0, "y": None})
    t2 = ([10.0, 20.0], {"y": None, "x": 30.0})
    t3 = ([100.0, 200.0], {"x": 300.0, "y": None})
    out = tree_map(lambda a, b, c: a + b + c, t1, t2, t3)
    assert out == ([111.0, 222.0], {"x": 333.0, "y": None})
    # order of arguments is kept
    assert tree_map(lambda a, b: a - b, t2, t1) == ([9.0, 18.0], {"x": 27.0, "y": None})


@pytest.mark.parametrize("other", [
    ([1.0, 2.0], {"x": 3.0}),                 # missing key
    ([1.0, 2.0, 5.0], {"x": 3.0, "y": None}),  # extra leaf
    ((1.0, 2.0), {"x": 3.0, "y": None}),       # tuple instead of list
    ([1.0, 2.0], {"x": 3.0, "y": 4.0}),        # leaf where the tree has None
    ([1.0, 2.0], {"x": 3.0, "z": None}),       # different key
])
def test_tree_map_structure_mismatch(other):
    tree = ([1.0, 2.0], {"x": 3.0, "y": None})
    with pytest.raises(ValueError, match="structure"):
        tree_map(lambda a, b: a + b, tree, other)


def test_exported_from_fgrad():
    from fgrad.core import pytree
    assert fgrad.tree_flatten is pytree.tree_flatten
    assert fgrad.tree_unflatten is pytree.tree_unflatten
    assert fgrad.tree_map is pytree.tree_map


# --- fgrad.tree_util: JAX's utilities ------------------------------------------------------

def test_a_registered_class_is_a_node_that_gradients_go_through():
    from fgrad.tree_util import register_pytree_node

    class Affine:
        def __init__(self, w, b, name):
            self.w, self.b, self.name = w, b, name

    register_pytree_node(Affine, lambda a: ((a.w, a.b), a.name),
                         lambda name, ch: Affine(*ch, name))
    leaves, td = tree_flatten(Affine(A, 2.0, "layer"))
    assert len(leaves) == 2 and repr(td) == "Affine(*, *)"
    back = tree_unflatten(td, [B, 3.0])
    assert back.name == "layer" and back.b == 3.0 and back.w is B
    g = fgrad.grad(lambda p: fgrad.numpy.sum(p.w * p.b) ** 2)(Affine(A, 2.0, "layer"))
    s = float(onp.sum(A * 2.0))
    onp.testing.assert_allclose(g.w, 2 * s * 2.0 * onp.ones(2))  # d/dw (sum w b)^2
    onp.testing.assert_allclose(g.b, 2 * s * onp.sum(A))
    assert g.name == "layer"
    with pytest.raises(ValueError, match="dict is already a pytree node"):
        register_pytree_node(dict, lambda d: ((), None), lambda aux, ch: {})


def test_dataclasses_namedtuples_and_is_leaf():
    import collections
    import dataclasses
    from fgrad.tree_util import register_dataclass, tree_leaves, tree_structure

    @register_dataclass
    @dataclasses.dataclass
    class Model:
        weights: object
        scale: float

    @dataclasses.dataclass
    class Config:
        lr: float
        steps: int
    register_dataclass(Config, meta_fields=("steps",))

    m = Model(weights=[A, B], scale=0.5)
    assert len(tree_leaves(m)) == 3
    g = fgrad.grad(lambda m: m.scale * fgrad.numpy.sum(m.weights[0]))(m)
    assert isinstance(g, Model) and g.scale == 3.0
    onp.testing.assert_allclose(g.weights[0], [0.5, 0.5])
    assert tree_leaves(Config(0.1, 10)) == [0.1]  # steps is static data of the structure
    assert tree_structure(Config(0.1, 10)) != tree_structure(Config(0.1, 20))
    with pytest.raises(TypeError, match="Point is not a dataclass"):
        register_dataclass(type("Point", (), {}))
    P = collections.namedtuple("P", "x y")
    assert tree_map(lambda v: v * 2, P(1.0, [2.0])) == P(2.0, [4.0])
    # is_leaf stops the descent; a further tree may hold subtrees where the first has leaves
    assert tree_leaves([(1.0, 2.0), 3.0], is_leaf=lambda t: isinstance(t, tuple)) == \
        [(1.0, 2.0), 3.0]
    assert tree_map(lambda a, b: (a, len(b)), {"k": 1.0}, {"k": [1, 2, 3]}) == {"k": (1.0, 3)}
    with pytest.raises(ValueError, match="tree structures differ"):
        tree_map(lambda a, b: a, {"k": (1.0, 2.0)}, {"k": [1.0, 2.0]})


def test_a_treedefs_generated_builder_rebuilds_what_tree_unflatten_does():
    import collections
    import dataclasses
    from fgrad.tree_util import register_dataclass

    @register_dataclass
    @dataclasses.dataclass
    class Layer:
        w: object
        b: object
    P = collections.namedtuple("P", "x y")
    dd = collections.defaultdict(list, {"k": A, "j": [1.0]})
    deep = 1.0
    for _ in range(300):  # (past the parser's 200 nested brackets: built node by node)
        deep = [deep]
    for tree in TREES + [(P(A, [B]), collections.OrderedDict([("z", 1.0), ("a", 2.0)]), dd,
                          Layer([A], (B, None)), {1: A, 2.5: (B,)}), deep]:
        leaves, td = tree_flatten(tree)
        built, back = td.builder()(leaves), tree_unflatten(td, leaves)
        assert tree_flatten(built)[1] == td
        assert repr(built) == repr(back)  # container types, order, keys, leaves
        assert all(x is y for x, y in zip(tree_flatten(built)[0], leaves))
        assert td.builder() is td.builder()  # (made once)


def test_ravel_pytree_is_the_bridge_to_a_flat_vector_both_ways():
    from fgrad.tree_util import ravel_pytree
    params = {"w": onp.arange(6.0).reshape(2, 3), "b": onp.array([1.0, 2.0], onp.float32),
              "s": 3.0}
    flat, unravel = ravel_pytree(params)
    assert flat.shape == (9,) and flat.dtype == onp.float64
    onp.testing.assert_array_equal(flat, onp.r_[1.0, 2.0, 3.0, onp.arange(6.0)])  # b, s, w
    back = unravel(flat * 2)
    assert back["b"].dtype == onp.float32 and back["w"].shape == (2, 3)
    onp.testing.assert_array_equal(back["w"], params["w"] * 2)

    def loss(p):
        return fgrad.numpy.sum(p["w"] ** 2) * p["s"] + fgrad.numpy.sum(p["b"])

    # scipy.optimize's view: a function of one vector, and its gradient as one vector
    flat_grad = fgrad.grad(lambda v: loss(unravel(v)))(flat)
    g = fgrad.grad(loss)(params)
    onp.testing.assert_allclose(flat_grad, ravel_pytree(g)[0])
    # and through ravel: the gradient of a function of the flat vector, as a tree
    g2 = fgrad.grad(lambda p: fgrad.numpy.sum(ravel_pytree(p)[0] ** 2))(params)
    onp.testing.assert_allclose(g2["w"], 2 * params["w"])
    with pytest.raises(ValueError, match="expected a vector of 9 entries, got shape"):
        unravel(onp.zeros(8))
