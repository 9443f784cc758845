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

    __slots__ = ("inputs", "relied", "_status")

    def __init__(self, graph, inputs_c):
        self.inputs = {v for v in graph.inputs if len(v.shape) >= 2} if inputs_c else set()
        self.relied = False
        # value -> _row_major's answer, found for the values asked about and their operands
        # only (a graph's code asks about a few: its whole walk cost the RNN's first replay 7%)
        self._status = dict.fromkeys(self.inputs, 2)

    def c_contiguous(self, a):
        """Whether reference ``a`` is a C-ordered array in the eager call: a constant that is,
        or a new array (a fresh output's, dense) in C order."""
        if a.__class__ is Const:
            return isinstance(a.value, _onp.ndarray) and a.value.flags.c_contiguous
        return a.prim is not None and a.prim.fresh_output and self.c_order(a)

    def c_order(self, v):
        """Whether ``v``, a value the eager call makes as a new array, is in C order."""
        status = self._status
        if v not in status:
            stack = [v]
            while stack:  # (operands first; a loop, not a recursion: chains run thousands)
                n = stack[-1]
                waits = False
                for a in n.args:
                    if a.__class__ is Var and a not in status and _has_a_say(a.shape):
                        stack.append(a)
                        waits = True
                if not waits:
                    stack.pop()
                    status[n] = _row_major(n, status, self.inputs)
        r = status[v]
        if r == 2:
            self.relied = True
        return r > 0


# (views that keep an operand's row-major order, by the parameters they take)
_KEEPS_ORDER = {
    "getitem": lambda idx: all(e is None or e is Ellipsis or isinstance(e, int) or
                               isinstance(e, slice) and (e.step is None or e.step > 0)
                               for e in (idx if isinstance(idx, tuple) else (idx,))),
    "reshape": lambda shape, order="C": order == "C",
    "broadcast_to": lambda shape: True,
    "kept_layout": lambda: True,  # (the array itself, or its copy where it had gaps: C order)
}
# (updates, a new array in C order: ``fgrad.numpy.indexing._updated``)
_UPDATES = frozenset(("index_add", "index_set", "index_min", "index_max", "add_at",
                      "minimum_at", "maximum_at"))


def _row_major(n, status, inputs):
    """Whether node ``n`` of two or more dimensions makes a row-major value (``Layouts``),
    given ``status``, the answers for its operands of two or more dimensions (none: 0), and
    the ``inputs`` counted as C order: 0 no (or not known), 1 yes, 2 yes if the inputs are
    C-ordered (it follows from an input or from a value whose answer is 2)."""
    if not _has_a_say(n.shape):
        return 1  # (at most one axis longer than 1: any layout is row-major)
    if n.prim is None:
        return 0
    name = n.prim.name
    keeps = _KEEPS_ORDER.get(name)
    if keeps is not None:
        a = n.args[0]
        if not keeps(**n.params):
            return 0
        if a.__class__ is not Var:
            return int(_row_major_array(a.value))
        return status.get(a, 0) if _has_a_say(a.shape) else 1
    if name in _UPDATES:
        return 1
    f = n.prim.impl
    if f is _onp.matmul:
        return 1 if all(len(a.shape if a.__class__ is Var else _onp.shape(a.value)) <= 2
                        for a in n.args) else 0
    if f.__class__ is not _onp.ufunc or n.params:
        return 0
    agree, answer = True, 1
    for a in n.args:
        if a.__class__ is Var:
            shape = a.shape
            r = status.get(a, 0) if _has_a_say(shape) else 1
        else:
            r, shape = int(_row_major_array(a.value)), _onp.shape(a.value)
        if r and shape == n.shape and _c_contiguous(a, status, inputs):
            if r == 1:
                return 1  # (a C-ordered operand of its shape)
            agree, answer = None, 2  # (one if the inputs are)
        elif agree is not None and _has_a_say(shape):
            if not r:
                agree = False
            elif r == 2:
                answer = 2
    return answer if agree is not False else 0


def _has_a_say(shape):
    """Whether a value of ``shape`` has a say in a layout: two axes longer than 1."""
    longer = False
    for d in shape:
        if d > 1:
            if longer:
                return True
            longer = True
    return False


def _c_contiguous(a, status, inputs):
    """Whether operand ``a`` is a C-ordered array: a row-major value (``status``, as
    ``_row_major`` takes it) that is a new array (a fresh output's, dense) or an input counted
    as C order, or such a constant."""
    if a.__class__ is Const:
        return isinstance(a.value, _onp.ndarray) and a.value.flags.c_contiguous
    return a in status and status[a] > 0 and (a in inputs or a.prim is not None and
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
