"""The phases NumPy gives complex eigenvectors (eigh) and singular vectors (svd), and their derivatives.

A complex eigenvector of a Hermitian matrix, or a pair of singular vectors
(u_i, v_i), is unique only up to a phase: ``V diag(e^{iθ})`` is as good as
``V``. LAPACK fixes the phase through the Householder reduction it starts
from, and one row of the factor comes out real:

* ``eigh``: the first row of V for ``UPLO='L'``, the last for ``UPLO='U'``;
* ``svd``: the first row of V (the first column of Vh) for m >= n, the first
  row of U for m < n.

The factor's derivative is taken along that normalization, so that it is the
derivative of what NumPy returns (finite differences of ``np.linalg.eigh``
check it directly). With ``dX`` the tangent without a phase term, column j
gets ``X_j i θ_j`` with ``θ_j = -Im(dX_rj) / X_rj`` (r the real row): that
makes ``dX_rj`` real. The vjp is its transpose (docs/complex.md): the
cotangent ``ĝ`` (the conjugate of the transpose convention's one) gains
``-i c_j / X_rj`` in row r, where ``c_j`` is what θ_j is paired with.

The row is recognized from the values (its imaginary parts are zero to
rounding); a factor with no real row, or with a zero in it (where NumPy's
phase jumps), is refused.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument


def real_row(candidates, what: str):
    """``(i, row)``: the first of ``candidates``, pairs ``(factor, r)`` of a stack of matrices with unit columns
    and a row index, whose row r NumPy kept real, and that row's real values."""
    for i, (factor, r) in enumerate(candidates):
        row = factor[..., r, :]
        eps = np.finfo(np.result_type(np.real(row), 1.0)).eps  # the columns have norm 1
        if not np.all(np.abs(np.imag(row)) <= 1e4 * eps):
            continue
        values = np.real(row)
        if np.any(np.abs(values) <= 1e3 * eps):
            raise InvalidArgument(
                f"{what}: a complex vector has a zero in the row NumPy keeps real, where the phase NumPy gives "
                f"it is not continuous: the derivative of the vectors is undefined there. Functions that do not "
                f"depend on the phase (np.abs of the vectors, the values) are differentiable: compute them "
                f"another way, or move the matrix slightly")
        return i, values
    raise InvalidArgument(
        f"{what}: NumPy's complex vectors have no real row here, so this NumPy's LAPACK fixes their phases "
        f"differently from the convention adsrc knows (module adsrc/rules/_phases.py), and their derivative "
        f"would be wrong. Differentiate functions of the values alone (compute_uv=False, np.linalg.eigvalsh)")


def phase_rates(d_factor, r: int, values):
    """θ_j = -Im(dX_rj) / X_rj: the rotation of each column's phase that keeps row r real."""
    return -np.imag(d_factor[..., r, :]) / values


def rotated(d_factor, factor, theta):
    """``dX + X diag(i θ)``."""
    return d_factor + factor * np.expand_dims(1j * theta, -2)


def phase_cotangent(g_hat, r: int, values, weights):
    """The transpose of :func:`phase_rates` with θ paired with ``weights``: ``ĝ`` plus
    ``-i weights_j / X_rj`` in row r."""
    rows = np.shape(g_hat)[-2]
    one_hot = (np.arange(rows) == r % rows)[:, None]
    return g_hat + one_hot * np.expand_dims(-1j * weights / values, -2)


def diagonal_imag(factor, g_hat):
    """``Im(diag(Xᴴ ĝ))``: what a column's phase rotation is paired with in ``ĝ``."""
    return np.imag(np.sum(np.conj(factor) * g_hat, axis=-2))
