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
from . import batch_rules
from ..core.table import Spec, define
from ..core.tracer import (Tracer, without_derivative, concrete, contains_tracer, map_tracers,
                           value_for_shape, read_values)
from .broadcasting import dtype_of, mask, shape_of
from .reductions import (NoValue, distinct, given, kept_shape, max_p, mean_p, min_p,
                         normal_axes, numpy_kwargs, numpy_result, prod_p, reduction,
                         shifted_in, sum_p)
from .namespace import stopped, values_only
from .wrapping import differentiable, numpy_reference, unsupported_kwargs


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
                  spec=Spec(RUNNING), batch=batch_rules.along(none="flatten"))


def affine_scan(a, b):
    """``y`` with ``y_k = a_k y_(k-1) + b_k`` (``y_-1 = 0``) along the last axis, in log2(n)
    rounds of products and sums (Hillis and Steele's scan), so that it is exact (no division)
    and differentiable again like any composition."""
    n = shape_of(b)[-1]
    step = 1
    while step < n:
        b = fnp.concatenate([b[..., :step], b[..., step:] + a[..., step:] * b[..., :-step]],
                            axis=-1)
        if 2 * step < n:
            a = fnp.concatenate([a[..., :step], a[..., step:] * a[..., :-step]], axis=-1)
        step *= 2
    return b


# cumprod's derivatives are running sums weighted by running products: the recurrences
# dy_k = x_k dy_(k-1) + y_(k-1) dx_k (forward) and r_i = g_i + x_(i+1) r_(i+1), grad_i =
# y_(i-1) r_i (reverse), each an affine scan. No division, so exact through zeros and near
# them to every order (the quotient ans / x was off by 1e3 at fourth order near 1e-6).

def _cumprod_jvp(t, ans, x, axis):
    xl, tl = fnp.swapaxes(x, axis, -1), fnp.swapaxes(t, axis, -1)
    before = fnp.cumprod(shifted_in(xl), axis=-1)  # y_(k-1)
    return fnp.swapaxes(affine_scan(xl, before * tl), axis, -1)


def _cumprod_vjp(g, ans, x, axis):
    xl, gl = fnp.swapaxes(x, axis, -1), fnp.swapaxes(g, axis, -1)
    after = shifted_in(xl[..., ::-1])  # x_(i+1), reversed
    r = affine_scan(after, gl[..., ::-1])[..., ::-1]
    return fnp.swapaxes(fnp.cumprod(shifted_in(xl), axis=-1) * r, axis, -1)


cumprod_p = define("cumprod", lambda x, axis: _onp.cumprod(x, axis=axis),
                   [_cumprod_vjp], [_cumprod_jvp], spec=Spec(RUNNING, domain=(0.3, 1.5)),
                   batch=batch_rules.along(none="flatten"))


def _running(prim, a, axis, dtype):
    a = fnp.asarray(a)
    if dtype is not None:
        a = fnp.astype(a, dtype)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    return prim(a, axis=normalize_axis_index(axis, _ndim(a)))


RUNNING_PUBLIC = [(((2, 3),), {}), (((2, 3),), {"axis": -1}), (((4,),), {"axis": 0}),
                  (((3, 2),), {"axis": 0, "dtype": _onp.float64})]


@differentiable(_onp.cumsum, Spec(RUNNING_PUBLIC))
def cumsum(a, axis=None, dtype=None, out=None):
    unsupported_kwargs("cumsum", {"out": out})
    return _running(cumsum_p, a, axis, dtype)


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


@differentiable(_onp.cumulative_sum, Spec(CUMULATIVE))
def cumulative_sum(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    unsupported_kwargs("cumulative_sum", {"out": out})
    return _cumulative(cumsum_p, 0, x, axis, dtype, include_initial)


@differentiable(_onp.cumulative_prod, Spec(CUMULATIVE, domain=(0.3, 1.5)))
def cumulative_prod(x, /, *, axis=None, dtype=None, out=None, include_initial=False):
    """Exact through zeros, as ``cumprod``."""
    unsupported_kwargs("cumulative_prod", {"out": out})
    return _cumulative(cumprod_p, 1, x, axis, dtype, include_initial)


# --- NaN-skipping sums, products, extremes and running versions ------------------------------

def _nan_mask(a):
    """The boolean mask of a's NaN entries, or None if it has none; under ``vmap`` (or
    staging) the mask of the whole batch, which cannot be tested and is always used."""
    nan = fnp.isnan(without_derivative(a))
    return nan if isinstance(nan, Tracer) or nan.any() else None


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


@differentiable(_onp.nansum, Spec(NAN_REDUCE, call=_nans_at))
def nansum(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
           where=NoValue):
    """NaN entries get zero derivative."""
    unsupported_kwargs("nansum", {"out": out})
    return reduction(sum_p, _onp.sum, _replaced(a, 0), axis, dtype, keepdims, initial, where)


@differentiable(_onp.nanprod, Spec(NAN_REDUCE, call=_nans_at, domain=(0.3, 1.5)))
def nanprod(a, axis=None, dtype=None, out=None, keepdims=NoValue, initial=NoValue,
            where=NoValue):
    """NaN entries get zero derivative; exact through zeros, as ``prod``."""
    unsupported_kwargs("nanprod", {"out": out})
    return reduction(prod_p, _onp.prod, _replaced(a, 1), axis, dtype, keepdims, initial, where)


def _nan_extreme(prim, np_fn, nan_fn, name):
    @differentiable(nan_fn, Spec(NAN_REDUCE[:3] + [
        (((2, 3),), {"axis": 0, "nans": _NANS, "where": _WHERE,
                     "initial": -3.0 if prim is max_p else 3.0})],
        call=_nans_at, valid=distinct), name=name)
    def reduce(a, axis=None, out=None, keepdims=NoValue, initial=NoValue, where=NoValue):
        """NaN entries get zero derivative; at a tie the cotangent is shared evenly among the
        tied entries (and ``initial``, which counts as one more entry), as for ``max``."""
        unsupported_kwargs(name, {"out": out})
        a = fnp.asarray(a)
        nan = _nan_mask(a)
        if nan is None:
            return reduction(prim, np_fn, a, axis, None, keepdims, initial, where)
        value = numpy_reference(nan_fn, a, **numpy_kwargs(axis=axis, keepdims=keepdims,
                                                          initial=initial, where=where))
        filled = fnp.where(nan, -_onp.inf if prim is max_p else _onp.inf, a)
        return numpy_result(reduction(prim, np_fn, filled, axis, None, keepdims, initial, where),
                            value)

    return reduce


nanmax = _nan_extreme(max_p, _onp.max, _onp.nanmax, "nanmax")
nanmin = _nan_extreme(min_p, _onp.min, _onp.nanmin, "nanmin")

NAN_RUNNING = [(((2, 3),), {"nans": _NANS}), (((2, 3),), {"axis": -1, "nans": _NANS}),
               (((4,),), {"axis": 0})]


@differentiable(_onp.nancumsum, Spec(NAN_RUNNING, call=_nans_at))
def nancumsum(a, axis=None, dtype=None, out=None):
    """NaN entries count as 0 and get zero derivative."""
    unsupported_kwargs("nancumsum", {"out": out})
    return _running(cumsum_p, _replaced(a, 0), axis, dtype)


@differentiable(_onp.nancumprod, Spec(NAN_RUNNING, call=_nans_at, domain=(0.3, 1.5)))
def nancumprod(a, axis=None, dtype=None, out=None):
    """NaN entries count as 1 and get zero derivative; exact through zeros, as ``cumprod``."""
    unsupported_kwargs("nancumprod", {"out": out})
    return _running(cumprod_p, _replaced(a, 1), axis, dtype)


# --- mean, var and std, plain and NaN-skipping ------------------------------------------------

def _masked_mean(a, axes, dtype, w):
    """The mean over ``axes`` (keepdims) of the entries where the mask ``w`` is true."""
    count = fnp.sum(w, axis=axes, keepdims=True)
    a0 = fnp.where(w, a, 0)
    if dtype is not None:
        a0 = fnp.astype(a0, dtype)
    return sum_p(a0, axis=axes, keepdims=True) / mask(fnp.maximum(count, 1), a0)


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
    if _onp.iscomplexobj(value_for_shape(d)):
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
        dof = fnp.sum(w, axis=axes, keepdims=keep) - ddof
        dof = fnp.where(dof > 0, dof, _onp.nan)  # numpy's value there is NaN or inf
    # numpy divides in float64 and rounds to the sum's dtype; so does this
    return fnp.astype(total / dof, dtype_of(total))


def _ddof(ddof, correction):
    if given(correction):
        if ddof != 0:
            raise ValueError("ddof and correction can't be provided simultaneously.")
        return correction
    return ddof


def _root(v):
    """sqrt of a variance; where it is exactly 0 (zero spread) the result is the constant 0, so
    its derivative is 0 there, to every order."""
    zero = without_derivative(v) == 0
    if not isinstance(zero, Tracer) and not zero.any():
        return fnp.sqrt(v)
    return fnp.where(zero, 0, fnp.sqrt(fnp.where(zero, 1, v)))


def _var_or_std(np_fn, a, axis, dtype, ddof, keepdims, where, mean, correction, skip_nan,
                root):
    kwargs = numpy_kwargs(axis=axis, dtype=dtype, ddof=ddof, keepdims=keepdims, where=where,
                           mean=mean, correction=correction)
    ddof = _ddof(ddof, correction)
    a = fnp.asarray(a)
    axes = normal_axes(axis, _ndim(a))
    keep = given(keepdims) and bool(keepdims)
    w = _nan_mask(a) if skip_nan else None
    if w is not None:
        w = fnp.logical_not(w)
    if given(where):
        wh = fnp.broadcast_to(without_derivative(where), shape_of(a))  # (a node: no value read)
        w = wh if w is None else fnp.logical_and(w, wh)
    r = _variance(a, axes, dtype, ddof, keep, mean if given(mean) else None, w)
    if root:
        r = _root(r)
    if w is None:
        return r
    return numpy_result(r, numpy_reference(np_fn, a, **kwargs))


VAR = [(((4,),), {}),
       (((2, 3),), {"axis": -1, "keepdims": True, "ddof": 1}),
       (((2, 3, 2),), {"axis": (0, 2), "correction": 1}),
       (((2, 3),), {"axis": 1, "where": _onp.array([[True, False, True], [True, True, False]])}),
       (((2, 2),), {"axis": 1, "dtype": _onp.float64})]
NAN_VAR = [(((2, 3),), {"nans": _NANS}),
           (((2, 3),), {"axis": -1, "ddof": 1, "nans": _onp.array([[True, False, False],
                                                                   [False, False, True]])}),
           (((2, 2, 2),), {"axis": (0, 2), "keepdims": True})]


@differentiable(_onp.var, Spec(VAR))
def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    """The gradient is ``2 (x - mean) / (n - ddof)``; a given ``mean`` may be traced (it is
    then an input like any other); entries masked out by ``where`` get zero derivative."""
    unsupported_kwargs("var", {"out": out})
    return _var_or_std(_onp.var, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=False, root=False)


@differentiable(_onp.std, Spec(VAR, valid=distinct))  # zero spread is a kink
def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
        mean=NoValue, correction=NoValue):
    """At zero spread (all entries equal, so the variance is exactly 0) the derivative is 0 at
    every order: std is ``|t| std(v)`` along any line through such a point, and 0 is the
    average of its one-sided derivatives (as ``abs'(0) = 0``); numpy's formula
    ``(x - mean) / (n std)`` would give 0/0 = nan. Entries masked out by ``where`` get zero
    derivative."""
    unsupported_kwargs("std", {"out": out})
    return _var_or_std(_onp.std, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=False, root=True)


@differentiable(_onp.nanmean, Spec(NAN_REDUCE, call=_nans_at))
def nanmean(a, axis=None, dtype=None, out=None, keepdims=NoValue, *, where=NoValue):
    """NaN entries (and entries masked out by ``where``) get zero derivative."""
    unsupported_kwargs("nanmean", {"out": out})
    a = fnp.asarray(a)
    nan = _nan_mask(a)
    if nan is None:
        return reduction(mean_p, _onp.mean, a, axis, dtype, keepdims, where=where)
    value = numpy_reference(_onp.nanmean, a, **numpy_kwargs(axis=axis, dtype=dtype,
                                                             keepdims=keepdims, where=where))
    w = fnp.logical_not(nan)
    if given(where):
        w = fnp.logical_and(w, fnp.broadcast_to(without_derivative(where), shape_of(a)))
    r = _masked_mean(a, normal_axes(axis, _ndim(a)), dtype, w)
    if not given(keepdims) or not keepdims:
        r = fnp.squeeze(r, axis=normal_axes(axis, _ndim(a)))
    return numpy_result(r, value)


@differentiable(_onp.nanvar, Spec(NAN_VAR, call=_nans_at))
def nanvar(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    """NaN entries get zero derivative; the others as in ``var``."""
    unsupported_kwargs("nanvar", {"out": out})
    return _var_or_std(_onp.nanvar, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=True, root=False)


@differentiable(_onp.nanstd, Spec(NAN_VAR, call=_nans_at, valid=distinct))
def nanstd(a, axis=None, dtype=None, out=None, ddof=0, keepdims=NoValue, *, where=NoValue,
           mean=NoValue, correction=NoValue):
    """NaN entries get zero derivative; at zero spread the derivative is 0, as in ``std``."""
    unsupported_kwargs("nanstd", {"out": out})
    return _var_or_std(_onp.nanstd, a, axis, dtype, ddof, keepdims, where, mean, correction,
                       skip_nan=True, root=True)


# --- weighted average ---------------------------------------------------------------------------

def _weights_call(f, a, *rest, **params):
    """Spec.call for ``average``: a second drawn array is the (traced) ``weights``."""
    return f(a, weights=rest[0] if rest else None, **params)


@differentiable(_onp.average, Spec(
    [(((4,),), {}), (((2, 3),), {"axis": -1, "keepdims": True}),
     (((2, 3), (2, 3)), {"axis": None}), (((2, 3), (3,)), {"axis": 1, "returned": True}),
     (((2, 3, 2), (2, 2)), {"axis": (0, 2)})],
    domain=((-2.0, 2.0), (0.5, 2.0)), call=_weights_call))
def average(a, axis=None, weights=None, returned=False, *, keepdims=NoValue):
    """``weights`` may be traced: the derivative with respect to them is
    ``(a - avg) / sum(weights)``. With ``returned=True`` the sum of the weights is returned
    too (traced when the weights are, a constant otherwise)."""
    a = fnp.asarray(a)
    nd = _ndim(a)
    if axis is not None:
        axis = normalize_axis_tuple(axis, nd, argname="axis")
    kw = {} if keepdims is NoValue else {"keepdims": keepdims}
    if weights is None:
        avg = fnp.mean(a, axis, **kw)
        scl = _onp.dtype(dtype_of(avg)).type(_size(shape_of(a)) / _size(shape_of(avg)))
    else:
        wgt = fnp.asarray(weights)
        shape = shape_of(a)
        if shape != shape_of(wgt):
            if axis is None:
                raise TypeError("Axis must be specified when shapes of a and weights differ.")
            if shape_of(wgt) != tuple(shape[ax] for ax in axis):
                raise ValueError("Shape of weights must be consistent with shape of a along "
                                 "specified axis.")
            wgt = fnp.transpose(wgt, tuple(int(i) for i in _onp.argsort(axis)))
            wgt = fnp.reshape(wgt, tuple(s if ax in axis else 1 for ax, s in enumerate(shape)))
        if _onp.issubdtype(dtype_of(a), _onp.inexact):
            result_dtype = _onp.result_type(dtype_of(a), dtype_of(wgt))
        else:
            result_dtype = _onp.result_type(dtype_of(a), dtype_of(wgt), "f8")
        scl = fnp.sum(wgt, axis=axis, dtype=result_dtype, **kw)
        # numpy's error, where the weights are one example's values (the check reads no value
        # that a staged graph would guard: a replay on weights summing to zero gives inf/nan,
        # as under vmap, where the sums are a batch, and in JAX)
        if concrete(scl) and _onp.any(value_for_shape(scl) == 0.0):
            raise ZeroDivisionError("Weights sum to zero, can't be normalized")
        weighted = fnp.astype(a, result_dtype) * fnp.astype(wgt, result_dtype)
        avg = fnp.sum(weighted, axis, **kw) / scl
    if returned:
        if shape_of(scl) != shape_of(avg):
            scl = fnp.broadcast_to(scl, shape_of(avg))
            if not contains_tracer(scl):
                scl = scl.copy()
        return avg, scl
    return avg


# --- order statistics: median, percentile, quantile and their nan-versions --------------------
#
# A quantile is a combination of order statistics with coefficients fixed by the method and q:
# sum_k c_k S_k. S_k, the k-th smallest entry, is the weighted sum of x with weight 1/m on the m
# entries equal to it (ties share, as in max), so the composite is sum(x * W) with a constant W.
# For the continuous methods the coefficients are linear in q between samples; a traced q adds
# (q - q0) * sum(x * WQ), zero in value, whose derivatives are the slope in q.

_ALPHA_BETA = {"weibull": (0.0, 0.0), "hazen": (0.5, 0.5), "median_unbiased": (1 / 3.0, 1 / 3.0),
               "normal_unbiased": (3 / 8.0, 3 / 8.0), "interpolated_inverted_cdf": (0.0, 1.0)}


def _plan(method, n, q):
    """The order statistics of one quantile method, as numpy picks them.

    ``n``: sample counts (shape L, at least 1); ``q``: quantiles in [0, 1] (shape Q). Returns
    ``(terms, slope)``, lists of ``(index, coefficient)`` arrays of shape Q + L: the quantile is
    ``sum c S_index`` and its derivative in q ``sum c' S_index'`` (empty for the methods that
    are piecewise constant in q)."""
    q = _onp.asarray(q, dtype=float).reshape(_onp.shape(q) + (1,) * _onp.ndim(n))
    n = _onp.broadcast_to(_onp.asarray(n, dtype=float), _onp.broadcast_shapes(q.shape,
                                                                                _onp.shape(n)))
    q = _onp.broadcast_to(q, n.shape)
    last = n - 1

    def at(i):
        return _onp.clip(i, 0, last).astype(_onp.intp)

    if method in ("lower", "higher", "nearest"):
        round_ = {"lower": _onp.floor, "higher": _onp.ceil, "nearest": _onp.around}[method]
        return [(at(round_(last * q)), _onp.ones_like(q))], []
    if method in ("inverted_cdf", "closest_observation"):
        v = n * q - (1.0 if method == "inverted_cdf" else 1.5)
        lo = _onp.floor(v)
        keep_lo = (v - lo) == 0
        if method == "closest_observation":
            keep_lo &= lo % 2 == 1
        return [(at(_onp.where(keep_lo, lo, lo + 1)), _onp.ones_like(q))], []
    if method == "midpoint":
        v = 0.5 * (_onp.floor(last * q) + _onp.ceil(last * q))
    elif method == "averaged_inverted_cdf":
        v = n * q - 1
    elif method == "linear":
        v = last * q
    elif method in _ALPHA_BETA:
        alpha, beta = _ALPHA_BETA[method]
        v = n * q + (alpha + q * (1 - alpha - beta)) - 1
    else:
        raise ValueError(f"{method!r} is not a valid method.")
    clamped = (v >= last) | (v < 0)
    lo = _onp.floor(v)
    frac = v - lo
    if method == "midpoint":
        gamma = _onp.where(v % 1 == 0, 0.0, 0.5)
    elif method == "averaged_inverted_cdf":
        gamma = _onp.where(frac == 0, 0.5, 1.0)
    else:
        gamma = frac
    gamma = _onp.where(clamped, 0.0, gamma)
    terms = [(at(lo), 1 - gamma), (at(_onp.where(clamped, lo, lo + 1)), gamma)]
    if method in ("midpoint", "averaged_inverted_cdf"):
        return terms, []
    # dv/dq, and the slope between samples; on a sample (v an integer) the slope is a kink,
    # where the average of the one-sided slopes is taken (one side only at q = 0 or 1)
    c = last if method == "linear" else n + 1 - sum(_ALPHA_BETA[method])
    on_sample = (frac == 0) & (v >= 0) & (v <= last)
    between = ~clamped & ~on_sample
    k = at(v)
    both = (q > 0) & (q < 1)
    left = _onp.where(both, 0.5, q > 0) * (k >= 1) * on_sample * c
    right = _onp.where(both, 0.5, q < 1) * (k <= last - 1) * on_sample * c
    slope = [(at(lo), -c * between), (at(lo + 1), c * between),
             (k, left - right), (at(k - 1), -left), (at(k + 1), right)]
    return terms, slope


def _rows(x, axis):
    """``x`` with the reduced axes moved last and merged into one, and the keepdims shape."""
    shape = shape_of(x)
    nd = len(shape)
    axes = tuple(range(nd)) if axis is None else normalize_axis_tuple(axis, nd)
    lead = [i for i in range(nd) if i not in axes]
    rows = fnp.reshape(fnp.transpose(x, tuple(lead) + axes),
                       tuple(shape[i] for i in lead) + (_size([shape[i] for i in axes]),))
    return rows, kept_shape(shape, None if axis is None else axes)


def _weights(xv, sv, terms, dtype):
    """``sum c w_k`` where ``w_k`` is 1/m on the m entries equal to the k-th smallest."""
    total = 0
    for k, c in terms:
        s = _onp.take_along_axis(_onp.broadcast_to(sv, k.shape + sv.shape[-1:]), k[..., None],
                                 axis=-1)
        hit = xv == s
        total = total + c[..., None] * (hit / _onp.maximum(hit.sum(-1, keepdims=True), 1))
    return _onp.asarray(total, dtype=dtype)


def _quantile_weights_impl(xv, qv, *own, method, skip_nan, with_slope):
    """The weights (shape Q + L + (n,)) of the rows ``xv`` (shape L + (n,)) that give the
    quantiles ``qv`` (shape Q), and (``with_slope``, stacked after them on a new first axis)
    those of their derivative in q: numpy on the values. ``own``: the rows' own weights
    (numpy's ``weights=``), or nothing."""
    nan = _onp.isnan(xv)
    n = (~nan).sum(-1) if skip_nan else _onp.full(xv.shape[:-1], xv.shape[-1])
    void = (n == 0) if skip_nan else nan.any(-1)  # all NaN / any NaN: numpy's value is NaN

    def finished(w):
        return _onp.where(void[..., None], 0.0 if skip_nan else _onp.nan, w).astype(xv.dtype)

    if own:  # (numpy's weighted quantiles, "inverted_cdf": each is an entry of its row,
        # which moves with that entry; constant in q and in the weights between their jumps)
        picked = (_onp.nanquantile if skip_nan else _onp.quantile)(
            xv, qv, axis=-1, method=method, weights=own[0])
        hit = xv == _onp.expand_dims(picked, -1)
        w = finished(hit / _onp.maximum(hit.sum(-1, keepdims=True), 1))
        return _onp.stack([w, _onp.zeros_like(w)]) if with_slope else w
    sv = _onp.sort(xv, axis=-1)  # NaN sorts last

    def weights(terms):
        return finished(_weights(xv, sv, terms, xv.dtype) if terms else _onp.zeros(
            _onp.shape(qv) + xv.shape, xv.dtype))

    terms, slope = _plan(method, _onp.maximum(n, 1), qv)
    return _onp.stack([weights(terms), weights(slope)]) if with_slope else weights(terms)


_quantile_weights = values_only(_quantile_weights_impl, "quantile_weights")


def _quantiles(a, q, axis, method, keepdims, skip_nan, weights=None):
    """The quantiles (q in [0, 1], shape Q) of ``a`` over ``axis``, shaped like numpy's;
    ``weights`` numpy's (``a``'s shape, or 1-d along ``axis``, a single one)."""
    a = fnp.asarray(a)
    raw, kept = _rows(a, axis)
    own = ()
    if weights is not None:
        shape, w = shape_of(a), fnp.asarray(weights)
        if shape_of(w) != shape:  # (numpy's other form: along the one axis reduced)
            ax = normalize_axis_index(axis, len(shape))
            w = fnp.broadcast_to(fnp.reshape(w, tuple(-1 if i == ax else 1
                                                     for i in range(len(shape)))), shape)
        own = (_rows(w, axis)[0],)
    rows = raw
    if skip_nan:
        nan = _nan_mask(raw)
        if nan is not None:
            rows = fnp.where(nan, 0, raw)  # so no NaN reaches the derivatives
    qs = _onp.shape(value_for_shape(q))
    lead = shape_of(rows)[:-1]

    traced_q = contains_tracer(q)
    w = _quantile_weights(raw, q, *own, method=method, skip_nan=skip_nan,
                          with_slope=traced_q)
    if not traced_q:
        r = fnp.sum(rows * w, axis=-1)
    else:  # (the slope's weights are zero for the methods constant in q)
        r = fnp.sum(rows * w[0], axis=-1) + fnp.reshape(
            q - stopped(q), qs + (1,) * len(lead)) * fnp.sum(rows * w[1], axis=-1)
    return fnp.reshape(r, qs + (kept if keepdims else lead))


_ORDER_NOTE = """Ties: the cotangent of an order statistic is shared evenly among the entries
equal to it (as for ``max``), so an even count averages the two middle entries' shares and a
tie splits them. With a traced ``q``, the derivative in ``q`` of a continuous method
(``linear``, ``weibull``, ``hazen``, ...) jumps where ``q`` lands exactly on a sample: there it
is the average of the one-sided slopes (one-sided at q = 0 and 1); the discrete methods
(``lower``, ``higher``, ``nearest``, ``midpoint``, ...) have zero derivative in ``q``.
``weights`` (numpy's, with ``method="inverted_cdf"``) may be traced: each quantile is then an
entry of ``a``, with derivative 1 there, and zero derivative in the weights and in ``q``
(constant between their jumps); ``overwrite_input`` is accepted and has no effect (traced
arrays are never modified)."""


def _valid_quantile(scale):
    """``valid`` for (a, q) cases reducing all of ``a``: distinct entries, and q not within
    0.05 of a sample, where the slope in q jumps."""
    def valid(a, q=None):
        if not distinct(a):
            return False
        if q is None:
            return True
        v = _onp.asarray(q) / scale * (_onp.size(a) - 1)
        return bool(_onp.all(_onp.abs(v - _onp.round(v)) > 0.05))
    return valid


def _q_call(f, a, *rest, q=None, nans=None, **params):
    """Spec.call for quantiles: q is a second drawn (traced) array, or a parameter."""
    return _nans_at(f, a, rest[0] if rest else q, nans=nans, **params)


def _quantile_spec(scale, nan=False):
    cases = [(((4,), ()), {}),
             (((2, 3), (2,)), {"axis": None, "keepdims": True}),
             (((2, 3),), {"q": 0.3 * scale, "axis": -1, "method": "lower"}),
             (((2, 3, 2),), {"q": _onp.array([0.3, 0.7]) * scale, "axis": (0, 2),
                             "method": "midpoint"}),
             (((5,),), {"q": 0.6 * scale, "method": "nearest"}),
             (((4,),), {"q": 0.2 * scale, "method": "higher"}),
             # (numpy's weights, inverted_cdf only: no sum of weights reaches q * 6 exactly)
             (((5,),), {"q": 0.4 * scale, "method": "inverted_cdf",
                        "weights": _onp.array([1.0, 2.0, 0.5, 1.5, 1.0])})]
    if nan:
        cases[2][1]["nans"] = _NANS
    return Spec(cases, domain=((-2.0, 2.0), (0.0, scale)), call=_q_call,
                valid=_valid_quantile(scale))


def _order_statistic(np_fn, name, a, q, scale, axis, method, keepdims, out, skip_nan,
                     weights):
    unsupported_kwargs(name, {"out": out})
    value = numpy_reference(np_fn, a, q, axis=axis, method=method,
                            **numpy_kwargs(keepdims=keepdims, weights=weights))
    qf = fnp.asarray(q) if scale == 1 else fnp.asarray(q) / scale
    keep = given(keepdims) and bool(keepdims)
    return numpy_result(_quantiles(a, qf, axis, method, keep, skip_nan, weights), value)


@differentiable(_onp.quantile, _quantile_spec(1.0))
def quantile(a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=False,
             *, weights=None):
    return _order_statistic(_onp.quantile, "quantile", a, q, 1, axis, method, keepdims,
                            out, skip_nan=False, weights=weights)


@differentiable(_onp.percentile, _quantile_spec(100.0))
def percentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
               keepdims=False, *, weights=None):
    return _order_statistic(_onp.percentile, "percentile", a, q, 100, axis, method, keepdims,
                            out, skip_nan=False, weights=weights)


@differentiable(_onp.nanquantile, _quantile_spec(1.0, nan=True))
def nanquantile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                keepdims=NoValue, *, weights=None):
    """NaN entries are skipped and get zero derivative."""
    return _order_statistic(_onp.nanquantile, "nanquantile", a, q, 1, axis, method, keepdims,
                            out, skip_nan=True, weights=weights)


@differentiable(_onp.nanpercentile, _quantile_spec(100.0, nan=True))
def nanpercentile(a, q, axis=None, out=None, overwrite_input=False, method="linear",
                  keepdims=NoValue, *, weights=None):
    """NaN entries are skipped and get zero derivative."""
    return _order_statistic(_onp.nanpercentile, "nanpercentile", a, q, 100, axis, method,
                            keepdims, out, skip_nan=True, weights=weights)


for _f in (quantile, percentile, nanquantile, nanpercentile):
    _f.__doc__ = _f.__doc__.replace("\n\n", "\n" + _ORDER_NOTE + "\n\n", 1) \
        if _f.__doc__.startswith("fgrad:") else f"fgrad: {_ORDER_NOTE}\n\n{_f.__doc__}"

MEDIAN = [(((3,),), {}), (((4,),), {}), (((2, 3),), {"axis": -1, "keepdims": True}),
          (((2, 2, 2),), {"axis": (0, 2)})]


@differentiable(_onp.median, Spec(MEDIAN, valid=distinct))
def median(a, axis=None, out=None, overwrite_input=False, keepdims=False):
    """An odd count picks the middle entry (derivative 1 there, 0 elsewhere); an even count
    averages the two middle ones (1/2 each). Ties: the cotangent of each middle order
    statistic is shared evenly among the entries equal to it, the average of the one-sided
    derivatives for two tied entries, so [1, 2, 2] gives (0, 1/2, 1/2). ``overwrite_input``
    is accepted and has no effect."""
    unsupported_kwargs("median", {"out": out})
    value = numpy_reference(_onp.median, a, axis=axis, keepdims=keepdims)
    return numpy_result(_quantiles(a, 0.5, axis, "linear", bool(keepdims), False), value)


@differentiable(_onp.nanmedian, Spec(
    [(((2, 3),), {"nans": _NANS}), (((2, 3),), {"axis": -1, "nans": _NANS}),
     (((2, 2, 2),), {"axis": (0, 2), "keepdims": True})], call=_nans_at, valid=distinct))
def nanmedian(a, axis=None, out=None, overwrite_input=False, keepdims=NoValue):
    """NaN entries are skipped and get zero derivative; ties share as in ``median``."""
    unsupported_kwargs("nanmedian", {"out": out})
    value = numpy_reference(_onp.nanmedian, a, axis=axis, **numpy_kwargs(keepdims=keepdims))
    keep = given(keepdims) and bool(keepdims)
    return numpy_result(_quantiles(a, 0.5, axis, "linear", keep, True), value)


# --- differences, integrals and slopes ---------------------------------------------------------

def _extras_call(f, a, *rest, **params):
    """Spec.call for ``diff``: further drawn arrays are ``prepend`` and ``append``."""
    return f(a, **dict(zip(("prepend", "append"), rest)), **params)


@differentiable(_onp.diff, Spec(
    [(((4,),), {}), (((2, 4),), {"n": 2, "axis": 0}), (((3, 2),), {"axis": 0, "n": 2}),
     (((2, 3), (2, 1), (2, 2)), {"axis": -1}), (((3,), ()), {})], call=_extras_call))
def diff(a, n=1, axis=-1, prepend=NoValue, append=NoValue):
    """``prepend`` and ``append`` may be traced."""
    if n == 0:
        return a
    if n < 0:
        raise ValueError("order must be non-negative but got " + repr(n))
    a = fnp.asarray(a)
    nd = _ndim(a)
    if nd == 0:
        raise ValueError("diff requires input that is at least one dimensional")
    axis = normalize_axis_index(axis, nd)
    combined = []
    for extra in (prepend, a, append):
        if extra is NoValue:
            continue
        if extra is not a:
            extra = fnp.asarray(extra)
            if _ndim(extra) == 0:
                shape = list(shape_of(a))
                shape[axis] = 1
                extra = fnp.broadcast_to(extra, tuple(shape))
        combined.append(extra)
    if len(combined) > 1:
        a = fnp.concatenate(combined, axis)
    later, earlier = _along(axis, nd, slice(1, None)), _along(axis, nd, slice(None, -1))
    for _ in range(n):
        a = fnp.getitem(a, later) - fnp.getitem(a, earlier)
    return a


def _ends_call(f, a, *rest, **params):
    """Spec.call for ``ediff1d``: further drawn arrays are ``to_end`` and ``to_begin``."""
    return f(a, **dict(zip(("to_end", "to_begin"), rest)), **params)


@differentiable(_onp.ediff1d, Spec([(((4,),), {}), (((2, 3), (2,), ()), {})],
                                   call=_ends_call))
def ediff1d(ary, to_end=None, to_begin=None):
    """``to_end`` and ``to_begin`` may be traced."""
    ary = fnp.ravel(fnp.asarray(ary))
    dtype = dtype_of(ary)
    ends = {}
    for name, extra in (("to_begin", to_begin), ("to_end", to_end)):
        if extra is None:
            continue
        # (a check of the dtype alone: no value read)
        if not _onp.can_cast(_onp.asarray(map_tracers(extra, value_for_shape)), dtype,
                             casting="same_kind"):
            raise TypeError(f"dtype of `{name}` must be compatible with input `ary` under the "
                            "`same_kind` rule.")
        ends[name] = fnp.astype(fnp.ravel(fnp.asarray(extra)), dtype)
    d = fnp.getitem(ary, slice(1, None)) - fnp.getitem(ary, slice(None, -1))
    if not ends:
        return d
    parts = [ends["to_begin"]] if "to_begin" in ends else []
    parts.append(d)
    if "to_end" in ends:
        parts.append(ends["to_end"])
    return fnp.concatenate(parts)


def _x_call(f, y, *rest, **params):
    """Spec.call for ``trapezoid``: a second drawn array is the (traced) sample points ``x``."""
    return f(y, *rest, **params)


@differentiable(_onp.trapezoid, Spec(
    [(((4,),), {}), (((2, 3),), {"dx": 0.5, "axis": 0}), (((2, 3), (3,)), {}),
     (((2, 3), (2, 3)), {"axis": 0})], call=_x_call))
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """``x`` (sample points) and ``dx`` may be traced."""
    return fnp.sum(trapezoid_areas(y, x, dx, axis), axis=axis)


def trapezoid_areas(y, x, dx, axis):
    """The trapezoids' areas along ``axis``, in numpy's (and scipy's) order of operations:
    ``trapezoid`` sums them, scipy's ``cumulative_trapezoid`` adds them up one by one."""
    y = fnp.asarray(y)
    nd = _ndim(y)
    if x is None:
        d = dx
    else:
        x = fnp.asarray(x)
        if _ndim(x) == 1:
            d = diff(x)
            shape = [1] * nd
            shape[axis] = shape_of(d)[0]
            d = fnp.reshape(d, shape)
        else:
            d = diff(x, axis=axis)
    later, earlier = _along(axis, nd, slice(1, None)), _along(axis, nd, slice(None, -1))
    return d * (fnp.getitem(y, later) + fnp.getitem(y, earlier)) / 2.0


def _spacing_call(f, y, *spacing, **params):
    """Spec.call for ``gradient``: drawn spacings in (0.5, 1) are scalar steps, or for 1-d ones
    the steps between increasing sample coordinates."""
    return f(y, *[cumsum(s) if _ndim(s) == 1 else s for s in spacing], **params)


@differentiable(_onp.gradient, Spec(
    [(((4,),), {}), (((3, 4),), {"edge_order": 2}), (((2, 3),), {"axis": -1}),
     (((4,), ()), {"edge_order": 2}), (((3,), (3,)), {})],
    domain=((-2.0, 2.0), (0.5, 1.0)), call=_spacing_call))
def gradient(f, *varargs, axis=None, edge_order=1):
    """The spacing may be traced: scalars (one for all axes or one per axis) or 1-d sample
    coordinates. Several axes give a tuple, as numpy 2 does."""
    f = fnp.asarray(f)
    N = _ndim(f)
    axes = tuple(range(N)) if axis is None else normalize_axis_tuple(axis, N)
    n = len(varargs)
    traced_coordinates = False
    if n == 0:
        dx = [1.0] * len(axes)
    elif n == 1 and _ndim(varargs[0]) == 0:
        dx = list(varargs) * len(axes)
    elif n == len(axes):
        dx = list(varargs)
        for i, distances in enumerate(dx):
            if _ndim(distances) == 0:
                continue
            if _ndim(distances) != 1:
                raise ValueError("distances must be either scalars or 1d")
            if shape_of(distances)[0] != shape_of(f)[axes[i]]:
                raise ValueError("when 1d, distances must match the length of the "
                                 "corresponding dimension")
            distances = fnp.asarray(distances)
            if _onp.issubdtype(dtype_of(distances), _onp.integer):
                distances = fnp.astype(distances, _onp.float64)
            diffx = diff(distances)
            if contains_tracer(diffx):
                traced_coordinates = True  # keep the general formula: its derivative is right
            elif (diffx == diffx[0]).all():
                diffx = diffx[0]
            dx[i] = diffx
    else:
        raise TypeError("invalid number of arguments")
    if edge_order > 2:
        raise ValueError("'edge_order' greater than 2 not supported")
    otype = dtype_of(f)
    if not _onp.issubdtype(otype, _onp.inexact):
        f, otype = fnp.astype(f, _onp.float64), _onp.dtype(_onp.float64)
    outvals = []
    for ax, ax_dx in zip(axes, dx):
        if shape_of(f)[ax] < edge_order + 1:
            raise ValueError("Shape of array too small to calculate a numerical gradient, at "
                             "least (edge_order + 1) elements are required.")
        outvals.append(_slopes(f, ax, ax_dx, edge_order, otype))
    out = outvals[0] if len(axes) == 1 else tuple(outvals)
    if traced_coordinates:
        value = numpy_reference(_onp.gradient, f, *varargs, axis=axis, edge_order=edge_order)
        return numpy_result(out, value)
    return out


def _slopes(f, ax, ax_dx, edge_order, otype):
    """numpy.gradient along one axis: central differences inside, one-sided at the ends, each
    piece computed as numpy computes it and stored in ``otype``."""
    N = _ndim(f)

    def at(s):
        return fnp.getitem(f, _along(ax, N, s))

    uniform = _ndim(ax_dx) == 0
    if uniform:
        inner = (at(slice(2, None)) - at(slice(None, -2))) / (2. * ax_dx)
    else:
        dx1, dx2 = ax_dx[0:-1], ax_dx[1:]
        shape = [1] * N
        shape[ax] = -1
        a = fnp.reshape(-(dx2) / (dx1 * (dx1 + dx2)), shape)
        b = fnp.reshape((dx2 - dx1) / (dx1 * dx2), shape)
        c = fnp.reshape(dx1 / (dx2 * (dx1 + dx2)), shape)
        inner = a * at(slice(None, -2)) + b * at(slice(1, -1)) + c * at(slice(2, None))
    if edge_order == 1:
        first = (at(slice(1, 2)) - at(slice(0, 1))) / (ax_dx if uniform else ax_dx[0])
        last = (at(slice(-1, None)) - at(slice(-2, -1))) / (ax_dx if uniform else ax_dx[-1])
    else:
        if uniform:
            a, b, c = -1.5 / ax_dx, 2. / ax_dx, -0.5 / ax_dx
        else:
            dx1, dx2 = ax_dx[0], ax_dx[1]
            a = -(2. * dx1 + dx2) / (dx1 * (dx1 + dx2))
            b = (dx1 + dx2) / (dx1 * dx2)
            c = - dx1 / (dx2 * (dx1 + dx2))
        first = a * at(slice(0, 1)) + b * at(slice(1, 2)) + c * at(slice(2, 3))
        if uniform:
            a, b, c = 0.5 / ax_dx, -2. / ax_dx, 1.5 / ax_dx
        else:
            dx1, dx2 = ax_dx[-2], ax_dx[-1]
            a = (dx2) / (dx1 * (dx1 + dx2))
            b = - (dx2 + dx1) / (dx1 * dx2)
            c = (2. * dx2 + dx1) / (dx2 * (dx1 + dx2))
        last = a * at(slice(-3, -2)) + b * at(slice(-2, -1)) + c * at(slice(-1, None))
    return fnp.concatenate([fnp.astype(p, otype) for p in (first, inner, last)], axis=ax)


# --- covariance and correlation -----------------------------------------------------------------

def _y_call(f, m, *rest, **params):
    """Spec.call for ``cov``/``corrcoef``: a second drawn array is ``y``."""
    return f(m, rest[0] if rest else None, **params)


def _as_rows(v, dtype):
    """numpy.array(v, ndmin=2, dtype=dtype)."""
    x = fnp.astype(fnp.asarray(v), dtype)
    nd = _ndim(x)
    return fnp.reshape(x, (1,) * (2 - nd) + shape_of(x)) if nd < 2 else x


COV = [(((3, 4),), {}), (((4, 2),), {"rowvar": False, "ddof": 0}), (((4,), (4,)), {}),
       (((2, 3), (3,)), {"bias": True})]


@differentiable(_onp.cov, Spec(COV, call=_y_call))
def cov(m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *,
        dtype=None):
    """``m``, ``y`` and ``aweights`` may be traced; ``fweights`` (integer counts) are
    constants."""
    weighted = fweights is not None or aweights is not None
    value = numpy_reference(_onp.cov, m, y, rowvar, bias, ddof, fweights, aweights,
                            dtype=dtype)  # numpy's checks and, when weighted, numpy's value
    m = fnp.asarray(m)
    if _ndim(m) > 2:
        raise ValueError("m has more than 2 dimensions")
    if dtype is None:
        dtype = _onp.result_type(*[value_for_shape(v) for v in (m, y) if v is not None],
                                _onp.float64)
    X = _as_rows(m, dtype)
    if not rowvar and _ndim(m) != 1:
        X = fnp.transpose(X)
    if shape_of(X)[0] == 0:
        return value
    if y is not None:
        Y = _as_rows(y, dtype)
        if not rowvar and shape_of(Y)[0] != 1:
            Y = fnp.transpose(Y)
        X = fnp.concatenate((X, Y), axis=0)
    if ddof is None:
        ddof = 1 if bias == 0 else 0
    w = None
    if fweights is not None:
        w = _onp.asarray(read_values(fweights), dtype=float)
    if aweights is not None:
        aweights = fnp.astype(fnp.asarray(aweights), float)
        w = aweights if w is None else w * aweights
    avg, w_sum = average(X, axis=1, weights=w, returned=True)
    w_sum = fnp.getitem(w_sum, 0)
    if w is None:
        fact = shape_of(X)[1] - ddof
    elif ddof == 0:
        fact = w_sum
    elif aweights is None:
        fact = w_sum - ddof
    else:
        fact = w_sum - ddof * fnp.sum(w * aweights) / w_sum
    if isinstance(fact, Tracer):  # (a node: traced weights are not read)
        fact = fnp.where(fact <= 0, 0.0, fact)
    elif fact <= 0:
        fact = 0.0
    X = X - fnp.getitem(avg, (slice(None), None))
    X_T = fnp.transpose(X if w is None else X * w)
    if _onp.iscomplexobj(value_for_shape(X_T)):  # (numpy's conj of a real array is itself)
        X_T = fnp.conjugate(X_T)
    c = fnp.dot(X, X_T)
    c = c * (_onp.true_divide(1, fact) if not contains_tracer(fact) else 1 / fact)
    c = fnp.squeeze(c)
    return numpy_result(c, value) if weighted else c


def _uncorrelated(m, *y):
    """``valid`` for ``corrcoef``: every variable varies, and no two are within 0.05 of perfect
    correlation, where the clip to [-1, 1] is a kink. (The spec's ``rowvar=False`` case is
    its one tall matrix.)"""
    X = _onp.atleast_2d(m)
    X = X.T if X.shape[0] > X.shape[1] else X
    X = _onp.concatenate([X] + [_onp.atleast_2d(v) for v in y])
    if _onp.ptp(X, axis=1).min() < 0.2:
        return False
    r = _onp.corrcoef(X)
    return bool(_onp.all(_onp.abs(r[~_onp.eye(len(r), dtype=bool)]) < 0.95))


@differentiable(_onp.corrcoef, Spec(COV[:1] + [(((4, 2),), {"rowvar": False}),
                                               (((4,), (4,)), {})], call=_y_call,
                                     valid=_uncorrelated))
def corrcoef(x, y=None, rowvar=True, *, dtype=None):
    """Built from ``cov``; the final clip to [-1, 1] follows ``clip``'s convention (derivative
    1/2 exactly at a bound, 0 beyond: the diagonal, 1 up to rounding, has derivative 0 up to
    rounding either way)."""
    c = cov(x, y, rowvar, dtype=dtype)
    if _ndim(c) == 0:
        return c / c
    n = shape_of(c)[0]
    d = fnp.getitem(c, (_onp.arange(n), _onp.arange(n)))
    stddev = fnp.sqrt(fnp.real(d))
    c = c / fnp.getitem(stddev, (slice(None), None))
    c = c / fnp.getitem(stddev, (None, slice(None)))
    if _onp.iscomplexobj(value_for_shape(c)):
        return fnp.clip(fnp.real(c), -1, 1) + 1j * fnp.clip(fnp.imag(c), -1, 1)
    return fnp.clip(c, -1, 1)
