"""Taylor mode: fgrad.jet against nested jvp (two independent computations by fgrad), closed
forms, exact polynomials, and its composition with the other transforms."""
import math
import re

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.table import PRIMITIVES
from fgrad.testing import as_function, random_case
from fgrad.tree_util import tree_leaves

try:  # fgrad.scipy's entries are expanded too, where scipy is installed
    import fgrad.scipy  # noqa: F401
except ImportError:  # pragma: no cover
    pass


def path_terms(f, xs, series, order):
    """The output path's derivatives at t = 0 by nested jvp in t: the reference."""
    def path(t):
        return f(*[x + sum(s[k] * (t ** (k + 1) / math.factorial(k + 1)) for k in range(order))
                   for x, s in zip(xs, series)])

    fs = [path]
    for _ in range(order):
        fs.append(lambda t, g=fs[-1]: fgrad.jvp(g, (t,), (1.0,))[1])
    return [fs[k](0.0) for k in range(1, order + 1)]


def _expanded(prim):
    return prim.taylor is not None or prim.derivatives is not None


ENTRIES = sorted(n for n, p in PRIMITIVES.items() if p.spec is not None)
RULED = [n for n in ENTRIES if _expanded(PRIMITIVES[n])]


def _check_entry(name, order, draws=1):
    prim = PRIMITIVES[name]
    rng = onp.random.default_rng(abs(hash(name)) % 2**32)
    for case in prim.spec.cases[:2]:
        for _ in range(draws):
            f, xs = as_function(prim, *random_case(prim, rng, case))
            xs = tuple(onp.asarray(x, float) if onp.isrealobj(x) else x for x in xs)
            series = [[0.5 * rng.standard_normal(onp.shape(x)).astype(onp.result_type(x))
                       for _ in range(order)] for x in xs]
            out, terms = fgrad.jet(f, xs, series)
            for o, v in zip(tree_leaves(out), tree_leaves(f(*xs))):  # (several outputs)
                onp.testing.assert_array_equal(o, v)
            want = path_terms(f, xs, series, order)
            # terms: a list of K terms per output leaf; want: K outputs
            for leaf, got_terms in enumerate(tree_leaves(terms, is_leaf=_terms_list)):
                for k, got in enumerate(got_terms):
                    ref = tree_leaves(want[k])[leaf]
                    scale = 1.0 + onp.max(onp.abs(ref), initial=0.0)
                    onp.testing.assert_allclose(got, ref, rtol=1e-8, atol=1e-9 * scale,
                                                err_msg=f"{name}: output {leaf}, term {k + 1}")


def _terms_list(v):
    return isinstance(v, list)


def test_every_elementwise_and_linear_primitive_has_a_rule():
    """The rules the issue asks for: the arithmetic, exp/log/power/trigonometric/hyperbolic
    families and their inverses, piecewise functions, and every linear map."""
    for name in ["add", "subtract", "multiply", "divide", "power", "exp", "exp2", "expm1", "log",
                 "log1p", "log2", "log10", "sqrt", "cbrt", "square", "reciprocal", "sin", "cos",
                 "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "tanh", "arcsinh",
                 "arccosh", "arctanh", "maximum", "minimum", "fabs", "negative", "sum",
                 "absolute", "float_power", "mod", "arctan2", "where", "matmul", "reshape",
                 "transpose", "concatenate", "getitem"]:
        assert name in PRIMITIVES, name
        assert _expanded(PRIMITIVES[name]), f"{name} has no Taylor rule"


@pytest.mark.parametrize("name", RULED)
def test_taylor_rule_against_nested_jvp_to_order_6(name):
    _check_entry(name, 6)


@pytest.mark.parametrize("name", sorted(set(ENTRIES) - set(RULED)))
def test_primitives_without_a_rule_expand_by_nested_forward_mode(name):
    _check_entry(name, 2)


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
