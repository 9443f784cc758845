"""Generated from the table: every primitive and every composed function, both modes, to order.

Each registered primitive, and each public function composed of primitives (``np.var``,
``np.linalg.norm``, under the name ``np.<numpy name>``), gets from its ``Spec``:
* a hypothesis test of its VJP and JVP against finite differences to order 2 (so fwd-of-fwd,
  rev-of-fwd, fwd-of-rev and rev-of-rev are all exercised);
* a test that its forward value under a transform is numpy's, bit for bit, dtype included,
  in float64 and float32, and that a float32 input gets a float32 gradient.
A primitive registered without a Spec fails here, so nothing enters the table unchecked.
"""
import numpy as onp
import pytest
from hypothesis import given, settings

import fgrad
import fgrad.tools.check  # noqa: F401  (every family joins the table: fgrad.scipy's too)
from fgrad.core.pytree import tree_flatten
from fgrad.core.table import Primitive, checked
from fgrad.traces.rules import derived
from fgrad.testing import as_function, check_grads
from fgrad.testing.strategies import primitive_cases

ENTRIES = checked()
NAMES = sorted(ENTRIES)


def _spec(name):
    prim = ENTRIES[name]
    if prim.spec is None:
        pytest.fail(f"primitive {name} is registered without a Spec, so no test checks its "
                    "rules; pass spec=Spec(...) where it is defined")
    return prim, prim.spec


@pytest.mark.parametrize("name", NAMES)
def test_rules_agree_with_finite_differences(name):
    prim, spec = _spec(name)
    draws = settings().max_examples
    # a third of the profile's draws (a ninth for a slow spec), spread over the spec's cases so
    # none is missed, at least 3 a case (1 if slow): in the ci profile about 10 an entry
    total, least = (draws // 9, 1) if spec.slow else (draws // 3, 3)
    per_case = max(least, total // len(spec.cases))
    for one_case in spec.cases:
        @settings(max_examples=per_case)
        @given(primitive_cases(prim, case=one_case))
        def check(case):
            f, xs = as_function(prim, *case)
            check_grads(f, xs, order=spec.order, modes=("fwd", "rev"), rtol=spec.rtol,
                        atol=spec.atol, eps=spec.eps)

        check()


@pytest.mark.parametrize("name", NAMES)
def test_every_case_has_both_rules(name):
    prim, spec = _spec(name)
    assert spec.order >= 2, f"{name} is checked only to order {spec.order}"
    if not isinstance(prim, Primitive):
        return  # composed of primitives, whose rules are checked under their own names
    for shapes, params in spec.cases:
        for i in range(len(shapes)):
            if spec.arg_domain(i) != "bool":
                assert callable(prim.vjp_rule(i))
                # (a JVP rule of its own: one derived from the VJP rule costs a transpose)
                assert not derived(prim, i)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_forward_value_is_numpys(name, dtype):
    prim, spec = _spec(name)
    if dtype not in spec.dtypes:
        pytest.fail(f"{name} does not list {dtype} among its spec's dtypes")

    # (every case of the spec, a few draws each: a forward value is numpy's at any point, so
    # what the draws vary that matters is the case's shapes and parameters; 30 draws over the
    # cases at random cost three times the time and could miss a case)
    for one_case in spec.cases:
        @settings(max_examples=max(2, settings().max_examples // 15))
        @given(primitive_cases(prim, dtype=onp.dtype(dtype), case=one_case))
        def check(case):
            _forward_value_is_numpys(name, prim, spec, case)

        check()


def _forward_value_is_numpys(name, prim, spec, case):
    args, params = case
    want = spec.invoke(prim.impl, args, params)
    f, xs = as_function(prim, args, params)
    got, f_vjp = fgrad.vjp(f, *xs)
    out = got  # the cotangent must have the output's structure (a namedtuple stays one)
    if isinstance(want, tuple):  # several outputs: compare them as a tuple
        got, want = tuple(got), tuple(want)
    for g, w in zip(*(tree_flatten(v)[0] for v in (got, want)), strict=True):
        if spec.exact:
            onp.testing.assert_array_equal(g, w)
        else:  # (an implementation whose own calls differ in the last bits)
            onp.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-15)
        assert onp.result_type(g) == onp.result_type(w)
    _, tangent = fgrad.jvp(f, xs, xs)
    for t, w in zip(*(tree_flatten(v)[0] for v in (tangent, tuple(want) if isinstance(
            want, tuple) else want)), strict=True):
        assert onp.result_type(t) == onp.result_type(w)
    for x, g in zip(xs, f_vjp(out)):
        assert onp.result_type(g) == onp.result_type(x), (
            f"{name}: {onp.result_type(x)} input got a {onp.result_type(g)} gradient")
