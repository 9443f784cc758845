"""``autograd.numpy``: ``fgrad.numpy``, with autograd's leniencies and its submodules
``numpy_boxes`` (``ArrayBox``) and ``numpy_vjps`` (``unbroadcast_f``).

Every name is ``fgrad.numpy``'s, but ``stack``, which takes any iterable of arrays as
autograd's does (``np.stack(d.values())``; numpy itself asks for a sequence)."""
from typing import Any

import fgrad.numpy as _fnp
from fgrad.numpy import *  # noqa: F401,F403
from fgrad.numpy import linalg, fft, random  # noqa: F401

from . import numpy_boxes, numpy_vjps  # noqa: F401


def stack(arrays: Any, axis: int = 0, out: Any = None, **kwargs: Any) -> Any:
    """``numpy.stack`` of any iterable of arrays (autograd's leniency: ``dict.values()``).

    >>> import fgrad.autograd.numpy as anp
    >>> anp.stack({"a": anp.ones(2), "b": anp.zeros(2)}.values()).shape
    (2, 2)
    """
    return _fnp.stack(list(arrays), axis=axis, out=out, **kwargs)


def __getattr__(name):  # (the names fgrad.numpy makes on demand)
    return getattr(_fnp, name)
