"""The data a staged graph is made of: its values (``Var``), constants (``Const``) and
operations (``Node``); ``graph.py`` holds the graph and runs it, ``tiling.py`` plans its loops."""
import numpy as _onp


class Var:
    """A value of the graph: an input or a node's output. ``numpy``: whether the traced value
    was a numpy array or scalar (not a Python number), so numpy's operators apply to it."""

    __slots__ = ("id", "shape", "dtype", "numpy")

    def __init__(self, id, shape, dtype, numpy=False):
        self.id, self.shape, self.dtype, self.numpy = id, shape, dtype, numpy

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


class Node:
    """``out = prim(*args, **params)``; each argument a ``Var``, a ``Const`` or a static value
    (a tuple of indices, a string) kept as it is."""

    __slots__ = ("prim", "args", "params", "out")

    def __init__(self, prim, args, params, out):
        self.prim, self.args, self.params, self.out = prim, args, params, out
