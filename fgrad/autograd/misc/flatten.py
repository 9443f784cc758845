"""``autograd.misc.flatten``: a pytree of arrays as one vector, and back."""
from typing import Any, Callable

import fgrad.numpy as fnp
from ...core.pytree import tree_flatten, tree_unflatten
from ...core.tracer import value_for_shape


def flatten(value: Any) -> tuple[Any, Callable[[Any], Any]]:
    """``(vector, unflatten)``: the leaves of ``value`` (arrays and numbers in tuples, lists
    and dicts) raveled and joined, and the function that gives the structure back from such a
    vector. Both are differentiable (fgrad.numpy's concatenate and reshape).

    >>> import numpy
    >>> from fgrad.autograd.misc.flatten import flatten
    >>> vec, unflatten = flatten({"w": numpy.ones((2, 2)), "b": 3.0})
    >>> vec.tolist(), float(unflatten(2 * vec)["b"])
    ([3.0, 1.0, 1.0, 1.0, 1.0], 6.0)
    """
    leaves, tree = tree_flatten(value)
    shapes = [fnp.shape(value_for_shape(x)) for x in leaves]
    vector = fnp.concatenate([fnp.ravel(x) for x in leaves]) if leaves else fnp.zeros(0)

    def unflatten(vec):
        out, start = [], 0
        for shape in shapes:
            n = 1
            for d in shape:
                n *= d
            piece = vec[start:start + n]
            out.append(fnp.reshape(piece, shape) if shape else piece[0])
            start += n
        return tree_unflatten(tree, out)

    return vector, unflatten


def flatten_func(func: Callable[..., Any], example: Any) -> tuple[Callable[..., Any], Any, Any]:
    """autograd's ``flatten_func``: ``(flat_func, unflatten, flat_example)``, ``flat_func``
    taking the vector in place of ``example``'s structure."""
    flat, unflatten = flatten(example)

    def flat_func(vec, *args, **kwargs):
        return func(unflatten(vec), *args, **kwargs)

    return flat_func, unflatten, flat
