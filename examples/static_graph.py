"""The seed's static graph, built once and run on many feeds: h1 = x1*x2, h2 = h1 + x1,
out = h2 / x2.

The seed article declares the graph with placeholders, builds the gradient graph by a reverse
topological sort (``gradients()``), and runs both with an ``Executor`` for a feed dict.
``fgrad.make_graph`` does the same from an ordinary Python function: it runs it once on
example values (the placeholders' shapes and dtypes), recording each numpy call as a node;
``make_graph(value_and_grad(f))`` records the backward pass as nodes too (the gradient
graph), and calling the graph on new values is the executor. ``fgrad.jit`` does all of it
behind a function call, and re-traces where a Python branch comes out differently, which a
static graph cannot do. Last, a training loop sped up by ``jit``, timed beside eager fgrad.

Run:  python examples/static_graph.py
"""
import pathlib
import shutil
import tempfile
import time
import timeit

import numpy

import fgrad
import fgrad.numpy as np
from fgrad.traces.passes import optimize


def graph(x1, x2):
    h1 = x1 * x2
    h2 = h1 + x1
    return h2 / x2


def branch(x, x3, x4):
    """The article's conditional: x * x3 if x > 2, else x4 - x."""
    if x > 2:
        return x * x3
    return x4 - x


def logistic_loss(w, X, y):
    return np.mean(np.log1p(np.exp(-y * (X @ w))))


def train(step, w, X, y, steps=300, lr=0.5):
    for _ in range(steps):
        w = w - lr * step(w, X, y)
    return w


def seconds(fn, repeat=3):
    """The best of ``repeat`` timed calls, in seconds."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def render(dot, name):
    """The DOT source as a PNG where Graphviz's ``dot`` program is installed."""
    exe = shutil.which("dot")
    if exe is None:
        return None
    import subprocess
    out = pathlib.Path(tempfile.gettempdir()) / f"{name}.png"
    subprocess.run([exe, "-Tpng", "-o", str(out)], input=dot, text=True, check=True)
    return out


def main():
    print("1. Placeholders: trace the graph once on example values (float64 scalars)")
    forward = fgrad.make_graph(graph)(0.6, 0.2)
    print("   " + str(forward).replace("\n", "\n   "))

    print("\n2. The gradient graph: value_and_grad's backward pass recorded as nodes,")
    print("   then shortened by the graph passes (dead code, constants, no-ops)")
    full = fgrad.make_graph(fgrad.value_and_grad(graph, argnums=(0, 1)))(0.6, 0.2)
    backward = optimize(full)
    print(f"   ({len(full.nodes)} nodes as traced, {len(backward.nodes)} after the passes)")
    print("   " + str(backward).replace("\n", "\n   "))

    print("\n3. The executor: the gradient graph run on many feeds, no Python of graph() runs")
    for x1, x2 in ((0.6, 0.2), (1.0, 0.5), (2.0, 4.0)):
        out, (g1, g2) = backward(x1, x2)
        print(f"   feed x1 = {x1:g}, x2 = {x2:g}:   out = {float(out):.6g}   "
              f"d out/d x1 = {float(g1):.6g}   d out/d x2 = {float(g2):.6g}")
    print("   (by hand: out = x1 + x1/x2, d/dx1 = 1 + 1/x2, d/dx2 = -x1/x2^2: "
          "3.6, 6, -15 at the first feed)")

    dot = backward.to_dot()
    picture = render(dot, "fgrad_gradient_graph")
    if picture is not None:
        print(f"\n   the gradient graph drawn by Graphviz: {picture}")
    else:
        print(f"\n   Graphviz DOT source ({len(dot.splitlines())} lines; install graphviz's "
              "'dot' to draw it):")
        print("   " + "\n   ".join(dot.splitlines()[:4]) + "\n   ...")

    print("\n4. A Python branch: a static graph holds one side, and a guard says so")
    staged = fgrad.make_graph(branch)(3.0, 4.0, 10.0)
    print("   " + str(staged).replace("\n", "\n   "))
    try:
        staged(1.0, 4.0, 10.0)
    except fgrad.GuardError as e:
        print(f"   replayed at x = 1: GuardError: {e}")
    print("   fgrad.jit traces each side once and picks the graph whose guards hold:")
    step = fgrad.jit(fgrad.value_and_grad(branch, argnums=(0, 1, 2)))
    for x in (3.0, 1.0, 3.5, 0.5):
        value, (dx, dx3, dx4) = step(x, 4.0, 10.0)
        print(f"   x = {x:g}   value {float(value):g}   gradient (d/dx, d/dx3, d/dx4) = "
              f"({float(dx):g}, {float(dx3):g}, {float(dx4):g})")
    graphs = sum(len(g) for g in step.cache.values())
    print(f"   ({graphs} graphs traced for 4 calls)")

    print("\n5. A training loop: 300 gradient steps of logistic regression, X 256 x 16")
    rng = numpy.random.default_rng(0)
    X = rng.standard_normal((256, 16))
    y = numpy.sign(X @ rng.standard_normal(16) + 0.3 * rng.standard_normal(256))
    w0 = numpy.zeros(16)
    eager_step = fgrad.grad(logistic_loss)
    jit_step = fgrad.jit(fgrad.grad(logistic_loss))
    start = time.perf_counter()
    jit_step(w0, X, y)
    first = time.perf_counter() - start
    w_eager, w_jit = train(eager_step, w0, X, y), train(jit_step, w0, X, y)
    same = bool(numpy.array_equal(w_eager, w_jit))
    t_eager = seconds(lambda: train(eager_step, w0, X, y))
    t_jit = seconds(lambda: train(jit_step, w0, X, y))
    print(f"   eager fgrad: {t_eager * 1e3:.1f} ms   fgrad.jit: {t_jit * 1e3:.1f} ms   "
          f"({t_eager / t_jit:.1f}x faster; the first call traced in {first * 1e3:.1f} ms)")
    print(f"   final weights equal bit for bit: {same}; "
          f"final loss {float(logistic_loss(w_jit, X, y)):.4f}")


if __name__ == "__main__":
    main()
