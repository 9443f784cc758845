"""Graph passes: each a function from a graph to a graph that computes the same values.

``fold_constants`` computes nodes whose arguments are all fixed constants (numbers, and the
results of earlier folding: never an array the caller owns, which may change before a replay).
``remove_noops`` drops what rules produce on known shapes and changes nothing (a reshape to
the same shape, a cast to the same dtype, multiplying by a fixed one). ``cse`` computes a
repeated call once. ``dce`` drops nodes no output, guard or draw depends on. ``optimize``
runs them in that order. (``idle_conversions_dropped`` runs as a graph is traced: its
``python_number`` nodes go where no dtype can tell.) They rewrite the nodes of a copy of the graph they are given, which
stays as it was, unless told ``in_place=True`` (``jit``, handing over its own trace). A node
with an ``effect`` (a random draw) is never dropped, merged or folded: a replay draws in the
eager call's order. Freeing values after their last use is the code generator's business
(``graph.compile_graph``).

>>> import numpy, fgrad, fgrad.numpy as np
>>> from fgrad.traces.passes import optimize
>>> g = fgrad.make_graph(fgrad.grad(lambda x: np.sum(np.sin(x) * 1.0)))(numpy.ones(3))
>>> len(optimize(g).nodes) < len(g.nodes)
True
"""
import math

import numpy as _onp

from .graph import Graph, replay_impl, resolve
from .layouts import Layouts
from .nodes import Const, Var
from ..core.tracer import staging
from ..numpy.elementwise import python_number

_new = object.__new__

__all__ = ["optimize", "fold_constants", "remove_noops", "cse", "dce", "idle_conversions_dropped"]

# Folded values are kept by the graph for as long as it lives: fold only what is small.
_FOLD_BYTES = 1 << 16


def optimize(graph, in_place=False, merge=True):
    """The graph after every pass. ``in_place``: the caller hands ``graph`` over (``jit``'s
    own trace), so the passes rewrite its nodes instead of a copy's, and it is not to be run
    again (the copy costs a staged gradient's first replay 10-12% more instructions).

    ``merge=False``: without ``cse`` for the graph itself, which may then run under reverse
    mode (``grad(jit(f))``): two equal calls merged into one sum their cotangents in another
    order than eager ``grad(f)`` does, a last bit off. Its generated code, for plain values,
    comes from a merged copy (``Graph.code_graph``)."""
    graph = dce(_simplified(graph, in_place, fold=True, noops=True))
    if merge:
        graph = dce(cse(graph, True))
    else:
        merged = cse(graph)
        graph.code_graph = None if merged is graph else dce(merged)
    graph.optimized = True
    return graph


def _copied(graph):
    """``graph`` with nodes of its own, whose arguments a pass may rewrite. (A node is the
    value it computes, which later nodes and the guards refer to: rewriting a copy per
    substituted node would have to copy every node after it too.)"""
    subst, nodes = {}, []
    for n in graph.nodes:
        c = _new(Var)
        c.id, c.shape, c.dtype, c.numpy = n.id, n.shape, n.dtype, n.numpy
        c.prim, c.params = n.prim, n.params
        c.args = [subst.get(a, a) if a.__class__ is Var else a for a in n.args]
        subst[n] = c
        nodes.append(c)
    guards = [(subst.get(g[0], g[0]),) + g[1:] for g in graph.guards]
    return _rebuilt(graph, nodes, subst, guards=guards)


def _rebuilt(graph, nodes, subst, consts=None, guards=None):
    """``graph`` with these nodes (their arguments substituted already), its outputs
    replaced through ``subst`` (Var -> Var or Const), and these constants and guards."""
    return Graph(graph.name, graph.inputs, graph.in_tree, nodes,
                 graph.consts if consts is None else consts,
                 graph.guards if guards is None else guards,
                 [subst.get(o, o) if o.__class__ is Var else o for o in graph.outputs],
                 graph.out_tree)


def _substitute(n, subst):
    """Node ``n``'s arguments replaced through ``subst``, in place (a node of the passes' own
    copy, ``_copied``)."""
    if subst:
        for a in n.args:
            if a.__class__ is Var and a in subst:
                n.args = [subst.get(x, x) if x.__class__ is Var else x for x in n.args]
                return


def fixed(a):
    """Whether a reference's value can be known now: a number, or a folded constant."""
    if a.__class__ is Const:
        return a.fixed
    return a.__class__ is not Var


def _all_fixed(args):
    for a in args:  # (a loop, not all() of a generator: this runs once per node)
        if not fixed(a):
            return False
    return True


def fold_constants(graph, in_place=False):
    """Nodes whose arguments are all fixed, computed now; their outputs become constants."""
    return _simplified(graph, in_place, fold=True, noops=False)


def _simplified(graph, in_place, fold, noops):
    """``fold_constants`` and ``remove_noops`` in one walk over the nodes, as ``optimize``
    runs them (one walk fewer over graphs that mostly do not shrink). The same graph as the
    two in turn: a node that only a noop's replacement could make foldable is a noop of a
    fixed value, folded itself."""
    graph = graph if in_place else _copied(graph)
    nodes, subst, consts, guards = [], {}, list(graph.consts), list(graph.guards)
    guarded = {g[0] for g in guards}
    keep = {o for o in graph.outputs if o.__class__ is Var} | guarded if noops else ()
    layouts = None  # (the eager layouts of the kept values: asked at the first product with ones)
    for n in graph.nodes:
        _substitute(n, subst)
        if fold and not n.prim.effect and _all_fixed(n.args) and \
                math.prod(n.shape) * n.dtype.itemsize <= _FOLD_BYTES:
            vals = [resolve(a, None) for a in n.args]  # (no Var among them)
            with staging(None):  # (inside a staged function: computed here, not recorded)
                value = replay_impl(n.prim)(*vals, **n.params)
            if n in guarded:  # a fixed value passes its guard at every replay
                guards = [g for g in guards if g[0] is not n]
            c = Const(len(consts), value, fixed=True)
            consts.append(c)
            subst[n] = c
            continue
        same = _noop_input(n) if noops and n not in keep else None
        if same.__class__ is _IfCOrdered:
            # (the walk reads the operands of the kept nodes before it: already substituted)
            layouts = layouts or Layouts(graph, inputs_c=False)
            same = same.x if layouts.c_contiguous(same.x) else None
        if same is None:
            nodes.append(n)
        else:
            subst[n] = same
    return _rebuilt(graph, nodes, subst, consts, guards)


# numpy's dtypes of Python's numbers: among values of these alone, a Python number and a numpy
# scalar of its kind are promoted alike (NEP 50 tells them apart only beside a narrower dtype)
_PYTHONS_DTYPES = frozenset(_onp.dtype(t) for t in (bool, int, float, complex))


def idle_conversions_dropped(graph, in_place=False):
    """``graph`` without its ``python_number`` nodes (Python's arithmetic on Python numbers,
    kept weak: ``ArrayTracer``'s operators) where none can change a dtype: every value of the
    graph has a dtype of Python's numbers. A float64 program's listing then reads one line per
    numpy call, and its code runs none of them; beside a float32 value they stay, and keep
    numpy's weak promotion at every replay. The same graph where there is nothing to drop.
    ``in_place``: the caller hands ``graph`` over (a trace's own, as ``optimize`` takes it)."""
    nodes = graph.nodes
    if not any(n.prim is python_number for n in nodes):
        return graph
    for v in (*graph.inputs, *nodes):
        if v.dtype not in _PYTHONS_DTYPES:
            return graph
    for c in graph.consts:
        if _onp.result_type(c.value) not in _PYTHONS_DTYPES:
            return graph
    graph = graph if in_place else _copied(graph)
    subst, kept, next_id = {}, [], nodes[0].id
    for n in graph.nodes:
        _substitute(n, subst)
        if n.prim is python_number:
            subst[n] = n.args[0]
        else:
            n.id, next_id = next_id, next_id + 1  # (numbered as if traced without them)
            kept.append(n)
    guards = [(subst.get(g[0], g[0]),) + g[1:] for g in graph.guards]
    return _rebuilt(graph, kept, subst, guards=guards)


def _same_meta(var, a):
    """Whether reference ``a`` has ``var``'s shape and dtype (so it can stand in for it)."""
    if a.__class__ is Var:
        return a.shape == var.shape and a.dtype == var.dtype
    if a.__class__ is Const and a.fixed:
        v = a.value
        return _onp.shape(v) == var.shape and _onp.result_type(v) == var.dtype
    return False


def _is_one(a):
    if a.__class__ is not Const or not a.fixed:
        return False
    v = a.value
    if isinstance(v, _onp.ndarray):
        return v.size <= 4096 and bool((v == 1).all())
    return isinstance(v, (int, float, _onp.generic)) and not isinstance(v, bool) and v == 1


class _IfCOrdered:
    """``_noop_input``'s answer for a product with ones: ``x`` if it is C-ordered."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x


def _noop_input(n):
    """The reference a node changes nothing of, or None. Of two or more dimensions, the
    node's result must also have its input's layout (a later sum over it adds by the layout):
    a copy (``astype``, ``conjugate``) is dense in its input's axis order, so a dense input
    (a new array) has it; a product with an array of ones is laid out by both operands, so
    only a C-ordered input surely has it (``_IfCOrdered``: ``layouts.py`` tells)."""
    name, args, p = n.prim.name, n.args, n.params
    if name in ("reshape", "broadcast_to", "astype", "squeeze", "real", "conjugate") or (
            name == "transpose" and (p.get("axes") is None and len(n.shape) <= 1 or
                                     p.get("axes") == tuple(range(len(n.shape))))):
        if name in ("real", "conjugate") and _onp.dtype(n.dtype).kind == "c":
            return None
        if not args or not _same_meta(n, args[0]):
            return None
        if name in ("astype", "conjugate") and len(n.shape) >= 2 and not _dense(args[0]):
            return None
        return args[0]
    if name == "multiply" and len(args) == 2 and not p:
        for x, y in (args, args[::-1]):
            if _is_one(y) and _same_meta(n, x):
                if len(n.shape) < 2 or _onp.ndim(y.value) == 0 and _dense(x):
                    return x
                return _IfCOrdered(x)
    return None


def _dense(a):
    """Whether reference ``a`` is a new array (a fresh output's), dense in some axis order."""
    return a.__class__ is Var and a.prim is not None and a.prim.fresh_output


def remove_noops(graph, in_place=False):
    """Nodes that hand back their input unchanged, replaced by that input. (Not a node whose
    output is an output of the graph or guarded: a caller may own and change what it gets,
    and the guard stays where it was recorded.)"""
    return _simplified(graph, in_place, fold=False, noops=True)


# (a + b and b + a are the same bits in IEEE arithmetic, and so are a * b and b * a on real
# numbers; not on complex ones, whose product numpy may compute with fused multiply-adds that
# round by the operands' order: 149 of 1200 elements of a complex gradient differed in the
# last bit, so complex nodes are merged only with their arguments in the same order)


def _key(n):
    """What makes two nodes the same computation, or None where that cannot be told."""
    args = n.args
    if not n.params:  # (the commonest node: values only, no parameters: hashable as is)
        for a in args:
            if a.__class__ is not Var and a.__class__ is not Const:
                break
        else:
            if len(args) == 2 and n.prim.commutative and n.dtype.kind != "c" and \
                    id(args[1]) < id(args[0]):  # (one order for both)
                return (n.prim, (args[1], args[0]))
            return (n.prim, tuple(args))
    args = []
    for a in n.args:  # (a loop, not a generator: this runs once per node)
        args.append(a if a.__class__ is Var or a.__class__ is Const else (type(a), a))
    args = tuple(args)
    if not n.params:
        if n.prim.commutative and len(args) == 2 and args[0] is not args[1] and \
                n.dtype.kind != "c":
            args = frozenset(args)
        key = (n.prim, args)
    else:
        key = (n.prim, args, tuple(sorted((k, type(v), v) for k, v in n.params.items())))
    try:
        hash(key)
    except TypeError:  # (an unhashable static argument: a list, an array)
        return None
    return key


def cse(graph, in_place=False):
    """A node computing what an earlier node computed, replaced by that node's output
    (``graph`` itself where none does)."""
    if not _repeats(graph):
        return graph
    graph = graph if in_place else _copied(graph)
    seen, nodes, subst = {}, [], {}
    guards = list(graph.guards)
    for n in graph.nodes:
        _substitute(n, subst)
        key = None if n.prim.effect else _key(n)
        first = seen.get(key) if key is not None else None
        if first is None:
            if key is not None:
                seen[key] = n
            nodes.append(n)
        else:
            subst[n] = first
    guards = [(subst.get(g[0], g[0]),) + g[1:] for g in guards]
    return _rebuilt(graph, nodes, subst, guards=guards)


def _repeats(graph):
    """Whether a node computes what an earlier node computed. (The first such node repeats
    the other's arguments as they are, none being merged before it; most graphs have none,
    and so skip the copy that merging takes: the scalar chain's and the RNN's gradients.)"""
    seen = set()
    for n in graph.nodes:
        key = None if n.prim.effect else _key(n)
        if key is not None:
            if key in seen:
                return True
            seen.add(key)
    return False


def dce(graph):
    """Only the nodes an output, a guard or a draw depends on."""
    live = {o for o in graph.outputs if o.__class__ is Var} | {g[0] for g in graph.guards}
    kept = []
    for n in reversed(graph.nodes):
        if n in live or n.prim.effect:
            kept.append(n)
            for a in n.args:
                if a.__class__ is Var:
                    live.add(a)
    used = {a for n in kept for a in n.args if a.__class__ is Const} | \
        {o for o in graph.outputs if o.__class__ is Const}
    consts = [c for c in graph.consts if c in used]
    return _rebuilt(graph, kept[::-1], {}, consts)
