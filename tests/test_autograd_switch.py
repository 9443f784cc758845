"""``fgrad.autograd.install()``: a library written for autograd, imported after the one line,
runs on fgrad (issue 32, item 1), and the names of autograd's modules that libraries import
have autograd's meaning (item 2, in part)."""
import subprocess
import sys
import textwrap

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.autograd.differential_operators import make_ggnvp, make_jvp_reversemode
from fgrad.autograd.extend import (Box, SparseObject, defjvp_argnum, defvjp_argnums,
                                   notrace_primitive, primitive, vspace)
from fgrad.autograd.misc.fixed_points import fixed_point
from fgrad.autograd.misc.flatten import flatten
from fgrad.autograd.misc.optimizers import adam, rmsprop, sgd
from fgrad.autograd.numpy import stack
from fgrad.autograd.numpy.numpy_boxes import ArrayBox
from fgrad.autograd.numpy.numpy_vjps import unbroadcast_f
from fgrad.autograd.test_util import check_grads
from numeric import central_gradient

LIBRARY = {
    "mylib/__init__.py": """
        from .model import loss, loss_grad, custom_square
    """,
    "mylib/model.py": """
        import autograd.numpy as np
        import autograd.scipy.stats.norm as norm
        from autograd import grad, value_and_grad
        from autograd.extend import primitive, defvjp
        from autograd.numpy.numpy_boxes import ArrayBox
        from autograd.numpy.numpy_vjps import unbroadcast_f
        from autograd.builtins import DictBox
        from autograd.misc import flatten
        from . import helpers

        @primitive
        def custom_square(x, y):
            return x * x + y

        defvjp(custom_square,
               lambda ans, x, y: unbroadcast_f(x, lambda g: 2 * g * x),
               lambda ans, x, y: unbroadcast_f(y, lambda g: g))

        def loss(params, data):
            seen = isinstance(params["mu"], ArrayBox) and not isinstance(params, DictBox)
            helpers.SEEN.append(bool(seen))
            vec, _ = flatten(params)
            z = np.stack(params.values())
            return -np.sum(norm.logpdf(data, params["mu"], 1.0)) + np.sum(custom_square(z, 1.0))

        loss_grad = grad(loss)
    """,
    "mylib/helpers.py": """
        from autograd.differential_operators import make_jvp_reversemode
        from autograd.misc.fixed_points import fixed_point
        from autograd.test_util import check_grads
        SEEN = []
    """,
}

PROGRAM = """
    import sys
    import fgrad.autograd
    fgrad.autograd.install()
    import numpy
    import mylib
    from mylib import helpers
    data = numpy.array([0.5, 1.5, 2.0])
    g = mylib.loss_grad({"mu": 0.3, "s": 2.0}, data)
    print(repr(float(g["mu"])), repr(float(g["s"])), helpers.SEEN)
    print(sorted(n for n in sys.modules if n.startswith("autograd")))
"""


def _run(tmp_path, program, files=LIBRARY):
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return subprocess.run([sys.executable, "-c", textwrap.dedent(program)], cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)


def test_a_library_importing_autograd_runs_on_fgrad_after_one_line(tmp_path):
    run = _run(tmp_path, PROGRAM)
    assert run.returncode == 0, run.stderr
    first, modules = run.stdout.strip().split("\n")
    g_mu, g_s, seen = first.split(" ", 2)
    data, mu = onp.array([0.5, 1.5, 2.0]), 0.3
    # d/dmu of -sum log N(data; mu, 1) + (mu^2 + 1) + (s^2 + 1): -sum(data - mu) + 2 mu
    assert float(g_mu) == pytest.approx(-onp.sum(data - mu) + 2 * mu, rel=1e-12)
    assert float(g_s) == pytest.approx(4.0, rel=1e-12)
    assert seen == "[True]"  # a traced value is an ArrayBox, a dict no DictBox
    for name in ("autograd", "autograd.numpy", "autograd.scipy.stats.norm",
                 "autograd.extend", "autograd.numpy.numpy_boxes", "autograd.numpy.numpy_vjps",
                 "autograd.builtins", "autograd.misc", "autograd.differential_operators",
                 "autograd.test_util", "autograd.misc.fixed_points"):
        assert f"'{name}'" in modules


def test_install_refuses_once_the_real_autograd_was_imported(tmp_path):
    run = _run(tmp_path, """
        import sys, types
        real = types.ModuleType("autograd")
        real.__file__ = "/site-packages/autograd/__init__.py"
        sys.modules["autograd"] = real
        import fgrad.autograd
        try:
            fgrad.autograd.install()
        except RuntimeError as e:
            print(e)
    """, files={})
    assert run.returncode == 0, run.stderr
    assert run.stdout.startswith("fgrad.autograd.install(): the real autograd was imported "
                                 "already (autograd from /site-packages/autograd/__init__.py)")
    assert "Call install() before anything imports autograd" in run.stdout


def test_an_unknown_autograd_module_is_not_found(tmp_path):
    run = _run(tmp_path, """
        import fgrad.autograd
        fgrad.autograd.install()
        try:
            import autograd.no_such_module
        except ModuleNotFoundError as e:
            print(e.name)
    """, files={})
    assert run.stdout.strip() == "autograd.no_such_module", run.stderr


def test_code_moved_by_renaming_autograd_to_fgrad_autograd_finds_every_module(tmp_path):
    # autograd's modules that are fgrad's of another place (numpy.random, scipy.stats.norm),
    # imported as fgrad.autograd's, without install(); a name autograd lacks is not found
    run = _run(tmp_path, """
        import sys
        import fgrad.autograd.numpy as np
        import fgrad.autograd.numpy.random as npr
        import fgrad.autograd.numpy.linalg as la
        import fgrad.autograd.scipy.stats.norm as norm
        from fgrad.autograd.scipy.special import logsumexp
        from fgrad.autograd import grad
        import fgrad.numpy, fgrad.scipy.special
        x = npr.RandomState(0).randn(3)
        print(float(grad(lambda m: np.sum(norm.logpdf(x, m, 1.0)))(0.25)) - sum(x - 0.25))
        print(la.det is fgrad.numpy.linalg.det, logsumexp is fgrad.scipy.special.logsumexp)
        print(any("Autograd" in type(f).__name__ for f in sys.meta_path), "autograd" in sys.modules)
        try:
            import fgrad.autograd.scipy.stats.no_such_module
        except ModuleNotFoundError as e:
            print(e.name)
    """, files={})
    assert run.returncode == 0, run.stderr
    diff, same, switched, missing = run.stdout.strip().split("\n")
    assert abs(float(diff)) < 1e-12
    assert same == "True True" and switched == "False False"
    assert missing == "fgrad.autograd.scipy.stats.no_such_module"


def test_make_jvp_reversemode_and_make_ggnvp():
    f = lambda x: np.array([x[0] ** 2 * x[1], np.sin(x[1])])
    x, v = onp.array([1.5, 0.3]), onp.array([0.2, -1.0])
    J = onp.array([[2 * x[0] * x[1], x[0] ** 2], [0.0, onp.cos(x[1])]])
    onp.testing.assert_allclose(make_jvp_reversemode(f)(x)(v), J @ v, rtol=1e-12)
    onp.testing.assert_allclose(make_ggnvp(f)(x)(v), J.T @ J @ v, rtol=1e-12)
    # another g: H of g(y) = sum(y^3) / 3 is diag(2 y)
    y = f(x)
    onp.testing.assert_allclose(make_ggnvp(f, lambda y: np.sum(y ** 3) / 3)(x)(v),
                                J.T @ (2 * y * (J @ v)), rtol=1e-12)


def test_the_optimizers_take_structures_and_call_back_with_them():
    target = {"a": onp.array([1.0, -2.0]), "b": 3.0}

    def objective_grad(p, i):
        return {"a": 2 * (p["a"] - target["a"]), "b": 2 * (p["b"] - target["b"])}

    seen = []
    start = {"a": onp.zeros(2), "b": 0.0}
    for opt, kw in ((sgd, {"num_iters": 400}), (rmsprop, {"num_iters": 400, "step_size": 0.05}),
                    (adam, {"num_iters": 3000, "step_size": 0.05})):
        out = opt(objective_grad, start, callback=lambda x, i, g: seen.append((x, i, g)), **kw)
        onp.testing.assert_allclose(out["a"], target["a"], atol=1e-3)
        assert out["b"] == pytest.approx(3.0, abs=1e-3)
    x, i, g = seen[0]
    assert i == 0 and set(x) == set(g) == {"a", "b"} and x["a"].shape == (2,)


def test_flatten_vspace_and_stack_of_any_iterable():
    value = {"w": onp.arange(4.0).reshape(2, 2), "b": (1.0, onp.array([5.0]))}
    vec, unflatten = flatten(value)
    assert vec.shape == (6,)
    back = unflatten(vec)
    onp.testing.assert_array_equal(back["w"], value["w"])
    assert back["b"][0] == 1.0 and back["b"][1].tolist() == [5.0]
    # differentiable: the gradient of a function of the flat vector, in the structure
    g = fgrad.grad(lambda p: np.sum(flatten(p)[0] ** 2))(value)
    onp.testing.assert_array_equal(g["w"], 2 * value["w"])
    zeros = vspace(value).zeros()
    assert zeros["b"][0] == 0.0 and zeros["w"].shape == (2, 2) and vspace(value).size == 6
    onp.testing.assert_array_equal(stack({"a": onp.ones(2), "b": onp.zeros(2)}.values()),
                                   [[1.0, 1.0], [0.0, 0.0]])


def test_extend_by_argnums_notrace_and_boxes():
    @primitive
    def mul(x, y):
        return x * y

    defvjp_argnums(mul, lambda nums, ans, args, kwargs: lambda g: tuple(g * args[1 - i]
                                                                         for i in nums))
    defjvp_argnum(mul, lambda i, g, ans, args, kwargs: g * args[1 - i])
    assert [float(v) for v in fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0)] == [5.0, 2.0]
    assert float(fgrad.jvp(lambda y: mul(2.0, y), (5.0,), (1.0,))[1]) == 2.0
    count = notrace_primitive(lambda x: float(np.sum(x)))
    assert float(fgrad.grad(lambda x: count(x) * x[0])(onp.array([1.0, 2.0]))[0]) == 3.0

    def probe(x):
        assert isinstance(x, Box) and isinstance(x, ArrayBox)
        return np.sum(x)
    fgrad.grad(probe)(onp.ones(2))
    with pytest.raises(NotImplementedError, match="SparseObject: fgrad's VJP rules return "
                                                  "dense cotangents"):
        SparseObject(None, None)


def test_check_grads_in_autogrades_spelling_and_unbroadcast_f():
    check_grads(lambda x, y: np.sin(x) * y, modes=["rev"], order=2)(0.3, 2.0)
    check_grads(lambda x: np.exp(x), onp.array([0.1, 0.2]))

    @primitive
    def wrong(x):
        return x ** 2

    defvjp_argnums(wrong, lambda nums, ans, args, kwargs: lambda g: (3 * g * args[0],))
    with pytest.raises(AssertionError):
        check_grads(wrong, modes=["rev"], order=1)(onp.array([0.5]))
    onp.testing.assert_array_equal(unbroadcast_f(onp.ones(3), lambda g: 2 * g)(onp.ones((4, 3))),
                                   [8.0, 8.0, 8.0])


def test_grad_and_value_and_grad_take_a_one_element_output_as_autograd_does():
    from fgrad.autograd import grad, value_and_grad
    f = lambda x: np.dot(np.ones((1, 2)), x ** 2)  # shape (1,)
    x = onp.array([1.0, 3.0])
    onp.testing.assert_array_equal(grad(f)(x), [2.0, 6.0])
    value, g = value_and_grad(lambda x: np.reshape(np.sum(x ** 3), (1, 1)))(x)
    assert value.shape == (1, 1) and value[0, 0] == 28.0
    onp.testing.assert_array_equal(g, [3.0, 27.0])
    with pytest.raises(TypeError, match=r"returned shape \(2,\)"):
        grad(lambda x: x * 2.0)(x)


def _newton_sqrt(a):
    return lambda x: 0.5 * (x + a / x)


def _sqrt_by_fixed_point(a):
    return fixed_point(_newton_sqrt, a, np.ones_like(a), lambda x, y: np.max(np.abs(x - y)),
                       1e-13)


def test_fixed_point_is_differentiated_at_the_exact_fixed_point_in_both_modes():
    a = onp.array([2.0, 9.0, 0.5])
    onp.testing.assert_allclose(_sqrt_by_fixed_point(a), onp.sqrt(a), rtol=1e-14)
    dsqrt = 0.5 / onp.sqrt(a)
    onp.testing.assert_allclose(fgrad.jacrev(_sqrt_by_fixed_point)(a), onp.diag(dsqrt),
                                rtol=1e-12)
    onp.testing.assert_allclose(fgrad.jacfwd(_sqrt_by_fixed_point)(a), onp.diag(dsqrt),
                                rtol=1e-12)
    # second order, forward over reverse: d2/da2 sqrt(a) = -a^(-3/2) / 4
    h = fgrad.hessian(lambda a: np.sum(_sqrt_by_fixed_point(a)))(a)
    onp.testing.assert_allclose(h, onp.diag(-0.25 * a ** -1.5), rtol=1e-10, atol=1e-14)
    # x0 has no derivative: the fixed point does not depend on it
    g0 = fgrad.grad(lambda x0: np.sum(fixed_point(_newton_sqrt, a, x0, lambda x, y: np.max(
        np.abs(x - y)), 1e-13)))(onp.ones(3))
    onp.testing.assert_array_equal(g0, onp.zeros(3))


def test_autograd_operators_take_integer_arrays_at_their_values():
    from fgrad.autograd import elementwise_grad, grad, jacobian, make_jvp
    x = onp.array([1, 2])
    g = grad(lambda x: np.sum(np.sin(x)))(x)
    assert g.dtype == onp.float64
    onp.testing.assert_allclose(g, onp.cos([1.0, 2.0]), rtol=1e-15)
    onp.testing.assert_array_equal(elementwise_grad(lambda x: x ** 3)(x), [3.0, 12.0])
    onp.testing.assert_array_equal(jacobian(lambda x: x ** 2)(x), [[2.0, 0.0], [0.0, 4.0]])
    ans, t = make_jvp(lambda x: x ** 2)(x)(onp.array([1.0, 1.0]))
    onp.testing.assert_array_equal(t, [2.0, 4.0])
    gy = grad(lambda p: np.sum(p["w"] * 2.0))({"w": onp.array([3, 4])})
    onp.testing.assert_array_equal(gy["w"], [2.0, 2.0])
    # an integer scalar is refused, as autograd refuses it; fgrad.grad refuses integer arrays
    with pytest.raises(TypeError, match="grad requires float or complex inputs, but argument "
                                        "is a int"):
        grad(lambda x: x ** 2)(3)
    with pytest.raises(TypeError, match="argument has dtype int64"):
        fgrad.grad(lambda x: np.sum(np.sin(x)))(x)


def test_an_autograd_primitive_returning_a_tuple_gets_a_tuple_of_cotangents():
    from fgrad.autograd import defvjp, grad, primitive
    eig = primitive(onp.linalg.eig)  # as grcwa wraps it, with complex matrices

    def eig_vjp(ans, a):
        w, v = ans

        def vjp(g):
            gw, gv = g  # one cotangent per output; gv is zeros here
            assert not onp.any(gv)
            return np.matmul(np.matmul(np.linalg.inv(v).T, np.diag(gw)), v.T)
        return vjp

    defvjp(eig, eig_vjp)
    a = onp.array([[1.0, 2.0], [-1.0, 0.5]]) * (1 + 0.5j)
    # the eigenvalues sum to the trace: Re(trace(a) t), whose gradient in JAX's (and autograd's)
    # convention, df/dRe(t) - i df/dIm(t), is trace(a)
    g = grad(lambda t: np.real(np.sum(eig(a * t)[0])))(1.0 + 0.0j)
    assert g == pytest.approx(onp.trace(a), rel=1e-12)


# autograd 1.9.1 (with numpy 2.4) wraps these numpy functions as primitives without a VJP rule:
# handed a box, its grad raises "VJP of <name> wrt argnum 0 not defined" (read off
# autograd.core.primitive_vjps). fgrad differentiates each, or takes it with zero derivative,
# or refuses it with the reason (docs/coverage.md).
AUTOGRAD_WITHOUT_VJP = """
    all allclose any apply_along_axis apply_over_axes arange argmax argmin argpartition
    argsort argwhere around array2string array_equal array_equiv array_repr array_str
    asanyarray asarray asarray_chkfinite ascontiguousarray asfortranarray asmatrix average
    bartlett base_repr binary_repr bincount bitwise_and bitwise_count bitwise_invert
    bitwise_left_shift bitwise_or bitwise_right_shift bitwise_xor blackman block bmat
    broadcast_arrays broadcast_shapes busday_count busday_offset can_cast cbrt ceil choose
    common_type compress concat convolve copy copysign copyto corrcoef correlate
    count_nonzero cov cumprod cumulative_prod cumulative_sum datetime_as_string
    datetime_data delete diag_indices diag_indices_from diagflat digitize divmod dstack
    ediff1d einsum_path empty empty_like equal extract eye fill_diagonal fix flatnonzero
    flip float_power floor floor_divide fmod format_float_positional format_float_scientific
    frexp from_dlpack frombuffer fromfile fromfunction fromiter frompyfunc fromregex
    fromstring full_like gcd genfromtxt geomspace get_include get_printoptions getbufsize
    geterr geterrcall greater greater_equal hamming hanning heaviside histogram histogram2d
    histogram_bin_edges histogramdd i0 identity indices info insert interp intersect1d
    is_busday isclose iscomplex isdtype isfinite isfortran isin isinf isnan isnat isneginf
    isposinf isreal isrealobj isscalar issubdtype iterable ix_ kaiser lcm ldexp less
    less_equal lexsort load loadtxt logical_and logical_not logical_or logical_xor logspace
    mask_indices matrix_transpose matvec may_share_memory median meshgrid min_scalar_type
    mintypecode modf nanargmax nanargmin nancumprod nancumsum nanmax nanmean nanmedian
    nanmin nanpercentile nanprod nanquantile nanstd nansum nanvar nested_iters nextafter
    nonzero not_equal ones ones_like packbits percentile piecewise place poly polyadd
    polyder polydiv polyfit polyint polymul polysub polyval positive printoptions
    promote_types ptp put put_along_axis putmask quantile ravel_multi_index require resize
    rint roots round save savetxt savez savez_compressed searchsorted set_printoptions
    setbufsize setdiff1d seterr seterrcall setxor1d shares_memory show_config show_runtime
    sign signbit size sort_complex spacing take take_along_axis test trapezoid tri
    tril_indices tril_indices_from trim_zeros triu_indices triu_indices_from trunc typename
    union1d unique unique_all unique_counts unique_inverse unique_values unpackbits
    unravel_index unstack unwrap vander vdot vecdot vecmat zeros zeros_like linalg.cond
    linalg.cross linalg.diagonal linalg.eigvals linalg.eigvalsh linalg.lstsq linalg.matmul
    linalg.matrix_norm linalg.matrix_power linalg.matrix_rank linalg.matrix_transpose
    linalg.multi_dot linalg.outer linalg.qr linalg.svdvals linalg.tensordot linalg.tensorinv
    linalg.tensorsolve linalg.test linalg.trace linalg.vecdot linalg.vector_norm fft.fftfreq
    fft.hfft fft.ihfft fft.rfftfreq fft.test
""".split()


def test_every_numpy_function_autograd_cannot_differentiate_is_differentiated_or_has_a_reason():
    from fgrad.tools.coverage import NO_RULE_YET, classify
    rows = {q: (s, d) for q, s, _, d in classify()}
    present = [n for n in AUTOGRAD_WITHOUT_VJP if n in rows]  # (numpy versions differ a little)
    assert len(present) > 0.9 * len(AUTOGRAD_WITHOUT_VJP)
    counts = {}
    for n in present:
        status, detail = rows[n]
        counts[status] = counts.get(status, 0) + 1
        assert status in ("differentiable", "zero derivative", "in place", "unsupported"), n
        assert status != "unsupported" or (detail and detail != NO_RULE_YET), n
    assert counts["differentiable"] > 100  # cbrt, median, nanmean, polyfit, linalg.qr, ...
    for n in ("cbrt", "median", "nanmean", "percentile", "polyval", "vdot", "linalg.qr",
              "linalg.lstsq", "linalg.multi_dot", "fft.hfft", "interp", "trapezoid"):
        assert rows[n][0] == "differentiable", n


def test_scipy_linalgs_other_functions_run_forward_and_refuse_traced_values_by_name():
    sl = pytest.importorskip("scipy.linalg", reason="fgrad.scipy needs the scipy extra")
    import fgrad.scipy.linalg as fsl
    a = onp.array([[2.0, 1.0], [0.5, 3.0]])
    onp.testing.assert_array_equal(fsl.schur(a)[0], sl.schur(a)[0])
    with pytest.raises(fgrad.NoDerivativeRuleError,
                       match=r"fgrad.scipy.linalg.schur has no derivative rule: it runs scipy's "
                             r"function on plain values only; call it on fgrad.stop_gradient"):
        fgrad.grad(lambda a: np.sum(fsl.schur(a)[0]))(a)
    # (eigvals was refused, naming numpy's: it is scipy's own now, with numpy's rules)
    onp.testing.assert_allclose(fgrad.grad(lambda a: np.sum(np.real(fsl.eigvals(a) ** 2)))(a),
                                2 * a.T, rtol=1e-12)
    with pytest.raises(AttributeError):
        fsl.no_such_function


# --- autograd's internal modules that its own test suite and older libraries import ---------

def test_core_make_vjp_make_jvp_and_unary_to_nary_build_an_operator():
    from fgrad.autograd.core import make_jvp, make_vjp
    from fgrad.autograd.wrap_util import unary_to_nary

    @unary_to_nary
    def derivative(fun, x):
        vjp, _ = make_vjp(fun, x)
        return vjp(1.0)

    f = lambda x, y: x ** 3 * y  # noqa: E731
    assert float(derivative(f)(2.0, 5.0)) == 60.0
    assert float(derivative(f, 1)(2.0, 5.0)) == 8.0
    assert derivative(f, 1).__name__ == "derivative_of_<lambda>_wrt_argnum_1"
    assert [float(v) for v in derivative(lambda x, y: x * y, (0, 1))(2.0, 5.0)] == [5.0, 2.0]
    assert [float(v) for v in make_jvp(lambda x: x ** 3, 2.0)(1.0)] == [8.0, 12.0]
    with pytest.raises(TypeError, match="argnum must be an int or a tuple of ints"):
        derivative(f, "x")


def test_primitive_vjps_take_a_rule_away_and_put_it_back():
    from fgrad.autograd import defvjp
    from fgrad.autograd.core import primitive, primitive_vjps

    @primitive
    def triple(x):
        return 3.0 * x

    defvjp(triple, lambda ans, x: lambda g: 3.0 * g)
    assert triple in primitive_vjps and np.sin in primitive_vjps
    assert primitive_vjps.pop(np.sum, None) is None  # (a function of primitives: none here)
    rules = primitive_vjps.pop(triple)
    with pytest.raises(NotImplementedError, match="has no VJP rule for argument 0"):
        fgrad.grad(triple)(1.0)
    primitive_vjps[triple] = rules
    assert float(fgrad.grad(triple)(1.0)) == 3.0


def test_tracer_isbox_getval_and_builtins_that_see_through_tracers():
    from fgrad.autograd import builtins
    from fgrad.autograd.tracer import getval, isbox

    def f(x, batched=False):
        assert isbox(x) and isbox(getval(x)) == batched  # (vmap's tracer stays, not grad's)
        assert builtins.isinstance(x, onp.ndarray) and builtins.type(x) is onp.ndarray
        assert not isinstance(x, onp.ndarray)  # (Python's own sees the tracer)
        return np.sum(x * getval(x))
    onp.testing.assert_array_equal(fgrad.grad(f)(onp.array([1.0, 2.0])), [1.0, 2.0])
    onp.testing.assert_array_equal(fgrad.vmap(fgrad.grad(lambda x: f(x, True)))(onp.eye(2)),
                                   onp.eye(2))
    import fgrad.autograd as ag
    assert ag.dict is dict and ag.isinstance is builtins.isinstance
    with pytest.raises(AttributeError, match="has no attribute 'nonexistent'"):
        ag.nonexistent  # noqa: B018


def test_const_graph_replays_without_running_the_function():
    from fgrad.autograd.misc import const_graph
    calls = []

    def f(scale, x, shift=0.0):
        calls.append(x)
        return scale * np.sin(x) + shift

    g = const_graph(f, 2.0, shift=1.0)
    for v in (0.5, 1.0, -0.25):
        assert float(g(v)) == float(f(2.0, v, shift=1.0))
    assert len(calls) == 1 + 3  # one trace; the direct calls above add one each


def test_combo_check_check_grads_by_argnum_and_autograds_comparisons():
    from fgrad.autograd.test_util import check_equivalent, combo_check, scalar_close
    combo_check(np.sum, (0,), modes=["rev"])([onp.ones((2, 3))], axis=[0, 1, None],
                                             keepdims=[True, False])
    check_grads(lambda x, y: np.sin(x) * y, (0, 1))(0.3, 2.0)
    check_grads(lambda xs: np.sum(xs[0] * xs[1]))([onp.ones(2), onp.arange(2)])  # (ints too)

    @primitive
    def wrong(x):
        return x ** 2

    defvjp_argnums(wrong, lambda nums, ans, args, kwargs: lambda g: (3 * g * args[0],))
    with pytest.raises(AssertionError):
        combo_check(wrong, [0], modes=["rev"], order=1)([0.5, 1.5])
    assert scalar_close(1.0, 1.0 + 1e-9) and not scalar_close(1.0, 1.1)
    # autograd's wording of a failure (its tests match on it), the mode and the level named
    with pytest.raises(AssertionError, match=r"^Derivative \(VJP\) check of wrong failed: vjp "):
        check_grads(wrong, modes=["rev"], order=1)(0.5)

    @primitive
    def outer(x):
        return 2.0 * x

    @primitive
    def same(x):
        return x

    # outer's VJP is right, but the VJP of the identity it is written with is not: the
    # second-order check of outer's VJP fails, and says so in autograd's words
    defvjp_argnums(outer, lambda nums, ans, args, kwargs: lambda g: (same(g) * 2.0,))
    defvjp_argnums(same, lambda nums, ans, args, kwargs: lambda g: (g * 1.001,))
    check_grads(outer, modes=["rev"], order=1)(0.5)
    with pytest.raises(AssertionError, match=r"^Derivative \(VJP\) check of vjp_outer "):
        check_grads(outer, modes=["rev"], order=2)(0.5)
    check_equivalent({"a": onp.ones(2)}, {"a": onp.ones(2)})
    with pytest.raises(AssertionError, match="Value mismatch"):
        check_equivalent(onp.ones(2), onp.zeros(2))


def test_autograds_deprecated_primitive_methods_and_quick_grad_check_warn_and_work():
    from fgrad.autograd import primitive as old_primitive
    from fgrad.autograd.util import quick_grad_check, subvals

    @old_primitive
    def mul(x, y):
        return x * y

    with pytest.warns(UserWarning, match="defgrad method is deprecated"):
        mul.defgrad(lambda ans, x, y: lambda g: y * g)
    with pytest.warns(UserWarning, match="defvjp method is deprecated"):
        mul.defvjp(lambda g, ans, vs, gvs, x, y: x * g * (vs.shape == gvs.shape), argnum=1)
    assert [float(v) for v in fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0)] == [5.0, 2.0]
    with pytest.warns(UserWarning, match="defvjp_is_zero method is deprecated"):
        mul.defvjp_is_zero([1])
    assert [float(v) for v in fgrad.grad(mul, argnums=(0, 1))(2.0, 5.0)] == [5.0, 0.0]
    with pytest.warns(UserWarning, match="quick_grad_check is deprecated"):
        quick_grad_check(lambda x, y: x ** 2 + y, 1.0, (2.0,))
    assert subvals((1, 2, 3), [(1, "b")]) == (1, "b", 3)
    from fgrad.autograd.util import func, subval, toposort
    assert subval((1, 2), 0, "a") == ("a", 2) and func(len) is len
    parents = {"a": [], "b": ["a"], "c": ["a", "b"], "d": ["c", "b"]}
    assert list(toposort("d", parents.get)) == ["d", "c", "b", "a"]


def test_tensor_jacobian_product_contracts_the_leading_output_axes():
    from fgrad.autograd import jacobian, tensor_jacobian_product
    fun = lambda a: np.roll(np.sin(a), 1)  # noqa: E731
    a, v = onp.random.default_rng(0).normal(size=(2, 5, 4, 3))[:2]
    v = v[..., 0]
    want = onp.tensordot(v, jacobian(fun)(a), axes=2)
    onp.testing.assert_allclose(tensor_jacobian_product(fun)(a, v), want, rtol=1e-12)
    full = onp.ones((5, 4, 3))
    onp.testing.assert_allclose(tensor_jacobian_product(fun)(a, full),
                                onp.tensordot(full, jacobian(fun)(a), axes=3), rtol=1e-12)


def test_autograd_numpys_make_diagonal_version_and_scipys_dirichlet_draws():
    import fgrad.autograd.numpy as anp
    d = onp.arange(6.0).reshape(2, 3)
    a = anp.make_diagonal(d, axis1=-1, axis2=-2)
    assert a.shape == (2, 3, 3) and all(onp.array_equal(onp.diag(a[i]), d[i]) for i in range(2))
    check_grads(lambda d: anp.make_diagonal(d, axis1=-1, axis2=-2))(d)
    with pytest.raises(NotImplementedError, match="only offset=0, axis1=-1, axis2=-2"):
        anp.make_diagonal(d, axis1=0, axis2=1)
    assert anp.__version__ == onp.__version__
    pytest.importorskip("scipy", reason="dirichlet.rvs is scipy's")
    from fgrad.scipy.stats import dirichlet
    x = dirichlet.rvs(onp.array([1.0, 2.0, 3.0]), size=4, random_state=0)
    assert x.shape == (4, 3) and onp.allclose(x.sum(axis=1), 1.0)
    with pytest.raises(TypeError, match="dirichlet.rvs.*alpha"):
        fgrad.grad(lambda a: np.sum(dirichlet.rvs(a)))(onp.ones(3))
    with pytest.raises(TypeError, match="dirichlet.rvs.*alpha"):
        fgrad.jit(lambda a: dirichlet.rvs(a))(onp.ones(3))


def test_autograd_numpys_integer_types_convert_traced_values():
    # (autograd's test_cast_to_int: indices glued to the weights, separated again)
    import fgrad.autograd.numpy as anp
    W = onp.random.default_rng(0).normal(size=(5, 4))
    W[:, -1] = [0, 1, 1, 3, 4]

    def fun(W):
        new_inds = anp.int64(W[:, -1])
        assert new_inds.dtype == anp.int64
        return np.sum(W[:, :-1][new_inds])

    want = onp.zeros_like(W)
    want[[0, 1, 3, 4], :-1] = [[1], [2], [1], [1]]
    onp.testing.assert_array_equal(fgrad.grad(fun)(W), want)
    onp.testing.assert_array_equal(fgrad.jit(lambda W: anp.int32(W[:, -1]))(W + 0.5),
                                   W[:, -1].astype(onp.int32))
    assert fgrad.vmap(lambda W: anp.int8(W[:, -1]))(onp.stack([W, W])).dtype == onp.int8
    # plain values: numpy's scalars and arrays, which are instances of autograd's types
    assert type(anp.int64(2.7)) is onp.int64 and anp.int64(2.7) == 2
    assert isinstance(onp.int16(3), anp.int16) and issubclass(onp.int32, anp.int32)
    assert onp.dtype(anp.int64) == onp.int64 and anp.zeros(2, dtype=anp.int8).dtype == onp.int8


def test_a_missing_rule_is_also_a_not_implemented_error_as_in_autograd_and_jax():
    p = fgrad.primitive(lambda x: 2.0 * x, name="test_missing_rule_twice")
    for transform in (fgrad.grad, fgrad.jacfwd):
        with pytest.raises(NotImplementedError, match="test_missing_rule_twice has no"):
            transform(p)(1.0)


def test_autograds_convolve_generalises_scipys_with_axes_and_dot_axes():
    ss = pytest.importorskip("scipy.signal", reason="autograd.scipy.signal needs scipy")
    from fgrad.autograd.scipy_signal import convolve
    rng = onp.random.default_rng(0)
    a, b = rng.normal(size=(5, 4)), rng.normal(size=(3, 2))
    for mode in ("full", "valid", "same"):
        onp.testing.assert_allclose(convolve(a, b, mode=mode), ss.convolve(a, b, mode),
                                    rtol=1e-12, atol=1e-12)
    x, w = rng.normal(size=(3, 5)), rng.normal(size=(3, 4, 2))   # channels, then a conv axis
    for mode in ("full", "valid"):
        want = sum(ss.convolve(x[i], w[i, :, 1], mode) for i in range(3))
        got = convolve(x, w, axes=([1], [1]), dot_axes=([0], [0]), mode=mode)
        onp.testing.assert_allclose(got[1], want, rtol=1e-12)
    onp.testing.assert_allclose(convolve(x, w[:, 0, :], axes=([], []), dot_axes=([0], [0])),
                                onp.tensordot(x, w[:, 0, :], axes=([0], [0])), rtol=1e-12)
    for axes in (([0], [1]), ([1, 0], [1, 0])):
        check_grads(lambda a, b: convolve(a, b, axes=axes, mode="same"), (0, 1))(a, b)
    with pytest.raises(ValueError, match="one array must be at least as large"):
        convolve(rng.normal(size=(2, 5)), rng.normal(size=(3, 2)), mode="valid")


def test_autograds_tracer_nodes_are_made_from_the_recorded_tape():
    from fgrad.autograd.tracer import Node, trace

    class Printed(Node):
        def __init__(self, value, fun, args, kwargs, parent_argnums, parents):
            self.line = (fun.__name__, tuple(args[i] if i not in parent_argnums else
                                             parents[parent_argnums.index(i)].name
                                             for i in range(len(args))), float(value))
            self.name = f"v{len(lines)}"
            lines.append(self.line)

        def initialize_root(self, x):
            self.name = "x"

    lines = []
    value, end = trace(Printed.new_root(1.0), lambda x: (np.sin(x + x) + 2.0) / 2, 1.0)
    assert float(value) == (onp.sin(2.0) + 2.0) / 2 and end.line is lines[-1]
    assert [(f, a) for f, a, _ in lines] == [("add", ("x", "x")), ("sin", ("v0",)),
                                             ("add", ("v1", 2.0)), ("divide", ("v2", 2))]
    assert trace(Printed.new_root(1.0), lambda x: onp.ones(2), 1.0)[1] is None


# A library in the form several written for autograd take: scipy.linalg's functions wrapped
# as primitives by autograd's wrap_namespace, then given rules with defvjp and defjvp, the
# rules written with numpy_vjps' and numpy_jvps' helpers and the wrapper's namespace.
WRAPPING_LIBRARY = {
    "wrapped/__init__.py": """
        import scipy.linalg
        import autograd.numpy.numpy_wrapper as anw
        from autograd.numpy.numpy_wrapper import wrap_namespace, metadata
        from autograd.numpy.numpy_jvps import broadcast
        from autograd.numpy.numpy_vjps import unbroadcast
        from autograd.extend import defvjp, defjvp, primitive

        wrap_namespace(scipy.linalg.__dict__, globals())
        defvjp(sqrtm, lambda ans, A, disp=True, blocksize=64:
               lambda g: solve_sylvester(ans, ans, g))

        @primitive
        def shift(x, c):
            return x + c

        defvjp(shift, lambda ans, x, c: lambda g: g,
               lambda ans, x, c: lambda g: unbroadcast(g, metadata(c)))
        defjvp(shift, lambda g, ans, x, c: g, lambda g, ans, x, c: broadcast(g, ans))
        total = lambda x: anw.sum(anw.sin(x))
    """,
}


def test_a_library_wrapping_scipys_namespace_gets_its_rules_on_fgrad(tmp_path):
    linalg = pytest.importorskip("scipy.linalg", reason="the library wraps scipy's namespace")
    run = _run(tmp_path, """
        import numpy
        import fgrad.autograd
        fgrad.autograd.install()
        import autograd, autograd.numpy as anp
        import wrapped
        A = numpy.array([[2.0, 0.3], [0.3, 1.5]])
        W = numpy.arange(4.0).reshape(2, 2)
        print(autograd.grad(lambda A: anp.sum(wrapped.sqrtm(A) ** 2 * W))(A).tolist())
        x, c = numpy.array([[1.0, 2.0], [3.0, 4.0]]), numpy.array([0.5, -1.0])
        print(autograd.grad(lambda c: anp.sum(wrapped.shift(x, c) ** 2))(c).tolist())
        import fgrad
        print(fgrad.jvp(lambda c: wrapped.shift(x, c), (c,), (numpy.ones(2),))[1].tolist())
        print(float(autograd.grad(wrapped.total)(0.0)),
              wrapped.LinAlgError is numpy.linalg.LinAlgError)
    """, files=WRAPPING_LIBRARY)
    assert run.returncode == 0, run.stderr
    sq, shift_grad, shift_jvp, rest = run.stdout.strip().split("\n")
    A = onp.array([[2.0, 0.3], [0.3, 1.5]])
    W = onp.arange(4.0).reshape(2, 2)
    loss = lambda A: onp.sum(linalg.sqrtm(A) ** 2 * W)
    onp.testing.assert_allclose(eval(sq), central_gradient(loss, A), rtol=1e-6, atol=1e-8)
    x, c = onp.array([[1.0, 2.0], [3.0, 4.0]]), onp.array([0.5, -1.0])
    assert eval(shift_grad) == (2 * (x + c)).sum(axis=0).tolist()
    assert eval(shift_jvp) == onp.ones((2, 2)).tolist()
    assert rest == "1.0 True"  # (a class is copied as it is)


def test_autograd_numpys_helper_modules_and_their_names():
    from fgrad.autograd import numpy as anp
    from fgrad.autograd.core import JVPNode as CoreJVPNode, getval, isbox
    from fgrad.autograd.numpy.numpy_vjps import match_complex, repeat_to_match_shape
    from fgrad.autograd.differential_operators import atuple, grad_named, unary_to_nary
    from fgrad.autograd.extend import JVPNode, VJPNode, register_notrace
    from fgrad.autograd.numpy.numpy_jvps import broadcast
    from fgrad.autograd.numpy.numpy_vspaces import ArrayVSpace, ComplexArrayVSpace
    from fgrad.autograd.numpy.numpy_wrapper import (array_from_args, concatenate_args,
                                                    metadata, notrace_functions,
                                                    parse_einsum_input, wrap_if_boxes_inside)
    A = onp.arange(6.0).reshape(2, 3)
    assert anp.numpy_wrapper.sin is anp.sin is np.sin and CoreJVPNode is JVPNode
    assert isinstance(vspace(A), ArrayVSpace) and not isinstance(vspace(A), ComplexArrayVSpace)
    assert isinstance(vspace(1j * A), ComplexArrayVSpace) and vspace(1j * A).iscomplex
    assert ArrayVSpace(A) == vspace(onp.zeros((2, 3))) != ArrayVSpace(onp.zeros(3))
    with pytest.raises(TypeError, match="the space of one array or number"):
        ArrayVSpace((A, A))
    assert metadata(A) == ((2, 3), 2, onp.dtype(float), False) and onp.shape in notrace_functions
    # traced: metadata reads no value; array_from_args and concatenate_args carry derivatives
    assert fgrad.grad(lambda x: np.sum(x) * metadata(x)[1])(A).tolist() == [[2.0] * 3] * 2
    assert fgrad.grad(lambda x: np.sum(array_from_args((), {}, x, 3 * x) ** 2))(1.5) == 30.0
    assert fgrad.grad(lambda x: np.sum(concatenate_args(0, x, x ** 2)))(
        onp.array([2.0])).tolist() == [5.0]
    b = broadcast(onp.array([1.0, 2.0]), onp.zeros((3, 2), complex))
    assert b.shape == (3, 2) and b.dtype == complex and b[2].tolist() == [1.0, 2.0]
    ins, out, ops = parse_einsum_input("ij,j->i", A, onp.ones(3))
    assert (ins, out, len(ops)) == ("ij,j", "i", 2)

    def boxed(x):  # (an object array holding traced values, as autograd's libraries build)
        a = onp.empty(2, object)
        a[0], a[1] = x, 2 * x
        return np.sum(wrap_if_boxes_inside(a))

    assert fgrad.grad(boxed)(1.0) == 3.0
    # grad_named: the positional parameter of that name
    assert grad_named(lambda x, y: x * y ** 2, "y")(3.0, 2.0) == 12.0
    with pytest.raises(ValueError, match="has no positional parameter 'z'"):
        grad_named(lambda x, *z: x, "z")
    assert atuple((1, 2)) == (1, 2) and callable(unary_to_nary)
    # numpy_vjps' helpers, in a rule of one's own: a mean over axis 1 spread back
    g, n = repeat_to_match_shape(onp.array([1.0, 2.0]), (2, 3), float, -1, False)
    assert g.tolist() == [[1.0] * 3, [2.0] * 3] and n == 3
    g, n = repeat_to_match_shape(onp.ones((1, 3, 1)), (2, 3, 4), float, (0, 2), True)
    assert g.shape == (2, 3, 4) and n == 8
    assert match_complex(1.0, 2.0 + 3.0j) == 2.0 and match_complex(1j, 2.0) == 2.0 + 0j
    assert getval(3.0) == 3.0 and not isbox(A)

    @primitive
    def clipped(x):
        return onp.clip(x, -1.0, 1.0)

    defvjp_argnums(clipped, lambda argnums, ans, args, kwargs: lambda g: (g * 7.0,))
    fgrad.defjvp(clipped, lambda t, ans, x: t * 7.0)
    assert fgrad.grad(clipped)(0.5) == 7.0 and fgrad.jvp(clipped, (0.5,), (1.0,))[1] == 7.0
    register_notrace(VJPNode, clipped)  # no derivative in reverse mode; forward keeps its rule
    assert fgrad.grad(lambda x: x * clipped(x))(0.5) == 0.5
    assert fgrad.jvp(clipped, (0.5,), (1.0,))[1] == 7.0
    register_notrace(JVPNode, clipped)
    assert fgrad.jvp(clipped, (0.5,), (1.0,))[1] == 0.0
    register_notrace(VJPNode, np.zeros_like)  # (fgrad's own: its rules stand)
    with pytest.raises(TypeError, match="VJPNode or JVPNode"):
        register_notrace(object, clipped)
