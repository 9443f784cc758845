"""``grad(jit(f))``, ``jacfwd(jit(f))``: a jitted function called on a tape runs generated
code.

Handed a reverse-mode tracer, a jitted function ran its graph node by node, so that the tape
saw each call: an MLP's gradient through a jitted loss took longer than through the loss
itself (101 us against 83), and ten times ``jit(grad(loss))``'s. Here the tape records the
call as one node instead: ``f``'s VJP is staged once per signature (``jit`` of ``vjp``), cut
into the part that runs with the forward pass and the part that needs the cotangent
(``traces.splitting``), and both halves run as generated code; the values the backward half
reads (the residuals) are what the node keeps.

A tape walked forward only (``linearize``, ``jacfwd``, so ``hessian``'s outer one: a
``swept`` tape) records the call the same way, with the halves of ``f``'s staged JVP (``jit``
of ``jvp``, cut where the tangents enter): the forward half runs at once, the tangent half at
each sweep reaching the node, on the residuals (a ``cos`` of the forward values is
computed once, not per sweep). (The VJP's backward half transposed per sweep was 5x slower.)

This is one trace's fast path, taken only where nothing else needs to see ``f``'s
operations: every traced argument a tracer of one tape that is walked one way only (not
``make_tape``'s, shown and walked both ways) over float values, at least one real or complex
output, and no random draws (the second half would not draw again). Where the values
under the tape are another transform's (``vmap(grad(jit(f)))``, ``jvp(grad(jit(f)))``), the
halves run as staged functions on them (``_below``), so that transform's rule for a staged
function runs their code; so does the backward half on a batch of cotangents (``jacrev``).
Several outputs (``has_aux``, a dict of results) are a node each, the later ones reading
the first (``_part``), and the backward half runs once, when the walk reaches the call's
node, with every output's cotangent; forward, the tangent half runs at the call's node and
the later nodes take their tangents from it. A graph whose guards fail on a call is staged
again for it, as ``jit`` traces again.
"""
from _thread import get_ident

import numpy as _onp

from .core.pytree import tree_flatten, tree_unflatten
from .core.table import Primitive
from .core.tracer import Tracer, value_dtype, value_for_shape, without_derivative
from .core.values import NUMPY_FLOATS
from .traces.graph import GuardError
from .traces.passes import optimize
from .traces.splitting import split_vjp
from .traces.dual import DualTrace, DualTracer
from .traces.staging import trace_graph
from .traces.tape import Tape, TapeTracer

# what a signature's entry holds where the fast path does not apply to it
_NOT_HERE = ()


class _Halves:
    """One staging of ``f``'s VJP (or JVP): its two graphs, the positions of the
    differentiated leaves, the output's structure and leaf count, the positions of its real
    and complex leaves (the ones the tape differentiates), the shape and dtype of each seed of
    the second half (those outputs' cotangents, or the differentiated leaves' tangents), and
    the primitives of the call's node and of its later outputs' nodes."""

    __slots__ = ("forward", "backward", "wrt", "out_tree", "n_out", "diff", "likes", "jits",
                 "call", "part")

    def __repr__(self):  # (a parameter in a printed tape, make_tape)
        return f"<{self.forward.name[:-len(' forward')]} in leaves {self.wrt}>"


class _Residuals:
    """One call's record (a parameter of its nodes): the second half's inputs from the
    forward half, its outputs until the call has read them, and the cotangents of its
    differentiated outputs after the first, as a backward walk reaches their nodes (forward:
    their tangents, from the call's node until theirs reads them)."""

    __slots__ = ("values", "outs", "cts", "below")

    def __repr__(self):
        return f"<{len(getattr(self, 'values', ()))} residuals>"


def _second_half(halves, res, seeds, below):
    """The second half's outputs for these seeds (the forward half's values kept in
    ``res``): as a staged function where values are another transform's (that transform's
    rule runs it: jacrev's or jacfwd's batch of seeds runs jit(vmap(half)))."""
    for c in seeds:  # (a loop: any() over a generator costs more on this per-call path)
        if isinstance(c, Tracer):
            below = True
    if below:
        return halves.jits[1](*res.values, *seeds)
    return halves.backward.run([*res.values, *seeds])


def _forward(*leaves, halves, res):
    # (``_below`` keeps its outputs the same way; a shared helper here cost grad(jit(f)) of
    # the MLP 2% a call)
    outs = halves.forward.run(list(leaves))
    n = halves.n_out
    res.values, res.outs, res.below = outs[n:], outs[:n], False
    return outs[halves.diff[0]]


def _backward(g, ans, *leaves, halves, res):
    seeds = [g]
    if len(halves.diff) > 1:
        got, res.cts = res.cts, {}
        for j, like in zip(halves.diff[1:], halves.likes[1:]):
            c = got.get(j)
            seeds.append(_onp.zeros(*like) if c is None else c)
    cts = _second_half(halves, res, seeds, res.below)
    out = [None] * len(leaves)
    for i, c in zip(halves.wrt, cts):
        out[i] = c
    return out


# (its rules read neither the arguments nor the output: a lean tape sheds both)
_call = Primitive("jit_vjp", _forward, vjp_joint=_backward, residuals=((), False),
                  keeps_python_numbers=True)


# A float output after the first is a node of its own, whose argument is the first output:
# the table's primitives have one output. A walk reaching it keeps its cotangent for the
# call's node and gives the first output a zero one, so that the call's node, walked after
# it, runs the backward half with every output's cotangent (a zero for one not reached).
def _output(first, *, halves, res, j):
    return res.outs[j]


def _output_vjp(g, ans, first, *, halves, res, j):
    res.cts[j] = g
    return [_onp.zeros(*halves.likes[0])]


_part = Primitive("jit_vjp_output", _output, vjp_joint=_output_vjp, residuals=((), False),
                  keeps_python_numbers=True)


# On a tape walked forward only (``linearize``, ``jacfwd``) the call is a node the same way,
# its halves those of ``f``'s staged JVP: the forward half runs at once, the tangent half at
# each sweep reaching the node (all the outputs' tangents, which the later outputs' nodes
# take from ``res``, walked after it). (Kept per thread: unlike a backward walk, a forward
# sweep takes no lock, and two threads may push tangents through one linearization at once.)
def _tangent(tangents, ans, *leaves, halves, res):
    seeds = []
    for i, like in zip(halves.wrt, halves.likes):
        t = tangents[i]
        seeds.append(_onp.zeros(*like) if t is None else t)
    outs = _second_half(halves, res, seeds, res.below)
    if len(outs) > 1:
        me = get_ident()
        for j, t in zip(halves.diff[1:], outs[1:]):
            res.cts[me, j] = t
    return outs[0]


def _output_jvp(tangents, ans, first, *, halves, res, j):
    return res.cts.pop((get_ident(), j))


_jvp_call = Primitive("jit_jvp", _forward, jvp_joint=_tangent, residuals=((), False),
                      keeps_python_numbers=True)
_jvp_part = Primitive("jit_jvp_output", _output, jvp_joint=_output_jvp,
                      residuals=((), False), keeps_python_numbers=True)


def _outputs(halves, first, res, tape=None):
    """The call's output: its first float leaf the call's node, the other float leaves nodes
    after it (recorded on ``tape`` where the values are another transform's), the rest as they
    came."""
    outs, diff = res.outs, halves.diff
    if len(outs) == 1:
        res.outs = None
        return tree_unflatten(halves.out_tree, [first])
    if len(diff) > 1:
        res.cts = {}
        for j in diff[1:]:
            params = {"halves": halves, "res": res, "j": j}
            outs[j] = halves.part(first, **params) if tape is None else \
                tape.record(halves.part, [first], params, outs[j])
    outs[diff[0]] = first
    res.outs = None
    return tree_unflatten(halves.out_tree, outs)


def call(jitted, key, leaves, in_tree, run, max_traces, stage):
    """``jitted``'s output for ``leaves`` (of signature ``key``) recorded on their tape as
    one call, or ``NotImplemented`` where the fast path does not apply (see the module's
    text). ``run(leaves)`` calls the function itself; ``stage(f)`` is a quiet ``jit(f)``."""
    tape, wrt, below = None, [], False
    for i, x in enumerate(leaves):
        if x.__class__ is TapeTracer:
            t = x._trace
            if tape is not None and t is not tape or not (t.lean or t.swept):
                return NotImplemented  # (a tape walked both ways, make_tape's: the nodes)
            v = x._value
            if v.__class__ is not _onp.ndarray or v.dtype.kind != "f":
                if isinstance(v, Tracer):  # (another transform's, below the tape)
                    if value_dtype(v).kind != "f":
                        return NotImplemented
                    below = True
                elif v.__class__ not in NUMPY_FLOATS and v.__class__ is not float:
                    return NotImplemented
            tape = x._trace
            wrt.append(i)
        elif isinstance(x, Tracer):  # (another transform's, below the tape, an argument the
            below = True  # tape does not differentiate)
    if tape is None:
        return NotImplemented
    entry = (key, tuple(wrt), tape.lean)
    staged = jitted.reverse.get(entry)
    if staged is _NOT_HERE:
        return NotImplemented
    if below:
        return _below(jitted, staged, leaves, in_tree, run, wrt, entry, tape, stage)
    for halves in staged or ():
        res = _Residuals()
        try:
            out = halves.call(*leaves, halves=halves, res=res)
        except GuardError:  # (another branch: staged again below, as jit traces again)
            continue
        return _outputs(halves, out, res)
    if staged is not None and len(staged) >= max_traces:
        return NotImplemented
    staged = _stage(jitted, entry, staged or [], leaves, in_tree, run, wrt, stage)
    if staged is _NOT_HERE:
        return NotImplemented
    halves, res = staged[-1], _Residuals()
    return _outputs(halves, halves.call(*leaves, halves=halves, res=res), res)


def _stage(jitted, entry, staged, leaves, in_tree, run, wrt, stage):
    """Stage ``entry``'s halves once more (``staged``: those it has) on the plain values
    under ``leaves`` and keep them; the entry's new value, ``_NOT_HERE`` where the fast path
    does not apply (jit then runs ``f``'s graph node by node: ``f`` is not traced again)."""
    halves, graph = _staged(jitted.__name__, [value_for_shape(x) for x in leaves], in_tree,
                            run, wrt, stage, entry[2])
    with jitted.lock:
        jitted.reverse[entry] = out = _NOT_HERE if halves is None else staged + [halves]
        if halves is None:
            jitted.cache.setdefault(entry[0], []).append(graph)
    return out


def _below(jitted, staged, leaves, in_tree, run, wrt, entry, tape, stage):
    """The call where values under the tape are another transform's (``vmap(grad(jit(f)))``,
    ``jvp(grad(jit(f)))``): both halves run as staged functions on them, so that transform's
    rule for a staged function runs them (``Trace.process_staged``: ``jit(vmap(half))``,
    ``jit(jvp(half))``, ...), and the tape records the call with the output they gave.
    Halves staged on one example's values (a batch's first, a primal) serve; where they
    branch (guards), the graph runs node by node, as the transform of ``f`` would read the
    values."""
    if staged is None:
        staged = _stage(jitted, entry, [], leaves, in_tree, run, wrt, stage)
    if staged is _NOT_HERE or staged[0].forward.guards or staged[0].backward.guards:
        return NotImplemented
    halves = staged[0]
    outs = halves.jits[0](*[x._value if x.__class__ is TapeTracer else x for x in leaves])
    res = _Residuals()
    n = halves.n_out
    res.values, res.outs, res.below = outs[n:], outs[:n], True
    first = tape.record(halves.call, leaves, {"halves": halves, "res": res},
                        outs[halves.diff[0]])
    return _outputs(halves, first, res, tape)


def _staged(name, plain, in_tree, run, wrt, stage, reverse=True):
    """The two halves of ``run``'s VJP (``reverse``; else its JVP) in the leaves at ``wrt``,
    staged on the plain values ``plain`` (None where no output is a real or complex array,
    or where it draws), and ``run``'s own graph."""
    state = _onp.random.get_state()
    graph, values = trace_graph(f"jit({name})", run, plain, in_tree)
    if graph.effects:  # (the call itself draws, node by node: what the trace drew, again)
        _onp.random.set_state(state)
        return None, graph
    # (the outputs the tape differentiates: real and complex ones; a complex output beside a
    # float one lost its derivative when only float outputs counted)
    diff = [j for j, v in enumerate(values) if _onp.result_type(v).kind in "fc"]
    if not diff:
        return None, graph
    n = len(plain)

    def vjp(ins):
        # f's graph, run node by node on a tape's tracers (f's Python runs once, above), and
        # the tape walked back from the g's
        xs, gs = list(ins[:n]), ins[n:]
        tape = Tape(f"jit({name})", lean=True, inputs="keep")
        for i in wrt:
            xs[i] = tape.new_input(xs[i])
        ys = tape.run(lambda: graph.run(xs), (), f"jit({name})")
        seeds = [(ys[j]._node, g) for j, g in zip(diff, gs)
                 if ys[j].__class__ is TapeTracer and ys[j]._trace is tape]
        back = tape.backward(seeds, consume=True) if seeds else {}
        cts = []
        for i in wrt:  # (the rules give each cotangent its input's dtype, a Python number's
            c = back.get(xs[i]._node)  # the computation's, as eagerly)
            x = ins[i]
            cts.append(_onp.zeros(_onp.shape(value_for_shape(x)), value_dtype(x)) if c is None
                       else c)
        return [*(without_derivative(y) for y in ys), *cts]

    def jvp(ins):
        # f's graph run node by node on dual numbers: the outputs, then the tangents of the
        # differentiated ones (zeros for one that does not depend on the leaves at wrt)
        xs = list(ins[:n])
        trace = DualTrace()
        for i, t in zip(wrt, ins[n:]):
            xs[i] = DualTracer(trace, xs[i], t)
        ys = trace.run(lambda: graph.run(xs), (), f"jit({name})")
        mine = [y.__class__ is DualTracer and y._trace is trace for y in ys]
        return [*(y._value if m else y for y, m in zip(ys, mine)),
                *(ys[j]._tangent if mine[j] else
                  _onp.zeros(_onp.shape(values[j]), value_dtype(values[j])) for j in diff)]

    seeds = [values[j] for j in diff] if reverse else [plain[i] for i in wrt]
    leaves = [*plain, *(_onp.ones_like(v) for v in seeds)]
    staged, _ = trace_graph(f"jit({name}) {'VJP' if reverse else 'JVP'}",
                            vjp if reverse else jvp, leaves, tree_flatten(tuple(leaves))[1])
    halves = _Halves()
    halves.call, halves.part = (_call, _part) if reverse else (_jvp_call, _jvp_part)
    halves.forward, halves.backward = split_vjp(optimize(staged, in_place=True), n,
                                                len(values))
    halves.wrt, halves.out_tree, halves.n_out = wrt, graph.out_tree, len(values)
    halves.diff = diff
    # (the halves as staged functions, for values of another transform: ``_below``)
    halves.jits = (stage(lambda *xs: halves.forward.run(list(xs))),
                   stage(lambda *xs: halves.backward.run(list(xs))))
    halves.likes = [(_onp.shape(v), value_dtype(v)) for v in seeds]
    return halves, graph
