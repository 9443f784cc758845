"""fgrad on an array library of its own that behaves as CuPy does (``duck_array.Duck``: numpy's
dispatch protocols, mutable, no implicit conversion to numpy), so the path CuPy takes is
checked on every CI run, where no GPU exists: every transform, and the VJP and JVP of every
primitive, give Duck arrays equal to the numpy results, and never convert one to numpy."""
import numpy as onp
import pytest
from hypothesis import given, settings, strategies as st

import fgrad
import fgrad.numpy as np
from fgrad.core.pytree import tree_flatten, tree_unflatten
from fgrad.core.table import PRIMITIVES
from fgrad.testing import as_function
from fgrad.testing.strategies import primitive_cases
from duck_array import Duck, ImplicitConversion
from transform_cases import TRANSFORMS, X

try:  # fgrad.scipy's entries too, where scipy is installed
    import fgrad.scipy  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def duck(x):
    x = onp.asarray(x)
    return Duck(x) if x.ndim > 0 else x


def same(got, want, rtol=1e-10, atol=1e-12):
    got, want = tree_flatten(got)[0], tree_flatten(want)[0]
    assert len(got) == len(want)
    for a, b in zip(got, want):
        a = a.get() if isinstance(a, Duck) else onp.asarray(a)
        onp.testing.assert_allclose(a, b, rtol=rtol, atol=atol)


@pytest.mark.parametrize("name", sorted(TRANSFORMS))
def test_every_transform_gives_arrays_of_the_inputs_library(name):
    got = TRANSFORMS[name](Duck(X))
    assert all(isinstance(v, Duck) for v in tree_flatten(got)[0]), got
    same(got, TRANSFORMS[name](X))


def test_a_scalar_result_is_a_0d_array_of_that_library():
    value, g = fgrad.value_and_grad(lambda x: np.sum(x * x))(Duck(X))
    assert isinstance(value, Duck) and value.shape == ()
    same((value, g), (onp.sum(X * X), 2 * X))


def test_a_mutable_input_is_copied_against_writes_before_the_pullback():
    x = Duck(X.copy())
    _, pull = fgrad.vjp(lambda v: np.sum(v * v), x)
    x[:] = 0.0  # (the caller writes into its array before the pullback runs)
    same(pull(1.0), (2 * X,))


# primitives whose rules convert their argument to numpy, which CuPy (and Duck) refuse
DUCK_LACKS = {"scipy.special.psi": "its derivative, scipy.special.polygamma, converts to numpy"}
ENTRIES = sorted(n for n, p in PRIMITIVES.items() if p.spec is not None and p.other_arrays)


@pytest.mark.parametrize("name", ENTRIES)
def test_every_primitive_on_duck_arrays_matches_numpy(name):
    prim = PRIMITIVES[name]

    @settings(max_examples=max(3, settings().max_examples // 10), deadline=None)
    @given(primitive_cases(prim), st.integers(0, 2**31))
    def check(case, seed):
        args, params = case
        rng = onp.random.default_rng(seed)
        fn, xs = as_function(prim, args, params)
        xs = tuple(onp.asarray(x, float) if onp.isrealobj(x) else onp.asarray(x) for x in xs)
        out_leaves, out_tree = tree_flatten(fn(*xs))
        cts = [rng.standard_normal(onp.shape(v)) for v in out_leaves]
        ts = tuple(rng.standard_normal(onp.shape(x)) for x in xs)
        try:
            got_vjp = fgrad.vjp(fn, *map(duck, xs))[1](
                tree_unflatten(out_tree, list(map(duck, cts))))
            got_jvp = fgrad.jvp(fn, tuple(map(duck, xs)), tuple(map(duck, ts)))[1]
        except ImplicitConversion:
            if name in DUCK_LACKS:  # (refused loudly: never a number computed elsewhere)
                return
            raise
        same(got_vjp, fgrad.vjp(fn, *xs)[1](tree_unflatten(out_tree, cts)), rtol=1e-9)
        same(got_jvp, fgrad.jvp(fn, xs, ts)[1], rtol=1e-9)

    check()
