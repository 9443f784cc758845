"""``autograd.differential_operators``: autograd's transforms (the ones ``fgrad.autograd``
has, and ``make_jvp_reversemode`` and ``make_ggnvp``)."""
from typing import Any, Callable

import fgrad.numpy as fnp
from .. import transforms
from ..traces import arguments
from . import _named  # (autograd's argument conventions)
from . import (checkpoint, deriv, elementwise_grad, grad, grad_and_aux,  # noqa: F401
               grad_named, hessian, hessian_tensor_product, hessian_vector_product,
               holomorphic_grad, jacobian, make_hvp, make_jvp, make_vjp, multigrad_dict,
               tensor_jacobian_product, value_and_grad, vector_jacobian_product)
from .builtins import tuple as atuple  # noqa: F401  (autograd's module imports these two)
from .wrap_util import unary_to_nary  # noqa: F401


__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian",
           "hessian", "make_vjp", "make_jvp", "make_hvp", "make_ggnvp",
           "make_jvp_reversemode", "deriv", "holomorphic_grad", "hessian_vector_product",
           "hessian_tensor_product", "vector_jacobian_product", "tensor_jacobian_product",
           "multigrad_dict", "grad_named", "checkpoint"]


def make_jvp_reversemode(fun: Callable[..., Any], argnum: int = 0) -> Callable[..., Any]:
    """autograd's ``make_jvp_reversemode(fun, argnum)(*args)``: the function ``v -> J v`` of
    ``fun`` at ``args`` (autograd builds it from two reverse passes; the numbers are those of
    forward mode, which fgrad uses).

    >>> from fgrad.autograd.differential_operators import make_jvp_reversemode
    >>> float(make_jvp_reversemode(lambda x: x ** 3)(2.0)(1.0))
    12.0
    """
    def at(*args, **kwargs):
        along, x = arguments.argnums_partial(fun, "make_jvp_reversemode", args, kwargs,
                                               argnum)
        return lambda v: transforms.jvp(along, x, (v,))[1]
    return _named(at, fun, "make_jvp_reversemode", argnum)


def _half_squared_norm(x):
    return 0.5 * fnp.sum(x ** 2, axis=-1)


def make_ggnvp(f: Callable[..., Any], g: Callable[..., Any] = _half_squared_norm,
               f_argnum: int = 0) -> Callable[..., Any]:
    """autograd's ``make_ggnvp(f, g, f_argnum)(*args)``: the generalized Gauss-Newton product
    ``v -> J^T H J v`` of ``g(f(x))``, with ``J`` the Jacobian of ``f`` at ``args`` and ``H``
    the Hessian of ``g`` at ``f(args)`` (by default ``g = 0.5 |y|^2``, so ``J^T J v``).

    >>> import numpy, fgrad.numpy as np
    >>> from fgrad.autograd.differential_operators import make_ggnvp
    >>> A = numpy.array([[1.0, 2.0], [0.0, 3.0]])
    >>> make_ggnvp(lambda x: np.dot(A, x))(numpy.zeros(2))(numpy.array([1.0, 0.0])).tolist()
    [1.0, 2.0]
    """
    def at(*args, **kwargs):
        along, x = arguments.argnums_partial(f, "make_ggnvp", args, kwargs, f_argnum)
        y, f_vjp = transforms.vjp(along, *x)
        grad_g = transforms.grad(g)

        def ggnvp(v):
            jv = transforms.jvp(along, x, (v,))[1]
            hjv = transforms.jvp(grad_g, (y,), (jv,))[1]
            return f_vjp(hjv)[0]
        return ggnvp
    return _named(at, f, "make_ggnvp", f_argnum)
