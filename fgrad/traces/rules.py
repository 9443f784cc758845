"""Forward mode's rule shape, made from whatever form a primitive's rules were declared in.

A primitive's rules are declared in the form that suits them (``fgrad.core.table``): one VJP
and one JVP rule per argument, a VJP rule taking the argument number (variadic primitives),
rules giving every argument's derivative at once (``vjp_joint``, ``jvp_joint``: custom
functions, ODE solutions, joint formulas), a forward rule giving the output too
(``jvp_with_output``: custom_jvp's, whose output is what ``jvp`` returns), or only VJP rules
(autograd's style). Traces never tell these apart: each reads one shape, made here once per
primitive and cached on it (made again when its rules change):

    prim.vjp_all(g, ans, args, params, wanted) -> [cotangent or None, one per argument]
    jvp_all(prim)(args, tangents, params, ans)  -> (ans, tangent or None)

The reverse shape is the table's own (``Primitive.vjp_all``: it reads nothing but the
declared rules); the forward one is made here, above the tape, because a JVP rule missing
where a VJP rule exists is that VJP rule transposed, which records and walks a tape.
``tangents[i]`` is None for a zero tangent. Where a primitive has a VJP rule only,
the JVP rule is that VJP rule transposed (``fgrad.traces.transpose``): exact, and
differentiable again to every order the VJP rule is, at the cost of recording and sweeping
the VJP rule once per call. A JVP rule, where given, is used instead.
"""
import numpy as _onp

from ..core import errors
from ..numpy.elementwise import real
from ..core.table import zero_rule
from ..core.tracer import add_any, staging, value_for_shape
from .transpose import transpose


def jvp_all(prim):
    """``prim``'s forward rule ``(args, tangents, params, ans) -> (ans, tangent)``: ``ans``
    is the output the caller computed, returned unless the rule gives its own (custom_jvp's,
    ``rule.gives_output``: then the caller need not compute it, and passes None)."""
    rule = prim.made_jvp
    if rule is None:
        rule = prim.made_jvp = _forward(prim)
    return rule


def _forward(prim):
    with_output = prim.jvp_with_output
    if with_output is not None:
        def giving_output(args, tangents, params, ans):
            return with_output(tangents, *args, **params)
        giving_output.gives_output = True  # (a caller need not compute ``ans`` for it)
        return giving_output
    joint = prim.jvp_joint
    if joint is not None:
        def every_argument(args, tangents, params, ans):
            try:
                return ans, joint(tangents, ans, *args, **params)
            except errors.ConcretizationError as e:
                raise _in_jvp_rule(e, prim) from e
        every_argument.gives_output = False
        return every_argument
    rules = prim.jvps
    # (the ufuncs, most of a program, have one or two arguments: their rules are called
    # without a loop, as the dual trace called them before there was one shape; 6% of the
    # instructions of the scalar chain's jvp, counted by cachegrind)
    if prim.nin == 1 and 0 in rules:
        rule0 = rules[0]

        def unary(args, tangents, params, ans):
            t = tangents[0]
            if t is None:
                return ans, None
            try:
                return ans, rule0(t, ans, *args, **params)
            except errors.ConcretizationError as e:
                raise _in_jvp_rule(e, prim) from e
        unary.gives_output = False
        return unary
    if prim.nin == 2 and 0 in rules and 1 in rules:
        rule0, rule1 = rules[0], rules[1]

        def binary(args, tangents, params, ans):
            t0, t1 = tangents
            try:
                out = None if t0 is None else rule0(t0, ans, *args, **params)
                if t1 is not None:
                    c = rule1(t1, ans, *args, **params)
                    if c is not None:
                        out = c if out is None else add_any(out, c)
            except errors.ConcretizationError as e:
                raise _in_jvp_rule(e, prim) from e
            return ans, out
        binary.gives_output = False
        return binary

    def by_argument(args, tangents, params, ans):
        out = None
        i = -1
        try:
            for t in tangents:
                i += 1
                if t is not None:
                    c = (rules.get(i) or jvp_rule(prim, i))(t, ans, *args, **params)
                    if c is not None:
                        out = c if out is None else add_any(out, c)
        except errors.ConcretizationError as e:
            raise _in_jvp_rule(e, prim) from e
        return ans, out
    by_argument.gives_output = False
    return by_argument


def sweep_forward(tape, seeds):
    """Push input tangents (``{input node: tangent}``) through ``tape`` in order; returns
    ``{node: tangent}`` for every node reached."""
    tans = dict(seeds)
    get = tans.get
    for node in tape.nodes:
        ts = list(map(get, node.parents))  # (None, a constant's parent, is never a key)
        for t in ts:
            if t is not None:
                out = jvp_all(node.prim)(node.args, ts, node.params, node.ans)[1]
                if out is not None:
                    tans[node] = out
                break
    return tans


def _in_jvp_rule(e, prim):  # (say that the read is a rule's)
    return errors.in_rule(e, f"the JVP rule of {prim.public_name}", prim.builtin)


def jvp_rule(prim, i):
    """Argument ``i``'s JVP rule: the one given, else one derived from its VJP rule."""
    rule = prim.jvps.get(i) or prim.derived_jvps.get(i)
    if rule is None:
        if not _has_vjp(prim, i):
            raise errors.missing_rule(prim.name, i, "JVP")
        rule = prim.derived_jvps[i] = _transposed_vjp(prim, i)
    return rule


def derived(prim, i):
    """Whether forward mode derives argument ``i``'s JVP rule from its VJP rule."""
    return (prim.jvp_joint is None and prim.jvp_with_output is None and i not in prim.jvps
            and _has_vjp(prim, i))


def _has_vjp(prim, i):
    return i in prim.vjps or prim.vjp_by_argnum is not None or prim.vjp_joint is not None


def _transposed_vjp(prim, i):
    """The JVP rule ``t -> J t`` of argument ``i``, as the transpose of its VJP rule
    ``g -> J^T g``. The rule's linearity in ``g`` is tried once, on the first call's values
    (see ``_probe``): a VJP rule that is not linear has no transpose to speak of."""
    if prim.vjps.get(i) is zero_rule:
        return zero_rule
    where = (f"primitive {prim.name}: forward mode (jvp, jacfwd, hessian) transposes its VJP "
             f"rule for argument {i}, since it has no JVP rule")
    fix = f"give it a JVP rule with fgrad.defjvp({prim.name}, ..., argnums=({i},))"
    probed = []

    def nonlinear(k, v):
        return ValueError(f"{where}; that rule must be linear in its cotangent g, but for "
                          f"g = 0 it gives {v} rather than zero: {fix}")

    def jvp(t, ans, *args, **params):
        vjp = prim.vjp_rule(i)
        if not probed and _probe(vjp, ans, args, params, i, where, fix):
            probed.append(True)
        # reverse mode keeps the real part of a real argument's cotangent: so does the map
        # transposed here, so that forward mode is reverse mode's transpose exactly
        keep_real = _onp.result_type(value_for_shape(args[i])).kind != "c"

        def cotangent(gs):
            c = vjp(gs[0], ans, *args, **params)
            return [real(c) if keep_real and c is not None else c]

        return transpose(cotangent, [ans], [t], nonlinear,
                         f"{where}, running it on a traced cotangent g, so the rule must "
                         f"handle g with fgrad.numpy, or {fix}")[0]

    return jvp


def _probe(vjp, ans, args, params, i, where, fix):
    """Try the VJP rule's linearity in ``g`` on plain values, once per primitive argument:
    ``vjp(g1 - 2 g2) = vjp(g1) - 2 vjp(g2)`` for two random cotangents (a quadratic, an
    absolute value or a clipping fails it), and its result shaped like the argument. Returns
    whether the try was conclusive (False where the rule raised or gave no finite values,
    as it may on a batch's stand-in values); raises ``ValueError`` when it failed."""
    a = value_for_shape(ans)
    xs = [value_for_shape(x) for x in args]
    dtype = _onp.result_type(a)
    rng = _onp.random.default_rng(0)

    def draw():
        r = rng.standard_normal(_onp.shape(a))
        if dtype.kind == "c":
            r = r + 1j * rng.standard_normal(_onp.shape(a))
        return _onp.asarray(r, dtype)

    g1, g2 = draw(), draw()
    shape = _onp.shape(xs[i])
    try:
        with staging(None), _onp.errstate(all="ignore"):  # (a check, not the computation)
            outs = [vjp(g, a, *xs, **params) for g in (g1, g2, g1 - 2 * g2)]
    except Exception:  # the call that follows raises it where it belongs, or succeeds
        return False
    outs = [_onp.zeros(shape) if c is None else _onp.asarray(c) for c in outs]
    for c in outs:
        if c.shape != shape:
            raise ValueError(f"{where}; that rule returns shape {c.shape} for an argument of "
                             f"shape {shape}: a VJP rule returns the cotangent of its "
                             "argument, shaped like it (fgrad.unbroadcast sums a broadcast one "
                             "back)")
    c1, c2, c12 = outs
    want = c1 - 2 * c2
    ok = _onp.isfinite(c12) & _onp.isfinite(want)
    if not ok.any():
        return False
    err = _onp.abs(c12[ok] - want[ok])
    scale = max(_onp.abs(c12[ok]).max(), _onp.abs(want[ok]).max(), 1e-300)
    inexact = c12.dtype if c12.dtype.kind in "fc" else _onp.dtype(float)
    if err.max() > _onp.sqrt(_onp.finfo(inexact).eps) * scale:  # (rounding stays far below)
        raise ValueError(f"{where}; that rule must be linear in its cotangent g, but for two "
                         f"random cotangents rule(g1 - 2 g2) differs from rule(g1) - "
                         f"2 rule(g2) by {err.max() / scale:.2g} relative to their size: "
                         f"{fix}")
    return True
