"""numpy's ufunc methods on fgrad's ufunc primitives: ``np.add.outer``, ``np.add.reduce``,
``np.maximum.accumulate``, ``np.add.reduceat``, ``np.add.at``.

On plain values each is numpy's own method, untouched. On traced values they are built from
the primitive itself (so its rules give the derivatives) or, where numpy computes the same
values that way, from the reductions: ``add.reduce`` is ``sum``, ``multiply.accumulate`` is
``cumprod``, ``maximum.reduce`` is ``max`` (ties share evenly, as ``max``'s do). The other
binary ufuncs reduce and accumulate as a left fold along the axis, numpy's order for them,
a reduction from ``initial`` or else the ufunc's identity as numpy's (``hypot.reduce`` from
0), skipping the entries ``where`` masks. ``dtype`` casts the operand first.
``at`` writes in place: on a traced value it is refused, naming the functional form.

>>> import numpy, fgrad, fgrad.numpy as np
>>> fgrad.grad(lambda x: np.sum(np.multiply.outer(x, x)))(numpy.array([1.0, 2.0])).tolist()
[6.0, 6.0]
>>> float(fgrad.grad(lambda x: np.logaddexp.reduce(x))(numpy.zeros(2))[0])
0.5
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors
from ..core.table import Primitive
from ..core.tracer import Tracer, contains_tracer, read_values, value_dtype, value_for_shape
from . import views
from .broadcasting import dtype_of
from .wrapping import unsupported_kwargs, with_numpy_values

# the ufuncs whose reduce and accumulate are fgrad's reductions (same values as numpy's)
_REDUCE = {"add": "sum", "multiply": "prod", "maximum": "max", "minimum": "min"}
_ACCUMULATE = {"add": "cumsum", "multiply": "cumprod"}


class UfuncPrimitive(Primitive):
    """A primitive whose implementation is a numpy ufunc, with the ufunc's methods. (Methods
    of the class rather than attributes set on each primitive: instances keep the layout
    every primitive shares, which the hot paths' attribute reads are fast on.)"""

    def outer(self, *args, **kwargs):
        return _dispatch(self, "outer", _outer, args, kwargs)

    def reduce(self, *args, **kwargs):
        return _dispatch(self, "reduce", _reduce, args, kwargs)

    def accumulate(self, *args, **kwargs):
        return _dispatch(self, "accumulate", _accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs):
        return _dispatch(self, "reduceat", _reduceat, args, kwargs)

    def at(self, *args, **kwargs):
        return _dispatch(self, "at", _at, args, kwargs)


def _dispatch(prim, name, traced, args, kwargs):
    """numpy's method on plain values; built from ``prim`` on traced ones."""
    if not (contains_tracer(args) or (kwargs and contains_tracer(kwargs))):
        return getattr(prim.impl, name)(*args, **kwargs)
    if name != "at" and prim.impl.nin != 2:  # (numpy's rule and message)
        raise ValueError(f"{'outer product' if name == 'outer' else name} only supported "
                         "for binary functions")
    return traced(prim, *args, **kwargs)


def _shape(x):
    return _onp.shape(value_for_shape(x))


def _outer(prim, a, b, **kwargs):
    unsupported_kwargs(f"{prim.name}.outer", kwargs)
    a, b = fnp.asarray(a), fnp.asarray(b)
    return prim(fnp.reshape(a, _shape(a) + (1,) * len(_shape(b))), b)


def _along(a, axis):
    """``a`` with ``axis`` first (None: ravelled), and the axis' length."""
    a = fnp.asarray(a)
    if axis is None:
        a = fnp.ravel(a)
        axis = 0
    if isinstance(axis, tuple):
        raise NotImplementedError("fgrad.numpy's ufunc methods: a tuple axis is not supported "
                                  "on traced values; reduce one axis at a time")
    axis = axis % max(len(_shape(a)), 1)
    return fnp.moveaxis(a, axis, 0), axis


def _fold(prim, x, start=None, where=None):
    """The left fold of ``prim`` over the first axis of ``x`` from ``start`` (None: from
    ``x[0]``), skipping the entries where ``where`` (moved as ``x``) is false, and its running
    values."""
    runs = [x[0] if start is None else start]
    for i in range(0 if start is not None else 1, _shape(x)[0]):
        step = prim(runs[-1], x[i])
        runs.append(step if where is None else fnp.where(where[i], step, runs[-1]))
    return runs


def _reduce(prim, a, axis=0, dtype=None, out=None, keepdims=False, initial=_onp._NoValue,
            where=True, **kwargs):
    unsupported_kwargs(f"{prim.name}.reduce", {"out": out, **kwargs})
    given = {} if initial is _onp._NoValue else {"initial": initial}
    if where is not True:
        given["where"] = where
    if prim.name in _REDUCE:
        name = _REDUCE[prim.name]
        if dtype is not None and name in ("sum", "prod"):
            given["dtype"] = dtype
        elif dtype is not None:  # (max and min take none: in any dtype they pick an entry)
            a = fnp.asarray(a).astype(dtype)
        return getattr(fnp, name)(a, axis=axis, keepdims=bool(keepdims), **given)
    # numpy's own method on a stand-in of a's shape and dtype: its errors (no identity for a
    # where mask, several axes of an order-dependent fold) and its result's dtype
    plain = {k: value_for_shape(v) if contains_tracer(v) else v for k, v in given.items()}
    like = _onp.broadcast_to(_onp.zeros((), value_dtype(value_for_shape(a))), _shape(a))
    with _onp.errstate(all="ignore"):  # (zeros: a stand-in, whose values mean nothing)
        kind = prim.impl.reduce(like, axis=axis, dtype=dtype, keepdims=keepdims, **plain)
    x, ax = _along(a, axis)
    x = x if dtype is None else x.astype(dtype)
    # numpy folds from the ufunc's identity where it has one (hypot.reduce([-3.0]) is 3.0)
    start = initial if initial is not _onp._NoValue else prim.impl.identity
    if start is not None and not contains_tracer(start):
        start = _onp.asarray(start, _onp.result_type(kind))[()]
    if _shape(x)[0] == 0:  # numpy's initial or identity (or its error, above)
        return kind if start is None or not contains_tracer(start) else fnp.full(
            _shape(kind), start, _onp.result_type(kind))
    if where is not True:
        where = fnp.broadcast_to(where, _shape(a))
        where = fnp.ravel(where) if axis is None else fnp.moveaxis(where, ax, 0)
    r = _fold(prim, x, start, None if where is True else where)[-1]
    if keepdims:
        r = fnp.expand_dims(r, ax if axis is not None else tuple(range(len(_shape(a)))))
    return r


def _accumulate(prim, a, axis=0, dtype=None, out=None, **kwargs):
    unsupported_kwargs(f"{prim.name}.accumulate", {"out": out, **kwargs})
    if prim.name in _ACCUMULATE:
        return getattr(fnp, _ACCUMULATE[prim.name])(a, axis=axis, dtype=dtype)
    x, ax = _along(a, axis)
    x = x if dtype is None else x.astype(dtype)
    return fnp.moveaxis(fnp.stack(_fold(prim, x)), 0, ax)


def _reduceat(prim, a, indices, axis=0, dtype=None, out=None, **kwargs):
    unsupported_kwargs(f"{prim.name}.reduceat", {"dtype": dtype, "out": out, **kwargs})
    if contains_tracer(indices):
        raise NotImplementedError(f"fgrad.numpy.{prim.name}.reduceat: traced indices are not "
                                  "supported (they have no derivative): pass a plain array")
    x, ax = _along(a, axis)
    idx = [int(i) for i in _onp.ravel(indices)]
    n = _shape(x)[0]
    parts = []
    for k, start in enumerate(idx):
        stop = idx[k + 1] if k + 1 < len(idx) else n
        # numpy's rule: the slice [start, stop) when start < stop, else the entry at start
        parts.append(_fold(prim, x[start:stop])[-1] if start < stop else x[start])
    # (numpy adds a slice's first entry to the pairwise sum of the rest: its values replace
    # the fold's, which differ by rounding; the derivatives are the fold's, the same)
    return with_numpy_values(fnp.moveaxis(fnp.stack(parts), 0, ax), prim.impl.reduceat,
                             (a, indices), {"axis": axis})


def call_into(prim, args, out, params):
    """``prim(*args, out=out, **params)`` where a value is traced: the result written into
    ``out`` (an array, or a tuple of one) as numpy writes it (``views.write_whole``; where
    ``where`` is false ``out`` keeps its entries), after numpy's checks of the cast
    (``same_kind``) and the shapes; returns the array written, as numpy does. A plain ``out``
    cannot hold a traced result (``TracerMutationError``)."""
    where = params.pop("where", True)
    where = True if where is None else where
    unsupported_kwargs(prim.name, params)  # (dtype=, casting=, ...: refused by name)
    target = out
    if out.__class__ is tuple:
        if len(out) != prim.impl.nout:
            raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
        target = out[0]
    if not isinstance(target, Tracer):
        if contains_tracer(args) or contains_tracer(where):
            raise errors.written_into_plain(prim.public_name)
        return prim.impl(*args, out=out, where=where)  # (all plain: numpy's, at once)
    result = prim(*args)

    def written():
        dtype, shape = dtype_of(target), _shape(target)
        if not _onp.can_cast(dtype_of(result), dtype, "same_kind"):
            raise TypeError(f"Cannot cast ufunc '{prim.name}' output from "
                            f"{dtype_of(result)!r} to {dtype!r} with casting rule 'same_kind'")
        try:
            full = _onp.broadcast_shapes(_shape(result), shape)
        except ValueError:
            raise ValueError(f"operands could not be broadcast together with the output "
                             f"operand's shape {shape} (the result's: {_shape(result)})")
        if full != shape:
            raise ValueError(f"non-broadcastable output operand with shape {shape} doesn't "
                             f"match the broadcast shape {full}")
        new = views.in_dtype(result, dtype)
        new = new if where is True else fnp.where(where, new, target)
        return new if _shape(new) == shape else fnp.broadcast_to(new, shape)

    views.write_whole(target, written, f"np.{prim.name}(..., out=...)")
    return target


# ufunc.at -> the method of fgrad.numpy.at(x)[idx] doing the same update (anything else: apply)
_AT_UPDATES = {"add": "add", "subtract": "add", "multiply": "multiply", "maximum": "max",
               "minimum": "min", "divide": "divide", "true_divide": "divide", "power": "power"}


def _at(prim, a, indices, b=None):
    """``ufunc.at(a, indices, b)``: on a traced ``a``, numpy's write (``views.write_whole``)
    of ``fgrad.numpy.at(a)[indices]``'s update (repeated indices apply each value in turn,
    as numpy's); a plain ``a`` cannot hold traced values."""
    method = _AT_UPDATES.get(prim.name)
    if not isinstance(a, Tracer):
        update = (f"{method}({'-v' if prim.name == 'subtract' else 'v'})" if method else
                  f"apply(lambda e: fgrad.numpy.{prim.name}(e, v))")
        raise errors.TracerMutationError(
            f"fgrad.numpy.{prim.name}.at writes into its first argument in place, which a "
            f"plain array given traced values cannot hold; write x = fgrad.numpy.at(x)[idx]."
            f"{update}, which returns a new array (and works on plain arrays too)")

    def written():
        at = fnp.at(a)[read_values(indices)]
        if method is not None:
            new = getattr(at, method)(fnp.negative(b) if prim.name == "subtract" else b)
        else:  # (a unary ufunc, or another binary one: indices named once each)
            new = at.apply(lambda e: prim(e) if b is None else prim(e, b))
        return views.in_dtype(new, dtype_of(a))

    views.write_whole(a, written, f"np.{prim.name}.at(x, ...)")
