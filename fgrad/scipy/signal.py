"""fgrad.scipy.signal: convolutions and correlations with derivatives in both inputs; detrend;
lfilter, sosfilt and filtfilt in their coefficients, their signal and lfilter's and
sosfilt's initial conditions; savgol_filter, medfilt and medfilt2d in their signal.

Each is bilinear, so its JVP is the primitive itself with a tangent in place of one input;
its VJP is a correlation: every mode is a crop of the ``'full'`` output (``'same'`` starts at
``(n2 - 1) // 2``, correlate2d's at ``n2 // 2``, ``'valid'`` at ``min(n1, n2) - 1`` along each
axis, as scipy computes them), so the cotangent is placed back into a zero array of the full
shape, ``G``, and

    convolve:  x_bar = correlate(G, y, 'valid'),        y_bar = correlate(G, x, 'valid')
    correlate: x_bar = correlate(G, flip(y), 'valid'),  y_bar = flip(correlate(G, x, 'valid'))

written with these primitives, so they nest. Real inputs; on traced values ``fftconvolve``
takes ``axes=None`` only and ``convolve2d``, ``correlate2d`` the zero-filled boundary only.
"""
import functools
from math import comb

import numpy as _onp
import scipy.signal as _ss

import fgrad.numpy as fnp
from ..numpy import batch_rules
from ..numpy.broadcasting import cast_like, shape_of
from ..numpy.reductions import distinct
from ..numpy.wrapping import (differentiable, refuse_traced, traced_version_of,
                              with_numpy_values)
from ..core.table import Spec
from . import defining
from .defining import define
from .structured import companion
from ..core.tracer import contains_tracer

_MODES = ("full", "same", "valid")


def _centred(n2):
    """Where ``'same'`` starts in the full output along an axis of kernel length ``n2``."""
    return (n2 - 1) // 2


def _correlate2d_centred(n2):
    """correlate2d's ``'same'`` starts at ``n2 // 2`` (one later than correlate's for an even
    kernel: checked against scipy for kernels of 1 to 5)."""
    return n2 // 2


def _embed(g, mode, s1, s2, centred=_centred):
    """The cotangent of ``mode``'s crop as a cotangent of the full output."""
    if mode == "full":
        return g
    pads = []
    for n1, n2 in zip(s1, s2):
        start, size = (centred(n2), n1) if mode == "same" else \
            (min(n1, n2) - 1, abs(n1 - n2) + 1)
        pads.append((start, n1 + n2 - 1 - start - size))
    return fnp.pad(g, pads)


def _conv_vjps(flipped, centred):
    """The two VJPs of a convolution (``flipped=False``) or correlation (``True``)."""
    def vjp_x(g, ans, x, y, mode="full", **params):
        big = _embed(g, mode, shape_of(x), shape_of(y), centred)
        return cast_like(_correlate(big, fnp.flip(y) if flipped else y, mode="valid"), x)

    def vjp_y(g, ans, x, y, mode="full", **params):
        c = _correlate(_embed(g, mode, shape_of(x), shape_of(y), centred), x, mode="valid")
        return cast_like(fnp.flip(c) if flipped else c, y)

    return [vjp_x, vjp_y]


_CASES = [(((5,), (3,)), {}), (((5,), (4,)), {"mode": "same"}), (((4,), (6,)), {"mode": "valid"}),
          (((4, 5), (2, 3)), {"mode": "same"}), (((3, 3), (2, 2)), {"mode": "valid"})]
_CASES_2D = [(((4, 5), (2, 3)), {}), (((4, 4), (2, 2)), {"mode": "same"}),
             (((3, 4), (3, 2)), {"mode": "valid"})]


def _batch(nd, same=True):
    """A batch of inputs against one kernel is one N-d call of ``nd`` (the kernel given a unit
    batch axis, so nothing mixes examples); a batch of kernels, a ``valid`` crop the batch
    axis would make impossible, or a ``same`` crop ``nd`` centres otherwise (``same=False``)
    goes one example at a time."""
    def rule(prim, size, vals, dims, mode="full", **params):
        (x, y), (dx, dy) = vals, dims
        one = batch_rules.example_shape(x, dx)
        if dx is not None and dy is None and (same or mode != "same") and (
                mode != "valid" or all(m >= n for m, n in zip(one, batch_rules.shape(y)))):
            y = fnp.reshape(y, (1,) + batch_rules.shape(y))
            return (nd or prim)(batch_rules.to_front(x, dx), y, mode=mode, **params), 0
        return batch_rules.one_at_a_time(prim, size, vals, dims, mode=mode, **params)
    return rule


def _conv_primitive(name, impl, flipped, cases=_CASES, nd=None, centred=_centred):
    return define("scipy.signal." + name, impl, _conv_vjps(flipped, centred), linear=True,
                  spec=Spec(cases), batch=_batch(nd, centred is _centred))


_convolve = _conv_primitive(
    "convolve", lambda x, y, mode="full", method="auto": _ss.convolve(x, y, mode, method), False)
_correlate = _conv_primitive(
    "correlate", lambda x, y, mode="full", method="auto": _ss.correlate(x, y, mode, method), True)
_fftconvolve = _conv_primitive(
    "fftconvolve", lambda x, y, mode="full": _ss.fftconvolve(x, y, mode), False)
_convolve2d = _conv_primitive(
    "convolve2d", lambda x, y, mode="full": _ss.convolve2d(x, y, mode), False, _CASES_2D,
    nd=_convolve)  # (convolve2d takes 2-d arrays only; convolve is the same sum in N-d)
_correlate2d = _conv_primitive(
    "correlate2d", lambda x, y, mode="full": _ss.correlate2d(x, y, mode), True, _CASES_2D,
    nd=_correlate, centred=_correlate2d_centred)


def _mode(name, mode):
    if mode not in _MODES:
        raise ValueError(f"scipy.signal.{name}: mode must be one of {_MODES}, not {mode!r}")
    return mode


@traced_version_of(_ss.convolve)
def convolve(in1, in2, mode="full", method="auto"):
    """scipy.signal.convolve, differentiable in both inputs."""
    return _convolve(in1, in2, mode=_mode("convolve", mode), method=method)


@traced_version_of(_ss.correlate)
def correlate(in1, in2, mode="full", method="auto"):
    """scipy.signal.correlate, differentiable in both inputs (real)."""
    return _correlate(in1, in2, mode=_mode("correlate", mode), method=method)


@traced_version_of(_ss.fftconvolve)
def fftconvolve(in1, in2, mode="full", axes=None):
    """scipy.signal.fftconvolve, differentiable in both inputs; ``axes=None`` only on
    traced values."""
    if axes is not None:
        raise NotImplementedError("fgrad.scipy.signal.fftconvolve: axes= is not supported on "
                                  "traced values; convolve along every axis, or use "
                                  "convolve on slices")
    return _fftconvolve(in1, in2, mode=_mode("fftconvolve", mode))


def _zero_filled(name, boundary, fillvalue):
    if boundary != "fill" or _onp.any(fillvalue != 0):
        raise NotImplementedError(f"fgrad.scipy.signal.{name}: only boundary='fill' with "
                                  "fillvalue=0 is supported on traced values; pad the input "
                                  "with fgrad.numpy.pad first")


@traced_version_of(_ss.convolve2d)
def convolve2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy.signal.convolve2d, differentiable in both inputs; on traced values only the
    zero-filled boundary (``boundary='fill', fillvalue=0``)."""
    _zero_filled("convolve2d", boundary, fillvalue)
    return _convolve2d(in1, in2, mode=_mode("convolve2d", mode))


@traced_version_of(_ss.correlate2d)
def correlate2d(in1, in2, mode="full", boundary="fill", fillvalue=0):
    """scipy.signal.correlate2d, differentiable in both inputs (real); on traced values only
    the zero-filled boundary (``boundary='fill', fillvalue=0``)."""
    _zero_filled("correlate2d", boundary, fillvalue)
    return _correlate2d(in1, in2, mode=_mode("correlate2d", mode))


# detrend: the data less its least-squares fit (a constant, or a line per segment between the
# breakpoints) along an axis, I - P with P an orthogonal projection: symmetric, so the map is
# its own transpose, and every other axis goes through untouched (a batch too)
def _detrend_vjp(g, ans, x, **params):
    return cast_like(_detrend(g, **params), x)


_detrend = define(
    "scipy.signal.detrend",
    lambda x, axis=-1, type="linear", bp=0: _ss.detrend(x, axis=axis, type=type, bp=bp),
    [_detrend_vjp], linear=True,
    spec=Spec([(((6,),), {}), (((3, 5),), {"axis": 0}), (((4, 6),), {"type": "constant"}),
               (((9,),), {"bp": (3, 6)}), (((2, 7),), {"type": "l", "bp": 2})]),
    batch=batch_rules.along("axis", default=-1))


@traced_version_of(_ss.detrend)
def detrend(data, axis=-1, type="linear", bp=0, overwrite_data=False):
    """scipy.signal.detrend, differentiable in ``data``: a linear map (the data less its
    least-squares constant, or lines between the breakpoints ``bp``) and its own transpose."""
    if type not in ("linear", "l", "constant", "c"):
        raise ValueError("Trend type must be 'linear' or 'constant'.")  # (scipy's words)
    # (breakpoints as a tuple: a primitive's parameters are hashable)
    bp = bp if isinstance(bp, (int, _onp.integer)) else tuple(int(b) for b in _onp.ravel(bp))
    return _detrend(data, axis=axis, type=type, bp=bp)


# lfilter: a_0 y[n] + sum_k a_k y[n-k] = sum_k b_k x[n-k] along an axis, from rest. Linear in x
# and in b; differentiating the recurrence, dy = lfilter(db, a, x) + lfilter(b, a, dx) -
# lfilter(da, a, y). Its matrix in x is lower-triangular Toeplitz, whose transpose is the
# same filter run backwards in time; in b and a the cotangent is a correlation of g with the
# data filtered by 1/a, lag by lag. Every rule is the primitive again, so they nest.
def _lfilter_jvp(tangents, ans, b, a, x, axis=-1):
    tb, ta, tx = tangents
    parts = [] if tb is None else [_lfilter(tb, a, x, axis=axis)]
    if tx is not None:
        parts.append(_lfilter(b, a, tx, axis=axis))
    if ta is not None:
        parts.append(-_lfilter(ta, a, ans, axis=axis))
    out = parts[0]
    for p in parts[1:]:
        out = out + p
    return out


def _lagged(g, u, m, axis):
    """``[sum g[n] u[n - k] for k < m]``, n along ``axis``, every other axis summed too."""
    g, u = fnp.moveaxis(g, axis, -1), fnp.moveaxis(u, axis, -1)
    n = shape_of(g)[-1]
    return fnp.stack([fnp.sum(g[..., k:] * u[..., :max(n - k, 0)]) for k in range(m)])


def _lfilter_vjps():
    def vjp_b(g, ans, b, a, x, axis=-1):
        u = _lfilter(_onp.ones(1), a, x, axis=axis)
        return cast_like(_lagged(g, u, shape_of(b)[0], axis), b)

    def vjp_a(g, ans, b, a, x, axis=-1):
        v = _lfilter(_onp.ones(1), a, ans, axis=axis)
        return cast_like(-_lagged(g, v, shape_of(a)[0], axis), a)

    def vjp_x(g, ans, b, a, x, axis=-1):
        return cast_like(fnp.flip(_lfilter(b, a, fnp.flip(g, axis), axis=axis), axis), x)

    return [vjp_b, vjp_a, vjp_x]


def _lfilter_taylor(series, ans, b, a, x, axis=-1):
    """Leibniz's rule on ``a(t) * y(t) = b(t) * x(t)`` (``*`` the filter's convolution): the
    k-th term ``y_k = sum_j C(k, j) lfilter(b_j, a, x_{k-j}) - sum_{j>0} C(k, j) lfilter(a_j,
    a, y_{k-j})``, O(K^2) filters with the point's ``a`` (the JVP rule reads its output, so
    its jets would nest)."""
    order = len(next(s for s in series if s is not None))

    def term(i, j):  # argument i's j-th term (0: the point itself); None where zero
        return (b, a, x)[i] if j == 0 else None if series[i] is None else series[i][j - 1]

    ys = [ans]
    for k in range(1, order + 1):
        y = fnp.zeros_like(ans)
        for j in range(k + 1):
            if term(0, j) is not None and term(2, k - j) is not None:
                y = y + comb(k, j) * _lfilter(term(0, j), a, term(2, k - j), axis=axis)
            if j and term(1, j) is not None:
                y = y - comb(k, j) * _lfilter(term(1, j), a, ys[k - j], axis=axis)
        ys.append(y)
    return ys[1:]


def _lfilter_batch(prim, size, vals, dims, axis=-1):
    """A batch of signals through one filter is one call, the batch an axis of its own; a
    batch of filters goes one example at a time."""
    (b, a, x), (db, da, dx) = vals, dims
    if db is None and da is None:
        along = axis % len(batch_rules.example_shape(x, dx))
        return prim(b, a, batch_rules.to_front(x, dx), axis=along + 1), 0
    return batch_rules.one_at_a_time(prim, size, vals, dims, axis=axis)


def _leading_away_from_zero(b, a, x):
    """Spec predicate: a_0 not near zero (scipy divides by it)."""
    return abs(_onp.ravel(a)[0]) > 0.5


_lfilter = define(
    "scipy.signal.lfilter", lambda b, a, x, axis=-1: _ss.lfilter(b, a, x, axis=axis),
    _lfilter_vjps(), jvp_joint=_lfilter_jvp, taylor=_lfilter_taylor,
    spec=Spec([(((3,), (2,), (6,)), {}), (((2,), (3,), (2, 5)), {"axis": 1}),
               (((1,), (2,), (4, 3)), {"axis": 0}), (((4,), (1,), (5,)), {})],
              domain=[(-1.0, 1.0), (-0.8, 1.5), (-2.0, 2.0)], valid=_leading_away_from_zero),
    batch=_lfilter_batch)


# With initial conditions zi (scipy's direct form II transposed, in coefficients divided by
# a_0), y is the response from rest plus the state's own: a * y_zi = zi, zi the first samples
# and zeros after (each step hands the state on by one: y[k] + a_1 y[k-1] + ... = zi[k]).
# After N samples the state is zf_i = zi_{i+N} (none past the last) + sum_j (b_{i+1+j}
# x[N-1-j] - a_{i+1+j} y[N-1-j]), j < min(N, K - 1 - i), K = max(len(a), len(b)).
def _with_initial_state(b, a, x, zi, axis):
    b, a = fnp.atleast_1d(b), fnp.atleast_1d(a)
    order = max(shape_of(a)[0], shape_of(b)[0]) - 1
    # (scipy's checks of zi's shape and its errors, on placeholders of the shapes)
    _ss.lfilter(_onp.zeros(shape_of(b)), _onp.ones(shape_of(a)), _onp.zeros(shape_of(x)),
                axis, _onp.zeros(shape_of(zi)))
    xs = fnp.moveaxis(fnp.asarray(x), axis, -1)
    n = shape_of(xs)[-1]
    state = fnp.broadcast_to(fnp.moveaxis(fnp.asarray(zi), axis, -1),
                             shape_of(xs)[:-1] + (order,))
    first = fnp.pad(state, [(0, 0)] * (len(shape_of(xs)) - 1) + [(0, max(n - order, 0))])
    ys = _lfilter(b, a, xs) + _lfilter(a[:1], a, first[..., :n])
    bn, an = (fnp.pad(c, (0, order + 1 - shape_of(c)[0])) / a[0] for c in (b, a))
    zf = []
    for i in range(order):
        acc = state[..., i + n] if i + n < order else 0.0
        for j in range(min(n, order - i)):
            acc = acc + bn[i + 1 + j] * xs[..., n - 1 - j] - an[i + 1 + j] * ys[..., n - 1 - j]
        zf.append(acc)
    return fnp.moveaxis(ys, -1, axis), fnp.moveaxis(fnp.stack(zf, axis=-1), -1, axis)


@traced_version_of(_ss.lfilter)
def lfilter(b, a, x, axis=-1, zi=None):
    """scipy.signal.lfilter, differentiable in ``b``, ``a`` and ``x``, and with ``zi`` in the
    initial conditions too (scipy's values; with them, ``(y, zf)``, both differentiable)."""
    if zi is None:
        return _lfilter(fnp.atleast_1d(b), fnp.atleast_1d(a), x, axis=axis)
    return with_numpy_values(_with_initial_state(b, a, x, zi, axis), _ss.lfilter,
                             (b, a, x, axis, zi), {})


def _monic_sections(f, sos, x, **params):
    """Spec call: each drawn section's a_0 made 1, as scipy requires (its other five
    coefficients drawn)."""
    one = fnp.ones((shape_of(sos)[0], 1))
    return f(fnp.concatenate([sos[:, :3], one, sos[:, 4:]], axis=1), x, **params)


@functools.wraps(_ss.sosfilt)
def _scipys_sosfilt(sos, x, axis=-1, zi=None):
    # (scipy's own on contiguous sections: its compiled loop refuses a strided view of them,
    # which one example of a batch is)
    return _ss.sosfilt(_onp.ascontiguousarray(sos), x, axis, zi)


@differentiable(_scipys_sosfilt, Spec([(((1, 6), (6,)), {}), (((2, 6), (5,)), {}),
                                   (((2, 6), (2, 5)), {"axis": 0})],
                                  domain=((-0.6, 0.6), (-2.0, 2.0)), call=_monic_sections),
                name="scipy.signal.sosfilt", numpy_values=True)
def sosfilt(sos, x, axis=-1, zi=None):
    """scipy.signal.sosfilt: scipy's values, the derivatives (in ``sos``, ``x`` and the
    initial conditions ``zi``) of its second-order sections run one after another by
    ``lfilter``."""
    sos = fnp.asarray(sos)
    if len(shape_of(sos)) != 2 or shape_of(sos)[1] != 6:
        raise ValueError("sos array must be shape (n_sections, 6)")  # (scipy's words)
    if zi is not None:  # (scipy's checks of its shape, on placeholders)
        _ss.sosfilt(_onp.tile([1.0, 0, 0, 1, 0, 0], (shape_of(sos)[0], 1)),
                    _onp.zeros(shape_of(x)), axis, _onp.zeros(shape_of(zi)))
    states = []
    for k in range(shape_of(sos)[0]):
        if zi is None:
            x = _lfilter(sos[k, :3], sos[k, 3:], x, axis=axis)
        else:
            x, state = _with_initial_state(sos[k, :3], sos[k, 3:], x, zi[k], axis)
            states.append(state)
    return x if zi is None else (x, fnp.stack(states))


def lfilter_zi(b, a):
    """scipy.signal.lfilter_zi: the state of the filter's step response at rest, ``(I -
    A) zi = B`` (its companion matrix ``A``), differentiable in ``b`` and ``a``."""
    if not contains_tracer((b, a)):
        return _ss.lfilter_zi(b, a)
    b, a = fnp.atleast_1d(b), fnp.atleast_1d(a)
    n = max(shape_of(a)[0], shape_of(b)[0])
    b, a = (fnp.pad(c / a[0], (0, n - shape_of(c)[0])) for c in (b, a))
    i_minus_a = fnp.eye(n - 1) - fnp.transpose(companion(a))
    return fnp.linalg.solve(i_minus_a, b[1:] - a[1:] * b[0])


def _along(x, axis, start=None, stop=None, step=None):
    """``x`` sliced along ``axis`` (scipy's ``axis_slice``)."""
    index = [slice(None)] * len(shape_of(x))
    index[axis] = slice(start, stop, step)
    return x[tuple(index)]


def _extended(x, edge, padtype, axis):
    """scipy's ``odd_ext``, ``even_ext`` and ``const_ext``: ``edge`` samples past each end."""
    if padtype is None or edge < 1:
        return x
    first, last = _along(x, axis, 0, 1), _along(x, axis, -1)
    if padtype == "constant":
        left, right = (fnp.repeat(end, edge, axis=axis) for end in (first, last))
    else:
        left, right = _along(x, axis, edge, 0, -1), _along(x, axis, -2, -(edge + 2), -1)
        if padtype == "odd":
            left, right = 2 * first - left, 2 * last - right
    return fnp.concatenate([left, x, right], axis=axis)


def _filtfilt_valid(b, a, x):
    """Spec predicate: ``a_0`` away from zero and ``I - A`` away from singular (``sum(a)``
    is ``a_0`` times its determinant)."""
    a = _onp.ravel(a)
    return abs(a[0]) > 0.5 and abs(_onp.sum(a)) > 0.3


@differentiable(_ss.filtfilt, Spec([(((3,), (2,), (12,)), {}),
                                    (((2,), (3,), (2, 13)), {"axis": 1, "padtype": "even"}),
                                    (((3,), (1,), (11,)), {"padlen": 3, "padtype": "constant"}),
                                    (((2,), (2,), (6,)), {"padtype": None})],
                                   domain=[(-1.0, 1.0), (-0.8, 1.5), (-2.0, 2.0)],
                                   valid=_filtfilt_valid),
                name="scipy.signal.filtfilt", numpy_values=True)
def filtfilt(b, a, x, axis=-1, padtype="odd", padlen=None, method="pad", irlen=None):
    """scipy.signal.filtfilt (``method='pad'``), differentiable in ``b``, ``a`` and ``x``:
    scipy's values; the derivatives of its steps, the signal extended at its ends, filtered
    forwards from the step response's state at its first sample and backwards from that at
    its last (``lfilter`` with ``zi``, ``lfilter_zi``)."""
    if method != "pad":
        raise NotImplementedError("fgrad.scipy.signal.filtfilt: method='gust' is not "
                                  "supported on traced values; method='pad' is")
    b, a, x = fnp.atleast_1d(b), fnp.atleast_1d(a), fnp.asarray(x)
    # (scipy's checks of the arguments and its errors, on placeholders of the shapes)
    _ss.filtfilt(_onp.zeros(shape_of(b)), _onp.eye(1, shape_of(a)[0])[0],
                 _onp.zeros(shape_of(x)), axis, padtype, padlen)
    ntaps = max(shape_of(a)[0], shape_of(b)[0])
    edge = 0 if padtype is None else 3 * ntaps if padlen is None else padlen
    ext = _extended(x, edge, padtype, axis)
    zi_shape = [1] * len(shape_of(x))
    zi_shape[axis] = ntaps - 1
    zi = fnp.reshape(lfilter_zi(b, a), zi_shape)
    # (the composite of lfilter with zi: filtfilt's own values replace this one's at the end)
    y = _with_initial_state(b, a, ext, zi * _along(ext, axis, stop=1), axis)[0]
    y = _with_initial_state(b, a, fnp.flip(y, axis), zi * _along(y, axis, start=-1), axis)[0]
    y = fnp.flip(y, axis)
    return _along(y, axis, edge, -edge) if edge > 0 else y


def _median_filtered(scipy_fn, x, kernel_size):
    """The median of each sample's window (``kernel_size`` per axis, odd), the array
    zero-padded at its ends, as scipy's ``medfilt`` (``scipy_fn``: it or ``medfilt2d``, whose
    checks and errors run on a placeholder of the shape)."""
    refuse_traced(f"scipy.signal.{scipy_fn.__name__}", "kernel_size", kernel_size,
                  "it is a setting of the filter")
    scipy_fn(_onp.zeros(shape_of(x)), kernel_size)
    x = fnp.asarray(x)
    shape = shape_of(x)
    ks = _onp.broadcast_to(3 if kernel_size is None else kernel_size, (len(shape),))
    padded = fnp.pad(x, [(int(k) // 2, int(k) // 2) for k in ks])
    windows = fnp.lib.stride_tricks.sliding_window_view(padded, tuple(int(k) for k in ks))
    return fnp.median(fnp.reshape(windows, tuple(shape) + (-1,)), axis=-1)


# (the data drawn positive, so a window's padded zeros are its smallest entries, and apart
# (``distinct``): no draw sits on a kink, between a zero and a sample or two samples)
@differentiable(_ss.medfilt, Spec([(((6,),), {}), (((5,),), {"kernel_size": 5}),
                                   (((3, 3),), {"kernel_size": [3, 1]})],
                                  domain=[(0.5, 2.0)], valid=distinct),
                name="scipy.signal.medfilt", numpy_values=True)
def medfilt(volume, kernel_size=None):
    """scipy.signal.medfilt, differentiable in ``volume``: each output the window's median
    entry, so its derivative is 1 there (a tie of equal entries shares it evenly, as
    ``median``'s) and 0 where the median is a padded zero; scipy's values."""
    return _median_filtered(_ss.medfilt, volume, kernel_size)


@differentiable(_ss.medfilt2d, Spec([(((3, 3),), {}), (((4, 2),), {"kernel_size": [3, 1]})],
                                    domain=[(0.5, 2.0)], valid=distinct),
                name="scipy.signal.medfilt2d", numpy_values=True)
def medfilt2d(input, kernel_size=3):
    """scipy.signal.medfilt2d (a 2-d ``medfilt``), differentiable in ``input`` as
    ``medfilt``; scipy's values."""
    return _median_filtered(_ss.medfilt2d, input, kernel_size)


# savgol_filter: linear in x (affine with mode='constant' and cval != 0). Along the axis its
# matrix is banded: row i away from the ends (w <= i < n - w, w the window) is the window's
# coefficients around i; the first and last w rows read at most the first and last 2w samples
# (every mode: an edge fit, a mirror, wrap's other end). Both come from scipy's filter of the
# unit signals of a length n0 = 4w + 1 (or n, if shorter: the whole matrix), kept per
# settings: O(n w) a rule, where the whole n x n matrix would be 800 MB at n = 10^4.
@functools.lru_cache(maxsize=8)
def _savgol_matrix(n, window_length, polyorder, deriv, delta, mode):
    return _ss.savgol_filter(_onp.eye(n), window_length, polyorder, deriv, delta, axis=0,
                             mode=mode)


def _savgol_apply(t, n, settings, transposed):
    """The filter's matrix (or its transpose) applied along ``t``'s last axis."""
    w = settings[0]
    n0 = 4 * w + 1
    if n <= n0:
        m = _savgol_matrix(n, *settings)
        return fnp.matmul(t, m if transposed else fnp.transpose(m))
    m0, h, ends = _savgol_matrix(n0, *settings), w // 2, 2 * w
    band = m0[n0 // 2, n0 // 2 - h:n0 // 2 + h + 1]  # (M[i, i + d] = band[d + h])
    blocks = [(m0[rows][:, :ends], m0[rows][:, n0 - ends:]) for rows in (slice(0, w),
                                                                         slice(n0 - w, n0))]
    if not transposed:
        first, last = t[..., :ends], t[..., n - ends:]
        head, tail = (fnp.matmul(first, fnp.transpose(left)) +
                      fnp.matmul(last, fnp.transpose(right)) for left, right in blocks)
        middle = sum(band[d + h] * t[..., w + d:n - w + d] for d in range(-h, h + 1))
        return fnp.concatenate([head, middle, tail], axis=-1)
    rows = (t[..., :w], t[..., n - w:])
    widths = [(0, 0)] * (len(shape_of(t)) - 1)
    left = sum(fnp.matmul(g, block[0]) for g, block in zip(rows, blocks))
    right = sum(fnp.matmul(g, block[1]) for g, block in zip(rows, blocks))
    out = fnp.pad(left, widths + [(0, n - ends)]) + fnp.pad(right, widths + [(n - ends, 0)])
    inner = t[..., w:n - w]
    for d in range(-h, h + 1):
        out = out + fnp.pad(band[d + h] * inner, widths + [(w + d, w - d)])
    return out


def _savgol_rule(transposed):
    def rule(t, ans, x, window_length, polyorder, deriv=0, delta=1.0, axis=-1, mode="interp",
             cval=0.0):
        settings = (window_length, polyorder, deriv, float(delta), mode)
        out = fnp.moveaxis(_savgol_apply(fnp.moveaxis(t, axis, -1), shape_of(x)[axis],
                                         settings, transposed), -1, axis)
        return cast_like(out, x) if transposed else out
    return rule


_savgol = define(
    "scipy.signal.savgol_filter",
    lambda x, window_length, polyorder, deriv=0, delta=1.0, axis=-1, mode="interp", cval=0.0:
        _ss.savgol_filter(x, window_length, polyorder, deriv, delta, axis, mode, cval),
    [_savgol_rule(True)], [_savgol_rule(False)],
    spec=Spec([(((9,),), {"window_length": 5, "polyorder": 2}),
               (((2, 8),), {"window_length": 5, "polyorder": 3, "deriv": 1, "delta": 0.5}),
               (((7, 2),), {"window_length": 3, "polyorder": 1, "axis": 0, "mode": "mirror"}),
               (((6,),), {"window_length": 5, "polyorder": 2, "mode": "constant",
                          "cval": 0.5}),
               (((6,),), {"window_length": 3, "polyorder": 2, "mode": "wrap"})]),
    batch=batch_rules.along(default=-1))


@traced_version_of(_ss.savgol_filter)
def savgol_filter(x, window_length, polyorder, deriv=0, delta=1.0, axis=-1, mode="interp",
                  cval=0.0):
    """scipy.signal.savgol_filter, differentiable in ``x`` (linear in it: its matrix along
    the axis, scipy's filter of the unit signals); the window, orders, ``delta`` and ``cval``
    are fixed settings (refused by name when traced)."""
    for name, value in (("delta", delta), ("cval", cval), ("window_length", window_length),
                        ("polyorder", polyorder), ("deriv", deriv)):
        refuse_traced("scipy.signal.savgol_filter", name, value, "it is a setting of the filter")
    return _savgol(fnp.asarray(x), window_length=window_length, polyorder=polyorder,
                   deriv=deriv, delta=delta, axis=axis, mode=mode, cval=cval)


for _public, _prim in ((convolve, _convolve), (correlate, _correlate),
                       (fftconvolve, _fftconvolve), (convolve2d, _convolve2d),
                       (correlate2d, _correlate2d), (detrend, _detrend), (lfilter, _lfilter),
                       (savgol_filter, _savgol)):
    _public._fgrad_entry = _prim


# scipy.signal's other functions: scipy's own on plain values, refused by name on traced ones
__getattr__ = defining.plain_only_fallback(__name__, _ss)
