"""Linear regression trained by gradient descent, twice: the tinynn example and the micrograd one.

From two seed articles: the tinynn-style Tensor with dependency lists (x of shape (100, 3),
y = x*coef - 3, w (3, 3) and b (3,), sum of squared errors, lr 3e-4, 101 epochs) and the
micrograd walk-through (y = 4x + 3 + noise, scalar w and b, one SGD step per sample, lr 0.1,
40 epochs). There, every operator is overloaded on a Tensor/Value class that stores its
parents and a backward closure, and the training loop must call zero_grad(), backward() and
step() in the right order, since gradients accumulate in place. With fgrad the loss is a plain
numpy function of a dict of parameters, ``fgrad.value_and_grad(loss)(params, ...)`` returns
fresh gradients in the same dict, and the update is one ``tree_map``: no state to reset.

Run:  python examples/linear_regression.py
"""
import numpy as onp

import fgrad
import fgrad.numpy as np


# --- the tinynn example: a (3, 3) linear map plus bias, full-batch gradient descent ----------

def sse(params, x, y):
    """Sum of squared errors of the affine model x @ w + b."""
    err = x @ params["w"] + params["b"] - y
    return np.sum(err * err)


def train_tinynn(epochs=101, lr=3e-4, seed=0, report=print):
    rng = onp.random.default_rng(seed)
    x = rng.normal(0.0, 1.0, (100, 3))
    coef = rng.integers(0, 10, (3,)).astype(float)
    y = x * coef - 3
    params = {"w": rng.normal(0.0, 1.0, (3, 3)), "b": rng.normal(0.0, 1.0, 3)}
    step = fgrad.value_and_grad(sse)
    losses = []
    for epoch in range(epochs):
        loss, g = step(params, x, y)
        params = fgrad.tree_map(lambda p, dp: p - lr * dp, params, g)
        losses.append(float(loss))
        if epoch % 10 == 0:
            report(f"   epoch {epoch:3d}   loss {loss:10.4f}")
    return params, coef, losses


# --- the micrograd example: y = 4x + 3, scalar w and b, one SGD step per sample --------------

def squared_error(w, b, x, y):
    return (y - (w * x + b)) ** 2


def train_micrograd(epochs=40, lr=0.1, n=10, noise=0.01, seed=0, report=print):
    rng = onp.random.default_rng(seed)
    xs = rng.random(n)
    ys = 4 * xs + 3 + rng.normal(0.0, noise, n)
    w, b = rng.random(), rng.random()
    step = fgrad.value_and_grad(squared_error, argnums=(0, 1))
    report(f"   start      w {w:.4f}  b {b:.4f}")
    history = []
    for epoch in range(epochs):
        total = 0.0
        for x, y in zip(xs, ys):
            loss, (dw, db) = step(w, b, x, y)
            w, b = w - lr * dw, b - lr * db
            total += float(loss)
        history.append((total, float(w), float(b)))
        if epoch % 5 == 0 or epoch == epochs - 1:
            report(f"   epoch {epoch:2d}   loss {total:9.5f}   w {w:.4f}  b {b:.4f}")
    return float(w), float(b), history


def main():
    print("1. tinynn: x ~ N(0, 1) of shape (100, 3), y = x * coef - 3; model x @ w + b with")
    print("   w (3, 3), b (3,); loss = sum of squared errors; full-batch gradient descent,")
    print("   lr 3e-4, 101 epochs")
    params, coef, losses = train_tinynn()
    print(f"   loss {losses[0]:.1f} -> {losses[-1]:.4f}")
    print(f"   coef = {coef}; the fitted w is close to diag(coef), b to -3:")
    print("   w =", onp.round(params["w"], 3).tolist())
    print("   b =", onp.round(params["b"], 3).tolist())

    print("\n2. micrograd: 10 points x ~ U(0, 1), y = 4x + 3 + N(0, 0.01); model w * x + b;")
    print("   one SGD step per sample, lr 0.1, 40 epochs (loss = sum over the epoch)")
    w, b, history = train_micrograd()
    print(f"   loss {history[0][0]:.4f} -> {history[-1][0]:.6f};  w = {w:.3f}, b = {b:.3f}"
          "  (the data were made with w = 4, b = 3)")


if __name__ == "__main__":
    main()
