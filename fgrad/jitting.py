"""``jit``: a function staged once per input signature and replayed with plain numpy.

The first call with a given signature (pytree structure, shapes and dtypes of the arguments,
values of the static ones) traces ``f`` into a graph (``staging.py``), which the graph passes
shorten (``passes.py``); later calls with that signature run the graph's generated code, so
no Python of ``f`` runs. What the trace read from the values (a branch, an ``int()``) is a
guard: a call on which a guard comes out otherwise is traced again, and that graph is kept
beside the first, so each branch is staged once and every call gives the eager result.
"""
from typing import Any, Callable, Sequence
import functools
import inspect
import _thread
import warnings

import numpy as _onp

from . import jit_on_tape
from .traces.graph import GuardError, interpreting
from .core import errors
from .core.values import foreign_array
from .traces.passes import optimize
from .core.pytree import tree_flatten, tree_unflatten
from .traces.staging import trace_graph
from .core.tracer import STAGING, Tracer, ambient, value_for_shape
from .traces.arguments import static_split
from .traces.tape import Tape

__all__ = ["jit"]

# Graphs kept per signature before jit stops tracing and calls f eagerly for it: a guard that
# fails on most calls (a branch on a continuous value) would otherwise trace on every call.
MAX_TRACES = 8


def jit(f: Callable[..., Any], static_argnums: int | Sequence[int] = (),
        static_argnames: str | Sequence[str] = ()) -> Callable[..., Any]:
    """``f``, staged on its first call for each input signature and replayed afterwards.

    A signature is the pytree structure, shapes and dtypes of the arguments and the values of
    the static ones (``static_argnums`` by position, ``static_argnames`` by keyword; they must
    be hashable). A replay runs the graph's generated numpy code and no Python of ``f``;
    results equal the eager call's bit for bit. Python control flow on traced values and
    concrete values taken from them (``if x > 0``, ``int(n)``) are guards: a call on which
    one comes out differently is traced again, and both graphs are kept (up to
    ``MAX_TRACES`` per signature, then ``f`` runs eagerly for it, with a warning).
    ``fgrad.numpy.random`` draws anew at every call, and arrays ``f`` closes over are read
    as they are at each call; values ``f`` computes with plain ``numpy`` while tracing are
    constants. Python side effects (``print``, appending to a list) happen while tracing only.
    ``jit`` composes with every transform in both orders (``jit(grad(f))``,
    ``grad(jit(f))``); a jitted function made inside a transformed one may close over its
    traced values (it then runs as ``f`` under that transform).

    >>> import numpy, fgrad, fgrad.numpy as np
    >>> @fgrad.jit
    ... def loss(w, x):
    ...     return np.sum(np.tanh(x @ w) ** 2)
    >>> step = fgrad.jit(fgrad.grad(loss))
    >>> w, x = numpy.ones(3), numpy.eye(3)
    >>> bool(numpy.array_equal(step(w, x), fgrad.grad(loss)(w, x)))
    True
    """
    return _Jitted(f, static_argnums, static_argnames)


def staged(f: Callable[..., Any]) -> Callable[..., Any]:
    """``jit(f)`` for a function that fgrad's own rules call many times over (an ODE's
    adjoint system, which scipy calls at every step): the same replays, but no warning where
    it stops tracing a signature (the user wrote no jit; ``f`` then runs eagerly, as it would
    unstaged)."""
    out = _Jitted(f, (), ())
    out.warns = False
    return out


class _Jitted:
    # whether it says so when it stops tracing a signature (``MAX_TRACES``)
    warns = True
    # whether ``f`` reached a transform's tracer other than through its arguments (a
    # closure, a ``functools.partial``, an attribute): it then runs eagerly under
    # transforms, as it is. (JAX stages the closure's tracers as inputs; here a graph of them
    # would serve that call only, and the outer transform's own work on them while tracing
    # would be the staging trace's: a rerun of ``f`` is simpler and no slower than
    # interpreting that graph.)
    closes_over = False
    # False for a transform's staged rule (``_derived``): it runs one level below that
    # transform, where such a tracer would be read as a value; the error goes up to the
    # user's jitted function, which runs ``f`` eagerly
    reruns = True

    def __init__(self, f, static_argnums, static_argnames):
        if not callable(f):
            raise TypeError(f"jit: expected a function, got {type(f).__name__}")
        functools.update_wrapper(self, f)
        if not hasattr(self, "__name__"):  # (a functools.partial, a callable object)
            self.__name__ = errors.function_name(f)
        self.f = f
        nums = (static_argnums,) if isinstance(static_argnums, int) else tuple(static_argnums)
        names = (static_argnames,) if isinstance(static_argnames, str) else \
            tuple(static_argnames)
        try:
            params = list(inspect.signature(f).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params
                      if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        # as JAX does: a static argument may be named either way
        nums += tuple(positional.index(n) for n in names if n in positional)
        names += tuple(positional[n] for n in nums if 0 <= n < len(positional))
        self.static_argnums, self.static_argnames = tuple(sorted(set(nums))), set(names)
        # positions a call may leave out (defaults); None: any (no signature, or *args)
        self.positions = None if not params or any(p.kind == p.VAR_POSITIONAL for p in params) \
            else len(positional)
        self.cache = {}  # signature -> list of graphs; a lock guards the writes
        self.keys = {}  # a plain call's flat signature (_plain_signature) -> its cache key
        # (reentrant: the passes, run holding it, may compute a folded constant with code
        # that calls this function again)
        self.lock = _thread.RLock()
        self.passing = set()  # the graphs whose passes run now
        self.warned = set()
        # (signature, differentiated leaves, whether the tape is walked backward) -> the
        # staged VJP's (or JVP's) halves, for calls on a tape (``jit_on_tape``)
        self.reverse = {}
        # (signature, a transform's name) -> its jitted function (``_derived``)
        self.derived = {}
        # (a function transform, its options) -> jit of that transform of f
        self.transforms = {}

    def __repr__(self):
        return f"<fgrad.jit of {self.f!r}>"

    def __get__(self, obj, objtype=None):  # a decorated method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def _split(self, args, kwargs):
        """(the traced leaves, their structure, the static values, ``call(leaves)``)."""
        if not kwargs and not self.static_argnums:  # (the common call, kept short)
            leaves, in_tree = tree_flatten(args)
            for x in leaves:
                if x.__class__ not in _ARRAYS and not _is_value(x):
                    break
            else:
                return leaves, in_tree, (), self._caller(in_tree)
            kwargs = {}
        count = len(args)
        for n in self.static_argnums:
            if n >= count and (self.positions is None or n >= self.positions):
                raise ValueError(f"jit: static_argnums={self.static_argnums!r} does not fit "
                                 f"a call with {count} positional argument(s)")
        fixed = {n % count for n in self.static_argnums if -count <= n < count}
        statics = tuple((i, args[i]) for i in sorted(fixed)) + \
            tuple(sorted((k, v) for k, v in kwargs.items() if k in self.static_argnames))
        positional, rebuild = static_split(args, fixed)
        dynamic = (positional, {k: v for k, v in kwargs.items() if k not in self.static_argnames})

        # Leaves that are not values (a model object, a function) are static too, by
        # identity: JAX refuses them; fgrad keys the cache on them.
        leaves, in_tree = tree_flatten(dynamic)
        held = tuple((i, x) for i, x in enumerate(leaves) if not _is_value(x))
        statics += held
        if held:
            leaves = [x for x in leaves if _is_value(x)]

        def call(ins):
            full = list(ins)
            for i, x in held:
                full.insert(i, x)
            pos, kw = tree_unflatten(in_tree, full)
            return self.f(*rebuild(pos), **dict(kwargs, **kw))

        for where, v in statics:
            try:
                hash(v)
            except TypeError:
                raise TypeError(f"jit: the static argument {where!r} must be hashable (it is "
                                f"part of the cache key), got {type(v).__name__}; pass a "
                                "tuple for a list, or make it a traced argument") from None
        return leaves, in_tree, statics, call

    def _caller(self, in_tree):
        """``call(leaves)``: ``f`` on leaves of the pytree structure ``in_tree``."""
        return lambda ins: self.f(*tree_unflatten(in_tree, ins))

    def __call__(self, *args, **kwargs):
        nested = STAGING and ambient() is not None
        # The common call, arrays in tuples, lists and dicts, finds its signature's key by a
        # flat tuple (a TreeDef built, hashed and compared per call was a quarter of a
        # width-16 MLP gradient's 40 us).
        plain = None if kwargs or self.static_argnums or nested else _plain_signature(args)
        key = None if plain is None else self.keys.get(plain[1])
        if key is not None:
            leaves, arrays, call = plain[0], not plain[2], None
            if not arrays:  # (tracers among them: a transform's rule for this call, below)
                in_tree = key[0]
                call = self._caller(in_tree)
        else:
            leaves, in_tree, statics, call = self._split(args, kwargs)
            if nested and _innermost(leaves).__class__ is not Tape:
                # A staged function being traced calls this one (jit inside jit, perhaps
                # under a transform): its trace records f's calls as f makes them. A graph
                # of f would give it the same calls, node by node, after tracing f anyway:
                # the benchmark's nested derivatives with jit at every level paid a trace,
                # the passes and an interpretation per level on their first call: 2.1-2.4x
                # the instructions at the 2nd-4th derivatives. (Not on a tape: eager grad
                # records the call as its staged VJP, which sums an argument's cotangent
                # inside f first; traced primitive by primitive, jit(grad(g)) summed in
                # another order, a last bit off grad(g) where g uses x inside f and out.)
                return call(leaves)
            sig, arrays = [], True
            for x in leaves:
                if x.__class__ is _onp.ndarray:
                    sig.append((x.shape, x.dtype))
                else:  # (a number, a numpy scalar, a tracer; a Python number's type is part
                    # of the key, so its graph was traced on one and runs on it, promoting
                    # weakly)
                    sig.append(_signature(x))
                    arrays = False
            key = (in_tree, statics, tuple(sig))
            if plain is not None:
                self.keys[plain[1]] = key
        top = None if arrays else _innermost(leaves)
        if top is not None:  # (under a transform: the transformed function's generated
            # code, where the innermost transform has a rule for it; the tape's is the
            # staged VJP or JVP, which needs the tape itself)
            if self.closes_over:
                return call(leaves)
            try:
                out = jit_on_tape.call(self, key, leaves, in_tree, call, MAX_TRACES,
                                      staged) if top.__class__ is Tape else \
                    top.process_staged(functools.partial(self._derived, key, call), leaves)
            except errors.ClosedOverTracerError:
                if not self.reruns:
                    raise
                return self._closes_over(call, leaves)
            if out is not NotImplemented:
                return out
            if nested:
                return call(leaves)
        # arrays only, and no staged function around the call: the generated code directly
        direct = arrays and not interpreting(())
        graphs = self.cache.get(key, ())
        for i, graph in enumerate(graphs):
            if not graph.optimized:  # (its first replay: the passes first, see below)
                graph = self._optimized(key, graphs, i)
                if graph is None:  # (called from within its passes: eagerly, this once)
                    return self.f(*args, **kwargs)
            state = _onp.random.get_state() if graph.effects else None
            try:
                out = graph.compile()(*leaves) if direct else graph.run(leaves)
                return graph.out_tree.builder()(out)
            except GuardError:
                if state is not None:  # the next trace draws what the eager call would
                    _onp.random.set_state(state)
            except errors.ConcretizationError:
                if direct:
                    raise
                # A guard met a batch (vmap below a tape: vmap(grad(jit(f)))), where f's
                # Python chooses by what it can read (lstsq's rank, ``concrete``): f itself
                # under the transforms, as they run f (which raises where f cannot run so).
                # (A graph run node by node under vmap: the draws are per example there.)
                if state is not None:
                    _onp.random.set_state(state)
                return call(leaves)
        if call is None:  # (every graph's guards failed on a call found by its flat key)
            leaves, in_tree, statics, call = self._split(args, kwargs)
        if len(graphs) >= MAX_TRACES:
            if self.warns and key not in self.warned:
                self.warned.add(key)
                warnings.warn(f"jit({self.__name__}): traced {MAX_TRACES} times for one input "
                              "signature because values its Python reads (branches, int()) "
                              "kept changing; it now runs eagerly for that signature. Make "
                              "such a value a static argument, or compute it with "
                              "fgrad.numpy.where instead of a branch.", RuntimeWarning,
                              stacklevel=2)
            return call(leaves)
        # (arrays only: no tracer among the leaves, and ``direct`` asked the rest already)
        interpret = not direct if arrays else interpreting(leaves)
        state = _onp.random.get_state() if interpret else None
        try:
            graph, values = trace_graph(f"jit({self.__name__})", call, leaves, in_tree)
        except errors.ClosedOverTracerError:
            if not self.reruns:
                raise
            return self._closes_over(call, leaves)
        if interpret and interpreting(leaves, graph):  # transforms around it see each primitive
            graph = optimize(graph, in_place=True, merge=False)
            if graph.effects:  # (the run draws what the trace drew, as one call would)
                _onp.random.set_state(state)
            try:
                out = graph.run(leaves)
            except (GuardError, errors.ConcretizationError):  # traced on a batch's first
                # example, which the others are not, or a guard met the batch (see above):
                # vmap of f itself, as the loop gives
                if graph.effects:
                    _onp.random.set_state(state)
                return call(leaves)
            with self.lock:
                self.cache.setdefault(key, []).append(graph)
            return tree_unflatten(graph.out_tree, out)
        # The first call's result is what the trace computed; the graph passes and the code
        # wait for the signature's first replay (a signature called once pays for the trace
        # only: measured on the 200-step RNN's gradient, passes and code cost 1.3x the trace)
        with self.lock:
            self.cache.setdefault(key, []).append(graph)
        return tree_unflatten(graph.out_tree, values)

    def _closes_over(self, call, leaves):
        """``f`` on ``leaves`` eagerly, for a trace of it that met a tracer of a transform
        around the call other than among its arguments (see ``closes_over``; an error that
        eager code raises too, such as a custom rule's closure, comes from this call)."""
        self.closes_over = True
        return call(leaves)

    def _fgrad_staged_transform(self, name, options, make):
        """``jit(make(f))``, this function's transform ``name`` with ``options`` staged whole
        (``traces.arguments.staged_form``), with the same static arguments; None where options
        are no cache key. On the width-16 ``tanh`` map of ``benchmarks`` (``around_jit``)
        ``grad`` of a jitted function took 3.4x the jitted gradient's time per call,
        ``hessian`` 8x: the transform's own work around the call (its tracers, the tape, the
        staged halves)."""
        key = (name, options)
        try:
            hash(key)
        except TypeError:
            return None
        out = self.transforms.get(key)
        if out is None:
            out = _Jitted(make(self.f), self.static_argnums, tuple(sorted(self.static_argnames)))
            # (the transform takes f's arguments: f's signature says which may be left out)
            out.positions, out.warns = self.positions, self.warns
            with self.lock:
                out = self.transforms.setdefault(key, out)
        return out

    def _derived(self, key, run, name, make):
        """``jit(make(run))``, kept per signature ``key`` and ``name`` (a transform of this
        function and what it transforms: ``Trace.process_staged``)."""
        entry = (key, name)
        out = self.derived.get(entry)
        if out is None:
            out = _Jitted(make(run), (), ())
            # (named as the user's function: its errors and warnings are about that one)
            out.__name__, out.warns, out.reruns = self.__name__, self.warns, False
            with self.lock:
                out = self.derived.setdefault(entry, out)
        return out

    def _optimized(self, key, graphs, i):
        """``graphs[i]`` (of signature ``key``), a graph as traced, through the passes. They
        rewrite its nodes (it is this object's own: copying them would cost the first replay
        more than one object per node saves the first call), so one call runs them while
        others wait; None for a call from within them, which runs ``f`` eagerly."""
        with self.lock:
            graph = graphs[i]
            if graph.optimized:  # (by another call, while this one waited)
                return graph
            if graph in self.passing:
                return None
            self.passing.add(graph)
            try:
                graphs[i] = optimize(graph, in_place=True, merge=False)
            except BaseException:
                # (its nodes half rewritten: out of the cache, so the next call traces anew,
                # and left in ``passing`` for a call that waited with the old list)
                self.cache[key] = [g for g in graphs if g is not graph]
                raise
            self.passing.discard(graph)
            return graphs[i]


_ARRAYS = frozenset([_onp.ndarray, _onp.float64])


def _plain_signature(args):
    """``(leaves, key)`` of arguments made of arrays in tuples, lists and dicts, the key a
    flat tuple that tells such signatures apart (per array its shape, a tuple, and dtype; per
    container an int tag, then its length or keys), and whether a tracer over an array is
    among the leaves (its signature is its value's, as ``_signature`` says); None for
    anything else."""
    leaves, key, traced = [], [], []
    if not _plain(args, leaves, key, traced):
        return None
    return leaves, tuple(key), bool(traced)


def _plain(items, leaves, key, traced):
    for x in items:
        c = x.__class__
        if c is _onp.ndarray:
            leaves.append(x)
            key.append(x.shape)
            key.append(x.dtype)
        elif c is dict:
            try:
                keys = sorted(x)
            except TypeError:  # (keys of several types: tree_flatten says so)
                return False
            key.append(3)
            key.append(tuple(keys))
            if not _plain([x[k] for k in keys], leaves, key, traced):
                return False
        elif c is list or c is tuple:
            key.append(1 if c is list else 2)
            key.append(len(x))
            if not _plain(x, leaves, key, traced):
                return False
        elif isinstance(x, Tracer):  # (a transform's value: the call goes to its rule)
            m = value_for_shape(x)
            if m.__class__ is not _onp.ndarray:
                return False
            leaves.append(x)
            key.append(m.shape)
            key.append(m.dtype)
            traced.append(x)
        else:
            return False
    return True


def _is_value(x):
    if isinstance(x, Tracer):  # (a traced array or number: a value, whatever its trace)
        return True
    m = value_for_shape(x)
    return isinstance(m, (_onp.ndarray, _onp.generic, int, float, complex)) or foreign_array(m)


def _signature(x):
    """What a graph is specialised to: shape and dtype (a Python number: its type)."""
    m = value_for_shape(x)
    if isinstance(m, (bool, int, float, complex)):
        return type(m)
    if foreign_array(m):  # (a graph traced on one library's arrays runs on that library's)
        return type(m), m.shape, m.dtype
    return _onp.shape(m), _onp.result_type(m)


def _innermost(leaves):
    """The innermost transform's trace among ``leaves`` (None if none is traced)."""
    top = None
    for x in leaves:
        if isinstance(x, Tracer) and (top is None or x._trace.level > top.level):
            top = x._trace
    return top
