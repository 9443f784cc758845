"""``fgrad.numpy.random``: numpy.random's functions, which a staged function draws anew and
``vmap`` draws per example.

Eagerly each function *is* numpy's draw from numpy's global random state, so a seed gives the
same numbers with ``fgrad.numpy`` as with ``numpy``. While a staged function is traced
(``jit``, ``make_graph``), a draw is recorded as a node that draws again at every replay, in
the order of the eager call. Inside ``vmap`` a draw is made once per example, in the
examples' order (each with that example's arguments), so the batch's draws are distributed
as a loop's: ``vmap(f)(xs)`` with one draw in ``f`` equals the loop after the same seed;
with several draws the loop interleaves them by example and ``vmap`` by draw, so the numbers
differ while their distribution does not. The rest of numpy.random (``seed``,
``get_state``, the ``Generator`` and ``RandomState`` classes, ``default_rng``) is numpy's own
object: a ``Generator``'s draws inside a staged function are constants of the trace, and
inside ``vmap`` one draw shared by every example.

>>> import numpy, fgrad.numpy as np
>>> np.random.seed(0); a = np.random.normal(size=2)
>>> numpy.random.seed(0); bool((a == numpy.random.normal(size=2)).all())
True
"""
import functools

import numpy as _onp

from ..core.table import Primitive
from ..core import errors
from ..core.tracer import STAGING, ambient, batches, first_tracer

# not draws: state, seeding and in-place shuffling (which a node could not record) run as they
# are, while tracing only
_AS_THEY_ARE = {"seed", "get_state", "set_state", "get_bit_generator", "set_bit_generator",
                "shuffle", "default_rng", "test"}


def _recorded(name, fn):
    """numpy's ``fn``, recorded by a staging trace running in this thread."""
    def staged_draw(args, kwargs):
        t = first_tracer((args, kwargs))
        if STAGING:
            top = ambient()
            if top is not None and (t is None or t._trace is top):
                return top.process(prim, args, kwargs)
        if t is not None:
            raise errors.random_of_traced(name)
        return fn(*args, **kwargs)

    @functools.wraps(fn)
    def draw(*args, **kwargs):
        traces = batches()
        if traces and STAGING:  # (a staged function traced inside vmap is one example's)
            top = ambient()
            if top is not None:
                traces = [t for t in traces if t.level > top.level]
        if traces:
            return _per_example(staged_draw, args, kwargs, traces)
        return staged_draw(args, kwargs)

    # a replay draws, in order: graph passes never drop or merge it (``effect``); a graph run
    # inside vmap draws per example too (``interpret``)
    prim = Primitive(f"random.{name}", fn, effect=True, interpret=draw)
    return draw


def _per_example(draw, args, kwargs, traces):
    """One draw per example of the innermost batching trace (each with its example's
    arguments), as one batched value; outer batches the same way, recursively."""
    if not traces:
        return draw(args, kwargs)
    return traces[-1].each_example(lambda a, k: _per_example(draw, a, k, traces[:-1]),
                                   args, kwargs)


def _fill(namespace):
    for name in dir(_onp.random):
        if name.startswith("_"):
            continue
        obj = getattr(_onp.random, name)
        if callable(obj) and not isinstance(obj, type) and name not in _AS_THEY_ARE:
            obj = _recorded(name, obj)
        namespace[name] = obj


_fill(globals())
