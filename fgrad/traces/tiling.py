"""Elementwise work on large arrays run a block of rows at a time.

A replay of numpy code makes a pass over memory per operation and keeps every value it will
read again: a gradient keeps the forward pass's values until the backward pass reads them.
On arrays larger than the caches that is the replay's memory and much of its time. The code
generator (``graph.compile_graph``) therefore runs a stretch of elementwise ufunc calls whose
results share one large shape as a loop over blocks of rows (a *tile*): a block's values stay
in the cache and die with the block, and only the values read after the loop, or returned,
are written into whole arrays. On the 1e6-float chain's gradient (``benchmarks``) the replay's
peak memory falls from the five saved 8 MB block values to the gradient alone.

Bit for bit: each element is computed by the same ufunc on the same operands as in the eager
call (a tile of two or more dimensions only where its whole arrays are C-ordered in the eager
call too, ``layouts.Layouts``: a later sum over them adds in the same order), and a ufunc's
value at an element depends on that element's operands alone (so also in
numpy's SIMD loops, whose last, shorter stretch of a block falls elsewhere than in the whole
array's): ``tests/test_tiling.py`` checks every elementwise primitive of the table with blocks
of one or two rows against eager, on inputs of every layout.

What joins a tile: a node calling a ufunc of one output (not a gufunc such as ``matmul``),
without parameters, on graph values and constants, whose result is at least ``MIN_BYTES`` and
has the tile's shape. An operand that varies along the first axis is sliced per block, one
broadcast along it (a lower rank, a length of 1) is passed whole. Nodes that read the tile's
values but cannot join it (a sum of its result) run after the loop; nodes that do not run
before it; a random draw or a guarded value keeps its place in the order (the tile before it
is closed). A tile with no value of its own (every value read after it) is not worth a loop,
and its nodes run as they are.
"""
import math

import numpy as _onp

from .nodes import Const, Var

# A block holds about this many bytes of each of its values: on a 20-op chain of cheap ufuncs
# written in place, blocks of 16384-65536 float64s ran within 15% of each other, 1.3x faster
# than whole arrays on 1e7 floats and at par on 1e6 (which fit the level-3 cache); blocks of
# 2048 lost 1.4x to the calls' overhead. A few blocks' values fit the level-2 cache.
TILE_BYTES = 1 << 18
# Values smaller than this are computed whole (a loop would cost calls for no cache to gain).
MIN_BYTES = 1 << 20


class Tile:
    """Nodes run together a block of ``rows`` rows at a time; ``escaping``: their values
    read after the loop or returned (written into whole arrays), ``reads``: the values from
    before it that they read."""

    __slots__ = ("shape", "rows", "nodes", "escaping", "reads")

    def __init__(self, shape, nodes):
        self.shape, self.nodes, self.rows = shape, nodes, 0
        self.escaping, self.reads = [], []


def _joins(n):
    """Whether node ``n`` can be computed a block at a time (see the module's text)."""
    f = n.prim.impl
    if f.__class__ is not _onp.ufunc or not n.shape or \
            math.prod(n.shape) * n.dtype.itemsize < MIN_BYTES:  # (the size first: cheap)
        return False
    if n.params or n.prim.replay_impl is not None or f.nout != 1 or f.signature is not None \
            or len(n.args) != f.nin:
        return False
    for a in n.args:
        if a.__class__ is not Var and a.__class__ is not Const:
            return False
    return True


def varies(a, shape):
    """Whether operand ``a`` of a tile of ``shape`` is sliced per block (it has the tile's
    rank and length along the first axis) rather than broadcast whole."""
    s = a.shape if a.__class__ is Var else _onp.shape(a.value)
    return len(s) == len(shape) and s[0] == shape[0]


def schedule(graph, layouts):
    """The graph's nodes in the order its code runs them, stretches of elementwise nodes on
    large arrays gathered into ``Tile``s. A graph without such values keeps its order."""
    guarded = {g[0] for g in graph.guards}
    items = []
    tile, after = None, []  # the open tile, and the nodes waiting for it
    in_tile, waiting = set(), set()  # their values

    def close():
        nonlocal tile, after
        if tile is not None:
            items.append(tile)
            items.extend(after)
            tile, after = None, []
            in_tile.clear()
            waiting.clear()

    for n in graph.nodes:
        if tile is None:  # (the commonest case by far: nothing waits, a node keeps its place)
            if _joins(n) and not n.prim.effect and n not in guarded:
                tile = Tile(n.shape, [n])
                in_tile.add(n)
            else:
                items.append(n)
            continue
        if n.prim.effect or n in guarded:  # (a draw, a guard keep their order)
            close()
            items.append(n)
            continue
        reads_tile = reads_waiting = False
        for a in n.args:
            if a.__class__ is Var:
                if a in in_tile:
                    reads_tile = True
                elif a in waiting:
                    reads_waiting = True
        if _joins(n):
            if n.shape != tile.shape or reads_waiting:
                close()
                tile = Tile(n.shape, [])
            tile.nodes.append(n)
            in_tile.add(n)
        elif reads_tile or reads_waiting:
            after.append(n)
            waiting.add(n)
        else:
            items.append(n)
    close()
    return _worth_a_loop(graph, items, layouts)


def _worth_a_loop(graph, items, layouts):
    """``items`` with each tile's escaping values, reads and rows found, and tiles that would
    not save anything replaced by their nodes."""
    owner = {}
    tiles = [t for t in items if t.__class__ is Tile]
    if not tiles:
        return items
    for t in tiles:
        for n in t.nodes:
            owner[n] = t
    escaping = set()
    for it in items:
        for n in (it.nodes if it.__class__ is Tile else (it,)):
            for a in n.args:
                if a.__class__ is Var and a in owner and owner[a] is not it:
                    escaping.add(a)
    for o in graph.outputs:
        if o.__class__ is Var and o in owner:
            escaping.add(o)
    out = []
    for it in items:
        if it.__class__ is not Tile:
            out.append(it)
            continue
        made = set(it.nodes)
        it.escaping = [n for n in it.nodes if n in escaping]
        # (its whole arrays are made in C order: the eager ones must be)
        if len(it.shape) >= 2 and not all(layouts.c_order(v) for v in it.escaping):
            out.extend(it.nodes)
            continue
        seen = set()
        for n in it.nodes:
            for a in n.args:
                if a.__class__ is Var and a not in made and a not in seen:
                    seen.add(a)
                    it.reads.append(a)
        row = math.prod(it.shape[1:]) * max(n.dtype.itemsize for n in it.nodes)
        it.rows = max(1, TILE_BYTES // max(row, 1))
        if len(it.escaping) < len(it.nodes) and it.shape[0] >= 2 * it.rows:
            out.append(it)
        else:
            out.extend(it.nodes)
    return out


def tile_source(tile, k, names, env):
    """The generated lines running ``tile`` (item ``k`` of the schedule): whole arrays for
    its escaping values, named in ``names`` already, then the loop over blocks. ``names``
    gives the source text of every value it reads; ``env`` takes what the lines refer to."""
    lines = []
    env["_empty"] = _onp.empty
    for j, v in enumerate(tile.escaping):
        env[f"d{k}_{j}"] = v.dtype
        lines.append(f"    {names[v]} = _empty({tile.shape!r}, d{k}_{j})")
    lines.append(f"    for _s in range(0, {tile.shape[0]}, {tile.rows}):")
    lines.append(f"        _e = _s + {tile.rows}")
    local = {}  # value -> its block's name
    free, count = [], 0

    def new_name():
        nonlocal count
        count += 1
        return f"t{count - 1}"

    def operand(a):
        if a in local:
            return local[a]
        text = names[a] if a.__class__ is Var else repr(a)
        if not varies(a, tile.shape):
            return text
        local[a] = name = new_name()
        lines.append(f"        {name} = {text}[_s:_e]")
        return name

    last = {}  # value made in the tile -> index of its last reader there
    for i, n in enumerate(tile.nodes):
        for a in n.args:
            if a.__class__ is Var:
                last[a] = i
    escaping = set(tile.escaping)
    internal = set(tile.nodes) - escaping  # (values living a block at a time)
    for i, n in enumerate(tile.nodes):
        args = [operand(a) for a in n.args]
        env[f"e{k}_{i}"] = n.prim.impl
        call = f"e{k}_{i}({', '.join(args)}"
        dying = []
        for a in n.args:
            if a in internal and last[a] == i and a not in dying:
                dying.append(a)
        if n in escaping:
            name = new_name()
            lines.append(f"        {name} = {call}, out={names[n]}[_s:_e])")
        else:
            into = next((a for a in dying if a.dtype == n.dtype), None)
            if into is not None:  # (a block value nothing reads again: written over)
                name = local[into]
                dying.remove(into)
                lines.append(f"        {name} = {call}, out={name})")
            else:
                name = free.pop() if free else new_name()
                lines.append(f"        {name} = {call})")
        local[n] = name
        for a in dying:
            free.append(local[a])
    lines.append(f"    del {', '.join(f't{j}' for j in range(count))}")
    return lines
