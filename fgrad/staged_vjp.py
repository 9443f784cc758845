"""``grad(jit(f))``: a jitted function called under reverse mode runs generated code.

Handed a reverse-mode tracer, a jitted function ran its graph node by node, so that the tape
saw each call: an MLP's gradient through a jitted loss took longer than through the loss
itself (101 us against 83), and ten times ``jit(grad(loss))``'s. Here the tape records the
call as one node instead: ``f``'s VJP is staged once per signature (``jit`` of ``vjp``), cut
into the part that runs with the forward pass and the part that needs the cotangent
(``traces.splitting``), and both halves run as generated code; the values the backward half
reads (the residuals) are what the node keeps.

This is one trace's fast path, taken only where nothing else needs to see ``f``'s
operations: every traced argument a tracer of one tape that is only walked backward (``grad``,
``vjp``, ``jacrev``: ``linearize`` and ``jacfwd`` walk theirs forward too, which would
transpose the backward half at every sweep, 5x slower) over plain float values (not an outer
transform's tracer: under ``hessian`` or ``vmap`` of ``grad`` the graph runs node by node, as
before), one float output, and no random draws (the backward half would not draw again). A
graph whose guards fail on a call is staged again for it, as ``jit`` traces again.
"""
import numpy as _onp

from .core.pytree import tree_flatten, tree_unflatten
from .core.table import Primitive
from .core.tracer import Tracer, value_dtype, value_for_shape, without_derivative
from .core.values import NUMPY_FLOATS
from .traces.graph import GuardError
from .traces.passes import optimize
from .traces.splitting import split_vjp
from .traces.staging import trace_graph
from .traces.tape import Tape, TapeTracer

# what a signature's entry holds where the fast path does not apply to it
_NOT_HERE = ()


class _Halves:
    """One staging of ``f``'s VJP: its two graphs, the positions of the differentiated
    leaves, the output's structure."""

    __slots__ = ("forward", "backward", "wrt", "out_tree")

    def __repr__(self):  # (a parameter in a printed tape, make_tape)
        return f"<{self.forward.name[:-len(' forward')]} in leaves {self.wrt}>"


class _Residuals:
    """The backward half's inputs from one call's forward half (a parameter of its node)."""

    __slots__ = ("values",)

    def __repr__(self):
        return f"<{len(getattr(self, 'values', ()))} residuals>"


def _forward(*leaves, halves, res):
    outs = halves.forward.run(list(leaves))
    res.values = outs[1:]
    return outs[0]


def _backward(g, ans, *leaves, halves, res):
    cts = halves.backward.run([*res.values, g])
    out = [None] * len(leaves)
    for i, c in zip(halves.wrt, cts):
        out[i] = c
    return out


# (its rules read neither the arguments nor the output: a lean tape sheds both)
_call = Primitive("jit_vjp", _forward, vjp_joint=_backward, residuals=((), False),
                  keeps_python_numbers=True)


def call(jitted, key, leaves, in_tree, run, max_traces):
    """``jitted``'s output for ``leaves`` (of signature ``key``) recorded on their tape as
    one call, or ``NotImplemented`` where the fast path does not apply (see the module's
    text). ``run(leaves)`` calls the function itself."""
    tape, wrt = None, []
    for i, x in enumerate(leaves):
        if isinstance(x, Tracer):
            if x.__class__ is not TapeTracer or (tape is not None and x._trace is not tape) \
                    or not x._trace.lean:  # (a tape walked forward too, by linearize or
                return NotImplemented  # jacfwd, would transpose the backward half per sweep)
            v = x._value
            if v.__class__ is not _onp.ndarray or v.dtype.kind != "f":
                if v.__class__ not in NUMPY_FLOATS and v.__class__ is not float:
                    return NotImplemented
            tape = x._trace
            wrt.append(i)
    if tape is None:
        return NotImplemented
    entry = (key, tuple(wrt))
    staged = jitted.reverse.get(entry)
    if staged is _NOT_HERE:
        return NotImplemented
    for halves in staged or ():
        try:
            out = _call(*leaves, halves=halves, res=_Residuals())
        except GuardError:  # (another branch: staged again below, as jit traces again)
            continue
        return tree_unflatten(halves.out_tree, [out])
    staged = staged or []
    if len(staged) >= max_traces:
        return NotImplemented
    halves, graph = _staged(jitted.__name__, [x._value if isinstance(x, Tracer) else x
                                              for x in leaves], in_tree, run, wrt)
    with jitted.lock:
        jitted.reverse[entry] = _NOT_HERE if halves is None else staged + [halves]
        if halves is None:  # (jit runs this graph node by node: f is not traced again)
            jitted.cache.setdefault(key, []).append(graph)
    if halves is None:
        return NotImplemented
    return tree_unflatten(halves.out_tree, [_call(*leaves, halves=halves, res=_Residuals())])


def _staged(name, plain, in_tree, run, wrt):
    """The two halves of ``run``'s VJP in the leaves at ``wrt``, staged on the plain values
    ``plain`` (None where its output is not one float array, or where it draws), and
    ``run``'s own graph."""
    state = _onp.random.get_state()
    graph, values = trace_graph(f"jit({name})", run, plain, in_tree)
    if graph.effects:  # (the call itself draws, node by node: what the trace drew, again)
        _onp.random.set_state(state)
        return None, graph
    out = values[0] if len(values) == 1 else None
    if out is None or _onp.result_type(out).kind != "f":
        return None, graph
    out_tree = graph.out_tree

    def joint(ins):
        # f's graph, run node by node on a tape's tracers (f's Python runs once, above), and
        # the tape walked back from g
        xs, g = list(ins[:-1]), ins[-1]
        tape = Tape(f"jit({name})", lean=True, inputs="keep")
        for i in wrt:
            xs[i] = tape.new_input(xs[i])
        y = tape.run(lambda: graph.run(xs)[0], (), f"jit({name})")
        seeds = [(y._node, g)] if y.__class__ is TapeTracer and y._trace is tape else []
        back = tape.backward(seeds, consume=True) if seeds else {}
        cts = []
        for i in wrt:  # (the rules give each cotangent its input's dtype, a Python number's
            c = back.get(xs[i]._node)  # the computation's, as eagerly)
            x = ins[i]
            cts.append(_onp.zeros(_onp.shape(value_for_shape(x)), value_dtype(x)) if c is None
                       else c)
        return [without_derivative(y), *cts]

    seed = _onp.ones_like(out)
    leaves = [*plain, seed]
    staged, _ = trace_graph(f"jit({name}) VJP", joint, leaves, tree_flatten(tuple(leaves))[1])
    halves = _Halves()
    halves.forward, halves.backward = split_vjp(optimize(staged, in_place=True), len(plain))
    halves.wrt, halves.out_tree = wrt, out_tree
    return halves, graph
