"""What every transform does with its arguments and outputs, in one place: argument numbers
(``argnums_partial``), flattening and checking the inputs (``flat_inputs``, ``check_input``,
``check_like``), refusing what is no array (``refuse_unknown``), ``has_aux`` (``split_aux``),
the outputs a trace gave back (``outputs_of``) and reading them as plain numpy values
(``finish``, ``fresh``, ``lowered``, ``zeros_for``). ``grad`` and its kin
(``fgrad/transforms.py``), ``jet``, ``vmap``, ``make_graph``, ``jit`` and ``make_tape`` use
them."""
import numpy as _onp

from ..core import errors
from ..core.values import LEAVES, PYTHON_NUMBERS, copied, foreign_array
from ..core.pytree import LEAF, tree_flatten, tree_unflatten
from ..core.tracer import Tracer, value_for_shape, semantics_of_its_own, value_dtype
from ..numpy import astype


def staged_form(f, name, options, make):
    """``make(f)`` staged whole where ``f`` is a jitted function: ``grad(jit(f))`` is
    ``jit(grad(f))``, kept by the jitted function per transform ``name`` and its ``options``
    (``_Jitted._fgrad_staged_transform``), so a replay runs the whole transformed function's code
    instead of the transform's own work around the jitted call. Both equal the eager
    transform bit for bit. None for any other ``f`` (or options that are no cache key)."""
    # (looked up on the class: an object's own __getattr__ may answer any name)
    of = getattr(type(f), "_fgrad_staged_transform", None)
    return None if of is None else of(f, name, options, make)


def check_input(x, fname, where):
    """Differentiable inputs are float or complex (JAX's rule). A Python number stays one,
    so numpy promotes it as it promotes a number (weakly: ``x + float32(1)`` is float32).
    ``where()`` describes the input for the error message."""
    v = value_for_shape(x)
    refuse_unknown(v, fname, where)
    if isinstance(v, (bool, int)):
        kind = type(v).__name__
        raise TypeError(f"{fname} requires float or complex inputs, but {where()} is a {kind} "
                        f"({v!r}). Pass a float array, e.g. 2.0 instead of 2, or "
                        "x.astype(float); non-differentiable values can be closed over instead.")
    dtype = value_dtype(v)
    if dtype.kind not in "fc":
        raise TypeError(f"{fname} requires float or complex inputs, but {where()} has dtype "
                        f"{dtype}. Differentiating with respect to integer or boolean values is "
                        "not defined: convert with x.astype(float), or close over it instead.")
    return x


def refuse_unknown(v, fname, where):
    """A leaf (an input, or an output that is no tracer of this transform) must be an array
    or a number with ndarray semantics; ``where()`` describes it for the message."""
    if v.__class__ in LEAVES:  # (the common leaves, without the checks below)
        return
    if semantics_of_its_own(v):
        raise errors.array_subclass(fname, type(v), where())
    if not isinstance(v, (bool, int, float, complex, _onp.ndarray, _onp.generic,
                          Tracer)) and not foreign_array(v):
        raise errors.not_a_pytree(fname, v, where())


def an_output():
    return "an output"


def outputs_of(trace, out, fname):
    """Read back what a function run under ``trace`` returned: its flat leaves, their tree,
    and per leaf the tracer of ``trace`` it is, or None for a constant (an array or number
    the function did not compute from its inputs; anything else is refused, as is a tracer
    of a transform that has finished). Every transform reads its outputs through this."""
    leaves, tree = tree_flatten(out)
    own = []
    for o in leaves:
        if isinstance(o, Tracer) and o._trace is trace:
            own.append(o)
            continue
        if isinstance(o, Tracer) and not o._trace.alive:
            raise errors.escaped(o._trace)
        refuse_unknown(o, fname, an_output)
        own.append(None)
    return leaves, tree, own


def staged_under(trace, derived, leaves, name, new_trace, carried):
    """A staged function called with ``trace``'s tracers among ``leaves`` (``Trace.
    process_staged``), for a trace whose tracers carry something beside their value (``jvp``'s
    tangents, ``jet``'s terms, read by ``carried``): the function transformed under a trace
    from ``new_trace()`` is staged one level down, kept by the jitted function under ``name``
    and the transformed leaves; its outputs come back as ``trace``'s tracers (an output that
    does not depend on them as a plain value, as eagerly)."""
    own = trace.tracer_type
    wrt = tuple(i for i, x in enumerate(leaves) if x.__class__ is own and x._trace is trace)
    primals = [x._value if x.__class__ is own and x._trace is trace else x for x in leaves]

    def transformed(run):
        def staged(primals, extras):
            inner = new_trace()
            ins = list(primals)
            for i, e in zip(wrt, extras):
                ins[i] = own(inner, primals[i], e)
            out = inner.run(lambda *xs: run(list(xs)), ins, inner.kind)
            flat, tree, mine = outputs_of(inner, out, inner.kind)
            return (tree_unflatten(tree, [o if t is None else t._value
                                          for o, t in zip(flat, mine)]),
                    [None if t is None else carried(t) for t in mine])
        return staged

    out, extras = derived(f"{name} in {wrt}", transformed)(
        primals, [carried(leaves[i]) for i in wrt])
    flat, tree = tree_flatten(out)
    return tree_unflatten(tree, [o if e is None else own(trace, o, e)
                                 for o, e in zip(flat, extras)])


def fresh(v, given):
    """``v``, or a copy of it if it may share memory with an array the caller passed in
    (``given``): a result the caller scales in place must not change their input."""
    if v.__class__ is _onp.ndarray:
        for g in given:
            if g.__class__ is _onp.ndarray and _onp.may_share_memory(v, g):
                return v.copy()
    return v


def shape_of_value(v):
    shape = getattr(v, "shape", None)
    return shape if shape is not None else _onp.shape(v)


def is_integer(x):
    return value_dtype(value_for_shape(x)).kind in "biu"


def flat_inputs(args, fname, allow_int=False):
    """The flat inputs, checked (float or complex; with ``allow_int``, integer and boolean
    ones pass too, as constants whose derivative is ``float0`` zeros)."""
    flat, tree = tree_flatten(tuple(args))

    def where(i):  # the input's description, made only for an error message
        if len(args) > 1:
            return f"input leaf {i}"
        return "argument" if tree.children[0] is LEAF else f"leaf {i} of the argument"

    i = 0
    for x in flat:
        if not (x.__class__ is _onp.ndarray and x.dtype.kind in "fc"):  # (the common case)
            v = value_for_shape(x)  # (a tracer of a float array: the next commonest)
            if not (v.__class__ is _onp.ndarray and v.dtype.kind in "fc") and \
                    not (allow_int and is_integer(x)):
                flat[i] = check_input(x, fname, lambda i=i: where(i))
        i += 1
    return flat, tree


def argnums_partial(f, fname, args, kwargs, argnums):
    """Split ``args`` into the differentiated ones and a function of just those."""
    count = len(args)
    nums = [argnums] if isinstance(argnums, int) else list(argnums)
    i = 0
    for n in nums:  # (a loop, not a generator: this runs on every call of a transform)
        if not isinstance(n, int) or not -count <= n < count:
            by_name = (f"; the argument(s) {', '.join(sorted(kwargs))} were passed by "
                       "keyword, and only positional arguments are differentiated: pass "
                       "them by position" if kwargs else "")
            raise ValueError(f"{fname}: argnums={argnums!r} does not fit a call with "
                             f"{count} positional argument(s){by_name}")
        nums[i] = n % count
        i += 1
    if count == 1 and nums == [0] and not kwargs:  # f itself, called with its one argument
        return f, args

    def partial(*dyn):
        full = list(args)
        for n, v in zip(nums, dyn):
            full[n] = v
        return f(*full, **kwargs)

    return partial, tuple([args[n] for n in nums])


def static_split(args, fixed):
    """``(dynamic, rebuild)`` for a staged function's static arguments (``make_graph``,
    ``jit``): the arguments not at the positions ``fixed``, and ``rebuild(dynamic)``, every
    argument again, the static ones in their places."""
    dynamic = tuple([a for i, a in enumerate(args) if i not in fixed])

    def rebuild(new):
        it = iter(new)
        return [a if i in fixed else next(it) for i, a in enumerate(args)]

    return dynamic, rebuild


def check_holomorphic(fname, leaves, what):
    """``holomorphic=True``: every differentiated input and every output is complex (JAX's
    rule); ``what`` is "input" or "output"."""
    for i, x in enumerate(leaves):
        dtype = value_dtype(value_for_shape(x))
        if dtype.kind != "c":
            fix = ("pass complex values (x.astype(complex))" if what == "input" else
                   "a real-valued function is not holomorphic: for a real function of "
                   "complex inputs use grad or jacrev without holomorphic=True")
            raise TypeError(f"{fname}(..., holomorphic=True) requires complex {what}s, but "
                            f"{what} leaf {i} has dtype {dtype}; {fix}")


def described(out):
    """What a function returned, in the user's words (not a tracer's class)."""
    if isinstance(out, (Tracer, _onp.ndarray)):
        return "a single array"
    if isinstance(out, (_onp.generic, int, float, complex)):
        return "a single number"
    if isinstance(out, (tuple, list)):
        return f"a {type(out).__name__} of {len(out)}"
    return "None" if out is None else f"a {type(out).__name__}"


def split_aux(out, fname):
    if not (isinstance(out, (tuple, list)) and len(out) == 2):
        raise TypeError(f"{fname}(..., has_aux=True) needs the function to return a pair "
                        f"(output, aux), but it returned {described(out)}: return "
                        "(output, aux), or leave has_aux out")
    return out[0], out[1]


def finish(v, like=None):
    """Give back a plain numpy value: numpy scalars for 0-d, the dtype of ``like``."""
    if v.__class__ in PYTHON_NUMBERS:  # a constant output or a Python seed
        v = _onp.asarray(v)
    # (a Python number's derivative has the dtype the computation gave: it has none of its
    # own, numpy promoting it as a weak scalar)
    if like is not None and not (v.__class__ is like.__class__ is _onp.ndarray
                                 and v.dtype is like.dtype) and \
            value_for_shape(like).__class__ not in PYTHON_NUMBERS:
        want, have = value_dtype(value_for_shape(like)), value_dtype(value_for_shape(v))
        # (a complex cotangent of a real input keeps its dtype: the tape took its real part
        # wherever the rules could give one, so this is a complex input's business)
        if have != want and not (have.kind == "c" and want.kind != "c"):
            v = astype(v, want)
    if v.__class__ is _onp.ndarray and v.ndim == 0:
        return v[()]
    return v


def zeros_for(x):
    v = value_for_shape(x)
    if foreign_array(v):  # (made in the value's own library: on its device, or lazy)
        return _onp.zeros_like(v)
    return finish(_onp.zeros(_onp.shape(v), _onp.result_type(v)))


def lowered(tree, trace):
    """Replace the tracers of ``trace`` in a pytree by copies of their values (for aux outputs:
    the tape's rules may read those arrays, and an input's value may be the caller's array)."""
    leaves, td = tree_flatten(tree)
    return tree_unflatten(td, [copied(finish(x._value)) if isinstance(x, Tracer)
                               and x._trace is trace else x for x in leaves])


def check_like(name, given, ref, what):
    g, r = value_for_shape(given), value_for_shape(ref)
    gs, rs = shape_of_value(g), shape_of_value(r)
    if gs != rs:
        raise ValueError(f"{name}: {what} has shape {gs}, but it must match the shape {rs}")
    # a complex perturbation of a real value is no direction it can move in (JAX refuses too)
    if value_dtype(g).kind == "c" and value_dtype(r).kind != "c":
        raise TypeError(f"{name}: {what} is complex, but the value it belongs to is real; "
                        "pass its real part")
