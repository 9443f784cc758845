"""``autograd.scipy.signal``: ``fgrad.scipy.signal``, with autograd's own ``convolve``.

autograd's ``convolve(A, B, axes=None, dot_axes=[(), ()], mode="full")`` generalises scipy's:
it convolves ``A`` and ``B`` along the pairs of axes ``axes`` (all of them by default, which is
scipy's function), sums over the pairs ``dot_axes`` (a tensor contraction, as a convolutional
layer's channels), and keeps the other axes of each, in the order ``A``'s kept axes, ``B``'s
kept axes, the convolved axes. Written with fgrad.numpy (padding, ``sliding_window_view`` and
``einsum``), so it is differentiated in both modes, batched and staged like the rest.
"""
import math
from typing import Any, Sequence

import fgrad.numpy as fnp
from ..core.tracer import value_for_shape
from ..numpy.lib.stride_tricks import sliding_window_view
from ..scipy.signal import *  # noqa: F401,F403

_LETTERS = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"


def convolve(A: Any, B: Any, axes: Sequence[Sequence[int]] | None = None,
             dot_axes: Sequence[Sequence[int]] = ((), ()), mode: str = "full") -> Any:
    """autograd's ``convolve`` (see the module's text); ``mode`` crops each convolved axis as
    scipy's does ("full", "valid", "same": the size of ``A``'s axis, centred).

    >>> import numpy
    >>> from fgrad.autograd.scipy_signal import convolve
    >>> convolve(numpy.array([1.0, 2.0, 3.0]), numpy.array([0.0, 1.0, 0.5])).tolist()
    [0.0, 1.0, 2.5, 4.0, 1.5]
    >>> x, w = numpy.ones((2, 5)), numpy.ones((2, 3))   # two channels, summed over
    >>> convolve(x, w, axes=([1], [1]), dot_axes=([0], [0]), mode="valid").tolist()
    [6.0, 6.0, 6.0]
    """
    if mode not in ("full", "valid", "same"):
        raise ValueError(f"convolve: mode {mode!r} is not one of 'full', 'valid', 'same'")
    A, B = fnp.asarray(A), fnp.asarray(B)
    sa, sb = fnp.shape(value_for_shape(A)), fnp.shape(value_for_shape(B))
    conv_a, conv_b = ([list(range(len(sa)))] * 2 if axes is None
                      else [[a % len(s) for a in ax] for ax, s in zip(axes, (sa, sb))])
    dot_a, dot_b = [[a % len(s) for a in ax] for ax, s in zip(dot_axes, (sa, sb))]
    if len(conv_a) != len(conv_b) or len(dot_a) != len(dot_b):
        raise ValueError("convolve: axes and dot_axes must pair as many axes of A as of B")
    sizes = [(sa[i], sb[j]) for i, j in zip(conv_a, conv_b)]
    if mode == "valid" and not (all(na >= nb for na, nb in sizes)
                                or all(nb >= na for na, nb in sizes)):
        raise ValueError("convolve: in 'valid' mode one array must be at least as large as "
                         "the other along every convolved axis")
    # The smaller array (by its convolved extent) is the kernel K, the other X is cut into
    # windows of K's size: out[n] = sum_j flip(K)[j] * X[n + j], X padded by K's size less
    # one for the full result ("same" crops it), not at all for the valid one.
    kernel_is_a = math.prod(na for na, _ in sizes) <= math.prod(nb for _, nb in sizes)
    k_arr, k_conv, x_arr, x_conv = (A, conv_a, B, conv_b) if kernel_is_a else \
        (B, conv_b, A, conv_a)
    k_sizes = [na if kernel_is_a else nb for na, nb in sizes]
    if mode != "valid":
        pad = [(0, 0)] * len(sb if kernel_is_a else sa)
        for n, i in zip(k_sizes, x_conv):
            pad[i] = (n - 1, n - 1)
        x_arr = fnp.pad(x_arr, pad)
    windows = sliding_window_view(x_arr, k_sizes, axis=x_conv)
    flipped = fnp.flip(k_arr, axis=k_conv) if k_conv else k_arr
    letters = iter(_LETTERS)
    dot = {k: next(letters) for k in range(len(dot_a))}
    win = {k: next(letters) for k in range(len(conv_a))}
    out_conv = {k: next(letters) for k in range(len(conv_a))}
    # the kernel's convolved axes carry the window letters, the windowed array's the output's
    in_a, in_b = (win, out_conv) if kernel_is_a else (out_conv, win)
    sub_a = "".join(in_a[conv_a.index(i)] if i in conv_a else dot[dot_a.index(i)]
                    if i in dot_a else next(letters) for i in range(len(sa)))
    sub_b = "".join(in_b[conv_b.index(j)] if j in conv_b else dot[dot_b.index(j)]
                    if j in dot_b else next(letters) for j in range(len(sb)))
    kept_a = [c for i, c in enumerate(sub_a) if i not in conv_a and i not in dot_a]
    kept_b = [c for j, c in enumerate(sub_b) if j not in conv_b and j not in dot_b]
    sub_k, sub_x = (sub_a, sub_b) if kernel_is_a else (sub_b, sub_a)
    sub_w = sub_x + "".join(win[k] for k in range(len(conv_a)))
    out = "".join(kept_a + kept_b + [out_conv[k] for k in range(len(conv_a))])
    result = fnp.einsum(f"{sub_k},{sub_w}->{out}", flipped, windows)
    if mode != "same":
        return result
    first = len(kept_a) + len(kept_b)
    crop = [slice(None)] * first
    for na, nb in sizes:  # A's size, centred on the full result, as scipy
        start = (nb - 1) // 2
        crop.append(slice(start, start + na))
    return result[tuple(crop)]
