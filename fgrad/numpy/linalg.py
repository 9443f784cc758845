"""fgrad.numpy.linalg: numpy.linalg with derivatives.

The factorizations (``inv``, ``det``, ``solve``, ``cholesky``, ``eigh``, ``svd``, ``qr``,
``eig``, ``pinv`` ...) are primitives whose forward values are numpy's own; their rules are
written with fgrad.numpy and with these primitives, so they can be differentiated again.
Several outputs (``slogdet``, ``eigh``, ``svd``, ``qr``, ``eig``) travel through
``define_multi``; the public functions give them back as numpy's namedtuples. Everything else
(``norm``, ``lstsq``, ``matrix_power``, ``cond``, ``tensorsolve`` ...) is composed of them.

Conventions (each is also stated on the function it concerns):

* Functions that read only one triangle of a symmetric input (``cholesky``, ``eigh``,
  ``eigvalsh``) are differentiated as functions of the symmetric part ``(a + a^T) / 2``: the
  gradient is symmetric, and a tangent is symmetrised before it is used.
* Eigenvector and singular-vector derivatives divide by eigenvalue (singular-value) gaps. Where
  two values are exactly equal the corresponding term is left out (never ``inf``/``nan``): the
  derivatives of the values themselves stay exact there, the vectors' have no meaning there.
  ``eigvalsh``, ``svdvals`` and ``eigvals`` do not go through the vectors' derivatives at all.
* Singular inputs: ``inv``, ``det``, ``slogdet``, ``solve`` need an invertible matrix for their
  derivative (numpy's ``LinAlgError`` otherwise); ``pinv`` and ``lstsq`` assume full rank.
* Norms at zero: every norm has gradient 0 at ``x = 0`` (the subgradient of least norm), and
  ``ord=0`` (a count) has zero derivative everywhere.
* Only real inputs are differentiated by the decompositions; complex traced input is refused
  by name (``inv``, ``det``, ``solve``, ``matrix_power``, ``multi_dot`` and the products take
  complex values).
"""
import operator

import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec, define, define_multi
from ..tracer import innermost, strip
from .broadcasting import dtype_of, mask, shape_of, unbroadcast
from .namespace import mirror, zero_derivative
from .wrapping import differentiable, unsupported_kwargs, with_numpy_values

_la = _onp.linalg

# numpy's result types (namedtuples, which fgrad treats as pytree nodes)
SlogdetResult = type(_la.slogdet(_onp.eye(1)))
EighResult = type(_la.eigh(_onp.eye(1)))
SVDResult = type(_la.svd(_onp.eye(1)))
QRResult = type(_la.qr(_onp.eye(1)))
EigResult = type(_la.eig(_onp.eye(1)))


# --- helpers ---------------------------------------------------------------------------

def _ndim(x):
    return len(shape_of(x))


def _mT(x):
    """The matrix transpose of the last two axes."""
    return fnp.swapaxes(x, -1, -2)


def _eye(n, like):
    return _onp.eye(n, dtype=dtype_of(like))


def _sym(x):
    return (x + _mT(x)) * 0.5


def _diag(x):
    """The diagonal of the last two axes, shape ``(..., n)``."""
    r = _onp.arange(min(shape_of(x)[-2:]))
    return fnp.getitem(x, (Ellipsis, r, r))


def _diag_embed(d):
    """``(..., n)`` to diagonal matrices ``(..., n, n)``."""
    return fnp.expand_dims(d, -1) * _eye(shape_of(d)[-1], d)


def _lift(x):
    """A stack of scalars ``(...)`` as ``(..., 1, 1)``, to scale a stack of matrices."""
    return fnp.expand_dims(x, (-2, -1))


def _tr(x):
    return fnp.sum(_diag(x), axis=-1)


def _strictly_lower(like):
    n = shape_of(like)[-1]
    return mask(_onp.tri(n, k=-1, dtype=bool), like)


def _gap_inverse(v):
    """``F[..., i, j] = 1 / (v_j - v_i)``, and 0 where ``v_i == v_j`` exactly (the diagonal,
    and exactly repeated values), so no ``inf``/``nan`` enters the rules."""
    d = fnp.expand_dims(v, -2) - fnp.expand_dims(v, -1)
    tie = mask(innermost(d) == 0, d)
    return (1 - tie) / (d + tie)


def _real_only(name, *xs):
    for x in xs:
        if _onp.iscomplexobj(innermost(x)):
            raise NotImplementedError(
                f"fgrad.numpy.linalg.{name}: complex input is not supported on traced values "
                "(its derivative rules are written for real matrices); differentiate the real "
                "and imaginary parts separately, or call it on fgrad.stop_gradient(x).")


def _shifted(f, a, *rest, **params):
    """Spec.call: ``a + 4 I`` with ``a``'s entries in [-1, 1] is far from singular (Gershgorin:
    every eigenvalue is at least 4 - (n - 1) away from 0 for n <= 3)."""
    return f(a + 4 * _eye(shape_of(a)[-1], a), *rest, **params)


def _spd(a):
    """A symmetric positive definite matrix (eigenvalues in [1, 1 + n]) from ``a`` in [-1, 1]."""
    return fnp.matmul(a, _mT(a)) + _eye(shape_of(a)[-1], a)


# --- inverse, determinant, solve -------------------------------------------------------

SQUARE = [(((2, 2),), {}), (((3, 3),), {}), (((2, 3, 3),), {})]

inv = define(
    "linalg.inv", _la.inv,
    [lambda g, ans, a: -fnp.matmul(fnp.matmul(_mT(ans), g), _mT(ans))],
    [lambda t, ans, a: -fnp.matmul(fnp.matmul(ans, t), ans)],
    spec=Spec(SQUARE, domain=(-1.0, 1.0), call=_shifted),
    doc=_la.inv.__doc__)


def _inv_T(a):
    return _mT(inv(a))


det = define(
    "linalg.det", _la.det,
    [lambda g, ans, a: _lift(g * ans) * _inv_T(a)],
    [lambda t, ans, a: ans * fnp.sum(_inv_T(a) * t, axis=(-2, -1))],
    spec=Spec(SQUARE + [(((2, 2),), {"negative": True})], domain=(-1.0, 1.0),
              call=lambda f, a, negative=False: _shifted(f, -a if negative else a)),
    doc=_la.det.__doc__)

_slogdet = define_multi(
    "linalg.slogdet", lambda a: tuple(_la.slogdet(a)),
    lambda a: (shape_of(a)[:-2],) * 2,
    # the sign is locally constant (zero derivative); log|det a| has gradient inv(a)^T
    lambda i, gs, outs, a: _lift(gs[1]) * _inv_T(a),
    lambda ts, outs, a: (None, fnp.sum(_inv_T(a) * ts[0], axis=(-2, -1))),
    spec=Spec([(((2, 2),), {}), (((2, 3, 3),), {})], domain=(-1.0, 1.0), call=_shifted))


@differentiable(_la.slogdet, Spec(SQUARE + [(((3, 3),), {"negative": True})],
                                  domain=(-1.0, 1.0),
                                  call=lambda f, a, negative=False:
                                  _shifted(f, -a if negative else a)),
                name="linalg.slogdet")
def slogdet(a):
    """numpy.linalg.slogdet: the sign has zero derivative, ``logabsdet`` has gradient
    ``inv(a)^T`` (real input)."""
    a = fnp.asarray(a)
    _real_only("slogdet", a)
    return SlogdetResult(*_slogdet(a))


def _solve_parts(x, b):
    """The solution ``x`` as a stack of matrices, and whether it was a stack of vectors
    (numpy 2: ``b`` is a vector only when it is 1-d)."""
    return (fnp.expand_dims(x, -1), True) if _ndim(b) == 1 else (x, False)


def _solve_vjp_a(g, ans, a, b):
    x, vec = _solve_parts(ans, b)
    g = fnp.expand_dims(g, -1) if vec else g
    gb = solve(_mT(a), g)
    return unbroadcast(-fnp.matmul(gb, _mT(x)), shape_of(a))


def _solve_vjp_b(g, ans, a, b):
    if _ndim(b) == 1:
        gb = solve(_mT(a), fnp.expand_dims(g, -1))
        return fnp.reshape(unbroadcast(gb, shape_of(b) + (1,)), shape_of(b))
    return unbroadcast(solve(_mT(a), g), shape_of(b))


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
    doc=_la.solve.__doc__)


mirror(_la, globals(), "linalg.")
