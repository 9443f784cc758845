"""Checking derivatives against finite differences (and Taylor mode against forward mode).

``check_grads(f, args)`` checks forward mode by comparing ``jvp`` with a central difference
along a random direction, and reverse mode by the inner-product identity
``<t, J^T c> = <J t, c>`` (``J t`` by finite differences, ``c`` a random cotangent), which
checks the whole VJP with one scalar at any size. For ``order > 1`` it checks the derivative
functions themselves the same way, so order 2 covers fwd-of-fwd, rev-of-fwd, fwd-of-rev and
rev-of-rev. Tolerances are per element, never scaled by array size. ``check_jet(f, args)``
checks ``fgrad.jet`` against nested ``jvp`` along a random path.
"""
from math import factorial
from typing import Any, Callable, Sequence
import numpy as _onp

from ..core.pytree import tree_flatten, tree_unflatten
from ..transforms import jvp, vjp

__all__ = ["check_grads", "check_batching", "check_jet"]

_MODE_NAMES = {"fwd": "jvp", "rev": "vjp"}


def check_grads(f: Callable[..., Any], args: tuple, order: int = 2,
                modes: Sequence[str] = ("fwd", "rev"), eps: float = 1e-6, rtol: float = 1e-5,
                atol: float = 1e-6, seed: int = 0) -> float:
    """Check ``f``'s derivatives at ``args`` in every mode of ``modes`` up to ``order``.

    ``args`` is a tuple of float64 or complex128 arrays or pytrees (the positional arguments,
    all differentiated). Complex values follow JAX's convention: the VJP is the transpose of the
    JVP under the pairing ``Re sum(x * y)``. Raises ``AssertionError`` naming the mode
    combination, the worst relative error and where it occurred; returns the worst relative
    error seen.

    >>> import fgrad.numpy as np
    >>> from fgrad.testing import check_grads
    >>> err = check_grads(lambda x: np.sin(x) * x, (np.array([0.5, 1.5]),))
    >>> err < 1e-5
    True
    """
    for m in modes:
        if m not in _MODE_NAMES:
            raise ValueError(f"check_grads: unknown mode {m!r}; use 'fwd' and/or 'rev'")
    rng = _onp.random.default_rng(seed)
    worst = [0.0]
    _check(f, tuple(args), order, tuple(modes), eps, rtol, atol, rng, "f", worst)
    return worst[0]


def _random_like(tree, rng):
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [_random(x, rng) for x in leaves])


def _random(x, rng):
    a = rng.standard_normal(_onp.shape(x))
    if _onp.iscomplexobj(x):
        a = a + 1j * rng.standard_normal(_onp.shape(x))
    return _as_float(a)


def _as_float(a):
    return a[()] if a.ndim == 0 else a


def _axpy(a, x, y):
    """``a * x + y`` leaf by leaf."""
    xl, td = tree_flatten(x)
    yl, _ = tree_flatten(y)
    return tree_unflatten(td, [a * _onp.asarray(u) + _onp.asarray(v) for u, v in zip(xl, yl)])


def _leaves(tree):
    """Leaves as float64 or complex128 arrays."""
    return [_onp.asarray(x, dtype=complex if _onp.iscomplexobj(x) else float)
            for x in tree_flatten(tree)[0]]


def _pairing(xs, ys):
    """``Re sum(x * y)`` over lists of arrays: the (unconjugated) pairing under which a VJP is
    the transpose of the JVP, for real and complex values alike (JAX's convention)."""
    return sum(_onp.sum(_onp.asarray(a) * _onp.asarray(b)).real for a, b in zip(xs, ys))


def _as_real(a):
    """A complex array as real numbers (real and imaginary parts along a last axis)."""
    a = _onp.asarray(a)
    return _onp.stack([a.real, a.imag], axis=-1) if _onp.iscomplexobj(a) else a.astype(float)


def _numeric_jvp(f, args, tangents, eps):
    plus = _leaves(f(*_axpy(eps, tangents, args)))
    minus = _leaves(f(*_axpy(-eps, tangents, args)))
    return [(p - m) / (2 * eps) for p, m in zip(plus, minus)]


def _compare(name, got, want, rtol, atol, worst, against="finite differences"):
    """Elementwise ``|got - want| <= atol + rtol |want|`` over lists of arrays."""
    for k, (g, w) in enumerate(zip(got, want)):
        g, w = _as_real(g), _as_real(w)
        if g.shape != w.shape:
            raise AssertionError(f"{name}: output {k} has shape {g.shape}, expected {w.shape}")
        if g.size == 0:
            continue
        diff = _onp.abs(g - w)
        rel = diff / _onp.maximum(_onp.abs(w), atol)
        worst[0] = max(worst[0], float(_onp.nan_to_num(rel, nan=_onp.inf).max()))
        bad = ~(diff <= atol + rtol * _onp.abs(w))
        if bad.any():
            i = _onp.unravel_index(int(_onp.argmax(_onp.where(bad, rel, -1))), g.shape)
            raise AssertionError(
                f"{name}: derivative disagrees with {against}; worst relative error "
                f"{rel[i]:.3g} at output {k}, index {tuple(int(j) for j in i)}: "
                f"got {g[i]!r}, expected {w[i]!r} (rtol={rtol}, atol={atol})")


def check_jet(f: Callable[..., Any], args: tuple, order: int = 6, seed: int = 0,
              rtol: float = 1e-8, atol: float = 1e-9) -> float:
    """Check ``fgrad.jet(f, args, series)`` along a random path ``x(t) = x + sum_k x_k t^k /
    k!`` against the path's derivatives at 0 by ``order`` nested ``jvp`` in ``t``: the Taylor
    rules against the JVP rules, both fgrad's. ``args`` are float or complex arrays (every
    one on the path); the forward value must be ``f``'s own. ``atol`` is scaled by each
    term's largest entry (terms grow like k!). Raises ``AssertionError`` naming the output
    and the term; returns the worst relative error.

    >>> import fgrad.numpy as np
    >>> from fgrad.testing import check_jet
    >>> check_jet(lambda x: np.tanh(x) * x, (np.array([0.5, 1.5]),), order=4) < 1e-10
    True
    """
    from ..traces.taylor import jet
    rng = _onp.random.default_rng(seed)
    args = tuple(args)
    series = [[_random(x, rng) * 0.5 for _ in range(order)] for x in args]

    def path(t):
        return f(*[x + sum(s[k] * (t ** (k + 1) / factorial(k + 1)) for k in range(order))
                   for x, s in zip(args, series)])

    def one_more(derivatives):
        # (t -> [path(t), path'(t), ..., path^(k+1)(t)]: the nested jvp's primals are the
        # lower derivatives, so one call of the innermost order gives every order, at half
        # the cost of nesting each order apart)
        def more(t):
            primals, tangents = jvp(derivatives, (t,), (1.0,))
            return [*primals, tangents[-1]]
        return more

    every_order = lambda t: [path(t)]  # noqa: E731
    for _ in range(order):
        every_order = one_more(every_order)
    out, terms = jet(f, args, series)
    want_out = f(*args)
    for k, (o, w) in enumerate(zip(_leaves(out), _leaves(want_out))):
        if not _onp.array_equal(o, w, equal_nan=True):
            raise AssertionError(f"jet of f: output {k}'s value is not f's own")
    # (terms: each output leaf replaced by its K terms, so they flatten K by K)
    got = _leaves(terms)
    worst = [0.0]
    wants = every_order(0.0)
    for k in range(order):
        want = _leaves(wants[k + 1])
        scale = max([1.0] + [float(_onp.max(_onp.abs(w), initial=0.0)) for w in want])
        _compare(f"term {k + 1} of jet of f", got[k::order], want, rtol, atol * scale,
                 worst, against=f"{order} nested jvp")
    return worst[0]


def _check(f, args, order, modes, eps, rtol, atol, rng, name, worst):
    t = _random_like(args, rng)
    numeric = _numeric_jvp(f, args, t, eps)
    if "fwd" in modes:
        _, jt = jvp(f, args, t)
        _compare(f"jvp of {name}", _leaves(jt), numeric, rtol, atol, worst)
    if "rev" in modes:
        out, f_vjp = vjp(f, *args)
        c = _random_like(out, rng)
        ct = f_vjp(c)
        got = _pairing(_leaves(ct), _leaves(t))
        want = _pairing(numeric, _leaves(c))
        _compare(f"vjp of {name} (<t, J^T c> vs <J t, c>)", [got], [want], rtol, atol, worst)
    if order > 1:
        n = len(args)
        if "fwd" in modes:
            def f_jvp(*xs):
                return jvp(f, xs[:n], xs[n:])[1]
            _check(f_jvp, args + tuple(t), order - 1, modes, eps, rtol, atol, rng,
                   f"jvp({name})", worst)
        if "rev" in modes:
            c = _random_like(f(*args), rng)

            def f_vjp(*xs):
                return vjp(f, *xs[:n])[1](xs[n])
            _check(f_vjp, args + (c,), order - 1, modes, eps, rtol, atol, rng,
                   f"vjp({name})", worst)


def random_case(prim, rng, case=None, dtype=_onp.float64, tries=200):
    """Random arguments for one of ``prim.spec``'s cases (numpy's RNG, no hypothesis):
    ``(args, params)`` inside the spec's domain and accepted by its ``valid`` predicate."""
    spec = prim.spec
    shapes, params = spec.cases[rng.integers(len(spec.cases))] if case is None else case
    for _ in range(tries):
        args = []
        for i, s in enumerate(shapes):
            d = spec.arg_domain(i)
            if d == "bool":
                a = rng.random(s) < 0.5
            elif d == "complex":
                a = (rng.uniform(-2, 2, s) + 1j * rng.uniform(-2, 2, s)).astype(
                    _onp.result_type(dtype, _onp.complex64))
            else:
                a = rng.uniform(d[0], d[1], s).astype(dtype)
            args.append(a[()] if a.ndim == 0 else a)
        if spec.valid is None or spec.valid(*[a for i, a in enumerate(args)
                                              if spec.arg_domain(i) != "bool"]):
            return tuple(args), params
    raise ValueError(f"no valid arguments found for {prim.name} case {shapes}")


def as_function(prim, args, params):
    """``prim`` as a function of its differentiable arguments only, and those arguments."""
    diff = [i for i in range(len(args)) if prim.spec.arg_domain(i) != "bool"]

    def f(*xs):
        full = list(args)
        for i, x in zip(diff, xs):
            full[i] = x
        return prim.spec.invoke(prim, full, params)

    f.__name__ = prim.name
    return f, tuple(args[i] for i in diff)


def check_batching(entry, rng, n=3, rtol=1e-12):
    """Check ``vmap`` of a table entry against numpy.stack of its calls, on ``n`` examples of
    its first case: the batch axis first, last (with the results' last too), only the first
    argument mapped, and nested two deep (a 2 x n grid, the inner batch on the last axis).
    Raises ``AssertionError`` where they differ (beyond ``rtol``, relative to the largest
    value), ``ConcretizationError`` where the entry reads its values; returns False when the
    entry has no argument to map.

    >>> import numpy, fgrad.numpy
    >>> from fgrad.core.table import PRIMITIVES
    >>> check_batching(PRIMITIVES["sin"], numpy.random.default_rng(0))
    True
    """
    from ..traces.batching import vmap

    case = entry.spec.cases[0]
    drawn = [random_case(entry, rng, case) for _ in range(n)]
    params = drawn[0][1]
    f, _ = as_function(entry, drawn[0][0], params)
    xs = [as_function(entry, args, params)[1] for args, _ in drawn]
    if not xs[0]:  # (every argument is a mask)
        return False

    def stacked(outs, axis=0):
        leaves = [tree_flatten(o)[0] for o in outs]
        return tree_unflatten(tree_flatten(outs[0])[1], [
            _onp.stack([_onp.asarray(ls[k]) for ls in leaves], axis)
            for k in range(len(leaves[0]))])

    def same(how, got, want):
        (lg, tg), (lw, tw) = tree_flatten(got), tree_flatten(want)
        assert tg == tw, f"{how}: the results' structure {tg} is not {tw}"
        for x, y in zip(lg, lw):
            x, y = _onp.asarray(x), _onp.asarray(y)
            assert x.shape == y.shape and x.dtype == y.dtype, \
                f"{how}: {x.shape} {x.dtype} where the stacked calls give {y.shape} {y.dtype}"
            scale = max(1.0, float(_onp.max(_onp.abs(y), initial=0.0))) if y.size else 1.0
            _onp.testing.assert_allclose(x, y, rtol=rtol, atol=rtol * scale, err_msg=how)

    def batch(examples, axis=0):
        return [_onp.stack([x[i] for x in examples], axis) for i in range(len(xs[0]))]

    same("batch axis 0", vmap(f)(*batch(xs)), stacked([f(*x) for x in xs]))
    same("batch axis -1", vmap(f, in_axes=-1, out_axes=-1)(*batch(xs, -1)),
         stacked([f(*x) for x in xs], -1))
    if len(xs[0]) > 1:
        rest = xs[0][1:]
        same("first argument mapped", vmap(f, in_axes=(0,) + (None,) * len(rest))(
            batch(xs)[0], *rest), stacked([f(x[0], *rest) for x in xs]))
    grid = [xs, xs[1:] + xs[:1]]
    deep = [_onp.stack([_onp.stack([x[i] for x in row], -1) for row in grid])
            for i in range(len(xs[0]))]
    same("nested two deep", vmap(vmap(f, in_axes=-1))(*deep),
         stacked([stacked([f(*x) for x in row]) for row in grid]))
    return True
