"""The pseudo-inverse, least squares, condition number and tensor solves: pinv, lstsq, cond, tensorsolve, tensorinv.

Takes those np.linalg functions and gives their vjps and jvps, on stacks of
matrices (the last two axes), reverse and forward mode side by side. pinv and
lstsq take the derivative of the pseudo-inverse at the rank that pinv's cutoff
gives, i.e. along perturbations that keep the rank (where the rank may change,
the pseudo-inverse is not continuous). cond of the 2-norm goes through the
largest and smallest singular values, and is refused where one of them
repeats; cond of another norm goes through the rules of matrix_norm and inv.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, defvjp, lookup
from ..errors import InvalidArgument
from .factorizations import _eye_like, _mT
from ._util import is_zero, note, unbroadcast, zero


# ---- pinv and lstsq -------------------------------------------------------------------------------
def _pinv_grad(g, a, p):
    """-A⁺ᵀ Ḡ A⁺ᵀ + (I - A A⁺) Ḡᵀ A⁺ A⁺ᵀ + A⁺ᵀ A⁺ Ḡᵀ (I - A⁺ A): the fixed-rank derivative (Golub-Pereyra)."""
    m, n = np.shape(a)[-2:]
    p_t = _mT(p)
    g_t = _mT(g)
    left = _eye_like(m, a) - a @ p
    right = _eye_like(n, a) - p @ a
    return -p_t @ g @ p_t + left @ g_t @ p @ p_t + p_t @ p @ g_t @ right


def _pinv_tangent(t, a, p):
    """-A⁺ dA A⁺ + A⁺ A⁺ᵀ dAᵀ (I - A A⁺) + (I - A⁺ A) dAᵀ A⁺ᵀ A⁺."""
    m, n = np.shape(a)[-2:]
    t_t = _mT(t)
    return (-p @ t @ p + p @ _mT(p) @ t_t @ (_eye_like(m, a) - a @ p)
            + (_eye_like(n, a) - p @ a) @ t_t @ _mT(p) @ p)


def _pinv_da(g, ans, a, *args, **kwargs):
    return unbroadcast(_pinv_grad(g, a, ans), a)


def _pinv_jvp(t, ans, a, *args, **kwargs):
    return _pinv_tangent(t, a, ans)


defvjp(np.linalg.pinv, _pinv_da)
defjvp(np.linalg.pinv, _pinv_jvp)


def _column(b):
    return np.asarray(b)[..., None] if np.ndim(b) == 1 else b


def _lstsq_pieces(g, ans):
    """The cotangents of the solution, the residuals and the singular values (rank has none)."""
    if isinstance(g, (tuple, list)):
        return g[0], g[1], g[3]
    return g, zero, zero


def _lstsq_da(g, ans, a, b, rcond=None):
    """x = A⁺ b: through A⁺ (ḡ_x bᵀ); residuals ‖b - A x‖² (x optimal): -2 (b - A x) ḡ xᵀ; s: svdvals'."""
    g_x, g_res, g_s = _lstsq_pieces(g, ans)
    x = _column(ans[0])
    total = zero
    if not is_zero(g_x):
        total = _pinv_grad(_column(g_x) @ _mT(_column(b)), a, np.linalg.pinv(a, rcond=_cutoff(a, rcond)))
    if not is_zero(g_res) and np.size(ans[1]):
        residual = _column(b) - a @ x
        total = total - 2.0 * (residual * g_res) @ _mT(x)
    if not is_zero(g_s):
        u, _, vh = np.linalg.svd(a, full_matrices=False)
        total = total + (u * g_s) @ vh
    return total


def _lstsq_db(g, ans, a, b, rcond=None):
    g_x, g_res, _ = _lstsq_pieces(g, ans)
    total = zero
    if not is_zero(g_x):
        total = _mT(np.linalg.pinv(a, rcond=_cutoff(a, rcond))) @ _column(g_x)
    if not is_zero(g_res) and np.size(ans[1]):
        total = total + 2.0 * (_column(b) - a @ _column(ans[0])) * g_res
    return np.reshape(total, np.shape(b)) if total is not zero else zero


def _cutoff(a, rcond):
    """pinv's relative cutoff equal to lstsq's (machine precision times the larger dimension by default)."""
    if rcond is None or rcond == -1:
        return np.finfo(np.result_type(a, 1.0)).eps * max(np.shape(a)[-2:])
    return rcond


def _lstsq_jvp_a(t, ans, a, b, rcond=None):
    p = np.linalg.pinv(a, rcond=_cutoff(a, rcond))
    x = _column(ans[0])
    d_x = _pinv_tangent(t, a, p) @ _column(b)
    d_res = zero
    if np.size(ans[1]):
        d_res = -2.0 * np.sum((_column(b) - a @ x) * (t @ x), axis=0)
    u, _, vh = np.linalg.svd(a, full_matrices=False)
    d_s = np.einsum("ji,jk,ik->i", u, t, vh)
    return np.reshape(d_x, np.shape(ans[0])), d_res, zero, d_s


def _lstsq_jvp_b(t, ans, a, b, rcond=None):
    p = np.linalg.pinv(a, rcond=_cutoff(a, rcond))
    d_x = p @ _column(t)
    d_res = zero
    if np.size(ans[1]):
        d_res = 2.0 * np.sum((_column(b) - a @ _column(ans[0])) * _column(t), axis=0)
    return np.reshape(d_x, np.shape(ans[0])), d_res, zero, zero


defvjp(np.linalg.lstsq, _lstsq_da, _lstsq_db)
defjvp(np.linalg.lstsq, _lstsq_jvp_a, _lstsq_jvp_b)


# ---- cond, tensorsolve, tensorinv -----------------------------------------------------------------
def _spectral_cond_factors(s, p):
    """d cond / d s_max and d cond / d s_min, for cond = s_max / s_min (p None or 2) or s_min / s_max (p -2);
    refused where the largest or the smallest singular value repeats (cond has a kink there)."""
    k = np.shape(s)[-1]
    if k > 1:
        tolerance = 8 * k * np.finfo(np.result_type(s, 1.0)).eps * np.max(s, axis=-1)
        if np.any(s[..., 0] - s[..., 1] <= tolerance) or np.any(s[..., -2] - s[..., -1] <= tolerance):
            raise InvalidArgument(
                f"np.linalg.cond: the derivative is undefined where the largest or the smallest singular value "
                f"repeats (singular values {np.round(s, 12).tolist()})")
    big, small = s[..., 0], s[..., -1]
    if p == -2:
        return -small / big ** 2, 1.0 / big
    return 1.0 / small, -big / small ** 2


def _ends(k, d_big, d_small):
    """A vector over the k singular values with d_big on the first and d_small on the last."""
    eye = np.eye(k, dtype=np.result_type(d_big, d_small))
    return np.expand_dims(d_big, -1) * eye[0] + np.expand_dims(d_small, -1) * eye[-1]


def _cond_x(g, ans, x, p=None):
    """2-norm conditions through the largest and smallest singular values; the others as
    norm(x, p) norm(inv(x), p), through those rules."""
    if p in (None, 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        d_big, d_small = _spectral_cond_factors(s, p)
        return (u * np.expand_dims(_ends(np.shape(s)[-1], g * d_big, g * d_small), -2)) @ vh
    norm, inverse = lookup(np.linalg.matrix_norm), lookup(np.linalg.inv)
    x_inv = np.linalg.inv(x)
    n_x, n_inv = np.linalg.matrix_norm(x, ord=p), np.linalg.matrix_norm(x_inv, ord=p)
    through_inverse = inverse.vjps[0](norm.vjps[0](g * n_x, n_inv, x_inv, ord=p), x_inv, x)
    return norm.vjps[0](g * n_inv, n_x, x, ord=p) + through_inverse


def _cond_jvp(t, ans, x, p=None):
    if p in (None, 2, -2):
        u, s, vh = np.linalg.svd(x, full_matrices=False)
        d_big, d_small = _spectral_cond_factors(s, p)
        d_s = np.einsum("...ji,...jk,...ik->...i", u, t, vh)
        return d_big * d_s[..., 0] + d_small * d_s[..., -1]
    norm, inverse = lookup(np.linalg.matrix_norm), lookup(np.linalg.inv)
    x_inv = np.linalg.inv(x)
    n_x, n_inv = np.linalg.matrix_norm(x, ord=p), np.linalg.matrix_norm(x_inv, ord=p)
    d_inv = inverse.jvps[0](t, x_inv, x)
    return norm.jvps[0](t, n_x, x, ord=p) * n_inv + n_x * norm.jvps[0](d_inv, n_inv, x_inv, ord=p)


defvjp(np.linalg.cond, _cond_x)
defjvp(np.linalg.cond, _cond_jvp)


def _tensor_system(a, b, axes):
    """tensorsolve's matrix (a with ``axes`` moved last, flattened to b.size rows) and a's axis order."""
    a = np.asarray(a)
    order = list(range(a.ndim))
    if axes is not None:
        for k in axes:
            order.remove(k)
            order.insert(a.ndim, k)
    moved = np.transpose(a, order)
    return np.reshape(moved, (np.size(b), -1)), order, moved.shape


def _tensorsolve_da(g, ans, a, b, axes=None):
    matrix, order, moved_shape = _tensor_system(a, b, axes)
    g_b = np.linalg.solve(_mT(matrix), np.ravel(g))
    return np.transpose(np.reshape(-np.outer(g_b, np.ravel(ans)), moved_shape), np.argsort(order))


def _tensorsolve_db(g, ans, a, b, axes=None):
    matrix, _, _ = _tensor_system(a, b, axes)
    return np.reshape(np.linalg.solve(_mT(matrix), np.ravel(g)), np.shape(b))


def _tensorsolve_jvp_a(t, ans, a, b, axes=None):
    matrix, _, _ = _tensor_system(a, b, axes)
    d_matrix, _, _ = _tensor_system(t, b, axes)
    return np.reshape(-np.linalg.solve(matrix, d_matrix @ np.ravel(ans)), np.shape(ans))


def _tensorsolve_jvp_b(t, ans, a, b, axes=None):
    matrix, _, _ = _tensor_system(a, b, axes)
    return np.reshape(np.linalg.solve(matrix, np.ravel(np.broadcast_to(t, np.shape(b)))), np.shape(ans))


defvjp(np.linalg.tensorsolve, _tensorsolve_da, _tensorsolve_db)
defjvp(np.linalg.tensorsolve, _tensorsolve_jvp_a, _tensorsolve_jvp_b)


def _tensorinv_matrices(a, ans, ind):
    rows = int(np.prod(np.shape(a)[:ind]))
    return np.reshape(a, (rows, -1)), np.reshape(ans, (-1, rows))


def _tensorinv_da(g, ans, a, ind=2):
    _, inverse = _tensorinv_matrices(a, ans, ind)
    return np.reshape(-_mT(inverse) @ np.reshape(g, inverse.shape) @ _mT(inverse), np.shape(a))


def _tensorinv_jvp(t, ans, a, ind=2):
    _, inverse = _tensorinv_matrices(a, ans, ind)
    return np.reshape(-inverse @ np.reshape(t, (inverse.shape[1], -1)) @ inverse, np.shape(ans))


defvjp(np.linalg.tensorinv, _tensorinv_da)
defjvp(np.linalg.tensorinv, _tensorinv_jvp)


note("the derivative at the rank pinv's cutoff gives (perturbations that keep the rank)", lookup(np.linalg.pinv))
note("the solution, the residuals and the singular values (rank has none); the derivative at the rank the cutoff "
     "gives", lookup(np.linalg.lstsq))
note("p None, 2 and -2 through the extreme singular values (refused where one of them repeats); other p as "
     "norm(x, p) norm(inv(x), p)",
     lookup(np.linalg.cond))
