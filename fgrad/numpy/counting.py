"""Weighted counts: ``bincount`` is linear in its weights (each bin sums the weights that land
in it); which bin an entry lands in is an integer with no derivative."""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import read_value, value_for_shape
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


def _edges(a, bins, range):
    """numpy's bin edges; when they come from the data's range they are differentiable in
    ``a`` (through its min and max)."""
    plain = _onp.histogram_bin_edges(read_value(a), bins, range)
    if range is not None or not isinstance(bins, (int, _onp.integer)):
        return plain, plain
    lo, hi = fnp.min(a), fnp.max(a)
    if read_value(lo) == read_value(hi):  # numpy widens an empty range by 0.5 on each side
        lo, hi = lo - 0.5, hi + 0.5
    return fnp.linspace(lo, hi, int(bins) + 1), plain


def _bin_of(a, edges):
    """The bin of each entry, as numpy assigns it (half-open bins, the last one closed), and
    which entries fall inside the edges at all."""
    idx = _onp.searchsorted(edges, a, side="right") - 1
    idx[a == edges[-1]] = len(edges) - 2
    inside = (a >= edges[0]) & (a <= edges[-1])
    return idx, inside


@differentiable(_onp.histogram,
                Spec([(((5,), (5,)), {"bins": 3}), (((6,), (6,)), {"bins": 4, "density": True}),
                      (((5,), (5,)), {"bins": 3, "range": (-1.0, 1.0)})],
                     call=lambda f, a, w, **p: f(a, weights=w, **p),
                     domain=((-2.0, 2.0), (0.1, 2.0)),  # positive weights: a density exists
                     valid=lambda a, w: _apart_from_edges(a)), numpy_values=True)
def histogram(a, bins=10, range=None, density=None, weights=None):
    """Differentiable in ``weights`` (each bin sums the weights landing in it) and, when the
    edges come from the data (``bins`` an int, no ``range``), in ``a`` through the edges
    (``density=True`` divides by bin widths). Which bin an entry lands in is piecewise
    constant, so the counts themselves have zero derivative in ``a``."""
    a = fnp.ravel(fnp.asarray(a))
    edges, plain_edges = _edges(a, bins, range)
    idx, inside = _bin_of(_onp.asarray(read_value(a)), plain_edges)
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


def _apart_from_edges(a, margin=0.02):
    """No entry within ``margin`` of a bin edge other than the extremes (moving it would move
    it to another bin, a jump that finite differences cannot step over)."""
    v = _onp.sort(a)
    if _onp.min(_onp.diff(v)) < margin:  # ties at the min or max are kinks of the edges
        return False
    for bins, rng in ((3, None), (4, None), (3, (-1.0, 1.0))):
        edges = _onp.histogram_bin_edges(a, bins, rng)
        inner = edges[1:-1] if rng is None else edges
        if _onp.min(_onp.abs(a[:, None] - inner[None, :])) < margin:
            return False
    return True
