"""The staged graphs of the benchmark's workloads: node counts before and after the graph
passes, guards, and what a first ``jit`` call costs beside one eager call.

    python -m benchmarks.graph_sizes [--rounds N]

For each workload, fgrad's own derivative function (the one ``python -m benchmarks`` times) is
traced by ``make_graph``; the table gives its nodes as traced and after
``fgrad.traces.passes.optimize``, its guards, whether the replay equals the eager result bit for bit, the first call of a fresh
``jit`` of it (trace, passes and code generation) and one eager call, and a replay by the
interpreter (``graph.interpret``) over one by the generated code, each the median of
``--rounds`` runs. These are one-process figures, for the sizes of the graphs; the
timings that targets are held to come from the full suite.
"""
import argparse
import statistics
import time

import numpy

import fgrad
import fgrad.numpy as fnp
from fgrad.traces.passes import optimize

from .workloads.arrays import elementwise_chain, matmul_chain
from .workloads.inference import elbo
from .workloads.jacobians import rosenbrock
from .workloads.nets import logreg_loss, mlp_loss, mlp_params, rnn_loss
from .workloads.scalar import chain


def cases():
    """name -> (derivative function, arguments), as the suite builds them (full sizes)."""
    rng = numpy.random.default_rng(0)
    out = {"scalar_chain": (fgrad.grad(lambda v: chain(fnp, v, 250)), (numpy.float64(0.3),))}
    for width, batch in ((16, 8), (256, 128)):
        p = mlp_params(rng, width)
        x, y = rng.normal(size=(batch, width)), rng.normal(size=(batch, width))
        out[f"mlp {width}"] = (fgrad.value_and_grad(lambda p, x, y: mlp_loss(fnp, p, x, y)),
                               (p, x, y))
    prn = {"W": 0.1 * rng.normal(size=(32, 32)), "U": rng.normal(size=(8, 32)),
           "b": numpy.zeros(32)}
    xs, h0 = [rng.normal(size=8) for _ in range(200)], numpy.zeros(32)
    out["rnn"] = (fgrad.grad(lambda p, xx, hh: rnn_loss(fnp, p, xx, hh)), (prn, xs, h0))
    X, y = rng.normal(size=(256, 16)), numpy.sign(rng.normal(size=256))
    out["logreg step"] = (fgrad.grad(lambda w, XX, yy: logreg_loss(fnp, w, XX, yy)),
                          (numpy.zeros(16), X, y))
    out["elementwise_1e6"] = (fgrad.grad(lambda v: elementwise_chain(fnp, v)),
                              (rng.uniform(-2, 2, size=1_000_000),))
    As = [rng.normal(size=(512, 512)) / numpy.sqrt(512) for _ in range(10)]
    out["matmul_chain"] = (fgrad.grad(lambda a, X: matmul_chain(fnp, a, X)),
                           (As, rng.normal(size=(512, 512))))
    out["rosenbrock_hessian"] = (fgrad.hessian(lambda x: rosenbrock(fnp, x)),
                                 (rng.uniform(-1, 1, size=50),))
    eps, Xs = rng.normal(size=(500, 40)), rng.normal(size=(100, 20))
    ys = numpy.sign(rng.normal(size=100))
    out["svi step"] = (fgrad.grad(lambda p: elbo(fnp, p, eps, Xs, ys)), (numpy.zeros(80),))
    return out


def _seconds(fn):
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def measure(f, args, rounds):
    graph = fgrad.make_graph(f)(*args)
    short = optimize(graph)
    want = fgrad.tree_flatten(f(*args))[0]
    got = fgrad.tree_flatten(short(*args))[0]
    same = all(numpy.array_equal(a, b) for a, b in zip(want, got))
    first = statistics.median(_seconds(lambda: fgrad.jit(f)(*args)) for _ in range(rounds))
    eager = statistics.median(_seconds(lambda: f(*args)) for _ in range(rounds))
    leaves = fgrad.tree_flatten(args)[0]
    run = short.compile()
    generated = statistics.median(_seconds(lambda: run(*leaves)) for _ in range(rounds))
    interpreted = statistics.median(_seconds(lambda: short.interpret(leaves))
                                    for _ in range(rounds))
    return (len(graph.nodes), len(short.nodes), len(short.guards), same, first, eager,
            interpreted / generated)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m benchmarks.graph_sizes")
    p.add_argument("--rounds", type=int, default=5)
    args = p.parse_args(argv)
    print("| workload | nodes traced | after passes | guards | replay == eager | "
          "jit first call | eager call | first / eager | interpreted / generated |")
    print("|---|---|---|---|---|---|---|---|---|")
    for name, (f, xs) in cases().items():
        n0, n1, guards, same, first, eager, interp = measure(f, xs, args.rounds)
        print(f"| {name} | {n0} | {n1} | {guards} | {same} | {first * 1e3:.2f} ms | "
              f"{eager * 1e3:.2f} ms | {first / eager:.2f}x | {interp:.2f}x |")


if __name__ == "__main__":
    main()
