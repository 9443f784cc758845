"""No import cycle among fgrad's modules: a static graph of the module-level imports.

One kind of edge is left out, and named here: a module's import of a package above it
(``import fgrad.numpy as fnp`` in the rule families, whose rules call the namespace's functions
when they run, and ``fgrad.numpy.linalg``'s modules importing their package). Python imports a
package before its modules anyway, so these cannot make an import fail. Everything else must
form no cycle: the circle ``broadcasting`` <-> ``layout`` <-> ``reductions`` that the
sum/broadcast transpose pair made is gone (the pair lives in ``broadcasting``).

And the core depends only downward: the modules under the table (dispatch, tracers, the table
itself) import nothing of ``fgrad.numpy`` or of the traces and transforms built on them, so a
tracer's array surface and the traces' use of ``add``/``real`` come from above, not through a
link filled in later.
"""
import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parent.parent / "fgrad"


def _modules():
    mods = {}
    for p in ROOT.rglob("*.py"):
        parts = list(p.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts = parts[:-1]
        mods[".".join(parts)] = p
    return mods


def _imports(mod, path, mods):
    """The fgrad modules ``mod`` imports at module level."""
    package = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    found = set()
    for node in ast.parse(path.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = package
            for _ in range(node.level - 1):
                base = base.rsplit(".", 1)[0]
            name = node.module if not node.level else (
                f"{base}.{node.module}" if node.module else base)
            found.add(name)
            found.update(f"{name}.{a.name}" for a in node.names)
    return {d for d in found if d in mods and d != mod and not mod.startswith(d + ".")}


def _cycles(graph):
    state, stack, cycles = {}, [], []

    def visit(u):
        state[u] = "open"
        stack.append(u)
        for v in sorted(graph[u]):
            if state.get(v) == "open":
                cycles.append(stack[stack.index(v):] + [v])
            elif v not in state:
                visit(v)
        stack.pop()
        state[u] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m)
    return cycles


def test_no_import_cycle_among_fgrads_modules():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    assert "fgrad.numpy.broadcasting" in graph["fgrad.numpy.reductions"]  # the graph is read
    assert _cycles(graph) == []


# the bottom of the core: the table and what it stands on
_CORE = ("fgrad.core.errors", "fgrad.core.values", "fgrad.core.other_arrays", "fgrad.core.tracer",
         "fgrad.core.table", "fgrad.core.pytree")


def _closure(graph, start):
    seen, todo = set(), [start]
    while todo:
        for d in graph[todo.pop()]:
            if d not in seen:
                seen.add(d)
                todo.append(d)
    return seen


def test_the_core_under_the_table_imports_nothing_above_it():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    for m in _CORE:
        assert _closure(graph, m) <= set(_CORE), (m, _closure(graph, m) - set(_CORE))
    # the traces stand on fgrad.numpy (their tracers' array surface, the add they sum with)
    assert "fgrad.numpy.array_tracer" in _closure(graph, "fgrad.traces.tape")


def test_the_checker_finds_a_cycle():
    assert _cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": set()}) == [["a", "b", "c", "a"]]


# packages whose modules count as one layer: a rule family or an adapter is one level of the
# stack, whatever its inner modules import of each other
_PACKAGES = ("fgrad.numpy", "fgrad.scipy", "fgrad.autograd", "fgrad.testing")


def _layers(graph):
    """The longest import chain, in modules, with each of ``_PACKAGES`` one module."""
    def node(m):
        return next((p for p in _PACKAGES if m == p or m.startswith(p + ".")), m)

    collapsed = {}
    for m, deps in graph.items():
        collapsed.setdefault(node(m), set()).update(node(d) for d in deps)
    depth = {}

    def visit(m):
        if m not in depth:
            depth[m] = 1 + max((visit(d) for d in collapsed[m] if d != m), default=0)
        return depth[m]

    return max(visit(m) for m in collapsed)


def test_the_core_is_a_few_layers_deep():
    mods = _modules()
    graph = {m: _imports(m, p, mods) for m, p in mods.items()}
    # values <- tracer <- table <- fgrad.numpy <- tape <- transpose <- rules <- dual
    # <- transforms <- fgrad.testing <- tools.check <- fgrad.__main__ (docs/architecture.md)
    assert _layers(graph) <= 12
    assert _layers({"a": {"b"}, "b": {"c"}, "c": set()}) == 3
