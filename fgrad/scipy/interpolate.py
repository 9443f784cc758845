"""fgrad.scipy.interpolate: ``CubicSpline`` and ``interp1d``, differentiable in the values they
interpolate and in the points they are evaluated at (the knots fixed).

A cubic spline's coefficients are linear in its values ``y``: they are scipy's spline of the
unit vectors (one spline of n columns, kept per knots and end conditions) times ``y``; on an
interval the spline is a cubic in the distance to its left knot, found by ``searchsorted``
(a derivative of order ``nu``: that cubic's). The values are scipy's own (``PPoly``'s
evaluation of scipy's coefficients); the derivatives those of this composite, so the spline
can be differentiated in ``y`` and in the point, jitted and batched.

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
from ..core.tracer import contains_tracer
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


class CubicSpline:
    """scipy.interpolate.CubicSpline (``axis``, ``bc_type`` and ``extrapolate`` as scipy's;
    with traced ``y``, ``bc_type`` one of the names ``'not-a-knot'``, ``'natural'``,
    ``'clamped'``), differentiable in ``y`` and in the evaluation points; the knots ``x`` are
    fixed (refused by name when traced)."""

    def __init__(self, x, y, axis=0, bc_type="not-a-knot", extrapolate=None):
        refuse_traced("scipy.interpolate.CubicSpline", "x", x, "the knots are fixed")
        # (scipy's checks and its knots; on placeholders of traced values' shape, unread)
        self._plain = _si.CubicSpline(x, _onp.zeros(shape_of(y)) if contains_tracer(y) else y,
                                      axis, bc_type, extrapolate)
        # (scipy's axis, made non-negative: the points' axes go there)
        self.x, self.axis, self.extrapolate = self._plain.x, self._plain.axis, \
            self._plain.extrapolate
        self._bc_type, self._y, self._nu = bc_type, y, 0
        if contains_tracer(y):
            if bc_type not in ("not-a-knot", "natural", "clamped"):
                raise NotImplementedError("fgrad.scipy.interpolate.CubicSpline: on traced "
                                          "values bc_type is 'not-a-knot', 'natural' or "
                                          f"'clamped', not {bc_type!r}")
            unit = _unit_coefficients(tuple(self.x.tolist()), bc_type)
            # (y with its interpolation axis first, the coefficients' axes before the rest)
            self.c = fnp.tensordot(unit, fnp.moveaxis(fnp.asarray(y), self.axis, 0), axes=1)
        else:
            self.c = self._plain.c

    def derivative(self, nu=1):
        """The spline's derivative of order ``nu`` (scipy's ``derivative``), an object as
        this one."""
        out = object.__new__(CubicSpline)
        out.__dict__.update(self.__dict__)
        out._nu, out._plain = self._nu + nu, self._plain.derivative(nu)
        return out

    def __call__(self, x, nu=0, extrapolate=None):
        if not contains_tracer((x, self._y)):
            return self._plain(x, nu, extrapolate)
        ext = self.extrapolate if extrapolate is None else extrapolate
        if ext == "periodic":
            raise NotImplementedError("fgrad.scipy.interpolate.CubicSpline: periodic "
                                      "extrapolation is not supported on traced values")
        return with_numpy_values(self._traced(fnp.asarray(x), self._nu + nu, ext),
                                 self._reference(nu, ext), (self._y, x), {})

    def _reference(self, nu, ext):
        """scipy's value of this spline (its derivative, where taken) at ``x``."""
        def value(y, x):
            spline = _si.CubicSpline(self.x, y, self.axis, self._bc_type, self.extrapolate)
            return (spline.derivative(self._nu) if self._nu else spline)(x, nu, ext)
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
    __name__, _si, lambda name: "; fgrad.scipy.interpolate has CubicSpline and interp1d, and "
    "fgrad.numpy.interp interpolates linearly")
