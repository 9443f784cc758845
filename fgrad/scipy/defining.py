"""The primitive table's ``define`` for scipy's functions, and the refusal of a
differentiated argument they have no derivative in (a fixed one, traced at all:
``fgrad.numpy.wrapping.refuse_traced``)."""
import numpy as _onp

from ..core import errors, table
from ..core.tracer import differentiated


def define(name, impl, *rules, **fields):
    """``fgrad.core.table.define`` for a scipy function. scipy's functions take only numpy
    arrays (they convert others: a Dask array would be computed), except scipy.special's
    ufuncs, which dispatch to the array's library as numpy's do (``Primitive.other_arrays``).
    """
    fields.setdefault("other_arrays", isinstance(impl, _onp.ufunc))
    return table.define(name, impl, *rules, **fields)


def refuse_differentiated(name, arg, value, why):
    """Raise where ``value``, argument ``arg`` of ``fgrad.<name>``, which has no derivative in
    it (``why``), is differentiated; a staged or batched one is an operand like any other."""
    if differentiated(value):
        raise errors.no_derivative_in(name, arg, why)
