"""Black-box variational inference: natural-gradient steps on a slice-heavy objective.

The program autograd's examples made popular (black-box SVI, a diagonal Gaussian family,
the reparameterisation trick), on a model of our own: a hierarchical Bayesian logistic
regression whose latent vector holds the weights and their log-scales side by side, so each
gradient slices the variational parameters and the (500, 40) sample matrix by columns
(``z[:, :D]``, ``z[:, D:]``, 160 kB): what a profile of such a program showed fgrad spending its
time on (a slice's VJP, and copying a large input on every call).
"""
import numpy

from ..case import FGRAD, FWD, HAND, Case, Impl, Workload, peer_impls

D = 20  # weights; the latent vector is the D weights and their D log-scales
S_PRIOR = 1.35  # the log-scales' prior standard deviation


def elbo(ns, params, eps, X, y):
    """A one-batch estimate of the evidence lower bound. ``params`` holds the variational
    means and log standard deviations of the 2D latent variables; ``eps`` the standard normal
    draws, one row per sample."""
    mean, log_std = params[:2 * D], params[2 * D:]
    z = eps * ns.exp(log_std) + mean
    w, s = z[:, :D], z[:, D:]
    log_prior = -0.5 * ns.sum((s / S_PRIOR) ** 2) - 0.5 * ns.sum(w * w * ns.exp(-2.0 * s)) \
        - ns.sum(s)
    margins = ns.matmul(w, X.T) * y
    log_lik = -ns.sum(ns.log(1.0 + ns.exp(-margins)))
    return (log_prior + log_lik) / eps.shape[0] + ns.sum(log_std)


def elbo_grad_by_hand(params, eps, X, y):
    mean, log_std = params[:2 * D], params[2 * D:]
    std = numpy.exp(log_std)
    z = eps * std + mean
    w, s = z[:, :D], z[:, D:]
    e2s = numpy.exp(-2.0 * s)
    margins = (w @ X.T) * y
    dw = -w * e2s + ((y / (1.0 + numpy.exp(margins))) @ X)
    ds = -s / S_PRIOR ** 2 + w * w * e2s - 1.0
    dz = numpy.concatenate([dw, ds], axis=1) / eps.shape[0]
    return numpy.concatenate([dz.sum(axis=0), (dz * eps * std).sum(axis=0) + 1.0])


def natural_steps(grad_fn, params, draws, X, y, lr, convert=lambda p: p):
    """Ascend the ELBO along the natural gradient: the Fisher information of a diagonal
    Gaussian in (mean, log std) is diag(1 / std^2, 2), so its inverse rescales the gradient.
    The step itself is numpy's; ``convert`` gives the parameters to the gradient's library,
    whose ``grad_fn`` returns a numpy array."""
    for eps in draws:
        g = grad_fn(convert(params), eps, X, y)
        fisher_inv = numpy.concatenate([numpy.exp(2.0 * params[2 * D:]), numpy.full(2 * D, 0.5)])
        params = params + lr * fisher_inv * g
    return params


def build_svi(backends, size):
    steps, samples, n = (20, 500, 100) if size == "full" else (2, 6, 5)
    rng = numpy.random.default_rng(4)
    X = rng.standard_normal((n, D))
    y = numpy.sign(X @ rng.standard_normal(D) + 0.5 * rng.standard_normal(n))
    draws = [rng.standard_normal((samples, 2 * D)) for _ in range(steps)]
    params0 = numpy.concatenate([numpy.zeros(2 * D), numpy.full(2 * D, -1.0)])
    lr = 0.05
    fg, np_ = backends["fgrad"], backends["numpy"]

    def of(b):
        g = b.grad(lambda p, e, XX, yy: elbo(b.ns, p, e, XX, yy))
        db, Xb, yb = [b.asarray(e) for e in draws], b.asarray(X), b.asarray(y)
        if b is fg:
            return lambda: natural_steps(g, params0, db, Xb, yb, lr)
        return lambda: natural_steps(lambda *a: b.tonumpy(g(*a)), params0, db, Xb, yb, lr,
                                     b.asarray)

    def forwards():
        for eps in draws:
            value = elbo(numpy, params0, eps, X, y)
        return value

    refs = {"deriv": of(fg)(), "forward": fg.value_and_grad(
        lambda p: elbo(fg.ns, p, draws[-1], X, y))(params0)[0]}
    impls = [Impl(FGRAD, fg, of(fg)),
             Impl(FWD, np_, forwards, "forward"),
             Impl(HAND, np_, lambda: natural_steps(elbo_grad_by_hand, params0, draws, X, y,
                                                   lr))]
    return [Case("natural-gradient steps", impls + peer_impls(backends, of), refs, rtol=1e-6,
                 atol=1e-9)]


SVI = Workload(
    "svi", "natural-gradient black-box SVI",
    f"20 natural-gradient steps of a {2 * D}-dimensional diagonal-Gaussian ELBO (500 samples, "
    "a hierarchical logistic regression on 100 points); the gradient slices the parameters "
    "and the 500 x 40 samples by columns", build_svi)
