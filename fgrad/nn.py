"""The helpers numerical users reach for from ``jax.nn``, with JAX's names and conventions.

Each is a composition of ``fgrad.numpy`` primitives, so it has both derivative modes at every
order, and runs on plain arrays as well as traced ones. Kinks follow JAX: ``relu'(0) = 0``.
The softmax family subtracts the maximum first (with no derivative of its own), so large
inputs do not overflow.

>>> import numpy, fgrad
>>> from fgrad import nn
>>> nn.softmax(numpy.array([1000.0, 1000.0])).tolist()
[0.5, 0.5]
>>> float(fgrad.grad(nn.relu)(0.0)), float(fgrad.grad(nn.softplus)(0.0))
(0.0, 0.5)
"""
from typing import Any
import math

import numpy as _onp

import fgrad.numpy as np
from .transforms import stop_gradient

__all__ = ["relu", "sigmoid", "softplus", "log_sigmoid", "silu", "swish", "gelu", "one_hot",
           "softmax", "log_softmax", "logsumexp"]


def relu(x: Any) -> Any:
    """``max(x, 0)``, with derivative 0 at 0 (JAX's choice)."""
    x = np.asarray(x)
    return np.where(x > 0, x, np.zeros_like(x))


def softplus(x: Any) -> Any:
    """``log(1 + exp(x))``, computed without overflow."""
    return np.logaddexp(x, 0.0)


def log_sigmoid(x: Any) -> Any:
    """``log(sigmoid(x)) = -softplus(-x)``."""
    return -softplus(-np.asarray(x))


def sigmoid(x: Any) -> Any:
    """``1 / (1 + exp(-x))``, without overflow for large ``|x|``."""
    return np.exp(log_sigmoid(x))


def silu(x: Any) -> Any:
    """``x * sigmoid(x)`` (``swish``)."""
    return np.asarray(x) * sigmoid(x)


swish = silu


def gelu(x: Any, approximate: bool = True) -> Any:
    """The Gaussian error linear unit, ``x * Phi(x)``: by default the tanh approximation, as
    JAX's default; ``approximate=False`` uses ``erf`` (it needs scipy)."""
    x = np.asarray(x)
    if approximate:
        c = math.sqrt(2.0 / math.pi)
        return 0.5 * x * (1.0 + np.tanh(c * (x + 0.044715 * x ** 3)))
    from .scipy import special  # (scipy is optional: only this form needs it)
    return 0.5 * x * (1.0 + special.erf(x / math.sqrt(2.0)))


def one_hot(x: Any, num_classes: int, dtype: Any = _onp.float64, axis: int = -1) -> Any:
    """``x``'s integer entries as one-hot vectors of ``num_classes`` entries along ``axis``
    (out-of-range entries give all zeros, as in JAX). No derivative (its input is integers);
    traced labels (a batch under ``vmap``, labels staged by ``jit``) are compared as nodes,
    so no value is read."""
    hot = np.expand_dims(stop_gradient(np.asarray(x)), -1) == _onp.arange(num_classes)
    return np.moveaxis(np.astype(hot, dtype), -1, axis)


def _shifted(x, axis):
    """``x`` minus its maximum along ``axis``, and that shift (the maximum without derivative,
    kept dims; 0 where it is infinite)."""
    x = np.asarray(x)
    m = stop_gradient(np.max(x, axis=axis, keepdims=True))
    m = np.where(np.isfinite(m), m, np.zeros_like(m))
    return x - m, m


def logsumexp(x: Any, axis: Any = None, keepdims: bool = False) -> Any:
    """``log(sum(exp(x)))`` over ``axis``, without overflow."""
    s, m = _shifted(x, axis)
    with _onp.errstate(divide="ignore"):  # every entry -inf: -inf, as JAX gives
        out = np.log(np.sum(np.exp(s), axis=axis, keepdims=True)) + m
    return out if keepdims else np.squeeze(out, axis=axis)


def softmax(x: Any, axis: Any = -1) -> Any:
    """``exp(x) / sum(exp(x))`` along ``axis``, without overflow."""
    e = np.exp(_shifted(x, axis)[0])
    return e / np.sum(e, axis=axis, keepdims=True)


def log_softmax(x: Any, axis: Any = -1) -> Any:
    """``x - logsumexp(x)`` along ``axis``, without overflow."""
    s = _shifted(x, axis)[0]
    return s - np.log(np.sum(np.exp(s), axis=axis, keepdims=True))
