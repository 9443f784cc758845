"""Type-checked by mypy (``python -m mypy``, in CI), not run by pytest: the public API used the
way users write it must pass a type checker, with fgrad's hints and the py.typed marker."""
from typing import Any, Callable

import numpy

import fgrad
import fgrad.numpy as np
from fgrad import autograd, nn, tree_util
from fgrad.testing import check_grads


def loss(w: Any, x: Any) -> Any:
    return np.sum(np.tanh(x @ w) ** 2) + nn.logsumexp(w)


w0 = numpy.ones(3)
x0 = numpy.ones((4, 3))
g: Callable[..., Any] = fgrad.grad(loss, argnums=0)
value, gradient = fgrad.value_and_grad(loss, argnums=(0, 1))(w0, x0)
out, pull = fgrad.vjp(np.sin, w0)
primal, tangent = fgrad.jvp(np.sin, (w0,), (w0,))
jac = fgrad.jacrev(np.sin, holomorphic=False)(w0) + fgrad.jacfwd(np.sin)(w0)
hess = fgrad.hessian(lambda w: loss(w, x0))(w0)
batched = fgrad.vmap(lambda w: loss(w, x0), in_axes=0)(numpy.ones((5, 3)))
staged = fgrad.jit(loss, static_argnums=())(w0, x0)
updated = np.at(w0)[0].set(2.0)
flat, unravel = tree_util.ravel_pytree({"w": w0})
leaves = fgrad.tree_leaves({"w": w0, "b": 1.0})
error: float = check_grads(lambda w: loss(w, x0), (w0,), order=1)
cube = fgrad.primitive(lambda x: x ** 3, name="typed_cube")
fgrad.defvjp(cube, lambda g, ans, x: g * 3 * x ** 2)
ag_grad = autograd.grad(loss, argnum=1)(w0, x0)
stopped = fgrad.stop_gradient(w0)
