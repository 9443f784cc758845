"""``autograd.numpy.numpy_boxes``: ``ArrayBox``, the class of traced arrays; every traced
array of fgrad's is one (``isinstance(x, ArrayBox)`` says whether ``x`` is being
differentiated)."""
from ...numpy.array_tracer import ArrayTracer as ArrayBox

__all__ = ["ArrayBox"]
