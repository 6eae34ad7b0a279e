"""The general eigendecomposition, np.linalg.eig and eigvals, whose outputs are complex.

With ``A = V diag(w) V^-1`` and ``M = V^-1 dA V`` (docs/complex.md's convention):

* eigenvalues: ``dw = diag(M)``, holomorphic in A, so the vjp is the transpose
  ``V^-T diag(g_w) V^T``;
* eigenvectors: ``P = V (F o M)``, with ``F_jk = 1 / (w_k - w_j)`` off the
  diagonal, moves each eigenvector off its own line. NumPy (LAPACK's geev)
  then fixes each column's scale: Euclidean norm 1 and its largest component
  real. Keeping both, column k's tangent is ``P_k - v_k (r_k + i s_k)`` with
  ``r_k = Re(v_k^H P_k)`` and ``s_k = Im(P_mk) / v_mk`` (m the largest
  component), so the tangent follows NumPy's own eigenvectors and finite
  differences of np.linalg.eig check it directly. The vjp is its transpose.

Where two eigenvalues coincide (to rounding) neither the eigenvectors nor, in
general, the eigenvalues are differentiable (a defective matrix's eigenvalues
move like square roots): that is refused with InvalidArgument. So is a
largest component that is not unique, where NumPy's choice of phase jumps.
For a real matrix, the sign NumPy gives an eigenvector can also flip between
nearby matrices (where the eigenvector is itself continuous): the derivative
given is the continuous branch's.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument
from .registry import allow_complex, defjvp, defvjp, lookup
from ._util import is_zero, note, zero


def _mT(x):
    return np.swapaxes(x, -1, -2)


def _gaps(w, what):
    """F = 1 / (w_k - w_j) off the diagonal, 0 on it; refused where two eigenvalues coincide."""
    n = np.shape(w)[-1]
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    off = ~np.eye(n, dtype=bool)
    scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None] + np.finfo(float).tiny
    if np.any(off & (np.abs(gaps) <= 64 * n * np.finfo(float).eps * scale)):
        raise InvalidArgument(
            f"{what}: the gradient is undefined where eigenvalues repeat (eigenvalues "
            f"{np.round(w, 12).tolist()}): the eigenvectors are not unique there, and the eigenvalues of a "
            f"defective matrix are not differentiable. Symmetric or Hermitian matrices: use np.linalg.eigh")
    return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def _largest(v, what):
    """The row of each eigenvector's largest component (NumPy makes it real), and its value."""
    magnitude = np.abs(v)
    rows = np.argmax(magnitude, axis=-2)
    top = np.take_along_axis(magnitude, rows[..., None, :], axis=-2)[..., 0, :]
    if np.any(np.sum(magnitude >= top[..., None, :] * (1 - 1e-9), axis=-2) > 1):
        raise InvalidArgument(f"{what}: an eigenvector has two largest components of equal size, where NumPy's "
                              f"choice of its phase is not continuous")
    return rows, np.real(np.take_along_axis(v, rows[..., None, :], axis=-2)[..., 0, :])


def _like(contribution, a):
    """A real matrix's gradient is real (docs/complex.md), though its eigenvalues may not be."""
    dtype = np.result_type(a, 1.0)
    return np.asarray(contribution if dtype.kind == "c" else np.real(contribution), dtype=dtype)


def _eig_jvp(t, ans, a):
    w, v = ans
    m = np.linalg.solve(v, t @ v)
    dw = np.diagonal(m, axis1=-2, axis2=-1)
    p = v @ (_gaps(w, "np.linalg.eig") * m)
    rows, top = _largest(v, "np.linalg.eig")
    r = np.real(np.sum(np.conj(v) * p, axis=-2))
    s = np.imag(np.take_along_axis(p, rows[..., None, :], axis=-2)[..., 0, :]) / top
    dv = p - v * np.expand_dims(r + 1j * s, -2)
    # A real matrix with real eigenvalues has real eigenvectors (NumPy returns real arrays then).
    return (dw if np.iscomplexobj(w) else np.real(dw)), (dv if np.iscomplexobj(v) else np.real(dv))


def _eig_da(g, ans, a):
    w, v = ans
    if isinstance(g, (tuple, list)):
        g_w, g_v = g
    else:
        g_w, g_v = g, zero
    inner = np.zeros(np.shape(v), dtype=v.dtype)
    if not is_zero(g_w):
        inner = inner + np.expand_dims(g_w, -1) * np.eye(np.shape(v)[-1])
    if not is_zero(g_v):
        rows, top = _largest(v, "np.linalg.eig")
        along = np.sum(g_v * v, axis=-2)  # a_k = g_k . v_k
        q = g_v - np.real(along)[..., None, :] * np.conj(v)
        one_hot = np.arange(np.shape(v)[-2])[:, None] == rows[..., None, :]
        at_top = one_hot * (-1j * np.imag(along) / top)[..., None, :]
        inner = inner + _gaps(w, "np.linalg.eig") * (_mT(v) @ (q + at_top))
    return _like(np.linalg.solve(_mT(v), inner @ _mT(v)), a)  # V^-T inner V^T


def _eigvals_da(g, ans, a):
    _gaps(ans, "np.linalg.eigvals")
    v = np.linalg.eig(a)[1]
    return _like(np.linalg.solve(_mT(v), np.expand_dims(g, -1) * _mT(v)), a)


def _eigvals_jvp(t, ans, a):
    _gaps(ans, "np.linalg.eigvals")
    v = np.linalg.eig(a)[1]
    return np.diagonal(np.linalg.solve(v, t @ v), axis1=-2, axis2=-1)


defvjp(np.linalg.eig, _eig_da)
defjvp(np.linalg.eig, lambda t, ans, a: _eig_jvp(t, ans, a))
defvjp(np.linalg.eigvals, _eigvals_da)
defjvp(np.linalg.eigvals, _eigvals_jvp)
allow_complex(np.linalg.eig, np.linalg.eigvals)
note("complex outputs, also for a real matrix; eigenvectors follow NumPy's normalization (norm 1, largest "
     "component real); refused where eigenvalues repeat", lookup(np.linalg.eig), lookup(np.linalg.eigvals))
