"""Reductions over an axis (int, tuple or None), with ``keepdims``.

The backward pass of a reduction spreads the output cotangent back over the reduced axes:
``spread`` restores the reduced axes (as size 1) and broadcasts. ``max``/``min`` share the
cotangent evenly among tied maxima, the same convention as ``maximum``.

The primitives (``sum``, ``mean``, ``prod``, ``max``, ``min``) take a normalised axis tuple;
the public functions of the same names (and ``amax``, ``amin``, ``ptp``) take numpy's
arguments, ``where=`` and ``initial=`` included, and are registered so the generated tests
check them through numpy's signatures.
"""

import math

import numpy as _onp
from numpy.lib.array_utils import normalize_axis_tuple

import fgrad.numpy as fnp
from . import batch_rules, taylor_rules
from ..core.table import Composed, Spec, define
from ..core.tracer import Tracer, contains_tracer, without_derivative
from .broadcasting import REDUCE, dtype_of, kept_shape, mask, shape_of, spread, sum_p
from .wrapping import (differentiable, inverse_permutation, numpy_reference,
                       unsupported_kwargs, with_numpy_values)



def normal_axes(axis, ndim):
    """Normalise ``axis`` to a sorted tuple of non-negative ints, or None for all axes."""
    if axis is None:
        return None
    return tuple(sorted(normalize_axis_tuple(axis, ndim)))  # numpy's errors for bad axes


def _count(x, axis):
    shape = shape_of(x)
    if axis is None:
        return math.prod(shape)
    return math.prod(shape[a] for a in axis)


def _mean_impl(x, axis, keepdims):
    """numpy.mean's own arithmetic (a sum, then a division by the count as an intp) without
    its Python layer, for float and complex arrays; other inputs go to numpy.mean itself."""
    if x.__class__ is not _onp.ndarray or x.dtype.kind not in "fc" or x.dtype.itemsize < 4 \
            or x.size == 0:  # (numpy's empty-slice warning is numpy's to give)
        return _onp.mean(x, axis=axis, keepdims=keepdims)
    n = _onp.intp(x.size if axis is None else _count(x, axis))
    total = _onp.add.reduce(x, axis=axis, keepdims=keepdims)
    if total.__class__ is _onp.ndarray:
        return _onp.true_divide(total, n, out=total, casting="unsafe")
    return total.dtype.type(total / n)


mean_p = define("mean", _mean_impl,
                [lambda g, ans, x, axis, keepdims: spread(g / _count(x, axis), x, axis, keepdims)],
                linear=True, spec=Spec(REDUCE), batch=batch_rules.along())


def _prod_partials(x, axis):
    """d prod / dx_i: the product of the other entries along ``axis`` (shaped like x), as the
    product of those before and those after it (``exclusive_products``): no division, so it
    and every derivative of it are exact at and near zeros (the quotient ``prod / x_i`` has
    the right value near a zero, and higher derivatives that cancel catastrophically)."""
    shape = shape_of(x)
    reduced = tuple(range(len(shape))) if axis is None else axis
    kept = [i for i in range(len(shape)) if i not in reduced]
    perm = kept + list(reduced)
    n = math.prod(shape[i] for i in reduced)
    rows = fnp.reshape(fnp.transpose(x, perm), [shape[i] for i in kept] + [n])
    left, right = exclusive_products(rows)
    others = fnp.reshape(left * right, [shape[i] for i in perm])
    return fnp.transpose(others, inverse_permutation(perm))


def shifted_in(x):
    """``x`` moved one place along the last axis, a 1 coming in first (its last entry out)."""
    shape = tuple(shape_of(x))
    if shape[-1] == 0:
        return x
    return fnp.concatenate([_onp.ones(shape[:-1] + (1,), dtype_of(x)), x[..., :-1]], axis=-1)


def exclusive_products(x):
    """``(before, after)``: along the last axis, the product of the entries before each entry
    and of those after it, by running products (``cumprod``) alone."""
    before = fnp.cumprod(shifted_in(x), axis=-1)
    after = fnp.cumprod(shifted_in(x[..., ::-1]), axis=-1)[..., ::-1]
    return before, after


prod_p = define("prod", lambda x, axis, keepdims: _onp.prod(x, axis=axis, keepdims=keepdims),
                [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)
                 * _prod_partials(x, axis)],
                [lambda t, ans, x, axis, keepdims: fnp.sum(t * _prod_partials(x, axis),
                                                           axis=axis, keepdims=keepdims)],
                spec=Spec(REDUCE, domain=(0.3, 1.5)), batch=batch_rules.along())


def distinct(*xs):
    """A ``valid`` predicate: no two values (over all arguments) within 0.01 of each other,
    so finite differences never straddle a tie."""
    v = _onp.sort(_onp.concatenate([_onp.ravel(x) for x in xs]))
    return v.size < 2 or _onp.min(_onp.diff(v)) > 0.01


def _extreme_weights(ans, x, axis, keepdims):
    """1/count on the entries that attain the extreme value along ``axis``, else 0."""
    if not keepdims:
        ans = fnp.reshape(ans, kept_shape(shape_of(x), axis))
    hit = mask(fnp.equal(x, ans), x)
    return hit / fnp.sum(hit, axis=axis, keepdims=True)


def _extreme_composed(fn):
    """jet's rule for max and min: the weighted sum of the entries that attain the extreme at
    the point (weights 1/count, constants), the JVP rule's own tie convention, without its
    reading the output."""
    def composed(x, axis, keepdims):
        v = taylor_rules.constant(x)
        w = _extreme_weights(fn(v, axis=axis, keepdims=keepdims), v, axis, keepdims)
        return fnp.sum(x * w, axis=axis, keepdims=keepdims)
    return Composed(composed)


def _extreme(name, fn):
    return define(
        name, lambda x, axis, keepdims: fn(x, axis=axis, keepdims=keepdims),
        [lambda g, ans, x, axis, keepdims: spread(g, x, axis, keepdims)
         * _extreme_weights(ans, x, axis, keepdims)],
        [lambda t, ans, x, axis, keepdims: fnp.sum(t * _extreme_weights(ans, x, axis, keepdims),
                                                   axis=axis, keepdims=keepdims)],
        spec=Spec(REDUCE, valid=distinct), batch=batch_rules.along(),
        taylor=_extreme_composed(fn))


max_p = _extreme("max", _onp.max)
min_p = _extreme("min", _onp.min)


# --- the public functions -------------------------------------------------------------------
# numpy's signatures, registered so the generated tests check them as users call them: axis as
# int, negative int, tuple or None, keepdims, dtype, a list holding tracers (np.mean([x, x + 2])),
# and where=/initial=. A masked or initialised reduction adds in another order than the
# composite below, so its value is numpy's own and only its derivatives come from the composite.

NoValue = _onp._NoValue


def given(v):
    return v is not NoValue and v is not None


def numpy_kwargs(**kwargs):
    """The keyword arguments a caller gave, to hand to numpy itself through
    ``numpy_reference`` (which reads no traced value among them)."""
    return {k: v for k, v in kwargs.items() if given(v)}


def numpy_result(result, value):
    """``result`` (a composite of primitives, giving the derivatives) carrying numpy's ``value``:
    for composites that compute the same number in another order. ``result`` is cast to
    ``value``'s dtype first, so cotangents keep numpy's dtype. ``value`` None (numpy's could
    not be computed: see ``numpy_reference``) leaves ``result`` as it is."""
    if value is None:
        return result
    if not contains_tracer(result):
        return value
    if shape_of(result) != _onp.shape(value):
        raise AssertionError(f"fgrad: composite of shape {shape_of(result)} for numpy's "
                             f"{_onp.shape(value)}")
    if dtype_of(result) != _onp.result_type(value):
        result = fnp.astype(result, _onp.result_type(value))
    return with_numpy_values(result, lambda *args, **kwargs: value, (), {})


def _with_initial(r, x, axes, keep, initial, better):
    """``max``/``min`` of ``r`` (the reduction of ``x``) and ``initial``, which counts as one more
    entry: at a tie between it and m entries each of the m + 1 gets 1/(m + 1) of the cotangent
    (``better`` is ``"greater"`` for max, ``"less"`` for min)."""
    # (the shares from the values below the differentiating transforms, as nodes where a
    # staged function or vmap holds them: no value is read; on plain values numpy's own
    # functions, without fgrad.numpy's dispatch, which cost an eager gradient through max
    # with initial= and sum with where= 8%)
    rv, iv, xv = without_derivative(r), without_derivative(initial), without_derivative(x)
    xp = fnp if contains_tracer((rv, iv, xv)) else _onp
    kept = kept_shape(shape_of(xv), axes)
    ties = xp.sum(xv == xp.reshape(rv, kept), axis=axes, keepdims=keep)
    wins, tie = getattr(xp, better)(rv, iv), rv == iv
    share = xp.where(wins, 1.0, xp.where(tie, ties / (ties + 1.0), 0.0))
    rest = xp.where(wins, 0.0, xp.where(tie, 1.0 / (ties + 1.0), 1.0))
    # where initial wins outright, r (perhaps -inf, all entries masked out) is left out
    r = fnp.where(share > 0, r, 0)
    return r * mask(share, r) + initial * mask(rest, r)


_FILL = {"sum": 0, "prod": 1, "max": -_onp.inf, "min": _onp.inf}


def reduction(prim, np_fn, a, axis, dtype, keepdims, initial=NoValue, where=NoValue):
    if not isinstance(a, Tracer):
        a = fnp.asarray(a)
    if dtype is not None:
        a = fnp.astype(a, dtype)
    axes = normal_axes(axis, len(shape_of(a)))
    keep = given(keepdims) and bool(keepdims)
    if not (given(initial) or given(where)):
        return prim(a, axis=axes, keepdims=keep)
    kwargs = numpy_kwargs(axis=axis, dtype=dtype, keepdims=keepdims, initial=initial,
                           where=where)
    value = numpy_reference(np_fn, a, **kwargs)  # numpy's value, and numpy's errors, first
    if given(where):
        w = without_derivative(where)
        xp = fnp if contains_tracer(w) else _onp  # (as in ``_with_initial``)
        w = xp.broadcast_to(w, shape_of(a))
        if prim is mean_p:
            count = xp.sum(w, axis=axes, keepdims=True)
            total = sum_p(fnp.where(w, a, 0), axis=axes, keepdims=True)
            return numpy_result(fnp.reshape(total / mask(xp.maximum(count, 1), a),
                                            shape_of(value)), value)
        a = fnp.where(w, a, _FILL[prim.name])
    r = prim(a, axis=axes, keepdims=keep)
    if given(initial):
        if prim is sum_p:
            r = r + initial
        elif prim is prod_p:
            r = r * initial
        else:
            r = _with_initial(r, a, axes, keep, initial,
                              "greater" if prim is max_p else "less")
    return numpy_result(r, value)


def _list_call(f, *xs, as_list=False, **params):
    """Spec.call: the ``as_list`` case hands its drawn arrays over as one list (np.sum([x, y]))."""
    return f(list(xs) if as_list else xs[0], **params)


_MASK = _onp.array([[True, False, True], [False, True, True]])
PUBLIC = [(((3,),), {}),
          (((2, 3),), {"axis": -1, "keepdims": True}),
          (((2, 3, 2),), {"axis": (0, -1)}),
          (((3,), (3,)), {"as_list": True, "axis": 0})]
WITH_DTYPE = PUBLIC + [(((2, 2),), {"axis": 0, "dtype": _onp.float64})]


def _public_spec(cases, **kwargs):
    return Spec(cases, call=_list_call, **kwargs)


@differentiable(_onp.sum, _public_spec(WITH_DTYPE + [
    (((2, 3),), {"axis": 1, "where": _MASK, "initial": 0.5})]))
def sum(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
        where=NoValue):
    """``initial`` may be traced; ``where`` masks entries out (they get zero derivative)."""
    unsupported_kwargs("sum", {"out": out})
    return reduction(sum_p, _onp.sum, a, axis, dtype, keepdims, initial, where)


@differentiable(_onp.mean, _public_spec(WITH_DTYPE + [(((2, 3),), {"axis": 0, "where": _MASK})]))
def mean(a, axis=None, dtype=None, out=None, keepdims=NoValue, *, where=NoValue):
    """Masked entries (``where``) get zero derivative."""
    unsupported_kwargs("mean", {"out": out})
    return reduction(mean_p, _onp.mean, a, axis, dtype, keepdims, where=where)


@differentiable(_onp.prod, _public_spec(WITH_DTYPE + [
    (((2, 3),), {"axis": 1, "where": _MASK, "initial": 1.5})], domain=(0.3, 1.5)))
def prod(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
         where=NoValue):
    """Exact through zeros: the derivative with respect to an entry is the product of the
    others, even when some of them are zero (to every order)."""
    unsupported_kwargs("prod", {"out": out})
    return reduction(prod_p, _onp.prod, a, axis, dtype, keepdims, initial, where)


def _extreme_public(prim, np_fn, name):
    @differentiable(np_fn, _public_spec(PUBLIC + [
        (((2, 3),), {"axis": 1, "where": _MASK, "initial": -3.0 if prim is max_p else 3.0})],
        valid=distinct), name=name)
    def reduce(a, axis=None, out=None, keepdims=NoValue, initial=NoValue, where=NoValue):
        """At a tie the cotangent is shared evenly among the tied entries (the average of the
        one-sided derivatives, as for ``maximum``); ``initial`` counts as one more entry, so
        at a tie with m entries each gets 1/(m + 1). Entries masked out by ``where`` get zero
        derivative."""
        unsupported_kwargs(name, {"out": out})
        return reduction(prim, np_fn, a, axis, None, keepdims, initial, where)

    return reduce

max = _extreme_public(max_p, _onp.max, "max")
min = _extreme_public(min_p, _onp.min, "min")
amax = _extreme_public(max_p, _onp.amax, "amax")
amin = _extreme_public(min_p, _onp.amin, "amin")


@differentiable(_onp.ptp, Spec([(((4,),), {}), (((2, 3),), {"axis": -1, "keepdims": True}),
                                (((2, 3, 2),), {"axis": (0, 2)})], valid=distinct))
def ptp(a, axis=None, out=None, keepdims=NoValue):
    """``max - min``: at ties each side shares its cotangent evenly among its tied entries."""
    unsupported_kwargs("ptp", {"out": out})
    return (reduction(max_p, _onp.max, a, axis, None, keepdims)
            - reduction(min_p, _onp.min, a, axis, None, keepdims))
