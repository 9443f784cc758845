"""How fgrad.numpy's functions stand in for numpy's.

``traced_version_of(np_fn)`` decorates the traced path of a function: a call holding no tracer
(anywhere in its arguments, lists included) goes to numpy itself, untouched, so values, dtypes
and errors are numpy's exactly; a call holding one runs the decorated function, which
normalises the arguments and calls primitives. The public function carries numpy's docstring,
with the traced function's own (what fgrad adds: kinks, refused arguments) in front of it.
"""
import functools
import inspect

import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors
from ..core.table import Primitive, register_function, written_out, zero_rule
from ..core.tracer import (Tracer, contains_tracer, differentiated, map_tracers, value_for_shape,
                           without_derivative)
from .batch_rules import batch_first
from .namespace import values_only


def traced_version_of(np_fn):
    def decorate(traced):
        @functools.wraps(np_fn)
        def wrapper(*args, **kwargs):
            if contains_tracer(args) or (kwargs and contains_tracer(kwargs)):
                if kwargs and kwargs.get("out") is not None:
                    return _into_out(_public_name(np_fn), traced, args, kwargs)
                return traced(*args, **kwargs)
            return np_fn(*args, **kwargs)

        if traced.__doc__:  # what fgrad adds (kinks, refused arguments) before numpy's text
            wrapper.__doc__ = f"fgrad: {inspect.cleandoc(traced.__doc__)}\n\n{np_fn.__doc__ or ''}"
        return wrapper

    return decorate


def _public_name(np_fn):
    """fgrad's name of the function standing in for ``np_fn`` (``fgrad.numpy.fft.fft``,
    ``fgrad.scipy.signal.convolve``), from its module's public part."""
    if isinstance(np_fn, _onp.ufunc) and getattr(_onp, np_fn.__name__, None) is not np_fn:
        return f"fgrad.scipy.special.{np_fn.__name__}"  # (its ufuncs say they are numpy's)
    parts = (getattr(np_fn, "__module__", None) or "numpy").split(".")
    public = [p for p in parts[1:] if not p.startswith("_") and p != "lib"]
    return ".".join(["fgrad", parts[0], *public, np_fn.__name__])


def _into_out(name, traced, args, kwargs):
    """``np.<name>(..., out=buf)`` on traced values: the result computed without ``out`` and
    written into ``buf`` as ``buf[...] = result`` writes (a traced ``buf``, its views and
    aliases see it: ``fgrad.numpy.views``), ``buf`` returned, as numpy does. A plain ``buf``
    cannot hold a traced result (refused, saying so); its shape must be the result's."""
    kwargs = dict(kwargs)
    out = kwargs.pop("out")
    if isinstance(out, tuple) and len(out) == 1:  # (numpy takes out=(buf,) too)
        out = out[0]
    return written_out(name, out, traced(*args, **kwargs))


def differentiable(np_fn, spec, name=None, numpy_values=False):
    """``traced_version_of(np_fn)``, registered in the table's ``FUNCTIONS`` with ``spec``, so
    the generated tests check the public function itself, both modes, to ``spec.order``.

    ``name`` is numpy's qualified name (default ``np_fn.__name__``; ``"linalg.norm"`` for
    submodules). Traced forward values must equal numpy's bit for bit; a composite that
    computes them in another order (``median`` by sorting) passes ``numpy_values=True`` to have
    its values replaced by numpy's own, its derivatives kept."""
    def decorate(traced):
        if numpy_values:
            body = traced

            @functools.wraps(body)  # keeps the docstring fgrad's notes are taken from
            def traced(*args, **kwargs):
                return with_numpy_values(body(*args, **kwargs), np_fn, args, kwargs)

        public = traced_version_of(np_fn)(traced)
        return register_function(name or np_fn.__name__, public, np_fn, spec)

    return decorate


# The derivative of its first argument with the value of its second (numpy's, without
# derivative: plain, or staged or batched where the arguments are). Its rules are exact only
# because the value differs from the first argument by rounding alone, which no finite
# difference can check, so it stays outside the checked table; only the wrapper below uses it.
_numpy_value = Primitive(
    "numpy_value", lambda y, value: value,
    # derivatives pass through, in the dtype of the side they go to (numpy's value may be
    # float32 where the composite computed in float64)
    vjps={0: lambda g, ans, y, value: _as_dtype_of(g, y), 1: zero_rule},
    jvps={0: lambda t, ans, y, value: _as_dtype_of(t, value), 1: zero_rule},
    # (called again on the batches, so a transform around vmap still sees the first argument)
    batch=lambda prim, size, vals, dims: (
        prim(*[batch_first(v, d, size) for v, d in zip(vals, dims)]), 0))

# np_fn -> the primitive computing it on values (per output, for a tuple), without derivative
_REFERENCES: dict = {}


class _Hole:
    """Where a traced value stood in a call's arguments (``numpy_reference``)."""
    __slots__ = ("k",)

    def __init__(self, k):
        self.k = k

    def __repr__(self):  # (as a graph's listing shows the call: the k-th traced argument)
        return f"<traced argument {self.k}>"


def _holed(x, traced):
    """``x`` (arguments, lists, dicts) with each traced value below the differentiating
    transforms put in ``traced`` and a ``_Hole`` left in its place; plain values stay."""
    def hole(t):
        t = without_derivative(t)
        if not isinstance(t, Tracer):
            return t
        traced.append(t)
        return _Hole(len(traced) - 1)
    return map_tracers(x, hole)


def _filled(x, values):
    return map_tracers(x, lambda h: values[h.k], _Hole)


def _reference(np_fn, index):
    """The primitive (no derivative) computing ``np_fn(*args, **kwargs)`` (its ``index``-th
    output) from the traced values and the call with holes where they stand."""
    key = (np_fn, index)
    prim = _REFERENCES.get(key)
    if prim is None:
        def fn(*values, call):
            args, kwargs = _filled(call, values)
            out = np_fn(*args, **kwargs)
            return out if index is None else out[index]
        name = getattr(np_fn, "__name__", "a_numpy_function")
        # (listed, and named in numpy's warnings, as numpy's function)
        prim = _REFERENCES[key] = values_only(fn, f"numpy_value_of_{name}", listed_name=name)
    return prim


def _as_dtype_of(x, like):
    want = _onp.result_type(value_for_shape(like))
    return x if _onp.result_type(value_for_shape(x)) == want else fnp.astype(x, want)


def numpy_reference(np_fn, *args, **kwargs):
    """numpy's own result on the arguments' values below the differentiating transforms
    (numpy's checks and errors, and the values a composite's are replaced with): plain, or,
    where a staged function or ``vmap`` holds them, computed by a primitive without
    derivative (at each replay, per example), so no value is read."""
    traced: list = []
    call = _holed((args, kwargs), traced)
    if not traced:
        return np_fn(*call[0], **call[1])
    # (the structure of numpy's result, from the values' class and shape: no value is read)
    args, kwargs = _filled(call, [value_for_shape(v) for v in traced])
    shape = np_fn(*args, **kwargs)
    if isinstance(shape, tuple):
        parts = [_reference(np_fn, i)(*traced, call=call) for i in range(len(shape))]
        return type(shape)(*parts) if hasattr(shape, "_fields") else tuple(parts)
    return _reference(np_fn, None)(*traced, call=call)


def with_numpy_values(result, np_fn, args, kwargs):
    """``result`` (an array or tuple of arrays) with the values numpy's ``np_fn`` gives
    (``result`` itself where they cannot be read: see ``numpy_reference``)."""
    value = numpy_reference(np_fn, *args, **kwargs)
    if value is None:
        return result
    if isinstance(result, tuple):
        parts = [r if not contains_tracer(r) else _numpy_value(r, v)
                 for r, v in zip(result, value)]
        # a namedtuple (numpy's QRResult, ...) is built from fields, a tuple from an iterable
        return type(result)(*parts) if hasattr(result, "_fields") else tuple(parts)
    return _numpy_value(result, value) if contains_tracer(result) else value


def refuse_traced(name, arg, value, why):
    """Raise where ``value``, argument ``arg`` of ``fgrad.<name>``, which takes it as a fixed
    value (``why``), holds a tracer: differentiated, that it has no derivative; staged or
    batched, how to keep it fixed (the library it would go to fails on it, or reads it)."""
    if contains_tracer(value):
        raise (errors.no_derivative_in if differentiated(value) else
               errors.fixed_argument_traced)(name, arg, why)


def as_tuple(x):
    """An int-or-sequence argument (a shape, an axis) as a tuple."""
    return (x,) if isinstance(x, (int, _onp.integer)) else tuple(x)


def inverse_permutation(perm):
    """The axes that undo ``transpose(x, perm)``, as a tuple of ints."""
    return tuple(int(i) for i in _onp.argsort(perm))


def unsupported_kwargs(name, kwargs):
    """Traced calls take numpy's core arguments; the rest (``out=``, ``casting=``, ...) are
    refused by name rather than ignored. Arguments left at None are no request at all."""
    for v in kwargs.values():
        if v is not None:
            break
    else:  # (the usual call: nothing given; checked on every traced call of these functions)
        return
    kwargs = {k: v for k, v in kwargs.items() if v is not None}
    if "out" in kwargs:
        raise errors.out_argument(name)
    if kwargs:
        raise NotImplementedError(
            f"fgrad.numpy.{name}: the argument(s) {', '.join(sorted(kwargs))} are not supported "
            "on traced values; call it without them (or on fgrad.stop_gradient(x)).")
