"""``autograd.misc.fixed_points``: a fixed point ``x = f(a)(x)`` found by iteration, and its
derivative with respect to ``a`` by the implicit function theorem (no derivative flows through
the iterations)."""
from typing import Any, Callable

from ...core import table
from ... import transforms

__all__ = ["fixed_point"]


def _iterate(step, x, distance, tol):
    """``x, step(x), step(step(x)), ...`` until two in a row are within ``tol``."""
    x, prev = step(x), x
    while distance(x, prev) > tol:
        x, prev = step(x), x
    return x


# (not in the table, PRIMITIVES: its arguments include functions, which the generated tests
# cannot draw; tests/test_autograd_switch.py checks it against closed forms)
_solve = table.Primitive("autograd.misc.fixed_points.fixed_point",
                         lambda f, a, x0, distance, tol: _iterate(f(a), x0, distance, tol))


def fixed_point(f: Callable[..., Any], a: Any, x0: Any, distance: Callable[..., Any],
                tol: float) -> Any:
    """autograd's ``fixed_point``: iterates ``x = f(a)(x)`` from ``x0`` until
    ``distance(x, x_prev) <= tol``. Its derivative with respect to ``a`` is that of the exact
    fixed point (``dx = J_a da + J_x dx``), found by iterating with the same ``distance`` and
    ``tol``: the adjoint ``w = g + J_x^T w`` in reverse mode, the tangent
    ``u = J_a da + J_x u`` in forward mode. ``x0`` has no derivative.

    >>> import fgrad
    >>> from fgrad.autograd.misc.fixed_points import fixed_point
    >>> newton_sqrt = lambda a: lambda x: 0.5 * (x + a / x)
    >>> dist = lambda x, y: abs(x - y)
    >>> sqrt = lambda a: fixed_point(newton_sqrt, a, 1.0, dist, 1e-12)
    >>> round(float(sqrt(2.0)), 12), round(float(fgrad.grad(sqrt)(2.0)), 12)  # 1 / (2 sqrt 2)
    (1.414213562373, 0.353553390593)
    >>> round(float(fgrad.hessian(sqrt)(2.0)), 10)                            # -a^(-3/2) / 4
    -0.0883883476
    """
    return _solve(f, a, x0, distance, tol)


def _vjp(g, ans, f, a, x0, distance, tol):
    _, pull_x = transforms.vjp(f(a), ans)
    _, pull_a = transforms.vjp(lambda a: f(a)(ans), a)
    w = _iterate(lambda w: g + pull_x(w)[0], g, distance, tol)
    return pull_a(w)[0]


def _jvp(t, ans, f, a, x0, distance, tol):
    ja = transforms.jvp(lambda a: f(a)(ans), (a,), (t,))[1]
    return _iterate(lambda u: ja + transforms.jvp(f(a), (ans,), (u,))[1], ja, distance, tol)


table.defvjp(_solve, _vjp, argnums=(1,))
table.defjvp(_solve, _jvp, argnums=(1,))
table.defvjp(_solve, None, argnums=(2,))
table.defjvp(_solve, None, argnums=(2,))
