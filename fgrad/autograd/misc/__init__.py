"""``autograd.misc``: ``flatten`` (``autograd.misc.flatten``), ``const_graph``
(``autograd.misc.tracers``) and the optimizers (``autograd.misc.optimizers``)."""
from .flatten import flatten  # (as autograd: the function shadows its module)
from .tracers import const_graph

__all__ = ["flatten", "const_graph"]
