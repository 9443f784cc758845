"""Ordinary numpy programs, written once against a module ``np``, run with plain numpy and
with fgrad.numpy: the values agree exactly, and every transform agrees with finite differences.

This is how a user meets fgrad: existing numpy code, differentiated unchanged.
"""
import numpy as onp
import pytest

import fgrad
import fgrad.numpy as fnp
from fgrad.testing import check_grads

RNG = onp.random.default_rng(42)


def gaussian_nll(np, mu, L):
    """Negative log-likelihood of data under N(mu, L L^T + I)."""
    data = onp.array([[0.3, -1.0, 0.5], [1.2, 0.1, -0.4], [-0.7, 0.8, 0.9], [0.2, 0.2, 0.2]])
    cov = L @ L.T + np.eye(3)
    sign, logdet = np.linalg.slogdet(cov)
    r = data - mu
    quad = np.sum(r * np.linalg.solve(cov, r.T).T)
    return 0.5 * quad + 0.5 * len(data) * logdet


def softmax_cross_entropy(np, W, b):
    x = onp.array([[0.5, -1.0], [1.5, 0.3], [-0.2, 0.9], [0.0, -0.6], [1.0, 1.0]])
    labels = onp.array([0, 2, 1, 1, 2])
    logits = x @ W + b
    m = np.max(logits, axis=1, keepdims=True)
    logz = m + np.log(np.sum(np.exp(logits - m), axis=1, keepdims=True))
    picked = np.take_along_axis(logits - logz, labels[:, None], axis=1)
    return -np.mean(picked)


def spectral_roughness(np, x):
    spectrum = np.fft.rfft(x)
    weights = np.arange(spectrum.shape[0]) ** 2
    return np.sum(weights * np.abs(spectrum) ** 2) / x.shape[0]


def robust_standardise(np, x):
    z = (x - np.mean(x)) / np.std(x, ddof=1)
    return np.sum(np.tanh(z) * np.linspace(0.0, 1.0, x.shape[0])) + np.percentile(x, 30)


def triangle_angles(np, p):
    a, b, c = p[0], p[1], p[2]
    u, v = b - a, c - a
    n = np.cross(u, v)
    return np.arctan2(np.linalg.norm(n), np.dot(u, v)) + np.linalg.norm(np.cross(n, u))


def smoothed_signal(np, x):
    kernel = onp.array([0.25, 0.5, 0.25])
    padded = np.pad(x, 2, mode="reflect")
    y = np.convolve(padded, kernel, mode="valid")
    return np.sum(np.diff(y) ** 2) + np.sum(np.cumsum(y) * 0.1)


def attention(np, q, k, v):
    scores = np.einsum("id,jd->ij", q, k) / np.sqrt(q.shape[-1])
    scores = scores - np.max(scores, axis=-1, keepdims=True)
    weights = np.exp(scores) / np.sum(np.exp(scores), axis=-1, keepdims=True)
    return np.sum(np.einsum("ij,jd->id", weights, v) ** 2)


def top_principal_variance(np, x):
    c = np.cov(x, rowvar=False)
    return np.linalg.eigvalsh(c)[-1] + np.trace(c)


def stacked_features(np, x):
    feats = np.concatenate([x, x ** 2, np.sin(x)])
    grid = np.stack([feats, np.roll(feats, 1), np.flip(feats)])
    return np.sum(np.tril(grid @ grid.T)) + np.sum(np.sort(feats)[-3:])


PROGRAMS = [
    (gaussian_nll, lambda: (RNG.standard_normal(3), RNG.standard_normal((3, 3)))),
    (softmax_cross_entropy, lambda: (RNG.standard_normal((2, 3)), RNG.standard_normal(3))),
    (spectral_roughness, lambda: (RNG.standard_normal(8),)),
    (robust_standardise, lambda: (RNG.standard_normal(7),)),
    (triangle_angles, lambda: (RNG.standard_normal((3, 3)),)),
    (smoothed_signal, lambda: (RNG.standard_normal(6),)),
    (attention, lambda: tuple(RNG.standard_normal((4, 3)) for _ in range(3))),
    (top_principal_variance, lambda: (RNG.standard_normal((6, 3)),)),
    (stacked_features, lambda: (RNG.standard_normal(4),)),
]


@pytest.mark.parametrize("program, make_args", PROGRAMS, ids=[p.__name__ for p, _ in PROGRAMS])
def test_program_values_match_numpy_and_derivatives_match_finite_differences(program,
                                                                              make_args):
    args = make_args()

    def f(*xs):
        return program(fnp, *xs)

    want = program(onp, *args)
    assert f(*args) == want  # plain arrays: fgrad.numpy is numpy
    value, grads = fgrad.value_and_grad(f, argnums=tuple(range(len(args))))(*args)
    assert value == want  # traced: the same value, bit for bit
    check_grads(f, args, order=2, modes=("fwd", "rev"), rtol=1e-4, atol=1e-6)
    for i, x in enumerate(args):
        jr = fgrad.jacrev(f, argnums=i)(*args)
        onp.testing.assert_allclose(jr, grads[i], rtol=1e-12, atol=1e-12)
        onp.testing.assert_allclose(fgrad.jacfwd(f, argnums=i)(*args), jr, rtol=1e-9,
                                    atol=1e-12)
    h = fgrad.hessian(f)(*args)
    onp.testing.assert_allclose(h, onp.swapaxes(h.reshape(args[0].size, -1), 0, 1).reshape(
        h.shape), rtol=1e-7, atol=1e-9)  # symmetric, as a Hessian must be
