"""Forward mode by dual numbers: each tracer carries its value and its tangent.

Used by ``jvp``. Every primitive call computes its output and, from the JVP rules, the
output's tangent in the same step; nothing is recorded, so memory stays that of the forward
pass. (``linearize`` and ``jacfwd`` instead record a tape once and sweep it per tangent.)
"""
from ..numpy.array_tracer import ArrayTracer
from .arguments import staged_under
from .rules import jvp_all
from ..core.tracer import Trace
from ..core.values import strong


class DualTracer(ArrayTracer):
    __slots__ = ("_tangent",)

    def __init__(self, trace, value, tangent):
        self._trace, self._value, self._tangent, self._base = trace, value, tangent, None


class DualTrace(Trace):
    __slots__ = ()
    tracer_type = DualTracer

    def __init__(self):
        super().__init__("jvp")

    def process(self, prim, args, params):
        vals, tangents, below, weak = self.arguments(prim, args)
        rule = prim.made_jvp or jvp_all(prim)
        # (a rule giving the output runs the function itself: custom_jvp's, as in JAX)
        ans = None if rule.gives_output else \
            prim(*vals, **params) if below else prim.fast_impl(*vals, **params)
        i = 0
        for t in tangents:  # (this trace's tracers give their tangents)
            if t is not None:
                tangents[i] = t._tangent
            i += 1
        if weak and not prim.keeps_python_numbers:  # (a built-in rule sees an input kept a
            vals = strong(vals, tangents)  # Python number as a numpy scalar)
        ans, out = rule(vals, tangents, params, ans)
        # A zero tangent leaves the value untraced: later operations on it cost nothing here.
        return ans if out is None else DualTracer(self, ans, out)

    def process_staged(self, derived, leaves):
        """``jvp(jit(f))``: the staged JVP of ``f``, one level down; its code gives the outputs
        and their tangents in one run (it ran ``f``'s graph node by node on dual numbers,
        1.3x slower than ``jvp(f)`` on a small MLP)."""
        return staged_under(self, derived, leaves, "jvp", DualTrace, lambda t: t._tangent)
