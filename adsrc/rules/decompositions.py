"""Matrix functions: inv, det, slogdet, solve, matrix_power, cholesky, eigh, svdvals.

All of them work on stacks of matrices (the last two axes). ``slogdet`` and
``eigh`` return tuples, so their cotangent is a tuple too, whose entries may
be ``adsrc.zero``.

cholesky, eigh and eigvalsh read only one triangle of their input (the lower
one by default), so their gradient lives on that triangle: it is the gradient
of the function NumPy actually computes. For an input built symmetric
(``A = B @ B.T``) this gives the same gradient for ``B`` as the usual
symmetric convention. A complex eigh reads a Hermitian matrix (the real part
of the diagonal); its eigenvectors' phases follow NumPy's (module _phases).
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, defvjp, lookup
from ..errors import InvalidArgument
from . import _phases
from ._util import is_zero, note, unbroadcast, zero


def _mT(a):
    return np.swapaxes(a, -1, -2)


def _mH(a):
    """The conjugate transpose of each matrix."""
    return np.conj(_mT(a))


def _inv_da(g, ans, a):
    return -_mT(ans) @ g @ _mT(ans)


def _adjugate(a):
    """adj(A), with A adj(A) = det(A) I, also where A is singular (no inverse taken).

    Where A is safely invertible, adj(A) = det(A) A⁻¹. Otherwise, from the
    SVD A = U S Vᵀ: adj(A) = det(U) det(V) V diag(c) Uᵀ, where c_i is the
    product of the singular values other than s_i.
    """
    n = np.shape(a)[-1]
    det = np.linalg.det(a)
    scale = np.max(np.abs(a), axis=(-2, -1)) ** n
    if np.all(np.abs(det) > 1e-8 * scale):
        return np.expand_dims(det, (-2, -1)) * np.linalg.inv(a)
    u, s, vt = np.linalg.svd(a)
    others = np.prod(np.where(~np.eye(n, dtype=bool), s[..., None, :], 1.0), axis=-1)
    sign = np.linalg.det(u) * np.linalg.det(vt)
    return np.expand_dims(sign, (-2, -1)) * (_mT(vt) * others[..., None, :]) @ _mT(u)


def _det_da(g, ans, a):
    return np.expand_dims(np.asarray(g), (-2, -1)) * _mT(_adjugate(a))


def _slogdet_da(g, ans, a):
    g_logdet = g[1] if isinstance(g, (tuple, list)) else g
    if is_zero(g_logdet):
        return zero
    return np.expand_dims(g_logdet, (-2, -1)) * _mT(np.linalg.inv(a))


def _solve_db(g, ans, a, b):
    if np.ndim(b) == 1:
        return unbroadcast(np.linalg.solve(_mT(a), np.asarray(g)[..., None])[..., 0], b)
    return unbroadcast(np.linalg.solve(_mT(a), g), b)


def _solve_da(g, ans, a, b):
    gb = np.linalg.solve(_mT(a), np.asarray(g)[..., None] if np.ndim(b) == 1 else g)
    x = np.asarray(ans)[..., None] if np.ndim(b) == 1 else ans
    return unbroadcast(-gb @ _mT(x), a)


def _power_grad(g, a, n):
    """sum over k of (aᵀ)^k g (aᵀ)^(n-1-k): the gradient of a^n for n >= 0."""
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1], dtype=np.result_type(a, g)), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    total = np.zeros(np.shape(a), dtype=np.result_type(a, g))
    for k in range(n):
        total = total + _mT(powers[k]) @ g @ _mT(powers[n - 1 - k])
    return total


def _matrix_power_da(g, ans, a, n):
    if n >= 0:
        return _power_grad(g, a, n)
    inverse = np.linalg.inv(a)
    return -_mT(inverse) @ _power_grad(g, inverse, -n) @ _mT(inverse)


def _fold_onto_triangle(sym, lower=True, hermitian=False):
    """A gradient w.r.t. a symmetric (``hermitian``: Hermitian) matrix, moved onto the one triangle that is read."""
    both = sym + (_mH(sym) if hermitian else _mT(sym))
    diagonal = np.eye(np.shape(sym)[-1], dtype=sym.dtype) * sym
    return (np.tril(both, -1) if lower else np.triu(both, 1)) + diagonal


def _cholesky_da(g, ans, a, /, *, upper=False):
    """Φ(Lᵀ Ḡ) conjugated by L⁻¹ (Murray 2016), folded onto the triangle that was read."""
    low = _mT(ans) if upper else ans
    g_low = _mT(g) if upper else g
    inner = _mT(low) @ g_low
    phi = np.tril(inner) - 0.5 * np.eye(np.shape(inner)[-1], dtype=inner.dtype) * inner
    inv_low = np.linalg.inv(low)
    sym = _mT(inv_low) @ phi @ inv_low
    return _fold_onto_triangle(0.5 * (sym + _mT(sym)), lower=not upper)


def _repeated(w):
    """Off-diagonal pairs of eigenvalues equal to rounding (gaps that F = 1 / gap cannot divide by)."""
    n = np.shape(w)[-1]
    scale = np.max(np.abs(w), axis=-1, keepdims=True)[..., None]
    gaps = np.expand_dims(w, -2) - np.expand_dims(w, -1)
    off = ~np.eye(n, dtype=bool)
    return gaps, off, off & (np.abs(gaps) <= 8 * n * np.finfo(np.result_type(w, 1.0)).eps * scale)


def _check_unmixed(projected, repeated, w, complex_values):
    """Where eigenvalues i and j repeat, the pair contributes F_ij (M_ij - M_ji) to the symmetric gradient
    (M = Vᴴ V̄): for a loss that does not care which basis of their eigenspace NumPy picked (it reads a simple
    eigenvalue's eigenvector only, or the eigenspace as a whole), M_ij = M_ji and the pair contributes
    nothing, which is the gradient's limit. Otherwise the loss depends on a basis that is not unique:
    refused. For complex values, both M_ij and M_ji must vanish (their phases are not unique either)."""
    swapped = np.swapaxes(projected, -1, -2)
    mixed = np.abs(projected) + np.abs(swapped) if complex_values else np.abs(projected - swapped)
    n = np.shape(w)[-1]
    scale = np.max(np.abs(projected), axis=(-2, -1), keepdims=True)
    tolerance = 64 * n * np.finfo(np.result_type(w, 1.0)).eps * np.where(scale > 0, scale, 1.0)
    if np.any(repeated & (mixed > tolerance)):
        raise InvalidArgument(
            f"np.linalg.eigh: the loss depends on which eigenvectors NumPy chose for a repeated eigenvalue "
            f"(eigenvalues {np.round(w, 12).tolist()}), and those are not unique, so the gradient is undefined. "
            f"A loss that reads only the eigenvectors of simple eigenvalues, or the eigenspace as a whole "
            f"(a projector V[:, k] @ V[:, k].T summed over the repeated ones), or the eigenvalues alone "
            f"(np.linalg.eigvalsh), is differentiable there")


def _eigh_da(g, ans, a, UPLO="L"):
    """V (diag(w̄) + F ∘ Vᴴ V̄) Vᴴ with F_ij = 1 / (w_j - w_i), V̄ = conj(ḡV), conjugated for complex values
    (docs/complex.md), which also add the phase term of module _phases to V̄.

    Through the eigenvectors of a repeated eigenvalue, the gradient is defined
    only for a loss that does not depend on which basis of their eigenspace
    NumPy picked (:func:`_check_unmixed`); any other is refused with
    InvalidArgument rather than returned as inf or NaN. Through the
    eigenvalues, and the eigenvectors of simple eigenvalues, it is defined.
    """
    w, v = ans
    g_w, g_v = g if isinstance(g, (tuple, list)) else (g, zero)
    complex_values = np.iscomplexobj(v)
    transpose = _mH if complex_values else _mT  # a real matrix's complex cotangents follow the real formula
    dtype = np.result_type(a, *(x for x in (g_w, g_v) if not is_zero(x)))
    inner = np.zeros(np.shape(a), dtype=dtype)
    if not is_zero(g_w):
        g_w = np.real(g_w) if complex_values else g_w  # the eigenvalues are real
        inner = inner + np.expand_dims(g_w, -1) * np.eye(np.shape(a)[-1], dtype=dtype)
    if not is_zero(g_v):
        gaps, off, repeated = _repeated(w)
        if complex_values:
            g_v = np.conj(g_v)
            r, row = _eigh_phase(v, UPLO)
            g_v = _phases.phase_cotangent(g_v, r, row, _phases.diagonal_imag(v, g_v))
        projected = transpose(v) @ g_v
        if np.any(repeated):
            _check_unmixed(projected, repeated, w, complex_values)
        f = np.where(off & ~repeated, 1.0 / np.where(off & ~repeated, gaps, 1.0), 0.0).astype(dtype, copy=False)
        inner = inner + f * projected
    full = v @ inner @ transpose(v)
    folded = _fold_onto_triangle(0.5 * (full + transpose(full)), UPLO.upper() == "L", complex_values)
    return np.conj(folded) if complex_values else folded


def _eigh_phase(v, UPLO):
    """``(r, row)``: the row of V that NumPy keeps real (module _phases), and its values."""
    first, last = (0, -1) if UPLO.upper() == "L" else (-1, 0)
    i, row = _phases.real_row([(v, first), (v, last)], "np.linalg.eigh")
    return (first, last)[i], row


def _eigvalsh_da(g, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return _eigh_da((g, zero), (ans, v), a, UPLO)


def singular_values_vjp(g, u, vh):
    """U diag(g) Vh: the gradient of the singular values, from the reduced factors; for complex values its
    conjugate, with Re(g) (the singular values are real; docs/complex.md)."""
    if np.iscomplexobj(u):
        return np.conj((u * np.expand_dims(np.real(g), -2)) @ vh)
    return (u * np.expand_dims(g, -2)) @ vh


def singular_values_jvp(t, u, vh):
    """diag(Uᵀ t V), from the reduced factors; for complex values Re(diag(Uᴴ t V))."""
    if np.iscomplexobj(u):
        return np.real(np.einsum("...ji,...jk,...ik->...i", np.conj(u), t, np.conj(vh)))
    return np.einsum("...ji,...jk,...ik->...i", u, t, vh)


def _svdvals_dx(g, ans, x, /):
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    return singular_values_vjp(g, u, vh)


defvjp(np.linalg.inv, _inv_da)
defvjp(np.linalg.det, _det_da)
defvjp(np.linalg.slogdet, _slogdet_da)
defvjp(np.linalg.solve, _solve_da, _solve_db)
defvjp(np.linalg.matrix_power, _matrix_power_da, None)
defvjp(np.linalg.cholesky, _cholesky_da)
defvjp(np.linalg.eigh, _eigh_da)
defvjp(np.linalg.eigvalsh, _eigvalsh_da)
if hasattr(np.linalg, "svdvals"):
    defvjp(np.linalg.svdvals, _svdvals_dx)


# ---- tangents ------------------------------------------------------------------
def _read_triangle(t, lower=True, hermitian=False):
    """The symmetric (``hermitian``: Hermitian) matrix a function that reads one triangle of its input sees, for
    input ``t``; NumPy reads only the real part of a complex matrix's diagonal."""
    tri = np.tril(t) if lower else np.triu(t)
    strict = np.tril(t, -1) if lower else np.triu(t, 1)
    if not hermitian:
        return tri + _mT(strict)
    seen = tri + _mH(strict)
    return 0.5 * (seen + _mH(seen))


def _solve_jvp_a(t, ans, a, b):
    x = np.asarray(ans)[..., None] if np.ndim(b) == 1 else ans
    dx = -np.linalg.solve(a, t @ x)
    return dx[..., 0] if np.ndim(b) == 1 else dx


def _solve_jvp_b(t, ans, a, b):
    if np.ndim(b) == 1:
        return np.linalg.solve(a, np.asarray(t)[..., None])[..., 0]
    return np.linalg.solve(a, t)


def _power_jvp(t, a, n):
    """sum over k of a^k t a^(n-1-k), n >= 0."""
    powers = [np.broadcast_to(np.eye(np.shape(a)[-1], dtype=np.result_type(a, t)), np.shape(a))]
    for _ in range(n - 1):
        powers.append(powers[-1] @ a)
    return sum((powers[k] @ t @ powers[n - 1 - k] for k in range(n)), np.zeros(np.shape(a), np.result_type(a, t)))


def _matrix_power_jvp(t, ans, a, n):
    if n >= 0:
        return _power_jvp(t, a, n)
    inverse = np.linalg.inv(a)
    return _power_jvp(-inverse @ t @ inverse, inverse, -n)


def _cholesky_jvp(t, ans, a, /, *, upper=False):
    """dL = L Φ(L⁻¹ dA L⁻ᵀ), Φ keeping the lower triangle with a halved diagonal."""
    low = _mT(ans) if upper else ans
    inv_low = np.linalg.inv(low)
    inner = inv_low @ _read_triangle(t, lower=not upper) @ _mT(inv_low)
    phi = np.tril(inner) - 0.5 * np.eye(np.shape(inner)[-1], dtype=inner.dtype) * inner
    d_low = low @ phi
    return _mT(d_low) if upper else d_low


def _projected(t, v, UPLO):
    """Vᴴ dA V for the matrix eigh reads (Vᵀ dA V for a real V, complex-linear in a complex dA)."""
    hermitian = np.iscomplexobj(v)
    return (_mH(v) if hermitian else _mT(v)) @ _read_triangle(t, UPLO.upper() == "L", hermitian) @ v


def _eigh_parts(t, w, v, UPLO):
    """Vᴴ dA V for the matrix eigh reads, and F with F_ij = 1 / (w_j - w_i) off the diagonal
    (NaN where eigenvalues repeat: the eigenvectors' tangent is undefined there)."""
    inner = _projected(t, v, UPLO)
    gaps, off, repeated = _repeated(w)
    return inner, np.where(repeated, np.nan, np.where(off, 1.0 / np.where(off & ~repeated, gaps, 1.0), 0.0))


def _eigenvalue_tangent(inner, w, hermitian):
    """The eigenvalues' directional derivative, from Vᴴ dA V (real on the diagonal where ``hermitian``, V complex):
    its diagonal where they are simple; for
    an eigenvalue repeated k times, the k eigenvalues of its k x k block (sorted), whatever basis of
    its eigenspace V holds: the eigenvalues are directionally differentiable everywhere."""
    diagonal = np.diagonal(inner, axis1=-2, axis2=-1)
    diagonal = np.real(diagonal) if hermitian else diagonal
    _, _, repeated = _repeated(w)
    if not np.any(repeated):
        return diagonal
    out = np.array(diagonal)
    for index in np.ndindex(np.shape(w)[:-1]):
        n, start = np.shape(w)[-1], 0
        while start < n:
            end = start + 1
            while end < n and repeated[index + (end - 1, end)]:
                end += 1
            if end - start > 1:
                out[index + (slice(start, end),)] = np.linalg.eigvalsh(inner[index + (slice(start, end),) * 2])
            start = end
    return out


def _eigh_jvp(t, ans, a, UPLO="L"):
    w, v = ans
    inner, f = _eigh_parts(t, w, v, UPLO)
    d_v = v @ (f * inner)
    if np.iscomplexobj(v):
        r, row = _eigh_phase(v, UPLO)
        d_v = _phases.rotated(d_v, v, _phases.phase_rates(d_v, r, row))
    return _eigenvalue_tangent(inner, w, np.iscomplexobj(v)), d_v


def _eigvalsh_jvp(t, ans, a, UPLO="L"):
    v = np.linalg.eigh(a, UPLO)[1]
    return _eigenvalue_tangent(_projected(t, v, UPLO), ans, np.iscomplexobj(v))


def _svdvals_jvp(t, ans, x, /):
    u, _, vh = np.linalg.svd(x, full_matrices=False)
    return singular_values_jvp(t, u, vh)


defjvp(np.linalg.inv, lambda t, ans, a: -ans @ t @ ans)
defjvp(np.linalg.det, lambda t, ans, a: np.trace(_adjugate(a) @ t, axis1=-2, axis2=-1))
defjvp(np.linalg.slogdet, lambda t, ans, a: (zero, np.trace(np.linalg.solve(a, t), axis1=-2, axis2=-1)))
defjvp(np.linalg.solve, _solve_jvp_a, _solve_jvp_b)
defjvp(np.linalg.matrix_power, _matrix_power_jvp, None)
defjvp(np.linalg.cholesky, _cholesky_jvp)
defjvp(np.linalg.eigh, _eigh_jvp)
defjvp(np.linalg.eigvalsh, _eigvalsh_jvp)
if hasattr(np.linalg, "svdvals"):
    defjvp(np.linalg.svdvals, _svdvals_jvp)

note("the gradient lives on the triangle NumPy reads (lower by default)",
     lookup(np.linalg.cholesky), lookup(np.linalg.eigh), lookup(np.linalg.eigvalsh))
note("the cotangent is a tuple (g_sign, g_logdet)", lookup(np.linalg.slogdet))
note("exact at singular matrices (the adjugate; no inverse is taken)", lookup(np.linalg.det))
note("the gradient lives on the triangle NumPy reads (lower by default); at a repeated eigenvalue a cotangent "
     "that depends on which of its eigenvectors NumPy chose raises "
     "InvalidArgument (they are not unique), and their tangent is NaN", lookup(np.linalg.eigh))
note("the gradient lives on the triangle NumPy reads (lower by default); at a repeated eigenvalue the "
     "tangent is the directional derivative "
     "(the eigenvalues of the projected block)", lookup(np.linalg.eigvalsh))
note("integer n, negative n through the inverse", lookup(np.linalg.matrix_power))
