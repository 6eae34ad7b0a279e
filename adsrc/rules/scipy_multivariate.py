"""scipy.stats' multivariate distributions: multivariate_normal's logpdf, pdf and entropy; dirichlet's
logpdf and pdf.

Imported only when SciPy is installed (rules/optional.py). The rules are
keyed by the bound methods ``multivariate_normal.logpdf``..., as in
scipy_stats.py, and named ``scipy.stats.multivariate_normal_logpdf``...

``multivariate_normal``: with residuals r = x - mean and Σ the covariance,
``logpdf = -(d log 2π + log det Σ + rᵀ Σ⁻¹ r) / 2`` has the partials
``-Σ⁻¹ r`` in x, ``Σ⁻¹ r`` in mean and ``(Σ⁻¹ r rᵀ Σ⁻¹ - Σ⁻¹) / 2`` in Σ;
``entropy = (d (log 2π + 1) + log det Σ) / 2`` has ``Σ⁻¹ / 2`` in Σ and none
in mean. x may hold one point or many (the last axis is the dimension), and
cov may be a scalar (times the identity), a diagonal or a matrix. Like SciPy,
the rules read the lower triangle of a matrix cov, where its gradient lives
(as for np.linalg.cholesky). With ``allow_singular=True`` and a singular cov,
SciPy uses the pseudo-inverse and pseudo-determinant: the gradients in x and
mean use the same pseudo-inverse (exact for points in the support, which is
where the density is finite), and a gradient in cov is refused (the
pseudo-determinant is not differentiable across a change of rank).

``dirichlet``: ``logpdf = sum((alpha - 1) log x) - log B(alpha)`` has the
partials ``(alpha - 1) / x`` in x and ``log x + ψ(sum alpha) - ψ(alpha)`` in
alpha. x holds the K components along its first axis (one point, or one
column per point), or K - 1 of them, which SciPy completes with ``1 - sum``:
then the partial in x_i is ``(alpha_i - 1) / x_i - (alpha_K - 1) / x_K``. The
partials are those of the formula: SciPy checks that x is on the simplex, and
a perturbation that leaves it is the caller's to avoid (normalize x first).
"""
from __future__ import annotations

import numpy as np
import scipy.special as special
import scipy.stats as stats

from ..errors import InvalidArgument
from .registry import defjvp, defvjp, lookup, register_nondifferentiable
from ._util import cast_like, note, zero
from .decompositions import _fold_onto_triangle, _read_triangle
from .scipy_stats import _ratio

_MODULE = "scipy.stats"


# ---- multivariate_normal(x, mean=None, cov=1, allow_singular=False) -------------------------------
def _full_covariance(cov, d):
    """cov as the d x d matrix SciPy uses: a scalar times the identity, a diagonal, or the matrix itself."""
    cov_m = np.asarray(cov, dtype=np.result_type(cov, 1.0))
    if cov_m.ndim == 0:
        return cov_m * np.eye(d)
    if cov_m.ndim == 1:
        return np.diag(cov_m)
    return cov_m


def _dimension(x, mean, cov):
    if np.ndim(cov):
        return np.shape(cov)[0]
    if mean is not None:
        return np.size(mean)
    return np.shape(x)[-1] if np.ndim(x) else 1


def _cutoff(cov_m):
    """SciPy's cutoff for the eigenvalues of cov, relative to the largest: below it they count as zero."""
    return (1e3 if cov_m.dtype == np.float32 else 1e6) * np.finfo(cov_m.dtype).eps


def _rank_deficient(cov_m):
    """Whether SciPy treats cov as singular: an eigenvalue (of the lower triangle, as SciPy reads it) at or
    below its cutoff. A decision, with no gradient: registered so, second order does not trace into it."""
    eigenvalues = np.linalg.eigvalsh(cov_m)
    return bool(np.min(eigenvalues) <= _cutoff(cov_m) * np.max(np.abs(eigenvalues)))


register_nondifferentiable(_rank_deficient)


def _refuse_singular(cov_m, allow_singular, method):
    if allow_singular and _rank_deficient(cov_m):
        raise InvalidArgument(f"scipy.stats.multivariate_normal.{method}: cov is singular (allow_singular=True), and "
                              f"the pseudo-determinant has no gradient in cov across a change of rank; pass cov as a "
                              f"constant (x and mean are differentiable), or a nonsingular cov")


def _mvn_parts(x, mean, cov, allow_singular):
    """The points as rows (n, d), the full covariance, and Σ⁻¹ r for each residual r = x - mean (SciPy's
    pseudo-inverse of a singular Σ when allow_singular)."""
    d = _dimension(x, mean, cov)
    cov_m = _full_covariance(cov, d)
    points = np.reshape(x, (-1, d))
    residual = points - (0.0 if mean is None else np.reshape(mean, (d,)))
    if allow_singular and _rank_deficient(cov_m):
        whitened = residual @ np.linalg.pinv(cov_m, rcond=_cutoff(cov_m), hermitian=True)
    else:
        whitened = np.linalg.solve(cov_m, residual.T).T
    return points, cov_m, whitened


def _mvn_cotangent(g, ans, points, kind):
    """The cotangent of each point's log density, as a vector (n,)."""
    g = np.reshape(np.broadcast_to(g, np.shape(ans)), (points.shape[0],))
    return g * np.reshape(ans, (points.shape[0],)) if kind == "pdf" else g


def _cov_shaped(full, cov):
    """A gradient with respect to the full covariance, reduced to cov's own form (and lower triangle)."""
    if np.ndim(cov) == 0:
        return cast_like(np.trace(full), cov)
    if np.ndim(cov) == 1:
        return cast_like(np.diagonal(full), cov)
    return cast_like(_fold_onto_triangle(0.5 * (full + full.T), lower=True), cov)


def _cov_tangent(t, d):
    """A tangent of cov as a tangent of the full covariance (the lower triangle of a matrix, mirrored)."""
    t = np.asarray(t)
    return t * np.eye(d) if t.ndim == 0 else np.diag(t) if t.ndim == 1 else _read_triangle(t)


def _mvn_vjp(kind, position):
    def vjp(g, ans, x, mean=None, cov=1, allow_singular=False):
        points, cov_m, whitened = _mvn_parts(x, mean, cov, allow_singular)
        weights = _mvn_cotangent(g, ans, points, kind)
        if position == 0:
            return cast_like(np.reshape(-weights[:, None] * whitened, np.shape(x)), x)
        if position == 1:
            return cast_like(np.reshape(np.sum(weights[:, None] * whitened, axis=0), np.shape(mean)), mean)
        _refuse_singular(cov_m, allow_singular, kind)
        full = 0.5 * ((whitened.T * weights) @ whitened - np.sum(weights) * np.linalg.inv(cov_m))
        return _cov_shaped(full, cov)

    return vjp


def _mvn_jvp(kind, position):
    def jvp(t, ans, x, mean=None, cov=1, allow_singular=False):
        points, cov_m, whitened = _mvn_parts(x, mean, cov, allow_singular)
        if position == 0:
            slope = -np.sum(whitened * np.reshape(t, points.shape), axis=-1)
        elif position == 1:
            slope = whitened @ np.reshape(t, (points.shape[1],))
        else:
            _refuse_singular(cov_m, allow_singular, kind)
            moved = _cov_tangent(t, points.shape[1])
            slope = 0.5 * (np.sum((whitened @ moved) * whitened, axis=-1) - np.trace(np.linalg.solve(cov_m, moved)))
        slope = np.reshape(slope, np.shape(ans))
        return slope * ans if kind == "pdf" else slope

    return jvp


for _method in ("logpdf", "pdf"):
    _func = getattr(stats.multivariate_normal, _method)
    defvjp(_func, *(_mvn_vjp(_method, i) for i in range(3)), name=f"multivariate_normal_{_method}", module=_MODULE)
    defjvp(_func, *(_mvn_jvp(_method, i) for i in range(3)))
    note("x, mean and cov; cov's gradient lives on its lower triangle, which SciPy reads; with "
         "allow_singular=True and a singular cov, x and mean only", lookup(_func))


# entropy(mean=None, cov=1) = (d (log 2π + 1) + log det Σ) / 2: nothing in mean, Σ⁻¹ / 2 in Σ.
def _entropy_dmean(g, ans, mean=None, cov=1):
    return zero


def _entropy_dcov(g, ans, mean=None, cov=1):
    cov_m = _full_covariance(cov, _dimension(None, mean, cov))
    _refuse_singular(cov_m, True, "entropy")
    return _cov_shaped(0.5 * g * np.linalg.inv(cov_m), cov)


def _entropy_jvp_cov(t, ans, mean=None, cov=1):
    cov_m = _full_covariance(cov, _dimension(None, mean, cov))
    _refuse_singular(cov_m, True, "entropy")
    return 0.5 * np.trace(np.linalg.solve(cov_m, _cov_tangent(t, np.shape(cov_m)[0])))


defvjp(stats.multivariate_normal.entropy, _entropy_dmean, _entropy_dcov, name="multivariate_normal_entropy",
       module=_MODULE)
defjvp(stats.multivariate_normal.entropy, lambda t, ans, mean=None, cov=1: zero, _entropy_jvp_cov)
note("zero in mean; cov's gradient lives on its lower triangle (refused for a singular cov)",
     lookup(stats.multivariate_normal.entropy))


# ---- dirichlet(x, alpha) ----------------------------------------------------------------------
def _dirichlet_dx(x, alpha):
    """d logpdf / dx, shaped like x: (alpha - 1) / x, less the last component's term when x omits it."""
    alpha = np.asarray(alpha)
    column = np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))
    if np.shape(x)[0] == alpha.shape[0]:
        return _ratio(column - 1.0, x)
    last = 1.0 - np.sum(x, axis=0, keepdims=True)
    return _ratio(column[:-1] - 1.0, x) - _ratio(column[-1:] - 1.0, last)


def _dirichlet_dalpha(x, alpha):
    """d logpdf / dalpha for each point, shaped like the completed x: log x + ψ(sum alpha) - ψ(alpha)."""
    alpha = np.asarray(alpha)
    column = np.reshape(alpha, (-1,) + (1,) * (np.ndim(x) - 1))
    if np.shape(x)[0] != alpha.shape[0]:
        x = np.concatenate([x, 1.0 - np.sum(x, axis=0, keepdims=True)], axis=0)
    return np.log(x) + special.digamma(np.sum(alpha)) - special.digamma(column)


def _dirichlet_scale(g, ans, kind):
    """The cotangent (or tangent) of the log density: the density's times the density for pdf."""
    return g * ans if kind == "pdf" else g


def _dirichlet_vjp(kind, position):
    def vjp(g, ans, x, alpha):
        g = _dirichlet_scale(g, ans, kind)
        if position == 0:
            return cast_like(g * _dirichlet_dx(x, alpha), x)
        points = tuple(range(1, np.ndim(x)))
        return cast_like(np.sum(g * _dirichlet_dalpha(x, alpha), axis=points), alpha)

    return vjp


def _dirichlet_jvp(kind, position):
    def jvp(t, ans, x, alpha):
        if position == 0:
            slope = np.sum(t * _dirichlet_dx(x, alpha), axis=0)
        else:
            slope = np.sum(np.reshape(t, (-1,) + (1,) * (np.ndim(x) - 1)) * _dirichlet_dalpha(x, alpha), axis=0)
        return _dirichlet_scale(slope, ans, kind)

    return jvp


for _method in ("logpdf", "pdf"):
    _func = getattr(stats.dirichlet, _method)
    defvjp(_func, _dirichlet_vjp(_method, 0), _dirichlet_vjp(_method, 1), name=f"dirichlet_{_method}",
           module=_MODULE)
    defjvp(_func, _dirichlet_jvp(_method, 0), _dirichlet_jvp(_method, 1))
    note("x (components along the first axis; K - 1 of them completed by SciPy) and alpha; the partials of the "
         "formula, which does not keep x on the simplex", lookup(_func))
