"""The static-graph example without a static graph: h1 = x1*x2, h2 = h1 + x1, out = h2 / x2.

From the seed article on static and dynamic graphs (TensorFlow-style placeholders, a
gradients() function that builds a backward graph by reverse topological sort, and an Executor
that evaluates a fetch list for a feed dict). There the graph is declared first and run later,
so debugging needs a Print node and an if/else needs both branches built in advance. With fgrad
the graph is an ordinary Python function: it runs eagerly, its tape is recorded as it runs
(``fgrad.make_tape`` shows it), ``value_and_grad`` plays the part of gradients() plus the
executor, print() works inside it, and an ``if`` on a traced value just takes one branch.

Run:  python examples/static_graph.py
"""
import fgrad
import fgrad.numpy as np


def graph(x1, x2):
    h1 = x1 * x2
    h2 = h1 + x1
    return h2 / x2


def graph_with_h2(x1, x2):
    """The same graph, also returning the intermediate h2 (the 'fetch_list=[h2]' of the article)."""
    h1 = x1 * x2
    h2 = h1 + x1
    return h2 / x2, h2


def graph_printing(x1, x2):
    h1 = x1 * x2
    h2 = h1 + x1
    print("   inside graph: h2 =", h2)
    return h2 / x2


def branch(x, x3, x4):
    """The article's conditional: x * x3 if x > 2, else x4 - x."""
    if x > 2:
        return x * x3
    return x4 - x


def main():
    print("1. The graph h1 = x1*x2, h2 = h1 + x1, out = h2 / x2, "
          "recorded by running it at (0.6, 0.2):")
    print(fgrad.make_tape(graph)(0.6, 0.2))
    print("   (fgrad names the entries: its x0, x1 are the graph's x1, x2; "
          "v1 is h1, v2 is h2, v3 is out)")

    out, (g1, g2) = fgrad.value_and_grad(graph, argnums=(0, 1))(0.6, 0.2)
    print("\n2. 'sess.run([output, grad], feed_dict={x1: 0.6, x2: 0.2})' is one call:")
    print("   fgrad.value_and_grad(graph, argnums=(0, 1))(0.6, 0.2)")
    print(f"   out = {out:.6g}   d out/d x1 = {g1:.6g}   d out/d x2 = {g2:.6g}")
    print("   (by hand: out = x1 + x1/x2 = 3.6, d/dx1 = 1 + 1/x2 = 6, d/dx2 = -x1/x2^2 = -15)")

    (out, h2), grads = fgrad.value_and_grad(graph_with_h2, argnums=(0, 1), has_aux=True)(0.6, 0.2)
    print("\n3. Fetching an intermediate value: return it as aux (has_aux=True)")
    print(f"   h2 = {h2:.6g}, out = {out:.6g}, gradients {grads[0]:.6g}, {grads[1]:.6g}")
    print("   or just print it inside the function (no Print node needed); while grad runs, the")
    print("   value is a tracer that shows its number:")
    fgrad.grad(graph_printing)(0.6, 0.2)

    x1 = np.array([0.6, 1.0, 2.0])
    x2 = np.array([0.2, 0.5, 4.0])
    _, pull_back = fgrad.vjp(graph, x1, x2)
    d1, d2 = pull_back(np.ones(3))
    print("\n4. Feeding a batch: the same function on arrays, "
          "one vjp gives every element's gradient")
    print(f"   x1 = {x1.tolist()}, x2 = {x2.tolist()}")
    print(f"   out = {graph(x1, x2).round(12).tolist()}")
    print(f"   d out/d x1 = {d1.round(12).tolist()}   d out/d x2 = {d2.round(12).tolist()}")

    print("\n5. Control flow: branch(x, x3, x4) = x * x3 if x > 2 else x4 - x, at x3 = 4, x4 = 10")
    print("   A static graph must build both branches; fgrad's tape records the one taken:")
    for x in (3.0, 1.0):
        side = "x > 2: x * x3" if x > 2 else "x <= 2: x4 - x"
        value, (dx, dx3, dx4) = fgrad.value_and_grad(branch, argnums=(0, 1, 2))(x, 4.0, 10.0)
        print(f"   x = {x:g} ({side})   value {value:g}   gradient (d/dx, d/dx3, d/dx4) = "
              f"({dx:g}, {dx3:g}, {dx4:g})")
        print("   " + str(fgrad.make_tape(branch)(x, 4.0, 10.0)).replace("\n", "\n   "))


if __name__ == "__main__":
    main()
