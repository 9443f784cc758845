"""A tape walked only backward keeps just the values its VJP rules read (each primitive's
``residuals``). These tests make it shed every value it may (whatever its size) and check
each primitive's rules still agree with finite differences, so a wrong declaration fails here;
and they measure that shedding frees memory."""
import tracemalloc

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.traces import keeping
from fgrad.core.table import PRIMITIVES
from fgrad.testing import as_function, check_grads, random_case

SHEDDING = sorted(n for n, p in PRIMITIVES.items() if p.residuals is not None and p.spec)


def test_the_hot_primitives_declare_their_residuals():
    for name in ("add", "subtract", "multiply", "divide", "sin", "tanh", "exp", "sum",
                 "reshape", "getitem", "matmul", "dot", "tensordot", "transpose"):
        assert name in SHEDDING, name


@pytest.mark.parametrize("name", SHEDDING)
def test_rules_hold_when_every_unread_value_is_shed(name, monkeypatch):
    monkeypatch.setattr(keeping, "_SHED_BYTES", 0)
    prim = PRIMITIVES[name]
    rng = onp.random.default_rng(0)
    for case in prim.spec.cases:
        f, xs = as_function(prim, *random_case(prim, rng, case))
        check_grads(f, xs, order=2, modes=("rev",), rtol=prim.spec.rtol, atol=prim.spec.atol,
                    eps=prim.spec.eps)


def _chain(x):
    for _ in range(5):
        x = np.tanh(np.sin(x) * 1.5 + 0.5)
    return np.sum(x)


def _peak(f, *args):
    tracemalloc.start()
    try:
        f(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def test_grad_keeps_only_the_residuals_of_a_chain():
    x = onp.random.default_rng(1).standard_normal(100_000)
    lean = _peak(fgrad.grad(_chain), x)
    # linearize walks the tape forward too, so it keeps every value: the reference
    full = _peak(lambda x: fgrad.linearize(_chain, x), x)
    mib = x.nbytes
    assert lean < 0.6 * full, (f"grad's peak {lean / mib:.1f} arrays vs a full tape's "
                               f"{full / mib:.1f}")
    onp.testing.assert_allclose(fgrad.grad(_chain)(x), fgrad.jacrev(_chain)(x), rtol=1e-14)
