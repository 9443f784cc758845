"""The evaluation trace of f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at (2, 5), read off fgrad's tape.

From the seed articles on the Function/Variable design (forward primal trace, reverse adjoint
trace) and on the CMU "needle" computation graph (tangent trace, adjoints and partial
adjoints). Those articles typed the tables in by hand and built a Variable class, a
BackwardNode and a breadth-first backward walk to compute them. Here every number is printed
from the tape fgrad itself records: ``fgrad.make_tape(f)(2.0, 5.0)`` gives the entries,
``tape.tangents(1.0, 0.0)`` one forward sweep and ``tape.adjoints(1.0)`` one backward sweep.

Run:  python examples/evaluation_trace.py
"""
import fgrad
import fgrad.numpy as np


def f(x1, x2):
    return np.log(x1) + x1 * x2 - np.sin(x2)


def local_partial(entry, k, tape):
    """d entry / d (its k-th input), evaluated at the recorded values, by fgrad itself: the
    entry's primitive is looked up in fgrad.numpy and differentiated in its k-th argument."""
    values = [tape[a].value if isinstance(a, str) else a for a in entry.inputs]
    prim = getattr(np, entry.primitive)
    return fgrad.grad(lambda *xs: prim(*xs, **(entry.params or {})), argnums=k)(*values)


def num(v):
    """A number as the articles print it: 3 decimals, trailing zeros dropped (5.5, 1.716)."""
    text = f"{float(v):.3f}".rstrip("0").rstrip(".")
    return "0" if text == "-0" else text


def main():
    tape = fgrad.make_tape(f)(2.0, 5.0)
    entries = list(tape)                      # x0, x1, v1, v2, ...
    width = max(len(e.expression()) for e in entries)

    print("f(x1, x2) = ln(x1) + x1*x2 - sin(x2) at (x1, x2) = (2, 5)")
    print("fgrad numbers the arguments from 0: its x0 is the article's x1, "
          "its x1 the article's x2.")

    print("\n1. Forward primal trace: print(fgrad.make_tape(f)(2.0, 5.0))")
    print(tape)
    print(f"   y = {num(tape.value)}")

    # Forward mode: one sweep of the tape per input direction; (1, 0) is d/dx1.
    dots = tape.tangents(1.0, 0.0)
    print("\n2. Forward tangent trace, dv/dx1 for every entry: tape.tangents(1.0, 0.0)")
    print(f"   {'entry':<{width + 7}}  {'value':>8}  {'dv/dx1':>7}")
    for e in entries:
        print(f"   {e.name:>3} = {e.expression():<{width}}  {num(e.value):>8}"
              f"  {num(dots[e.name]):>7}")
    print(f"   dy/dx1 = {num(dots[tape.outputs[0]])}")
    dy_dx2 = tape.tangents(0.0, 1.0)[tape.outputs[0]]
    print(f"   A second sweep, tape.tangents(0.0, 1.0), gives dy/dx2 = {num(dy_dx2)}:"
          " forward mode needs one sweep per input.")

    # Reverse mode: one backward sweep gives the adjoint of every entry, inputs included.
    bars = tape.adjoints(1.0)
    print("\n3. Reverse adjoint trace, adjoint = dy/dv: tape.adjoints(1.0), from the output back")
    print(f"   bar {tape.outputs[0]} = 1   (the output's adjoint starts at 1)")
    partials = {e.name: [] for e in entries}
    for e in reversed(tape.entries):
        for k, a in enumerate(e.inputs):
            if isinstance(a, str):
                d = float(local_partial(e, k, tape))
                partials[a].append((e.name, d, float(bars[e.name]) * d))
    for e in reversed(entries):
        if not partials[e.name]:
            continue
        terms = " + ".join(f"bar {j} * {num(d)}" for j, d, _ in partials[e.name])
        sums = " + ".join(num(c) for _, _, c in partials[e.name])
        shown = f" = {sums}" if len(partials[e.name]) > 1 else ""
        print(f"   bar {e.name:<2} = {terms:<30}{shown:<16} = {num(bars[e.name])}")
    print("   Each 'bar v * d' is a partial adjoint: the adjoint of the entry that uses this one,")
    print("   times the local derivative d of that entry (fgrad differentiates its primitive).")
    print("   An entry used twice (x0, x1) sums its partial adjoints.")
    print(f"   dy/dx1 = bar x0 = {num(bars['x0'])}, dy/dx2 = bar x1 = {num(bars['x1'])}"
          ": one backward sweep gives both.")

    value, grads = fgrad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0)
    print(f"\n4. fgrad.value_and_grad(f, argnums=(0, 1))(2.0, 5.0) = "
          f"({num(value)}, ({num(grads[0])}, {num(grads[1])}))")
    return tape


if __name__ == "__main__":
    main()
