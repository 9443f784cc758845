"""Taylor mode: fgrad.jet against nested jvp (two independent computations by fgrad), closed
forms, exact polynomials, and its composition with the other transforms."""
import math
import re

import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import fgrad
import fgrad.numpy as np
from fgrad.core.table import PRIMITIVES, Composed, Inverse
from fgrad.traces.taylor import JetTrace
from fgrad.testing import as_function, check_jet, random_case
from fgrad.testing.strategies import primitive_cases

try:  # fgrad.scipy's entries are expanded too, where scipy is installed
    import fgrad.scipy  # noqa: F401
except ImportError:  # pragma: no cover
    pass


ENTRIES = sorted(n for n, p in PRIMITIVES.items() if p.spec is not None)
# The nested-jvp reference costs O(2^K) (2.5x an order more, 97% of the test's time at order
# 6): a third of the draws to order 6 (one in the ci profile), the others to order 4, fewer
# draws for the dearest
ORDER, LOWER = 6, 4
# (one solve of a 128-fold system per draw)
DEAR = {"scipy.integrate.odeint": 1, "scipy.integrate.solve_ivp": 1}


@pytest.mark.parametrize("name", ENTRIES)
def test_every_primitive_expands_like_nested_jvp_to_order_6(name):
    """Taylor rules where a primitive has one, its JVP rule's jet where not: each against
    nested jvp of the JVP rules (hypothesis draws the point, a seed the path)."""
    prim = PRIMITIVES[name]

    draws = DEAR.get(name, 1 if prim.spec.slow else max(3, settings().max_examples // 10))
    high = max(1, draws // 3)
    for order, n in ((ORDER, high), (LOWER, draws - high)):
        if n == 0:
            continue

        @settings(max_examples=n)
        @given(primitive_cases(prim), st.integers(0, 2**31))
        def check(case, seed):
            f, xs = as_function(prim, *case)
            xs = tuple(onp.asarray(x, float) if onp.isrealobj(x) else x for x in xs)
            check_jet(f, xs, order, seed=seed)

        check()


def test_tanh_derivatives_to_order_12_against_their_closed_form():
    # tanh^(n) = P_n(tanh) with P_0(y) = y, P_{n+1} = (1 - y^2) P_n'(y)
    x = 0.37
    y = math.tanh(x)
    poly = onp.polynomial.Polynomial([0.0, 1.0])
    want = []
    for _ in range(13):
        want.append(poly(y))
        poly = onp.polynomial.Polynomial([1.0, 0.0, -1.0]) * poly.deriv()
    got = fgrad.derivatives(np.tanh, 12)(x)
    onp.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-9)


def test_polynomials_with_integer_coefficients_come_out_exact():
    def p(x):
        return 3 * x ** 4 - 2 * x ** 3 + x * x - 7 * x + 5

    x0 = onp.array([2.0, -3.0, 0.0])
    _, terms = fgrad.jet(p, (x0,), ([onp.ones(3), onp.full(3, 2.0), onp.zeros(3),
                                     onp.zeros(3)],))
    # x(t) = x0 + t + t^2: the path's derivatives computed by hand with integers
    c = onp.polynomial.Polynomial
    for i, a in enumerate(x0):
        q = c([5, -7, 1, -2, 3])(c([a, 1, 1]))
        for k in range(4):
            assert terms[k][i] == q.deriv(k + 1)(0.0), (i, k)


def test_jet_follows_jaxs_convention_and_structure():
    # x(t) = x0 + x1 t + x2 t^2 / 2: sin's output terms by the chain rule
    x0, x1, x2 = 0.3, 0.7, -0.4
    y, (y1, y2) = fgrad.jet(np.sin, (x0,), ([x1, x2],))
    assert y == math.sin(x0)
    assert y1 == pytest.approx(math.cos(x0) * x1, rel=1e-15)
    assert y2 == pytest.approx(-math.sin(x0) * x1 ** 2 + math.cos(x0) * x2, rel=1e-15)
    out, terms = fgrad.jet(lambda a, b: {"s": a * b, "c": 2.0}, (1.0, 2.0),
                           ([1.0, 0.0], [0.0, 1.0]))
    assert out == {"s": 2.0, "c": 2.0}
    assert [float(t) for t in terms["s"]] == [2.0, 1.0] and terms["c"] == [0.0, 0.0]


def test_jet_composes_with_grad_vmap_and_jit():
    d3 = fgrad.derivatives(np.tanh, 3)
    d4 = fgrad.derivatives(np.tanh, 4)
    assert float(fgrad.grad(lambda x: d3(x)[3])(0.3)) == pytest.approx(float(d4(0.3)[4]),
                                                                        rel=1e-12)
    xs = onp.array([0.1, 0.5, -0.8])
    onp.testing.assert_allclose(fgrad.vmap(d3)(xs), onp.stack([d3(x) for x in xs]), rtol=1e-14)
    onp.testing.assert_array_equal(fgrad.jit(d3)(0.3), d3(0.3))
    onp.testing.assert_array_equal(fgrad.jit(d3)(0.6), d3(0.6))


def test_series_of_unequal_lengths_or_wrong_shapes_are_refused():
    with pytest.raises(ValueError, match=re.escape(
            "jet: series[1] has 1 terms but series[0] has 2; every primal's series needs the "
            "same number")):
        fgrad.jet(np.multiply, (1.0, 2.0), ([1.0, 0.0], [1.0]))
    with pytest.raises(ValueError, match=re.escape(
            "jet: term 1 of series[0] has shape (2,), but it must match the shape (3,)")):
        fgrad.jet(np.sin, (onp.zeros(3),), ([onp.zeros(3), onp.zeros(2)],))
    with pytest.raises(ValueError, match=re.escape("jet: 1 primals but 2 series")):
        fgrad.jet(np.sin, (1.0,), ([1.0], [1.0]))
    with pytest.raises(TypeError, match=re.escape("jet: series[0] must be a list of terms")):
        fgrad.jet(np.sin, (1.0,), (1.0,))
    with pytest.raises(ValueError, match=re.escape("jet: the series are empty")):
        fgrad.jet(np.sin, (1.0,), ([],))


def _jet_operations(prim, case, order, monkeypatch):
    """How many primitive calls the jets of one call of ``prim`` make, at ``order``."""
    calls = [0]
    process = JetTrace.process

    def counted(self, p, args, params):
        calls[0] += 1
        return process(self, p, args, params)

    monkeypatch.setattr(JetTrace, "process", counted)
    f, xs = as_function(prim, *case)
    rng = onp.random.default_rng(0)
    fgrad.jet(f, xs, [[rng.standard_normal(onp.shape(x)) for _ in range(order)] for x in xs])
    monkeypatch.setattr(JetTrace, "process", process)
    return calls[0]


@pytest.mark.parametrize("name", ENTRIES)
def test_no_primitive_expands_in_exponential_time(name, monkeypatch):
    """From order 4 to 8 the work of a Taylor rule grows 4x (O(K^2)), of a JVP rule that
    reads its output about 11x (O(K^3), one jet per order); nested forward mode's, 16x."""
    prim = PRIMITIVES[name]
    case = random_case(prim, onp.random.default_rng(1), prim.spec.cases[0])
    case = (tuple(onp.asarray(x, float) if onp.isrealobj(x) and onp.ndim(x) == 0 else x
                  for x in case[0]), case[1])
    low, high = (_jet_operations(prim, case, k, monkeypatch) for k in (4, 8))
    assert high <= 12 * low, f"{name}: {low} operations at order 4, {high} at order 8"


COMPOSED = sorted(n for n, p in PRIMITIVES.items() if isinstance(p.taylor, Composed))
INVERSES = sorted(n for n, p in PRIMITIVES.items() if isinstance(p.taylor, Inverse))


def test_the_composed_taylor_rules_cover_the_primitives_they_were_written_for():
    want = {"scipy.special.expit", "scipy.special.logsumexp", "scipy.special.softmax",
            "scipy.special.log_softmax", "scipy.special.gamma", "scipy.special.rgamma",
            "scipy.special.beta", "hypot", "logaddexp", "logaddexp2", "linalg.inv",
            "scipy.linalg.inv", "scipy.stats.norm.pdf", "scipy.stats.poisson.pmf"}
    assert want <= set(COMPOSED), want - set(COMPOSED)


@pytest.mark.parametrize("name", COMPOSED)
def test_a_composed_rule_replaces_one_jet_per_order(name, monkeypatch):
    """A primitive whose JVP rule reads its output expands by its composition, none of whose
    primitives reads its own output: O(K^2) where the JVP rule's route was O(K^3)."""
    prim = PRIMITIVES[name]
    rng = onp.random.default_rng(0)
    args, params = random_case(prim, rng)
    f, xs = as_function(prim, args, params)
    xs = tuple(onp.asarray(x, float) if onp.isrealobj(x) else x for x in xs)
    series = tuple([rng.standard_normal(onp.shape(x)) for _ in range(4)] for x in xs)
    calls = []  # (the primitive's own arguments and series, as its spec calls it)
    expand = fgrad.traces.taylor.expand

    def seen(p, s, ans, a, kw, order):
        if p is prim:
            calls.append((a, s, kw))
        return expand(p, s, ans, a, kw, order)

    monkeypatch.setattr(fgrad.traces.taylor, "expand", seen)
    assert fgrad.traces.taylor.expansions(f, xs, series)[-1] == (name, "rule")
    monkeypatch.undo()
    (a, s, kw), = calls
    live = [i for i, t in enumerate(s) if t is not None]

    def composed(*v):  # (the composition in the arguments that move; the others fixed)
        full = list(a)
        for i, x in zip(live, v):
            full[i] = x
        return prim.taylor.fn(*full, **kw)

    hows = [how for _, how in fgrad.traces.taylor.expansions(
        composed, [a[i] for i in live], [list(s[i]) for i in live])]
    assert "jvp, reads output" not in hows, hows


def test_the_inverse_functions_expand_by_newtons_method():
    assert {"scipy.special.erfinv", "scipy.special.erfcinv", "scipy.special.ndtri",
            "scipy.stats.norm.ppf", "scipy.stats.gamma.ppf"} <= set(INVERSES)


@pytest.mark.parametrize("name", INVERSES)
def test_an_inverse_takes_log2_k_newton_steps_of_its_forward_function(name):
    """An inverse function's terms come from ceil(log2(K + 1)) jets of its forward function
    (Newton's method on the series doubles the right terms per step), where its JVP rule's
    route ran one jet per order: count the forward function's calls at K = 7 and 15."""
    prim = PRIMITIVES[name]
    forward = prim.taylor.f
    forward = getattr(forward, "_fgrad_entry", forward)
    args, params = random_case(prim, onp.random.default_rng(0))
    f, xs = as_function(prim, args, params)
    xs = tuple(onp.asarray(x, float) for x in xs)
    calls = []
    for order in (7, 15):
        series = tuple([onp.full(onp.shape(x), 0.3)] * order for x in xs)
        names = [n for n, _ in fgrad.traces.taylor.expansions(f, xs, series)]
        assert names[-1] == name
        calls.append(_forward_calls(f, xs, series, forward.name))
    assert calls == [3, 4], calls


def _forward_calls(f, xs, series, forward):
    """How many times ``jet(f)`` calls the primitive named ``forward``."""
    count = [0]
    prim = PRIMITIVES[forward]
    impl, fast = prim.impl, prim.fast_impl

    def counted(*args, **params):
        count[0] += 1
        return fast(*args, **params)

    prim.impl = prim.fast_impl = counted
    try:
        fgrad.jet(f, xs, series)
    finally:
        prim.impl, prim.fast_impl = impl, fast
    return count[0]
