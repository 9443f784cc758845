"""The primitive table's ``define`` for scipy's functions (``elementwise``: a function
of several broadcast arguments, from its partial derivatives), the refusal of a differentiated
argument they have no derivative in (a fixed one, traced at all:
``fgrad.numpy.wrapping.refuse_traced``), and each module's fallback for scipy's other
functions (``plain_only_fallback``)."""
import functools
import inspect
import sys

import numpy as _onp

from ..core import errors, table
from ..core.tracer import contains_tracer, differentiated
from ..numpy import batch_rules
from ..numpy.broadcasting import broadcast_like, cast_like, unbroadcast_like


def define(name, impl, *rules, **fields):
    """``fgrad.core.table.define`` for a scipy function. scipy's functions take only numpy
    arrays (they convert others: a Dask array would be computed), except scipy.special's
    ufuncs, which dispatch to the array's library as numpy's do (``Primitive.other_arrays``).
    """
    fields.setdefault("other_arrays", isinstance(impl, _onp.ufunc))
    return table.define(name, impl, *rules, **fields)


def elementwise(name, impl, partial, spec, doc=None, taylor=None):
    """A primitive elementwise in its (broadcast) positional arguments, from
    ``partial(i, ans, *args, **params)``: the derivative of the output in argument ``i``,
    broadcastable to the output (a rule may raise for an argument it cannot differentiate).
    ``taylor``: its rule for ``jet``."""
    def vjp(i, g, ans, *args, **params):
        x = args[i]
        return cast_like(unbroadcast_like(g * partial(i, ans, *args, **params), x), x)

    def jvp(tangents, ans, *args, **params):
        out = None
        for i, t in enumerate(tangents):
            if t is not None:
                c = t * partial(i, ans, *args, **params)
                out = c if out is None else out + c
        return None if out is None else broadcast_like(out, ans)

    return define(name, impl, vjp_by_argnum=vjp, jvp_joint=jvp, spec=spec, doc=doc,
                  taylor=taylor, batch=batch_rules.elementwise)


def as_args(args):
    """scipy's ``args=`` as a tuple: a tuple or list as its items, anything else as the one
    argument (scipy's reading of ``args=x``)."""
    return tuple(args) if isinstance(args, (tuple, list)) else (args,)


def refuse_differentiated(name, arg, value, why):
    """Raise where ``value``, argument ``arg`` of ``fgrad.<name>``, which has no derivative in
    it (``why``), is differentiated; a staged or batched one is an operand like any other."""
    if differentiated(value):
        raise errors.no_derivative_in(name, arg, why)


def stop_gradient_hint(name):
    """What a function without rules can be called on instead (``plain_only_fallback``)."""
    return "; call it on fgrad.stop_gradient(x), or give it rules with fgrad.primitive and " \
        "fgrad.defvjp"


def plain_only_fallback(module, library, hint=stop_gradient_hint):
    """The module ``__getattr__`` of ``fgrad.scipy.<x>`` (``module``, mirroring ``library``):
    scipy's other functions, as autograd's scipy modules had them, run as scipy's own on plain
    values and raise ``NoDerivativeRuleError`` naming themselves when handed a traced value
    (``hint(name)`` adds what to use instead); a name scipy has that is no function (a class,
    a distribution object) raises ``AttributeError`` saying fgrad has no derivatives of it.
    (Each one is made once, when first read, and kept in the module.)"""
    def __getattr__(name):
        fn = getattr(library, name, None)
        if name.startswith("_") or fn is None:
            raise AttributeError(f"module {module!r} has no attribute {name!r}")
        if not (inspect.isroutine(fn) or isinstance(fn, _onp.ufunc)):
            raise AttributeError(
                f"module {module!r} has no attribute {name!r}: fgrad has no derivatives of "
                f"{library.__name__}.{name}; on plain values use scipy's own")

        @functools.wraps(fn)
        def plain_only(*args, **kwargs):
            if contains_tracer(args) or contains_tracer(kwargs):
                raise errors.NoDerivativeRuleError(
                    f"{module}.{name} has no derivative rule: it runs scipy's function on "
                    f"plain values only{hint(name)}.")
            return fn(*args, **kwargs)

        plain_only._fgrad_status = "plain only"
        vars(sys.modules[module])[name] = plain_only
        return plain_only
    return __getattr__
