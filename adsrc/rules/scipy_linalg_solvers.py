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

from ..errors import InvalidArgument
from ._tangent import multilinear
from .registry import allow_complex, defjvp, defvjp, lookup
from ._util import cast_like, note
from .scipy_linalg import _columns, _like_b, _mT

_MODULE = "scipy.linalg"


# ---- solve_sylvester and sqrtm ------------------------------------------------------------------
_GAP = float(np.sqrt(np.finfo(float).eps))  # relative: the accuracy of the eigenvalues of a defective matrix


def _sylvester(a, b, q, what):
    """solve_sylvester(a, b, q), refused where the equation is singular: an eigenvalue of a is minus one of b
    (to within _GAP of the largest), so that x is not a differentiable function of a, b and q there.
    SciPy itself returns a value there (LAPACK perturbs the eigenvalues and does not report it)."""
    from_a, from_b = np.linalg.eigvals(a), np.linalg.eigvals(b)  # a stack of matrices: each equation apart
    gap = np.min(np.abs(from_a[..., :, None] + from_b[..., None, :]), axis=(-2, -1))
    scale = np.max(np.abs(np.concatenate([from_a, from_b], axis=-1)), axis=-1)
    if not np.all(gap > _GAP * scale):
        raise InvalidArgument(f"scipy.linalg.{what}: the Sylvester equation is singular here (an eigenvalue of a is "
                              f"minus one of b, to within {_GAP:.1e} relative), so the result has no derivative; "
                              f"{_REMEDY[what]}")
    if np.iscomplexobj(a) or np.iscomplexobj(b) or np.iscomplexobj(q):
        a, b = a + 0j, b + 0j  # SciPy solves correctly when a and b are both complex (see _same_kind)
    return linalg.solve_sylvester(a, b, q)


_REMEDY = {"solve_sylvester": "move a or b so that a and -b share no eigenvalue",
           "sqrtm": "sqrtm of a singular matrix (a zero eigenvalue) has no derivative: move a away from it"}


def _same_kind(a, b, q):
    """Refuse the mixes of real and complex operands that SciPy's solve_sylvester may solve wrongly: with
    exactly one of a and b complex, or only q, it hands the real Schur form of the real matrix (not
    triangular where it has complex eigenvalues) to the complex LAPACK solver (SciPy 1.17: residuals of
    0.2). Its value there is not a solution, so no derivative of it would be right."""
    if np.iscomplexobj(a) != np.iscomplexobj(b) or (np.iscomplexobj(q) and not np.iscomplexobj(a)):
        raise InvalidArgument("scipy.linalg.solve_sylvester: a mix of real and complex a, b and q, which SciPy "
                              "may solve wrongly (its result need not satisfy a x + x b = q); pass a and b both "
                              "complex (a + 0j, b + 0j)")


def _sylvester_dq(g, ans, a, b, q):
    _same_kind(a, b, q)
    return cast_like(_sylvester(_mT(a), _mT(b), g, "solve_sylvester"), q)


def _sylvester_da(g, ans, a, b, q):
    _same_kind(a, b, q)
    return cast_like(-_sylvester(_mT(a), _mT(b), g, "solve_sylvester") @ _mT(ans), a)


def _sylvester_db(g, ans, a, b, q):
    _same_kind(a, b, q)
    return cast_like(-_mT(ans) @ _sylvester(_mT(a), _mT(b), g, "solve_sylvester"), b)


defvjp(linalg.solve_sylvester, _sylvester_da, _sylvester_db, _sylvester_dq, module=_MODULE)
def _sylvester_jvp(position):
    def jvp(t, ans, a, b, q):
        _same_kind(a, b, q)
        moved = -t @ ans if position == 0 else -ans @ t if position == 1 else t
        return _sylvester(a, b, moved, "solve_sylvester")

    return jvp


defjvp(linalg.solve_sylvester, *(_sylvester_jvp(i) for i in range(3)))


def _sqrtm_da(g, ans, A, *args, **kwargs):
    return cast_like(_sylvester(_mT(ans), _mT(ans), g, "sqrtm"), A)


defvjp(linalg.sqrtm, _sqrtm_da, module=_MODULE)
defjvp(linalg.sqrtm, lambda t, ans, A, *args, **kwargs: _sylvester(ans, ans, t, "sqrtm"))
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
