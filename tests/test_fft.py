"""fgrad.numpy.fft: numpy's values bit for bit, transposes equal to the explicit DFT matrices,
closed forms (Parseval, inverse pairs, permutations), second derivatives, and errors.

The generated tests (test_rules.py) check each entry on one input domain; here every
transform is checked on real and complex input, every ``norm``, with ``n``/``s`` padding and
cropping, against matrices written down from the definition of the DFT.
"""
import warnings

import numpy as onp
import pytest

import fgrad
import fgrad.numpy as np
from fgrad.core.errors import TracerMutationError
from fgrad.testing import check_grads

rng = onp.random.default_rng(0)
NORMS = [None, "backward", "ortho", "forward"]
ONE_D = ["fft", "ifft", "rfft", "irfft", "hfft", "ihfft"]
REAL_ONLY = {"rfft", "ihfft", "rfft2", "rfftn"}  # numpy refuses complex input to these


def _data(shape, complex_):
    x = rng.uniform(-2, 2, shape)
    return x + 1j * rng.uniform(-2, 2, shape) if complex_ else x


# ---- the DFT written down ------------------------------------------------------------------

def _scale(norm, n, forward):
    """The factor numpy's transform of length n applies (forward: e^{-}, inverse: e^{+})."""
    if norm == "ortho":
        return 1 / onp.sqrt(n)
    if (norm in (None, "backward")) == forward:
        return 1.0
    return 1.0 / n


def _dft(n, sign):
    j = onp.arange(n)
    return onp.exp(sign * 2j * onp.pi * onp.outer(j, j) / n)


def _resize(m, n):
    """The n x m matrix of numpy's cropping / zero-padding of an input of m points."""
    return onp.eye(n, m)


def _hermitian(c, n):
    """The full spectrum of n points whose first n//2 + 1 are ``c`` (imaginary parts of DC and
    of the Nyquist bin dropped, as a real signal's spectrum has them zero)."""
    h = n // 2 + 1
    full = onp.zeros(n, complex)
    full[:h] = c
    full[0] = full[0].real
    if n % 2 == 0:
        full[h - 1] = full[h - 1].real
    for k in range(1, (n + 1) // 2):
        full[n - k] = onp.conj(full[k])
    return full


def explicit(name, m, n, norm):
    """The transform of an input of m points with parameter n, computed from its definition
    (no numpy.fft): a function of one 1-d input."""
    h = n // 2 + 1
    if name == "fft":
        return lambda x: _scale(norm, n, True) * _dft(n, -1) @ _resize(m, n) @ x
    if name == "ifft":
        return lambda x: _scale(norm, n, False) * _dft(n, 1) @ _resize(m, n) @ x
    if name == "rfft":
        return lambda x: (_scale(norm, n, True) * _dft(n, -1) @ _resize(m, n) @ x)[:h]
    if name == "ihfft":  # the conjugate of rfft with the opposite normalisation
        return lambda x: (_scale(norm, n, False) * _dft(n, 1) @ _resize(m, n) @ x)[:h]
    if name == "irfft":
        return lambda c: (_scale(norm, n, False) * _dft(n, 1)
                          @ _hermitian(_resize(m, h) @ c, n)).real
    if name == "hfft":  # irfft of the conjugate, with the opposite normalisation
        return lambda c: (_scale(norm, n, True) * _dft(n, -1)
                          @ _hermitian(_resize(m, h) @ c, n)).real
    raise ValueError(name)


def _real_coords(f, m, complex_in):
    """``f`` as a map between real vectors: complex values as (real parts, imaginary parts)."""
    def g(v):
        x = v[:m] + 1j * v[m:] if complex_in else v
        y = f(x)
        return np.concatenate([np.real(y), np.imag(y)]) if onp.iscomplexobj(
            fgrad.core.tracer.read_value(y)) else y
    return g


def _matrix(f, size):
    """The real matrix of a (real-)linear map, column by column."""
    return onp.stack([onp.asarray(f(e)) for e in onp.eye(size)], axis=-1)


ONE_D_CASES = [(name, m, n, norm, cplx)
               for name in ONE_D
               for m, n in [(4, None), (3, 5), (5, 3), (4, 4), (4, 7), (1, 1), (6, 2)]
               for norm in NORMS
               for cplx in (False, True)
               if not (cplx and name in REAL_ONLY) and not (n is None and m == 1)]


@pytest.mark.parametrize("name,m,n,norm,cplx", ONE_D_CASES)
def test_jacobians_are_the_dft_matrices(name, m, n, norm, cplx):
    """jacfwd and jacrev of each 1-d transform, in real coordinates, equal the matrix
    written down from the DFT's definition (n padding or cropping, every norm)."""
    n_eff = n if n is not None else (2 * (m - 1) if name in ("irfft", "hfft") else m)
    size = 2 * m if cplx else m
    ours = _real_coords(lambda x: getattr(np.fft, name)(x, n=n, norm=norm), m, cplx)
    want = _matrix(_real_coords(explicit(name, m, n_eff, norm), m, cplx), size)
    v = rng.uniform(-2, 2, size)
    onp.testing.assert_allclose(fgrad.jacfwd(ours)(v), want, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(ours)(v), want, atol=1e-12)
    x = v[:m] + 1j * v[m:] if cplx else v
    onp.testing.assert_allclose(getattr(onp.fft, name)(x, n=n, norm=norm),
                                explicit(name, m, n_eff, norm)(x), atol=1e-12)


@pytest.mark.parametrize("name", ["fft", "ifft"])
def test_complex_linear_jacobian_is_the_symmetric_dft_matrix(name):
    """On complex input fft and ifft are complex-linear: jacfwd (J e) and jacrev (the plain
    transpose J^T e) both give the complex DFT matrix, which is symmetric."""
    x = _data(4, True)
    w = _dft(4, -1 if name == "fft" else 1) * (1.0 if name == "fft" else 0.25)
    f = getattr(np.fft, name)
    onp.testing.assert_allclose(fgrad.jacfwd(f, holomorphic=True)(x), w, atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(f, holomorphic=True)(x), w, atol=1e-12)


def test_rfft_cotangent_is_the_real_part_of_the_transpose():
    x = _data(5, False)
    c = _data(3, True)
    _, f_vjp = fgrad.vjp(np.fft.rfft, x)
    (ct,) = f_vjp(c)
    assert ct.dtype == onp.float64
    onp.testing.assert_allclose(ct, (_dft(5, -1)[:3].T @ c).real, atol=1e-12)


@pytest.mark.parametrize("name", ["irfft", "hfft"])
@pytest.mark.parametrize("n", [4, 5, 6, 7])
def test_ignored_imaginary_parts_have_zero_derivative(name, n):
    """numpy ignores the imaginary parts of the DC bin and (even n) the Nyquist bin; their
    cotangent is exactly 0, the other bins count twice."""
    c = _data(4, True)
    g = _data(n, False)
    _, f_vjp = fgrad.vjp(lambda c: getattr(np.fft, name)(c, n=n), c)
    (ct,) = f_vjp(g)
    assert ct[0].imag == 0.0
    h = n // 2 + 1
    if n % 2 == 0:
        assert ct[h - 1].imag == 0.0
    if h < 4:
        assert ct[h] == 0  # cropped input points
    sign = 1 if name == "irfft" else -1
    want = (_dft(n, sign)[:, 0:h].T @ g) / (n if name == "irfft" else 1)
    weights = onp.where((onp.arange(h) == 0) | (2 * onp.arange(h) == n), 1, 2)
    onp.testing.assert_allclose(ct[:h], weights * want, atol=1e-12)


# ---- forward values --------------------------------------------------------------------------

def _traced_value(f, x):
    return fgrad.vjp(f, x)[0]


@pytest.mark.parametrize("dtype", ["float64", "float32", "complex128", "complex64"])
@pytest.mark.parametrize("name", ONE_D + ["fftshift", "ifftshift"])
def test_values_and_dtypes_are_numpys(name, dtype):
    if name in REAL_ONLY and dtype.startswith("complex"):
        return
    x = _data((2, 5), dtype.startswith("complex")).astype(dtype)
    for kw in ([{}, {"axes": 0}, {"axes": (1, 0)}] if "shift" in name else
               [{"n": n, "axis": axis, "norm": norm} for n in (None, 3, 6) for axis in (0, -1)
                for norm in NORMS]):
        want = getattr(onp.fft, name)(x, **kw)
        got = _traced_value(lambda v: getattr(np.fft, name)(v, **kw), x)
        assert got.dtype == want.dtype
        onp.testing.assert_array_equal(got, want)
        (ct,) = fgrad.vjp(lambda v: getattr(np.fft, name)(v, **kw), x)[1](want)
        assert ct.dtype == x.dtype


ND = ["fft2", "ifft2", "rfft2", "irfft2", "fftn", "ifftn", "rfftn", "irfftn"]
ND_ARGS = [{}, {"norm": "ortho"}, {"s": (2, 5), "axes": (0, 1)}, {"s": (4, 3), "axes": (1, 0)},
           {"axes": (0,)}, {"axes": (-1, 0), "norm": "forward"}, {"s": (-1, 4), "axes": (0, 1)},
           {"s": (2, -1), "axes": (0, 1)}, {"axes": (1, 1)}]


@pytest.mark.parametrize("cplx", [False, True])
@pytest.mark.parametrize("name", ND)
def test_nd_values_and_jacobians(name, cplx):
    """n-d transforms: numpy's values bit for bit; jacfwd equals jacrev equals the matrix
    numpy's own transform gives column by column (a linear map is its matrix)."""
    if cplx and name in REAL_ONLY:
        return
    shape = (3, 4)
    x = _data(shape, cplx)
    for kw in ND_ARGS:
        if name.endswith("2") and kw.get("axes") is not None and len(kw["axes"]) != 2:
            continue
        want = getattr(onp.fft, name)(x, **kw)
        got = _traced_value(lambda v: getattr(np.fft, name)(v, **kw), x)
        assert got.dtype == want.dtype
        onp.testing.assert_array_equal(got, want)
        size = 2 * x.size if cplx else x.size

        def flat(f, np_):
            def g(v):
                u = np_.reshape(v[:x.size], shape)
                if cplx:
                    u = u + 1j * np_.reshape(v[x.size:], shape)
                y = np_.ravel(f(u, **kw))
                return np_.concatenate([np_.real(y), np_.imag(y)]) if onp.iscomplexobj(
                    fgrad.core.tracer.read_value(y)) else y
            return g

        matrix = _matrix(flat(getattr(onp.fft, name), onp), size)
        v = rng.uniform(-2, 2, size)
        ours = flat(getattr(np.fft, name), np)
        onp.testing.assert_allclose(fgrad.jacfwd(ours)(v), matrix, atol=1e-12)
        onp.testing.assert_allclose(fgrad.jacrev(ours)(v), matrix, atol=1e-12)


def test_plain_calls_are_numpys():
    x = _data((2, 4), True)
    for name in ONE_D + ND + ["fftshift", "ifftshift"]:
        if name in REAL_ONLY:
            continue
        onp.testing.assert_array_equal(getattr(np.fft, name)(x), getattr(onp.fft, name)(x))
    assert onp.array_equal(np.fft.fftfreq(5, 0.3), onp.fft.fftfreq(5, 0.3))


# ---- closed forms ----------------------------------------------------------------------------

def _power(z):
    return np.sum(np.real(z) ** 2 + np.imag(z) ** 2)


@pytest.mark.parametrize("n", [1, 4, 5])
def test_parseval_gradient(n):
    """sum |fft(x)|^2 = n sum |x|^2: its gradient is 2 n x for real x and, under the pairing
    Re sum(x * y), 2 n conj(x) for complex x; ifft's is 2 x / n; ortho preserves the norm."""
    x = _data(n, False)
    onp.testing.assert_allclose(fgrad.grad(lambda x: _power(np.fft.fft(x)))(x), 2 * n * x)
    onp.testing.assert_allclose(fgrad.grad(lambda x: _power(np.fft.ifft(x)))(x), 2 * x / n)
    z = _data(n, True)
    onp.testing.assert_allclose(fgrad.grad(lambda z: _power(np.fft.fft(z)))(z),
                                2 * n * onp.conj(z))
    onp.testing.assert_allclose(fgrad.grad(lambda z: _power(np.fft.fft(z, norm="ortho")))(z),
                                2 * onp.conj(z))


@pytest.mark.parametrize("norm", NORMS)
@pytest.mark.parametrize("n", [4, 5])
def test_irfft_of_rfft_has_identity_jacobian(n, norm):
    x = _data(n, False)

    def roundtrip(x):
        return np.fft.irfft(np.fft.rfft(x, norm=norm), n=n, norm=norm)

    onp.testing.assert_allclose(fgrad.jacfwd(roundtrip)(x), onp.eye(n), atol=1e-12)
    onp.testing.assert_allclose(fgrad.jacrev(roundtrip)(x), onp.eye(n), atol=1e-12)
    # and the 2-d pair, through rfft2/irfft2
    a = _data((3, n), False)
    f = lambda a: np.fft.irfft2(np.fft.rfft2(a, norm=norm), s=a.shape, norm=norm)  # noqa: E731
    onp.testing.assert_allclose(fgrad.jacrev(f)(a), onp.eye(a.size).reshape(a.shape * 2),
                                atol=1e-12)


@pytest.mark.parametrize("axes", [None, 0, 1, (1,), (0, 1), (-1, -1)])
def test_fftshift_is_a_permutation(axes):
    x = _data((3, 4), False)
    for ours, theirs, inverse in [(np.fft.fftshift, onp.fft.fftshift, onp.fft.ifftshift),
                                  (np.fft.ifftshift, onp.fft.ifftshift, onp.fft.fftshift)]:
        # the permutation matrix: where each input entry lands
        perm = theirs(onp.arange(12).reshape(3, 4), axes).ravel()
        want = onp.eye(12)[perm].reshape(3, 4, 3, 4)
        for jac in (fgrad.jacfwd, fgrad.jacrev):
            onp.testing.assert_array_equal(jac(lambda x: ours(x, axes))(x), want)
        g = _data((3, 4), True)
        (ct,) = fgrad.vjp(lambda x: ours(x, axes=axes), _data((3, 4), True))[1](g)
        onp.testing.assert_array_equal(ct, inverse(g, axes))


def test_hessian_of_a_spectral_loss():
    """L(x) = sum_k w_k |rfft(x)_k|^2 is a quadratic form x^T H x / 2 with
    H = 2 (Re C^T W Re C + Im C^T W Im C), C the one-sided DFT matrix."""
    n = 6
    w = onp.array([0.5, 1.0, 2.0, 3.0])
    c = _dft(n, -1)[: n // 2 + 1]
    want = 2 * (c.real.T @ (w[:, None] * c.real) + c.imag.T @ (w[:, None] * c.imag))

    def loss(x):
        z = np.fft.rfft(x)
        return np.sum(w * (np.real(z) ** 2 + np.imag(z) ** 2))

    x = _data(n, False)
    onp.testing.assert_allclose(fgrad.hessian(loss)(x), want, atol=1e-10)
    onp.testing.assert_allclose(fgrad.grad(loss)(x), want @ x, atol=1e-10)


LOSS_CASES = [(name, cplx, norm) for name in ONE_D + ND + ["fftshift", "ifftshift"]
              for cplx in (False, True) for norm in (None, "ortho", "forward")
              if not (cplx and name in REAL_ONLY) and not ("shift" in name and norm)]


@pytest.mark.parametrize("name,cplx,norm", LOSS_CASES)
def test_nonlinear_loss_second_order(name, cplx, norm):
    """A nonlinear loss of each transform: every mode to order 2 against finite differences,
    on real and complex input."""
    kw = {} if "shift" in name else {"norm": norm}
    x = _data((2, 3), cplx)

    def loss(x):
        y = getattr(np.fft, name)(x, **kw)
        return np.sum(np.sin(np.real(y)) * np.imag(y) + np.real(y) ** 3)

    check_grads(loss, (x,), order=2, rtol=1e-5, atol=1e-6)


# ---- fftfreq / rfftfreq ----------------------------------------------------------------------

@pytest.mark.parametrize("name", ["fftfreq", "rfftfreq"])
@pytest.mark.parametrize("n", [1, 4, 5])
def test_frequencies_are_differentiable_in_the_spacing(name, n):
    """The frequencies are k / (n d): d/dd = -k / (n d^2); values and dtypes are numpy's."""
    d = 0.7
    k = getattr(onp.fft, name)(n, 1.0) * n
    out, jac = getattr(np.fft, name)(n, d), fgrad.jacfwd(lambda d: getattr(np.fft, name)(n, d))(d)
    onp.testing.assert_array_equal(out, getattr(onp.fft, name)(n, d))
    onp.testing.assert_allclose(jac, -k / (n * d ** 2))
    onp.testing.assert_allclose(fgrad.jacrev(lambda d: getattr(np.fft, name)(n, d))(d),
                                -k / (n * d ** 2))
    d32 = onp.float32(0.7)
    got = _traced_value(lambda d: getattr(np.fft, name)(n, d), d32)
    want = getattr(onp.fft, name)(n, d32)
    assert got.dtype == want.dtype
    onp.testing.assert_array_equal(got, want)
    assert fgrad.grad(lambda d: np.sum(getattr(np.fft, name)(n, d)))(d32).dtype == onp.float32


def test_frequencies_need_an_integer_size():
    with pytest.raises(ValueError, match="n should be an integer"):
        fgrad.grad(lambda d: np.sum(np.fft.fftfreq(4.0, d)))(1.0)


# ---- errors ------------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ONE_D + ND)
def test_out_is_refused_on_tracers(name):
    x = _data((2, 4), False)
    out = onp.empty((2, 4), complex)
    with pytest.raises(TracerMutationError, match=f"fft.{name}"):
        fgrad.grad(lambda x: np.sum(np.real(getattr(np.fft, name)(x, out=out))))(x)


def test_bad_arguments_give_numpys_errors():
    x = _data(4, False)
    with pytest.raises(ValueError, match="Invalid norm"):
        fgrad.grad(lambda x: np.sum(np.real(np.fft.fft(x, norm="unitary"))))(x)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        fgrad.grad(lambda x: np.sum(np.real(np.fft.fft(x, n=0))))(x)
    with pytest.raises(ValueError, match="Invalid number of FFT data points"):
        fgrad.grad(lambda x: np.sum(np.fft.irfft(x[:1])))(x)  # default n = 2 (1 - 1)
    with pytest.raises(TypeError, match="must be an integer"):
        fgrad.grad(lambda x: np.sum(np.real(np.fft.fft(x, n=4.0))))(x)
    with pytest.raises(TypeError, match="rfft"):
        fgrad.grad(lambda z: np.sum(np.real(np.fft.rfft(z))))(_data(4, True))
    a = _data((2, 3), False)
    with pytest.raises(ValueError, match="different lengths"):
        fgrad.grad(lambda a: np.sum(np.real(np.fft.fftn(a, s=(2, 3), axes=(0,)))))(a)
    with pytest.raises(onp.exceptions.AxisError):
        fgrad.grad(lambda a: np.sum(np.real(np.fft.fft(a, axis=2))))(a)


def test_s_without_axes_warns_like_numpy():
    a = _data((2, 3), False)
    with pytest.warns(DeprecationWarning, match="axes"):
        onp.fft.fftn(a, s=(2, 4))
    with pytest.warns(DeprecationWarning, match="axes"):
        got = _traced_value(lambda a: np.fft.fftn(a, s=(2, 4)), a)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        onp.testing.assert_array_equal(got, onp.fft.fftn(a, s=(2, 4)))


def test_coverage_names_are_differentiable():
    from fgrad.tools.coverage import differentiable_names
    names = differentiable_names()
    for name in ONE_D + ND + ["fftshift", "ifftshift", "fftfreq", "rfftfreq"]:
        assert "fft." + name in names
