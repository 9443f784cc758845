"""What a workload hands the runner: cases, each a set of implementations of one computation.

An ``Impl`` is a zero-argument callable (inputs already built in its backend's array type)
labelled by the row it fills: ``fgrad``, ``numpy fwd`` (the forward pass alone), ``numpy hand``
(the same derivative by hand-written backprop or a closed form), ``autograd``, ``jax``,
``jax.jit``, ``torch``, and ``fgrad.jit`` (fgrad's transforms under ``fgrad.jit``). Its ``kind``
says what it returns: ``"deriv"`` (compared with fgrad's derivative) or ``"forward"`` (compared
with fgrad's forward value).
"""
from dataclasses import dataclass, field
from typing import Any, Callable

FGRAD, FWD, HAND, JIT = "fgrad", "numpy fwd", "numpy hand", "fgrad.jit"


@dataclass
class Impl:
    label: str
    backend: Any  # backends.Backend, for converting the result to numpy
    fn: Callable[[], Any]
    kind: str = "deriv"
    # a new ``fn`` that has not run yet (a fresh ``fgrad.jit``), for timing more first calls
    remake: Any = None

    def __call__(self):
        return self.backend.finish(self.fn())


@dataclass
class Case:
    """One timed computation. ``refs`` holds fgrad's results by kind (``deriv``, ``forward``)
    that every implementation's result must match before its time counts."""

    name: str
    impls: list
    refs: dict
    rtol: float = 1e-7
    atol: float = 1e-9
    ops: int = 0  # primitive calls per run, for a per-op time (0: not reported)
    memory: tuple = ()  # labels whose peak memory (tracemalloc) is measured
    notes: list = field(default_factory=list)

    def impl(self, label):
        for i in self.impls:
            if i.label == label:
                return i
        raise KeyError(label)


@dataclass
class Workload:
    name: str
    title: str
    measures: str  # one line: what is timed and why
    build: Callable  # build(backends, size) -> list of Case; size is "tiny" or "full"
    summarise: Callable = None  # summarise(case_results) -> {label: {metric: value}}


def peer_impls(backends, make, kind="deriv", skip=()):
    """``Impl``s for the peers present: ``make(b)`` returns the zero-argument callable, or
    ``None`` where that backend cannot do it."""
    out = []
    for name in (JIT, "autograd", "jax", "jax.jit", "torch"):
        b = backends.get(name)
        if b is None or name in skip:
            continue
        fn = make(b)
        if fn is not None:
            out.append(Impl(name, b, fn, kind,
                            remake=(lambda b=b: make(b)) if name == JIT else None))
    return out
