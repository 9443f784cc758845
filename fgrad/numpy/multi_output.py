"""Primitives with several outputs (``eigh``'s values and vectors, ``svd``'s factors).

The table stays single-output: the outputs travel packed, ravelled into one vector, and are
split again with ``getitem``/``reshape``, which are differentiable, so nesting works unchanged.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import define
from ..tracer import innermost


def define_multi(name, impl, out_shapes, vjp, jvp, *, spec=None, doc=None):
    """A primitive named ``name`` with several outputs; the rules see them as tuples:

        impl(*args, **params)                 -> tuple of arrays (all of one dtype)
        out_shapes(*args, **params)           -> their shapes (from the arguments' shapes)
        vjp(argnum, gs, outs, *args, **params) -> cotangent of args[argnum]; ``gs`` is a tuple
                                                 with one cotangent per output
        jvp(tangents, outs, *args, **params)  -> tuple of output tangents; ``tangents`` has
                                                 one entry per argument (None for zero)

    Returns ``multi(*args, **params) -> tuple of outputs``; the primitive is ``multi.prim``.
    """
    def packed_impl(*args, **params):
        return _onp.concatenate([_onp.ravel(o) for o in impl(*args, **params)])

    def unpack(v, args, params):
        outs, start = [], 0
        for shape in out_shapes(*args, **params):
            n = int(_onp.prod(shape, dtype=int))
            outs.append(fnp.reshape(fnp.getitem(v, slice(start, start + n)), shape))
            start += n
        return tuple(outs)

    def pack(parts, like):
        parts = [fnp.zeros_like(innermost(o)) if p is None else p for p, o in zip(parts, like)]
        return fnp.concatenate([fnp.ravel(p) for p in parts])

    def vjp_by_argnum(i, g, ans, *args, **params):
        return vjp(i, unpack(g, args, params), unpack(ans, args, params), *args, **params)

    def jvp_joint(tangents, ans, *args, **params):
        outs = unpack(ans, args, params)
        return pack(jvp(tangents, outs, *args, **params), outs)

    p = define(name, packed_impl, spec=spec, doc=doc, vjp_by_argnum=vjp_by_argnum)
    p.jvp_joint = jvp_joint

    def multi(*args, **params):
        return unpack(p(*args, **params), args, params)

    multi.prim = p
    return multi
