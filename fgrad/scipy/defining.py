"""The primitive table's ``define`` for scipy's functions."""
import numpy as _onp

from ..core import table


def define(name, impl, *rules, **fields):
    """``fgrad.core.table.define`` for a scipy function. scipy's functions take only numpy
    arrays (they convert others: a Dask array would be computed), except scipy.special's
    ufuncs, which dispatch to the array's library as numpy's do (``Primitive.other_arrays``).
    """
    fields.setdefault("other_arrays", isinstance(impl, _onp.ufunc))
    return table.define(name, impl, *rules, **fields)
