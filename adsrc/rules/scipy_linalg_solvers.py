"""scipy.linalg: solve_sylvester, sqrtm and solve_banded.

Imported only when SciPy is installed (rules/optional.py).

* ``solve_sylvester(a, b, q)`` solves ``a x + x b = q``: differentiating,
  ``a dx + dx b = dq - da x - x db``, so the tangent is a Sylvester solve with
  the same ``a`` and ``b``; the operator's transpose is ``y -> aᵀ y + y bᵀ``,
  so the cotangent of q is ``solve_sylvester(aᵀ, bᵀ, g)`` and those of a and
  b are ``-q̄ xᵀ`` and ``-xᵀ q̄``.
* ``sqrtm(a)``, the principal square root x (``x x = a``): ``x dx + dx x =
  da``, the Sylvester equation with a = b = x. Its result is complex where a
  has negative eigenvalues; every formula above is holomorphic (no
  conjugates), so both rules take complex values (docs/complex.md).
* ``solve_banded((l, u), ab, b)`` solves ``A x = b`` for the matrix whose
  band is stored in ``ab``: ``A[i, j] = ab[u + i - j, j]``. The cotangent of
  b is the solve with Aᵀ (the band transposed, with ``(u, l)``) and that of
  ab is ``-b̄ xᵀ`` read on the band; the entries of ab outside the matrix
  (its unused corners) get zero.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as linalg

from ._tangent import multilinear
from .registry import allow_complex, defjvp, defvjp, lookup
from ._util import cast_like, note
from .scipy_linalg import _columns, _like_b, _mT

_MODULE = "scipy.linalg"


# ---- solve_sylvester and sqrtm ------------------------------------------------------------------
def _sylvester_dq(g, ans, a, b, q):
    return cast_like(linalg.solve_sylvester(_mT(a), _mT(b), g), q)


def _sylvester_da(g, ans, a, b, q):
    return cast_like(-linalg.solve_sylvester(_mT(a), _mT(b), g) @ _mT(ans), a)


def _sylvester_db(g, ans, a, b, q):
    return cast_like(-_mT(ans) @ linalg.solve_sylvester(_mT(a), _mT(b), g), b)


defvjp(linalg.solve_sylvester, _sylvester_da, _sylvester_db, _sylvester_dq, module=_MODULE)
defjvp(linalg.solve_sylvester,
       lambda t, ans, a, b, q: linalg.solve_sylvester(a, b, -t @ ans),
       lambda t, ans, a, b, q: linalg.solve_sylvester(a, b, -ans @ t),
       lambda t, ans, a, b, q: linalg.solve_sylvester(a, b, t))


def _sqrtm_da(g, ans, A, *args, **kwargs):
    return cast_like(linalg.solve_sylvester(_mT(ans), _mT(ans), g), A)


defvjp(linalg.sqrtm, _sqrtm_da, module=_MODULE)
defjvp(linalg.sqrtm, lambda t, ans, A, *args, **kwargs: linalg.solve_sylvester(ans, ans, t))
allow_complex(linalg.solve_sylvester, linalg.sqrtm)


# ---- solve_banded ---------------------------------------------------------------------------------
def _dense(ab, lower, upper):
    """The n x n matrix whose band ``ab`` stores (``A[i, j] = ab[upper + i - j, j]``), zero off the band."""
    n = np.shape(ab)[-1]
    row = upper + np.arange(n)[:, None] - np.arange(n)[None, :]
    inside = (row >= 0) & (row <= lower + upper)
    return np.where(inside, ab[np.clip(row, 0, lower + upper), np.arange(n)[None, :]], 0.0)


def _band(matrix, lower, upper):
    """The band of ``matrix`` in the storage of ``_dense``, zero at the corners outside the matrix."""
    n = np.shape(matrix)[-1]
    row = np.arange(lower + upper + 1)[:, None] - upper + np.arange(n)[None, :]
    inside = (row >= 0) & (row < n)
    return np.where(inside, matrix[np.clip(row, 0, n - 1), np.arange(n)[None, :]], 0.0)


def _transposed_band(ab, lower, upper):
    """The band storage of Aᵀ, whose band has ``upper`` rows below the diagonal and ``lower`` above it."""
    return _band(_mT(_dense(ab, lower, upper)), upper, lower)


def _banded_db(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    lower, upper = l_and_u
    return cast_like(linalg.solve_banded((upper, lower), _transposed_band(ab, lower, upper), g), b)


def _banded_dab(g, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    lower, upper = l_and_u
    gb = _columns(linalg.solve_banded((upper, lower), _transposed_band(ab, lower, upper), g), b)
    return cast_like(_band(-gb @ _mT(_columns(ans, b)), lower, upper), ab)


def _banded_jvp_ab(t, ans, l_and_u, ab, b, overwrite_ab=False, overwrite_b=False, check_finite=True):
    lower, upper = l_and_u
    moved = _dense(t, lower, upper) @ _columns(ans, b)
    return -_like_b(linalg.solve_banded(l_and_u, ab, moved), b)


defvjp(linalg.solve_banded, None, _banded_dab, _banded_db, module=_MODULE)
defjvp(linalg.solve_banded, None, _banded_jvp_ab, multilinear(linalg.solve_banded, 2))

note("the transpose of the Sylvester operator (aᵀ y + y bᵀ); complex values too", lookup(linalg.solve_sylvester))
note("a Sylvester equation in the root (x dx + dx x = da); complex roots too", lookup(linalg.sqrtm))
note("(l, u) is an integer pair; ab's gradient lives on the band (zero at its unused corners)",
     lookup(linalg.solve_banded))
