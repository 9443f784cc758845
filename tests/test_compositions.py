"""Every transform composed with every other, on every table entry (issue 30).

``fgrad.testing.compositions`` holds the forms (``grad(jit(f))``, ``vmap(grad(f))``,
``jit(jet(f))``, ``vmap(jit(grad(f)))``, ...) and what each must equal: the same transform of
``f`` (to rounding), the eager result bit for bit (a staged derivative, also replayed on new
values), or the loop over the examples (a batched one). Each entry's case is drawn by
hypothesis: one draw per entry in the ``ci`` profile (every entry under every form, about a
minute), more in ``thorough``.

The strict list: entries whose *forward* function reads its arguments' values for the shape of
its result (``test_vmap.READS_VALUES``: a polynomial's degree, unique values, bins) raise
``ConcretizationError`` under every form with ``vmap``, as under ``vmap`` alone; every other
(entry, form) pair must agree. No built-in derivative rule reads a value: a rule that did
would fail here under ``vmap(grad)``, ``vmap(jit(grad))`` or ``jit(vmap(grad))``.
"""
import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import fgrad.tools.check  # noqa: F401  (the whole table, fgrad.scipy's entries too)
import fgrad.numpy as np
from fgrad.core.errors import ConcretizationError
from fgrad.core.table import checked
from fgrad.testing.compositions import (FORMS, HEAVY, CompositionMismatch, composition_case,
                                        compare, form_functions)
from test_vmap import READS_VALUES

ENTRIES = checked()
BATCHED = {form for form in FORMS if "vmap" in form}
# (under hessian the batch sits below two differentiating traces, and real_if_close's check
# of its imaginary part, a comparison, is batched there: it runs)
RUNS_ANYWAY = {("np.real_if_close", "vmap(hessian)")}
# one draw per entry in the ci profile (30 examples there), 16 in thorough (500)
DRAWS = max(1, settings.default.max_examples // 30)
# the entries whose second-derivative forms take seconds (a Hessian of an ODE solve,
# under vmap one solve per example, 8 s): those forms run for it in the thorough profile only
SLOW = {"scipy.integrate.odeint", "scipy.integrate.solve_ivp"} if DRAWS == 1 else set()


@pytest.mark.parametrize("name", sorted(ENTRIES))
@settings(max_examples=DRAWS)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_entry_under_every_composition_of_transforms(name, seed):
    case = composition_case(ENTRIES[name], onp.random.default_rng(seed))
    if case is None:
        return  # (every argument is a mask: nothing to differentiate)
    failures = []
    for form in FORMS:
        if name in SLOW and form in HEAVY:
            continue
        got, want, exact = form_functions(form, case)
        if name in READS_VALUES and form in BATCHED and (name, form) not in RUNS_ANYWAY:
            with pytest.raises(ConcretizationError):
                got()
            continue
        try:  # (an entry whose numpy function differs between calls is held to 1e-9)
            compare(form, got, want, exact and ENTRIES[name].spec.exact)
        except CompositionMismatch as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_the_strict_list_names_table_entries():
    assert READS_VALUES <= set(ENTRIES)


# --- random programs: what the table's entries do not cover, their combinations ----------------

_UNARY = [np.sin, np.tanh, np.exp, lambda x: np.log1p(x * x), lambda x: np.sqrt(x * x + 1.0),
          np.abs, np.cumsum, np.sort, np.cumprod, lambda x: np.where(x > 0, x, 0.1 * x),
          lambda x: np.maximum(x, 0.2), lambda x: x[::-1], lambda x: x ** 2,
          lambda x: np.clip(x, -0.5, 0.5), np.sinc, lambda x: x[np.argsort(x)],
          lambda x: np.roll(x, 1), lambda x: x / (1 + np.abs(x))]
_BINARY = [np.add, np.multiply, np.subtract, np.logaddexp, np.hypot, np.arctan2, np.minimum,
           lambda a, b: a * np.sin(b), lambda a, b: np.mod(a, 1.0 + b * b), np.copysign]
_REDUCE = [np.sum, np.prod, np.max, np.linalg.norm, np.mean, np.median, np.var,
           lambda x: np.dot(x, x)]


def _program(ops, reduce):
    """Two inputs through a chain of ops (a binary op combines the current value with the
    previous one); three outputs: both values stacked, a reduction, and a complex value of
    the last (a complex output beside real ones once lost its derivative under
    ``grad(jit)``)."""
    def f(x, y):
        a, b = x, y
        for binary, i in ops:
            a, b = (_BINARY[i](a, b), a) if binary else (_UNARY[i](a), b)
        return np.stack([a, b]), _REDUCE[reduce](a + b), np.exp(0.5j * a)
    return f


_OPS = st.lists(st.one_of(st.tuples(st.just(False), st.integers(0, len(_UNARY) - 1)),
                          st.tuples(st.just(True), st.integers(0, len(_BINARY) - 1))),
                min_size=1, max_size=4)


@settings(max_examples=settings.default.max_examples)
@given(ops=_OPS, reduce=st.integers(0, len(_REDUCE) - 1), seed=st.integers(0, 2**32 - 1))
def test_random_programs_under_every_composition_of_transforms(ops, reduce, seed):
    """Random programs of common functions, each under the twenty-one compositions against the
    loop, the eager transform or the eager replay (at the baseline of this issue, 100 such
    programs failed 531 times; an outside tester's 5,691 found the issue's classes)."""
    rng = onp.random.default_rng(seed)
    f = _program(ops, reduce)
    examples = [tuple(rng.uniform(-1.5, 1.5, 4) for _ in range(2)) for _ in range(3)]
    tangents = [tuple(rng.uniform(-1.0, 1.0, 4) for _ in range(2)) for _ in range(3)]
    weights = [rng.uniform(0.5, 1.5, (2, 4)), rng.uniform(0.5, 1.5), rng.uniform(0.5, 1.5, 4)]

    def scalar(x, y):
        stacked, reduced, turned = f(x, y)
        return np.sum(stacked * weights[0]) + reduced * weights[1] + \
            np.sum(np.real(turned) * weights[2])

    failures = []
    for form in FORMS:
        try:
            compare(form, *form_functions(form, (f, scalar, examples, tangents, weights)))
        except CompositionMismatch as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


# --- random programs indexing by traced integers: gathers and scatters of a batch or a replay --

# x (5, 3) floats; i (4,) integers in [-5, 5) (repeats, negative ones), j (4,) in [0, 3)
_INDEXED = [lambda x, i, j: x[i], lambda x, i, j: x[i, j], lambda x, i, j: x[:, j],
            lambda x, i, j: x[i[:, None], j[None, :]], lambda x, i, j: x[i, None],
            lambda x, i, j: x[np.arange(4), j], lambda x, i, j: np.take(x, i, axis=0),
            lambda x, i, j: np.take_along_axis(x, np.argsort(x, axis=0), axis=0),
            lambda x, i, j: np.at(x)[i].add(x[:4] * 0.5),
            lambda x, i, j: np.at(x)[i, j].add(1.5), lambda x, i, j: np.at(x)[:, j].add(x[0]),
            lambda x, i, j: np.at(x)[j].set(x[1:5] ** 2),  # (repeats raise, in every form)
            lambda x, i, j: np.at(x)[i].max(x[:4] * 0.9),
            lambda x, i, j: np.at(x)[i, j].min(0.1),  # (repeats tie: they share evenly)
            lambda x, i, j: np.roll(x, i[0], axis=0)]
_ELEMENTWISE = [np.sin, np.tanh, lambda x: x * x, lambda x: np.exp(0.3 * x), np.abs]


def _indexed_program(ops):
    def f(x, i, j):
        total = 0.0
        for e, o in ops:
            total = total + np.sum(np.sin(_INDEXED[o](_ELEMENTWISE[e](x), i, j)) * 1.3)
        return total
    return f


@settings(max_examples=settings.default.max_examples)
@given(ops=st.lists(st.tuples(st.integers(0, len(_ELEMENTWISE) - 1),
                              st.integers(0, len(_INDEXED) - 1)), min_size=1, max_size=3),
       seed=st.integers(0, 2**32 - 1))
def test_random_programs_indexing_by_traced_integers(ops, seed):
    """Indices passed in (a batch of them under ``vmap``, new ones at each ``jit`` replay)
    are gathered and scattered, never read: the compositions give the eager values (staged
    ones bit for bit, one graph for every index), or raise as the eager call does."""
    from fgrad import grad, hessian, jit, value_and_grad, vmap
    from fgrad.traces.taylor import jet
    rng = onp.random.default_rng(seed)
    f = _indexed_program(ops)
    examples = [(rng.uniform(-1.5, 1.5, (5, 3)), rng.integers(-5, 5, 4), rng.integers(0, 3, 4))
                for _ in range(3)]
    X, I, J = (onp.stack(a) for a in zip(*examples))
    vg, g, h = value_and_grad(f), grad(f), hessian(f)
    staged = jit(vg)
    series = ([onp.ones((5, 3)), onp.zeros((5, 3))],)

    def expand(x, i, j):
        return jet(lambda y: f(y, i, j), (x,), series)

    def loop(fn):
        return [onp.stack(o) for o in zip(*[fn(*ex) for ex in examples])] \
            if isinstance(fn(*examples[0]), tuple) else onp.stack([fn(*ex) for ex in examples])

    forms = {
        "jit(value_and_grad)": (lambda: [staged(*ex) for ex in examples],
                                lambda: [vg(*ex) for ex in examples], True),
        "jit(jet)": (lambda: [jit(expand)(*ex) for ex in examples],
                     lambda: [expand(*ex) for ex in examples], True),
        "grad(jit)": (lambda: grad(jit(f))(*examples[0]), lambda: g(*examples[0]), False),
        "hessian(jit)": (lambda: hessian(jit(f))(*examples[1]), lambda: h(*examples[1]),
                         False),
        "vmap(grad)": (lambda: vmap(g)(X, I, J), lambda: loop(g), False),
        "vmap(jit(grad))": (lambda: vmap(jit(g))(X, I, J), lambda: loop(g), False),
        "jit(vmap(grad))": (lambda: jit(vmap(g))(X, I, J), lambda: loop(g), False),
        "vmap(hessian)": (lambda: vmap(h)(X, I, J), lambda: loop(h), False),
    }
    failures = []
    for form, (got, want, exact) in forms.items():
        try:
            compare(form, got, want, exact)
        except CompositionMismatch as e:
            failures.append(str(e))
    if not failures and staged.cache:  # (a raising program keeps no graph)
        graphs = sum(len(v) for v in staged.cache.values())
        if graphs != 1:
            failures.append(f"jit(value_and_grad): {graphs} graphs for new indices (guarded)")
    assert not failures, "\n".join(failures)
