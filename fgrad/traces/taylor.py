"""Taylor mode: ``jet`` pushes a truncated power series through a function.

The input path is ``x(t) = x0 + sum_k x_k t^k / k!`` (JAX's ``jax.experimental.jet``
convention: the terms are the path's derivatives at ``t = 0``), and ``jet`` returns the
output path's terms in the same convention. Each tracer of a ``JetTrace`` carries its value
and its K terms; each primitive call computes the output's K terms from its arguments' in
O(K^2) work, where the k-th derivative by nested ``jvp`` or ``grad`` costs O(2^k).

A primitive's terms come from its Taylor rule (``Primitive.taylor``, declared with its other
rules: linear and multilinear maps by Leibniz's rule, which ``fgrad.core.table`` gives them; the
arithmetic and the elementwise functions whose derivative reads their own output by the
recurrence of their ODE, ``fgrad.numpy.taylor_rules``; others as a composition of primitives
equal to them, ``table.Composed``: expit by tanh, logsumexp and softmax by exp, sum and log,
a density by the exponential of its log-density, inv by solve; an inverse function by
Newton's method on the series, ``table.Inverse``: erfinv, ndtri, ppf). A primitive without
one is expanded
from its JVP rule ``J``: along the path ``y' = J(x', y, x)``, so the rule's own jet, one order
lower, gives the terms: O(K^2) like a Taylor rule, and O(K^3) where ``J`` reads the output
``y`` (one jet per order). No primitive needs nested forward mode, whose cost is O(2^K);
``python -m fgrad check`` says which way each primitive takes.

Rules are written with ``fgrad.numpy``, so ``jet`` composes with the other transforms:
``grad`` of a jet's terms, a jet under ``vmap``, ``jit`` of a jet.
"""
from typing import Any, Callable, Sequence

import numpy as _onp

from ..core.fpwarnings import at_user_code
from ..numpy.array_tracer import ArrayTracer
from ..numpy import stack
from ..numpy.namespace import values_only
from ..numpy.taylor_rules import constant, shaped
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.table import Composed, Inverse
from ..core.values import strong
import fgrad.numpy as fnp
from ..core.tracer import STAGING, Trace, Tracer, concrete, value_dtype, value_for_shape
from .rules import jvp_all
from .transpose import zeros_like
from .arguments import (check_like, finish, flat_inputs, fresh, outputs_of, staged_form,
                        staged_under, zeros_for)

__all__ = ["jet", "derivatives", "expansions"]


class JetTracer(ArrayTracer):
    __slots__ = ("_series",)

    def __init__(self, trace, value, series):
        self._trace, self._value, self._series, self._base = trace, value, series, None


class JetTrace(Trace):
    __slots__ = ("order", "watched", "read", "log")
    tracer_type = JetTracer

    def __init__(self, order, log=None):
        super().__init__("jet")
        self.order = order
        # a tracer whose use is noted in ``read`` (a call's output inside its own JVP rule,
        # whose terms are not known yet: see ``_by_jvp_rule``)
        self.watched, self.read = None, False
        # a list, to note how each primitive was expanded (``python -m fgrad check``)
        self.log = log

    def process(self, prim, args, params):
        vals, series, below, weak = self.arguments(prim, args)
        i = 0
        for t in series:  # (this trace's tracers give their terms)
            if t is not None:
                if t is self.watched:
                    self.read = True
                series[i] = t._series
            i += 1
        ans = prim(*vals, **params) if below else prim.fast_impl(*vals, **params)
        if weak and not prim.keeps_python_numbers:  # (a built-in rule sees an input kept a
            vals = strong(vals, series)  # Python number as a numpy scalar)
        out, how = expand(prim, series, ans, vals, params, self.order)
        if self.log is not None:
            self.log.append((prim.name, how))
        if out is None:
            return ans
        # (a rule's None is a zero term: the rules see arrays, or None for a whole constant)
        return JetTracer(self, ans, [zeros_like(ans) if t is None else t for t in out])


    def process_staged(self, derived, leaves):
        """``jet(jit(f))``: the staged jet of ``f`` (of this order), one level down: its code
        gives the outputs and their terms in one run."""
        if self.log is not None:  # (``expansions`` notes each primitive's expansion)
            return NotImplemented
        return staged_under(self, derived, leaves, f"jet of order {self.order}",
                            lambda: JetTrace(self.order), lambda t: list(t._series))


# Whether a composition's ``where`` holds at the point: a primitive without derivative, so a
# staged jet branches on (guards) its one boolean, not on the values it is computed from
_holds_p = values_only(lambda *values, test, **params: _onp.bool_(test(*values, **params)),
                       "taylor_rule_holds")


def _holds(test, ans, args, params):
    # (plain values and no staging: the test itself, without the primitive's call, which cost
    # an eager jet of logaddexp 3.5%)
    if STAGING or isinstance(ans, Tracer) or any(isinstance(a, Tracer) for a in args):
        return bool(_holds_p(ans, *args, test=test, **params))
    return test(ans, *args, **params)


def expand(prim, series, ans, args, params, order):
    """The output's ``order`` terms of ``ans = prim(*args, **params)`` from the arguments'
    (``None`` for a constant argument; terms None for a constant output), and how they were
    found: ``"rule"`` (the primitive's Taylor rule), ``"jvp"`` (its JVP rule's jet, O(K^2))
    or ``"jvp, reads output"`` (the same, one order at a time, O(K^3): the rule reads the
    primitive's output, whose terms it is finding)."""
    rule = prim.taylor
    if rule.__class__ is Composed or rule.__class__ is Inverse:
        # (a composition takes constants from the values and holds where they allow: under
        # vmap, where they are a whole batch, the JVP rule's route serves every example)
        if concrete(ans) and all(concrete(a) for a in args) and (
                rule.where is None or _holds(rule.where, ans, args, params)):
            if rule.__class__ is Inverse:
                return _inverse_terms(rule, series, ans, args, params, order), "rule"
            terms = _jet_of(lambda *xs: rule.fn(*xs, **params), args, series, order)[1]
            return [shaped(t, ans) for t in terms], "rule"
    elif rule is not None:
        out = rule(series, ans, *args, **params)
        # (NotImplemented: a call the rule does not cover, such as a linear map's nonlinear
        # argument or a complex abs)
        if out is not NotImplemented:
            return out, "rule"
    return _by_jvp_rule(prim, series, ans, args, params, order)


def _inverse_terms(rule, series, ans, args, params, order):
    """The terms of ``y(t)`` solving ``f(y(t), *rest(t)) = q(t)`` by Newton's method on the
    series: from ``y = ans`` (right to order 0), each step ``y + (q - f(y)) / df(y)`` is right
    to order ``2 k + 1`` if ``y`` was to order ``k``, so ceil(log2(K + 1)) jets of ``f`` and
    ``df``, each to no more orders than the step can get right. The residual's constant term
    (rounding in ``f(ans) - q``) is taken out: ``y``'s value stays ``ans``."""
    def step(y, q, *rest):
        r = q - rule.f(y, *rest, **params)
        return y + (r - constant(r)) / rule.df(y, *rest, **params)

    terms = [zeros_like(ans)] * order
    right = 0
    while right < order:
        right = min(order, 2 * right + 1)
        found = _jet_of(step, [ans] + list(args), [terms] + list(series), right)[1]
        terms = found + [zeros_like(ans)] * (order - right)
    return [shaped(t, ans) for t in terms]


def _by_jvp_rule(prim, series, ans, args, params, order):
    """Along the path, ``y(t) = prim(x(t))`` has ``y' = J(x', y, x)`` with ``J`` the JVP rule,
    so ``y_{k+1}`` is the k-th term of ``J`` along the path: one jet of the rule to order
    K - 1 gives them all (the value ``y_1``, the terms ``y_2 .. y_K``). A rule that reads
    ``y`` needs ``y``'s terms before they are known: then the jet runs once per order, the
    k-th with ``y``'s first k terms, which are all its k-th term needs."""
    live = [i for i, s in enumerate(series) if s is not None]
    if not live:
        return None, "jvp"
    n = len(args)

    def rule(y, *xs_and_ts):
        tangents = [None] * n
        for i, t in zip(live, xs_and_ts[n:]):
            tangents[i] = t
        xs = list(xs_and_ts[:n])
        return jvp_all(prim)(xs, tangents, params, y)[1]

    x_series = list(series) + [series[i][1:] for i in live]
    x_values = list(args) + [series[i][0] for i in live]
    if order == 1:
        return [shaped(rule(ans, *x_values), ans)], "jvp"
    unknown = [zeros_like(ans)] * (order - 1)  # (y's terms, for a rule that does not read y)
    y1, terms, read = _jet_of(rule, [ans] + x_values, [unknown] + x_series, order - 1)
    if read:
        ys = [y1]
        for k in range(1, order):
            ys.append(_jet_of(rule, [ans] + x_values, [ys] + x_series, k)[1][k - 1])
        return [shaped(t, ans) for t in ys], "jvp, reads output"
    return [shaped(t, ans) for t in [y1] + terms], "jvp"


def _jet_of(fn, args, series, order):
    """``fn``'s value, ``order`` terms and whether it read its first argument, along the
    arguments' paths (a nested jet; ``None`` series: a constant)."""
    trace = JetTrace(order)
    ins = [a if s is None else JetTracer(trace, a, s[:order]) for a, s in zip(args, series)]
    trace.watched = ins[0]
    out = trace.run(fn, ins, "jet")
    if out.__class__ is JetTracer and out._trace is trace:
        return out._value, list(out._series), trace.read
    return out, [zeros_like(out)] * order, trace.read


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
    if isinstance(primals, (tuple, list)) and isinstance(series, (tuple, list)):
        k = len(primals)  # (a jitted f: its jet staged whole, taking primals then series)
        staged = staged_form(f, "jet", (k,),
                             lambda g: lambda *both: jet(g, both[:k], both[k:]))
        if staged is not None:
            return staged(*primals, *series)
    return _jet(f, primals, series, None)


def expansions(f: Callable[..., Any], primals: Sequence[Any],
               series: Sequence[Any]) -> list:
    """How ``jet(f, primals, series)`` expands each primitive call, in order: ``(name,
    how)`` with ``how`` ``"rule"`` (a Taylor rule), ``"jvp"`` (the JVP rule's jet, O(K^2))
    or ``"jvp, reads output"`` (one jet per order, O(K^3)). Where a jet is slow, this says
    which primitives would gain from a rule of their own.

    >>> import fgrad.numpy as np
    >>> from fgrad.traces.taylor import expansions
    >>> expansions(lambda x: np.log(np.tanh(x)), (0.5,), ([1.0, 0.0],))
    [('tanh', 'rule'), ('log', 'jvp')]
    """
    log: list = []
    _jet(f, primals, series, log)
    return log


def _jet(f, primals, series, log):
    if not isinstance(primals, (tuple, list)) or not isinstance(series, (tuple, list)):
        raise TypeError("jet(f, primals, series): primals and series must be tuples or lists, "
                        f"got {type(primals).__name__} and {type(series).__name__}")
    if len(series) != len(primals):
        raise ValueError(f"jet: {len(primals)} primals but {len(series)} series; give one "
                         "list of terms per primal")
    flat, in_tree = flat_inputs(tuple(primals), "jet")
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
                if not (t.__class__ is x.__class__ is _onp.ndarray and t.shape == x.shape
                        and t.dtype == x.dtype):  # (else the term is as it must be already)
                    check_like("jet", t, x, f"term {k} of series[{i}]")
                    t = _term_like(t, x)
                terms_per_leaf[leaf + j].append(t)
        leaf += len(p_leaves)
    if not order:
        raise ValueError("jet: the series are empty; give at least one term per primal")
    trace = JetTrace(order, log)
    ins = [JetTracer(trace, x, ts) for x, ts in zip(flat, terms_per_leaf)]
    with at_user_code():
        out = trace.run(f, tree_unflatten(in_tree, ins), "jet")
    out_flat, out_tree, own = outputs_of(trace, out, "jet")
    vals, outs = [], []
    for o, j in zip(out_flat, own):
        if j is None:
            vals.append(fresh(finish(o), flat))
            outs.append([zeros_for(o) for _ in range(order)])
        else:
            vals.append(fresh(finish(j._value), flat))
            outs.append([finish(t, j._value) for t in j._series])
    return tree_unflatten(out_tree, vals), tree_unflatten(out_tree, outs)


def _term_like(t, x):
    """A series term in its primal's dtype; a traced term (a batch of directions under
    ``vmap``, a direction being differentiated) stays traced."""
    dtype = value_dtype(x)
    if isinstance(t, Tracer):
        return t if value_dtype(t) == dtype else fnp.astype(t, dtype)
    return _onp.asarray(t, dtype)


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
        one = _onp.ones_like(value_for_shape(x), dtype=_onp.result_type(value_for_shape(x), 1.0))
        terms = [one] + [_onp.zeros_like(one)] * (order - 1)  # (rules never write a term)
        y, ys = jet(f, (x,), (terms,))
        return stack([y] + list(ys))

    return all_orders

