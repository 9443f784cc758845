"""After ``grad`` returns, is anything of its tape still alive?

Counts the objects whose class is defined in fgrad's tracing machinery (tape nodes, tapes,
tracers, traces, recordings) that one more call of ``grad`` leaves behind: right after it
returns with the garbage collector off (what plain reference counting freed), and after a
full collection (what only a cycle kept alive, or a leak)."""
import gc

import numpy

MODULES = ("fgrad.traces.tape", "fgrad.core.tracer", "fgrad.traces.dual", "fgrad.transforms",
           "fgrad.tools.recorded")


def _count():
    return sum(1 for o in gc.get_objects() if type(o).__module__ in MODULES)


def tape_left_alive(width=16, batch=8):
    import fgrad
    import fgrad.numpy as fnp
    from .workloads.nets import mlp_loss, mlp_params

    rng = numpy.random.default_rng(0)
    params = mlp_params(rng, width)
    x, y = rng.standard_normal((batch, width)), rng.standard_normal((batch, width))
    g = fgrad.grad(lambda p: mlp_loss(fnp, p, x, y))
    g(params)
    gc.collect()
    enabled = gc.isenabled()
    gc.disable()
    try:
        before = _count()
        out = g(params)
        without_gc = _count() - before
        gc.collect()
        after_gc = _count() - before
    finally:
        if enabled:
            gc.enable()
    del out
    return {"without_gc": without_gc, "after_gc": after_gc}
