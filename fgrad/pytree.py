"""Pytrees: nested tuples (namedtuples too), lists and dicts (OrderedDict and defaultdict
too) and None, whose leaves are arrays or scalars.

Transforms flatten their arguments and results to a list of leaves plus a ``TreeDef`` that
knows how to rebuild the containers, so the core only ever sees flat lists.
Dict keys are visited in sorted order (as in JAX), so a tree's leaf order does not depend on
insertion order; an OrderedDict keeps its own order, a defaultdict its default factory.
"""
from collections import OrderedDict, defaultdict

from . import errors
from .values import LEAVES


class TreeDef:
    """The shape of a pytree without its leaves: a node type, its keys and its children."""

    __slots__ = ("kind", "keys", "children", "num_leaves", "_hash")

    def __init__(self, kind, keys, children, num_leaves=None):
        self.kind, self.keys, self.children = kind, keys, children
        self._hash = None  # (computed on the first use: jit keys its cache on tree structures)
        if num_leaves is None:
            num_leaves = 1 if kind == "leaf" else sum(c.num_leaves for c in children)
        self.num_leaves = num_leaves

    def __eq__(self, other):
        return self is other or (isinstance(other, TreeDef) and self.kind == other.kind
                and self.keys == other.keys and self.children == other.children)

    def __hash__(self):
        h = self._hash
        if h is None:
            h = self._hash = hash((self.kind, self.keys, tuple(self.children)))
        return h

    def __repr__(self):
        if self.kind == "leaf":
            return "*"
        if self.kind == "none":
            return "None"
        if self.kind in ("dict", "ordereddict", "defaultdict"):
            keys = self.keys[1] if self.kind == "defaultdict" else self.keys
            inner = ", ".join(f"{k!r}: {c!r}" for k, c in zip(keys, self.children))
            if self.kind == "dict":
                return "{" + inner + "}"
            name = "OrderedDict" if self.kind == "ordereddict" else "defaultdict"
            return f"{name}({{{inner}}})"
        inner = ", ".join(repr(c) for c in self.children)
        if self.kind == "namedtuple":
            return f"{self.keys.__name__}({inner})"
        return f"({inner},)" if self.kind == "tuple" else f"[{inner}]"


LEAF = TreeDef("leaf", None, ())
NONE = TreeDef("none", None, ())


def tree_flatten(tree):
    """Return ``(leaves, treedef)``.

    >>> tree_flatten({"b": 2.0, "a": (1.0, None)})
    ([1.0, 2.0], {'a': (*, None,), 'b': *})
    """
    leaves = []
    return leaves, _flatten(tree, leaves)


def _flatten(tree, leaves):
    cls = type(tree)
    if cls in LEAVES:  # (the common leaves, without the container checks below)
        leaves.append(tree)
        return LEAF
    start = len(leaves)
    if cls is tuple or cls is list:
        kind, keys, items = ("tuple" if cls is tuple else "list"), None, tree
    elif cls is dict:
        keys = _sorted_keys(tree)
        kind, items = "dict", [tree[k] for k in keys]
    elif tree is None:
        return NONE
    elif isinstance(tree, tuple) and hasattr(cls, "_fields"):  # a namedtuple keeps its class
        kind, keys, items = "namedtuple", cls, tree
    elif cls is OrderedDict:
        keys = tuple(tree)
        kind, items = "ordereddict", [tree[k] for k in keys]
    elif cls is defaultdict:
        sorted_keys = _sorted_keys(tree)
        kind, keys, items = "defaultdict", (tree.default_factory, sorted_keys), \
            [tree[k] for k in sorted_keys]
    else:
        leaves.append(tree)
        return LEAF
    children = []
    for c in items:
        if c.__class__ in LEAVES:  # (a leaf child without a call of its own)
            leaves.append(c)
            children.append(LEAF)
        else:
            children.append(_flatten(c, leaves))
    return TreeDef(kind, keys, tuple(children), len(leaves) - start)


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:  # keys of several types
        raise errors.mixed_keys("fgrad", d.keys()) from None


def tree_unflatten(treedef, leaves):
    """Inverse of :func:`tree_flatten`; ``leaves`` may be any iterable."""
    if leaves.__class__ is not list:
        leaves = list(leaves)
    if len(leaves) != treedef.num_leaves:
        raise ValueError(f"tree_unflatten: {treedef!r} holds {treedef.num_leaves} leaves, "
                         f"but {len(leaves)} were given")
    if treedef is LEAF:  # (every transform's single-array case)
        return leaves[0]
    return _unflatten(treedef, iter(leaves))


def _unflatten(td, it):
    if td is LEAF:
        return next(it)
    if td is NONE:
        return None
    children = [next(it) if c is LEAF else _unflatten(c, it) for c in td.children]
    kind = td.kind
    if kind == "list":
        return children
    if kind == "tuple":
        return tuple(children)
    if kind == "dict":
        return dict(zip(td.keys, children))
    if kind == "ordereddict":
        return OrderedDict(zip(td.keys, children))
    if kind == "defaultdict":
        return defaultdict(td.keys[0], zip(td.keys[1], children))
    return td.keys(*children)  # a namedtuple


def tree_map(f, tree, *rest):
    """Apply ``f`` leaf by leaf to one tree, or to several trees of the same structure."""
    leaves, td = tree_flatten(tree)
    others = []
    for r in rest:
        rl, rtd = tree_flatten(r)
        if rtd != td:
            raise ValueError(f"tree structures differ: {td!r} and {rtd!r}")
        others.append(rl)
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])
