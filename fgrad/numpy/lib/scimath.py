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
from .. import elementwise
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


def _widened(name, outside):
    """numpy's ``emath.<name>``: the real function ``name`` on ``x`` made complex where
    ``outside`` holds for some entry."""
    real = getattr(elementwise, name)

    @traced_version_of(getattr(_onp.emath, name))
    def fn(x):
        return real(_complex_where(x, outside))
    return fn


sqrt, log, log2, log10 = (_widened(n, _negative) for n in ("sqrt", "log", "log2", "log10"))
arccos, arcsin, arctanh = (_widened(n, _beyond_one) for n in ("arccos", "arcsin", "arctanh"))


@traced_version_of(_onp.emath.logn)
def logn(n, x):
    return log(x) / log(n)


@traced_version_of(_onp.emath.power)
def power(x, p):
    return fnp.power(_complex_where(x, _negative), _below_zero_integers(p))


mirror(_onp.emath, globals(), "emath.")
