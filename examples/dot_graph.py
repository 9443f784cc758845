"""Draw a function's computation graph with Graphviz: autograd's ``dot_graph`` example, from
fgrad's staged graph.

Not from the seed articles: autograd ships this example (``examples/dot_graph.py``), which
builds a graph with ``autograd.tracer`` and writes Graphviz's DOT text for it. fgrad records
the graph itself: ``fgrad.make_graph(f)(x)`` is the graph as plain data (it prints as code),
and ``.to_dot()`` is its DOT text. The graph of ``grad(f)`` holds the backward pass as nodes.
The files written here render with ``dot -Tpng fun.dot -o fun.png`` where Graphviz is
installed.

Run:  python examples/dot_graph.py
"""
import pathlib

import fgrad
import fgrad.numpy as np


def fun(x):
    y = np.sin(x)
    return (y + np.exp(x) - 0.5) * y


def write_dot(f, x, path):
    """The graph of ``f`` at ``x``, written to ``path`` as DOT; returns the graph."""
    graph = fgrad.make_graph(f)(x)
    pathlib.Path(path).write_text(graph.to_dot() + "\n")
    return graph


def main():
    for f, path in ((fun, "fun.dot"), (fgrad.grad(fun), "grad_fun.dot")):
        graph = write_dot(f, 1.0, path)
        print(f"{path}: {len(graph.nodes)} operations")
        print(graph)
        print()
    print("render with: dot -Tpng fun.dot -o fun.png")


if __name__ == "__main__":
    main()
