"""The rest of numpy's namespace: every name fgrad.numpy does not define itself.

Each numpy name falls in one of three groups:

* **zero derivative** (``ZERO_DERIVATIVE``): rounding, sign, comparisons, arg-functions, shape
  and dtype queries, ``*_like``, printing, and constructors that take sizes (``zeros``,
  ``arange``, window functions). They accept tracers and return plain numpy results (staged
  or batched ones under ``jit`` and ``vmap``: see ``zero_derivative``);
* **passed through**: types, dtypes, constants and modules (``np.float64``, ``np.pi``,
  ``np.newaxis``) are numpy's own objects (``np.random`` is fgrad's: ``random.py``);
* **no rule**: every other function. On plain values it *is* numpy's function; handed a
  tracer it raises ``NoDerivativeRuleError`` naming itself, giving the reason
  (``unsupported.py``) and showing how to add a rule, so it never returns a silent zero or an
  object array.
"""
import functools
import importlib
import importlib.util
import inspect
import sys
import types

from ..core import errors
from . import batch_rules
from ..core.table import Primitive
from ..core.tracer import (STAGING, Tracer, ambient, contains_tracer, first_tracer, map_tracers,
                           read_value, value_for_shape, without_derivative)
from .unsupported import reason
from ..core.values import copied

ZERO_DERIVATIVE = """
floor ceil round around rint trunc fix sign signbit floor_divide
argmax argmin nanargmax nanargmin ix_ argsort argpartition lexsort argwhere nonzero
flatnonzero searchsorted digitize
isnan isinf isfinite isneginf isposinf isclose allclose array_equal array_equiv
isreal iscomplex isrealobj iscomplexobj isscalar result_type
shape ndim size zeros_like ones_like empty_like count_nonzero any all
can_cast common_type min_scalar_type mintypecode promote_types issubdtype isdtype isfortran
may_share_memory shares_memory iterable broadcast_shapes typename
array2string array_repr array_str format_float_positional format_float_scientific
base_repr binary_repr
empty eye identity ones zeros tri indices diag_indices tril_indices triu_indices
diag_indices_from tril_indices_from triu_indices_from
mask_indices bartlett blackman hamming hanning ravel_multi_index unravel_index
packbits unpackbits bitwise_count gcd lcm isin digitize einsum_path
fftfreq rfftfreq matrix_rank
greater greater_equal less less_equal equal not_equal
logical_and logical_or logical_not logical_xor
bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_invert invert left_shift right_shift
bitwise_left_shift bitwise_right_shift
""".split()


# What reads only shapes and dtypes: a staged function reading these guards nothing, and under
# vmap they see one example's shape.
META = set("""
shape ndim size zeros_like ones_like empty_like result_type isscalar iscomplexobj isrealobj
iterable typename isfortran diag_indices_from tril_indices_from triu_indices_from
einsum_path common_type can_cast
""".split())

# What gives one array (or numpy scalar) of values: a staged function records these as nodes
# (computed anew at each replay) instead of guarding the values they read.
ARRAY_VALUED = set("""
floor ceil round around rint trunc fix sign signbit floor_divide argmax argmin nanargmax
nanargmin argsort searchsorted digitize isnan isinf isfinite isneginf isposinf isreal iscomplex
isclose any all greater greater_equal less less_equal equal not_equal logical_and logical_or
logical_not logical_xor bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_invert invert
left_shift right_shift bitwise_left_shift bitwise_right_shift
allclose array_equal array_equiv count_nonzero isin argpartition matrix_rank gcd lcm
spacing bitwise_count packbits unpackbits lexsort
""".split())


# how vmap batches the array-valued ones that are not elementwise (those that are: by
# broadcasting); ``searchsorted`` and ``digitize`` take a batch of tables one at a time
_BATCH = {**dict.fromkeys(("argmax", "argmin", "nanargmax", "nanargmin"),
                          batch_rules.along(none="flatten")),
          "argsort": batch_rules.along(none="flatten", default=-1),
          "any": batch_rules.along(), "all": batch_rules.along(),
          "searchsorted": batch_rules.one_at_a_time, "digitize": batch_rules.one_at_a_time,
          # (a verdict or a count over each example's arrays, positional parameters)
          **dict.fromkeys(("allclose", "array_equal", "array_equiv", "count_nonzero", "isin",
                           "argpartition", "matrix_rank", "packbits", "unpackbits",
                           "lexsort"),
                          batch_rules.one_at_a_time)}


def zero_derivative(fn):
    """numpy's ``fn`` on the values under any tracers: its result carries no derivative.

    One that gives an array of values (``ARRAY_VALUED``) is a primitive without rules for a
    trace that sees every operation: a staged function (``jit``, ``make_graph``) records it,
    ``vmap`` batches it. One that reads shapes only (``META``) reads no value; any other
    reads the values (a staged function guards them)."""
    name = fn.__name__
    lower = value_for_shape if name in META else read_value

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if prim is not None and (STAGING or contains_tracer(args)):
            down = _without_derivative(args)
            if down is not None and not contains_tracer(kwargs) and (
                    any(isinstance(a, Tracer) for a in down) or ambient() is not None):
                return prim(*down, **kwargs)  # (to the staging or batching trace)
        return fn(*map_tracers(args, lower), **map_tracers(kwargs, lower))

    # (a graph run on tracers calls this function again for the node)
    prim = Primitive(name, fn, batch=_BATCH.get(name, batch_rules.elementwise),
                     differentiable=False, interpret=wrapper) if name in ARRAY_VALUED else None
    wrapper._fgrad_status = "zero"
    return wrapper


def values_only(fn, name, batch=batch_rules.one_at_a_time, listed_name=None):
    """``fn`` (numpy code computing one array from arrays' values, with no derivative: weights,
    orders) callable on traced values: their values below the differentiating transforms go
    in. It is a primitive without derivative (``differentiable = False``), so a staged
    function records it (computed anew at each replay, no guard; a graph run under ``grad``
    gives it no derivative either) and ``vmap`` calls it once per example (numpy work only:
    there is no batched form of arbitrary numpy code), or by ``batch``."""
    prim = Primitive(name, fn, batch=batch, differentiable=False, listed_name=listed_name)

    def call(*args, **params):
        return prim(*[without_derivative(a) for a in args], **params)

    return call


# ``x`` without derivative (``fgrad.stop_gradient``, and ``x - stopped(x)``, a zero whose
# derivative is x's): a primitive, so a staged graph keeps the cut when run under ``grad``
stopped = values_only(copied, "stop_gradient", batch=batch_rules.elementwise)


def _without_derivative(args):
    """``args`` with every tracer of a differentiating transform replaced by the value under
    it, down to a tracer of a trace that sees all operations (staging, batching; a zero
    derivative needs no other); None where a tracer hides inside a list."""
    out = []
    for a in args:
        a = without_derivative(a)
        if a.__class__ in (list, tuple, dict) and contains_tracer(a):
            return None
        out.append(a)
    return out


def _arg_name(fn, i):
    try:
        return list(inspect.signature(fn).parameters)[i]
    except (ValueError, TypeError, IndexError):  # (a builtin without a signature)
        return f"#{i}"


def no_rule_yet(fn, qualname):
    """numpy's ``fn`` for plain values; a clear error, with the reason, when handed a tracer."""

    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        if contains_tracer(args) or (kwargs and contains_tracer(kwargs)):
            argnum = next((i for i, a in enumerate(args) if contains_tracer(a)), 0)
            t = first_tracer(args[argnum] if argnum < len(args) else list(kwargs.values()))
            while t is not None and t._trace.sees_all:
                t = t._value if isinstance(t._value, Tracer) else None
            if t is None:  # (staged or batched, nothing differentiated: say that, not a rule)
                raise errors.fixed_argument_traced(f"numpy.{qualname}", _arg_name(fn, argnum),
                                                   reason(qualname) or "no traced form")
            raise errors.no_rule(qualname, argnum, reason(qualname))
        return fn(*args, **kwargs)

    wrapper._fgrad_status = "unsupported"
    return wrapper


class LazySubmodule(types.ModuleType):
    """A submodule imported only when first used (numpy's ``testing``, ``f2py``, ``ma`` ...: 50
    ms of import time together, and fgrad.numpy's ``random``): imported on the first attribute
    read, when the real module takes this stand-in's place in the namespace."""

    def __init__(self, name, namespace, key):
        super().__init__(name)
        self._namespace, self._key = namespace, key

    def _load(self):
        module = importlib.import_module(self.__name__)
        self._namespace[self._key] = module
        # a stand-in kept elsewhere (``from fgrad.numpy import linalg``, the autograd
        # switch's namespace) finds the names in its own dict from then on: through
        # ``__getattr__`` an access took 1.8 us, 0.08 us so
        self.__dict__.update(vars(module))
        return module

    def __getattr__(self, attr):
        return getattr(self._load(), attr)

    def __dir__(self):
        return dir(self._load())


def load_on_first_use(namespace):
    """Load every fgrad module ``namespace`` holds a stand-in for (fgrad.numpy's ``fft``,
    ``linalg``, ``polynomial``, ``random``), so that their rules are in the table: for what
    reads the whole table (the generated tests, ``python -m fgrad check`` and ``coverage``).
    numpy's own lazy submodules stay lazy."""
    for value in list(namespace.values()):
        if isinstance(value, LazySubmodule) and value.__name__.startswith("fgrad."):
            value._load()


def mirror(module, namespace, prefix):
    """Fill ``namespace`` with ``module``'s public names that it does not define yet.

    A numpy name that is another name's object (``acos`` is ``arccos``, ``concat`` is
    ``concatenate``) gets fgrad's version of that object. numpy's lazily imported submodules
    stay lazy (:class:`LazySubmodule`)."""
    lazy = getattr(module, "__numpy_submodules__", ())
    ours = {id(getattr(module, n)): v for n, v in list(namespace.items())
            if not n.startswith("_") and callable(v) and hasattr(module, n)}
    for name in dir(module):
        if name.startswith("_") or name in namespace:
            continue
        full = f"{module.__name__}.{name}"
        if name in lazy and full not in sys.modules and importlib.util.find_spec(full):
            namespace[name] = LazySubmodule(full, namespace, name)
            continue
        obj = getattr(module, name)
        if id(obj) in ours:
            namespace[name] = ours[id(obj)]
        elif isinstance(obj, (type, types.ModuleType)) or not callable(obj):
            namespace[name] = obj
        elif name in ZERO_DERIVATIVE:
            namespace[name] = zero_derivative(obj)
        else:
            namespace[name] = no_rule_yet(obj, prefix + name)
