"""The errors fgrad raises, and the messages that tell a user what to do next.

Every error a user can trigger by differentiating something is raised from here, so the wording
stays consistent and each message names the function, the argument and the way out.
All of them subclass the built-in type a Python user would expect (``TypeError`` mostly), so
``except TypeError`` keeps working.
"""
import functools
import sys

import numpy as _onp


class NoDerivativeRuleError(TypeError, NotImplementedError):
    """A numpy function without a derivative rule was handed a traced value. Also a
    ``NotImplementedError``, which autograd and JAX raise for a missing rule, so code catching
    theirs catches it."""


class ConcretizationError(TypeError):
    """A traced value was turned into a plain number or array, which would drop its derivative."""


class TracerMutationError(TypeError):
    """A traced array was modified in place; fgrad arrays are immutable inside transforms."""


class EscapedTracerError(RuntimeError):
    """A traced value outlived the transform that made it and was used again."""


class ClosedOverTracerError(TypeError):
    """A custom_jvp/custom_vjp/checkpoint function closed over a value being differentiated,
    which its rule (or its recomputation) cannot see."""


class NotInLibraryError(TypeError):
    """A numpy function that the library of the array it was given (Dask, CuPy) lacks."""


def function_name(f):
    """The name a message gives a user's function: its ``__name__``, a ``functools.partial``'s
    function's, or a callable object's class's."""
    while isinstance(f, functools.partial):
        f = f.func
    return getattr(f, "__name__", None) or type(f).__name__


def not_in_library(name, cls, what):
    lib = cls.__module__.split(".")[0]
    return NotInLibraryError(
        f"{name} on a {cls.__module__}.{cls.__qualname__}: {lib} has no "
        f"counterpart ({what}), so it cannot run there without converting the whole array "
        f"to numpy. Convert it yourself where it fits in memory (numpy.asarray(x), or "
        f"x.compute() for Dask), or write the step with {lib}'s own functions.")


def no_rule(name, argnum, why=None):
    short = name.rsplit(".", 1)[-1]  # "linalg.det" -> "det": the snippet must be valid Python
    why = f" ({why})" if why else ""
    return NoDerivativeRuleError(
        f"fgrad.numpy.{name} has no derivative rule{why}, so it cannot take a traced value "
        f"(argument {argnum} is being differentiated).\n"
        f"Add a rule to the primitive table, for example:\n"
        f"    import fgrad, numpy\n"
        f"    {short} = fgrad.primitive(numpy.{name})\n"
        f"    fgrad.defvjp({short}, lambda g, ans, x: g * <d{short}/dx>)\n"
        f"    fgrad.defjvp({short}, lambda t, ans, x: t * <d{short}/dx>)\n"
        f"then call {short}(...) instead of fgrad.numpy.{name}(...). Or, if no derivative should "
        f"flow through it, call it on fgrad.stop_gradient(x)."
    )


def no_derivative_in(name, arg, why):
    """``name`` is differentiable, but not in its argument ``arg``."""
    return NoDerivativeRuleError(
        f"fgrad.{name} has no derivative in its argument {arg!r} ({why}), and {arg!r} is being "
        f"differentiated. Pass {arg!r} as a plain value (or fgrad.stop_gradient({arg})) and "
        "differentiate in the other arguments.")


def fixed_argument_traced(name, arg, why):
    """``name`` takes ``arg`` as a fixed value, and a staging or batching trace holds it."""
    return ConcretizationError(
        f"fgrad.{name} takes its argument {arg!r} as a fixed value ({why}), and it is a staged "
        "or batched value here (an argument of a jit function, or mapped by vmap). Under jit "
        f"make {arg!r} static (static_argnums or static_argnames) or close over it; under "
        "vmap give it in_axes=None.")


def missing_rule(name, argnum, what):
    """A primitive with no rule for a differentiated argument: ``what`` is the mode's ("VJP";
    "JVP" only when there is no VJP rule either, which forward mode would transpose)."""
    if what == "VJP":
        return NoDerivativeRuleError(
            f"primitive {name} has no VJP rule for argument {argnum}, which is being "
            f"differentiated. Add one with fgrad.defvjp({name}, lambda g, ans, *args: ..., "
            f"argnums=({argnum},)), or use forward mode (jvp, jacfwd).")
    return NoDerivativeRuleError(
        f"primitive {name} has no JVP rule for argument {argnum}, which is being "
        f"differentiated, nor a VJP rule to transpose in its place. Add one with "
        f"fgrad.defjvp({name}, lambda t, ans, *args: ..., argnums=({argnum},)) or "
        f"fgrad.defvjp({name}, lambda g, ans, *args: ..., argnums=({argnum},)).")


# what else converts a value with float() or complex(), and the way round it
_NUMBER_USES = (" (so do the math module's functions, math.sin(x) and the like: use "
                "fgrad.numpy.sin and its siblings; and %-formatting, '%.3f' % x: "
                "f'{x:.3f}', format() and print(x) show a traced value)")


def in_rule(e, rule, builtin):
    """``e``, a ConcretizationError raised while a derivative rule ran (``rule``: "the VJP
    rule of fgrad.numpy.sin"), said as such: the read is not in the user's code, which has
    no branch to replace; or, where a built-in rule runs a function of the user's on traced
    values (an ODE's right side), it is in that function, named with its file and line.
    Said once, by the innermost rule."""
    if getattr(e, "rule", None) is not None:
        return e
    user = _user_frame_in(e.__traceback__) if builtin else None
    if user is not None:  # a function of the user's that a built-in rule runs (an ODE's
        code = user.f_code  # right side), where the read is
        who = (f"which runs your {code.co_name}() ({code.co_filename}, line {user.f_lineno}) "
               "on traced values: write it with fgrad.numpy throughout, without float(), "
               "int() or plain-numpy conversions of what it is given")
    elif builtin:
        who = ("fgrad's own rule: no built-in rule should read a value, so this is fgrad's to "
               "fix (please report it)")
    else:
        who = ("a rule you registered: take masks with fgrad.numpy on the values "
               "(np.where(x > 0, a, b)), not with plain numpy")
    new = ConcretizationError(f"{e} (The value was read inside {rule}, {who}.)")
    new.rule = rule
    return new


def _user_frame_in(tb):
    """The innermost frame of the traceback ``tb`` that runs neither fgrad's code nor numpy's
    or scipy's (a function of the user's called from within a rule), or None."""
    found = None
    while tb is not None:
        name = tb.tb_frame.f_globals.get("__name__") or ""
        if name.split(".")[0] not in ("fgrad", "numpy", "scipy"):
            found = tb.tb_frame
        tb = tb.tb_next
    return found


def random_of_traced(name):
    fix = ("to shuffle a traced array, index it: x[np.random.permutation(len(x))]"
           if name in ("permutation", "choice") else
           "draw standard variates and transform them, which differentiates in the parameters "
           "(loc + scale * np.random.normal(size=...), for normal(loc, scale))")
    return ConcretizationError(
        f"fgrad.numpy.random.{name} was called on a traced value: numpy's draws take plain "
        f"numbers and carry no derivative. Instead, {fix}.")


def used_as_index():
    return ConcretizationError(
        "A traced value was used as an index into a plain array: an index must be an "
        "integer, and the entry it picks has no derivative with respect to it. For a value "
        "between entries use fgrad.numpy.interp; to index by a computed integer, index a "
        "traced array (x[i], np.take(x, i)) or take fgrad.stop_gradient(i).astype(int).")


def batch_indexes_plain():
    return ConcretizationError(
        "vmap: a plain numpy array was indexed by a batched index (x[i] with x an argument "
        "mapped with in_axes=None, or a closed-over array): numpy's own indexing runs there, "
        "and it cannot take a batch. Index through fgrad.numpy, which gathers a batch: "
        "np.take(x, i, axis=0) for x[i] (fgrad.numpy.asarray(x) stays a plain array), or map "
        "x too (in_axes=0 on a stacked copy).")


def vectorized():
    return ConcretizationError(
        "numpy.vectorize calls its function on plain numbers, one element at a time, so it "
        "cannot carry derivatives. Use fgrad.numpy.vectorize (the same call: it runs the "
        "function on each traced element), write the function with fgrad.numpy's array "
        "operations, or map it with fgrad.vmap(f).")


def concretization(how, dtype=None):
    """The error for ``how`` taking a traced value's numbers; ``dtype``: the one a numpy
    conversion asked for (``numpy.float32(x)``), whose derivative-keeping form is named."""
    also = _NUMBER_USES if how in ("float()", "complex()") else ""
    if dtype is not None:
        also += (f" (numpy.{dtype}(x) asks for it too): x.astype(numpy.{dtype}) changes the "
                 "dtype and keeps the derivative")
    return ConcretizationError(
        f"{how} of a traced value would silently drop its derivative{also}. "
        "Inside a transform keep working with arrays through fgrad.numpy; "
        "comparisons (x > 0) and bool(x) are allowed for control flow. "
        "If you really want a constant here, use fgrad.stop_gradient(x) first; a value "
        "wanted after the transform returns comes out with has_aux=True."
    )


def plain_numpy(name, instead=None):
    """numpy's ``name`` on a traced value; ``instead``: what to call (default: fgrad.numpy's
    function of the same name, which exists)."""
    instead = instead or f"fgrad.numpy.{name} (import fgrad.numpy as np)"
    return ConcretizationError(
        f"numpy.{name} was called on a traced value: plain numpy cannot record derivatives and "
        f"would give a wrong (constant) result. Use {instead} inside functions you "
        "differentiate."
    )


def written_into_plain_array(e):
    """Whether an error from the user's function says that a traced value was written into
    a plain array: numpy's 'setting an array element with a sequence' raised from fgrad's
    ConcretizationError (``out[0] = x``), or fgrad's own for a slice (``out[:3] = x``). The
    transforms raise :func:`into_plain_array` instead, naming themselves."""
    return getattr(e, "written", False) or (isinstance(e, ValueError) and
                                            isinstance(e.__cause__, ConcretizationError))


def slice_written(kind):
    """A traced array written into a slice of a plain one, said by the trace ``kind``
    that found it (a transform's ``run`` names itself instead)."""
    e = into_plain_array(kind)
    e.written = True
    return e


def into_plain_array(fname):
    return ConcretizationError(
        f"{fname}: a traced value was written into a plain numpy array (out[i] = x, "
        "out[:3] = x, numpy.fromiter, numpy.array(..., dtype=float) of traced values), which "
        "would silently drop its derivative. Build the array with fgrad.numpy instead: "
        "np.stack([...]) or np.array([...]) of the traced values, or out = np.at(out)[i].set(x) "
        "(fgrad.numpy.at works on plain and traced arrays alike).")


def input_written(fname):
    return ValueError(
        f"{fname}: the function wrote into one of its input arrays while {fname} was running. "
        f"{fname} keeps an input array of 64 kB or more read-only until its derivative is "
        "computed (it reads the values afterwards; copying them on every call would cost "
        "time). Write into a copy instead (x = x.copy() inside the function), or pass a copy.")


def array_subclass(fname, cls, where):
    """A numpy.matrix or masked array reached a transform, whose rules follow ndarray
    semantics."""
    if issubclass(cls, _onp.matrix):
        why = ("its * and ** are matrix products, while fgrad differentiates ndarray "
               "semantics (elementwise *), so the derivative would be of another function")
        fix = "convert it with numpy.asarray(m) and write matrix products with @"
    else:
        why = ("fgrad's rules ignore the mask, so the value and the derivative would disagree "
               "with numpy's masked result")
        fix = ("work on plain arrays: x.filled(0.0), np.where(mask, 0.0, x), or x[~mask] "
               "with x = numpy.ma.getdata(m)")
    return TypeError(f"{fname}: {where} is a {cls.__module__}.{cls.__name__}, which fgrad "
                     f"does not differentiate: {why}. Instead, {fix}.")


def not_a_pytree(fname, obj, where):
    cls = type(obj)
    return TypeError(
        f"{fname}: {where} is a {cls.__module__}.{cls.__qualname__}, which is neither an array "
        "nor a container fgrad knows. Pytrees are tuples, lists, dicts, namedtuples, "
        "OrderedDicts and defaultdicts (and None) of arrays and scalars; pass or return its "
        "fields in one of those (e.g. dataclasses.astuple(obj)).")


def mixed_keys(fname, keys):
    kinds = sorted({type(k).__name__ for k in keys})
    return TypeError(
        f"{fname}: a dict in the arguments or results has keys of several types "
        f"({', '.join(kinds)}), which cannot be ordered. fgrad visits a dict's keys in sorted "
        "order (as JAX does), so its leaves have an order that does not depend on insertion; "
        "use keys of one type (e.g. all str).")


def plain_library(module, name, mirrored):
    """Another library's function (``scipy.special.expit``) was handed a traced value.
    ``mirrored``: fgrad has its own version, ``fgrad.<module>.<name>``; or None when only the
    module is known to be mirrored (``fgrad.scipy.stats``), False when neither is."""
    public = callable(getattr(sys.modules.get(module), name, None))
    what = (f"{f'{module}.{name}' if public else f'{module} (its {name})'} was called on a "
            f"traced value: {module.split('.')[0]} cannot record derivatives and would give a "
            "wrong (constant) result, or fail.")
    instead = _INSTEAD.get((module, name))
    if instead is not None:
        return ConcretizationError(f"{what} {instead}")
    if mirrored:
        return ConcretizationError(f"{what} Use fgrad.{module}.{name} (import fgrad.{module}) "
                                   "inside functions you differentiate.")
    if mirrored is None:
        return ConcretizationError(
            f"{what} Use fgrad.{module}'s version of it (import fgrad.{module}; it mirrors "
            f"{module}'s names, and docs/coverage.md lists what is differentiable) inside "
            "functions you differentiate.")
    return NoDerivativeRuleError(
        f"{what} fgrad has no rule for it yet. Add one to the primitive table, for example:\n"
        f"    import fgrad, {module}\n"
        f"    {name} = fgrad.primitive({module}.{name})\n"
        f"    fgrad.defvjp({name}, lambda g, ans, x: g * <d{name}/dx>)\n"
        f"    fgrad.defjvp({name}, lambda t, ans, x: t * <d{name}/dx>)\n"
        f"then call {name}(...) instead. Or, if no derivative should flow through it, call it "
        "on fgrad.stop_gradient(x).")


# what to use in place of another library's function that fgrad has no version of
_INSTEAD = {
    ("scipy.integrate", name): "Integrate with fgrad.scipy.integrate's functions (quad for a "
    "function of one variable; trapezoid, simpson on sampled values; odeint or solve_ivp for "
    "an ODE), or a fixed quadrature rule written with fgrad.numpy (nodes and weights from "
    "numpy.polynomial.legendre.leggauss: np.sum(w * f(x))), which differentiate in the "
    "integrand and the limits."
    for name in ("quad_vec", "fixed_quad", "quadrature", "romberg", "dblquad", "tplquad",
                 "nquad")}


def mutation(op, instead="y = x.at[idx].set(value) (or .add, .multiply, .get; the function "
                         "form: fgrad.numpy.at(x)[idx].set(value))"):
    return TracerMutationError(
        f"{op} modifies a traced array in place, which fgrad does not support inside a "
        f"transform. Use the functional form instead: {instead}, which returns a new array "
        "with correct derivatives."
    )


def write_through(target, symbol, at_call, name, how):
    """``target <symbol>= ...`` on a traced value whose memory the name ``name`` sees too."""
    return TracerMutationError(
        f"`{target} {symbol} ...` writes in place into an array that another name sees "
        f"({name} {how}): numpy changes it too, but fgrad takes a write to another traced "
        f"array only through views taken by indexing, reshaping or transposing, and "
        f"rebinding `{target}` alone would compute another function. Write the "
        f"change as a new array, `base = base.at[idx].{at_call}` with `base` the array "
        f"written (the function form: fgrad.numpy.at(base)[idx].{at_call}), and take "
        f"`{target}` from it again; or `{target} = {target} {symbol[:-1]} value` if the "
        "other is meant to stay as it was.")


def write_seen_elsewhere(statement, name, how):
    """``y[idx] = v`` on a traced array whose memory another tracer, which ``name`` holds and
    its function reads again, shows too."""
    return TracerMutationError(
        f"{statement} writes into a traced array whose memory another name sees ({name} "
        f"{how}), and reads it again: numpy changes it too, but fgrad takes a write to "
        "another traced array only through views taken by indexing, reshaping or "
        "transposing. Write into the array the views are taken from (`m[1, 1] = v` rather "
        "than `d[1] = v` with `d = np.einsum('ii->i', m)`), and take the views after the "
        "write.")


def written_into_plain(ufunc):
    """The ufunc ``ufunc`` (``numpy.add``, ``fgrad.numpy.add``) asked to write a traced result
    into a plain array (``out=``)."""
    return TracerMutationError(
        f"{ufunc}(..., out=...) would write a traced value into a plain numpy array "
        "(an augmented assignment such as `buf[:2] += x` or `buf *= x` on a plain `buf` does "
        "this), which cannot hold its derivative. Build a new array instead: `buf = "
        "np.at(buf)[idx].add(x)` (or .set, .multiply; fgrad.numpy.at works on plain and traced "
        "arrays alike), or `buf = buf * x`.")


def out_argument(name):
    """``name``: numpy's (``sum``, ``fft.fft``), or a full one (``fgrad.scipy.special.erf``)."""
    full = name if name.startswith("fgrad.") else f"fgrad.numpy.{name}"
    short = "np." + full[12:] if full.startswith("fgrad.numpy.") else full
    return TracerMutationError(
        f"{full}(..., out=...) would write a traced result into an existing "
        f"array, which cannot hold derivatives. Use the returned value instead: "
        f"y = {short}(...)."
    )


def escaped(trace):
    return EscapedTracerError(
        f"A traced value from {trace} was used after that transform finished (it escaped, "
        "e.g. through a global or a closure). Return values from the transformed function "
        "instead of storing tracers."
    )


def closed_over(what, trace, instead):
    return ClosedOverTracerError(
        f"{what} closed over a traced value (from {trace}) that its output depends on. "
        "Its derivative rule only covers the function's own arguments, so that dependence "
        f"would be lost. {instead}"
    )
