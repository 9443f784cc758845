"""fgrad.numpy's public functions: numpy's values on plain input, derivatives on traced input.

The generated tests in test_rules.py check each primitive; these check the numpy-signature
functions built on them (argument normalisation: negative axes, ``axis=None``, int ``axes``,
lists holding tracers, composite functions like ``clip``) and the rest of the namespace.
"""
import pickle
import types

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.testing import check_grads

rng = onp.random.default_rng(0)
A = rng.uniform(-1, 1, (2, 3))
B = rng.uniform(-1, 1, (3, 4))
V = rng.uniform(0.5, 1.5, 3)

# (call on fgrad.numpy, call on numpy) pairs evaluated on plain arrays, and the same call
# differentiated with respect to its array arguments.
CALLS = {
    "sum axis=-1 keepdims": (lambda m, x: m.sum(x, axis=-1, keepdims=True), (A,)),
    "sum axis=(0,1)": (lambda m, x: m.sum(x, axis=(0, 1)), (A,)),
    "sum dtype": (lambda m, x: m.sum(x, dtype=m.float32), (A,)),
    "mean axis=0": (lambda m, x: m.mean(x, axis=0), (A,)),
    "prod axis=1": (lambda m, x: m.prod(x, axis=1), (A + 2,)),
    "max axis=None": (lambda m, x: m.max(x), (A,)),
    "amin axis=0": (lambda m, x: m.amin(x, axis=0), (A,)),
    "reshape -1": (lambda m, x: m.reshape(x, -1), (A,)),
    "reshape F": (lambda m, x: m.reshape(x, (3, 2), order="F"), (A,)),
    "ravel": (lambda m, x: m.ravel(x), (A,)),
    "transpose axes": (lambda m, x: m.transpose(x[None], (2, 0, 1)), (A,)),
    "swapaxes": (lambda m, x: m.swapaxes(x, 0, -1), (A,)),
    "expand_dims": (lambda m, x: m.expand_dims(x, (0, -1)), (A,)),
    "squeeze": (lambda m, x: m.squeeze(x[:, None, :1]), (A,)),
    "broadcast_to": (lambda m, x: m.broadcast_to(x, (4, 3)), (V,)),
    "concatenate axis=-1": (lambda m, x, y: m.concatenate([x, y.T[:2]], axis=-1), (A, B)),
    "concatenate axis=None": (lambda m, x, y: m.concatenate((x, y), axis=None), (A, B)),
    "stack axis=-1": (lambda m, x, y: m.stack([x, 2 * x, y[:2, :3]], axis=-1), (A, B)),
    "dot": (lambda m, x, y: m.dot(x, y), (A, B)),
    "matmul": (lambda m, x, y: m.matmul(x, y), (A, B)),
    "outer": (lambda m, x, y: m.outer(x, y), (V, A)),
    "tensordot int": (lambda m, x, y: m.tensordot(x, y, 1), (A, B)),
    "tensordot lists": (lambda m, x, y: m.tensordot(x, y, axes=([1], [0])), (A, B)),
    "clip both": (lambda m, x: m.clip(x, -0.5, 0.5), (A,)),
    "clip lower": (lambda m, x: m.clip(x, 0.1, None), (A,)),
    "where": (lambda m, x, y: m.where(x > 0, x, y[:2, :3]), (A, B)),
    "where scalar": (lambda m, x: m.where(x > 0, x ** 2, 0.0), (A,)),
    "maximum scalar": (lambda m, x: m.maximum(x, 0.2), (A,)),
    "power scalar": (lambda m, x: m.power(x, 3), (A,)),
    "astype float32": (lambda m, x: m.astype(x, m.float32), (A,)),
    "asarray list": (lambda m, x: m.asarray([x[0, 0], 1.0, x[1, 2]]), (A,)),
    "array nested": (lambda m, x: m.array([[x[0, 0], 2.0], [3.0, x[1, 1]]]), (A,)),
    "mean of list": (lambda m, x: m.mean([x, x + 2]), (A,)),
    "sum of list": (lambda m, x: m.sum([x[0], x[1]], axis=0), (A,)),
}


@pytest.mark.parametrize("name", sorted(CALLS))
def test_plain_values_are_numpys(name):
    call, args = CALLS[name]
    want, got = call(onp, *args), call(np, *args)
    assert type(got) is type(want)
    onp.testing.assert_array_equal(got, want)
    assert onp.result_type(got) == onp.result_type(want)


@pytest.mark.parametrize("name", sorted(CALLS))
def test_traced_values_and_derivatives(name):
    call, args = CALLS[name]
    out, _ = fgrad.vjp(lambda *xs: call(np, *xs), *args)
    onp.testing.assert_array_equal(out, call(onp, *args))
    assert onp.result_type(out) == onp.result_type(call(onp, *args))
    rtol = 1e-3 if "float32" in name or "dtype" in name else 1e-5
    eps = 1e-3 if rtol > 1e-5 else 1e-6
    check_grads(lambda *xs: call(np, *xs), args, order=2, rtol=rtol, eps=eps)


def test_clip_derivative_is_one_inside_zero_outside_half_at_bound():
    g = fgrad.grad(lambda x: np.sum(np.clip(x, -1.0, 1.0)))(onp.array([-2.0, -1.0, 0.0, 1.0, 3.0]))
    onp.testing.assert_array_equal(g, [0.0, 0.5, 1.0, 0.5, 0.0])


def test_abs_and_maximum_kink_conventions():
    assert fgrad.grad(np.abs)(0.0) == 0.0
    gx, gy = fgrad.grad(lambda x, y: np.maximum(x, y), argnums=(0, 1))(1.0, 1.0)
    assert (gx, gy) == (0.5, 0.5)
    g = fgrad.grad(lambda x: np.max(x))(onp.array([3.0, 1.0, 3.0]))
    onp.testing.assert_array_equal(g, [0.5, 0.0, 0.5])


def test_prod_gradient_with_zeros_is_exact():
    grad_prod = fgrad.grad(lambda x: np.prod(x))
    onp.testing.assert_array_equal(grad_prod(onp.array([2.0, 0.0, 3.0])), [0.0, 6.0, 0.0])
    onp.testing.assert_array_equal(grad_prod(onp.array([0.0, 0.0, 3.0])), [0.0, 0.0, 0.0])
    onp.testing.assert_array_equal(grad_prod(onp.array([2.0, 5.0, 3.0])), [15.0, 6.0, 10.0])
    # second derivative through the zero: d2/dx0dx1 prod(x0, x1, 3) = 3
    H = fgrad.hessian(lambda x: np.prod(x))(onp.array([0.0, 0.0, 3.0]))
    onp.testing.assert_array_equal(H, [[0, 3, 0], [3, 0, 0], [0, 0, 0]])


def test_power_derivatives_at_zero_exponent_and_zero_base():
    # d/dx x**y at y = 0 is 0; d2/dxdy x**y at y = 0 is 1/x
    assert fgrad.grad(lambda x: x ** 0.0)(0.5) == 0.0
    assert fgrad.grad(fgrad.grad(lambda y, x: x ** y), argnums=1)(0.0, 0.5) == pytest.approx(2.0)
    assert fgrad.grad(lambda x: x ** 2.0)(0.0) == 0.0
    assert fgrad.grad(lambda y: 0.0 ** y)(2.0) == 0.0


ZERO = ["floor", "ceil", "round", "rint", "trunc", "fix", "sign", "argmax", "argmin",
        "argsort", "nonzero", "isnan", "isinf", "isfinite", "shape", "ndim", "size",
        "zeros_like", "ones_like", "empty_like", "greater", "less_equal", "equal",
        "logical_and", "any", "all"]


@pytest.mark.parametrize("name", ZERO)
def test_zero_derivative_functions_take_tracers_and_return_plain(name):
    fn = getattr(np, name)
    seen = []

    def f(x):
        args = (x, x) if name in ("greater", "less_equal", "equal", "logical_and") else (x,)
        r = fn(*args)
        seen.append(r)
        return np.sum(x * 2.0)

    x = onp.array([[-1.5, 0.5], [2.5, onp.nan]])
    g = fgrad.grad(f)(x)
    onp.testing.assert_array_equal(g, onp.full_like(x, 2.0))
    (r,) = seen
    want = fn(*((x, x) if name in ("greater", "less_equal", "equal", "logical_and") else (x,)))
    for a, b in zip(r if isinstance(r, tuple) else (r,),
                    want if isinstance(want, tuple) else (want,)):
        assert not isinstance(a, fgrad.core.tracer.Tracer)
        if name != "empty_like":
            onp.testing.assert_array_equal(a, b)


def test_numpys_lazy_submodules_stay_lazy_until_used():
    import subprocess
    import sys
    code = ("import sys, numpy, fgrad, fgrad.numpy as np\n"
            "lazy = ['numpy.testing', 'numpy.f2py', 'numpy.ma', 'numpy.polynomial',\n"
            "        'numpy.random', 'fgrad.numpy.random', 'numpy.fft', 'fgrad.numpy.fft',\n"
            "        'fgrad.numpy.linalg']\n"
            "assert not [m for m in lazy if m in sys.modules], sys.modules.keys()\n"
            "np.testing.assert_allclose(1.0, 1.0)\n"
            "import numpy.testing\n"
            "assert np.testing is numpy.testing and np.ma.masked_array([1]).shape == (1,)\n"
            # fgrad's random draws like numpy's, and once loaded is the module itself
            "np.random.seed(0); a = np.random.normal(size=3)\n"
            "numpy.random.seed(0); assert (a == numpy.random.normal(size=3)).all()\n"
            "import fgrad.numpy.random\n"
            "assert np.random is fgrad.numpy.random is sys.modules['fgrad.numpy.random']\n"
            # and a staged function draws anew at each call
            "f = fgrad.jit(lambda x: x + np.random.normal())\n"
            "assert f(1.0) != f(1.0)\n"
            # fft's rules join the table when it is first used; sum_k Re X_k = n x_0
            "assert not [p for p in fgrad.PRIMITIVES if p.startswith('fft.')]\n"
            "g = fgrad.grad(lambda x: np.fft.fft(x).real.sum())(numpy.array([1.0, 2.0, 3.0]))\n"
            "assert g.tolist() == [3.0, 0.0, 0.0], g\n"
            "assert np.fft is sys.modules['fgrad.numpy.fft'] and 'fft.rfft' in fgrad.PRIMITIVES\n"
            # and linalg's (numpy's own linalg is loaded with numpy: fgrad's is not)
            "assert not [p for p in fgrad.PRIMITIVES if p.startswith('linalg.')]\n"
            "from fgrad.numpy import linalg\n"
            "g = fgrad.grad(lambda a: linalg.det(a))(numpy.diag([2.0, 3.0]))\n"
            "assert g.tolist() == [[3.0, 0.0], [0.0, 2.0]], g\n"
            # the stand-in kept there holds the module's names itself from then on
            "assert vars(linalg)['det'] is sys.modules['fgrad.numpy.linalg'].det\n"
            "assert np.linalg is sys.modules['fgrad.numpy.linalg'] and 'linalg.det' in "
            "fgrad.PRIMITIVES\n")
    subprocess.run([sys.executable, "-c", code], check=True)


def test_namespace_mirrors_numpy():
    for name in dir(onp):
        if name.startswith("_"):
            continue
        assert hasattr(np, name), f"fgrad.numpy lacks numpy.{name}"
        if isinstance(getattr(np, name), types.ModuleType):
            dir(getattr(np, name))  # (numpy's lazily imported submodules: now imported)
        ours, theirs = getattr(np, name), getattr(onp, name)
        if isinstance(theirs, (type, types.ModuleType)) or not callable(theirs):
            if name not in ("linalg", "fft", "lib", "random", "polynomial", "emath", "r_",
                            "c_", "vectorize"):
                assert ours is theirs, name  # (r_, c_: ours; vectorize: numpy's, subclassed)
    assert issubclass(np.vectorize, onp.vectorize) and np.vectorize is not onp.vectorize
    for name in dir(onp.lib):  # fgrad.numpy.lib: numpy's names, stride_tricks ours
        if not name.startswith("_"):
            assert hasattr(np.lib, name), f"fgrad.numpy.lib lacks numpy.lib.{name}"
    assert np.lib.stride_tricks is not onp.lib.stride_tricks  # (ours, as scimath, emath)
    assert np.emath.sqrt is np.lib.scimath.sqrt and np.emath.sqrt is not onp.emath.sqrt
    assert {n for n in dir(onp.emath) if not n.startswith("_")} <= set(dir(np.emath))
    assert np.pi == onp.pi and np.newaxis is None
    for name in dir(onp.random):  # fgrad.numpy.random: numpy's names, the draws wrapped
        if not name.startswith("_"):
            assert hasattr(np.random, name), f"fgrad.numpy.random lacks numpy.random.{name}"
    assert np.random.seed is onp.random.seed and np.random.Generator is onp.random.Generator
    for name in dir(onp.polynomial):  # fgrad.numpy.polynomial: numpy's names, the series' ours
        if not name.startswith("_"):
            assert hasattr(np.polynomial, name), f"fgrad.numpy.polynomial lacks {name}"
    assert np.float64 is onp.float64 and np.ndarray is onp.ndarray


def test_functions_without_rules_behave_as_numpy_on_plain_values():
    x = onp.array([0.5, 1.5])
    onp.testing.assert_array_equal(np.i0(x), onp.i0(x))
    onp.testing.assert_array_equal(np.linalg.det(onp.eye(2) * 2), onp.linalg.det(onp.eye(2) * 2))
    onp.testing.assert_array_equal(np.zeros((2, 3)), onp.zeros((2, 3)))
    onp.testing.assert_array_equal(np.linspace(0, 1, 5), onp.linspace(0, 1, 5))


def test_where_condition_may_be_a_list_holding_tracers():
    seen = []

    def f(x):
        seen.append(np.where([x[0] > 1.0, x[1] > 1.0]))
        return np.sum(np.where([x[0] > 1.0, True], x, 0.0))

    g = fgrad.grad(f)(onp.array([0.5, 2.0]))
    onp.testing.assert_array_equal(g, [0.0, 1.0])
    (idx,) = seen[0]
    assert idx.dtype != object and idx.tolist() == [1]


def test_full_like_and_full():
    x = onp.array([[0.5, 1.5], [2.0, 0.7]])
    # no derivative through the template, the fill value's derivative broadcast
    assert onp.all(fgrad.grad(lambda x: np.sum(np.full_like(x, 3.0) * x))(x) == 3.0)
    assert fgrad.grad(lambda c: np.sum(np.full_like(x, c)))(2.0) == 4.0
    assert fgrad.grad(lambda c: np.sum(np.full((2, 3), c) ** 2))(2.0) == 24.0
    v, _ = fgrad.vjp(lambda c: np.full(3, c, dtype=np.float32), 2.0)
    onp.testing.assert_array_equal(v, onp.full(3, 2.0, dtype=onp.float32))
    assert v.dtype == onp.float32
    onp.testing.assert_array_equal(np.full_like(x, 7), onp.full_like(x, 7))


def test_a_convolution_by_sliding_window_view_equals_the_loop_of_slices():
    # the im2col of a small CNN: numpy.lib.stride_tricks.sliding_window_view on a traced
    # image, by fgrad.numpy's name or numpy's own (it gathers), under grad, vmap and jit
    rng = onp.random.default_rng(5)
    images, kernel = rng.normal(size=(3, 6, 7)), rng.normal(size=(2, 3))

    def conv(x, windows):
        return np.sum(np.einsum("ijkl,kl->ij", windows(x, (2, 3)), kernel) ** 2)

    def by_slices(x):
        out = sum(x[i:i + 5, j:j + 5] * kernel[i, j] for i in range(2) for j in range(3))
        return np.sum(out ** 2)

    for windows in (np.lib.stride_tricks.sliding_window_view,
                    onp.lib.stride_tricks.sliding_window_view):
        def f(x):
            return conv(x, windows)

        want = onp.stack([fgrad.grad(by_slices)(x) for x in images])
        onp.testing.assert_allclose([fgrad.grad(f)(x) for x in images], want, rtol=1e-12)
        onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(f))(images), want, rtol=1e-12)
        staged = fgrad.jit(fgrad.grad(f))
        onp.testing.assert_array_equal(staged(images[0]), fgrad.grad(f)(images[0]))
    assert np.lib.stride_tricks.sliding_window_view(images[0], 3, axis=0).shape == (4, 7, 3)
    with pytest.raises(fgrad.NoDerivativeRuleError, match="as_strided has no derivative rule "
                                                          r"\(addresses the array's memory"):
        fgrad.grad(lambda x: np.sum(np.lib.stride_tricks.as_strided(x, (2,), (8,))))(images[0])


# --- numpy.polynomial's series on traced coefficients -----------------------------------------

SERIES = [("polynomial", "poly"), ("chebyshev", "cheb"), ("legendre", "leg"),
          ("hermite", "herm"), ("hermite_e", "herme"), ("laguerre", "lag")]


@pytest.mark.parametrize("family, prefix", SERIES)
def test_polynomial_series_values_are_numpys_and_derivatives_its_vander_and_der(family, prefix):
    theirs, ours = getattr(onp.polynomial, family), getattr(np.polynomial, family)
    val, vander, der = (getattr(theirs, prefix + s) for s in ("val", "vander", "der"))
    traced = getattr(ours, prefix + "val")
    x, c = onp.linspace(-0.9, 0.8, 5), onp.array([0.5, -0.3, 0.2, 0.7])
    # values: numpy's bit for bit, traced and staged, with tensor=False and 2-d coefficients
    c2 = onp.arange(8.0).reshape(4, 2) / 7
    for args in [(x, c), (0.3, c), (x, c2), (x, c[:1]), (x, [1, 2, 3]), (x[:2], c2, False)]:
        want = val(*args)
        got = fgrad.jit(lambda x, c: traced(x, c, *args[2:]))(*args[:2])
        assert onp.array_equal(got, want) and got.dtype == want.dtype
    # in the coefficients the Vandermonde matrix, in the points the derivative series
    onp.testing.assert_allclose(fgrad.jacrev(lambda c: traced(x, c))(c), vander(x, 3),
                                rtol=1e-13, atol=1e-15)
    onp.testing.assert_allclose(fgrad.jacfwd(lambda x: traced(x, c))(x),
                                onp.diag(val(x, der(c))), rtol=1e-12, atol=1e-14)
    # a list holding traced values, as numpy takes a list of coefficients
    g = fgrad.grad(lambda a: traced(0.4, [1.0, a, a * a]))(0.5)
    assert g == pytest.approx(val(0.4, [0.0, 1.0, 1.0]), rel=1e-13)


def test_polynomial_submodules_import_and_the_rest_is_numpys():
    import fgrad.numpy.polynomial.chebyshev as cheb
    assert cheb is np.polynomial.chebyshev and cheb.chebint is onp.polynomial.chebyshev.chebint
    assert np.polynomial.Polynomial is np.polynomial.polynomial.Polynomial
    assert issubclass(np.polynomial.Polynomial, onp.polynomial.Polynomial)


@pytest.mark.parametrize("family, prefix", SERIES)
def test_polynomial_fits_of_traced_values_are_numpys_and_differentiate(family, prefix):
    # (an audit's chebfit of traced values raised ConcretizationError: numpy's fit converts y)
    theirs, ours = getattr(onp.polynomial, family), getattr(np.polynomial, family)
    fit, traced = getattr(theirs, prefix + "fit"), getattr(ours, prefix + "fit")
    x = onp.linspace(-1.0, 1.0, 7)
    y, y2, w = onp.sin(2 * x), onp.stack([onp.sin(2 * x), x ** 3], 1), 1.0 + x * x
    for deg in (3, [0, 2, 3]):
        for args in [(y,), (y2,), (y, w)]:
            def f(x, *a):
                return traced(x, a[0], deg, w=a[1] if len(a) > 1 else None)
            want = fit(x, *args[:1], deg, w=args[1] if len(args) > 1 else None)
            for got in (fgrad.jit(f)(x, *args), f(x, *args)):
                assert onp.array_equal(got, want) and got.dtype == want.dtype
        # linear in the values: the Jacobian applied to y gives the fit again
        onp.testing.assert_allclose(fgrad.jacrev(lambda y: traced(x, y, deg))(y) @ y,
                                    fit(x, y, deg), rtol=1e-10, atol=1e-12)
        # (Laguerre's basis is the worst conditioned here: second finite differences to 1e-5)
        check_grads(lambda x, y, w: traced(x, y, deg, w=w), (x, y, w),
                    rtol=1e-4 if family == "laguerre" else 1e-5, atol=1e-6)
    with pytest.raises(NotImplementedError, match="rank-deficient"):
        fgrad.grad(lambda y: traced(onp.ones(7), y, 2)[0])(y)
    with pytest.raises(NotImplementedError, match="full"):
        fgrad.grad(lambda y: traced(x, y, 2, full=True)[0][0])(y)
    with pytest.raises(TypeError, match="expected x and y to have same length"):
        fgrad.grad(lambda y: traced(x[:3], y, 2)[0])(y)


CLASSES = ["Polynomial", "Chebyshev", "Legendre", "Hermite", "HermiteE", "Laguerre"]


@pytest.mark.parametrize("name", CLASSES)
def test_polynomial_classes_evaluate_at_traced_points_and_of_traced_coefficients(name):
    # (a fit evaluated at traced points raised ConcretizationError: numpy's __call__ converts
    # the points, and its class's constructor the coefficients)
    ours, theirs = getattr(np.polynomial, name), getattr(onp.polynomial, name)
    x = onp.linspace(-1.0, 1.0, 20)
    p, q = ours.fit(x, onp.sin(3 * x), 4), theirs.fit(x, onp.sin(3 * x), 4)
    assert type(p) is ours and isinstance(p, theirs) and repr(p) == repr(q)
    t = onp.array([0.1, 0.5, -0.3])
    for got in (fgrad.jit(p)(t), fgrad.jvp(p, (t,), (t,))[0], fgrad.vmap(p)(t), p(list(t))):
        onp.testing.assert_array_equal(got, q(t))  # (numpy's domain map and series, bit for bit)
    onp.testing.assert_allclose(fgrad.vmap(fgrad.grad(p))(t), q.deriv()(t), rtol=1e-12,
                                atol=1e-13)
    c = onp.array([0.5, -1.0, 2.0])
    onp.testing.assert_array_equal(fgrad.jit(lambda c: ours(c, domain=[-2, 2])(t))(c),
                                   theirs(c, domain=[-2, 2])(t))
    onp.testing.assert_allclose(fgrad.jacrev(lambda c: ours(c, domain=[-2, 2])(t))(c),
                                onp.stack([theirs.basis(k, domain=[-2, 2])(t)
                                           for k in range(3)], 1), rtol=1e-13, atol=1e-15)
    assert pickle.loads(pickle.dumps(p)) == p
    # a fit of traced values: numpy's series, and its derivative in the values the basis
    y = onp.sin(3 * x)
    onp.testing.assert_array_equal(fgrad.jit(lambda y: ours.fit(x, y, 4)(t))(y), q(t))
    g = fgrad.grad(lambda y: ours.fit(x, y, 4)(0.3))(y)
    onp.testing.assert_allclose(g @ y, q(0.3), rtol=1e-10)  # (linear in the values)
    onp.testing.assert_allclose(g, [theirs.fit(x, e, 4)(0.3) for e in onp.eye(20)],
                                rtol=1e-8, atol=1e-12)  # (through the normal equations)
