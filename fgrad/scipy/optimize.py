"""fgrad.scipy.optimize: scipy's minimize and root with fgrad's derivatives, and solutions
differentiable in the problem's parameters (theirs, and those of ``least_squares``,
``curve_fit``, ``minimize_scalar``, ``root_scalar``, ``newton``, ``fixed_point`` and the
bracketing root finders ``brentq``, ``brenth``, ``ridder``, ``bisect`` and ``toms748``).

* ``minimize(fun, x0, ...)`` takes a pytree ``x0`` (a dict of arrays, ...), gives scipy
  ``jac`` from ``value_and_grad``, and ``hess`` or ``hessp`` from fgrad where the method uses
  them; the result is scipy's ``OptimizeResult`` with ``x`` (and ``jac``) as pytrees.
* ``root(fun, x0, ...)`` gives scipy the Jacobian from ``jacfwd``.
* When ``args`` hold traced values, the solution is differentiable in them by the implicit
  function theorem: at a solution of ``F(x, *args) = 0`` (``F = fun`` for ``root``, the
  gradient of ``fun`` for ``minimize``), ``dx = -J_x^-1 J_args dargs``. The rule is written
  with fgrad (``jacfwd``, ``jvp``, ``vjp``, ``linalg.solve``), so it nests: second
  derivatives of a solution work too. It needs ``J_x`` invertible at the solution (a simple
  root, a strict local minimum) and the solution to be accurate (set ``tol``). Traced values
  the function closes over (``minimize(lambda x: loss(x, theta), x0)``) count as ``args``:
  they are moved there (``_closure_lifted``).
* Under ``jit`` the solver runs while the function is traced, on the arguments' values, which
  the staged graph guards (other values trace it again; after a few, it runs eagerly); the
  graph holds the solution, not the solver's steps. Under ``vmap`` (batched ``args``, a
  batched closure or a batched start: ``x0``, a bracket) scipy's solver runs once per example,
  each from its own start, and the result holds the batched
  ``x`` and ``fun`` only (``success``, ``nit``, ``message`` are per example, no batch).
* ``fun`` (the minimum, or the residual at a root) is differentiable in traced ``args`` too:
  the function's value at the differentiable solution (for a minimum, the envelope theorem's
  derivative: that of ``fun`` in its ``args`` at the solution held fixed).
"""
import functools
import inspect
import types as _types

import numpy as _onp
import scipy.optimize as _so

import fgrad.numpy as fnp
from ..numpy.broadcasting import cast_like, shape_of
from ..numpy.wrapping import with_numpy_values
from ..core.pytree import tree_flatten, tree_unflatten
from ..numpy import batch_rules
from ..core.table import Spec
from . import defining
from .defining import define
from ..core.tracer import (concrete, contains_tracer, read_values, staging,
                           value_for_shape)
from ..transforms import grad, hessian, jacfwd, jvp, value_and_grad, vjp

# the methods that use a Hessian, and whether they take the product form
_HESSP = {"newton-cg", "trust-ncg", "trust-krylov"}
_HESS = {"dogleg", "trust-exact", "trust-constr"}


def ravel_pytree(tree):
    """``(flat, unravel)``: the leaves of ``tree`` as one float vector, and the function
    that rebuilds the tree from such a vector (traced or not).

    >>> import numpy
    >>> flat, unravel = ravel_pytree({"a": numpy.ones(2), "b": 3.0})
    >>> flat.tolist(), unravel(flat)["a"].tolist()
    ([1.0, 1.0, 3.0], [1.0, 1.0])
    """
    leaves, treedef = tree_flatten(tree)
    shapes = [_onp.shape(value_for_shape(x)) for x in leaves]
    sizes = [int(_onp.prod(s, dtype=int)) for s in shapes]
    lib = fnp if contains_tracer(leaves) else _onp  # (a traced start: batched under vmap)
    flat = lib.concatenate([lib.ravel(lib.asarray(x, float)) for x in leaves]) \
        if leaves else _onp.zeros(0)

    def unravel(v):
        out, start = [], 0
        for shape, size in zip(shapes, sizes):
            out.append(fnp.reshape(v[start:start + size], shape))
            start += size
        return tree_unflatten(treedef, out)

    return flat, unravel


# --- the implicit solution: one primitive for root and minimize ---------------------------

def _implicit_impl(*theta, F, solve):
    return solve(*theta)


def _jac_x(F, x, theta):
    return jacfwd(lambda x: F(x, *theta))(x)


def _implicit_jvp(tangents, ans, *theta, F, solve):
    tangents = [fnp.zeros_like(value_for_shape(a)) if t is None else t
                for a, t in zip(theta, tangents)]
    _, rhs = jvp(lambda *th: F(ans, *th), tuple(theta), tuple(tangents))
    return -fnp.linalg.solve(_jac_x(F, ans, theta), rhs)


def _implicit_vjp_joint(g, ans, *theta, F, solve):
    w = fnp.linalg.solve(fnp.transpose(_jac_x(F, ans, theta)), g)
    _, pull = vjp(lambda *th: F(ans, *th), *theta)
    return [cast_like(-c, a) for c, a in zip(pull(w), theta)]


def _cubic(x, a, b):
    """A test problem: x^3 + a x - b = 0 has one real root for a > 0."""
    return x * x * x + a * x - b


def _solve_cubic(a, b):
    return _so.root(_cubic, _onp.zeros(_onp.shape(b)), args=(a, b), tol=1e-14).x


implicit_solution = define(
    "scipy.optimize.implicit_solution", _implicit_impl,
    spec=Spec([(((3,), (3,)), dict(F=_cubic, solve=_solve_cubic)),
               (((), (3,)), dict(F=_cubic, solve=_solve_cubic))],
              domain=[(0.5, 2.0), (-2.0, 2.0)], dtypes=("float64", "float32"),
              rtol=1e-4, eps=1e-5),
    doc="""The solution ``x = solve(*theta)`` of ``F(x, *theta) = 0``, differentiable in
    ``theta`` by the implicit function theorem (``root`` and ``minimize`` use it).""",
    # the user's solver takes one theta: one call per example
    batch=batch_rules.one_at_a_time, vjp_joint=_implicit_vjp_joint, jvp_joint=_implicit_jvp)


# --- minimize and root -----------------------------------------------------------------

def _per_example(args):
    """Whether ``vmap`` holds a batch in place of some argument's values: scipy's solver
    then runs once per example (``implicit_solution``'s batching), and the result holds
    ``x`` and ``fun`` only, batched (a message, a count of steps, per example, are no array
    a batch holds)."""
    return not all(concrete(a) for a in tree_flatten(args)[0])


def _floating(v):
    """``v`` (a traced value) as a floating array: an integer one as float64."""
    v = fnp.asarray(v)
    return v if _onp.result_type(value_for_shape(v)).kind in "fc" else fnp.astype(v, float)


def _solution(args, F, solve, value, start=()):
    """scipy's result ``solve(args, start)``, its ``x`` differentiable in traced ``args`` as
    the solution of ``F(x, *args) = 0``; ``start``: the solver's starting values (``x0``, a
    bracket), which the solution does not depend on. Under ``vmap`` (``_per_example``) the
    solver runs once per example, inside ``implicit_solution``'s batching (the starting
    values among its operands, each example starting from its own, unseen by ``F``), and the
    result holds ``x`` and ``fun = value(x)`` only."""
    n, start = len(args), tuple(start)
    if _per_example(args + start):
        # (the traced starting values only, made floating: the rules differentiate in every
        # operand, though F ignores these)
        moving = [i for i, v in enumerate(start) if contains_tracer(v)]

        def solve_one(*a):
            values = list(start)
            for i, v in zip(moving, a[n:]):
                values[i] = v
            return solve(a[:n], tuple(values)).x

        x = implicit_solution(*args, *[_floating(start[i]) for i in moving],
                              F=lambda x, *a: F(x, *a[:n]), solve=solve_one)
        return _so.OptimizeResult(x=x, fun=value(x))
    res = solve(args, start)
    if contains_tracer(args):  # (a traced start alone: the solution does not depend on it)
        x_star = res.x
        res.x = implicit_solution(*args, F=F, solve=lambda *a: x_star)
        # (scipy's number has no derivative: a loss's minimum fell flat under grad, silently.
        # The value again at the traced solution has the envelope theorem's, dfun = dF/dargs)
        res.fun = value(res.x)
    return res


def _closure_lifted(fun, args):
    """``(fun, args)`` with the traced leaves of ``fun``'s closure cells (``lambda u:
    loss(u, theta)``, ``theta`` traced) moved to the end of ``args``: the solver then runs
    on their plain values, and the solution is differentiated in them as in ``args``. The
    function given back is ``fun``'s code with cells holding what the last arguments give.
    (A closure reached through another function, ``fun`` calling one that holds ``theta``,
    is not seen: its traced result reaches scipy, which refuses it.)"""
    cells = getattr(fun, "__closure__", None) or ()
    lifted, where = [], []  # (the traced leaves; per cell holding some: its index, its tree)
    for i, cell in enumerate(cells):
        try:
            leaves, tree = tree_flatten(cell.cell_contents)
        except ValueError:  # (a cell not filled yet)
            continue
        if contains_tracer(leaves):
            where.append((i, tree, len(leaves)))
            lifted.extend(leaves)
    if not lifted:
        return fun, args
    n = len(args)

    def lifted_fun(x, *a, **kw):
        new, at = list(cells), n
        for i, tree, m in where:
            new[i] = _types.CellType(tree_unflatten(tree, list(a[at:at + m])))
            at += m
        rebuilt = _types.FunctionType(fun.__code__, fun.__globals__, fun.__name__,
                                      fun.__defaults__, tuple(new))
        rebuilt.__kwdefaults__ = fun.__kwdefaults__
        return rebuilt(x, *a[:n], **kw)

    return lifted_fun, args + tuple(lifted)


def _number(v):
    """Whether ``v`` (traced or not) is a number, or a 0-d array."""
    v = value_for_shape(v)
    return isinstance(v, (int, float, _onp.number, _onp.ndarray)) and _onp.ndim(v) == 0


def minimize(fun, x0, args=(), method=None, jac=None, hess=None, hessp=None, bounds=None,
             constraints=(), tol=None, callback=None, options=None):
    """scipy.optimize.minimize on a pytree ``x0``, with ``jac`` from ``value_and_grad`` (unless
    given) and ``hess``/``hessp`` from fgrad for the methods that use them (Newton-CG,
    trust-ncg, trust-krylov take ``hessp``; dogleg, trust-exact, trust-constr ``hess``).
    Returns scipy's ``OptimizeResult`` with ``x`` and ``jac`` shaped like ``x0``. A list or
    tuple of numbers is an array, as scipy takes it. Traced ``args`` make ``x``
    differentiable in them (the module says how).

    >>> import fgrad.numpy as np
    >>> res = minimize(lambda p: np.sum((p["w"] - 3.0) ** 2) + (p["b"] + 1.0) ** 2,
    ...                {"w": np.zeros(2), "b": 0.0}, method="BFGS")
    >>> np.round(res.x["w"], 6).tolist(), round(float(res.x["b"]), 6)
    ([3.0, 3.0], -1.0)
    """
    fun, args = _closure_lifted(fun, defining.as_args(args))
    if type(x0) in (list, tuple) and all(_number(v) for v in x0):
        x0 = fnp.asarray(x0, float)  # (numbers in a list: an array, as scipy takes them)
    flat0, unravel = ravel_pytree(x0)

    def f(v, *a):
        return fun(unravel(v), *a)

    m = (method or "").lower()
    kw = dict(method=method, bounds=bounds, constraints=constraints, tol=tol, options=options)
    if jac is None or jac is True:
        kw["fun"], kw["jac"] = value_and_grad(f), True
    else:
        kw["fun"] = f
        kw["jac"] = jac if not callable(jac) else \
            (lambda v, *a: ravel_pytree(jac(unravel(v), *a))[0])
    if hess is None and hessp is None:
        if m in _HESSP:
            kw["hessp"] = lambda v, p, *a: jvp(lambda u: grad(f)(u, *a), (v,), (p,))[1]
        elif m in _HESS:
            kw["hess"] = hessian(f)
    else:
        kw["hess"], kw["hessp"] = hess, hessp
    if callback is not None:
        kw["callback"] = lambda xk, *rest: callback(unravel(xk), *rest)

    def solve(a, start):
        with staging(None):  # (plain values: a staged function keeps the solution, not the
            return _so.minimize(x0=read_values(start[0]), args=read_values(a), **kw)  # steps)

    res = _solution(args, lambda v, *a: grad(f)(v, *a), solve, lambda x: fun(unravel(x), *args),
                    (flat0,))
    res.x = unravel(res.x)
    if "jac" in res and _onp.size(res.jac) == _onp.size(flat0):
        res.jac = unravel(_onp.asarray(res.jac))
    return res


def root(fun, x0, args=(), method="hybr", jac=None, tol=None, callback=None, options=None):
    """scipy.optimize.root with the Jacobian from ``jacfwd`` (unless ``jac`` is given; the
    methods that use none ignore it). Traced ``args`` make ``res.x`` differentiable in them
    by the implicit function theorem.

    >>> import fgrad, fgrad.numpy as np
    >>> def x_of(a):  # the root of x^3 + x - a, as a function of a
    ...     return root(lambda x, a: x ** 3 + x - a, np.zeros(1), args=(a,), tol=1e-12).x[0]
    >>> round(float(x_of(2.0)), 9), round(float(fgrad.grad(x_of)(2.0)), 9)  # 1 / (3 x^2 + 1)
    (1.0, 0.25)
    """
    fun, args = _closure_lifted(fun, defining.as_args(args))
    uses_jacobian = method in ("hybr", "lm")
    if jac is None and uses_jacobian:
        jac = jacfwd(lambda x, *a: fun(x, *a))

    def solve(a, start):
        with staging(None):  # (as minimize's)
            return _so.root(fun, _onp.asarray(read_values(start[0]), float),
                            args=read_values(a), method=method, jac=jac, tol=tol,
                            callback=callback, options=options)

    return _solution(args, fun, solve, lambda x: fun(x, *args), (x0,))


# --- scalar problems and least squares: the same implicit solution ------------------------

def _on_vectors(F, shape):
    """A problem's ``F(x, *args)`` (``x`` a scalar, or an array of ``shape`` solved
    elementwise) on a vector ``x`` (``implicit_solution`` solves with its Jacobian as a
    matrix)."""
    return lambda v, *a: fnp.reshape(F(fnp.reshape(v, shape), *a), (-1,))


def _scalar_solution(f, args, solve, equation=None, shape=(), start=()):
    """``(x, lifted f, args)``: the scalar ``x = solve(f, plain args, plain start)`` of
    ``F(x, *args) = 0`` (``F = equation(f)``; ``f`` itself, a root, by default), or an array
    of ``shape`` solved elementwise, differentiable in traced ``args`` and in traced values
    ``f`` closes over (lifted into ``args``); ``start``, the starting values, as
    ``_solution``'s. ``x`` is ``None`` where nothing is traced but the starting values
    (plain, or readable: the caller runs scipy on their values)."""
    f, args = _closure_lifted(f, defining.as_args(args))
    if not contains_tracer(args) and not _per_example(start):
        return None, f, args

    def solve_plain(a, start):
        with staging(None):  # (as minimize's)
            return _so.OptimizeResult(x=_onp.ravel(solve(f, read_values(a),
                                                         read_values(start))))

    F = f if equation is None else equation(f)
    res = _solution(args, _on_vectors(F, shape), solve_plain, lambda x: None, start)
    return fnp.reshape(res.x, shape), f, args


def _bracketing(name):
    """scipy's ``name`` (``brentq``, ``bisect``, ...): a root in a bracket, differentiable in
    ``args`` and in the values ``f`` closes over (the bracket's ends only bound the search)."""
    scipy_fn = getattr(_so, name)

    @functools.wraps(scipy_fn)
    def bracketing(f, a, b, args=(), *rest, full_output=False, **kw):
        outs = []

        def solve(g, plain, ends):
            out = scipy_fn(g, *ends, plain, *rest, full_output=full_output, **kw)
            outs.append(out)
            return out[0] if full_output else out

        x, f, args = _scalar_solution(f, args, solve, start=(a, b))
        if x is None:
            return scipy_fn(f, read_values(a), read_values(b), args, *rest,
                            full_output=full_output, **kw)
        if full_output:  # (scipy's report of the search, its root the traced one)
            outs[-1][1].root = x
            return x, outs[-1][1]
        return x

    bracketing.__doc__ = (f"scipy.optimize.{name}: the root differentiable in ``args`` and in "
                          "traced values ``f`` closes over, by the implicit function theorem "
                          f"(``-f_args / f_x`` at the root).\n\n{scipy_fn.__doc__ or ''}")
    return bracketing


brentq, brenth, ridder, bisect, toms748 = (
    _bracketing(n) for n in ("brentq", "brenth", "ridder", "bisect", "toms748"))


def _starting(kw, names):
    """``(start, kw_with)``: the leaves of the starting values among the keywords ``names``
    (``x0``, a ``bracket``'s ends, ...) that are given, and a function of values in their
    place giving ``kw`` with those values."""
    leaves, tree = tree_flatten({k: kw[k] for k in names if kw.get(k) is not None})
    return tuple(leaves), lambda values: {**kw, **tree_unflatten(tree, list(values))}


def root_scalar(f, args=(), **kw):
    """scipy.optimize.root_scalar; ``res.root`` differentiable in ``args`` and in traced
    values ``f`` closes over (the implicit function theorem, as ``root``).

    >>> import fgrad
    >>> def r(a):  # the root of x^3 + x - a
    ...     return root_scalar(lambda x: x ** 3 + x - a, bracket=(-5, 5), xtol=1e-14).root
    >>> round(float(r(2.0)), 9), round(float(fgrad.grad(r)(2.0)), 9)  # 1 / (3 x^2 + 1)
    (1.0, 0.25)
    """
    start, kw_with = _starting(kw, ("bracket", "x0", "x1"))
    outs = []

    def solve(g, plain, values):
        outs.append(_so.root_scalar(g, args=plain, **kw_with(values)))
        return outs[-1].root

    x, f, args = _scalar_solution(f, args, solve, start=start)
    if x is None:
        return _so.root_scalar(f, args=args, **kw_with(read_values(start)))
    outs[-1].root = x
    return outs[-1]


def _slope(f, order):
    """The ``order``-th derivative of an elementwise ``f(x, *args)`` in ``x`` (a scalar or an
    array), from fgrad, for scipy's solvers on plain values."""
    for _ in range(order):
        f = (lambda g: lambda x, *a: jvp(lambda u: g(u, *a), (x,),
                                         (fnp.ones_like(x),))[1])(f)
    return f


def newton(func, x0, fprime=None, args=(), tol=1.48e-8, maxiter=50, fprime2=None, x1=None,
           rtol=0.0, full_output=False, disp=True):
    """scipy.optimize.newton (Newton's, Halley's or the secant method, as scipy picks from
    ``fprime`` and ``fprime2``; an array ``x0`` solved elementwise); the root differentiable
    in ``args`` and in traced values ``func`` closes over (the implicit function theorem,
    ``-f_args / f_x`` at the root). A derivative given as ``fprime``/``fprime2`` that closes
    over traced values is replaced, for scipy's iteration on plain values, by fgrad's of
    ``func``.

    >>> import fgrad
    >>> def r(a):  # the root of x^3 + x - a
    ...     return newton(lambda x: x ** 3 + x - a, 1.0, tol=1e-14)
    >>> round(float(r(2.0)), 9), round(float(fgrad.grad(r)(2.0)), 9)  # 1 / (3 x^2 + 1)
    (1.0, 0.25)
    """
    kw = dict(tol=tol, maxiter=maxiter, rtol=rtol, full_output=full_output, disp=disp)
    start, starting = _starting({"x0": x0, "x1": x1}, ("x0", "x1"))
    n = len(defining.as_args(args))
    outs = []

    def given(derivative, g, order):  # (scipy calls it with the lifted closure's values too)
        if derivative is None:
            return None
        if _closure_lifted(derivative, ())[0] is not derivative:
            return _slope(g, order)
        return lambda x, *a: derivative(x, *a[:n])

    def solve(g, plain, values):
        out = _so.newton(g, fprime=given(fprime, g, 1), args=plain,
                         fprime2=given(fprime2, g, 2), **starting(values), **kw)
        outs.append(out)
        return out[0] if full_output else out

    x, func, args = _scalar_solution(func, args, solve, shape=shape_of(x0), start=start)
    if x is None:
        return _so.newton(func, fprime=fprime, args=args, fprime2=fprime2,
                          **starting(read_values(start)), **kw)
    if not full_output:
        return x
    if len(shape_of(x0)):  # (scipy's named tuple of root, converged, zero_der)
        return outs[-1]._replace(root=x)
    outs[-1][1].root = x
    return x, outs[-1][1]


def fixed_point(func, x0, args=(), xtol=1e-8, maxiter=500, method="del2"):
    """scipy.optimize.fixed_point (an array ``x0`` solved elementwise); the fixed point
    ``x = func(x, *args)`` differentiable in ``args`` and in traced values ``func`` closes over
    (the implicit function theorem on ``func(x) - x = 0``).

    >>> import fgrad
    >>> def p(a):  # x = a / (1 + x): x = (sqrt(1 + 4 a) - 1) / 2
    ...     return fixed_point(lambda x: a / (1 + x), 1.0, xtol=1e-14)
    >>> round(float(p(2.0)), 9), round(float(fgrad.grad(p)(2.0)), 9)  # 1 / sqrt(1 + 4 a)
    (1.0, 0.333333333)
    """
    def solve(g, plain, start):
        return _so.fixed_point(g, start[0], plain, xtol, maxiter, method)

    def residual(f):
        return lambda x, *a: f(x, *a) - x

    x, func, args = _scalar_solution(func, args, solve, residual, shape=shape_of(x0),
                                     start=(x0,))
    if x is None:
        return _so.fixed_point(func, read_values(x0), args, xtol, maxiter, method)
    return x


def minimize_scalar(fun, bracket=None, bounds=None, args=(), method=None, tol=None,
                    options=None):
    """scipy.optimize.minimize_scalar; ``res.x`` and ``res.fun`` differentiable in ``args``
    and in traced values ``fun`` closes over, at a minimum inside the bounds (where the
    derivative is zero: the implicit function theorem on it, as ``minimize``)."""
    start, kw_with = _starting(dict(bracket=bracket, bounds=bounds, method=method, tol=tol,
                                    options=options), ("bracket", "bounds"))
    outs = []

    def solve(g, plain, values):
        outs.append(_so.minimize_scalar(g, args=plain, **kw_with(values)))
        return outs[-1].x

    def slope(f):  # (the equation of a minimum: a zero derivative)
        return lambda x, *a: grad(lambda u: f(u, *a))(x)

    x, fun, args = _scalar_solution(fun, args, solve, slope, start=start)
    if x is None:
        return _so.minimize_scalar(fun, args=args, **kw_with(read_values(start)))
    res = outs[-1]
    res.x, res.fun = x, fun(x, *args)
    return res


def least_squares(fun, x0, jac="2-point", *, args=(), kwargs=None, loss="linear", **kw):
    """scipy.optimize.least_squares; ``res.x``, the residuals ``res.fun`` and ``res.cost``
    differentiable in ``args`` and in traced values ``fun`` closes over (the implicit function
    theorem on the normal equations ``J^T r = 0``, at a solution inside the bounds; the
    squared loss only, on traced values)."""
    fun, args = _closure_lifted(fun, defining.as_args(args))
    if kwargs:  # (traced values among them lifted too, from the wrapper's closure)
        fun, args = _closure_lifted(_with_kwargs(fun, kwargs), args)
    if not contains_tracer(args) and not _per_example(x0):
        return _so.least_squares(fun, read_values(x0), jac, args=args, loss=loss, **kw)
    if loss != "linear":
        raise NotImplementedError(f"fgrad.scipy.optimize.least_squares: loss={loss!r} is not "
                                  "supported on traced values; loss='linear' is")

    def solve(a, start):
        with staging(None):  # (as minimize's)
            return _so.least_squares(fun, _onp.asarray(read_values(start[0]), float), jac,
                                     args=read_values(a), **kw)

    def normal(x, *a):
        return grad(lambda u: 0.5 * fnp.sum(fun(u, *a) ** 2))(x)

    res = _solution(args, normal, solve, lambda x: fun(x, *args), (x0,))
    res.cost = 0.5 * fnp.sum(res.fun ** 2)
    return res


def _with_kwargs(fun, kwargs):
    return lambda x, *a: fun(x, *a, **kwargs)


def curve_fit(f, xdata, ydata, p0=None, sigma=None, absolute_sigma=False, *rest,
              full_output=False, **kw):
    """scipy.optimize.curve_fit; ``popt`` and ``pcov`` differentiable in ``xdata``,
    ``ydata``, a 1-d ``sigma`` and traced values ``f`` closes over (scipy's values): ``popt``
    by the implicit function theorem on the normal equations of the weighted residuals (a
    minimum inside the bounds), ``pcov`` as ``inv(J^T J)`` (scaled by the residuals' variance
    unless ``absolute_sigma``) from the exact Jacobian ``J`` at ``popt``.

    >>> import fgrad, numpy
    >>> t = numpy.linspace(0.0, 1.0, 5)
    >>> slope = lambda y: curve_fit(lambda t, a: a * t, t, y)[0][0]
    >>> round(float(slope(2.0 * t)), 9), fgrad.grad(slope)(2.0 * t).round(6).tolist()
    (2.0, [0.0, 0.133333, 0.266667, 0.4, 0.533333])
    """
    n = len(inspect.signature(f).parameters) - 1 if p0 is None else \
        _onp.size(value_for_shape(p0))
    f, lifted = _closure_lifted(f, (None,) * n)
    data = (xdata, ydata) + (() if sigma is None else (sigma,)) + lifted[n:]
    if not contains_tracer(data) and not _per_example(p0):
        return _so.curve_fit(f, xdata, ydata, read_values(p0), sigma, absolute_sigma, *rest,
                             full_output=full_output, **kw)
    if rest or full_output or _onp.ndim(value_for_shape(sigma)) > 1:
        raise NotImplementedError(
            "fgrad.scipy.optimize.curve_fit: on traced values give check_finite, bounds, "
            "method and jac by keyword, a 1-d sigma, and no full_output")
    p0 = _onp.ones(n) if p0 is None else fnp.asarray(p0, float)
    weighted = sigma is not None

    def residual(p, xd, yd, *more):
        sg, lk = (more[0], more[1:]) if weighted else (None, more)
        r = f(xd, *p, *lk) - yd
        return r / sg if weighted else r

    fits: dict = {}  # (scipy's fits by their data: the solution and the values of popt and
    # pcov read one fit, not three; the last 64 kept, a jitted function's replays add theirs)

    def fit_plain(xd, yd, *more_and_p0):  # (the data, then where the fit starts)
        key = tuple((a.dtype.str, a.shape, a.tobytes())
                    for a in map(_onp.asarray, (xd, yd) + more_and_p0))
        if key not in fits:
            more, start = more_and_p0[:-1], more_and_p0[-1]
            sg, lk = (more[0], more[1:]) if weighted else (None, more)
            with staging(None):  # (as minimize's)
                fits[key] = _so.curve_fit(lambda x, *p: f(x, *p, *lk), xd, yd, start, sg,
                                          absolute_sigma, **kw)
            if len(fits) > 64:
                del fits[next(iter(fits))]
        return tuple(_onp.copy(v) for v in fits[key])  # (a caller may write into its own)

    def normal(p, *a):
        return grad(lambda u: 0.5 * fnp.sum(residual(u, *a) ** 2))(p)

    popt = _solution(data, normal, lambda a, start: _so.OptimizeResult(
        x=fit_plain(*read_values(a + start))[0]), lambda x: None, (p0,)).x
    r = residual(popt, *data)
    jac = jacfwd(lambda p: residual(p, *data))(popt)
    pcov = fnp.linalg.inv(fnp.matmul(fnp.transpose(jac), jac))
    m = _onp.size(value_for_shape(r))
    if not absolute_sigma:
        pcov = pcov * (fnp.sum(r * r) / (m - n)) if m > n else pcov * _onp.inf
    return with_numpy_values((popt, pcov), fit_plain, data + (p0,), {})


# scipy.optimize's other functions (``linprog``, ``milp``, ...): scipy's own on plain
# values, refused by name on traced ones
__getattr__ = defining.plain_only_fallback(
    __name__, _so, lambda name: "; a solution differentiable in the problem's parameters: "
    "fgrad.scipy.optimize.root, minimize, root_scalar, minimize_scalar, least_squares, "
    "curve_fit, newton or brentq with the parameters in args")
