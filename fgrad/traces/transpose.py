"""Transposing a linear map: ``L^T c`` from a function computing ``L t``.

A map that is linear in its input (a JVP rule in its tangent, a VJP rule or a custom_vjp's
``bwd`` in its cotangent) is transposed by recording it on a fresh tape at a zero input and
running that tape backward, since ``<L t, c> = <t, L^T c>``. The map is written with
``fgrad.numpy``, so its transpose is differentiable again: a rule transposed this way serves
derivatives of every order. The cost is one recording and one backward pass of the map per
call.
"""
import numpy as _onp

from ..core import errors
from .tape import Tape, TapeTracer
from ..core.tracer import Tracer, without_derivative, value_for_shape


def transpose(fn, like, cts, nonlinear, context):
    """``L^T cts`` for the linear map ``L = fn`` (a list of values to a list of values, None
    for zero), one cotangent per input (None for zero): ``fn`` is recorded on a fresh tape at
    a zero input shaped like ``like`` and the tape is run backward from ``cts``. A map that
    gives a nonzero output for the zero input is not linear; ``nonlinear(k, value)`` makes the
    error to raise. ``context`` explains, in front of a conversion error, why the input is
    traced."""
    tape = Tape("transpose", lean=True, inputs="keep")  # walked once, backward, here
    ins = [tape.new_input(zeros_like(x)) for x in like]
    in_nodes = [t._node for t in ins]  # (before a write into an input changes its tracer)
    try:
        outs = fn(ins)
    except (errors.ConcretizationError, errors.NoDerivativeRuleError) as e:
        raise type(e)(f"{context}: {e}") from e
    finally:
        tape.alive = False
    seeds = []
    for k, (o, c) in enumerate(zip(outs, cts)):
        if o is None:
            continue
        ours = o.__class__ is TapeTracer and o._trace is tape
        v = without_derivative(o._value if ours else o)
        # (a batch's or a staged graph's values are not read: a check is no reason to make
        # vmap fail or a graph hold a guard on them; the eager call checks them)
        # (only a finite nonzero value tells: a rule's nan or inf at the zero input, such as
        # 0 * inf where its derivative is infinite, is the rule's to pass on, as autograd does)
        if not isinstance(v, Tracer) and _onp.any(_onp.isfinite(v) & (v != 0)):
            raise nonlinear(k, show(v))
        if ours and c is not None:
            seeds.append((o._node, c))
    back = tape.backward(seeds, consume=True) if seeds else {}
    return [back.get(n) for n in in_nodes]


def zeros_like(v):
    """Plain zeros with the shape and dtype of ``v`` (a value under any tracers)."""
    v = value_for_shape(v)
    return _onp.zeros(_onp.shape(v), _onp.result_type(v))


def show(v):
    """A value for an error message: its numbers, abbreviated when there are many."""
    v = _onp.asarray(v)
    if v.size <= 6:
        return repr(v.tolist())
    return f"an array of shape {v.shape} (largest magnitude {_onp.max(_onp.abs(v)):.3g})"
