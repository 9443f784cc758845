"""A two-layer network z = W2^T ReLU(W1^T x) trained by gradient descent on a spiral.

From the seed article on the CMU "needle" framework, whose starting point is this network
trained with gradients worked out by hand, and whose answer is a Tensor/Op class hierarchy
with a gradient graph. With fgrad the network is three lines of numpy; the parameters live in
a dict, ``fgrad.value_and_grad(loss)`` returns the gradient as the same dict, and
``fgrad.testing.check_grads`` confirms it against finite differences (to second order, in
forward and reverse mode) instead of trusting a hand derivation.

The task: 300 points on three interleaved spiral arms in the plane, one class per arm; softmax
cross-entropy; plain full-batch gradient descent. A constant 1 is appended to each x, so W1's
last row acts as the hidden layer's bias and the network keeps the article's form.

Run:  python examples/two_layer_net.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads

CLASSES, PER_CLASS, HIDDEN = 3, 100, 100


def spirals(rng):
    """Three spiral arms of PER_CLASS noisy points each; x has a constant 1 appended."""
    xs, ys = [], []
    for c in range(CLASSES):
        r = onp.linspace(0.05, 1.0, PER_CLASS)
        t = onp.linspace(4.0 * c, 4.0 * (c + 1), PER_CLASS) + rng.normal(0.0, 0.2, PER_CLASS)
        xs.append(onp.stack([r * onp.sin(t), r * onp.cos(t), onp.ones(PER_CLASS)], axis=1))
        ys.append(onp.full(PER_CLASS, c))
    return onp.concatenate(xs), onp.concatenate(ys)


def logits(params, x):
    """z = W2^T ReLU(W1^T x), for a batch of x as rows."""
    return np.maximum(x @ params["W1"], 0.0) @ params["W2"]


def cross_entropy(params, x, y, model=logits):
    """Mean softmax cross-entropy of the logits against integer labels y."""
    z = model(params, x)
    z = z - np.max(z, axis=1, keepdims=True)
    log_p = z - np.log(np.sum(np.exp(z), axis=1, keepdims=True))
    return -np.mean(log_p[np.arange(len(y)), y])


def accuracy(params, x, y, model=logits):
    return float(onp.mean(onp.argmax(model(params, x), axis=1) == y))


def train(params, x, y, steps, lr, model=logits, report=None):
    loss_and_grad = fgrad.value_and_grad(cross_entropy)
    for step in range(steps + 1):
        loss, g = loss_and_grad(params, x, y, model)
        if report is not None and step % 100 == 0:
            report(step, float(loss), accuracy(params, x, y, model))
        if step < steps:
            params = fgrad.tree_map(lambda p, dp: p - lr * dp, params, g)
    return params, float(loss)


def main(steps=500, lr=1.0, seed=0):
    rng = onp.random.default_rng(seed)
    x, y = spirals(rng)
    params = {"W1": rng.normal(0.0, 1.0, (3, HIDDEN)),
              "W2": rng.normal(0.0, 1.0 / onp.sqrt(HIDDEN), (HIDDEN, CLASSES))}

    print(f"1. Gradient check of the loss on 30 points (W1 {params['W1'].shape}, "
          f"W2 {params['W2'].shape}):")
    err = check_grads(lambda p: cross_entropy(p, x[::10], y[::10]), (params,), order=2)
    print(f"   check_grads(loss, (params,), order=2) passed: fwd and rev, to second order, "
          f"worst relative error {err:.1e}")

    print(f"\n2. Training z = W2^T ReLU(W1^T x) on {len(y)} spiral points, {CLASSES} classes, "
          f"gradient descent lr {lr}:")
    params, loss = train(params, x, y, steps, lr,
                         report=lambda s, l, a: print(f"   step {s:4d}   loss {l:.4f}   "
                                                      f"training accuracy {a:.1%}"))
    acc = accuracy(params, x, y)
    print(f"   final loss {loss:.4f}, training accuracy {acc:.1%}")

    linear = {"W": rng.normal(0.0, 0.1, (3, CLASSES))}
    linear, _ = train(linear, x, y, steps, lr, model=lambda p, x: x @ p["W"])
    print(f"\n3. For comparison, a linear softmax classifier (z = W^T x) trained the same way "
          f"reaches {accuracy(linear, x, y, lambda p, x: x @ p['W']):.1%}:")
    print("   the hidden ReLU layer is what separates the arms.")
    return acc, loss


if __name__ == "__main__":
    main()
