"""``autograd.numpy.numpy_vspaces``: the vector spaces of arrays, ``ArrayVSpace`` and
``ComplexArrayVSpace`` (what ``vspace`` gives for one array or number)."""
from ..vspaces import ArrayVSpace, ComplexArrayVSpace  # noqa: F401

__all__ = ["ArrayVSpace", "ComplexArrayVSpace"]
