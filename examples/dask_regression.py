"""Logistic regression on a Dask cluster: fgrad's gradient of ordinary numpy code over a data
set larger than one worker's memory.

The loss is written once, with ``fgrad.numpy``; the data is a chunked Dask array, generated
lazily chunk by chunk, so no process ever holds all of it. ``fgrad.value_and_grad`` gives the
loss and the gradient as Dask arrays, lazy; one ``dask.compute`` per step runs both on the
cluster (a ``LocalCluster`` this script starts itself) in one pass over the data. Dask's own
GLM solvers write such gradients by hand; here it is the derivative fgrad takes of numpy
code, as in the seed articles' examples, checked at the start against that hand-written
gradient.

Run:  python examples/dask_regression.py [--rows N] [--memory-limit 300MB] [--steps K] [--threads]
(needs the dask extra: pip install -e ".[dask]")
"""
import argparse
import time

import numpy as onp

import fgrad
import fgrad.numpy as np


def data(rows, features, chunk_rows, seed=0):
    """A chunked data set (X, y) of a logistic model with known weights, made lazily."""
    import dask.array as da

    rs = da.random.RandomState(seed)
    X = rs.normal(size=(rows, features), chunks=(chunk_rows, features))
    w_true = onp.linspace(-1.0, 1.0, features)
    noise = rs.logistic(size=rows, chunks=chunk_rows)
    y = (X @ w_true + noise > 0).astype(float)
    return X, y, w_true


def loss(w, X, y):
    """The mean logistic loss, log(1 + exp(-s z)) with s = +-1: plain numpy code."""
    s = 2.0 * y - 1.0
    return np.mean(np.logaddexp(0.0, -s * (X @ w)))


def hand_gradient(w, X, y):
    """The same gradient written by hand with Dask's own functions (as Dask's GLM solvers
    do): X^T (sigmoid(X w) - y) / n."""
    import dask.array as da

    p = 1.0 / (1.0 + da.exp(-(X @ w)))
    return X.T @ (p - y) / X.shape[0]


def main(argv=None):
    import dask
    from dask.distributed import Client, LocalCluster

    parser = argparse.ArgumentParser(description="logistic regression on a Dask cluster")
    parser.add_argument("--rows", type=int, default=2_500_000)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--chunk-rows", type=int, default=125_000)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--memory-limit", default="300MB", help="per worker")
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--rate", type=float, default=2.0)
    parser.add_argument("--threads", action="store_true",
                        help="workers as threads of this process (quicker to start; the "
                             "memory limit then only bounds what a worker keeps)")
    args = parser.parse_args(argv)

    X, y, w_true = data(args.rows, args.features, args.chunk_rows)
    size_mb = X.nbytes / 1e6
    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1,
                           processes=not args.threads, memory_limit=args.memory_limit,
                           dashboard_address=None)
    with cluster, Client(cluster) as client:
        limit_mb = client.run(lambda dask_worker: dask_worker.memory_manager.memory_limit)
        limit_mb = min(limit_mb.values()) / 1e6
        print(f"data set X: {args.rows} x {args.features} floats = {size_mb:.0f} MB in "
              f"{X.npartitions} chunks; {args.workers} workers, memory limit "
              f"{limit_mb:.0f} MB each")
        value_and_grad = fgrad.value_and_grad(loss)
        w = onp.zeros(args.features)

        # the gradient fgrad takes of numpy code, against the hand-written one
        _, g = value_and_grad(w + 0.1, X, y)
        g, g_hand = dask.compute(g, hand_gradient(w + 0.1, X, y))
        print(f"gradient vs hand-written: max abs difference {onp.max(abs(g - g_hand)):.1e}")

        start = time.perf_counter()
        for step in range(args.steps):
            value, g = dask.compute(*value_and_grad(w, X, y))  # (one pass over the data)
            w = w - args.rate * g
            print(f"step {step}: loss {value:.6f}")
        per_step = (time.perf_counter() - start) / args.steps

        start = time.perf_counter()
        dask.compute(loss(w, X, y))
        forward = time.perf_counter() - start
        print(f"time per step {per_step:.2f} s; Dask's forward pass alone {forward:.2f} s "
              f"({per_step / forward:.2f}x)")
        cos = w @ w_true / (onp.linalg.norm(w) * onp.linalg.norm(w_true))
        print(f"cosine of the fitted weights with the true ones: {cos:.4f}")


if __name__ == "__main__":
    main()
