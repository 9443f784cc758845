"""fgrad.numpy.fft: numpy.fft with derivatives.

Every transform is linear (over the reals: ``irfft`` and ``hfft`` ignore some imaginary parts),
so each primitive gives only its transpose and its JVP is the transform of the tangent. The
transposes follow JAX's convention: the unconjugated transpose under the pairing
``Re sum(x * y)``; a real input of a complex output gets the real part (the tape takes it).

* ``fft``/``ifft``: the DFT matrix is symmetric, so the transpose is the same transform of the
  cotangent, followed by undoing numpy's zero-padding (a cut) or cropping (a zero-pad) of the
  input to ``n`` points.
* ``rfft``/``ihfft``: the one-sided spectrum is the first ``n//2 + 1`` rows of the full one; the
  transpose is ``fft``/``ifft`` of the cotangent zero-padded to ``n``.
* ``irfft``/``hfft``: numpy reads the half spectrum, ignoring the imaginary parts of the DC bin
  and (for even ``n``) of the Nyquist bin, and counts every other bin twice (it stands for its
  mirror image too). The transpose is the first ``n//2 + 1`` bins of ``ifft``/``fft`` of the
  cotangent, weighted 2 except DC and Nyquist (weight 1, real: the imaginary parts numpy
  ignores get zero derivative).
* The n-dimensional transforms are the 1-d ones applied axis by axis, in numpy's own order,
  so their values are numpy's bit for bit.
* ``fftshift`` and ``ifftshift`` are permutations, each the other's transpose.
* ``fftfreq``/``rfftfreq`` take a size ``n`` and a spacing ``d``: they are differentiable in a
  traced ``d`` (the frequencies are ``k / (n d)``), constant in ``n``.
"""
import warnings

from typing import TYPE_CHECKING, Any

import numpy as _onp
from numpy.lib.array_utils import normalize_axis_index as _normalize_axis

import fgrad.numpy as fnp
from . import batch_rules
from ..core.table import Spec, define
from ..core.tracer import value_for_shape
from .broadcasting import dtype_of, shape_of
from .namespace import mirror
from .wrapping import as_tuple, differentiable, unsupported_kwargs

# one entry per argument: a bare "complex" would be read as a tuple of per-argument domains
_COMPLEX = ("complex",)


def _fit(x, axis, m):
    """``x`` with ``m`` points along ``axis``: cut, or zero-padded at the end. It undoes
    (transposes) numpy's own cropping or padding of a transform's input."""
    shape = shape_of(x)
    k = shape[axis]
    if k > m:
        return fnp.getitem(x, (slice(None),) * axis + (slice(0, m),))
    if k < m:
        zeros = _onp.zeros(shape[:axis] + (m - k,) + shape[axis + 1:], dtype_of(x))
        return fnp.concatenate([x, zeros], axis=axis)
    return x


def _real_if_real(c, x):
    """The cotangent ``c`` of ``x``: its real part when ``x`` is real. (The tape does this for
    complex outputs; ``irfft`` and ``hfft`` give real outputs from possibly real inputs.)"""
    return c if _onp.iscomplexobj(value_for_shape(x)) else fnp.real(c)


def _twice_inside(c, axis, n):
    """``c`` (``n//2 + 1`` bins along ``axis``) with every bin but DC and, for even ``n``,
    Nyquist doubled: the weights of the half spectrum in a real inverse transform."""
    h = n // 2 + 1
    w = _onp.full(h, 2, _onp.finfo(dtype_of(c)).dtype)
    w[0] = 1
    if n % 2 == 0:
        w[-1] = 1
    return c * w.reshape((h,) + (1,) * (len(shape_of(c)) - axis - 1))


def _params(n, axis, norm):
    return {"n": n, "axis": axis, "norm": norm}


# Spec cases of the 1-d primitives: (input shape, n, axis, norm); n padding, cropping or equal.
def _cases(rows):
    return [((shape,), _params(n, axis, norm)) for shape, n, axis, norm in rows]


_C2C = _cases([((4,), 4, 0, "backward"), ((3,), 5, 0, "ortho"), ((2, 4), 3, 1, "forward"),
               ((3, 2), 3, 0, None)])
_C2R = _cases([((4,), 6, 0, "backward"), ((4,), 7, 0, "ortho"), ((4,), 4, 0, "forward"),
               ((3,), 8, 0, None), ((2, 3), 5, 1, "backward"), ((3, 2), 4, 0, "ortho")])
_R2C = _cases([((4,), 4, 0, "backward"), ((5,), 5, 0, "ortho"), ((3,), 6, 0, "forward"),
               ((2, 4), 3, 1, None), ((3, 2), 2, 0, "backward")])


def _impl(np_fn):
    return lambda x, n, axis, norm: np_fn(x, n, axis, norm)


fft_p = define("fft.fft", _impl(_onp.fft.fft),
               [lambda g, ans, x, n, axis, norm: _fit(fft_p(g, n=n, axis=axis, norm=norm),
                                                      axis, shape_of(x)[axis])],
               linear=True, spec=Spec(_C2C, domain=_COMPLEX), batch=batch_rules.along())

ifft_p = define("fft.ifft", _impl(_onp.fft.ifft),
                [lambda g, ans, x, n, axis, norm: _fit(ifft_p(g, n=n, axis=axis, norm=norm),
                                                       axis, shape_of(x)[axis])],
                linear=True, spec=Spec(_C2C, domain=_COMPLEX), batch=batch_rules.along())

rfft_p = define("fft.rfft", _impl(_onp.fft.rfft),
                [lambda g, ans, x, n, axis, norm: _fit(fft_p(g, n=n, axis=axis, norm=norm),
                                                       axis, shape_of(x)[axis])],
                linear=True, spec=Spec(_R2C), batch=batch_rules.along())

ihfft_p = define("fft.ihfft", _impl(_onp.fft.ihfft),
                 [lambda g, ans, x, n, axis, norm: _fit(ifft_p(g, n=n, axis=axis, norm=norm),
                                                        axis, shape_of(x)[axis])],
                 linear=True, spec=Spec(_R2C), batch=batch_rules.along())


def _half_spectrum_vjp(full):
    """The transpose of irfft (``full`` = ifft: bin k of the input multiplies
    e^{+2 pi i jk/n}) or of hfft (``full`` = fft: hfft conjugates its input first). The first
    n//2 + 1 bins of ``full`` of the cotangent are the plain transposes of one term each;
    ifft/fft rather than ihfft/rfft keep the rule linear in a complex cotangent too."""
    def vjp(g, ans, x, n, axis, norm):
        c = _fit(full(g, n=n, axis=axis, norm=norm), axis, n // 2 + 1)
        if dtype_of(g).kind != "c":
            # a real cotangent's DC and (even n) Nyquist bins are real: the imaginary parts
            # numpy ignores get exact zeros, not the transform's rounding (1e-17 at n = 6)
            ends = _onp.zeros((n // 2 + 1,) + (1,) * (len(shape_of(c)) - axis - 1), bool)
            ends[0] = ends[-1 if n % 2 == 0 else 0] = True
            c = fnp.where(ends, fnp.real(c), c)
        return _real_if_real(_fit(_twice_inside(c, axis, n), axis, shape_of(x)[axis]), x)
    return vjp


irfft_p = define("fft.irfft", _impl(_onp.fft.irfft), [_half_spectrum_vjp(ifft_p)], linear=True,
                 spec=Spec(_C2R, domain=_COMPLEX), batch=batch_rules.along())
hfft_p = define("fft.hfft", _impl(_onp.fft.hfft), [_half_spectrum_vjp(fft_p)], linear=True,
                spec=Spec(_C2R, domain=_COMPLEX), batch=batch_rules.along())


def _shift_impl(np_fn):
    return lambda x, axes: np_fn(x, axes)


_SHIFT_CASES = [(((5,),), {"axes": None}), (((3, 4),), {"axes": None}),
                (((3, 4),), {"axes": 1}), (((2, 3, 3),), {"axes": (0, -1)})]

fftshift_p = define("fft.fftshift", _shift_impl(_onp.fft.fftshift),
                    [lambda g, ans, x, axes: ifftshift_p(g, axes=axes)], linear=True,
                    spec=Spec(_SHIFT_CASES), batch=batch_rules.along("axes"))
ifftshift_p = define("fft.ifftshift", _shift_impl(_onp.fft.ifftshift),
                     [lambda g, ans, x, axes: fftshift_p(g, axes=axes)], linear=True,
                     spec=Spec(_SHIFT_CASES, domain=_COMPLEX), batch=batch_rules.along("axes"))


# ---- the public functions ------------------------------------------------------------------

def _one_d(prim, name, a, n, axis, norm, out, inverse_real=False):
    unsupported_kwargs(name, {"out": out})
    a = fnp.asarray(a)
    shape = shape_of(a)
    axis = _normalize_axis(axis, len(shape))
    if n is None:
        n = 2 * (shape[axis] - 1) if inverse_real else shape[axis]
    return prim(a, **_params(_check_n(n), axis, norm))


def _check_n(n):
    if not isinstance(n, (int, _onp.integer)):
        raise TypeError(f"fgrad.numpy.fft: the number of points n must be an integer, "
                        f"not {n!r}")
    return int(n)


@differentiable(_onp.fft.fft, Spec([
    (((4,),), {}), (((3,),), {"n": 6, "norm": "ortho"}),
    (((4, 3),), {"n": 2, "axis": 0, "norm": "forward"}), (((2, 4),), {"axis": -1})]),
    name="fft.fft")
def fft(a, n=None, axis=-1, norm=None, out=None):
    """Linear; its transpose is ``fft`` of the cotangent, cut or zero-padded back to the
    input's length."""
    return _one_d(fft_p, "fft.fft", a, n, axis, norm, out)


@differentiable(_onp.fft.ifft, Spec([
    (((4,),), {}), (((3,),), {"n": 5, "norm": "forward"}),
    (((4, 2),), {"n": 3, "axis": 0, "norm": "ortho"}), (((2, 3),), {"norm": "backward"})]),
    name="fft.ifft")
def ifft(a, n=None, axis=-1, norm=None, out=None):
    """Linear; its transpose is ``ifft`` of the cotangent, cut or zero-padded back to the
    input's length."""
    return _one_d(ifft_p, "fft.ifft", a, n, axis, norm, out)


@differentiable(_onp.fft.rfft, Spec([
    (((4,),), {}), (((5,),), {"norm": "ortho"}), (((3,),), {"n": 6, "norm": "forward"}),
    (((4, 3),), {"n": 3, "axis": 0})]),
    name="fft.rfft")
def rfft(a, n=None, axis=-1, norm=None, out=None):
    """Linear; its transpose is ``fft`` of the cotangent zero-padded to ``n`` points (real
    part), cut or zero-padded back to the input's length."""
    return _one_d(rfft_p, "fft.rfft", a, n, axis, norm, out)


# irfft and hfft read complex half spectra; the table's primitives check them on complex
# input, the public functions on real input (which numpy takes too).
@differentiable(_onp.fft.irfft, Spec([
    (((4,),), {}), (((4,),), {"n": 7, "norm": "ortho"}), (((4,),), {"n": 4}),
    (((3, 2),), {"n": 5, "axis": 0, "norm": "forward"})]),
    name="fft.irfft")
def irfft(a, n=None, axis=-1, norm=None, out=None):
    """Real-linear. The imaginary parts of the DC bin and (for even ``n``) of the Nyquist bin
    do not change numpy's result, so their derivative is zero; an input longer than
    ``n//2 + 1`` points is cut, so the extra points have zero derivative too."""
    return _one_d(irfft_p, "fft.irfft", a, n, axis, norm, out, inverse_real=True)


@differentiable(_onp.fft.hfft, Spec([
    (((4,),), {}), (((3,),), {"n": 5, "norm": "ortho"}), (((4,),), {"n": 3}),
    (((2, 3),), {"n": 6, "axis": 1, "norm": "forward"})]),
    name="fft.hfft")
def hfft(a, n=None, axis=-1, norm=None, out=None):
    """Real-linear. The imaginary parts of the DC bin and (for even ``n``) of the Nyquist bin
    do not change numpy's result, so their derivative is zero; an input longer than
    ``n//2 + 1`` points is cut, so the extra points have zero derivative too."""
    return _one_d(hfft_p, "fft.hfft", a, n, axis, norm, out, inverse_real=True)


@differentiable(_onp.fft.ihfft, Spec([
    (((4,),), {}), (((5,),), {"norm": "forward"}), (((3,),), {"n": 6, "norm": "ortho"}),
    (((4, 2),), {"n": 3, "axis": 0})]),
    name="fft.ihfft")
def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """Linear; its transpose is ``ifft`` of the cotangent zero-padded to ``n`` points (real
    part), cut or zero-padded back to the input's length."""
    return _one_d(ihfft_p, "fft.ihfft", a, n, axis, norm, out)


def _nd_args(shape, s, axes, inverse_real):
    """numpy's normalisation of ``s`` and ``axes`` (numpy.fft's ``_cook_nd_args``), from the
    input's shape: the lengths and (non-negative) axes of the 1-d transforms."""
    given = s is not None
    if not given:
        s = [shape[a] for a in axes] if axes is not None else list(shape)
    s = list(s)
    if axes is None:
        if given:
            warnings.warn("`axes` should not be `None` if `s` is not `None` (Deprecated in "
                          "NumPy 2.0).", DeprecationWarning, stacklevel=4)
        axes = list(range(-len(s), 0))
    axes = [_normalize_axis(a, len(shape)) for a in as_tuple(axes)]
    if len(s) != len(axes):
        raise ValueError("Shape and axes have different lengths.")
    if inverse_real and not given:
        s[-1] = (shape[axes[-1]] - 1) * 2
    if None in s:
        warnings.warn("Passing an array containing `None` values to `s` is deprecated in "
                      "NumPy 2.0.", DeprecationWarning, stacklevel=4)
    # -1 is the input's whole length; None is the 1-d transform's default n (2 (m - 1) for the
    # last axis of an inverse real transform)
    last = len(axes) - 1
    s = [shape[a] if n is not None and n == -1 else
         (2 * (shape[a] - 1) if inverse_real and i == last else shape[a]) if n is None else
         _check_n(n) for i, (n, a) in enumerate(zip(s, axes))]
    return s, axes


def _nd(kind, name, a, s, axes, norm, out):
    unsupported_kwargs(name, {"out": out})
    a = fnp.asarray(a)
    s, axes = _nd_args(shape_of(a), s, axes, kind == "irfft")
    # the same 1-d transforms, in the same order, as numpy's own n-d functions
    if kind in ("fft", "ifft"):
        prim = fft_p if kind == "fft" else ifft_p
        for i in reversed(range(len(axes))):
            a = prim(a, **_params(s[i], axes[i], norm))
    elif kind == "rfft":
        a = rfft_p(a, **_params(s[-1], axes[-1], norm))
        for i in range(len(axes) - 2, -1, -1):
            a = fft_p(a, **_params(s[i], axes[i], norm))
    else:
        for i in range(len(axes) - 1):
            a = ifft_p(a, **_params(s[i], axes[i], norm))
        a = irfft_p(a, **_params(s[-1], axes[-1], norm))
    return a


_ND_REAL = [(((3, 4),), {}), (((2, 3),), {"s": (3, 2), "axes": (0, 1), "norm": "ortho"}),
            (((2, 3, 2),), {"axes": (0, 2), "norm": "forward"})]
_ND_COMPLEX = [(((3, 4),), {}), (((2, 3),), {"s": (4, 2), "axes": (1, 0), "norm": "ortho"}),
               (((2, 2, 3),), {"axes": (-1,), "norm": "forward"})]
_2D_REAL = [(((3, 4),), {}), (((2, 3),), {"s": (3, 2), "norm": "ortho"}),
            (((2, 2, 3),), {"axes": (0, 2), "norm": "forward"})]
_2D_COMPLEX = [(((3, 4),), {"norm": "forward"}), (((2, 3),), {"s": (2, 4)}),
               (((3, 2, 2),), {"axes": (2, 0), "norm": "ortho"})]


@differentiable(_onp.fft.fftn, Spec(_ND_COMPLEX, domain=_COMPLEX), name="fft.fftn")
def fftn(a, s=None, axes=None, norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("fft", "fft.fftn", a, s, axes, norm, out)


@differentiable(_onp.fft.ifftn, Spec(_ND_REAL), name="fft.ifftn")
def ifftn(a, s=None, axes=None, norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("ifft", "fft.ifftn", a, s, axes, norm, out)


@differentiable(_onp.fft.fft2, Spec(_2D_REAL), name="fft.fft2")
def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("fft", "fft.fft2", a, s, axes, norm, out)


@differentiable(_onp.fft.ifft2, Spec(_2D_COMPLEX, domain=_COMPLEX), name="fft.ifft2")
def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("ifft", "fft.ifft2", a, s, axes, norm, out)


@differentiable(_onp.fft.rfftn, Spec(_ND_REAL), name="fft.rfftn")
def rfftn(a, s=None, axes=None, norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("rfft", "fft.rfftn", a, s, axes, norm, out)


@differentiable(_onp.fft.rfft2, Spec(_2D_REAL), name="fft.rfft2")
def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """numpy's own sequence of 1-d transforms, each differentiable (values bit for bit)."""
    return _nd("rfft", "fft.rfft2", a, s, axes, norm, out)


@differentiable(_onp.fft.irfftn, Spec([(((3, 3),), {}),
                                       (((2, 3),), {"s": (3, 5), "axes": (0, 1),
                                                    "norm": "ortho"}),
                                       (((3, 2, 2),), {"axes": (2, 0), "norm": "forward"})],
                                      domain=_COMPLEX), name="fft.irfftn")
def irfftn(a, s=None, axes=None, norm=None, out=None):
    """Real-linear. Along the last transformed axis the imaginary parts of the DC bin
    and (for even lengths) of the Nyquist bin do not change numpy's result: zero derivative."""
    return _nd("irfft", "fft.irfftn", a, s, axes, norm, out)


@differentiable(_onp.fft.irfft2, Spec([(((3, 3),), {}), (((2, 3),), {"s": (3, 4)}),
                                       (((2, 2, 3),), {"axes": (0, 2), "norm": "ortho"})]),
                name="fft.irfft2")
def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """Real-linear. Along the last transformed axis the imaginary parts of the DC bin
    and (for even lengths) of the Nyquist bin do not change numpy's result: zero derivative."""
    return _nd("irfft", "fft.irfft2", a, s, axes, norm, out)


def _shift_axes(axes):
    if axes is None or isinstance(axes, (int, _onp.integer)):
        return None if axes is None else int(axes)
    return tuple(int(a) for a in axes)


@differentiable(_onp.fft.fftshift, Spec(_SHIFT_CASES), name="fft.fftshift")
def fftshift(x, axes=None):
    """A permutation; its transpose is ``ifftshift``."""
    return fftshift_p(fnp.asarray(x), axes=_shift_axes(axes))


@differentiable(_onp.fft.ifftshift, Spec(_SHIFT_CASES, domain=_COMPLEX), name="fft.ifftshift")
def ifftshift(x, axes=None):
    """A permutation; its transpose is ``fftshift``."""
    return ifftshift_p(fnp.asarray(x), axes=_shift_axes(axes))


def _freq_spec():
    return Spec([(((),), {"n": 4}), (((),), {"n": 5}), (((),), {"n": 1})], domain=(0.5, 2.0),
                call=lambda f, d, n: f(n, d))


def _check_size(n):
    if not isinstance(n, (int, _onp.integer)):
        raise ValueError("n should be an integer")


@differentiable(_onp.fft.fftfreq, _freq_spec(), name="fft.fftfreq")
def fftfreq(n, d=1.0, device=None):
    """Differentiable in a traced spacing ``d`` (the frequencies are ``k / (n d)``); ``n`` is
    a size."""
    _check_size(n)
    val = 1.0 / (n * d)  # numpy's operations in numpy's order: the same values
    k = _onp.concatenate([_onp.arange(0, (n - 1) // 2 + 1, dtype=int, device=device),
                          _onp.arange(-(n // 2), 0, dtype=int, device=device)])
    return k * val


@differentiable(_onp.fft.rfftfreq, _freq_spec(), name="fft.rfftfreq")
def rfftfreq(n, d=1.0, device=None):
    """Differentiable in a traced spacing ``d`` (the frequencies are ``k / (n d)``); ``n`` is
    a size."""
    _check_size(n)
    val = 1.0 / (n * d)
    return _onp.arange(0, n // 2 + 1, dtype=int, device=device) * val


def _add_notes():
    """Put what fgrad adds in front of numpy's docstring (which the public functions carry):
    the traced function's own docstring, and the refusal of ``out=`` for the transforms."""
    out = "On traced values ``out=`` raises TracerMutationError (use the returned array)."
    for f in (fft, ifft, rfft, irfft, hfft, ihfft, fftn, ifftn, fft2, ifft2, rfftn, rfft2,
              irfftn, irfft2, fftshift, ifftshift, fftfreq, rfftfreq):
        if f not in (fftshift, ifftshift, fftfreq, rfftfreq):
            f.__doc__ = f.__doc__.replace("\n\n", f" {out}\n\n", 1)


_add_notes()
mirror(_onp.fft, globals(), "fft.")

if TYPE_CHECKING:  # numpy's other names are filled in above at import: to a type checker, Any
    def __getattr__(name: str) -> Any: ...
