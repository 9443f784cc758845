"""The workloads' and peers' names, importable without numpy (the command line reads them before it
sizes the thread pools)."""
NAMES = ("scalar_chain", "mlp", "elementwise_1e6", "matmul_chain", "rosenbrock_hessian",
         "tanh_derivatives", "layer_jacobian", "rnn", "logreg", "svi", "per_example",
         "vjp_only_hessian", "taylor_tanh", "around_jit")
PEERS = ("autograd", "jax", "jax.jit", "torch")
