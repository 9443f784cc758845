"""Inverses and linear systems: inv, det, slogdet, solve, matrix_power, tensorsolve, tensorinv,
multi_dot."""
import operator

import numpy as _onp

import fgrad.numpy as fnp
from .. import batch_rules, taylor_rules
from ...core.table import Composed, Spec, define
from ..multi_output import define_multi
from ...core.tracer import value_for_shape, map_tracers
from ..broadcasting import dtype_of, shape_of, unbroadcast, unbroadcast_like
from ..wrapping import differentiable, inverse_permutation, unsupported_kwargs
from .common import (SlogdetResult, _is_complex, _la, _lift, _mT, _ndim, _noted, _real_part,
                     _shift, _shifted)


# --- inverse, determinant, solve -------------------------------------------------------

SQUARE = [(((2, 2),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]


def _inv_composed(a):
    """inv(a) as solve(a, I), for ``jet``: one solve with ``a`` per term (solve's own rule),
    where inv's JVP rule reads the output."""
    shape = shape_of(a)
    return solve(a, _onp.broadcast_to(_onp.eye(shape[-1], dtype=dtype_of(a)), shape))


inv = define(
    "linalg.inv", _la.inv,
    [lambda g, ans, a: -fnp.matmul(fnp.matmul(_mT(ans), g), _mT(ans))],
    [lambda t, ans, a: -fnp.matmul(fnp.matmul(ans, t), ans)],
    spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted),
    doc=_noted(_la.inv, "the derivative -inv(a) da inv(a) needs an invertible a (at a "
                        "singular one numpy raises LinAlgError); complex input is supported."),
             batch=batch_rules.stacked(2), taylor=Composed(_inv_composed))


def _inv_T(a):
    return _mT(inv(a))


def _cofactors_impl(a):
    """numpy's value of the cofactor matrix ``adj(a)^T`` (the gradient of ``det``) at every
    ``a``, singular ones included, without inverting: 2 x 2 by its formula, larger from the
    SVD ``a = U diag(s) Vh``, ``adj(a) = det(Vh) Vh^H diag(prod_(j != i) s_j) det(U) U^H``."""
    n = a.shape[-1]
    if n <= 1:
        return _onp.ones_like(a)
    if n == 2:  # (numpy's functions only, so that Dask's and CuPy's arrays stay theirs)
        rows = [_onp.stack([a[..., 1, 1], -a[..., 1, 0]], axis=-1),
                _onp.stack([-a[..., 0, 1], a[..., 0, 0]], axis=-1)]
        return _onp.stack(rows, axis=-2)
    u, s, vh = _la.svd(a)
    ones = _onp.ones(s.shape[:-1] + (1,), s.dtype)
    before = _onp.concatenate([ones, _onp.cumprod(s[..., :-1], axis=-1)], axis=-1)
    after = _onp.concatenate([_onp.cumprod(s[..., :0:-1], axis=-1)[..., ::-1], ones], axis=-1)
    scale = (_la.det(u) * _la.det(vh))[..., None, None]
    adj = scale * _onp.matmul(_onp.conj(_onp.swapaxes(vh, -1, -2)) * (before * after)[..., None, :],
                              _onp.conj(_onp.swapaxes(u, -1, -2)))
    return _onp.swapaxes(adj, -1, -2)


def _cofactors_jvp(t, ans, a):
    """The cofactors' derivative along ``t``: row k of ``a`` replaced by row k of ``t``, the
    cofactors of that matrix outside row k, summed over k (det is linear in each row). It
    calls ``cofactors`` again, so every order is exact, at singular matrices too. The map is
    det's Hessian, which is symmetric: the same function is the VJP."""
    n = shape_of(a)[-1]
    row = _onp.eye(n, dtype=bool)[:, :, None]  # row[k, i, :]: i == k
    replaced = fnp.where(row, fnp.expand_dims(t, -3), fnp.expand_dims(a, -3))
    return fnp.sum(fnp.where(row, 0, cofactors(replaced)), axis=-3)


cofactors = define(
    "linalg.cofactors", _cofactors_impl,
    [lambda g, ans, a: _cofactors_jvp(g, ans, a)], [_cofactors_jvp],
    spec=Spec(SQUARE + [(((4, 4),), {})], domain=(-1.0, 1.0)),
    doc="The cofactor matrix adj(a)^T of a square matrix (or a stack): det's gradient, "
        "defined at every matrix, singular ones included.", batch=batch_rules.stacked(2))

det = define(
    "linalg.det", _la.det,
    [lambda g, ans, a: _lift(g) * cofactors(a)],
    [lambda t, ans, a: fnp.sum(cofactors(a) * t, axis=(-2, -1))],
    spec=Spec(SQUARE + [(((2, 2),), {"negative": True})], domain=(-1.0, 1.0),
              call=lambda f, a, negative=False: _shifted(f, -a if negative else a)),
    doc=_noted(_la.det, "the gradient is the cofactor matrix adj(a)^T, computed without "
                        "inverting, so it is exact at singular matrices too, and so is every "
                        "higher derivative (the cofactors' own rule replaces rows, no "
                        "division); complex input is supported."), batch=batch_rules.stacked(2))


def _log_det_gradient(a):
    """inv(a)^T, which a singular ``a`` has not: its error says so and what to do."""
    try:
        return _inv_T(a)
    except _la.LinAlgError:
        raise _la.LinAlgError(
            "fgrad.numpy.linalg.slogdet: the derivative of logabsdet is inv(a)^T, which does "
            "not exist at a singular matrix (numpy gives sign 0 and logabsdet -inf there). "
            "Differentiate det instead, whose derivative (the cofactor matrix) exists at every "
            "matrix, or keep a away from singular matrices (a + eps * I).") from None


# For real input the sign is locally constant (zero derivative) and log|det a| has gradient
# inv(a)^T. For complex input d log det a = tr(inv(a) da) =: tau, of which log|det a| takes
# the real part and the sign (det a / |det a|) turns by the imaginary part: d sign =
# sign * i Im(tau); the VJP is the transpose under fgrad's pairing Re sum(x * y).

def _slogdet_vjp(i, gs, outs, a):
    gsign, glog = gs
    if _is_complex(a):
        c = fnp.real(glog) + 1j * fnp.imag(gsign * outs[0])
        return _lift(c) * _log_det_gradient(a)
    return _lift(glog) * _log_det_gradient(a)


def _slogdet_jvp(ts, outs, a):
    tau = fnp.sum(_log_det_gradient(a) * ts[0], axis=(-2, -1))
    if _is_complex(a):
        return _slogdet(a)[0] * (1j * fnp.imag(tau)), fnp.real(tau)
    return None, tau


_slogdet = define_multi(
    "linalg.slogdet", lambda a: tuple(_la.slogdet(a)),
    lambda a: (shape_of(a)[:-2],) * 2, _slogdet_vjp, _slogdet_jvp,
    spec=Spec([(((2, 2),), {}), (((2, 3, 3),), {})], domain=(-1.0, 1.0), call=_shifted),
    batch=batch_rules.stacked(2), jvp_reads_outputs=False)


@differentiable(_la.slogdet, Spec(SQUARE + [(((3, 3),), {"negative": True})],
                                   domain=(-1.0, 1.0),
                                   call=lambda f, a, negative=False:
                                   _shifted(f, -a if negative else a)),
                 name="linalg.slogdet")
def slogdet(a):
    """numpy.linalg.slogdet: for real input the sign has zero derivative and ``logabsdet``
    has gradient ``inv(a)^T``; for complex input ``logabsdet`` and the sign (a phase) take
    the real and imaginary parts of ``d log det a = tr(inv(a) da)``."""
    a = fnp.asarray(a)
    sign, logabsdet = _slogdet(a)
    return SlogdetResult(sign, _real_part(logabsdet))  # (packed with the complex sign)


def _solve_parts(x, b):
    """The solution ``x`` as a stack of matrices, and whether it was a stack of vectors
    (numpy 2: ``b`` is a vector only when it is 1-d)."""
    return (fnp.expand_dims(x, -1), True) if _ndim(b) == 1 else (x, False)


def _solve_vjp_a(g, ans, a, b):
    x, vec = _solve_parts(ans, b)
    g = fnp.expand_dims(g, -1) if vec else g
    gb = solve(_mT(a), g)
    return unbroadcast_like(-fnp.matmul(gb, _mT(x)), a)


def _solve_vjp_b(g, ans, a, b):
    if _ndim(b) == 1:
        gb = solve(_mT(a), fnp.expand_dims(g, -1))
        return fnp.reshape(unbroadcast(gb, shape_of(b) + (1,)), shape_of(b))
    return unbroadcast_like(solve(_mT(a), g), b)


def _solve_jvp_a(t, ans, a, b):
    x, vec = _solve_parts(ans, b)
    dx = -solve(a, fnp.matmul(t, x))
    return fnp.reshape(dx, shape_of(ans)) if vec else dx


def _solve_jvp_b(t, ans, a, b):
    dx = solve(a, t)
    return dx if shape_of(dx) == shape_of(ans) else fnp.broadcast_to(dx, shape_of(ans))


solve = define(
    "linalg.solve", _la.solve, [_solve_vjp_a, _solve_vjp_b], [_solve_jvp_a, _solve_jvp_b],
    spec=Spec([(((2, 2), (2,)), {}), (((3, 3), (3, 2)), {}), (((2, 3, 3), (3,)), {}),
               (((2, 2, 2), (2, 2, 1)), {}), (((2, 2), (3, 2, 2)), {})],
              domain=(-1.0, 1.0), call=_shifted),
    doc=_noted(_la.solve, "derivatives in a (-inv(a) da x) and b, for b a vector (1-d) or "
                          "a stack of matrices, batch dimensions broadcast; a must be "
                          "invertible; complex input is supported."), batch=batch_rules.solve_like,
    taylor=taylor_rules.linear_equation(taylor_rules.summed([_solve_jvp_a, _solve_jvp_b]),
                                        rhs=(1,)))


# --- powers ---------------------------------------------------------------------------

def _square(a):
    shape = shape_of(a)
    if len(shape) < 2 or shape[-1] != shape[-2]:
        raise _la.LinAlgError("Last 2 dimensions of the array must be square")


@differentiable(_la.matrix_power, Spec([(((2, 2),), {"n": 3}), (((3, 3),), {"n": 2}),
                                         (((2, 2, 2),), {"n": 5}), (((2, 2),), {"n": -1}),
                                         (((3, 3),), {"n": -3}), (((2, 2),), {"n": 1})],
                                        domain=(-1.0, 1.0), call=_shifted),
                 name="linalg.matrix_power", numpy_values=True)
def matrix_power(a, n):
    """numpy.linalg.matrix_power, by numpy's own sequence of products (and ``inv`` for
    negative ``n``); ``n = 0`` gives the identity, with zero derivative."""
    a = fnp.asarray(a)
    try:
        n = operator.index(n)
    except TypeError as e:
        raise TypeError("exponent must be an integer") from e
    _square(a)
    if n == 0:  # (identities: from the shape and dtype, no value read)
        return _la.matrix_power(value_for_shape(a), 0)
    if n < 0:
        a, n = inv(a), -n
    result, z = None, None
    while n > 0:
        z = a if z is None else fnp.matmul(z, z)
        n, bit = divmod(n, 2)
        if bit:
            result = z if result is None else fnp.matmul(result, z)
    return result


# --- tensor equations, chains of products ---------------------------------------------------

def _tensor_call(f, a, *rest, shape, **params):
    """Spec.call: a well-conditioned square draw, as the tensor of ``shape`` that
    ``tensorsolve``/``tensorinv`` turn back into it (after moving ``axes`` to the end)."""
    order = list(range(len(shape)))
    for k in params.get("axes") or ():
        order.remove(k)
        order.insert(len(shape), k)
    t = fnp.reshape(a + _shift(a), tuple(shape[i] for i in order))
    return f(fnp.transpose(t, inverse_permutation(order)), *rest, **params)


@differentiable(_la.tensorsolve, Spec([(((6, 6), (2, 3)), {"shape": (2, 3, 6)}),
                                        (((4, 4), (4,)), {"shape": (4, 2, 2)}),
                                        (((4, 4), (2, 2)), {"shape": (2, 2, 2, 2),
                                                            "axes": (0, 2)})],
                                       domain=(-1.0, 1.0), call=_tensor_call),
                 name="linalg.tensorsolve", numpy_values=True)
def tensorsolve(a, b, axes=None):
    """numpy.linalg.tensorsolve, by numpy's reshapes around ``solve``."""
    a, b = fnp.asarray(a), fnp.asarray(b)
    an = _ndim(a)
    if axes is not None:
        order = list(range(an))
        for k in axes:
            order.remove(k)
            order.insert(an, k)
        a = fnp.transpose(a, order)
    oldshape = shape_of(a)[-(an - _ndim(b)):]
    n = int(_onp.prod(oldshape, dtype=int))
    if int(_onp.prod(shape_of(a), dtype=int)) != n ** 2:
        raise _la.LinAlgError("Input arrays must satisfy the requirement "
                              "prod(a.shape[b.ndim:]) == prod(a.shape[:b.ndim])")
    x = solve(fnp.reshape(a, (n, n)), fnp.ravel(b))
    return fnp.reshape(x, oldshape)


@differentiable(_la.tensorinv, Spec([(((6, 6),), {"shape": (2, 3, 6)}),
                                      (((4, 4),), {"shape": (4, 2, 2), "ind": 1}),
                                      (((4, 4),), {"shape": (2, 2, 2, 2)})],
                                     domain=(-1.0, 1.0), call=_tensor_call),
                 name="linalg.tensorinv", numpy_values=True)
def tensorinv(a, ind=2):
    """numpy.linalg.tensorinv, by numpy's reshapes around ``inv``."""
    a = fnp.asarray(a)
    shape = shape_of(a)
    if ind <= 0:
        raise ValueError("Invalid ind argument.")
    invshape = shape[ind:] + shape[:ind]
    n = int(_onp.prod(shape[ind:], dtype=int))
    return fnp.reshape(inv(fnp.reshape(a, (n, -1))), invshape)


@differentiable(_la.multi_dot, Spec([(((2, 3), (3, 4), (4, 2)), {}),
                                      (((3,), (3, 2), (2,)), {}), (((2, 2), (2, 3)), {}),
                                      (((3,), (3, 4), (4, 2), (2, 3)), {})],
                                     call=lambda f, *xs: f(list(xs))),
                 name="linalg.multi_dot", numpy_values=True)
def multi_dot(arrays, *, out=None):
    """numpy.linalg.multi_dot (numpy's values, from its cheapest order of products)."""
    unsupported_kwargs("linalg.multi_dot", {"out": out})
    arrays = [fnp.asarray(a) for a in arrays]
    _la.multi_dot([map_tracers(a, value_for_shape) for a in arrays])  # numpy's errors (shapes)
    result = arrays[0]
    for a in arrays[1:]:
        result = fnp.dot(result, a)
    return result
