"""Which values a staged replay may write into a buffer of its own choosing: the layouts
the eager call gives its arrays.

The generated code writes values into buffers it chooses (an operand nothing reads again,
``graph._in_place``; a block loop's whole arrays, ``tiling``) and the graph passes drop
operations that change no value (``passes.remove_noops``). numpy decides a new array's
layout from its operands' layouts, and the layout decides the order in which a later sum or
product adds: a replay that lays a value out otherwise than the eager call gives other last
bits, where it must give the same. So such a choice is made only where the eager layout is
known, which is C order in the cases below.
"""
import numpy as _onp

from .nodes import Const, Var


class Layouts:
    """Which values of two or more dimensions the eager call makes as C-ordered arrays, so
    that a replay may write them into a C-ordered buffer (a block loop's whole arrays, an
    operand's buffer) and keep the eager layout: a sum or a product over a value in another
    layout adds in another order, with other last bits.

    A value is *row-major* where its strides fall from axis to axis (over the axes longer
    than 1 with a stride other than 0): a C-ordered array, its basic slices with positive
    steps, a reshape, a ``broadcast_to``. numpy's ufuncs lay out a new result as their
    operands where they agree and in C order where they do not; checked over random layouts
    (64000 calls): the result is C order where an operand of its shape is, or where every
    operand is row-major or has at most one axis longer than 1 (no say in the order). A
    matmul of operands of at most two dimensions gives C order (with batch dimensions it
    need not); an update (``index_add``, ...) is a new array in C order.

    With ``inputs_c`` the graph's inputs count as C order (the generated code checks them
    and otherwise runs code that assumes nothing); ``relied`` says whether an answer depended
    on that. (Where numpy writes ``a + b`` into a temporary ``a`` of 256 KiB or more that
    nothing else holds, the eager layout is ``a``'s, which no graph sees: the eager call
    itself differs as the code is written.)"""

    __slots__ = ("graph", "inputs_c", "relied", "_sure", "_assumed")

    def __init__(self, graph, inputs_c):
        self.graph, self.inputs_c, self.relied = graph, inputs_c, False
        self._sure = self._assumed = None

    def c_order(self, v):
        """Whether ``v``, a value the eager call makes as a new array, is in C order."""
        if self._sure is None:  # (at the first question: most graphs ask none)
            self._sure = _row_major(self.graph, ())
            self._assumed = _row_major(self.graph, [v for v in self.graph.inputs
                                                    if len(v.shape) >= 2]) \
                if self.inputs_c else self._sure
        if v in self._sure:
            return True
        if v in self._assumed:
            self.relied = True
            return True
        return False


# (views that keep an operand's row-major order, by the parameters they take)
_KEEPS_ORDER = {
    "getitem": lambda idx: all(e is None or e is Ellipsis or isinstance(e, int) or
                               isinstance(e, slice) and (e.step is None or e.step > 0)
                               for e in (idx if isinstance(idx, tuple) else (idx,))),
    "reshape": lambda shape, order="C": order == "C",
    "broadcast_to": lambda shape: True,
}
# (updates, a new array in C order: ``fgrad.numpy.indexing._updated``)
_UPDATES = ("index_add", "index_set", "index_min", "index_max", "add_at", "minimum_at",
            "maximum_at")


def _row_major(graph, inputs):
    """The values of two or more dimensions the eager call makes row-major (``Layouts``),
    ``inputs`` counted as such."""
    inputs = set(inputs)
    out = set(inputs)
    for n in graph.nodes:
        if len(n.shape) >= 2 and row_major(n, out, inputs):
            out.add(n)
    return out


def row_major(n, known, inputs=()):
    """Whether node ``n`` of two or more dimensions makes a row-major value (``Layouts``),
    given the values ``known`` to be row-major and the ``inputs`` counted as C order."""
    if n.prim is None:
        return False
    f = n.prim.impl
    keeps = _KEEPS_ORDER.get(n.prim.name)
    if keeps is not None:
        a = n.args[0]
        return (a in known if a.__class__ is Var else _row_major_array(a.value)) and \
            keeps(**n.params)
    if n.prim.name in _UPDATES:
        return True
    if f is _onp.matmul:
        return all(len(a.shape if a.__class__ is Var else _onp.shape(a.value)) <= 2
                   for a in n.args)
    if f.__class__ is not _onp.ufunc or n.params:
        return False
    agree = True
    for a in n.args:
        if a.__class__ is Var:
            c, shape = a in known, a.shape
        else:
            c, shape = _row_major_array(a.value), _onp.shape(a.value)
        if c and shape == n.shape and c_contiguous(a, known, inputs):
            return True  # (a C-ordered operand of its shape)
        if not c and sum(1 for d in shape if d > 1) > 1:
            agree = False
    return agree


def c_contiguous(a, row_major_values, inputs=()):
    """Whether operand ``a`` is a C-ordered array: a row-major value that is a new array
    (a fresh output's, dense) or an input counted as C order, or such a constant."""
    if a.__class__ is Const:
        return isinstance(a.value, _onp.ndarray) and a.value.flags.c_contiguous
    return a in row_major_values and (a in inputs or a.prim is not None and
                                      a.prim.fresh_output)


def _row_major_array(x):
    if not isinstance(x, _onp.ndarray):
        return _onp.ndim(x) == 0
    last = None
    for d, st in zip(x.shape, x.strides):
        if d > 1 and st != 0:
            if st < 0 or last is not None and st > last:
                return False
            last = st
    return True
