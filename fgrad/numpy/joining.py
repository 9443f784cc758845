"""Joining, splitting, repeating and padding arrays: hstack, split, tile, pad, insert, ...

These functions move values without arithmetic, so they are composed of the layout and
indexing primitives (``concatenate``, ``getitem``, ``reshape``, ``broadcast_to``), which makes
their forward values numpy's exactly and their derivatives correct to any order.

Where numpy's rules for which element lands where are intricate (``insert``, ``delete``,
``resize``, ``repeat`` with counts, ``pad``), numpy itself decides: it is run on an array of
element numbers (``_positions``), and its result says which input element each output element
copies. A gather (``getitem`` with that index) then does the same to traced values; its
transpose accumulates repeated elements, so the cotangent of an element copied k times (by a
reflected pad, a tile, a repeat) is the sum of its k copies' cotangents.
"""
import warnings as _warnings

import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import (concrete, contains_tracer, map_tracers, read_value, read_values,
                           value_for_shape)
from .broadcasting import dtype_of, shape_of
from .layout import (array, asarray, astype, atleast_1d, atleast_2d, atleast_3d,
                     axis_index, axis_tuple, broadcast_to, concatenate, list_call, ravel,
                     reshape)
from .views import view_of
from .wrapping import differentiable, numpy_reference, with_numpy_values

_F64 = _onp.dtype("float64")


def _ndim(x):
    return len(shape_of(x))


def _size(shape):
    return int(_onp.prod(shape, dtype=int))


def _positions(x):
    """The element numbers of ``x`` (C order), in an int array of its shape and memory order:
    numpy's ``insert``/``delete`` ravel by memory order, so the stand-in must match."""
    shape = shape_of(x)
    pos = _onp.arange(_size(shape)).reshape(shape)
    if not concrete(x):  # a batch under vmap, whose layout is not an example's
        return pos
    v = value_for_shape(x)  # (its memory order only: a staged function guards nothing)
    if isinstance(v, _onp.ndarray) and v.flags.f_contiguous and not v.flags.c_contiguous:
        pos = _onp.asfortranarray(pos)
    return pos


def _gather(sources, idx):
    """The elements numbered ``idx`` of the arrays ``sources`` ravelled and joined."""
    flat = [ravel(s) for s in sources]
    return fnp.getitem(flat[0] if len(flat) == 1 else concatenate(flat), idx)


def _along(axis, idx):
    """An index applying ``idx`` along ``axis``."""
    return (slice(None),) * axis + (idx,)


# --- stacking ------------------------------------------------------------------------------

@differentiable(_onp.hstack, Spec([(((2,), (3,)), {}), (((2, 1), (2, 2)), {}), (((), ()), {}),
                                   (((2,), (2,)), {"dtype": _F64})], call=list_call))
def hstack(tup, *, dtype=None, casting="same_kind"):
    arrs = [atleast_1d(a) for a in tup]
    axis = 0 if arrs and _ndim(arrs[0]) == 1 else 1
    return concatenate(arrs, axis, dtype=dtype, casting=casting)


_VSTACK = [(((3,), (3,)), {}), (((1, 2), (2, 2)), {}), (((), ()), {})]


@differentiable(_onp.vstack, Spec(_VSTACK, call=list_call))
def vstack(tup, *, dtype=None, casting="same_kind"):
    return concatenate([atleast_2d(a) for a in tup], 0, dtype=dtype, casting=casting)


if hasattr(_onp, "row_stack"):  # deprecated in numpy 2.0
    @differentiable(_onp.row_stack, Spec(_VSTACK[:2], call=list_call))
    def row_stack(tup, *, dtype=None, casting="same_kind"):
        _warnings.warn("`row_stack` alias is deprecated. Use `np.vstack` directly.",
                       DeprecationWarning, stacklevel=3)
        return vstack(tup, dtype=dtype, casting=casting)


@differentiable(_onp.dstack, Spec([(((3,), (3,)), {}), (((2, 2), (2, 2)), {}),
                                   (((2, 1, 2), (2, 1, 1)), {})], call=list_call))
def dstack(tup):
    return concatenate([atleast_3d(a) for a in tup], 2)


@differentiable(_onp.column_stack, Spec([(((3,), (3,)), {}), (((3,), (3, 2)), {}),
                                         (((), ()), {})], call=list_call))
def column_stack(tup):
    cols = []
    for a in tup:
        a = asarray(a)
        cols.append(a if _ndim(a) >= 2 else reshape(a, (-1, 1)))
    return concatenate(cols, 1)


def _block_index(index):
    return "arrays" + "".join(f"[{i}]" for i in index)


def _block_depth(obj, index):
    """How deep the lists nest, checked the same at every leaf (numpy's errors if not)."""
    if isinstance(obj, tuple):
        raise TypeError(f"{_block_index(index)} is a tuple. Only lists can be used to arrange "
                        "blocks, and np.block does not allow implicit conversion from tuple "
                        "to ndarray.")
    if not isinstance(obj, list):
        return 0
    if not obj:
        raise ValueError(f"List at {_block_index(index)} cannot be empty")
    depths = [_block_depth(o, index + [i]) for i, o in enumerate(obj)]
    for i, d in enumerate(depths):
        if d != depths[0]:
            raise ValueError(f"List depths are mismatched. First element was at depth "
                             f"{depths[0] + len(index) + 1}, but there is an element at depth "
                             f"{d + len(index) + 1} ({_block_index(index + [i])})")
    return depths[0] + 1


def _leaves(obj):
    if isinstance(obj, list):
        return [leaf for o in obj for leaf in _leaves(o)]
    return [obj]


def _block_call(f, *xs, **params):
    """``Spec.call`` for ``block``: four arrays as a 2x2 grid, two as one row."""
    if len(xs) == 4:
        return f([[xs[0], xs[1]], [xs[2], xs[3]]], **params)
    return f(list(xs), **params)


@differentiable(_onp.block, Spec([(((2, 2), (2, 1), (1, 2), (1, 1)), {}), (((2,), ()), {}),
                                  (((2, 1), (1, 2, 3)), {})], call=_block_call))
def block(arrays):
    depth = _block_depth(arrays, [])
    ndim = max([depth] + [_onp.ndim(value_for_shape(leaf)) for leaf in _leaves(arrays)])

    def build(obj, level):
        if level == depth:
            return array(obj, ndmin=ndim)
        return concatenate([build(o, level + 1) for o in obj], axis=level - depth)

    return build(arrays, 0)


# --- splitting -----------------------------------------------------------------------------

def _pieces(ary, indices_or_sections, axis):
    """``array_split``: the pieces of ``ary`` along ``axis``, as slices (numpy's division
    points: the first ``n % sections`` pieces one longer)."""
    n = shape_of(ary)[axis]
    ios = read_values(indices_or_sections)
    try:
        points = [0] + list(ios) + [n]
    except TypeError:
        sections = int(ios)
        if sections <= 0:
            raise ValueError("number sections must be larger than 0.") from None
        each, extras = divmod(n, sections)
        points = _onp.cumsum([0] + extras * [each + 1] + (sections - extras) * [each])
    pieces = [_along(axis, slice(points[i], points[i + 1])) for i in range(len(points) - 1)]
    return [view_of(fnp.getitem(ary, idx), ary, idx) for idx in pieces]


@differentiable(_onp.array_split, Spec([(((3,),), {"indices_or_sections": 2}),
                                        (((2, 4),), {"indices_or_sections": (1, -1, 9),
                                                     "axis": 1})]))
def array_split(ary, indices_or_sections, axis=0):
    """A list of (traced) pieces, each with its own derivative (views of ``ary``, as
    numpy's)."""
    ary = asarray(ary)
    return _pieces(ary, indices_or_sections, axis_index(axis, _ndim(ary)))


@differentiable(_onp.split, Spec([(((4,),), {"indices_or_sections": 2}),
                                  (((2, 3),), {"indices_or_sections": [1, 2], "axis": -1})]))
def split(ary, indices_or_sections, axis=0):
    """A list of (traced) pieces, each with its own derivative."""
    ary = asarray(ary)
    axis = axis_index(axis, _ndim(ary))
    ios = read_values(indices_or_sections)
    if _onp.ndim(ios) == 0 and shape_of(ary)[axis] % int(ios):
        raise ValueError("array split does not result in an equal division")
    return _pieces(ary, ios, axis)


def _split_along(name, axis, min_ndim):
    def traced(ary, indices_or_sections):
        ary = asarray(ary)
        if _ndim(ary) < min_ndim:
            raise ValueError(f"{name} only works on arrays of {min_ndim} or more dimensions")
        return split(ary, indices_or_sections, 0 if name == "hsplit" and _ndim(ary) == 1
                     else axis)
    return traced


hsplit = differentiable(_onp.hsplit, Spec([(((2, 4),), {"indices_or_sections": 2}),
                                           (((3,),), {"indices_or_sections": [1]})]))(
    _split_along("hsplit", 1, 1))
vsplit = differentiable(_onp.vsplit, Spec([(((4, 2),), {"indices_or_sections": 2})]))(
    _split_along("vsplit", 0, 2))
dsplit = differentiable(_onp.dsplit, Spec([(((1, 2, 4),), {"indices_or_sections": [1, 3]})]))(
    _split_along("dsplit", 2, 3))


@differentiable(_onp.unstack, Spec([(((2, 3),), {}), (((2, 3),), {"axis": -1})]))
def unstack(x, /, *, axis=0):
    """A tuple of (traced) slices, each with its own derivative."""
    x = asarray(x)
    if _ndim(x) == 0:
        raise ValueError("Input array must be at least 1-d.")
    axis = axis_index(axis, _ndim(x))
    rows = [_along(axis, i) for i in range(shape_of(x)[axis])]
    return tuple(view_of(fnp.getitem(x, idx), x, idx) for idx in rows)


# --- repeating -----------------------------------------------------------------------------

@differentiable(_onp.tile, Spec([(((3,),), {"reps": 2}), (((2, 3),), {"reps": (2, 1, 2)}),
                                 (((),), {"reps": (2, 2)})]))
def tile(A, reps):
    """Computed as a broadcast: the derivative of each element sums over its copies."""
    try:
        reps = tuple(int(r) for r in read_values(reps))
    except TypeError:
        reps = (int(read_values(reps)),)
    A = asarray(A)
    shape = shape_of(A)
    d = max(len(reps), len(shape))
    reps, shape = (1,) * (d - len(reps)) + reps, (1,) * (d - len(shape)) + shape
    # each axis n becomes (1, n), stretched to (r, n): the copies run along the new axes
    spread = broadcast_to(reshape(A, tuple(v for n in shape for v in (1, n))),
                          tuple(v for r, n in zip(reps, shape) for v in (r, n)))
    return reshape(spread, tuple(r * n for r, n in zip(reps, shape)))


@differentiable(_onp.repeat, Spec([(((3,),), {"repeats": 2}),
                                   (((2, 3),), {"repeats": (1, 0, 2), "axis": -1}),
                                   (((2, 2),), {"repeats": (2, 1, 1, 3)}),
                                   (((2, 3),), {"repeats": 2, "axis": 0})]))
def repeat(a, repeats, axis=None):
    """The derivative of each element sums over its copies."""
    a = asarray(a)
    if axis is None:
        a, axis = ravel(a), 0
    else:
        axis = axis_index(axis, _ndim(a))
    shape = shape_of(a)
    counts = _onp.asarray(read_values(repeats))
    idx = _onp.repeat(_onp.arange(shape[axis]), counts)  # numpy's checks of the counts
    if counts.size != 1:
        return fnp.getitem(a, _along(axis, idx))
    k = int(counts.reshape(()))
    stretched = broadcast_to(reshape(a, shape[:axis + 1] + (1,) + shape[axis + 1:]),
                             shape[:axis + 1] + (k,) + shape[axis + 1:])
    return reshape(stretched, shape[:axis] + (shape[axis] * k,) + shape[axis + 1:])


@differentiable(_onp.resize, Spec([(((3,),), {"new_shape": (2, 4)}),
                                   (((2, 2),), {"new_shape": 3})]))
def resize(a, new_shape):
    """The elements repeated cyclically; each derivative sums over copies."""
    a = asarray(a)
    if _size(shape_of(a)) == 0:
        return _onp.resize(read_value(a), read_values(new_shape))  # zeros: nothing to differentiate
    return _gather([a], _onp.resize(_onp.arange(_size(shape_of(a))).reshape(shape_of(a)),
                                    read_values(new_shape)))


# --- adding and removing elements ----------------------------------------------------------

@differentiable(_onp.append, Spec([(((3,), (2,)), {}), (((2, 3), (1, 3)), {"axis": 0}),
                                   (((2, 2), (3,)), {})]))
def append(arr, values, axis=None):
    arr = asarray(arr)
    if axis is None:
        if _ndim(arr) != 1:
            arr = ravel(arr)
        values, axis = ravel(asarray(values)), _ndim(arr) - 1
    return concatenate((arr, values), axis=axis)


@differentiable(_onp.insert, Spec([(((4,), (2,)), {"obj": [1, 3]}),
                                   (((2, 3), ()), {"obj": 1, "axis": 1}),
                                   (((2, 3), (2,)), {"obj": 5})],
                                  call=lambda f, x, v, obj, **p: f(x, obj, v, **p)))
def insert(arr, obj, values, axis=None):
    """Both ``arr`` and the inserted ``values`` may be traced."""
    arr, values = asarray(arr), asarray(values)
    if not _onp.issubdtype(dtype_of(arr), _onp.inexact):
        return _onp.insert(read_value(arr), read_values(obj), read_values(values), axis)
    n = _size(shape_of(arr))
    # numpy places the values' element numbers (counted on from n) as it would the values
    value_pos = n + _onp.arange(_size(shape_of(values))).reshape(shape_of(values))
    idx = _onp.insert(_positions(arr), read_values(obj), value_pos, axis)
    return _gather([arr, astype(values, dtype_of(arr))], idx)


@differentiable(_onp.delete, Spec([(((4,),), {"obj": [0, 2]}),
                                   (((2, 3),), {"obj": 1, "axis": -1}),
                                   (((2, 3),), {"obj": slice(0, 4, 2)})]))
def delete(arr, obj, axis=None):
    arr = asarray(arr)
    return _gather([arr], _onp.delete(_positions(arr), read_values(obj), axis))


def _trim_call(f, x, **params):
    """``Spec.call`` for ``trim_zeros``: ``x`` (no zeros) between zero rows to trim."""
    zeros = [_onp.zeros((k,) + shape_of(x)[1:], x.dtype) for k in (1, 2)]
    return f(fnp.concatenate([zeros[0], x, zeros[1]]), **params)


@differentiable(_onp.trim_zeros, Spec([(((3,),), {}), (((3,),), {"trim": "b"}),
                                       (((2, 3),), {"axis": 0})], call=_trim_call,
                                      valid=lambda x: bool((_onp.abs(x) > 0.05).all())))
def trim_zeros(filt, trim="fb", axis=None):
    """The derivative is that of the kept elements. Which elements are kept
    is decided by the values (an element exactly zero at an end is dropped), so the result's
    shape, not its derivative, changes where an end element crosses zero."""
    trim = trim.lower()
    if trim not in {"fb", "bf", "f", "b"}:
        raise ValueError(f"unexpected character(s) in `trim`: {trim!r}")
    v = _onp.asarray(read_values(filt))
    axes = range(v.ndim) if axis is None else axis_tuple(axis, v.ndim)
    if not axes:
        return filt
    nonzero = _onp.argwhere(v)
    if nonzero.size == 0:
        start = stop = [0] * v.ndim
    else:
        start = nonzero.min(axis=0) if "f" in trim else [None] * v.ndim
        stop = nonzero.max(axis=0) + 1 if "b" in trim else [None] * v.ndim
    sl = tuple(slice(start[i], stop[i]) if i in axes else slice(None) for i in range(v.ndim))
    if len(sl) == 1 and isinstance(filt, (list, tuple)):
        return filt[sl[0]]  # numpy: a list in, a list out
    filt = asarray(filt)
    return view_of(fnp.getitem(filt, sl), filt, sl)  # (numpy's slice of filt)


# --- padding -------------------------------------------------------------------------------

def _pad_pairs(pad_width, ndim):
    """``pad_width`` (int, pair, per-axis pairs or dict) as one ``(before, after)`` per axis."""
    if isinstance(pad_width, dict):
        seq = [(0, 0)] * ndim
        for ax, w in pad_width.items():
            seq[ax] = (w, w) if isinstance(w, int) else tuple(w)
        pad_width = seq
    return _int_pairs(pad_width, ndim)


def _int_pairs(x, ndim):
    if x is None:
        return [(None, None)] * ndim
    x = _onp.asarray(x)
    if x.ndim < 3 and x.size == 1:
        return [(int(x.ravel()[0]),) * 2] * ndim
    if x.ndim < 3 and x.size == 2 and x.shape != (2, 1):
        return [tuple(int(i) for i in x.ravel())] * ndim
    return [tuple(int(i) for i in row) for row in _onp.broadcast_to(x, (ndim, 2))]


def _value_pairs(values, ndim, dtype):
    """``constant_values``/``end_values`` (maybe traced) as an ``(ndim, 2)`` array of
    ``dtype``, broadcast the way numpy reads them."""
    v = astype(asarray(values), dtype)
    shape = shape_of(v)
    if len(shape) < 3 and _size(shape) == 1:
        v = reshape(v, ())
    elif len(shape) < 3 and _size(shape) == 2 and shape != (2, 1):
        v = ravel(v)
    return broadcast_to(v, (ndim, 2))


def _pad_by_axis(x, pairs, make_blocks):
    """Pad one axis after another, as numpy does (corners come from the later axes):
    ``make_blocks(x, axis, before, after)`` gives the blocks to put on each side."""
    for axis, (before, after) in enumerate(pairs):
        if before or after:
            left, right = make_blocks(x, axis, before, after)
            parts = ([left] if before else []) + [x] + ([right] if after else [])
            x = concatenate(parts, axis=axis)
    return x


def _widened(block, axis, width):
    shape = list(shape_of(block))
    shape[axis] = width
    return broadcast_to(block, tuple(shape))


def _stat_blocks(stat, lengths):
    """Blocks of ``mean``/``maximum``/``minimum``/``median`` padding: the statistic of the
    first (last) ``stat_length`` elements along the axis, repeated."""
    def blocks(x, axis, before, after):
        n = shape_of(x)[axis]
        lo, hi = (n if k is None or k > n else k for k in lengths[axis])
        left = stat(fnp.getitem(x, _along(axis, slice(0, lo))), axis=axis, keepdims=True)
        right = left if lo == hi == n else \
            stat(fnp.getitem(x, _along(axis, slice(n - hi, n))), axis=axis, keepdims=True)
        return _widened(left, axis, before), _widened(right, axis, after)
    return blocks


def _ramp_blocks(ends):
    """Blocks of ``linear_ramp`` padding: ``end + (edge - end) * i / width``, i = 0, 1, ...
    from the outside in (numpy's ``linspace`` with ``endpoint=False``)."""
    def blocks(x, axis, before, after):
        n, dtype = shape_of(x)[axis], dtype_of(x)
        out = []
        for side, width, edge_at in ((0, before, 0), (1, after, n - 1)):
            steps = _onp.arange(width, dtype=dtype) / dtype.type(max(width, 1))
            if side:
                steps = steps[::-1]
            steps = steps.reshape((1,) * axis + (width,) + (1,) * (_ndim(x) - axis - 1))
            edge = fnp.getitem(x, _along(axis, slice(edge_at, edge_at + 1)))
            end = fnp.getitem(ends, (axis, side))
            out.append(end + (edge - end) * steps)
        return out
    return blocks


def _odd_reflection(x, pairs, mode):
    """``reflect_type='odd'``, which reflects about the edge value (``2 edge - x``): along each
    axis a linear map, read off numpy padding the identity."""
    for axis, (before, after) in enumerate(pairs):
        if before or after:
            n = shape_of(x)[axis]
            m = _onp.pad(_onp.eye(n, dtype=dtype_of(x)), ((before, after), (0, 0)), mode,
                         reflect_type="odd")
            moved = fnp.moveaxis(x, axis, -1)
            x = fnp.moveaxis(fnp.matmul(moved, _onp.ascontiguousarray(m.T)), -1, axis)
    return x


_STATS = {"mean": "mean", "maximum": "max", "minimum": "min", "median": "median"}


def _pad_call(f, x, *values, **params):
    """``Spec.call`` for ``pad``: a second argument is the traced constant or end value."""
    if values:
        key = "end_values" if params.get("mode") == "linear_ramp" else "constant_values"
        params[key] = values[0]
    return f(x, **params)


# numpy 2.4 takes pad widths by axis in a dict (fgrad's traced pad does on any numpy)
_PAD_DICT = _onp.lib.NumpyVersion(_onp.__version__) >= "2.4.0"


def _distinct(*args):
    """No near-ties inside the padded array (``maximum``/``median`` have kinks there)."""
    v = _onp.sort(_onp.ravel(args[0]))
    return bool((_onp.diff(v) > 1e-3).all())


@differentiable(_onp.pad, Spec(
    [(((3,),), {"pad_width": 2}),
     (((2, 3), (2,)), {"pad_width": ((1, 0), (0, 2))}),
     (((2, 3),), {"pad_width": ((1, 0), (2, 1)), "mode": "reflect"}),
     (((3,),), {"pad_width": (4, 5), "mode": "symmetric"}),
     (((2, 2),), {"pad_width": 3, "mode": "wrap"}),
     (((2, 3),), {"pad_width": {1: (0, 2)} if _PAD_DICT else ((0, 0), (0, 2)), "mode": "edge"}),
     (((3,),), {"pad_width": (3, 4), "mode": "reflect", "reflect_type": "odd"}),
     (((2, 3), ()), {"pad_width": (2, 1), "mode": "linear_ramp"}),
     (((2, 3),), {"pad_width": 1, "mode": "mean", "stat_length": 2}),
     (((2, 3),), {"pad_width": (1, 2), "mode": "maximum"}),
     (((4,),), {"pad_width": 2, "mode": "median", "stat_length": (2, 3)})],
    call=_pad_call, valid=_distinct))
def pad(array, pad_width, mode="constant", **kwargs):
    """Every mode but a function is supported on traced values; a traced
    ``constant_values`` (mode 'constant') or ``end_values`` ('linear_ramp') has its derivative
    too. The derivative of an element copied several times (reflections, 'wrap', 'edge')
    sums over its copies; 'maximum'/'minimum'/'median' take that of the chosen elements, ties
    sharing evenly (the convention of ``max``). 'empty' leaves numpy's padding undefined:
    fgrad fills it with zeros, which have no derivative."""
    if callable(mode):
        raise NotImplementedError(
            "fgrad.numpy.pad: a function as mode is not supported on traced values (it writes "
            "into the array in place); use one of the named modes, or write the padding with "
            "concatenate")
    x = asarray(array)
    if not _onp.issubdtype(dtype_of(x), _onp.inexact):  # integers: no derivative to keep
        return numpy_reference(_onp.pad, x, read_values(pad_width), mode, **kwargs)
    # (the values padded with may be traced: taken as they are, no value read; numpy's checks
    # of the keywords see stand-ins for them)
    filled = {k: v for k, v in kwargs.items() if k in ("constant_values", "end_values")}
    width = read_values(pad_width)
    plain_kwargs = {k: map_tracers(v, value_for_shape) if k in filled else read_values(v)
                    for k, v in kwargs.items()}
    pos = _positions(x)
    ndim, dtype, n = _ndim(x), dtype_of(x), pos.size
    if mode in ("edge", "wrap") or (mode in ("reflect", "symmetric") and
                                    plain_kwargs.get("reflect_type", "even") == "even"):
        return _gather([x], _onp.pad(pos, width, mode, **plain_kwargs))
    if mode == "constant":
        # numpy writes the k-th constant (axis k // 2, side k % 2) where it finds n + k
        marks = dict(plain_kwargs, constant_values=n + _onp.arange(2 * ndim).reshape(ndim, 2))
        fill = _value_pairs(kwargs.get("constant_values", 0), ndim, dtype)
        return _gather([x, fill], _onp.pad(pos, width, "constant", **marks))
    if mode == "empty":
        _onp.pad(pos[(slice(0, 1),) * ndim], width, mode, **plain_kwargs)  # numpy's checks
        return _gather([x, _onp.zeros(1, dtype)],
                       _onp.pad(pos, width, "constant", constant_values=n))
    # the rest compute values; numpy's own (computed first, checking the arguments) are kept
    value = numpy_reference(_onp.pad, x, width, mode, **{**plain_kwargs, **filled})
    pairs = _pad_pairs(width, ndim)
    if mode in ("reflect", "symmetric"):
        out = _odd_reflection(x, pairs, mode)
    elif mode == "linear_ramp":
        ends = _value_pairs(kwargs.get("end_values", 0), ndim, dtype)
        out = _pad_by_axis(x, pairs, _ramp_blocks(ends))
    else:
        stat = getattr(fnp, _STATS[mode])
        out = _pad_by_axis(x, pairs, _stat_blocks(
            stat, _int_pairs(plain_kwargs.get("stat_length"), ndim)))
    return with_numpy_values(out, lambda *a, **k: value, (), {})


# --- r_ and c_ ----------------------------------------------------------------------------

class _AxisConcatenator:
    """``np.r_[...]`` / ``np.c_[...]``: numpy's own object for plain entries; with traced
    entries, the same joining by ``concatenate``: arrays and scalars (traced or not), slices
    (constants, expanded as numpy does) and a leading directive string ``"axis"``,
    ``"axis,ndmin"`` or ``"axis,ndmin,trans1d"``. The matrix directives ``"r"``/``"c"`` are
    refused on traced values."""

    def __init__(self, plain, axis, ndmin, trans1d):
        self.plain, self.axis, self.ndmin, self.trans1d = plain, axis, ndmin, trans1d

    def __getitem__(self, key):
        if not contains_tracer(key):
            return self.plain[key]
        items = key if isinstance(key, tuple) else (key,)
        axis, ndmin, trans1d = self.axis, self.ndmin, self.trans1d
        if items and isinstance(items[0], str):
            try:
                parts = [int(p) for p in items[0].split(",")]
            except ValueError:
                raise NotImplementedError(
                    f"fgrad.numpy.r_/c_: the directive {items[0]!r} is not supported on traced "
                    "values; use 'axis', 'axis,ndmin' or 'axis,ndmin,trans1d', or "
                    "fgrad.numpy.concatenate") from None
            axis, ndmin, trans1d = (parts + [ndmin, trans1d][len(parts) - 1:])[:3]
            items = items[1:]
        arrays = []
        for item in items:
            if isinstance(item, slice):
                if contains_tracer((item.start, item.stop, item.step)):
                    raise NotImplementedError("fgrad.numpy.r_/c_: a slice with traced bounds "
                                              "is not supported; use fgrad.numpy.linspace")
                item = self.plain[item]
            elif isinstance(item, str):
                raise NotImplementedError("fgrad.numpy.r_/c_: a directive string is taken "
                                          "only first")
            arrays.append(_at_least(fnp.asarray(item), ndmin, trans1d))
        return fnp.concatenate(arrays, axis=axis)

    def __len__(self):
        return 0


def _at_least(v, ndmin, trans1d):
    """numpy's ``array(v, ndmin=ndmin)`` and, for a ``v`` of fewer axes, the move of its own
    axes to ``trans1d`` (AxisConcatenator's rule)."""
    nd = len(shape_of(v))
    if nd >= ndmin:
        return v
    v = fnp.reshape(v, (1,) * (ndmin - nd) + shape_of(v))
    if trans1d != -1:
        k2, k1 = ndmin - nd, trans1d
        if k1 < 0:
            k1 += k2 + 1
        axes = list(range(ndmin))
        v = fnp.transpose(v, axes[:k1] + axes[k2:] + axes[k1:k2])
    return v


r_ = _AxisConcatenator(_onp.r_, 0, 1, -1)
c_ = _AxisConcatenator(_onp.c_, -1, 2, 0)
