"""The primitive table: every differentiable operation, its numpy implementation and its rules.

A primitive is data: a name, the numpy function that computes it, one VJP rule and one JVP rule
per differentiable argument, and a ``Spec`` saying how to test it (shapes, parameters, input
domain, order, tolerance). Transforms look rules up here; the test suite and
``python -m fgrad check`` enumerate this table, so a rule cannot exist without being checked.

Rule signatures (``args`` are the primitive's inputs one level down, ``params`` its static
keyword parameters, ``ans`` its output):

    vjp rule:  (g, ans, *args, **params) -> cotangent for that argument (shape of the argument)
    jvp rule:  (t, ans, *args, **params) -> tangent of the output (shape of ``ans``)

Either may return ``None`` for an exact zero. Rules must be written with ``fgrad.numpy`` so that
they can be differentiated again: that is all higher-order derivatives need.
"""
import inspect
from math import comb
from typing import Any, Callable, Optional, Sequence

import numpy as _onp

from . import errors
from .other_arrays import call_in_own_library
from .values import PLAIN_OPERANDS, first_foreign, foreign_array
from .tracer import (LIFTING, STAGING, Tracer, ambient, contains_tracer, without_derivative,
                     first_tracer, value_for_shape, map_tracers)

PRIMITIVES: dict[str, "Primitive"] = {}  # name -> Primitive: the one table
_BUILTIN: set[str] = set()  # names defined by fgrad itself, which users may not replace
# numpy's qualified name ("var", "linalg.norm") -> Function: public fgrad.numpy functions
# composed of primitives, each checked as a whole from its own Spec
FUNCTIONS: dict[str, Any] = {}


class Spec:
    """How the generated tests exercise a primitive.

    cases   -- list of ``(arg_shapes, params)``: the shapes of the positional arguments and the
               static keyword parameters to call it with.
    domain  -- ``(lo, hi)`` for every argument, or one entry per argument; an entry may be
               ``"bool"`` for a boolean argument that is never differentiated.
    valid   -- optional predicate on the argument values; examples where it is false are
               skipped (use it to stay clear of kinks such as ties in ``maximum``).
    order   -- highest derivative order checked against finite differences.
    eps     -- finite-difference step (larger for outputs of low precision).
    dtypes  -- float dtypes whose forward values are compared with numpy.
    call    -- optional ``call(fn, *args, **params)``: how a test calls the function with the
               drawn arguments, for signatures that are not one array per argument
               (``hstack([a, b])``: ``call=lambda f, *xs: f(list(xs))``).
    exact   -- whether the implementation gives the same bits on every call with one input,
               so that traced values can be held to equal it bit for bit (scipy's ``logm``
               does not: its forward values are compared to 1e-12 instead).
    slow    -- whether a rule costs hundreds of operations per call (a series or continued
               fraction of fixed length: ``gammainc``'s in ``a``): the tests whose cost
               grows with that (finite differences, nested jvp to order 6) draw a third as
               many examples.
    """

    # a plain class, not a dataclass: importing dataclasses is 1 ms of fgrad's import
    _FIELDS = ("cases", "domain", "valid", "order", "rtol", "atol", "eps", "dtypes", "call",
               "exact", "slow")

    def __init__(self, cases: list, domain: Any = (-2.0, 2.0),
                 valid: Optional[Callable] = None, order: int = 2, rtol: float = 1e-5,
                 atol: float = 1e-6, eps: float = 1e-6, dtypes: tuple = ("float64", "float32"),
                 call: Optional[Callable] = None, exact: bool = True, slow: bool = False):
        self.cases, self.domain, self.valid, self.order = cases, domain, valid, order
        self.rtol, self.atol, self.eps, self.dtypes = rtol, atol, eps, dtypes
        self.call, self.exact, self.slow = call, exact, slow

    def __repr__(self):
        fields = ", ".join(f"{f}={getattr(self, f)!r}" for f in self._FIELDS)
        return f"Spec({fields})"

    def __eq__(self, other):
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._values() == other._values()

    def _values(self):
        return tuple(getattr(self, f) for f in self._FIELDS)

    # unhashable, as a (mutable) dataclass is
    __hash__ = None  # type: ignore[assignment]

    def invoke(self, fn, args, params):
        """``fn`` called on one drawn case, the way ``call`` says."""
        if self.call is None:
            return fn(*args, **params)
        return self.call(fn, *args, **params)

    def arg_domain(self, i):
        d = self.domain
        if isinstance(d, str):  # "bool" or "complex" for every argument
            return d
        return d[i] if d and isinstance(d[0], (tuple, str)) else d


class Answered:
    """What a ``check_call`` returns for a call it ran itself in another form: the call's
    value."""
    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class Primitive:
    """A callable table entry. Calling it on plain values runs numpy directly (no overhead
    beyond a type check per argument); calling it on tracers hands it to their transform.

    A declared record: every fact a trace, the graph or its passes read is a field below,
    given as a keyword where it is made (``define``, or the constructor for a primitive
    outside the table); the ``def*`` functions set the rules of a user's primitive later.

    Rules, in whichever form suits them (``fgrad.traces.rules`` makes the one shape each
    interpretation reads; without a JVP rule, forward mode transposes the VJP rule):

    vjps            -- ``{argnum: (g, ans, *args, **params) -> cotangent}``
    vjp_by_argnum   -- ``(argnum, g, ans, *args, **params) -> cotangent``: variadic primitives
    vjp_joint       -- ``(g, ans, *args, **params) -> [cotangent or None per argument]``:
                       rules that cannot be split by argument (custom_vjp's bwd, an ODE's
                       adjoint)
    jvps            -- ``{argnum: (t, ans, *args, **params) -> output tangent}``, added up
    jvp_joint       -- ``(tangents, ans, *args, **params) -> output tangent``, tangents None
                       for zero: n-ary primitives whose per-argument rules would repeat work
    jvp_with_output -- ``(tangents, *args, **params) -> (ans, tangent)``: under ``jvp`` its
                       output is the primitive's (custom_jvp's rule, as in JAX)
    taylor          -- how ``jet`` expands it: ``(series, ans, *args, **params) -> [y_1, ...,
                       y_K]``, or a ``Composed`` or ``Inverse`` (None: ``jet`` expands the JVP)
    batch           -- how ``vmap`` runs it on a whole batch (``fgrad.numpy.batch_rules``);
                       None: once per example

    Facts:

    check_call      -- ``(prim, args, params) -> params``, run on traced calls given keywords
                       or more than ``nin`` positional arguments: a family's check of what
                       its rules cannot take (the ufuncs refuse where= without out=, ...),
                       or an ``Answered`` for a call it ran itself in another form (a
                       ufunc's ``out=``: the result written into the traced array)
    fast_impl       -- what a transform calls on the values it hands down (numpy arrays and
                       scalars, never two Python numbers): ``impl``, or a stand-in equal in
                       value and dtype (numpy's operators for the arithmetic ufuncs, without
                       the ufunc call's overhead on scalars)
    other_arrays    -- whether ``impl`` takes other libraries' arrays (Dask, CuPy) through
                       numpy's dispatch; scipy's functions, which convert their arguments to
                       numpy arrays, do not
    residuals       -- what the VJP rules read beyond shapes and dtypes, ``(argnums, ans)``:
                       a tape that only runs backward keeps just these values (big arrays).
                       ``argnums`` may be "others": the rule for each argument reads the
                       other ones (multilinear maps). None keeps everything.
    differentiable  -- False for an output without derivative (a comparison, weights or an
                       order computed from values): a differentiating trace is never asked,
                       the call goes to the values below it (down to a trace that sees every
                       operation: staging records it, batching maps it)
    dtype_from_values -- numpy picks the output's dtype by the values (``eig``: real or
                       complex eigenvalues): a staged graph guards the dtype
    shape_from_values -- numpy picks the output's shape by the values (``roots`` drops
                       leading zeros): a staged graph guards the shape

    Staging's facts (``traces/graph.py``, ``traces/passes.py``):

    effect          -- a replay runs it in order even when its value is unused (a random
                       draw: never dropped or merged)
    interpret       -- what a graph run node by node calls (None: the primitive)
    replay_impl     -- what generated code calls on plain values (None: ``fast_impl``)
    operator        -- the Python operator generated code writes ("+"; "[]": indexing by
                       the ``idx`` parameter; an expression of its one operand ``{0}``,
                       ``_nd`` naming ``numpy.ndarray``; None: a call)
    commutative     -- merging equal nodes may swap its two arguments (on real values)
    writes_into     -- generated code may write its result into an operand that nothing
                       reads again (``numpy.add(a, b, out=a)``)
    numpy_only      -- (found, not declared) ``fast_impl`` runs numpy alone, never
                       ``fgrad.numpy``: a ufunc, or a function marked ``numpy_only``
    numpy_operator  -- (found, not declared) the Python operator ``fast_impl`` stands in
                       for (``operator.mul``), which the staging trace calls itself where an
                       operand is a numpy value; None for the rest
    fresh_output    -- its result is always a new array of its own, never a view of an
                       argument (so a later ``writes_into`` may overwrite it)
    listed_name     -- the name a user meets it by, in a graph's listing and in warnings:
                       its ``fgrad.numpy`` function's (None: ``name``; ``power_operator``,
                       numpy's ``**``, is ``power``, as numpy names it)
    keeps_python_numbers -- its rules get an argument that is a Python number as it is (a
                       custom function's: they run the user's code, which must see what the
                       function saw); other rules get a numpy scalar (``values.strong``)
    """

    def __init__(self, name, impl, spec=None, doc=None, *, vjps=None, jvps=None,
                 vjp_by_argnum=None, vjp_joint=None, jvp_joint=None, jvp_with_output=None,
                 taylor=None, batch=None, check_call=None, fast_impl=None, other_arrays=True,
                 residuals=None, differentiable=True, dtype_from_values=False,
                 shape_from_values=False, effect=False,
                 interpret=None, replay_impl=None, operator=None, commutative=False,
                 writes_into=False, fresh_output=False, listed_name=None,
                 keeps_python_numbers=False):
        self.name, self.impl, self.spec = name, impl, spec
        self.listed_name = listed_name or name
        self.vjps, self.jvps = dict(vjps or {}), dict(jvps or {})
        self.vjp_by_argnum, self.vjp_joint = vjp_by_argnum, vjp_joint
        self.jvp_joint, self.jvp_with_output = jvp_joint, jvp_with_output
        self.taylor, self.batch = taylor, batch
        # JVP rules made from VJP rules by transposing them, for arguments without a JVP
        # rule, on first use in forward mode, and forward mode's rule in its one shape
        # (``fgrad.traces.rules``): caches, dropped whenever a rule is set
        self.derived_jvps = {}
        self.made_jvp = None
        self.check_call = check_call
        self.nin = getattr(impl, "nin", 1 << 30)
        self.fast_impl = impl if fast_impl is None else fast_impl
        # (staging calls such an implementation without hiding its trace from it: 0.15 us a
        # staged call, of about 3)
        self.numpy_only = isinstance(self.fast_impl, _onp.ufunc) or \
            getattr(self.fast_impl, "numpy_only", False)
        # numpy's operator that ``fast_impl`` stands in for, which gives its result where
        # an operand is a numpy value and none a Python complex (staging calls it directly)
        self.numpy_operator = getattr(self.fast_impl, "operator", None)
        self.other_arrays = other_arrays
        self.residuals = residuals
        self.keeps_python_numbers = keeps_python_numbers
        self.differentiable = differentiable
        # the output's facts a staged graph guards, as ``Var`` names them
        self.from_values = ("shape",) * shape_from_values + ("dtype",) * dtype_from_values
        self.effect, self.interpret, self.replay_impl = effect, interpret, replay_impl
        self.operator, self.commutative = operator, commutative
        self.writes_into, self.fresh_output = writes_into, fresh_output
        self.__doc__ = doc if doc is not None else getattr(impl, "__doc__", None)
        self.__wrapped__ = impl
        self.__name__ = name

    def __repr__(self):
        return f"<fgrad primitive {self.name}>"

    def __call__(self, *args, **params):
        for a in args:
            if a.__class__ not in PLAIN_OPERANDS:
                break
        else:  # plain values only (most calls inside the rules): numpy at once, unless a
            # staging trace runs in this thread (it records the call: see ``_ambient``)
            if not STAGING or "out" in params or ambient() is None:
                return self.impl(*args, **params)
            return self._ambient(args, params)
        return self.bind(args, params)

    def bind(self, args, params):
        """The call on ``args`` (a tuple or list), some of them traced: it goes to the innermost
        trace among them (the one with the highest level), which calls the primitive again on
        the values one level down. (A trace calling it on its values' tracers calls this
        directly: packing them into a call was 1.9% of a staged gradient's first call.)"""
        top = None
        listed = False
        for a in args:
            if isinstance(a, Tracer):
                t = a._trace
                if top is None or t.level > top.level:
                    top = t
            elif a.__class__ is list or a.__class__ is tuple:
                t = first_tracer(a)
                if t is not None:
                    # a list holding tracers is one traced array (np.sin([x, 2 * x]))
                    args = tuple(t.as_array(b) if type(b) in (list, tuple) else b for b in args)
                    return self(*args, **params)
                listed = True
        if listed and top is not None:
            # a plain list beside a tracer is the array numpy would make of it: the rules
            # compute with their operands (``g * b`` of x @ [1.0, 2.0] was a list's product)
            args = tuple(_onp.asarray(a) if type(a) in (list, tuple) else a for a in args)
        if top is None:
            if not STAGING or "out" in params or ambient() is None:
                other = first_foreign(args)
                if other is not None:
                    return call_in_own_library(self, other, *args, **params)
                if not params:  # (a complex scalar, or a value of another type: numpy's
                    # operator for the arithmetic ufuncs, as the rules' own ``a * b`` on
                    # plain values and the generated code: numpy's scalar arithmetic
                    # multiplies complex scalars by another formula than the ufunc's loop,
                    # a last bit apart, and a replay must give eager's bits)
                    return self.fast_impl(*args)
                return self.impl(*args, **params)
            return self._ambient(args, params)
        if self.check_call is not None and (params or len(args) > self.nin):
            params = self.check_call(self, args, params)
            if params.__class__ is Answered:
                return params.value
        elif params and params.get("out") is not None:  # (a ufunc's check_call takes it)
            # computed without out= and written into it, as numpy's out= writes: handed to
            # the trace, out= reached numpy's call on the values below (a traced buffer's
            # value overwritten there, without derivative)
            params = dict(params)
            out = params.pop("out")
            return written_out(self.public_name, out[0] if out.__class__ is tuple and
                               len(out) == 1 else out, self.bind(args, params))
        if not top.alive:
            raise errors.escaped(top)
        if LIFTING:  # (a call on a closure's tracers inside a staged checkpoint: the graph's)
            staged = ambient()
            if staged is not None and staged.lifted is not None and staged.level > top.level:
                return staged.process(self, args, params)
        if not self.differentiable and not top.sees_all:
            return self(*[map_tracers(a, without_derivative) for a in args], **params)
        return top.process(self, args, params)

    def _ambient(self, args, params):
        """A call on plain values inside a staged function: recorded, so that a replay reads
        the closed-over arrays it was given as they are then. (A call writing into ``out=``
        runs at once: its result is a constant of the trace.)"""
        if self.check_call is not None and (params or len(args) > self.nin):
            params = self.check_call(self, args, params)
            if params.__class__ is Answered:
                return params.value
        return ambient().process(self, args, params)

    def vjp_all(self, g, ans, args, params, wanted):
        """Every wanted argument's cotangent, ``[cotangent or None, one per argument]``:
        reverse mode's one rule shape, whatever form the rules were declared in.
        ``wanted[i]`` is None for an argument whose cotangent nobody needs (the tape passes
        its node's parents). The rule made from the declared forms replaces this method on
        the instance, so later calls go to it directly; setting a rule drops it."""
        made = self.__dict__["vjp_all"] = _reverse_rule(self)
        return made(g, ans, args, params, wanted)

    def vjp_rule(self, i):
        """Argument ``i``'s VJP rule ``(g, ans, *args, **params) -> cotangent``, from
        whichever form it was declared in."""
        rule = self.vjps.get(i)
        if rule is None:
            if self.vjp_by_argnum is not None:
                rule = self.vjps[i] = _bind_argnum(self.vjp_by_argnum, i)
            elif self.vjp_joint is not None:
                rule = _one_of_joint(self.vjp_joint, i)
            else:
                raise errors.missing_rule(self.name, i, "VJP")
        return rule

    def rules_changed(self):
        """Drop the rule shapes made from the old rules."""
        self.__dict__.pop("vjp_all", None)
        self.made_jvp = None

    @property
    def builtin(self):
        """Whether fgrad defines it (not a user's primitive)."""
        return self.name in _BUILTIN

    @property
    def public_name(self):
        """How messages name it: ``fgrad.numpy.sin``, ``fgrad.scipy.special.expit``, or the
        name a user gave their own primitive."""
        if self.name not in _BUILTIN:
            return self.name
        where = "fgrad." if self.name.startswith("scipy.") else "fgrad.numpy."
        return where + self.listed_name


def written_out(name, out, result):
    """``out`` after ``out[...] = result``: ``name(..., out=out)`` on traced values (``name``
    the function's full name: a traced ``out``, its views and aliases see the write; a plain
    one cannot hold a traced result: refused). Its shape must be the result's, as numpy's
    ``out=``."""
    if not isinstance(out, Tracer) and contains_tracer(result):
        raise errors.out_argument(name)
    have, want = _onp.shape(value_for_shape(out)), _onp.shape(value_for_shape(result))
    if have != want:
        raise ValueError(f"{name}: out= has shape {have}, the result {want}; numpy takes no "
                         "other shape")
    out.write_result(result, f"{name}(..., out=...)")
    return out


def _bind_argnum(rule, i):
    return lambda g, ans, *args, **params: rule(i, g, ans, *args, **params)


def _one_of_joint(rule, i):
    return lambda g, ans, *args, **params: rule(g, ans, *args, **params)[i]


def _reverse_rule(prim):
    """``prim.vjp_all`` made from the declared forms (see ``Primitive.vjp_all``)."""
    joint = prim.vjp_joint
    if joint is not None:
        def every_argument(g, ans, args, params, wanted):
            return joint(g, ans, *args, **params)
        return every_argument
    rules = prim.vjps
    # (the ufuncs, most of a recorded program, have one or two arguments: their rules are
    # called without a loop, as the tape's walk called them before there was one shape)
    if prim.nin == 1 and 0 in rules:
        rule0 = rules[0]

        def unary(g, ans, args, params, wanted):
            return (rule0(g, ans, *args, **params) if params else rule0(g, ans, *args),)
        return unary
    if prim.nin == 2 and 0 in rules and 1 in rules:
        rule0, rule1 = rules[0], rules[1]

        def binary(g, ans, args, params, wanted):
            w0, w1 = wanted
            if params:
                return (None if w0 is None else rule0(g, ans, *args, **params),
                        None if w1 is None else rule1(g, ans, *args, **params))
            return (None if w0 is None else rule0(g, ans, *args),
                    None if w1 is None else rule1(g, ans, *args))
        return binary

    def by_argument(g, ans, args, params, wanted):
        out = []
        i = 0
        for w in wanted:
            if w is None:
                out.append(None)
            else:
                rule = rules.get(i) or prim.vjp_rule(i)
                out.append(rule(g, ans, *args, **params) if params else rule(g, ans, *args))
            i += 1
        return out
    return by_argument


def zero_rule(*args, **params):
    """The rule of an argument whose derivative is zero (given as ``None``)."""
    return None


def no_derivative(name, arg, why):
    """The rule of argument ``arg`` of ``fgrad.<name>``, whose derivative exists but has no
    rule (``why``): an order, a shape parameter without closed form. The public function
    refuses a differentiated ``arg``, but under ``jit``, ``vmap`` or ``checkpoint`` it reaches
    the primitive as an operand and only the differentiating trace sees it: there a zero rule
    would be a silently wrong derivative, so this one raises NoDerivativeRuleError by name.
    (Traces call a rule only for an argument that carries a derivative.)"""
    def refuse(*args, **params):
        raise errors.no_derivative_in(name, arg, why)
    return refuse


def defvjp(prim: "Primitive", *rules: Callable[..., Any] | None,
           argnums: Sequence[int] | None = None) -> None:
    """Set the VJP rules of ``prim``, one per argument (``None`` means a zero derivative).

    A rule is ``lambda g, ans, *args, **params: cotangent``. ``argnums`` says which arguments the
    rules are for (default 0, 1, ...). autograd's curried form ``lambda ans, x: lambda g: ...``
    is refused here, when the rule is registered, with the form fgrad expects. For an argument
    with no JVP rule, forward mode (``jvp``, ``jacfwd``, ``hessian``) transposes this rule,
    which must be linear in ``g`` (``fgrad.traces.rules``):

    >>> import fgrad
    >>> square = fgrad.primitive(lambda x: x * x, name="my_vjp_only_square")
    >>> fgrad.defvjp(square, lambda g, ans, x: 2.0 * g * x)
    >>> float(fgrad.hessian(square)(3.0))  # forward over reverse: the VJP rule, transposed
    2.0
    """
    for i, r in zip(argnums or range(len(rules)), rules):
        if r is not None:
            _check_vjp_signature(prim, i, r)
    _set_vjps(prim, rules, argnums)


def _set_vjps(prim, rules, argnums=None):
    for i, r in zip(argnums or range(len(rules)), rules):
        prim.vjps[i] = zero_rule if r is None else r
        prim.derived_jvps.pop(i, None)  # (made from the rule replaced)
    prim.rules_changed()


def _check_vjp_signature(prim, argnum, rule):
    """A rule taking one positional argument fewer than ``(g, ans, *args)`` is autograd's
    curried ``(ans, *args) -> (g -> cotangent)``: say so now rather than at the first
    gradient. (Primitives whose arguments cannot be counted are not checked.)"""
    try:
        nargs = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and
                    p.default is p.empty for p in inspect.signature(prim.impl).parameters.values())
        params = inspect.signature(rule).parameters.values()
    except (TypeError, ValueError):
        return
    if any(p.kind == p.VAR_POSITIONAL for p in params):
        return
    takes = sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) for p in params)
    if takes == nargs + 1:
        raise TypeError(
            f"defvjp({prim.name}): the rule for argument {argnum} takes {takes} positional "
            f"arguments, autograd's curried form (lambda ans, *args: lambda g: ...); fgrad's "
            f"rules take the cotangent first and return the cotangent of the argument: "
            f"lambda g, ans, *args: ... ({nargs + 2} arguments here); or register the curried "
            f"rule with fgrad.autograd.defvjp, which takes autograd's form")


def defjvp(prim: "Primitive", *rules: Callable[..., Any] | None,
           argnums: Sequence[int] | None = None) -> None:
    """Set the JVP rules of ``prim``, one per argument (``None`` means a zero derivative).

    A rule is ``lambda t, ans, *args, **params: output tangent`` (shaped like ``ans``); the
    contributions of several arguments are added.
    """
    for i, r in zip(argnums or range(len(rules)), rules):
        prim.jvps[i] = zero_rule if r is None else r
    prim.rules_changed()


def defbatch(prim: "Primitive", rule: Callable[..., Any]) -> None:
    """Set how ``vmap`` runs ``prim`` on a whole batch in one call (without a rule it runs
    once per example). ``rule(prim, size, vals, dims, **params) -> (out, out_axis)``:
    ``vals`` are the arguments with the batch in them, ``dims`` each one's batch axis (None
    for an argument that is the same for every example); ``out_axis`` is the batch axis of
    ``out``. The families' rules (``fgrad.numpy.batch_rules``: ``elementwise``,
    ``stacked(*core)``, ``along(param)``, ...) serve as rules for users' primitives too.

    >>> import numpy, fgrad
    >>> cube = fgrad.primitive(lambda x: x ** 3, name="my_batched_cube")
    >>> fgrad.defbatch(cube, lambda prim, size, vals, dims: (prim(vals[0]), dims[0]))
    >>> fgrad.vmap(cube)(numpy.array([1.0, 2.0])).tolist()
    [1.0, 8.0]
    """
    prim.batch = rule


def deflinear(prim: "Primitive", *vjp_rules: Callable[..., Any] | None) -> None:
    """``prim`` is linear in each argument the rules are given for (for several arguments:
    multilinear, like ``multiply`` or ``matmul``). Its JVP for argument i is the primitive
    itself with the tangent in place of argument i; only the transposes (VJPs) are written.

    >>> import numpy, fgrad
    >>> flip = fgrad.primitive(numpy.flip, name="my_flip")
    >>> fgrad.deflinear(flip, lambda g, ans, x: flip(g))   # flipping is its own transpose
    >>> fgrad.jvp(flip, (numpy.array([1.0, 2.0]),), (numpy.array([1.0, 0.0]),))[1].tolist()
    [0.0, 1.0]
    """
    defvjp(prim, *vjp_rules)
    _linear_jvps(prim, vjp_rules)


def _linear_jvps(prim, vjp_rules):
    for i, r in enumerate(vjp_rules):
        if r is not None:
            prim.jvps[i] = linear_jvp(prim, i)
    prim.taylor = multilinear_taylor(prim, {i for i, r in enumerate(vjp_rules)
                                             if r is not None})
    prim.rules_changed()


def multilinear_taylor(prim, linear=None):
    """``jet``'s rule for the map ``prim`` (a primitive, or a function calling it) linear in
    each argument of ``linear`` (None: every one, ``einsum``): Leibniz's rule, the
    n-th term ``sum over j_1 + ... + j_m = n of n! / (j_1! ... j_m!) prim(a_1[j_1], ...)``
    over the arguments with terms (a linear map: ``prim`` of each term)."""
    def rule(series, ans, *args, **params):
        moving = [i for i, s in enumerate(series) if s is not None]
        if linear is not None and not set(moving) <= linear:
            return NotImplemented  # (a nonlinear argument varies: jet expands it otherwise)
        out = []
        for n in range(1, len(series[moving[0]]) + 1):
            total = None
            for js in _compositions(n, len(moving)):
                terms = list(args)
                for i, j in zip(moving, js):
                    terms[i] = series[i][j - 1] if j else args[i]
                if any(t is None for t in terms):
                    continue
                c = _multinomial(n, js)
                v = prim(*terms, **params)
                v = v if c == 1 else c * v
                total = v if total is None else total + v
            out.append(total)
        return out
    return rule


def _compositions(n, m):
    """Every ``(j_1, ..., j_m)`` of non-negative integers summing to ``n``."""
    if m == 1:
        yield (n,)
        return
    for j in range(n + 1):
        for rest in _compositions(n - j, m - 1):
            yield (j,) + rest


def _multinomial(n, js):
    out = 1
    for j in js:
        out *= comb(n, j)
        n -= j
    return out


def linear_jvp(prim, i):
    if i == 0:
        return lambda t, ans, x, /, *rest, **params: prim(t, *rest, **params)
    return lambda t, ans, *args, **params: prim(*args[:i], t, *args[i + 1:], **params)


def _jointly_linear_taylor(prim):
    """``jet``'s rule for a map linear in all its arguments together: the map of each term."""
    def rule(series, ans, *args, **params):
        order = len(next(s for s in series if s is not None))
        return [prim(*[_zeros_like(x) if s is None or s[k] is None else s[k]
                       for s, x in zip(series, args)], **params) for k in range(order)]
    return rule


def _jointly_linear_jvp(prim):
    """JVP of a primitive linear in all its arguments together (``concatenate``, ``stack``):
    the primitive applied to the tangents, zeros standing in for the missing ones."""
    def jvp_joint(tangents, ans, *args, **params):
        return prim(*[_zeros_like(x) if t is None else t for t, x in zip(tangents, args)],
                    **params)
    return jvp_joint


def _zeros_like(x):
    v = value_for_shape(x)  # (one example's shape and dtype: under vmap, no value is read)
    if foreign_array(v):  # (in the value's own library, as other_arrays asks)
        return _onp.zeros_like(v)
    return _onp.zeros(_onp.shape(v), _onp.result_type(v))


class Composed:
    """A Taylor rule given as a composition: the primitive equals ``fn(*args, **params)``, a
    function of primitives whose own expansions cost O(K^2). ``jet`` expands ``fn`` in the
    primitive's place (``fgrad/traces/taylor.py``); the value stays the primitive's own. For
    primitives whose JVP rule reads their output (``expit' = y (1 - y)``), which ``jet``
    would otherwise expand one order at a time, O(K^3). ``where(ans, *args, **params)``, on
    plain values, says where the composition holds (finite values, away from a pole); a jet
    elsewhere expands the JVP rule."""
    __slots__ = ("fn", "where")

    def __init__(self, fn, where=None):
        self.fn, self.where = fn, where


class Inverse:
    """A Taylor rule for an inverse function: the primitive ``y = g(q, *rest)`` solves
    ``f(y, *rest) = q``, with ``df = d f / d y``, both functions of primitives whose own
    expansions cost O(K^2). ``jet`` finds the terms by Newton's method on the series
    (``fgrad/traces/taylor.py``), which doubles the number of right terms per step, each
    step's jet to no more orders than it gets right (1, 3, 7, ...): O(K^2) in all, where the
    JVP rule
    ``1 / df(y)`` reads the output (erfinv, ndtri, a distribution's ppf)."""
    __slots__ = ("f", "df", "where")

    def __init__(self, f, df, where=None):
        self.f, self.df, self.where = f, df, where


def define(name, impl, vjps=(), jvps=(), *, linear=False, jointly_linear=False, spec=None,
           doc=None, cls=None, like=None, **fields):
    """Make a built-in primitive and its rules in one statement (used by the rule families).

    ``vjps`` and ``jvps`` are lists of rules, one per argument (None for a zero derivative);
    ``fields`` are the ``Primitive``'s other fields (``vjp_by_argnum`` for variadic
    primitives, ``jvp_joint``, ``check_call``, ``residuals``, ``batch``, ``taylor``, ...).
    ``linear=True``: the primitive is linear in each argument that has a VJP rule, so its
    JVP for argument i is the primitive itself with the tangent in place of argument i (and
    Leibniz's rule is its Taylor rule); ``jointly_linear=True``: linear in all its arguments
    together (``concatenate``), its JVP the primitive applied to all the tangents at once.
    ``like``: a primitive whose rules it shares (scipy's ``solve`` differentiates as
    numpy's). ``cls``: a subclass of ``Primitive`` to make it with (the ufuncs', which has
    their methods)."""
    if name in PRIMITIVES:
        raise ValueError(f"primitive {name} is defined twice")
    if like is not None:
        fields = {"vjps": like.vjps, "jvps": like.jvps, "vjp_by_argnum": like.vjp_by_argnum,
                  "vjp_joint": like.vjp_joint, "jvp_joint": like.jvp_joint,
                  "taylor": like.taylor, **fields}
    else:
        fields["vjps"] = _by_argnum(vjps)
        fields["jvps"] = _by_argnum(jvps)
    if fields.get("residuals") is None and (linear or jointly_linear):
        # a linear map's transpose reads no values of its argument, only its shape; a
        # multilinear one's reads the other arguments
        fields["residuals"] = ("others" if linear and len(vjps) > 1 else (), False)
    p = (cls or Primitive)(name, impl, spec, doc, **fields)
    # (the rules of a linear map call the primitive itself: made once it exists)
    if linear:
        _linear_jvps(p, vjps)
    if jointly_linear:
        p.jvp_joint = _jointly_linear_jvp(p)
        p.taylor = _jointly_linear_taylor(p)
    PRIMITIVES[name] = p
    _BUILTIN.add(name)
    return p


def _by_argnum(rules):
    return {i: zero_rule if r is None else r for i, r in enumerate(rules)}


class Function:
    """A public ``fgrad.numpy`` function built from primitives (``var`` from ``mean``, ``hstack``
    from ``concatenate``), registered with a ``Spec`` so the generated tests and
    ``python -m fgrad check`` verify it through the same door users call it by.

    ``fn`` is the public function, ``impl`` numpy's own (the reference for forward values)."""

    def __init__(self, name, fn, impl, spec):
        self.name, self.fn, self.impl, self.spec = name, fn, impl, spec
        self.__name__ = name

    def __repr__(self):
        return f"<fgrad function {self.name}>"

    def __call__(self, *args, **params):
        return self.fn(*args, **params)


def checked():
    """Everything the generated tests and ``python -m fgrad check`` verify, by test name:
    each primitive under its name, each composed function as ``np.<numpy name>`` (or under
    its own name, ``scipy.linalg.cho_solve``, for another library's)."""
    entries = dict(PRIMITIVES)
    entries.update((entry_name(f), f) for f in FUNCTIONS.values())
    return entries


def entry_name(entry):
    """The name a table entry is checked and listed under."""
    if isinstance(entry, Primitive) or entry.name.startswith("scipy."):
        return entry.name
    return "np." + entry.name


def register_function(name, fn, impl, spec):
    """Add ``fn`` (the public function named ``name`` after numpy) to ``FUNCTIONS``."""
    if name in FUNCTIONS:
        raise ValueError(f"function {name} is registered twice")
    FUNCTIONS[name] = Function(name, fn, impl, spec)
    fn._fgrad_status = "differentiable"
    return fn
