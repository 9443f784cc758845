"""``autograd.numpy``: ``fgrad.numpy``, with autograd's leniencies (``numpy_wrapper``) and
its submodules ``numpy_wrapper``, ``numpy_boxes`` (``ArrayBox``), ``numpy_vjps``
(``unbroadcast_f``), ``numpy_jvps`` (``broadcast``) and ``numpy_vspaces`` (``ArrayVSpace``),
laid out as autograd's package is."""
import fgrad.numpy as _fnp
from fgrad.numpy import linalg, fft, random  # noqa: F401

from .numpy_wrapper import *  # noqa: F401,F403
from .numpy_wrapper import __version__, _astype  # noqa: F401
from . import numpy_boxes, numpy_jvps, numpy_vjps, numpy_vspaces, numpy_wrapper  # noqa: F401


def __getattr__(name):  # (the names fgrad.numpy makes on demand)
    return getattr(_fnp, name)
