"""fgrad.scipy.integrate: ``odeint`` and ``solve_ivp`` differentiable in the initial state,
the times and ``args``; ``quad`` (and ``dblquad``, quad of quad) in its limits and ``args``;
``fixed_quad`` in everything the integrand reads; ``simpson`` and ``romb`` in the samples;
``trapezoid`` and ``cumulative_trapezoid`` in the samples and the points.

``odeint`` is a primitive whose implementation is scipy's (LSODA), ``solve_ivp`` another
(scipy's, with the user's method, at the times wanted). Their rules, the same for both,
solve other ODEs with the primitive they belong to, so they can be differentiated again:

* **forward** (JVP): the forward sensitivity ``s = dy . (tangent)`` solves
  ``s' = J_y f s + J_args f t_args`` beside ``y``, from ``s(t0) = t_y0 - f(y0, t0) t_t0``;
  the output tangent adds ``f(y_i, t_i) t_ti``.
* **Taylor** (``fgrad.jet``): the path's terms ``z_k`` of the solution solve the ODE of the
  jet, ``(z_0, ..., z_K)' = (f, its K terms along z's and the parameters' series)``, one
  solve of a (K + 1)-fold system; times that move are taken to fixed ones by solving each
  interval on ``[0, 1]`` with ``f`` rescaled by its length.
* **reverse** (VJP): the adjoint method. ``a`` (the cotangent of ``y(t)``) is integrated
  backwards from the last time, ``a' = -J_y f^T a``, with ``y`` recomputed beside it and the
  parameters' cotangent gathered as ``-J_args f^T a``; each output's cotangent joins ``a`` at
  its time. ``t_i`` gets ``g_i . f(y_i, t_i)``, ``t_0`` minus what ``a`` carries there.

The rules' systems are staged (``jitting.staged``): scipy calls them at every step, and each
call would record ``func`` anew on a tape or in dual numbers; a replay is the same arithmetic,
bit for bit. (A Lotka-Volterra model at 20 output times, best of 5 in one process against the
rules unstaged, the same bits: a gradient 3.8x faster through odeint and 2.9x through
solve_ivp, a JVP 5x, a jet 10x.) A ``func`` whose branches come out differently call after
call runs eagerly once jit stops tracing it.

``quad`` is a primitive too (scipy's ``quad``, or ``quad_vec`` for a vector integrand, which
its rules integrate): the derivative in a limit is the integrand there (the fundamental
theorem), in ``args`` the integral of the integrand's derivative (Leibniz's rule), which the
rules compute with the primitive again: forward, the integrand's JVP; reverse, its VJP per
argument, one vector integral each.

``func(y, t, *args)`` (solve_ivp's ``fun(t, y, *args)``, quad's ``func(t, *args)``) must be
written with ``fgrad.numpy``.
What it is differentiated in comes through ``y0`` and ``args``, or through its closure: the
traced values in its own cells are made arguments (``_closure_lifted``); one it reaches
otherwise (a global, an attribute) raises ``ClosedOverTracerError``, as its dependence would
be lost.
"""
import functools
import types as _types

import numpy as _onp
import scipy.integrate as _si
import scipy.special as _sc
from scipy.optimize import OptimizeResult as _OdeResult  # (scipy's OdeResult's public base)

import fgrad.numpy as fnp
from ..core import errors
from ..numpy import batch_rules
from ..numpy.broadcasting import cast_like, shape_of
from ..numpy.statistics import trapezoid_areas
from ..numpy.wrapping import differentiable, refuse_traced, traced_version_of
from ..core.pytree import tree_flatten, tree_unflatten
from ..core.table import FUNCTIONS, Spec
from . import defining
from .defining import define
from ..core.tracer import Tracer, contains_tracer, map_tracers, staging, value_for_shape
from ..traces.taylor import jet as _jet
from ..jitting import staged
from ..transforms import jvp as _jvp, vjp as _vjp

def _impl(y0, t, *args, func, **opts):
    return _si.odeint(func, y0, t, args=args, **opts)


def _ivp_impl(y0, t, *args, func, method, **opts):
    """scipy.integrate.solve_ivp's solution at the times ``t`` (the first one the start), in
    odeint's layout: one row per time. Repeated times are solved once (solve_ivp asks for
    ``t_eval`` strictly ordered); a span of length 0 is ``y0`` throughout (solve_ivp gives no
    point there). scipy's steps do not depend on ``t_eval``, so times added at the start and
    the end leave the others' values as a call without them gives them."""
    t, y0 = _onp.asarray(t), _onp.asarray(y0)
    if t[0] == t[-1]:  # (in solve_ivp's dtype: complex stays complex, the rest is float)
        return _onp.tile(y0.astype(complex if y0.dtype.kind == "c" else float), (len(t), 1))
    new = _onp.concatenate([[True], t[1:] != t[:-1]])
    sol = _si.solve_ivp(lambda s, y: func(y, s, *args), (t[0], t[-1]), y0, method=method,
                        t_eval=t[new], **opts)
    if sol.status != 0:
        raise RuntimeError(f"fgrad.scipy.integrate.solve_ivp: scipy's solver stopped early "
                           f"({sol.message})")
    return sol.y.T[_onp.cumsum(new) - 1]


def _solver(opts):
    """The entry a rule solves its own ODEs with: the one it is a rule of (solve_ivp's calls
    carry the method), with the same options, so that its own rules apply again."""
    return _solve_ivp if "method" in opts else _odeint


def _forward_system(func, n, m):
    """The ODE of ``(y, s)``, ``s`` the sensitivity along the tangents (the last ``m`` of
    its extra arguments, after the ``m`` parameters)."""
    def system(z, t, *a):
        y, s = z[:n], z[n:]
        fy, ds = _jvp(lambda y, *p: func(y, t, *p), (y,) + a[:m], (s,) + a[m:])
        return fnp.concatenate([fnp.ravel(fy), fnp.ravel(ds)])
    return system


def _adjoint_system(func, n):
    """The ODE of ``(y, a, a_args)`` backwards in time: ``a' = -J_y^T a``, the parameters'
    cotangents ``-J_args^T a`` (flat, one after another)."""
    def system(z, t, *args):
        y, a = z[:n], z[n:2 * n]
        fy, pull = _vjp(lambda y, *p: func(y, t, *p), y, *args)
        cts = pull(fnp.reshape(a, shape_of(fy)))
        parts = [fnp.ravel(fy), -fnp.ravel(cts[0])]
        parts += [-fnp.ravel(c) for c in cts[1:]]
        return fnp.concatenate(parts)
    return system


def _f_at(func, ys, t, args):
    """``func`` at each output point, stacked like ``ys``."""
    return fnp.stack([fnp.reshape(func(ys[i], t[i], *args), (shape_of(ys)[1],))
                      for i in range(shape_of(ys)[0])])


def _jvp_rule(tangents, ans, y0, t, *args, func, **opts):
    ty0, tt, targs = tangents[0], tangents[1], tangents[2:]
    n, m = shape_of(ans)[1], len(args)
    s0 = fnp.zeros(n) if ty0 is None else fnp.reshape(ty0, (n,))
    if tt is not None:
        s0 = s0 - fnp.reshape(func(fnp.reshape(y0, (n,)), t[0], *args), (n,)) * tt[0]
    targs = [fnp.zeros_like(value_for_shape(a)) if ta is None else ta for a, ta in zip(args, targs)]
    z0 = fnp.concatenate([fnp.reshape(y0, (n,)), s0])
    z = _solver(opts)(z0, t, *args, *targs, func=staged(_forward_system(func, n, m)), **opts)
    out = z[:, n:]
    if tt is not None:
        out = out + _f_at(func, ans, t, args) * fnp.expand_dims(tt, 1)
    return out


def _vjp_rule(g, ans, y0, t, *args, func, **opts):
    n, steps = shape_of(ans)[1], shape_of(ans)[0]
    shapes = [shape_of(a) for a in args]
    sizes = [int(_onp.prod(s, dtype=int)) for s in shapes]
    system = staged(_adjoint_system(func, n))
    a, a_args = g[steps - 1], fnp.zeros(sum(sizes))
    t_bar = [None] * steps
    f_at = _f_at(func, ans, t, args)
    for i in range(steps - 1, 0, -1):
        t_bar[i] = fnp.sum(g[i] * f_at[i])
        z0 = fnp.concatenate([ans[i], a, a_args])
        z = _solver(opts)(z0, fnp.stack([t[i], t[i - 1]]), *args, func=system, **opts)[1]
        a, a_args = z[n:2 * n] + g[i - 1], z[2 * n:]
    t_bar[0] = -fnp.sum((a - g[0]) * f_at[0])
    cts = [cast_like(fnp.reshape(a, shape_of(y0)), y0), cast_like(fnp.stack(t_bar), t)]
    start = 0
    for arg, shape, size in zip(args, shapes, sizes):
        cts.append(cast_like(fnp.reshape(a_args[start:start + size], shape), arg))
        start += size
    return cts


def _jet_system(func, n, m, order):
    """The ODE of ``(z_0, ..., z_K)``, the solution's terms: ``z_0' = f`` and ``z_k'`` the
    k-th term of ``f`` along the terms' and the parameters' series (the ``m`` parameters'
    K terms each follow the parameters)."""
    def system(z, t, *a):
        zs = [z[k * n:(k + 1) * n] for k in range(order + 1)]
        ps = a[:m]
        p_terms = [list(a[m + j * order:m + (j + 1) * order]) for j in range(m)]
        y, terms = _jet(lambda y, *p: fnp.ravel(func(y, t, *p)), (zs[0],) + ps,
                        (zs[1:],) + tuple(p_terms))
        return fnp.concatenate([y] + terms)
    return system


def _taylor_rule(series, ans, y0, t, *args, func, **opts):
    order = len(next(s for s in series if s is not None))
    if series[1] is not None:
        return _moving_times(series, y0, t, args, func, opts)
    n, m = shape_of(ans)[1], len(args)

    def terms_of(x, s):
        return [fnp.zeros_like(value_for_shape(x)) if s is None else s[k] for k in range(order)]

    z0 = fnp.concatenate([fnp.ravel(y) for y in [y0] + terms_of(y0, series[0])])
    p_terms = [c for a, s in zip(args, series[2:]) for c in terms_of(a, s)]
    z = _solver(opts)(z0, t, *args, *p_terms, func=staged(_jet_system(func, n, m, order)),
                      **opts)
    return [z[:, (k + 1) * n:(k + 2) * n] for k in range(order)]


_UNIT = _onp.array([0.0, 1.0])


def _moving_times(series, y0, t, args, func, opts):
    """The terms when the times move: each interval solved on the fixed ``[0, 1]`` with
    ``f`` scaled by the interval's length, and the jet of that chain of solves."""
    def rescaled(y, u, *a):
        return func(y, a[-2] + u * a[-1], *a[:-2]) * a[-1]

    def chain(y0, t, *args):
        ys = [fnp.ravel(y0)]
        for i in range(shape_of(t)[0] - 1):
            ys.append(_solver(opts)(ys[-1], _UNIT, *args, t[i], t[i + 1] - t[i],
                                    func=rescaled, **opts)[1])
        return fnp.stack(ys)

    xs = (y0, t) + tuple(args)
    full = tuple([fnp.zeros_like(value_for_shape(x))] * len(series[1]) if s is None else list(s)
                 for x, s in zip(xs, series))
    return _jet(chain, xs, full)[1]


# Test problems for the generated tests (order 1 and 2 against finite differences):
# a damped oscillator with parameters (stiffness, damping), and a mildly stiff linear decay.
def _oscillator(y, t, k, c):
    return fnp.stack([y[1], -k * y[0] - c * y[1] + 0.1 * fnp.sin(t)])


def _times(dt):
    """Test draws as increasing times from 0."""
    return fnp.concatenate([fnp.zeros(1), fnp.cumsum(0.3 + dt * dt)])


_TIGHT = {"rtol": 1e-11, "atol": 1e-11}
_odeint = define(
    "scipy.integrate.odeint", _impl, spec=Spec(
        [(((2,), (3,), (), ()), dict(func=_oscillator, **_TIGHT))],
        domain=[(-1.0, 1.0), (-0.5, 0.5), (0.5, 2.0), (0.1, 0.5)],
        call=lambda f, y0, dt, k, c, **p: f(y0, _times(dt), k, c, **p),
        eps=1e-4, rtol=2e-4, atol=1e-6, dtypes=("float64", "float32")),
    # scipy integrates one system with a user's func of one state: one call per example
    batch=batch_rules.one_at_a_time, vjp_joint=_vjp_rule, jvp_joint=_jvp_rule,
    taylor=_taylor_rule)


# (LSODA through solve_ivp: its Fortran steps, driven from Python, take as few calls of
# func as odeint's; the rules are the same for every method. Two of the draw's times: each
# step costs a Python loop's turn here, and the generated tests' solves took 80 s with four)
_solve_ivp = define(
    "scipy.integrate.solve_ivp", _ivp_impl, spec=Spec(
        [(((2,), (1,), (), ()), dict(func=_oscillator, method="LSODA", **_TIGHT))],
        domain=_odeint.spec.domain, call=_odeint.spec.call, eps=1e-4, rtol=2e-4, atol=1e-6,
        dtypes=("float64", "float32")),
    batch=batch_rules.one_at_a_time, vjp_joint=_vjp_rule, jvp_joint=_jvp_rule,
    taylor=_taylor_rule)


# (scipy's odepack, handed a tracer for a tolerance, prints the conversion's error and raises
# its own; after a few such calls a process crashed in the garbage collector)
_SETTING = ("a solver's setting: how far the result is from the ODE's solution, not a "
            "quantity the solution depends on smoothly")


def odeint(func, y0, t, args=(), Dfun=None, col_deriv=0, full_output=0, ml=None, mu=None,
           rtol=None, atol=None, tcrit=None, h0=0.0, hmax=0.0, hmin=0.0, ixpr=0, mxstep=0,
           mxhnil=0, mxordn=12, mxords=5, printmessg=0, tfirst=False):
    """scipy.integrate.odeint, differentiable in ``y0``, ``t`` and ``args`` (forward
    sensitivities in forward mode, the adjoint method in reverse mode; see the module);
    ``args`` may hold tuples, lists and dicts of arrays of any shapes (a pytree).
    On traced values: ``rtol``, ``atol``, ``h0``, ``hmax``, ``hmin``, ``mxstep`` and
    ``tfirst`` are taken (plain: a traced setting is refused by name); ``full_output``,
    ``Dfun``, ``tcrit`` and the banded options are not (the derivative rules solve other
    ODEs than ``func``'s). Traced values that ``func`` closes over are taken as arguments too
    (``_closure_lifted``); one it reaches otherwise (a global, an object's attribute) is
    refused, as its dependence would be lost."""
    for name, value in (("rtol", rtol), ("atol", atol), ("h0", h0), ("hmax", hmax),
                        ("hmin", hmin), ("mxstep", mxstep)):
        refuse_traced("scipy.integrate.odeint", name, value, _SETTING)
    args = defining.as_args(args)
    user, args = _closure_lifted(func, args)
    func = user
    if tfirst:
        def func(y, t, *a):
            return user(t, y, *a)
    _refuse_closure("odeint", _at_start(func), y0, t, *args)
    if not contains_tracer((y0, t, args)):
        return _si.odeint(user, y0, t, args, Dfun, col_deriv, full_output, ml, mu, rtol, atol,
                          tcrit, h0, hmax, hmin, ixpr, mxstep, mxhnil, mxordn, mxords,
                          printmessg, tfirst)
    for name, value, default in (("Dfun", Dfun, None), ("full_output", full_output, 0),
                                 ("tcrit", tcrit, None), ("ml", ml, None), ("mu", mu, None)):
        if value is not default and value != default:
            raise NotImplementedError(f"fgrad.scipy.integrate.odeint: {name}= is not "
                                      "supported on traced values")
    opts = {k: v for k, v in (("rtol", rtol), ("atol", atol), ("h0", h0), ("hmax", hmax),
                              ("hmin", hmin), ("mxstep", mxstep)) if v is not None}
    on_leaves, leaves = _on_leaves(func, args)
    return _odeint(y0, t, *leaves, func=on_leaves, **opts)


def _refuse_closure(name, func, *at):
    """Raise ClosedOverTracerError where ``func`` reaches a traced value other than through
    its arguments (a global, an attribute: what ``_closure_lifted`` could not make one): the
    rules see only the primitive's operands, so that dependence would be lost. ``func`` is
    probed at ``at`` (the plain values under it, one example of a batch, as what they are
    for, not a use: no guard in a staged function, no read under vmap; and with no staging
    around it, so only a traced value that func reaches otherwise is traced. Through lists,
    as ``y0 = [x, 1.0]`` may hold tracers.)"""
    plain = map_tracers(at, value_for_shape)
    with staging(None):
        probe = func(*plain)
    if contains_tracer(probe):
        raise errors.closed_over(
            f"fgrad.scipy.integrate.{name}'s func", "a transform",
            "Pass the values it depends on through args=(...) instead.")


def _at_start(func):
    """``func(y, t, *args)`` probed at the start: the state flat, the first time."""
    return lambda y, t, *args: func(_onp.ravel(y), _onp.ravel(t)[0], *args)


def _closure_lifted(fn, args):
    """``(fn, args)`` with the traced values that ``fn`` closes over (cells of its closure
    holding arrays and numbers, or tuples, lists and dicts of them, one of them traced) made
    its last argument, so that the rules see them as operands, as passed through ``args``
    (JAX's odeint converts closures likewise). The function is called as a copy of ``fn``
    with those cells holding the values given. A traced value reached otherwise (a global,
    an attribute, a function that ``fn`` calls) is left for ``_refuse_closure``."""
    cells = fn.__closure__ if isinstance(fn, _types.FunctionType) else None
    lifted = []
    for i, cell in enumerate(cells or ()):
        try:
            value = cell.cell_contents
        except ValueError:  # (a cell not yet filled)
            continue
        if contains_tracer(value) and _operands(value):
            lifted.append(i)
    if not lifted:
        return fn, args
    values = [cells[i].cell_contents for i in lifted]
    # (what the copies are made of holds no traced value, not even ``fn`` with its cells: a
    # staged graph keeps this function as a parameter, and would keep the trace's tracers)
    kept = [None if i in lifted else cell for i, cell in enumerate(cells)]
    parts = (fn.__code__, fn.__globals__, fn.__name__, fn.__defaults__)
    keywords = fn.__kwdefaults__

    def with_values(*given):
        closure = list(kept)
        for i, value in zip(lifted, given[-1]):
            closure[i] = _types.CellType(value)
        copy = _types.FunctionType(*parts, tuple(closure))
        copy.__kwdefaults__ = keywords
        return copy(*given[:-1])

    return with_values, args + (values,)


def _operands(value):
    """Whether ``value`` is a pytree of arrays and numbers (traced or not), which can be a
    primitive's operands."""
    try:
        leaves = tree_flatten(value)[0]
    except TypeError:
        return False
    return all(isinstance(x, (Tracer, _onp.ndarray, _onp.generic, int, float, complex))
               for x in leaves)


def _on_leaves(func, args, leading=2):
    """``(func of the leaves of args, those leaves)``: args may nest arrays of different
    shapes (a network's list of (W, b) pairs, as autograd's ode_net example passes); the
    primitive takes their leaves, func the structure (after its ``leading`` arguments: the
    state and the time, or quad's point)."""
    leaves, tree = tree_flatten(args)

    def on_leaves(*z, _func=func, _tree=tree):
        return _func(*z[:leading], *tree_unflatten(_tree, list(z[leading:])))

    return on_leaves, leaves


odeint._fgrad_entry = _odeint


def _simpson_weights(n, x, dx):
    """Simpson's rule as weights: scipy's simpson is linear in ``y``."""
    return _si.simpson(_onp.eye(n), x=x, dx=dx, axis=-1)


def _simpson_transpose(g, ans, y, x=None, dx=1.0, axis=-1):
    w = _simpson_weights(shape_of(y)[axis], x, dx)
    return cast_like(fnp.moveaxis(fnp.expand_dims(g, -1) * w, -1, axis), y)


_simpson = define("scipy.integrate.simpson",
                  lambda y, x=None, dx=1.0, axis=-1: _si.simpson(y, x=x, dx=dx, axis=axis),
                  [_simpson_transpose], linear=True,
                  spec=Spec([(((5,),), {}), (((4,),), {"dx": 0.5}), (((2, 6),), {"axis": 0}),
                             (((3, 4),), {"x": (0.0, 0.5, 1.5, 1.7)})]),
                  batch=batch_rules.along(default=-1))


@traced_version_of(_si.simpson)
def simpson(y, x=None, *, dx=1.0, axis=-1):
    """scipy.integrate.simpson, differentiable in the samples ``y`` (the rule is linear in
    them); the sample points ``x`` are taken as constants."""
    refuse_traced("scipy.integrate.simpson", "x", x, "the sample points are taken as constants")
    x = None if x is None else _onp.asarray(x)
    return _simpson(y, x=x, dx=dx, axis=axis)


simpson._fgrad_entry, simpson._fgrad_not_in = _simpson, ("x",)


@traced_version_of(_si.trapezoid)
def trapezoid(y, x=None, dx=1.0, axis=-1):
    """scipy.integrate.trapezoid: fgrad.numpy.trapezoid's rules (in ``y`` and ``x``)."""
    return fnp.trapezoid(y, x=x, dx=dx, axis=axis)


trapezoid._fgrad_entry = FUNCTIONS["trapezoid"]  # (checked there, as np.trapezoid)


@differentiable(_si.cumulative_trapezoid, Spec(
    [(((4,),), {}), (((2, 3),), {"dx": 0.5, "axis": 0}), (((2, 3), (3,)), {"initial": 0}),
     (((3, 2), (3, 2)), {"axis": 0})]), name="scipy.integrate.cumulative_trapezoid")
def cumulative_trapezoid(y, x=None, dx=1.0, axis=-1, initial=None):
    """Differentiable in ``y``, the sample points ``x`` and ``dx``, as ``trapezoid``."""
    # (scipy's checks of the shapes and of ``initial``, on placeholders of the shapes)
    _si.cumulative_trapezoid(_onp.zeros(shape_of(y)),
                             None if x is None else _onp.zeros(shape_of(x)), axis=axis,
                             initial=initial)
    out = fnp.cumsum(trapezoid_areas(y, x, dx, axis), axis=axis)
    if initial is None:
        return out
    start = list(shape_of(out))
    start[axis] = 1
    return fnp.concatenate([fnp.zeros(start, fnp.result_type(out)), out], axis=axis)


# the options solve_ivp takes on traced values (the rest change what the solver returns, or
# give func's Jacobian, which the rules' other ODEs do not have)
_IVP_OPTIONS = ("rtol", "atol", "first_step", "max_step", "min_step")


def solve_ivp(fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
              vectorized=False, args=None, **options):
    """scipy.integrate.solve_ivp, differentiable in ``y0``, ``args``, ``t_eval`` and the
    start ``t_span[0]``, with any of scipy's methods: the rules are odeint's (forward
    sensitivities, the adjoint method, the jet's ODE), each ODE of theirs solved by
    solve_ivp with the user's method and options. The values are scipy's, bit for bit.

    On traced values ``t_eval`` is needed (without it the solver picks the times by the
    values), ``rtol``, ``atol``, ``first_step``, ``max_step`` and ``min_step`` are taken
    (plain: a traced one is refused by name), and ``dense_output``, ``events``,
    ``vectorized`` and a Jacobian are not. The result has scipy's fields ``t``, ``y``,
    ``status``, ``message`` and ``success`` (``sol``, ``t_events`` and ``y_events`` None);
    the solver's counts (``nfev``) are not kept.
    Traced values that ``fun`` closes over are taken as arguments too; one it reaches
    otherwise (a global, an object's attribute) is refused (pass it through ``args``).

    >>> import fgrad, fgrad.numpy as np
    >>> from fgrad.scipy.integrate import solve_ivp
    >>> def end(k):   # y' = -k y, y(0) = 1: y(2) = exp(-2 k), dy(2)/dk = -2 exp(-2 k)
    ...     sol = solve_ivp(lambda t, y, k: -k * y, (0.0, 2.0), np.ones(1), t_eval=[2.0],
    ...                     args=(k,), rtol=1e-10, atol=1e-12)
    ...     return sol.y[0, -1]
    >>> bool(np.isclose(fgrad.grad(end)(0.5), -2 * np.exp(-1.0)))
    True
    """
    for name, value in options.items():
        refuse_traced("scipy.integrate.solve_ivp", name, value, _SETTING)
    extra = () if args is None else defining.as_args(args)
    user, extra = _closure_lifted(fun, extra)

    def func(y, t, *a):
        return user(t, y, *a)

    _refuse_closure("solve_ivp", _at_start(func), y0, t_span, *extra)
    if not contains_tracer((t_span, y0, t_eval, extra)):
        return _si.solve_ivp(fun, t_span, y0, method, t_eval, dense_output, events,
                             vectorized, args, **options)
    if t_eval is None:
        raise NotImplementedError(
            "fgrad.scipy.integrate.solve_ivp: on traced values give t_eval=, the times the "
            "solution is wanted at (t_eval=[t_end] for the end alone): without it scipy's "
            "solver picks them by the values")
    taken = [k for k, v in (("dense_output", dense_output), ("events", events),
                            ("vectorized", vectorized)) if v]
    taken += sorted(k for k in options if k not in _IVP_OPTIONS)
    if taken:
        raise NotImplementedError(f"fgrad.scipy.integrate.solve_ivp: {taken[0]}= is not "
                                  "supported on traced values")
    if not isinstance(method, str):
        raise NotImplementedError("fgrad.scipy.integrate.solve_ivp: on traced values name "
                                  "the method (method='RK45'), not a solver class")
    start, stop = (value_for_shape(t) for t in t_span)
    points = _onp.ravel(map_tracers(t_eval, value_for_shape))
    if _onp.any((points - start) * (points - stop) > 0):  # (scipy's own check and message)
        raise ValueError("Values in `t_eval` are not within `t_span`.")
    # the solve runs from the start to the end of t_span, as scipy's does (its last step
    # stops there), with the times wanted in between; ``y`` is laid out as scipy's, so that
    # a sum over it adds in scipy's order
    times = fnp.concatenate([fnp.reshape(t_span[0], (1,)), fnp.ravel(t_eval),
                             fnp.reshape(t_span[1], (1,))])
    if value_for_shape(times).dtype.kind != "f":
        times = times.astype(float)
    on_leaves, leaves = _on_leaves(func, extra)
    ys = _solve_ivp(y0, times, *leaves, func=on_leaves, method=method, **options)
    y = fnp.reshape(fnp.ravel(fnp.transpose(ys[1:-1])), (shape_of(ys)[1], -1))  # (C order:
    # ravel copies; a traced ascontiguousarray is no node, as traces keep no layout)
    return _OdeResult(t=t_eval if contains_tracer(t_eval) else _onp.asarray(t_eval, float),
                      y=y, sol=None, t_events=None, y_events=None,
                      status=0, success=True, message="The solver successfully reached the "
                      "end of the integration interval.")


solve_ivp._fgrad_entry = _solve_ivp


def _quad_impl(a, b, *args, func, n, **opts):
    """``[the integral of func(t, *args) over [a, b], scipy's estimate of its error]``, the
    integral's ``n`` entries first: scipy's ``quad`` for one (the user's integrand), its
    ``quad_vec`` for more (a rule's: one argument's cotangent)."""
    a, b = float(a), float(b)
    if n == 1:
        y, err = _si.quad(lambda t: _onp.ravel(func(t, *args)).item(), a, b, **opts)
        return _onp.array([y, err])
    opts.pop("limit", None)  # (quad_vec's limit counts something else)
    y, err = _si.quad_vec(lambda t: _onp.ravel(func(t, *args)), a, b, **opts)
    return _onp.append(y, err)


def _tangent_integrand(func, m):
    """The integrand of the integral's tangent: ``func``'s JVP in its ``m`` arguments at
    ``t``, the tangents the next ``m`` operands."""
    def integrand(t, *z):
        return fnp.ravel(_jvp(lambda *p: func(t, *p), z[:m], z[m:])[1])
    return integrand


def _cotangent_integrand(func, k, m):
    """The integrand of argument ``k``'s cotangent: ``func``'s VJP in it at ``t`` of the
    output's cotangent, the operand after the ``m`` arguments."""
    def integrand(t, *z):
        args, g = z[:m], z[m]

        def in_k(x):
            return func(t, *args[:k], x, *args[k + 1:])
        # (in float64 at least: a float32 argument's cotangent, rounded at each point, would
        # keep quad from its tolerances; the integral is rounded to its dtype once, after)
        x = args[k]
        x = fnp.astype(x, _onp.result_type(value_for_shape(x), _onp.float64))
        out, pull = _vjp(in_k, x)
        return fnp.ravel(pull(fnp.reshape(g, shape_of(out)))[0])
    return integrand


def _quad_jvp(tangents, ans, a, b, *args, func, n, **opts):
    ta, tb, targs = tangents[0], tangents[1], tangents[2:]
    out = fnp.zeros(n)
    if any(t is not None for t in targs):
        targs = [fnp.zeros_like(value_for_shape(x)) if t is None else t
                 for x, t in zip(args, targs)]
        out = _quad(a, b, *args, *targs, func=_tangent_integrand(func, len(args)), n=n,
                    **opts)[:n]
    if tb is not None:  # (the limits: the integrand there)
        out = out + fnp.ravel(func(b, *args)) * tb
    if ta is not None:
        out = out - fnp.ravel(func(a, *args)) * ta
    return fnp.concatenate([out, fnp.zeros(1)])  # (the error estimate: no derivative)


def _quad_vjp(i, g, ans, a, b, *args, func, n, **opts):
    g = g[:n]
    if i < 2:  # a limit
        limit = (a, b)[i]
        d = fnp.sum(g * fnp.ravel(func(limit, *args)))
        return cast_like(d if i == 1 else -d, limit)
    x = args[i - 2]
    size = int(_onp.prod(shape_of(x), dtype=int))
    flat = _quad(a, b, *args, g, func=_cotangent_integrand(func, i - 2, len(args)), n=size,
                 **opts)[:size]
    return cast_like(fnp.reshape(flat, shape_of(x)), x)


def _jet_integrand(func, m, order):
    """The integrand of the integral's terms: ``func``'s ``order`` terms along its ``m``
    arguments' series (each argument's terms the operands after the arguments, in turn)."""
    def integrand(t, *z):
        series = tuple(list(z[m + j * order:m + (j + 1) * order]) for j in range(m))
        return fnp.concatenate(_jet(lambda *p: fnp.ravel(func(t, *p)), z[:m], series)[1])
    return integrand


def _on_unit_interval(func):
    """``func(t, *args)``'s integral over ``[a, b]`` as one over ``[0, 1]``, ``t = a + (b -
    a) u``: the limits are its last two arguments."""
    def integrand(u, *z):
        a, b = z[-2], z[-1]
        return func(a + (b - a) * u, *z[:-2]) * (b - a)
    return integrand


def _quad_taylor(series, ans, a, b, *args, func, n, **opts):
    """The integral's terms: the integral of the integrand's terms along the path (one vector
    integral); limits that move are taken to fixed ones, ``[0, 1]``, the limits becoming
    the integrand's arguments."""
    order = len(next(s for s in series if s is not None))
    if series[0] is None and series[1] is None:
        series = series[2:]
    else:
        func, args, series = _on_unit_interval(func), args + (a, b), series[2:] + series[:2]
        a, b = 0.0, 1.0
        opts.pop("points", None)  # (they lie elsewhere on [0, 1]: an accuracy hint only)
    terms = [c for x, s in zip(args, series) for c in (
        [fnp.zeros_like(value_for_shape(x))] * order if s is None else s)]
    out = _quad(a, b, *args, *terms, func=_jet_integrand(func, len(args), order),
                n=n * order, **opts)
    return [fnp.concatenate([out[k * n:(k + 1) * n], fnp.zeros(1)]) for k in range(order)]


def _bump(t, k):  # (in float64 whatever k's dtype: a float32 integrand would never reach the
    # tolerances the draws ask for, and quad would subdivide to its limit, warning)
    return fnp.exp(-fnp.astype(k, _onp.float64) * t * t) * fnp.cos(t)


_quad = define(
    "scipy.integrate.quad", _quad_impl, spec=Spec(
        [(((), (), ()), dict(func=_bump, n=1, epsabs=1e-13, epsrel=1e-13))],
        domain=[(-1.0, -0.2), (0.3, 1.5), (0.5, 2.0)],
        eps=1e-4, rtol=2e-4, atol=1e-6, dtypes=("float64", "float32"), slow=True),
    # scipy integrates a user's func of one point: one call per example
    batch=batch_rules.one_at_a_time, vjp_by_argnum=_quad_vjp, jvp_joint=_quad_jvp,
    taylor=_quad_taylor)


def quad(func, a, b, args=(), full_output=0, epsabs=1.49e-08, epsrel=1.49e-08, limit=50,
         points=None, weight=None, wvar=None, wopts=None, maxp1=50, limlst=50,
         complex_func=False):
    """scipy.integrate.quad, differentiable in the limits ``a``, ``b`` and ``args`` (and in
    traced values ``func`` closes over): the value and error estimate are scipy's; the
    derivative in a limit is ``func`` there, in ``args`` the integral of ``func``'s derivative
    (Leibniz's rule, integrated by scipy's ``quad``/``quad_vec`` to the same tolerances, so
    as accurate as the integral itself). ``func(t, *args)`` must be written with
    ``fgrad.numpy`` and return a real number. On traced values ``epsabs``, ``epsrel``,
    ``limit`` and ``points`` are taken (plain: a traced one is refused by name); a weight
    function, ``full_output`` and ``complex_func`` are not. The error estimate has no
    derivative.

    >>> import fgrad, fgrad.numpy as np
    >>> from fgrad.scipy.integrate import quad
    >>> def area(k):  # the integral of exp(-k t) over [0, 1]: (1 - exp(-k)) / k
    ...     return quad(lambda t: np.exp(-k * t), 0.0, 1.0)[0]
    >>> k = 0.5
    >>> bool(np.isclose(fgrad.grad(area)(k), (np.exp(-k) * (1 + k) - 1) / k ** 2))
    True
    """
    for name, value in (("epsabs", epsabs), ("epsrel", epsrel), ("limit", limit),
                        ("points", points)):
        refuse_traced("scipy.integrate.quad", name, value, "a setting: how close the result "
                      "is to the integral, not a quantity the integral depends on smoothly")
    args = defining.as_args(args)
    user, lifted = _closure_lifted(func, args)
    # (probed at a finite limit: an integrand at -inf may warn, or be nan)
    finite = [x for x in (a, b) if _onp.isfinite(value_for_shape(x))]
    _refuse_closure("quad", user, finite[0] if finite else 0.0, *lifted)
    if not contains_tracer((a, b, lifted)):
        return _si.quad(func, a, b, args, full_output, epsabs, epsrel, limit, points, weight,
                        wvar, wopts, maxp1, limlst, complex_func)
    taken = [k for k, v in (("full_output", full_output), ("weight", weight),
                            ("complex_func", complex_func)) if v]
    if taken:
        raise NotImplementedError(f"fgrad.scipy.integrate.quad: {taken[0]}= is not supported "
                                  "on traced values")
    opts = {"epsabs": epsabs, "epsrel": epsrel, "limit": limit}
    if points is not None:
        opts["points"] = tuple(_onp.ravel(points).tolist())
    on_leaves, leaves = _on_leaves(user, lifted, leading=1)
    out = _quad(a, b, *leaves, func=on_leaves, n=1, **opts)
    return out[0], out[1]


quad._fgrad_entry = _quad


def fixed_quad(func, a, b, args=(), n=5):
    """scipy.integrate.fixed_quad, Gauss-Legendre quadrature of order ``n``: the same sum of
    ``func`` (vectorised, written with ``fgrad.numpy``) at scipy's nodes, so differentiable in
    ``a``, ``b``, ``args`` and whatever ``func`` closes over, as ``func`` is; returns ``(val,
    None)`` as scipy.

    >>> import fgrad, fgrad.numpy as np
    >>> f = lambda k: fixed_quad(lambda t: np.exp(k * t), 0.0, 1.0, n=8)[0]  # (e^k - 1) / k
    >>> round(float(fgrad.grad(f)(1.0)), 10)  # (k e^k - e^k + 1) / k^2 at k = 1
    1.0
    """
    refuse_traced("scipy.integrate.fixed_quad", "n", n, "the order of the quadrature")
    if not contains_tracer((a, b)) and (_onp.isinf(a) or _onp.isinf(b)):
        return _si.fixed_quad(func, a, b, args, n)  # (scipy's error)
    x, w = _legendre(n)
    y = (b - a) * (_onp.real(x) + 1) / 2.0 + a
    return (b - a) / 2.0 * fnp.sum(w * func(y, *args), axis=-1), None


# (scipy's own nodes and weights, kept by the order as fixed_quad keeps them)
_legendre = functools.lru_cache(maxsize=32)(_sc.roots_legendre)


@functools.lru_cache(maxsize=8)
def _romb_weights(n):
    """romb's weights of the samples at unit spacing: its result is linear in them (and in
    ``dx``), so scipy's Romberg table of the unit vectors."""
    return _si.romb(_onp.eye(n), dx=1.0, axis=0)


@differentiable(_si.romb, Spec([(((5,),), {}), (((3, 9),), {"dx": 0.25}),
                                (((5, 2),), {"axis": 0, "dx": 0.5})]),
                name="scipy.integrate.romb", numpy_values=True)
def romb(y, dx=1.0, axis=-1, show=False):
    """scipy.integrate.romb (Romberg's rule on ``2**k + 1`` equally spaced samples),
    differentiable in the samples and ``dx``: linear in each, its weights scipy's Romberg
    table of the unit vectors; scipy's values."""
    y = fnp.moveaxis(fnp.asarray(y), axis, -1)
    return fnp.matmul(y, _romb_weights(shape_of(y)[-1])) * dx


def dblquad(func, a, b, gfun, hfun, args=(), epsabs=1.49e-08, epsrel=1.49e-08):
    """scipy.integrate.dblquad, the integral of ``func(y, x, *args)`` over ``y`` from
    ``gfun(x)`` to ``hfun(x)`` (functions of ``x`` or numbers) and ``x`` from ``a`` to ``b``:
    ``quad`` of ``quad``, as scipy nests them, so differentiable as ``quad`` is, in the limits
    (numbers, or values the limit functions close over), ``args`` and traced values ``func``
    closes over. The value and error estimate are the nested quads'.

    >>> import fgrad, fgrad.numpy as np
    >>> def mass(k):  # the integral of k x y over the triangle 0 <= y <= x <= 1: k / 8
    ...     return dblquad(lambda y, x: k * x * y, 0.0, 1.0, 0.0, lambda x: x)[0]
    >>> round(float(mass(2.0)), 12), round(float(fgrad.grad(mass)(2.0)), 12)
    (0.25, 0.125)
    """
    args = defining.as_args(args)
    func, fargs = _closure_lifted(func, args)
    # each limit: a function of x with the traced values it closes over as its last
    # argument, or a number as an argument of its own
    limits = [_closure_lifted(g, ()) if callable(g) else (None, (g,)) for g in (gfun, hfun)]
    if not contains_tracer((a, b, fargs, limits[0][1], limits[1][1])):
        return _si.dblquad(func, a, b, gfun, hfun, args, epsabs, epsrel)
    counts = [len(fargs), len(limits[0][1])]

    def limit(k, x, operands):
        fn = limits[k][0]
        return operands[0] if fn is None else fn(x, *operands)

    def inner(x, *operands):
        f_ops, g_ops = operands[:counts[0]], operands[counts[0]:counts[0] + counts[1]]
        h_ops = operands[counts[0] + counts[1]:]
        return quad(func, limit(0, x, g_ops), limit(1, x, h_ops), args=(x,) + f_ops,
                    epsabs=epsabs, epsrel=epsrel)[0]

    return quad(inner, a, b, args=fargs + limits[0][1] + limits[1][1], epsabs=epsabs,
                epsrel=epsrel)


# scipy.integrate's other functions (``tplquad``, ``nquad``, ...): scipy's own on plain
# values, refused by name on traced ones
__getattr__ = defining.plain_only_fallback(
    __name__, _si, lambda name: "; fgrad.scipy.integrate has odeint, solve_ivp, quad, "
    "dblquad, fixed_quad, simpson, romb, trapezoid and cumulative_trapezoid")
