"""Weighted counts: ``bincount`` and the histograms are linear in their weights (each bin sums
the weights that land in it); which bin an entry lands in is an integer with no derivative. A
histogram's edges are differentiable where they are given or spread over a range (its ends,
or the data's min and max), and so is a density, through the bins' widths."""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import contains_tracer, read_value, read_values, value_for_shape
from .wrapping import differentiable

_BINS = _onp.array([0, 2, 2, 3])


@differentiable(_onp.bincount,
                Spec([(((4,),), {}), (((4,),), {"minlength": 6})],
                     call=lambda f, w, **p: f(_BINS, weights=w, **p)), numpy_values=True)
def bincount(x, weights=None, minlength=0):
    """Differentiable in ``weights``: bin ``k`` is the sum of the weights of the entries equal
    to ``k``. ``x`` holds integers, so it has no derivative."""
    x = _onp.asarray(read_value(x))
    if weights is None:
        return _onp.bincount(x, minlength=minlength)
    n = max(int(x.max(initial=-1)) + 1, int(minlength))
    weights = fnp.asarray(weights)
    dtype = _onp.result_type(value_for_shape(weights), float)
    return fnp.index_add(_onp.zeros(n, dtype), weights, x)


def _edges(a, values, bins, range, plain):
    """``plain``, numpy's bin edges for the data ``a`` (whose values, read already, are
    ``values``), as functions of the arguments: given edges are themselves (differentiable in
    ``bins``); edges spread over a range are linear in its ends, ``range``'s or, without one,
    the data's min and max. How many bins an estimator's name (``"auto"``) picks is piecewise
    constant in the data."""
    if _onp.ndim(read_values(bins)) == 1:
        return fnp.asarray(bins) if contains_tracer(bins) else plain
    if range is not None:
        lo, hi = range
        empty = read_values(lo) == read_values(hi)  # (read for numpy's edges already)
    elif values.size:
        lo, hi = fnp.min(a), fnp.max(a)
        empty = values.min() == values.max()  # (no value of min or max read: no guard)
    else:  # (numpy spreads empty data over [0, 1])
        return plain
    if not contains_tracer((lo, hi)):
        return plain
    if empty:  # numpy widens an empty range by 0.5 on each side
        lo, hi = lo - 0.5, hi + 0.5
    return fnp.linspace(lo, hi, len(plain))


def _binned(a, bins, range):
    """``a`` raveled, its values, numpy's bin edges for it and the same edges traced."""
    a = fnp.ravel(fnp.asarray(a))
    values = _onp.asarray(read_value(a))
    plain = _onp.histogram_bin_edges(values, read_values(bins), read_values(range))
    return a, values, plain, _edges(a, values, bins, range, plain)


def _bin_of(a, edges):
    """The bin of each entry, as numpy assigns it (half-open bins, the last one closed), and
    which entries fall inside the edges at all."""
    idx = _onp.searchsorted(edges, a, side="right") - 1
    idx[a == edges[-1]] = len(edges) - 2
    inside = (a >= edges[0]) & (a <= edges[-1])
    return idx, inside


def _binning(traced, params):
    """A test case's keywords, with its third argument (``traced``) as what is differentiated
    besides the data: two numbers are a range's ends, more the widths of given edges."""
    if not traced:
        return params
    e, = traced
    if fnp.shape(e)[0] == 2:
        return dict(params, range=(e[0] - 2.5, e[1] + 2.0))
    return dict(params, bins=fnp.cumsum(e) - 2.5)


def _apart_from_edges(a, *traced, margin=0.02):
    """No entry within ``margin`` of another or of a bin edge other than the extremes of edges
    from the data (moving it would move it to another bin, a jump that finite differences
    cannot step over), and some entry inside the edges: for each binning a test case may use
    (a range's case has 3 bins), per column of a sample."""
    a = _onp.asarray(a)
    binnings = [{"bins": 2}, {"bins": 3}, {"bins": 4}, {"bins": 3, "range": (-1.0, 1.0)}]
    if traced:
        binnings.append(_binning(traced, {"bins": 3}))
    for col in a.reshape(len(a), -1).T:
        if _onp.min(_onp.diff(_onp.sort(col))) < margin:  # ties at the min or max: kinks
            return False
        for kw in binnings:
            edges = _onp.histogram_bin_edges(col, **kw)
            inner = edges[1:-1] if _onp.ndim(kw["bins"]) == 0 and "range" not in kw else edges
            if _onp.min(_onp.abs(col[:, None] - inner[None, :])) < margin:
                return False
            if not _onp.any((col > edges[0]) & (col < edges[-1])):  # (a density 0 / 0)
                return False
    return True


# cases differentiating a range's ends (3 bins) and given edges, besides the data and weights
_TRACED_BINNING = [(((5,), (5,), (2,)), {"bins": 3, "density": True}),
                   (((5,), (5,), (4,)), {"density": True})]
# the data, the weights (positive: a density exists), the range's ends or the edges' widths
_DOMAIN = ((-2.0, 2.0), (0.1, 2.0), (0.5, 1.5))


@differentiable(_onp.histogram,
                Spec([(((5,), (5,)), {"bins": 3}), (((6,), (6,)), {"bins": 4, "density": True}),
                      (((5,), (5,)), {"bins": 3, "range": (-1.0, 1.0)})] + _TRACED_BINNING,
                     call=lambda f, a, w, *e, **p: f(a, weights=w, **_binning(e, p)),
                     domain=_DOMAIN, valid=lambda a, w, *e: _apart_from_edges(a, *e)),
                numpy_values=True)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """Differentiable in ``weights`` (each bin sums the weights landing in it) and, through
    the edges (``density=True`` divides by bin widths), in given ``bins``, in ``range`` and,
    when the edges come from the data (no ``range``), in ``a`` through its min and max. Which
    bin an entry lands in is piecewise constant, so the counts themselves have zero
    derivative in ``a``."""
    a, values, plain_edges, edges = _binned(a, bins, range)
    idx, inside = _bin_of(values, plain_edges)
    n = len(plain_edges) - 1
    if weights is None:
        hist = _onp.bincount(idx[inside], minlength=n).astype(float if density else _onp.intp)
    else:
        w = fnp.ravel(fnp.asarray(weights))
        hist = fnp.index_add(_onp.zeros(n, _onp.result_type(value_for_shape(w), float)), w[inside],
                             idx[inside])
    if density:
        hist = hist / fnp.diff(edges) / fnp.sum(hist)
    return hist, edges


@differentiable(_onp.histogram_bin_edges,
                Spec([(((5,),), {"bins": 3}), (((6,),), {"bins": "auto"}),
                      (((5,), (2,)), {"bins": 3}), (((5,), (4,)), {})],
                     call=lambda f, a, *e, **p: f(a, **_binning(e, p)),
                     domain=_DOMAIN[::2], valid=_apart_from_edges),
                numpy_values=True)
def histogram_bin_edges(a, bins=10, range=None, weights=None):
    """Differentiable in given ``bins`` (they are the edges), in ``range`` (the edges spread
    over it) and, without one, in ``a`` through its min and max; how many bins an
    estimator's name (``"auto"``) picks is piecewise constant in ``a``."""
    return _binned(a, bins, range)[3]


def _histogramdd_case(f, sample, w, *e, **p):
    """A test case of ``histogramdd``: the third argument, if any, is the first column's
    range or edges."""
    binning = _binning(e, {})
    bins = p.pop("bins", 3)
    if "bins" in binning:
        bins = [binning["bins"], bins]
    elif e:
        p["range"] = [binning["range"], None]
    return f(sample, bins, weights=w, **p)


@differentiable(_onp.histogramdd,
                Spec([(((6, 2), (6,)), {"bins": 3}),
                      (((6, 2), (6,)), {"bins": [3, 2], "density": True}),
                      (((6, 2), (6,), (2,)), {"density": True}),
                      (((6, 2), (6,), (4,)), {"density": True})],
                     call=_histogramdd_case, domain=_DOMAIN,
                     valid=lambda s, w, *e: _apart_from_edges(s, *e)))
def histogramdd(sample, bins=10, range=None, density=None, weights=None):
    """Differentiable in ``weights`` (each bin sums the weights landing in it) and, through
    the edges (``density=True`` divides by the bins' volumes), in given ``bins``, in
    ``range`` and, for a dimension whose edges come from the data, in that column of
    ``sample`` through its min and max. Which bin a point lands in is piecewise constant, so
    the counts have zero derivative in ``sample``."""
    # numpy's reading: an (N, D) array, or D sequences of N values
    if isinstance(sample, (list, tuple)):
        sample = fnp.transpose(fnp.atleast_2d(fnp.stack([fnp.asarray(v) for v in sample])))
    elif fnp.ndim(sample) != 2:
        sample = fnp.transpose(fnp.atleast_2d(sample))
    d = fnp.shape(sample)[1]
    values = _onp.asarray(read_value(sample))
    # numpy's own checks of bins and range, and its edges, on the values
    plain = _onp.histogramdd(values, read_values(bins), read_values(range))[1]
    try:
        len(bins)
    except TypeError:
        bins = d * [bins]
    ranges = d * [None] if range is None else range
    edges = [_edges(sample[:, i], values[:, i], b, r, p)
             for i, (b, r, p) in enumerate(zip(bins, ranges, plain))]
    count = []
    for i, e in enumerate(plain):  # numpy's bins: right-open, the last edge in the last bin
        k = _onp.searchsorted(e, values[:, i], side="right")
        k[values[:, i] == e[-1]] -= 1
        count.append(k)
    nbin = [len(e) + 1 for e in plain]  # (an outlier bin on each side)
    flat = _onp.ravel_multi_index(count, nbin)
    size = int(_onp.prod(nbin))
    if weights is None:
        hist = _onp.bincount(flat, minlength=size).astype(float)
    else:
        hist = fnp.bincount(flat, fnp.ravel(fnp.asarray(weights)), minlength=size)
    hist = fnp.reshape(hist, nbin)[d * (slice(1, -1),)]
    if density:
        total = fnp.sum(hist)
        for i, e in enumerate(edges):
            shape = [1] * d
            shape[i] = nbin[i] - 2
            hist = hist / fnp.reshape(fnp.diff(e), shape)
        hist = hist / total
    return hist, edges


@differentiable(_onp.histogram2d,
                Spec([(((6,), (6,), (6,)), {"bins": 3}),
                      (((6,), (6,), (6,)), {"bins": [2, 3], "density": True})],
                     call=lambda f, x, y, w, **p: f(x, y, weights=w, **p),
                     domain=_DOMAIN[:2] + _DOMAIN[1:2],
                     valid=lambda x, y, w: _apart_from_edges(_onp.stack([x, y], 1))))
def histogram2d(x, y, bins=10, range=None, density=None, weights=None):
    """``histogramdd`` of the points ``(x, y)``, differentiable as it is."""
    try:
        pair = len(bins) in (1, 2)
    except TypeError:
        pair = True
    if not pair:  # (one array of edges for both coordinates)
        bins = [bins, bins]
    hist, edges = histogramdd([x, y], bins, range, density, weights)
    return hist, edges[0], edges[1]
