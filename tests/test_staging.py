"""make_graph: a function traced once into a Graph, replayed on new values exactly as eagerly.

Generated from the table: every entry's forward call, its VJP and its JVP, staged and replayed
on new random values of the same shapes, equal the eager values bit for bit. No graph holds a
guard (a value its Python read) but those of the strict list ``GUARDED``, each with its
reason; those refuse a replay with GuardError where the value read came out otherwise.
"""
import sys
import threading
import zlib

import numpy as onp
import pytest

import fgrad
import fgrad.tools.check  # noqa: F401  (the whole table, fgrad.scipy's entries too with scipy)
import fgrad.numpy as np
from fgrad.traces.passes import optimize
from fgrad.core.pytree import tree_flatten
from fgrad.core.table import checked
from fgrad.testing import as_function, random_case
from test_vmap import READS_VALUES

ENTRIES = checked()


def _equal(a, b):
    la, lb = tree_flatten(a)[0], tree_flatten(b)[0]
    assert len(la) == len(lb)
    for x, y in zip(la, lb):
        assert onp.result_type(x) == onp.result_type(y)
        onp.testing.assert_array_equal(x, y)


# The entries whose staged graphs keep a guard, and why: what remains is numpy's own meaning
# (a result whose shape or dtype depends on the values), never a derivative rule
# that reads one. Strict: an entry off the list fails on a guard, one on it fails without.
_SHAPE = "the result's shape depends on the values"
_DTYPE = "numpy gives a real or a complex result by the values (a dtype guard)"
GUARDED = {**dict.fromkeys(READS_VALUES, _SHAPE),
           **dict.fromkeys(["linalg.eig", "linalg.eigvals", "np.linalg.eig",
                            "np.linalg.eigvals", "scipy.linalg.logm", "scipy.linalg.sqrtm",
                            "scipy.linalg.eig", "scipy.linalg.eigvals"],  # (numpy's eig inside)
                           _DTYPE),
           "roots": _SHAPE + "; " + _DTYPE,
           # (vmap batches them, numpy's rank per example; a graph guards the rank)
           **dict.fromkeys(["np.linalg.lstsq", "scipy.linalg.lstsq"],
                           "the residuals' shape depends on the rank")}


def _replays_as_eager(f, first, second, guarded=None):
    """``make_graph(f)`` built on ``first`` gives eager ``f``'s values on ``first`` and on
    ``second`` (or refuses ``second`` by a guard), and so does the graph after every pass
    (``fgrad.traces.passes``). ``guarded``: None, or whether the graph must hold a guard. Returns
    whether ``second`` replayed."""
    graph = fgrad.make_graph(f)(*first)
    if guarded is False:
        assert not graph.guards, f"the graph holds guards (values read): {graph.guards}"
    elif guarded:
        assert graph.guards, "no guard: take the entry off GUARDED"
    shortened = optimize(graph)
    _equal(graph(*first), f(*first))
    _equal(shortened(*first), f(*first))
    try:
        got = graph(*second)
    except fgrad.GuardError:
        assert graph.guards, "a GuardError from a graph without guards"
        with pytest.raises(fgrad.GuardError):
            shortened(*second)
        return False
    _equal(got, f(*second))
    _equal(shortened(*second), got)
    return True


@pytest.mark.parametrize("name", sorted(ENTRIES))
def test_every_entry_forward_vjp_and_jvp_replay_to_the_eager_values(name):
    prim = ENTRIES[name]
    rng = onp.random.default_rng(zlib.crc32(name.encode()))
    case = prim.spec.cases[0]
    args1, params = random_case(prim, rng, case)
    args2, _ = random_case(prim, rng, case)
    f, xs1 = as_function(prim, args1, params)
    xs2 = as_function(prim, args2, params)[1]
    _replays_as_eager(f, xs1, xs2, guarded=name in GUARDED)
    out = f(*xs1)
    ct = tree_flatten(out)[0]
    if len(ct) != 1 or onp.result_type(ct[0]).kind not in "fc":
        return  # (several outputs, or an integer one: the forward replay is the check)
    seed = onp.ones_like(ct[0])

    def pullback(*xs):
        return fgrad.vjp(f, *xs)[1](seed)

    def pushforward(*xs):
        return fgrad.jvp(f, xs, tuple(onp.ones_like(x) for x in xs))

    _replays_as_eager(pullback, xs1, xs2, guarded=None if name in GUARDED else False)
    _replays_as_eager(pushforward, xs1, xs2, guarded=None if name in GUARDED else False)


def test_the_listing_names_each_node_by_its_function_with_shapes_and_dtypes():
    graph = fgrad.make_graph(lambda x: np.sum(np.sin(x) * 2.0))(onp.ones(3, onp.float32))
    text = str(graph)
    assert "v0:f32[3]" in text and "= sin v0" in text and "= multiply v1 c0" in text
    assert text.splitlines()[-2].strip().startswith("return v")
    dot = graph.to_dot()
    assert dot.startswith("digraph") and "v0 -> v1;" in dot
    # ``x ** y`` is numpy's operator, a primitive of its own (``power_operator``), listed
    # by numpy's name for it
    text = str(fgrad.make_graph(lambda x, y: x ** y)(onp.ones(2), onp.ones(2)))
    assert "v2:f64[2] = power v0 v1" in text and "power_operator" not in text


def test_grad_graph_holds_the_backward_pass_as_nodes_and_replays_on_many_feeds():
    # the seeds' example: y = x1 * x2 + exp(x1) ... differentiated once, run on many feeds
    def f(x1, x2):
        return np.log(x1) + x1 * x2 - np.sin(x2)

    df = fgrad.grad(f, argnums=(0, 1))
    graph = fgrad.make_graph(df)(0.6, 0.2)
    names = [n.prim.name for n in graph.nodes]
    assert "cos" in names and "divide" in names  # d sin = cos, d log = 1/x, as nodes
    for x1, x2 in [(0.6, 0.2), (2.0, 5.0), (1.5, -3.0)]:
        _equal(graph(x1, x2), df(x1, x2))
    assert graph.guards == []


def test_a_branch_on_a_traced_value_is_a_guard_checked_at_each_replay():
    def f(x):
        return np.sin(x) if x > 0 else np.cos(x)

    graph = fgrad.make_graph(f)(1.0)
    assert len(graph.guards) == 1 and "guard" in str(graph)
    _equal(graph(2.0), f(2.0))  # same side of the branch
    with pytest.raises(fgrad.GuardError, match="came out differently"):
        graph(-1.0)
    # the guard holds under a transform too: grad's tape compares one level down
    g = fgrad.make_graph(fgrad.grad(f))(1.0)
    _equal(g(0.5), fgrad.grad(f)(0.5))
    with pytest.raises(fgrad.GuardError):
        g(-0.5)


def test_an_output_shape_numpy_picks_by_the_values_is_guarded():
    # roots drops leading zeros: a replay on a polynomial with fewer roots returned numpy's
    # shorter array into a graph traced for more (len(r) was a constant: 2.0, eagerly 0.0)
    def f(p):
        r = np.roots(p)
        return np.sum(r * np.arange(len(r)))

    two, one = onp.array([1.0, -3.0, 2.0]), onp.array([0.0, 1.0, -2.0])
    graph = fgrad.make_graph(f)(two)
    assert "guard v1.shape == (2,)" in str(graph)
    _equal(graph(onp.array([1.0, -5.0, 6.0])), f(onp.array([1.0, -5.0, 6.0])))
    for run in (graph, lambda p: graph.interpret([p])):
        with pytest.raises(fgrad.GuardError, match="the shape numpy's fgrad.numpy.roots chose"):
            run(one)
    staged = fgrad.jit(f)
    _equal(staged(two), f(two))
    _equal(staged(one), f(one))  # (traced anew)


def test_grad_staged_on_a_view_with_gaps_equals_eager_bit_for_bit():
    # eagerly grad's tape computes on its copy of the input, contiguous where the input was a
    # view with gaps (a column slice, a strided view); a sum or an einsum adds in another
    # order there: jit(grad(f)) on such a view differed in the last bits, first call included
    def f(x):
        return np.linalg.norm(np.einsum("ij,kj->ik", x, x)) + np.sum(x * x)

    rng = onp.random.default_rng(105)
    big = rng.standard_normal((600, 600))
    for x in (big[::2, ::3], big[:, :200], rng.standard_normal((6, 4))[::2]):
        assert not x.flags.c_contiguous
        want = fgrad.grad(f)(x)
        staged = fgrad.jit(fgrad.grad(f))
        _equal(staged(x), want)  # (the first call)
        _equal(staged(onp.ascontiguousarray(x)), fgrad.grad(f)(onp.ascontiguousarray(x)))
        _equal(staged(x), want)  # (a replay)
        # the value beside the gradient reads the view itself, as eagerly
        both = fgrad.jit(lambda x: (fgrad.grad(f)(x), np.sum(x, axis=0)))
        for _ in range(2):
            _equal(both(x)[1], onp.sum(x, axis=0))
            _equal(both(x)[0], want)


def test_a_closed_over_array_changed_in_place_is_read_anew_under_grad_too():
    W = onp.array([1.0, 2.0, 3.0])
    f = fgrad.grad(lambda x: np.sum(np.sin(x * W)))
    x = onp.array([0.1, 0.2, 0.3])
    graph = fgrad.make_graph(f)(x)
    W[:] = [4.0, 5.0, 6.0]
    _equal(graph(x), f(x))


def test_structure_shape_and_dtype_of_new_arguments_are_checked_by_name():
    graph = fgrad.make_graph(lambda p: np.sum(p["a"] * p["b"]))(
        {"a": onp.ones(2), "b": onp.ones(2)})
    with pytest.raises(TypeError, match="structure"):
        graph({"a": onp.ones(2)})
    with pytest.raises(ValueError, match=r"input leaf 1 has shape \(3,\)"):
        graph({"a": onp.ones(2), "b": onp.ones(3)})
    with pytest.raises(ValueError, match="dtype float32"):
        graph({"a": onp.ones(2), "b": onp.ones(2, onp.float32)})


def test_static_arguments_are_fixed_and_left_out_of_the_call():
    graph = fgrad.make_graph(lambda x, n: x ** n, static_argnums=1)(2.0, 3)
    assert float(graph(3.0)) == 27.0


def test_a_tracer_of_an_outer_transform_closed_over_is_refused_by_name():
    def outer(y):
        graph = fgrad.make_graph(lambda x: x * y)(1.0)
        return graph(1.0)

    with pytest.raises(fgrad.ClosedOverTracerError, match="make_graph: multiply"):
        fgrad.grad(outer)(2.0)


def test_an_exception_inside_f_propagates_and_the_next_trace_works():
    def f(x):
        if x > 5:
            raise RuntimeError("too big")
        return x * 2.0

    with pytest.raises(RuntimeError, match="too big"):
        fgrad.make_graph(f)(6.0)
    assert float(fgrad.make_graph(f)(1.0)(2.0)) == 4.0


def test_four_threads_replay_one_graph_at_once():
    graph = fgrad.make_graph(fgrad.grad(lambda x: np.sum(np.tanh(x) ** 2)))(onp.ones(50))
    xs = [onp.linspace(-1, 1, 50) * k for k in range(4)]
    results = [None] * 4

    def work(k):
        for _ in range(50):
            results[k] = graph(xs[k])

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    for k in range(4):
        _equal(results[k], fgrad.grad(lambda x: np.sum(np.tanh(x) ** 2))(xs[k]))


def test_eager_transforms_do_not_see_staging():
    # a tape made outside staging still copies its constants (the sharing is staging's)
    W = onp.array([1.0, 2.0])
    out, f_vjp = fgrad.vjp(lambda x: x * W, onp.array([1.0, 1.0]))
    W[:] = 100.0
    _equal(f_vjp(onp.ones(2)), (onp.array([1.0, 2.0]),))
    assert "fgrad.traces.staging" in sys.modules
