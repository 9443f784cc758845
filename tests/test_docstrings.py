"""The examples in fgrad's own docstrings run and print what they say.

(Functions that stand in for numpy's carry numpy's docstrings, whose examples are numpy's
business, so only fgrad's modules are collected here.)
"""
import doctest
import importlib

import pytest

MODULES = ["fgrad.transforms", "fgrad.core.table", "fgrad.core.pytree", "fgrad.tree_util",
           "fgrad.testing",
           "fgrad.numpy.broadcasting", "fgrad.tools.recorded", "fgrad.custom",
           "fgrad.checkpointing",
           "fgrad.traces.staging", "fgrad.jitting", "fgrad.traces.passes", "fgrad.numpy.random",
           "fgrad.traces.batching", "fgrad.numpy.ufunc_methods", "fgrad.nn", "fgrad.numpy.indexing",
           "fgrad.autograd", "fgrad.traces.taylor", "fgrad.testing.compositions",
           "fgrad.autograd._switch", "fgrad.autograd.extend", "fgrad.autograd.misc.flatten",
           "fgrad.autograd.misc.optimizers", "fgrad.autograd.numpy.numpy_wrapper",
           "fgrad.autograd.numpy.numpy_jvps",
           "fgrad.autograd.numpy.numpy_vjps", "fgrad.autograd.test_util",
           "fgrad.autograd.differential_operators", "fgrad.autograd.core",
           "fgrad.autograd.tracer", "fgrad.autograd.wrap_util", "fgrad.autograd.util",
           "fgrad.autograd.builtins", "fgrad.autograd.misc.tracers",
           "fgrad.autograd.scipy_signal", "fgrad.autograd.vspaces", "fgrad.scipy.optimize",
           "fgrad.scipy.interpolate", "fgrad.scipy.spatial.distance",
           "fgrad.scipy.structured", "fgrad.scipy.summaries", "fgrad.scipy.integrate"]


@pytest.mark.parametrize("name", MODULES)
def test_docstring_examples(name):
    module = importlib.import_module(name)
    finder = doctest.DocTestFinder(exclude_empty=True)
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    tests = [t for t in finder.find(module, name) if t.examples
             and getattr(t, "filename", None) == getattr(module, "__file__", None)]
    for t in tests:
        runner.run(t)
    result = runner.summarize(verbose=False)
    assert result.attempted > 0, f"no docstring examples found in {name}"
    assert result.failed == 0, f"{result.failed} docstring example(s) failed in {name}"


def test_public_transforms_have_examples():
    import fgrad
    for name in ["grad", "value_and_grad", "vjp", "jvp", "linearize", "jacfwd", "jacrev",
                 "hessian", "stop_gradient", "primitive", "custom_vjp", "custom_jvp",
                 "checkpoint", "make_graph", "jit", "vmap"]:
        assert ">>>" in (getattr(fgrad, name).__doc__ or ""), f"fgrad.{name} has no example"
