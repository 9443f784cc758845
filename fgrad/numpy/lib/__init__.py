"""``fgrad.numpy.lib``: numpy.lib, with ``stride_tricks``'s functions for traced values
(``sliding_window_view``) and ``scimath``'s (``fgrad.numpy.emath``); numpy's other
submodules and names are numpy's own."""
import numpy as _onp

from . import stride_tricks  # noqa: F401  (ours, before numpy's modules are copied)
from ..namespace import LazySubmodule, mirror

# (loaded on first use: 0.5 ms of fgrad.numpy's import otherwise)
scimath = LazySubmodule("fgrad.numpy.lib.scimath", globals(), "scimath")

mirror(_onp.lib, globals(), "lib.")
