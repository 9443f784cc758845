"""fgrad.scipy.spatial: ``distance``'s pairwise distances with derivatives in the points."""
import scipy.spatial as _spatial

from . import distance  # noqa: F401
from .. import defining

# scipy.spatial's other functions: scipy's own on plain values, refused by name on traced ones
__getattr__ = defining.plain_only_fallback(
    __name__, _spatial, lambda name: "; fgrad.scipy.spatial.distance has cdist, pdist and "
    "squareform")
