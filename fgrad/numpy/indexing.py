"""Indexing and functional updates: ``x[idx]`` and ``at(x)[idx].set/add/multiply/...``.

``getitem`` and ``index_add`` are each other's transposes, so the pair is closed under
differentiation to any order. ``index_add`` accumulates repeated integer indices
(``numpy.add.at``), which is what makes the VJP of ``x[[0, 0]]`` give 2.
The index is a static parameter: it may be an int, slice, Ellipsis, None, an integer or boolean
array (0-d arrays and lists included), or a tuple of these, with numpy's rules throughout
(advanced indices separated by a slice put their dimensions first). Tracers in it have no
derivative; a traced integer array (a batch of indices under ``vmap``, indices computed in a
staged function), alone or in a tuple of integers, integer arrays, slices and ``None``, is an
argument of ``gather`` (``x[np.arange(n), labels]``), and of an update's ``add_at``,
``scatter_add``, ``minimum_at`` or ``maximum_at`` (``.add``, ``.set``, ``.min``, ``.max``;
without slices but whole ones, without ``None``), so no trace reads its values; elsewhere (and
in ``.multiply``, which multiplies in rounds counted from the index's values) a tracer in an
index counts as its values.

``fgrad.numpy.at(x)[idx].add(v)`` works on plain arrays and traced values alike (a traced value
also has JAX's spelling ``x.at[idx].add(v)``; an ndarray has no ``.at``), so a loss written with
it runs under scipy.optimize as well as under ``grad``. With repeated indices:

* ``index_add`` accumulates (``numpy.add.at``);
* ``index_multiply`` multiplies by every value in turn, in index order (``numpy.multiply.at``,
  bit for bit); its derivatives follow the product rule and stay exact when values are zero;
* ``index_min``/``index_max`` keep the extreme of the old entry and all the values written to
  it (``numpy.minimum.at``/``maximum.at``); at a tie the candidates that attain it share the
  derivative evenly, the same convention as ``maximum`` and ``max``;
* ``index_set`` refuses them (which value would be kept is ambiguous), and so do ``.power``
  and ``.apply``, which are read, transformed and set.
"""
import math

import numpy as _onp

import fgrad.numpy as fnp
from . import batch_rules
from ..core import errors
from ..core.table import Spec, define
from ..core.other_arrays import as_array
from ..core.values import foreign_array
from ..core.tracer import Tracer, contains_tracer, without_derivative, value_dtype, read_values
from .namespace import values_only
from .broadcasting import dtype_of, shape_of, unbroadcast_like
from .wrapping import differentiable, inverse_permutation
from .views import view_of


def _may_repeat(idx):
    """Whether an index can name one element twice (it holds an integer array)."""
    for i in idx if isinstance(idx, tuple) else (idx,):
        if isinstance(i, (list, _onp.ndarray)) and _onp.asarray(i).dtype.kind in "iu":
            return True
    return False


def _updated(x, v):
    """A fresh copy of ``x`` in the dtype that can hold the update ``v`` too, in C order
    (a copy in ``x``'s layout would take numpy's pick where ``x`` is broadcast, and a staged
    replay keeps the eager layouts it can tell: ``fgrad.traces.layouts``)."""
    # (a list of values is the array numpy makes of it: result_type reads a list as a dtype)
    dtype = _onp.result_type(x, _onp.asarray(v) if isinstance(v, (list, tuple)) else v)
    if foreign_array(x):
        y = x.astype(dtype)
        # (Dask's astype to the same dtype is the array itself, and its setitem replaces
        # that object's graph: the update would change x, a value others read, in place)
        return x.copy() if y is x else y
    return _onp.array(x, dtype=dtype, order="C")


def _index_add(x, v, idx):
    y = _updated(x, v)
    if _may_repeat(idx):
        _onp.add.at(y, idx, v)
    else:
        y[idx] += v
    return y


def _index_set(x, v, idx):
    y = _updated(x, v)
    y[idx] = v
    return y


def _zeros(x, like):
    """Zeros of ``x``'s shape and ``like``'s dtype, in the library of whichever of them is
    another library's array (where scattering into numpy zeros would convert it)."""
    other = like if foreign_array(like) else x if foreign_array(x) else None
    if other is not None:
        return _onp.zeros_like(other, dtype_of(like), shape=shape_of(x))
    return _onp.zeros(shape_of(x), dtype_of(like))


# One case per index kind: int, negative int, stepped slices, Ellipsis and None, integer arrays
# with repeats and negative entries, a boolean mask, lists, a 0-d array, and advanced indices
# separated by a slice (numpy puts their dimensions first).
GETITEM_CASES = [
    (((4,),), {"idx": -1}),
    (((4,),), {"idx": slice(None, None, -2)}),
    (((2, 3),), {"idx": (Ellipsis, None, slice(2, 0, -1))}),
    (((4,),), {"idx": _onp.array([0, 0, 2, -1])}),
    (((2, 3),), {"idx": _onp.array([[True, False, True], [False, True, True]])}),
    (((2, 3),), {"idx": (_onp.array(1), [2, 0, 2])}),
    (((2, 3, 2),), {"idx": ([1, 1, 0], slice(None), [0, 0, 1])}),
    (((2, 3),), {"idx": (-2, slice(0, 3, 2))}),
]

def _getitem_vjp(g, ans, x, idx):
    """The cotangent scattered into zeros of ``x``'s shape. A plain cotangent (no derivative
    of this rule is being taken) goes into one fresh buffer: through ``index_add`` the zeros
    would be allocated, then copied again, then added to."""
    if isinstance(g, Tracer):
        return fnp.index_add(_zeros(x, g), g, idx)
    y = _zeros(x, g)
    if _may_repeat(idx):
        _onp.add.at(y, idx, g)
    else:
        y[idx] = g
    return y


getitem_p = define(
    "getitem", lambda x, idx: as_array(x)[idx],
    [_getitem_vjp],
    linear=True, operator="[]",  # (generated code writes numpy's indexing: graph._by_index)
    spec=Spec(GETITEM_CASES), batch=batch_rules.getitem)


def getitem(x, idx):
    """``x[idx]`` for every numpy index kind (repeated indices accumulate in the VJP)."""
    i = traced_index(idx)
    if i is not None:
        return gather_rows(x, i)
    if idx.__class__ is tuple and _holds_tracer(idx):
        x1, idx1 = _none_as_axis(x, idx) if any(e is None for e in idx) else (x, idx)
        parts = _traced_picks(x1, idx1)
        if parts is not None:
            return _gather(x1, *parts)
    return getitem_p(x, idx=read_values(idx))


def _holds_tracer(idx):
    for e in idx:
        if isinstance(e, Tracer):
            return True
    return False


def _none_as_axis(x, idx):
    """``x`` with a length-1 axis where the tuple index ``idx`` has a ``None``, and ``idx``
    with a full slice there: the same ``x[idx]``, numpy placing the indexed dimensions alike
    (a ``None`` separates advanced indices as a slice does), but the index one that
    ``_traced_picks`` takes. ``(x, idx)`` unchanged where ``idx`` has a boolean array or
    indexes too many axes (numpy's indexing then decides)."""
    shape = shape_of(x)
    ndim = len(shape)
    used = sum(1 for e in idx if e is not None and e is not Ellipsis)
    new, a = [], 0
    for e in idx:
        if e is None:
            new.append(1)
        elif e is Ellipsis:
            new += shape[a:a + ndim - used]
            a += ndim - used
        elif a >= ndim or isinstance(e, (list, _onp.ndarray)) and not contains_tracer(e) \
                and _onp.asarray(e).dtype.kind == "b":
            return x, idx
        else:
            new.append(shape[a])
            a += 1
    full = slice(None)
    return (fnp.reshape(x, tuple(new) + tuple(shape[a:])),
            tuple(full if e is None else e for e in idx))


def traced_index(idx):
    """An integer index array whose values a trace must see, not read (a batch of indices
    under ``vmap``, an index computed in a staged function), or None. Such an index is an
    argument of ``gather`` rather than a parameter, so no value is read."""
    if isinstance(idx, Tracer):
        v = without_derivative(idx)
        if isinstance(v, Tracer) and value_dtype(v).kind in "iu":
            return v
    return None


def _in_bounds(i, n):
    """Integer index values ``i`` on an axis of length ``n``, negative ones counted from the
    end, or numpy's IndexError for one out of bounds."""
    i = _onp.asarray(i)
    bad = (i >= n) | (i < -n)
    if bad.any():
        raise IndexError(f"index {i[bad].flat[0]} is out of bounds for axis with size {n}")
    return _onp.where(i < 0, i + n, i)


# (a primitive without derivative: staged, it checks each replay's indices; batched, the
# whole batch at once)
in_bounds = values_only(_in_bounds, "index_in_bounds", batch=batch_rules.elementwise)


def _traced_picks(x, idx):
    """For an index holding a traced integer array (a batch of labels under vmap,
    ``x[np.arange(n), labels]``; indices computed in a staged function): ``(picks, sliced)``,
    ``picks`` the integer index (plain or traced) of each indexed axis of ``x`` in order,
    ``sliced`` the index's slices, one per axis (full ones on the indexed axes), or None where
    none is sliced. None for an index without a traced integer array, or with ``None`` (which
    ``getitem`` makes a slice of a new axis first), a boolean array or a tracer of a float in
    it (then it is read as values)."""
    if idx.__class__ is not tuple:
        idx = (idx,)
    if not _holds_tracer(idx):
        return None
    ndim = len(shape_of(x))
    if any(e is Ellipsis for e in idx):
        k = next(n for n, e in enumerate(idx) if e is Ellipsis)  # (== would compare arrays)
        idx = idx[:k] + (slice(None),) * (ndim - len(idx) + 1) + idx[k + 1:]
    if len(idx) > ndim:
        return None
    entries = list(idx) + [slice(None)] * (ndim - len(idx))
    picks = {}
    for d, e in enumerate(entries):
        if isinstance(e, Tracer):
            e = picks[d] = traced_index(e)
            if e is None:
                return None
        elif e is None or e is Ellipsis:
            return None
        elif not isinstance(e, slice):
            if contains_tracer(e) or _onp.asarray(e).dtype.kind not in "iu":
                return None
            picks[d] = e
    full = slice(None)
    sliced = tuple(full if d in picks else e for d, e in enumerate(entries))
    return picks, (sliced if any(e != full for e in sliced) else None)


def _rows_of(shape, picks):
    """How ``picks`` index an array of ``shape`` as rows: ``(flat, order, nrows, kept)``, the
    picked entries' row-major positions among the indexed axes (checked against numpy's
    bounds, made non-negative), the axes indexed first, how many rows they make, and the
    shape of the axes kept."""
    flat = None
    for d, e in picks.items():
        e = in_bounds(e, n=shape[d])
        flat = e if flat is None else flat * shape[d] + e
    order = list(picks) + [d for d in range(len(shape)) if d not in picks]
    kept = tuple(shape[d] for d in order[len(picks):])
    return flat, order, math.prod(shape[d] for d in picks), kept


def _moved(axes, nb, ndim):
    """The permutation that moves the ``nb`` indexed dimensions, first, to where numpy puts
    them in ``x[idx]`` (where the indexed axes were, if adjacent), or None where they stay
    first."""
    if axes != list(range(axes[0], axes[-1] + 1)) or axes[0] == 0:
        return None  # (numpy puts the dimensions of indexed axes set apart first)
    before = axes[0]
    perm = tuple(range(nb, nb + before)) + tuple(range(nb)) + tuple(range(nb + before, ndim))
    return perm


def _row_index(i, tail):
    """Integer array ``i`` flattened, as the row index of every entry of ``(i.size,) + tail``
    (``gather``'s and ``scatter_add``'s indices, which have their operand's shape)."""
    m = math.prod(shape_of(i))
    rows = fnp.reshape(fnp.ravel(i), (m,) + (1,) * len(tail))
    return fnp.broadcast_to(rows, (m,) + tail)


def _gather(x, picks, sliced):
    """``x[idx]`` for ``_traced_picks``' parts of ``idx``: one ``gather`` of rows."""
    x = fnp.asarray(x)
    if sliced is not None:  # (plain slices first: they keep every axis, so the positions stay)
        x = getitem_p(x, idx=sliced)
    shape = shape_of(x)
    flat, order, nrows, kept = _rows_of(shape, picks)
    if order != sorted(order):
        x = fnp.transpose(x, order)
    out = gather_rows(fnp.reshape(x, (nrows,) + kept), flat)
    perm = _moved(list(picks), len(shape_of(out)) - len(kept), len(shape_of(out)))
    return out if perm is None else fnp.transpose(out, perm)


def _as_rows(x, v, picks):
    """``v`` broadcast to ``x[idx]`` (``_traced_picks``' parts of ``idx``, without slices) and
    laid out as rows of ``x``'s indexed axes, in numpy's dtype for writing it into ``x`` (a
    Python number takes ``x``'s kind): ``(rows, indices, order, kept)``, ``indices`` the row
    of every entry of ``rows``, ``order`` and ``kept`` as ``_rows_of`` gives them."""
    shape = shape_of(x)
    dtype = _onp.result_type(dtype_of(x), v if isinstance(v, (int, float, complex)) else
                             dtype_of(v))
    v = fnp.astype(v, dtype) if dtype_of(v) != dtype else v
    flat, order, nrows, kept = _rows_of(shape, picks)
    ib = shape_of(flat)
    # v laid out as x[idx] is, then as rows
    perm = _moved(list(picks), len(ib), len(ib) + len(kept))
    if perm is None:
        v = fnp.broadcast_to(v, ib + kept)
    else:
        v = fnp.transpose(fnp.broadcast_to(v, tuple((ib + kept)[p] for p in perm)),
                          inverse_permutation(perm))
    return fnp.reshape(v, (math.prod(ib),) + kept), _row_index(flat, kept), order, kept


def _from_rows(y, shape, picks, order, kept):
    """The rows ``y`` of the indexed axes ``picks`` back in ``x``'s layout (of ``shape``)."""
    y = fnp.reshape(y, tuple(shape[d] for d in picks) + kept)
    return y if order == sorted(order) else fnp.transpose(y, inverse_permutation(order))


def _scattered(x, v, picks):
    """An array of ``x``'s shape, zero but at ``x[idx]`` (``_traced_picks``' parts of ``idx``,
    without slices), where it holds ``v`` broadcast to that shape, repeats added: one
    ``scatter_add`` of rows, the transpose of ``_gather``."""
    shape = shape_of(x)
    rows, indices, order, kept = _as_rows(x, v, picks)
    n = math.prod(shape[d] for d in picks)
    return _from_rows(scatter_add_p(rows, indices, axis=0, n=n), shape, picks, order, kept)


def _updated_at(x, v, picks, prim):
    """``at(x)[idx].add(v)`` (``.min``, ``.max``) for ``_traced_picks``' parts of ``idx``,
    without slices: one ``prim`` (``add_at``, ``minimum_at``, ``maximum_at``) of rows, which
    writes the values in numpy's order (``numpy.add.at``, as the eager update does, so a
    staged replay equals it bit for bit where indices repeat)."""
    x = fnp.asarray(x)
    shape = shape_of(x)
    rows, indices, order, kept = _as_rows(x, v, picks)
    xr = x if order == sorted(order) else fnp.transpose(x, order)
    xr = fnp.reshape(xr, (math.prod(shape[d] for d in picks),) + kept)
    y = _from_rows(prim(xr, rows, indices, axis=0), shape, picks, order, kept)
    # (in the eager update's layout, C order as x's copy: a sum over the transposed view adds
    # in another order, and its last bits would differ. ravel copies; a traced
    # ascontiguousarray is no node, as traces keep no layout)
    return y if order == sorted(order) else fnp.reshape(fnp.ravel(y), shape)


def gather_rows(x, i):
    """``x[i]`` for an integer array ``i`` (traced: see ``traced_index``), by ``gather``
    along the first axis; repeated rows accumulate in the VJP (a scatter-add)."""
    x = fnp.asarray(x)
    tail = tuple(shape_of(x)[1:])
    out = gather_p(x, _row_index(i, tail), axis=0)
    return fnp.reshape(out, tuple(shape_of(i)) + tail)


index_add_p = define(
    "index_add", _index_add,
    [lambda g, ans, x, v, idx: g,
     lambda g, ans, x, v, idx: unbroadcast_like(fnp.getitem(g, idx), v)],
    [lambda t, ans, x, v, idx: t,
     lambda t, ans, x, v, idx: fnp.index_add(_zeros(x, t), t, idx)],
    spec=Spec([(((4,), (5,)), {"idx": _onp.array([0, 0, 2, 3, 3])}),
               (((2, 3), ()), {"idx": (slice(None), 1)}),
               (((2, 3), (3,)), {"idx": (_onp.array([1, 0, 1]), _onp.array([2, 2, 0]))}),
               (((2, 3, 2), (2, 3)), {"idx": ([1, 1], slice(None), [0, 0])})]),
                     batch=batch_rules.indexed_update)


def index_add(x, v, idx):
    """``x.at[idx].add(v)``: a new array with ``v`` added at ``idx`` (repeats accumulate)."""
    parts = _traced_picks(x, idx)
    if parts is not None and parts[1] is None:  # (a batch of indices, or staged ones)
        return _updated_at(x, v, parts[0], add_at_p)
    return index_add_p(x, v, idx=read_values(idx))


_REPEATED = ("x[idx] = v (or at(x)[idx].set(v), or x[idx] += v, which numpy runs as x[idx] = "
             "x[idx] + v): idx names some element more than once, so which value is kept (and "
             "so the derivative) is ambiguous, as numpy's documentation says; use unique "
             "indices, or np.add.at(x, idx, v) (at(x)[idx].add(v)) to add every value")


def _check_unique(x, idx):
    if _may_repeat(idx):
        hits = _onp.zeros(shape_of(x), int)
        _onp.add.at(hits, idx, 1)
        if hits.max(initial=0) > 1:
            raise ValueError(_REPEATED)


def _hit_once(counts):
    """Where ``counts`` (of writes per entry) is 1, or ``_REPEATED`` where one is more."""
    counts = _onp.asarray(counts)
    if (counts > 1).any():
        raise ValueError(_REPEATED)
    return counts > 0


# (no derivative: staged, it checks each replay's indices; batched, the whole batch at once)
hit_once = values_only(_hit_once, "index_hit_once", batch=batch_rules.elementwise)


index_set_p = define(
    "index_set", _index_set,
    [lambda g, ans, x, v, idx: fnp.index_set(g, 0.0, idx),
     lambda g, ans, x, v, idx: unbroadcast_like(fnp.getitem(g, idx), v)],
    [lambda t, ans, x, v, idx: fnp.index_set(t, 0.0, idx),
     lambda t, ans, x, v, idx: fnp.index_set(_zeros(x, t), t, idx)],
    spec=Spec([(((4,), (2,)), {"idx": _onp.array([1, 3])}),
               (((2, 3), ()), {"idx": (slice(None), 1)}),
               (((2, 3), (3,)), {"idx": 0}),
               (((2, 3), (2,)), {"idx": _onp.array([[True, False, False],
                                                     [False, True, False]])})]),
                     batch=batch_rules.indexed_update)


def index_set(x, v, idx):
    """``x.at[idx].set(v)``: a new array with ``v`` written at ``idx`` (repeats are an error)."""
    parts = _traced_picks(x, idx)
    if parts is not None and parts[1] is None:  # (a batch of indices, or staged ones)
        hit = hit_once(_scattered(x, 1.0, parts[0]))  # (counts, exact in floats)
        return fnp.where(hit, _scattered(x, v, parts[0]), x)
    idx = read_values(idx)
    _check_unique(x, idx)
    return index_set_p(x, v, idx=idx)


# --- multiply: one round per repeat, so the product rule and zeros need no special case -----

def _multiply_at(x, v, idx):
    """``x.at[idx].multiply(v)``: a new array with the entries at ``idx`` multiplied by ``v``;
    a repeated index multiplies by each of its values in turn (``numpy.multiply.at``).

    Derivatives follow the product rule and are exact where values are zero."""
    y = _updated(x, v)
    _onp.multiply.at(y, idx, v)
    return y


def _rounds(shape, idx):
    """Split the entries ``idx`` addresses (in numpy's order, the C order of ``x[idx]``) into
    rounds that name each element of ``x`` at most once: ``[(entries, flat positions)]``, the
    first occurrence of every element in the first round, the second in the second, ..."""
    pos = _onp.ravel(_onp.arange(int(_onp.prod(shape, dtype=int))).reshape(shape)[idx])
    order = _onp.argsort(pos, kind="stable")
    sorted_pos = pos[order]
    starts = _onp.r_[True, sorted_pos[1:] != sorted_pos[:-1]] if pos.size else pos.astype(bool)
    first = _onp.maximum.accumulate(_onp.where(starts, _onp.arange(pos.size), 0))
    rank = _onp.empty_like(pos)
    rank[order] = _onp.arange(pos.size) - first
    rounds = []
    for r in range(int(rank.max(initial=-1)) + 1):
        entries = _onp.flatnonzero(rank == r)
        rounds.append((entries, pos[entries]))
    return rounds


INDEX_UPDATE_CASES = [(((4,), (5,)), {"idx": _onp.array([0, 0, 2, 3, 3])}),
                      (((2, 3), ()), {"idx": (slice(None), 1)}),
                      (((2, 3), (3,)), {"idx": (_onp.array([1, 1, 1]), _onp.array([2, 0, 2]))})]


@differentiable(_multiply_at, Spec(INDEX_UPDATE_CASES), name="index_multiply")
def index_multiply(x, v, idx):
    x, v, idx = fnp.asarray(x), fnp.asarray(v), read_values(idx)
    shape = shape_of(x)
    dtype = _onp.result_type(dtype_of(x), dtype_of(v))
    # x's entries and v broadcast over the entries idx addresses, both flat
    values = fnp.ravel(fnp.broadcast_to(v, shape_of(_onp.empty(shape, bool)[idx])))
    y = fnp.ravel(fnp.astype(x, dtype) if dtype_of(x) != dtype else x)
    for entries, positions in _rounds(shape, idx):
        # multiplying the untouched entries by exactly 1 leaves them unchanged, bit for bit
        factor = fnp.index_set(_onp.ones(y.shape, dtype), fnp.getitem(values, entries), positions)
        y = y * factor
    return fnp.reshape(y, shape)


index_multiply.__name__ = index_multiply.__qualname__ = "index_multiply"


# --- min and max: piecewise linear, so the rules are fixed weights on the winners -------------

def _winner_weights_impl(a, xv, vv, idx, of):
    picked = a[idx]
    wins_v = _onp.broadcast_to(vv, _onp.shape(picked)) == picked
    wins_x = xv == a
    count = wins_x.astype(int)
    _onp.add.at(count, idx, wins_v)
    count = _onp.maximum(count, 1)  # only a NaN result has no winner; it gets no derivative
    if of == "x":
        return wins_x.astype(a.dtype) / count
    return wins_v.astype(a.dtype) / count[idx]


_winner_weights_p = values_only(_winner_weights_impl, "index_extreme_weights")


def _winner_weights(ans, x, v, idx):
    """d ans / d x and d ans / d v as weights (computed from the values, no derivative):
    1/count on the candidates (the old entry and the values written to it) that equal the
    result, 0 on the others. ``wv`` is shaped like ``x[idx]`` (``v`` broadcast)."""
    return (_winner_weights_p(ans, x, v, idx=idx, of="x"),
            _winner_weights_p(ans, x, v, idx=idx, of="v"))


def _extreme_at(name, ufunc, doc):
    def impl(x, v, idx):
        y = _updated(x, v)
        ufunc.at(y, idx, v)
        return y

    def vjp_x(g, ans, x, v, idx):
        return g * _winner_weights(ans, x, v, idx)[0]

    def vjp_v(g, ans, x, v, idx):
        return unbroadcast_like(fnp.getitem(g, idx) * _winner_weights(ans, x, v, idx)[1], v)

    def jvp_x(t, ans, x, v, idx):
        return t * _winner_weights(ans, x, v, idx)[0]

    def jvp_v(t, ans, x, v, idx):
        wv = _winner_weights(ans, x, v, idx)[1]
        return fnp.index_add(_zeros(ans, t), t * wv, idx)

    # few values per case: hypothesis draws ties often, and those draws are rejected
    return define(name, impl, [vjp_x, vjp_v], [jvp_x, jvp_v], doc=doc,
                  spec=Spec([(((3,), (3,)), {"idx": _onp.array([0, 0, 2])}),
                             (((2, 2), ()), {"idx": (slice(None), 1)}),
                             (((2, 2), (2,)), {"idx": (_onp.array([1, 1]), _onp.array([0, 0]))})],
                            valid=_no_near_ties),
                  batch=batch_rules.indexed_update)


def _no_near_ties(x, v):
    """Keep finite differences away from ties between candidates (the kink)."""
    allv = _onp.sort(_onp.concatenate([_onp.ravel(x), _onp.ravel(v)]))
    return allv.size < 2 or _onp.min(_onp.diff(allv)) > 0.01


index_min_p = _extreme_at(
    "index_min", _onp.minimum,
    "``x.at[idx].min(v)``: each entry at ``idx`` replaced by the minimum of itself and the "
    "values written to it (``numpy.minimum.at``); tied candidates share the derivative evenly.")
index_max_p = _extreme_at(
    "index_max", _onp.maximum,
    "``x.at[idx].max(v)``: each entry at ``idx`` replaced by the maximum of itself and the "
    "values written to it (``numpy.maximum.at``); tied candidates share the derivative evenly.")


def index_min(x, v, idx):
    """``x.at[idx].min(v)``: a new array, each entry at ``idx`` the minimum of itself and the
    values written to it (repeats included). At a tie the candidates that attain the minimum
    share the derivative evenly (as in ``minimum`` and ``min``)."""
    parts = _traced_picks(x, idx)
    if parts is not None and parts[1] is None:  # (a batch of indices, or staged ones)
        return _updated_at(x, v, parts[0], minimum_at_p)
    return index_min_p(x, v, idx=read_values(idx))


def index_max(x, v, idx):
    """``x.at[idx].max(v)``: a new array, each entry at ``idx`` the maximum of itself and the
    values written to it (repeats included). At a tie the candidates that attain the maximum
    share the derivative evenly (as in ``maximum`` and ``max``)."""
    parts = _traced_picks(x, idx)
    if parts is not None and parts[1] is None:  # (a batch of indices, or staged ones)
        return _updated_at(x, v, parts[0], maximum_at_p)
    return index_max_p(x, v, idx=read_values(idx))


# --- at(x)[idx]: the functional updates, on plain and traced arrays alike --------------------

def at(x):
    """``at(x)[idx].set(v)`` and its siblings: JAX's ``x.at[idx]`` functional updates, each
    returning a new array (``x`` is never changed), for plain numpy arrays and traced values
    alike, with derivatives in ``x`` and ``v``. The operations: ``get()``, ``set(v)``,
    ``add(v)``, ``multiply(v)``, ``divide(v)``, ``power(v)``, ``min(v)``, ``max(v)`` and
    ``apply(f)`` (``f`` an elementwise function, written with fgrad.numpy).

    >>> import fgrad, fgrad.numpy as np
    >>> np.at(np.zeros(3))[1].set(5.0).tolist()          # a plain array in, a plain array out
    [0.0, 5.0, 0.0]
    >>> f = lambda w: np.sum(np.at(np.ones(3))[np.array([0, 0, 2])].add(w) ** 2)
    >>> fgrad.grad(f)(np.array([1.0, 2.0, 3.0])).tolist()   # index 0 gets both w[0] and w[1]
    [8.0, 8.0, 8.0]
    """
    return _At(x)


class _At:
    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtIndex(self.x, idx)

    def __repr__(self):
        return "<at(x): index it, then .set(v), .add(v), .get() ...>"


class _AtIndex:
    """``at(x)[idx]`` waiting for its operation. With a repeated index, ``add`` accumulates,
    ``multiply`` multiplies by every value and ``divide`` divides by every value, ``min``/``max``
    take the extreme of all (tied candidates share the derivative evenly), and ``set``,
    ``power`` and ``apply`` raise ``ValueError``."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self):
        """``x[idx]``."""
        return getitem(self.x, self.idx)

    def set(self, value):
        """A copy of ``x`` with ``value`` written at ``idx``."""
        return index_set(self.x, value, self.idx)

    def add(self, value):
        """A copy of ``x`` with ``value`` added at ``idx`` (repeats accumulate)."""
        return index_add(self.x, value, self.idx)

    def multiply(self, value):
        """A copy of ``x`` with the entries at ``idx`` multiplied by ``value``."""
        return index_multiply(self.x, value, self.idx)

    def divide(self, value):
        """A copy of ``x`` with the entries at ``idx`` divided by ``value`` (true division, as
        ``x[idx] /= value`` on a float array; a repeated index divides by each value)."""
        x = fnp.asarray(self.x)
        dtype = _onp.result_type(dtype_of(x), dtype_of(value), _onp.float16)
        return fnp.divide(x, index_multiply(_onp.ones(shape_of(x), dtype), value, self.idx))

    def power(self, value):
        """A copy of ``x`` with the entries at ``idx`` raised to ``value``."""
        return self.apply(lambda e: fnp.power(e, value))

    def min(self, value):
        """A copy of ``x`` with each entry at ``idx`` the minimum of itself and ``value``."""
        return index_min(self.x, value, self.idx)

    def max(self, value):
        """A copy of ``x`` with each entry at ``idx`` the maximum of itself and ``value``."""
        return index_max(self.x, value, self.idx)

    def apply(self, func):
        """A copy of ``x`` with ``func`` applied to the entries at ``idx``: ``func`` is called
        once, on ``x[idx]``, and must return an array of that shape."""
        return index_set(self.x, func(getitem(self.x, self.idx)), self.idx)


def along_axis_index(shape, indices, axis):
    """The full fancy index ``take_along_axis`` reads: ``indices`` on ``axis``, the position
    itself on every other axis."""
    ndim = len(shape)
    if indices.ndim != ndim:
        raise ValueError("`indices` and `arr` must have the same number of dimensions")
    idx = []
    for d in range(ndim):
        if d == axis:
            idx.append(indices)
        else:
            ones = [1] * ndim
            ones[d] = shape[d]
            idx.append(_onp.arange(shape[d]).reshape(ones))
    return tuple(idx)


# gather and scatter_add: take_along_axis and its transpose, with the indices an argument (no
# derivative) rather than a parameter, so that they may be a batch (an argsort under vmap) or
# computed in a staged graph; sort and partition pick by them when their orders are traced
def _scatter_add_impl(g, indices, axis, n):
    shape = list(_onp.shape(g))
    shape[axis] = n
    out = _onp.zeros(shape, _onp.result_type(g))
    _onp.add.at(out, along_axis_index(_onp.shape(g), _onp.asarray(indices), axis), g)
    return out


gather_p = define(
    "gather", lambda x, indices, axis: _onp.take_along_axis(x, indices, axis),
    [lambda g, ans, x, indices, axis: scatter_add_p(g, indices, axis=axis,
                                                    n=shape_of(x)[axis]), None],
    linear=True,
    spec=Spec([(((4,),), {"indices": _onp.array([3, 0, 0, 2]), "axis": 0}),
               (((2, 3),), {"indices": _onp.array([[2, 1], [0, 0]]), "axis": 1})],
              call=lambda fn, x, indices, axis: fn(x, indices, axis=axis)),
    batch=batch_rules.along_axis_of_first)
scatter_add_p = define(
    "scatter_add", _scatter_add_impl,
    [lambda g, ans, x, indices, axis, n: gather_p(g, indices, axis=axis), None],
    linear=True,
    spec=Spec([(((4,),), {"indices": _onp.array([3, 0, 0, 2]), "axis": 0, "n": 5}),
               (((2, 2),), {"indices": _onp.array([[2, 1], [0, 0]]), "axis": 1, "n": 3})],
              call=lambda fn, x, indices, axis, n: fn(x, indices, axis=axis, n=n)),
    batch=batch_rules.along_axis_of_first)


def _add_at_impl(x, v, indices, axis):
    y = _updated(x, v)
    _onp.add.at(y, along_axis_index(_onp.shape(v), _onp.asarray(indices), axis), v)
    return y


# x with scatter_add's values added in (numpy.add.at of a copy): the update of a staged or
# batched index, which adds in numpy's order as the eager update does
add_at_p = define(
    "add_at", _add_at_impl,
    [lambda g, ans, x, v, indices, axis: g,
     lambda g, ans, x, v, indices, axis: gather_p(g, indices, axis=axis), None],
    [lambda t, ans, x, v, indices, axis: t,
     lambda t, ans, x, v, indices, axis: scatter_add_p(t, indices, axis=axis,
                                                       n=shape_of(x)[axis]), None],
    spec=Spec([(((4,), (4,)), {"indices": _onp.array([3, 0, 0, 2]), "axis": 0}),
               (((2, 3), (2, 2)), {"indices": _onp.array([[2, 1], [0, 0]]), "axis": 1})],
              call=lambda fn, x, v, indices, axis: fn(x, v, indices, axis=axis)),
    batch=batch_rules.along_axis_of_first)


# minimum.at and maximum.at of a copy along an axis, the updates of a staged or batched index:
# weights on the winners as index_min/index_max have them, the index an argument
def _extreme_rows_weights(ans, x, v, indices, axis, of):
    idx = along_axis_index(_onp.shape(v), _onp.asarray(indices), axis)
    return _winner_weights_impl(ans, x, v, idx, of)


_extreme_rows_weights_p = values_only(_extreme_rows_weights, "extreme_at_weights",
                                      batch=batch_rules.along_axis_of_first)


def _extreme_rows(name, ufunc):
    def impl(x, v, indices, axis):
        y = _updated(x, v)
        ufunc.at(y, along_axis_index(_onp.shape(v), _onp.asarray(indices), axis), v)
        return y

    def weight(ans, x, v, indices, axis, of):
        return _extreme_rows_weights_p(ans, x, v, indices, axis=axis, of=of)

    def vjp_v(g, ans, x, v, indices, axis):
        return gather_p(g, indices, axis=axis) * weight(ans, x, v, indices, axis, "v")

    def jvp_v(t, ans, x, v, indices, axis):
        return scatter_add_p(t * weight(ans, x, v, indices, axis, "v"), indices, axis=axis,
                             n=shape_of(x)[axis])

    return define(
        name, impl,
        [lambda g, ans, x, v, indices, axis: g * weight(ans, x, v, indices, axis, "x"),
         vjp_v, None],
        [lambda t, ans, x, v, indices, axis: t * weight(ans, x, v, indices, axis, "x"),
         jvp_v, None],
        spec=Spec([(((3,), (3,)), {"indices": _onp.array([0, 0, 2]), "axis": 0}),
                   (((2, 3), (2, 2)), {"indices": _onp.array([[2, 1], [0, 0]]), "axis": 1})],
                  call=lambda fn, x, v, indices, axis: fn(x, v, indices, axis=axis),
                  valid=_no_near_ties),
        batch=batch_rules.along_axis_of_first)


minimum_at_p = _extreme_rows("minimum_at", _onp.minimum)
maximum_at_p = _extreme_rows("maximum_at", _onp.maximum)


# --- numpy.lib.stride_tricks.sliding_window_view: a gather by fixed positions ----------------

@differentiable(_onp.lib.stride_tricks.sliding_window_view,
                Spec([(((5,),), {"window_shape": 3}),
                      (((4, 5),), {"window_shape": (2, 3)}),
                      (((3, 4),), {"window_shape": 2, "axis": 0})],
                     call=lambda fn, x, window_shape, axis=None: fn(x, window_shape, axis)),
                name="lib.stride_tricks.sliding_window_view")
def sliding_window_view(x, window_shape, axis=None, *, subok=False, writeable=False):
    """numpy's windows of ``x`` (the im2col of a convolution): on a traced ``x`` a gather of
    its entries by their positions, whose derivative adds each window's cotangent back (a
    copy, where numpy gives a read-only view: a view here too, so a write into it while ``x``
    is still read raises)."""
    if writeable:
        raise errors.mutation("sliding_window_view(x, ..., writeable=True)",
                              "the windows read only, and np.at(x)[idx] for an update")
    x = fnp.asarray(x)
    shape = shape_of(x)
    # (numpy's own windows of the positions: its checks, its axis and window order)
    where = _onp.lib.stride_tricks.sliding_window_view(
        _onp.arange(math.prod(shape)).reshape(shape), window_shape, axis)
    return view_of(getitem_p(fnp.reshape(x, (-1,)), idx=_onp.ascontiguousarray(where)), x)
