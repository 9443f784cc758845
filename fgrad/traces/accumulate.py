"""Adding up derivatives: cotangents meeting at a value, tangents of a call's arguments.

Shared by the traces' passes (the tape's backward walk, forward mode's steps). A sum
is recorded by the transforms outside when either term is traced, so it sits above the table's
``add`` primitive.
"""
from ..numpy.elementwise import add
from ..core.tracer import Tracer


def add_any(a, b):
    """``a + b`` of two derivatives: numpy's own operator when both are plain values (a fan-out
    in a loop makes this frequent), the ``add`` primitive when either is traced."""
    if isinstance(a, Tracer) or isinstance(b, Tracer):
        return add(a, b)
    return a + b
