"""fgrad's benchmark suite: fgrad side by side with plain numpy (forward only, and backprop by
hand) and, where installed, HIPS/autograd, JAX (eager, and ``jit`` as a reference) and
``torch.func``.

    python -m benchmarks                # the full suite (a few minutes)
    python -m benchmarks --quick        # fewer, shorter rounds (under a minute)
    python -m benchmarks --only mlp     # one workload
    python -m benchmarks --json out.json --markdown out.md

Modules: ``backends`` (the libraries), ``workloads`` (one module per family), ``case`` (what a
workload hands the runner), ``runner`` (check, then interleaved timing), ``report`` (tables),
``targets`` (issue 5's ratios), ``liveness`` (is the tape freed), ``profile`` (cProfile of
fgrad on the overhead-bound workloads). Peers: ``pip install -e ".[bench]"``.
"""
