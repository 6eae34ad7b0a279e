"""scipy.linalg: solve, inv, det, cholesky, cho_factor/cho_solve, lu_factor/lu_solve, solve_triangular,
expm, eigh.

Imported by ``rules/__init__.py`` only when SciPy is installed. Every rule's
gradient lives on the entries SciPy actually reads, as for NumPy's
decompositions: ``cholesky`` (upper by default in SciPy), ``cho_factor`` and
``eigh`` read one triangle; ``solve`` and ``inv`` with ``assume_a="pos"`` or
``"sym"`` read one triangle, and with ``"upper triangular"``/``"lower
triangular"`` one triangle without folding; ``solve_triangular`` reads one
triangle, without its diagonal when ``unit_diagonal``. ``cho_factor`` returns
``(c, lower)`` where c holds the factor in one triangle and the input's own
entries in the other (passed through as they are); ``lu_factor`` returns
``(lu, piv)`` with the unit lower factor below the diagonal and the upper
factor on and above it. ``cho_solve`` and ``lu_solve`` take those tuples, and
their gradient is a tuple too (nothing for ``lower`` and ``piv``).

The Fréchet derivative of ``expm`` is taken from ``expm`` of a block matrix
``[[A, E], [0, A]]``, whose upper-right block is L(A, E): so its second
derivative is expm's rule again. ``eigh`` of one matrix (no ``b``, no subset)
is differentiable through eigenvalues and eigenvectors, and refuses a
cotangent on the eigenvectors of a repeated eigenvalue, as np.linalg.eigh.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as linalg

from ..errors import InvalidArgument, NotDifferentiable
from .registry import defjvp, defvjp, lookup
from ._util import cast_like, note, zero
from .decompositions import _adjugate, _cholesky_da, _cholesky_jvp, _det_da, _eigvalsh_da, _eigvalsh_jvp
from .decompositions import _eigh_da as _numpy_eigh_da, _eigh_jvp as _numpy_eigh_jvp
from .decompositions import _fold_onto_triangle, _mT, _read_triangle

_MODULE = "scipy.linalg"
_SYMMETRIC = {"sym", "symmetric", "her", "hermitian", "pos", "positive definite", "pos def"}
_GENERAL = {None, "gen", "general"}


# ---- which entries of a a structured solve reads ---------------------------------------------
def _structure(assume_a, lower):
    if assume_a in _GENERAL:
        return "general"
    if assume_a in _SYMMETRIC:
        return "lower" if lower else "upper"
    if assume_a in ("upper triangular", "lower triangular"):
        return assume_a
    raise NotDifferentiable(f"the gradient of a scipy.linalg solve with assume_a={assume_a!r} is not supported "
                              f"(supported: None, 'gen', 'sym', 'pos', 'upper triangular', 'lower triangular')")


def _read(a, kind):
    """The matrix SciPy solves with, for input ``a`` (or a tangent of it)."""
    if kind in ("lower", "upper"):
        return _read_triangle(a, lower=kind == "lower")
    if kind == "upper triangular":
        return np.triu(a)
    if kind == "lower triangular":
        return np.tril(a)
    return a


def _onto_read(full, kind):
    """A gradient with respect to the matrix solved with, moved onto the entries of a that are read."""
    if kind in ("lower", "upper"):
        return _fold_onto_triangle(0.5 * (full + _mT(full)), lower=kind == "lower")
    if kind == "upper triangular":
        return np.triu(full)
    if kind == "lower triangular":
        return np.tril(full)
    return full


def _columns(v, b):
    """``v`` as a matrix of columns when ``b`` is a vector."""
    return np.asarray(v)[:, None] if np.ndim(b) == 1 else np.asarray(v)


def _like_b(v, b):
    return cast_like(v[:, 0] if np.ndim(b) == 1 else v, b)


# ---- solve and inv ----------------------------------------------------------------------------
def _solve_matrix(a, lower, assume_a, transposed):
    matrix = _read(a, _structure(assume_a, lower))
    return _mT(matrix) if transposed else matrix


def _solve_db(g, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
              transposed=False):
    matrix = _solve_matrix(a, lower, assume_a, transposed)
    return _like_b(np.linalg.solve(_mT(matrix), _columns(g, b)), b)


def _solve_da(g, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
              transposed=False):
    matrix = _solve_matrix(a, lower, assume_a, transposed)
    gb = np.linalg.solve(_mT(matrix), _columns(g, b))
    full = -gb @ _mT(_columns(ans, b))
    return cast_like(_onto_read(_mT(full) if transposed else full, _structure(assume_a, lower)), a)


def _solve_jvp_a(t, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
                 transposed=False):
    matrix = _solve_matrix(a, lower, assume_a, transposed)
    moved = _solve_matrix(t, lower, assume_a, transposed)
    dx = -np.linalg.solve(matrix, moved @ _columns(ans, b))
    return dx[:, 0] if np.ndim(b) == 1 else dx


def _solve_jvp_b(t, ans, a, b, lower=False, overwrite_a=False, overwrite_b=False, check_finite=True, assume_a=None,
                 transposed=False):
    dx = np.linalg.solve(_solve_matrix(a, lower, assume_a, transposed), _columns(t, b))
    return dx[:, 0] if np.ndim(b) == 1 else dx


defvjp(linalg.solve, _solve_da, _solve_db, module=_MODULE)
defjvp(linalg.solve, _solve_jvp_a, _solve_jvp_b)


def _inv_da(g, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    return cast_like(_onto_read(-_mT(ans) @ g @ _mT(ans), _structure(assume_a, lower)), a)


def _inv_jvp(t, ans, a, overwrite_a=False, check_finite=True, *, assume_a=None, lower=False):
    return -ans @ _read(t, _structure(assume_a, lower)) @ ans


defvjp(linalg.inv, _inv_da, module=_MODULE)
defjvp(linalg.inv, _inv_jvp)
defvjp(linalg.det, lambda g, ans, a, overwrite_a=False, check_finite=True: cast_like(_det_da(g, ans, a), a),
       module=_MODULE)
defjvp(linalg.det, lambda t, ans, a, overwrite_a=False, check_finite=True:
       np.trace(_adjugate(a) @ t, axis1=-2, axis2=-1))


# ---- Cholesky ---------------------------------------------------------------------------------
defvjp(linalg.cholesky, lambda g, ans, a, lower=False, overwrite_a=False, check_finite=True:
       cast_like(_cholesky_da(g, ans, a, upper=not lower), a), module=_MODULE)
defjvp(linalg.cholesky, lambda t, ans, a, lower=False, overwrite_a=False, check_finite=True:
       _cholesky_jvp(t, ans, a, upper=not lower))


def _factor_of(c, lower):
    """The triangle of ``c`` that holds the Cholesky factor."""
    return np.tril(c) if lower else np.triu(c)


def _untouched(v, lower):
    """The other triangle (without the diagonal): cho_factor copies the input's entries there."""
    return np.triu(v, 1) if lower else np.tril(v, -1)


def _cho_factor_da(g, ans, a, lower=False, overwrite_a=False, check_finite=True):
    g_c = g[0]
    if g_c is zero:
        return zero
    factor = _factor_of(ans[0], lower)
    through = _cholesky_da(_factor_of(g_c, lower), factor, a, upper=not lower)
    return cast_like(through + _untouched(g_c, lower), a)


def _cho_factor_jvp(t, ans, a, lower=False, overwrite_a=False, check_finite=True):
    factor = _factor_of(ans[0], lower)
    return (_cholesky_jvp(t, factor, a, upper=not lower) + _untouched(t, lower), zero)


defvjp(linalg.cho_factor, _cho_factor_da, module=_MODULE)
defjvp(linalg.cho_factor, _cho_factor_jvp)


def _unpack_cho(c_and_lower):
    """(c, lower) as cho_solve reads them: SciPy hands ``lower`` to LAPACK as an integer."""
    c, lower = c_and_lower
    return c, bool(int(lower))


def _cho_solve_dc(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = _unpack_cho(c_and_lower)
    gb = _columns(linalg.cho_solve(c_and_lower, g), b)
    full = -gb @ _mT(_columns(ans, b))
    both = full + _mT(full)
    factor = _factor_of(c, lower)
    dc = np.tril(both @ factor) if lower else np.triu(factor @ both)
    return (cast_like(dc, c), zero)


def _cho_solve_db(g, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    return cast_like(linalg.cho_solve(c_and_lower, g), b)


def _cho_solve_jvp_c(t, ans, c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = _unpack_cho(c_and_lower)
    factor, moved = _factor_of(c, lower), _factor_of(t[0], lower)
    d_matrix = moved @ _mT(factor) + factor @ _mT(moved) if lower else _mT(moved) @ factor + _mT(factor) @ moved
    return -linalg.cho_solve(c_and_lower, d_matrix @ _columns(ans, b)).reshape(np.shape(ans))


defvjp(linalg.cho_solve, _cho_solve_dc, _cho_solve_db, module=_MODULE)
defjvp(linalg.cho_solve, _cho_solve_jvp_c, lambda t, ans, c_and_lower, b, overwrite_b=False, check_finite=True:
       linalg.cho_solve(c_and_lower, t))


# ---- LU ---------------------------------------------------------------------------------------
def _solve_or_refuse(a, b, what):
    """np.linalg.solve(a, b) for a triangular factor a, or InvalidArgument where it is singular."""
    if not np.all(np.abs(np.diagonal(a)) > 0):
        raise InvalidArgument(f"scipy.linalg.{what}: the matrix is singular, so its LU factors have no "
                              f"derivative (U has a zero on its diagonal)")
    return np.linalg.solve(a, b)


def _lu_parts(lu, piv):
    """L (unit lower), U, and the row order ``perm`` with a[perm] == L @ U."""
    n = np.shape(lu)[-1]
    perm = np.arange(n)
    for i, p in enumerate(piv):
        perm[[i, p]] = perm[[p, i]]
    return np.tril(lu, -1) + np.eye(n, dtype=lu.dtype), np.triu(lu), perm


def _unpermute(rows, perm):
    """The matrix m with m[perm] == rows."""
    out = np.zeros_like(rows)
    out[perm] = rows
    return out


def _lu_factor_da(g, ans, a, overwrite_a=False, check_finite=True):
    g_lu = g[0]
    if g_lu is zero:
        return zero
    low, up, perm = _lu_parts(*ans)
    inner = np.tril(_mT(low) @ np.tril(g_lu, -1), -1) + np.triu(np.triu(g_lu) @ _mT(up))
    rows = np.linalg.solve(_mT(low), _mT(_solve_or_refuse(up, _mT(inner), "lu_factor")))
    return cast_like(_unpermute(rows, perm), a)


def _lu_factor_jvp(t, ans, a, overwrite_a=False, check_finite=True):
    low, up, perm = _lu_parts(*ans)
    inner = _mT(_solve_or_refuse(_mT(up), _mT(np.linalg.solve(low, t[perm])), "lu_factor"))
    return (low @ np.tril(inner, -1) + np.triu(inner) @ up, zero)


defvjp(linalg.lu_factor, _lu_factor_da, module=_MODULE)
defjvp(linalg.lu_factor, _lu_factor_jvp)


def _lu_solve_dlu(g, ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    low, up, perm = _lu_parts(lu, piv)
    gb = _columns(linalg.lu_solve(lu_and_piv, g, trans=0 if trans else 1), b)
    x = _columns(ans, b)
    full = -x @ _mT(gb) if trans else -gb @ _mT(x)  # the gradient with respect to a = P L U
    rows = full[perm]
    return (cast_like(np.tril(rows @ _mT(up), -1) + np.triu(_mT(low) @ rows), lu), zero)


def _lu_solve_db(g, ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    return cast_like(linalg.lu_solve(lu_and_piv, g, trans=0 if trans else 1), b)


def _lu_solve_jvp_lu(t, ans, lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    low, up, perm = _lu_parts(lu, piv)
    d_rows = np.tril(t[0], -1) @ up + low @ np.triu(t[0])
    d_matrix = _unpermute(d_rows, perm)
    moved = _mT(d_matrix) if trans else d_matrix
    return -linalg.lu_solve(lu_and_piv, moved @ _columns(ans, b), trans=trans).reshape(np.shape(ans))


defvjp(linalg.lu_solve, _lu_solve_dlu, _lu_solve_db, module=_MODULE)
defjvp(linalg.lu_solve, _lu_solve_jvp_lu, lambda t, ans, lu_and_piv, b, trans=0, overwrite_b=False,
       check_finite=True: linalg.lu_solve(lu_and_piv, t, trans=trans))


# ---- solve_triangular -------------------------------------------------------------------------
def _transposes(trans):
    return trans in (1, 2, "T", "C")


def _triangle(v, lower, unit_diagonal):
    """The entries of ``v`` solve_triangular reads: one triangle, without the diagonal if it is unit."""
    tri = np.tril(v) if lower else np.triu(v)
    return tri - np.eye(np.shape(v)[-1], dtype=tri.dtype) * tri if unit_diagonal else tri


def _solve_triangular_da(g, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                         check_finite=True):
    flipped = 0 if _transposes(trans) else 1
    gb = _columns(linalg.solve_triangular(a, g, trans=flipped, lower=lower, unit_diagonal=unit_diagonal), b)
    x = _columns(ans, b)
    full = -x @ _mT(gb) if _transposes(trans) else -gb @ _mT(x)
    return cast_like(_triangle(full, lower, unit_diagonal), a)


def _solve_triangular_db(g, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                         check_finite=True):
    flipped = 0 if _transposes(trans) else 1
    return cast_like(linalg.solve_triangular(a, g, trans=flipped, lower=lower, unit_diagonal=unit_diagonal), b)


def _solve_triangular_jvp_a(t, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                            check_finite=True):
    moved = _triangle(t, lower, unit_diagonal)
    moved = _mT(moved) if _transposes(trans) else moved
    product = moved @ _columns(ans, b)
    dx = -linalg.solve_triangular(a, product, trans=trans, lower=lower, unit_diagonal=unit_diagonal)
    return dx.reshape(np.shape(ans))


defvjp(linalg.solve_triangular, _solve_triangular_da, _solve_triangular_db, module=_MODULE)
defjvp(linalg.solve_triangular, _solve_triangular_jvp_a,
       lambda t, ans, a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False, check_finite=True:
       linalg.solve_triangular(a, t, trans=trans, lower=lower, unit_diagonal=unit_diagonal))


# ---- expm -------------------------------------------------------------------------------------
def _frechet(a, e):
    """L(a, e), the derivative of expm at a in direction e: the upper-right block of expm([[a, e], [0, a]])."""
    n = np.shape(a)[-1]
    top = np.concatenate([a, e], axis=-1)
    bottom = np.concatenate([np.zeros_like(top[..., :n]), a], axis=-1)
    return linalg.expm(np.concatenate([top, bottom], axis=-2))[..., :n, n:]


defvjp(linalg.expm, lambda g, ans, A: cast_like(_frechet(_mT(A), g), A), module=_MODULE)
defjvp(linalg.expm, lambda t, ans, A: _frechet(A, t))


# ---- eigh -------------------------------------------------------------------------------------
def _uplo(b, lower, type, subset_by_index, subset_by_value):
    if b is not None or type != 1 or subset_by_index is not None or subset_by_value is not None:
        raise NotDifferentiable("the gradient of scipy.linalg.eigh is supported for one matrix (no b, type=1) "
                                  "and all its eigenvalues (no subset_by_index or subset_by_value)")
    return "L" if lower else "U"


def _eigh_da(g, ans, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
             check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    uplo = _uplo(b, lower, type, subset_by_index, subset_by_value)
    rule = _eigvalsh_da if eigvals_only else _numpy_eigh_da
    return cast_like(rule(g, ans, a, uplo), a)


def _eigh_jvp(t, ans, a, b=None, *, lower=True, eigvals_only=False, overwrite_a=False, overwrite_b=False, type=1,
              check_finite=True, subset_by_index=None, subset_by_value=None, driver=None):
    uplo = _uplo(b, lower, type, subset_by_index, subset_by_value)
    return (_eigvalsh_jvp if eigvals_only else _numpy_eigh_jvp)(t, ans, a, uplo)


defvjp(linalg.eigh, _eigh_da, None, module=_MODULE)
defjvp(linalg.eigh, _eigh_jvp, None)

note("the gradient lives on the entries read: one triangle for assume_a='sym'/'pos', the triangle for "
     "'upper/lower triangular'", lookup(linalg.solve), lookup(linalg.inv))
note("exact at singular matrices (the adjugate)", lookup(linalg.det))
note("upper by default, as SciPy: the gradient lives on the triangle read", lookup(linalg.cholesky))
note("the cotangent is (g_c, zero); the factor's triangle differentiates as cholesky, the other triangle "
     "holds the input's entries, passed through", lookup(linalg.cho_factor))
note("takes (c, lower) from cho_factor; the gradient reaches the factor's triangle of c", lookup(linalg.cho_solve))
note("the cotangent is (g_lu, zero): unit lower factor below the diagonal, upper factor on and above it",
     lookup(linalg.lu_factor))
note("takes (lu, piv) from lu_factor; trans=0, 1 or 2", lookup(linalg.lu_solve))
note("one triangle is read (without its diagonal when unit_diagonal); trans=0, 1 or 2",
     lookup(linalg.solve_triangular))
note("the Fréchet derivative, from expm of the block matrix [[A, E], [0, A]]", lookup(linalg.expm))
note("one matrix, all eigenvalues (no b, no subset); lower triangle by default; a cotangent on the "
     "eigenvectors of a repeated eigenvalue is refused", lookup(linalg.eigh))
