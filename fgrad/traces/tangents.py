"""The tangent of a primitive call's output, from its arguments' tangents: forward mode's step.

Shared by the dual numbers (``jvp``) and the tape's forward sweep (``linearize``, ``jacfwd``).
Each argument's tangent goes through the primitive's JVP rule for that argument; where a
primitive has a VJP rule only (one written for autograd, whose ``hessian`` is reverse over
reverse), the JVP rule is that VJP rule transposed (``fgrad.traces.transpose``): exact, and
differentiable again to every order the VJP rule is, at the cost of recording and sweeping
the VJP rule once per call. A JVP rule, where given, is used instead.
"""
import numpy as _onp

from ..core import errors
from .accumulate import add_any
from ..numpy.elementwise import real
from ..core.table import zero_rule
from ..core.tracer import innermost_meta, staging
from .transpose import transpose


def output_tangent(prim, tangents, ans, args, params):
    """The tangent of ``ans = prim(*args, **params)`` from every argument's tangent (None for
    zero), by the primitive's JVP rules; None when it is zero."""
    try:
        if prim.jvp_joint is not None:
            return prim.jvp_joint(tangents, ans, *args, **params)
        out, rules = None, prim.jvps
        i = -1
        for t in tangents:
            i += 1
            if t is not None:
                c = (rules.get(i) or jvp_rule(prim, i))(t, ans, *args, **params)
                if c is not None:
                    out = c if out is None else add_any(out, c)
        return out
    except errors.ConcretizationError as e:  # (say that the read is a rule's)
        raise errors.in_rule(e, f"the JVP rule of {prim.public_name}", prim.builtin) from e


def sweep_forward(tape, seeds):
    """Push input tangents (``{input node: tangent}``) through ``tape`` in order; returns
    ``{node: tangent}`` for every node reached."""
    tans = dict(seeds)
    get = tans.get
    for node in tape.nodes:
        ts = list(map(get, node.parents))  # (None, a constant's parent, is never a key)
        for t in ts:
            if t is not None:
                out = output_tangent(node.prim, ts, node.ans, node.args, node.params)
                if out is not None:
                    tans[node] = out
                break
    return tans


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
    return i not in prim.jvps and _has_vjp(prim, i)


def _has_vjp(prim, i):
    return i in prim.vjps or prim.vjp_by_argnum is not None


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
        vjp = prim.vjp(i)
        if not probed and _probe(vjp, ans, args, params, i, where, fix):
            probed.append(True)
        # reverse mode keeps the real part of a real argument's cotangent: so does the map
        # transposed here, so that forward mode is reverse mode's transpose exactly
        keep_real = _onp.result_type(innermost_meta(args[i])).kind != "c"

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
    a = innermost_meta(ans)
    xs = [innermost_meta(x) for x in args]
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
