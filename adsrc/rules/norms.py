"""Vector and matrix norms: linalg.norm, linalg.vector_norm, linalg.matrix_norm.

Vector norms support ord None/2, 1, inf, -inf, 0 (zero gradient) and any other
p; they reduce over one axis or a tuple of axes. Matrix norms support 'fro',
'nuc', 2, -2 (through the SVD), 1, -1, inf and -inf. Where several entries
attain a max-type norm (ties in inf, column sums in 1), the cotangent is split
evenly among them, as in max. At x = 0 the 2-norm's gradient is taken as 0.

Complex entries follow docs/complex.md, as abs does: each |x_i| contributes
conj(x_i) / |x_i| (``conj(sign(x))``), and the SVD's directions are conjugated.
"""
from __future__ import annotations

import numpy as np

from ..errors import NotDifferentiable
from .registry import defjvp, defvjp, lookup
from ._util import as_array, keep_dims, note, reduced_axes, replace_zero
from .templates import arrays, deftemplate


def _conj(x):
    """conj(x) for complex values; x itself (no copy) for real ones."""
    return np.conj(x) if np.iscomplexobj(x) else x


def _unit(x):
    """conj(sign(x)): the gradient of |x_i|. For complex values it is written with abs and a division,
    which second order differentiates (sign's own derivative is zero only on the real line)."""
    if not np.iscomplexobj(x):
        return np.sign(x)
    magnitude = np.abs(x)
    return np.conj(x) / np.where(magnitude == 0, 1.0, magnitude)


def _split_ties(g, x, hits, axes):
    dtype = np.result_type(x, g)
    count = np.sum(hits, axis=axes, keepdims=True)
    return (g * hits).astype(dtype, copy=False) / np.maximum(count, 1).astype(dtype)


def _vector_grad(g, ans, x, ord, axes):
    """Gradient of a vector norm over ``axes``; ``g`` and ``ans`` already keep those axes."""
    x = as_array(x)
    if ord is None or ord == 2:
        return g * _conj(x) / replace_zero(ans, 1.0)
    if ord == 1:
        return g * _unit(x)
    if ord == 0:
        return np.zeros(x.shape, dtype=np.result_type(x, g))
    if np.isinf(ord):
        return _split_ties(g * _unit(x), x, np.abs(x) == ans, axes)
    # sign(x) (|x| / norm)**(p-1); a zero entry gets the subgradient 0 (for p < 1 the power would
    # be inf there, and 0 * inf NaN), and so does every entry where the norm itself is 0.
    p = float(ord)
    ratio = np.where(x == 0, 1.0, np.abs(x) / replace_zero(ans, 1.0))
    return g * _unit(x) * ratio ** (p - 1.0) * (ans != 0)


def _singular_direction(u, s, vh, ord):
    """The gradient of a norm made of singular values, as a matrix (per matrix of a stack).

    'nuc' (the sum of the singular values): U Vᵀ over the nonzero singular values only.
    2 and -2 (the largest and the smallest): u_i v_iᵀ of that singular value, split
    evenly among singular values tied with it, as max splits among tied maxima.
    A singular value of 0 contributes 0, the subgradient of least norm (at the
    zero matrix the gradient is 0, as for the other norms).
    """
    scale = np.max(s, axis=-1, keepdims=True)
    tol = np.maximum(scale, np.finfo(s.dtype).tiny) * (max(u.shape[-2], vh.shape[-1]) * np.finfo(s.dtype).eps)
    nonzero = s > tol
    if ord == "nuc":
        weights = nonzero.astype(s.dtype)
    else:
        chosen = s[..., :1] if ord == 2 else s[..., -1:]  # singular values come sorted, largest first
        tied = np.abs(s - chosen) <= tol
        weights = ((tied & nonzero) / np.maximum(np.sum(tied, axis=-1, keepdims=True), 1)).astype(s.dtype)
    return (u * weights[..., None, :]) @ vh


def _matrix_grad(g, ans, x, ord, axes):
    """Gradient of a matrix norm over the axis pair ``axes`` (given as passed, in order)."""
    x = as_array(x)
    row, col = axes
    if ord in (None, "fro"):
        return g * _conj(x) / replace_zero(ans, 1.0)
    if ord in ("nuc", 2, -2):
        moved = np.moveaxis(x, (row, col), (-2, -1))
        u, s, vh = np.linalg.svd(moved, full_matrices=False)
        return g * _conj(np.moveaxis(_singular_direction(u, s, vh, ord), (-2, -1), (row, col)))
    if ord in (1, -1, np.inf, -np.inf):
        summed, across = (row, col) if ord in (1, -1) else (col, row)
        sums = np.sum(np.abs(x), axis=summed, keepdims=True)
        return _split_ties(g * _unit(x), x, np.broadcast_to(sums == ans, x.shape), (across,))
    raise NotDifferentiable(f"the gradient of the matrix norm with ord={ord!r} is not supported")


def _norm_dx(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord is None and axis is None and not keepdims and type(x) is np.ndarray:
        return g * _conj(x) / ans if ans != 0 else np.zeros_like(x)  # the 2-norm of all elements
    ndim = np.ndim(x)
    if axis is None and ord is None:
        axes = tuple(range(ndim))
        return _vector_grad(keep_dims(g, x, None, keepdims), keep_dims(ans, x, None, keepdims), x, None, axes)
    if axis is None:
        axis = tuple(range(ndim))
    axis = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    g, ans = keep_dims(g, x, axis, keepdims), keep_dims(ans, x, axis, keepdims)
    if len(axis) == 1:
        return _vector_grad(g, ans, x, ord, reduced_axes(axis, ndim))
    return _matrix_grad(g, ans, x, ord, tuple(a % ndim for a in axis))


def _vector_norm_dx(g, ans, x, /, *, axis=None, keepdims=False, ord=2):
    g, ans = keep_dims(g, x, axis, keepdims), keep_dims(ans, x, axis, keepdims)
    return _vector_grad(g, ans, x, ord, reduced_axes(axis, np.ndim(x)))


def _matrix_norm_dx(g, ans, x, /, *, keepdims=False, ord="fro"):
    axes = (np.ndim(x) - 2, np.ndim(x) - 1)
    g, ans = keep_dims(g, x, axes, keepdims), keep_dims(ans, x, axes, keepdims)
    return _matrix_grad(g, ans, x, ord, axes)


defvjp(np.linalg.norm, _norm_dx)
deftemplate(lookup(np.linalg.norm), 0, "g * x / ans if ans != 0 else np.zeros_like(x)", arrays({"x": None}))
if hasattr(np.linalg, "vector_norm"):
    defvjp(np.linalg.vector_norm, _vector_norm_dx)
    defvjp(np.linalg.matrix_norm, _matrix_norm_dx)


# Tangents: a norm is a reduction, so its jvp sums (gradient of a unit cotangent) * t over the reduced axes.
def _reduce_to(ans, weights, t, axes):
    total = np.sum(weights * t, axis=axes, keepdims=True)
    if np.iscomplexobj(total):  # a norm is real: its tangent is the real part (docs/complex.md's pairing)
        total = total.real
    return np.reshape(total, np.shape(ans))


def _norm_jvp(t, ans, x, ord=None, axis=None, keepdims=False):
    axes = tuple(range(np.ndim(x))) if axis is None else reduced_axes(axis, np.ndim(x))
    return _reduce_to(ans, _norm_dx(np.ones(np.shape(ans)), ans, x, ord, axis, keepdims), t, axes)


def _vector_norm_jvp(t, ans, x, /, *, axis=None, keepdims=False, ord=2):
    weights = _vector_norm_dx(np.ones(np.shape(ans)), ans, x, axis=axis, keepdims=keepdims, ord=ord)
    return _reduce_to(ans, weights, t, reduced_axes(axis, np.ndim(x)))


def _matrix_norm_jvp(t, ans, x, /, *, keepdims=False, ord="fro"):
    weights = _matrix_norm_dx(np.ones(np.shape(ans)), ans, x, keepdims=keepdims, ord=ord)
    return _reduce_to(ans, weights, t, (np.ndim(x) - 2, np.ndim(x) - 1))


defjvp(np.linalg.norm, _norm_jvp)
if hasattr(np.linalg, "vector_norm"):
    defjvp(np.linalg.vector_norm, _vector_norm_jvp)
    defjvp(np.linalg.matrix_norm, _matrix_norm_jvp)

note("vectors: ord None/2, 1, inf, -inf, 0, p; matrices: 'fro', 'nuc', 2, -2, 1, -1, inf, -inf; the "
     "subgradient 0 at 0 (and for a zero entry, a zero singular value); "
     "ties split evenly", *(lookup(f) for f in (np.linalg.norm, getattr(np.linalg, "vector_norm", None),
                                                getattr(np.linalg, "matrix_norm", None)) if lookup(f)))
