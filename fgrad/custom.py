"""Custom derivative rules: ``custom_jvp``, ``custom_vjp``, and the primitive that carries them.

A function decorated with :class:`custom_jvp` or :class:`custom_vjp` (or wrapped by
:func:`fgrad.checkpoint`) is, when called on traced values, one call of a primitive of its
own, dispatched like every other primitive: its positional arguments are the leaves of the
function's differentiable arguments, its output is the function's output leaves packed into
one array (split again by ``getitem``/``reshape``, which are differentiable, so nesting works
unchanged), and its one parameter, ``call``, carries what that call needs: the arguments'
structure, the ``nondiff_argnums`` values, the output's structure and the residuals. The
primitive's rules call the user's functions:

================  =====================================  ======================================
                  reverse mode (grad, vjp, jacrev)       forward mode (jvp, linearize, jacfwd)
================  =====================================  ======================================
``custom_jvp``    the jvp rule, transposed               the jvp rule
``custom_vjp``    ``bwd``                                ``bwd``, transposed
``checkpoint``    ``vjp`` of ``f``, recomputed           ``jvp`` of ``f``
================  =====================================  ======================================

*Transposing* a map that is linear in its tangent (the jvp rule) or in its cotangent (``bwd``)
means recording it on a fresh tape at a zero input and running that tape backward
(``fgrad.traces.transpose``). The map is written with ``fgrad.numpy``, so its transpose is
differentiable again, and ``hessian`` of a custom function needs no special case.

**Forward mode of a custom_vjp function transposes bwd** rather than differentiating the
primal function. That keeps the derivative the user wrote: ``jvp`` and ``jacfwd`` agree with
``grad`` and ``jacrev`` for a numerically stable formula (``log1pexp`` at ``x = 1000``, where
differentiating the primal gives ``nan``), for an implicit function (whose primal is an
iteration, perhaps not differentiable at all) and for a straight-through estimator (whose
primal has zero derivative). Only ``bwd`` needs to be written with ``fgrad.numpy``. The price:
``bwd`` must be linear in its cotangent; one that is not (gradient clipping) gets, in forward
mode, its linearisation at a zero cotangent (for clipping: the identity), and one that gives
a nonzero result for a zero cotangent is refused with ``ValueError``.

Rules see the values one level down, which are tracers of outer transforms when derivatives
are nested, and the function itself runs on plain values (the primitive's implementation). A
function that closes over a traced value its output depends on is refused with
``ClosedOverTracerError`` (JAX refuses this too): pass the value as an argument. (A checkpoint
converts such a closure instead: its rules recompute the function, closure and all.)
"""
import functools
import inspect

import numpy as _onp

from .core import errors
from .numpy import add, astype, concatenate, getitem, ravel, real, reshape
from .core.pytree import tree_flatten, tree_map, tree_unflatten
from .core.other_arrays import as_array
from .core.table import Primitive
from .core.tracer import Tracer, ambient, first_tracer, value_for_shape, staging
from .traces.transpose import transpose
from .core.values import copied

__all__ = ["custom_jvp", "custom_vjp"]


# --- values -------------------------------------------------------------------------------

def _inexact(v):
    """Whether ``v`` (a leaf) is a float or complex value, i.e. one that has a derivative."""
    v = value_for_shape(v)
    if isinstance(v, (float, complex)):
        return True
    dt = getattr(v, "dtype", None)
    return isinstance(dt, _onp.dtype) and dt.kind in "fc"


def _dtype(v):
    return _onp.result_type(value_for_shape(v))


def _zero_tangent(v):
    """What a rule receives for an argument that is not being differentiated."""
    v = value_for_shape(v)
    if isinstance(v, (bool, int, float, complex, _onp.ndarray, _onp.generic)):
        return _onp.zeros_like(v)
    return None  # a string, a function, ...: no tangent at all


def _cast(v, dtype):
    """``v`` in ``dtype`` (float32 stays float32); a complex value given for a real one
    contributes its real part (JAX's convention for real inputs)."""
    have = _dtype(v)
    if have == dtype:
        return v
    if have.kind == "c" and dtype.kind != "c":
        v = real(v)
    return astype(v, dtype)


def _private(tree, *owned):
    """Copies of the plain arrays in ``tree``, except those in the lists ``owned``."""
    mine = {id(v) for vs in owned for v in vs}
    return tree_map(lambda v: v if id(v) in mine else copied(v), tree)


# --- one call -----------------------------------------------------------------------------

def _output_structure(out, owner):
    """The structure of a custom function's (plain) output: ``(out_tree, fixed, var, dtype,
    var leaves)``; ``var`` holds ``(leaf index, shape, dtype, start, stop)`` per var leaf."""
    leaves, out_tree = tree_flatten(out)
    fixed, var = {}, []
    start = 0
    for k, v in enumerate(leaves):
        if isinstance(v, Tracer):
            raise owner._closure_error(v._trace)
        if _inexact(v):
            v = as_array(v)
            var.append((k, v.shape, v.dtype, start, start + v.size))
            start += v.size
            leaves[k] = v[()] if v.ndim == 0 else v  # Python floats as numpy values
        else:
            fixed[k] = v
    dtype = _onp.result_type(*[d for _, _, d, _, _ in var]) if var else _onp.dtype(_onp.float64)
    return out_tree, fixed, var, dtype, [leaves[k] for k, *_ in var]


class _Call:
    """What one call of a custom function needs beyond its traced leaves. It is the
    primitive's ``call`` parameter, so every trace and rule sees the same object, and it is
    complete once made: the function runs here, once, on the plain values under the traced
    leaves, and the primitive's implementation only hands back the packed output.

    ``leaves`` (the primitive's arguments) are the leaves of the differentiable arguments,
    flattened together (``in_tree``). The output's leaves are either *var* (float or complex:
    packed into the primitive's output) or *fixed* (integers, strings: passed around it, as
    plain values with no derivative). ``res`` are custom_vjp's residuals from that run, for
    the rules called on the same values: ``traced`` holds ``(position, value)`` of the leaves
    that were tracers (the others are plain at every level)."""

    __slots__ = ("owner", "in_tree", "nondiff", "nargs", "leaf_arg", "out_tree", "fixed",
                 "var", "dtype", "packed", "res", "traced")

    def __init__(self, owner, in_tree, nondiff, nargs, leaves):
        self.owner, self.in_tree, self.nondiff, self.nargs = owner, in_tree, nondiff, nargs
        positions = [i for i in range(nargs) if i not in nondiff]
        self.leaf_arg = [p for p, td in zip(positions, in_tree.children)
                         for _ in range(td.num_leaves)]
        # (a staged graph records this call as one node that runs the function again on the
        # new values, so reading the values here guards nothing, and the run records nothing)
        plain = [value_for_shape(v) for v in leaves]
        self.traced = [(i, plain[i]) for i, v in enumerate(leaves) if isinstance(v, Tracer)]
        with staging(None):
            out, res = owner._primal(self, plain)
            self.out_tree, self.fixed, self.var, self.dtype, vals = _output_structure(out, owner)
            self.packed = self.pack(vals)
        # Residuals may be arrays the caller owns and changes in place before the backward
        # pass (see ``Tape``): copied, except the traced leaves' values and the outputs, which
        # the traces keep private already (residuals are often just these).
        self.res = None if res is None else _private(res, [v for _, v in self.traced], vals)

    def rerun(self, *leaves):
        """The packed output for other plain values: a staged graph's replay of the call.
        (Outputs with no derivative, ``fixed``, stay those of the traced call.)"""
        with staging(None):
            out, _ = self.owner._primal(self, list(leaves))
            return self.pack(_output_structure(out, self.owner)[4])

    def ran_on(self, leaves):
        """Whether the rules' ``leaves`` are the values the function ran on here (rules called
        on an outer transform's tracers are not)."""
        for i, v in self.traced:
            if leaves[i] is not v:
                return False
        return True

    def __repr__(self):  # as a parameter in a printed tape (make_tape)
        shown = ", ".join(f"{i}={self.nondiff[i]!r}" for i in sorted(self.nondiff))
        return f"<call{' with nondiff ' + shown if shown else ''}>"

    # arguments
    def primals(self, leaves):
        """The differentiable arguments (a tuple, in order, without the nondiff ones)."""
        return tree_unflatten(self.in_tree, leaves)

    def args(self, leaves):
        """Every positional argument, nondiff ones in their places."""
        diff = iter(self.primals(leaves))
        return tuple(self.nondiff[i] if i in self.nondiff else next(diff)
                     for i in range(self.nargs))

    def nondiff_values(self):
        return tuple(self.nondiff[i] for i in sorted(self.nondiff))

    # outputs
    def pack(self, vals):
        """The var leaves (None for zero) as the primitive's one output."""
        if len(self.var) == 1:
            (_, shape, dtype, _, _), v = self.var[0], vals[0]
            return _onp.zeros(shape, dtype) if v is None else _cast(v, dtype)
        if not self.var:
            return _onp.zeros(0)
        return concatenate([
            _onp.zeros(stop - start, self.dtype) if v is None else ravel(_cast(v, self.dtype))
            for (_, _, _, start, stop), v in zip(self.var, vals)])

    def unpack(self, packed):
        """The var leaves, from the primitive's output (or its tangent or cotangent)."""
        if len(self.var) == 1:
            return [packed]
        return [_cast(reshape(getitem(packed, slice(start, stop)), shape), dtype)
                for _, shape, dtype, start, stop in self.var]

    def output(self, packed):
        """The function's output, rebuilt around the var leaves."""
        leaves = dict(self.fixed)
        for (k, *_), v in zip(self.var, self.unpack(packed)):
            leaves[k] = v
        return tree_unflatten(self.out_tree, [leaves[k] for k in range(len(leaves))])

    def out_like(self, vals):
        """An output-shaped tree holding ``vals`` at the var leaves (zeros for None) and
        zeros at the fixed ones: a cotangent for ``bwd``."""
        leaves = {k: _onp.zeros(_onp.shape(v), _onp.float64) for k, v in self.fixed.items()}
        for (k, shape, dtype, _, _), v in zip(self.var, vals):
            leaves[k] = _onp.zeros(shape, dtype) if v is None else v
        return tree_unflatten(self.out_tree, [leaves[k] for k in range(len(leaves))])

    def var_of(self, tree, what):
        """The var leaves of an output-shaped ``tree`` (a tangent, a recomputed output),
        after checking its structure and shapes."""
        name = self.owner._describe()
        leaves, td = tree_flatten(tree)
        if td != self.out_tree:
            raise TypeError(f"{name}: {what} has the structure {td!r}, but the function's "
                            f"output has {self.out_tree!r}; they must match")
        vals = []
        for k, shape, _, _, _ in self.var:
            have = _onp.shape(value_for_shape(leaves[k]))
            if have != shape:
                raise ValueError(f"{name}: {what} has shape {have} at output leaf {k}, "
                                 f"where the function's output has shape {shape}")
            vals.append(leaves[k])
        return vals

    def leaf_cotangents(self, cts, leaves):
        """``bwd``'s result (one cotangent per differentiable argument, ``None`` for zero,
        at any level of an argument's pytree) as one cotangent per leaf."""
        name = self.owner._describe()
        n = len(self.in_tree.children)
        if not isinstance(cts, (tuple, list)) or len(cts) != n:
            got = (f"a {type(cts).__name__} of length {len(cts)}"
                   if isinstance(cts, (tuple, list)) else f"a {type(cts).__name__}")
            raise TypeError(f"{name}: bwd must return a tuple with one cotangent per "
                            f"differentiable argument ({n}: {self.owner._arg_names(self)}), but "
                            f"it returned {got}. Return (g,) rather than g for one argument, "
                            "and None for an argument with no derivative.")
        flat = []
        positions = [i for i in range(self.nargs) if i not in self.nondiff]
        for p, ct, td in zip(positions, cts, self.in_tree.children):
            flat.extend(_match(ct, td, f"{name}: bwd's cotangent for argument {p}"))
        out = []
        for j, (c, x) in enumerate(zip(flat, leaves)):
            if c is None or not _inexact(x):
                out.append(None)
                continue
            have, want = _onp.shape(value_for_shape(c)), _onp.shape(value_for_shape(x))
            if have != want:
                raise ValueError(f"{name}: bwd returned a cotangent of shape {have} for "
                                 f"argument {self.leaf_arg[j]}, whose shape is {want}; a "
                                 "cotangent has its argument's shape (sum over broadcast "
                                 "axes with fgrad.unbroadcast)")
            out.append(_cast(c, _dtype(x)))
        return out


def _match(ct, td, where):
    """The leaves of ``ct`` along the structure ``td``; ``None`` stands for zeros anywhere."""
    if ct is None:
        return [None] * td.num_leaves
    if td.kind == "leaf" and not isinstance(ct, (tuple, list, dict)):
        return [ct]
    kinds = {"tuple": tuple, "list": list, "dict": dict, "namedtuple": td.keys}
    ok = td.kind in kinds and isinstance(ct, kinds[td.kind])
    if ok and td.kind == "dict":
        ok = tuple(sorted(ct)) == td.keys
        children = [ct[k] for k in td.keys] if ok else []
    else:
        children = list(ct) if ok else []
    if not ok or len(children) != len(td.children):
        raise TypeError(f"{where} is {_short(ct)}, but the argument's structure is {td!r} "
                        "(use None for a zero cotangent)")
    return [c for child, sub in zip(children, td.children) for c in _match(child, sub, where)]


def _short(v):
    if isinstance(v, (tuple, list, dict)):
        return f"a {type(v).__name__} of length {len(v)}"
    return f"a {type(v).__name__}"


# --- the primitive ------------------------------------------------------------------------

class _CustomPrimitive(Primitive):
    """One custom function's primitive. It is not in the primitive table: its rules are the
    user's, which may be deliberately unlike the primal's derivative (clipping, straight
    through), so ``python -m fgrad check`` has nothing to hold them to."""

    def __init__(self, owner):
        with_output = hasattr(owner, "_jvp_with_output")  # (custom_jvp's rule)
        super().__init__(owner._prim_name(), self._impl, doc=owner.__doc__,
                         replay_impl=self._rerun, interpret=self._interpret,
                         vjp_joint=self._vjp_joint,
                         jvp_with_output=self._jvp_with_output if with_output else None,
                         jvp_joint=None if with_output else self._jvp_joint,
                         keeps_python_numbers=True)
        self.owner = owner

    def _impl(self, *leaves, call):
        # ``leaves`` are the values ``call`` ran the function on, except where a batching
        # trace hands down one example at a time (the call ran on shape stand-ins there)
        return call.packed if call.ran_on(leaves) else call.rerun(*leaves)

    @staticmethod
    def _rerun(*leaves, call):  # what a staged graph runs: the function on new values
        return call.rerun(*leaves)

    def _interpret(self, *leaves, call):
        """A staged graph's node run on tracers (``grad`` of a graph): the call made anew on
        them, so the rules see these values."""
        new = _Call(self.owner, call.in_tree, call.nondiff, call.nargs, leaves)
        return self(*leaves, call=new)

    def _vjp_joint(self, g, ans, *leaves, call):
        return self.owner._pullback(call, call.unpack(g), leaves, ans)

    def _jvp_joint(self, tangents, ans, *leaves, call):
        vals = self.owner._pushforward(call, tangents, leaves)
        if all(v is None for v in vals):
            return None  # no output depends on the perturbed arguments
        return call.pack(vals)

    def _jvp_with_output(self, tangents, *leaves, call):
        outs, vals = self.owner._jvp_with_output(call, tangents, leaves)
        return call.pack(outs), (None if all(v is None for v in vals) else call.pack(vals))


class _Custom:
    """What custom_jvp, custom_vjp and checkpoint share: argument handling and the call."""

    kind = "custom"
    # what the arguments without derivative are called, and what to do with a traced one
    _nondiff_name = "nondiff_argnums"
    _nondiff_advice = ("nondiff_argnums are for values with no derivative, such as functions, "
                       "shapes or flags; pass an array as an ordinary argument (and give it no "
                       "cotangent: None), or wrap it in fgrad.stop_gradient if a zero "
                       "derivative is what you want.")

    def __init__(self, fun, nondiff_argnums=(), wraps=None):
        if not callable(fun):
            raise TypeError(f"{self.kind} decorates a function, got {type(fun).__name__}")
        nums = (nondiff_argnums,) if isinstance(nondiff_argnums, int) else nondiff_argnums
        for n in nums:
            if not isinstance(n, int) or n < 0:
                raise ValueError(f"{self.kind}: {self._nondiff_name} must be non-negative "
                                 f"ints, got {nondiff_argnums!r}")
        functools.update_wrapper(self, wraps or fun)
        self.fun = fun
        self.nondiff_argnums = tuple(sorted(set(nums)))
        try:
            self._signature = inspect.signature(fun)
        except (TypeError, ValueError):  # some builtins have none
            self._signature = None
        self.prim = _CustomPrimitive(self)

    def __repr__(self):
        return f"<{self._describe()}>"

    def __get__(self, obj, objtype=None):  # a decorated method binds like a function
        return self if obj is None else functools.partial(self, obj)

    def _name(self):  # (``__wrapped__``: what it was made to look like, ``wraps`` or ``fun``)
        return getattr(self, "__name__", None) or errors.function_name(self.__wrapped__)

    def _describe(self):
        return f"{self.kind} function {self._name()}"

    def _prim_name(self):
        return f"{self.kind}({self._name()})"

    def _arg_names(self, call):
        names = list(self._signature.parameters) if self._signature is not None else []
        shown = [names[i] if i < len(names) and not names[i].startswith("*") else f"#{i}"
                 for i in range(call.nargs) if i not in call.nondiff]
        return ", ".join(shown)

    def _positional(self, args, kwargs):
        """Keyword arguments bound to their positions and defaults filled in, as JAX does:
        the rules see every argument positionally."""
        if self._signature is None:
            if kwargs:
                raise TypeError(f"{self._describe()}: keyword arguments need a function "
                                "whose signature Python can inspect; pass them positionally")
            return args
        try:
            bound = self._signature.bind(*args, **kwargs)
        except TypeError as e:
            raise TypeError(f"{self._describe()}: {e}") from None
        params = self._signature.parameters
        given = [k for k in bound.arguments
                 if params[k].kind in (inspect.Parameter.KEYWORD_ONLY,
                                       inspect.Parameter.VAR_KEYWORD)]
        if given:
            raise TypeError(f"{self._describe()}: keyword-only arguments "
                            f"({', '.join(given)}) are not supported; make them "
                            "positional, or close over them if they are not traced")
        bound.apply_defaults()  # keyword-only defaults stay with the function
        return bound.args

    def __call__(self, *args, **kwargs):
        args = self._positional(args, kwargs)
        nondiff, leaves, in_tree = self._split(args)
        if first_tracer(leaves) is None:
            # Not differentiated here: the function itself, as in JAX. Its output can only
            # be traced through a closure, which the rules would not see.
            out = self.fun(*args)
            t = first_tracer(tree_flatten(out)[0])
            if t is not None and t._trace is not ambient():  # (staged plain calls are fine)
                raise self._closure_error(t._trace)
            return out
        self._ready()
        call = _Call(self, in_tree, nondiff, len(args), leaves)
        return call.output(self.prim(*leaves, call=call))

    def _split(self, args):
        """``(nondiff, leaves, in_tree)`` of positional ``args``: the ``nondiff_argnums``
        values by position, and the other arguments' leaves and structure."""
        for i in self.nondiff_argnums:
            if i >= len(args):
                raise TypeError(f"{self._describe()}: nondiff_argnums names argument {i}, "
                                f"but the call has {len(args)} positional argument(s)")
        nondiff = {i: args[i] for i in self.nondiff_argnums}
        for i, v in nondiff.items():
            t = first_tracer(tree_flatten(v)[0])
            if t is not None:
                raise TypeError(f"{self._describe()}: argument {i} is in {self._nondiff_name} "
                                f"but holds a traced value (from {t._trace}). "
                                f"{self._nondiff_advice}")
        diff = tuple(a for i, a in enumerate(args) if i not in nondiff)
        leaves, in_tree = tree_flatten(diff)
        return nondiff, leaves, in_tree

    def _ready(self):
        """Raise if the rules have not been given."""

    def _closure_error(self, trace):
        return errors.closed_over(
            self._describe(), trace,
            "Pass it as an argument instead (f(x, w) rather than closing over w), and give "
            "its derivative in the rule.")


# --- custom_vjp ---------------------------------------------------------------------------

class custom_vjp(_Custom):
    """A function with a reverse-mode derivative of your own: ``fwd`` and ``bwd``.

    ``f.defvjp(fwd, bwd)``: ``fwd(*args)`` returns ``(output, residuals)``;
    ``bwd(*nondiff_args, residuals, g)`` returns a tuple with one cotangent per differentiable
    argument (``None`` for zero, also inside a pytree). Arguments and outputs may be pytrees.
    Called on plain values, ``f`` is just the function; under ``grad``/``vjp``/``jacrev``,
    ``fwd`` runs on the forward pass and ``bwd`` on the backward pass. Keyword arguments are
    bound to their positions and defaults are filled in, so ``bwd`` returns a cotangent for
    every positional parameter (JAX's rule). ``nondiff_argnums`` are for values with no
    derivative (functions, shapes): ``bwd`` gets them first and returns nothing for them; a
    traced value there is a ``TypeError``, as in JAX.

    Unlike JAX, ``jvp``, ``linearize``, ``jacfwd`` and ``hessian`` work too: forward mode
    transposes ``bwd`` (see the module docstring), so it agrees with reverse mode. For that,
    and for derivatives of higher order, write ``bwd`` with ``fgrad.numpy``.

    A numerically stable ``log1pexp``, whose plain derivative overflows to ``nan``:

    >>> import fgrad, fgrad.numpy as np
    >>> @fgrad.custom_vjp
    ... def log1pexp(x):
    ...     return np.logaddexp(0.0, x)
    >>> def log1pexp_fwd(x):
    ...     return log1pexp(x), x
    >>> def log1pexp_bwd(x, g):
    ...     return (g / (1 + np.exp(-x)),)          # sigmoid(x), no overflow for large x
    >>> log1pexp.defvjp(log1pexp_fwd, log1pexp_bwd)
    >>> float(fgrad.grad(log1pexp)(1000.0)), float(fgrad.jvp(log1pexp, (1000.0,), (1.0,))[1])
    (1.0, 1.0)
    >>> round(float(fgrad.hessian(log1pexp)(0.0)), 6)    # sigmoid'(0)
    0.25

    Gradient clipping: the identity on the way forward, the cotangent clipped on the way
    back. ``lo`` and ``hi`` are ordinary arguments with no cotangent:

    >>> @fgrad.custom_vjp
    ... def clip_gradient(lo, hi, x):
    ...     return x
    >>> clip_gradient.defvjp(lambda lo, hi, x: (x, (lo, hi)),
    ...                      lambda res, g: (None, None, np.clip(g, res[0], res[1])))
    >>> float(fgrad.grad(lambda x: 5.0 * clip_gradient(-1.0, 1.0, x))(2.0))  # 5 clipped to 1
    1.0

    An implicit function: ``x = cos(a x)`` solved by iteration, differentiated by the implicit
    function theorem instead of through the loop (``dx/da = -F_a / F_x`` with
    ``F(a, x) = x - cos(a x)``):

    >>> @fgrad.custom_vjp
    ... def fixed_point(a):
    ...     x = 0.5
    ...     for _ in range(200):
    ...         x = np.cos(a * x)
    ...     return x
    >>> def fixed_point_fwd(a):
    ...     x = fixed_point(a)
    ...     return x, (a, x)
    >>> def fixed_point_bwd(res, g):
    ...     a, x = res
    ...     s = np.sin(a * x)
    ...     return (g * -x * s / (1 + a * s),)
    >>> fixed_point.defvjp(fixed_point_fwd, fixed_point_bwd)
    >>> round(float(fixed_point(0.8)), 6), round(float(fgrad.grad(fixed_point)(0.8)), 6)
    (0.801418, -0.324205)
    >>> round(float(fgrad.jvp(fixed_point, (0.8,), (1.0,))[1]), 6)      # forward mode too
    -0.324205
    """

    kind = "custom_vjp"

    def __init__(self, fun=None, nondiff_argnums=()):
        if fun is None:  # @custom_vjp(nondiff_argnums=(0,))
            raise TypeError("custom_vjp needs the function: use "
                            "functools.partial(fgrad.custom_vjp, nondiff_argnums=...)")
        super().__init__(fun, nondiff_argnums)
        self.fwd = self.bwd = None

    def defvjp(self, fwd, bwd):
        """Set the rule: ``fwd(*args) -> (output, residuals)`` and
        ``bwd(*nondiff_args, residuals, g) -> tuple of cotangents``."""
        if not callable(fwd) or not callable(bwd):
            raise TypeError(f"{self._describe()}: defvjp(fwd, bwd) takes two functions")
        self.fwd, self.bwd = fwd, bwd

    def _ready(self):
        if self.fwd is None:
            raise TypeError(f"{self._describe()} is being differentiated but has no rule: "
                            "call .defvjp(fwd, bwd) first")

    def _run_fwd(self, args):
        r = self.fwd(*args)
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise TypeError(f"{self._describe()}: fwd must return a pair (output, "
                            f"residuals), but it returned {_short(r)}")
        return r[0], r[1]

    def _primal(self, call, leaves):
        return self._run_fwd(call.args(leaves))

    def _residuals(self, call, leaves):
        # Residuals computed from the call's own values serve the rules called on them (one
        # level of differentiation). Rules called on an outer transform's tracers run fwd
        # again on those, so that the residuals carry the outer derivative.
        if call.ran_on(leaves):
            return call.res
        return self._run_fwd(call.args(leaves))[1]

    def _bwd_leaves(self, call, res, gs, leaves):
        return call.leaf_cotangents(self.bwd(*call.nondiff_values(), res, call.out_like(gs)),
                                    leaves)

    def _pullback(self, call, gs, leaves, ans):
        return self._bwd_leaves(call, self._residuals(call, leaves), gs, leaves)

    def _pushforward(self, call, tangents, leaves):
        res = self._residuals(call, leaves)

        def nonlinear(k, v):
            return ValueError(
                f"{self._describe()}: forward mode (jvp, jacfwd, hessian) transposes bwd, "
                "which must therefore be linear in its cotangent g, but bwd(res, 0) gives "
                f"{v} rather than zero for argument {call.leaf_arg[k]}")

        like = [_onp.zeros(shape, dtype) for _, shape, dtype, _, _ in call.var]
        return transpose(lambda gs: self._bwd_leaves(call, res, gs, leaves), like, tangents,
                          nonlinear, f"{self._describe()}: forward mode (jvp, jacfwd, "
                          "hessian) runs bwd on a traced cotangent g to transpose it, so bwd "
                          "must handle g with fgrad.numpy")


# --- custom_jvp ---------------------------------------------------------------------------

class custom_jvp(_Custom):
    """A function with a forward-mode derivative of your own: the jvp rule.

    ``@f.defjvp`` takes ``rule(*nondiff_args, primals, tangents) -> (output, tangent_out)``,
    where ``primals`` and ``tangents`` are tuples of the differentiable arguments and their
    tangents (zeros for arguments not being differentiated). ``tangent_out`` must be linear
    in the tangents and have the output's structure and shapes. Reverse mode (``grad``,
    ``vjp``, ``jacrev``) transposes the rule, so write it with ``fgrad.numpy``; a rule whose
    tangent is not zero for zero tangents is refused (``ValueError``) rather than transposed
    wrongly. ``f.defjvps(rule_0, rule_1, ...)`` gives one rule per argument instead,
    ``rule_i(t_i, output, *primals) -> contribution`` (``None`` for no derivative).

    Called on plain values ``f`` is just the function. Under ``jvp`` (dual numbers) the rule
    gives both: its output is what ``jvp`` returns for ``f``, as in JAX, so a rule whose
    output disagrees with the function shows there. The transforms that record the function
    (``grad``, ``vjp``, ``jacrev``, ``jacfwd``, ``linearize``) take the output from the function
    itself and only the tangent from the rule: keep the two outputs equal. Keyword arguments are
    bound to positions and defaults filled in, as in :class:`custom_vjp`; ``nondiff_argnums``
    hold values with no derivative and may not be traced (JAX takes their derivative as zero;
    fgrad asks you to say so with ``fgrad.stop_gradient``).

    The stable ``log1pexp`` again, with its derivative in forward form:

    >>> import fgrad, fgrad.numpy as np
    >>> @fgrad.custom_jvp
    ... def log1pexp(x):
    ...     return np.logaddexp(0.0, x)
    >>> @log1pexp.defjvp
    ... def log1pexp_jvp(primals, tangents):
    ...     (x,), (t,) = primals, tangents
    ...     return log1pexp(x), t / (1 + np.exp(-x))
    >>> float(fgrad.grad(log1pexp)(1000.0)), float(fgrad.grad(fgrad.grad(log1pexp))(0.0))
    (1.0, 0.25)

    A straight-through estimator, whose rule is the identity although ``round`` is flat
    (``d/dx [round(x) x] = round(x) + x``):

    >>> @fgrad.custom_jvp
    ... def round_ste(x):
    ...     return np.round(x)
    >>> round_ste.defjvps(lambda t, ans, x: t)
    >>> fgrad.grad(lambda x: np.sum(round_ste(x) * x))(np.array([0.4, 1.6])).tolist()
    [0.4, 3.6]

    An implicit function: ``x(a) = cos(a x(a))``, the derivative from the implicit function
    theorem, ``x' = -x s / (1 + a s)`` with ``s = sin(a x)``:

    >>> @fgrad.custom_jvp
    ... def fixed_point(a):
    ...     x = 0.5
    ...     for _ in range(200):
    ...         x = np.cos(a * x)
    ...     return x
    >>> @fixed_point.defjvp
    ... def fixed_point_jvp(primals, tangents):
    ...     (a,), (t,) = primals, tangents
    ...     x = fixed_point(a)
    ...     s = np.sin(a * x)
    ...     return x, -x * s / (1 + a * s) * t
    >>> round(float(fgrad.grad(fixed_point)(0.8)), 6)
    -0.324205
    """

    kind = "custom_jvp"

    def __init__(self, fun=None, nondiff_argnums=()):
        if fun is None:
            raise TypeError("custom_jvp needs the function: use "
                            "functools.partial(fgrad.custom_jvp, nondiff_argnums=...)")
        super().__init__(fun, nondiff_argnums)
        self.jvp = None

    def defjvp(self, jvp):
        """Set the rule ``jvp(*nondiff_args, primals, tangents) -> (output, tangent_out)``;
        returns it, so it can be used as a decorator."""
        if not callable(jvp):
            raise TypeError(f"{self._describe()}: defjvp takes a function")
        self.jvp = jvp
        return jvp

    def defjvps(self, *rules):
        """One rule per differentiable argument, ``rule(t, output, *primals)`` giving that
        argument's contribution to the output tangent (``None``: no derivative)."""
        nd = len(self.nondiff_argnums)

        def jvp(*a):
            nondiff, (primals, tangents) = a[:nd], a[nd:]
            if len(rules) != len(primals):
                raise TypeError(f"{self._describe()}: defjvps got {len(rules)} rule(s) for "
                                f"{len(primals)} differentiable argument(s)")
            full = iter(primals)
            nd_iter = iter(nondiff)
            args = [next(nd_iter) if i in self.nondiff_argnums else next(full)
                    for i in range(len(primals) + nd)]
            out = self(*args)
            total = None
            for rule, t in zip(rules, tangents):
                if rule is None:
                    continue
                c = rule(t, out, *primals)
                total = c if total is None else tree_map(add, total, c)
            if total is None:
                total = tree_map(_zero_tangent, out)
            return out, total

        self.jvp = jvp

    def _ready(self):
        if self.jvp is None:
            raise TypeError(f"{self._describe()} is being differentiated but has no rule: "
                            "decorate one with @f.defjvp first")

    def _primal(self, call, leaves):
        return self.fun(*call.args(leaves)), None

    def _rule(self, call, leaves, tangent_leaves, output=False):
        r = self.jvp(*call.nondiff_values(), call.primals(leaves),
                     tree_unflatten(call.in_tree, tangent_leaves))
        if not (isinstance(r, (tuple, list)) and len(r) == 2):
            raise TypeError(f"{self._describe()}: the jvp rule must return a pair "
                            f"(output, tangent_out), but it returned {_short(r)}")
        if tree_flatten(r[0])[1] != call.out_tree:
            raise TypeError(f"{self._describe()}: the jvp rule's output has the structure "
                            f"{tree_flatten(r[0])[1]!r}, but the function's has "
                            f"{call.out_tree!r}")
        tangent = call.var_of(r[1], "the jvp rule's tangent_out")
        return (call.var_of(r[0], "the jvp rule's output"), tangent) if output else tangent

    def _pushforward(self, call, tangents, leaves):
        ts = [_zero_tangent(x) if t is None else t for t, x in zip(tangents, leaves)]
        return self._rule(call, leaves, ts)

    def _jvp_with_output(self, call, tangents, leaves):
        """Under ``jvp`` the rule's output is the output, as in JAX."""
        ts = [_zero_tangent(x) if t is None else t for t, x in zip(tangents, leaves)]
        return self._rule(call, leaves, ts, output=True)

    def _pullback(self, call, gs, leaves, ans):
        diff = [j for j, x in enumerate(leaves) if _inexact(x)]
        zeros = [_zero_tangent(x) for x in leaves]

        def rule(ts):
            full = list(zeros)
            for j, t in zip(diff, ts):
                full[j] = t
            return self._rule(call, leaves, full)

        def nonlinear(k, v):
            return ValueError(
                f"{self._describe()}: reverse mode (grad, vjp, jacrev) transposes the jvp "
                "rule, which must therefore be linear in the tangents, but for zero tangents "
                f"its tangent_out is {v} rather than zero (at output leaf "
                f"{call.var[k][0]}); is a primal value added to the tangent?")

        cts = transpose(rule, [leaves[j] for j in diff], gs, nonlinear,
                         f"{self._describe()}: reverse mode (grad, vjp, jacrev) runs the jvp "
                         "rule on traced tangents to transpose it, so the rule must handle "
                         "the tangents with fgrad.numpy")
        out = [None] * len(leaves)
        for j, c in zip(diff, cts):
            out[j] = c
        return out
