"""docs/coverage.md is generated from the table; these tests keep it true and fresh."""
import pathlib
import re

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.tools.coverage import IN_PLACE, classify, render
from fgrad.core.table import checked

DOC = pathlib.Path(__file__).resolve().parent.parent / "docs" / "coverage.md"
ROWS = classify()


def test_committed_coverage_file_is_fresh():
    assert DOC.exists(), "docs/coverage.md is missing: run python -m fgrad coverage --write"
    text = DOC.read_text(encoding="utf-8")
    made_on = re.search(r"^numpy (\S+):", text, re.M)
    assert made_on, "docs/coverage.md does not say which numpy it was generated on"
    if made_on.group(1) != onp.__version__:  # (another numpy has other functions)
        pytest.skip(f"docs/coverage.md lists numpy {made_on.group(1)}'s functions; this is "
                    f"numpy {onp.__version__}")
    assert text == render(), (
        "docs/coverage.md is stale: run `python -m fgrad coverage --write` and commit it")


def test_every_public_numpy_function_is_listed_once():
    names = [q for q, *_ in ROWS]
    assert len(names) == len(set(names))
    for q in ("sum", "einsum", "linalg.norm", "linalg.svd", "fft.fft", "fft.fftshift"):
        assert q in names
    assert "float64" not in names and "linalg" not in names  # types and modules are not


def test_every_differentiable_row_is_checked_by_the_generated_tests():
    entries = set(map(id, checked().values()))
    # (the first issue's bar: at least 200 numpy functions differentiable, to order 2)
    assert sum(s == "differentiable" for _, s, _, _ in ROWS) >= 200
    for qual, status, entry, _ in ROWS:
        if status == "differentiable":
            assert id(entry) in entries, qual
            assert entry.spec is not None and entry.spec.order >= 2, qual


@pytest.mark.parametrize("qual, why", [(q, w) for q, s, _, w in ROWS if s == "unsupported"])
def test_unsupported_functions_raise_the_clear_error_on_a_tracer(qual, why):
    module = fnp
    for part in qual.split(".")[:-1]:
        module = getattr(module, part)
    fn = getattr(module, qual.split(".")[-1])

    def f(x):
        return fn(x)

    with pytest.raises(fgrad.NoDerivativeRuleError, match=f"fgrad.numpy.{qual} has no"):
        fgrad.grad(f)(onp.float64(0.5))


def test_the_in_place_functions_are_listed_as_such():
    # (their writes: tests/test_writes.py)
    assert {q for q, s, _, w in ROWS if s == "in place"} == {
        "copyto", "fill_diagonal", "place", "put", "put_along_axis", "putmask"}
    assert all(w == IN_PLACE for _, s, _, w in ROWS if s == "in place")
