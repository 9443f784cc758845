"""Why a numpy function has no derivative in fgrad: one reason per group of names.

``reason(qualname)`` is shown in ``docs/coverage.md`` and in the ``NoDerivativeRuleError`` a
function raises when it is handed a traced value.
"""

_GROUPS = {
    "reads or writes files, buffers or other libraries' arrays; differentiate the arrays "
    "after loading them, and save the values a transform returns":
        "load save savez savez_compressed loadtxt savetxt genfromtxt fromfile fromregex "
        "fromstring frombuffer fromiter from_dlpack",
    "configuration or introspection of numpy itself; it takes no array":
        "get_printoptions set_printoptions printoptions getbufsize setbufsize geterr seterr "
        "geterrcall seterrcall show_config show_runtime get_include test info linalg.test fft.test",
    "works on dates and times, which have no derivative":
        "busday_count busday_offset is_busday datetime_as_string datetime_data isnat",
    "builds numpy.matrix objects, which fgrad does not trace; use 2-d arrays and `@`":
        "asmatrix bmat",
    "keeps the values found in both arrays (or in exactly one) by exact equality between "
    "them: moving either side alone changes which values survive, so there is no derivative; "
    "union1d and setdiff1d are differentiable":
        "intersect1d setxor1d",
    "calls an arbitrary Python function through numpy's C loop, which cannot see tracers; "
    "write the loop in Python, or use fgrad.numpy functions directly":
        "frompyfunc nested_iters",
    "addresses the array's memory by strides, which a traced value does not have; "
    "sliding_window_view gives the windows of a convolution, and indexing any other pattern":
        "lib.stride_tricks.as_strided",
}

_REASONS = {name: why for why, names in _GROUPS.items() for name in names.split()}

def reason(qualname):
    """Why ``qualname`` (``"unique"``, ``"linalg.cond"``) is not differentiable, or None when
    no rule has been written for it yet."""
    return _REASONS.get(qualname)
