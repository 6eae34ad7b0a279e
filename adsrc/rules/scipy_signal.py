"""scipy.signal: convolve of N-dimensional arrays, in every mode.

Imported only when SciPy is installed (rules/optional.py). convolve is
bilinear: ``full[n] = sum_k in1[k] in2[n - k]``, and the ``'same'`` and
``'valid'`` outputs are the centred part of ``full`` of their shape (SciPy
swaps the operands of a ``'valid'`` convolution when in2 is the larger one,
which gives the same centred part). So the cotangent of in1 is the cotangent
of ``full`` (``g`` set at that centre, zeros around it) correlated with in2,
which is the ``'valid'`` convolution with in2 reversed along every axis, and
the same for in2 with in1. Its tangent is convolve itself with the tangent in
place of an operand. Both are convolutions again, so second order works.

autograd's own ``autograd.scipy.signal.convolve`` takes ``axes`` and
``dot_axes`` (convolve along some axes, contract others): SciPy's convolve
has no such parameters, so those calls are autograd-only, not SciPy.
"""
from __future__ import annotations

import numpy as np
import scipy.signal as signal

from ._tangent import multilinear
from .registry import defjvp, defvjp, lookup
from ._util import cast_like, note

_MODULE = "scipy.signal"


def _full_cotangent(g, ans, in1, in2):
    """The cotangent of the full convolution: ``g`` at the centre that the mode keeps, zeros around it."""
    full = np.add(np.shape(in1), np.shape(in2)) - 1
    before = (full - np.shape(ans)) // 2
    after = full - np.shape(ans) - before
    return np.pad(g, list(zip(before.tolist(), after.tolist())))


def _convolve_vjp(position):
    def vjp(g, ans, in1, in2, mode="full", method="auto"):
        other = in2 if position == 0 else in1
        grad = signal.convolve(_full_cotangent(g, ans, in1, in2), np.flip(other), "valid", method)
        return cast_like(grad, in1 if position == 0 else in2)

    return vjp


defvjp(signal.convolve, _convolve_vjp(0), _convolve_vjp(1), module=_MODULE)
defjvp(signal.convolve, multilinear(signal.convolve, 0), multilinear(signal.convolve, 1))
note("every mode and method (in1 and in2 of the same number of dimensions); autograd's axes= and dot_axes= "
     "are not SciPy's", lookup(signal.convolve))
