"""The data a staged graph is made of: its values (``Var``: inputs, and the operations that
compute the others) and constants (``Const``); ``graph.py`` holds the graph and runs it,
``tiling.py`` plans its loops."""
from types import MappingProxyType
from typing import Any, Mapping

import numpy as _onp

# the parameters of every node that has none: one mapping, which nothing can write into (a dict
# made per node was one of five objects a staged operation added to the collector's count)
NO_PARAMS: Mapping[str, Any] = MappingProxyType({})


class Var:
    """A value of the graph: an input, or the result of one operation of it
    (``prim(*args, **params)``, each argument a ``Var``, a ``Const`` or a static value such as
    a tuple of indices, kept as it is). ``graph.nodes`` lists the operations' values in
    execution order: as in torch.fx, a node is the value it computes, so a staged operation
    makes one object for both (a second object per operation, and the collector's traversals
    of it, cost the scalar chain's staged gradient 8% more instructions in its first call).
    ``numpy``: whether the traced value was a numpy array or scalar (not a Python number),
    so numpy's operators apply to it."""

    __slots__ = ("id", "shape", "dtype", "numpy", "prim", "args", "params")

    def __init__(self, id, shape, dtype, numpy=False):
        self.id, self.shape, self.dtype, self.numpy = id, shape, dtype, numpy
        self.prim, self.args, self.params = None, (), NO_PARAMS

    def __repr__(self):
        return f"v{self.id}"


class Const:
    """A value the trace met that is not computed from the inputs: a plain array (the
    caller's own object, so a replay sees its values as they are then), or a number.
    ``fixed``: its value cannot change (a number, or a constant a graph pass computed)."""

    __slots__ = ("id", "value", "fixed")

    def __init__(self, id, value, fixed=None):
        self.id, self.value = id, value
        self.fixed = not isinstance(value, _onp.ndarray) if fixed is None else fixed

    def __repr__(self):
        return f"c{self.id}"
