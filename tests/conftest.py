"""Hypothesis profiles: ``ci`` (the default: fixed seed, enough examples to mean something,
well inside CI's time), ``dev`` (random seed) and ``thorough`` (run by hand before a release):

    HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_rules.py
"""
import os
import threading

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=30, derandomize=True, print_blob=True, **_common)
settings.register_profile("dev", max_examples=30, **_common)
settings.register_profile("thorough", max_examples=500, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


import atexit  # noqa: E402
import shutil  # noqa: E402
import tempfile  # noqa: E402

import pytest  # noqa: E402

# The graphs' code cache (fgrad.traces.codecache) of a test run is its own, never the user's,
# and goes with the run; subprocesses the tests start inherit it.
if "FGRAD_CACHE_DIR" not in os.environ:
    os.environ["FGRAD_CACHE_DIR"] = tempfile.mkdtemp(prefix="fgrad-test-cache-")
    atexit.register(shutil.rmtree, os.environ["FGRAD_CACHE_DIR"], ignore_errors=True)

from fgrad.core.table import PRIMITIVES  # noqa: E402
# fgrad.numpy's submodules loaded on first use (fft, linalg, polynomial): their rules join
# the table now, not within a test (whose fixture below would take them out again)
import fgrad.numpy  # noqa: E402
from fgrad.numpy.namespace import load_on_first_use  # noqa: E402
load_on_first_use(vars(fgrad.numpy))


@pytest.fixture(autouse=True)
def _table_left_as_found():
    """Primitives a test registers (user primitives, docstring examples) leave with it."""
    before = set(PRIMITIVES)
    yield
    for name in set(PRIMITIVES) - before:
        del PRIMITIVES[name]


@pytest.fixture
def in_threads():
    """``run(work, arg_tuples)``: ``work(*args)`` once per tuple, each in its own thread, all
    released together; asserts every thread finished and returns what they raised (reprs)."""
    def run(work, arg_tuples, timeout=60):
        barrier, raised = threading.Barrier(len(arg_tuples)), []

        def body(*args):
            try:
                barrier.wait()
                work(*args)
            except Exception as e:  # pragma: no cover - reported by the caller's assertion
                raised.append(repr(e))

        threads = [threading.Thread(target=body, args=a) for a in arg_tuples]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout)
        assert not any(t.is_alive() for t in threads), "a thread did not finish"
        return raised

    return run
