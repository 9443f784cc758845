"""The backends a workload can run on: fgrad, plain numpy, and the optional peers.

Every backend offers the same small surface, so a workload writes its function once against
``b.ns`` (a numpy-like namespace) and asks ``b.grad``/``b.value_and_grad``/``b.jacfwd``/
``b.jacrev``/``b.hessian`` for the transform:

* ``fgrad``    -- ``fgrad`` with ``fgrad.numpy``;
* ``fgrad.jit`` -- the same transforms under ``fgrad.jit``: its first call (the check) traces;
  the next runs the graph passes and generates the code; the timed calls replay;
* ``numpy``    -- plain numpy, no transforms: the floor (forward only, or backprop by hand);
* ``autograd`` -- HIPS/autograd (``jacfwd`` is a loop of ``make_jvp`` over the unit vectors);
* ``jax``      -- JAX without ``jit`` (op-by-op dispatch), float64;
* ``jax.jit``  -- the same transforms under ``jax.jit``, compiled during the check: reported
  as a reference, never a target;
* ``torch``    -- ``torch.func`` (``grad``, ``grad_and_value``, ``jacfwd``, ``jacrev``,
  ``hessian``), float64 tensors on the CPU.

A peer that cannot be imported is left out, with a note saying so.
"""
import importlib
from types import SimpleNamespace

import numpy

from .names import PEERS  # noqa: F401  (re-exported)
INSTALL_HINT = "pip install -e \".[bench]\""


def tree_map(f, tree):
    """``f`` applied to the leaves of nested dicts, lists and tuples."""
    if isinstance(tree, dict):
        return {k: tree_map(f, v) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_map(f, v) for v in tree)
    return f(tree)


def tree_leaves(tree):
    """The leaves of nested dicts (in sorted key order), lists and tuples."""
    if isinstance(tree, dict):
        return [x for k in sorted(tree) for x in tree_leaves(tree[k])]
    if isinstance(tree, (list, tuple)):
        return [x for v in tree for x in tree_leaves(v)]
    return [tree]


class Backend:
    """One library: its namespace, transforms and conversions to and from numpy."""

    def __init__(self, name, ns, version, *, grad=None, value_and_grad=None, jacfwd=None,
                 jacrev=None, hessian=None, leaf_in=None, leaf_out=None, finish=None,
                 notes=()):
        self.name, self.ns, self.version = name, ns, version
        self.grad, self.value_and_grad = grad, value_and_grad
        self.jacfwd, self.jacrev, self.hessian = jacfwd, jacrev, hessian
        self._leaf_in = leaf_in or (lambda x: x)
        self._leaf_out = leaf_out or numpy.asarray
        self._finish = finish
        self.notes = list(notes)

    def __repr__(self):
        return f"<backend {self.name} {self.version}>"

    def asarray(self, tree):
        """Inputs in this backend's own array type (converted once, outside the timing)."""
        return tree_map(self._leaf_in, tree)

    def tonumpy(self, tree):
        return tree_map(self._leaf_out, tree)

    def finish(self, out):
        """Wait for the result where dispatch is asynchronous (JAX); returns ``out``."""
        return out if self._finish is None else self._finish(out)


def _fgrad():
    import fgrad
    import fgrad.numpy as fnp
    return Backend("fgrad", fnp, fgrad.__version__, grad=fgrad.grad,
                   value_and_grad=fgrad.value_and_grad, jacfwd=fgrad.jacfwd,
                   jacrev=fgrad.jacrev, hessian=fgrad.hessian)


def _fgrad_jit():
    import fgrad
    import fgrad.numpy as fnp

    def staged(t):
        return lambda f, *a, **k: fgrad.jit(t(f, *a, **k))

    return Backend("fgrad.jit", fnp, fgrad.__version__, grad=staged(fgrad.grad),
                   value_and_grad=staged(fgrad.value_and_grad), jacfwd=staged(fgrad.jacfwd),
                   jacrev=staged(fgrad.jacrev), hessian=staged(fgrad.hessian),
                   notes=["fgrad.jit traces during the check call (its first call); its first "
                          "call column is the median of that and a fresh jit's first call "
                          "in each timing round"])


def _numpy():
    return Backend("numpy", numpy, numpy.__version__)


def _autograd():
    autograd = importlib.import_module("autograd")
    anp = importlib.import_module("autograd.numpy")
    from importlib.metadata import version

    def jacfwd(f):
        # autograd has no forward-mode Jacobian: one make_jvp sweep per unit vector
        def jac(x):
            x = numpy.asarray(x, dtype=float)
            push = autograd.make_jvp(f)(x)
            cols = []
            for k in range(x.size):
                e = numpy.zeros(x.size)
                e[k] = 1.0
                cols.append(push(e.reshape(x.shape))[1])
            out = numpy.stack(cols, axis=-1)
            return out.reshape(numpy.shape(cols[0]) + x.shape)
        return jac

    return Backend("autograd", anp, version("autograd"), grad=autograd.grad,
                   value_and_grad=autograd.value_and_grad, jacfwd=jacfwd,
                   jacrev=autograd.jacobian, hessian=autograd.hessian,
                   notes=["autograd's jacfwd is a loop of make_jvp over the unit vectors"])


def _jax(jit):
    jax = importlib.import_module("jax")
    jax.config.update("jax_enable_x64", True)
    jax.config.update("jax_platforms", "cpu")
    jnp = importlib.import_module("jax.numpy")
    wrap = jax.jit if jit else (lambda f: f)

    def transform(t):
        return lambda f, *a, **k: wrap(t(f, *a, **k))

    return Backend("jax.jit" if jit else "jax", jnp, jax.__version__,
                   grad=transform(jax.grad), value_and_grad=transform(jax.value_and_grad),
                   jacfwd=transform(jax.jacfwd), jacrev=transform(jax.jacrev),
                   hessian=transform(jax.hessian), leaf_in=jnp.asarray,
                   finish=jax.block_until_ready,
                   notes=["jax.jit compiles during the check call; that time is not counted"]
                   if jit else [])


def _torch(threads=0):
    torch = importlib.import_module("torch")
    if threads > 0:
        torch.set_num_threads(threads)
    tf = importlib.import_module("torch.func")
    f64 = torch.float64

    def leaf_in(x):
        return torch.tensor(numpy.asarray(x, dtype=float), dtype=f64)

    def leaf_out(x):
        return x.detach().numpy() if isinstance(x, torch.Tensor) else numpy.asarray(x)

    def value_and_grad(f, argnums=0):
        vg = tf.grad_and_value(f, argnums=argnums)

        def call(*args):
            g, v = vg(*args)
            return v, g
        return call

    def _sum(x, axis=None):
        return torch.sum(x) if axis is None else torch.sum(x, dim=axis)

    def _mean(x, axis=None):
        return torch.mean(x) if axis is None else torch.mean(x, dim=axis)

    ns = SimpleNamespace(sin=torch.sin, cos=torch.cos, tanh=torch.tanh, exp=torch.exp,
                         log=torch.log, sqrt=torch.sqrt, sum=_sum, mean=_mean,
                         matmul=torch.matmul)
    return Backend("torch", ns, torch.__version__, grad=tf.grad, value_and_grad=value_and_grad,
                   jacfwd=tf.jacfwd, jacrev=tf.jacrev, hessian=tf.hessian, leaf_in=leaf_in,
                   leaf_out=leaf_out,
                   notes=[f"torch uses {torch.get_num_threads()} thread(s)"])


_MAKERS = {"autograd": lambda threads: _autograd(), "jax": lambda threads: _jax(False),
           "jax.jit": lambda threads: _jax(True), "torch": _torch}


def load(peers=PEERS, threads=0):
    """``({name: Backend}, notes)``: fgrad and numpy always, and each peer asked for that
    imports; a peer that does not is skipped with a note naming the reason. ``threads > 0``
    sets torch's intra-op threads (numpy's and XLA's are set by the environment, before
    import: see ``__main__``)."""
    found = {"fgrad": _fgrad(), "fgrad.jit": _fgrad_jit(), "numpy": _numpy()}
    notes = []
    for name in peers:
        if name not in _MAKERS:
            raise ValueError(f"unknown backend {name!r}; choose from {', '.join(PEERS)}")
        try:
            found[name] = _MAKERS[name](threads)
        except ImportError as e:
            notes.append(f"{name}: skipped, not installed ({e}); {INSTALL_HINT} adds it")
        except Exception as e:  # a broken install must not stop the other backends
            notes.append(f"{name}: skipped, failed to load ({type(e).__name__}: {e})")
    for b in found.values():
        notes.extend(f"{b.name}: {n}" for n in b.notes)
    return found, notes
