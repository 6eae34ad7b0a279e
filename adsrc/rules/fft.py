"""The FFT family: np.fft's transforms and shifts.

Every transform is linear (over the reals), so each is declared with
``deflinear``: its jvp is the transform itself applied to the tangent.

The vjps follow docs/complex.md (the transpose, not the conjugate transpose):

* the DFT matrix is symmetric, so the vjp of ``fft`` is ``fft`` again (``ifft``
  of ``ifft``), with the same ``norm``; ``n=`` crops or zero-pads the input, and
  its transpose pads or crops the cotangent back to the input's length. The
  2-D and n-D forms do this along each axis;
* ``rfft`` keeps the first ``n // 2 + 1`` outputs of ``fft`` of a real input:
  its vjp is ``fft`` of the cotangent zero-extended to ``n``, real part;
* ``irfft`` reads its input as the half of a Hermitian spectrum: output
  ``y = Re(sum_k c_k a_k e^{2 pi i jk/n}) * scale``, with ``c_k = 2`` for the
  frequencies that stand for a conjugate pair and 1 for 0 (and n/2 when n is
  even). Its vjp is ``c * ifft(Re g)``, cut to the input's length;
* ``hfft(a)`` is ``irfft(conj(a))`` and ``ihfft(a)`` is ``conj(rfft(a))``, with
  the ``norm`` direction swapped;
* ``fftshift`` and ``ifftshift`` are each other's transposes.
"""
from __future__ import annotations

import numpy as np

from .registry import allow_complex, deflinear, lookup
from ._util import note

_fft = np.fft
_SWAP = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}


def _fit(g, length: int, axis: int):
    """``g`` cropped or zero-padded along ``axis`` to ``length`` (the transpose of the other one)."""
    have = g.shape[axis]
    if have == length:
        return g
    if have > length:
        index = [slice(None)] * g.ndim
        index[axis] = slice(0, length)
        return g[tuple(index)]
    widths = [(0, 0)] * g.ndim
    widths[axis] = (0, length - have)
    return np.pad(g, widths)


def _fit_all(g, shape, axes):
    for axis in axes:
        g = _fit(g, shape[axis], axis)
    return g


# ---- one axis ------------------------------------------------------------------
def _fft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _fit(_fft.fft(g, axis=axis, norm=norm), np.shape(a)[axis], axis)


def _ifft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    return _fit(_fft.ifft(g, axis=axis, norm=norm), np.shape(a)[axis], axis)


def _rfft_transpose(g, length: int, n: int, axis: int, norm):
    """The transpose of ``rfft(., n)`` on an input of ``length`` along ``axis``: real, that length."""
    return np.real(_fit(_fft.fft(g, n=n, axis=axis, norm=norm), length, axis))


def _rfft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    length = np.shape(a)[axis]
    return _rfft_transpose(g, length, length if n is None else n, axis, norm)


def _irfft_transpose(g, length: int, n: int, axis: int, norm):
    """The transpose of ``irfft(., n)`` on a half spectrum of ``length`` along ``axis``."""
    half = _fit(_fft.ifft(np.real(g), axis=axis, norm=norm), n // 2 + 1, axis)
    weights = np.full(n // 2 + 1, 2.0)
    weights[0] = 1.0
    if n % 2 == 0:
        weights[-1] = 1.0
    shape = [1] * half.ndim
    shape[axis] = weights.size
    return _fit(half * weights.reshape(shape), length, axis)


def _irfft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    length = np.shape(a)[axis]
    return _irfft_transpose(g, length, 2 * (length - 1) if n is None else n, axis, norm)


def _hfft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    length = np.shape(a)[axis]
    return np.conj(_irfft_transpose(g, length, 2 * (length - 1) if n is None else n, axis, _SWAP[norm]))


def _ihfft_da(g, ans, a, n=None, axis=-1, norm=None, out=None):
    length = np.shape(a)[axis]
    return _rfft_transpose(np.conj(g), length, length if n is None else n, axis, _SWAP[norm])


deflinear(_fft.fft, _fft_da)
deflinear(_fft.ifft, _ifft_da)
deflinear(_fft.rfft, _rfft_da)
deflinear(_fft.irfft, _irfft_da)
deflinear(_fft.hfft, _hfft_da)
deflinear(_fft.ihfft, _ihfft_da)


# ---- several axes --------------------------------------------------------------
def _axes_and_sizes(a, s, axes, inverse_real=False):
    """NumPy's defaults: every axis (or the last len(s)); sizes from the input, irfftn's last 2(m-1)."""
    ndim = np.ndim(a)
    if axes is None:
        axes = range(ndim) if s is None else range(-len(s), 0)
    axes = [int(ax) % ndim for ax in axes]
    if s is None:
        s = [np.shape(a)[ax] for ax in axes]
        if inverse_real:
            s[-1] = 2 * (s[-1] - 1)
    return axes, [int(k) for k in s]


def _nd(transform):
    def vjp(g, ans, a, s=None, axes=None, norm=None, out=None):
        axes_, _ = _axes_and_sizes(a, s, axes)
        return _fit_all(transform(g, axes=axes_, norm=norm), np.shape(a), axes_)
    return vjp


def _rfftn_da(g, ans, a, s=None, axes=None, norm=None, out=None):
    axes_, sizes = _axes_and_sizes(a, s, axes)
    # rfftn is rfft along the last axis, then fft along the others (each cropped or padded to s).
    half_shape = list(np.shape(a))
    half_shape[axes_[-1]] = sizes[-1] // 2 + 1
    g = _fit_all(_fft.fftn(g, axes=axes_[:-1], norm=norm), half_shape, axes_[:-1]) if len(axes_) > 1 else g
    return _rfft_transpose(g, np.shape(a)[axes_[-1]], sizes[-1], axes_[-1], norm)


def _irfftn_da(g, ans, a, s=None, axes=None, norm=None, out=None):
    axes_, sizes = _axes_and_sizes(a, s, axes, inverse_real=True)
    # irfftn is ifft along all but the last axis (each cropped or padded to s), then irfft along it.
    g = _irfft_transpose(g, np.shape(a)[axes_[-1]], sizes[-1], axes_[-1], norm)
    if len(axes_) > 1:
        g = _fit_all(_fft.ifftn(g, axes=axes_[:-1], norm=norm), np.shape(a), axes_[:-1])
    return g


deflinear(_fft.fftn, _nd(_fft.fftn))
deflinear(_fft.ifftn, _nd(_fft.ifftn))
deflinear(_fft.rfftn, _rfftn_da)
deflinear(_fft.irfftn, _irfftn_da)


def _two(vjp):
    def vjp2(g, ans, a, s=None, axes=(-2, -1), norm=None, out=None):
        return vjp(g, ans, a, s, axes, norm)
    return vjp2


deflinear(_fft.fft2, _two(_nd(_fft.fftn)))
deflinear(_fft.ifft2, _two(_nd(_fft.ifftn)))
deflinear(_fft.rfft2, _two(_rfftn_da))
deflinear(_fft.irfft2, _two(_irfftn_da))

# ---- shifts --------------------------------------------------------------------
deflinear(_fft.fftshift, lambda g, ans, x, axes=None: _fft.ifftshift(g, axes=axes))
deflinear(_fft.ifftshift, lambda g, ans, x, axes=None: _fft.fftshift(g, axes=axes))

FFT_RULES = (_fft.fft, _fft.ifft, _fft.rfft, _fft.irfft, _fft.hfft, _fft.ihfft, _fft.fftn, _fft.ifftn,
             _fft.rfftn, _fft.irfftn, _fft.fft2, _fft.ifft2, _fft.rfft2, _fft.irfft2, _fft.fftshift,
             _fft.ifftshift)
allow_complex(*FFT_RULES)

note("the transpose of the DFT is the DFT: fft of the cotangent, cropped or zero-padded back to the "
     "input (n=, axis=, norm=)", lookup(_fft.fft), lookup(_fft.ifft))
note("fftn of the cotangent, cropped or zero-padded back along each axis (s=, axes=, norm=)",
     *(lookup(f) for f in (_fft.fftn, _fft.ifftn, _fft.fft2, _fft.ifft2)))
note("real input: the real part of fft of the cotangent zero-extended to n", lookup(_fft.rfft),
     lookup(_fft.rfftn), lookup(_fft.rfft2), lookup(_fft.ihfft))
note("the input is half a Hermitian spectrum: c * ifft(Re g), c = 2 for the frequencies that stand for a "
     "conjugate pair, 1 for 0 and n/2; the imaginary parts of those two are ignored, as NumPy does",
     lookup(_fft.irfft), lookup(_fft.irfftn), lookup(_fft.irfft2), lookup(_fft.hfft))
note("each is the other's transpose", lookup(_fft.fftshift), lookup(_fft.ifftshift))
