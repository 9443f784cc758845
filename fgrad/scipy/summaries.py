"""scipy.stats' summary statistics of samples (``fgrad.scipy.stats.skew``, ``entropy``,
``wasserstein_distance``, ...), differentiable in the samples (and weights, and the second
distribution where there is one): each is the statistic written with fgrad.numpy, its values
replaced by scipy's own (``numpy_values``), so it nests, stages and batches as its parts do;
and the Box-Cox log-likelihood ``boxcox_llf``, in its ``lmb`` too.

Settings (``axis``, ``ddof``, ``bias``, an order, a proportion, ``base``, ``high``/``low``)
are fixed values; ``nan_policy`` other than ``'propagate'`` is refused on traced values. The
order statistics (``iqr``, ``median_abs_deviation``, ``trim_mean``) follow ``percentile``'s,
``median``'s and ``sort``'s conventions at ties; the distances between two samples
(``wasserstein_distance``, ``energy_distance``) are integrals of the difference of their
empirical cdfs, whose steps sit at the sorted samples: the derivative moves the steps.

>>> import fgrad, numpy
>>> x = numpy.array([0.5, 1.0, 2.0, 4.0])
>>> g = gmean(x)            # d/dx_i (x_1 ... x_n)^(1/n) = g / (n x_i)
>>> round(float(g), 12), (fgrad.grad(gmean)(x) * 4 * x / g).round(12).tolist()
(1.414213562373, [1.0, 1.0, 1.0, 1.0])
"""
import math

import numpy as _onp
import scipy.stats as _st

import fgrad.numpy as fnp
from ..numpy.broadcasting import shape_of
from ..numpy.reductions import distinct
from ..numpy.wrapping import differentiable, refuse_traced
from ..core.table import Spec
from . import special as _sp

_POSITIVE = (0.5, 2.0)  # (every argument's domain)
# (the specs of the statistics divided by the samples' spread, and of the order statistics,
# draw the samples apart, ``distinct``: constant data have no derivative there, ties a kink)


def _name(fn):
    return f"scipy.stats.{fn.__name__}"


def _settings(fn, nan_policy="propagate", **fixed):
    """Refuse a traced setting of ``fn`` by name, and a ``nan_policy`` fgrad does not follow."""
    for arg, value in fixed.items():
        refuse_traced(_name(fn), arg, value, "it is a setting of the statistic")
    if nan_policy != "propagate":
        raise NotImplementedError(f"fgrad.{_name(fn)}: nan_policy={nan_policy!r} is not "
                                  "supported on traced values; 'propagate' is")


def _along(a, axis):
    """``(a, axis, finish)``: ``axis=None`` as the flattened array's axis 0, a non-negative
    axis otherwise; ``finish(out, keepdims)`` takes ``out``, reduced along that axis with the
    axis kept, to scipy's shape (squeezed, or with ``keepdims`` one axis of 1 per axis of
    ``a`` for ``axis=None``)."""
    a = fnp.asarray(a)
    ndim = len(shape_of(a))
    if axis is None:
        return fnp.ravel(a), 0, lambda out, keepdims: \
            fnp.reshape(out, (1,) * ndim) if keepdims else fnp.squeeze(out, 0)
    axis = axis % max(ndim, 1)
    return a, axis, lambda out, keepdims: out if keepdims else fnp.squeeze(out, axis)


def _mean(a, axis, weights=None):
    """The (weighted) mean along ``axis``, its axis kept."""
    if weights is None:
        return fnp.mean(a, axis=axis, keepdims=True)
    w = fnp.broadcast_to(fnp.asarray(weights), shape_of(a))
    return fnp.sum(w * a, axis=axis, keepdims=True) / fnp.sum(w, axis=axis, keepdims=True)


def _central(a, order, axis, center=None):
    """The ``order``-th moment about ``center`` (the mean by default), its axis kept."""
    c = fnp.mean(a, axis=axis, keepdims=True) if center is None else center
    return fnp.mean((a - c) ** order, axis=axis, keepdims=True)


# --- means -------------------------------------------------------------------------------

@differentiable(_st.gmean, Spec([(((5,),), {}), (((2, 4),), {"axis": 1}),
                                 (((4,), (4,)), {})], domain=_POSITIVE,
                                call=lambda f, a, *w, **p: f(a, weights=w[0] if w else None,
                                                             **p)),
                name="scipy.stats.gmean", numpy_values=True)
def gmean(a, axis=0, dtype=None, weights=None, *, nan_policy="propagate", keepdims=False):
    """The geometric mean, ``exp`` of the (weighted) mean of ``log a``: differentiable in
    ``a`` and ``weights``."""
    _settings(gmean, nan_policy, axis=axis)
    a, axis, finish = _along(a, axis)
    return finish(fnp.exp(_mean(fnp.log(a), axis, weights)), keepdims)


@differentiable(_st.hmean, Spec([(((5,),), {}), (((2, 4),), {"axis": 0}),
                                 (((4,), (4,)), {})], domain=_POSITIVE,
                                call=lambda f, a, *w, **p: f(a, weights=w[0] if w else None,
                                                             **p)),
                name="scipy.stats.hmean", numpy_values=True)
def hmean(a, axis=0, dtype=None, *, weights=None, nan_policy="propagate", keepdims=False):
    """The harmonic mean, 1 over the (weighted) mean of ``1 / a``: differentiable in ``a``
    and ``weights``."""
    _settings(hmean, nan_policy, axis=axis)
    a, axis, finish = _along(a, axis)
    return finish(1.0 / _mean(1.0 / a, axis, weights), keepdims)


@differentiable(_st.pmean, Spec([(((5,),), {"p": 2.5}), (((2, 4),), {"p": -1.5, "axis": 1}),
                                 (((4,),), {"p": 0.0})], domain=_POSITIVE),
                name="scipy.stats.pmean", numpy_values=True)
def pmean(a, p, *, axis=0, dtype=None, weights=None, nan_policy="propagate", keepdims=False):
    """The power mean ``mean(a ** p) ** (1 / p)`` (``gmean`` at ``p = 0``): differentiable in
    ``a`` and ``weights``; ``p`` is fixed."""
    _settings(pmean, nan_policy, p=p, axis=axis)
    if p == 0:
        return gmean(a, axis, weights=weights, keepdims=keepdims)
    a, axis, finish = _along(a, axis)
    return finish(_mean(a ** p, axis, weights) ** (1.0 / p), keepdims)


@differentiable(_st.gstd, Spec([(((5,),), {}), (((2, 4),), {"axis": 1, "ddof": 0})],
                               domain=_POSITIVE, valid=distinct),
                name="scipy.stats.gstd", numpy_values=True)
def gstd(a, axis=0, ddof=1, *, keepdims=False, nan_policy="propagate"):
    """The geometric standard deviation, ``exp`` of the standard deviation of ``log a``."""
    _settings(gstd, nan_policy, axis=axis, ddof=ddof)
    a, axis, finish = _along(a, axis)
    return finish(fnp.exp(fnp.std(fnp.log(a), axis=axis, ddof=ddof, keepdims=True)), keepdims)


# --- moments -----------------------------------------------------------------------------

@differentiable(_st.moment, Spec([(((5,),), {"order": 3}), (((2, 4),), {"order": 2, "axis": 1}),
                                  (((5,),), {"order": 4, "center": 0.5}),
                                  (((4,),), {"order": [1, 2]})]),
                name="scipy.stats.moment", numpy_values=True)
def moment(a, order=1, axis=0, nan_policy="propagate", *, center=None, keepdims=False):
    """The ``order``-th moment about ``center`` (the mean by default; the first moment
    about the mean is 0, the zeroth 1, with derivative 0); a list of orders gives a stack."""
    _settings(moment, nan_policy, order=order, axis=axis, center=center)
    a, axis, finish = _along(a, axis)
    if _onp.ndim(order):
        return fnp.stack([moment(a, k, axis, center=center, keepdims=keepdims)
                          for k in order])
    if order == 0 or (order == 1 and center is None):
        m = fnp.full(shape_of(fnp.sum(a, axis=axis, keepdims=True)), float(order == 0))
        return finish(m, keepdims)
    return finish(_central(a, order, axis, center), keepdims)


def _standardised(a, order, axis):
    """``m_order / m_2 ** (order / 2)`` of the moments about the mean, its axis kept
    (constant data give NaN, as scipy's)."""
    mean = fnp.mean(a, axis=axis, keepdims=True)
    return _central(a, order, axis, mean) / _central(a, 2, axis, mean) ** (order / 2.0)


@differentiable(_st.skew, Spec([(((6,),), {}), (((2, 4),), {"axis": 1, "bias": False}),
                                (((4, 2),), {"axis": None})], valid=distinct),
                name="scipy.stats.skew", numpy_values=True)
def skew(a, axis=0, bias=True, nan_policy="propagate", *, keepdims=False):
    """The sample skewness ``m_3 / m_2^(3/2)``, with ``bias=False`` the adjusted
    Fisher-Pearson coefficient (for more than 2 samples, as scipy)."""
    _settings(skew, nan_policy, axis=axis, bias=bias)
    a, axis, finish = _along(a, axis)
    g = _standardised(a, 3, axis)
    n = shape_of(a)[axis]
    if not bias and n > 2:
        g = g * (math.sqrt((n - 1.0) * n) / (n - 2.0))
    return finish(g, keepdims)


@differentiable(_st.kurtosis, Spec([(((6,),), {}),
                                    (((2, 4),), {"axis": 1, "bias": False, "fisher": False}),
                                    (((4, 2),), {"axis": None})], valid=distinct),
                name="scipy.stats.kurtosis", numpy_values=True)
def kurtosis(a, axis=0, fisher=True, bias=True, nan_policy="propagate", *, keepdims=False):
    """The sample kurtosis ``m_4 / m_2^2`` (less 3 with ``fisher``), with ``bias=False``
    corrected for the sample size (for more than 3 samples, as scipy)."""
    _settings(kurtosis, nan_policy, axis=axis, fisher=fisher, bias=bias)
    a, axis, finish = _along(a, axis)
    k = _standardised(a, 4, axis)
    n = shape_of(a)[axis]
    if not bias and n > 3:
        k = ((n * n - 1.0) * k - 3.0 * (n - 1.0) ** 2) / ((n - 2.0) * (n - 3.0)) + 3.0
    return finish(k - 3.0 if fisher else k, keepdims)


@differentiable(_st.variation, Spec([(((5,),), {}), (((2, 4),), {"axis": 1, "ddof": 1})],
                                    domain=_POSITIVE, valid=distinct),
                name="scipy.stats.variation", numpy_values=True)
def variation(a, axis=0, nan_policy="propagate", ddof=0, *, keepdims=False):
    """The coefficient of variation, ``std(a, ddof) / mean(a)``."""
    _settings(variation, nan_policy, axis=axis, ddof=ddof)
    a, axis, finish = _along(a, axis)
    out = fnp.std(a, axis=axis, ddof=ddof, keepdims=True) / fnp.mean(a, axis=axis,
                                                                     keepdims=True)
    return finish(out, keepdims)


@differentiable(_st.sem, Spec([(((5,),), {}), (((2, 4),), {"axis": 1, "ddof": 0})],
                              valid=distinct),
                name="scipy.stats.sem", numpy_values=True)
def sem(a, axis=0, ddof=1, nan_policy="propagate", *, keepdims=False):
    """The standard error of the mean, ``std(a, ddof) / sqrt(n)``."""
    _settings(sem, nan_policy, axis=axis, ddof=ddof)
    a, axis, finish = _along(a, axis)
    out = fnp.std(a, axis=axis, ddof=ddof, keepdims=True) / math.sqrt(shape_of(a)[axis])
    return finish(out, keepdims)


@differentiable(_st.zmap, Spec([(((3,), (5,)), {}), (((2, 3), (2, 3)), {"axis": 0, "ddof": 1})],
                               valid=lambda scores, compare: distinct(compare)),
                name="scipy.stats.zmap", numpy_values=True)
def zmap(scores, compare, axis=0, ddof=0, nan_policy="propagate"):
    """``(scores - mean(compare)) / std(compare, ddof)`` along ``axis``: differentiable in
    both."""
    _settings(zmap, nan_policy, axis=axis, ddof=ddof)
    compare, axis, _ = _along(compare, axis)
    return (scores - fnp.mean(compare, axis=axis, keepdims=True)) / \
        fnp.std(compare, axis=axis, ddof=ddof, keepdims=True)


@differentiable(_st.zscore, Spec([(((5,),), {}), (((2, 4),), {"axis": 1, "ddof": 1})],
                                 valid=distinct),
                name="scipy.stats.zscore", numpy_values=True)
def zscore(a, axis=0, ddof=0, nan_policy="propagate"):
    """``(a - mean(a)) / std(a, ddof)`` along ``axis``."""
    _settings(zscore, nan_policy, axis=axis, ddof=ddof)
    a = fnp.asarray(a)
    out = zmap(fnp.ravel(a) if axis is None else a, a, axis, ddof)
    return fnp.reshape(out, shape_of(a))


# --- order statistics --------------------------------------------------------------------

_NORMAL_IQR = 2.0 * math.sqrt(2.0) * float(_sp.erfinv(0.5))  # (the normal's iqr)


@differentiable(_st.iqr, Spec([(((6,),), {}), (((2, 5),), {"axis": 1, "rng": (10, 80)}),
                               (((5,),), {"scale": "normal"})], valid=distinct),
                name="scipy.stats.iqr", numpy_values=True)
def iqr(x, axis=None, rng=(25, 75), scale=1.0, nan_policy="propagate",
        interpolation="linear", keepdims=False):
    """The range between the ``rng`` percentiles (``percentile``'s derivative), over
    ``scale`` (``'normal'``: the normal distribution's, 1.349)."""
    _settings(iqr, nan_policy, axis=axis, rng=rng, scale=scale)
    x, axis, finish = _along(x, axis)
    low, high = fnp.percentile(x, list(rng), axis=axis, method=interpolation, keepdims=True)
    scale = _NORMAL_IQR if scale == "normal" else scale
    return finish((high - low) / scale, keepdims)


def _deviations_apart(x):
    """Spec predicate: the samples, and their distances to their median along the last axis
    (the cases' axis; an odd count of samples, whose median is one), apart (``distinct``): a
    tie of either is a kink."""
    deviations = _onp.abs(x - _onp.median(x, axis=-1, keepdims=True))
    return distinct(x) and all(distinct(row) for row in _onp.atleast_2d(deviations))


@differentiable(_st.median_abs_deviation, Spec([(((5,),), {}), (((2, 5),), {"axis": 1}),
                                                (((7,),), {"scale": "normal"})],
                                               valid=_deviations_apart),
                name="scipy.stats.median_abs_deviation", numpy_values=True)
def median_abs_deviation(x, axis=0, center=None, scale=1.0, nan_policy="propagate", *,
                         keepdims=False):
    """The median of ``|x - center(x)|`` (``center`` the median by default) over ``scale``
    (``'normal'``: the normal distribution's, 0.6745)."""
    _settings(median_abs_deviation, nan_policy, axis=axis, scale=scale)
    x, axis, finish = _along(x, axis)
    center = fnp.median if center is None else center
    deviation = fnp.abs(x - center(x, axis=axis, keepdims=True))
    scale = float(_sp.ndtri(0.75)) if scale == "normal" else scale
    return finish(fnp.median(deviation, axis=axis, keepdims=True) / scale, keepdims)


@differentiable(_st.trim_mean, Spec([(((8,),), {"proportiontocut": 0.2}),
                                     (((2, 5),), {"proportiontocut": 0.2, "axis": 1})],
                                    valid=distinct),
                name="scipy.stats.trim_mean", numpy_values=True)
def trim_mean(a, proportiontocut, axis=0, *, nan_policy="propagate", keepdims=False):
    """The mean of the samples left when ``proportiontocut`` of them is cut from each end
    (``sort``'s derivative: each kept sample's share)."""
    _settings(trim_mean, nan_policy, axis=axis, proportiontocut=proportiontocut)
    a, axis, finish = _along(a, axis)
    n = shape_of(a)[axis]
    cut = int(proportiontocut * n)
    kept = fnp.take(fnp.sort(a, axis=axis), _onp.arange(cut, n - cut), axis=axis)
    return finish(fnp.mean(kept, axis=axis, keepdims=True), keepdims)


# --- distributions of samples ------------------------------------------------------------

@differentiable(_st.entropy, Spec([(((5,),), {}), (((4,), (4,)), {"base": 2.0}),
                                   (((3, 2), (3, 2)), {"axis": 0})], domain=_POSITIVE,
                                  call=lambda f, p, *q, **k: f(p, q[0] if q else None, **k)),
                name="scipy.stats.entropy", numpy_values=True)
def entropy(pk, qk=None, base=None, axis=0, *, nan_policy="propagate", keepdims=False):
    """The Shannon entropy of ``pk`` or, given ``qk``, the relative entropy (Kullback-Leibler
    divergence) ``sum(pk log(pk / qk))``, each normalised to sum 1 along ``axis``:
    differentiable in both (``entr``'s and ``rel_entr``'s derivatives)."""
    _settings(entropy, nan_policy, base=base, axis=axis)
    pk, axis, finish = _along(pk, axis)
    pk = pk / fnp.sum(pk, axis=axis, keepdims=True)
    if qk is None:
        terms = _sp.entr(pk)
    else:
        qk = fnp.asarray(qk)
        terms = _sp.rel_entr(pk, qk / fnp.sum(qk, axis=axis, keepdims=True))
    out = fnp.sum(terms, axis=axis, keepdims=True)
    return finish(out if base is None else out / math.log(base), keepdims)


def _cdf_distance(power, u, v, u_weights, v_weights):
    """The ``power``-distance of the empirical cdfs of samples ``u`` and ``v``: the
    integral of ``|U - V| ** power`` over the sorted samples' gaps, to the ``1 / power``."""
    u, v = fnp.asarray(u), fnp.asarray(v)
    both = fnp.sort(fnp.concatenate([u, v]))
    gaps = fnp.diff(both)
    cdfs = []
    for values, weights in ((u, u_weights), (v, v_weights)):
        order = fnp.argsort(values)  # (which sample sits where: no derivative)
        at = fnp.searchsorted(fnp.take(values, order), both[:-1], side="right")
        if weights is None:
            cdfs.append(at / float(shape_of(values)[0]))
        else:
            cumulative = fnp.concatenate([fnp.zeros(1), fnp.cumsum(fnp.take(weights, order))])
            cdfs.append(fnp.take(cumulative, at) / cumulative[-1])
    difference = fnp.abs(cdfs[0] - cdfs[1])
    if power == 1:
        return fnp.sum(difference * gaps)
    return fnp.sqrt(fnp.sum(difference ** 2 * gaps))


_TWO_SAMPLES = Spec([(((5,), (4,)), {}), (((3,), (4,), (3,), (4,)), {})],
                    domain=[(-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0), (0.5, 2.0)],
                    valid=lambda u, v, *w: distinct(u, v))


@differentiable(_st.wasserstein_distance, _TWO_SAMPLES, name="scipy.stats.wasserstein_distance",
                numpy_values=True)
def wasserstein_distance(u_values, v_values, u_weights=None, v_weights=None):
    """The first Wasserstein distance of two 1-d samples (their empirical cdfs' L1
    distance): differentiable in the samples and the weights."""
    return _cdf_distance(1, u_values, v_values, u_weights, v_weights)


@differentiable(_st.energy_distance, _TWO_SAMPLES, name="scipy.stats.energy_distance",
                numpy_values=True)
def energy_distance(u_values, v_values, u_weights=None, v_weights=None):
    """The energy distance of two 1-d samples (``sqrt(2)`` times their empirical cdfs' L2
    distance): differentiable in the samples and the weights."""
    return math.sqrt(2.0) * _cdf_distance(2, u_values, v_values, u_weights, v_weights)


# --- the Box-Cox transformation's likelihood -------------------------------------------------

# (lmb drawn away from 0: there scipy's values, log var(data ** lmb) - 2 log |lmb|, lose
# digits to cancellation, and differences of them are no check; the tests take lmb = 0)
@differentiable(_st.boxcox_llf, Spec([(((), (6,)), {}), (((), (2, 4)), {"axis": 1})],
                                     domain=[(0.3, 2.0), _POSITIVE],
                                     valid=lambda lmb, data: distinct(data)),
                name="scipy.stats.boxcox_llf", numpy_values=True)
def boxcox_llf(lmb, data, *, axis=0, keepdims=False, nan_policy="propagate"):
    """The Box-Cox log-likelihood ``(lmb - 1) sum(log data) - n/2 log var(boxcox(data,
    lmb))``, differentiable in ``lmb`` and the data to every order, ``lmb = 0`` too: the
    transform ``(data ** lmb - 1) / lmb`` is written ``log(data) exprel(lmb log(data))``.
    So its maximum over ``lmb`` can be found with fgrad's gradients."""
    _settings(boxcox_llf, nan_policy, axis=axis)
    data, axis, finish = _along(data, axis)
    logdata = fnp.log(data)
    transformed = logdata * _sp.exprel(lmb * logdata)
    out = (lmb - 1) * fnp.sum(logdata, axis=axis, keepdims=True) - shape_of(data)[axis] / \
        2.0 * fnp.log(fnp.var(transformed, axis=axis, keepdims=True))
    return finish(out, keepdims)


# --- circular statistics -----------------------------------------------------------------

def _circular(fn, samples, high, low, axis, nan_policy):
    """The samples' mean sine and cosine along ``axis`` (as angles of period ``high -
    low``), their axis kept, and ``_along``'s ``finish``."""
    _settings(fn, nan_policy, high=high, low=low, axis=axis)
    samples, axis, finish = _along(samples, axis)
    angles = samples * (2.0 * math.pi / (high - low))
    return (fnp.mean(fnp.sin(angles), axis=axis, keepdims=True),
            fnp.mean(fnp.cos(angles), axis=axis, keepdims=True), finish)


# (the samples within 1.5 of each other: their mean direction's length at least 0.7, where
# the circular statistics of identical samples, or of samples spread round the circle, have
# no derivative)
_CIRCULAR = [(((6,),), {}), (((2, 4),), {"axis": 1, "high": 5.0, "low": -1.0})]
_NEAR = dict(domain=(0.0, 1.5), valid=distinct)


@differentiable(_st.circmean, Spec(_CIRCULAR, **_NEAR), name="scipy.stats.circmean",
                numpy_values=True)
def circmean(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *,
             keepdims=False):
    """The circular mean, the angle of the samples' mean direction, in ``[low, high)``."""
    s, c, finish = _circular(circmean, samples, high, low, axis, nan_policy)
    period = high - low
    out = fnp.mod(fnp.arctan2(s, c) * (period / (2.0 * math.pi)) - low, period) + low
    return finish(out, keepdims)


@differentiable(_st.circvar, Spec(_CIRCULAR, **_NEAR), name="scipy.stats.circvar",
                numpy_values=True)
def circvar(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *,
            keepdims=False):
    """The circular variance, 1 less the length of the samples' mean direction."""
    s, c, finish = _circular(circvar, samples, high, low, axis, nan_policy)
    return finish(1.0 - fnp.minimum(fnp.hypot(s, c), 1.0), keepdims)


@differentiable(_st.circstd, Spec(_CIRCULAR + [(((5,),), {"normalize": True})], **_NEAR),
                name="scipy.stats.circstd", numpy_values=True)
def circstd(samples, high=2 * math.pi, low=0, axis=None, nan_policy="propagate", *,
            normalize=False, keepdims=False):
    """The circular standard deviation, ``sqrt(-2 log R)`` for ``R`` the length of the
    samples' mean direction (in the samples' units unless ``normalize``)."""
    s, c, finish = _circular(circstd, samples, high, low, axis, nan_policy)
    out = fnp.sqrt(-2.0 * fnp.log(fnp.minimum(fnp.hypot(s, c), 1.0)))
    return finish(out if normalize else out * ((high - low) / (2.0 * math.pi)), keepdims)


__all__ = ["gmean", "hmean", "pmean", "gstd", "moment", "skew", "kurtosis", "variation", "sem",
           "zmap", "zscore", "iqr", "median_abs_deviation", "trim_mean", "entropy",
           "wasserstein_distance", "energy_distance", "boxcox_llf", "circmean", "circvar",
           "circstd"]
