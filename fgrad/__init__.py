"""fgrad: exact derivatives of numpy code, with a JAX-like functional API.

    import fgrad
    import fgrad.numpy as np

    f = lambda x1, x2: np.log(x1) + x1 * x2 - np.sin(x2)
    fgrad.grad(f, argnums=(0, 1))(2.0, 5.0)      # (5.5, 1.716...)

See README.md for the transforms and ``fgrad.numpy`` for what is differentiable.
"""
from . import numpy  # noqa: F401  (builds the primitive table)
from .core.errors import (ClosedOverTracerError, ConcretizationError, EscapedTracerError,
                          NoDerivativeRuleError, NotInLibraryError, TracerMutationError)
from .core.pytree import tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten
from .tools.recorded import make_tape
from .core.table import PRIMITIVES, Spec, defbatch, defjvp, deflinear, defvjp
from .user_primitives import primitive
from .numpy.broadcasting import unbroadcast
from .transforms import (float0, grad, hessian, jacfwd, jacobian, jacrev, jvp, linearize,
                         stop_gradient, value_and_grad, vjp)
from .custom import custom_jvp, custom_vjp
from .checkpointing import checkpoint, remat
from .traces.graph import Graph, GuardError
from .traces.staging import make_graph
from .jitting import jit
from .traces.batching import vmap
from .traces.taylor import derivatives, jet
from . import nn, tree_util  # (jax.nn's helpers, jax.tree_util)
from .core.version import __version__  # noqa: F401  (the public fgrad.__version__)

__all__ = ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
           "jacobian", "hessian", "stop_gradient", "float0", "make_tape", "primitive", "defvjp",
           "defjvp", "defbatch",
           "deflinear", "unbroadcast", "Spec", "PRIMITIVES", "tree_flatten", "tree_unflatten",
           "tree_map", "tree_leaves", "tree_structure", "tree_util", "nn", "autograd",
           "NoDerivativeRuleError", "ConcretizationError", "TracerMutationError",
           "EscapedTracerError", "NotInLibraryError", "custom_jvp", "custom_vjp",
           "checkpoint", "remat", "ClosedOverTracerError", "make_graph", "Graph", "GuardError",
           "jit", "vmap", "jet", "derivatives"]


def __getattr__(name):
    # ``fgrad.autograd`` (autograd's spellings, and the switch for libraries written for it)
    # is imported when first named: 3 ms of ``import fgrad``, which a program written for
    # fgrad itself need not pay
    if name == "autograd":
        import importlib
        return importlib.import_module(".autograd", __name__)
    raise AttributeError(f"module 'fgrad' has no attribute {name!r}")
