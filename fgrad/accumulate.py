"""Adding up derivatives: cotangents meeting at a value, and the tangents of a call's arguments.

Shared by the traces' passes (the tape's backward and forward walks, the dual numbers). A sum
is recorded by the transforms outside when either term is traced, so it sits above the table's
``add`` primitive.
"""
from .numpy.elementwise import add
from .tracer import Tracer


def add_any(a, b):
    """``a + b`` of two derivatives: numpy's own operator when both are plain values (a fan-out
    in a loop makes this frequent), the ``add`` primitive when either is traced."""
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return add(a, b)
    return a + b


def output_tangent(prim, tangents, ans, args, params):
    """The tangent of ``ans = prim(*args, **params)`` from every argument's tangent (None for
    zero), by the primitive's JVP rules; None when it is zero."""
    if prim.jvp_joint is not None:
        return prim.jvp_joint(tangents, ans, *args, **params)
    out, rules = None, prim.jvps
    i = -1
    for t in tangents:
        i += 1
        if t is not None:
            c = (rules.get(i) or prim.jvp(i))(t, ans, *args, **params)
            if c is not None:
                out = c if out is None else add(out, c)
    return out
