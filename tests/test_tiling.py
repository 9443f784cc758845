"""Tiles: elementwise work on large arrays replayed a block of rows at a time
(``fgrad.traces.tiling``), equal to eager bit for bit and holding less memory.

Most tests shrink the blocks to a few elements (``small_tiles``), so that arrays of a few
dozen elements are cut into a dozen blocks or more, the last one often short."""
import tracemalloc
import zlib

import numpy as onp
import pytest

import fgrad
import fgrad.tools.check  # noqa: F401  (the whole table, fgrad.scipy's entries too with scipy)
import fgrad.numpy as np
from fgrad.core.table import checked
from fgrad.testing import random_case
from fgrad.traces import tiling
from fgrad.traces.passes import optimize


@pytest.fixture
def small_tiles(monkeypatch):
    monkeypatch.setattr(tiling, "TILE_BYTES", 16)
    monkeypatch.setattr(tiling, "MIN_BYTES", 64)


def _same(got, want):
    got, want = fgrad.tree_util.tree_leaves(got), fgrad.tree_util.tree_leaves(want)
    assert len(got) == len(want)
    for a, b in zip(got, want):
        assert onp.result_type(a) == onp.result_type(b)
        onp.testing.assert_array_equal(a, b)


def _source(f, *args):
    """The generated code of ``f``'s graph after the passes, and the graph."""
    graph = optimize(fgrad.make_graph(f)(*args))
    return graph.compile().source, graph


def _tiled(source):
    return "for _s in range(" in source


def _elementwise(entry):
    f = entry.impl
    return isinstance(f, onp.ufunc) and f.nout == 1 and f.signature is None


ELEMENTWISE = sorted(name for name, e in checked().items() if _elementwise(e))


def test_the_table_has_elementwise_entries_to_tile():
    assert len(ELEMENTWISE) >= 40 and "sin" in ELEMENTWISE and "multiply" in ELEMENTWISE
    assert "matmul" not in ELEMENTWISE  # (a gufunc: its core dimensions are not elementwise)


@pytest.mark.parametrize("name", ELEMENTWISE)
def test_every_elementwise_entry_tiled_replays_its_value_and_gradient_bit_for_bit(
        name, small_tiles):
    entry = checked()[name]
    rng = onp.random.default_rng(zlib.crc32(name.encode()))
    # the second operand in turn of the tile's shape, broadcast along the rows, of one row
    for dtype, other in [(onp.float64, (13, 3)), (onp.float32, (3,)), (onp.float64, (1, 3))]:
        shapes = [(13, 3)] + [other] * (len(entry.spec.cases[0][0]) - 1)
        params = entry.spec.cases[0][1]  # (ldexp's integer exponents, of shape (3,))
        args, _ = random_case(entry, rng, (shapes, params), dtype)

        def f(*xs):
            y = entry.spec.invoke(entry, xs, params) if params else entry(*xs)
            return y * 1.5 + y  # (values of the tile's own, read by nothing after it)

        source, graph = _source(f, *args)
        assert _tiled(source), source
        _same(graph(*args), f(*args))
        again, _ = random_case(entry, rng, (shapes, params), dtype)
        _same(graph(*again), f(*again))
        if onp.result_type(f(*args)).kind != "f" or "bool" in str(entry.spec.domain):
            continue
        g = fgrad.grad(lambda *xs: np.sum(np.sin(f(*xs))), argnums=tuple(range(len(args))))
        source, graph = _source(g, *args)
        assert _tiled(source), source
        _same(graph(*args), g(*args))


def _chain(x):
    for _ in range(3):
        x = np.tanh(np.sin(x) * 1.5 + 0.5)
    return np.sum(x)


def test_a_gradient_keeps_no_forward_value_and_the_sum_runs_after_the_loop(small_tiles):
    x = onp.random.default_rng(0).uniform(-2, 2, 1001)
    vg = fgrad.value_and_grad(_chain)
    source, graph = _source(vg, x)
    body = source.splitlines()
    loop = next(i for i, line in enumerate(body) if "for _s in range(0, 1001, 2)" in line)
    # the forward values live a block at a time: only the last one (the sum's operand) and
    # the gradient are whole arrays, made before the loop
    assert sum("_empty((1001,)" in line for line in body[:loop]) == 2
    assert not any("_empty" in line for line in body[loop:])
    # the sum (the one node with parameters) reads the last forward value: after the loop
    assert [n.prim.name for n in graph.nodes if n.params] == ["sum"]
    assert not any("**p" in line for line in body[:loop])
    assert any("**p" in line for line in body[loop:])
    _same(graph(x), vg(x))
    jitted = fgrad.jit(vg)
    jitted(x)
    _same(jitted(x), vg(x))


def test_operands_broadcast_or_closed_over_and_several_outputs(small_tiles):
    rng = onp.random.default_rng(1)
    W = rng.normal(size=(64, 5))  # a closed-over array of the tile's shape: sliced per block
    b = rng.normal(size=5)        # a row: passed whole
    s = onp.float32(0.25)         # a numpy scalar: passed whole, promoting as it does eagerly

    def f(x, col):
        h = np.exp(x * W + b) - col
        y = np.sqrt(h * h + s)
        return y, np.log1p(y) * 2.0, np.max(h)

    x, col = rng.normal(size=(64, 5)).astype(onp.float32), rng.normal(size=(64, 1))
    source, graph = _source(f, x, col)
    assert _tiled(source) and "[_s:_e]" in source
    _same(graph(x, col), f(x, col))
    first, second, _ = graph(x, col)
    assert first.flags.writeable and first.flags.owndata and second.flags.owndata
    W[:] = rng.normal(size=W.shape)  # read anew at the next replay
    _same(graph(x, col), f(x, col))


_RNG = onp.random.default_rng(3)
_BASE = _RNG.normal(size=(40, 30))
LAYOUTS = {  # inputs as numpy lays them out: blocks are views of them, sliced by rows
    "Fortran order": onp.asfortranarray(_BASE),
    "transposed": _RNG.normal(size=(30, 40)).T,
    "strided": _RNG.normal(size=(80, 60))[::2, ::2],
    "broadcast (stride 0)": onp.broadcast_to(_RNG.normal(size=30), (40, 30)),
    "complex": _BASE + 1j * _RNG.normal(size=(40, 30)),
    "float32": _BASE.astype(onp.float32),
    "int64": _RNG.integers(-3, 3, size=(40, 30)),
}


@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_inputs_of_any_layout_and_dtype_replay_bit_for_bit(layout, small_tiles):
    x, y = LAYOUTS[layout], _RNG.normal(size=(40, 30))

    def f(x, y):  # (a sum adds in the order of its operand's layout: the eager one's)
        h = np.exp(np.sin(x) * y) + np.tanh(x)
        return np.log1p(h * h), h, np.sum(h * y, axis=0), np.sum(np.cos(x) * 2.0, axis=0)

    source, graph = _source(f, x, y)
    assert _tiled(source)
    _same(graph(x, y), f(x, y))
    if layout != "int64":
        g = fgrad.grad(lambda x, y: np.sum(np.real(f(x, y)[0])), argnums=(0, 1))
        source, graph = _source(g, x, y)
        assert _tiled(source)
        _same(graph(x, y), g(x, y))


def test_a_value_guarded_or_a_draw_keeps_its_place(small_tiles):
    def f(x):
        y = np.exp(x) * 2.0
        if y.tolist()[0] > 2.0:  # reads y: a guard on it, checked right after it is made
            y = y * 3.0
        return np.sin(y) * np.random.normal(size=x.shape) + np.cos(y)

    x = onp.linspace(0.5, 1.0, 200)
    graph = fgrad.make_graph(f)(x)
    assert graph.guards and _tiled(graph.compile().source)
    onp.random.seed(3)
    got = graph(x)
    onp.random.seed(3)
    _same(got, f(x))
    with pytest.raises(fgrad.GuardError):
        graph(x - 1.0)


def test_small_arrays_and_chains_without_values_of_their_own_are_not_tiled():
    x = onp.ones(1000)
    assert not _tiled(_source(_chain, x)[0])  # (8 KB: below MIN_BYTES)
    big = onp.ones(1 << 18)
    assert _tiled(_source(_chain, big)[0])
    # every value read after it: a loop would save nothing
    assert not _tiled(_source(lambda v: (np.sin(v), np.sum(np.sin(v) * 2.0)), big)[0])


def _peak(fn):
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        fn()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def test_a_tiled_gradient_replay_holds_under_half_the_memory_of_a_whole_one(monkeypatch):
    x = onp.random.default_rng(2).uniform(-2, 2, 1 << 18)  # 2 MiB
    g = fgrad.grad(_chain)
    tiled = optimize(fgrad.make_graph(g)(x))
    tiled.compile()
    monkeypatch.setattr(tiling, "MIN_BYTES", 1 << 40)
    whole = optimize(fgrad.make_graph(g)(x))
    assert _tiled(tiled.compile().source) and not _tiled(whole.compile().source)
    _same(tiled(x), whole(x))
    assert _peak(lambda: tiled(x)) < 0.5 * _peak(lambda: whole(x))
