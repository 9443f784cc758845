"""The transforms: grad, value_and_grad, vjp, jvp, linearize, jacfwd, jacrev, hessian.

Each is a thin layer over two mechanisms: the tape (``tape.Tape``: record, then walk backward
or forward) and dual numbers (``dual.DualTrace``). Pytrees, ``argnums`` and ``has_aux`` are
handled here, once, so the mechanisms only ever see flat lists of values.
"""
from typing import Any, Callable, Sequence
import numpy as _onp

from .core import errors
from .core.fpwarnings import at_user_code
from .core.values import PYTHON_NUMBERS, copied, foreign_array
from .core.pytree import tree_flatten, tree_unflatten
from .core.tracer import Tracer, value_for_shape, map_tracers, value_dtype
from .numpy import concatenate, reshape, stack
from .traces.arguments import (argnums_partial, check_holomorphic, check_like, finish,
                               flat_inputs, fresh, is_integer, lowered, outputs_of,
                               shape_of_value, split_aux, staged_form, zeros_for)
from .traces.batching import vmap
from .traces.dual import DualTrace, DualTracer
from .traces.rules import sweep_forward
from .traces.tape import Tape, TapeTracer
from .numpy.namespace import stopped

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "jacobian", "hessian", "stop_gradient", "float0"]

#: The dtype of the derivative with respect to an integer or boolean input differentiated with
#: ``allow_int=True``: no values, only a shape (JAX's ``float0``, the same numpy dtype).
float0 = _onp.dtype([("float0", _onp.void, 0)])


class Recording:
    """A function run once on a fresh tape: flat inputs and outputs with their nodes."""

    def __init__(self, f, args, fname, has_aux=False, lean=False, inputs="copy",
                 allow_int=False, swept=False):
        """``lean``, ``swept`` and ``inputs``: the tape's policy (``Tape``); with
        ``inputs="read-only"`` the caller walks the tape before returning and calls
        ``release()`` when done, errors included. ``allow_int``: integer inputs pass through
        untraced (their node is None)."""
        flat, self.in_tree = flat_inputs(args, fname, allow_int)
        self.inputs = flat
        self.tape = tape = Tape(fname, lean=lean, inputs=inputs, swept=swept)
        if allow_int:
            tracers = [x if is_integer(x) else tape.new_input(x) for x in flat]
            self.in_nodes = [t._node if t.__class__ is TapeTracer else None for t in tracers]
        else:
            tracers = [tape.new_input(x) for x in flat]
            self.in_nodes = [t._node for t in tracers]
        try:
            try:
                out = tape.run(f, tree_unflatten(self.in_tree, tracers), fname)
            except ValueError as e:
                if tape.kept.read_only and "read-only" in str(e):
                    raise errors.input_written(fname) from e
                raise
            self.aux = None
            if has_aux:
                out, self.aux = split_aux(out, fname)
                self.aux = lowered(self.aux, tape)
            out_flat, self.out_tree, own = outputs_of(tape, out, fname)
            self.out_vals, self.out_nodes = [], []
            for o, t in zip(out_flat, own):
                self.out_vals.append(o if t is None else t._value)
                self.out_nodes.append(None if t is None else t._node)
        except BaseException:  # (no caller will walk this tape: give the guarded inputs back)
            tape.release()
            raise

    def release(self):
        self.tape.release()

    def output(self):
        """The outputs, as copies: the tape's rules read these arrays, so a caller changing
        the returned array in place must not change what ``vjp_fn``/``jvp_fn`` compute."""
        return tree_unflatten(self.out_tree, [copied(finish(v)) for v in self.out_vals])


# --- the transforms ---------------------------------------------------------------------

def vjp(f: Callable[..., Any], *primals: Any, has_aux: bool = False) -> tuple:
    """Run ``f(*primals)`` and return ``(out, vjp_fn)``; ``vjp_fn(ct)`` gives one cotangent per
    primal, as a tuple. With ``has_aux=True``, ``f`` returns ``(out, aux)`` and ``vjp`` returns
    ``(out, vjp_fn, aux)``. ``vjp_fn`` may be called many times.

    >>> import fgrad, fgrad.numpy as np
    >>> out, f_vjp = fgrad.vjp(lambda x, y: x * y, 2.0, 3.0)
    >>> [float(c) for c in f_vjp(1.0)]
    [3.0, 2.0]
    """
    with at_user_code():
        rec = Recording(f, primals, "vjp", has_aux, lean=True)
    out = rec.output()

    def vjp_fn(ct):
        with at_user_code():
            return _pull_back(rec, ct, consume=False)

    return (out, vjp_fn, rec.aux) if has_aux else (out, vjp_fn)


def _pull_back(rec, ct, consume, checked=False):
    """The cotangents of the inputs; ``checked``: ``ct`` is a list of flat cotangents known to
    fit (grad's own seed)."""
    if checked:
        ct_flat = ct
    else:
        ct_flat, ct_tree = tree_flatten(ct)
        if ct_tree != rec.out_tree:
            raise ValueError(f"vjp_fn: the cotangent's structure {ct_tree!r} differs from the "
                             f"output's {rec.out_tree!r}")
        for val, c in zip(rec.out_vals, ct_flat):
            check_like("vjp_fn", c, val, "the cotangent")
    seeds = [(node, c) for node, c in zip(rec.out_nodes, ct_flat) if node is not None]
    cts = rec.tape.backward(seeds, consume=consume)
    grads = []
    for n, x in zip(rec.in_nodes, rec.inputs):
        c = cts.get(n)
        if c is None:
            c = (_onp.zeros(shape_of_value(value_for_shape(x)), float0) if n is None
                 else zeros_for(x))
        elif not (c.__class__ is x.__class__ is _onp.ndarray and c.dtype is x.dtype
                  and c.shape == x.shape and c.shape) and not _final_tracer(c, x):
            c = finish(_shaped_like(c, x), x)
        if not checked:  # (grad's own seed is no caller's array)
            c = fresh(c, ct_flat)
        grads.append(c)
    return tree_unflatten(rec.in_tree, grads)


def _final_tracer(ct, x):
    """Whether ``ct`` is a tracer (a staged or nested gradient) of an array of ``x``'s
    shape and dtype, which ``finish`` and ``_shaped_like`` would give back as it is (asked
    first: 3.4% less bytecode in a staged width-16 MLP gradient's first call)."""
    if not isinstance(ct, Tracer):
        return False
    c, v = value_for_shape(ct), value_for_shape(x)
    return c.__class__ is v.__class__ is _onp.ndarray and c.dtype is v.dtype and \
        c.shape == v.shape


def _shaped_like(ct, x):
    """A cotangent must have its input's shape; a rule that forgot to undo broadcasting would
    otherwise hand back a gradient of the wrong shape without a word."""
    have, want = shape_of_value(value_for_shape(ct)), shape_of_value(value_for_shape(x))
    if have != want:
        raise ValueError(f"a VJP rule produced a cotangent of shape {have} for an input of "
                         f"shape {want}; a rule that broadcasts its arguments must sum the "
                         "cotangent back down (fgrad.unbroadcast)")
    return ct


def value_and_grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
                   holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """Like :func:`grad`, but the function returns ``(value, gradient)`` from one forward pass
    (with aux: ``((value, aux), gradient)``).

    >>> import fgrad, fgrad.numpy as np
    >>> v, g = fgrad.value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    >>> float(v), g.tolist()
    (5.0, [2.0, 4.0])
    """
    staged = staged_form(f, "value_and_grad", (argnums, has_aux, holomorphic, allow_int),
                         lambda g: value_and_grad(g, argnums, has_aux, holomorphic, allow_int))
    if staged is not None:  # (a jitted f: its transform staged whole)
        return staged

    def value_and_grad_f(*args, **kwargs):
        g, dyn = argnums_partial(f, "grad", args, kwargs, argnums)
        if holomorphic:
            check_holomorphic("grad", tree_flatten(dyn)[0], "input")
        with at_user_code():
            return _value_and_grad(g, dyn, argnums, has_aux, holomorphic, allow_int)

    value_and_grad_f.__name__ = f"value_and_grad({errors.function_name(f)})"
    value_and_grad_f.__doc__ = f.__doc__
    return value_and_grad_f


def _value_and_grad(g, dyn, argnums, has_aux, holomorphic, allow_int):
    """value_and_grad_f's work, once the arguments are split and checked."""
    rec = Recording(g, dyn, "grad", has_aux, lean=True, inputs="read-only",
                    allow_int=allow_int)
    try:
        if rec.out_tree.kind != "leaf":
            if rec.out_tree.kind == "none":
                raise TypeError("grad requires a function returning one real scalar, but it "
                                "returned None: is a `return` missing?")
            raise TypeError("grad requires a function returning one real scalar, but it "
                            f"returned a {rec.out_tree!r} structure; use jacrev or vjp "
                            "for several outputs")
        out = rec.out_vals[0]
        _check_scalar(out, holomorphic)
        grads = _pull_back(rec, [_seed(value_for_shape(out))], consume=True, checked=True)
    finally:
        rec.release()
    grads = grads[0] if isinstance(argnums, int) else grads
    value = finish(out)
    return ((value, rec.aux), grads) if has_aux else (value, grads)


def _seed(v):
    """grad's cotangent for the scalar output ``v``: 1 of its dtype, in its own library for
    another library's array (from a numpy seed, the first rule would spread a numpy array of
    the data's size into a Dask graph)."""
    if foreign_array(v):
        return _onp.ones_like(v)
    return value_dtype(v).type(1)


def _check_scalar(out, holomorphic):
    v = value_for_shape(out)
    shape, dtype = shape_of_value(v), value_dtype(v)
    if holomorphic:
        if shape != ():
            raise TypeError(f"grad requires a function returning a scalar, but it returned "
                            f"shape {shape}; use jacrev(..., holomorphic=True) for arrays")
        check_holomorphic("grad", [out], "output")
    elif shape != () or dtype.kind != "f":
        raise TypeError(f"grad requires a function returning a real scalar (shape (), float "
                        f"dtype), but it returned shape {shape} with dtype {dtype}. For "
                        "array outputs use jacrev/jacfwd, or vjp with a cotangent; to "
                        "differentiate a total, return np.sum(...); for the complex derivative "
                        "of a holomorphic function pass holomorphic=True.")


def grad(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
         holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The gradient of a real-scalar function ``f`` with respect to argument(s) ``argnums``.

    The result has the pytree structure of the chosen argument (a tuple of them when
    ``argnums`` is a tuple). With ``has_aux=True``, ``f`` returns ``(value, aux)`` and the
    gradient function returns ``(gradient, aux)``.

    As in JAX: a real function of complex inputs gives the conjugate of the steepest-ascent
    direction; ``holomorphic=True`` takes a complex function of complex inputs and gives its
    complex derivative f'(z) (real inputs or outputs are then a TypeError).
    ``allow_int=True`` lets integer and boolean inputs through as constants: their gradient
    is zeros of dtype :data:`float0`.

    >>> import fgrad, fgrad.numpy as np
    >>> f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    >>> [round(float(g), 3) for g in fgrad.grad(f, argnums=(0, 1))(2.0, 5.0)]
    [5.5, 1.716]
    >>> complex(fgrad.grad(lambda z: z ** 3, holomorphic=True)(1 + 1j))   # 3 z**2
    6j
    """
    staged = staged_form(f, "grad", (argnums, has_aux, holomorphic, allow_int),
                         lambda g: grad(g, argnums, has_aux, holomorphic, allow_int))
    if staged is not None:  # (a jitted f: its transform staged whole)
        return staged
    vg = value_and_grad(f, argnums, has_aux, holomorphic, allow_int)

    def grad_f(*args, **kwargs):
        (value, g) = vg(*args, **kwargs)
        return (g, value[1]) if has_aux else g

    grad_f.__name__ = f"grad({errors.function_name(f)})"
    grad_f.__doc__ = f.__doc__
    return grad_f


def jvp(f: Callable[..., Any], primals: Sequence[Any], tangents: Sequence[Any],
        has_aux: bool = False) -> tuple:
    """Forward mode: ``(f(*primals), J·tangents)``, by dual numbers.

    ``primals`` and ``tangents`` are tuples (or lists) of the same structure and shapes. With
    ``has_aux=True`` returns ``(out, tangent_out, aux)``.

    >>> import fgrad, fgrad.numpy as np
    >>> out, t = fgrad.jvp(np.sin, (0.0,), (2.0,))
    >>> float(out), float(t)
    (0.0, 2.0)
    """
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise TypeError("jvp(f, primals, tangents): primals and tangents must be tuples or "
                        f"lists, got {type(primals).__name__} and {type(tangents).__name__}")
    k = len(primals)  # (a jitted f: jvp of it staged whole, taking primals then tangents)
    staged = staged_form(f, "jvp", (k, has_aux),
                         lambda g: lambda *both: jvp(g, both[:k], both[k:], has_aux))
    if staged is not None:
        return staged(*primals, *tangents)
    flat, in_tree = flat_inputs(tuple(primals), "jvp")
    t_flat, t_tree = tree_flatten(tuple(tangents))
    if t_tree != in_tree:
        raise ValueError(f"jvp: tangents' structure {t_tree!r} differs from primals' "
                         f"{in_tree!r}")
    trace = DualTrace()
    ins = []
    for p, t in zip(flat, t_flat):
        check_like("jvp", t, p, "a tangent")
        ins.append(DualTracer(trace, p, t))
    with at_user_code():
        out = trace.run(f, tree_unflatten(in_tree, ins), "jvp")
    aux = None
    if has_aux:
        out, aux = split_aux(out, "jvp")
        aux = lowered(aux, trace)
    out_flat, out_tree, own = outputs_of(trace, out, "jvp")
    vals, tans = [], []
    for o, t in zip(out_flat, own):
        if t is None:
            vals.append(fresh(finish(o), flat))
            tans.append(zeros_for(o))
        else:
            vals.append(fresh(finish(t._value), flat))
            tans.append(fresh(finish(t._tangent, t._value), t_flat))
    res = (tree_unflatten(out_tree, vals), tree_unflatten(out_tree, tans))
    return res + (aux,) if has_aux else res


def linearize(f: Callable[..., Any], *primals: Any) -> tuple[Any, Callable[..., Any]]:
    """Run ``f`` once and return ``(out, jvp_fn)``; ``jvp_fn(*tangents)`` pushes tangents
    through the recorded tape with the JVP rules, without running ``f`` again.

    >>> import fgrad, fgrad.numpy as np
    >>> out, f_jvp = fgrad.linearize(np.exp, 0.0)
    >>> float(f_jvp(3.0))
    3.0
    """
    with at_user_code():
        rec = Recording(f, primals, "linearize", swept=True)

    def jvp_fn(*tangents):
        t_flat, t_tree = tree_flatten(tuple(tangents))
        if t_tree != rec.in_tree:
            raise ValueError(f"linearize's jvp_fn: tangents' structure {t_tree!r} differs "
                             f"from primals' {rec.in_tree!r}")
        seeds = {}
        for n, p, t in zip(rec.in_nodes, rec.inputs, t_flat):
            check_like("jvp_fn", t, p, "a tangent")
            seeds[n] = t
        with at_user_code():
            tans = sweep_forward(rec.tape, seeds)
        outs = [zeros_for(v) if n is None or tans.get(n) is None
                else fresh(finish(tans[n], v), t_flat)
                for n, v in zip(rec.out_nodes, rec.out_vals)]
        return tree_unflatten(rec.out_tree, outs)

    return rec.output(), jvp_fn


def _basis(x):
    """Unit vectors shaped like ``x``, one per element (plain numpy)."""
    v = value_for_shape(x)
    if v.__class__ in PYTHON_NUMBERS:  # (weak, as numpy promotes the number itself)
        yield v.__class__(1)
        return
    shape, dtype = _onp.shape(v), _onp.result_type(v)
    for k in range(int(_onp.prod(shape, dtype=int))):
        e = _onp.zeros(shape, dtype)
        e.flat[k] = 1
        yield e


def _assemble(parts, lead_shape, tail_shape, axis, out, x):
    """Stack per-element results and shape them ``out.shape + in.shape``: in ``x``'s dtype
    for rows (cotangents, as ``vjp`` gives them), ``out``'s for columns (tangents, as
    ``jvp``)."""
    size = int(_onp.prod(lead_shape if axis == 0 else tail_shape, dtype=int))
    if size == 0 or not parts:
        # no entries: the dtype a non-empty Jacobian of these values would have (float32
        # stays float32, complex stays complex)
        kinds = [_onp.result_type(value_for_shape(v)) for v in (out, x)]
        kinds = [k for k in kinds if _onp.issubdtype(k, _onp.inexact)]
        dtype = _onp.result_type(*kinds) if kinds else _onp.float64
        return _onp.zeros(tuple(lead_shape) + tuple(tail_shape), dtype)
    return finish(reshape(stack(parts, axis=axis), tuple(lead_shape) + tuple(tail_shape)),
                  x if axis == 0 else out)


def jacrev(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False, allow_int: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``f`` by reverse mode: one backward pass per output element.

    For an output of shape ``S_out`` and input of shape ``S_in`` the result has shape
    ``S_out + S_in``; pytrees nest as the output's tree holding the input's tree.

    Reverse mode pulls back real unit cotangents, so complex outputs need
    ``holomorphic=True`` (as in JAX; the result is then df/dz and the inputs must be complex
    too); ``allow_int=True``: integer inputs give :data:`float0` blocks, as in :func:`grad`.

    >>> import fgrad, fgrad.numpy as np
    >>> fgrad.jacrev(lambda x: x ** 2)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 4.0]]
    """
    staged = staged_form(f, "jacrev", (argnums, has_aux, holomorphic, allow_int),
                         lambda g: jacrev(g, argnums, has_aux, holomorphic, allow_int))
    if staged is not None:  # (a jitted f: its transform staged whole)
        return staged

    def jacrev_f(*args, **kwargs):
        g, dyn = argnums_partial(f, "jacrev", args, kwargs, argnums)
        if holomorphic:
            check_holomorphic("jacrev", tree_flatten(dyn)[0], "input")
        with at_user_code():
            rec = Recording(g, dyn, "jacrev", has_aux, lean=True, inputs="read-only",
                            allow_int=allow_int)
            try:
                if holomorphic:
                    check_holomorphic("jacrev", rec.out_vals, "output")
                else:
                    _refuse_complex(rec.out_vals, "jacrev: output", _COMPLEX_OUTPUT)
                return _jacrev_blocks(rec, argnums, has_aux)
            finally:
                rec.release()

    jacrev_f.__name__ = f"jacrev({errors.function_name(f)})"
    return jacrev_f


def _refuse_complex(leaves, where, why):
    """Without ``holomorphic=True``: a complex leaf is a TypeError saying ``why`` (after
    "<where> leaf i is complex (dtype). ")."""
    for i, v in enumerate(leaves):
        dtype = value_dtype(value_for_shape(v))
        if dtype.kind == "c":
            raise TypeError(f"{where} leaf {i} is complex ({dtype}). {why}")


def _all_at_once(sweep, like, out_axes):
    """``sweep`` over every unit vector shaped like ``like`` in one batched pass (``vmap``
    over the stacked basis), or None where that cannot be done: a basis of complex or no
    elements, or a rule that reads the values it is given (it raises under vmap; the caller
    then sweeps one vector at a time, as before)."""
    v = value_for_shape(like)
    if v.__class__ in PYTHON_NUMBERS:  # (one element, weak: _basis's one sweep serves)
        return None
    shape, dtype = _onp.shape(v), _onp.result_type(v)
    n = int(_onp.prod(shape, dtype=int))
    if n == 0 or dtype.kind != "f":
        return None
    basis = _onp.eye(n, dtype=dtype).reshape((n,) + tuple(shape))
    # the batch in chunks of about _CHUNK elements of the basis: one batch of n x n makes
    # every intermediate n times the function's, and a first call pays the pages of each
    # (pymanopt's test of a 100 x 50 projection's Jacobian, 5000 x 5000: first call 0.19-1.96
    # s, median 1.12, in one batch; 0.28-1.03, median 0.35, in chunks of 2**18; the same
    # 0.22 s once warm). Small inputs (n <= 512) stay one batch.
    rows = max(1, _CHUNK // n)
    try:
        if rows >= n:
            return vmap(sweep, out_axes=out_axes)(basis)
        parts = [vmap(sweep, out_axes=out_axes)(basis[k:k + rows]) for k in range(0, n, rows)]
    except errors.ConcretizationError:
        return None
    return [concatenate([p[j] for p in parts], axis=out_axes) for j in range(len(parts[0]))]


_CHUNK = 1 << 18


def _jacrev_blocks(rec, argnums, has_aux):
    """jacrev's result from a recorded function: all backward passes at once (batched over
    the output's unit vectors), or one per output element."""
    blocks = []
    for node, val in zip(rec.out_nodes, rec.out_vals):
        out_shape = _onp.shape(value_for_shape(val))

        def sweep(e, node=node):
            cts = rec.tape.backward([(node, e)]) if node is not None else {}
            return [zeros_for(x) if cts.get(n) is None else _shaped_like(cts[n], x)
                    for n, x in zip(rec.in_nodes, rec.inputs)]

        rows = _all_at_once(sweep, val, 0) if node is not None else None
        if rows is None:  # one backward pass per unit vector, stacked first
            swept = [sweep(e) for e in _basis(val)]
            parts = [_assemble([s[j] for s in swept], out_shape,
                               _onp.shape(value_for_shape(x)), 0, val, x)
                     for j, x in enumerate(rec.inputs)]
        else:
            parts = [finish(reshape(r, tuple(out_shape) + _onp.shape(value_for_shape(x))), x)
                     for r, x in zip(rows, rec.inputs)]
        for j, (n, x) in enumerate(zip(rec.in_nodes, rec.inputs)):
            if n is None:  # an integer input let through by allow_int
                parts[j] = _onp.zeros(tuple(out_shape) + shape_of_value(value_for_shape(x)), float0)
        blocks.append(tree_unflatten(rec.in_tree, parts))
    jac = tree_unflatten(rec.out_tree, [b[0] if isinstance(argnums, int) else b
                                        for b in blocks])
    return (jac, rec.aux) if has_aux else jac


jacobian = jacrev


def jacfwd(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
           holomorphic: bool = False) -> Callable[..., Any]:
    """The Jacobian of ``f`` by forward mode: records ``f`` once, then one forward sweep of
    the tape per input element. Same result layout as :func:`jacrev`.

    Forward mode pushes one real unit tangent per input element, so for complex inputs the
    result is ``df/dz``, which is the Jacobian only of a holomorphic ``f``: as in JAX, complex
    inputs need ``holomorphic=True`` (for a real function of complex inputs use ``jacrev``
    or ``grad``).

    >>> import fgrad, fgrad.numpy as np
    >>> fgrad.jacfwd(lambda x: np.sin(x) * 2)(np.array([0.0, 0.0])).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    staged = staged_form(f, "jacfwd", (argnums, has_aux, holomorphic),
                         lambda g: jacfwd(g, argnums, has_aux, holomorphic))
    if staged is not None:  # (a jitted f: its transform staged whole)
        return staged

    def jacfwd_f(*args, **kwargs):
        g, dyn = argnums_partial(f, "jacfwd", args, kwargs, argnums)
        if holomorphic:
            check_holomorphic("jacfwd", tree_flatten(dyn)[0], "input")
        else:
            _refuse_complex(tree_flatten(dyn)[0], "jacfwd: input", _COMPLEX_INPUT)
        with at_user_code():
            rec = Recording(g, dyn, "jacfwd", has_aux, inputs="read-only", swept=True)
            try:
                if holomorphic:
                    check_holomorphic("jacfwd", rec.out_vals, "output")
                return _jacfwd_blocks(rec, argnums, has_aux)
            finally:
                rec.release()

    jacfwd_f.__name__ = f"jacfwd({errors.function_name(f)})"
    return jacfwd_f


_COMPLEX_OUTPUT = (
    "Reverse mode pulls back real unit cotangents, so unless the function is holomorphic the "
    "Jacobian would miss the output's imaginary part. For a holomorphic function pass "
    "holomorphic=True (the result is then df/dz); for complex outputs of real inputs use "
    "jacfwd; or call vjp with the cotangents you need.")
_COMPLEX_INPUT = (
    "Forward mode pushes real tangents only, so unless the function is holomorphic the "
    "Jacobian would miss the imaginary direction. For a real function of complex inputs use "
    "jacrev or grad; for a holomorphic function pass holomorphic=True (the result is then "
    "df/dz).")


def _jacfwd_blocks(rec, argnums, has_aux):
    """jacfwd's result from a recorded function: all forward sweeps of an input at once
    (batched over its unit vectors), or one per input element."""
    out_shapes = [_onp.shape(value_for_shape(val)) for val in rec.out_vals]
    parts = [[None] * len(rec.inputs) for _ in rec.out_vals]  # [output][input]
    for j, (n, x) in enumerate(zip(rec.in_nodes, rec.inputs)):
        in_shape = _onp.shape(value_for_shape(x))
        # a Python number's tangent is weak: it takes the output's dtype, as jvp's does
        weak = value_for_shape(x).__class__ in PYTHON_NUMBERS

        def sweep(e, n=n, weak=weak):
            tans = sweep_forward(rec.tape, {n: e})
            return [zeros_for(val) if node is None or tans.get(node) is None else
                    finish(tans[node], val) if weak else tans[node]
                    for node, val in zip(rec.out_nodes, rec.out_vals)]

        cols = _all_at_once(sweep, x, -1)  # (each output's shape + (n,): stacked last)
        if cols is None:  # one forward sweep per unit vector
            swept = [sweep(e) for e in _basis(x)]
            for k, val in enumerate(rec.out_vals):
                parts[k][j] = _assemble([s[k] for s in swept], out_shapes[k], in_shape, -1,
                                        val, x)
        else:
            for k, c in enumerate(cols):
                parts[k][j] = finish(reshape(c, tuple(out_shapes[k]) + in_shape),
                                     rec.out_vals[k])
    blocks = [tree_unflatten(rec.in_tree, p) for p in parts]
    jac = tree_unflatten(rec.out_tree, [b[0] if isinstance(argnums, int) else b
                                        for b in blocks])
    return (jac, rec.aux) if has_aux else jac


def hessian(f: Callable[..., Any], argnums: int | Sequence[int] = 0, has_aux: bool = False,
            holomorphic: bool = False) -> Callable[..., Any]:
    """``jacfwd(jacrev(f))``: shape ``in.shape + in.shape`` for a scalar ``f``. Complex inputs
    need ``holomorphic=True``, as for :func:`jacfwd`; ``has_aux=True``: ``f`` returns
    ``(output, aux)`` and the result is ``(hessian, aux)``, as in JAX.

    >>> import fgrad, fgrad.numpy as np
    >>> fgrad.hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return jacfwd(jacrev(f, argnums, has_aux=has_aux, holomorphic=holomorphic), argnums,
                  has_aux=has_aux, holomorphic=holomorphic)


def stop_gradient(x: Any) -> Any:
    """``x`` itself, with zero derivative in every mode and at every nesting level.

    Works through lists, tuples and dicts. A traced array comes back as a plain copy of its
    value (the tape still reads the original, so writing into the result is safe).

    >>> import fgrad, fgrad.numpy as np
    >>> float(fgrad.grad(lambda x: x * fgrad.stop_gradient(x))(3.0))
    3.0
    """
    # (a primitive without derivative: under vmap the value stays a batch, and a staged
    # graph records it, so a graph run under grad gives it none either)
    return map_tracers(x, stopped)
