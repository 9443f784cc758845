"""Tracers, traces and dispatch: how a primitive call finds the transform that must see it.

A *trace* is one running transform (one call of ``vjp``, ``jvp``, ...). A *tracer* is a value
boxed by a trace while the transformed function runs; it holds the value one level down
(``_value``, which may itself be a tracer of an outer transform) and whatever the trace needs
(a tape node, or a tangent).

Each trace gets a level from a counter when it starts. Transforms nest, so a trace that is
still alive always has a higher level than every live trace it runs inside. A primitive call
(``Primitive.__call__`` in ``table.py``; a tracer's arithmetic operators take the same route
directly) goes to the highest-level trace among its arguments; that trace unwraps its own
tracers and calls the primitive again on the values beneath, which dispatches to the next trace
down, until no tracer is left and numpy runs. A tracer of an outer transform reaching an inner
one is a constant there, which is exactly what prevents perturbation confusion:

    d/dx [x * d/dy (x + y)] = 1        (not 2)

There is no global trace stack, so nothing is left behind when the differentiated function
raises, and two threads differentiating at once never see each other's traces.
"""
import importlib
import itertools
import sys

import numpy as _onp

from . import errors

_levels = itertools.count(1)

# fgrad.numpy, set once it is imported: the operators below call into it, and it imports this
# module, so the link is made from its side.
fnp = None


class Trace:
    """One running transform. Subclasses implement ``process`` (record, or push tangents)."""

    __slots__ = ("level", "alive", "kind")

    def __init__(self, kind):
        self.level = next(_levels)
        self.alive = True
        self.kind = kind

    def __repr__(self):
        return f"<{self.kind} trace #{self.level}>"

    def process(self, prim, args, params):
        raise NotImplementedError


def innermost(x):
    """The plain numpy value under any number of tracers (used where derivatives are zero)."""
    while isinstance(x, Tracer):
        x = x._value
    return x


def value_dtype(v):
    """The dtype of a value: its own attribute (an array, a numpy scalar, a tracer), or
    numpy's for a Python number."""
    dt = getattr(v, "dtype", None)
    return dt if dt is not None else _onp.result_type(v)


def strip(x, lower=innermost):
    """``innermost`` applied through lists, tuples and dicts (arguments of zero-derivative
    functions and indices may hold tracers anywhere); ``lower`` replaces it per tracer."""
    if isinstance(x, Tracer):
        return lower(x)
    cls = type(x)
    if cls is list or cls is tuple:
        return cls(strip(v, lower) for v in x)
    if cls is dict:
        return {k: strip(v, lower) for k, v in x.items()}
    return x


def contains_tracer(x):
    """Whether ``x`` is a tracer or holds one in its lists, tuples and dicts (at any depth)."""
    if isinstance(x, Tracer):
        return True
    cls = type(x)
    if cls is dict:
        x = x.values()
    elif cls is not list and cls is not tuple:
        return False
    for v in x:  # (a loop, not any(...) over a generator: this runs on every public call)
        if isinstance(v, Tracer):
            return True
        cls = type(v)
        if (cls is list or cls is tuple or cls is dict) and contains_tracer(v):
            return True
    return False


# operands that are plain values for certain: no tracer can hide inside them
_PLAIN = frozenset([float, int, _onp.float64, _onp.float32, _onp.ndarray])


def _arithmetic(name):
    """A tracer's operator and its reflection for the primitive ``fnp.<name>``. With the other
    operand plain, or a tracer of the same trace, that trace is the innermost (what
    ``Primitive.__call__`` would find), so the call goes to it directly: arithmetic is most of
    the operations in the loops where fgrad's own cost shows (3% of a scalar chain's grad, 5%
    of a Python-loop RNN's, in an interleaved A/B against calling the primitive)."""
    def forward(self, o):
        t = self._trace
        if t.alive and (o.__class__ in _PLAIN or (isinstance(o, Tracer) and o._trace is t)):
            return t.process(getattr(fnp, name), (self, o), {})
        return getattr(fnp, name)(self, o)

    def reflected(self, o):
        t = self._trace
        if t.alive and o.__class__ in _PLAIN:
            return t.process(getattr(fnp, name), (o, self), {})
        return getattr(fnp, name)(o, self)

    return forward, reflected


def semantics_of_its_own(a):
    """Whether ``a`` is an ndarray subclass whose operators or values mean something else
    than an ndarray's (``numpy.matrix``: ``*`` is a matrix product; a masked array: values
    under the mask do not count), which fgrad's rules, written for ndarrays, would get
    wrong. Such values are refused where they meet a transform."""
    if isinstance(a, _onp.matrix):
        return True
    ma = sys.modules.get("numpy.ma")  # (a masked array exists only once numpy.ma is loaded)
    return ma is not None and isinstance(a, ma.MaskedArray)


class Tracer:
    """A value being differentiated. Behaves like a read-only numpy array.

    Arithmetic, indexing and the usual ndarray methods record onto the current transform.
    Comparisons and ``bool(x)`` give plain values, so Python control flow works (the tape is
    eager: it records the branch actually taken). Conversions that would silently drop the
    derivative (``float(x)``, ``x.item()``, ``numpy.asarray(x)``) raise ``ConcretizationError``;
    in-place writes raise ``TracerMutationError`` naming ``x.at[idx].set(v)``.
    """

    __slots__ = ("_trace", "_value")
    __array_priority__ = 1000  # make ndarray <op> tracer defer to our reflected operators

    # --- what the value looks like -----------------------------------------------------
    # values are numpy arrays or scalars (or tracers of outer transforms), all of which have
    # these attributes
    shape = property(lambda self: self._value.shape)
    ndim = property(lambda self: self._value.ndim)
    size = property(lambda self: self._value.size)
    dtype = property(lambda self: value_dtype(innermost(self._value)))
    T = property(lambda self: fnp.transpose(self))
    mT = property(lambda self: fnp.swapaxes(self, -1, -2))
    real = property(lambda self: fnp.real(self))
    imag = property(lambda self: fnp.imag(self))
    at = property(lambda self: _At(self))

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return shape[0]

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    def __repr__(self):
        return f"Tracer({innermost(self)!r}, {self._trace!r})"

    def __format__(self, spec):
        return format(innermost(self), spec)

    # a traced value is immutable, so a copy of it is the value itself: copy.deepcopy of a
    # structure holding one works (inside grad too) and the copy keeps its escape check
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise errors.concretization("Pickling")

    # --- arithmetic (each is one primitive call) -------------------------------------
    def __neg__(self): return fnp.negative(self)
    def __pos__(self): return self
    def __abs__(self): return fnp.abs(self)
    __add__, __radd__ = _arithmetic("add")
    __sub__, __rsub__ = _arithmetic("subtract")
    __mul__, __rmul__ = _arithmetic("multiply")
    __truediv__, __rtruediv__ = _arithmetic("divide")
    def __floordiv__(self, o): return fnp.floor_divide(self, o)
    def __rfloordiv__(self, o): return fnp.floor_divide(o, self)
    def __mod__(self, o): return fnp.mod(self, o)
    def __rmod__(self, o): return fnp.mod(o, self)
    __pow__, __rpow__ = _arithmetic("power")
    __matmul__, __rmatmul__ = _arithmetic("matmul")
    def __divmod__(self, o): return fnp.floor_divide(self, o), fnp.mod(self, o)
    def __rdivmod__(self, o): return fnp.floor_divide(o, self), fnp.mod(o, self)

    # Comparisons have zero derivative: they give plain boolean arrays, so `if x > 0:` works.
    def __lt__(self, o): return innermost(self) < innermost(o)
    def __le__(self, o): return innermost(self) <= innermost(o)
    def __gt__(self, o): return innermost(self) > innermost(o)
    def __ge__(self, o): return innermost(self) >= innermost(o)
    def __eq__(self, o): return innermost(self) == innermost(o)
    def __ne__(self, o): return innermost(self) != innermost(o)
    __hash__ = None  # like ndarray

    def __bool__(self):
        return bool(innermost(self))

    def __round__(self, ndigits=None):  # rounding has zero derivative: a plain value
        return round(innermost(self), ndigits)

    # --- indexing --------------------------------------------------------------------
    def __getitem__(self, idx):
        return fnp.getitem(self, idx)

    def __setitem__(self, idx, value):
        raise errors.mutation(f"x[{_show_index(idx)}] = ...")

    # --- ndarray methods -------------------------------------------------------------
    def reshape(self, *shape, order="C"):
        if len(shape) == 1 and not isinstance(shape[0], int):
            shape = shape[0]
        return fnp.reshape(self, shape, order=order)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False):
        return fnp.sum(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False):
        return fnp.mean(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False):
        return fnp.prod(self, axis=axis, dtype=dtype, out=out, keepdims=keepdims)

    def max(self, axis=None, out=None, keepdims=False):
        return fnp.max(self, axis=axis, out=out, keepdims=keepdims)

    def min(self, axis=None, out=None, keepdims=False):
        return fnp.min(self, axis=axis, out=out, keepdims=keepdims)

    def clip(self, min=None, max=None):
        return fnp.clip(self, min, max)

    def dot(self, other):
        return fnp.dot(self, other)

    def compress(self, condition, axis=None, out=None):  # numpy.compress takes them swapped
        return fnp.compress(condition, self, axis=axis, out=out)

    def transpose(self, *axes):
        if len(axes) == 1 and not isinstance(axes[0], int):
            axes = axes[0]
        return fnp.transpose(self, axes or None)

    def swapaxes(self, a, b):
        return fnp.swapaxes(self, a, b)

    def ravel(self, order="C"):
        return fnp.ravel(self, order=order)

    def flatten(self, order="C"):
        return fnp.ravel(self, order=order)

    def squeeze(self, axis=None):
        return fnp.squeeze(self, axis=axis)

    def astype(self, dtype, copy=True):
        return fnp.astype(self, dtype)

    def conj(self):
        return fnp.conjugate(self)

    conjugate = conj

    def copy(self):
        return self  # tracers are immutable, so sharing is safe

    def __getattr__(self, name):
        """The other ndarray methods (``x.argmax()``, ``x.round()``, ``x.cumsum()``, ...) are
        fgrad.numpy's functions of the same name, so one without a rule raises
        NoDerivativeRuleError rather than AttributeError; in-place ones (``x.sort()``,
        ``x.fill(v)``) raise TracerMutationError."""
        if name in _IN_PLACE:
            def in_place(*args, **kwargs):
                raise errors.mutation(f"x.{name}(...)", _IN_PLACE[name])
            return in_place
        if not name.startswith("_") and callable(getattr(_onp.ndarray, name, None)):
            fn = getattr(fnp, name, None)
            if callable(fn):
                return lambda *args, **kwargs: fn(self, *args, **kwargs)
            # the rest give bytes, views or files of the value (x.tobytes(), x.view())
            def concrete(*args, **kwargs):
                raise errors.concretization(f"x.{name}()")
            return concrete
        raise AttributeError(f"{type(self).__name__!r} object has no attribute {name!r}")

    # --- conversions that would lose the derivative -----------------------------------
    def __float__(self): raise errors.concretization("float()")
    def __int__(self): raise errors.concretization("int()")
    def __complex__(self): raise errors.concretization("complex()")
    def __index__(self): raise errors.concretization("Using as an index")
    def item(self, *a): raise errors.concretization(".item()")
    def tolist(self): raise errors.concretization(".tolist()")

    def __array__(self, dtype=None, copy=None):
        caller = _library_caller()
        if caller is not None:  # scipy's own code converting its argument
            raise errors.plain_library(*caller, _mirrored(*caller))
        raise errors.concretization("numpy.asarray() (or another plain-numpy conversion)")

    # --- plain numpy functions handed a tracer -----------------------------------------
    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if method == "__call__" and not kwargs:  # (ndarray <op> tracer comes this way)
            fn = _UFUNC_STAND_INS.get(ufunc)
            if fn is not None:
                return fn(*inputs)
        if kwargs.get("out") is not None:
            raise errors.mutation(f"numpy.{ufunc.__name__}(..., out=...) on a traced value")
        module = _library_of_ufunc(ufunc)
        if module is not None:  # scipy.special's
            raise errors.plain_library(module, ufunc.__name__, _mirrored(module, ufunc.__name__))
        name = ufunc.__name__ if method == "__call__" else f"{ufunc.__name__}.{method}"
        out = _redirect(name, fnp, inputs, kwargs)
        if method == "__call__":
            _UFUNC_STAND_INS[ufunc] = getattr(fnp, name)  # found once, then looked up
        return out

    def __array_function__(self, func, types, args, kwargs):
        module = getattr(func, "__module__", None) or "numpy"
        sub = module.split(".")[1] if module.count(".") else ""
        ns = getattr(fnp, sub) if sub in ("linalg", "fft") else fnp
        return _redirect(func.__name__, ns, args, kwargs, func)


# ndarray methods that modify the array in place, and what to write instead
_IN_PLACE = {"sort": "x = np.sort(x)", "partition": "x = np.partition(x, kth)",
             "fill": "x = np.zeros_like(x) + value", "put": "y = x.at[idx].set(value)",
             "resize": "x = np.resize(x, shape)"}


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


def _library_caller():
    """``(public module, function)`` for the scipy function on the stack that the user
    called (the outermost one that is a public name of its module), or None."""
    frame, frames = sys._getframe(2), []
    while frame is not None:
        if frame.f_globals.get("__name__", "").startswith("scipy."):
            frames.append(frame)
        elif frames:
            break
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
    return callable(getattr(ours, name, None))


# what to call instead of a ufunc method on a traced value (fgrad.numpy has no ufunc methods)
_METHOD_INSTEAD = {"add.reduce": "fgrad.numpy.sum", "multiply.reduce": "fgrad.numpy.prod",
                   "maximum.reduce": "fgrad.numpy.max", "minimum.reduce": "fgrad.numpy.min",
                   "add.accumulate": "fgrad.numpy.cumsum",
                   "multiply.accumulate": "fgrad.numpy.cumprod",
                   "add.at": "x.at[idx].add(v)", "multiply.at": "x.at[idx].multiply(v)",
                   "maximum.at": "x.at[idx].max(v)", "minimum.at": "x.at[idx].min(v)"}


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


class _At:
    """``x.at[idx]``: JAX-style functional updates, each returning a new array (``x`` itself is
    never modified). On plain ndarrays, which have no ``.at``, call ``fgrad.numpy.index_add``,
    ``index_set``, ``index_multiply``, ``index_min`` or ``index_max`` with ``(x, v, idx)``."""

    __slots__ = ("x",)

    def __init__(self, x):
        self.x = x

    def __getitem__(self, idx):
        return _AtIndex(self.x, idx)


class _AtIndex:
    """``x.at[idx]`` waiting for its operation. With a repeated index, ``add`` accumulates,
    ``multiply`` multiplies by every value, ``min``/``max`` take the extreme of all (tied
    candidates share the derivative evenly), and ``set`` raises ``ValueError``."""

    __slots__ = ("x", "idx")

    def __init__(self, x, idx):
        self.x, self.idx = x, idx

    def get(self):
        """``x[idx]``."""
        return fnp.getitem(self.x, self.idx)

    def set(self, value):
        """A copy of ``x`` with ``value`` written at ``idx``."""
        return fnp.index_set(self.x, value, self.idx)

    def add(self, value):
        """A copy of ``x`` with ``value`` added at ``idx`` (repeats accumulate)."""
        return fnp.index_add(self.x, value, self.idx)

    def multiply(self, value):
        """A copy of ``x`` with the entries at ``idx`` multiplied by ``value``."""
        return fnp.index_multiply(self.x, value, self.idx)

    def min(self, value):
        """A copy of ``x`` with each entry at ``idx`` the minimum of itself and ``value``."""
        return fnp.index_min(self.x, value, self.idx)

    def max(self, value):
        """A copy of ``x`` with each entry at ``idx`` the maximum of itself and ``value``."""
        return fnp.index_max(self.x, value, self.idx)
