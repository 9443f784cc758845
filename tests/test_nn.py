"""fgrad.nn: jax.nn's helpers, against closed forms, finite differences and JAX's conventions."""
import math

import numpy as onp
import pytest

import fgrad
from fgrad import nn
from fgrad.testing import check_grads

X = onp.array([-3.0, -0.4, 0.3, 2.5])


@pytest.mark.parametrize("name, closed_form", [
    ("relu", lambda x: onp.maximum(x, 0)),
    ("softplus", lambda x: onp.log1p(onp.exp(x))),
    ("log_sigmoid", lambda x: -onp.log1p(onp.exp(-x))),
    ("sigmoid", lambda x: 1 / (1 + onp.exp(-x))),
    ("silu", lambda x: x / (1 + onp.exp(-x))),
    ("gelu", lambda x: 0.5 * x * (1 + onp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))),
    ("softmax", lambda x: onp.exp(x) / onp.exp(x).sum()),
    ("log_softmax", lambda x: x - onp.log(onp.exp(x).sum())),
    ("logsumexp", lambda x: onp.log(onp.exp(x).sum())),
])
def test_values_and_derivatives(name, closed_form):
    f = getattr(nn, name)
    onp.testing.assert_allclose(f(X), closed_form(X), rtol=1e-13)
    check_grads(f, (X,))


def test_jax_conventions_and_stability():
    assert float(fgrad.grad(nn.relu)(0.0)) == 0.0  # relu'(0) = 0, as in JAX
    big = onp.array([1000.0, 1000.0, -1000.0])
    onp.testing.assert_allclose(nn.softmax(big), [0.5, 0.5, 0.0])
    onp.testing.assert_allclose(nn.log_softmax(big)[:2], [-math.log(2)] * 2)
    assert nn.logsumexp(big) == 1000.0 + math.log(2)
    assert nn.softplus(1000.0) == 1000.0 and nn.log_sigmoid(-1000.0) == -1000.0
    assert nn.logsumexp(onp.array([-onp.inf, -onp.inf])) == -onp.inf
    onp.testing.assert_allclose(nn.softmax(onp.ones((2, 3)), axis=0), onp.full((2, 3), 0.5))
    assert nn.one_hot(onp.array([0, 2, 5]), 3).tolist() == [[1, 0, 0], [0, 0, 1], [0, 0, 0]]
    assert nn.one_hot(onp.array([1]), 2, axis=0).shape == (2, 1)


def test_a_per_example_cross_entropy_with_one_hot_labels_under_vmap_and_jit():
    # one_hot converted its labels with plain numpy: a batch of them under vmap refused, and
    # staged labels were read (a trace per call)
    import fgrad.numpy as np
    rng = onp.random.default_rng(3)
    W, X, L = rng.normal(size=(5, 4)), rng.normal(size=(6, 5)), rng.integers(0, 4, size=6)

    def loss(w, x, label):
        return -np.sum(nn.one_hot(label, 4) * nn.log_softmax(nn.gelu(x @ w)))

    want = onp.stack([fgrad.grad(loss)(W, x, label) for x, label in zip(X, L)])
    per_example = fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0, 0))
    onp.testing.assert_allclose(per_example(W, X, L), want, rtol=1e-12)
    staged = fgrad.jit(per_example)
    onp.testing.assert_allclose(staged(W, X, L), want, rtol=1e-12)
    staged(W, X, L[::-1])
    assert sum(len(graphs) for graphs in staged.cache.values()) == 1
    assert nn.one_hot(onp.array([[0, 2], [5, -1]]), 3, axis=0).tolist() == [
        [[1, 0], [0, 0]], [[0, 0], [0, 0]], [[0, 1], [0, 0]]]


def test_exact_gelu_uses_erf():
    pytest.importorskip("scipy", reason="gelu(approximate=False) needs scipy's erf")
    from scipy.special import erf
    onp.testing.assert_allclose(nn.gelu(X, approximate=False),
                                0.5 * X * (1 + erf(X / math.sqrt(2))), rtol=1e-13)
    check_grads(lambda x: nn.gelu(x, approximate=False), (X,))


def test_stop_gradient_and_the_stable_helpers_work_under_vmap():
    # stop_gradient had read the batch's values (a ConcretizationError under vmap), and the
    # stable softmax/logsumexp take their shift through it
    xs = onp.array([[0.5, -1.0, 2.0], [1.0, 1.0, 1.0]])
    for f, want in [(nn.logsumexp, lambda x: onp.log(onp.sum(onp.exp(x)))),
                    (nn.softmax, lambda x: onp.exp(x) / onp.sum(onp.exp(x)))]:
        onp.testing.assert_allclose(fgrad.vmap(f)(xs), [want(x) for x in xs], rtol=1e-14)
    f = lambda x: x * fgrad.stop_gradient(x)  # noqa: E731
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(f))(onp.array([1.0, 2.0])),
                                   [1.0, 2.0])
