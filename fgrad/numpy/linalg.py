"""fgrad.numpy.linalg: numpy.linalg's names; rules for them are added family by family."""
import numpy as _onp

from .namespace import mirror

mirror(_onp.linalg, globals(), "linalg.")
