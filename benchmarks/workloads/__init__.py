"""The workloads, in the order the suite runs them (``--only NAME`` picks one by name)."""
from ..names import NAMES
from .around_jit import AROUND_JIT
from .arrays import ELEMENTWISE, MATMUL
from .batched import PER_EXAMPLE
from .inference import SVI
from .jacobians import LAYER_JACOBIAN, ROSENBROCK, VJP_ONLY_HESSIAN
from .nets import LOGREG, MLP, RNN
from .scalar import SCALAR_CHAIN, TANH_DERIVATIVES
from .taylor import TAYLOR_TANH

WORKLOADS = [SCALAR_CHAIN, MLP, ELEMENTWISE, MATMUL, ROSENBROCK, TANH_DERIVATIVES,
             LAYER_JACOBIAN, RNN, LOGREG, SVI, PER_EXAMPLE, VJP_ONLY_HESSIAN,
             TAYLOR_TANH, AROUND_JIT]
BY_NAME = {w.name: w for w in WORKLOADS}
assert tuple(BY_NAME) == NAMES, "benchmarks/names.py lists the workloads in this order"
