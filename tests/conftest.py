"""Hypothesis profiles: ``ci`` (the default: fixed seed, enough examples to mean something,
well inside CI's time), ``dev`` (random seed) and ``thorough`` (run by hand before a release):

    HYPOTHESIS_PROFILE=thorough python -m pytest tests/test_rules.py
"""
import os

from hypothesis import HealthCheck, settings

_common = dict(deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                     HealthCheck.filter_too_much])
settings.register_profile("ci", max_examples=30, derandomize=True, print_blob=True, **_common)
settings.register_profile("dev", max_examples=30, **_common)
settings.register_profile("thorough", max_examples=500, **_common)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))
