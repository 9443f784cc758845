"""Central differences for the tests that compare fgrad's derivatives with another library's
own values (scipy's, autograd's): the gradient of a scalar function of one array."""
import numpy as onp


def central_gradient(f, x, h=1e-6):
    """``d f / d x`` by central differences, entry by entry, ``f`` a scalar function of the
    float array ``x``."""
    x = onp.asarray(x, float)
    g = onp.zeros_like(x)
    for i in onp.ndindex(x.shape):
        e = onp.zeros_like(x)
        e[i] = h
        g[i] = (f(x + e) - f(x - e)) / (2 * h)
    return g
