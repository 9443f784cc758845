"""Which values are plain, immutable, leaves or another library's arrays: the class tests the
hot paths make.

Each set holds exact classes (``x.__class__ in S``, one hash lookup), so it is a fast path,
never the whole answer: a class outside it takes the slower, general check of the code that
consults it. numpy's ``float64`` and ``complex128`` subclass Python's ``float`` and
``complex``, so they are listed apart.
"""
import numpy as _onp

_ndarray = _onp.ndarray

# operands that hold no tracer for certain: a primitive called on these only runs numpy at
# once, and a tracer's operator with one of them as the other operand goes to its own trace
PLAIN_OPERANDS = frozenset([float, int, _onp.float64, _onp.float32, _ndarray])

# plain real values that are never copied (nothing can change them) and are not complex
IMMUTABLE_REALS = frozenset([float, int, bool, _onp.float64, _onp.float32])

# values that are a pytree leaf and a transform's acceptable input or output as they are
LEAVES = frozenset([float, int, bool, complex, _ndarray, _onp.float64, _onp.float32,
                    _onp.complex128])

# Python's own numbers (exact classes), which a transform turns into numpy values
PYTHON_NUMBERS = frozenset([bool, int, float, complex])

# numpy's real floats: with ndarrays, the values a trace's hot path expects under its tracers
NUMPY_FLOATS = frozenset([_onp.float64, _onp.float32])


def strong(vals, traced):
    """``vals`` with the Python numbers at the positions where ``traced`` is not None (a
    transform's inputs, kept Python numbers so that numpy promotes them as numbers) made
    numpy scalars, for the derivative rules: a rule's arithmetic on them is then numpy's
    (``1 / x`` at 0.0 is inf, not Python's ZeroDivisionError; ``x ** 0.5`` of a negative
    number nan, not a Python complex)."""
    out = None
    for i, v in enumerate(vals):
        if v.__class__ in PYTHON_NUMBERS and traced[i] is not None:
            if out is None:
                out = list(vals)
            out[i] = _STRONG[v.__class__](v)
    return vals if out is None else out


_STRONG = {bool: _onp.bool_, int: _onp.int_, float: _onp.float64, complex: _onp.complex128}


def copied(v):
    """A copy of a plain array; any other value as it is (numbers are immutable, a tracer's
    value belongs to its trace). The one way a transform hands out or keeps a constant that
    the caller's code could change in place."""
    return v.__copy__() if v.__class__ is _ndarray else v  # (order "K": its memory order kept)


_FOREIGN = {}


def foreign_array(v):
    """Whether ``v`` is an array of another library that implements numpy's dispatch protocols
    (Dask, CuPy): not an ndarray or numpy scalar, and not a tracer (fgrad's tracers implement
    the protocols too, and say so by ``_fgrad_tracer``). One dict lookup per class."""
    cls = v.__class__
    known = _FOREIGN.get(cls)
    if known is None:
        known = _FOREIGN[cls] = (
            hasattr(cls, "__array_function__") and hasattr(cls, "__array_ufunc__")
            and hasattr(cls, "shape") and hasattr(cls, "dtype")
            and not issubclass(cls, (_onp.ndarray, _onp.generic))
            and not hasattr(cls, "_fgrad_tracer"))
    return known


def first_foreign(args):
    """The first argument (or entry of a list or tuple argument) that is another library's
    array; None if there is none."""
    for a in args:
        if a.__class__ is list or a.__class__ is tuple:
            a = first_foreign(a)
            if a is not None:
                return a
        elif foreign_array(a):
            return a
    return None
