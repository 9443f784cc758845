"""The "Errors" section of SPEC.md, one clause at a time: each misuse raises the documented
exception type with a message that names what went wrong and the way out, and never gives a
wrong number. Where the SPEC allows "supported instead of an error", the test checks the
derivative's value."""
import re

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from numeric import central_gradient

X3 = onp.array([0.5, -1.5, 2.0])


# --- grad of a function whose output is not a real scalar ----------------------------------

def test_grad_of_vector_output_is_type_error_naming_shape_and_dtype():
    with pytest.raises(TypeError, match=r"real scalar.*shape \(3,\).*dtype float64"):
        fgrad.grad(lambda x: x * 2.0)(X3)


def test_grad_of_complex_scalar_output_is_type_error_naming_dtype():
    with pytest.raises(TypeError, match=r"real scalar.*shape \(\).*dtype complex128"):
        fgrad.grad(lambda x: x * 1j)(1.5)


def test_grad_of_tuple_output_is_type_error():
    with pytest.raises(TypeError, match="one real scalar"):
        fgrad.grad(lambda x: (x, x))(1.5)


# --- differentiating with respect to integer or boolean inputs ----------------------------

@pytest.mark.parametrize("arg, kind", [(2, r"int \(2\)"), (True, r"bool \(True\)"),
                                       (onp.arange(3), "dtype int64"),
                                       (onp.array([True, False]), "dtype bool")])
def test_grad_wrt_int_or_bool_input_is_type_error(arg, kind):
    with pytest.raises(TypeError, match=f"grad requires float or complex inputs.*{kind}"):
        fgrad.grad(lambda x: np.sum(x * 2.0))(arg)


def test_grad_wrt_int_argnum_is_rejected_but_int_closed_over_is_fine():
    f = lambda x, n: x ** n
    with pytest.raises(TypeError, match="input leaf 1 .*int"):
        fgrad.grad(f, argnums=(0, 1))(3.0, 2)
    assert fgrad.grad(f)(3.0, 2) == 6.0


@pytest.mark.parametrize("transform", [fgrad.jacfwd, fgrad.jacrev])
def test_jacobians_wrt_int_input_are_type_errors(transform):
    name = transform.__name__
    with pytest.raises(TypeError, match=f"{name} requires float or complex inputs.*int64"):
        transform(lambda x: x * 2.0)(onp.arange(3))


def test_jvp_wrt_int_input_is_type_error():
    with pytest.raises(TypeError, match=r"jvp requires float or complex inputs.*int \(2\)"):
        fgrad.jvp(lambda x: x * 2.0, (2,), (1.0,))


def test_vjp_wrt_int_input_is_type_error():
    with pytest.raises(TypeError, match="vjp requires float or complex inputs.*int64"):
        fgrad.vjp(lambda x: x * 2.0, onp.arange(3))


# --- numpy functions without a derivative rule -------------------------------------------

def test_function_without_rule_names_itself_and_shows_defvjp():
    with pytest.raises(fgrad.NoDerivativeRuleError) as info:
        fgrad.grad(lambda x: np.intersect1d(x, X3))(1.5)
    msg = str(info.value)
    assert "fgrad.numpy.intersect1d has no" in msg
    assert "intersect1d = fgrad.primitive(numpy.intersect1d)" in msg
    assert "fgrad.defvjp(intersect1d, lambda g, ans, x:" in msg
    assert "stop_gradient" in msg
    assert isinstance(info.value, TypeError)  # never a bare AttributeError


def test_function_without_rule_raises_under_jvp_too():
    with pytest.raises(fgrad.NoDerivativeRuleError, match=r"fgrad\.numpy\.intersect1d has no"):
        fgrad.jvp(lambda x: np.intersect1d(x, X3), (1.5,), (1.0,))


def test_linalg_function_without_rule_names_linalg_path():
    # every numpy.linalg function has rules now, so the message is built directly
    msg = str(fgrad.core.errors.no_rule("linalg.det", 0))
    assert "fgrad.numpy.linalg.det has no" in msg
    # the suggested snippet is valid Python: it binds a plain name, not "linalg.det = ..."
    assert "det = fgrad.primitive(numpy.linalg.det)" in msg
    assert "fgrad.defvjp(det, lambda g, ans, x:" in msg
    assert "linalg.det = " not in msg


def test_function_without_rule_names_the_traced_argument():
    with pytest.raises(fgrad.NoDerivativeRuleError, match=r"argument 1 is being differentiated"):
        fgrad.grad(lambda x: np.sum(np.setxor1d(onp.ones(3), x)))(X3)


def test_function_without_rule_still_works_on_plain_values():
    onp.testing.assert_array_equal(np.intersect1d(X3, X3[1:]), onp.intersect1d(X3, X3[1:]))


# --- conversions that would drop the derivative ------------------------------------------

@pytest.mark.parametrize("convert, what", [(float, r"float\(\)"), (int, r"int\(\)"),
                                           (lambda x: x.item(), r"\.item\(\)"),
                                           (lambda x: x.tolist(), r"\.tolist\(\)")])
def test_concretizing_a_tracer_inside_grad_raises_saying_why(convert, what):
    def f(x):
        convert(x)
        return x
    with pytest.raises(fgrad.ConcretizationError, match=f"{what} of a traced value would "
                                                        "silently drop its derivative"):
        fgrad.grad(f)(1.5)
    assert issubclass(fgrad.ConcretizationError, TypeError)


def test_math_module_on_tracer_raises_concretization_error():
    import math
    with pytest.raises(fgrad.ConcretizationError, match=r"float\(\)"):
        fgrad.grad(math.sin)(1.5)


def _piecewise(x):
    if x > 0:
        return x ** 3
    return -5.0 * x


@pytest.mark.parametrize("x0, expected", [(2.0, 12.0), (-1.5, -5.0)])
def test_comparison_control_flow_inside_grad_takes_the_right_branch(x0, expected):
    assert fgrad.grad(_piecewise)(x0) == expected


@pytest.mark.parametrize("x0, expected", [(0.0, 3.0), (2.0, 4.0)])
def test_bool_of_tracer_inside_grad_takes_the_right_branch(x0, expected):
    f = lambda x: x * x if bool(x) else 3.0 * x
    assert fgrad.grad(f)(x0) == expected


def test_comparison_control_flow_inside_jvp():
    assert fgrad.jvp(_piecewise, (-1.5,), (2.0,))[1] == -10.0


# --- in-place mutation --------------------------------------------------------------------

@pytest.mark.parametrize("idx, shown", [(0, r"x\[0\]"), (slice(1, None), r"x\[1:\]")])
def test_setitem_on_tracer_writes_or_raises_naming_at_set(idx, shown):
    def f(x):
        x[idx] = 1.0
        return np.sum(x)
    # numpy's meaning: the entries written no longer depend on x (tests/test_writes.py)
    want = onp.ones(3)
    want[idx] = 0.0
    onp.testing.assert_array_equal(fgrad.grad(f)(X3), want)

    # a write refused (a value of a transform run inside the array's): the statement as
    # its source line writes it, or without a source line the index shown by its value
    def g(x):
        fgrad.jvp(lambda t: x.__setitem__(idx, t), (1.0,), (1.0,))
        return np.sum(x)
    with pytest.raises(fgrad.TracerMutationError,
                       match=shown + r" = \.\.\.` \(a value of a transform run inside the "
                                     r"array's\) modifies a traced array.*"
                                     r"fgrad\.numpy\.at\(x\)\[idx\]\.set"):
        fgrad.grad(g)(X3)

    def h(x):
        def inner(t):
            x[idx] = t
        fgrad.jvp(inner, (1.0,), (1.0,))
        return np.sum(x)
    with pytest.raises(fgrad.TracerMutationError,
                       match=r"`x\[idx\] = \.\.\.` \(a value of a transform run inside the "
                             r"array's\) modifies a traced array.*"
                             r"x = x\.at\[idx\]\.set\(value\) \(the function form: "
                             r"fgrad\.numpy\.at\(x\)\[idx\]\.set\(value\)\)"):
        fgrad.grad(h)(X3)


@pytest.mark.parametrize("transform", [fgrad.grad, fgrad.jit, fgrad.vmap, fgrad.jacfwd])
def test_a_write_into_an_indexed_traced_array_keeps_numpys_meaning(transform):
    def through_a_view(x):  # y[1:] is a view of y, which is read again: numpy writes y
        y = x * 1.0
        y[1:] += 2.0 * y[:-1]
        return np.sum(y * y)

    def into_a_copy(x):  # P[0, 1] is a copy: numpy's setitem writes it back
        P = np.reshape(x * 1.0, (2, 3))
        P[0, 1] /= np.sum(P[0])
        return np.sum(P * P)

    def by_operator(x):
        P = np.reshape(x * 1.0, (2, 3))
        P[0] @= np.eye(3) * 2.0
        return np.sum(P)

    x = onp.linspace(0.1, 1.0, 6)
    for f in (through_a_view, into_a_copy, by_operator):
        if transform is fgrad.vmap:
            got, want = transform(f)(onp.stack([x, 2 * x])), [f(x.copy()), f(2 * x)]
        elif transform is fgrad.jit:
            got, want = transform(f)(x), f(x.copy())
        else:
            got, want = transform(f)(x), central_gradient(f, x)
        onp.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-8)

    def listed(x):  # a list's item: no array's memory is written, numpy's meaning kept
        ys = [x * 1.0, x * 2.0]
        ys[0] += x
        return np.sum(ys[0] * ys[1])

    onp.testing.assert_allclose(fgrad.grad(listed)(x), 8 * x)


@pytest.mark.parametrize("transform", [fgrad.grad, fgrad.jit, fgrad.vmap])
def test_flat_reads_and_writes_a_traced_array_as_numpy_does_and_shape_setting_is_refused(
        transform):
    def f(x):  # numpy's flat iterator: by index, by slice, by iteration, its length
        return x.flat[4] * 2.0 + sum(v for v in x.flat) + np.sum(x.flat[1:3]) + len(x.flat)

    x = onp.arange(6.0).reshape(2, 3)
    batched = transform is fgrad.vmap
    arg = onp.stack([x, 2 * x]) if batched else x
    want = onp.array([f(a) for a in arg]) if batched else f(x)
    if transform is fgrad.grad:  # ones, 2 more at flat index 4, 1 more at 1 and 2
        want = onp.array([[1.0, 2.0, 2.0], [1.0, 3.0, 1.0]])
    onp.testing.assert_allclose(transform(f)(arg), want)

    def write_flat(x):
        y = x * 1.0
        row = y[1]
        y.flat[0] = 3.0
        y.flat[4:] = x.flat[:2] ** 2  # (numpy: row sees it)
        return np.sum(y * x) + np.sum(row)

    if transform is fgrad.grad:
        # 3 x0 + x1^2 + x2^2 + x3^2 + x0^2 x4 + x1^2 x5, and row = (x3, x0^2, x1^2)
        x0, x1, x2, x3, x4, x5 = x.flat
        want = [3 + 2 * x0 * x4 + 2 * x0, 4 * x1 + 2 * x1 * x5, 2 * x2, 2 * x3 + 1, x0 ** 2,
                x1 ** 2]
        onp.testing.assert_allclose(fgrad.grad(write_flat)(x), onp.reshape(want, (2, 3)))
    elif batched:
        onp.testing.assert_array_equal(transform(write_flat)(arg),
                                       [write_flat(a.copy()) for a in arg])
    else:
        onp.testing.assert_array_equal(transform(write_flat)(arg), write_flat(x.copy()))

    def set_shape(x):
        y = x * 1.0
        y.shape = (3, 2)
        return np.sum(y[0])

    with pytest.raises(fgrad.TracerMutationError,
                       match=re.escape("x.shape = ... modifies a traced array in place") +
                       ".*" + re.escape("x = np.reshape(x, shape)")):
        transform(set_shape)(arg)


def test_augmented_assignment_on_tracer_rebinds_with_correct_gradient():
    def f(x):
        x += 1.0
        x *= x
        return np.sum(x)
    onp.testing.assert_array_equal(fgrad.grad(f)(X3), 2 * (X3 + 1.0))


def test_augmented_assignment_does_not_touch_the_callers_array():
    x0 = X3.copy()
    def f(x):
        x += 1.0
        return np.sum(x)
    fgrad.grad(f)(x0)
    onp.testing.assert_array_equal(x0, X3)


def test_in_place_ndarray_methods_on_a_tracer_write_it_or_raise_naming_the_alternative():
    # (sort, fill, put, partition write as numpy's: tests/test_writes.py; resize changes the
    # shape, which a traced array keeps)
    def f(x):
        x.resize((2,))
        return np.sum(x)
    with pytest.raises(fgrad.TracerMutationError,
                       match=r"x\.resize\(\.\.\.\) modifies a traced array in place.*"
                             r"x = np\.resize\(x, shape\)"):
        fgrad.grad(f)(X3)


def test_plain_array_plus_equals_tracer_raises_mutation_error():
    def f(x):
        a = onp.zeros(3)
        a += x
        return np.sum(a)
    with pytest.raises(fgrad.TracerMutationError, match=r"numpy\.add\(\.\.\., out=\.\.\.\) would "
                                                        r"write a traced value into a plain numpy "
                                                        r"array.*`buf = np\.at\(buf\)\[idx\]\.add"):
        fgrad.grad(f)(X3)


def test_writing_a_tracer_into_a_plain_array_raises_with_the_reason_chained():
    def f(x):
        a = onp.zeros(3)
        a[0] = x[0]
        return np.sum(a)
    with pytest.raises((TypeError, ValueError)) as info:
        fgrad.grad(f)(X3)
    chain, e = [], info.value
    while e is not None:
        chain.append(e)
        e = e.__cause__ or e.__context__
    assert any(isinstance(c, fgrad.ConcretizationError) for c in chain)


# --- plain numpy handed a tracer -----------------------------------------------------------

def test_plain_numpy_sum_is_redirected():
    g = fgrad.grad(lambda x: onp.sum(x * x))(X3)
    assert type(g) is onp.ndarray and g.dtype == onp.float64
    onp.testing.assert_array_equal(g, 2 * X3)


def test_plain_numpy_sin_is_redirected():
    g = fgrad.grad(lambda x: np.sum(onp.sin(x)))(X3)
    assert g.dtype == onp.float64
    onp.testing.assert_allclose(g, onp.cos(X3), rtol=1e-15)


def test_plain_numpy_dot_of_two_tracers_is_redirected():
    g = fgrad.grad(lambda x: onp.dot(x, x))(X3)
    assert g.dtype == onp.float64
    onp.testing.assert_array_equal(g, 2 * X3)


def test_plain_numpy_exp_of_scalar_tracer_is_redirected():
    g = fgrad.grad(lambda x: onp.exp(2.0 * x))(0.75)
    assert type(g) is onp.float64
    onp.testing.assert_allclose(g, 2 * onp.exp(1.5), rtol=1e-15)


def test_plain_numpy_functions_under_jvp():
    out, t = fgrad.jvp(lambda x: onp.sum(onp.exp(x)), (X3,), (onp.ones(3),))
    onp.testing.assert_allclose(out, onp.sum(onp.exp(X3)), rtol=1e-15)
    onp.testing.assert_allclose(t, onp.sum(onp.exp(X3)), rtol=1e-15)


def test_plain_numpy_asarray_of_tracer_raises_concretization_error():
    with pytest.raises(fgrad.ConcretizationError, match=r"numpy\.asarray\(\).*silently drop"):
        fgrad.grad(lambda x: onp.sum(onp.asarray(x)))(X3)


def test_plain_numpy_array_of_list_holding_tracer_raises_concretization_error():
    with pytest.raises(fgrad.ConcretizationError):
        fgrad.grad(lambda x: onp.sum(onp.array([x, 1.0])))(1.5)


def test_plain_numpy_function_without_rule_raises_no_rule_error():
    with pytest.raises(fgrad.NoDerivativeRuleError, match=r"fgrad\.numpy\.intersect1d has no"):
        fgrad.grad(lambda x: onp.sum(onp.intersect1d(x, X3)))(X3)


def test_plain_numpy_linalg_function_is_redirected_to_fgrads():
    got = fgrad.grad(lambda a: onp.linalg.det(a))(onp.array([[2.0, 1.0], [0.5, 3.0]]))
    onp.testing.assert_allclose(got, [[3.0, -0.5], [-1.0, 2.0]])  # det(A) inv(A)^T


def test_plain_numpy_ufunc_method_on_tracer_raises_instead_of_object_array():
    with pytest.raises(fgrad.ConcretizationError, match=r"numpy\.add\.reduce was called"):
        fgrad.grad(lambda x: onp.add.reduce(x))(X3)


# --- shape and structure mismatches, has_aux, argnums -------------------------------------

def test_vjp_cotangent_of_wrong_shape_is_value_error():
    _, f_vjp = fgrad.vjp(lambda x: x * 2.0, X3)
    with pytest.raises(ValueError, match=r"cotangent has shape \(2,\).*shape \(3,\)"):
        f_vjp(onp.ones(2))
    with pytest.raises(ValueError, match=r"cotangent has shape \(\)"):
        f_vjp(1.0)
    onp.testing.assert_array_equal(f_vjp(onp.ones(3))[0], [2.0, 2.0, 2.0])  # still usable


def test_vjp_cotangent_of_wrong_structure_is_value_error():
    _, f_vjp = fgrad.vjp(lambda x: (x, 2.0 * x), 1.5)
    with pytest.raises(ValueError, match="structure"):
        f_vjp(1.0)


def test_jvp_tangent_of_wrong_shape_is_value_error():
    with pytest.raises(ValueError, match=r"tangent has shape \(2,\).*shape \(3,\)"):
        fgrad.jvp(lambda x: x * 2.0, (X3,), (onp.ones(2),))


def test_jvp_tangents_of_wrong_structure_are_value_error():
    with pytest.raises(ValueError, match="structure"):
        fgrad.jvp(lambda x, y: x * y, (1.0, 2.0), (1.0,))
    with pytest.raises(ValueError, match="structure"):
        fgrad.jvp(lambda p: p[0] * p[1], ((1.0, 2.0),), ([1.0, 2.0],))


@pytest.mark.parametrize("ret", [lambda x: x * 2.0, lambda x: (x, x, x)])
def test_has_aux_without_a_pair_is_type_error(ret):
    with pytest.raises(TypeError, match=r"grad\(\.\.\., has_aux=True\) needs the function to "
                                        r"return a pair"):
        fgrad.grad(ret, has_aux=True)(1.5)


def test_has_aux_without_a_pair_is_type_error_in_vjp_and_jvp():
    with pytest.raises(TypeError, match=r"vjp\(\.\.\., has_aux=True\).*pair"):
        fgrad.vjp(lambda x: x * 2.0, 1.5, has_aux=True)
    with pytest.raises(TypeError, match=r"jvp\(\.\.\., has_aux=True\).*pair"):
        fgrad.jvp(lambda x: x * 2.0, (1.5,), (1.0,), has_aux=True)


@pytest.mark.parametrize("argnums", [2, -3, (0, 2)])
def test_argnums_out_of_range_is_value_error(argnums):
    with pytest.raises(ValueError, match=re.escape(f"grad: argnums={argnums!r} does not fit a "
                                                   "call with 2 positional argument(s)")):
        fgrad.grad(lambda x, y: x * y, argnums=argnums)(1.5, 2.0)


def test_argnums_out_of_range_in_jacobians_is_value_error():
    for transform in (fgrad.jacfwd, fgrad.jacrev):
        with pytest.raises(ValueError, match="argnums=1 does not fit"):
            transform(lambda x: x * 2.0, argnums=1)(X3)


# --- tracers that escape, and exceptions inside the function ------------------------------

def test_escaped_tracer_used_in_a_later_grad_raises():
    leaked = []

    def leak(x):
        leaked.append(x)
        return x * 2.0

    assert fgrad.grad(leak)(1.5) == 2.0
    with pytest.raises(fgrad.EscapedTracerError, match="was used after that transform finished"):
        fgrad.grad(lambda y: leaked[0] * y)(3.0)
    with pytest.raises(fgrad.EscapedTracerError):
        np.sin(leaked[0])


def test_escaped_tracer_from_jvp_raises():
    leaked = []
    fgrad.jvp(lambda x: leaked.append(x) or x, (1.5,), (1.0,))
    with pytest.raises(fgrad.EscapedTracerError):
        fgrad.grad(lambda y: y + leaked[0])(3.0)


def test_exception_inside_differentiated_function_leaves_nothing_behind():
    def boom(x):
        x * 2.0
        raise RuntimeError("boom")

    with pytest.raises(RuntimeError, match="boom"):
        fgrad.grad(boom)(1.5)
    assert fgrad.grad(lambda x: x ** 3)(2.0) == 12.0
    assert fgrad.grad(fgrad.grad(lambda x: x ** 3))(2.0) == 12.0


# --- x.at[idx].set with repeated indices -------------------------------------------------

@pytest.mark.parametrize("idx", [[0, 0], onp.array([2, 1, 2])])
def test_at_set_with_repeated_integer_index_is_value_error(idx):
    with pytest.raises(ValueError, match=r"at\(x\)\[idx\]\.set\(v\), .*\): idx names some "
                                         "element more than once"):
        fgrad.grad(lambda x: np.sum(x.at[idx].set(5.0)))(X3)


def test_at_set_with_unique_index_is_fine():
    g = fgrad.grad(lambda x: np.sum(x.at[[0, 2]].set(5.0) * x))(X3)
    onp.testing.assert_array_equal(g, [5.0, 2 * X3[1], 5.0])


def test_user_primitive_may_not_replace_a_builtin():
    import numpy
    with pytest.raises(ValueError, match="'sin' is a built-in primitive's name"):
        fgrad.primitive(numpy.sin, name="sin")
    assert fgrad.PRIMITIVES["sin"] is np.sin


@pytest.mark.parametrize("call", [
    lambda x: np.sum(x, out=onp.zeros(())),
    lambda x: np.max(x, axis=0, out=onp.zeros(())),
    lambda x: np.clip(x, 0.0, 1.0, out=onp.zeros(3)),   # once recursed through numpy.clip
    lambda x: np.concatenate([x, x], out=onp.zeros(6)),
    lambda x: np.dot(x, x, out=onp.zeros(())),
])
def test_out_argument_on_a_traced_call_is_refused_by_name(call):
    with pytest.raises(fgrad.TracerMutationError,
                       match=r"\(\.\.\., out=\.\.\.\) would write a traced result.*y = np\."):
        fgrad.grad(lambda x: np.sum(call(x)))(X3)


def test_other_unsupported_keywords_are_named():
    with pytest.raises(NotImplementedError, match="casting"):
        fgrad.grad(lambda x: np.sum(np.clip(x, 0.0, 1.0, casting="unsafe")))(X3)


def test_complex_cotangent_or_tangent_for_a_real_value_is_refused():
    out, f_vjp = fgrad.vjp(np.sin, onp.array([0.5, 1.0]))
    with pytest.raises(TypeError, match="vjp_fn: the cotangent is complex, but the value it "
                                        "belongs to is real"):
        f_vjp(onp.array([1.0 + 1j, 0.0]))
    with pytest.raises(TypeError, match="is complex, but the value it belongs to is real"):
        fgrad.jvp(np.sin, (onp.array([0.5]),), (onp.array([1j]),))


def test_float_conversions_name_math_functions_and_percent_formatting_with_what_works():
    from fgrad import ConcretizationError
    import math
    with pytest.raises(ConcretizationError, match=r"math\.sin\(x\) and the like: use "
                                                  r"fgrad\.numpy\.sin"):
        fgrad.grad(lambda x: math.sin(x))(1.0)
    with pytest.raises(ConcretizationError, match=r"'%\.3f' % x: f'\{x:\.3f\}', format\(\) "
                                                  r"and print\(x\) show a traced value"):
        fgrad.grad(lambda x: float('%.3f' % x) * x)(1.0)
    shown = []
    assert fgrad.grad(lambda x: (shown.append(f"{x:.3f}"), x * 2)[1])(1.5) == 2.0
    assert shown == ["1.500"]
    with pytest.raises(ConcretizationError, match="comes out with has_aux=True"):
        fgrad.grad(lambda x: float(x) * x)(1.0)


# --- numpy's floating-point warnings point at the user's code ------------------------------

def _caught(run):
    import warnings
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        run()
    return [(w.filename, w.lineno, str(w.message)) for w in caught
            if issubclass(w.category, RuntimeWarning)]


def test_a_warning_from_a_derivative_rule_points_at_the_users_call_and_names_the_rule():
    import inspect
    here = __file__
    line = inspect.currentframe().f_lineno + 1
    got = _caught(lambda: fgrad.grad(lambda x: np.sqrt(x))(0.0))
    assert got == [(here, line, "divide by zero encountered in the derivative of sqrt")]
    for run in (lambda: fgrad.jacrev(np.log)(onp.array([0.0, 1.0])),
                lambda: fgrad.vjp(np.log, onp.array([0.0]))[1](onp.ones(1)),
                lambda: fgrad.jacfwd(np.log)(onp.array([0.0, 1.0]))):
        got = _caught(run)
        # (log(0) warns in the forward pass too: that one names no derivative)
        assert all(f == here for f, _, _ in got)
        assert any(m.endswith("encountered in the derivative of log") for _, _, m in got)


def test_a_warning_in_the_forward_pass_points_at_the_users_line_inside_f():
    here = __file__

    def f(x):
        return np.sum(np.log(x - 1.0))  # (at x = 1: log(0))

    line = f.__code__.co_firstlineno + 1
    for run in (lambda: fgrad.grad(f)(onp.array([1.0, 2.0])),
                lambda: fgrad.jvp(f, (onp.array([1.0, 2.0]),), (onp.ones(2),)),
                lambda: fgrad.vmap(f)(onp.array([[1.0], [2.0]]))):
        got = _caught(run)
        # numpy's own words, the function named (issue 31 item 13)
        assert (here, line, "divide by zero encountered in log") in got

    def g(x):
        return np.sum(x ** -1.0)  # (at x = 0; numpy names ``**`` on arrays "power")

    line = g.__code__.co_firstlineno + 1
    got = _caught(lambda: fgrad.grad(g)(onp.array([0.0, 2.0])))
    assert (here, line, "divide by zero encountered in power") in got
    assert any(m.endswith("encountered in the derivative of power") for _, _, m in got)


def test_the_users_errstate_around_a_transform_is_honoured():
    with onp.errstate(all="ignore"):
        assert _caught(lambda: fgrad.grad(lambda x: np.sqrt(x))(0.0)) == []
    with onp.errstate(divide="raise"):
        with pytest.raises(FloatingPointError, match="divide by zero"):
            fgrad.grad(lambda x: np.sqrt(x))(0.0)


# --- messages that say what happened (issue 31, items 7-13) -----------------------------------

def test_a_conversion_names_what_asked_for_it():
    from fgrad.core.errors import ConcretizationError
    import scipy.integrate
    x = onp.ones(3)
    cases = {
        "numpy.vectorize calls its function on plain numbers":
            lambda: fgrad.grad(lambda x: np.sum(onp.vectorize(lambda v: v * 2)(x)))(x),
        "fgrad.numpy.random.permutation was called on a traced value: .* "
        r"x\[np.random.permutation\(len\(x\)\)\]":
            lambda: fgrad.grad(lambda x: np.sum(np.random.permutation(x)))(x),
        "A traced value was used as an index into a plain array":
            lambda: fgrad.grad(lambda v: np.arange(5.0)[v] * v)(1.0),
        "scipy.integrate.quad was called on a traced value: .* Use "
        r"fgrad.scipy.integrate.quad \(import fgrad.scipy.integrate\)":
            lambda: fgrad.grad(lambda v: scipy.integrate.quad(lambda t: t * v, 0, 1)[0])(1.0),
        "scipy.integrate.dblquad was called on a traced value: .*\\(quad for a function of one "
        "variable.* a fixed quadrature rule":
            lambda: fgrad.grad(lambda v: scipy.integrate.dblquad(
                lambda s, t: s * t * v, 0, 1, 0, 1)[0])(1.0),
    }
    for message, run in cases.items():
        with pytest.raises(ConcretizationError, match=message):
            run()
    with pytest.raises(ConcretizationError, match="float\\(\\) of a traced value"):
        fgrad.grad(lambda v: float(v) * v)(1.0)  # (the plain conversion keeps its message)


def test_a_missing_return_and_a_has_aux_without_a_pair_say_so():
    def forgot(x):
        np.sin(x)

    with pytest.raises(TypeError, match="returned None: is a `return` missing"):
        fgrad.grad(forgot)(1.0)
    with pytest.raises(TypeError, match=r"return a pair \(output, aux\), but it returned a "
                                        "single array"):
        fgrad.grad(lambda x: np.sin(x), has_aux=True)(1.0)
    with pytest.raises(TypeError, match="returned a tuple of 3"):
        fgrad.grad(lambda x: (x, x, x), has_aux=True)(1.0)


def test_make_graph_called_with_examples_names_the_right_call():
    with pytest.raises(TypeError, match=r"call make_graph\(f\)\(\*args\)"):
        fgrad.make_graph(np.sin, 1.0)
    assert "= sin v0" in str(fgrad.make_graph(np.sin)(1.0))


def test_a_refused_write_into_a_traced_array_names_jaxs_spelling_first():
    def f(x):
        fgrad.jvp(lambda t: x.__setitem__(0, t), (1.0,), (1.0,))
        return np.sum(x)

    with pytest.raises(fgrad.TracerMutationError,
                       match=r"y = x\.at\[idx\]\.set\(value\) \(or \.add"):
        fgrad.grad(f)(onp.ones(2))


def test_a_guard_error_says_where_the_value_was_read_and_what_to_do():
    def f(x):
        if x > 0:  # the read
            return np.sin(x)
        return x

    line = f.__code__.co_firstlineno + 1
    graph = fgrad.make_graph(f)(1.0)
    with pytest.raises(fgrad.GuardError, match=rf"at {re.escape(__file__)}, line {line}\) "
                       r"came out differently.*make_graph\(f\)\(\*args\)"):
        graph(-1.0)
    assert fgrad.jit(f)(-1.0) == -1.0  # (jit traces the other branch by itself)


def test_vmap_of_a_function_whose_result_shape_depends_on_the_values_names_it():
    # (numpy.stack's "all input arrays must have the same shape" named no function)
    with pytest.raises(ValueError, match=r"^vmap: fgrad\.numpy\.roots gives results of "
                                         r"different shapes for the examples of the batch "
                                         r"\(\(1,\), \(2,\)\).*in a loop"):
        fgrad.vmap(np.roots)(onp.array([[1.0, 2.0, 3.0], [0.0, 1.0, 2.0]]))


def test_vmap_names_fgrads_function_that_reads_values_apart_from_a_users_branch():
    # (issue 31, item 6: fgrad's own read is no branch of the user's to replace)
    xs = onp.arange(6.0).reshape(2, 3)
    with pytest.raises(fgrad.ConcretizationError, match=r"^vmap: fgrad\.numpy\.unique reads the "
                                                        r"values of its batched argument"):
        fgrad.vmap(lambda x: np.unique(x))(xs)
    with pytest.raises(fgrad.ConcretizationError,
                       match=r"^vmap: fgrad\.numpy\.nonzero reads"):
        fgrad.vmap(lambda a: np.nonzero(a)[0])(onp.ones((2, 3, 2)))
    with pytest.raises(fgrad.ConcretizationError, match=r"a branch on them.*Use "
                                                        r"fgrad\.numpy\.where for a branch"):
        fgrad.vmap(lambda x: x if x[0] > 0 else -x)(xs)


@pytest.mark.parametrize("x", [0.41, onp.linspace(0.1, 0.5, 3)], ids=["number", "array"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_a_numpy_scalar_type_called_on_a_traced_value_names_astype(x, dtype):
    # (numpy.float32(x) asks for the values as an array of that dtype; JAX's jnp.float32(x)
    # casts, and x.astype is the form that keeps the derivative here)
    cast = getattr(onp, dtype)
    with pytest.raises(fgrad.ConcretizationError,
                       match=rf"numpy\.{dtype}\(x\) asks for it too\): "
                             rf"x\.astype\(numpy\.{dtype}\) changes the dtype"):
        fgrad.grad(lambda x: np.sum(cast(x) * 2.0))(x)
    assert fgrad.grad(lambda x: np.sum(np.asarray(x).astype(cast) * 2.0))(x).shape == onp.shape(x)
