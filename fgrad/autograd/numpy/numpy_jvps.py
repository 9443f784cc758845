"""``autograd.numpy.numpy_jvps``: the helper autograd's JVP rules are written with, which
libraries call in their own: ``broadcast``, the tangent of an argument broadcast against
``target`` (``numpy_vjps.unbroadcast``'s counterpart)."""
from typing import Any

import fgrad.numpy as fnp

__all__ = ["broadcast"]


def broadcast(x: Any, target: Any) -> Any:
    """autograd's ``broadcast(x, target)``: ``x`` broadcast to ``target``'s shape, complex
    where ``target`` is.

    >>> import numpy
    >>> from fgrad.autograd.numpy.numpy_jvps import broadcast
    >>> broadcast(numpy.array([1.0, 2.0]), numpy.zeros((2, 2), complex)).tolist()
    [[(1+0j), (2+0j)], [(1+0j), (2+0j)]]
    """
    out = fnp.broadcast_to(x, fnp.shape(target))
    return out + 0j if fnp.iscomplexobj(target) and not fnp.iscomplexobj(x) else out
