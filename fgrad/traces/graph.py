"""A staged computation as plain data, printed as a listing or DOT, and run as generated Python.

A ``Graph`` holds its inputs (``Var``s with shape and dtype), its nodes in execution order
(the ``Var``s its operations compute: primitive, argument references, static parameters),
its constants, its guards (values that the trace read, with what they were) and its
outputs. Running it calls a straight-line Python function generated from the nodes: each
primitive's numpy function and each constant bound as a local of the generated code, each
value in a local variable, so a replayed operation costs about what the numpy call itself
costs. On tracers (a transform around the call) the nodes are interpreted one call at a time
instead (``Graph.interpret``).
"""
import math
import operator

import numpy as _onp

from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tracer import (BATCHING, STAGING, Tracer, ambient, batches, first_tracer, read_value,
                           value_for_shape, value_dtype)
from ..core.values import PYTHON_NUMBERS
from .codecache import code_for
from .nodes import Const, Var
from .layouts import Layouts
from .tiling import Tile, schedule, tile_source


# How a staged function took a concrete value from a traced one (``StageTracer``): a graph run
# on another transform's tracers makes the same conversion of them first.
CONVERSIONS = {"float": float, "int": int, "complex": complex, "index": operator.index,
               "item": lambda v: v.item(), "tolist": lambda v: v.tolist(),
               "array": _onp.asarray}


def guard_message(name, var, where):
    """A guard that came out differently: where the value was read, and what to do."""
    return (f"{name}: a value the trace read ({var!r}, at {where}) came out differently on "
            "this call, so the graph does not describe it (another branch). jit traces again "
            "on such a call by itself; a make_graph graph holds one trace: trace it again on "
            "these arguments (make_graph(f)(*args)), use jit, or make the value a static "
            "argument (static_argnums).")


class GuardError(ValueError):
    """A value the trace read came out differently on a replay (another branch, another
    concrete value): the graph does not describe this call."""


class Graph:
    """``f`` traced once: call it on new values of the same structure, shapes and dtypes.

    Made by :func:`fgrad.make_graph`. ``str(graph)`` lists it, ``graph.to_dot()`` gives
    Graphviz source, ``graph.nodes`` is the data.
    """

    def __init__(self, name, inputs, in_tree, nodes, consts, guards, outputs, out_tree):
        self.name, self.inputs, self.in_tree = name, inputs, in_tree
        self.nodes, self.consts, self.guards = nodes, consts, guards
        self.outputs, self.out_tree = outputs, out_tree
        self.optimized = False  # (whether the passes made it: ``passes.optimize``)
        self.code_graph = None  # (the graph whose code runs it on plain values, if not itself)
        self._effects = None
        self._run = None

    @property
    def effects(self):
        """Whether a replay draws random numbers (``fgrad.numpy.random``). Found on the
        first read, which a replay makes, not the first call (a loop over the nodes: 1.7% of
        a staged gradient's first call's bytecode, when it was made with the graph)."""
        e = self._effects
        if e is None:
            e = self._effects = any(n.prim.effect for n in self.nodes)
        return e

    # --- running ------------------------------------------------------------------------
    def __call__(self, *args):
        leaves, tree = tree_flatten(args)
        if tree != self.in_tree:
            raise TypeError(f"{self.name}: the arguments have the structure {tree!r}, but the "
                            f"graph was traced with {self.in_tree!r}")
        for i, (x, v) in enumerate(zip(leaves, self.inputs)):
            m = value_for_shape(x)
            shape, dtype = _onp.shape(m), _onp.result_type(m)
            if shape != v.shape or dtype != v.dtype:
                raise ValueError(f"{self.name}: input leaf {i} has shape {shape} and dtype "
                                 f"{dtype}, but the graph was traced with shape {v.shape} "
                                 f"and dtype {v.dtype}; trace it again for these")
        return tree_unflatten(self.out_tree, self.run(self._as_traced(leaves)))

    def _as_traced(self, leaves):
        """A Python number among the leaves as a 0-d array where the graph was traced on a
        numpy value there (its code may apply numpy's operators to it, which on two Python
        numbers would do Python's arithmetic). A graph traced on a Python number takes one:
        numpy promotes it weakly, and the code calls the ufuncs on it."""
        for x in leaves:
            if x.__class__ in PYTHON_NUMBERS:
                return [_onp.asarray(x) if x.__class__ in PYTHON_NUMBERS and v.numpy else x
                        for x, v in zip(leaves, self.inputs)]
        return leaves

    def run(self, leaves):
        """The output leaves for these input leaves (not checked; a Python number where the
        graph was traced on one, see ``_as_traced``). Plain values run the generated code;
        tracers of transforms around the call (``grad`` of a graph), or a staged function
        around it, get the nodes one primitive call at a time, so those transforms see each
        call."""
        if interpreting(leaves, self):
            return self.interpret(leaves)
        return self.compile()(*leaves)

    def compile(self):
        """Generate the graph's code now (else the first plain call does)."""
        if self._run is None:
            self._run = compile_graph(self.code_graph or self)
        return self._run

    def interpret(self, leaves):
        """Run the nodes one by one, each primitive called as ``fgrad.numpy`` calls it."""
        env = dict(zip(self.inputs, leaves))
        guards = {}
        for g in self.guards:
            guards.setdefault(g[0], []).append(g)

        def check(var):
            for g in guards.get(var, ()):
                v = env[var]
                if g[2] == "dtype":
                    same = value_dtype(value_for_shape(v)) == g[1]
                elif g[2] == "shape":
                    same = _onp.shape(value_for_shape(v)) == g[1]
                else:
                    if g[2] is not None and isinstance(v, Tracer):
                        CONVERSIONS[g[2]](v)  # (the transform refuses it as on eager f)
                    same = _same(read_value(v), g[1])
                if not same:
                    raise GuardError(guard_message(self.name, var, g[3]))

        for v in self.inputs:
            check(v)
        for n in self.nodes:
            args = [resolve(a, env) for a in n.args]
            env[n] = (n.prim.interpret or n.prim)(*args, **n.params)
            check(n)
        return [resolve(o, env) for o in self.outputs]

    # --- showing ------------------------------------------------------------------------
    def __str__(self):
        lines = [f"{self.name}({', '.join(_typed(v) for v in self.inputs)}) {{"]
        for c in self.consts:
            lines.append(f"  {c!r} = {_short(c.value)}")
        guarded = {}
        for g in self.guards:
            guarded.setdefault(id(g[0]), []).append(g)

        def show_guards(var):
            for g in guarded.get(id(var), ()):
                what = f"{var!r}.{g[2]}" if g[2] in ("dtype", "shape") else repr(var)
                lines.append(f"  guard {what} == {_short(g[1])}")

        for v in self.inputs:
            show_guards(v)
        for n in self.nodes:
            args = " ".join(_ref(a) for a in n.args)
            params = "".join(f" {k}={_short(v)}" for k, v in n.params.items())
            lines.append(f"  {_typed(n)} = {n.prim.listed_name} {args}{params}")
            show_guards(n)
        outs = ", ".join(_ref(o) for o in self.outputs)
        lines.append(f"  return {outs}")
        lines.append("}")
        return "\n".join(lines)

    __repr__ = __str__

    def to_dot(self):
        """Graphviz DOT source: inputs and constants as boxes, operations as ellipses."""
        out = ["digraph fgrad {", "  rankdir=LR;"]
        for v in self.inputs:
            out.append(f'  v{v.id} [shape=box, label="v{v.id}\\n{_type(v)}"];')
        for c in self.consts:
            out.append(f'  c{c.id} [shape=box, style=dashed, label="{_short(c.value)}"];')
        for n in self.nodes:
            out.append(f'  v{n.id} [label="{n.prim.listed_name}\\n{_type(n)}"];')
            for a in n.args:
                if isinstance(a, (Var, Const)):
                    out.append(f"  {a!r} -> v{n.id};")
        for i, o in enumerate(self.outputs):
            out.append(f'  out{i} [shape=plaintext, label="output {i}"];')
            if isinstance(o, (Var, Const)):
                out.append(f"  {o!r} -> out{i};")
        out.append("}")
        return "\n".join(out)


def resolve(ref, env):
    """What a node's argument or a graph's output stands for: a ``Var``'s value in ``env``,
    a ``Const``'s value, or a static argument itself."""
    if ref.__class__ is Var:
        return env[ref]
    return ref.value if ref.__class__ is Const else ref


def replay_impl(prim):
    """What a graph calls for ``prim`` on plain values: its ``replay_impl`` where it has one
    (a custom function runs again), else its ``fast_impl``."""
    return prim.replay_impl or prim.fast_impl


def interpreting(leaves, graph=None):
    """Whether a graph run on these leaves goes node by node: a transform's tracers among
    them, or a staged function being traced around the call, must see each primitive; and
    inside ``vmap`` a graph that draws random numbers (any, where ``graph`` is not given), so
    that it draws per example (``fgrad.numpy.random``). (A graph without draws runs its code
    there: an ODE's system, which a rule under ``jacfwd`` has scipy call once per step for
    each example, went node by node.)"""
    return first_tracer(leaves) is not None or (STAGING and ambient() is not None) or \
        bool(BATCHING and batches() and (graph is None or graph.effects))


# Values at least this big are freed after their last use by the generated code (smaller
# ones would cost a statement each for no memory worth having back).
_FREE_BYTES = 1 << 12
# numpy keeps freed buffers of up to this many bytes for its next arrays; a bigger one is a
# malloc and a free per call, which a dead value's buffer saves (``_Pool``)
_NUMPY_CACHED = 1 << 10


def compile_graph(graph, inputs_c=True):
    """A Python function ``run(*input_leaves) -> list of output leaves``, generated from the
    nodes as straight-line code.

    ``inputs_c``: the code may count on inputs of two or more dimensions being C-ordered
    arrays (to keep the eager layouts where it writes into buffers: ``layouts.Layouts``); it
    checks them first, and calls code generated without that where one is not.

    Values live in local variables, and a variable is reused once the value in it is read for
    the last time (as registers are allocated), so the function has about as many locals as
    values live at once, not one per node. (One per node made a 1714-node Hessian's frame so
    big that CPython gave each Python call under it a data-stack chunk of its own, mapped and
    unmapped per call: 4.3 ms a replay instead of 0.86.) Values of 4 KiB or more are deleted
    right after their last use."""
    env = {"_same": _same, "GuardError": GuardError, "_nd": _onp.ndarray}
    for c in graph.consts:
        env[f"c{c.id}"] = c.value
    for c, typed in _typed_numbers(graph).items():
        env[f"c{c.id}"] = typed
    guards = {}
    for k, g in enumerate(graph.guards):
        guards.setdefault(id(g[0]), []).append((k, g))
    body = []
    names = {v: repr(v) for v in graph.inputs}

    def check(var):
        for k, (_, value, how, where) in guards.get(id(var), ()):
            env[f"g{k}"] = value
            env[f"m{k}"] = guard_message(graph.name, var, where)
            if how == "dtype" or how == "shape":
                body.append(f"    if {names[var]}.{how} != g{k}:")
            else:
                body.append(f"    if not _same({names[var]}, g{k}):")
            body.append(f"        raise GuardError(m{k})")

    layouts = Layouts(graph, inputs_c)
    items = schedule(graph, layouts)  # the nodes, elementwise work on large arrays in Tiles
    last = {}  # var -> index of the last item using it
    for k, it in enumerate(items):
        if it.__class__ is Tile:
            for a in it.reads:
                last[a] = k
        else:
            for a in it.args:
                if a.__class__ is Var:
                    last[a] = k
    kept = set(graph.outputs) | set(graph.inputs)  # (the caller holds the inputs anyway)
    for v in kept:
        last.pop(v, None)
    big, held = set(), set()  # (held: its buffer may be kept for a later result, _Pool)
    for v in last:
        size = math.prod(v.shape) * v.dtype.itemsize
        if size > _NUMPY_CACHED:
            held.add(v)
            if size >= _FREE_BYTES:
                big.add(v)
    reuse = _in_place(graph, items, last, layouts)
    free_names, count = [], 0
    pool = _Pool(graph, layouts)

    def ref(a, local):
        """The source text for a reference; a static value is bound as ``local``."""
        if a.__class__ is Var:
            return names[a]
        if a.__class__ is Const:
            return repr(a)
        env[local] = a
        return local

    def release(dying):
        """The names of values read for the last time now: free for the next value; a
        big one's deleted (after a guard, which reads its value right after the node)."""
        gone = []
        for a in dying:
            if a in big:
                gone.append(names[a])
            else:
                free_names.append(names[a])
        if gone:
            body.append(f"    del {', '.join(gone)}")
            free_names.extend(gone)

    for v in graph.inputs:
        check(v)
    # (the loop over the nodes runs at a signature's first replay, once per node of graphs
    # of thousands: loops, not comprehensions, and the commonest paths inline, the helpers
    # for names and releases among them: with ``_in_place``'s sets made only for a candidate,
    # the scalar chain's 2747-node gradient's code took 5.9 ms to generate instead of 7.9)
    for k, n in enumerate(items):
        if n.__class__ is Tile:  # (its whole arrays named first: it reads what dies here)
            for v in n.escaping:
                if free_names:
                    names[v] = free_names.pop()
                else:
                    names[v] = f"r{count}"
                    count += 1
            body.extend(tile_source(n, k, names, env))
            release([a for a in n.reads if last.get(a) == k])
            continue
        args, dying = [], None  # (dying: the arguments read here for the last time)
        j = 0
        for a in n.args:
            if a.__class__ is Var:
                args.append(names[a])
                if last.get(a) == k:
                    if dying is None:
                        dying = [a]
                    elif a not in dying:
                        dying.append(a)
            else:
                args.append(ref(a, f"a{k}_{j}"))
            j += 1
        if n.params:
            env[f"p{k}"] = n.params
            args.append(f"**p{k}")
        if dying is not None:  # (a small value's name is free for this output)
            for a in dying:
                if a not in held:
                    free_names.append(names[a])
        buffer = pool.take(n) if pool.free and k not in reuse else None
        if buffer is not None:
            out = names[n] = buffer
        elif free_names:
            out = names[n] = free_names.pop()
        else:
            out = names[n] = f"r{count}"
            count += 1
        # (a ufunc's ``out`` given by position: 35 ns a call less than by keyword, 32 floats)
        if buffer is not None:  # the same ufunc, written into a dead value's buffer
            env[f"u{k}"] = n.prim.impl
            body.append(f"    {out} = u{k}({', '.join(args)}, {out})")
        elif k in reuse:  # the same ufunc, written into an operand nothing reads again
            env[f"u{k}"] = n.prim.impl
            body.append(f"    {out} = u{k}({', '.join(args)}, {names[reuse[k]]})")
        elif n.prim.operator is None:
            env[f"f{k}"] = replay_impl(n.prim)
            body.append(f"    {out} = f{k}({', '.join(args)})")
        elif "{" in n.prim.operator:  # an expression of its one operand
            body.append(f"    {out} = " + n.prim.operator.format(*args))
        elif _by_index(n):  # numpy's indexing: x[idx] (0.18 us for 32 floats; the call 0.97)
            env[f"i{k}"] = n.params["idx"]
            body.append(f"    {out} = {args[0]}[i{k}]")
        elif _by_operator(n):  # numpy's operator, without the stand-in's call
            if len(args) == 1:
                body.append(f"    {out} = {n.prim.operator}{args[0]}")
            else:
                body.append(f"    {out} = {args[0]} {n.prim.operator} {args[1]}")
        else:
            env[f"f{k}"] = replay_impl(n.prim)
            body.append(f"    {out} = f{k}({', '.join(args)})")
        if guards:
            check(n)
        if dying is not None:  # (a buffer written into here is the result's: not kept)
            gone, into = None, reuse.get(k)
            for a in dying:
                if a not in held or a is not into and pool.keep(a, names[a]):
                    continue
                if a not in big:
                    free_names.append(names[a])
                elif gone is None:
                    gone = [names[a]]
                else:
                    gone.append(names[a])
            if gone is not None:
                body.append(f"    del {', '.join(gone)}")
                free_names.extend(gone)
        if n not in last and n not in kept:  # (read by nothing: its name is free)
            free_names.append(out)
    outs = [ref(o, f"o{j}") for j, o in enumerate(graph.outputs)]
    params = ", ".join(repr(v) for v in graph.inputs)
    if layouts.relied:  # (an input in another layout: the code that assumes none)
        env["_plain"] = _Plain(graph)
        c = " and ".join(f"{v!r}.__class__ is _nd and {v!r}.flags.c_contiguous"
                         for v in graph.inputs if len(v.shape) >= 2)
        body[:0] = [f"    if not ({c}):", f"        return _plain({params})"]
    src = f"def run({params}):\n" + "\n".join(body) + f"\n    return [{', '.join(outs)}]\n"
    exec(code_for(src, f"<fgrad graph {graph.name}>"), env)  # noqa: S102
    run = env["run"]
    run.source = src
    return run


# A ufunc converts a Python number operand at each call (numpy's weak scalar): 0.17-0.3 us more
# than a 0-d array of the other operand's dtype, for 32 floats (``1 - h * h`` in the 200-step
# RNN's gradient: 60 us of its 2.2 ms replay; 6-8% of it in all, interleaved A/B). Where every
# use of a number is with an array of one float dtype, the result's, in arithmetic numpy
# computes from the number cast to that dtype (+, -, *, /, maximum, minimum), and that dtype
# holds the number exactly, the code gets it as such a 0-d array: numpy would cast it so and
# run the same loop, so the bits are the same.
_CAST_FIRST = frozenset([_onp.add, _onp.subtract, _onp.multiply, _onp.true_divide,
                         _onp.maximum, _onp.minimum])


def _typed_numbers(graph):
    """Const (a Python int or float) -> its 0-d array in the dtype of the arrays it meets."""
    typed, refused = {}, set(graph.outputs)
    with _onp.errstate(all="ignore"):  # (a number the dtype cannot hold: inf, refused)
        for n in graph.nodes:
            for a in n.args:
                if a.__class__ is not Const or (a.value.__class__ is not float and
                                                a.value.__class__ is not int) or a in refused:
                    continue
                args, dtype = n.args, n.dtype
                other = (args[1] if a is args[0] else args[0]) if len(args) == 2 else None
                if (other.__class__ is Var and other.numpy and other.shape and
                        other.dtype == dtype and dtype.kind == "f" and not n.params and
                        n.prim.impl in _CAST_FIRST and
                        float(dtype.type(a.value)) == a.value and
                        (a not in typed or typed[a].dtype == dtype)):
                    typed[a] = _onp.array(a.value, dtype)
                else:
                    refused.add(a)
                    typed.pop(a, None)
    return typed


class _Plain:
    """A graph's code assuming no input's layout, generated at its first call."""

    __slots__ = ("graph", "run")

    def __init__(self, graph):
        self.graph, self.run = graph, None

    def __call__(self, *leaves):
        if self.run is None:
            self.run = compile_graph(self.graph, inputs_c=False)
        return self.run(*leaves)


def _in_place(graph, items, last, layouts):
    """index of a node among ``items`` -> the operand its result is written into."""
    # (a value made by a primitive whose result is a new array of its own, and read only by
    # such primitives, can take the result of its last reader in place: in a 32 x 32
    # accumulation in the RNN's gradient, one allocation fewer per step; a unary ufunc's
    # too, ``tanh(a, out=a)``: on large arrays numpy's time is memory traffic)
    # The result then has the operand's layout, where numpy would lay it out as its operands
    # (``layouts.Layouts``): the same for one operand, or another that is a number; for
    # another array operand only if the operand is C order, as numpy's result then is.
    reuse, shared = {}, None
    for k, n in enumerate(items):
        if n.__class__ is Tile or not _writes_out(n):
            continue
        for a in n.args:
            if (a.__class__ is Var and a.shape and last.get(a) == k and a.numpy
                    and a.prim is not None and a.prim.fresh_output
                    and a.shape == n.shape and a.dtype == n.dtype):
                if shared is None:  # (at the first candidate: a graph of scalars has none)
                    shared = _read_elsewhere(graph)
                if a in shared:
                    continue
                if len(n.shape) >= 2 and len(n.args) == 2:
                    other = n.args[1] if n.args[0] is a else n.args[0]
                    if other is not a and (len(other.shape) if other.__class__ is Var
                                           else _onp.ndim(other.value)) > 0:
                        if not layouts.c_order(a):
                            break
                reuse[k] = a
                break
    return reuse


def _writes_out(n):
    """Whether node ``n``'s result may be written into a buffer of the code's choosing: its
    primitive a ufunc (``out`` given by position) called without keywords on numpy values,
    so that numpy computes it as it would unasked."""
    if not n.prim.writes_into or n.params or len(n.args) > 2 or \
            n.prim.impl.__class__ is not _onp.ufunc:
        return False
    if len(n.args) == 1:
        return n.args[0].__class__ is Var and n.args[0].numpy
    return _by_operator(n)


# A dead value's buffer, kept for a later ufunc result of its shape and dtype: numpy caches
# freed buffers of up to 1 KiB only, so a bigger result is a malloc and a free per call
# (``h[:, None] * g``, 32 x 32, in the RNN's gradient: 1.90 us, 1.62 into a buffer; 8 x 32,
# 1.17 and 1.05; the RNN's replay 5% faster, interleaved A/B). Only values up to
# ``_POOL_LARGEST``: the 256-wide MLP's 256 KiB values held so replayed at the same speed
# (2615-2631 against 2622-2636 us), and 5% slower in a process whose malloc still maps each
# such block anew (no big block freed yet: ``benchmarks.__main__.settle_allocator``); and up
# to ``_POOL_BYTES`` of dead buffers at once (the rest are deleted, as before).
_POOL_BYTES = 1 << 20
_POOL_LARGEST = 1 << 16


class _Pool:
    """The generated code's dead buffers, by shape and dtype."""

    __slots__ = ("graph", "layouts", "free", "bytes", "shared")

    def __init__(self, graph, layouts):
        self.graph, self.layouts = graph, layouts
        self.free, self.bytes, self.shared = {}, 0, None

    def keep(self, a, name):
        """Hold the buffer of ``a``, read for the last time, in local ``name`` if a later
        result may take it: a new array of its own (no view of it is read elsewhere, no
        guard reads it), in C order; False: delete it."""
        size = math.prod(a.shape) * a.dtype.itemsize
        if size > _POOL_LARGEST or self.bytes + size > _POOL_BYTES or not a.numpy or \
                a.prim is None or not a.prim.fresh_output:
            return False
        if self.shared is None:
            self.shared = _read_elsewhere(self.graph)
        if a in self.shared or len(a.shape) >= 2 and not self.layouts.c_order(a):
            return False
        self.free.setdefault((a.shape, a.dtype), []).append((name, size))
        self.bytes += size
        return True

    def take(self, n):
        """The local holding a dead buffer that node ``n``'s ufunc may write its result
        into, as numpy would lay it out (C order), or None."""
        held = self.free.get((n.shape, n.dtype))
        if not held or not _writes_out(n) or len(n.shape) >= 2 and not self.layouts.c_order(n):
            return None
        name, size = held.pop()
        self.bytes -= size
        return name


def _read_elsewhere(graph):
    """The values some primitive reads that does not make a new array of its own (a view,
    a reshape): their buffers may be shared; and the values a guard reads (after their
    node, not after their last use)."""
    out = {g[0] for g in graph.guards}
    for n in graph.nodes:
        if not n.prim.fresh_output:
            for a in n.args:
                if a.__class__ is Var:
                    out.add(a)
    return out


def _by_operator(node):
    """Whether the generated code may write the node's arithmetic as numpy's operator: its
    primitive has one (``prim.operator``) and numpy's types answer it, i.e. an operand was a
    numpy value when traced and none is a Python complex (Python's complex arithmetic would
    take a numpy float64, a float subclass, and answer a Python complex)."""
    if node.prim.operator is None or node.prim.operator == "[]" or node.params:
        return False
    numpy_operand = False
    for a in node.args:
        if a.__class__ is Var:
            numpy_operand = numpy_operand or a.numpy
        elif a.__class__ is Const:
            if isinstance(a.value, complex) and not isinstance(a.value, _onp.generic):
                return False
            numpy_operand = numpy_operand or isinstance(a.value, (_onp.ndarray, _onp.generic))
        else:
            return False
    return numpy_operand


def _by_index(node):
    """Whether the generated code may write the node as numpy's indexing, ``x[idx]``: its
    primitive's operator is ``"[]"`` (indexing by its ``idx`` parameter) and its operand was
    an array when traced (an input's shape is checked at each call: an array again)."""
    if node.prim.operator != "[]":
        return False
    a = node.args[0]
    return a.__class__ is Var and a.numpy and bool(a.shape)


def _same(a, b):
    return _onp.array_equal(a, b, equal_nan=True)


def _type(v):
    dt = _onp.dtype(v.dtype)
    short = {"f": "f", "c": "c", "i": "i", "u": "u", "b": "bool"}.get(dt.kind, dt.kind)
    bits = "" if dt.kind == "b" else str(dt.itemsize * 8)
    return f"{short}{bits}[{','.join(str(d) for d in v.shape)}]"


def _typed(v):
    return f"{v!r}:{_type(v)}"


def _ref(a):
    return repr(a) if isinstance(a, (Var, Const)) else _short(a)


def _short(v):
    """A value for a listing: numbers in full, arrays by shape and dtype, other values by repr
    cut to a line."""
    if isinstance(v, _onp.ndarray):
        return repr(v.tolist()) if v.size <= 4 else f"array({v.dtype}{list(v.shape)})"
    text = repr(v)
    return text if len(text) <= 40 else text[:37] + "..."
