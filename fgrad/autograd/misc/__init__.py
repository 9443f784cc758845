"""``autograd.misc``: ``flatten`` (``autograd.misc.flatten``) and the optimizers
(``autograd.misc.optimizers``)."""
from .flatten import flatten  # (as autograd: the function shadows its module)

__all__ = ["flatten"]
