"""autograd's spellings with their fgrad meaning, for code written against HIPS/autograd.

A library written for autograd runs on fgrad unchanged after one line, run before it is
imported (in a test suite's ``conftest.py``, or at the top of the program)::

    import fgrad.autograd; fgrad.autograd.install()

after which ``import autograd``, ``autograd.numpy``, ``autograd.scipy.*``,
``autograd.extend``, ``autograd.builtins``, ``autograd.misc.*``,
``autograd.differential_operators``, ``autograd.numpy.numpy_boxes``,
``autograd.numpy.numpy_vjps`` (and ``numpy_jvps``, ``numpy_vspaces``, ``numpy_wrapper``) and
``autograd.test_util`` are fgrad's (this package's modules of those names, ``fgrad.numpy`` and
``fgrad.scipy``). Code of one's own can also be moved by renaming its imports::

    import autograd.numpy as np            ->   import fgrad.numpy as np
    import autograd.scipy.stats as stats   ->   import fgrad.scipy.stats as stats
    from autograd import grad, jacobian    ->   from fgrad.autograd import grad, jacobian

Every function here is a thin layer over fgrad's transforms, with autograd's argument names
(``argnum``, not ``argnums``) and autograd's return conventions (``make_vjp`` returns
``(vjp, ans)``, ``make_jvp(f)(x)`` returns a function of the tangent). ``argnum`` may be an int
or a tuple of ints, as in autograd. Primitives defined the autograd way (``@primitive`` and
``defvjp`` with curried rules ``lambda ans, *args: lambda g: ...``) are fgrad primitives, so
fgrad's transforms (``jvp``, ``vmap``, ``jit``) take them too.

Integers as autograd takes them: an integer *array* is differentiated at its values (its
gradient is float64; ``fgrad.grad`` refuses it, as ``jax.grad`` does), an integer scalar is a
``TypeError`` (cast with ``float(x)``), as in autograd. The gradient of a real function of a
complex input follows JAX's convention (the conjugate of the steepest-ascent direction), which
is autograd's as well.
"""
from typing import Any, Callable, Sequence
import inspect
import warnings
from collections import OrderedDict

import numpy as _onp

from ..core import table
from .. import transforms, user_primitives
from ..traces import arguments
from ..checkpointing import checkpoint  # noqa: F401  (autograd.checkpoint: the same idea)
from ..numpy import ones_like, real, reshape, tensordot
from ..core.pytree import tree_leaves, tree_map
from ..core.tracer import value_for_shape, value_dtype
from .vspaces import vspace
from .wrap_util import wrap_nary_f
from . import builtins as _builtins

__all__ = ["grad", "elementwise_grad", "value_and_grad", "grad_and_aux", "jacobian",
           "hessian", "make_vjp", "make_jvp", "make_hvp", "make_ggnvp", "deriv",
           "holomorphic_grad", "hessian_vector_product", "hessian_tensor_product",
           "vector_jacobian_product", "tensor_jacobian_product", "multigrad_dict", "grad_named",
           "checkpoint",
           "primitive", "defvjp", "defvjp_argnum", "defjvp", "def_linear", "install",
           "uninstall", "make_jvp_reversemode"]


def _named(g, f, what, argnum=None):
    """``g``, named for the operator ``what`` of ``f`` as autograd names it
    (``grad_of_f_wrt_argnum_0``); with ``argnum``, it takes integer arrays at those arguments
    as autograd does (see :func:`_int_arrays_as_floats`)."""
    if argnum is not None:
        inner = g

        def g(*args, **kwargs):
            return inner(*_int_arrays_as_floats(args, argnum), **kwargs)
    return wrap_nary_f(f, what, 0 if argnum is None else argnum)(g)


def _int_arrays_as_floats(args, argnum):
    """autograd differentiates with respect to an integer *array* (not an integer scalar),
    at its values: such an argument (or such leaves of a container argument) is given to fgrad
    as float64, whose transforms refuse integers as JAX's do. Only the forward values of
    integer-only arithmetic on it differ (``x // 2`` is float64 here; autograd refuses it)."""
    nums = [n for n in ((argnum,) if isinstance(argnum, int) else argnum)
            if isinstance(n, int) and -len(args) <= n < len(args)]  # (others: fgrad's error)
    if not any(_has_int_array(args[n]) for n in nums):
        return args
    args = list(args)
    for n in nums:
        args[n] = tree_map(_as_float, args[n])
    return tuple(args)


def _has_int_array(x):
    return any(_is_int_array(v) for v in tree_leaves(x))


def _is_int_array(v):
    return isinstance(v, _onp.ndarray) and v.ndim > 0 and v.dtype.kind in "iu"


def _as_float(v):
    return v.astype(_onp.float64) if _is_int_array(v) else v


# --- the differential operators ------------------------------------------------------------

# (grad's docstring opens on a blank line and "Returns a function which", as autograd's: code
# written for autograd reads it, autograd's own tests too)
def grad(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """
    Returns a function which computes autograd's ``grad``: the gradient of a real scalar
    ``fun`` with respect to positional argument ``argnum`` (``fgrad.grad(fun,
    argnums=argnum)``).

    A one-element array output (shape ``(1,)``, ``(1, 1)``) counts as a scalar, as in
    autograd.

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import grad
    >>> float(grad(lambda x, y: x * y ** 2, argnum=1)(3.0, 2.0))
    12.0
    >>> grad(lambda x: np.dot(np.ones((1, 2)), x ** 2))(np.array([1.0, 3.0])).tolist()
    [2.0, 6.0]
    """
    return _named(transforms.grad(lambda *a, **k: _one_element(fun(*a, **k)), argnums=argnum),
                  fun, "grad", argnum)


def _one_element(out):
    """A one-element array as a 0-d one (autograd takes it as a scalar output); anything
    else as it is (fgrad's error for a non-scalar output names the shape)."""
    m = value_for_shape(out)
    if getattr(m, "ndim", 0) and getattr(m, "size", 0) == 1:
        return reshape(out, ())
    return out


def value_and_grad(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``value_and_grad``: ``(fun(*args), gradient)`` from one forward pass.

    >>> from fgrad.autograd import value_and_grad
    >>> [float(v) for v in value_and_grad(lambda x: x ** 3)(2.0)]
    [8.0, 12.0]
    """
    def with_value(*args, **kwargs):
        out = fun(*args, **kwargs)
        return _one_element(out), out

    def value_and_gradient(*args, **kwargs):
        (_, value), g = transforms.value_and_grad(with_value, argnums=argnum,
                                                  has_aux=True)(*args, **kwargs)
        return value, g
    return _named(value_and_gradient, fun, "value_and_grad", argnum)


def grad_and_aux(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``grad_and_aux``: ``fun`` returns ``(value, aux)``; gives ``(gradient, aux)``.

    >>> from fgrad.autograd import grad_and_aux
    >>> g, aux = grad_and_aux(lambda x: (x ** 2, "seen"))(3.0)
    >>> float(g), aux
    (6.0, 'seen')
    """
    return _named(transforms.grad(fun, argnums=argnum, has_aux=True), fun, "grad_and_aux",
                  argnum)


def elementwise_grad(fun: Callable[..., Any],
                     argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``elementwise_grad``: the vector-Jacobian product with a cotangent of ones,
    which is the derivative of each output entry with respect to its own input entry when
    ``fun`` acts elementwise (for other functions: the gradient of the sum of the outputs).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import elementwise_grad
    >>> elementwise_grad(np.sin)(np.array([0.0, np.pi])).tolist()
    [1.0, -1.0]
    """
    def gradfun(*args, **kwargs):
        vjp, ans = make_vjp(fun, argnum)(*args, **kwargs)
        return vjp(ones_like(ans))

    return _named(gradfun, fun, "elementwise_grad")


def jacobian(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``jacobian``: shape ``out.shape + in.shape`` (reverse mode, as autograd).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import jacobian
    >>> jacobian(lambda x: x ** 2)(np.array([1.0, 3.0])).tolist()
    [[2.0, 0.0], [0.0, 6.0]]
    """
    return _named(transforms.jacrev(fun, argnums=argnum), fun, "jacobian", argnum)


def hessian(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``hessian``: ``in.shape + in.shape`` for a scalar ``fun`` (fgrad computes it
    forward over reverse).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import hessian
    >>> hessian(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0])).tolist()
    [[6.0, 0.0], [0.0, 12.0]]
    """
    return _named(transforms.hessian(fun, argnums=argnum), fun, "hessian", argnum)


def make_vjp(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``make_vjp``: ``make_vjp(fun)(*args)`` runs ``fun`` once and returns
    ``(vjp, ans)``; ``vjp(g)`` is the cotangent of argument ``argnum`` (a tuple of them when
    ``argnum`` is a tuple).

    >>> from fgrad.autograd import make_vjp
    >>> vjp, ans = make_vjp(lambda x: x ** 2)(3.0)
    >>> float(ans), float(vjp(1.0))
    (9.0, 6.0)
    """
    def vjp_maker(*args, **kwargs):
        f, dyn = arguments.argnums_partial(fun, "make_vjp", args, kwargs, argnum)
        ans, pull = transforms.vjp(f, *dyn)
        if isinstance(argnum, int):
            return (lambda g: pull(g)[0]), ans
        return pull, ans

    return _named(vjp_maker, fun, "make_vjp", argnum)


def make_jvp(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``make_jvp``: ``make_jvp(fun)(*args)`` is a function of a tangent ``v`` of
    argument ``argnum`` returning ``(ans, jvp)`` (``fun`` runs once per call of it).

    >>> from fgrad.autograd import make_jvp
    >>> [float(v) for v in make_jvp(lambda x: x ** 3)(2.0)(1.0)]
    [8.0, 12.0]
    """
    def jvp_maker(*args, **kwargs):
        f, dyn = arguments.argnums_partial(fun, "make_jvp", args, kwargs, argnum)

        def jvp(v):
            return transforms.jvp(f, dyn, (v,) if isinstance(argnum, int) else tuple(v))

        return jvp

    return _named(jvp_maker, fun, "make_jvp", argnum)


def deriv(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``deriv``: the JVP with a tangent of ones, the derivative of a function of
    one scalar (elementwise functions: each output entry's derivative, by forward mode).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import deriv
    >>> float(deriv(np.exp)(0.0))
    1.0
    """
    def derivfun(*args, **kwargs):
        x = args[argnum]
        return make_jvp(fun, argnum)(*args, **kwargs)(_onp.ones_like(value_for_shape(x)))[1]

    return _named(derivfun, fun, "deriv")


def make_hvp(fun: Callable[..., Any], argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``make_hvp``: ``make_hvp(fun)(*args)`` returns ``(hvp, gradient)``, with
    ``hvp(v)`` the Hessian-vector product at that point (the gradient recorded once, each
    product one reverse pass over it).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import make_hvp
    >>> hvp, g = make_hvp(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]))
    >>> hvp(np.array([1.0, 1.0])).tolist(), g.tolist()
    ([6.0, 12.0], [3.0, 12.0])
    """
    return _named(make_vjp(transforms.grad(fun, argnums=argnum), argnum), fun, "make_hvp")


def hessian_tensor_product(fun: Callable[..., Any],
                           argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``hessian_tensor_product`` (alias ``hessian_vector_product``):
    ``hvp(fun)(*args, v)`` is ``H v``, the Hessian of ``fun`` with respect to argument
    ``argnum`` contracted with ``v`` over all of its axes, by forward over reverse mode.

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import hessian_vector_product
    >>> hessian_vector_product(lambda x: np.sum(x ** 3))(np.array([1.0, 2.0]),
    ...                                                 np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
    """
    if not isinstance(argnum, int):
        raise TypeError(f"hessian_vector_product: argnum must be an int, got {argnum!r}")
    fun_grad = transforms.grad(fun, argnums=argnum)

    def hvp(*args, **kwargs):
        args, v = args[:-1], args[-1]
        f, dyn = arguments.argnums_partial(fun_grad, "hessian_vector_product", args, kwargs,
                                             argnum)
        return transforms.jvp(f, dyn, (v,))[1]

    return _named(hvp, fun, "hessian_vector_product", argnum)


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun: Callable[..., Any],
                            argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``tensor_jacobian_product`` (alias ``vector_jacobian_product``):
    ``tjp(fun)(*args, v)`` contracts ``v`` with the Jacobian's leading axes, those of
    ``fun``'s output: a ``v`` shaped like the output gives an array shaped like argument
    ``argnum`` (one reverse pass); a ``v`` shaped like the output's first axes, the Jacobian
    of ``tensordot(v, fun(*args), v.ndim)`` (the remaining output axes, then the argument's).

    >>> import fgrad.numpy as np
    >>> from fgrad.autograd import vector_jacobian_product
    >>> vector_jacobian_product(lambda x: x ** 2)(np.array([1.0, 3.0]),
    ...                                           np.array([1.0, 10.0])).tolist()
    [2.0, 60.0]
    >>> vector_jacobian_product(lambda x: np.outer(x, x))(np.array([1.0, 3.0]),
    ...                                                   np.array([1.0, 0.0])).tolist()
    [[2.0, 0.0], [3.0, 1.0]]
    """
    def tjp(*args, **kwargs):
        args, v = args[:-1], args[-1]
        vjp, ans = make_vjp(fun, argnum)(*args, **kwargs)
        k = _onp.ndim(value_for_shape(v))
        if k == _onp.ndim(value_for_shape(ans)):
            return vjp(v)
        return jacobian(lambda *a, **kw: tensordot(v, fun(*a, **kw), k), argnum)(
            *args, **kwargs)

    return _named(tjp, fun, "vector_jacobian_product")


vector_jacobian_product = tensor_jacobian_product


def holomorphic_grad(fun: Callable[..., Any],
                     argnum: int | Sequence[int] = 0) -> Callable[..., Any]:
    """autograd's ``holomorphic_grad``: the complex derivative f'(z) of a holomorphic ``fun``
    (the gradient of its real part, which is f'(z) by the Cauchy-Riemann equations). Warns, as
    autograd does, when the input is not complex. fgrad's own spelling is
    ``fgrad.grad(fun, holomorphic=True)``, which refuses real inputs and outputs instead.

    >>> from fgrad.autograd import holomorphic_grad
    >>> complex(holomorphic_grad(lambda z: z ** 2)(1 + 2j))
    (2+4j)
    """
    def gradfun(*args, **kwargs):
        nums = [argnum] if isinstance(argnum, int) else list(argnum)
        for n in nums:
            if value_dtype(value_for_shape(args[n])).kind != "c":
                warnings.warn("Input to holomorphic_grad is not complex", stacklevel=2)
        return transforms.grad(lambda *a, **k: real(fun(*a, **k)), argnums=argnum)(
            *args, **kwargs)

    return _named(gradfun, fun, "holomorphic_grad")


def multigrad_dict(fun: Callable[..., Any]) -> Callable[..., Any]:
    """autograd's ``multigrad_dict``: the gradient with respect to every argument at once, as
    an ``OrderedDict`` from parameter name to gradient (defaults included; a ``*args``
    parameter's gradient is a tuple, a ``**kwargs`` parameter's a dict).

    >>> from fgrad.autograd import multigrad_dict
    >>> g = multigrad_dict(lambda x, y=2.0: x * y)(3.0)
    >>> {k: float(v) for k, v in g.items()}
    {'x': 2.0, 'y': 3.0}
    """
    sig = inspect.signature(fun)

    def call(bound):
        args, kwargs = [], {}
        for name, p in sig.parameters.items():
            if p.kind == p.VAR_POSITIONAL:  # (a tuple: its gradient is one too)
                args.extend(bound[name])
            elif p.kind == p.VAR_KEYWORD:  # (a dict)
                kwargs.update(bound[name])
            elif p.kind == p.KEYWORD_ONLY:
                kwargs[name] = bound[name]
            else:
                args.append(bound[name])
        return fun(*args, **kwargs)

    def gradfun(*args, **kwargs):
        bound = sig.bind(*args, **kwargs)
        bound.apply_defaults()
        grads = transforms.grad(call)(dict(bound.arguments))
        return OrderedDict((name, grads[name]) for name in bound.arguments)

    return _named(gradfun, fun, "multigrad_dict")


def grad_named(fun: Callable[..., Any], argname: str) -> Callable[..., Any]:
    """autograd's ``grad_named(fun, argname)``: the gradient with respect to the positional
    parameter named ``argname`` (``grad(fun, argnum)`` at its place).

    >>> from fgrad.autograd import grad_named
    >>> float(grad_named(lambda x, y: x * y ** 2, "y")(3.0, 2.0))
    12.0
    """
    names = [n for n, p in inspect.signature(fun).parameters.items()
             if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    if argname not in names:
        raise ValueError(f"grad_named: {getattr(fun, '__name__', fun)!r} has no positional "
                         f"parameter {argname!r} (it has {names}); *args and **kwargs are "
                         "not named")
    return grad(fun, names.index(argname))


# --- defining primitives the autograd way ----------------------------------------------------

def primitive(f: Callable[..., Any]) -> Any:
    """autograd's ``@primitive``: ``f`` becomes an fgrad primitive (named by its module and
    qualified name, so a library's ``logsumexp`` does not clash with fgrad's own), to be given
    rules with :func:`defvjp` (autograd's curried form) or :func:`defjvp`.

    >>> import numpy, fgrad
    >>> from fgrad.autograd import primitive, defvjp
    >>> @primitive
    ... def cube(x):
    ...     return x ** 3
    >>> defvjp(cube, lambda ans, x: lambda g: g * 3 * x ** 2)
    >>> float(fgrad.grad(cube)(2.0))
    12.0
    """
    # (a numpy or scipy ufunc, which autograd-gamma wraps, has a name but no module)
    where = getattr(f, "__module__", None) or f"{type(f).__module__}.{type(f).__name__}"
    # (a callable object, scipy's PytestTester say, has neither name: its class names it)
    name = getattr(f, "__qualname__", None) or getattr(f, "__name__", None) or type(f).__name__
    prim = user_primitives.primitive(f, name=f"{where}.{name}")
    _old_methods(prim)
    return prim


def _old_methods(prim):
    """The methods autograd's primitives had before its version 1.2 and keep, with a warning
    (``f.defgrad(maker, argnum)``, ``f.defvjp(rule, argnum)`` with the rule
    ``(g, ans, vs, gvs, *args)``, ``f.defvjp_is_zero(argnums)``), for libraries of that time."""
    def warn(name):
        warnings.warn(f"{prim.name}.{name}: autograd's {name} method is deprecated (autograd "
                      "1.2); give the rules with defvjp(f, ...)", stacklevel=3)

    def defgrad(maker, argnum=0):
        warn("defgrad")
        defvjp(prim, maker, argnums=(argnum,))

    def old_defvjp(rule, argnum=0):
        warn("defvjp")

        def new_rule(g, ans, *args, **kwargs):
            return rule(g, ans, vspace(args[argnum]), vspace(g), *args, **kwargs)
        table.defvjp(prim, new_rule, argnums=(argnum,))

    def defvjp_is_zero(argnums=(0,)):
        warn("defvjp_is_zero")
        table.defvjp(prim, *[None] * len(argnums), argnums=tuple(argnums))

    prim.defgrad, prim.defvjp, prim.defvjp_is_zero = defgrad, old_defvjp, defvjp_is_zero


def _uncurried(maker):
    """autograd's ``maker(ans, *args, **kwargs) -> (g -> cotangent)`` as fgrad's rule
    ``(g, ans, *args, **kwargs) -> cotangent``."""
    def rule(g, ans, *args, **kwargs):
        return maker(ans, *args, **kwargs)(g)

    rule.__name__ = getattr(maker, "__name__", "vjp")
    return rule


def defvjp(fun: Any, *vjpmakers: Callable[..., Any] | None,
           argnums: Sequence[int] | None = None) -> None:
    """autograd's ``defvjp``: the VJP rules of ``fun`` in autograd's curried form,
    ``lambda ans, *args, **kwargs: lambda g: cotangent``, one per argument (``None``: zero
    derivative); ``argnums`` says which arguments they are for. (``fgrad.defvjp`` takes the
    uncurried ``lambda g, ans, *args: ...``.) See :func:`primitive` for an example."""
    table.defvjp(fun, *[None if m is None else _uncurried(m) for m in vjpmakers],
                 argnums=argnums)


def defvjp_argnum(fun: Any, vjpmaker: Callable[..., Any]) -> None:
    """autograd's ``defvjp_argnum``: one maker for every argument,
    ``vjpmaker(argnum, ans, args, kwargs) -> (g -> cotangent)``.

    >>> import fgrad
    >>> from fgrad.autograd import primitive, defvjp_argnum
    >>> @primitive
    ... def mul(x, y):
    ...     return x * y
    >>> defvjp_argnum(mul, lambda i, ans, args, kwargs: lambda g: g * args[1 - i])
    >>> [float(v) for v in fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0)]
    [5.0, 2.0]
    """
    n = _positional_count(fun, "defvjp_argnum")

    def maker_for(i):
        return lambda g, ans, *args, **kwargs: vjpmaker(i, ans, args, kwargs)(g)

    table.defvjp(fun, *[maker_for(i) for i in range(n)])


def _positional_count(prim, caller):
    try:
        params = list(inspect.signature(prim.impl).parameters.values())
    except (TypeError, ValueError):
        params = []
    if any(p.kind == p.VAR_POSITIONAL for p in params) or not params:
        raise TypeError(f"{caller}({prim.name}): its arguments cannot be counted from its "
                        "signature; give one rule per argument (defvjp / defjvp)")
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty
               for p in params)


def defjvp(fun: Any, *jvpfuns: Callable[..., Any] | None,
           argnums: Sequence[int] | None = None) -> None:
    """autograd's ``defjvp``: ``lambda g, ans, *args, **kwargs: output tangent`` per argument,
    the same form as ``fgrad.defjvp``.

    >>> import fgrad
    >>> from fgrad.autograd import primitive, defjvp
    >>> @primitive
    ... def square(x):
    ...     return x * x
    >>> defjvp(square, lambda g, ans, x: 2 * x * g)
    >>> float(fgrad.jvp(square, (3.0,), (1.0,))[1])
    6.0
    """
    table.defjvp(fun, *jvpfuns, argnums=argnums)


def def_linear(fun: Any) -> None:
    """autograd's ``def_linear``: ``fun`` is linear in each positional argument (multilinear,
    like a product), so its forward-mode derivative in an argument is ``fun`` itself with the
    tangent in that argument's place. As in autograd this gives forward mode only; reverse mode
    needs the transposes, given with :func:`defvjp` (or all at once by ``fgrad.deflinear``).

    >>> import fgrad
    >>> from fgrad.autograd import primitive, def_linear
    >>> @primitive
    ... def scale(a, x):
    ...     return a * x
    >>> def_linear(scale)
    >>> float(fgrad.jvp(lambda x: scale(3.0, x), (1.0,), (2.0,))[1])
    6.0
    """
    table.defjvp(fun, *(table.linear_jvp(fun, i)
                        for i in range(_positional_count(fun, "def_linear"))))


# --- the rest of autograd's top level: make_ggnvp, and the one line ------------------------

from .differential_operators import make_ggnvp, make_jvp_reversemode  # noqa: E402
from ._switch import install, own_names, uninstall  # noqa: E402

own_names()  # (import fgrad.autograd.numpy.random, fgrad.autograd.scipy.stats.norm, ...)


def __getattr__(name):
    """autograd's top-level ``dict``, ``isinstance``, ``list``, ``tuple`` and ``type``
    (``fgrad.autograd.builtins``'), given on demand so that they do not stand for Python's own
    in this module."""
    if name in ("dict", "isinstance", "list", "tuple", "type"):
        return getattr(_builtins, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
