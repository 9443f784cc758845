"""jit: one test per clause of SPEC's "Staging: build once, run many" for jit, each against the
eager call (numpy.array_equal, dtype and structure), and the graph passes on whole programs."""
import functools
import re
import threading
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad import jit
from fgrad.jitting import MAX_TRACES, staged as quietly_staged
from fgrad.traces.passes import cse, dce, fold_constants, optimize, remove_noops
from fgrad.core.pytree import tree_flatten


def _same(a, b):
    la, ta = tree_flatten(a)
    lb, tb = tree_flatten(b)
    assert ta == tb
    for x, y in zip(la, lb):
        assert onp.result_type(x) == onp.result_type(y)
        assert onp.array_equal(x, y, equal_nan=True), (x, y)


def loss(w, x):
    h = np.tanh(x @ w["a"] + w["b"])
    return np.sum(h ** 2) / x.shape[0]


def _params(rng):
    return {"a": rng.normal(size=(3, 4)), "b": rng.normal(size=4)}


def test_jit_equals_eager_on_new_values_and_runs_no_python_on_a_replay():
    calls = []

    def f(w, x):
        calls.append(1)
        return {"loss": loss(w, x), "n": x.shape[0], "w": w["b"] * 2}

    jf = jit(f)
    rng = onp.random.default_rng(0)
    for _ in range(4):
        w, x = _params(rng), rng.normal(size=(5, 3))
        _same(jf(w, x), f(w, x))
    assert len(calls) == 4 + 1  # one trace, then replays (the other 4 are the eager calls)


@pytest.mark.parametrize("compose", ["jit(grad)", "grad(jit)", "jit(value_and_grad)",
                                     "jit(jvp)", "jvp(jit)", "vjp(jit)", "jit(hessian)",
                                     "hessian(jit)", "jacfwd(jit)", "jacrev(jit)", "jit(jit)",
                                     "make_graph(jit)", "jit(grad(jit))"])
def test_jit_composes_with_the_transforms_in_both_orders(compose):
    def f(x):
        return np.sum(np.sin(x) * x ** 2) + np.prod(np.cos(x))

    ones = onp.ones(3)
    forms = {
        "jit(grad)": (jit(fgrad.grad(f)), fgrad.grad(f)),
        "grad(jit)": (fgrad.grad(jit(f)), fgrad.grad(f)),
        "jit(value_and_grad)": (jit(fgrad.value_and_grad(f)), fgrad.value_and_grad(f)),
        "jit(jvp)": (jit(lambda x: fgrad.jvp(f, (x,), (ones,))),
                     lambda x: fgrad.jvp(f, (x,), (ones,))),
        "jvp(jit)": (lambda x: fgrad.jvp(jit(f), (x,), (ones,)),
                     lambda x: fgrad.jvp(f, (x,), (ones,))),
        "vjp(jit)": (lambda x: fgrad.vjp(jit(f), x)[1](1.0), lambda x: fgrad.vjp(f, x)[1](1.0)),
        "jit(hessian)": (jit(fgrad.hessian(f)), fgrad.hessian(f)),
        "hessian(jit)": (fgrad.hessian(jit(f)), fgrad.hessian(f)),
        "jacfwd(jit)": (fgrad.jacfwd(jit(np.sin)), fgrad.jacfwd(np.sin)),
        "jacrev(jit)": (fgrad.jacrev(jit(np.sin)), fgrad.jacrev(np.sin)),
        "jit(jit)": (jit(jit(f)), f),
        "make_graph(jit)": (lambda x: fgrad.make_graph(jit(f))(ones)(x), f),
        "jit(grad(jit))": (jit(fgrad.grad(jit(f))), fgrad.grad(f)),
    }
    staged, eager = forms[compose]
    rng = onp.random.default_rng(1)
    for _ in range(3):
        x = rng.normal(size=3)
        _same(staged(x), eager(x))


def test_grad_of_jit_runs_the_graph_not_the_python():
    calls = []

    def f(x):
        calls.append(1)
        return np.sum(np.exp(x))

    g = fgrad.grad(jit(f))
    for v in (1.0, 2.0, 3.0):
        _same(g(onp.full(2, v)), onp.exp(onp.full(2, v)))
    assert len(calls) == 1


def test_grad_of_jit_runs_generated_code_for_both_passes(monkeypatch):
    # under reverse mode the call is one tape node: the staged VJP's forward half now, its
    # backward half in the walk, both generated code (it ran f's graph node by node)
    from fgrad.traces.graph import Graph
    rng = onp.random.default_rng(0)
    xs, w1, w2 = rng.normal(size=(8, 16)), rng.normal(size=(16, 16)), rng.normal(size=(16, 1))

    def loss(w1, w2):
        return np.sum((np.tanh(xs @ w1) @ w2) ** 2)

    g = fgrad.grad(jit(loss), argnums=(0, 1))
    want = fgrad.grad(loss, argnums=(0, 1))(w1, w2)
    for got in (g(w1, w2), g(w1, w2)):
        for a, b in zip(got, want):
            onp.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    vg = fgrad.value_and_grad(jit(loss))
    vg(w1, w2)  # (its staging runs f's graph on the VJP's tracers, node by node, once)
    with monkeypatch.context() as m:
        m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
        g(2 * w1, w2)
        assert vg(w1, w2)[0] == loss(w1, w2)
    # a tape also walked forward (linearize, jacfwd; make_tape's, shown) keeps f's nodes: it
    # would transpose the backward half at every sweep
    tape = fgrad.make_tape(lambda w: jit(loss)(w, w2))(w1)
    assert "jit_vjp" not in [e.primitive for e in tape.entries]
    _, push = fgrad.linearize(lambda w: jit(loss)(w, w2), w1)
    onp.testing.assert_allclose(push(w1), onp.sum(want[0] * w1), rtol=1e-12)


def test_grad_of_jit_with_several_outputs_runs_generated_code(monkeypatch):
    # has_aux, a dict of outputs: the first float output is the call's node, each other float
    # output a node after it, an int as it came; a walk reaching any of them runs the backward
    # half once with every cotangent (zeros for the outputs it did not reach)
    from fgrad.traces.graph import Graph
    rng = onp.random.default_rng(0)
    w, x = rng.normal(size=(4, 3)), rng.normal(size=(5, 4))

    def f(w):
        h = np.tanh(x @ w)
        return np.sum(h ** 2), {"h": h, "n": 3, "m": np.mean(h).astype(np.float32),
                                "z": np.exp(1j * h[0])}

    jf = jit(f)
    forms = {
        "has_aux": lambda f: fgrad.value_and_grad(f, has_aux=True)(w),
        "the first": lambda f: fgrad.grad(lambda v: f(v)[0])(w),
        "a later one": lambda f: fgrad.grad(lambda v: np.sum(f(v)[1]["h"] ** 3))(w),
        "two": lambda f: fgrad.grad(lambda v: f(v)[0] * f(v)[1]["m"])(w),
        # (a complex output beside the float ones lost its derivative: not counted as one)
        "a complex one": lambda f: fgrad.grad(
            lambda v: np.sum(np.real(f(v)[1]["z"] * (1 + 2j))) + f(v)[0])(w),
        "vjp, walked twice": lambda f: (lambda back: [back((2.0, x[:, :3])) for _ in "ab"])(
            fgrad.vjp(lambda v: (f(v)[0], f(v)[1]["h"]), w)[1]),
    }
    for name, form in forms.items():
        want = form(f)
        form(jf)
        with monkeypatch.context() as m:
            m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
            got = form(jf)
        for a, b in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
            assert onp.result_type(a) == onp.result_type(b), name
            single = onp.result_type(b) == onp.float32
            onp.testing.assert_allclose(a, b, rtol=1e-6 if single else 1e-13, atol=1e-15,
                                        err_msg=name)


def test_grad_of_jit_under_vmap_or_jvp_runs_generated_code(monkeypatch):
    # per-example gradients and Hessian-vector products through a jitted loss: the staged
    # VJP's halves run as staged functions on the batches or dual numbers below the tape
    # (jit(vmap(half)), jit(jvp(half))); a graph that branches runs node by node, as before
    from fgrad.traces.graph import Graph
    rng = onp.random.default_rng(0)
    ws, x, t = rng.normal(size=(5, 4, 3)), rng.normal(size=(6, 4)), rng.normal(size=(4, 3))

    def loss(w, x):
        return np.sum(np.tanh(x @ w) ** 2)

    def with_aux(w, x):
        return loss(w, x), np.mean(w)

    def branchy(w, x):
        return np.sum(np.sin(x @ w)) if np.sum(w) > 0 else np.sum(np.cos(x @ w))

    forms = {
        "vmap(grad)": lambda g: fgrad.vmap(fgrad.grad(g), (0, None))(ws, x),
        "vmap(grad), has_aux": lambda g: fgrad.vmap(fgrad.grad(g, has_aux=True),
                                                    (0, None))(ws, x),
        "vmap(grad), x batched": lambda g: fgrad.vmap(lambda xx: fgrad.grad(g)(ws[0], xx))(
            onp.stack([x, 2 * x])),
        "hvp": lambda g: fgrad.jvp(lambda w: fgrad.grad(g)(w, x), (ws[0],), (t,)),
    }
    for f, name in ((loss, "vmap(grad)"), (with_aux, "vmap(grad), has_aux"),
                    (loss, "vmap(grad), x batched"), (loss, "hvp"), (branchy, "hvp")):
        jf, form = jit(f), forms[name]
        want = form(f)
        form(jf)
        with monkeypatch.context() as m:
            if f is not branchy:
                m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
            got = form(jf)
        for a, b in zip(tree_flatten(got)[0], tree_flatten(want)[0]):
            onp.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-14, err_msg=name)


def test_linearize_jacfwd_and_hessian_of_jit_run_generated_code(monkeypatch):
    # a tape walked forward only (linearize, jacfwd, and so hessian's outer tape) records a
    # jitted call as one node: f's staged JVP cut in two, the forward half run at once, the
    # tangent half at each sweep (under jacfwd's vmap, jit(vmap(tangent half))); it ran f's
    # graph node by node. Equal to the eager transform bit for bit; a branch stages again.
    from fgrad.traces.graph import Graph
    rng = onp.random.default_rng(0)
    w, b, x, t = (rng.normal(size=(6, 6)) / 3, rng.normal(size=6), rng.normal(size=6),
                  rng.normal(size=6))
    calls = []

    def layer(v):
        calls.append(1)
        return np.tanh(w @ v + b)

    def outputs(v, s):  # (several outputs: complex, an int, one of no input, a Python float)
        h = np.sin(v) * s
        return {"h": h, "s": np.sum(h ** 2), "z": np.exp(1j * h[:2]), "n": 3, "c": np.ones(2)}

    def branchy(v):
        return np.sin(v) if np.sum(v) > 0 else np.cos(v) * v

    def sq(v):
        return np.sum(layer(v) ** 2)

    def real(d):
        return {k: d[k] for k in ("h", "s", "c")}

    forms = {
        "linearize": (layer, lambda f, v: (lambda push: [push(t), push(2 * t)])(
            fgrad.linearize(f, v)[1])),
        "linearize, several outputs": (outputs, lambda f, v: (lambda push: [push(t, 2.0)])(
            fgrad.linearize(f, v, 1.5)[1])),
        "jacfwd": (layer, lambda f, v: fgrad.jacfwd(f)(v)),
        "jacfwd, several outputs": (outputs, lambda f, v: fgrad.jacfwd(
            lambda *a: real(f(*a)), argnums=(0, 1))(v, 1.5)),
        "hessian": (sq, lambda f, v: fgrad.hessian(f)(v)),
        "vmap(jacfwd)": (layer, lambda f, v: fgrad.vmap(fgrad.jacfwd(f))(onp.stack([v, -v]))),
        "jacfwd(jacfwd)": (sq, lambda f, v: fgrad.jacfwd(fgrad.jacfwd(f))(v)),
        "jacfwd, a branch": (branchy, lambda f, v: [fgrad.jacfwd(f)(v), fgrad.jacfwd(f)(-v)]),
    }
    for name, (f, form) in forms.items():
        jf = jit(f)
        _same(form(jf, x), form(f, x))  # (the first call: staged, and run at once)
        del calls[:]
        with monkeypatch.context() as m:
            m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
            for v in (2 * x, x - 1):
                _same(form(jf, v), form(f, v))
        if f is sq:
            assert len(calls) == 2, name  # (the eager calls only: f's Python ran no more)


def test_grad_of_jit_with_several_outputs_traces_once():
    calls = []

    def f(w):
        calls.append(1)
        return np.sum(w), np.sum(w * w)

    staged = jit(f)
    x = onp.arange(3.0)
    for _ in range(3):
        _same(fgrad.grad(lambda w: staged(w)[1])(x), 2 * x)
    assert len(calls) == 1


def test_grad_of_jit_where_the_branch_changes_or_the_function_draws():
    def f(x):
        return np.sum(x ** 2) if np.sum(x) > 0 else np.sum(np.sin(x))

    g = fgrad.grad(jit(f))
    for v in (1.0, -1.0, 2.0, -2.0):  # (a second staging for the other branch, then both)
        _same(g(onp.full(3, v)), fgrad.grad(f)(onp.full(3, v)))
    noisy = fgrad.grad(jit(lambda x: np.sum(x * np.random.normal(size=3))))
    for _ in range(2):  # (node by node, drawing as the eager call does)
        np.random.seed(0)
        got = noisy(onp.ones(3))
        np.random.seed(0)
        _same(got, onp.random.normal(size=3))


def test_jvp_vmap_and_jet_of_jit_run_the_transformed_functions_code(monkeypatch):
    # a jitted call under jvp, vmap or jet runs jit(jvp(f)), jit(vmap(f)) or jit(jet(f)) one
    # level down, staged once per signature: generated code (it ran f's graph node by node on
    # the dual numbers, batches or series), equal to the eager transform of f bit for bit
    from fgrad.traces.graph import Graph
    rng = onp.random.default_rng(0)
    x, xs = rng.normal(size=(8, 16)), rng.normal(size=(5, 8, 16))
    w, t, w2 = rng.normal(size=(16, 16)), rng.normal(size=(16, 16)), rng.normal(size=(16, 1))
    calls = []

    def layer(x, w, scale):
        calls.append(1)
        h = np.tanh(x @ w)
        # (an int, a value of no input and an input as it came: untraced under jvp,
        # broadcast under vmap, or passed out as they are with out_axes None)
        return {"loss": np.sum((h @ w2) ** 2) * scale, "h": h, "n": 3, "c": np.sum(w2),
                "w": w}

    forms = {
        "jvp": lambda f, w: fgrad.jvp(lambda w_: f(x, w_, 2.0), (w,), (t,)),
        "jvp, a Python float": lambda f, w: fgrad.jvp(lambda s: f(x, w, s), (2.0,), (1.0,)),
        "vmap": lambda f, w: fgrad.vmap(f, (0, None, None))(xs, w, 2.0),
        "vmap, out_axes None": lambda f, w: fgrad.vmap(f, (0, None, None), out_axes={
            "loss": 0, "h": 0, "n": None, "c": None, "w": None})(xs, w, 2.0),
        "vmap on axis 1": lambda f, w: fgrad.vmap(f, (None, 1, None))(
            x, onp.stack([w, 2 * w, t], 1), 2.0),
        "vmap(vmap)": lambda f, w: fgrad.vmap(fgrad.vmap(f, (0, None, None)), (None, 0, None))(
            xs, onp.stack([w, t]), 2.0),
        "vmap(jvp)": lambda f, w: fgrad.vmap(
            lambda x_: fgrad.jvp(lambda w_: f(x_, w_, 2.0), (w,), (t,)))(xs),
        "jvp(vmap)": lambda f, w: fgrad.jvp(
            lambda w_: fgrad.vmap(f, (0, None, None))(xs, w_, 2.0), (w,), (t,)),
        "jet": lambda f, w: fgrad.jet(lambda w_: f(x, w_, 2.0), (w,), ([t, -t, t],)),
        "vmap(jet)": lambda f, w: fgrad.vmap(
            lambda x_: fgrad.jet(lambda w_: f(x_, w_, 2.0), (w,), ([t, t],)))(xs),
    }
    for name, form in forms.items():
        jf, eager = jit(layer), functools.partial(form, layer)
        del calls[:]
        _same(form(jf, w), eager(w))  # (the first call: the trace's own values)
        assert len(calls) == 2, name  # (the trace, and the eager call)
        with monkeypatch.context() as m:
            m.setattr(Graph, "interpret", lambda self, leaves: pytest.fail("node by node"))
            for v in (2 * w, w - 1):
                got = form(jf, v)
                _same(got, eager(v))
        assert len(calls) == 4, name  # (only the eager calls)


def test_static_arguments_by_position_and_name_and_unhashable_ones():
    calls = []

    def f(x, n, scale=1.0):
        calls.append(n)
        for _ in range(n):
            x = np.sin(x) * scale
        return x

    jf = jit(f, static_argnums=1, static_argnames="scale")
    x = onp.linspace(0, 1, 3)
    for n, scale in ((2, 1.0), (3, 1.0), (2, 1.0), (2, 0.5), (3, 1.0)):
        _same(jf(x, n, scale=scale), f(x, n, scale=scale))
    assert len(calls) == 3 + 5  # (2, 1.0), (3, 1.0), (2, 0.5) traced once each
    _same(jf(x, 2), f(x, 2))  # a static argument left to its default
    with pytest.raises(TypeError, match=r"jit: the static argument 1 must be hashable"):
        jit(lambda x, s: x, static_argnums=1)(x, [1, 2])
    with pytest.raises(ValueError, match=r"static_argnums=\(3,\) does not fit a call with 1"):
        jit(lambda x: x, static_argnums=3)(x)


def test_a_partial_function_and_a_callable_object_are_jitted_under_their_names():
    def f(scale, x, shift=0.0):
        return scale * np.sin(x) + shift

    class Scaled:
        def __call__(self, x):
            return 2.0 * np.tanh(x)

    x = onp.linspace(0, 1, 3)
    part = functools.partial(functools.partial(f, 2.0), shift=0.5)
    for fun, name in [(part, "f"), (Scaled(), "Scaled")]:
        jf = jit(fun)
        _same(jf(x), fun(x))
        _same(jf(2 * x), fun(2 * x))
        _same(fgrad.grad(lambda v: np.sum(jf(v)))(x), fgrad.grad(lambda v: np.sum(fun(v)))(x))
        assert jf.__name__ == name
        assert next(iter(jf.cache.values()))[0].name == f"jit({name})"


def test_a_new_shape_or_dtype_is_traced_again():
    jf = jit(lambda x: np.sum(x ** 2))
    for x in (onp.ones(3), onp.ones(4), onp.ones(3, onp.float32), onp.ones((2, 2)), 2.0, 3):
        _same(jf(x), np.sum(onp.asarray(x) ** 2))
    assert len(jf.cache) == 6


def test_both_sides_of_a_branch_called_alternately_are_staged_once_each():
    calls = []

    def f(x):
        calls.append(1)
        if np.sum(x) > 0:
            return np.sin(x)
        return np.cos(x) * 2.0

    jf = jit(f)
    values = [onp.array([1.0, 2.0]), onp.array([-1.0, -2.0])] * 3
    for v in values:
        _same(jf(v), f(v))
    assert len(calls) == 2 + len(values)
    for v in values:  # and under grad, whose branch reads the same boolean
        _same(jit(fgrad.grad(lambda x: np.sum(f(x))))(v), fgrad.grad(lambda x: np.sum(f(x)))(v))


def test_containers_of_arrays_that_differ_only_in_their_structure_are_staged_apart():
    # (a call of arrays in tuples, lists and dicts finds its graphs by a flat key, not the
    # tree's TreeDef: each of these has one array of shape (2,) or two, but another tree)
    def f(t):
        return fgrad.tree_util.tree_map(lambda v: np.sin(v) * 2.0, t)

    a, b = onp.array([0.5, 1.0]), onp.array([2.0, 3.0])
    trees = [[a, b], (a, b), [a, [b]], [[a], b], {"a": a, "b": b}, {"a": a, "c": b},
             {0: a, 1: b}, {"x": [a, b]}, {"x": (a, b)}, [a, b.astype(onp.float32)],
             [a, b[:1]], ((a,), b), [[a, b]], [a], a]
    jf = jit(f)
    for _ in range(2):  # traced, then replayed
        for t in trees:
            _same(jf(t), f(t))
    assert len(jf.cache) == len(trees)
    with pytest.raises(TypeError, match="keys of several types"):
        jf({1: a, "b": b})


def test_a_branch_on_a_call_found_by_its_flat_key_traces_the_other_side_once():
    calls = []

    def f(p):
        calls.append(1)
        return np.sum(p["w"] ** 2) if np.sum(p["w"]) > 0 else np.sum(p["b"])

    jf = jit(f)
    values = [{"w": onp.array([1.0, 2.0]), "b": onp.ones(3)},
              {"w": onp.array([-1.0, -2.0]), "b": onp.ones(3)}] * 3
    for v in values:
        _same(jf(v), f(v))
    assert len(calls) == 2 + len(values)


def test_a_python_int_taken_from_a_traced_value_is_a_guard():
    def f(x, n):
        out = x
        for _ in range(int(n)):  # int() of a traced value: guarded, traced per value
            out = out * x
        return out

    jf = jit(f)
    for n in (1, 3, 1, 2, 3):
        _same(jf(onp.ones(2) * 1.5, onp.array(n)), f(onp.ones(2) * 1.5, onp.array(n)))
    assert sum(len(v) for v in jf.cache.values()) == 3


def test_a_guard_failing_on_most_calls_falls_back_to_eager_with_a_warning():
    def f(x):
        return np.sin(x) if float(x) > float(np.round(x)) else np.cos(x)

    jf = jit(f)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        for v in onp.linspace(0.1, 5.3, 40):
            _same(jf(onp.float64(v)), f(onp.float64(v)))
    assert len(jf.cache[next(iter(jf.cache))]) == MAX_TRACES
    assert len(caught) == 1
    assert str(caught[0].message).startswith("jit(f): traced 8 times for one input signature")
    # fgrad's own staging of a function its rules call (an ODE's systems), which the user did
    # not write: the same fallback, without the warning
    quiet = quietly_staged(f)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for v in onp.linspace(0.1, 5.3, 40):
            _same(quiet(onp.float64(v)), f(onp.float64(v)))
    assert len(quiet.cache[next(iter(quiet.cache))]) == MAX_TRACES


def test_random_numbers_are_drawn_anew_at_every_call_as_eagerly():
    def f(x):
        noise = np.random.normal(size=x.shape)
        if np.sum(x) > 0:  # a branch after a draw: a failing guard must not skip a draw
            return x + noise
        return x - noise * np.random.uniform()

    jf = jit(f)
    xs = [onp.ones(3), -onp.ones(3), onp.ones(3), onp.ones(3), -onp.ones(3)]
    onp.random.seed(3)
    got = [jf(x) for x in xs]
    onp.random.seed(3)
    want = [f(x) for x in xs]
    for a, b in zip(got, want):
        _same(a, b)
    assert not onp.array_equal(got[2], got[3])


def test_a_closed_over_array_changed_in_place_is_read_anew():
    w = onp.ones(3)
    scale = onp.array(2.0)

    def f(x):  # w and scale are constants of the trace, read by fgrad.numpy
        return np.sum(np.exp(w) * x) + np.sum(np.square(w)) * scale + np.sum(np.floor(w))

    jf, jg = jit(f), jit(fgrad.grad(lambda x: f(x) * np.sum(np.sin(w))))
    x = onp.arange(3.0)
    for k in range(3):
        _same(jf(x), f(x))
        _same(jg(x), fgrad.grad(lambda x: f(x) * np.sum(np.sin(w)))(x))
        w[k] = -1.5  # in place, between calls
        scale[...] = k


def test_plain_numpy_on_a_closed_over_array_is_a_constant_of_the_trace():
    w = onp.ones(2)
    jf = jit(lambda x: x * (w ** 2))  # numpy's own ** on a plain array, while tracing
    jf(onp.ones(2))
    w[0] = 3.0
    _same(jf(onp.ones(2)), onp.ones(2))  # as documented (and as in JAX)


def test_an_exception_inside_f_propagates_and_leaves_the_cache_usable():
    def f(x):
        if np.any(x < 0):
            raise ValueError("negative input")
        return np.sqrt(x)

    jf = jit(f)
    _same(jf(onp.ones(2)), onp.ones(2))
    with pytest.raises(ValueError, match="negative input"):
        jf(-onp.ones(2))
    _same(jf(onp.full(2, 4.0)), onp.full(2, 2.0))
    with pytest.raises(ValueError, match="negative input"):
        jf(-onp.ones(2))


def test_side_effects_happen_while_tracing_only():
    seen = []

    def f(x):
        seen.append(x.shape)
        print("tracing")
        return x * 2

    jf = jit(f)
    for _ in range(3):
        jf(onp.ones(2))
    assert seen == [(2,)]


def test_four_threads_calling_one_jitted_function():
    jf = jit(fgrad.grad(lambda x: np.sum(np.sin(x) ** 2) if np.sum(x) > 0 else np.sum(x ** 3)))
    eager = fgrad.grad(lambda x: np.sum(np.sin(x) ** 2) if np.sum(x) > 0 else np.sum(x ** 3))
    errors = []

    def work(seed):
        rng = onp.random.default_rng(seed)
        try:
            for _ in range(50):
                x = rng.normal(size=(int(rng.integers(2, 4)),))
                _same(jf(x), eager(x))
        except Exception as e:  # noqa: BLE001  (reported below)
            errors.append(e)

    threads = [threading.Thread(target=work, args=(s,)) for s in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


def test_a_jit_function_called_while_another_is_traced_runs_into_that_trace():
    calls = []

    @jit
    def inner(x):
        calls.append(1)
        return np.sin(x) * 2.0

    outer = jit(lambda x: np.sum(inner(inner(x))))
    x = onp.linspace(0.1, 1.0, 4)
    _same(outer(x), np.sum(np.sin(np.sin(x) * 2.0) * 2.0))
    assert len(calls) == 2 and inner.cache == {}  # (each call traced into the outer graph)
    _same(outer(x + 1.0), np.sum(np.sin(np.sin(x + 1.0) * 2.0) * 2.0))
    assert len(calls) == 2  # (a replay runs no Python of f, inner's included)
    names = [n.prim.name for n in fgrad.make_graph(inner)(x).nodes]
    assert names == ["sin", "multiply"] and inner.cache == {} and len(calls) == 3


def test_a_jit_function_on_a_tape_inside_a_trace_is_recorded_as_eager_grad_records_it():
    # Eager grad records inner's call as one node (its staged VJP, jit_on_tape), so the
    # cotangent of an argument used inside and outside sums inner's part first. Traced into
    # jit(grad(f)) primitive by primitive, the sums went in another order: a last bit off
    # (11 of 20 draws); now the trace records the same halves.
    calls = []

    @jit
    def inner(a, b):
        calls.append(1)
        return np.tanh(a * b) + a

    def f(x):
        return np.sum((inner(x, x[::-1]) + x * x) * onp.array([0.7, 1.1, 1.3]))

    jf = jit(fgrad.grad(f))
    rng = onp.random.default_rng(0)
    for _ in range(20):
        x = rng.uniform(-1.0, 1.0, 3)
        _same(jf(x), fgrad.grad(f)(x))
    assert len(calls) == 1  # (inner's halves staged once, for its one signature)
    vf = fgrad.vmap(fgrad.grad(f))
    xs = rng.uniform(-1.0, 1.0, (5, 3))
    _same(jit(vf)(xs), vf(xs))


def test_nested_derivatives_with_jit_at_every_level_equal_eager_ones():
    # (3rd, 5th and 6th derivatives were a last bit off: the passes had merged repeated
    # calls before the next grad differentiated them)
    f, g = np.tanh, np.tanh
    for k in range(1, 7):
        f, g = jit(fgrad.grad(f)), fgrad.grad(g)
        for x in (onp.float64(0.4), onp.float64(0.5), onp.float64(-1.3)):
            _same(f(x), g(x))


def test_transforms_of_jit_equal_those_of_f_where_f_computes_a_value_twice():
    # The graph a transform runs keeps both calls: merged, reverse mode would sum their
    # cotangents in another order than grad(f), a last bit off (26 of these 50 elements).
    def f(x):
        e = np.sin(x) * np.exp(x)
        return np.sum(e + np.sin(x) * np.exp(x) * 0.3 + np.sin(x) * np.exp(x) * 1.7)

    x = onp.linspace(-2.0, 2.0, 50)
    for t in (fgrad.grad, fgrad.jacrev, fgrad.hessian):
        jf = t(jit(f))
        for _ in range(3):  # (the first call, the first replay with the passes, a replay)
            _same(jf(x[:8]), t(f)(x[:8]))
    jf = jit(f)
    for _ in range(3):
        _same(jf(x), f(x))
    (graph,) = jf.cache[next(iter(jf.cache))]
    code = [n.prim.name for n in graph.code_graph.nodes]  # (plain values: merged)
    assert [n.prim.name for n in graph.nodes].count("sin") == 3 and code.count("sin") == 1


def test_custom_vjp_rules_are_kept_in_both_orders():
    @fgrad.custom_vjp
    def clip_grad(x):
        return np.sin(x)

    clip_grad.defvjp(lambda x: (np.sin(x), x), lambda x, g: (np.clip(g * np.cos(x), -.1, .1),))

    def f(x):
        return np.sum(clip_grad(x) * x)

    x = onp.linspace(-1, 1, 4)
    for staged in (jit(fgrad.grad(f)), fgrad.grad(jit(f))):
        for v in (x, 2 * x):
            _same(staged(v), fgrad.grad(f)(v))
    _same(jit(f)(3 * x), f(3 * x))


def test_methods_and_keyword_arguments():
    class Model:
        def __init__(self):
            self.w = onp.ones(2)

        @jit
        def predict(self, x, bias=0.0):
            return x @ self.w + bias

    m = Model()
    _same(m.predict(onp.ones((3, 2)), bias=1.0), onp.full(3, 3.0))
    m.w[:] = 2.0  # (an attribute's array changed in place: read anew)
    _same(m.predict(onp.ones((3, 2)), bias=1.0), onp.full(3, 5.0))


def test_each_pass_preserves_the_values_of_a_gradient_graph():
    def f(w, x):
        return loss(w, x) * 1.0 + np.sum(np.reshape(x, x.shape) * np.ones_like(x))

    rng = onp.random.default_rng(5)
    w, x = _params(rng), rng.normal(size=(4, 3))
    graph = fgrad.make_graph(fgrad.grad(f))(w, x)
    for p in (fold_constants, remove_noops, cse, dce, optimize):
        shortened = p(graph)
        for _ in range(3):
            w2, x2 = _params(rng), rng.normal(size=(4, 3))
            _same(shortened(w2, x2), graph(w2, x2))
    assert len(optimize(graph).nodes) < len(graph.nodes)


def test_the_passes_leave_the_graph_they_are_given_as_it_was():
    # (they rewrite the nodes of a copy: a node is the value it computes, which later nodes
    # refer to; only jit's own trace is handed over, optimize(graph, in_place=True))
    def f(x):
        return np.sum(np.reshape(np.sin(x), x.shape) * 1.0 + np.sin(x) * (2.0 * 3.0))

    x = onp.linspace(0.1, 0.9, 4)
    graph = fgrad.make_graph(fgrad.grad(f))(x)
    text, args = str(graph), [list(n.args) for n in graph.nodes]
    for p in (fold_constants, remove_noops, cse, dce, optimize):
        assert len(p(graph).nodes) < len(graph.nodes) or p is dce
        assert str(graph) == text and [list(n.args) for n in graph.nodes] == args
    assert optimize(graph).optimized and not graph.optimized
    _same(graph(x + 1), fgrad.grad(f)(x + 1))


def test_dce_keeps_draws_and_guards_and_cse_merges_repeated_calls():
    def f(x):
        np.random.normal()  # unused, but a replay must draw it as the eager call does
        a, b = np.sin(x), np.sin(x)
        if np.sum(np.cos(x)) > 0:  # guarded, otherwise unused
            pass
        return a + b

    graph = optimize(fgrad.make_graph(f)(onp.ones(2)))
    names = [n.prim.name for n in graph.nodes]
    assert names.count("random.normal") == 1 and names.count("sin") == 1
    assert "cos" in names and len(graph.guards) == 1


def test_cse_merges_a_product_in_either_order_on_reals_only_on_complex_in_one_order():
    # numpy's complex product may use fused multiply-adds rounding by the operands' order:
    # with numpy 2.4 on x86-64 (AVX2), a * b and b * a differ in the last bit on some elements
    rng = onp.random.default_rng(0)
    a = rng.normal(size=(40, 30)) + 1j * rng.normal(size=(40, 30))
    b = rng.normal(size=(40, 30)) + 1j * rng.normal(size=(40, 30))

    def f(x, y):
        return x * y, y * x

    graph = optimize(fgrad.make_graph(f)(a, b))
    assert [n.prim.name for n in graph.nodes] == ["multiply", "multiply"]
    _same(graph(a, b), f(a, b))
    real = optimize(fgrad.make_graph(f)(a.real, b.real))
    assert [n.prim.name for n in real.nodes] == ["multiply"]
    _same(real(a.real, b.real), f(a.real, b.real))


def test_the_generated_code_frees_big_values_after_their_last_use_and_reuses_names():
    graph = fgrad.make_graph(lambda x: np.sum(np.exp(np.sin(x))))(onp.ones(10_000))
    graph(onp.ones(10_000))
    source = graph.compile().source
    assert source.count("del ") == 2  # sin(x) and exp(...): 80 kB each, gone at once
    def chain(x):
        for _ in range(30):
            x = x + np.sin(x) * 0.1
        return np.sum(x)

    graph = fgrad.make_graph(fgrad.grad(chain))(onp.linspace(0, 1, 4))
    run = graph.compile()
    # a local per value live at once (the backward pass keeps the forward's values), not one
    # per node; the values are those of the eager call
    assert len(graph.nodes) > 200 and run.__code__.co_nlocals < len(graph.nodes) / 3
    _same(graph(onp.linspace(1, 2, 4)), fgrad.grad(chain)(onp.linspace(1, 2, 4)))


def test_python_numbers_are_replayed_as_numpy_values_as_traced():
    f = jit(lambda x, y: np.multiply(x, y) + 1)  # numpy's int64 arithmetic, eagerly too
    with onp.errstate(over="ignore"):
        for a in (3, 2 ** 40, 2 ** 41):
            _same(f(a, 2 ** 40), np.multiply(a, 2 ** 40) + 1)


@pytest.mark.parametrize("dtype", [onp.float16, onp.float32, onp.float64])
def test_python_numbers_meeting_float_arrays_are_bound_as_0d_arrays_with_the_same_bits(dtype):
    # (a ufunc converts a Python number at each call; the code gets the 0-d array numpy
    # would convert it to, where that changes no bit: +, -, *, / on one float dtype, the
    # number exact in it)
    inexact = 2 ** (onp.finfo(dtype).nmant + 1) + 1  # the first integer the dtype rounds

    def f(x, y):
        h = np.tanh(x)
        u = 1 - h * h + 2 ** 8 * x - x / 4 + 0.5 * y  # exact in each dtype
        w = np.maximum(u * 0.1, 0) + -0.0 * x  # 0.1: not exact in float16/32; -0.0: a sign
        v = np.float32(3.0) + x * float("nan")  # nan == nan is False: stays a number
        return np.sum(u * w) + np.sum(v) + np.sum(x * inexact) + np.sum(x * 1e-300)

    rng = onp.random.default_rng(0)
    x, y = rng.normal(size=(2, 5)).astype(dtype), rng.normal(size=5).astype(dtype)
    for jf in (jit(f), jit(fgrad.grad(f)), jit(fgrad.grad(f, argnums=1))):
        with warnings.catch_warnings(record=True) as eager_warned:
            warnings.simplefilter("always")
            eager = jf.f(x, y)  # (1e-300: underflow in float16/32's cast, warned as numpy
        jf(x, y)  # does, by the replay as by the eager call, not by making the code)
        with warnings.catch_warnings(record=True) as replay_warned:
            warnings.simplefilter("always")
            out = jf(x, y)  # the first replay: the code made and run
        _same(out, eager)
        assert onp.asarray(out).tobytes() == onp.asarray(eager).tobytes()
        assert [str(w.message) for w in replay_warned] == \
            [str(w.message) for w in eager_warned]
    jf = jit(lambda x: (1 - x * x) * 0.1 + x / 3)
    jf(x)
    jf(x)
    env = next(iter(jf.cache.values()))[0].compile().__globals__
    consts = {repr(v) for k, v in env.items() if k[0] == "c" and k[1:].isdigit()}
    assert repr(onp.array(1, dtype)) in consts and repr(onp.array(3, dtype)) in consts
    assert ("0.1" in consts) == (dtype != onp.float64)  # (exact in float64 only)
    # one number meeting two dtypes stays a number
    jg = jit(lambda a, b: np.sum(a * 2.0) + np.sum(b * 2.0))
    a32, b64 = x.astype(onp.float32), x.astype(onp.float64)
    jg(a32, b64)
    _same(jg(a32, b64), jg.f(a32, b64))
    env = next(iter(jg.cache.values()))[0].compile().__globals__
    assert 2.0 in [v for k, v in env.items() if k[0] == "c" and k[1:].isdigit()
                   and v.__class__ is float]


def test_the_generated_code_accumulates_in_place_only_where_nothing_else_reads_the_value():
    def accumulate(x, y):
        acc = np.sin(x) * 2.0
        for _ in range(3):
            acc = acc + x * y  # acc is read by nothing else: written in place
        return acc

    def viewed(x, y):
        a = np.sin(x) * 2.0
        view = np.reshape(a, (3, 1))  # a view of a, read after a's last arithmetic use
        b = a + y
        return view * b

    x, y = onp.linspace(0.1, 1, 3), onp.linspace(-1, 2, 3)
    sources = {}
    for f in (accumulate, viewed):
        graph = fgrad.make_graph(f)(x, y)
        _same(graph(x, y), f(x, y))
        _same(graph(2 * x, y), f(2 * x, y))
        sources[f] = graph.compile().source
    # (a call ``uK(...)`` writes into its last argument)
    assert len(re.findall(r"= u\d+\(", sources[accumulate])) == 4  # sin * 2, the 3 sums
    # viewed: sin(x) * 2 is written into sin(x)'s array; a is viewed, so a + y is not
    assert len(re.findall(r"= u\d+\(", sources[viewed])) == 1 and "u1(" in sources[viewed]


def test_a_value_written_in_place_keeps_the_eager_layout():
    # x.T * y is C order eagerly (operands that disagree: C), and so is the sum's order
    # over it; written into the buffer of sin(x.T), which is in Fortran order, it was not,
    # and the replayed sums differed in their last bits (2.3e-13)
    rng = onp.random.default_rng(7)
    x, y, w = rng.normal(size=(40, 40)), rng.normal(size=(40, 40)), rng.normal(size=40)

    def f(x, y):
        a = np.sin(x.T) * y
        return np.sum(a, axis=0) @ w + np.sum(np.tanh(x) * y)

    vg = fgrad.value_and_grad(f, argnums=(0, 1))
    for g in (f, vg):
        staged = jit(g)
        for args in [(x, y), (y, x), (x.T, y), (onp.asfortranarray(x), y[::-1])]:
            _same(staged(*args), g(*args))  # (inputs in other layouts: the code for them)
    source = fgrad.make_graph(f)(x, y).compile().source
    assert "flags.c_contiguous" in source  # (tanh(x) * y counts on x and y in C order)


def _bits(a):
    return [(onp.asarray(v).dtype, onp.asarray(v).tobytes()) for v in tree_flatten(a)[0]]


def test_a_dead_values_buffer_is_written_by_a_later_result_of_its_shape():
    # cos(x) * y (32 x 32, 8 KiB) dies in the sum; tanh(x) takes its buffer, not a new one
    rng = onp.random.default_rng(3)
    x, y = rng.normal(size=(32, 32)), rng.normal(size=(32, 32))

    def f(x, y):
        acc = np.sin(x) * y
        acc = acc + np.cos(x) * y
        acc = acc + np.tanh(x) * y
        return np.sum(acc)

    graph = fgrad.make_graph(f)(x, y)
    source = graph.compile().source
    # (a call ``uK(v0, rJ)``: tanh(v0) written into rJ, which holds cos(x) * y, dead)
    tanh = re.search(r"    (r\d+) = u\d+\(v0, \1\)\n", source)
    assert tanh is not None and re.search(rf"    {tanh[1]} = u\d+\(r\d+, v1, ", source), source
    for args in [(x, y), (2 * x, y[::-1]), (x.T, y)]:
        assert _bits(graph(*args)) == _bits(f(*args))
    vg = fgrad.value_and_grad(f, argnums=(0, 1))
    assert _bits(jit(vg)(x, y)) == _bits(vg(x, y))


def test_a_dead_buffer_is_not_written_while_a_view_of_it_lives_or_in_another_layout():
    rng = onp.random.default_rng(4)
    x, y, w = rng.normal(size=(40, 40)), rng.normal(size=(40, 40)), rng.normal(size=40)

    def viewed(x, y):
        acc = np.sin(x) * y
        b = np.cos(x) * y
        v = b.T  # a view of b, read after b's last read
        acc = acc + b
        acc = acc + np.tanh(x) * y
        return np.sum(acc * v)

    def other_layout(x, y):
        acc = np.sin(x) * y
        acc = acc + np.cos(x) * y
        b = np.tanh(x.T) * 2.0  # Fortran order eagerly (as x.T): the sum's order is its own
        return np.sum(acc) + np.sum(b, axis=0) @ w

    for f in (viewed, other_layout):
        graph = fgrad.make_graph(f)(x, y)
        assert re.search(r"= u\d+\(v0, ", graph.compile().source) is None  # tanh: a new array
        for args in [(x, y), (y, x)]:
            assert _bits(graph(*args)) == _bits(f(*args))


def _random_program(rng, unary, binary, reduce, scale, swap):
    """``f(x, y)``: a random chain of ``unary`` and ``binary`` steps (a binary one combines
    the running value with the previous one), ending in one of ``reduce`` of the value plus
    ``swap`` of the previous one."""
    ops = [(rng.integers(3), rng.integers(len(unary)), rng.integers(len(binary)))
           for _ in range(rng.integers(2, 6))]
    r = rng.integers(len(reduce))

    def f(x, y):
        a, b = x, y
        for kind, u, k in ops:
            a, b = (binary[k](a, b) * scale, a) if kind == 0 else (unary[u](a), b)
        return reduce[r](a + swap(b) * 0.5 + b)
    return f


@pytest.mark.parametrize("seed", range(40))
def test_replays_of_two_dimensional_programs_with_transposes_are_bit_for_bit(seed):
    # random programs of transposes, reversals, elementwise work, products and sums: before
    # the code generator kept the eager layouts, 149 of 300 such programs replayed other bits
    rng = onp.random.default_rng(seed)
    rows = onp.array([3, 1, 1, 7, 0, 29])
    unary = [np.sin, np.tanh, lambda a: a.T, lambda a: a[::-1], lambda a: a[:, ::-1],
             lambda a: a * 1.5, lambda a: np.cumsum(a, axis=0), np.exp,
             lambda a: np.concatenate([a[:10], a[10:]]), lambda a: np.pad(a, 1)[1:-1, 1:-1],
             lambda a: np.at(a)[rows].add(1.0), lambda a: np.sort(a, axis=0),
             lambda a: np.asfortranarray(a) * 1.0, lambda a: np.broadcast_to(a[0], a.shape) + a,
             lambda a: a - np.max(a, axis=1, keepdims=True)]
    binary = [np.add, np.multiply, lambda a, b: a - b.T, lambda a, b: a @ b.T,
              lambda a, b: np.maximum(a, b), lambda a, b: np.where(a > b, a, b)]
    reduce = [np.sum, lambda a: np.sum(a, axis=0) @ onp.arange(1.0, 31.0),
              lambda a: np.sum(a, axis=1) @ onp.arange(1.0, 31.0), np.var]
    f = _random_program(rng, unary, binary, reduce, 0.1, lambda b: b.T)
    vg = fgrad.value_and_grad(f, argnums=(0, 1))
    staged, staged_vg = jit(f), jit(vg)
    for _ in range(2):
        x, y = rng.normal(size=(30, 30)), rng.normal(size=(30, 30))
        _same(staged(x, y), f(x, y))
        _same(staged_vg(x, y), vg(x, y))


def test_a_product_with_ones_is_dropped_only_where_the_layout_stays():
    # grad's seed times cos(...) is a product with ones, which the passes drop; numpy lays
    # the product of a broadcast ones and a transposed array out in C order, so dropping it
    # left the transposed layout, and the sum of the normalisation's derivative over it
    # added in another order (the replay differed from the eager gradient in the last bit)
    x = onp.random.default_rng(0).normal(size=(6, 6, 6))

    def f(x):
        return np.sum(np.sin(np.swapaxes(x, 0, 1) / np.sum(x * x, axis=(1, 2), keepdims=True)))

    g = fgrad.grad(f)
    staged = jit(g)
    for v in (x, x[::-1] * 0.5):
        _same(staged(v), g(v))


@pytest.mark.parametrize("seed", range(20))
def test_replays_of_three_dimensional_programs_and_their_batches_are_bit_for_bit(seed):
    rng = onp.random.default_rng(seed)
    unary = [np.sin, lambda a: np.swapaxes(a, 0, 2), lambda a: np.moveaxis(a, 0, -1),
             lambda a: a[::-1], lambda a: a * 1.5, lambda a: np.cumsum(a, axis=1),
             lambda a: np.transpose(a, (1, 0, 2)),
             lambda a: a - np.mean(a, axis=0, keepdims=True),
             lambda a: a / np.sum(a * a, axis=(1, 2), keepdims=True)]
    binary = [np.add, np.multiply, lambda a, b: a - np.swapaxes(b, 0, 1),
              lambda a, b: a @ np.swapaxes(b, 1, 2), lambda a, b: np.maximum(a, b)]
    reduce = [np.sum, lambda a: np.sum(a, axis=0).ravel() @ onp.arange(36.0), np.var,
              lambda a: np.sum(np.sum(a, axis=2) ** 2)]
    f = _random_program(rng, unary, binary, reduce, 0.2, lambda b: np.swapaxes(b, 0, 1))
    x, y = rng.normal(size=(6, 6, 6)), rng.normal(size=(6, 6, 6))
    X, Y = rng.normal(size=(3, 6, 6, 6)), rng.normal(size=(3, 6, 6, 6))
    vg, per_example = fgrad.value_and_grad(f, argnums=(0, 1)), fgrad.vmap(fgrad.grad(f))
    for g, args in [(f, (x, y)), (vg, (x, y)), (per_example, (X, Y))]:
        staged = jit(g)
        for _ in range(2):  # (the first call, then a replay)
            _same(staged(*args), g(*args))


@pytest.mark.parametrize("inner", ["grad", "vjp", "jvp", "hessian"])
def test_a_closed_over_array_differentiated_inside_jit_is_read_anew(inner):
    w = onp.ones(3)
    cube = lambda v: np.sum(v ** 3)  # noqa: E731
    take = {"grad": lambda: fgrad.grad(cube)(w),
            "vjp": lambda: fgrad.vjp(cube, w)[1](1.0),
            "jvp": lambda: fgrad.jvp(cube, (w,), (onp.ones(3),))[1],
            "hessian": lambda: fgrad.hessian(cube)(w)}[inner]
    jf = jit(lambda x: x * take())  # the derivative's input is the plain array w
    for value in (1.0, 2.0, -0.5):
        w[:] = value  # in place, between calls
        _same(jf(onp.ones(3)), onp.ones(3) * take())


def test_a_transform_of_a_jitted_function_stages_the_two_whole():
    # grad(jit(f)) is jit(grad(f)) (and so for value_and_grad, jacrev, jacfwd, hessian, vmap):
    # a replay runs no Python of f, the values are the eager transform's bit for bit
    traced = []

    def f(x, n, scale=1.0):
        traced.append(n)
        return np.sum(np.sin(x) ** n) * scale

    jf = jit(f, static_argnames="n")
    x, y = onp.array([0.3, -1.2, 2.0]), onp.array([1.5, 0.2, -0.7])
    g = fgrad.grad(jf)
    assert type(g) is type(jf) and fgrad.grad(jf) is g  # (kept per transform and options)
    want = [fgrad.grad(f)(v, n=3, scale=2.0) for v in (x, y, x)]
    del traced[:]
    for v, w in zip((x, y, x), want):
        _same(g(v, n=3, scale=2.0), w)
    assert traced == [3]  # (g traced once, on its first call; then replays)
    _same(g(x, n=2), fgrad.grad(f)(x, n=2))  # another static value: traced again
    two = fgrad.value_and_grad(jit(lambda a, b: (np.sum(a * b ** 2), a)), argnums=(0, 1),
                               has_aux=True)
    _same(two(x, y), fgrad.value_and_grad(lambda a, b: (np.sum(a * b ** 2), a),
                                          argnums=(0, 1), has_aux=True)(x, y))
    layer = lambda v: np.tanh(v * y) * v[0]
    for T in (fgrad.jacrev, fgrad.jacfwd, fgrad.hessian):
        _same(T(jit(layer))(x), T(layer)(x))
    X = onp.stack([x, y])
    _same(fgrad.vmap(jit(layer))(X), fgrad.vmap(layer)(X))
    _same(fgrad.jvp(jit(layer), (x,), (y,)), fgrad.jvp(layer, (x,), (y,)))
    staged_layer, path = jit(layer), ([y, 0.5 * x, onp.zeros(3)],)
    _same(fgrad.jet(staged_layer, (x,), path), fgrad.jet(layer, (x,), path))
    assert len(staged_layer.transforms) == 1  # (the jet's order is in the signature)
    per_example = fgrad.vmap(fgrad.grad(jit(lambda v: np.sum(layer(v)))))
    assert type(per_example) is type(jf)  # (vmap of the jitted gradient: staged whole too)
    _same(per_example(X), onp.stack([fgrad.grad(lambda v: np.sum(layer(v)))(v) for v in X]))
    # an object answering every attribute is no jitted function (asked on its class)
    class Lenient:
        def __getattr__(self, name):
            return lambda *a, **k: "not a gradient"

        def __call__(self, v):
            return np.sum(v ** 2)

    _same(fgrad.grad(Lenient())(x), 2 * x)
    # in_axes that are no cache key (a dict) leave vmap's own rule for the jitted call
    mapped = fgrad.vmap(jit(lambda d: d["a"] * 2), in_axes=({"a": 0},))
    assert type(mapped) is not type(jf)
    _same(mapped({"a": X}), 2 * X)


def test_a_transform_of_a_jitted_function_closing_over_a_tracer_runs_eagerly():
    def outer(w):
        inner = jit(lambda v: np.sum(np.sin(v * w)))
        return np.sum(fgrad.grad(inner)(onp.array([0.5, 1.0])))

    w = 0.7
    want = onp.sum([onp.cos(0.5 * w) * (1 - 0.5 * w * onp.tan(0.5 * w)),
                    onp.cos(1.0 * w) * (1 - 1.0 * w * onp.tan(1.0 * w))])
    assert fgrad.grad(outer)(w) == pytest.approx(want, rel=1e-12)
    assert fgrad.jit(fgrad.grad(outer))(w) == pytest.approx(want, rel=1e-12)
