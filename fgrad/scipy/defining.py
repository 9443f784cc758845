"""The primitive table's ``define`` for scipy's functions, and the refusal of a traced
argument they take as a fixed value."""
import numpy as _onp

from ..core import errors, table
from ..core.tracer import contains_tracer, differentiated


def define(name, impl, *rules, **fields):
    """``fgrad.core.table.define`` for a scipy function. scipy's functions take only numpy
    arrays (they convert others: a Dask array would be computed), except scipy.special's
    ufuncs, which dispatch to the array's library as numpy's do (``Primitive.other_arrays``).
    """
    fields.setdefault("other_arrays", isinstance(impl, _onp.ufunc))
    return table.define(name, impl, *rules, **fields)


def refuse_traced(name, arg, value, why):
    """Raise where ``value``, argument ``arg`` of ``fgrad.<name>``, which takes it as a fixed
    value (``why``), holds a tracer: differentiated, that it has no derivative; staged or
    batched, how to keep it fixed."""
    if contains_tracer(value):
        raise (errors.no_derivative_in if differentiated(value) else
               errors.fixed_argument_traced)(name, arg, why)


def refuse_differentiated(name, arg, value, why):
    """Raise where ``value``, argument ``arg`` of ``fgrad.<name>``, which has no derivative in
    it (``why``), is differentiated; a staged or batched one is an operand like any other."""
    if differentiated(value):
        raise errors.no_derivative_in(name, arg, why)
