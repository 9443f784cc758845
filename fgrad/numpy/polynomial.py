"""numpy.polynomial with traced coefficients: each series' value, ``polyval``, ``chebval``,
``legval``, ``hermval``, ``hermeval`` and ``lagval`` (in ``fgrad.numpy.polynomial.polynomial``,
``.chebyshev``, ``.legendre``, ``.hermite``, ``.hermite_e``, ``.laguerre``), in the
coefficients and the points; and each family's fit (``polyfit``, ``chebfit``, ..., ``lagfit``,
and the classes' ``fit``) in the values fitted, the points and the weights.

numpy's own functions fail only where they convert the coefficients (``np.array(c)``); past
that they are arithmetic, which a tracer takes. Each is numpy's sequence of operations again
(Horner's scheme; the three-term recurrences backwards, Clenshaw's), so traced values are
numpy's bit for bit, and a traced ``x`` counts as an array for ``tensor=True``. Plain values
go to numpy's function.

The classes (``Polynomial``, ``Chebyshev``, ``Legendre``, ``Hermite``, ``HermiteE``,
``Laguerre``) are numpy's, subclassed so that a series is evaluated at traced points, and one
made of traced coefficients (``Polynomial(c)``, ``Polynomial.fit(x, y, 3)`` of traced ``y``)
is evaluated too, numpy's map of its domain to its window included. Everything else
(arithmetic, ``deriv``, ``roots``) is numpy's own, on plain coefficients. (numpy
refuses arithmetic between two classes, ``TypeError: Polynomial types differ``: numpy's
``Polynomial`` and fgrad's mix only as ``numpy's + fgrad's``.)

>>> import numpy, fgrad, fgrad.numpy as np
>>> C = np.polynomial.chebyshev
>>> fgrad.grad(lambda c: C.chebval(0.5, c))(numpy.array([1.0, 2.0, 3.0])).tolist()  # T_k(0.5)
[1.0, 0.5, -0.5]
>>> p = np.polynomial.Polynomial([1.0, 2.0, 3.0])
>>> float(fgrad.grad(p)(2.0))  # 2 + 6 x
14.0
"""
import sys
import types

import numpy as _onp
import numpy.polynomial as _numpys
import numpy.polynomial.polyutils as _pu

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import Tracer, contains_tracer, value_for_shape
from .broadcasting import dtype_of, shape_of
from .polynomials import check_fit_points, fit_call, least_squares, separated
from .wrapping import differentiable, unsupported_kwargs


def _series(c, x, tensor):
    """numpy's conversion of the coefficients ``c`` (at least 1-d, integers as float64) and
    of a list ``x``; with ``tensor``, ``c`` given an axis per axis of an array ``x``."""
    c = fnp.asarray(c)
    if not shape_of(c):
        c = fnp.reshape(c, (1,))
    if dtype_of(c).char in "?bBhHiIlLqQpP":
        c = fnp.astype(c, _onp.float64)
    if isinstance(x, (tuple, list)):
        x = fnp.asarray(x)
    if isinstance(x, (_onp.ndarray, Tracer)) and tensor:
        c = fnp.reshape(c, shape_of(c) + (1,) * len(shape_of(x)))
    return c, x


def _backwards(c, x, step, last):
    """The recurrence of a three-term family run from the last coefficient down, as numpy
    runs it: ``step(c_i, c0, c1, nd, x)`` gives the next ``(c0, c1)``, ``last(c0, c1, x)``
    the value."""
    n = shape_of(c)[0]
    if n == 1:
        c0, c1 = c[0], 0
    elif n == 2:
        c0, c1 = c[0], c[1]
    else:
        c0, c1 = c[-2], c[-1]
        for i in range(3, n + 1):
            c0, c1 = step(c[-i], c0, c1, n - i + 2, x)
    return last(c0, c1, x)


def _horner(c, x):
    c0 = c[-1] + x * 0
    for i in range(2, shape_of(c)[0] + 1):
        c0 = c[-i] + c0 * x
    return c0


# each family's step and value, in numpy's order of operations
_FAMILIES = {
    "polynomial": ("polyval", _horner),
    "chebyshev": ("chebval", lambda c, x: _backwards(
        c, x, lambda ci, c0, c1, nd, x: (ci - c1, c0 + c1 * (2 * x)),
        lambda c0, c1, x: c0 + c1 * x)),
    "legendre": ("legval", lambda c, x: _backwards(
        c, x, lambda ci, c0, c1, nd, x: (ci - c1 * ((nd - 1) / nd),
                                         c0 + c1 * x * ((2 * nd - 1) / nd)),
        lambda c0, c1, x: c0 + c1 * x)),
    "hermite": ("hermval", lambda c, x: _backwards(
        c, x, lambda ci, c0, c1, nd, x: (ci - c1 * (2 * (nd - 1)), c0 + c1 * (x * 2)),
        lambda c0, c1, x: c0 + c1 * (x * 2))),
    "hermite_e": ("hermeval", lambda c, x: _backwards(
        c, x, lambda ci, c0, c1, nd, x: (ci - c1 * (nd - 1), c0 + c1 * x),
        lambda c0, c1, x: c0 + c1 * x)),
    "laguerre": ("lagval", lambda c, x: _backwards(
        c, x, lambda ci, c0, c1, nd, x: (ci - (c1 * (nd - 1)) / nd,
                                         c0 + (c1 * ((2 * nd - 1) - x)) / nd),
        lambda c0, c1, x: c0 + c1 * (1 - x))),
}
_SPEC = Spec([(((), (4,)), {}), (((5,), (3,)), {}), (((4,), (3, 2)), {}), (((2,), (1,)), {})],
             domain=(-1.5, 1.5))


def _traced(family, name, value):
    numpys = getattr(getattr(_numpys, family), name)

    def val(x, c, tensor=True):
        if not (contains_tracer(x) or contains_tracer(c)):
            return numpys(x, c, tensor)
        c, x = _series(c, x, tensor)
        return value(c, x)

    val.__name__ = val.__qualname__ = name
    return differentiable(numpys, _SPEC, name=f"polynomial.{family}.{name}")(val)


_FIT_SPEC = Spec([(((4,), (4,)), {"deg": 2}), (((3,), (3, 2)), {"deg": 1}),
                  (((4,), (4,), (4,)), {"deg": 2}), (((4,), (4,)), {"deg": (0, 2)})],
                 domain=((-2.0, 2.0), (-2.0, 2.0), (0.5, 2.0)), valid=separated,
                 call=fit_call)


def _traced_fit(family, name, value):
    """numpy's ``<family>fit`` differentiable in ``x``, ``y`` and ``w``: numpy's values, the
    derivatives of the least-squares solution (``polynomials.least_squares``, as
    ``fgrad.numpy.polyfit``'s) by the family's Vandermonde matrix (each basis function
    evaluated by ``value``, the family's own recurrence, where ``x`` is traced)."""
    numpys = getattr(getattr(_numpys, family), name)
    numpys_vander = getattr(getattr(_numpys, family), name[:-3] + "vander")

    def fit(x, y, deg, rcond=None, full=False, w=None):
        if not (contains_tracer(x) or contains_tracer(y) or contains_tracer(w)):
            return numpys(x, y, deg, rcond, full, w)
        unsupported_kwargs(f"polynomial.{family}.{name}", {"full": full or None})
        x, y, degs = fnp.asarray(x) + 0.0, fnp.asarray(y) + 0.0, _onp.asarray(deg)
        # (numpy's own checks, in its order: its messages)
        if degs.ndim > 1 or degs.dtype.kind not in "iu" or degs.size == 0:
            raise TypeError("deg must be an int or non-empty 1-D array of int")
        if degs.min() < 0:
            raise ValueError("expected deg >= 0")
        check_fit_points(x, y)
        if w is not None:
            w = fnp.asarray(w) + 0.0
            if len(shape_of(w)) != 1:
                raise TypeError("expected 1D vector for w")
            if shape_of(w)[0] != shape_of(x)[0]:
                raise TypeError("expected x and w to have same length")
        top = int(degs.max())
        if contains_tracer(x):
            unit = _onp.eye(top + 1)
            van = fnp.stack([value(unit[k], x) for k in range(top + 1)], axis=1)
        else:
            van = numpys_vander(x, top)
        if rcond is None:
            rcond = shape_of(x)[0] * _onp.finfo(dtype_of(x)).eps
        if degs.ndim == 0:
            return least_squares(f"polynomial.{family}.{name}", van, y, w, rcond)
        kept = _onp.sort(degs)
        c = least_squares(f"polynomial.{family}.{name}", van[:, kept], y, w, rcond)
        # (the coefficients not fitted are zeros, as numpy fills them in)
        return fnp.at(fnp.zeros((top + 1,) + shape_of(c)[1:], dtype_of(c)))[kept].set(c)

    fit.__name__ = fit.__qualname__ = name
    return differentiable(numpys, _FIT_SPEC, name=f"polynomial.{family}.{name}",
                          numpy_values=True)(fit)


# each family's class, in numpy's module of that family
_CLASSES = {"polynomial": "Polynomial", "chebyshev": "Chebyshev", "legendre": "Legendre",
            "hermite": "Hermite", "hermite_e": "HermiteE", "laguerre": "Laguerre"}


def _traced_class(module, family, val, fit):
    """numpy's class of ``family``, evaluated by ``val`` (the traced ``polyval``, ...) where
    its points or coefficients are traced, and fitted by ``fit`` (``Series.fit(x, y, deg)``
    of traced values ``y``: numpy's ``fit`` maps ``x`` to the window and calls ``_fit``)."""
    base = getattr(getattr(_numpys, family), _CLASSES[family])

    class Series(base):
        _val = staticmethod(val)
        _fit = staticmethod(fit)

        def __init__(self, coef, domain=None, window=None, symbol="x"):
            # (numpy's checks and conversions on the coefficients' class and shape; then
            # the traced coefficients, as numpy would convert them)
            super().__init__(value_for_shape(coef) if contains_tracer(coef) else coef,
                             domain, window, symbol)
            if contains_tracer(coef):
                self.coef = _series(coef, None, False)[0]

        def __call__(self, arg):
            if not (contains_tracer(arg) or contains_tracer(self.coef)):
                return super().__call__(arg)
            if isinstance(arg, (list, tuple)):
                arg = fnp.asarray(arg)
            off, scl = _pu.mapparms(self.domain, self.window)  # (numpy's mapdomain)
            return self._val(off + scl * arg, self.coef)

    Series.__name__ = Series.__qualname__ = base.__name__
    Series.__module__ = module.__name__  # (pickled by name, as numpy's)
    Series.__doc__ = base.__doc__
    return Series


def _submodule(family, name, value):
    """``fgrad.numpy.polynomial.<family>``: numpy's module with the traced ``name`` (the
    series' value) and fit, and its class."""
    module = types.ModuleType(f"{__name__}.{family}", getattr(_numpys, family).__doc__)
    fit_name = name[:-3] + "fit"
    setattr(module, name, _traced(family, name, value))
    setattr(module, fit_name, _traced_fit(family, fit_name, value))
    setattr(module, _CLASSES[family], _traced_class(module, family, getattr(module, name),
                                                    getattr(module, fit_name)))
    module.__getattr__ = lambda attr: getattr(getattr(_numpys, family), attr)
    sys.modules[module.__name__] = module  # (import fgrad.numpy.polynomial.chebyshev works)
    return module


for _family, (_name, _value) in _FAMILIES.items():
    globals()[_family] = _submodule(_family, _name, _value)
    globals()[_CLASSES[_family]] = getattr(globals()[_family], _CLASSES[_family])


def __getattr__(attr):  # (numpy's other functions and names: numpy's own)
    return getattr(_numpys, attr)
