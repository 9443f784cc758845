"""Statistics and running reductions: var, std, cumsum, median, percentile, nan-functions.

Two primitives live here, ``cumsum`` (linear: its transpose is the reversed running sum) and
``cumprod`` (whose partials are exact through zeros, like ``prod``'s). Everything else is a
public function composed of primitives and registered with ``differentiable``, so the
generated tests check it through numpy's own signature.

Conventions, each stated in the function's docstring and tested in tests/test_statistics.py:

* order statistics (``median``, ``percentile``, ``quantile`` and their nan-versions) share the
  cotangent of a value evenly among the entries equal to it, as ``max`` does at ties;
* the derivative of a ``linear``-type quantile with respect to ``q`` is a kink where ``q``
  falls exactly on a sample; there it is the average of the one-sided slopes;
* ``std`` at zero spread (variance exactly 0) has derivative 0, the average of the one-sided
  derivatives (as ``abs'(0) = 0``), where numpy's formula would give 0/0;
* nan-functions give NaN entries zero derivative.

Where a composite computes numpy's number in another order (masked sums, interpolation,
sorting) its value is numpy's own (``numpy_result``) and only its derivatives are its own.
"""
import numpy as _onp
from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple

import fgrad.numpy as fnp
from ..table import Spec, define
from ..tracer import contains_tracer, innermost, strip
from .broadcasting import dtype_of, mask, shape_of
from .reductions import (_NoValue, _axes, _given, _numpy_kwargs, _reduce, distinct, kept_shape,
                         max_p, mean_p, min_p, noted, numpy_result, prod_p, sum_p)
from .wrapping import differentiable, unsupported_kwargs


def _ndim(x):
    return len(shape_of(x))


def _size(shape):
    return int(_onp.prod(shape, dtype=int))


def _along(axis, nd, s):
    """An index taking ``s`` along ``axis`` and everything along the other axes."""
    idx = [slice(None)] * nd
    idx[axis] = s
    return tuple(idx)


# --- running sums and products ---------------------------------------------------------------

def _reverse(x, axis):
    return fnp.getitem(x, _along(axis, _ndim(x), slice(None, None, -1)))


def _cumsum_transpose(g, axis):
    """The transpose of a running sum: the running sum from the other end."""
    return _reverse(cumsum_p(_reverse(g, axis), axis=axis), axis)


RUNNING = [(((4,),), {"axis": 0}), (((2, 3),), {"axis": 1}), (((3, 2),), {"axis": 0})]

cumsum_p = define("cumsum", lambda x, axis: _onp.cumsum(x, axis=axis),
                  [lambda g, ans, x, axis: _cumsum_transpose(g, axis)], linear=True,
                  spec=Spec(RUNNING))


def _has_zero(x):
    return bool((innermost(x) == 0).any())


def _cumprod_partials(x, axis):
    """``P[..., i, j] = d cumprod(x)[j] / d x[i]`` along ``axis`` (moved last): the product of
    ``x[k]`` over ``k <= j, k != i`` where ``j >= i``, else 0. Row i is the running product of
    x with x[i] replaced by 1, so it is exact through zeros, and so is every derivative of it
    (O(n^2) work, only taken when x has a zero along the axis)."""
    xl = fnp.swapaxes(x, axis, -1)
    n = shape_of(xl)[-1]
    rows = fnp.where(_onp.eye(n, dtype=bool), 1, fnp.expand_dims(xl, -2))
    upper = _onp.triu(_onp.ones((n, n), dtype=bool))
    return fnp.where(upper, cumprod_p(rows, axis=_ndim(rows) - 1), 0)


def _cumprod_vjp(g, ans, x, axis):
    if not _has_zero(x):
        return _cumsum_transpose(g * ans, axis) / x
    gl = fnp.expand_dims(fnp.swapaxes(g, axis, -1), -2)
    return fnp.swapaxes(fnp.sum(_cumprod_partials(x, axis) * gl, axis=-1), axis, -1)


def _cumprod_jvp(t, ans, x, axis):
    if not _has_zero(x):
        return ans * cumsum_p(t / x, axis=axis)
    tl = fnp.expand_dims(fnp.swapaxes(t, axis, -1), -1)
    return fnp.swapaxes(fnp.sum(_cumprod_partials(x, axis) * tl, axis=-2), axis, -1)


cumprod_p = define("cumprod", lambda x, axis: _onp.cumprod(x, axis=axis),
                   [_cumprod_vjp], [_cumprod_jvp], spec=Spec(RUNNING, domain=(0.3, 1.5)))


def _running(prim, a, axis, dtype):
    a = fnp.asarray(a)
    if dtype is not None:
        a = fnp.astype(a, dtype)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    return prim(a, axis=normalize_axis_index(axis, _ndim(a)))


RUNNING_PUBLIC = [(((2, 3),), {}), (((2, 3),), {"axis": -1}), (((4,),), {"axis": 0}),
                  (((3, 2),), {"axis": 0, "dtype": _onp.float64})]


@noted
@differentiable(_onp.cumsum, Spec(RUNNING_PUBLIC))
def cumsum(a, axis=None, dtype=None, out=None):
    unsupported_kwargs("cumsum", {"out": out})
    return _running(cumsum_p, a, axis, dtype)


@noted
@differentiable(_onp.cumprod, Spec(RUNNING_PUBLIC, domain=(0.3, 1.5)))
def cumprod(a, axis=None, dtype=None, out=None):
    """Exact through zeros: the derivative with respect to an entry is the product of the
    others before each position, even when some are zero (to every order)."""
    unsupported_kwargs("cumprod", {"out": out})
    return _running(cumprod_p, a, axis, dtype)


def _cumulative(prim, identity, x, axis, dtype, include_initial):
    x = fnp.asarray(x)
    if _ndim(x) == 0:
        x = fnp.reshape(x, (1,))
    if axis is None:
        if _ndim(x) >= 2:
            raise ValueError("For arrays which have more than one dimension ``axis`` argument "
                             "is required.")
        axis = 0
    res = _running(prim, x, axis, dtype)
    if include_initial:
        axis = normalize_axis_index(axis, _ndim(x))
        shape = list(shape_of(res))
        shape[axis] = 1
        res = fnp.concatenate([_onp.full(shape, identity, dtype_of(res)), res], axis=axis)
    return res


CUMULATIVE = [(((4,),), {}), (((2, 3),), {"axis": -1, "include_initial": True}),
              (((3, 2),), {"axis": 0})]


@noted
@differentiable(_onp.cumulative_sum, Spec(CUMULATIVE))
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    unsupported_kwargs("cumulative_sum", {"out": out})
    return _cumulative(cumsum_p, 0, x, axis, dtype, include_initial)


@noted
@differentiable(_onp.cumulative_prod, Spec(CUMULATIVE, domain=(0.3, 1.5)))
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Exact through zeros, as ``cumprod``."""
    unsupported_kwargs("cumulative_prod", {"out": out})
    return _cumulative(cumprod_p, 1, x, axis, dtype, include_initial)


# --- NaN-skipping sums, products, extremes and running versions ------------------------------

def _nan_mask(a):
    """The plain boolean mask of a's NaN entries, or None if it has none."""
    nan = _onp.isnan(innermost(a))
    return nan if nan.any() else None


def _nans_at(f, x, *rest, nans=None, **params):
    """Spec.call for nan-functions: NaN is put where the boolean array ``nans`` says, so the
    generated tests check that NaN entries are skipped and get zero derivative."""
    if nans is not None:
        x = fnp.where(nans, _onp.nan, x)
    return f(x, *rest, **params)


_NANS = _onp.array([[False, True, False], [False, False, True]])
_WHERE = _onp.array([[True, False, True], [True, True, True]])  # with _NANS: no slice empty
NAN_REDUCE = [(((2, 3),), {"nans": _NANS}),
              (((2, 3),), {"axis": -1, "keepdims": True, "nans": _NANS}),
              (((2, 2, 2),), {"axis": (0, 2)}),
              (((2, 3),), {"axis": 0, "nans": _NANS, "where": _WHERE})]


def _replaced(a, fill):
    a = fnp.asarray(a)
    nan = _nan_mask(a)
    return a if nan is None else fnp.where(nan, fill, a)


@noted
@differentiable(_onp.nansum, Spec(NAN_REDUCE, call=_nans_at))
def nansum(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
           where=_NoValue):
    """NaN entries get zero derivative."""
    unsupported_kwargs("nansum", {"out": out})
    return _reduce(sum_p, _onp.sum, _replaced(a, 0), axis, dtype, keepdims, initial, where)


@noted
@differentiable(_onp.nanprod, Spec(NAN_REDUCE, call=_nans_at, domain=(0.3, 1.5)))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=_NoValue, initial=_NoValue,
            where=_NoValue):
    """NaN entries get zero derivative; exact through zeros, as ``prod``."""
    unsupported_kwargs("nanprod", {"out": out})
    return _reduce(prod_p, _onp.prod, _replaced(a, 1), axis, dtype, keepdims, initial, where)


def _nan_extreme(prim, np_fn, nan_fn, name):
    @differentiable(nan_fn, Spec(NAN_REDUCE[:3] + [
        (((2, 3),), {"axis": 0, "nans": _NANS, "where": _WHERE,
                     "initial": -3.0 if prim is max_p else 3.0})],
        call=_nans_at, valid=distinct), name=name)
    def reduce(a, axis=None, out=None, keepdims=_NoValue, initial=_NoValue, where=_NoValue):
        """NaN entries get zero derivative; at a tie the cotangent is shared evenly among the
        tied entries (and ``initial``, which counts as one more entry), as for ``max``."""
        unsupported_kwargs(name, {"out": out})
        a = fnp.asarray(a)
        nan = _nan_mask(a)
        if nan is None:
            return _reduce(prim, np_fn, a, axis, None, keepdims, initial, where)
        value = nan_fn(strip(a), **_numpy_kwargs(axis=axis, keepdims=keepdims,
                                                 initial=initial, where=where))
        filled = fnp.where(nan, -_onp.inf if prim is max_p else _onp.inf, a)
        return numpy_result(_reduce(prim, np_fn, filled, axis, None, keepdims, initial, where),
                            value)

    return noted(reduce)


nanmax = _nan_extreme(max_p, _onp.max, _onp.nanmax, "nanmax")
nanmin = _nan_extreme(min_p, _onp.min, _onp.nanmin, "nanmin")

NAN_RUNNING = [(((2, 3),), {"nans": _NANS}), (((2, 3),), {"axis": -1, "nans": _NANS}),
               (((4,),), {"axis": 0})]


@noted
@differentiable(_onp.nancumsum, Spec(NAN_RUNNING, call=_nans_at))
def nancumsum(a, axis=None, dtype=None, out=None):
    """NaN entries count as 0 and get zero derivative."""
    unsupported_kwargs("nancumsum", {"out": out})
    return _running(cumsum_p, _replaced(a, 0), axis, dtype)


@noted
@differentiable(_onp.nancumprod, Spec(NAN_RUNNING, call=_nans_at, domain=(0.3, 1.5)))
def nancumprod(a, axis=None, dtype=None, out=None):
    """NaN entries count as 1 and get zero derivative; exact through zeros, as ``cumprod``."""
    unsupported_kwargs("nancumprod", {"out": out})
    return _running(cumprod_p, _replaced(a, 1), axis, dtype)


# --- mean, var and std, plain and NaN-skipping ------------------------------------------------

def _masked_mean(a, axes, dtype, w):
    """The mean over ``axes`` (keepdims) of the entries where the plain mask ``w`` is true."""
    count = _onp.sum(w, axis=axes, keepdims=True)
    a0 = fnp.where(w, a, 0)
    if dtype is not None:
        a0 = fnp.astype(a0, dtype)
    return sum_p(a0, axis=axes, keepdims=True) / mask(_onp.maximum(count, 1), a0)


def _variance(a, axes, dtype, ddof, keep, mean, w):
    """The variance as numpy computes it: the mean (in ``dtype``), the squared deviations, their
    sum (in ``dtype``) over max(n - ddof, 0). ``w`` is None or a plain mask of the entries that
    count; entries outside it get zero derivative."""
    if mean is None:
        if w is None:
            mean = mean_p(a if dtype is None else fnp.astype(a, dtype), axis=axes, keepdims=True)
        else:
            mean = _masked_mean(a, axes, dtype, w)
    d = a - mean
    if w is not None:
        d = fnp.where(w, d, 0)
    if _onp.iscomplexobj(innermost(d)):
        sq = fnp.square(fnp.real(d)) + fnp.square(fnp.imag(d))
    else:
        sq = fnp.square(d)
    if dtype is not None:
        sq = fnp.astype(sq, dtype)
    total = sum_p(sq, axis=axes, keepdims=keep)
    if w is None:
        n = _size(shape_of(a)) if axes is None else _size([shape_of(a)[i] for i in axes])
        dof = _onp.float64(max(n - ddof, 0))
    else:
        dof = _onp.sum(w, axis=axes, keepdims=keep) - ddof
        dof = _onp.where(dof > 0, dof, _onp.nan)  # numpy's value there is NaN or inf
    # numpy divides in float64 and rounds to the sum's dtype; so does this
    return fnp.astype(total / dof, dtype_of(total))


def _ddof(ddof, correction):
    if _given(correction):
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _root(v):
    """sqrt of a variance; where it is exactly 0 (zero spread) the result is the constant 0, so
    its derivative is 0 there, to every order."""
    zero = innermost(v) == 0
    if not _onp.any(zero):
        return fnp.sqrt(v)
    return fnp.where(zero, 0, fnp.sqrt(fnp.where(zero, 1, v)))


def _var_or_std(np_fn, a, axis, dtype, ddof, keepdims, where, mean, correction, skip_nan,
                root):
    kwargs = _numpy_kwargs(axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                           mean=mean, correction=correction)
    ddof = _ddof(ddof, correction)
    a = fnp.asarray(a)
    axes = _axes(axis, _ndim(a))
    keep = _given(keepdims) and bool(keepdims)
    w = _nan_mask(a) if skip_nan else None
    if w is not None:
        w = ~w
    if _given(where):
        wh = _onp.broadcast_to(strip(where), shape_of(a))
        w = wh if w is None else w & wh
    r = _variance(a, axes, dtype, ddof, keep, mean if _given(mean) else None, w)
    if root:
        r = _root(r)
    if w is None:
        return r
    return numpy_result(r, np_fn(strip(a), **kwargs))


VAR = [(((4,),), {}),
       (((2, 3),), {"axis": -1, "keepdims": True, "ddof": 1}),
       (((2, 3, 2),), {"axis": (0, 2), "correction": 1}),
       (((2, 3),), {"axis": 1, "where": _onp.array([[True, False, True], [True, True, False]])}),
       (((2, 2),), {"axis": 1, "dtype": _onp.float64})]
NAN_VAR = [(((2, 3),), {"nans": _NANS}),
           (((2, 3),), {"axis": -1, "ddof": 1, "nans": _onp.array([[True, False, False],
                                                                   [False, False, True]])}),
           (((2, 2, 2),), {"axis": (0, 2), "keepdims": True})]


@noted
@differentiable(_onp.var, Spec(VAR))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):
    """The gradient is ``2 (x - mean) / (n - ddof)``; a given ``mean`` may be traced (it is
    then an input like any other); entries masked out by ``where`` get zero derivative."""
    unsupported_kwargs("var", {"out": out})
    return _var_or_std(_onp.var, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=False, root=False)


@noted
@differentiable(_onp.std, Spec(VAR, valid=distinct))  # zero spread is a kink
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
        mean=_NoValue, correction=_NoValue):
    """At zero spread (all entries equal, so the variance is exactly 0) the derivative is 0 at
    every order: std is ``|t| std(v)`` along any line through such a point, and 0 is the
    average of its one-sided derivatives (as ``abs'(0) = 0``); numpy's formula
    ``(x - mean) / (n std)`` would give 0/0 = nan. Entries masked out by ``where`` get zero
    derivative."""
    unsupported_kwargs("std", {"out": out})
    return _var_or_std(_onp.std, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=False, root=True)


@noted
@differentiable(_onp.nanmean, Spec(NAN_REDUCE, call=_nans_at))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=_NoValue, *, where=_NoValue):
    """NaN entries (and entries masked out by ``where``) get zero derivative."""
    unsupported_kwargs("nanmean", {"out": out})
    a = fnp.asarray(a)
    nan = _nan_mask(a)
    if nan is None:
        return _reduce(mean_p, _onp.mean, a, axis, dtype, keepdims, where=where)
    value = _onp.nanmean(strip(a), **_numpy_kwargs(axis=axis, dtype=dtype, keepdims=keepdims,
                                                  where=where))
    w = ~nan
    if _given(where):
        w = w & _onp.broadcast_to(strip(where), shape_of(a))
    r = _masked_mean(a, _axes(axis, _ndim(a)), dtype, w)
    return numpy_result(fnp.reshape(r, _onp.shape(value)), value)


@noted
@differentiable(_onp.nanvar, Spec(NAN_VAR, call=_nans_at))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):
    """NaN entries get zero derivative; the others as in ``var``."""
    unsupported_kwargs("nanvar", {"out": out})
    return _var_or_std(_onp.nanvar, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=True, root=False)


@noted
@differentiable(_onp.nanstd, Spec(NAN_VAR, call=_nans_at, valid=distinct))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=_NoValue, *, where=_NoValue,
           mean=_NoValue, correction=_NoValue):
    """NaN entries get zero derivative; at zero spread the derivative is 0, as in ``std``."""
    unsupported_kwargs("nanstd", {"out": out})
    return _var_or_std(_onp.nanstd, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=True, root=True)
