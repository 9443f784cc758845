"""The array surface of a tracer: operators, ndarray methods, numpy's protocols, ``.at[]``.

This is ``fgrad.numpy``'s side of a tracer (autograd keeps its box's methods beside its numpy
wrapper the same way): the core's ``Tracer`` knows its trace and value; ``ArrayTracer`` makes
it behave like a read-only ndarray by calling this package's functions. Every trace's tracer
class derives from it (``TapeTracer``, ``DualTracer``).

Arithmetic operators hold their primitives and, when the other operand is plain or of the
same trace, hand the call to the trace directly (what ``Primitive.__call__`` would find).
"""
import dis
import importlib
import sys

import numpy as _onp

import fgrad.numpy as fnp
from ..core import errors
from ..core.fpwarnings import fgrad_code
from ..core.table import written_out
from ..core.tracer import (LIFTING, STAGING, Tracer, ambient, concrete, contains_tracer,
                           weak)
from ..core.values import PLAIN_OPERANDS, PYTHON_NUMBERS
from .elementwise import (abs, add, clip, conjugate, divide, imag, mod, multiply, negative,
                          python_number,
                          power_operator, real, subtract)
from .indexing import at, getitem
from .layout import asarray, astype, ravel, reshape, squeeze, swapaxes, transpose
from .products import dot, matmul
from .reductions import max, mean, min, prod, sum
from .selection import compress
from .ufunc_methods import UfuncPrimitive, call_into
from .views import (Viewable, copied, in_dtype, in_place, is_view_index, view_of,
                    write_into, write_whole)


# the values under a tracer that are surely no Python number: most of them, at once
_STRONG = frozenset([_onp.ndarray, _onp.float64, _onp.float32])


def _arithmetic(prim):
    """A tracer's operator and its reflection for the primitive ``prim``. With the other
    operand plain, or a tracer of the same trace, that trace is the innermost (what
    ``Primitive.__call__`` would find), so the call goes to it directly: arithmetic is most of
    the operations in the loops where fgrad's own cost shows (3% of a scalar chain's grad, 5%
    of a Python-loop RNN's, in an interleaved A/B against calling the primitive). On two
    Python numbers the result is one (``python_number``). Not while a checkpoint's closure is
    staged (``LIFTING``): the staging takes the calls on outer tracers then, see ``bind``."""
    def forward(self, o):
        t = self._trace
        if t.alive and not LIFTING and (o.__class__ in PLAIN_OPERANDS or
                                        (isinstance(o, Tracer) and o._trace is t)):
            r = t.process(prim, (self, o), {})
        else:
            r = prim(self, o)
        # (all operands Python numbers? Asked of ``self`` first, without a call where its
        # value is plainly numpy's; written out here and in ``reflected``, not in a helper
        # whose call every operator would pay)
        v = self._value.__class__
        if v in _STRONG or v not in PYTHON_NUMBERS and not weak(self) or not weak(o):
            return r
        return _python_result(r)

    def reflected(self, o):
        t = self._trace
        if t.alive and not LIFTING and o.__class__ in PLAIN_OPERANDS:
            r = t.process(prim, (o, self), {})
        else:
            r = prim(o, self)
        v = self._value.__class__
        if v in _STRONG or v not in PYTHON_NUMBERS and not weak(self) or not weak(o):
            return r
        return _python_result(r)

    return forward, reflected


def _pythons(r, *operands):
    """``r``, an operator's result, as Python's operator gives it: a Python number where every
    operand is one (see ``python_number``)."""
    for x in operands:
        if not weak(x):
            return r
    return _python_result(r)


def _python_result(r):
    """``r``, an operator's result on Python numbers (or tracers over them), made a Python
    number (``python_number``). Where no trace that sees every operation is about (staging,
    which must replay it), the value under ``r``'s tracers is converted where it lies, which
    no derivative notices: the primitive's call, a node on a tape, made a gradient of 150
    operators on Python floats 1.35x as slow as this (1434 against 1065 us)."""
    if STAGING and ambient() is not None:
        return python_number(r)
    t = r
    while isinstance(t, Tracer):
        if t._trace.sees_all:
            return python_number(r)
        v = t._value
        if not isinstance(v, Tracer):
            if isinstance(v, _onp.generic):
                t._value = v.item()
            return r
        t = v
    return python_number(r)


class ArrayTracer(Viewable):
    """A value being differentiated, behaving like a read-only numpy array.

    Arithmetic, indexing and the usual ndarray methods go to the current transform.
    ``numpy.asarray(x)`` raises ``ConcretizationError``; ``x[idx] = v`` and the in-place
    methods (``x.sort()``, ``x.fill(v)``) write as numpy does (``views``); ``x.resize()``
    raises ``TracerMutationError`` naming the functional form.
    """

    __slots__ = ()
    __array_priority__ = 1000  # make ndarray <op> tracer defer to our reflected operators

    T = property(lambda self: transpose(self))
    mT = property(lambda self: swapaxes(self, -1, -2))
    real = property(lambda self: view_of(real(self), self))
    # (of a complex array numpy's imag is a view; of a real one, new zeros)
    imag = property(lambda self: view_of(imag(self), self) if self.dtype.kind == "c"
                    else imag(self))
    at = property(at)  # (x.at[idx].set(v): the same as fgrad.numpy.at(x)[idx].set(v))

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def as_array(self, nested):
        return asarray(nested)

    # --- arithmetic (each is one primitive call) -------------------------------------
    def __neg__(self): return _pythons(negative(self), self)
    def __pos__(self): return copied(self)  # (numpy's +x is a new array)
    def __abs__(self): return _pythons(abs(self), self)
    __add__, __radd__ = _arithmetic(add)
    __sub__, __rsub__ = _arithmetic(subtract)
    __mul__, __rmul__ = _arithmetic(multiply)
    __truediv__, __rtruediv__ = _arithmetic(divide)
    def __floordiv__(self, o): return _pythons(fnp.floor_divide(self, o), self, o)
    def __rfloordiv__(self, o): return _pythons(fnp.floor_divide(o, self), self, o)
    def __mod__(self, o): return _pythons(mod(self, o), self, o)
    def __rmod__(self, o): return _pythons(mod(o, self), self, o)
    __pow__, __rpow__ = _arithmetic(power_operator)  # (numpy's ``**``: elementwise.py)
    __matmul__, __rmatmul__ = _arithmetic(matmul)
    def __divmod__(self, o): return self // o, self % o
    def __rdivmod__(self, o): return self.__rfloordiv__(o), self.__rmod__(o)

    # augmented assignment: numpy writes in place, which every name of the memory sees
    __iadd__ = in_place(__add__, "+=")
    __isub__ = in_place(__sub__, "-=")
    __imul__ = in_place(__mul__, "*=")
    __itruediv__ = in_place(__truediv__, "/=")
    __ipow__ = in_place(__pow__, "**=")
    __imatmul__ = in_place(__matmul__, "@=")
    __ifloordiv__ = in_place(__floordiv__, "//=")
    __imod__ = in_place(__mod__, "%=")

    # bitwise and logical operators on masks and integers (zero derivative: a traced mask,
    # batched or staged, stays one)
    def __and__(self, o): return fnp.bitwise_and(self, o)
    def __rand__(self, o): return fnp.bitwise_and(o, self)
    def __or__(self, o): return fnp.bitwise_or(self, o)
    def __ror__(self, o): return fnp.bitwise_or(o, self)
    def __xor__(self, o): return fnp.bitwise_xor(self, o)
    def __rxor__(self, o): return fnp.bitwise_xor(o, self)
    def __invert__(self): return fnp.invert(self)
    __iand__ = in_place(__and__, "&=")
    __ior__ = in_place(__or__, "|=")
    __ixor__ = in_place(__xor__, "^=")

    # --- indexing --------------------------------------------------------------------
    def __getitem__(self, idx):
        out = getitem(self, idx)
        return view_of(out, self, idx) if is_view_index(idx, self) else out

    def __setitem__(self, idx, value):
        # numpy's write: the value in the array's dtype, every name of the array seeing it
        def written(value=value):
            value = in_dtype(value, self.dtype)
            # (``y[y < 0] = 0``: a mask of the whole array and one value, where() reads no
            # mask's values, so it runs batched and staged too; index_set() counts entries)
            if _onp.ndim(value) == 0 and _onp.ndim(idx) == self.ndim > 0 and \
                    fnp.result_type(idx) == bool and _onp.shape(idx) == self.shape:
                return fnp.where(idx, value, self)
            return at(self)[idx].set(value)

        write_into(self, written, sys._getframe(1), lambda: f"`x[{_show_index(idx)}] = ...`")

    def view(self, dtype=None, type=None):
        """numpy's ``x.view()``: the same memory under another name, so a write through one
        is seen through the other (``x[...]``). A view in another dtype or array type
        reinterprets the bytes, which has no derivative: refused."""
        if dtype is None and type is None:
            return self[...]
        raise errors.concretization("x.view(dtype)")

    def write_result(self, value, shown):
        """numpy's ``out=``: the array takes ``value`` whole (cast to its dtype), and every
        name and view of its memory in the user's frames sees it (``write_whole``: from the
        first frame outside fgrad, where ``x[...] = value`` here would look in fgrad's)."""
        write_whole(self, lambda: at(self)[...].set(in_dtype(value, self.dtype)), shown)

    # --- ndarray methods -------------------------------------------------------------
    def reshape(self, *shape, order="C", copy=None):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return reshape(self, shape, order=order, copy=copy)

    # (``initial=`` and ``where=`` go to the functions as numpy's methods pass them)
    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims, **kwargs)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        return max(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        return min(self, axis=axis, out=out, keepdims=keepdims, **kwargs)

    def clip(self, min=None, max=None, out=None, **kwargs):
        return clip(self, min, max, out=out, **kwargs)

    def dot(self, b, out=None):
        return dot(self, b, out=out)

    def compress(self, condition, axis=None, out=None):  # numpy.compress takes them swapped
        return compress(condition, self, axis=axis, out=out)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return transpose(self, axes or None)

    def swapaxes(self, axis1, axis2):
        return swapaxes(self, axis1, axis2)

    def ravel(self, order="C"):
        return ravel(self, order=order)

    def flatten(self, order="C"):
        return copied(ravel(self, order=order))

    @property
    def flat(self):
        return _Flat(self)

    def squeeze(self, axis=None):
        return squeeze(self, axis=axis)

    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        if casting != "unsafe" and not _onp.can_cast(self.dtype, dtype, casting):
            raise TypeError(f"Cannot cast array data from {self.dtype!r} to "
                            f"{_onp.dtype(dtype)!r} according to the rule {casting!r}")
        return astype(self, dtype, copy=copy)  # (a traced value has no memory order)

    # what numpy says of an array's memory that its shape and dtype tell
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self.size * self.dtype.itemsize)
    device = property(lambda self: "cpu")

    def conj(self):
        # (numpy's method gives a real array itself back: a write into it changes the array)
        return conjugate(self) if self.dtype.kind == "c" else self

    conjugate = conj

    def copy(self, order="C"):
        return copied(self)

    # --- conversions that would lose the derivative -----------------------------------
    def __array__(self, dtype=None, copy=None):
        raise _conversion("numpy.asarray() (or another plain-numpy conversion)", self,
                          None if dtype is None else _onp.dtype(dtype).name)

    def __float__(self):
        raise _conversion("float()")

    # --- plain numpy functions handed a tracer -----------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:  # (ndarray <op> tracer comes this way)
            fn = _UFUNC_STAND_INS.get(ufunc)
            if fn is not None:
                return fn(*inputs)
        out = kwargs.get("out")
        if out is not None:
            if any(not isinstance(o, Tracer) for o in out):  # (buf[:2] += x comes this way)
                raise errors.written_into_plain(f"numpy.{ufunc.__name__}")
            ours = getattr(fnp, ufunc.__name__, None)
            rest = {k: v for k, v in kwargs.items() if k != "out"}
            if method == "__call__" and ours is not None and len(out) == 1 and \
                    not isinstance(ours, UfuncPrimitive) and contains_tracer(inputs):
                # (a gufunc's, numpy's own called on tracers: matmul, vecdot)
                return written_out(f"numpy.{ufunc.__name__}", out[0], ours(*inputs, **rest))
            if method != "__call__" or not isinstance(ours, UfuncPrimitive):
                raise errors.mutation(f"numpy.{ufunc.__name__}.{method}(..., out=...) on a "
                                      "traced value")  # (a method's out=: reduce, ...)
            return call_into(ours, inputs, out, rest)
        module = _library_of_ufunc(ufunc)
        if module is not None:  # scipy.special's
            raise errors.plain_library(module, ufunc.__name__, _mirrored(module, ufunc.__name__))
        ours = getattr(fnp, ufunc.__name__, None)
        if method == "at" and ours is not None:  # (an in-place write: numpy's, as x[i] = v)
            return ours.at(*inputs, **kwargs)
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        out = _redirect(name, fnp, inputs, kwargs)
        if method == "__call__":
            _UFUNC_STAND_INS[ufunc] = getattr(fnp, name)  # found once, then looked up
        return out

    def __array_function__(self, func, types, args, kwargs):
        module = getattr(func, "__module__", None) or "numpy"
        ns = _MIRRORS.get(module)
        if ns is None:  # (numpy.strings, numpy.lib.recfunctions, ...: no function of fgrad's
            # is theirs, whatever its name; numpy.strings.multiply is no product)
            raise errors.plain_numpy(f"{module[len('numpy.'):]}.{func.__name__}",
                                     "fgrad.numpy's functions (fgrad has no version of it)")
        return _redirect(func.__name__, ns() if callable(ns) else ns, args, kwargs, func)


# numpy's modules whose functions dispatch to a traced argument, and fgrad.numpy's namespace
# for each (the linalg and fft modules load on first use: a function gives them then)
_MIRRORS = {"numpy": fnp, "numpy.linalg": lambda: fnp.linalg, "numpy.fft": lambda: fnp.fft,
            "numpy.lib.stride_tricks": fnp.lib.stride_tricks,
            "numpy.lib.scimath": lambda: fnp.lib.scimath}


class _Flat:
    """``x.flat`` of a traced array: its elements in C order, read by index or iteration as
    numpy's flat iterator reads them; written, it writes into ``x`` as numpy's does."""

    __slots__ = ("base",)

    def __init__(self, base):
        self.base = base

    def __getitem__(self, idx):
        return copied(ravel(self.base)[idx])  # (numpy's x.flat[idx] is a copy)

    def __iter__(self):
        return iter(ravel(self.base))

    def __len__(self):
        return self.base.size

    def __setitem__(self, idx, value):  # (numpy's write into x, as x[...] = v)
        x = self.base

        def written():
            return fnp.reshape(at(fnp.ravel(x))[idx].set(in_dtype(value, x.dtype)), x.shape)

        write_whole(x, written, "x.flat[...] = ...")


# ndarray methods that modify the array in place, and what to write instead
_IN_PLACE = {"resize": "x = np.resize(x, shape)"}
# the in-place methods that keep the shape: the new value the write gives the array
_WRITES = {
    "sort": lambda x, axis=-1, kind=None, order=None, *, stable=None:
        fnp.sort(x, axis=axis, kind=kind, order=order, stable=stable),
    "partition": lambda x, kth, axis=-1, kind="introselect", order=None:
        fnp.partition(x, kth, axis=axis, kind=kind, order=order),
    "fill": lambda x, value: fnp.where(True, fnp.astype(value, x.dtype), x),
    "put": lambda x, indices, values, mode="raise": _put_value(x, indices, values, mode)}


def _put_value(x, indices, values, mode):
    y = copied(x)  # (numpy's put on a copy: views.write_whole writes it into x)
    fnp.put(y, indices, values, mode)
    return y


def _ndarray_method(name):
    """The tracer's method for the ndarray method ``name`` that ``ArrayTracer`` does not
    spell out: fgrad.numpy's function of that name (``x.argmax()``, ``x.cumsum()``), so one
    without a rule raises NoDerivativeRuleError rather than AttributeError; an in-place one
    writes as numpy's does (``x.sort()``, ``x.fill(v)``; ``x.resize()`` raises
    TracerMutationError); the rest give bytes or files of the value (``x.tobytes()``,
    ``x.tofile()``) and raise ConcretizationError."""
    if name in _WRITES:  # (numpy's write, as x[...] = v: views.write_whole)
        def method(self, *args, **kwargs):
            write_whole(self, lambda: _WRITES[name](self, *args, **kwargs), f"x.{name}(...)")
    elif name in _IN_PLACE:
        def method(self, *args, **kwargs):
            raise errors.mutation(f"x.{name}(...)", _IN_PLACE[name])
    else:
        def method(self, *args, **kwargs):
            fn = getattr(fnp, name, None)  # (looked up at the call: fnp is being built now)
            if callable(fn):
                return fn(self, *args, **kwargs)
            raise errors.concretization(f"x.{name}()")
    method.__name__ = method.__qualname__ = name
    return method


# Methods, not a ``__getattr__``: a class with one has every attribute read of its instances
# (``a._trace``, ``a._value``, on every operation) take CPython's unspecialised path;
# without it, a staged-and-taped scalar chain ran 11% fewer instructions (cachegrind).
for _name in dir(_onp.ndarray):
    if not _name.startswith("_") and not hasattr(ArrayTracer, _name) and \
            callable(getattr(_onp.ndarray, _name)):
        setattr(ArrayTracer, _name, _ndarray_method(_name))
del _name


# numpy ufunc -> the fgrad.numpy function standing in for it (filled as they are met)
_UFUNC_STAND_INS = {}


# The libraries whose functions fgrad mirrors (fgrad.scipy.special for scipy.special, ...);
# consulted only to word an error, so the core never imports them before then.
_MIRRORED = ("scipy.special", "scipy.stats", "scipy.linalg", "scipy.signal", "scipy.integrate",
             "scipy.optimize")


def _library_of_ufunc(ufunc):
    """"scipy.special" for one of its ufuncs; None for numpy's and any other."""
    module = "scipy.special"  # the library of ufuncs among the mirrored ones
    if getattr(sys.modules.get(module), ufunc.__name__, None) is ufunc:
        return module
    return None


def _conversion(how, tracer=None, dtype=None):
    """The error for a conversion of ``tracer`` (``how``, to ``dtype`` if one was asked),
    naming what asked for it where the stack tells: an index, a write into a plain array,
    ``numpy.vectorize``, a scipy function, or else the conversion itself. (The stack is read
    only here, when the error is raised.)"""
    user = sys._getframe(2)  # (numpy's C code calls the conversion without a frame of its own)
    op = _OPCODES[user.f_code.co_code[user.f_lasti]]
    if op == "STORE_SUBSCR" and tracer is not None and tracer.dtype.kind in "fc":
        # ``out[idx] = x``: numpy converts both; a float array is never an index, so it is
        # the value written (``out[0] = x`` on a scalar comes as numpy's own ValueError)
        return errors.slice_written(tracer._trace.kind)
    if op == "BINARY_SUBSCR" and tracer is not None and not concrete(tracer) and \
            not fgrad_code(user):  # (vmap: the user's index is a batch)
        return errors.batch_indexes_plain()
    if op in ("BINARY_SUBSCR", "STORE_SUBSCR"):
        return errors.used_as_index()
    frame = user
    while frame is not None:
        if frame.f_code.co_name in _VECTORIZE and frame.f_globals.get(
                "__name__", "").startswith("numpy."):
            return errors.vectorized()
        frame = frame.f_back
    caller = _library_caller()
    if caller is not None:  # scipy's own code converting its argument
        return errors.plain_library(*caller, _mirrored(*caller))
    return errors.concretization(how, dtype)


_OPCODES = dis.opname
# numpy.vectorize's own functions, which convert each argument to plain values
_VECTORIZE = {"_vectorize_call", "_vectorize_call_with_signature", "_get_ufunc_and_otypes"}


def _library_caller():
    """``(public module, function)`` for the scipy function on the stack that the user
    called (the outermost one that is a public name of its module), or None."""
    frame, frames = sys._getframe(2), []
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("scipy."):
            frames.append(frame)
        elif frames:
            break
        elif not (module.startswith("numpy") or fgrad_code(frame)):
            return None  # the user's own code converted it (a function scipy calls back)
        frame = frame.f_back
    for f in reversed(frames):  # outermost first
        # the frame's own function, then what a decorator's wrapper closes over
        candidates = [(f.f_globals["__name__"], f.f_code.co_name)]
        candidates += [(getattr(v, "__module__", None) or "", getattr(v, "__name__", ""))
                       for v in (f.f_locals.get(n) for n in f.f_code.co_freevars)
                       if callable(v)]
        for module, name in candidates:
            public = _public_module(module)
            if public.startswith("scipy") and callable(
                    getattr(sys.modules.get(public), name, None)):
                return public, name
    outermost = frames[-1] if frames else None
    return None if outermost is None else (_public_module(outermost.f_globals["__name__"]),
                                           outermost.f_code.co_name)


def _public_module(module):
    """``scipy.stats._distn_infrastructure`` -> ``scipy.stats``."""
    parts = module.split(".")
    return ".".join(parts[:next(i for i, p in enumerate(parts + ["_"]) if p.startswith("_"))])


def _mirrored(module, name):
    """Whether ``fgrad.<module>.<name>`` exists (None: only the module is known mirrored)."""
    if module not in _MIRRORED:
        return False
    try:
        ours = importlib.import_module("fgrad." + module)
    except ImportError:
        return False
    if module == "scipy.stats":  # methods of distribution objects: the module is the answer
        return None
    fn = getattr(ours, name, None)
    # (scipy.linalg's functions without rules are there too, for plain values only)
    return callable(fn) and getattr(fn, "_fgrad_status", None) != "plain only"


# what to call instead of a ufunc method on a traced value (fgrad.numpy has no ufunc methods)
_METHOD_INSTEAD = {"add.reduce": "fgrad.numpy.sum", "multiply.reduce": "fgrad.numpy.prod",
                   "maximum.reduce": "fgrad.numpy.max", "minimum.reduce": "fgrad.numpy.min",
                   "add.accumulate": "fgrad.numpy.cumsum",
                   "multiply.accumulate": "fgrad.numpy.cumprod",
                   "add.at": "fgrad.numpy.at(x)[idx].add(v)",
                   "multiply.at": "fgrad.numpy.at(x)[idx].multiply(v)",
                   "maximum.at": "fgrad.numpy.at(x)[idx].max(v)",
                   "minimum.at": "fgrad.numpy.at(x)[idx].min(v)"}


def _instead(name, ns):
    """What a plain-numpy call ``name`` made on a tracer should be, naming only what exists."""
    ufunc, _, method = name.partition(".")
    if name in _METHOD_INSTEAD:
        return _METHOD_INSTEAD[name]
    if method == "outer" and callable(getattr(fnp, ufunc, None)):
        return f"fgrad.numpy.{ufunc}(x[..., None], y) (broadcasting gives the outer form)"
    if method:
        return ("fgrad.numpy's functions (ufunc methods such as " + name + " have no rules; "
                "write the reduction or loop with fgrad.numpy)")
    return None if callable(getattr(ns, name, None)) else (
        f"fgrad.numpy's functions (fgrad.numpy has no {name}; add a rule with "
        "fgrad.primitive and fgrad.defvjp)")


def _redirect(name, ns, args, kwargs, original=None):
    """Run a plain-numpy call made on a tracer through fgrad.numpy's version of it."""
    fn = getattr(ns, name, None)
    if not callable(fn) or fn is original:  # never hand the call back to numpy itself
        raise errors.plain_numpy(name, _instead(name, ns))
    return fn(*args, **kwargs)  # fgrad.numpy's own stand-ins raise NoDerivativeRuleError


def _show_index(idx):
    if not isinstance(idx, tuple):
        idx = (idx,)
    parts = []
    for i in idx:
        if isinstance(i, slice):
            s = "" if i.start is None else str(i.start)
            s += ":" + ("" if i.stop is None else str(i.stop))
            parts.append(s + ("" if i.step is None else f":{i.step}"))
        elif i is Ellipsis:
            parts.append("...")
        elif isinstance(i, (int, _onp.integer)):
            parts.append(str(i))
        else:
            parts.append("idx")
    return ", ".join(parts)
