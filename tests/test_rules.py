"""Generated from the primitive table: every primitive, both rules, to its order, both modes.

Each registered primitive gets, from its ``Spec``:
* a hypothesis test of its VJP and JVP against finite differences to order 2 (so fwd-of-fwd,
  rev-of-fwd, fwd-of-rev and rev-of-rev are all exercised);
* a test that its forward value under a transform is numpy's, bit for bit, dtype included,
  in float64 and float32, and that a float32 input gets a float32 gradient.
A primitive registered without a Spec fails here, so nothing enters the table unchecked.
"""
import numpy as onp
import pytest
from hypothesis import given

import fgrad
from fgrad.table import PRIMITIVES
from fgrad.testing import as_function, check_grads
from fgrad.testing.strategies import primitive_cases

NAMES = sorted(PRIMITIVES)


def _spec(name):
    prim = PRIMITIVES[name]
    if prim.spec is None:
        pytest.fail(f"primitive {name} is registered without a Spec, so no test checks its "
                    "rules; pass spec=Spec(...) where it is defined")
    return prim, prim.spec


@pytest.mark.parametrize("name", NAMES)
def test_rules_agree_with_finite_differences(name):
    prim, spec = _spec(name)

    @given(primitive_cases(prim))
    def check(case):
        f, xs = as_function(prim, *case)
        check_grads(f, xs, order=spec.order, modes=("fwd", "rev"), rtol=spec.rtol,
                    atol=spec.atol, eps=spec.eps)

    check()


@pytest.mark.parametrize("name", NAMES)
def test_every_case_has_both_rules(name):
    prim, spec = _spec(name)
    assert spec.order >= 2, f"{name} is checked only to order {spec.order}"
    for shapes, params in spec.cases:
        for i in range(len(shapes)):
            if spec.arg_domain(i) != "bool":
                assert callable(prim.vjp(i))
                assert prim.jvp_all is not None or callable(prim.jvp(i))


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name", NAMES)
def test_forward_value_is_numpys(name, dtype):
    prim, spec = _spec(name)
    if dtype not in spec.dtypes:
        pytest.fail(f"{name} does not list {dtype} among its spec's dtypes")

    @given(primitive_cases(prim, dtype=onp.dtype(dtype)))
    def check(case):
        args, params = case
        want = prim.impl(*args, **params)
        f, xs = as_function(prim, args, params)
        got, f_vjp = fgrad.vjp(f, *xs)
        onp.testing.assert_array_equal(got, want)
        assert onp.result_type(got) == onp.result_type(want)
        _, tangent = fgrad.jvp(f, xs, xs)
        assert onp.result_type(tangent) == onp.result_type(want)
        for x, g in zip(xs, f_vjp(want)):
            assert onp.result_type(g) == onp.result_type(x), (
                f"{name}: {onp.result_type(x)} input got a {onp.result_type(g)} gradient")

    check()
