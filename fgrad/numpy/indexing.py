"""Indexing and functional updates: ``x[idx]``, ``x.at[idx].add(v)``, ``x.at[idx].set(v)``.

``getitem`` and ``index_add`` are each other's transposes, so the pair is closed under
differentiation to any order. ``index_add`` accumulates repeated integer indices
(``numpy.add.at``), which is what makes the VJP of ``x[[0, 0]]`` give 2.
The index is a static parameter: it may be an int, slice, Ellipsis, None, an integer or boolean
array, or a tuple of these (tracers in it count as their values, with no derivative).
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define
from ..tracer import strip
from .broadcasting import dtype_of, shape_of, unbroadcast


def _may_repeat(idx):
    """Whether an index can name one element twice (it holds an integer array)."""
    for i in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(i, (list, _onp.ndarray)) and _onp.asarray(i).dtype.kind in "iu":
            return True
    return False


def _index_add(x, v, idx):
    y = _onp.array(x, dtype=_onp.result_type(x, v))
    if _may_repeat(idx):
        _onp.add.at(y, idx, v)
    else:
        y[idx] += v
    return y


def _index_set(x, v, idx):
    y = _onp.array(x, dtype=_onp.result_type(x, v))
    y[idx] = v
    return y


def _zeros(x, like):
    return _onp.zeros(shape_of(x), dtype_of(like))


getitem_p = define(
    "getitem", lambda x, idx: _onp.asarray(x)[idx],
    [lambda g, ans, x, idx: fnp.index_add(_zeros(x, g), g, idx)],
    linear=True,
    spec=Spec([(((4,),), {"idx": 1}), (((4,),), {"idx": slice(1, 3)}),
               (((2, 3),), {"idx": (slice(None), 1)}),
               (((2, 3),), {"idx": (Ellipsis, None, slice(None, None, -1))}),
               (((4,),), {"idx": _onp.array([0, 0, 2, 3, 3])}),
               (((2, 3),), {"idx": (_onp.array([1, 0, 1]), _onp.array([2, 2, 0]))}),
               (((2, 3),), {"idx": _onp.array([[True, False, True], [False, True, True]])})]))


def getitem(x, idx):
    """``x[idx]`` for every numpy index kind."""
    return getitem_p(x, idx=strip(idx))


index_add_p = define(
    "index_add", _index_add,
    [lambda g, ans, x, v, idx: g,
     lambda g, ans, x, v, idx: unbroadcast(fnp.getitem(g, idx), shape_of(v))],
    [lambda t, ans, x, v, idx: t,
     lambda t, ans, x, v, idx: fnp.index_add(_zeros(x, t), t, idx)],
    spec=Spec([(((4,), (5,)), {"idx": _onp.array([0, 0, 2, 3, 3])}),
               (((2, 3), ()), {"idx": (slice(None), 1)}),
               (((2, 3), (3,)), {"idx": (_onp.array([1, 0, 1]), _onp.array([2, 2, 0]))})]))


def index_add(x, v, idx):
    """``x.at[idx].add(v)``: a new array with ``v`` added at ``idx`` (repeats accumulate)."""
    return index_add_p(x, v, idx=strip(idx))


def _check_unique(x, idx):
    if _may_repeat(idx):
        hits = _onp.zeros(shape_of(x), int)
        _onp.add.at(hits, idx, 1)
        if hits.max(initial=0) > 1:
            raise ValueError("x.at[idx].set(v): idx names some element more than once, so which "
                             "value is kept (and so the derivative) is ambiguous; use unique "
                             "indices, or .add")


index_set_p = define(
    "index_set", _index_set,
    [lambda g, ans, x, v, idx: fnp.index_set(g, 0.0, idx),
     lambda g, ans, x, v, idx: unbroadcast(fnp.getitem(g, idx), shape_of(v))],
    [lambda t, ans, x, v, idx: fnp.index_set(t, 0.0, idx),
     lambda t, ans, x, v, idx: fnp.index_set(_zeros(x, t), t, idx)],
    spec=Spec([(((4,), (2,)), {"idx": _onp.array([1, 3])}),
               (((2, 3), ()), {"idx": (slice(None), 1)}),
               (((2, 3), (3,)), {"idx": 0})]))


def index_set(x, v, idx):
    """``x.at[idx].set(v)``: a new array with ``v`` written at ``idx``."""
    idx = strip(idx)
    _check_unique(x, idx)
    return index_set_p(x, v, idx=idx)
