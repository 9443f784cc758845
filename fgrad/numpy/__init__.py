"""``import fgrad.numpy as np``: numpy, with derivatives.

Every name of numpy is here. On plain arrays each function returns exactly what numpy returns
(it *is* numpy's function, or passes the call straight to it). Inside a transform, the
functions with rules take and return tracers; zero-derivative functions (``floor``,
``argmax``, comparisons, ...) return plain arrays; any other function raises
``NoDerivativeRuleError`` naming itself and showing how to add a rule.

The rules live in one module per family: ``elementwise``, ``reductions``, ``layout``,
``products``, ``indexing``. Beyond numpy's names this module has ``getitem``, ``index_add`` and
``index_set``, the primitives behind ``x[idx]`` and ``x.at[idx].add/set``.
"""
import sys as _sys

import numpy as _onp

from . import elementwise as _elementwise
from . import indexing as _indexing
from . import products as _products
from . import reductions as _reductions
from . import layout as _layout
from .namespace import mirror as _mirror
from .. import tracer as _tracer

_EXTRAS = ("getitem", "index_add", "index_set")

for _family in (_elementwise, _reductions, _layout, _products, _indexing):
    for _name, _obj in vars(_family).items():
        if not _name.startswith("_") and (hasattr(_onp, _name) or _name in _EXTRAS) \
                and callable(_obj) and not isinstance(_obj, type):
            globals()[_name] = _obj

from . import fft, linalg  # noqa: E402  (our mirrors, before numpy's modules are copied)

random = _onp.random
_mirror(_onp, globals(), "")

# The tracer's operators call into this module, which imports the tracer: link them now.
_tracer.fnp = _sys.modules[__name__]
