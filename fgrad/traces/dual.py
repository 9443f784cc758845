"""Forward mode by dual numbers: each tracer carries its value and its tangent.

Used by ``jvp``. Every primitive call computes its output and, from the JVP rules, the
output's tangent in the same step; nothing is recorded, so memory stays that of the forward
pass. (``linearize`` and ``jacfwd`` instead record a tape once and sweep it per tangent.)
"""
import numpy as _onp

from ..numpy.array_tracer import ArrayTracer
from ..core.other_arrays import foreign_array
from .rules import jvp_all
from ..core.tracer import STAGING, Trace, Tracer, ambient, refuse_other_semantics
from ..core.values import PLAIN_OPERANDS, PYTHON_NUMBERS, strong


_ndarray = _onp.ndarray


class DualTracer(ArrayTracer):
    __slots__ = ("_tangent",)

    def __init__(self, trace, value, tangent):
        self._trace, self._value, self._tangent, self._base = trace, value, tangent, None


class DualTrace(Trace):
    __slots__ = ("staged",)

    def __init__(self):
        super().__init__("jvp")
        # inside a staged function, plain values go down through dispatch too (to be recorded)
        self.staged = bool(STAGING) and ambient() is not None

    def process(self, prim, args, params):
        vals = list(args)
        tangents = [None] * len(args)
        nested = self.staged  # does a tracer of another transform remain among the values?
        weak = False
        for i, a in enumerate(args):
            if a.__class__ is DualTracer and a._trace is self:
                v = vals[i] = a._value
                tangents[i] = a._tangent
                if v.__class__ in PYTHON_NUMBERS:  # (see Tape.process)
                    weak = True
                if v.__class__ not in PLAIN_OPERANDS and (isinstance(v, Tracer) or
                                                          foreign_array(v)):
                    nested = True  # (another library's arrays too: see other_arrays)
            elif a.__class__ not in PLAIN_OPERANDS:  # (plain constants: one lookup)
                if isinstance(a, Tracer) or foreign_array(a):
                    nested = True
                elif a.__class__ is not _ndarray:  # (rare)
                    refuse_other_semantics(prim, i, a)
        ans = prim(*vals, **params) if nested else prim.fast_impl(*vals, **params)
        if weak:  # (a rule sees an input kept a Python number as a numpy scalar)
            vals = strong(vals, tangents)
        ans, out = jvp_all(prim)(vals, tangents, params, ans)
        # A zero tangent leaves the value untraced: later operations on it cost nothing here.
        return ans if out is None else DualTracer(self, ans, out)
