"""Newton's method with exact Hessians: a 10-parameter Poisson regression, solved in 5 steps.

Beyond the seed articles, whose engines stop at gradient descent: they keep each gradient as a
number in ``.grad``, so a Hessian would need a second hand-written backward for every
operator. With fgrad, ``fgrad.hessian(f)`` is ``jacfwd(jacrev(f))`` of the same numpy code, and
Newton's method is the three-line loop below.

The problem: fit log-rates u = A @ theta of 50 Poisson counts by maximum likelihood, i.e.
minimise sum(exp(u) - y * u). The counts are given their exact expected values
y = exp(A @ theta_star), so the minimiser is theta_star and the error of every step can be
measured. Newton's method converges quadratically: each error is about a constant times the
square of the one before (the last column), so the number of correct digits doubles per step.

Run:  python examples/newton.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np

N_OBS, DIM = 50, 10


def make_problem(seed=0):
    rng = onp.random.default_rng(seed)
    A = rng.normal(0.0, 1.0, (N_OBS, DIM)) / onp.sqrt(DIM)
    theta_star = rng.normal(0.0, 0.5, DIM)
    y = onp.exp(A @ theta_star)
    return A, y, theta_star


def negative_log_likelihood(theta, A, y):
    """Poisson negative log-likelihood with log link (constant terms dropped)."""
    u = A @ theta
    return np.sum(np.exp(u) - y * u)


def newton(f, x, steps, *args):
    """Newton iterates x_{k+1} = x_k - H(x_k)^{-1} g(x_k), with g and H from fgrad."""
    gradient, hessian = fgrad.grad(f), fgrad.hessian(f)
    xs = [x]
    for _ in range(steps):
        x = x - onp.linalg.solve(hessian(x, *args), gradient(x, *args))
        xs.append(x)
    return xs


def main(steps=8):
    A, y, theta_star = make_problem()
    iterates = newton(negative_log_likelihood, onp.zeros(DIM), steps, A, y)
    gradient = fgrad.grad(negative_log_likelihood)
    print(f"Poisson regression, {N_OBS} observations, {DIM} parameters; "
          "Newton's method from theta = 0")
    print(" step   |theta - theta*|    |gradient|     error / previous error^2")
    errors = []
    for k, theta in enumerate(iterates):
        err = float(onp.linalg.norm(theta - theta_star))
        gnorm = float(onp.linalg.norm(gradient(theta, A, y)))
        ratio = (f"{err / errors[-1] ** 2:8.3f}" if errors and err > 1e-14 else "")
        print(f"  {k:2d}    {err:15.3e}   {gnorm:12.3e}      {ratio}")
        errors.append(err)
    first = next(k for k, e in enumerate(errors) if e < 1e-10)
    print(f"error below 1e-10 after {first} steps; from there on it stays at rounding level "
          f"({errors[-1]:.1e}, where the ratio is left blank)")
    return errors


if __name__ == "__main__":
    main()
