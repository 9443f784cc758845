"""``autograd``'s vector spaces: ``VSpace``, the space of a value (an array, a number, or a
tuple, list or dict of them), and ``vspace``. (``autograd.extend`` and ``autograd.core``
give them; a module of its own so that the package's own functions can use them.)"""
from typing import Any

import numpy as _onp

from ..core.pytree import tree_flatten, tree_unflatten
from ..core.tracer import value_for_shape, value_dtype

__all__ = ["VSpace", "ArrayVSpace", "ComplexArrayVSpace", "vspace"]


class VSpace:
    """autograd's ``VSpace`` of a value (an array, a number, or a tuple, list or dict of
    them): its shape and dtype, and the vectors of that space (``zeros``, ``ones``,
    ``randn``, ``standard_basis``) and operations (``add``, ``scalar_mul``,
    ``inner_prod``), as autograd's libraries use them."""

    def __init__(self, value):
        leaves, self._tree = tree_flatten(value)
        self._metas = [value_for_shape(x) for x in leaves]
        if len(self._metas) == 1 and not isinstance(value, (tuple, list, dict)):
            m = self._metas[0]
            self.shape, self.dtype = _onp.shape(m), value_dtype(m)
            self.size, self.ndim = int(_onp.prod(self.shape)), len(self.shape)
        else:
            self.shape = self.dtype = None
            self.size = sum(int(_onp.size(m)) for m in self._metas)
            self.ndim = None
        self.iscomplex = any(value_dtype(m).kind == "c" for m in self._metas)

    def _like(self, make):
        leaves = [make(_onp.shape(m), _float(m)) for m in self._metas]
        return tree_unflatten(self._tree, [
            (complex if value_dtype(m).kind == "c" else float)(x[()])
            if m.__class__ in (float, int, complex) else x[()] if x.ndim == 0 else x
            for x, m in zip(leaves, self._metas)])

    def zeros(self):
        return self._like(_onp.zeros)

    def ones(self):
        return self._like(_onp.ones)

    def randn(self):
        return self._like(lambda shape, dtype: _onp.asarray(_onp.random.randn(*shape),
                                                            dtype))

    def standard_basis(self):
        for k in range(self.size):
            flat = _onp.zeros(self.size)
            flat[k] = 1.0
            yield self._unflatten(flat)

    def _unflatten(self, flat):
        out, start = [], 0
        for m in self._metas:
            n = int(_onp.size(m))
            out.append(flat[start:start + n].reshape(_onp.shape(m)).astype(_float(m)))
            start += n
        return tree_unflatten(self._tree, out)

    def add(self, x, y):
        return _map(lambda a, b: a + b, x, y)

    def scalar_mul(self, x, a):
        return _map(lambda v: v * a, x)

    def inner_prod(self, x, y):
        xs, ys = tree_flatten(x)[0], tree_flatten(y)[0]
        return sum(_onp.real(_onp.vdot(_onp.ravel(a), _onp.ravel(b))) for a, b in zip(xs, ys))

    def covector(self, x):
        return _map(_onp.conj, x)

    def __eq__(self, other):
        return isinstance(other, VSpace) and self._tree == other._tree and all(
            _onp.shape(a) == _onp.shape(b) and value_dtype(a) == value_dtype(b)
            for a, b in zip(self._metas, other._metas))

    def __repr__(self):
        return f"{type(self).__name__}(shape={self.shape}, dtype={self.dtype})"


class ArrayVSpace(VSpace):
    """The space of one real array or number (autograd's ``numpy_vspaces.ArrayVSpace``): what
    ``vspace`` gives for one.

    >>> import numpy
    >>> from fgrad.autograd.extend import vspace
    >>> from fgrad.autograd.numpy.numpy_vspaces import ArrayVSpace
    >>> isinstance(vspace(numpy.ones(2)), ArrayVSpace), ArrayVSpace(1.0) == vspace(2.0)
    (True, True)
    """

    def __init__(self, value):
        super().__init__(value)
        if self.shape is None:
            raise TypeError(f"{type(self).__name__}: the space of one array or number, not of "
                            f"a {type(value).__name__} (use vspace(value))")


class ComplexArrayVSpace(ArrayVSpace):
    """The space of one complex array or number (``iscomplex`` true)."""


def _float(m):
    dtype = value_dtype(m)
    return dtype if dtype.kind in "fc" else _onp.dtype(float)


def _map(f, *trees):
    leaves = [tree_flatten(t)[0] for t in trees]
    return tree_unflatten(tree_flatten(trees[0])[1], [f(*xs) for xs in zip(*leaves)])


def vspace(value: Any) -> VSpace:
    """autograd's ``vspace(value)``: the space of ``value``.

    >>> from fgrad.autograd.extend import vspace
    >>> vspace((1.0, [2.0, 3.0])).zeros()
    (0.0, [0.0, 0.0])
    """
    if isinstance(value, (tuple, list, dict)):
        return VSpace(value)
    return (ComplexArrayVSpace if value_dtype(value_for_shape(value)).kind == "c"
            else ArrayVSpace)(value)
