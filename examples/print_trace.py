"""Print every operation a function runs, with its value: autograd's ``print_trace`` example,
read off fgrad's recorded tape.

Not from the seed articles: autograd ships this example (``examples/print_trace.py``), built on
``autograd.tracer`` (a ``Node`` subclass that prints itself as the trace reaches it). fgrad
needs no tracer of one's own for it: ``fgrad.make_tape(f)(x)`` keeps the tape that ``grad``
records, with a name for every entry, and printing it is the trace. As in autograd, traces nest:
the tape of ``grad(fun)`` holds the forward pass and then the backward pass's operations.

Run:  python examples/print_trace.py
"""
import fgrad
import fgrad.numpy as np


def avg(x, y):
    return (x + y) / 2


def fun(x):
    y = np.sin(x + x)
    return avg(y, y)


def print_trace(f, x):
    """Each operation ``f`` runs at ``x``, as ``name = primitive(inputs) -> value``."""
    print(fgrad.make_tape(f)(x))
    print()


def main():
    print("fun(x) = avg(sin(x + x), sin(x + x)) at x = 1.23:")
    print_trace(fun, 1.23)
    print("grad(fun) at x = 1.23 (the forward pass, then the backward pass; 2 cos(2x)):")
    print_trace(fgrad.grad(fun), 1.23)


if __name__ == "__main__":
    main()
