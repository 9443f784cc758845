"""``fgrad.numpy.random``: numpy.random's functions, which a staged function draws anew.

Eagerly each function *is* numpy's draw from numpy's global random state, so a seed gives the
same numbers with ``fgrad.numpy`` as with ``numpy``. While a staged function is traced
(``jit``, ``make_graph``), a draw is recorded as a node that draws again at every replay, in
the order of the eager call. The rest of numpy.random (``seed``, ``get_state``, the
``Generator`` and ``RandomState`` classes, ``default_rng``) is numpy's own object: a
``Generator``'s draws inside a staged function are constants of the trace.

>>> import numpy, fgrad.numpy as np
>>> np.random.seed(0); a = np.random.normal(size=2)
>>> numpy.random.seed(0); bool((a == numpy.random.normal(size=2)).all())
True
"""
import functools

import numpy as _onp

from ..table import Primitive
from ..tracer import STAGING, ambient, first_tracer

# not draws: state, seeding and in-place shuffling (which a node could not record) run as they
# are, while tracing only
_AS_THEY_ARE = {"seed", "get_state", "set_state", "get_bit_generator", "set_bit_generator",
                "shuffle", "default_rng", "test"}


def _recorded(name, fn):
    """numpy's ``fn``, recorded by a staging trace running in this thread."""
    prim = Primitive(f"random.{name}", fn)
    prim.effect = True  # a replay draws, in order: graph passes never drop or merge it

    @functools.wraps(fn)
    def draw(*args, **kwargs):
        if STAGING:
            top = ambient()
            if top is not None:
                t = first_tracer((args, kwargs))
                if t is None or t._trace is top:
                    return top.process(prim, args, kwargs)
        return fn(*args, **kwargs)

    return draw


def _fill(namespace):
    for name in dir(_onp.random):
        if name.startswith("_"):
            continue
        obj = getattr(_onp.random, name)
        if callable(obj) and not isinstance(obj, type) and name not in _AS_THEY_ARE:
            obj = _recorded(name, obj)
        namespace[name] = obj


_fill(globals())
