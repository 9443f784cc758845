"""fgrad on CuPy arrays against numpy arrays: grad of the 1e6-element chain and of the
256-wide MLP, to be run where a GPU exists (CI has none).

    python -m benchmarks.gpu [--rounds N]

Each row is the median of ``--rounds`` calls after a warm-up, with the GPU synchronised
before the clock stops; the ratio is CuPy's time over numpy's.
"""
import argparse
import statistics
import time

import numpy

import fgrad
import fgrad.numpy as fnp

from .workloads.arrays import elementwise_chain
from .workloads.nets import mlp_loss, mlp_params


def _median_seconds(fn, sync, rounds):
    fn()
    sync()
    times = []
    for _ in range(rounds):
        start = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def cases(xp):
    """name -> a call of fgrad's derivative on arrays of the library ``xp``."""
    rng = numpy.random.default_rng(0)
    x = xp.asarray(rng.uniform(-2, 2, size=1_000_000))
    chain = fgrad.grad(lambda v: elementwise_chain(fnp, v))
    params = fgrad.tree_util.tree_map(xp.asarray, mlp_params(rng, 256))
    xb, yb = (xp.asarray(rng.normal(size=(128, 256))) for _ in range(2))
    mlp = fgrad.grad(lambda p: mlp_loss(fnp, p, xb, yb))
    return {"grad of the 1e6 chain": lambda: chain(x), "grad of the 256-wide MLP":
            lambda: mlp(params)}


def main(argv=None):
    import cupy

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=20)
    args = parser.parse_args(argv)
    sync = cupy.cuda.Device().synchronize
    on_cpu, on_gpu = cases(numpy), cases(cupy)
    print(f"{'workload':28s} {'numpy':>10s} {'cupy':>10s} {'ratio':>7s}")
    for name in on_cpu:
        t_cpu = _median_seconds(on_cpu[name], lambda: None, args.rounds)
        t_gpu = _median_seconds(on_gpu[name], sync, args.rounds)
        print(f"{name:28s} {t_cpu * 1e3:8.2f}ms {t_gpu * 1e3:8.2f}ms {t_gpu / t_cpu:7.3f}")


if __name__ == "__main__":
    main()
