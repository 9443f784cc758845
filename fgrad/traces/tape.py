"""The tape: reverse mode's record of a computation.

While a ``vjp``/``grad``/``linearize`` runs, every primitive applied to one of its tracers
appends a ``Node`` to the tape: the primitive, its inputs (one level down), its static
parameters, its output and the nodes its inputs came from. Nodes are plain data, appended in
execution order, so the tape is already topologically sorted:

* the backward pass (``fgrad.traces.backward``) walks it in reverse, calling each primitive's
  VJP rules;
* the forward sweep (``linearize``, ``jacfwd``; ``fgrad.traces.rules.sweep_forward``) walks it
  in order, calling the JVP rules, so Jacobian columns cost one sweep each without running the
  Python function again.

What the tape keeps of the values (its own copies of the caller's arrays, and no more than
the rules read on a tape walked only backward) is ``fgrad.traces.keeping``'s business.
"""
import _thread

import numpy as _onp

from ..numpy.array_tracer import ArrayTracer
from ..core.values import IMMUTABLE_REALS, NUMPY_FLOATS, foreign_array, strong
from ..core.tracer import Trace, Tracer, value_dtype, value_for_shape
from .backward import backward
from .keeping import Kept, shed

_ndarray = _onp.ndarray
_PYTHON_REALS = frozenset([float, int])  # (Python's own, promoted weakly by numpy)
_new = object.__new__


class Node:
    """One tape entry: ``ans = prim(*args, **params)``; ``parents[i]`` is the node that
    produced ``args[i]`` on this tape, or ``None`` if that input is a constant here."""

    __slots__ = ("prim", "args", "params", "ans", "parents", "real_inputs", "ct")


def new_node(prim, args, params, ans, parents):
    """A tape entry. Made by a function, not by the class's call, which would run an
    ``__init__`` in an interpreter frame of its own: 5% of the scalar chain's eager grad, 3%
    of the RNN's, in instructions (staging makes its nodes without that call too)."""
    node = _new(Node)
    # (one statement each: a five-name assignment builds and unpacks a tuple, at every op)
    node.prim = prim
    node.args = args
    node.params = params
    node.ans = ans
    node.parents = parents
    # the cotangent gathered for ``ans`` while a backward pass runs (None outside one): an
    # attribute read and written where a dict from node to cotangent would hash the node
    node.ct = None
    # traced real inputs of a complex output: their cotangents are the real part of what the
    # rules give (JAX's convention; the imaginary part is no direction of a real input)
    node.real_inputs = ()
    return node


class TapeTracer(ArrayTracer):
    __slots__ = ("_node",)

    def __init__(self, trace, value, node):
        self._trace, self._value, self._node, self._base = trace, value, node, None


class Tape(Trace):
    """A reverse-mode trace: records nodes while alive; ``backward`` walks them.

    ``kind`` names the tape in messages. Its policy is said where it is made: ``lean``, the
    tape is only walked backward, so it keeps just the values its VJP rules read (the
    primitives' ``residuals``); one also walked forward (linearize, jacfwd) or shown
    (make_tape) keeps everything; ``swept``, it is only walked forward (linearize, jacfwd), so
    a jitted call may be one node whose rule is its staged JVP's (``fgrad.jit_on_tape``).
    ``inputs``: how it keeps input arrays (``keeping.Kept``).
    """

    __slots__ = ("nodes", "kept", "lean", "swept", "walk_lock", "walker", "shares_constants")
    tracer_type = TapeTracer
    keeps_constants = True

    def __init__(self, kind="vjp", *, lean=False, inputs="copy", swept=False):
        super().__init__(kind)
        self.nodes = []
        self.lean, self.swept = lean, swept
        # a tape inside a staged function hands its plain values down uncopied: staging
        # records them and reads them anew at each replay (see tracer.STAGING)
        self.shares_constants = self.staged
        self.kept = Kept(inputs, self.staged)
        # ``walker`` is the thread walking it, to refuse re-entry (``backward``)
        self.walk_lock = _thread.allocate_lock()
        self.walker = None

    def new_input(self, value):
        if isinstance(value, Tracer):
            self._meets(value)
            if self.kept.inputs != "keep":
                value = value._trace.kept_by_tape(value)
        elif value.__class__ is _ndarray:
            value = self.kept.input(value)
        elif foreign_array(value) and self.kept.inputs != "keep":
            value = value.copy()  # (a Dask array's copy copies no data: it is immutable)
        return TapeTracer(self, value, new_node(None, (), None, value, ()))

    def _meets(self, tracer):
        """An outer transform's tracer has reached this tape: if that transform shares its
        constants (staging), so does the tape from now on."""
        if tracer._trace.shares_constants:
            self.shares_constants = self.kept.shared = True

    def keep(self, a):  # (``Trace.arguments``: the tape's copy of a plain constant)
        return self.kept.owned(a)

    def release(self):
        """Give the inputs made read-only their writability back (once the walk is done)."""
        self.kept.release()

    def process(self, prim, args, params):
        # The commonest calls are classified here at once: every argument this tape's tracer
        # holding a numpy array or float or another transform's tracer (transforms nested:
        # the values go below), a plain real or array constant (so no value is a Python
        # number) or another transform's tracer as a constant. Anything else goes to the
        # classification every trace shares, ``Trace.arguments``. (Measured: calling it for
        # every op cost a recorded scalar multiply 0.6 of its 2.3 us, and the Hessian of the
        # VJP-only Cox likelihood, forward over reverse, 17% of its instructions.)
        # (``arrays``: whether an argument may be an array, which a lean tape may shed; a
        # value that is another transform's tracer is not one)
        a = args[0]
        below = self.staged
        weak = False
        if len(args) == 1 and a.__class__ is TapeTracer and a._trace is self:
            v = a._value  # (one argument, a tracer of this tape: the commonest call)
            vals, parents, rest = [v], [a._node], ()
            arrays = plain = v.__class__ is _ndarray
            if not plain:
                plain = v.__class__ in NUMPY_FLOATS
                if not plain:
                    if isinstance(v, Tracer):
                        plain = below = v._held = True
                    else:
                        plain = weak = v.__class__ in _PYTHON_REALS
        else:
            vals, parents, rest = list(args), [None] * len(args), args
            plain, arrays = True, False
        i = 0
        for a in rest:
            cls = a.__class__
            if cls is TapeTracer and a._trace is self:
                v = vals[i] = a._value
                parents[i] = a._node
                if v.__class__ is _ndarray:
                    arrays = True
                elif v.__class__ not in NUMPY_FLOATS:
                    if v.__class__ in _PYTHON_REALS:  # (an input kept a Python number, or
                        weak = True  # Python's arithmetic on one: ``strong`` below)
                    elif not isinstance(v, Tracer):
                        plain = False
                        break
                    else:
                        below = v._held = True
            elif cls is _ndarray:
                vals[i] = self.kept.own(a)
                arrays = True
            elif cls not in IMMUTABLE_REALS:
                if not isinstance(a, Tracer):
                    plain = False
                    break
                # another transform's tracer, a constant here (a staged function's input
                # that is not differentiated): its transform, below, sees the call (and
                # ``arrays`` is set as the shared classification's path sets it)
                below = arrays = a._held = True
                if not self.shares_constants:
                    self._meets(a)
            i += 1
        if not plain:
            arrays = True  # (rare: the shedding looks for itself)
            vals, parents, below, weak = self.arguments(prim, args)
            i = 0
            for t in parents:  # (a loop: a comprehension is a function call in Python 3.11)
                if t is not None:
                    parents[i] = t._node
                i += 1
            if below and not self.shares_constants:
                for a in args:
                    if isinstance(a, Tracer) and a._trace is not self:
                        self._meets(a)
        if params:
            params = self.kept.owned_params(params)
        if below:
            ans = prim.bind(vals, params)
        elif params:
            ans = prim.fast_impl(*vals, **params)
        else:  # (a call without keywords is the cheaper one, and the usual one)
            ans = prim.fast_impl(*vals)
        if weak and not prim.keeps_python_numbers:  # (a built-in rule sees an input kept a
            vals = strong(vals, parents)  # Python number as a numpy scalar)
        node = new_node(prim, vals, params, ans, parents)
        # (a complex output is rare: the check asks the value's class first, and for another
        # trace's tracer, its value's, which is as real: 3% of a staged gradient's first call)
        v = ans._value if below and isinstance(ans, Tracer) else ans
        if v.__class__ is _ndarray:
            if v.dtype is not _REAL:
                _note_complex(node)
        elif v.__class__ not in IMMUTABLE_REALS:
            _note_complex(node)
        if self.lean and (arrays or ans.__class__ is _ndarray) and prim.residuals is not None:
            shed(node, prim.residuals)  # (numbers are never worth shedding)
        self.nodes.append(node)
        out = _new(TapeTracer)  # (without ``__init__``'s frame, as ``new_node``)
        out._trace = self
        out._value = ans
        out._node = node
        out._base = None
        return out

    def record(self, prim, args, params, ans):
        """Record a call of ``prim`` on ``args`` whose output ``ans`` the caller computed one
        level down (a staged VJP's forward half, run as another transform's staged function:
        ``fgrad.jit_on_tape``), as ``process`` records one; on a lean tape its arguments and
        output are shed, so ``prim``'s rules must read neither."""
        mine = [a.__class__ is TapeTracer and a._trace is self for a in args]
        node = new_node(prim, [a._value if m else a for a, m in zip(args, mine)], params, ans,
                        [a._node if m else None for a, m in zip(args, mine)])
        if self.lean:
            shed(node, ((), False))
        self.nodes.append(node)
        return TapeTracer(self, ans, node)

    def backward(self, seeds, consume=False, keep=None):
        """``fgrad.traces.backward.backward`` of this tape."""
        return backward(self, seeds, consume, keep)


def _note_complex(node):
    """For a complex output, note its traced real inputs (see ``Node.real_inputs``)."""
    v = value_for_shape(node.ans)  # (not the tracer's dtype property: a call in a staged
    # gradient, whose output is a staged value; a real number is the commonest there)
    if v.__class__ not in IMMUTABLE_REALS and getattr(v, "dtype", _REAL).kind == "c":
        node.real_inputs = tuple(i for i, p in enumerate(node.parents)
                                 if p is not None and value_dtype(node.args[i]).kind != "c")


_REAL = _onp.dtype(float)
