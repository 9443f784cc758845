"""Selecting and reordering entries: take, compress, sort, flip, roll, diagonals, triangles.

Every function here moves entries without changing them, so each is built from ``getitem``
(and ``index_set``, ``concatenate``, ``where`` for the few that also write zeros): the index is
computed from the values' *positions* (and, for ``sort``/``partition``/``unique``, from the
values themselves, as a constant), so derivatives of every order are exact and repeated
indices accumulate in reverse mode.

Ties are the one edge case. ``sort`` and ``partition`` give each output entry the derivative of
the input entry numpy's stable sort puts there (tied entries keep their order); ``unique``
gives each output entry the mean of the derivatives of the input entries equal to it.

In-place functions (``put``, ``place``, ``putmask``, ``copyto``, ``fill_diagonal``,
``put_along_axis``) write a traced array as numpy writes it (``views.write_whole``); a plain
array given traced values raises ``TracerMutationError``, naming the functional form.
"""
import functools

import numpy as _onp
try:
    from numpy.lib.array_utils import normalize_axis_index, normalize_axis_tuple
except ImportError:  # numpy < 2
    from numpy.core.numeric import normalize_axis_index, normalize_axis_tuple

import fgrad.numpy as fnp
from ..core import errors
from . import batch_rules
from ..core.table import Spec, define
from ..core.tracer import Tracer, without_derivative, contains_tracer, read_value, read_values
from .broadcasting import dtype_of, shape_of
from .indexing import along_axis_index, gather_p, gather_rows, traced_index
from .namespace import values_only, zero_derivative
from . import views
from .views import copied, view_of
from .wrapping import differentiable, inverse_permutation, unsupported_kwargs, with_numpy_values


def _ndim(x):
    return len(shape_of(x))


def _values(x):
    return _onp.asarray(read_value(x))


def _distinct(*xs):
    """Keep finite differences away from ties (where the order of entries changes)."""
    v = _onp.sort(_onp.concatenate([_onp.ravel(_onp.real(x)) for x in xs]))
    return v.size < 2 or _onp.min(_onp.diff(v)) > 0.01


def _on_axis(axis, index):
    """A full index applying ``index`` along ``axis`` (full slices elsewhere)."""
    return (slice(None),) * axis + (index,)


# --- take and friends -------------------------------------------------------------------------

def _take_indices(indices, n, mode):
    ind = _onp.asarray(read_values(indices))
    if ind.size == 0:
        ind = ind.astype(_onp.intp)
    if mode == "wrap":
        return ind % n if n else ind
    if mode == "clip":
        return _onp.clip(ind, 0, max(n - 1, 0))
    if mode != "raise":
        raise ValueError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return ind


# numpy.take lays its result out in C order, where x[:, ind] would not: a primitive of its own
# keeps the layout (and so the rounding of any later reduction) numpy's.
take_p = define(
    "take", lambda x, indices, axis: _onp.take(x, indices, axis=axis),
    [lambda g, ans, x, indices, axis: fnp.index_add(_onp.zeros(shape_of(x), dtype_of(g)), g,
                                                    _on_axis(axis, indices))],
    linear=True,
    spec=Spec([(((4,),), {"indices": _onp.array([0, 3, 3, -1]), "axis": 0}),
               (((2, 3),), {"indices": _onp.array([[0, 2], [2, 2]]), "axis": 1})]),
                batch=batch_rules.along(none="flatten"))


@differentiable(_onp.take, Spec([
    (((4,),), {"indices": _onp.array([0, 3, 3, -1])}),
    (((2, 3),), {"indices": _onp.array([[0, 2], [2, 2]]), "axis": 1}),
    (((2, 3),), {"indices": [3, -1, 2], "axis": -2, "mode": "wrap"}),
    (((3,),), {"indices": 5, "axis": 0, "mode": "clip"})]))
def take(a, indices, axis=None, out=None, mode="raise"):
    unsupported_kwargs("take", {"out": out})
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), 0
    axis = normalize_axis_index(int(axis), _ndim(a))
    i = traced_index(indices)
    if i is not None:  # (a batch of indices, or staged ones: gathered, no value read)
        n = shape_of(a)[axis]
        if mode == "wrap":
            i = fnp.mod(i, n)
        elif mode == "clip":
            i = fnp.clip(i, 0, n - 1)
        out = gather_rows(fnp.moveaxis(a, axis, 0), i)
        k = len(shape_of(i))
        return out if axis == 0 else fnp.transpose(
            out, tuple(range(k, k + axis)) + tuple(range(k)) +
            tuple(range(k + axis, len(shape_of(out)))))
    return take_p(a, indices=_take_indices(indices, shape_of(a)[axis], mode), axis=axis)


@differentiable(_onp.take_along_axis, Spec([
    (((2, 3),), {"indices": _onp.array([[0, 0, 2], [1, 2, 1]]), "axis": 1}),
    (((2, 3),), {"indices": _onp.array([[1, 0, 1]]), "axis": -2}),
    (((4,),), {"indices": _onp.array([3, 3, 0]), "axis": None})]))
def take_along_axis(arr, indices, axis=-1):
    arr = fnp.asarray(arr)
    indices = without_derivative(indices)  # (indices have none)
    traced = isinstance(indices, Tracer)
    if not traced:
        indices = _onp.asarray(read_values(indices))
    if not _onp.issubdtype(dtype_of(indices), _onp.integer):
        raise IndexError("`indices` must be an integer array")
    if axis is None:
        arr, axis = fnp.ravel(arr), 0
    axis = normalize_axis_index(int(axis), _ndim(arr))
    if traced:  # (a batch of orders under vmap, or computed in a staged graph: ``gather``
        # takes them as an argument, which no trace reads; JAX batches it so too)
        if len(shape_of(indices)) != _ndim(arr):
            raise ValueError("`indices` and `arr` must have the same number of dimensions")
        return gather_p(arr, indices, axis=axis)
    return fnp.getitem(arr, along_axis_index(shape_of(arr), indices, axis))


@differentiable(_onp.compress, Spec([
    (((2, 3),), {"condition": [True, False, True], "axis": 1}),
    (((2, 2),), {"condition": [False, True, True], "axis": None})],
    call=lambda f, a, condition, **p: f(condition, a, **p)))
def compress(condition, a, axis=None, out=None):
    unsupported_kwargs("compress", {"out": out})
    if contains_tracer(condition) and not contains_tracer(a):
        # a condition has no derivative, so a traced one almost surely comes from the method
        # x.compress(condition), which reaches here with its arguments swapped
        raise TypeError(
            "fgrad.numpy.compress: the condition is a traced value and the array is not. If this "
            "is x.compress(condition) on a traced x, write np.compress(condition, x) instead "
            "(the method form is not supported on traced values); a traced condition has no "
            "derivative, so pass fgrad.stop_gradient(condition) if it is meant.")
    condition = _onp.asarray(read_values(condition))
    if condition.ndim != 1:
        raise ValueError("condition must be a 1-d array")
    return take(a, _onp.flatnonzero(condition), axis=axis)


@differentiable(_onp.extract, Spec([
    (((2, 3),), {"condition": _onp.array([[True, False, True], [False, False, True]])}),
    (((4,),), {"condition": _onp.array([0, 2, 0, 1])})],
    call=lambda f, a, condition: f(condition, a)))
def extract(condition, arr):
    return take(fnp.ravel(arr), _onp.flatnonzero(read_values(condition)))


def _choose_call(f, *choices, a, **params):
    return f(a, list(choices), **params)


@differentiable(_onp.choose, Spec([
    (((4,), (4,), (4,)), {"a": _onp.array([0, 1, 2, 1])}),
    (((2, 3), (3,)), {"a": _onp.array([[1], [0]])}),
    (((3,), (3,)), {"a": _onp.array([3, -1, 0]), "mode": "wrap"}),
    (((2,), ()), {"a": _onp.array([5, -2]), "mode": "clip"})], call=_choose_call))
def choose(a, choices, out=None, mode="raise"):
    """A traced ``a`` (a batch of choices under vmap, choices staged by jit) is gathered by,
    and checked at each replay: no value is read."""
    unsupported_kwargs("choose", {"out": out})
    choices = [fnp.asarray(c) for c in choices]
    n = len(choices)
    a = without_derivative(a)
    if isinstance(a, Tracer):
        if mode not in ("raise", "wrap", "clip"):
            _take_indices(_onp.zeros(0, int), n, mode)  # (numpy's error for the mode)
        a = _valid_choices(a, n=n) if mode == "raise" else \
            a % n if mode == "wrap" else fnp.clip(a, 0, max(n - 1, 0))
    else:
        a = _onp.asarray(read_values(a))
        if mode == "raise":
            _valid_choices(a, n=n)
        else:
            a = _take_indices(a, n, mode)
    shape = _onp.broadcast_shapes(shape_of(a), *[shape_of(c) for c in choices])
    stacked = fnp.stack([fnp.broadcast_to(c, shape) for c in choices])
    return fnp.getitem(fnp.take_along_axis(stacked, fnp.broadcast_to(a, shape)[None], 0), 0)


def _check_choices(a, n):
    a = _onp.asarray(a)
    if a.size and (a.min() < 0 or a.max() >= n):
        raise ValueError("invalid entry in choice array")
    return a


# (without derivative: staged, it checks each replay's choices; batched, the whole batch)
_valid_choices = values_only(_check_choices, "choose_in_range", batch=batch_rules.elementwise)


# --- sorting ----------------------------------------------------------------------------------

SORT_DOC = """
fgrad: each output entry has the derivative of the input entry that numpy's stable sort
(``kind="stable"``) puts there, whatever ``kind`` is asked for: entries that tie keep their
order, so the first of them in the input takes the first place among them. (``max`` and
``maximum`` share a tie evenly instead; at a tie ``sort(x)[-1]`` and ``max(x)`` differ.)
``order=`` (structured arrays) is not supported on traced values.
"""


def _sort_spec(cases, **kw):
    return Spec(cases, valid=_distinct, **kw)


@differentiable(_onp.sort, _sort_spec([
    (((4,),), {}), (((2, 3),), {"axis": 0}), (((2, 3),), {"axis": None}),
    (((2, 2, 3),), {"axis": -2, "kind": "stable"})]), numpy_values=True)
def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    unsupported_kwargs("sort", {"order": order})
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), -1
    return take_along_axis(a, fnp.argsort(without_derivative(a), axis=axis, kind="stable"), axis)


sort.__doc__ = (sort.__doc__ or "") + SORT_DOC


def _matching(a, y, axis):
    """The permutation ``p`` along ``axis`` with ``take_along_axis(a, p) == y``, for ``y`` a
    rearrangement of ``a``: the r-th smallest entry of ``y`` comes from the r-th smallest of
    ``a``, both ranked by the stable sort (so tied entries are matched in order)."""
    src = _onp.argsort(a, axis=axis, kind="stable")
    dst = _onp.argsort(y, axis=axis, kind="stable")
    perm = _onp.empty_like(src)
    _onp.put_along_axis(perm, dst, src, axis)
    return perm


@differentiable(_onp.partition, _sort_spec([
    (((4,),), {"kth": 1}), (((2, 4),), {"kth": (0, 2)}), (((3, 2),), {"kth": -1, "axis": 0}),
    (((2, 2),), {"kth": 2, "axis": None})]), numpy_values=True)
def partition(a, kth, axis=-1, kind="introselect", order=None):
    unsupported_kwargs("partition", {"order": order})
    a = fnp.asarray(a)
    if axis is None:
        a, axis = fnp.ravel(a), -1
    kth = read_values(kth)
    perm = _partition_order(a, kth=tuple(kth) if isinstance(kth, list) else kth, axis=axis,
                            kind=kind)
    return take_along_axis(a, perm, axis)


def _partition_order_impl(values, kth, axis, kind):
    """Where numpy's partition takes each of its output entries from."""
    return _matching(values, _onp.partition(values, kth, axis=axis, kind=kind), axis)


_partition_order = values_only(_partition_order_impl, "partition_order")


partition.__doc__ = (partition.__doc__ or "") + """
fgrad: each output entry has the derivative of the input entry numpy placed there; among tied
entries, whose placement no value can show, the first in the output takes the first in the
input (the stable-sort convention of ``sort``). ``order=`` is not supported on traced values.
"""


def _complex_dtype(dtype):
    return _onp.sort_complex(_onp.empty(0, dtype)).dtype


@differentiable(_onp.sort_complex, Spec([(((4,),), {}), (((2, 3),), {})],
                                        domain=("complex",), valid=_distinct),
                numpy_values=True)
def sort_complex(a):
    y = sort(a)
    dtype = _complex_dtype(dtype_of(y))
    return y if dtype_of(y) == dtype else fnp.astype(y, dtype)


sort_complex.__doc__ = (sort_complex.__doc__ or "") + """
fgrad: ordered like ``sort`` (real part, then imaginary part); tied entries keep their order.
"""


# --- unique -----------------------------------------------------------------------------------

def _inverse(flat, uniq):
    """For each entry of ``flat``, the position in ``uniq`` of the value equal to it (``uniq``
    in any order, as ``unique_values`` gives it). NaNs: every NaN input maps to the NaN of
    ``uniq`` when there is one; when each NaN is kept apart they are matched in order."""
    order = _onp.argsort(uniq, kind="stable")
    inv = order[_onp.minimum(_onp.searchsorted(uniq[order], flat), max(uniq.size - 1, 0))]
    nan_in = _onp.isnan(flat)
    if nan_in.any():
        nan_out = _onp.flatnonzero(_onp.isnan(uniq))
        inv[nan_in] = nan_out if nan_out.size == nan_in.sum() else nan_out[0]
    return inv


def _unique_values(ar, uniq, axis, inverse=None):
    """The traced unique values: the mean of the inputs equal to each (values from numpy)."""
    ar = fnp.asarray(ar)
    if axis is None or _ndim(ar) <= 1:
        flat = fnp.ravel(ar)
        inv = _inverse(_values(flat), uniq) if inverse is None else _onp.ravel(inverse)
        rows, rest = flat, ()
    else:
        axis = normalize_axis_index(int(axis), _ndim(ar))
        rows = fnp.moveaxis(ar, axis, 0)
        inv, rest = _onp.ravel(inverse), shape_of(rows)[1:]
    n = _onp.shape(uniq)[0 if axis is None or _ndim(ar) <= 1 else axis]
    dtype = dtype_of(ar)
    counts = _onp.bincount(inv, minlength=n).astype(dtype).reshape((n,) + (1,) * len(rest))
    mean = fnp.index_add(_onp.zeros((n,) + rest, dtype), rows, inv) / counts
    if axis is not None and _ndim(ar) > 1:
        mean = fnp.moveaxis(mean, 0, axis)
    return with_numpy_values(mean, lambda: uniq, (), {})


UNIQUE_DOC = """
fgrad: the unique values are differentiable, each with the mean of the derivatives of the
input entries equal to it (duplicates share evenly, the tie convention of ``max``); the
indices, inverse and counts are plain integer arrays.
"""


@differentiable(_onp.unique, Spec([
    (((4,),), {}), (((2, 3),), {"return_counts": True}),
    (((2, 3),), {"axis": 1, "return_inverse": True})], valid=_distinct))
def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None,
           **kwargs):
    values = _values(fnp.asarray(ar))
    res = _onp.unique(values, return_index, return_inverse, return_counts, axis, **kwargs)
    uniq = res[0] if isinstance(res, tuple) else res
    inverse = None
    if axis is not None and values.ndim > 1:
        inverse = _onp.unique(values, return_inverse=True, axis=axis, **kwargs)[1]
    traced = _unique_values(ar, uniq, axis, inverse)
    return (traced,) + res[1:] if isinstance(res, tuple) else traced


unique.__doc__ = (unique.__doc__ or "") + UNIQUE_DOC


def _array_api_unique(np_fn):
    @differentiable(np_fn, Spec([(((4,),), {}), (((2, 3),), {})], valid=_distinct))
    def traced(x):
        res = np_fn(_values(fnp.asarray(x)))
        if isinstance(res, tuple):  # a namedtuple: values, then plain integer arrays
            return type(res)(_unique_values(x, res[0], None), *res[1:])
        return _unique_values(x, res, None)

    traced.__doc__ = (traced.__doc__ or "") + UNIQUE_DOC
    return traced


unique_values = _array_api_unique(_onp.unique_values)
unique_counts = _array_api_unique(_onp.unique_counts)
unique_inverse = _array_api_unique(_onp.unique_inverse)
unique_all = _array_api_unique(_onp.unique_all)


# --- flips, rotations, rolls ------------------------------------------------------------------

@differentiable(_onp.flip, Spec([
    (((4,),), {}), (((2, 3),), {"axis": 0}), (((2, 3),), {"axis": -1}),
    (((2, 3, 2),), {"axis": (0, 2)})]))
def flip(m, axis=None):
    m = fnp.asarray(m)
    nd = _ndim(m)
    axes = range(nd) if axis is None else normalize_axis_tuple(axis, nd)
    idx = tuple(slice(None, None, -1) if d in axes else slice(None) for d in range(nd))
    return view_of(fnp.getitem(m, idx), m, idx)


@differentiable(_onp.fliplr, Spec([(((2, 3),), {}), (((2, 3, 2),), {})]))
def fliplr(m):
    m = fnp.asarray(m)
    if _ndim(m) < 2:
        raise ValueError("Input must be >= 2-d.")
    return flip(m, 1)


@differentiable(_onp.flipud, Spec([(((3,),), {}), (((2, 3),), {})]))
def flipud(m):
    m = fnp.asarray(m)
    if _ndim(m) < 1:
        raise ValueError("Input must be >= 1-d.")
    return flip(m, 0)


@differentiable(_onp.rot90, Spec([
    (((2, 3),), {}), (((2, 3),), {"k": 2}), (((2, 3),), {"k": -1, "axes": (1, 0)}),
    (((2, 3, 2),), {"k": 3, "axes": (0, 2)})]))
def rot90(m, k=1, axes=(0, 1)):
    m = fnp.asarray(m)
    nd = _ndim(m)
    axes = tuple(axes)
    if len(axes) != 2:
        raise ValueError("len(axes) must be 2.")
    if axes[0] == axes[1] or abs(axes[0] - axes[1]) == nd:
        raise ValueError("Axes must be different.")
    if not (-nd <= axes[0] < nd and -nd <= axes[1] < nd):
        raise ValueError(f"Axes={axes} out of range for array of ndim={nd}.")
    k = int(k) % 4
    if k == 0:
        return m
    if k == 2:
        return flip(flip(m, axes[0]), axes[1])
    perm = list(range(nd))
    a0, a1 = axes[0] % nd, axes[1] % nd
    perm[a0], perm[a1] = perm[a1], perm[a0]
    if k == 1:
        return fnp.transpose(flip(m, axes[1]), perm)
    return flip(fnp.transpose(m, perm), axes[1])


def _roll_axis(a, shift, axis):
    n = shape_of(a)[axis]
    shift %= n or 1
    if not shift:  # (numpy's roll gives a new array all the same)
        return copied(a)
    head = fnp.getitem(a, _on_axis(axis, slice(n - shift, None)))
    tail = fnp.getitem(a, _on_axis(axis, slice(None, n - shift)))
    return fnp.concatenate([head, tail], axis=axis)


def _roll_by_traced(a, shift, axis):
    """``roll`` by a traced shift (a batch of them under vmap, one computed in a staged
    function): each rolled axis gathered at ``(i - shift) % n``, so no value is read."""
    if axis is None:
        return fnp.reshape(_roll_by_traced(fnp.ravel(a), shift, 0), shape_of(a))
    axes = normalize_axis_tuple(axis, _ndim(a), allow_duplicate=True)
    shifts = shape_of(shift)
    if len(shifts) > 1 or (shifts and len(axes) > 1 and shifts[0] != len(axes)):
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for i in range(max(len(axes), shifts[0] if shifts else 1)):
        ax = axes[i if len(axes) > 1 else 0]
        sh = shift[i] if shifts else shift
        total[ax] = sh if ax not in total else total[ax] + sh
    for ax, sh in total.items():
        n = shape_of(a)[ax]
        a = fnp.take(a, (_onp.arange(n) - sh) % n, axis=ax)
    return a


@differentiable(_onp.roll, Spec([
    (((4,),), {"shift": 1}), (((2, 3),), {"shift": -1, "axis": 1}),
    (((2, 3),), {"shift": (1, 2), "axis": (0, 1)}), (((2, 3),), {"shift": 5}),
    (((2, 3),), {"shift": (1, 1), "axis": (-1, 1)})]))
def roll(a, shift, axis=None):
    a = fnp.asarray(a)
    if contains_tracer(shift):
        return _roll_by_traced(a, fnp.asarray(shift), axis)
    shift = read_values(shift)
    if axis is None:
        return fnp.reshape(roll(fnp.ravel(a), shift, 0), shape_of(a))
    axes = normalize_axis_tuple(axis, _ndim(a), allow_duplicate=True)
    pairs = _onp.broadcast(shift, axes)
    if pairs.ndim > 1:
        raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
    total = {}
    for sh, ax in pairs:
        total[ax] = total.get(ax, 0) + int(sh)
    for ax, sh in total.items():
        a = _roll_axis(a, sh, ax)
    return a


# --- diagonals and triangles ------------------------------------------------------------------

def _diagonal_index(d1, d2, offset):
    r0, c0 = max(-offset, 0), max(offset, 0)
    n = max(0, min(d1 - r0, d2 - c0))
    return _onp.arange(n) + r0, _onp.arange(n) + c0


def _diagonal_vjp(g, ans, x, offset, axis1, axis2):
    """The diagonal cotangent put back on the diagonal of zeros (built with the two axes last,
    where the diagonal is, then moved back)."""
    shape = shape_of(x)
    perm = [d for d in range(len(shape)) if d not in (axis1, axis2)] + [axis1, axis2]
    zeros = _onp.zeros(tuple(shape[d] for d in perm), dtype_of(g))
    full = fnp.index_add(zeros, g, (Ellipsis,) + _diagonal_index(shape[axis1], shape[axis2],
                                                                 offset))
    return fnp.transpose(full, inverse_permutation(perm))


# numpy's diagonal is a strided view; a primitive of its own keeps that layout, so that
# trace (its sum) rounds exactly as numpy's does.
diagonal_p = define(
    "diagonal", lambda x, offset, axis1, axis2: _onp.diagonal(x, offset, axis1, axis2),
    [_diagonal_vjp], linear=True,
    spec=Spec([(((3, 3),), {"offset": 0, "axis1": 0, "axis2": 1}),
               (((2, 3, 4),), {"offset": 1, "axis1": 2, "axis2": 0})]), batch=batch_rules.diagonal)


@differentiable(_onp.diagonal, Spec([
    (((3, 3),), {}), (((3, 4),), {"offset": -1}),
    (((2, 3, 4),), {"offset": 1, "axis1": 2, "axis2": 0}), (((2, 3),), {"offset": 4})]))
def diagonal(a, offset=0, axis1=0, axis2=1):
    a = fnp.asarray(a)
    nd = _ndim(a)
    if nd < 2:
        raise ValueError("diag requires an array of at least two dimensions")
    ax1, ax2 = normalize_axis_index(int(axis1), nd), normalize_axis_index(int(axis2), nd)
    if ax1 == ax2:
        raise ValueError("axis1 and axis2 cannot be the same")
    return view_of(diagonal_p(a, offset=int(offset), axis1=ax1, axis2=ax2), a)


@differentiable(_onp.diag, Spec([
    (((3,),), {}), (((3,),), {"k": -1}), (((3, 4),), {"k": 1}), (((3, 3),), {"k": -2})]))
def diag(v, k=0):
    v = fnp.asarray(v)
    k = int(k)
    if _ndim(v) == 2:
        return diagonal(v, k)
    if _ndim(v) != 1:
        raise ValueError("Input must be 1- or 2-d.")
    n = shape_of(v)[0] + abs(k)
    return fnp.index_set(_onp.zeros((n, n), dtype_of(v)), v, _diagonal_index(n, n, k))


@differentiable(_onp.diagflat, Spec([(((2, 2),), {"k": 1}), (((3,),), {})]))
def diagflat(v, k=0):
    return diag(fnp.ravel(v), k)


def _triangle(m, k, lower):
    m = fnp.asarray(m)
    shape = shape_of(m)
    zero = _onp.zeros(1, dtype_of(m))
    if lower:
        return fnp.where(_onp.tri(*shape[-2:], k=int(k), dtype=bool), m, zero)
    return fnp.where(_onp.tri(*shape[-2:], k=int(k) - 1, dtype=bool), zero, m)


TRIANGLES = [(((3, 3),), {}), (((2, 3, 4),), {"k": -1}), (((3,),), {"k": 1})]


@differentiable(_onp.tril, Spec(TRIANGLES))
def tril(m, k=0):
    return _triangle(m, k, lower=True)


@differentiable(_onp.triu, Spec(TRIANGLES))
def triu(m, k=0):
    return _triangle(m, k, lower=False)


@differentiable(_onp.trace, Spec([
    (((3, 3),), {}), (((3, 4),), {"offset": -1}),
    (((2, 3, 4),), {"offset": 1, "axis1": 1, "axis2": 2})]))
def trace(a, offset=0, axis1=0, axis2=1, dtype=None, out=None):
    unsupported_kwargs("trace", {"out": out})
    return fnp.sum(diagonal(a, offset, axis1, axis2), axis=-1, dtype=dtype)


# --- in-place functions: a traced array written as numpy writes it ---------------------------

def _in_place(np_fn, call, instead, parse):
    """numpy's ``np_fn`` on plain values. On a traced array written to, numpy's write
    (``views.write_whole``): which value lands where is numpy's own function run on
    stand-ins (``_landing``), so its cycling of short values, its index modes and its order
    for repeated indices hold. ``parse(*args, **kwargs)`` gives ``(array, values, keys,
    params)``: ``keys`` the arguments that say where (indices, a mask, copyto's ``where``),
    ``params`` numpy's other arguments. A plain array given traced values cannot hold them:
    ``TracerMutationError`` naming the functional form ``instead``."""
    name = np_fn.__name__

    @functools.wraps(np_fn)
    def wrapper(*args, **kwargs):
        if not (contains_tracer(args) or (kwargs and contains_tracer(kwargs))):
            return np_fn(*args, **kwargs)
        x, v, keys, params = parse(*args, **kwargs)
        if not isinstance(x, Tracer):
            raise errors.mutation(call, instead)

        def written():
            values = fnp.asarray(v)
            positions = _onp.arange(_onp.size(values)).reshape(shape_of(values))
            if contains_tracer(keys):  # (a mask or indices computed from traced values:
                # a node of a staged graph, once per example under vmap; no value read)
                where = _landing(x, positions, *keys, of=name, **params)
            else:
                where = _landing_impl(_onp.empty(shape_of(x)), positions,
                                      *[read_values(k) for k in keys], of=name, **params)
            picked = fnp.take(fnp.ravel(fnp.astype(values, dtype_of(x))),
                              fnp.maximum(where, 0))
            return fnp.where(where >= 0, picked, x)

        views.write_whole(x, written, call)

    # not differentiable as a function (it returns None): its writes are, as x[i] = v
    wrapper._fgrad_status = "in place"
    return wrapper


def _landing_impl(x, positions, *keys, of, **params):
    """Where each of the values lands when numpy's in-place function ``of`` writes them
    into an array of ``x``'s shape: the value's position (in the values' C order), or -1
    where the array keeps its own."""
    where = _onp.full(_onp.shape(x), -1)
    if of == "copyto":
        _onp.copyto(where, positions, casting="unsafe", where=keys[0])
    elif of in ("put_along_axis", "put"):
        getattr(_onp, of)(where, keys[0], positions, **params)
    else:  # place, putmask (the mask first), fill_diagonal (none)
        getattr(_onp, of)(where, *keys, positions, **params)
    return where


_landing = values_only(_landing_impl, "in_place_landing")


def _copyto_parse(dst, src, casting="same_kind", where=True):
    # (numpy's own checks of the cast and the shapes, on stand-ins of the dtypes)
    _onp.copyto(_onp.empty(shape_of(dst), dtype_of(dst)),
                _onp.zeros(shape_of(src), dtype_of(src)), casting=casting,
                where=True if contains_tracer(where) else read_values(where))
    return dst, src, (where,), {}


put = _in_place(_onp.put, "np.put(x, ind, v)",
                "y = np.reshape(np.at(np.ravel(x))[ind].set(v), np.shape(x))",
                lambda a, ind, v, mode="raise": (a, v, (ind,), {"mode": mode}))
place = _in_place(_onp.place, "np.place(x, mask, vals)",
                  "y = np.at(x)[mask].set(vals) (one value per True entry), or "
                  "np.where(mask, v, x)",
                  lambda arr, mask, vals: (arr, vals, (mask,), {}))
putmask = _in_place(_onp.putmask, "np.putmask(x, mask, values)",
                    "y = np.where(mask, values, x)",
                    lambda a, mask, values: (a, values, (mask,), {}))
copyto = _in_place(_onp.copyto, "np.copyto(dst, src)",
                   "y = np.where(where, src, dst), or y = np.broadcast_to(src, np.shape(dst))",
                   _copyto_parse)
fill_diagonal = _in_place(_onp.fill_diagonal, "np.fill_diagonal(x, val)",
                          "y = np.at(x)[np.diag_indices_from(x)].set(val)",
                          lambda a, val, wrap=False: (a, val, (), {"wrap": wrap}))
put_along_axis = _in_place(_onp.put_along_axis, "np.put_along_axis(x, indices, values, axis)",
                           "y = np.at(x)[idx].set(values), with idx the index that "
                           "np.take_along_axis(x, indices, axis) reads",
                           lambda arr, indices, values, axis: (
                               arr, values, (indices,), {"axis": axis}))


# Set operations that keep values of one array: built on unique, so duplicates share the
# derivative as there. intersect1d and setxor1d keep values by exact equality *between* the
# arrays, so moving either side alone changes which values survive: they have no derivative
# (see unsupported.py).
_SET_CASES = [(((4,), (3,)), {}), (((2, 2), (3,)), {})]


@differentiable(_onp.union1d, Spec(_SET_CASES, valid=lambda a, b: _distinct(
    _onp.concatenate([_onp.ravel(a), _onp.ravel(b)]))))
def union1d(ar1, ar2):
    """The sorted unique values of both arrays; a value present several times (in either
    array) takes the mean of their derivatives, as in ``unique``."""
    return unique(fnp.concatenate((ar1, ar2), axis=None))


@differentiable(_onp.setdiff1d, Spec(_SET_CASES + [(((4,), (3,)), {"assume_unique": True})],
                                     valid=lambda a, b: _distinct(_onp.concatenate(
                                         [_onp.ravel(a), _onp.ravel(b)]))))
def setdiff1d(ar1, ar2, assume_unique=False):
    """The values of ``ar1`` not in ``ar2``: differentiable in ``ar1`` (as ``unique``); which
    values are dropped depends on ``ar2`` only through exact equality, so ``ar2`` has zero
    derivative."""
    ar1 = fnp.ravel(ar1) if assume_unique else unique(ar1)
    keep = _onp.isin(read_value(ar1), _onp.unique(read_value(ar2)), invert=True)
    return ar1[keep]


# numpy.lexsort: no derivative (an order). Its keys come as a sequence; traced ones of one
# shape and dtype are stacked into one array (numpy takes a 2-d array's rows as the keys), so
# a staged function records the sort as a node and vmap maps it, instead of reading the keys
# (a guard on their values under jit, a refusal under vmap).
_lexsort = zero_derivative(_onp.lexsort)


@functools.wraps(_onp.lexsort)
def lexsort(keys, axis=-1):
    if isinstance(keys, (tuple, list)) and keys and contains_tracer(keys):
        arrays = [fnp.asarray(k) for k in keys]
        if len({(shape_of(k), dtype_of(k)) for k in arrays}) == 1:
            keys = fnp.stack(arrays)
    return _lexsort(keys, axis=axis)


lexsort._fgrad_status = "zero"

