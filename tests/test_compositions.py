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

import fgrad.check  # noqa: F401  (the whole table, fgrad.scipy's entries too)
from fgrad.errors import ConcretizationError
from fgrad.table import checked
from fgrad.testing.compositions import (FORMS, CompositionMismatch, composition_case, compare,
                                        form_functions)
from test_vmap import READS_VALUES

ENTRIES = checked()
BATCHED = {form for form in FORMS if "vmap" in form}
# (under hessian the batch sits below two differentiating traces, and real_if_close's check
# of its imaginary part, a comparison, is batched there: it runs)
RUNS_ANYWAY = {("np.real_if_close", "vmap(hessian)")}
# one draw per entry in the ci profile (30 examples there), 16 in thorough (500)
DRAWS = max(1, settings.default.max_examples // 30)


@pytest.mark.parametrize("name", sorted(ENTRIES))
@settings(max_examples=DRAWS)
@given(seed=st.integers(0, 2**32 - 1))
def test_every_entry_under_every_composition_of_transforms(name, seed):
    case = composition_case(ENTRIES[name], onp.random.default_rng(seed))
    if case is None:
        return  # (every argument is a mask: nothing to differentiate)
    failures = []
    for form in FORMS:
        got, want, exact = form_functions(form, case)
        if name in READS_VALUES and form in BATCHED and (name, form) not in RUNS_ANYWAY:
            with pytest.raises(ConcretizationError):
                got()
            continue
        try:
            compare(form, got, want, exact)
        except CompositionMismatch as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)


def test_the_strict_list_names_table_entries():
    assert READS_VALUES <= set(ENTRIES)
