"""The compiled code of staged graphs, kept by its source (``fgrad.traces.codecache``): shared
within a process and across processes through the disk cache, and never a wrong graph from a
stale, corrupt or concurrently written entry; and ``jit`` running the graph passes at a
signature's first replay, not its first call."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.traces import codecache

ROOT = pathlib.Path(__file__).resolve().parents[1]

PROGRAM = textwrap.dedent("""
    import json, sys, numpy, fgrad, fgrad.numpy as np
    from fgrad.traces import codecache
    def loss(w, x):
        h = np.tanh(x @ w)
        for _ in range(%d):
            h = np.sin(h) * 1.5 + h
        return np.sum(h ** 2)
    step = fgrad.jit(fgrad.grad(loss))
    w, x = numpy.linspace(-1, 1, 4), numpy.linspace(0, 1, 12).reshape(3, 4)
    step(w, x)
    out = step(w, x)  # (the first replay: passes and code)
    same = bool(numpy.array_equal(out, fgrad.grad(loss)(w, x)))
    print(json.dumps({"stats": codecache.stats, "same": same, "out": out.tolist()}))
""")


def _run(cache, steps=3, env=None):
    full = dict(os.environ, FGRAD_CACHE_DIR=str(cache), PYTHONPATH=str(ROOT), **(env or {}))
    res = subprocess.run([sys.executable, "-c", PROGRAM % steps], capture_output=True,
                         text=True, env=full, timeout=120)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _entries(cache):
    return sorted(pathlib.Path(cache).rglob("*.code"))


def test_a_second_process_loads_the_graphs_code_from_disk(tmp_path):
    first = _run(tmp_path)
    assert first["stats"] == {"memory": 0, "disk": 0, "compiled": 1} and first["same"]
    assert len(_entries(tmp_path)) == 1
    second = _run(tmp_path)
    assert second["stats"] == {"memory": 0, "disk": 1, "compiled": 0} and second["same"]
    assert second["out"] == first["out"]
    other = _run(tmp_path, steps=4)  # (another graph: its own entry)
    assert other["stats"]["compiled"] == 1 and len(_entries(tmp_path)) == 2


def test_FGRAD_CACHE_0_turns_the_disk_cache_off(tmp_path):
    for _ in range(2):
        out = _run(tmp_path, env={"FGRAD_CACHE": "0"})
        assert out["stats"] == {"memory": 0, "disk": 0, "compiled": 1} and out["same"]
    assert _entries(tmp_path) == []


def _flip_the_last_byte(data):
    return data[:-1] + bytes([data[-1] ^ 0xFF])


@pytest.mark.parametrize("spoil", [
    lambda d: d[:len(d) // 2],                                 # cut short (a crash mid-write)
    lambda d: b"",                                             # empty
    _flip_the_last_byte,                              # a flipped byte
    lambda d: d.replace(b"fgrad-graph-code 1", b"fgrad-graph-code 0"),  # an older format
    lambda d: b"garbage" * 50,
], ids=["truncated", "empty", "flipped-byte", "old-format", "garbage"])
def test_a_stale_or_corrupt_entry_is_compiled_again(tmp_path, spoil):
    first = _run(tmp_path)
    (entry,) = _entries(tmp_path)
    entry.write_bytes(spoil(entry.read_bytes()))
    again = _run(tmp_path)
    assert again["stats"] == {"memory": 0, "disk": 0, "compiled": 1} and again["same"]
    assert again["out"] == first["out"]
    assert _run(tmp_path)["stats"]["disk"] == 1  # (rewritten whole)


def test_an_entry_of_another_graph_under_this_key_is_not_used(tmp_path, monkeypatch):
    # (the header names the key it was written for: a file renamed or copied over another
    # entry is no code for this source)
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))
    a, b = "def run(x):\n    return [x + 1]\n", "def run(x):\n    return [x - 1]\n"
    codecache._write(codecache._key(a), compile(a, "a", "exec"))
    codecache._write(codecache._key(b), compile(b, "b", "exec"))
    path_a, path_b = codecache._path(codecache._key(a)), codecache._path(codecache._key(b))
    pathlib.Path(path_a).write_bytes(pathlib.Path(path_b).read_bytes())
    assert codecache._read(codecache._key(a)) is None
    env = {}
    exec(codecache._read(codecache._key(b)), env)
    assert env["run"](1) == [0]


def test_concurrent_writers_and_readers_see_whole_entries(tmp_path, monkeypatch, in_threads):
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))
    srcs = [f"def run(x):\n    return [x * {k}]\n" for k in range(4)]

    def work(k):
        src = srcs[k % 4]
        key = codecache._key(src)
        for _ in range(50):
            codecache._write(key, compile(src, "w", "exec"))
            code = codecache._read(key)
            assert code is not None  # (a writer renames a whole file into place)
            env = {}
            exec(code, env)
            assert env["run"](3) == [3 * (k % 4)]

    assert in_threads(work, [(k,) for k in range(8)]) == []
    assert not list(tmp_path.rglob(".tmp-*"))  # (no private file left behind)
    # and processes: four at once, each compiling and writing the same new graph
    procs = [subprocess.Popen([sys.executable, "-c", PROGRAM % 6], env=dict(
        os.environ, FGRAD_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    outs = [p.communicate(timeout=120) for p in procs]
    assert all(p.returncode == 0 for p in procs), [e for _, e in outs]
    results = [json.loads(o) for o, _ in outs]
    assert all(r["same"] for r in results) and len({str(r["out"]) for r in results}) == 1
    assert _run(tmp_path, steps=6)["stats"]["disk"] == 1


def test_an_unwritable_cache_is_no_error(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    out = _run(blocker / "inside")
    assert out["same"] and out["stats"]["compiled"] == 1


def test_jit_runs_the_passes_at_a_signatures_first_replay():
    def f(x):
        return np.sum(np.sin(x) * 1.0 + 0.0 * 2.0)

    jf = fgrad.jit(f)
    x = onp.linspace(0, 1, 5)
    first = jf(x)
    (graph,) = jf.cache[next(iter(jf.cache))]
    assert not graph.optimized  # (the first call returned the trace's values: no passes yet)
    traced = len(graph.nodes)
    second = jf(x)
    (graph,) = jf.cache[next(iter(jf.cache))]
    assert graph.optimized and len(graph.nodes) < traced  # (the `* 1.0` is gone)
    assert first == second == f(x)
    assert jf(x + 1) == f(x + 1)


def test_a_call_from_within_the_passes_runs_eagerly(monkeypatch):
    # The passes rewrite the traced graph's nodes, holding jit's lock; code they run (a
    # folded constant's) may call the same function again: it runs eagerly, no deadlock.
    from fgrad import jitting
    jf = fgrad.jit(lambda x: np.sum(np.sin(x) * 1.0))
    x = onp.linspace(0, 1, 5)
    inner = []

    def optimize(graph, **how):
        inner.append(jf(x))
        return real(graph, **how)

    real = jitting.optimize
    first = jf(x)
    monkeypatch.setattr(jitting, "optimize", optimize)
    second = jf(x)
    assert first == second == inner[0] == onp.sum(onp.sin(x))
    (graph,) = jf.cache[next(iter(jf.cache))]
    assert graph.optimized and not jf.passing


def test_a_graph_whose_passes_fail_is_traced_anew(monkeypatch):
    from fgrad import jitting
    jf = fgrad.jit(lambda x: np.sum(np.cos(x) * 1.0))
    x = onp.linspace(0, 1, 5)
    jf(x)
    (traced,) = jf.cache[next(iter(jf.cache))]

    def optimize(graph, **how):
        graph.nodes[-1].args = ["half rewritten"]
        raise KeyboardInterrupt

    real = jitting.optimize
    monkeypatch.setattr(jitting, "optimize", optimize)
    with pytest.raises(KeyboardInterrupt):
        jf(x)
    monkeypatch.setattr(jitting, "optimize", real)
    assert jf.cache[next(iter(jf.cache))] == []  # (the half-rewritten graph is gone)
    assert jf(x) == jf(x) == onp.sum(onp.cos(x))  # (traced anew, then replayed)
    assert traced not in jf.cache[next(iter(jf.cache))]


def test_threads_at_a_signatures_first_replay_share_one_run_of_the_passes(in_threads):
    f = fgrad.grad(lambda x: np.sum(np.tanh(x) * 1.0 + 0.0 * 2.0))
    for _ in range(5):
        jf = fgrad.jit(f)
        x = onp.linspace(-1, 1, 7)
        jf(x)  # (traced)
        outs = []

        def work(k):
            for _ in range(20):
                outs.append(jf(x + 0.0))

        assert in_threads(work, [(k,) for k in range(4)]) == []
        (graph,) = jf.cache[next(iter(jf.cache))]
        assert graph.optimized and len(outs) == 80
        for o in outs:
            assert onp.array_equal(o, f(x))


def test_shared_code_names_each_graph_in_tracebacks(tmp_path, monkeypatch):
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))

    def first(x):
        return np.log(x) * 2.0

    def second(x):
        return np.log(x) * 2.0

    before = dict(codecache.stats)
    for f in (first, second):  # (one structure: the second reuses the first's code)
        jf = fgrad.jit(f)
        jf(onp.ones(3))
        jf(onp.ones(3))  # (the first replay makes the code)
        (graph,) = jf.cache[next(iter(jf.cache))]
        assert graph.compile().__code__.co_filename == f"<fgrad graph jit({f.__name__})>"
    assert codecache.stats["memory"] >= before["memory"] + 1


def test_clear_disk_cache_empties_the_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("FGRAD_CACHE_DIR", str(tmp_path))
    src = "def run():\n    return [1]\n"
    codecache._write(codecache._key(src), compile(src, "c", "exec"))
    assert list(tmp_path.rglob("*.code"))
    codecache.clear_disk_cache()
    assert not list(tmp_path.rglob("*.code"))
