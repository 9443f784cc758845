"""Hypothesis strategies driven by the primitive table's ``Spec``s (needs ``hypothesis``).

``primitive_cases(prim)`` draws ``(args, params)`` for a primitive: one of its spec's cases
(or the one given), arrays of those shapes with values inside the spec's domain, rejecting
draws its ``valid`` predicate refuses (kinks). ``arrays_in(shape, lo, hi)`` is the underlying
array strategy.
"""
import functools

import numpy as _onp
from hypothesis import assume, strategies as st
from hypothesis.extra.numpy import arrays


def arrays_in(shape, lo=-2.0, hi=2.0, dtype=_onp.float64):
    """Float arrays of ``shape`` with every element in ``[lo, hi]``."""
    lo, hi = _inside(lo, hi, dtype)
    return arrays(dtype, shape, elements=st.floats(lo, hi, allow_nan=False,
                                                   allow_infinity=False, allow_subnormal=False,
                                                   width=_onp.dtype(dtype).itemsize * 8))


def _inside(lo, hi, dtype):
    """The bounds rounded inwards to numbers the dtype represents exactly."""
    t = _onp.dtype(dtype).type
    lo_t, hi_t = t(lo), t(hi)
    if lo_t < lo:
        lo_t = _onp.nextafter(lo_t, t(_onp.inf))
    if hi_t > hi:
        hi_t = _onp.nextafter(hi_t, t(-_onp.inf))
    return float(lo_t), float(hi_t)


# (built once per shape, domain and dtype: a strategy built again on every draw was a fifth of
# the generated tests' drawing time)
@functools.lru_cache(maxsize=None)
def argument(shape, domain, dtype=_onp.float64):
    if domain == "bool":
        return arrays(_onp.bool_, shape)
    if domain == "complex":  # real and imaginary parts in [-2, 2]
        part = arrays_in(shape, -2.0, 2.0, dtype)
        ctype = _onp.result_type(dtype, _onp.complex64)
        return st.tuples(part, part).map(lambda p: _scalar((p[0] + 1j * p[1]).astype(ctype)))
    return arrays_in(shape, domain[0], domain[1], dtype).map(_scalar)


def _scalar(a):
    return a[()] if a.ndim == 0 else a


@st.composite
def primitive_cases(draw, prim, dtype=_onp.float64, case=None):
    """``(args, params)`` for one call of ``prim``, within its spec's domain: for one of its
    spec's cases, or for ``case`` (one of them) where given."""
    spec = prim.spec
    shapes, params = draw(st.sampled_from(spec.cases)) if case is None else case
    args = tuple(draw(argument(s, spec.arg_domain(i), dtype)) for i, s in enumerate(shapes))
    if spec.valid is not None:
        float_args = [a for i, a in enumerate(args) if spec.arg_domain(i) != "bool"]
        assume(spec.valid(*float_args))
    return args, params
