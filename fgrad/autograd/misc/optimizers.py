"""``autograd.misc.optimizers``: autograd's gradient-descent loops, with its signatures.

``grad(x, i)`` gives the gradient at iteration ``i``; ``callback(x, i, g)`` is called before
each step; ``x`` may be any structure of arrays (tuples, lists, dicts), flattened for the step
and given back in its structure, as autograd does. The loops are numpy arithmetic on the
vector, so they can be differentiated themselves (meta-optimization), as autograd's can."""
from typing import Any, Callable

import numpy as _onp

from .flatten import flatten

__all__ = ["sgd", "rmsprop", "adam"]


def _on_vectors(step):
    """The loop ``step(grad, x, callback, ...)`` on vectors, run on any structure."""
    def optimizer(grad: Callable[..., Any], x0: Any, callback: Callable[..., Any] | None = None,
                  *args: Any, **kwargs: Any) -> Any:
        x, unflatten = flatten(x0)

        def flat_grad(x, i):
            return flatten(grad(unflatten(x), i))[0]

        def flat_callback(x, i, g):
            if callback is not None:
                callback(unflatten(x), i, unflatten(g))

        return unflatten(step(flat_grad, x, flat_callback, *args, **kwargs))

    optimizer.__name__, optimizer.__doc__ = step.__name__, step.__doc__
    return optimizer


@_on_vectors
def sgd(grad, x, callback, num_iters=200, step_size=0.1, mass=0.9):
    """Gradient descent with momentum: ``v = mass v - (1 - mass) g``, ``x = x + step_size v``.

    >>> from fgrad.autograd.misc.optimizers import sgd
    >>> round(float(sgd(lambda x, i: 2 * (x - 3.0), 0.0, num_iters=500)), 6)
    3.0
    """
    velocity = _onp.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        callback(x, i, g)
        velocity = mass * velocity - (1.0 - mass) * g
        x = x + step_size * velocity
    return x


@_on_vectors
def rmsprop(grad, x, callback, num_iters=100, step_size=0.1, gamma=0.9, eps=10 ** -8):
    """RMSProp: steps scaled by a running root mean square of the gradient."""
    avg_sq_grad = _onp.ones(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        callback(x, i, g)
        avg_sq_grad = avg_sq_grad * gamma + g ** 2 * (1 - gamma)
        x = x - step_size * g / (_onp.sqrt(avg_sq_grad) + eps)
    return x


@_on_vectors
def adam(grad, x, callback, num_iters=100, step_size=0.001, b1=0.9, b2=0.999, eps=10 ** -8):
    """Adam (Kingma and Ba): bias-corrected running moments of the gradient."""
    m = _onp.zeros(len(x))
    v = _onp.zeros(len(x))
    for i in range(num_iters):
        g = grad(x, i)
        callback(x, i, g)
        m = (1 - b1) * g + b1 * m
        v = (1 - b2) * (g ** 2) + b2 * v
        mhat = m / (1 - b1 ** (i + 1))
        vhat = v / (1 - b2 ** (i + 1))
        x = x - step_size * mhat / (_onp.sqrt(vhat) + eps)
    return x
