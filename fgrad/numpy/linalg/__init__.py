"""fgrad.numpy.linalg: numpy.linalg with derivatives.

The factorizations (``inv``, ``det``, ``solve``, ``cholesky``, ``eigh``, ``svd``, ``qr``,
``eig``, ``pinv`` ...) are primitives whose forward values are numpy's own; their rules are
written with fgrad.numpy and with these primitives, so they can be differentiated again.
Several outputs (``slogdet``, ``eigh``, ``svd``, ``qr``, ``eig``) travel through
``define_multi``; the public functions give them back as numpy's namedtuples. Everything else
(``norm``, ``lstsq``, ``matrix_power``, ``cond``, ``tensorsolve`` ...) is composed of them.

Conventions (each is also stated on the function it concerns):

* Functions that read only one triangle of their input (``cholesky``, ``eigh``, ``eigvalsh``)
  are differentiated as the functions numpy computes: the derivative with respect to the
  triangle numpy does not read is zero, and a tangent's entries there are left out, so finite
  differences of numpy's function agree in every direction, not only symmetric ones.
* Eigenvector and singular-vector derivatives divide by eigenvalue (singular-value) gaps. Where
  two values are exactly equal the corresponding term is left out (never ``inf``/``nan``): the
  derivatives of the values themselves stay exact there, the vectors' have no meaning there.
  ``eigvalsh``, ``svdvals`` and ``eigvals`` do not go through the vectors' derivatives at all.
* Singular inputs: ``det``'s derivative is the cofactor matrix ``adj(a)^T`` (the primitive
  ``linalg.cofactors``, computed without inverting), exact at singular matrices and to every
  order. ``inv`` and ``solve`` raise numpy's ``LinAlgError`` at a singular matrix, as numpy
  does; ``slogdet``'s value there is numpy's (sign 0, logabsdet -inf), and its derivative,
  which does not exist, raises ``LinAlgError`` saying so. ``pinv`` and ``lstsq`` at a rank drop
  give the derivative along paths of constant rank (JAX's convention; they are discontinuous
  across a rank change), ``matrix_rank`` has zero derivative.
* Norms at zero: every norm has gradient 0 at ``x = 0`` (the subgradient of least norm), and
  ``ord=0`` (a count) has zero derivative everywhere.
* Complex inputs (JAX's convention), every function: ``eigh``, ``eigvalsh`` and ``cholesky``
  read a hermitian matrix from one triangle, the diagonal's imaginary part taken as zero, as
  numpy does. The phases of complex eigenvectors and singular vectors are arbitrary: the rules
  fix ``V^H dV``'s diagonal at zero (JAX's and autograd's choice), exact for every function
  that does not depend on the phases. ``qr``'s factors are unique (LAPACK's R has a real
  diagonal) and differentiated as they are.
"""

from typing import TYPE_CHECKING, Any

import numpy as _onp

from .solving import (  # noqa: F401
    det, inv, matrix_power, multi_dot, slogdet, solve, tensorinv,
    tensorsolve)
from .decompositions import cholesky, eig, eigh, eigvals, eigvalsh, qr, svd, svdvals  # noqa: F401
from .least_squares import lstsq, pinv  # noqa: F401
from .norms import cond, matrix_norm, matrix_rank, norm, vector_norm  # noqa: F401
from .array_api import (  # noqa: F401
    cross, diagonal, matmul, matrix_transpose, outer, tensordot, trace,
    vecdot)
from ..namespace import mirror

mirror(_onp.linalg, globals(), "linalg.")

if TYPE_CHECKING:  # numpy's other names are filled in above at import: to a type checker, Any
    def __getattr__(name: str) -> Any: ...
