"""``import fgrad.numpy as np``: numpy, with derivatives.

Every name of numpy is here. On plain arrays each function returns exactly what numpy returns
(it *is* numpy's function, or passes the call straight to it). Inside a transform, the
functions with rules take and return tracers; zero-derivative functions (``floor``,
``argmax``, comparisons, ...) return plain arrays; any other function raises
``NoDerivativeRuleError`` naming itself and showing how to add a rule.

The rules live in one module per family: ``elementwise``, ``reductions``, ``statistics``,
``layout``, ``joining``, ``products``, ``polynomials``, ``einsum``, ``indexing``, ``selection``,
``ranges``, ``functional`` (apply_along_axis and friends), ``counting``, and the ``linalg``,
``fft`` and ``lib`` (``lib.stride_tricks.sliding_window_view``) submodules. Beyond numpy's
names this module has ``getitem`` and the ``index_add/set/multiply/min/max`` functions,
the primitives behind ``x[idx]`` and ``at(x)[idx].add(v)`` and its siblings (for plain and
traced arrays alike; a traced value has JAX's ``x.at[idx]`` too); ``array_tracer`` gives a
traced value its ndarray operators and methods.
"""
from typing import TYPE_CHECKING, Any

import numpy as _onp

from . import counting as _counting
from . import elementwise as _elementwise
from . import functional as _functional
from . import einsum as _einsum
from . import indexing as _indexing
from . import joining as _joining
from . import layout as _layout
from . import polynomials as _polynomials
from . import products as _products
from . import ranges as _ranges
from . import reductions as _reductions
from . import selection as _selection
from . import statistics as _statistics
from .namespace import mirror as _mirror

_EXTRAS = ("at", "getitem", "index_add", "index_set", "index_multiply", "index_min", "index_max")

for _family in (_elementwise, _reductions, _statistics, _layout, _joining, _products, _einsum,
                _indexing, _selection, _ranges, _functional, _counting, _polynomials):
    for _name, _obj in vars(_family).items():
        if not _name.startswith("_") and (hasattr(_onp, _name) or _name in _EXTRAS) \
                and callable(_obj) and not isinstance(_obj, type):
            globals()[_name] = _obj

from .joining import c_, r_  # noqa: E402  (index objects, not functions)
from .functional import vectorize  # noqa: E402,F401  (a class, as numpy's)
from . import lib  # noqa: E402  (ours, before numpy's modules are copied)
from .namespace import LazySubmodule as _LazySubmodule  # noqa: E402

# numpy loads its fft and random modules on first use (random's extension modules are a sixth
# of numpy's own import time), and so does fgrad.numpy: the real module replaces each stand-in
# then (fft: 1 ms of fgrad's 20, its rules entering the table when first used). linalg as well,
# though numpy's own is loaded with numpy: its seven modules are 2 ms of fgrad's 20.
fft = _LazySubmodule("fgrad.numpy.fft", globals(), "fft")
linalg = _LazySubmodule("fgrad.numpy.linalg", globals(), "linalg")
random = _LazySubmodule("fgrad.numpy.random", globals(), "random")
polynomial = _LazySubmodule("fgrad.numpy.polynomial", globals(), "polynomial")
emath = _LazySubmodule("fgrad.numpy.lib.scimath", globals(), "emath")
_mirror(_onp, globals(), "")

if TYPE_CHECKING:  # numpy's other names are filled in above at import: to a type checker, Any
    def __getattr__(name: str) -> Any: ...

# a tracer's array surface (operators, ndarray methods): it calls this namespace's functions
from . import array_tracer as _array_tracer  # noqa: E402,F401
