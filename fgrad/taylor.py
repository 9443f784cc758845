"""Taylor mode: ``jet`` pushes a truncated power series through a function.

The input path is ``x(t) = x0 + sum_k x_k t^k / k!`` (JAX's ``jax.experimental.jet``
convention: the terms are the path's derivatives at ``t = 0``), and ``jet`` returns the
output path's terms in the same convention. Each tracer of a ``JetTrace`` carries its value
and its K terms; each primitive call computes the output's K terms from its arguments' in
O(K^2) work, where the k-th derivative by nested ``jvp`` or ``grad`` costs O(2^k).

A primitive's terms come, in this order, from:

1. its Taylor rule (``Primitive.taylor``, declared with the primitive's other rules: linear
   and multilinear maps by Leibniz's rule, which ``fgrad.table`` gives them; the elementwise
   functions whose derivative reads their own output, by the recurrence of the ODE
   ``y' = d(y, x) x'``: ``fgrad.numpy.taylor_rules``);
2. its derivative ``d(x)`` (``Primitive.derivatives``, for the elementwise functions whose
   derivative reads the input only): ``y' = d(x) x'``, so the derivative's own jet, one
   order lower, gives ``y``'s terms by one Leibniz sum each;
3. otherwise nested forward mode along the path ``t -> prim(x(t))``: correct, and O(2^K)
   (``tests/test_jet.py`` checks the primitives that take this path apart from the others).

Rules are written with ``fgrad.numpy``, so ``jet`` composes with the other transforms:
``grad`` of a jet's terms, a jet under ``vmap``, ``jit`` of a jet.
"""
from math import factorial
from typing import Any, Callable, Sequence

import numpy as _onp

from .fpwarnings import at_user_code
from .numpy.array_tracer import ArrayTracer
from .numpy import stack
from .numpy.taylor_rules import leibniz, shaped
from .pytree import tree_flatten, tree_unflatten
from .tracer import Trace, innermost_meta
from .transforms import (_check_like, _flat_inputs, _fresh, _refuse_unknown, _zeros_like, finish,
                         jvp)

__all__ = ["jet", "derivatives"]


class JetTracer(ArrayTracer):
    __slots__ = ("_series",)

    def __init__(self, trace, value, series):
        self._trace, self._value, self._series = trace, value, series


class JetTrace(Trace):
    __slots__ = ("order",)

    def __init__(self, order):
        super().__init__("jet")
        self.order = order

    def process(self, prim, args, params):
        vals, series = list(args), [None] * len(args)
        for i, a in enumerate(args):
            if a.__class__ is JetTracer and a._trace is self:
                vals[i], series[i] = a._value, a._series
        ans = prim(*vals, **params)
        out = output_series(prim, series, ans, vals, params, self.order)
        return ans if out is None else JetTracer(self, ans, out)


def output_series(prim, series, ans, args, params, order):
    """The output's ``order`` terms of ``ans = prim(*args, **params)`` from the arguments'
    (``None`` for a constant argument); None when the output is constant."""
    if prim.taylor is not None:
        out = prim.taylor(series, ans, *args, **params)
        # (NotImplemented: a call the rule does not cover, such as a linear map's nonlinear
        # argument or a complex abs)
        if out is not NotImplemented:
            return out
    if prim.derivatives is not None:
        return _by_derivatives(prim.derivatives, series, ans, args, params, order)
    return _by_nested_jvp(prim, series, args, params, order)


def _by_derivatives(ds, series, ans, args, params, order):
    """``y' = sum_i d_i(x) x_i'``: the derivatives' jets to order K-1, then
    ``y_{k+1} = sum_i sum_j C(k, j) d_i[j] x_i[k+1-j]`` (Leibniz on ``d_i * x_i'``)."""
    out = None
    for d, s in zip(ds, series):
        if s is None or d is None:
            continue
        if order == 1:
            dj = [d(ans, *args, **params)]
        else:
            d0, dts = _jet_of(lambda *xs: d(ans, *xs, **params), args, series, order - 1)
            dj = [d0] + dts
        terms = [shaped(leibniz(dj, s, k), ans) for k in range(order)]
        out = terms if out is None else [a + b for a, b in zip(out, terms)]
    return out


def _jet_of(fn, args, series, order):
    """``fn``'s value and ``order`` terms along the arguments' paths (a nested jet)."""
    trace = JetTrace(order)
    ins = [a if s is None else JetTracer(trace, a, s[:order]) for a, s in zip(args, series)]
    out = trace.run(fn, ins, "jet")
    if out.__class__ is JetTracer and out._trace is trace:
        return out._value, out._series
    return out, [_onp.zeros_like(innermost_meta(out))] * order


def _by_nested_jvp(prim, series, args, params, order):
    """The terms of ``t -> prim(x(t))`` by ``order`` nested ``jvp`` in ``t`` at 0: the path's
    derivatives directly (no rule needed, O(2^K))."""
    def path(t):
        xs = [a if s is None else a + sum(s[k] * (t ** (k + 1) / factorial(k + 1))
                                          for k in range(order)) for a, s in zip(args, series)]
        return [prim(*xs, **params)]

    f = path
    for _ in range(order):  # f returns [y, y', ..., y^(m)] at t; one jvp adds a derivative
        f = _one_more(f)
    return f(0.0)[1:]


def _one_more(f):
    def g(t):
        ys, ts = jvp(f, (t,), (1.0,))
        return ys + [ts[-1]]
    return g


def jet(f: Callable[..., Any], primals: Sequence[Any], series: Sequence[Any]) -> tuple:
    """Taylor mode: ``(f(*primals), series_out)`` along the path
    ``x(t) = x0 + sum_k x_k t^k / k!`` (JAX's ``jax.experimental.jet`` convention).

    ``primals`` is a tuple of arrays (or pytrees), ``series`` a tuple with one entry per
    primal, each a list of K terms shaped like it (pytrees: a list of K such pytrees).
    ``series_out`` has the output's structure, a list of K terms per leaf: the output path's
    derivatives at ``t = 0``. Every primitive costs O(K^2).

    >>> import fgrad, fgrad.numpy as np
    >>> y, (y1, y2, y3) = fgrad.jet(np.exp, (0.0,), ([1.0, 0.0, 0.0],))
    >>> float(y), float(y1), float(y2), float(y3)
    (1.0, 1.0, 1.0, 1.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError("jet(f, primals, series): primals and series must be tuples or lists, "
                        f"got {type(primals).__name__} and {type(series).__name__}")
    if len(series) != len(primals):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         "list of terms per primal")
    flat, in_tree = _flat_inputs(tuple(primals), "jet")
    terms_per_leaf = [[] for _ in flat]
    order = None
    leaf = 0
    for i, (p, s) in enumerate(zip(primals, series)):
        p_leaves, p_tree = tree_flatten(p)
        if not isinstance(s, (list, tuple)):
            raise TypeError(f"jet: series[{i}] must be a list of terms, got "
                            f"{type(s).__name__}")
        if order is None:
            order = len(s)
        elif len(s) != order:
            raise ValueError(f"jet: series[{i}] has {len(s)} terms but series[0] has "
                             f"{order}; every primal's series needs the same number")
        for k, term in enumerate(s):
            t_leaves, t_tree = tree_flatten(term)
            if t_tree != p_tree:
                raise ValueError(f"jet: term {k} of series[{i}] has structure {t_tree!r}, "
                                 f"but primals[{i}] has {p_tree!r}")
            for j, (t, x) in enumerate(zip(t_leaves, p_leaves)):
                _check_like("jet", t, x, f"term {k} of series[{i}]")
                terms_per_leaf[leaf + j].append(_onp.asarray(t, _onp.result_type(x)))
        leaf += len(p_leaves)
    if not order:
        raise ValueError("jet: the series are empty; give at least one term per primal")
    trace = JetTrace(order)
    ins = [JetTracer(trace, x, ts) for x, ts in zip(flat, terms_per_leaf)]
    with at_user_code():
        out = trace.run(f, tree_unflatten(in_tree, ins), "jet")
    out_flat, out_tree = tree_flatten(out)
    vals, outs = [], []
    for o in out_flat:
        if o.__class__ is JetTracer and o._trace is trace:
            vals.append(_fresh(finish(o._value), flat))
            outs.append([finish(_onp.zeros_like(innermost_meta(o._value)) if t is None else t,
                                o._value) for t in o._series])
        else:
            _refuse_unknown(o, "jet", lambda: "an output")
            vals.append(_fresh(finish(o), flat))
            outs.append([_zeros_like(o) for _ in range(order)])
    return tree_unflatten(out_tree, vals), tree_unflatten(out_tree, outs)


def derivatives(f: Callable[..., Any], order: int) -> Callable[..., Any]:
    """``f(x), f'(x), ..., f^(order)(x)`` of a function of one scalar (or elementwise, of each
    entry of an array), stacked along a new first axis, by one ``jet``: O(order^2) work.

    >>> import fgrad, fgrad.numpy as np
    >>> [round(float(v), 6) for v in fgrad.derivatives(np.tanh, 3)(0.0)]
    [0.0, 1.0, 0.0, -2.0]
    """
    if not isinstance(order, int) or order < 1:
        raise ValueError(f"derivatives: order must be a positive integer, got {order!r}")

    def all_orders(x):
        x = _onp.asarray(x) if not isinstance(x, ArrayTracer) else x
        one = _onp.ones_like(innermost_meta(x), dtype=_onp.result_type(innermost_meta(x), 1.0))
        terms = [one] + [_onp.zeros_like(one) for _ in range(order - 1)]
        y, ys = jet(f, (x,), (terms,))
        return stack([y] + list(ys))

    return all_orders

