"""Tracers, traces and dispatch: how a primitive call finds the transform that must see it.

A *trace* is one running transform (one call of ``vjp``, ``jvp``, ...). A *tracer* is a value
boxed by a trace while the transformed function runs; it holds the value one level down
(``_value``, which may itself be a tracer of an outer transform) and whatever the trace needs
(a tape node, or a tangent).

Each trace gets a level from a counter when it starts. Transforms nest, so a trace that is
still alive always has a higher level than every live trace it runs inside. A primitive call
(``Primitive.__call__`` in ``table.py``; a tracer's arithmetic operators take the same route
directly, ``fgrad/numpy/array_tracer.py``) goes to the highest-level trace among its
arguments; that trace unwraps its own tracers and calls the primitive again on the values
beneath, which dispatches to the next trace down, until no tracer is left and numpy runs. A
tracer of an outer transform reaching an inner one is a constant there, which is exactly what
prevents perturbation confusion:

    d/dx [x * d/dy (x + y)] = 1        (not 2)

There is no global trace stack, so nothing is left behind when the differentiated function
raises, and two threads differentiating at once never see each other's traces. The one
exception is staging (``STAGING``, per thread): a staged function's calls on plain values are
recorded too, so that a replay reads closed-over arrays anew and draws new random numbers.
"""
import itertools
import sys
import _thread  # threading's own primitives, without its import (1 ms of fgrad's)

import numpy as _onp

from . import errors
from .values import NUMPY_FLOATS, PLAIN_OPERANDS, PYTHON_NUMBERS, first_foreign, foreign_array

_ndarray = _onp.ndarray

_levels = itertools.count(1)


class Trace:
    """One running transform. Subclasses implement ``process`` (record, or push tangents),
    which reads its call's arguments through ``arguments``, the one classification that
    every trace shares."""

    __slots__ = ("level", "alive", "kind", "staged")

    # Whether the trace records the constants it meets as references to the caller's arrays
    # (staging: a replay must see their values as they are then). A tape nested inside such a
    # trace hands its constants down uncopied, or the record would hold a stale copy.
    shares_constants = False
    # Whether the trace must see every operation on its values, zero derivative or not
    # (staging records them, batching maps them over the batch); a differentiating trace is
    # bypassed for those (``without_derivative``).
    sees_all = False
    # Whether the values under its tracers are one example's (False for batching: a batch)
    concrete = True
    # The class of its tracers (each holds its value one level down in ``_value``)
    tracer_type: type = type(None)
    # Whether it keeps its own copy of the plain arrays, lists and tuples it is given as
    # arguments (``keep``: the tape, whose walk runs after the caller's code may have
    # changed them)
    keeps_constants = False

    def __init__(self, kind):
        self.level = next(_levels)
        self.alive = True
        self.kind = kind
        # whether a staging trace runs around it in this thread: its plain values then go
        # down through dispatch too, to be recorded
        self.staged = bool(STAGING) and ambient() is not None

    def __repr__(self):
        return f"<{self.kind} trace #{self.level}>"

    def process(self, prim, args, params):
        raise NotImplementedError

    def process_staged(self, derived, leaves):
        """A staged function (``jit``) called with this trace's tracers among ``leaves``
        (its flat arguments), this trace the innermost there: its output, computed by
        the staged function's transform one level down, or ``NotImplemented`` (its graph
        then runs node by node, each primitive coming here). ``derived(name, make)`` is the
        jitted function's cached ``jit(make(run))``, ``run(leaves)`` calling the function
        itself (JAX's rules for its jit primitive: the transformed function is staged
        again, so its generated code runs)."""
        return NotImplemented

    def kept_by_tape(self, tracer):
        """What a tape takes as its input where it is given ``tracer``. On a plain array
        there it would keep a copy (``traces.keeping``), laid out anew where the array was a
        view with gaps, and the derivative's last bits follow the layout: staging records
        that copy (the other traces give ``tracer`` itself)."""
        return tracer

    def arguments(self, prim, args):
        """A call's arguments as this trace sees them, ``(vals, mine, below, weak)``:

        ``vals``  every argument one level down: this trace's tracers' values, the others
                  as they are (kept by ``keep`` where the trace ``keeps_constants``);
        ``mine``  per argument, this trace's tracer there, else None;
        ``below`` whether something below this trace must see the call, so that the trace
                  calls the primitive again (dispatch) rather than numpy's function
                  (``prim.fast_impl``): another trace's tracer among the arguments or this
                  trace's values (transforms nested), another library's array (its own
                  library computes), or a staging trace around this one (it records plain
                  values too);
        ``weak``  whether one of this trace's values is a Python number (an input kept
                  one, so that numpy promotes it as a number: the rules get it as a numpy
                  scalar, ``values.strong``).

        An ndarray subclass whose operators mean something else (``numpy.matrix``) is
        refused here, where it meets any trace."""
        own = self.tracer_type
        if len(args) == 1:  # (the commonest call: one of this trace's tracers, an array)
            a = args[0]
            if a.__class__ is own and a._trace is self:
                v = a._value
                if v.__class__ is _ndarray or v.__class__ in NUMPY_FLOATS:
                    return [v], [a], self.staged, False
        vals = list(args)
        mine = [None] * len(vals)
        below = self.staged
        weak = False
        keeps = self.keeps_constants
        i = 0
        for a in args:
            cls = a.__class__
            if cls is own and a._trace is self:
                mine[i] = a
                v = vals[i] = a._value
                cls = v.__class__
                if cls is not _ndarray:
                    if cls in PYTHON_NUMBERS:
                        weak = True
                    elif cls not in PLAIN_OPERANDS and (isinstance(v, Tracer) or
                                                        foreign_array(v)):
                        below = True
                        if isinstance(v, Tracer):
                            v._held = True
            elif cls is _ndarray:
                if keeps:
                    vals[i] = self.keep(a)
            elif cls not in PLAIN_OPERANDS:  # (plain constants: one lookup)
                if isinstance(a, Tracer):
                    below = a._held = True
                elif foreign_array(a):
                    below = True
                elif cls is list or cls is tuple:
                    if first_foreign(a) is not None:
                        below = True
                    if keeps:
                        vals[i] = self.keep(a)
                else:
                    refuse_other_semantics(prim, i, a)
            i += 1
        return vals, mine, below, weak

    def keep(self, a):
        """This trace's own copy of a plain argument (see ``keeps_constants``)."""
        return a

    def run(self, f, args, fname):
        """``f(*args)`` on this trace's tracers, the trace closed afterwards whatever happens;
        a traced value written into a plain array is said in fgrad's words (numpy said
        'setting an array element with a sequence'). (The callers set ``at_user_code`` once
        around all their work: here it would cost a tiny ``grad`` 10%.)"""
        try:
            return f(*args)
        except (ValueError, errors.ConcretizationError) as e:
            if errors.written_into_plain_array(e):
                raise errors.into_plain_array(fname) from e
            raise
        finally:
            self.alive = False


# thread id -> the staging traces running in that thread, innermost last. Empty unless a
# staging trace runs somewhere, so eager code pays one test of an empty dict per plain call.
STAGING = {}


def ambient():
    """The innermost staging trace running in this thread, or None."""
    stack = STAGING.get(_thread.get_ident())
    return stack[-1] if stack else None


class _ambient:
    """``trace`` pushed on this thread's stack in ``table`` while the block runs. (A class,
    not a ``contextlib`` generator: entered at every jit's trace and every vmap call, and
    per folded constant in the graph passes, where the generator's calls cost 5% of the
    first call of the first derivative of tanh under jit.)"""

    __slots__ = ("table", "trace", "key")

    def __init__(self, table, trace):
        self.table, self.trace = table, trace

    def __enter__(self):
        key = self.key = _thread.get_ident()
        self.table.setdefault(key, []).append(self.trace)
        return self.trace

    def __exit__(self, *exc):
        stack = self.table[self.key]
        stack.pop()
        if not stack:
            del self.table[self.key]
        return False


def staging(trace):
    """Make ``trace`` this thread's ambient staging trace while the block runs (``None``:
    no staging in the block, for computations on plain values that a graph redoes itself)."""
    return _ambient(STAGING, trace)


# thread id -> the staging traces that lift outer transforms' tracers into their graphs (a
# checkpoint's closure converted), innermost last. Empty unless one runs somewhere: the
# primitive calls' one test of it (``Primitive.bind``).
LIFTING = {}


def lifting(trace):
    """``trace`` (a staging trace making the outer transforms' tracers it meets inputs of its
    graph) runs in this thread while the block runs."""
    return _ambient(LIFTING, trace)


# thread id -> the batching traces (``vmap``) running in that thread, innermost last: a random
# draw inside ``vmap`` draws once per example (``fgrad.numpy.random``), as a loop would
BATCHING = {}


def batching(trace):
    """Make ``trace`` this thread's innermost ambient batching trace while the block runs."""
    return _ambient(BATCHING, trace)


def batches():
    """The batching traces running in this thread, outermost first (a list, maybe empty)."""
    return BATCHING.get(_thread.get_ident(), []) if BATCHING else []


class below:
    """The block runs one level below ``trace``, this thread's innermost batching trace (on
    its batches: a batching trace's rule for a staged function), where a random draw is one
    draw, not one per example of ``trace``."""

    __slots__ = ("trace", "key")

    def __init__(self, trace):
        self.trace = trace

    def __enter__(self):
        self.key = _thread.get_ident()
        stack = BATCHING[self.key]
        assert stack[-1] is self.trace
        stack.pop()
        if not stack:
            del BATCHING[self.key]

    def __exit__(self, *exc):
        BATCHING.setdefault(self.key, []).append(self.trace)
        return False


# Reading under a tracer: three reads, named for what they cost.
#
#   read_value(x)          the plain value, read for its values (where derivatives are zero):
#                          a staging trace guards it (a replay checks it), vmap refuses it (a
#                          whole batch is no one example's value)
#   value_for_shape(x)     a plain value for its class, shape and dtype only: costs nothing,
#                          no guard, no refusal (under vmap, one example of the batch)
#   without_derivative(x)  the value under the differentiating transforms only: the tracer
#                          of a trace that sees every operation (staging, batching) stays, so
#                          that a mask or condition computed from it is recorded or batched
#
# ``read_values`` and ``map_tracers`` apply them through lists, tuples and dicts.

def read_value(x):
    """The plain numpy value under any number of tracers, read for its values (used where
    derivatives are zero): a staging trace guards it, ``vmap`` refuses it."""
    while isinstance(x, Tracer):
        x = x._read()
    return x


def without_derivative(x):
    """The value under a tracer's differentiating transforms: the plain value, or the tracer
    of a trace that must see the computation (staging records it, batching maps it), for
    values with no derivative that stay arrays: a condition, a mask."""
    while isinstance(x, Tracer) and not x._trace.sees_all:
        x = x._value
    return x


def differentiated(x):
    """Whether ``x`` (a value, or a list or tuple of them) holds a tracer of a
    differentiating transform, not only a staged or a batched value, which has no derivative."""
    if isinstance(x, (list, tuple)):
        return any(differentiated(v) for v in x)
    return isinstance(x, Tracer) and without_derivative(x) is not x


def value_for_shape(x):
    """The plain value under any number of tracers, for its class, shape and dtype only: a
    staging trace does not count this as a use of the value. (Also for a computation that a
    staged graph redoes from the new values at each replay, such as a custom function's.)"""
    while isinstance(x, Tracer):
        x = x._meta
    return x


def weak(x):
    """Whether numpy promotes ``x`` as a Python number (weakly): a Python number, or a tracer
    over one (a transform's input that was one, or Python's arithmetic on such values).
    (Down ``_value``, not ``value_for_shape``'s ``_meta``: a batch's example is a slice made
    at each read, and operators under ``vmap(grad)`` ask this of every operand.)"""
    while isinstance(x, Tracer):
        x = x._value
    return x.__class__ in PYTHON_NUMBERS


def add_any(a, b):
    """``a + b`` of two derivatives (cotangents meeting at a value, tangents of a call's
    arguments): numpy's operator on plain values, a tracer's own operator (the ``add``
    primitive, so that transforms outside record the sum) where either is traced."""
    if b.__class__ is not a.__class__ and isinstance(b, Tracer) and not isinstance(a, Tracer):
        return b.__radd__(a)
    return a + b


def value_dtype(v):
    """The dtype of a value: its own attribute (an array, a numpy scalar, a tracer), or
    numpy's for a Python number."""
    dt = getattr(v, "dtype", None)
    return dt if dt is not None else _onp.result_type(v)


def map_tracers(x, fn, leaf=None):
    """``x`` with ``fn`` applied to every tracer in it (per instance of ``leaf``, where
    given), through lists, tuples, dicts and slices (arguments of zero-derivative functions
    and indices may hold tracers anywhere: ``x[:n]`` with ``n`` computed)."""
    if isinstance(x, Tracer if leaf is None else leaf):
        return fn(x)
    cls = type(x)
    if cls is list or cls is tuple:
        return cls(map_tracers(v, fn, leaf) for v in x)
    if cls is dict:
        return {k: map_tracers(v, fn, leaf) for k, v in x.items()}
    if cls is slice:
        return slice(map_tracers(x.start, fn, leaf), map_tracers(x.stop, fn, leaf),
                     map_tracers(x.step, fn, leaf))
    return x


def read_values(x):
    """``read_value`` of every tracer in ``x``, through lists, tuples, dicts and slices."""
    return map_tracers(x, read_value)


def _down(o, trace):
    """``o`` one level down from ``trace``: its value if it is a tracer of that trace (a
    tracer of another trace is compared where its own trace meets it)."""
    return o._value if isinstance(o, Tracer) and o._trace is trace else o


def first_tracer(x):
    """The first tracer in ``x`` or in its lists, tuples and dicts (at any depth), or None."""
    if isinstance(x, Tracer):
        return x
    cls = type(x)
    if cls is list or cls is tuple or cls is dict:
        for v in (x.values() if cls is dict else x):
            t = first_tracer(v)
            if t is not None:
                return t
    return None


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


def semantics_of_its_own(a):
    """Whether ``a`` is an ndarray subclass whose operators or values mean something else
    than an ndarray's (``numpy.matrix``: ``*`` is a matrix product; a masked array: values
    under the mask do not count), which fgrad's rules, written for ndarrays, would get
    wrong. Such values are refused where they meet a transform."""
    if isinstance(a, _onp.matrix):
        return True
    ma = sys.modules.get("numpy.ma")  # (a masked array exists only once numpy.ma is loaded)
    return ma is not None and isinstance(a, ma.MaskedArray)


def refuse_other_semantics(prim, i, a):
    """Every trace's check of a plain argument ``a`` (argument ``i`` of ``prim``): an ndarray
    subclass whose operators mean something else (``semantics_of_its_own``) is refused where
    it meets any transform, with the same ``TypeError``. (Callers test ``a.__class__ is not
    numpy.ndarray`` first: plain arrays and numbers pay nothing.)"""
    if isinstance(a, _onp.ndarray) and semantics_of_its_own(a):
        raise errors.array_subclass(getattr(prim, "public_name", prim.name), a.__class__,
                                    f"argument {i}")


def concrete(x):
    """Whether the values under ``x`` can be read as one example's: False where a trace
    below holds a whole batch in their place (``vmap``). A choice a rule makes from values
    (which expansion holds here) is made only where this is true."""
    while isinstance(x, Tracer):
        if not x._trace.concrete:
            return False
        x = x._meta
    return True


def set_shape(tracer, shape):
    """``x.shape = shape``: numpy reshapes the array in place, which a traced value cannot."""
    raise errors.mutation("x.shape = ...", "x = np.reshape(x, shape)")


class Tracer:
    """A value being differentiated: what every trace's tracers share, and no more.

    A tracer holds its trace and its value one level down. Comparisons and ``bool(x)`` give
    plain values, so Python control flow works (the traces are eager: they see the branch
    actually taken); conversions that would silently drop the derivative (``float(x)``,
    ``x.item()``) raise ``ConcretizationError``. Its array surface (operators, ndarray
    methods, numpy's protocols, ``.at[]``) is ``fgrad.numpy``'s business:
    ``fgrad/numpy/array_tracer.py`` defines ``ArrayTracer``, which the traces' tracers are.
    """

    # ``_held``: set where a trace made inside this one's took the tracer object itself as one
    # of its values (a record of it may read the tracer later: a write into it in place,
    # ``x[i] = v``, is refused then); unset otherwise, read only by that write
    __slots__ = ("_trace", "_value", "_held")
    _fgrad_tracer = True  # (other_arrays.foreign_array: not another library's array)

    # values are numpy arrays or scalars (or tracers of outer transforms), which have these
    # attributes, or Python numbers (an input kept weak, as numpy promotes it), which have not.
    # (They read ``_value``, not ``_meta``: a property is a Python call in CPython 3.11, and
    # rules read shapes often; a tracer whose ``_meta`` differs redefines the three.)
    @property
    def shape(self):
        try:
            return self._value.shape
        except AttributeError:
            return ()

    @shape.setter
    def shape(self, shape):
        set_shape(self, shape)

    @property
    def ndim(self):
        try:
            return self._value.ndim
        except AttributeError:
            return 0

    @property
    def size(self):
        try:
            return self._value.size
        except AttributeError:
            return 1

    # (the same for one example as for the batch: ``_value`` will do)
    dtype = property(lambda self: value_dtype(value_for_shape(self._value)))
    # the value one level down, for its class, shape and dtype (see ``value_for_shape``)
    _meta = property(lambda self: self._value)

    def _read(self):
        """The value one level down, read for its values (see ``read_value``): a staging
        trace's tracer guards it, a batching trace's refuses."""
        return self._value

    def __len__(self):
        shape = self.shape
        if not shape:
            raise TypeError("len() of unsized object (a 0-d traced value)")
        return shape[0]

    def __repr__(self):
        return f"Tracer({read_value(self)!r}, {self._trace!r})"

    def __format__(self, spec):
        return format(read_value(self), spec)

    # a traced value is immutable, so a copy of it is the value itself: copy.deepcopy of a
    # structure holding one works (inside grad too) and the copy keeps its escape check
    def __copy__(self):
        return self

    def __deepcopy__(self, memo):
        return self

    def __reduce__(self):
        raise errors.concretization("Pickling")

    # Comparisons have zero derivative: they give plain boolean arrays, so `if x > 0:` works.
    # They compare the values one level down, so a trace underneath that records (staging)
    # sees the comparison and the branch taken on it.
    def __lt__(self, o): return self._value < _down(o, self._trace)
    def __le__(self, o): return self._value <= _down(o, self._trace)
    def __gt__(self, o): return self._value > _down(o, self._trace)
    def __ge__(self, o): return self._value >= _down(o, self._trace)
    def __eq__(self, o): return self._value == _down(o, self._trace)
    def __ne__(self, o): return self._value != _down(o, self._trace)
    __hash__ = None  # like ndarray

    def __bool__(self):
        return bool(self._value)

    def __round__(self, ndigits=None):  # rounding has zero derivative: a plain value
        return round(read_value(self), ndigits)

    # --- conversions that would lose the derivative -----------------------------------
    def __float__(self): raise errors.concretization("float()")
    def __int__(self): raise errors.concretization("int()")
    def __complex__(self): raise errors.concretization("complex()")
    def __index__(self): raise errors.concretization("Using as an index")
    def item(self, *a): raise errors.concretization(".item()")
    def tolist(self): raise errors.concretization(".tolist()")

    def as_array(self, nested):
        """One traced array from a (nested) list or tuple holding tracers, among them this
        one (``np.sin([x, 2 * x])``); the array surface implements it."""
        raise NotImplementedError
