"""Primitives with several outputs (``eigh``'s values and vectors, ``svd``'s factors).

The table stays single-output: the outputs travel packed, ravelled into one vector, and are
split again with ``getitem``/``reshape``, which are differentiable, so nesting works unchanged.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import define
from ..core.tracer import value_for_shape
from .batch_rules import example_shape
from .broadcasting import dtype_of


def define_multi(name, impl, out_shapes, vjp, jvp, *, spec=None, doc=None, batch=None,
                 jvp_reads_outputs=True, **fields):
    """A primitive named ``name`` with several outputs; the rules see them as tuples:

        impl(*args, **params)                 -> tuple of arrays (all of one dtype)
        out_shapes(*args, **params)           -> their shapes (from the arguments' shapes)
        vjp(argnum, gs, outs, *args, **params) -> cotangent of args[argnum]; ``gs`` is a tuple
                                                 with one cotangent per output
        jvp(tangents, outs, *args, **params)  -> tuple of output tangents; ``tangents`` has
                                                 one entry per argument (None for zero)

    ``batch`` is a batching rule for ``impl``'s own batched call (outputs with the batch axis
    first: numpy's stacked forms); the packed outputs are regrouped by example.
    ``jvp_reads_outputs=False``: ``jvp`` gets ``outs=None`` (for ``jet``, a JVP rule that
    reads no output expands in O(K^2), one that does one order at a time).

    Returns ``multi(*args, **params) -> tuple of outputs``; the primitive is ``multi.prim``.
    """
    def packed_impl(*args, **params):
        return _onp.concatenate([_onp.ravel(o) for o in impl(*args, **params)])

    def unpack(v, args, params):
        outs, start = [], 0
        for out_shape in out_shapes(*args, **params):
            n = int(_onp.prod(out_shape, dtype=int))
            outs.append(fnp.reshape(fnp.getitem(v, slice(start, start + n)), out_shape))
            start += n
        return tuple(outs)

    def pack(parts, like, args, params, dtype):
        if like is None:  # (zeros from the shapes, without reading the outputs)
            parts = [fnp.zeros(s, dtype) if p is None else p
                     for p, s in zip(parts, out_shapes(*args, **params))]
        else:
            parts = [fnp.zeros_like(value_for_shape(o)) if p is None else p
                     for p, o in zip(parts, like)]
        return fnp.concatenate([fnp.ravel(p) for p in parts])

    def vjp_by_argnum(i, g, ans, *args, **params):
        return vjp(i, unpack(g, args, params), unpack(ans, args, params), *args, **params)

    def jvp_joint(tangents, ans, *args, **params):
        outs = unpack(ans, args, params) if jvp_reads_outputs else None
        return pack(jvp(tangents, outs, *args, **params), outs, args, params, dtype_of(ans))

    def batched(prim, size, vals, dims, **params):
        # the batch's packed outputs are one run per output: each made (size, its length)
        flat, _ = batch(prim, size, vals, dims, **params)
        one = [_onp.zeros(example_shape(v, d)) for v, d in zip(vals, dims)]
        parts, start = [], 0
        for s in out_shapes(*one, **params):
            n = size * int(_onp.prod(s, dtype=int))
            parts.append(fnp.reshape(fnp.getitem(flat, slice(start, start + n)), (size, -1)))
            start += n
        return fnp.concatenate(parts, axis=1), 0

    p = define(name, packed_impl, spec=spec, doc=doc, vjp_by_argnum=vjp_by_argnum,
               jvp_joint=jvp_joint, batch=batched if batch is not None else None, **fields)

    def multi(*args, **params):
        return unpack(p(*args, **params), args, params)

    multi.prim = p
    return multi
