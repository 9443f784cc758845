"""Checking and timing a case: every implementation must agree with fgrad before it is timed;
then the implementations run in interleaved rounds, and medians and min-max are kept.

Protocol for one case:

1. **check**: each implementation is called once (this also warms caches and compiles
   ``jax.jit``); its result, converted to numpy, must be ``allclose`` to fgrad's (its
   derivative, or its forward value for a forward-only row). One that disagrees or raises is
   reported and left out of the timing. That call's time is the row's first call (for
   ``fgrad.jit``, see 3).
2. **calibrate**: the fastest of the next three calls (one for a call over 0.2 s) gives each
   one a number of calls per sample, so that a sample lasts about ``sample_time``. (Each
   sample's first call, after the other rows', pays for what they left in the caches: one
   slow calibrating call gave the 256-wide MLP's eager row 2 calls a sample instead of 15,
   and a median of 4.04 ms a call instead of 3.15.)
3. **rounds**: in each round every implementation takes one sample, in an order rotated by one
   each round (so none always runs first, after the same neighbour, or on a warmer cache). The
   number of rounds is ``rounds``, cut down so that the case takes about ``case_budget``
   seconds but never below ``min_rounds``. A row that can be made anew (``Impl.remake``: a
   fresh ``fgrad.jit``) also has a first call timed in each round, beside the other rows'
   samples; its first call is the median of these and the check's. (One first call, a trace
   of a few milliseconds, measured alone against medians taken later misjudged the ratio by
   up to 1.5x between two runs on the shared machine.) The first calls are timed in every
   other round; in the rounds between, one call of the eager row (``fgrad``) is timed alone
   in the same place, right after the jit row's sample: a call after other code ran costs
   more than a call within a loop of itself (an eager 26 us gradient of tanh took 35 us
   alone, 68 us after 50 ms of busy Python, 135 us after 50 ms of its jit's replays), and
   a first call is such a call. Its target compares the two (``CaseResult.lone_call``;
   RESULTS.md, issue 34's sixth part).
4. **memory** (for the labels the case names): the peak of ``tracemalloc`` over one call,
   above what was allocated before the call.

The garbage collector stays on: collecting what a library leaves behind is part of its cost.
But one process holds every library, and a full collection scans every live container object:
with torch and JAX loaded, and JAX's caches growing at each first call, one costs ~100 ms,
paid by whichever backend happens to trigger it (autograd, which allocates the most, was
timed 2x slower than alone). So ``__main__`` freezes (``gc.freeze``) what exists after the
imports, and with ``Settings.freeze`` each case freezes again after its check, before timing:
a collection then costs what the timed library's own garbage costs.
"""
import gc
import math
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field

import numpy

from .backends import tree_leaves
from .case import FGRAD


@dataclass
class Settings:
    rounds: int
    min_rounds: int
    sample_time: float  # seconds per sample (calls per sample are calibrated to it)
    case_budget: float  # seconds per case, across all its implementations
    memory: bool = True
    freeze: bool = False  # gc.freeze() after each check (see the module's docstring)


FULL = Settings(rounds=21, min_rounds=7, sample_time=0.05, case_budget=15.0, freeze=True)
QUICK = Settings(rounds=3, min_rounds=2, sample_time=0.005, case_budget=0.6, freeze=True)
TINY = Settings(rounds=2, min_rounds=2, sample_time=0.0, case_budget=0.0)


@dataclass
class Stats:
    median: float  # seconds per call
    lo: float
    hi: float
    samples: int
    calls: int  # calls per sample

    def as_dict(self):
        return dict(median=self.median, min=self.lo, max=self.hi, samples=self.samples,
                    calls_per_sample=self.calls)


@dataclass
class CaseResult:
    name: str
    stats: dict = field(default_factory=dict)  # label -> Stats
    failures: dict = field(default_factory=dict)  # label -> why it was left out
    memory: dict = field(default_factory=dict)  # label -> peak bytes
    first_call: dict = field(default_factory=dict)  # label -> seconds of the check call
    lone_call: dict = field(default_factory=dict)  # label -> median seconds of a call alone
    ops: int = 0
    notes: list = field(default_factory=list)

    def ratio(self, label, other):
        """``median(label) / median(other)``, or None when either is missing."""
        a, b = self.stats.get(label), self.stats.get(other)
        return None if a is None or b is None else a.median / b.median

    def as_dict(self):
        return dict(name=self.name, ops=self.ops, notes=self.notes, failures=self.failures,
                    first_call_seconds=self.first_call, lone_call_seconds=self.lone_call,
                    stats={k: v.as_dict() for k, v in self.stats.items()},
                    peak_memory_bytes=self.memory)


def agree(result, ref, rtol, atol):
    """``None`` if the pytrees' leaves match (allclose), else a message saying how not."""
    got, want = tree_leaves(result), tree_leaves(ref)
    if len(got) != len(want):
        return f"{len(got)} leaves where fgrad has {len(want)}"
    for i, (g, w) in enumerate(zip(got, want)):
        g, w = numpy.asarray(g, dtype=float), numpy.asarray(w, dtype=float)
        if g.shape != w.shape:
            return f"leaf {i} has shape {g.shape}, fgrad's {w.shape}"
        if not numpy.allclose(g, w, rtol=rtol, atol=atol):
            err = float(numpy.max(numpy.abs(g - w)))
            return f"leaf {i} differs from fgrad's by up to {err:.3g}"
    return None


def check(case):
    """Call each implementation once; returns ``({label: seconds}, {label: failure})``."""
    times, failures = {}, {}
    for impl in case.impls:
        try:
            t0 = time.perf_counter()
            out = impl()
            times[impl.label] = time.perf_counter() - t0
            why = agree(impl.backend.tonumpy(out), case.refs[impl.kind], case.rtol, case.atol)
        except Exception as e:  # a peer without some feature: reported, not fatal
            why = f"raised {type(e).__name__}: {str(e)[:200]}"
        if why is not None:
            failures[impl.label] = why
    return times, failures


def _time(fn, calls):
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    return (time.perf_counter() - t0) / calls


def run_case(case, settings):
    res = CaseResult(case.name, ops=case.ops, notes=list(case.notes))
    res.first_call, res.failures = check(case)
    impls = [i for i in case.impls if i.label not in res.failures]
    if not impls:
        return res
    if settings.freeze and gc.isenabled():
        gc.collect()
        gc.freeze()
    plan = {}  # label -> (seconds per call, calls per sample)
    for impl in impls:
        first = res.first_call[impl.label]
        per_call = first if first > 2.0 else _time(impl, 1)  # the first call warms up
        if impl.remake is not None and first <= 2.0:
            # (a jit's second call runs the passes and generates its code: calibrated on it,
            # the scalar chain's jit row took 4 calls a sample, 0.9 ms, the RNN's 2, 5 ms)
            per_call = _time(impl, 1)
        if per_call < 0.2:
            # (the fastest of three: see the module's text, step 2)
            per_call = min(per_call, _time(impl, 1), _time(impl, 1))
        plan[impl.label] = (per_call, max(1, int(settings.sample_time / max(per_call, 1e-9))))
    round_cost = sum(t * n for t, n in plan.values())
    rounds = settings.rounds
    if settings.case_budget and round_cost > 0:
        fit = math.floor(settings.case_budget / round_cost)
        rounds = max(settings.min_rounds, min(rounds, fit))
    samples = {i.label: [] for i in impls}
    firsts = {i.label: [res.first_call[i.label]] for i in impls if i.remake is not None}
    eager = case.impl(FGRAD) if firsts and FGRAD in samples else None
    lone = []
    for r in range(rounds):
        k = r % len(impls)
        for impl in impls[k:] + impls[:k]:
            samples[impl.label].append(_time(impl, plan[impl.label][1]))
            if impl.label in firsts and eager is not None and r % 2:
                lone.append(_time(eager, 1))
            elif impl.label in firsts:
                fresh = impl.remake()
                t0 = time.perf_counter()
                impl.backend.finish(fresh())
                firsts[impl.label].append(time.perf_counter() - t0)
    for label, times in firsts.items():
        res.first_call[label] = statistics.median(times)
    if lone:
        res.lone_call[FGRAD] = statistics.median(lone)
    for impl in impls:
        s = samples[impl.label]
        res.stats[impl.label] = Stats(statistics.median(s), min(s), max(s), len(s),
                                      plan[impl.label][1])
    if settings.memory:
        for label in case.memory:
            if label in res.stats:
                res.memory[label] = peak_memory(case.impl(label))
    return res


def peak_memory(fn):
    """Peak bytes allocated (as tracemalloc sees them) during one call, above the start."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        out = fn()
        peak = tracemalloc.get_traced_memory()[1] - base
        del out
    finally:
        tracemalloc.stop()
    return peak


@dataclass
class WorkloadResult:
    name: str
    title: str
    measures: str
    cases: list
    summary: dict = field(default_factory=dict)
    seconds: float = 0.0

    def case(self, name):
        for c in self.cases:
            if c.name == name:
                return c
        return None

    def as_dict(self):
        return dict(name=self.name, title=self.title, measures=self.measures,
                    seconds=self.seconds, summary=self.summary,
                    cases=[c.as_dict() for c in self.cases])


def run_workload(workload, backends, settings, size="full", progress=None):
    t0 = time.perf_counter()
    cases = workload.build(backends, size)
    results = []
    for case in cases:
        if progress:
            progress(f"{workload.name}: {case.name}")
        results.append(run_case(case, settings))
    summary = workload.summarise(results) if workload.summarise else {}
    return WorkloadResult(workload.name, workload.title, workload.measures, results, summary,
                          time.perf_counter() - t0)
