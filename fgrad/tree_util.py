"""Pytree utilities, JAX's ``jax.tree_util`` (and ``ravel_pytree`` of ``jax.flatten_util``).

Pytrees are nested tuples, lists, dicts, namedtuples and None; ``register_pytree_node`` and
``register_dataclass`` add classes of one's own. ``ravel_pytree`` is the bridge to code that
wants one flat vector (scipy.optimize): a tree of arrays to a vector, and back.

>>> import numpy, fgrad
>>> from fgrad.tree_util import ravel_pytree
>>> params = {"w": numpy.ones((2, 2)), "b": numpy.zeros(2)}
>>> flat, unravel = ravel_pytree(params)
>>> flat.shape
(6,)
>>> unravel(flat)["w"].shape
(2, 2)
"""
from typing import Any, Callable, Sequence

import numpy as _onp

import fgrad.numpy as fnp
from .core.pytree import (TreeDef, register_pytree_node, tree_flatten, tree_leaves, tree_map,
                          tree_structure, tree_unflatten)
from .core.tracer import value_for_shape

__all__ = ["TreeDef", "register_pytree_node", "register_dataclass", "tree_flatten",
           "tree_unflatten", "tree_map", "tree_leaves", "tree_structure", "ravel_pytree"]


def register_dataclass(cls: type | None = None, data_fields: Sequence[str] | None = None,
                       meta_fields: Sequence[str] = ()) -> Any:
    """Make a dataclass a pytree node: its ``data_fields`` (default: every field not in
    ``meta_fields``) are children, its ``meta_fields`` static data of the structure (hashable).
    Usable as a decorator.

    >>> import dataclasses, numpy, fgrad
    >>> @register_dataclass
    ... @dataclasses.dataclass
    ... class Line:
    ...     slope: float
    ...     intercept: float
    >>> g = fgrad.grad(lambda p: (p.slope * 2.0 + p.intercept) ** 2)(Line(1.0, 0.5))
    >>> (float(g.slope), float(g.intercept))
    (10.0, 5.0)
    """
    if cls is None:
        return lambda c: register_dataclass(c, data_fields, meta_fields)
    import dataclasses  # here: loaded already where dataclasses are made; 1 ms of import
    if not dataclasses.is_dataclass(cls):
        raise TypeError(f"register_dataclass: {cls.__name__} is not a dataclass")
    meta = tuple(meta_fields)
    data = tuple(f.name for f in dataclasses.fields(cls) if f.name not in meta) \
        if data_fields is None else tuple(data_fields)

    def flatten(obj):
        return [getattr(obj, n) for n in data], tuple(getattr(obj, n) for n in meta)

    def unflatten(aux, children):
        return cls(**dict(zip(data, children)), **dict(zip(meta, aux)))

    register_pytree_node(cls, flatten, unflatten)
    return cls


def ravel_pytree(tree: Any) -> tuple[Any, Callable[..., Any]]:
    """``(flat, unravel)``: the leaves of ``tree`` ravelled and joined into one vector (of
    their common dtype), and the function that rebuilds the tree from such a vector, each
    leaf with its own shape and dtype. Traced leaves give a traced vector, and ``unravel`` of
    a traced vector traced leaves, so derivatives pass both ways."""
    leaves, td = tree_flatten(tree)
    metas = [value_for_shape(leaf) for leaf in leaves]
    shapes = [_onp.shape(m) for m in metas]
    dtypes = [_onp.result_type(m) for m in metas]
    sizes = [int(_onp.prod(s, dtype=int)) for s in shapes]
    if not leaves:
        flat = _onp.zeros(0)
    else:
        dtype = _onp.result_type(*dtypes)
        flat = fnp.concatenate([fnp.ravel(fnp.astype(fnp.asarray(x), dtype)) for x in leaves])

    def unravel(vector):
        if _onp.shape(value_for_shape(vector)) != (sum(sizes),):
            raise ValueError(f"ravel_pytree's unravel: expected a vector of {sum(sizes)} "
                             f"entries, got shape {_onp.shape(value_for_shape(vector))}")
        parts, start = [], 0
        for shape, dtype, n in zip(shapes, dtypes, sizes):
            part = fnp.reshape(vector[start:start + n], shape)
            parts.append(part if _onp.result_type(value_for_shape(part)) == dtype
                         else fnp.astype(part, dtype))
            start += n
        return tree_unflatten(td, parts)

    return flat, unravel
