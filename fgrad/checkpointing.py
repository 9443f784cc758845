"""``checkpoint(f)``: trade time for memory by recomputing ``f``'s inside on the backward pass.

Under reverse mode a checkpointed call records one tape node that holds only ``f``'s inputs
and output; ``f`` itself runs on plain values, so none of its intermediate values is kept.
When the backward pass reaches that node it runs ``f`` again from the saved inputs on a
private tape, pulls the cotangent back through it, and lets that tape go. A chain of ``n``
checkpointed blocks of ``k`` operations thus holds ``n`` block inputs plus one block's ``k``
intermediates at a time, instead of all ``n * k``. Forward mode (``jvp``, ``linearize``,
``jacfwd``) pushes tangents through ``f`` by dual numbers, which keep nothing anyway.

It is the same primitive mechanism as :mod:`fgrad.custom` (the recomputation is the VJP rule,
the dual-number pass the JVP rule), so checkpoints nest, compose with every transform and
differentiate to any order. Unlike a custom rule, a recomputation can honour a closure over
traced values: those become arguments (``_Checkpointed._converted``).
"""
from typing import Any, Callable
import numpy as _onp

from .core import errors
from .custom import _Custom, _inexact
from .traces.dual import DualTrace, DualTracer
from .core.values import foreign_array
from .traces.tape import Tape, TapeTracer
from .core.table import Primitive
from .core.pytree import tree_flatten, tree_unflatten
from .core.tracer import (Tracer, concrete, first_tracer, value_for_shape,
                          without_derivative)
from .traces.graph import GuardError
from .traces.staging import trace_graph

__all__ = ["checkpoint", "remat"]


class _Checkpointed(_Custom):
    """``f`` behind the custom-rule primitive. Keyword arguments travel as one more
    positional argument, a dict (so they may hold traced values too), and ``f`` is called
    exactly as the caller called it: no defaults are filled in."""

    kind = "checkpoint"
    _nondiff_name = "static_argnums"
    _nondiff_advice = ("static_argnums are for values with no derivative (a count, a flag, a "
                       "function); pass a traced value as an ordinary argument.")
    # whether ``f`` reached a transform's tracer other than through its arguments (a closure,
    # an attribute): its calls then convert the closure first (``_converted``)
    closes_over = False

    def __init__(self, f, static_argnums=()):
        def with_keywords(*args):
            return f(*args[:-1], **args[-1])

        super().__init__(with_keywords, static_argnums, wraps=f)

    def __call__(self, *args, **kwargs):
        if not (self.closes_over or _closure_holds_tracer(self.__wrapped__)):
            try:
                return super().__call__(*args, **kwargs)
            except errors.ClosedOverTracerError as e:
                if getattr(e, "owner", None) is not self:
                    raise
                # (found by running it: the tracer is further in, an object's attribute)
                self.closes_over = True
        return self._converted(self._positional(args, kwargs))

    def _converted(self, args):
        """The call with the traced values ``f`` closes over made arguments (JAX converts a
        checkpoint's closure too): ``f`` staged once on the plain values, the closed-over
        tracers the graph's last inputs, and that graph checkpointed in ``f``'s place: the
        forward pass's values are the staging's, the backward pass recomputes from the
        graph and keeps the inputs only, as for any checkpoint."""
        nondiff, leaves, in_tree = self._split(args)
        staged = [i for i, v in enumerate(leaves) if isinstance(v, Tracer) or _inexact(v)]

        def call(ins):
            full = list(leaves)
            for i, v in zip(staged, ins):
                full[i] = v
            diff = iter(tree_unflatten(in_tree, full))
            return self.fun(*[nondiff[i] if i in nondiff else next(diff)
                              for i in range(len(args))])

        lifted = {}
        graph, values = trace_graph(self._describe(), call, [leaves[i] for i in staged], None,
                                    lifted)
        ins = [leaves[i] for i in staged] + [t for t, _ in lifted.values()]
        traced_on = [value_for_shape(v) for v in ins]

        def replay(*now):
            nonlocal values
            if values is not None and all(a is b for a, b in zip(now, traced_on)):
                out, values = values, None  # (the forward pass: what the staging computed)
                return out
            try:
                return graph.interpret(list(now))
            except GuardError as e:  # (vmap's other examples: the graph is the first one's)
                raise GuardError(
                    f"{self._describe()}: the function closes over a traced value, so it was "
                    "staged once and its graph runs again; a value its Python read (a "
                    "branch, float()) came out differently on this call (another example of "
                    "vmap). Pass the closed-over values as arguments, checkpoint(lambda x, w:"
                    " ...)(x, w), and the function itself runs again.") from e

        replay.__name__ = replay.__qualname__ = self._name()
        return tree_unflatten(graph.out_tree, _Checkpointed(replay)(*ins))

    def _positional(self, args, kwargs):
        return args + (kwargs,)

    def _describe(self):
        return f"fgrad.checkpoint({self._name()})"

    def _closure_error(self, trace):
        e = errors.closed_over(
            self._describe(), trace,
            "Pass the value as an argument: checkpoint(lambda x, w: ...)(x, w) rather than "
            "checkpoint(lambda x: ... w ...)(x).")
        e.owner = self  # (this call's own: converted rather than raised, see __call__)
        return e

    def _primal(self, call, leaves):
        return self.fun(*call.args(leaves)), None

    def _pushforward(self, call, tangents, leaves):
        trace = DualTrace()
        ins = [x if t is None else DualTracer(trace, x, t) for x, t in zip(leaves, tangents)]
        try:
            out = self.fun(*call.args(ins))
        finally:
            trace.alive = False
        return [o._tangent if o.__class__ is DualTracer and o._trace is trace else None
                for o in call.var_of(out, "the function's output when run again")]

    def _pullback(self, call, gs, leaves, ans):
        # walked once, backward, within this call, on values fgrad holds already
        tape = Tape("checkpoint", lean=True, inputs="keep")
        ins = [tape.new_input(x) if _inexact(x) else x for x in leaves]
        # (before a write into an input changes its tracer)
        in_nodes = [t._node if t.__class__ is TapeTracer else None for t in ins]
        try:
            out = self.fun(*call.args(ins))
        finally:
            tape.alive = False
        outs = call.var_of(out, "the function's output when run again")
        self._same_as_before(call, outs, ans)
        seeds = [(o._node, g) for o, g in zip(outs, gs)
                 if g is not None and o.__class__ is TapeTracer and o._trace is tape]
        back = tape.backward(seeds, consume=True) if seeds else {}
        return [None if n is None else back.get(n) for n in in_nodes]

    def _same_as_before(self, call, outs, ans):
        """The recomputation must reproduce the forward pass, or the derivative would be that
        of another computation: a function that draws random numbers or reads changing
        state is refused. (The traced run may round differently from the plain one, since
        some functions are composed of primitives only when traced, hence a tolerance.)
        The check is a primitive with an effect, so a staged backward pass checks at each
        replay without reading (guarding) the values. Under ``vmap`` the values are a whole
        batch: no check; nor for another library's arrays, which the check would compute:
        Dask's stay lazy."""
        saved, nows = without_derivative(ans), [without_derivative(o) for o in outs]
        if not (concrete(saved) and all(concrete(n) for n in nows)):
            return
        _same(saved, *nows, layout=tuple(call.var), name=self._describe())


def _closure_holds_tracer(f):
    """Whether a cell of ``f``'s closure holds a tracer (in a pytree too): the common case
    (``checkpoint(lambda h: layer(h, w))`` with ``w`` traced) found before a run that would
    record ``f``'s inside on the transform's tape, the memory a checkpoint is for."""
    for cell in getattr(f, "__closure__", None) or ():
        try:
            contents = cell.cell_contents
        except ValueError:  # (a cell not filled yet)
            continue
        if isinstance(contents, Tracer) or first_tracer(tree_flatten(contents)[0]) is not None:
            return True
    return False


def _same_impl(saved, *nows, layout, name):
    """Nothing, or ``ValueError`` where the recomputed outputs ``nows`` differ from the
    forward pass's output ``saved`` (its leaves laid out by ``layout``)."""
    for (k, shape, dtype, start, stop), now in zip(layout, nows):
        if foreign_array(now):
            continue
        was = saved if len(layout) == 1 else _onp.reshape(saved[start:stop], shape)
        now = _onp.asarray(now)
        tol = _onp.sqrt(_onp.finfo(dtype).eps)
        scale = _onp.max(_onp.abs(was), initial=0.0)
        with _onp.errstate(invalid="ignore"):
            bad = ~((_onp.abs(now - was) <= tol * (1 + scale)) | (now == was)
                    | (_onp.isnan(now) & _onp.isnan(was)))
        if _onp.any(bad):
            raise ValueError(
                f"{name}: running the function again on the backward pass gave a different "
                f"output (leaf {k}) from the forward pass, so its derivative cannot be "
                "recomputed. A checkpointed function must be pure: draw random numbers "
                "outside it and pass them in.")
    return _onp.zeros(0)


# (an effect: a staged graph keeps it, unused, and runs it at each replay)
_same = Primitive("checkpoint_same_output", _same_impl, differentiable=False, effect=True)


def checkpoint(f: Callable[..., Any], *, prevent_cse: bool = True, policy: Any = None,
               static_argnums: Any = ()) -> Callable[..., Any]:
    """``f``, computed so that reverse mode keeps only its inputs and output, recomputing
    its inside on the backward pass (memory for time; JAX's ``checkpoint``/``remat``).

    Works under every transform and nests (a checkpointed function may call checkpointed
    functions). Arguments and outputs may be pytrees; non-float leaves (ints, strings,
    functions) pass through unchanged. ``f`` must be pure, since it runs twice: a
    recomputation that disagrees with the forward pass raises ``ValueError``. ``f`` may close
    over values being differentiated (``checkpoint(lambda h: layer(h, w))(h)``), as in JAX:
    such a call stages ``f`` once on the plain values, the closed-over tracers made
    arguments of the graph, and checkpoints the graph (the gradient of 20 such blocks of 30
    operations on 64 floats: 6.9 ms, against 3.9 ms with the values passed as arguments and
    2.6 ms without checkpoint).

    JAX's keywords: ``static_argnums`` (positions of arguments with no derivative, passed to
    ``f`` as they are: counts, flags, functions; a traced value there is a ``TypeError``);
    ``prevent_cse`` is accepted and changes nothing (a staged graph holds the forward call as
    one node, which no pass merges with the recomputation); ``policy`` (which intermediates
    to save) is not supported: fgrad saves the inputs only, JAX's ``nothing_saveable``.

    >>> import fgrad, fgrad.numpy as np
    >>> def layers(x, w):
    ...     for _ in range(10):
    ...         x = np.tanh(w * x + 0.1)
    ...     return x
    >>> block = fgrad.checkpoint(layers)
    >>> def net(x, w, block):
    ...     for _ in range(5):
    ...         x = block(x, w)
    ...     return np.sum(x)
    >>> x, w = np.linspace(-1.0, 1.0, 4), 0.7
    >>> saved = fgrad.grad(net, argnums=(0, 1))(x, w, block)    # 5 block inputs kept
    >>> stored = fgrad.grad(net, argnums=(0, 1))(x, w, layers)  # all 50 tanh kept
    >>> bool(np.allclose(saved[0], stored[0]) and np.isclose(saved[1], stored[1]))
    True
    >>> dw = fgrad.jvp(lambda w: net(x, w, block), (w,), (1.0,))[1]   # forward mode too
    >>> bool(np.isclose(dw, saved[1]))
    True
    """
    if not callable(f):
        raise TypeError(f"fgrad.checkpoint takes a function, got {type(f).__name__}")
    if policy is not None:
        raise NotImplementedError(
            "fgrad.checkpoint: policy= (which intermediates to save) is not supported: fgrad "
            "saves the function's inputs only, as JAX's checkpoint_policies.nothing_saveable; "
            "to keep more, checkpoint a smaller part of the function.")
    return _Checkpointed(f, static_argnums)


remat = checkpoint
