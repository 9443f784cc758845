"""numpy's higher-order functions, which call a user's function: apply_along_axis,
apply_over_axes, fromfunction, vectorize.

Each calls the user's function on traced slices from Python, so whatever that function does is
recorded as usual; only the assembling of the results (``stack``, ``moveaxis``) is added.
"""
import numpy as _onp

import fgrad.numpy as fnp
from ..core.table import Spec
from ..core.tracer import contains_tracer, map_tracers, value_for_shape
from .broadcasting import shape_of
from .wrapping import differentiable


def _summary(v):
    return fnp.sum(fnp.sin(v) * v)


@differentiable(_onp.apply_along_axis,
                Spec([(((3, 2),), {"axis": 0}), (((2, 3, 2),), {"axis": 1}),
                      (((3, 2),), {"axis": -1, "scalar": True})],
                     call=lambda f, x, axis, scalar=False: f(
                         _summary if scalar else lambda v: fnp.outer(v, v), axis, x)))
def apply_along_axis(func1d, axis, arr, *args, **kwargs):
    """Runs ``func1d`` on each 1-d slice in Python (as numpy does) and stacks the results,
    which take the place of ``axis``; derivatives flow through whatever ``func1d`` does."""
    arr = fnp.asarray(arr)
    nd = len(shape_of(arr))
    axis = int(axis) % nd
    rest = [i for i in range(nd) if i != axis]
    moved = fnp.transpose(arr, rest + [axis])
    outer = shape_of(moved)[:-1]
    results = [fnp.asarray(func1d(moved[idx], *args, **kwargs)) for idx in _onp.ndindex(outer)]
    out = fnp.reshape(fnp.stack(results), outer + shape_of(results[0]))
    # the function's k output dims (last in ``out``) go where ``axis`` was
    k = len(shape_of(results[0]))
    lead = list(range(axis))
    return fnp.transpose(out, lead + list(range(nd - 1, nd - 1 + k)) + list(range(axis, nd - 1)))


@differentiable(_onp.apply_over_axes,
                Spec([(((2, 3),), {"axes": (0,)}), (((2, 3, 2),), {"axes": (0, 2)})],
                     call=lambda f, x, axes: f(fnp.sum, x, axes)))
def apply_over_axes(func, a, axes):
    """``func(a, axis)`` for each axis in turn, a reduced axis restored as size 1 (numpy's
    rule); derivatives flow through ``func``."""
    a = fnp.asarray(a)
    for axis in (axes,) if _onp.ndim(axes) == 0 else axes:
        nd = len(shape_of(a))
        b = func(a, axis)
        if len(shape_of(b)) == nd - 1:
            b = fnp.expand_dims(b, int(axis) % nd)
        elif len(shape_of(b)) != nd:
            raise ValueError("function is not returning an array of the correct shape")
        a = b
    return a


@differentiable(_onp.fromfunction,
                Spec([(((3, 2),), {})],
                     call=lambda f, x: f(lambda i, j: x * i + fnp.sin(x) * j, (3, 2))))
def fromfunction(function, shape, *, dtype=float, like=None, **kwargs):
    """Calls ``function`` on index grids, as numpy does: derivatives come from the traced
    values ``function`` closes over."""
    return _onp.fromfunction(function, shape, dtype=dtype, **kwargs)


class vectorize(_onp.vectorize):
    """numpy.vectorize, also on traced values: ``pyfunc`` runs on each element (on each set
    of core slices, with ``signature``) in Python, as numpy runs it, so whatever it does is
    recorded, a branch on an element's value included (under ``jit`` such a branch is a guard;
    under ``vmap`` it is refused, as a branch on a batched value); the results are stacked.
    On plain values it is numpy's own. ``excluded`` arguments are passed as they are;
    ``otypes`` gives the outputs' dtypes.

    >>> import numpy, fgrad, fgrad.numpy as np
    >>> relu_sq = np.vectorize(lambda v: v * v if v > 0 else 0.0 * v)
    >>> fgrad.grad(lambda x: np.sum(relu_sq(x)))(numpy.array([-1.0, 2.0, 0.5])).tolist()
    [0.0, 4.0, 1.0]
    """

    def __call__(self, *args, **kwargs):
        if not contains_tracer((args, kwargs)):
            return super().__call__(*args, **kwargs)
        return _vectorized(self, args, kwargs)


def _vectorized(vec, args, kwargs):
    """``vec``'s call on arguments some of which are traced (see ``vectorize``)."""
    places = [i for i in range(len(args)) if i not in vec.excluded] + \
        [k for k in kwargs if k not in vec.excluded]
    values = [fnp.asarray(args[p] if isinstance(p, int) else kwargs[p]) for p in places]
    cores = [()] * len(values) if vec.signature is None else vec._in_and_out_core_dims[0]
    if len(cores) != len(values):  # (numpy's message)
        raise TypeError(f"wrong number of positional arguments: expected {len(cores)}, got "
                        f"{len(values)}")
    shapes = [shape_of(v) for v in values]
    for s, core in zip(shapes, cores):
        if len(s) < len(core):
            raise ValueError(f"vectorize: an input has {len(s)} dimension(s), fewer than its "
                             f"core dimensions {core} in the signature {vec.signature!r}")
    loop = _onp.broadcast_shapes(*[s[:len(s) - len(c)] for s, c in zip(shapes, cores)])
    if 0 in loop:  # (numpy's result, or its error, for no element at all: no value is read)
        return _onp.vectorize.__call__(vec, *map_tracers(args, value_for_shape),
                                       **map_tracers(kwargs, value_for_shape))
    values = [fnp.broadcast_to(v, loop + s[len(s) - len(c):])
              for v, s, c in zip(values, shapes, cores)]

    def call(idx):
        full, kw = list(args), dict(kwargs)
        for p, v in zip(places, values):
            if isinstance(p, int):
                full[p] = v[idx]
            else:
                kw[p] = v[idx]
        return vec.pyfunc(*full, **kw)

    results = [call(idx) for idx in _onp.ndindex(loop)]
    several = isinstance(results[0], tuple)
    parts = list(zip(*results)) if several else [results]
    outs = [fnp.reshape(fnp.stack([fnp.asarray(r) for r in part]),
                        loop + shape_of(fnp.asarray(part[0]))) for part in parts]
    if vec.otypes:
        outs = [fnp.astype(o, _onp.dtype(t)) for o, t in zip(outs, vec.otypes)]
    return tuple(outs) if several else outs[0]

