"""Batching: ``vmap`` maps a function over an axis of its arguments in one pass.

``BatchTrace`` is a trace beside the tape, the dual numbers and staging. Its tracers hold a
batched value one level down (``_b``) and which of its axes is the batch (``_bdim``); to the
mapped function they look like one example (``x.shape`` has no batch axis). A primitive called
on them runs its batching rule (``prim.batch``, declared beside its VJP and JVP; the families'
rules are in ``fgrad.numpy.batch_rules``) on the batched values: the rule calls
``fgrad.numpy`` on them, so transforms around ``vmap`` see the batched calls. A primitive
without a rule (a user's) runs once per batch element and the results are stacked (correct,
slower).

A value under a batch tracer cannot be read by Python (``bool(x)``, a rule taking a mask from
the values): it is a whole batch, not one example. That raises ``ConcretizationError``, as
JAX's ``vmap`` does, never a silently batched constant.
"""
from typing import Any, Callable
import functools
import sys

import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors
from ..core.fpwarnings import at_user_code, fgrad_code
from ..numpy.array_tracer import ArrayTracer
from ..numpy.batch_rules import example_shape, one_at_a_time
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tracer import (Trace, batches, batching, below, map_tracers, set_shape,
                           value_for_shape)
from .arguments import outputs_of, staged_form

__all__ = ["vmap"]


def _batched(name):
    def compare(self, other):
        return getattr(fnp, name)(self, other)
    return compare


def _library_function_reading():
    """``fgrad.numpy.unique`` (say) where a function of fgrad.numpy or fgrad.scipy reads a
    batched value: the outermost such function (or, failing one, built-in primitive) between
    the read and the first frame of code outside fgrad; None where the reading code is the
    user's own (a branch, ``float(x)``: the tracer's own methods). (The stack is read only
    here, when the error is raised.)"""
    frame, found, primitive = sys._getframe(2), None, None
    while frame is not None and fgrad_code(frame):
        found = _public_function(frame, frame.f_globals["__name__"]) or found
        prim = frame.f_locals.get("prim")
        if getattr(prim, "builtin", False):
            primitive = prim.public_name
        frame = frame.f_back
    return found or primitive


# the public namespaces, the more specific first
_PUBLIC = ("fgrad.numpy.linalg", "fgrad.numpy.fft", "fgrad.numpy.random", "fgrad.numpy",
           "fgrad.scipy.special", "fgrad.scipy.stats", "fgrad.scipy.linalg",
           "fgrad.scipy.signal", "fgrad.scipy.integrate", "fgrad.scipy.optimize")


def _public_function(frame, module):
    """``fgrad.numpy.<name>`` if ``frame`` runs that public function (or a decorator's
    wrapper closing over it), else None."""
    space = next((p for p in _PUBLIC if module.startswith(p + ".") or module == p), None)
    if space is None:
        return None
    names = [frame.f_code.co_name] + [
        getattr(v, "__name__", "") for v in (frame.f_locals.get(n)
                                             for n in frame.f_code.co_freevars) if callable(v)]
    for name in names:
        if name and not name.startswith("_") and callable(
                getattr(sys.modules.get(space), name, None)):
            return f"{space}.{name}"
    return None


class BatchTracer(ArrayTracer):
    """One example of a batch: the batched value ``_b`` (one level down), batch axis ``_bdim``."""

    __slots__ = ("_bdim", "_example")

    def __init__(self, trace, batched, bdim):
        self._trace, self._value, self._bdim, self._base = trace, batched, bdim, None
        self._example = None

    def _read(self):
        called = _library_function_reading()
        if called is not None:  # (fgrad's own function reads them: no branch of the user's)
            raise errors.ConcretizationError(
                f"vmap: {called} reads the values of its batched argument (the shape of its "
                "result, or a choice it makes, depends on them), so it cannot run on a whole "
                "batch at once. Call it on one example at a time, in a loop, or keep it out "
                "of the mapped function.")
        raise errors.ConcretizationError(
            "vmap: the values of a batched array were read by Python (a branch on them, "
            "float(), or a derivative rule that takes a mask from the values): under vmap "
            "they are a whole batch, not one example. Use fgrad.numpy.where for a branch, or "
            "call the function in a loop.")

    @property
    def _meta(self):
        """One example for its class, shape and dtype: the batch's first (a view), so that a
        function staged for one example (``vmap(jit(f))``) is traced on real values, not on
        zeros where ``inv`` would fail and a branch could take the wrong side. Made once
        (a jitted call under ``vmap(grad)`` reads it several times per leaf: its signature,
        and again one level down; sliced anew each time, it was 9% of the call)."""
        e = self._example
        if e is None:
            b = value_for_shape(self._value)
            if _onp.shape(b)[self._bdim] == 0:  # (an empty batch has no first example)
                e = _onp.broadcast_to(_onp.zeros((), _onp.result_type(b)),
                                      example_shape(b, self._bdim))
            else:
                e = b[(slice(None),) * self._bdim + (0,)]
            self._example = e
        return e

    # (one example's, where ``Tracer`` reads the batch's)
    shape = property(lambda self: self._meta.shape, set_shape)
    ndim = property(lambda self: self._meta.ndim)
    size = property(lambda self: self._meta.size)

    def __bool__(self):
        return bool(self._read())

    def __repr__(self):
        return f"BatchTracer(one example of shape {self.shape}, {self._trace!r})"

    # comparisons are batched (their values cannot be read one level down, as other traces do)
    __lt__ = _batched("less")
    __le__ = _batched("less_equal")
    __gt__ = _batched("greater")
    __ge__ = _batched("greater_equal")
    __eq__ = _batched("equal")
    __ne__ = _batched("not_equal")
    __hash__ = None  # type: ignore[assignment]


def _mapped(run, axes, *leaves):
    """``run(leaves)`` mapped over ``axes`` (one per leaf, None for one not mapped), as
    ``vmap`` maps it: the outputs, each batched one along its first axis, and per output leaf
    whether it is batched (Python's bools, constants of a graph staged from this)."""
    size = next(_onp.shape(value_for_shape(x))[a] for x, a in zip(leaves, axes)
                if a is not None)
    trace = BatchTrace(size)
    ins = [x if a is None else BatchTracer(trace, x, a) for x, a in zip(leaves, axes)]
    with batching(trace):
        out = trace.run(lambda *xs: run(list(xs)), ins, "vmap")
    flat, tree, own = outputs_of(trace, out, "vmap")
    return (tree_unflatten(tree, [o if t is None else t._value if t._bdim == 0 else
                                  fnp.moveaxis(t._value, t._bdim, 0)
                                  for o, t in zip(flat, own)]),
            tuple(t is not None for t in own))


class BatchTrace(Trace):
    """A ``vmap`` call: ``size`` examples at once."""

    __slots__ = ("size",)
    sees_all = True
    concrete = False
    tracer_type = BatchTracer

    def __init__(self, size):
        super().__init__("vmap")
        self.size = size

    def process_staged(self, derived, leaves):
        """``vmap(jit(f))``: ``f`` mapped over the leaves this trace batches, staged, one
        level down; its code runs once for the batch (it ran ``f``'s graph node by node,
        each primitive's batching rule in turn: 1.3x slower than ``vmap(f)`` on a small
        MLP). An output batched there is batched along its first axis; one that does not
        depend on the batch stays as it is, as under ``vmap(f)``."""
        if batches()[-1:] != [self]:  # (a vmap inside this one runs: a draw in f is one
            return NotImplemented  # per example of both)
        axes = tuple(x._bdim if x.__class__ is BatchTracer and x._trace is self else None
                     for x in leaves)
        fn = derived(f"vmap over {axes}", lambda run: functools.partial(_mapped, run, axes))
        with below(self):  # (a draw in f, staged inside fn's vmap, is per example there)
            out, batched = fn(*[x if a is None else x._value for x, a in zip(leaves, axes)])
        flat, tree = tree_flatten(out)
        return tree_unflatten(tree, [BatchTracer(self, o, 0) if b else o
                                     for o, b in zip(flat, batched)])

    def process(self, prim, args, params):
        vals, dims, _, _ = self.arguments(prim, args)
        i = 0
        for t in dims:  # (this trace's tracers give their batch axes)
            if t is not None:
                dims[i] = t._bdim
            i += 1
        for v in params.values():
            if isinstance(v, BatchTracer) and v._trace is self:
                raise ValueError(f"vmap: {prim.public_name}'s parameter is batched; only "
                                 "array arguments may be mapped")
        out, bdim = (prim.batch or one_at_a_time)(prim, self.size, vals, dims, **params)
        return BatchTracer(self, out, bdim) if bdim is not None else out

    def each_example(self, fn, args, kwargs):
        """``fn(args, kwargs)`` once per example, this trace's tracers in them replaced by
        that example's value (one level down), the results stacked into one batched value:
        for what has no batched form (a random draw per example)."""
        outs = []
        for i in range(self.size):
            def example(x, i=i):
                if x.__class__ is BatchTracer and x._trace is self:
                    return fnp.take(x._value, i, axis=x._bdim)
                return x
            outs.append(fn(map_tracers(args, example), map_tracers(kwargs, example)))
        return BatchTracer(self, fnp.stack(outs), 0)


# --- vmap -------------------------------------------------------------------------------

def _axes_for(spec, tree_value, what):
    """One axis (or None) per leaf of ``tree_value``, from ``spec``, an int, None, or a
    pytree prefix of it."""
    if spec is None or isinstance(spec, int):
        return [spec] * len(tree_flatten(tree_value)[0])
    if isinstance(spec, (tuple, list)) and isinstance(tree_value, (tuple, list)) \
            and len(spec) == len(tree_value):
        return [a for s, v in zip(spec, tree_value) for a in _axes_for(s, v, what)]
    if isinstance(spec, dict) and isinstance(tree_value, dict) and \
            sorted(spec) == sorted(tree_value):
        return [a for k in sorted(tree_value) for a in _axes_for(spec[k], tree_value[k], what)]
    raise ValueError(f"vmap: {what}={spec!r} does not match the structure it maps "
                     f"({type(tree_value).__name__} of {len(tree_flatten(tree_value)[0])} "
                     "leaves): give an int, None, or a tree of them of the same structure")


def vmap(f: Callable[..., Any], in_axes: Any = 0, out_axes: Any = 0,
         axis_size: int | None = None) -> Callable[..., Any]:
    """``f`` mapped over an axis of its arguments, in one batched pass (JAX's ``vmap``).

    ``in_axes``: the mapped axis of every argument (an int, negative counting from the end),
    ``None`` for an argument passed whole to every example, or a tuple/dict prefix of the
    arguments giving one per argument or leaf; keyword arguments are mapped over their
    leading axis (JAX's rule). ``out_axes`` places the batch axis in the
    results likewise; a result that does not depend on the mapped arguments is broadcast along
    the batch. ``axis_size`` gives the batch size when no argument is mapped. Composes with the
    other transforms in both orders (``vmap(grad(f))`` gives per-example gradients).

    >>> import numpy, fgrad, fgrad.numpy as np
    >>> xs = numpy.array([[1.0, 2.0], [3.0, 4.0]])
    >>> fgrad.vmap(lambda x: np.sum(x ** 2))(xs).tolist()
    [5.0, 25.0]
    >>> fgrad.vmap(fgrad.grad(lambda w, x: np.sum(w * x) ** 2), in_axes=(None, 0))(
    ...     numpy.ones(2), xs).tolist()
    [[6.0, 12.0], [42.0, 56.0]]
    """
    if not callable(f):
        raise TypeError(f"vmap: expected a function, got {type(f).__name__}")
    staged = staged_form(f, "vmap", (in_axes, out_axes, axis_size),
                         lambda g: vmap(g, in_axes, out_axes, axis_size))
    if staged is not None:  # (a jitted f: vmap of it staged whole)
        return staged

    def batched(*args, **kwargs):
        spec = in_axes if not isinstance(in_axes, list) else tuple(in_axes)
        if isinstance(spec, tuple) and len(spec) != len(args):
            raise ValueError(f"vmap: in_axes={in_axes!r} has {len(spec)} entries but the "
                             f"function was called with {len(args)} argument(s)")
        axes = _axes_for(spec, args, "in_axes")
        leaves, in_tree = tree_flatten(args)
        nargs = len(leaves)
        if kwargs:  # (JAX's rule: keyword arguments are mapped over their leading axis,
            # whatever in_axes says; pass an unmapped one positionally with None in in_axes)
            kw_leaves, kw_tree = tree_flatten(kwargs)
            leaves, axes = leaves + kw_leaves, axes + [0] * len(kw_leaves)

        def name(i):
            if i < nargs:
                return f"input leaf {i}"
            for k in sorted(kwargs):  # (in tree_flatten's order)
                i -= len(tree_flatten(kwargs[k])[0])
                if i < nargs:
                    return f"keyword argument {k!r}"

        size, seen = axis_size, []
        for i, (x, ax) in enumerate(zip(leaves, axes)):
            if ax is None:
                continue
            shape = _onp.shape(value_for_shape(x))
            if not -len(shape) <= ax < len(shape):
                raise ValueError(f"vmap: in_axes={ax} for {name(i)} of rank "
                                 f"{len(shape)}: the axis is out of range" + (
                                     "" if i < nargs else " (keyword arguments are mapped "
                                     "over axis 0; pass it positionally with None in in_axes "
                                     "to share it)"))
            n = shape[ax % len(shape)]
            seen.append((i, n, ax))
            if size is None:
                size = n
            elif n != size:
                raise ValueError("vmap got inconsistent sizes for the mapped axes: "
                                 + "; ".join(f"{name(j)} has size {m} along axis {a}"
                                             for j, m, a in seen)
                                 + (f" (axis_size={axis_size})"
                                    if axis_size is not None else ""))
        if size is None:
            raise ValueError("vmap: no argument is mapped (every in_axes is None): give "
                             "axis_size=")
        trace = BatchTrace(size)
        ins = [x if ax is None else
               BatchTracer(trace, x, ax % len(_onp.shape(value_for_shape(x))))
               for x, ax in zip(leaves, axes)]
        with at_user_code(), batching(trace):
            bargs = tree_unflatten(in_tree, ins[:nargs])
            if kwargs:
                bkwargs = tree_unflatten(kw_tree, ins[nargs:])
                out = trace.run(lambda *a: f(*a, **bkwargs), bargs, "vmap")
            else:
                out = trace.run(f, bargs, "vmap")
        out_leaves, out_tree, own = outputs_of(trace, out, "vmap")
        oaxes = _axes_for(out_axes if not isinstance(out_axes, list) else tuple(out_axes),
                          out, "out_axes")
        results = []
        for i, (o, t, ax) in enumerate(zip(out_leaves, own, oaxes)):
            if t is not None:
                if ax is None:
                    raise ValueError(f"vmap: output leaf {i} depends on the mapped inputs, "
                                     "but out_axes is None for it")
                v, d = t._value, t._bdim
            else:  # the same for every example: broadcast along the batch
                if ax is None:
                    results.append(o)
                    continue
                o = fnp.asarray(o)
                v, d = fnp.broadcast_to(o, (size,) + tuple(_onp.shape(value_for_shape(o)))), 0
            rank = len(_onp.shape(value_for_shape(v)))
            if not -rank <= ax < rank:
                raise ValueError(f"vmap: out_axes={ax} for output leaf {i} of rank {rank - 1}:"
                                 " the axis is out of range")
            ax %= rank
            results.append(v if d == ax else fnp.moveaxis(v, d, ax))
        return tree_unflatten(out_tree, results)

    batched.__wrapped__ = f  # type: ignore[attr-defined]
    batched.__name__ = f"vmap({errors.function_name(f)})"
    return batched
