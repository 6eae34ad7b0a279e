"""Orthogonal factorizations: svd and qr.

Takes np.linalg.svd and np.linalg.qr and gives their vjps and jvps, which work
on stacks of matrices (the last two axes), reverse and forward mode side by
side. The pseudo-inverse, least squares, cond and the tensor solves are in
least_squares.py. The results that are not unique are refused rather than
differentiated into garbage:

* svd: the singular vectors of a repeated singular value (or, for a
  rectangular or complex matrix, of a zero one) are not unique; a cotangent on them, or
  any tangent of the factorization there, raises InvalidArgument. The extra
  columns of ``full_matrices=True`` (U beyond min(m, n) columns, Vh beyond
  min(m, n) rows) are whatever LAPACK completes the basis with: a cotangent
  on them is refused, and their tangent is NaN. The singular values alone
  are differentiable wherever they are distinct. Complex matrices: the
  formulas take conjugate transposes, and the vectors' phases follow NumPy's
  normalization (module _phases).
* qr: R must have full rank (a zero on its diagonal is refused); the extra
  columns of Q in ``mode="complete"`` are treated like svd's.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, defvjp, lookup
from ..errors import InvalidArgument
from . import _phases
from .decompositions import singular_values_jvp, singular_values_vjp
from ._util import is_zero, note, zero



def _mT(a):
    return np.swapaxes(a, -1, -2)


def _eye_like(n, like):
    return np.eye(n, dtype=np.result_type(like, 1.0))


# ---- svd ------------------------------------------------------------------------------------------
def _gap_factors(s, name):
    """F with F_ij = 1 / (s_j² - s_i²) off the diagonal, 0 on it; refused where two singular values tie."""
    k = np.shape(s)[-1]
    gaps = np.expand_dims(s, -2) ** 2 - np.expand_dims(s, -1) ** 2
    off = ~np.eye(k, dtype=bool)
    scale = np.max(np.abs(s), axis=-1, keepdims=True)[..., None] ** 2
    tie = off & (np.abs(gaps) <= 8 * k * np.finfo(np.result_type(s, 1.0)).eps * np.maximum(scale, 1e-300))
    if np.any(tie):
        raise InvalidArgument(
            f"np.linalg.{name}: the derivative of the singular vectors is undefined where singular values "
            f"repeat (singular values {np.round(s, 12).tolist()}): they are not unique there. Functions of the "
            f"singular values alone (np.linalg.svd(a, compute_uv=False), np.linalg.svdvals) are differentiable")
    return np.where(off, 1.0 / np.where(off, gaps, 1.0), 0.0)


def _check_rank(s, m, n, name, complex_values=False):
    """For a rectangular matrix, U's or V's component outside the range divides by each singular value;
    so, for complex values, does the phase of u_i relative to v_i (for any shape)."""
    if (m != n or complex_values) and np.any(
            s <= np.finfo(np.result_type(s, 1.0)).eps * max(m, n) * np.max(s, initial=0.0)):
        raise InvalidArgument(
            f"np.linalg.{name}: the derivative of the singular vectors of a "
            f"{'complex' if complex_values else 'rectangular'} matrix is undefined at a "
            f"zero singular value (singular values {np.round(s, 12).tolist()})")


def _mH(a):
    """The conjugate transpose of each matrix."""
    return np.conj(_mT(a))


def _transpose_for(factor):
    """The transpose the svd formulas take: the conjugate transpose for a complex matrix's factors; the plain
    transpose for a real one's (so that complex cotangents and tangents of a real matrix follow the real formula,
    complex-linearly)."""
    return _mH if np.iscomplexobj(factor) else _mT


def _refuse_completion(g, k, axis, what):
    """A cotangent on the columns (rows) LAPACK chose to complete an orthonormal basis: not differentiable."""
    if is_zero(g):
        return
    extra = np.take(g, np.arange(k, np.shape(g)[axis]), axis=axis)
    if np.any(extra != 0):
        raise InvalidArgument(
            f"{what}: the columns that complete the orthonormal basis (full_matrices=True or mode='complete' "
            f"for a rectangular matrix) are not unique, so they have no derivative. Use only the first "
            f"min(m, n) of them, or pass full_matrices=False (mode='reduced')")


def _svd_setup(a, compute_uv, hermitian, kind):
    """``(m, n, k, factors)`` of an svd call: ``factors`` are ``(U, Vh)``, reduced, when only the singular
    values were asked for (``compute_uv=False``), else None; ``hermitian=True`` is refused."""
    if hermitian:
        raise InvalidArgument(f"np.linalg.svd(..., hermitian=True) has no {kind} rule: call it without "
                              f"hermitian=True, or use np.linalg.eigh")
    m, n = np.shape(a)[-2:]
    if compute_uv:
        return m, n, min(m, n), None
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    return m, n, min(m, n), (u, vh)


def _svd_phase(u, v, m, n):
    """``(on_v, row)``: whether NumPy keeps V's first row real (else U's; module _phases), and its values."""
    candidates = [(v, 0), (u, 0)] if m >= n else [(u, 0), (v, 0)]
    i, row = _phases.real_row(candidates, "np.linalg.svd")
    return (i == 0) == (m >= n), row


def _svd_vjp(g, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    """U (diag(ḡs) + (J + Jᴴ) S + S (K + Kᴴ)) Vᴴ + (I - UUᴴ) ĝU S⁻¹ Vᴴ + U S⁻¹ ĝVᴴ (I - VVᴴ),
    J = F ∘ Uᴴ ĝU, K = F ∘ Vᴴ ĝV, F_ij = 1 / (s_j² - s_i²), with ĝU = conj(ḡU) and ĝV = ḡVhᵀ; for complex
    values, plus the phases' terms, and conjugated (docs/complex.md: the transpose of the derivative)."""
    m, n, k, factors = _svd_setup(a, compute_uv, hermitian, "gradient")
    if factors is not None:  # compute_uv=False: the singular values alone
        return singular_values_vjp(g, *factors)
    u, s, vh = ans
    g_u, g_s, g_vh = g
    _refuse_completion(g_u, k, -1, "np.linalg.svd")
    _refuse_completion(g_vh, k, -2, "np.linalg.svd")
    transpose = _transpose_for(u)
    u, v = u[..., :, :k], transpose(vh[..., :k, :])
    complex_values = np.iscomplexobj(u)
    inner = np.zeros(np.shape(s) + (k,), dtype=np.result_type(a, 1.0))
    if not is_zero(g_s):
        inner = inner + np.expand_dims(np.real(g_s) if complex_values else g_s, -1) * _eye_like(k, a)
    out = zero
    if not (is_zero(g_u) and is_zero(g_vh)):
        f = _gap_factors(s, "svd")
        _check_rank(s, m, n, "svd", complex_values)
        s_row = np.expand_dims(s, -2)
        g_u = zero if is_zero(g_u) else np.conj(g_u[..., :, :k]) if complex_values else g_u[..., :, :k]
        g_v = zero if is_zero(g_vh) else _mT(g_vh[..., :k, :])
        if complex_values:
            g_u, g_v, phase = _svd_phase_cotangents(g_u, g_v, u, v, s, m, n)
            inner = inner + phase
        if not is_zero(g_u):
            j = f * (transpose(u) @ g_u)
            inner = inner + (j + transpose(j)) * s_row
            if m > k:
                out = (g_u - u @ (transpose(u) @ g_u)) / s_row @ transpose(v)
        if not is_zero(g_v):
            kk = f * (transpose(v) @ g_v)
            inner = inner + _mT(s_row) * (kk + transpose(kk))
            if n > k:
                out = out + u @ transpose((g_v - v @ (transpose(v) @ g_v)) / s_row)
    total = (u @ inner @ transpose(v)) + out
    return np.conj(total) if complex_values else total


def _svd_phase_cotangents(g_u, g_v, u, v, s, m, n):
    """The transpose of :func:`_svd_phase_tangents`: ``(ĝU, ĝV, D)``, the cotangents with the phase term of the
    factor NumPy normalizes added, and the diagonal D its relative phase Im(dP_ii) / s_i contributes."""
    g_u = np.zeros(np.shape(u), dtype=u.dtype) if is_zero(g_u) else g_u
    g_v = np.zeros(np.shape(v), dtype=v.dtype) if is_zero(g_v) else g_v
    on_u, on_v = _phases.diagonal_imag(u, g_u), _phases.diagonal_imag(v, g_v)
    on_v_row, row = _svd_phase(u, v, m, n)
    if on_v_row:  # φ fixed by V's row, θ = φ + Im(dP_ii) / s_i
        g_v = _phases.phase_cotangent(g_v, 0, row, on_u + on_v)
        relative = 1j * on_u / s
    else:  # θ fixed by U's row, φ = θ - Im(dP_ii) / s_i
        g_u = _phases.phase_cotangent(g_u, 0, row, on_u + on_v)
        relative = -1j * on_v / s
    return g_u, g_v, np.expand_dims(relative, -1) * np.eye(np.shape(s)[-1])


def _svd_phase_tangents(d_u, d_v, u, v, p, s, m, n):
    """The phase rotations θ (of u_i) and φ (of v_i) that keep NumPy's normalization: θ_i - φ_i =
    Im(dP_ii) / s_i (so that dA = dU S Vᴴ + U dS Vᴴ + U S dVᴴ), one of them fixed by the real row."""
    on_v_row, row = _svd_phase(u, v, m, n)
    relative = np.imag(np.diagonal(p, axis1=-2, axis2=-1)) / s
    if on_v_row:
        phi = _phases.phase_rates(d_v, 0, row)
        theta = phi + relative
    else:
        theta = _phases.phase_rates(d_u, 0, row)
        phi = theta - relative
    return _phases.rotated(d_u, u, theta), _phases.rotated(d_v, v, phi)


def _svd_jvp(t, ans, a, full_matrices=True, compute_uv=True, hermitian=False):
    m, n, k, factors = _svd_setup(a, compute_uv, hermitian, "tangent")
    if factors is not None:  # compute_uv=False: the singular values alone
        return singular_values_jvp(t, *factors)
    u_all, s, vh_all = ans
    transpose = _transpose_for(u_all)
    u, v = u_all[..., :, :k], transpose(vh_all[..., :k, :])
    complex_values = np.iscomplexobj(u)
    f = _gap_factors(s, "svd")
    _check_rank(s, m, n, "svd", complex_values)
    p = transpose(u) @ t @ v
    d_s = np.diagonal(p, axis1=-2, axis2=-1)
    s_row = np.expand_dims(s, -2)
    ps = p * s_row
    sp = _mT(s_row) * p
    d_u = u @ (f * (ps + transpose(ps)))
    d_v = v @ (f * (sp + transpose(sp)))
    if m > k:
        tv = t @ v
        d_u = d_u + (tv - u @ (transpose(u) @ tv)) / s_row
    if n > k:
        tu = transpose(t) @ u
        d_v = d_v + (tu - v @ (transpose(v) @ tu)) / s_row
    if complex_values:
        d_s = np.real(d_s)
        d_u, d_v = _svd_phase_tangents(d_u, d_v, u, v, p, s, m, n)
    if full_matrices and m != n:  # the completing columns are LAPACK's choice: no tangent
        d_u = np.concatenate([d_u, np.full(np.shape(u_all)[:-1] + (m - k,), np.nan)], axis=-1)
        d_v = np.concatenate([d_v, np.full(np.shape(vh_all)[:-2] + (n, n - k), np.nan)], axis=-1)
    return d_u, d_s, transpose(d_v)


defvjp(np.linalg.svd, _svd_vjp)
defjvp(np.linalg.svd, _svd_jvp)


# ---- qr -------------------------------------------------------------------------------------------
def _check_full_rank(r):
    diagonal = np.abs(np.diagonal(r, axis1=-2, axis2=-1))
    if np.any(diagonal <= np.finfo(np.result_type(r, 1.0)).eps * max(np.shape(r)[-2:]) *
              np.max(np.abs(r), initial=0.0)):
        raise InvalidArgument("np.linalg.qr: the derivative of Q and R is undefined where the matrix does not have "
                              "full rank (a zero on R's diagonal): Q is not unique there")


def _lower_to_symmetric(m):
    """The symmetric matrix with ``m``'s lower triangle."""
    return np.tril(m) + _mT(np.tril(m, -1))


def _qr_square_vjp(g_q, g_r, q, r):
    """The gradient of X = Q R, X with at least as many rows as columns (Q: m x n, R: n x n)."""
    m = r @ _mT(g_r) - _mT(g_q) @ q
    b = g_q + q @ _lower_to_symmetric(m)
    return _mT(np.linalg.solve(r, _mT(b)))  # b R⁻ᵀ


def _qr_parts(ans, a, mode):
    if mode == "r":
        return None, ans
    if mode not in ("reduced", "complete"):
        raise InvalidArgument(f"np.linalg.qr(..., mode={mode!r}) has no gradient rule: use mode='reduced'")
    return ans[0], ans[1]


def _qr_vjp(g, ans, a, mode="reduced"):
    """m >= n: (ḡQ + Q copyltu(R ḡRᵀ - ḡQᵀ Q)) R⁻ᵀ; m < n: the square part X = Q R₁, then Y = Q R₂."""
    q, r = _qr_parts(ans, a, mode)
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    if q is None:
        q = np.linalg.qr(a)[0]
        g_q, g_r = zero, g
    else:
        g_q, g_r = g
        _refuse_completion(g_q, k, -1, "np.linalg.qr")
        q = q[..., :, :k]
    r = r[..., :k, :]
    _check_full_rank(r[..., :, :k])
    g_q = np.zeros(np.shape(q), np.result_type(a, 1.0)) if is_zero(g_q) else g_q[..., :, :k]
    g_r = np.zeros(np.shape(r), np.result_type(a, 1.0)) if is_zero(g_r) else g_r[..., :k, :]
    if m >= n:
        return _qr_square_vjp(g_q, g_r, q, r)
    y, g_r2 = a[..., :, m:], g_r[..., :, m:]
    g_x = _qr_square_vjp(g_q + y @ _mT(g_r2), g_r[..., :, :m], q, r[..., :, :m])
    return np.concatenate([g_x, q @ g_r2], axis=-1)


def _qr_square_jvp(t, q, r):
    """dQ, dR of X = Q R (m >= n) for dX = t: C = Qᵀ t R⁻¹, Ω = tril(C, -1) - tril(C, -1)ᵀ."""
    t_rinv = _mT(np.linalg.solve(_mT(r), _mT(t)))  # t R⁻¹
    c = _mT(q) @ t_rinv
    omega = np.tril(c, -1) - _mT(np.tril(c, -1))
    return q @ (omega - c) + t_rinv, (c - omega) @ r


def _qr_jvp(t, ans, a, mode="reduced"):
    q_all, r_all = _qr_parts(ans, a, mode)
    if q_all is None:
        q_all, r_all = np.linalg.qr(a)
    m, n = np.shape(a)[-2:]
    k = min(m, n)
    q, r = q_all[..., :, :k], r_all[..., :k, :]
    _check_full_rank(r[..., :, :k])
    if m >= n:
        d_q, d_r = _qr_square_jvp(t, q, r)
    else:
        d_q, d_r1 = _qr_square_jvp(t[..., :, :m], q, r[..., :, :m])
        d_r = np.concatenate([d_r1, _mT(d_q) @ a[..., :, m:] + _mT(q) @ t[..., :, m:]], axis=-1)
    if mode == "r":
        return d_r
    if mode == "complete" and m > n:
        d_q = np.concatenate([d_q, np.full(np.shape(q)[:-1] + (m - n,), np.nan)], axis=-1)
        d_r = np.concatenate([d_r, np.zeros(np.shape(d_r)[:-2] + (m - n, n))], axis=-2)
    return d_q, d_r


defvjp(np.linalg.qr, _qr_vjp)
defjvp(np.linalg.qr, _qr_jvp)


note("a cotangent on the singular vectors at a repeated singular value (or a zero one of a rectangular matrix) "
     "raises InvalidArgument; full_matrices=True: the completing columns are refused (their tangent is NaN); "
     "compute_uv=False as svdvals; hermitian=True refused; complex matrices: the vectors' phases follow NumPy's "
     "(one real row)", lookup(np.linalg.svd))
note("modes 'reduced', 'complete' (the completing columns of Q refused) and 'r'; wide matrices too; refused "
     "where R is singular", lookup(np.linalg.qr))
