"""Per-example gradients with vmap: one gradient per data row, in one batched pass.

Differential privacy clips each example's gradient before averaging; influence functions and
the empirical Fisher information need them one by one too. Without ``vmap`` that is a Python
loop of ``grad`` calls, one per row. ``fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0, 0))``
maps the gradient over the rows of the data while sharing the parameters: the same numbers
as the loop, from one pass of batched numpy calls. (Not from the seed articles, whose systems
had no batching: users of autograd asked for it.)

Run:  python examples/per_example_gradients.py
"""
import timeit

import numpy

import fgrad
import fgrad.numpy as np


def init(rng, sizes):
    return [{"w": rng.standard_normal((m, n)) / numpy.sqrt(m), "b": numpy.zeros(n)}
            for m, n in zip(sizes[:-1], sizes[1:])]


def loss(params, x, y):
    """Squared error of a tanh network on one example."""
    h = x
    for layer in params[:-1]:
        h = np.tanh(h @ layer["w"] + layer["b"])
    out = h @ params[-1]["w"] + params[-1]["b"]
    return np.sum((out - y) ** 2)


def seconds(fn, repeat=5):
    """The best of ``repeat`` timed calls, in seconds."""
    return min(timeit.repeat(fn, number=1, repeat=repeat))


def main():
    rng = numpy.random.default_rng(0)
    params = init(rng, [8, 64, 64, 1])
    X = rng.standard_normal((128, 8))
    y = numpy.sin(X.sum(axis=1, keepdims=True))

    per_example = fgrad.vmap(fgrad.grad(loss), in_axes=(None, 0, 0))
    batched = per_example(params, X, y)

    def loop():
        return [fgrad.grad(loss)(params, X[i], y[i]) for i in range(len(X))]

    looped = loop()
    worst = 0.0
    for k, layer in enumerate(batched):
        for name, g in layer.items():
            want = numpy.stack([grads[k][name] for grads in looped])
            worst = max(worst, float(numpy.max(numpy.abs(g - want))))
    print(f"1. per-example gradients of a tanh network 8-64-64-1 on {len(X)} examples:")
    print(f"   shapes: {[(layer['w'].shape, layer['b'].shape) for layer in batched]}")
    print(f"   largest difference from the loop of grad calls: {worst:.1e}")

    norms = numpy.sqrt(sum(numpy.sum(g.reshape(len(X), -1) ** 2, axis=1)
                           for layer in batched for g in layer.values()))
    print(f"\n2. their norms (what differential privacy clips): min {norms.min():.3f}, "
          f"median {numpy.median(norms):.3f}, max {norms.max():.3f}")

    mean_grad = fgrad.grad(lambda p: np.mean(fgrad.vmap(loss, in_axes=(None, 0, 0))(p, X, y)))
    avg = mean_grad(params)
    diff = max(float(numpy.max(numpy.abs(avg[k][n] - batched[k][n].mean(axis=0))))
               for k in range(len(avg)) for n in avg[k])
    print(f"\n3. their mean equals the gradient of the mean loss: difference {diff:.1e}")

    t_vmap = seconds(lambda: per_example(params, X, y))
    t_loop = seconds(loop, repeat=2)
    t_mean = seconds(lambda: mean_grad(params))
    print(f"\n4. timing: vmap {t_vmap * 1e3:.1f} ms, loop of grad {t_loop * 1e3:.1f} ms "
          f"({t_loop / t_vmap:.0f}x), one gradient of the mean loss {t_mean * 1e3:.1f} ms")


if __name__ == "__main__":
    main()
