"""Gaussian-process regression: hyperparameters fitted on the log marginal likelihood.

Not from the seed articles: the fit autograd ships as an example and its users bring to
fgrad (it needs scipy's Cholesky solves, distributions and optimiser, differentiated).

A GP with a squared-exponential kernel, ``k(x, x') = a^2 exp(-(x - x')^2 / (2 l^2))`` plus
noise ``s^2`` on the diagonal, is fitted to 40 noisy samples of a smooth curve by maximising
the log marginal likelihood ``log N(y; 0, K)`` over ``(log a, log l, log s)``, written with
``fgrad.scipy``: ``stats.multivariate_normal.logpdf`` for the objective, ``linalg.cho_factor``
and ``cho_solve`` for the posterior. ``fgrad.scipy.optimize.minimize`` takes the parameters as
a dict and gets the exact gradient from ``fgrad.value_and_grad``; the same fit with scipy's
finite-difference gradients reaches the same optimum with more evaluations of the objective.
The fitted curve is saved as ``gp_fit.png`` when matplotlib is installed
(``pip install -e ".[examples]"``).

Run:  python examples/gaussian_process.py
"""
import math

import numpy as onp
import scipy.optimize

import fgrad
import fgrad.numpy as np
from fgrad.scipy import linalg, optimize, stats

START = {"log_amp": 0.0, "log_len": 0.0, "log_noise": -1.0}


def data(n=40, seed=0):
    """Noisy samples of a smooth curve on [0, 10]."""
    rng = onp.random.default_rng(seed)
    x = onp.sort(rng.uniform(0.0, 10.0, n))
    y = onp.sin(x) + 0.3 * onp.cos(2.5 * x) + rng.normal(0.0, 0.2, n)
    return x, y


def kernel(params, a, b):
    d = a[:, None] - b[None, :]
    return np.exp(2 * params["log_amp"]) * np.exp(-0.5 * d * d / np.exp(2 * params["log_len"]))


def covariance(params, x):
    return kernel(params, x, x) + np.exp(2 * params["log_noise"]) * np.eye(len(x))


def neg_log_marginal(params, x, y):
    """-log p(y | x, params) = -log N(y; 0, K)."""
    return -stats.multivariate_normal.logpdf(y, np.zeros(len(x)), covariance(params, x))


def posterior(params, x, y, grid):
    """The posterior mean and standard deviation on ``grid``, by a Cholesky factor."""
    factor = linalg.cho_factor(covariance(params, x), lower=True)
    cross = kernel(params, grid, x)
    mean = cross @ linalg.cho_solve(factor, y)
    var = np.exp(2 * params["log_amp"]) - np.sum(cross * linalg.cho_solve(factor, cross.T).T,
                                                  axis=1)
    return mean, np.sqrt(np.maximum(var, 0.0))


def fit(x, y):
    """Fit with fgrad's gradients (through fgrad.scipy.optimize) and with scipy's finite
    differences on the same objective, from the same start; return both results."""
    ours = optimize.minimize(neg_log_marginal, START, args=(x, y), method="L-BFGS-B")
    names = sorted(START)

    def plain(v):  # the objective of a flat vector, for scipy alone
        return float(neg_log_marginal(dict(zip(names, v)), x, y))

    fd = scipy.optimize.minimize(plain, [START[n] for n in names], method="L-BFGS-B")
    return ours, fd, names


def plot(x, y, grid, mean, std, path="gp_fit.png"):
    """Save the fit with matplotlib; return the path, or None if matplotlib is missing."""
    try:
        import matplotlib
    except ImportError:
        return None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(8, 4))
    ax.fill_between(grid, mean - 2 * std, mean + 2 * std, color="C0", alpha=0.2,
                    label="posterior mean +- 2 sd")
    ax.plot(grid, mean, color="C0")
    ax.plot(x, y, "k.", label="data")
    ax.set_title("GP regression, hyperparameters fitted with fgrad.scipy.optimize.minimize")
    ax.legend(loc="upper right")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main():
    x, y = data()
    ours, fd, names = fit(x, y)
    p = ours.x
    print("GP regression on 40 noisy points: -log marginal likelihood minimised over "
          "(log a, log l, log s)")
    print(f"  fgrad gradients:           amplitude {math.exp(p['log_amp']):.5f}, lengthscale "
          f"{math.exp(p['log_len']):.5f}, noise {math.exp(p['log_noise']):.5f}; "
          f"-log p(y) = {ours.fun:.6f}")
    q = dict(zip(names, fd.x))
    print(f"  finite differences (scipy): amplitude {math.exp(q['log_amp']):.5f}, lengthscale "
          f"{math.exp(q['log_len']):.5f}, noise {math.exp(q['log_noise']):.5f}; "
          f"-log p(y) = {fd.fun:.6f}")
    print(f"  objective evaluations: fgrad {ours.nfev} (each with its exact gradient), "
          f"finite differences {fd.nfev}")
    g = fgrad.grad(neg_log_marginal)(p, x, y)
    print(f"  gradient at fgrad's optimum: max |g| = {max(abs(float(v)) for v in g.values()):.1e}")

    grid = onp.linspace(0.0, 10.0, 200)
    mean, std = posterior(p, x, y, grid)
    truth = onp.sin(grid) + 0.3 * onp.cos(2.5 * grid)
    error = onp.max(onp.abs(mean - truth))
    print(f"  posterior mean vs the noise-free curve: max error {error:.3f}, mean 2-sd band "
          f"{onp.mean(2 * std):.3f}")
    path = plot(x, y, grid, mean, std)
    if path:
        print(f"  saved the fit to {path}")
    else:
        print("  (matplotlib is not installed, so no plot: pip install -e \".[examples]\" "
              "for one)")
    return ours, fd


if __name__ == "__main__":
    main()
