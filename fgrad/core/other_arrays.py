"""Other libraries' arrays (Dask, CuPy): what fgrad needs to know about them, in one place.

fgrad's traces hold whatever value a primitive's numpy function returns. A library that
implements numpy's dispatch protocols (``__array_function__``, ``__array_ufunc__``) gets numpy's
functions called on its arrays back in its own library: ``numpy.sin`` of a Dask array is a Dask
array, lazy; of a CuPy array, a CuPy array on the GPU. So the rules, written with
``fgrad.numpy``, run there unchanged. What differs from numpy's arrays is settled here or
where the core asks ``values.foreign_array``:

- a trace holding such values calls each primitive through dispatch (``Primitive.__call__``;
  the staging trace calls :func:`call_in_own_library` itself), never its numpy function
  directly, so that :func:`call_in_own_library` sees every call;
- a function the library does not implement would convert the arrays to numpy (Dask computes
  them; CuPy refuses): :func:`call_in_own_library` raises an error naming the function and the
  array's type instead, as it does for scipy's functions, which convert their arguments;
- zeros for cotangents and grad's seed are made in the value's own library (``zeros_like``,
  ``ones_like``), an input is copied by its own ``copy()`` (no data for Dask), and
  ``numpy.asarray`` inside fgrad becomes :func:`as_array`, which keeps such an array;
- a rule's shortcut that reads values (no zero here, all finite) asks :func:`surely_none`,
  which answers False for such an array without computing it: the general path is taken.
"""
import warnings

import numpy as _onp

from . import errors
from .values import foreign_array

def call_in_own_library(prim, array, /, *args, **params):
    """``prim.impl(*args, **params)``, where ``array``, another library's array, is among the
    arguments; an ``errors.NotInLibraryError`` naming the primitive and the array's type
    where that library has no counterpart of a function the implementation calls, or takes
    fewer of its arguments. (Dask says so by a FutureWarning, then computes the whole array:
    that warning becomes this error before anything is computed; ``catch_warnings`` sets the
    process's filters for that moment, which builds a graph and computes nothing. CuPy raises
    numpy's TypeError.)"""
    cls = type(array)
    if not prim.other_arrays:
        raise errors.not_in_library(prim.public_name, cls, "its implementation converts its "
                                    "arguments to numpy arrays, as scipy's functions do")
    try:
        with warnings.catch_warnings():
            warnings.filterwarnings("error", r".*function is not implemented by", FutureWarning)
            return prim.impl(*args, **params)
    except FutureWarning as w:
        raise errors.not_in_library(prim.public_name, cls, str(w).split(" is not")[0]) from None
    except (TypeError, NotImplementedError) as e:
        text = str(e)
        if isinstance(e, TypeError) and not any(s in text for s in _UNSUPPORTED):
            raise
        raise errors.not_in_library(prim.public_name, cls,
                                    f"{type(e).__name__}: {text}") from e


# what a library's TypeError says where it lacks a function or one of its arguments
_UNSUPPORTED = ("no implementation found for", "unexpected keyword argument",
                "returned NotImplemented")


def as_array(x):
    """``numpy.asarray(x)``, but another library's array stays in its library (converting a
    Dask array would compute it; a CuPy array refuses)."""
    return x if foreign_array(x) else _onp.asarray(x)


def surely_none(mask):
    """Whether the boolean ``mask`` has no true entry, for a shortcut a rule takes on plain
    values; False for another library's array, which is not computed to find out, and for a
    traced mask (a batch under ``vmap``, a staged value under ``jit``), whose values are not
    read: the caller takes its general path, right for any values."""
    cls = mask.__class__
    if cls is _onp.ndarray or cls is _onp.bool_ or cls is bool:
        return not _onp.any(mask)
    return not getattr(mask, "_fgrad_tracer", False) and not foreign_array(mask) and \
        not _onp.any(mask)
