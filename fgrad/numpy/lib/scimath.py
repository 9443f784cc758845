"""``fgrad.numpy.emath`` (numpy's ``numpy.lib.scimath``): ``sqrt``, ``log``, ``log2``,
``log10``, ``logn``, ``power``, ``arccos``, ``arcsin``, ``arctanh`` with a complex result where
the real function has none (``emath.sqrt(-1) == 1j``), differentiable as the complex
functions are.

As numpy's, each first makes a real argument complex where some entry lies outside the real
function's domain (a negative number for ``sqrt`` and the logarithms, ``|x| > 1`` for
``arccos``, ``arcsin``, ``arctanh``), so the result's dtype depends on the values: a traced
argument's values are read for that (a staged function guards them; under ``vmap`` a batch
is refused, as any branch on values is). numpy's own, called on a traced value, comes here
(``ArrayTracer.__array_function__``); before, it went to the real function of its name and
gave nan.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..broadcasting import dtype_of
from ..wrapping import traced_version_of
from ..namespace import mirror


def _complex_where(x, outside):
    """``x``, made complex (numpy's rule: complex64 for float32 and float16, else complex128)
    if it is real and ``outside(x)`` holds for some entry."""
    x = fnp.asarray(x)
    if _onp.iscomplexobj(_onp.empty(0, dtype_of(x))) or not bool(fnp.any(outside(x))):
        return x
    single = dtype_of(x) in (_onp.float16, _onp.float32)
    return fnp.astype(x, _onp.complex64 if single else _onp.complex128)


def _negative(x):
    return x < 0


def _beyond_one(x):
    return fnp.abs(x) > 1


def _below_zero_integers(p):  # numpy's _fix_int_lt_zero: a negative integer power is taken
    p = fnp.asarray(p)           # in floats
    if _onp.issubdtype(dtype_of(p), _onp.integer) and bool(fnp.any(p < 0)):
        return fnp.astype(p, _onp.float64)
    return p


@traced_version_of(_onp.emath.sqrt)
def sqrt(x):
    return fnp.sqrt(_complex_where(x, _negative))


@traced_version_of(_onp.emath.log)
def log(x):
    return fnp.log(_complex_where(x, _negative))


@traced_version_of(_onp.emath.log10)
def log10(x):
    return fnp.log10(_complex_where(x, _negative))


@traced_version_of(_onp.emath.log2)
def log2(x):
    return fnp.log2(_complex_where(x, _negative))


@traced_version_of(_onp.emath.logn)
def logn(n, x):
    return log(x) / log(n)


@traced_version_of(_onp.emath.power)
def power(x, p):
    return fnp.power(_complex_where(x, _negative), _below_zero_integers(p))


@traced_version_of(_onp.emath.arccos)
def arccos(x):
    return fnp.arccos(_complex_where(x, _beyond_one))


@traced_version_of(_onp.emath.arcsin)
def arcsin(x):
    return fnp.arcsin(_complex_where(x, _beyond_one))


@traced_version_of(_onp.emath.arctanh)
def arctanh(x):
    return fnp.arctanh(_complex_where(x, _beyond_one))


mirror(_onp.emath, globals(), "emath.")
