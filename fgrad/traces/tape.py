"""The tape: reverse mode's record of a computation, and the passes that walk it.

While a ``vjp``/``grad``/``linearize`` runs, every primitive applied to one of its tracers
appends a ``Node`` to the tape: the primitive, its inputs (one level down), its static
parameters, its output and the nodes its inputs came from. Nodes are plain data, appended in
execution order, so the tape is already topologically sorted:

* the backward pass walks it in reverse, calling each primitive's VJP rules;
* the forward sweep (``linearize``; ``fgrad.traces.rules``) walks it in order, calling the JVP
  rules, so Jacobian columns cost one sweep each without running the Python function again.

Rules are called on the recorded values, which are tracers of outer transforms when
derivatives are nested; the rule's own operations are then recorded by those transforms,
which is how higher-order derivatives come about.
"""
import threading
import weakref

import numpy as _onp

from ..core import errors
from .accumulate import add_any
from ..numpy.array_tracer import ArrayTracer
from ..numpy.elementwise import real
from ..core.other_arrays import first_foreign, foreign_array
from ..core.tracer import STAGING, Trace, Tracer, ambient, refuse_other_semantics, value_dtype
from ..core.values import IMMUTABLE_REALS, PYTHON_NUMBERS, strong

_ndarray = _onp.ndarray


class Node:
    """One tape entry: ``ans = prim(*args, **params)``; ``parents[i]`` is the node that
    produced ``args[i]`` on this tape, or ``None`` if that input is a constant here."""

    __slots__ = ("prim", "args", "params", "ans", "parents", "real_inputs", "ct")

    def __init__(self, prim, args, params, ans, parents):
        # (one statement each: a five-name assignment builds and unpacks a tuple, at every op)
        self.prim = prim
        self.args = args
        self.params = params
        self.ans = ans
        self.parents = parents
        # the cotangent gathered for ``ans`` while a backward pass runs (None outside one): an
        # attribute read and written where a dict from node to cotangent would hash the node
        self.ct = None
        # traced real inputs of a complex output: their cotangents are the real part of what
        # the rules give (JAX's convention; the imaginary part is no direction of a real input)
        self.real_inputs = ()


class TapeTracer(ArrayTracer):
    __slots__ = ("_node",)

    def __init__(self, trace, value, node):
        self._trace, self._value, self._node, self._base = trace, value, node, None


class Tape(Trace):
    """A reverse-mode trace: records nodes while alive, then runs backward/forward passes.

    The tape keeps its own copy of every plain numpy array it records (a constant argument,
    an array in a parameter such as an index, the input of a ``vjp`` or ``linearize``), so
    changing the caller's array in place after the forward pass, before ``vjp_fn`` runs,
    cannot change the derivative.
    Copying costs a memcpy per constant per use (a few percent of an elementwise op on the
    same array) and nothing for tracers or scalars, which are immutable; a large constant used
    again unchanged shares one copy (``own``), so loops over a big matrix do not multiply it.
    """

    __slots__ = ("nodes", "owned", "lean", "inputs", "guarded", "nested", "walk_lock",
                 "walker", "shares_constants")

    def __init__(self, kind="vjp", *, lean=False, inputs="copy"):
        """``kind`` names the tape in messages. Its policy is said where it is made:

        ``lean``: the tape is only walked backward, so it keeps just the values its VJP rules
        read (the primitives' ``residuals``); one also walked forward (linearize, jacfwd) or
        shown (make_tape) keeps everything.

        ``inputs``: how it keeps input arrays, which may be the caller's, changed by the
        caller's code before the walk (inside ``f`` itself, or before ``vjp_fn`` runs):
        ``"copy"`` copies them (vjp, linearize, make_tape: the caller's code runs between
        the recording and the walk); ``"guard"`` copies small ones and makes a large one that
        owns its memory read-only until ``release()`` (grad, jacrev, jacfwd: walked before
        they return; a copy per call of a large input costs its allocation, and freeing it
        made glibc hand memory back to the system on every call, 2.4x on a slice-heavy
        gradient of a 160 kB input); ``"keep"`` keeps them (a checkpoint's recomputation,
        a transpose: their inputs are values fgrad holds already)."""
        super().__init__(kind)
        self.nodes = []
        self.owned = {}
        self.lean, self.inputs, self.guarded = lean, inputs, []
        # whether a tracer of an outer transform has reached this tape (as an input or an
        # argument): until then every value on it is plain, and numpy is called directly
        # (a tape inside a staged function hands its plain values down too, uncopied: staging
        # records them and reads them anew at each replay, see tracer.STAGING)
        self.nested = self.shares_constants = bool(STAGING) and ambient() is not None
        # backward passes keep their cotangents on the nodes, so two of one tape (vjp_fn called
        # from two threads) take turns; ``walker`` is the thread walking, to refuse re-entry
        self.walk_lock = threading.Lock()
        self.walker = None

    def new_input(self, value):
        if isinstance(value, Tracer):
            self._nest(value)
        elif value.__class__ is _ndarray and self.inputs != "keep":
            if not (self.inputs == "guard" and value.nbytes >= _SHARE_BYTES and
                    self._guard(value)):
                value = self.own(value)
        elif foreign_array(value):  # (from now on through dispatch: see other_arrays)
            self.nested = True
            if self.inputs != "keep":  # (a Dask array's copy copies no data: it is immutable)
                value = value.copy()
        return TapeTracer(self, value, Node(None, (), None, value, ()))

    def _guard(self, a):
        """Make ``a`` read-only until ``release()``; False where that would not protect its
        values (a view: its memory is writable through its base and other views)."""
        if a.base is not None:
            return False
        if a.flags.writeable:
            a.flags.writeable = False
            self.guarded.append(a)
        return True

    def release(self):
        """Give the guarded inputs their writability back (once the walk is done)."""
        for a in self.guarded:
            a.flags.writeable = True
        self.guarded = []

    def _nest(self, tracer):
        """An outer transform's tracer has reached this tape: its values nest from now on."""
        self.nested = True
        if tracer._trace.shares_constants:
            self.shares_constants = True

    def own(self, a):
        """The tape's private copy of the plain array ``a`` (see the class docstring)."""
        if self.shares_constants:
            return a
        if a.nbytes < _SHARE_BYTES:
            return a.__copy__()  # (order "K": its memory order kept, LAPACK rounds by it)
        key = id(a)
        old = self.owned.get(key)
        # the same object, still holding the values copied last time: share that copy
        if old is not None and old[0]() is a and old[1].shape == a.shape and (old[1] == a).all():
            return old[1]
        c = a.__copy__()
        self.owned[key] = (weakref.ref(a), c)
        return c

    def _owned(self, v):
        """``v`` with its plain arrays owned (an index tuple, a list of arrays, a parameter);
        lists are copied too, since they are just as mutable. Other values pass unchanged."""
        cls = v.__class__
        if cls is _ndarray:
            return self.own(v)
        if cls is list:
            return [self._owned(e) for e in v]
        if cls is tuple and _mutable_inside(v):
            return tuple(self._owned(e) for e in v)
        return v

    def process(self, prim, args, params):
        # ``big``: whether some value is big enough to be worth shedding (see ``_shed``)
        a = args[0]
        if len(args) == 1 and a.__class__ is TapeTracer and a._trace is self:
            # (one argument, a tracer of this tape: the commonest call, unwrapped at once)
            v = a._value
            vals, parents, rest = [v], [a._node], ()
            big = v.__class__ is _ndarray and v.nbytes >= _SHED_BYTES
            # (an input kept a Python number, so that numpy promotes it weakly: its rules get
            # it as a numpy scalar, values.strong)
            weak = v.__class__ in PYTHON_NUMBERS
        else:
            vals, parents, rest = list(args), [None] * len(args), args
            big = weak = False
        i = 0
        for a in rest:
            cls = a.__class__
            if cls is TapeTracer and a._trace is self:
                v = vals[i] = a._value
                parents[i] = a._node
                if v.__class__ is _ndarray and v.nbytes >= _SHED_BYTES:
                    big = True
                elif v.__class__ in PYTHON_NUMBERS:
                    weak = True
            elif cls is _ndarray:
                v = vals[i] = self.own(a)
                if v.nbytes >= _SHED_BYTES:
                    big = True
            elif cls not in IMMUTABLE_REALS:
                vals[i] = self._other_argument(prim, i, a)
            i += 1
        if params:
            params = self._owned_params(params)
        # the values one level down go to the next transform, or straight to numpy: while no
        # outer tracer has reached this tape, none of its values can hold one
        if self.nested:
            ans = prim(*vals, **params)
        elif params:
            ans = prim.fast_impl(*vals, **params)
        else:  # (a call without keywords is the cheaper one, and the usual one)
            ans = prim.fast_impl(*vals)
        if weak:  # (a rule sees an input kept a Python number as a numpy scalar)
            vals = strong(vals, parents)
        node = Node(prim, vals, params, ans, parents)
        if ans.__class__ is _ndarray:
            if ans.nbytes >= _SHED_BYTES:
                big = True
            if ans.dtype is not _REAL:
                _note_complex(node)
        elif ans.__class__ not in IMMUTABLE_REALS:
            _note_complex(node)
        if big and self.lean and prim.residuals is not None:
            _shed(node, prim.residuals)
        self.nodes.append(node)
        return TapeTracer(self, ans, node)

    def _other_argument(self, prim, i, a):
        """An argument that is neither this tape's tracer, a plain array nor a real number:
        an outer transform's tracer (values nest from now on), a list or tuple (owned), a
        complex number, or an ndarray subclass (refused if its operators mean otherwise)."""
        if isinstance(a, Tracer):
            self._nest(a)
        elif a.__class__ is list or a.__class__ is tuple:
            if first_foreign(a) is not None:
                self.nested = True
            return self._owned(a)
        elif foreign_array(a):
            self.nested = True
        else:
            refuse_other_semantics(prim, i, a)
        return a

    def _owned_params(self, params):
        """``params`` with its arrays and lists owned (an index, a list of indices)."""
        for v in params.values():
            cls = v.__class__
            if cls is _ndarray or cls is list or (cls is tuple and _mutable_inside(v)):
                return {k: self._owned(v) for k, v in params.items()}
        return params

    def backward(self, seeds, consume=False, keep=None):
        """Propagate ``seeds`` (pairs of node and output cotangent) to every node that needs
        one; returns ``{node: cotangent}`` for the nodes no entry consumed (the inputs). With
        ``consume`` the tape is emptied as it goes, so each residual is freed as soon as its
        rules have used it (``grad`` uses this). ``keep``, a dict, receives every node's
        cotangent (``make_tape``'s adjoint trace)."""
        if consume:  # the tape's only walk: nothing can run beside it
            return self._walk(seeds, consume, keep)
        me = threading.get_ident()
        if self.walker == me:
            raise RuntimeError("fgrad: a backward pass over a tape called the vjp function of "
                               "that same tape from one of its rules; call it after the pass")
        with self.walk_lock:
            self.walker = me
            try:
                return self._walk(seeds, consume, keep)
            finally:
                self.walker = None

    def _walk(self, seeds, consume, keep):
        # nodes given a cotangent that no entry of the tape produced (the inputs), read out last
        reached = []
        for node, ct in seeds:
            _give(node, ct, reached)
        if consume:
            nodes, self.nodes = self.nodes, []
        else:
            nodes = self.nodes[:]  # popped below, and the tape may be walked again
        pop = nodes.pop  # popping drops each node (and its residuals) once its rules have run
        prim = None
        try:
            while nodes:
                node = pop()
                g = node.ct
                if g is None:
                    continue
                node.ct = None
                if keep is not None:
                    keep[node] = g
                prim, args, params, ans = node.prim, node.args, node.params, node.ans
                parents, reals = node.parents, node.real_inputs
                cts = prim.vjp_all(g, ans, args, params, parents)
                i = -1
                for p in parents:
                    i += 1
                    c = cts[i]
                    if p is None:
                        continue
                    if c is None:
                        continue
                    if reals and i in reals:
                        c = real(c)
                    old = p.ct
                    if old is None:
                        p.ct = c
                        if p.prim is None:  # an input
                            reached.append(p)
                    else:
                        p.ct = add_any(old, c)
        except BaseException as e:  # a rule raised: no cotangent may be left for the next pass
            _clear(nodes)
            _clear(reached)
            if isinstance(e, errors.ConcretizationError) and prim is not None:
                # (the read was in the rule of ``prim``, the node being walked: say so)
                raise errors.in_rule(e, f"the VJP rule of {prim.public_name}",
                                     prim.builtin) from e
            raise
        return _take_cotangents(reached)


# below this size a constant is simply copied at each use (cheaper than comparing it with a
# previous copy); above it, an unchanged array shares the copy made the first time
_SHARE_BYTES = 1 << 16

# arrays below this size are kept whatever the rules need: a stand-in would cost more
_SHED_BYTES = 1 << 12


def _shed(node, residuals):
    """Replace the big arrays of ``node`` that its VJP rules do not read by stand-ins of the
    same shape and dtype (a zero-strided view: no memory), so they can be freed."""
    vals = node.args
    argnums, keep_ans = residuals
    if argnums == "others":  # the rule of each traced argument reads the other arguments, so
        # only a lone traced argument goes unread
        unread = [i for i, p in enumerate(node.parents) if p is not None]
        if len(unread) != 1:
            unread = ()
    else:
        unread = [i for i in range(len(vals)) if i not in argnums]
    for i in unread:
        if _big(vals[i]):
            vals[i] = _stand_in(vals[i])
    if not keep_ans and _big(node.ans):
        node.ans = _stand_in(node.ans)


def _note_complex(node):
    """For a complex output, note its traced real inputs (see ``Node.real_inputs``)."""
    if getattr(node.ans, "dtype", _REAL).kind == "c":
        node.real_inputs = tuple(i for i, p in enumerate(node.parents)
                                 if p is not None and value_dtype(node.args[i]).kind != "c")


_REAL = _onp.dtype(float)


def _give(node, ct, reached):
    """Add the cotangent ``ct`` to ``node``'s; a node given its first goes into ``reached``."""
    if node.ct is None:
        node.ct = ct
        reached.append(node)
    else:
        node.ct = add_any(node.ct, ct)


def _clear(nodes):
    for n in nodes:
        n.ct = None


def _take_cotangents(reached):
    """``{node: cotangent}`` of the nodes reached, each cleared for the next pass."""
    cts = {}
    for n in reached:
        if n.ct is not None:
            cts[n] = n.ct
            n.ct = None
    return cts


def _big(v):
    return v.__class__ is _ndarray and v.nbytes >= _SHED_BYTES


def _stand_in(v):
    if v.dtype.hasobject or v.dtype.itemsize > len(_ZEROS):
        return _onp.broadcast_to(_onp.zeros((), v.dtype), v.shape)
    # every element reads the same zero bytes (read-only: the buffer is immutable), built
    # directly: numpy.broadcast_to costs several times more, once per shed value
    return _ndarray(v.shape, v.dtype, _ZEROS, 0, (0,) * v.ndim)


_ZEROS = bytes(64)


def _mutable_inside(t):
    """Whether the tuple ``t`` holds (at any depth) an array or a list."""
    for e in t:
        cls = e.__class__
        if cls is _ndarray or cls is list or (cls is tuple and _mutable_inside(e)):
            return True
    return False
