"""Weighted counts: ``bincount`` is linear in its weights (each bin sums the weights that land
in it); which bin an entry lands in is an integer with no derivative."""
import numpy as _onp

import fgrad.numpy as fnp
from ..table import Spec
from ..tracer import innermost
from .wrapping import differentiable

_BINS = _onp.array([0, 2, 2, 3])


@differentiable(_onp.bincount,
                Spec([(((4,),), {}), (((4,),), {"minlength": 6})],
                     call=lambda f, w, **p: f(_BINS, weights=w, **p)), numpy_values=True)
def bincount(x, weights=None, minlength=0):
    """Differentiable in ``weights``: bin ``k`` is the sum of the weights of the entries equal
    to ``k``. ``x`` holds integers, so it has no derivative."""
    x = _onp.asarray(innermost(x))
    if weights is None:
        return _onp.bincount(x, minlength=minlength)
    n = max(int(x.max(initial=-1)) + 1, int(minlength))
    weights = fnp.asarray(weights)
    return fnp.index_add(_onp.zeros(n, _onp.result_type(innermost(weights), float)), weights, x)
