"""``autograd.numpy``: ``fgrad.numpy``, with autograd's leniencies and its submodules
``numpy_boxes`` (``ArrayBox``) and ``numpy_vjps`` (``unbroadcast_f``).

Every name is ``fgrad.numpy``'s, but ``stack``, which takes any iterable of arrays as
autograd's does (``np.stack(d.values())``; numpy itself asks for a sequence); autograd's own
``make_diagonal`` is added, and ``__version__`` is numpy's, as in ``autograd.numpy``."""
from typing import Any

import numpy as _onp

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


def make_diagonal(D: Any, offset: int = 0, axis1: int = -1, axis2: int = -2) -> Any:
    """autograd's ``make_diagonal``: the arrays whose diagonals (over two new last axes) are
    ``D``'s last axis, zero elsewhere; the inverse of ``diagonal(A, axis1=-1, axis2=-2)``.
    As in autograd, only ``offset=0``, ``axis1=-1``, ``axis2=-2``.

    >>> import fgrad.autograd.numpy as anp
    >>> anp.make_diagonal(anp.array([1.0, 2.0])).tolist()
    [[1.0, 0.0], [0.0, 2.0]]
    """
    if not (offset == 0 and axis1 == -1 and axis2 == -2):
        raise NotImplementedError("make_diagonal: only offset=0, axis1=-1, axis2=-2 (as in "
                                  "autograd)")
    n = _fnp.shape(D)[-1]
    return _fnp.expand_dims(D, -1) * _fnp.eye(n, dtype=_fnp.result_type(D, 0.0))


__version__ = _onp.__version__


def __getattr__(name):  # (the names fgrad.numpy makes on demand)
    return getattr(_fnp, name)
