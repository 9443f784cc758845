"""Batching rules, by family: how a primitive runs on a whole batch in one call.

A rule is ``rule(prim, size, vals, dims, **params) -> (batched output, its batch axis)``:
``vals`` are the primitive's arguments one level below ``vmap``'s trace, ``dims`` each one's
batch axis (None: the argument is the same for every example), ``params`` its static
parameters as given for one example. Rules call ``fgrad.numpy``, so transforms around
``vmap`` see (and differentiate, stage, batch again) the batched calls. The families declare
their rule beside their VJP and JVP (``define(..., batch=...)``):

* ``elementwise``: align the batch axes in front, pad the examples to one rank, broadcast;
* ``stacked(*core)``: numpy's stacked (gufunc) forms, ``core`` axes at the end of each
  argument, the batch a leading stack axis (``numpy.linalg``, ``matvec``, scipy.linalg);
* ``along(param)``: functions of an axis (reductions, running sums, fft, softmax): the batch
  axis in front, the parameter's axes shifted past it;
* the layout and product rules below, each a few lines; products are one ``einsum``.

``one_at_a_time`` is the fallback for primitives without a rule (a user's): the primitive once
per example, the results stacked.
"""

import numpy as _onp

import fgrad.numpy as fnp
from ..core.tracer import value_for_shape


def shape(v):
    return _onp.shape(value_for_shape(v))


def example_shape(v, d):
    """One example's shape: ``v``'s without its batch axis ``d`` (None: ``v``'s own)."""
    s = shape(v)
    return s if d is None else s[:d] + s[d + 1:]


def rank(v, d):
    """One example's rank."""
    n = len(shape(v))
    return n if d is None else n - 1


def to_front(v, d):
    return v if d in (None, 0) else fnp.moveaxis(v, d, 0)


def batch_first(v, d, size):
    """``v`` with its batch axis first; an unbatched ``v`` broadcast along a new first axis."""
    if d is not None:
        return to_front(v, d)
    v = fnp.asarray(v)
    return fnp.broadcast_to(v, (size,) + shape(v))


def _pad(v, n):
    """A batch-first ``v`` with ``n`` unit axes after the batch axis."""
    if n <= 0:
        return v
    s = shape(v)
    return fnp.reshape(v, s[:1] + (1,) * n + s[1:])


def aligned(vals, dims, core=None):
    """The arguments with their batch axes first and their stack axes (those before their
    ``core`` trailing axes, none by default) padded to one count, so numpy's broadcasting
    lines the examples up; unbatched arguments broadcast as they would for one example."""
    if len(vals) == 1:  # (most calls: nothing to line up)
        return [to_front(vals[0], dims[0])]
    core = core or (0,) * len(vals)
    stacks = [rank(v, d) - c for v, d, c in zip(vals, dims, core)]
    top = max(stacks)
    return [v if d is None else _pad(to_front(v, d), top - s)
            for v, d, s in zip(vals, dims, stacks)]


def one_at_a_time(prim, size, vals, dims, **params):
    """The fallback: the primitive once per example, the results stacked."""
    outs = []
    for i in range(size):
        args = [v if d is None else v[(slice(None),) * d + (i,)] for v, d in zip(vals, dims)]
        outs.append(prim(*args, **params))
    shapes = {shape(o) for o in outs}
    if len(shapes) > 1:  # (numpy.stack's own message names no function)
        name = prim.public_name if prim.builtin else prim.listed_name  # (numpy's lstsq's
        # values, numpy_values: a primitive of its own, listed by numpy's name)
        raise ValueError(f"vmap: {name} gives results of "
                         f"different shapes for the examples of the batch "
                         f"({', '.join(map(str, sorted(shapes)))}): their shape depends on "
                         "the values, and one batched array cannot hold them. Call it on one "
                         "example at a time, in a loop.")
    return fnp.stack(outs), 0


# --- elementwise and stacked ------------------------------------------------------------

def elementwise(prim, size, vals, dims, **params):
    """Broadcasting n-ary functions."""
    return prim(*aligned(vals, dims), **params), 0


def stacked(*core):
    """numpy's stacked form: argument i has ``core[i]`` trailing axes per matrix (a matrix 2,
    a vector 1), the axes before them are a stack the batch joins."""
    def rule(prim, size, vals, dims, **params):
        return prim(*aligned(vals, dims, core[:len(vals)]), **params), 0
    return rule


def matmul(prim, size, vals, dims, **params):
    """numpy's stacked matmul: the batch axis first, stack axes padded to a common rank, a
    batched vector made a one-column (or one-row) matrix and squeezed back."""
    (x, y), (dx, dy) = vals, dims
    xr, yr = rank(x, dx), rank(y, dy)
    x, y = to_front(x, dx), to_front(y, dy)
    # A matrix times a batch of vectors (jacfwd's and jacrev's bases, vmap over examples of a
    # layer): one matrix-matrix product, where the stacked form makes numpy loop over
    # matrix-vector products (100 x 100: 86 us against 141). It sums in BLAS's order, not the
    # loop's: equal to the loop of vectors to rounding, as vmap's rules are (the identity
    # bases of the Jacobians give the same bits either way). (One of x, y is batched.)
    if not params and dx is None and xr == 2 and yr == 1:
        return prim(y, fnp.transpose(x)), 0
    if not params and dy is None and xr == 1 and yr == 2:
        return prim(x, y), 0
    if dx is not None and xr == 1:
        x = fnp.expand_dims(x, 1)  # (B, 1, k)
    if dy is not None and yr == 1:
        y = fnp.expand_dims(y, 2)  # (B, k, 1)
    stack = max(r - 2 for r in (max(xr, 2), max(yr, 2)))

    def pad(v, d):
        return v if d is None else _pad(v, stack - (len(shape(v)) - 3))

    out = prim(pad(x, dx), pad(y, dy), **params)
    if dy is not None and yr == 1:
        out = fnp.squeeze(out, -1)
    if dx is not None and xr == 1:
        out = fnp.squeeze(out, -1 if yr == 1 else -2)  # (the row of one: last if y is a vector)
    return out, 0


def solve_like(prim, size, vals, dims, **params):
    """``solve(a, b)``: ``b`` a vector per example is made a one-column matrix (a stack of
    vectors would be read as a matrix) and the column dropped again."""
    (a, b), (da, db) = vals, dims
    vector = rank(b, db) == 1
    if vector:
        b = fnp.expand_dims(b, -1)
    out = prim(*aligned([a, b], [da, db], (2, 2)), **params)
    return (fnp.squeeze(out, -1) if vector else out), 0


# --- functions of axes ------------------------------------------------------------------

def _shifted(axis, r):
    if isinstance(axis, tuple):
        return tuple(a % r + 1 for a in axis)
    return axis % r + 1


def along(param="axis", none="all", default=None):
    """Functions of axes given by ``param`` (int or tuple; ``default`` when not given): the
    batch axis first and the axes shifted past it. ``None`` means every axis (``none="all"``)
    or the example flattened first (``"flatten"``: ``cumsum``, ``take``)."""
    def rule(prim, size, vals, dims, **params):
        vals = aligned(vals, dims)
        r = max(rank(v, d) for v, d in zip(vals, dims))
        axis = params.get(param, default)
        if axis is None and none == "flatten":
            vals = [fnp.reshape(vals[0], (size, -1))] + list(vals[1:])
            axis = 1
        elif axis is None:
            axis = tuple(range(1, r + 1))
        else:
            axis = _shifted(axis, r)
        return prim(*vals, **{**params, param: axis}), 0
    return rule


def along_axis_of_first(prim, size, vals, dims, axis, **params):
    """``gather``, ``scatter_add``: every argument batched first (the indices too), ``axis``
    (of the first argument's example) shifted past the batch axis."""
    r = rank(vals[0], dims[0])
    new = [batch_first(v, d, size) for v, d in zip(vals, dims)]
    return prim(*new, axis=_shifted(axis, r), **params), 0


# --- layout -----------------------------------------------------------------------------

def _reshaped(size, x, d, shape, order):
    if order == "C":
        return fnp.reshape(to_front(x, d), (size,) + shape), 0
    # F order: the batch axis last, where numpy's F order keeps each example whole
    return fnp.reshape(fnp.moveaxis(x, d, -1), shape + (size,), order="F"), len(shape)


def reshape(prim, size, vals, dims, shape, order="C"):
    if order not in ("C", "F"):
        return one_at_a_time(prim, size, vals, dims, shape=shape, order=order)
    shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
    return _reshaped(size, vals[0], dims[0], shape, order)


def ravel(prim, size, vals, dims, order="C"):
    if order not in ("C", "F"):
        return one_at_a_time(prim, size, vals, dims, order=order)
    return _reshaped(size, vals[0], dims[0], (-1,), order)


def broadcast_to(prim, size, vals, dims, shape):
    shape = (shape,) if isinstance(shape, (int, _onp.integer)) else tuple(shape)
    x = _pad(to_front(vals[0], dims[0]), len(shape) - rank(vals[0], dims[0]))
    return prim(x, shape=(size,) + shape), 0


def transpose(prim, size, vals, dims, axes):
    r = rank(vals[0], dims[0])
    axes = tuple(range(r - 1, -1, -1)) if axes is None else axes
    return prim(to_front(vals[0], dims[0]), axes=(0,) + _shifted(tuple(axes), r)), 0


def swapaxes(prim, size, vals, dims, axis1, axis2):
    r = rank(vals[0], dims[0])
    return prim(to_front(vals[0], dims[0]), axis1=_shifted(axis1, r),
                axis2=_shifted(axis2, r)), 0


def squeeze(prim, size, vals, dims, axis):
    d = dims[0]
    example = example_shape(vals[0], d)
    if axis is None:  # the example's unit axes only, never the batch's
        axis = tuple(i for i, n in enumerate(example) if n == 1)
    return prim(to_front(vals[0], d), axis=_shifted(tuple(axis), len(example))), 0


def expand_dims(prim, size, vals, dims, axis):
    out = rank(vals[0], dims[0]) + len(axis)
    return prim(to_front(vals[0], dims[0]), axis=_shifted(tuple(axis), out)), 0


def diagonal(prim, size, vals, dims, offset, axis1, axis2):
    r = rank(vals[0], dims[0])  # (the diagonal goes last, the batch axis stays first)
    return prim(to_front(vals[0], dims[0]), offset=offset, axis1=_shifted(axis1, r),
                axis2=_shifted(axis2, r)), 0


def joining(prim, size, vals, dims, axis):
    """``concatenate``, ``stack``: every argument batched first; the axis past the batch."""
    r = rank(vals[0], dims[0]) + (prim.name == "stack")
    new = [batch_first(v, d, size) for v, d in zip(vals, dims)]
    return prim(*new, axis=_shifted(axis, r)), 0


# --- indexing ---------------------------------------------------------------------------

def _batchable_index(idx):
    """The index's parts, if a leading ``slice(None)`` keeps the batch axis first: basic parts
    (ints, slices, None, ...) and at most one array (numpy moves the axes of several
    non-adjacent arrays to the front)."""
    parts = idx if isinstance(idx, tuple) else (idx,)
    arrays = 0
    for p in parts:
        if isinstance(p, (list, _onp.ndarray)):
            arrays += 1
        elif not (p is None or p is Ellipsis or isinstance(p, slice) or
                  (isinstance(p, (int, _onp.integer)) and not isinstance(p, bool))):
            return None
    return parts if arrays <= 1 else None


def getitem(prim, size, vals, dims, idx):
    """Indexing one example: the same index behind a whole first (batch) axis."""
    parts = _batchable_index(idx)
    if len(vals) > 1 or parts is None:
        return one_at_a_time(prim, size, vals, dims, idx=idx)
    return prim(to_front(vals[0], dims[0]), idx=(slice(None),) + parts), 0


def indexed_update(prim, size, vals, dims, idx):
    """``x.at[idx].add(v)`` and the like: the target batched, the index behind a whole batch
    axis, the update padded so it broadcasts against each example's selection."""
    parts = _batchable_index(idx)
    if parts is None or len(vals) != 2:
        return one_at_a_time(prim, size, vals, dims, idx=idx)
    (x, v), (dx, dv) = vals, dims
    x = batch_first(x, dx, size)
    if dv is not None:
        one = _onp.broadcast_to(_onp.zeros(()), shape(x)[1:])
        v = _pad(to_front(v, dv), one[parts].ndim - rank(v, dv))
    return prim(x, v, idx=(slice(None),) + parts), 0


# --- products: one einsum ---------------------------------------------------------------

_LABELS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"  # (string.ascii_letters)


def batched_einsum(vals, dims, subs, out):
    """``einsum(",".join(subs) + "->" + out)`` for one example, as one einsum over the batch:
    a label of its own for the batch axis, on the batched operands and the output."""
    z = next(c for c in reversed(_LABELS) if c not in "".join(subs) + out)
    ops = [to_front(v, d) for v, d in zip(vals, dims)]
    subs = [s if d is None else z + s for s, d in zip(subs, dims)]
    return fnp.einsum(",".join(subs) + "->" + z + out, *ops), 0


def _scalar_product(vals, dims):
    return fnp.multiply(*aligned(vals, dims)), 0


def dot(prim, size, vals, dims):
    ra, rb = (rank(v, d) for v, d in zip(vals, dims))
    if 0 in (ra, rb):
        return _scalar_product(vals, dims)
    a = _LABELS[:ra]
    b = _LABELS[ra:ra + rb - 1] if rb > 1 else ""
    b = b[:-1] + a[-1] + b[-1:] if rb > 1 else a[-1]  # a's last against b's second to last
    return batched_einsum(vals, dims, [a, b], a[:-1] + b[:-2] + b[-1:] if rb > 1 else a[:-1])


def inner(prim, size, vals, dims):
    ra, rb = (rank(v, d) for v, d in zip(vals, dims))
    if 0 in (ra, rb):
        return _scalar_product(vals, dims)
    a, b = _LABELS[:ra], _LABELS[ra:ra + rb - 1] + _LABELS[ra - 1]
    return batched_einsum(vals, dims, [a, b], a[:-1] + b[:-1])


def _front(dims):
    """The batch axes of arguments already moved to the front."""
    return [None if d is None else 0 for d in dims]


def _flat(v, d, size):
    return fnp.reshape(to_front(v, d), (size, -1)) if d is not None else fnp.ravel(v)


def outer(prim, size, vals, dims):
    return batched_einsum([_flat(v, d, size) for v, d in zip(vals, dims)], _front(dims),
                          ["i", "j"], "ij")


def vdot(prim, size, vals, dims):
    (a, b), (da, db) = vals, dims
    a, b = _flat(a, da, size), _flat(b, db, size)
    if _onp.iscomplexobj(value_for_shape(a)):
        a = fnp.conjugate(a)
    return batched_einsum([a, b], _front(dims), ["i", "i"], "")


def tensordot(prim, size, vals, dims, axes):
    ra, rb = (rank(v, d) for v, d in zip(vals, dims))
    a, b = list(_LABELS[:ra]), list(_LABELS[ra:ra + rb])
    for i, j in zip(*axes):
        b[j % rb] = a[i % ra]
    summed = {a[i % ra] for i in axes[0]}
    out = [c for c in a + b if c not in summed]
    return batched_einsum(vals, dims, ["".join(a), "".join(b)], "".join(out))


def kron(prim, size, vals, dims):
    r = max(rank(v, d) for v, d in zip(vals, dims))
    ops, shapes = [], []
    for v, d in zip(vals, dims):
        v = to_front(v, d)
        k = r - rank(v, d)
        v = _pad(v, k) if d is not None else fnp.reshape(v, (1,) * k + shape(v))
        ops.append(v)
        shapes.append(shape(v)[d is not None:])
    a, b = _LABELS[:r], _LABELS[r:2 * r]
    out, _ = batched_einsum(ops, _front(dims), [a, b], "".join(x + y for x, y in zip(a, b)))
    return fnp.reshape(out, (size,) + tuple(m * n for m, n in zip(*shapes))), 0


def einsum(prim, size, vals, dims, subscripts, optimize):
    ins, _, out = subscripts.replace(" ", "").partition("->")
    subs = ins.split(",")
    if "->" not in subscripts:  # numpy's implicit output: labels seen once, in order
        letters = "".join(subs).replace(".", "")
        out = ("..." if "..." in ins else "") + "".join(
            sorted(c for c in set(letters) if letters.count(c) == 1))
    return batched_einsum(vals, dims, subs, out)


def cross(prim, size, vals, dims, axisa, axisb, axisc):
    """The vector axes counted from the end, past the padding ``aligned`` puts in front."""
    (a, b), (da, db) = vals, dims
    ra, rb = rank(a, da), rank(b, db)
    one = [_onp.zeros(example_shape(v, d)) for v, d in zip(vals, dims)]
    rc = _onp.cross(*one, axisa=axisa, axisb=axisb, axisc=axisc).ndim
    axisc = axisc % rc - rc if rc else 0
    return prim(*aligned(vals, dims), axisa=axisa % ra - ra, axisb=axisb % rb - rb,
                axisc=axisc), 0


def convolution(prim, size, vals, dims, mode, flipped=False):
    """numpy's 1-d ``convolve`` (``correlate``: ``flipped``, the second argument conjugated
    and reversed) for a batch: every lag at once, the shifted copies of the (zero-padded)
    second argument gathered into a matrix and contracted with the first, then numpy's crop
    for ``mode``."""
    a, v = (batch_first(x, d, size) for x, d in zip(vals, dims))
    la, lv = shape(a)[1], shape(v)[1]
    if flipped:
        v = fnp.getitem(fnp.conjugate(v) if _onp.iscomplexobj(value_for_shape(v)) else v,
                        (slice(None), slice(None, None, -1)))
    zeros = _onp.zeros((size, la - 1), _onp.result_type(value_for_shape(v)))
    padded = fnp.concatenate([zeros, v, zeros], axis=1)
    n = la + lv - 1
    lags = _onp.arange(n)[None, :] - _onp.arange(la)[:, None] + la - 1
    full = fnp.einsum("zk,zkn->zn", a, fnp.getitem(padded, (slice(None), lags)))
    lo, hi = min(la, lv), max(la, lv)
    if mode == "full":
        return full, 0
    if mode == "valid":
        return fnp.getitem(full, (slice(None), slice(lo - 1, hi))), 0
    start = lo - 1 - (lo - 1) // 2 if flipped and la < lv else (lo - 1) // 2  # numpy's centre
    return fnp.getitem(full, (slice(None), slice(start, start + hi))), 0


def correlation(prim, size, vals, dims, mode):
    return convolution(prim, size, vals, dims, mode, flipped=True)


def scipy_batches():
    """Whether scipy.linalg takes stacks of matrices, as numpy.linalg does (scipy >= 1.16)."""
    import scipy
    return tuple(int(x) for x in scipy.__version__.split(".")[:2]) >= (1, 16)
