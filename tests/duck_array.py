"""A minimal array library of its own, for the tests: ``Duck`` implements numpy's dispatch
protocols the way CuPy does, without a GPU. It holds an ndarray, answers numpy's functions
and ufuncs with Duck arrays (a 0-d result a 0-d Duck), is mutable (``d[i] = v``), and, like
CuPy, refuses to be converted to numpy implicitly, so any place where fgrad would turn it
into an ndarray fails loudly."""
import numpy as onp
from numpy.lib.mixins import NDArrayOperatorsMixin


class ImplicitConversion(TypeError):
    pass


def _unwrap(v):
    if isinstance(v, Duck):
        return v.a
    if type(v) in (list, tuple):
        return type(v)(_unwrap(e) for e in v)
    if type(v) is dict:
        return {k: _unwrap(e) for k, e in v.items()}
    return v


def _wrap(v):
    if isinstance(v, (onp.ndarray, onp.generic)) and not isinstance(v, onp.bool_):
        return Duck(v)
    if type(v) in (list, tuple):
        return type(v)(_wrap(e) for e in v)
    return v


class Duck(NDArrayOperatorsMixin):
    __array_priority__ = 20

    def __init__(self, a):
        self.a = onp.asarray(a)

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    nbytes = property(lambda self: self.a.nbytes)
    T = property(lambda self: Duck(self.a.T))
    real = property(lambda self: Duck(self.a.real))
    imag = property(lambda self: Duck(self.a.imag))

    def __array__(self, dtype=None, copy=None):
        raise ImplicitConversion("Duck: implicit conversion to a numpy array is not allowed "
                                 "(as CuPy); use .get()")

    def get(self):
        return self.a.copy()

    def _known(self, values):
        return all(isinstance(v, (Duck, onp.ndarray, onp.generic, int, float, complex, bool,
                                  list, tuple, type(None), slice, str, type(Ellipsis)))
                   for v in values)

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        if not self._known(inputs):
            return NotImplemented
        out = kwargs.get("out")
        result = getattr(ufunc, method)(*_unwrap(inputs), **_unwrap(kwargs))
        if out is not None:
            return out[0] if len(out) == 1 else out
        return _wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if not all(issubclass(t, (Duck, onp.ndarray)) for t in types):
            return NotImplemented
        return _wrap(func(*_unwrap(args), **_unwrap(kwargs)))

    def __getitem__(self, idx):
        return _wrap(self.a[_unwrap(idx)])

    def __setitem__(self, idx, v):
        self.a[_unwrap(idx)] = _unwrap(v)

    def __len__(self):
        return len(self.a)

    def __iter__(self):
        return (_wrap(v) for v in self.a)

    def __bool__(self):
        return bool(self.a)

    def __float__(self):
        return float(self.a)

    def __int__(self):
        return int(self.a)

    def __index__(self):
        return self.a.__index__()

    def __repr__(self):
        return f"Duck({self.a!r})"

    def copy(self):
        return Duck(self.a.copy())

    def astype(self, dtype, copy=True):
        return Duck(self.a.astype(dtype, copy=copy))

    def reshape(self, *shape, **kwargs):
        return Duck(self.a.reshape(*shape, **kwargs))

    def ravel(self):
        return Duck(self.a.ravel())

    def conj(self):
        return Duck(self.a.conj())

    def sum(self, *args, **kwargs):
        return _wrap(self.a.sum(*args, **kwargs))

    def any(self, *args, **kwargs):
        return self.a.any(*args, **kwargs)

    def all(self, *args, **kwargs):
        return self.a.all(*args, **kwargs)

    def item(self):
        return self.a.item()
