"""Hypothesis strategies driven by the primitive table's ``Spec``s (needs ``hypothesis``).

``primitive_cases(prim)`` draws ``(args, params)`` for a primitive: one of its spec's cases,
arrays of those shapes with values inside the spec's domain, rejecting draws its ``valid``
predicate refuses (kinks). ``arrays_in(shape, lo, hi)`` is the underlying array strategy.
"""
import numpy as _onp
from hypothesis import assume, strategies as st
from hypothesis.extra.numpy import arrays


def arrays_in(shape, lo=-2.0, hi=2.0, dtype=_onp.float64):
    """Float arrays of ``shape`` with every element in ``[lo, hi]``."""
    return arrays(dtype, shape, elements=st.floats(lo, hi, allow_nan=False,
                                                   allow_infinity=False, allow_subnormal=False,
                                                   width=_onp.dtype(dtype).itemsize * 8))


def argument(shape, domain, dtype=_onp.float64):
    if domain == "bool":
        return arrays(_onp.bool_, shape)
    return arrays_in(shape, domain[0], domain[1], dtype).map(
        lambda a: a[()] if a.ndim == 0 else a)


@st.composite
def primitive_cases(draw, prim, dtype=_onp.float64):
    """``(args, params)`` for one call of ``prim``, within its spec's domain."""
    spec = prim.spec
    shapes, params = draw(st.sampled_from(spec.cases))
    args = tuple(draw(argument(s, spec.arg_domain(i), dtype)) for i, s in enumerate(shapes))
    if spec.valid is not None:
        float_args = [a for i, a in enumerate(args) if spec.arg_domain(i) != "bool"]
        assume(spec.valid(*float_args))
    return args, params


def differentiable_argnums(prim, args):
    return [i for i in range(len(args)) if prim.spec.arg_domain(i) != "bool"]
