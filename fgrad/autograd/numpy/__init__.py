"""``autograd.numpy``: ``fgrad.numpy``, with autograd's leniencies (``numpy_wrapper``) and
its submodules ``numpy_wrapper``, ``numpy_boxes`` (``ArrayBox``), ``numpy_vjps``
(``unbroadcast_f``), ``numpy_jvps`` (``broadcast``) and ``numpy_vspaces`` (``ArrayVSpace``),
laid out as autograd's package is."""
from .numpy_wrapper import *  # noqa: F401,F403  (linalg, fft and random among them)
# (``__getattr__``: the names fgrad.numpy makes on demand, as the wrapper's namespace has them)
from .numpy_wrapper import __getattr__, __version__, _astype  # noqa: F401
from . import numpy_boxes, numpy_jvps, numpy_vjps, numpy_vspaces, numpy_wrapper  # noqa: F401
