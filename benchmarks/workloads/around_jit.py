"""Transforms around a jitted function: a library hands its users ``jit(f)`` and they
differentiate, batch or linearize it. Each case times one transform three ways: of ``f``
itself (the ``fgrad`` row), of ``jit(f)`` (``fgrad, f jitted``: the jitted call's rule under
that transform, ``Trace.process_staged`` or the tape's staged halves) and with ``jit`` outside
(``fgrad.jit``: ``jit(T(f))``, the whole transform staged); JAX's the same three ways where it
is installed (``jax``, ``jax, f jitted``, ``jax.jit``). The function is a two-layer ``tanh``
map (16 -> 32 -> 16 in full size) and the squared norm of its output.
"""
import numpy

from ..case import FGRAD, FWD, HAND, JIT, Case, Impl, Workload

INSIDE, JAX_INSIDE = "fgrad, f jitted", "jax, f jitted"


def layer(ns, p, v):
    return ns.tanh(ns.tanh(v @ p["w1"] + p["b1"]) @ p["w2"])


def loss(ns, p, v):
    return ns.sum(layer(ns, p, v) ** 2, axis=-1)


# per case: the function it transforms, and the transform: ``(g, args)`` for a library ``L``
# (fgrad or jax), that function ``f`` and the inputs ``a``, timed as ``g(*args)``
TRANSFORMS = {
    "grad": (loss, lambda L, f, a: (L.grad(f), (a["x"],))),
    "jvp": (layer, lambda L, f, a: (lambda v, u: L.jvp(f, (v,), (u,)), (a["x"], a["t"]))),
    "vmap": (layer, lambda L, f, a: (L.vmap(f), (a["X"],))),
    "jacfwd": (layer, lambda L, f, a: (L.jacfwd(f), (a["x"],))),
    "hessian": (loss, lambda L, f, a: (L.hessian(f), (a["x"],))),
    "linearize pushforward": (layer, lambda L, f, a: (L.linearize(f, a["x"])[1], (a["t"],))),
    "vmap(grad)": (loss, lambda L, f, a: (L.vmap(L.grad(f)), (a["X"],))),
}


def by_hand(name, p, a):
    """Each case's result in closed form (rows of a batch, rows of the Jacobian)."""
    w1, b1, w2 = p["w1"], p["b1"], p["w2"]

    def push(v, u):  # the layer and its tangent along u (rows of u: several directions)
        h = numpy.tanh(v @ w1 + b1)
        y = numpy.tanh(h @ w2)
        dh = (1 - h * h) * (u @ w1)
        return h, y, dh, (1 - y * y) * (dh @ w2)

    def grad_and_hvp(v, u):  # d/dv sum(y^2), and along u (forward over reverse)
        h, y, dh, dy = push(v, u)
        a2 = 2 * y * (1 - y * y)
        back = a2 @ w2.T
        grad = ((1 - h * h) * back) @ w1.T
        da2 = 2 * dy * (1 - y * y) - 4 * y * y * dy
        da1 = -2 * h * dh * back + (1 - h * h) * (da2 @ w2.T)
        return grad, da1 @ w1.T

    x, t, X = a["x"], a["t"], a["X"]
    if name == "grad":
        return grad_and_hvp(x, t)[0]
    if name == "jvp":
        _, y, _, dy = push(x, t)
        return y, dy
    if name == "vmap":
        return numpy.tanh(numpy.tanh(X @ w1 + b1) @ w2)
    if name == "jacfwd":  # (one direction per unit vector: the Jacobian's columns)
        return push(x, numpy.eye(x.size))[3].T
    if name == "hessian":
        return grad_and_hvp(x, numpy.eye(x.size))[1]
    if name == "linearize pushforward":
        return push(x, t)[3]
    return grad_and_hvp(X, X)[0]  # vmap(grad): each row's gradient


def build_around_jit(backends, size):
    import fgrad
    n, hidden, batch = (16, 32, 8) if size == "full" else (3, 4, 2)
    rng = numpy.random.default_rng(14)
    p = {"w1": rng.standard_normal((n, hidden)) / numpy.sqrt(n),
         "b1": 0.1 * rng.standard_normal(hidden),
         "w2": rng.standard_normal((hidden, n)) / numpy.sqrt(hidden)}
    a = {"x": rng.standard_normal(n), "t": rng.standard_normal(n),
         "X": rng.standard_normal((batch, n))}
    fg, np_ = backends["fgrad"], backends["numpy"]
    jx = backends.get("jax")
    libs = [(fgrad, fg, FGRAD, INSIDE, JIT)]
    if jx is not None:
        import jax
        libs.append((jax, jx, "jax", JAX_INSIDE, "jax.jit"))

    cases = []
    for name, (fn, transform) in TRANSFORMS.items():
        def made(L, b, staged_f, staged_t, fn=fn, transform=transform):
            pb, ab = b.asarray(p), b.asarray(a)

            def f(v):
                return fn(b.ns, pb, v)

            g, args = transform(L, L.jit(f) if staged_f else f, ab)
            g = L.jit(g) if staged_t else g
            return lambda: g(*args)

        impls = []
        for L, b, eager, inside, outside in libs:
            # (a first call timed afresh each round for fgrad's two staged rows; jax.jit
            # compiles on each, which the rounds would repeat for seconds)
            ours = L is fgrad
            impls += [Impl(eager, b, made(L, b, False, False)),
                      Impl(inside, b, made(L, b, True, False),
                           remake=(lambda L=L, b=b, made=made: made(L, b, True, False))
                           if ours else None),
                      Impl(outside, b, made(L, b, False, True),
                           remake=(lambda L=L, b=b, made=made: made(L, b, False, True))
                           if ours else None)]
        batched = "vmap" in name
        v = a["X"] if batched else a["x"]
        forward = fgrad.vmap(lambda u: fn(fg.ns, p, u))(v) if batched else fn(fg.ns, p, v)
        impls += [Impl(FWD, np_, lambda fn=fn, v=v: fn(numpy, p, v), "forward"),
                  Impl(HAND, np_, lambda name=name: by_hand(name, p, a))]
        refs = {"deriv": impls[0](), "forward": forward}
        cases.append(Case(name, impls, refs, rtol=1e-10, atol=1e-12))
    return cases


AROUND_JIT = Workload(
    "around_jit", "transforms around a jitted function",
    "T(jit(f)) against T(f) and jit(T(f)) for grad, jvp, vmap, jacfwd, hessian, a linearize "
    "pushforward and per-example gradients of a two-layer tanh map", build_around_jit)
