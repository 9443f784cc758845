"""Where fgrad's time goes on the overhead-bound workloads: ``python -m benchmarks.hotspots``.

For the 1000-op scalar chain, the small MLP (width 16, batch 8), the 1e6-element chain and one
step of the logistic regression (the loop's gradient, 200 times per training run):

1. a split of one ``grad`` call, timed without a profiler: numpy's own work (the forward
   alone), the forward pass while recording (``fgrad.vjp``, which records and stops), and the
   backward pass (``grad`` minus that), each per primitive call where the workload counts them;
2. ``cProfile`` of repeated ``grad`` calls: the top functions by own time (``tottime``), with
   their share of the total and their calls per ``grad`` call. cProfile adds its own cost to
   every Python call, so the shares of small, often-called functions are inflated; read them
   as where the calls go, and the split above as the real cost.
"""
import argparse
import cProfile
import os
import pstats
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")  # as python -m benchmarks does (before numpy loads)

import numpy  # noqa: E402

import fgrad  # noqa: E402
import fgrad.numpy as fnp  # noqa: E402

from .workloads.arrays import elementwise_chain  # noqa: E402
from .workloads.nets import logreg_loss, mlp_loss, mlp_params  # noqa: E402
from .workloads.scalar import chain  # noqa: E402


def _best(fn, repeat, number):
    """Smallest mean time of ``number`` calls over ``repeat`` tries (least disturbed)."""
    best = float("inf")
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(number):
            fn()
        best = min(best, (time.perf_counter() - t0) / number)
    return best


def subjects():
    """name -> (fgrad function of one argument, its argument, numpy forward, primitive calls,
    calls to profile)."""
    rng = numpy.random.default_rng(0)
    params = mlp_params(rng, 16)
    x, y = rng.standard_normal((8, 16)), rng.standard_normal((8, 16))
    big = numpy.random.default_rng(4).uniform(-2.0, 2.0, 1_000_000)
    X = rng.standard_normal((256, 16))
    labels = numpy.sign(rng.standard_normal(256))
    w0 = numpy.zeros(16)
    # mlp: 3 x (matmul, add) + 2 tanh + subtract, multiply, mean = 11 primitive calls
    return {
        "scalar_chain": (lambda v: chain(fnp, v, 250), 0.3,
                         lambda: chain(numpy, numpy.float64(0.3), 250), 1000, 50),
        "mlp_small": (lambda p: mlp_loss(fnp, p, x, y), params,
                      lambda: mlp_loss(numpy, params, x, y), 11, 2000),
        "elementwise_1e6": (lambda v: elementwise_chain(fnp, v), big,
                            lambda: elementwise_chain(numpy, big), 21, 5),
        # matmul, multiply, negative, exp, add, log, mean
        "logreg_step": (lambda w: logreg_loss(fnp, w, X, labels), w0,
                        lambda: logreg_loss(numpy, w0, X, labels), 7, 2000),
    }


def split(name, f, arg, forward, ops):
    g = fgrad.grad(f)
    record = lambda: fgrad.vjp(f, arg)  # noqa: E731  records the tape, no backward pass
    g(arg)
    n = 1 if name == "elementwise_1e6" else 20
    t_np = _best(forward, 5, n * 10)
    t_rec = _best(record, 5, n)
    t_grad = _best(lambda: g(arg), 5, n)
    rows = [("numpy forward", t_np), ("fgrad forward, recording", t_rec),
            ("fgrad backward (grad - recording)", t_grad - t_rec), ("fgrad grad, total", t_grad)]
    print(f"\n== {name}: one grad call, {ops} primitive calls ==")
    for label, t in rows:
        print(f"  {label:36s} {t * 1e6:10.1f} µs   {t / ops * 1e6:8.2f} µs per primitive call")
    return dict(rows)


def profile(name, f, arg, calls, top):
    g = fgrad.grad(f)
    g(arg)
    prof = cProfile.Profile()
    prof.enable()
    for _ in range(calls):
        g(arg)
    prof.disable()
    st = pstats.Stats(prof)
    total = st.total_tt
    rows = sorted(st.stats.items(), key=lambda kv: kv[1][2], reverse=True)[:top]
    print(f"-- cProfile, {calls} grad calls, {total:.2f} s under the profiler; top {top} by own "
          "time")
    print(f"  {'own %':>6s} {'cum %':>6s} {'calls/grad':>10s}  function")
    for (path, line, func), (cc, nc, tt, ct, callers) in rows:
        where = path.split("/fgrad/")[-1] if "/fgrad/" in path else path.split("/")[-1]
        print(f"  {100 * tt / total:6.1f} {100 * ct / total:6.1f} {nc / calls:10.1f}  "
              f"{func} ({where}:{line})")


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.hotspots", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--top", type=int, default=15)
    p.add_argument("--only", default=None, help="comma-separated: scalar_chain, mlp_small, "
                   "elementwise_1e6, logreg_step")
    args = p.parse_args(argv)
    chosen = subjects()
    if args.only:
        chosen = {k: v for k, v in chosen.items() if k in args.only.split(",")}
    for name, (f, arg, forward, ops, calls) in chosen.items():
        split(name, f, arg, forward, ops)
        profile(name, f, arg, calls, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
