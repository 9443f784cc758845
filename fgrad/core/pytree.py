"""Pytrees: nested tuples (namedtuples too), lists and dicts (OrderedDict and defaultdict
too) and None, whose leaves are arrays or scalars.

Transforms flatten their arguments and results to a list of leaves plus a ``TreeDef`` that
knows how to rebuild the containers, so the core only ever sees flat lists.
Dict keys are visited in sorted order (as in JAX), so a tree's leaf order does not depend on
insertion order; an OrderedDict keeps its own order, a defaultdict its default factory.
Other classes become nodes with ``register_pytree_node`` (``register_dataclass`` for
dataclasses); everything else is a leaf.
"""
from typing import Any, Callable
from collections import OrderedDict, defaultdict

from . import errors
from .tracer import Tracer
from .values import LEAVES


class TreeDef:
    """The shape of a pytree without its leaves: a node type, its keys and its children."""

    __slots__ = ("kind", "keys", "children", "num_leaves", "_hash", "_build")

    def __init__(self, kind, keys, children, num_leaves=None):
        self.kind, self.keys, self.children = kind, keys, children
        self._hash = None  # (computed on the first use: jit keys its cache on tree structures)
        self._build = None  # (see ``builder``)
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

    def builder(self):
        """``tree_unflatten(self, leaves)`` for a list of exactly ``num_leaves`` leaves, as
        one generated expression, made on the first call and kept: a ``jit`` replay builds its
        outputs' tree each call (a value and a dict of six gradients: 2.1 us unflattened
        node by node, 0.5 us so)."""
        if self._build is None:
            env = {"_OD": OrderedDict, "_DD": defaultdict, "_N": _NODES}
            try:
                expr = _build_source(self, iter(range(self.num_leaves)), env)
                self._build = eval(f"lambda o: {expr}", env)
            except (SyntaxError, RecursionError, MemoryError):  # (nested past the parser's
                self._build = lambda o: _unflatten(self, iter(o))  # 200 levels)
        return self._build

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
        if self.kind == "custom":
            return f"{self.keys[0].__name__}({inner})"
        if self.kind == "namedtuple":
            return f"{self.keys.__name__}({inner})"
        return f"({inner},)" if self.kind == "tuple" else f"[{inner}]"


LEAF = TreeDef("leaf", None, ())
NONE = TreeDef("none", None, ())

# class -> (flatten(obj) -> (children, aux), unflatten(aux, children) -> obj): the users'
# node types (register_pytree_node)
_NODES: dict[type, Any] = {}


def register_pytree_node(cls: type, flatten: Callable[..., Any],
                         unflatten: Callable[..., Any]) -> None:
    """Make instances of ``cls`` pytree nodes (JAX's signature): ``flatten(obj)`` returns
    ``(children, aux)``, the children an iterable of subtrees and ``aux`` hashable data kept in
    the tree's structure; ``unflatten(aux, children)`` rebuilds the object.

    >>> class Pair:
    ...     def __init__(self, a, b):
    ...         self.a, self.b = a, b
    >>> register_pytree_node(Pair, lambda p: ((p.a, p.b), None),
    ...                      lambda aux, ch: Pair(*ch))
    >>> tree_flatten(Pair(1.0, [2.0]))
    ([1.0, 2.0], Pair(*, [*]))
    """
    if cls in LEAVES or cls in (tuple, list, dict, OrderedDict, defaultdict, type(None)):
        raise ValueError(f"register_pytree_node: {cls.__name__} is already a pytree node or "
                         "leaf type")
    _NODES[cls] = (flatten, unflatten)


def tree_flatten(tree: Any, is_leaf: Callable[..., Any] | None = None) -> tuple[list, Any]:
    """Return ``(leaves, treedef)``; ``is_leaf(subtree)`` true stops the descent there.

    >>> tree_flatten({"b": 2.0, "a": (1.0, None)})
    ([1.0, 2.0], {'a': (*, None,), 'b': *})
    """
    leaves: list = []
    return leaves, _flatten(tree, leaves, is_leaf)


def _flatten(tree, leaves, is_leaf=None):
    cls = type(tree)
    # (the common leaves, a transform's tracers among them, without the container checks)
    if cls in LEAVES or isinstance(tree, Tracer) or (is_leaf is not None and is_leaf(tree)):
        leaves.append(tree)
        return LEAF
    if tree is None:
        return NONE
    node = _node(tree)
    if node is None:
        leaves.append(tree)
        return LEAF
    kind, keys, items = node
    start = len(leaves)
    children = []
    for c in items:
        if c.__class__ in LEAVES or isinstance(c, Tracer):  # (a leaf without a call)
            leaves.append(c)
            children.append(LEAF)
        else:
            children.append(_flatten(c, leaves, is_leaf))
    return TreeDef(kind, keys, tuple(children), len(leaves) - start)


def _node(tree):
    """One level of a container: ``(kind, keys, children)``, or None for a leaf."""
    cls = type(tree)
    if cls is tuple or cls is list:
        return ("tuple" if cls is tuple else "list"), None, tree
    if cls is dict:
        keys = _sorted_keys(tree)
        return "dict", keys, [tree[k] for k in keys]
    if isinstance(tree, tuple) and hasattr(cls, "_fields"):  # a namedtuple keeps its class
        return "namedtuple", cls, tree
    if cls is OrderedDict:
        keys = tuple(tree)
        return "ordereddict", keys, [tree[k] for k in keys]
    if cls is defaultdict:
        keys = _sorted_keys(tree)
        return "defaultdict", (tree.default_factory, keys), [tree[k] for k in keys]
    if cls in _NODES:
        items, aux = _NODES[cls][0](tree)
        return "custom", (cls, aux), list(items)
    return None


def _sorted_keys(d):
    try:
        return tuple(sorted(d))
    except TypeError:  # keys of several types
        raise errors.mixed_keys("fgrad", d.keys()) from None


def tree_unflatten(treedef: Any, leaves: Any) -> Any:
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
    if kind == "custom":
        cls, aux = td.keys
        return _NODES[cls][1](aux, children)
    return td.keys(*children)  # a namedtuple


def _build_source(td, index, env):
    """The expression of ``td``'s tree of the leaves ``o[i]``, the objects it needs (keys,
    classes, functions) bound in ``env``."""
    if td is LEAF or td.kind == "leaf":
        return f"o[{next(index)}]"
    if td.kind == "none":
        return "None"
    items = [_build_source(c, index, env) for c in td.children]
    kind = td.kind
    if kind == "list":
        return "[" + ", ".join(items) + "]"
    if kind == "tuple":
        return "(" + "".join(i + ", " for i in items) + ")"

    def bound(x):
        name = f"b{len(env)}"
        env[name] = x
        return name
    if kind in ("dict", "ordereddict", "defaultdict"):
        keys = td.keys[1] if kind == "defaultdict" else td.keys
        if kind == "dict":
            return "{" + ", ".join(f"{bound(k)}: {i}" for k, i in zip(keys, items)) + "}"
        pairs = [f"({bound(k)}, {i})" for k, i in zip(keys, items)]
        if kind == "ordereddict":
            return "_OD((" + "".join(p + ", " for p in pairs) + "))"
        return f"_DD({bound(td.keys[0])}, (" + "".join(p + ", " for p in pairs) + "))"
    if kind == "custom":
        cls, aux = td.keys
        # (the class's unflatten looked up at each call, as tree_unflatten does)
        return f"_N[{bound(cls)}][1]({bound(aux)}, [" + ", ".join(items) + "])"
    return f"{bound(td.keys)}(" + ", ".join(items) + ")"  # a namedtuple


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any,
             is_leaf: Callable[..., Any] | None = None) -> Any:
    """Apply ``f`` leaf by leaf to one tree, or to several trees of the same structure (the
    others may hold whole subtrees where ``tree`` has a leaf, as in JAX).

    >>> tree_map(lambda x, y: x + y, {"a": 1.0, "b": (2.0,)}, {"a": 10.0, "b": (20.0,)})
    {'a': 11.0, 'b': (22.0,)}
    """
    leaves, td = tree_flatten(tree, is_leaf)
    others = [_leaves_like(td, r) for r in rest]
    return tree_unflatten(td, [f(*xs) for xs in zip(leaves, *others)])


def _leaves_like(td, tree):
    """``tree``'s subtrees at the leaves of ``td``: ``tree`` has ``td``'s structure down to
    them (JAX's rule for ``tree_map``'s further trees)."""
    out = []
    if not _prefix_leaves(td, tree, out):
        raise ValueError(f"tree structures differ: {td!r} and {tree_structure(tree)!r}")
    return out


def _prefix_leaves(td, tree, out):
    if td is LEAF:
        out.append(tree)
        return True
    if td is NONE:
        return tree is None
    node = None if tree is None else _node(tree)
    if node is None or node[:2] != (td.kind, td.keys) or len(node[2]) != len(td.children):
        return False
    return all(_prefix_leaves(c, t, out) for c, t in zip(td.children, node[2]))


def tree_leaves(tree: Any, is_leaf: Callable[..., Any] | None = None) -> list:
    """The leaves of ``tree``, in ``tree_flatten``'s order."""
    return tree_flatten(tree, is_leaf)[0]


def tree_structure(tree: Any, is_leaf: Callable[..., Any] | None = None) -> Any:
    """The ``TreeDef`` of ``tree``."""
    return tree_flatten(tree, is_leaf)[1]
