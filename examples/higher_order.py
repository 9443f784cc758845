"""Higher derivatives: tanh differentiated six times, and Hessian-vector products.

From the seed article on the CMU "needle" framework, which explains why modern frameworks
build the adjoints as a graph instead of storing numbers in ``.grad``: only then can a gradient
be differentiated again. In the micrograd and tinynn designs of the other seeds a gradient is a
float, so the second derivative is out of reach. In fgrad every derivative rule is written with
fgrad's own numpy, so ``grad`` nests to any order with no extra code, and forward mode over
reverse mode gives a Hessian-vector product at the cost of about one gradient, without ever
forming the Hessian.

Prints the derivatives 0..6 of tanh on a grid, checked against their closed forms (polynomials
in tanh); saves them as ``tanh_derivatives.png`` in the current directory if matplotlib is
installed (``pip install -e ".[examples]"``).

Run:  python examples/higher_order.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np

ORDERS = 6


def derivative(f):
    """The derivative of an elementwise function, elementwise: grad of the sum."""
    return lambda x: fgrad.grad(lambda x: np.sum(f(x)))(x)


def tanh_derivatives(order=ORDERS):
    """[tanh, tanh', ..., tanh^(order)], each by one more application of grad."""
    fs = [np.tanh]
    for _ in range(order):
        fs.append(derivative(fs[-1]))
    return fs


def closed_forms(order=ORDERS):
    """The k-th derivative of tanh as a polynomial P_k in t = tanh(x):
    P_0 = t and P_{k+1} = P_k'(t) (1 - t^2), since dt/dx = 1 - t^2."""
    P = onp.polynomial.Polynomial
    ps = [P([0.0, 1.0])]
    for _ in range(order):
        ps.append(ps[-1].deriv() * P([1.0, 0.0, -1.0]))
    return ps


def hvp(f, x, v):
    """Hessian of f at x times v, by forward mode (jvp) over reverse mode (grad)."""
    return fgrad.jvp(fgrad.grad(f), (x,), (v,))[1]


def energy(x):
    """A 10-dimensional test function: a chain of coupled nonlinear springs."""
    return np.sum(np.tanh(x[1:] - x[:-1]) ** 2) + 0.1 * np.sum(x ** 4) + np.sum(np.sin(x) * x)


def plot(grid, columns, path="tanh_derivatives.png"):
    """Save the curves with matplotlib; return the path, or None if matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(2, 4, figsize=(12, 5.5), sharex=True)
    for k, (ax, ys) in enumerate(zip(axes.flat, columns)):
        ax.plot(grid, ys)
        ax.axhline(0.0, color="0.8", lw=0.8)
        ax.set_title("tanh" if k == 0 else f"order {k}")
    axes.flat[-1].axis("off")
    fig.suptitle("tanh and its derivatives, by nested fgrad.grad")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main():
    fs, ps = tanh_derivatives(), closed_forms()
    grid = onp.linspace(-3.0, 3.0, 13)
    print("1. d^k/dx^k tanh(x) on a grid, each column one more nested fgrad.grad:")
    print("      x " + "".join(f"{f'order {k}':>11}" for k in range(ORDERS + 1)))
    table = [onp.round(f(grid), 5) + 0.0 for f in fs]     # + 0.0: no "-0.00000"
    for i, x in enumerate(grid):
        print(f"   {x:4.1f} " + "".join(f"{col[i]:11.5f}" for col in table))

    print("\n   check against the closed forms, P_k(tanh x) with P_0 = t, "
          "P_{k+1} = P_k'(t)(1 - t^2);")
    print("   and the number of entries on the tape of one evaluation of each derivative:")
    fine = onp.linspace(-3.0, 3.0, 201)
    worst, sizes = 0.0, []
    for k, (f, p) in enumerate(zip(fs, ps)):
        err = float(onp.max(onp.abs(f(fine) - p(onp.tanh(fine)))))
        worst = max(worst, err)
        entries = len(fgrad.make_tape(f)(fine))
        sizes.append(entries)
        print(f"   order {k}: max |fgrad - closed form| = {err:.1e} over 201 points;"
              f" {entries:5d} tape entries")
    print(f"   worst error over orders 0..{ORDERS}: {worst:.1e}; the tape grows about "
          f"{(sizes[-1] / sizes[2]) ** (1 / (ORDERS - 2)):.1f}x per order (nested reverse mode)")

    path = plot(fine, [f(fine) for f in fs])
    if path:
        print(f"   saved the curves to {path}")
    else:
        print("   (matplotlib is not installed, so no plot: "
              "pip install -e \".[examples]\" for one)")

    rng = onp.random.default_rng(0)
    x, v = rng.normal(size=10), rng.normal(size=10)
    Hv = hvp(energy, x, v)
    H = fgrad.hessian(energy)(x)
    diff = float(onp.max(onp.abs(Hv - H @ v)))
    print("\n2. Hessian-vector product of a 10-dimensional function, forward over reverse:")
    print("   fgrad.jvp(fgrad.grad(f), (x,), (v,))[1] =", onp.round(Hv, 4).tolist())
    print("   fgrad.hessian(f)(x) @ v               =", onp.round(H @ v, 4).tolist())
    print(f"   max difference {diff:.1e}; the product never forms the 10x10 Hessian "
          f"(symmetric: |H - H^T| = {float(onp.max(onp.abs(H - H.T))):.1e})")
    return worst, diff


if __name__ == "__main__":
    main()
