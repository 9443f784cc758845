"""Evenly spaced values between traced endpoints: linspace, logspace, geomspace, arange.

Each value is an affine (or, for geomspace, log-affine) function of the endpoints (of
``arange``'s start and step), so the derivatives are exact weights ``1 - t`` and ``t`` (``1``
and ``i``); the values themselves are numpy's own (``numpy_values``), whose rounding differs
from the composite's in the last bit.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import read_values, without_derivative
from .broadcasting import dtype_of, shape_of
from .wrapping import differentiable, unsupported_kwargs

_ENDPOINTS = [(((), ()), {"num": 5}), (((), ()), {"num": 4, "endpoint": False}),
              (((2,), (2,)), {"num": 3}), (((2,), ()), {"num": 3, "axis": 1}),
              (((), ()), {"num": 1})]


def _fractions(num, endpoint, axis, ndim):
    """The positions ``t`` in [0, 1] of the samples, shaped to broadcast along ``axis``."""
    div = (num - 1) if endpoint else num
    t = _onp.arange(num, dtype=float) / div if div > 0 else _onp.zeros(num)
    shape = [1] * (ndim + 1)
    shape[axis] = num
    return t.reshape(shape)


def _spaced(start, stop, num, endpoint, axis):
    start, stop = fnp.asarray(start), fnp.asarray(stop)
    shape = _onp.broadcast_shapes(start.shape, stop.shape)
    start, stop = fnp.broadcast_to(start, shape), fnp.broadcast_to(stop, shape)
    ndim = len(shape)
    axis = int(axis) % (ndim + 1)
    t = _fractions(int(num), endpoint, axis, ndim)
    start, stop = fnp.expand_dims(start, axis), fnp.expand_dims(stop, axis)
    return start + (stop - start) * t, axis


@differentiable(_onp.linspace, Spec(_ENDPOINTS), numpy_values=True)
def linspace(start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
    """Differentiable in ``start`` and ``stop`` (sample i has weights ``1 - t_i`` and
    ``t_i``); an integer ``dtype`` gives a plain array."""
    unsupported_kwargs("linspace", kwargs)
    y, _ = _spaced(start, stop, num, endpoint, axis)
    if dtype is not None:
        y = fnp.astype(y, dtype)
    if retstep:
        div = (num - 1) if endpoint else num
        step = (fnp.asarray(stop) - fnp.asarray(start)) / div if div > 0 else _onp.nan
        return y, step
    return y


@differentiable(_onp.logspace, Spec(_ENDPOINTS + [(((), ()), {"num": 3, "base": 2.0})]),
                numpy_values=True)
def logspace(start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
    """``base ** linspace(start, stop)``; differentiable in ``start``, ``stop`` and ``base``."""
    y, axis = _spaced(start, stop, num, endpoint, axis)
    base = fnp.asarray(base)
    if base.ndim:
        base = fnp.expand_dims(base, axis)
    y = fnp.power(base, y)
    return y if dtype is None else fnp.astype(y, dtype)


@differentiable(_onp.geomspace, Spec(_ENDPOINTS, domain=(0.3, 3.0)), numpy_values=True)
def geomspace(start, stop, num=50, endpoint=True, dtype=None, axis=0):
    """Samples equally spaced in log scale between same-signed real endpoints; differentiable
    in both (complex endpoints are refused)."""
    start, stop = fnp.asarray(start), fnp.asarray(stop)
    if _onp.iscomplexobj(_onp.zeros((), dtype_of(start))) or \
            _onp.iscomplexobj(_onp.zeros((), dtype_of(stop))):
        raise NotImplementedError("fgrad.numpy.geomspace: complex endpoints are not supported "
                                  "on traced values")
    sign = fnp.sign(without_derivative(start))  # (a batch of signs under vmap)
    y, axis = _spaced(fnp.log(fnp.abs(start)), fnp.log(fnp.abs(stop)), num, endpoint, axis)
    y = fnp.exp(y) * (fnp.expand_dims(sign, axis) if shape_of(start) else sign)
    return y if dtype is None else fnp.astype(y, dtype)


def _arange_case(f, start, *step):
    """A test case of ``arange``: ``start`` to 4.3 by 1, or to 2.0 by ``step``."""
    return f(start, 2.0, step[0]) if step else f(start, 4.3)


def _apart_from_a_new_value(start, *step, margin=0.02):
    """The count, ``ceil((stop - start) / step)``, stays put within ``margin`` of the case
    (finite differences cannot step over a value appearing at the end)."""
    span = (2.0 - start) / step[0] if step else 4.3 - start
    return abs(span - round(span)) > margin


@differentiable(_onp.arange, Spec([(((),), {}), (((), ()), {})], call=_arange_case,
                                  domain=((-2.0, 2.0), (0.3, 0.7)),
                                  valid=_apart_from_a_new_value),
                numpy_values=True)
def arange(start, stop=None, step=None, dtype=None, **kwargs):
    """Differentiable in ``start`` and ``step``: value ``i`` is ``start + i * step``; how many
    values there are is piecewise constant, so ``stop`` has zero derivative. An integer
    ``dtype`` gives a plain array."""
    unsupported_kwargs("arange", kwargs)
    n = len(_onp.arange(*read_values((start, stop, step)), dtype=dtype))
    if stop is None:
        start = 0
    y = fnp.asarray(start) + _onp.arange(n) * (1 if step is None else fnp.asarray(step))
    return y if dtype is None else fnp.astype(y, dtype)
