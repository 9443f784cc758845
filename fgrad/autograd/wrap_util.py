"""``autograd.wrap_util``: ``unary_to_nary``, the decorator autograd writes its operators
with (an operator of a function of one argument becomes one of a chosen argument, or a tuple
of them, of a function of several), and ``wraps``/``get_name``, which name the results."""
from typing import Any, Callable

__all__ = ["unary_to_nary", "wraps", "wrap_nary_f", "get_name", "get_doc"]


def get_name(f: Any) -> str:
    """``f``'s ``__name__``, or ``"[unknown name]"``."""
    return getattr(f, "__name__", "[unknown name]")


def get_doc(f: Any) -> str:
    """``f``'s docstring, or an empty one."""
    return getattr(f, "__doc__", "") or ""


def wraps(fun: Any, namestr: str = "{fun}", docstr: str = "{doc}",
          **fields: Any) -> Callable[[Any], Any]:
    """A decorator naming a function after ``fun`` by the templates ``namestr`` and
    ``docstr`` (``{fun}``, ``{doc}`` and ``fields``), as autograd's does; a function whose
    name cannot be set keeps its own."""
    def name_it(f):
        try:
            f.__name__ = namestr.format(fun=get_name(fun), **fields)
            f.__doc__ = docstr.format(fun=get_name(fun), doc=get_doc(fun), **fields)
        except (AttributeError, TypeError, KeyError, IndexError, ValueError):
            pass
        return f
    return name_it


def wrap_nary_f(fun: Any, op: Any, argnum: Any) -> Callable[[Any], Any]:
    """Names an operator's result ``{op}_of_{fun}_wrt_argnum_{argnum}``, as autograd does
    (``op`` the operator or its name); its docstring says so, then gives ``fun``'s."""
    return wraps(fun, "{op}_of_{fun}_wrt_argnum_{argnum}",
                 "    {op} of function {fun} with respect to argument number {argnum}. Takes "
                 "the same arguments as {fun} but returns the {op}.\n\n{doc}",
                 op=op if isinstance(op, str) else get_name(op), argnum=argnum)


def unary_to_nary(unary_operator: Callable[..., Any]) -> Callable[..., Any]:
    """autograd's ``unary_to_nary``: ``unary_operator(f, x, *more)``, written for functions
    of one argument, becomes ``operator(fun, argnum=0, *more)(*args, **kwargs)``, applied to
    ``fun`` as a function of ``args[argnum]`` (a tuple of those arguments where ``argnum`` is
    a tuple or list), the other arguments held at their values.

    >>> import fgrad
    >>> from fgrad.autograd.wrap_util import unary_to_nary
    >>> @unary_to_nary
    ... def derivative(f, x):
    ...     return fgrad.grad(f)(x)
    >>> float(derivative(lambda x, y: x * y ** 2, 1)(3.0, 2.0))
    12.0
    """
    @wraps(unary_operator)
    def operator(fun, argnum=0, *op_args, **op_kwargs):
        if type(argnum) not in (int, tuple, list):
            raise TypeError(f"{get_name(unary_operator)}: argnum must be an int or a tuple "
                            f"of ints, not {argnum!r}")
        several = not isinstance(argnum, int)

        @wrap_nary_f(fun, unary_operator, argnum)
        def nary_f(*args, **kwargs):
            @wraps(fun)
            def unary_f(x):
                full = list(args)
                for n, v in (zip(argnum, x) if several else ((argnum, x),)):
                    full[n] = v
                return fun(*full, **kwargs)

            x = tuple(args[n] for n in argnum) if several else args[argnum]
            return unary_operator(unary_f, x, *op_args, **op_kwargs)
        return nary_f
    return operator
