"""fgrad.scipy.interpolate: ``CubicSpline``, ``CubicHermiteSpline``, ``PchipInterpolator``
(and ``pchip_interpolate``), ``Akima1DInterpolator`` and ``interp1d``, differentiable in the
values they interpolate (and a Hermite spline's slopes) and in the points they are evaluated
at (the knots fixed).

A cubic spline's coefficients are linear in its values ``y``: they are scipy's spline of the
unit vectors (one spline of n columns, kept per knots and end conditions) times ``y``; on an
interval the spline is a cubic in the distance to its left knot, found by ``searchsorted``
(a derivative of order ``nu``: that cubic's). The values are scipy's own (``PPoly``'s
evaluation of scipy's coefficients); the derivatives those of this composite, so the spline
can be differentiated in ``y`` and in the point, jitted and batched. A Hermite spline's
coefficients come from its values and slopes by scipy's formula; ``PchipInterpolator``'s and
``Akima1DInterpolator``'s slopes are scipy's formulas of the values (not linear in them),
written with fgrad.numpy, and then the same.

>>> import fgrad, numpy
>>> knots = numpy.linspace(0.0, 1.0, 5)
>>> spline = CubicSpline(knots, knots ** 2)   # not-a-knot: exact on a quadratic
>>> float(spline(0.3)), round(float(fgrad.grad(spline)(0.3)), 12)
(0.09, 0.6)
"""
import functools

import numpy as _onp
import scipy.interpolate as _si

import fgrad.numpy as fnp
from ..core.tracer import contains_tracer, value_for_shape
from ..numpy.broadcasting import shape_of
from ..numpy.wrapping import refuse_traced, with_numpy_values
from . import defining


# (the coefficients of the unit vectors' splines are 32 n^2 bytes: 32 MB at the most knots
# taken on traced values, and a few knot sets kept)
_MOST_KNOTS = 1000


@functools.lru_cache(maxsize=8)
def _unit_coefficients(knots, bc_type):
    """Scipy's coefficients of the splines of the unit vectors: ``(4, n - 1, n)``."""
    x = _onp.array(knots)
    if len(x) > _MOST_KNOTS:
        raise NotImplementedError(
            f"fgrad.scipy.interpolate: a cubic spline of traced values takes at most "
            f"{_MOST_KNOTS} knots (its coefficients' derivative is a dense matrix), not "
            f"{len(x)}; fgrad.numpy.interp interpolates linearly at any size")
    return _si.CubicSpline(x, _onp.eye(len(x)), axis=0, bc_type=bc_type).c


def _per_point(v, like):
    """``v`` (a value per evaluation point) against the trailing axes of ``like`` (one per
    point, then the interpolated values' other axes)."""
    return fnp.reshape(v, shape_of(v) + (1,) * (len(shape_of(like)) - len(shape_of(v))))


def _points_at(out, points, axis):
    """``out`` (the points' axes first, the values' other axes after) with the points' axes
    where scipy puts them: at the interpolation ``axis`` of the values."""
    k = len(shape_of(points))
    return fnp.moveaxis(out, tuple(range(k)), tuple(range(axis, axis + k)))


def _placeholder(v):
    """A plain stand-in of a traced value's class, shape and dtype (scipy's checks run on it,
    its values unread); a plain value itself."""
    return _onp.zeros_like(value_for_shape(v)) if contains_tracer(v) else v


class _PiecewiseCubic:
    """A piecewise cubic on fixed knots ``x`` (scipy's ``PPoly``): its coefficients ``c``
    (``(4, n - 1, ...)``, highest power first) traced where the data it interpolates
    (``_data``) are, evaluated by ``searchsorted`` and Horner's rule; the values scipy's own
    (``_scipy(*data)``, the scipy object of the same data)."""

    def _setup(self, plain, data):
        # (scipy's object: its checks, and itself for plain values; its axis, non-negative:
        # the points' axes go there)
        self._plain, self._data, self._nu = plain, data, 0
        self.x, self.axis, self.extrapolate = plain.x, plain.axis, plain.extrapolate
        return contains_tracer(data)

    def derivative(self, nu=1):
        """The derivative of order ``nu`` (scipy's ``derivative``), an object as this one."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        out._nu, out._plain = self._nu + nu, self._plain.derivative(nu)
        return out

    def __call__(self, x, nu=0, extrapolate=None):
        if not contains_tracer((x, self._data)):
            return self._plain(x, nu, extrapolate)
        ext = self.extrapolate if extrapolate is None else extrapolate
        if ext == "periodic":
            raise NotImplementedError(f"fgrad.scipy.interpolate.{type(self).__name__}: "
                                      "periodic extrapolation is not supported on traced "
                                      "values")
        return with_numpy_values(self._traced(fnp.asarray(x), self._nu + nu, ext),
                                 self._reference(nu, ext), self._data + (x,), {})

    def _reference(self, nu, ext):
        """scipy's value of this cubic (its derivative, where taken) at ``x``."""
        def value(*data_and_x):
            p = self._scipy(*data_and_x[:-1])
            return (p.derivative(self._nu) if self._nu else p)(data_and_x[-1], nu, ext)
        return value

    def _traced(self, x, nu, ext):
        knots, c = self.x, self.c
        if nu > 3:
            return fnp.zeros(shape_of(x) + shape_of(c)[2:])
        i = fnp.clip(fnp.searchsorted(knots, x, side="right") - 1, 0, len(knots) - 2)
        d = x - fnp.take(knots, i)
        # the cubic's coefficients (highest power first) at each point, differentiated nu times
        coef = [fnp.take(c[k], i, axis=0) for k in range(4 - nu)]
        scale = [_onp.prod(range(3 - k - nu + 1, 3 - k + 1)) for k in range(4 - nu)]
        d = _per_point(d, coef[0])
        out = coef[0] * float(scale[0])
        for k in range(1, 4 - nu):
            out = out * d + coef[k] * float(scale[k])
        if not ext:  # (scipy's NaN outside the knots)
            inside = (x >= knots[0]) & (x <= knots[-1])
            out = fnp.where(_per_point(inside, out), out, _onp.nan)
        return _points_at(out, x, self.axis)

    def _secants(self, y):
        """The knots' gaps (against ``y``'s other axes) and the slopes of the secants of ``y``
        (its interpolation axis first)."""
        dx = fnp.reshape(_onp.diff(self.x), (-1,) + (1,) * (len(shape_of(y)) - 1))
        return dx, fnp.diff(y, axis=0) / dx

    def _hermite(self, y, dydx):
        """The coefficients of the cubic Hermite interpolant of values ``y`` and slopes
        ``dydx`` (their interpolation axis first), scipy's ``CubicHermiteSpline``'s."""
        dx, slope = self._secants(y)
        t = (dydx[:-1] + dydx[1:] - 2 * slope) / dx
        return fnp.stack([t / dx, (slope - dydx[:-1]) / dx - t, dydx[:-1], y[:-1]])

    def _by_slopes(self, plain, y, slopes):
        """Set up a Hermite interpolant of ``y`` whose slopes at the knots are ``slopes(h,
        m)`` of the knots' gaps and the secants' slopes (three knots or more; two give the
        line's)."""
        if not self._setup(plain, (y,)):
            self.c = plain.c
            return
        y = self._along_first(y)
        h, m = self._secants(y)
        self.c = self._hermite(y, fnp.concatenate([m, m]) if shape_of(y)[0] == 2 else
                               slopes(h, m))

    def _along_first(self, v):
        return fnp.moveaxis(fnp.asarray(v), self.axis, 0)


class CubicSpline(_PiecewiseCubic):
    """scipy.interpolate.CubicSpline (``axis``, ``bc_type`` and ``extrapolate`` as scipy's;
    with traced ``y``, ``bc_type`` one of the names ``'not-a-knot'``, ``'natural'``,
    ``'clamped'``), differentiable in ``y`` and in the evaluation points; the knots ``x`` are
    fixed (refused by name when traced)."""

    def __init__(self, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
        refuse_traced("scipy.interpolate.CubicSpline", "x", x, "the knots are fixed")
        self._bc_type = bc_type
        if self._setup(_si.CubicSpline(x, _placeholder(y), axis, bc_type, extrapolate), (y,)):
            if bc_type not in ("not-a-knot", "natural", "clamped"):
                raise NotImplementedError("fgrad.scipy.interpolate.CubicSpline: on traced "
                                          "values bc_type is 'not-a-knot', 'natural' or "
                                          f"'clamped', not {bc_type!r}")
            unit = _unit_coefficients(tuple(self.x.tolist()), bc_type)
            # (y with its interpolation axis first, the coefficients' axes before the rest)
            self.c = fnp.tensordot(unit, self._along_first(y), axes=1)
        else:
            self.c = self._plain.c

    def _scipy(self, y):
        return _si.CubicSpline(self.x, y, self.axis, self._bc_type, self.extrapolate)


class CubicHermiteSpline(_PiecewiseCubic):
    """scipy.interpolate.CubicHermiteSpline, differentiable in the values ``y``, the slopes
    ``dydx`` (the coefficients are linear in both) and the evaluation points; the knots
    ``x`` are fixed."""

    def __init__(self, x, y, dydx, axis=0, extrapolate=None):
        refuse_traced("scipy.interpolate.CubicHermiteSpline", "x", x, "the knots are fixed")
        plain = _si.CubicHermiteSpline(x, _placeholder(y), _placeholder(dydx), axis,
                                       extrapolate)
        self.c = self._hermite(self._along_first(y), self._along_first(dydx)) \
            if self._setup(plain, (y, dydx)) else plain.c

    def _scipy(self, y, dydx):
        return _si.CubicHermiteSpline(self.x, y, dydx, self.axis, self.extrapolate)


def _pchip_end(h0, h1, m0, m1):
    """scipy's one-sided three-point slope at an end, kept to the data's shape."""
    d = ((2 * h0 + h1) * m0 - h0 * m1) / (h0 + h1)
    wrong_sign = fnp.sign(d) != fnp.sign(m0)
    overshoot = (fnp.sign(m0) != fnp.sign(m1)) & (fnp.abs(d) > 3.0 * fnp.abs(m0))
    return fnp.where(wrong_sign, 0.0, fnp.where(overshoot, 3.0 * m0, d))


def _pchip_slopes(h, m):
    """scipy's PCHIP slopes from the gaps ``h`` and the secants ``m``: inside, a weighted
    harmonic mean of the two secants, 0 where they differ in sign or one is 0."""
    flat = (fnp.sign(m[1:]) != fnp.sign(m[:-1])) | (m[1:] == 0) | (m[:-1] == 0)
    w1, w2 = 2 * h[1:] + h[:-1], h[1:] + 2 * h[:-1]
    # (1 / the harmonic mean; the secants where it is unused made 1, not 0)
    inner = (w1 + w2) / (w1 / fnp.where(flat, 1.0, m[:-1]) + w2 / fnp.where(flat, 1.0, m[1:]))
    return fnp.concatenate([_pchip_end(h[0], h[1], m[0], m[1])[None],
                            fnp.where(flat, 0.0, inner),
                            _pchip_end(h[-1], h[-2], m[-1], m[-2])[None]])


def _akima_slopes(h, m, method):
    """scipy's Akima slopes from the secants ``m`` (extended by two on each side, linearly):
    weighted means of the secants around each knot (``makima``'s weights count their sums
    too), where the weights vanish the mean of the outer two."""
    before, after = 2 * m[0] - m[1], 2 * m[-1] - m[-2]
    m = fnp.concatenate([(2 * before - m[0])[None], before[None], m, after[None],
                         (2 * after - m[-1])[None]])
    dm = fnp.abs(fnp.diff(m, axis=0))
    f1, f2 = dm[2:], dm[:-2]
    if method == "makima":
        pm = fnp.abs(m[1:] + m[:-1])
        f1, f2 = f1 + 0.5 * pm[2:], f2 + 0.5 * pm[:-2]
    f12 = f1 + f2
    weighted = f12 > 1e-9 * fnp.max(f12)
    return fnp.where(weighted, m[1:-2] + f2 / fnp.where(weighted, f12, 1.0) *
                     (m[2:-1] - m[1:-2]), 0.5 * (m[3:] + m[:-3]))


class PchipInterpolator(_PiecewiseCubic):
    """scipy.interpolate.PchipInterpolator (monotone cubic Hermite), differentiable in ``y``
    and in the evaluation points; the knots fixed. The slopes are scipy's: a weighted harmonic
    mean of the neighbouring secants, 0 where they change sign or one is 0 (a kink: the
    derivative of the slopes there is 0), one-sided at the ends."""

    def __init__(self, x, y, axis=0, extrapolate=None):
        refuse_traced("scipy.interpolate.PchipInterpolator", "x", x, "the knots are fixed")
        self._by_slopes(_si.PchipInterpolator(x, _placeholder(y), axis, extrapolate), y,
                        _pchip_slopes)

    def _scipy(self, y):
        return _si.PchipInterpolator(self.x, y, self.axis, self.extrapolate)


class Akima1DInterpolator(_PiecewiseCubic):
    """scipy.interpolate.Akima1DInterpolator (``method='akima'`` or ``'makima'``),
    differentiable in ``y`` and in the evaluation points; the knots fixed. The slopes are
    scipy's weighted means of the secants around each knot (where scipy's weights vanish, its
    fallback, the mean of the outer secants); ``abs``' derivative 0 at a zero difference."""

    def __init__(self, x, y, axis=0, *, method="akima", extrapolate=None):
        refuse_traced("scipy.interpolate.Akima1DInterpolator", "x", x, "the knots are fixed")
        self._method = method
        self._by_slopes(_si.Akima1DInterpolator(x, _placeholder(y), axis, method=method,
                                                extrapolate=extrapolate), y,
                        functools.partial(_akima_slopes, method=method))

    def _scipy(self, y):
        return _si.Akima1DInterpolator(self.x, y, self.axis, method=self._method,
                                       extrapolate=self.extrapolate)


def pchip_interpolate(xi, yi, x, der=0, axis=0):
    """scipy.interpolate.pchip_interpolate, differentiable in ``yi`` and ``x`` (through
    ``PchipInterpolator``); a list ``der`` gives a list of derivatives."""
    p = PchipInterpolator(xi, yi, axis=axis)
    if _onp.ndim(der) == 0:
        return p(x, der)
    return [p(x, nu) for nu in der]


class interp1d:
    """scipy.interpolate.interp1d, differentiable in ``y`` and in the points it is evaluated at
    (the knots ``x`` and ``fill_value`` fixed), for the kinds ``'linear'``, ``'slinear'``,
    ``'nearest'``, ``'nearest-up'``, ``'previous'``, ``'next'`` and ``'cubic'`` on traced
    values: a linear piece's slope, the cubic spline's derivative, and zero for the
    piecewise-constant kinds, in the point; a gather of ``y`` or its spline's coefficients in
    ``y``. scipy's values (its errors out of bounds too)."""

    _KINDS = ("linear", "slinear", "nearest", "nearest-up", "previous", "next", "cubic")

    def __init__(self, x, y, kind="linear", axis=-1, copy=True, bounds_error=None,
                 fill_value=_onp.nan, assume_sorted=False):
        name = "scipy.interpolate.interp1d"
        refuse_traced(name, "x", x, "the knots are fixed")
        refuse_traced(name, "fill_value", fill_value, "it is a fixed setting")
        traced = contains_tracer(y)
        # (scipy's checks, and its object for plain values; on a placeholder for traced ones)
        self._plain = _si.interp1d(x, _onp.zeros(shape_of(y)) if traced else y, kind, axis,
                                   copy, bounds_error, fill_value, assume_sorted)
        if traced and kind not in self._KINDS:
            raise NotImplementedError(f"fgrad.scipy.interpolate.interp1d: kind={kind!r} is not "
                                      f"supported on traced values; {self._KINDS} are")
        self._x, self._y, self._kind = _onp.asarray(x), y, kind
        self._settings = (kind, axis, bounds_error, fill_value, assume_sorted)
        self._axis = axis % len(shape_of(y))

    def __call__(self, x_new):
        if not contains_tracer((x_new, self._y)):
            return self._plain(x_new)
        return with_numpy_values(self._traced(fnp.asarray(x_new)), self._reference,
                                 (self._y, x_new), {})

    def _reference(self, y, x_new):
        kind, axis, bounds_error, fill_value, assume_sorted = self._settings
        return _si.interp1d(self._x, y, kind, axis, True, bounds_error, fill_value,
                            assume_sorted)(x_new)

    def _traced(self, xn):
        """The same interpolation written with fgrad.numpy (scipy's choice of pieces), its
        values replaced by scipy's."""
        order = _onp.argsort(self._x, kind="mergesort")
        x = self._x[order]
        y = fnp.take(fnp.moveaxis(fnp.asarray(self._y), self._axis, 0), order, axis=0)
        n, kind = len(x), self._kind
        if kind in ("linear", "slinear"):
            hi = fnp.clip(fnp.searchsorted(x, xn), 1, n - 1)
            lo = hi - 1
            y_lo, y_hi = fnp.take(y, lo, axis=0), fnp.take(y, hi, axis=0)
            x_lo = fnp.take(x, lo)
            out = (y_hi - y_lo) / _per_point(fnp.take(x, hi) - x_lo, y_lo) * \
                _per_point(xn - x_lo, y_lo) + y_lo
        elif kind == "cubic":  # (the spline's composite: this call's values are replaced)
            out = CubicSpline(x, y, axis=0)._traced(xn, 0, True)
        else:  # (scipy's indices for the piecewise-constant kinds)
            if kind in ("nearest", "nearest-up"):
                side = "left" if kind == "nearest" else "right"
                idx = fnp.clip(fnp.searchsorted((x[1:] + x[:-1]) / 2.0, xn, side=side), 0,
                               n - 1)
            elif kind == "previous":
                idx = fnp.clip(fnp.searchsorted(_onp.nextafter(x, -_onp.inf), xn,
                                                side="left"), 1, n) - 1
            else:
                idx = fnp.clip(fnp.searchsorted(_onp.nextafter(x, _onp.inf), xn,
                                                side="right"), 0, n - 1)
            out = fnp.take(y, idx, axis=0)
        if self._settings[3] != "extrapolate":  # (the fill: a constant, scipy's value)
            outside = (xn < x[0]) | (xn > x[-1])
            out = fnp.where(_per_point(outside, out), 0.0, out)
        return _points_at(out, xn, self._axis)


# scipy.interpolate's other functions: scipy's own on plain values, refused by name on traced
# ones
__getattr__ = defining.plain_only_fallback(
    __name__, _si, lambda name: "; fgrad.scipy.interpolate has CubicSpline, "
    "CubicHermiteSpline, PchipInterpolator, Akima1DInterpolator and interp1d, and "
    "fgrad.numpy.interp interpolates linearly")
