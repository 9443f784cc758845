"""The transforms as functions of one array, for the tests that run them on other libraries'
arrays (tests/test_dask.py, tests/test_cupy.py) against the same on numpy's."""
import numpy as onp

import fgrad
import fgrad.numpy as np

X = onp.linspace(0.1, 1.0, 10)


def f(x):
    return np.sum(np.sin(x) * x ** 2)


def g(x):
    return np.tanh(x[:3]) * np.sum(x)


TRANSFORMS = {
    "grad": lambda x: fgrad.grad(f)(x),
    "value_and_grad": lambda x: fgrad.value_and_grad(f)(x),
    "vjp": lambda x: fgrad.vjp(g, x)[1](x[:3] * 0 + 1.5),
    "jvp": lambda x: fgrad.jvp(g, (x,), (x * 0 + 1.0,)),
    "linearize": lambda x: fgrad.linearize(g, x)[1](x),
    "jacfwd": lambda x: fgrad.jacfwd(g)(x),
    "jacrev": lambda x: fgrad.jacrev(g)(x),
    "hessian": lambda x: fgrad.hessian(f)(x[:4]),
    "checkpoint": lambda x: fgrad.grad(lambda y: np.sum(fgrad.checkpoint(np.sin)(y) ** 2))(x),
    "vmap": lambda x: fgrad.vmap(fgrad.grad(f))(np.reshape(x, (2, 5))),
    "grad of grad": lambda x: fgrad.grad(lambda y: np.sum(fgrad.grad(f)(y) ** 2))(x),
    "jit of grad": lambda x: fgrad.jit(fgrad.grad(f))(x),
    "grad of jit": lambda x: fgrad.grad(fgrad.jit(f))(x),
    "make_graph": lambda x: fgrad.make_graph(fgrad.grad(f))(x)(x * 2.0),
}
