"""Order statistics, covariance and nan-scans: median, quantile, percentile (and their nan forms),
partition, cov, corrcoef, nancumsum, nancumprod.

A quantile is a weighted sum of two neighbouring order statistics, with
weights fixed by the number of values, q and the method: the derivative
sends the cotangent to the two values that were interpolated (through the
sorting permutation). NumPy's methods all interpolate between neighbours,
so the weights are read off the quantile of 0, 1, ..., n-1 itself (the
virtual index), for every method. Where values tie, the function has a kink;
the tied values share the cotangent evenly. NaN entries of the nan forms get
no gradient; a NaN reaching the plain forms makes the result NaN, as in NumPy.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, defvjp, lookup
from ..errors import InvalidArgument
from ._util import note, reduced_axes, zero
from .cumulative import _cumprod_dx, _cumprod_jvp, _cumsum_dx

_NO = np._NoValue


# ---- quantiles ---------------------------------------------------------------------------------
def _to_rows(x, axis):
    """``x`` with the reduced axes moved last and flattened into one: shape (*kept, n)."""
    x = np.asarray(x)
    axes = reduced_axes(axis, x.ndim)
    kept = [i for i in range(x.ndim) if i not in axes]
    moved = np.transpose(x, kept + list(axes))
    return np.reshape(moved, [x.shape[i] for i in kept] + [-1]), kept, axes


def _from_rows(rows, x, kept, axes):
    moved_shape = [np.shape(x)[i] for i in kept] + [np.shape(x)[i] for i in axes]
    return np.transpose(np.reshape(rows, moved_shape), np.argsort(kept + list(axes)))


def _virtual_index(count, q, method):
    """Where each quantile q falls among ``count`` sorted values: lower index and fraction."""
    if count == 0:
        return np.zeros(np.shape(q), dtype=np.intp), np.zeros(np.shape(q))
    h = np.quantile(np.arange(count, dtype=np.float64), q, method=method)
    low = np.clip(np.floor(h), 0, count - 1).astype(np.intp)
    return low, np.clip(h - low, 0.0, 1.0)


def _quantile_setup(x, q, axis, method, weights, nan):
    if weights is not None:
        raise InvalidArgument("the gradient of a quantile with weights= is not supported")
    rows, kept, axes = _to_rows(x, axis)
    order = np.argsort(rows, axis=-1, kind="stable")  # NaN sort last
    counts = np.sum(~np.isnan(rows), axis=-1) if nan else np.full(rows.shape[:-1], rows.shape[-1])
    q = np.asarray(q, dtype=np.float64)
    low = np.zeros(np.shape(q) + rows.shape[:-1], dtype=np.intp)
    frac = np.zeros(low.shape)
    for count in np.unique(counts):
        low_c, frac_c = _virtual_index(int(count), q, method)
        where = np.broadcast_to(counts == count, low.shape)
        low = np.where(where, np.reshape(low_c, np.shape(q) + (1,) * counts.ndim), low)
        frac = np.where(where, np.reshape(frac_c, np.shape(q) + (1,) * counts.ndim), frac)
    high = np.minimum(low + 1, np.maximum(np.broadcast_to(counts, low.shape) - 1, 0))
    return rows, kept, axes, order, low, frac, high


def _tie_shared(sorted_rows, weights):
    """``weights`` (in sorted order) averaged over runs of equal values, which share them evenly."""
    starts = np.concatenate([np.ones(sorted_rows.shape[:-1] + (1,), bool),
                             sorted_rows[..., 1:] != sorted_rows[..., :-1]], axis=-1)
    if np.all(starts):
        return weights
    group = np.cumsum(starts, axis=-1) - 1
    flat = group + np.arange(int(np.prod(group.shape[:-1]))).reshape(group.shape[:-1] + (1,)) * group.shape[-1]
    size = group.size
    sums = np.bincount(flat.ravel(), weights.ravel(), minlength=size)
    counts = np.bincount(flat.ravel(), minlength=size)
    return np.reshape(sums[flat.ravel()] / counts[flat.ravel()], weights.shape).astype(weights.dtype, copy=False)


def _quantile_core_vjp(g, x, q, axis, method, keepdims, weights, nan):
    rows, kept, axes, order, low, frac, high = _quantile_setup(x, q, axis, method, weights, nan)
    g = np.reshape(np.asarray(g), np.shape(low))
    dtype = np.result_type(x, g)
    sorted_weights = np.zeros(rows.shape, dtype=dtype)
    q_count = int(np.prod(np.shape(q), dtype=np.int64))
    for i in range(q_count):  # each quantile puts its cotangent on two order statistics
        index = np.unravel_index(i, np.shape(q))
        g_i, low_i, high_i, frac_i = g[index], low[index], high[index], frac[index]
        np.put_along_axis(sorted_weights, low_i[..., None],
                          np.take_along_axis(sorted_weights, low_i[..., None], -1) + (g_i * (1 - frac_i))[..., None], -1)
        np.put_along_axis(sorted_weights, high_i[..., None],
                          np.take_along_axis(sorted_weights, high_i[..., None], -1) + (g_i * frac_i)[..., None], -1)
    sorted_rows = np.take_along_axis(rows, order, -1)
    sorted_weights = _tie_shared(sorted_rows, sorted_weights)
    if nan:
        sorted_weights = np.where(np.isnan(sorted_rows), 0.0, sorted_weights).astype(dtype, copy=False)
    grad_rows = np.zeros(rows.shape, dtype=dtype)
    np.put_along_axis(grad_rows, order, sorted_weights, -1)
    return _from_rows(grad_rows, x, kept, axes)


def _quantile_core_jvp(t, ans, x, q, axis, method, weights, nan):
    rows, kept, axes, order, low, frac, high = _quantile_setup(x, q, axis, method, weights, nan)
    t_rows = np.broadcast_to(_to_rows(np.broadcast_to(t, np.shape(x)), axis)[0], rows.shape)
    # where values tie, their order statistics move as the sorted tangents (the directional derivative)
    t_sorted = np.take_along_axis(t_rows, np.lexsort((t_rows, rows), axis=-1), -1)
    t_low = np.take_along_axis(t_sorted, np.moveaxis(low, range(np.ndim(q)), range(-np.ndim(q), 0)).reshape(
        rows.shape[:-1] + (-1,)), -1)
    t_high = np.take_along_axis(t_sorted, np.moveaxis(high, range(np.ndim(q)), range(-np.ndim(q), 0)).reshape(
        rows.shape[:-1] + (-1,)), -1)
    f = np.moveaxis(frac, range(np.ndim(q)), range(-np.ndim(q), 0)).reshape(rows.shape[:-1] + (-1,))
    value = (1 - f) * t_low + f * t_high
    value = np.moveaxis(np.reshape(value, rows.shape[:-1] + np.shape(q)), range(-np.ndim(q), 0), range(np.ndim(q)))
    return np.reshape(value, np.shape(ans)).astype(np.result_type(x, t), copy=False)


def _fraction(q, scale):
    return np.true_divide(q, scale) if scale != 1 else q


def _quantile_family(scale, nan, fixed_q=None):
    """The vjp and jvp of quantile (scale 1), percentile (100) or median (fixed_q=0.5), plain or nan."""
    if fixed_q is None:
        def vjp(g, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=_NO, *,
                weights=None):
            return _quantile_core_vjp(g, a, _fraction(q, scale), axis, method, keepdims, weights, nan)

        def jvp(t, ans, a, q, axis=None, out=None, overwrite_input=False, method="linear", keepdims=_NO, *,
                weights=None):
            return _quantile_core_jvp(t, ans, a, _fraction(q, scale), axis, method, weights, nan)
        return vjp, jvp

    def median_vjp(g, ans, a, axis=None, out=None, overwrite_input=False, keepdims=_NO):
        return _quantile_core_vjp(g, a, fixed_q, axis, "linear", keepdims, None, nan)

    def median_jvp(t, ans, a, axis=None, out=None, overwrite_input=False, keepdims=_NO):
        return _quantile_core_jvp(t, ans, a, fixed_q, axis, "linear", None, nan)
    return median_vjp, median_jvp


for _func, _scale, _nan, _q in [(np.quantile, 1, False, None), (np.percentile, 100, False, None),
                                (np.median, 1, False, 0.5), (np.nanquantile, 1, True, None),
                                (np.nanpercentile, 100, True, None), (np.nanmedian, 1, True, 0.5)]:
    _vjp, _jvp = _quantile_family(_scale, _nan, _q)
    _vjp.__name__ = _jvp.__name__ = _func.__name__
    # (q gets no vjp at all, rather than None: a differentiable q is then refused when compiled)
    defvjp(_func, _vjp)
    defjvp(_func, _jvp, piecewise_linear=True)


# ---- partition -----------------------------------------------------------------------------------
def _partition_source(a, ans, axis, t=None):
    """For each output position, the input position it holds (matched through both sorting orders).
    Given a tangent ``t``, tied inputs are ordered by it: the k-th order statistic of tied values moves
    as the k-th smallest of their tangents."""
    source = np.empty(np.shape(a), dtype=np.intp)
    order = np.argsort(a, axis=axis, kind="stable") if t is None else np.moveaxis(
        np.lexsort((np.moveaxis(t, axis, -1), np.moveaxis(a, axis, -1)), axis=-1), -1, axis)
    np.put_along_axis(source, np.argsort(ans, axis=axis, kind="stable"), order, axis=axis)
    return source


def _partition_da(g, ans, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:
        return np.reshape(_partition_da(g, ans, np.ravel(a), kth, 0), np.shape(a))
    grad = np.zeros(np.shape(a), dtype=np.result_type(a, g))
    np.put_along_axis(grad, _partition_source(a, ans, axis), g, axis=axis)
    return grad


def _partition_jvp(t, ans, a, kth, axis=-1, kind="introselect", order=None):
    if axis is None:
        return _partition_jvp(np.ravel(np.broadcast_to(t, np.shape(a))), ans, np.ravel(a), kth, 0)
    t = np.broadcast_to(t, np.shape(a))
    return np.take_along_axis(t, _partition_source(a, ans, axis, t), axis=axis)


defvjp(np.partition, _partition_da)
defjvp(np.partition, _partition_jvp, piecewise_linear=True)


# ---- cov and corrcoef ----------------------------------------------------------------------------
def _variables(m, y, rowvar):
    """The data as (variables, observations), as np.cov stacks it; and how to undo that for m and y."""
    def rows_of(v):
        v = np.atleast_2d(np.asarray(v, dtype=np.result_type(v, 1.0)))
        return v if rowvar or v.shape[0] == 1 else v.T
    parts = [rows_of(m)] + ([] if y is None else [rows_of(y)])
    return np.concatenate(parts, axis=0), [p.shape[0] for p in parts]


def _back_to(grad_rows, like, rowvar):
    like_rows = np.atleast_2d(np.asarray(like))
    transposed = not rowvar and like_rows.shape[0] != 1
    return np.reshape(grad_rows.T if transposed else grad_rows, np.shape(like))


def _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights):
    if fweights is not None or aweights is not None:
        raise InvalidArgument("the gradient of np.cov with fweights= or aweights= is not supported")
    x, sizes = _variables(m, y, rowvar)
    ddof = (0 if bias else 1) if ddof is None else ddof
    centered = x - np.mean(x, axis=1, keepdims=True)
    return centered, sizes, x.shape[1] - ddof


def _cov_grad(g, m, y, rowvar, bias, ddof, fweights, aweights, k):
    centered, sizes, scale = _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights)
    g = np.reshape(np.asarray(g, dtype=np.result_type(g, centered)), (centered.shape[0],) * 2)
    rows = (g + g.T) @ centered / scale  # rows of mean zero already: centering changes nothing
    start = sum(sizes[:k])
    # np.cov computes in float64 at least; the contribution keeps its argument's dtype
    return _back_to(rows[start:start + sizes[k]], (m, y)[k], rowvar).astype(np.result_type((m, y)[k], 1.0),
                                                                             copy=False)


def _cov_tangent(t_m, t_y, m, y, rowvar, bias, ddof, fweights, aweights):
    centered, sizes, scale = _cov_parts(m, y, rowvar, bias, ddof, fweights, aweights)
    t_m = np.zeros(np.shape(m)) if t_m is zero else t_m
    t_y = None if y is None else (np.zeros(np.shape(y)) if t_y is zero else t_y)
    dx, _ = _variables(t_m, t_y, rowvar)
    dc = dx - np.mean(dx, axis=1, keepdims=True)
    product = dc @ centered.T
    return (product + product.T) / scale


def _cov_vjp(k):
    def vjp(g, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
        return _cov_grad(g, m, y, rowvar, bias, ddof, fweights, aweights, k)
    return vjp


def _cov_jvp(k):
    def jvp(t, ans, m, y=None, rowvar=True, bias=False, ddof=None, fweights=None, aweights=None, *, dtype=None):
        tangents = (t, zero) if k == 0 else (zero, t)
        return np.reshape(_cov_tangent(*tangents, m, y, rowvar, bias, ddof, fweights, aweights), np.shape(ans))
    return jvp


defvjp(np.cov, _cov_vjp(0), _cov_vjp(1))
defjvp(np.cov, _cov_jvp(0), _cov_jvp(1))


def _corrcoef_vjp(k):
    """R = C / (s sᵀ), s = sqrt(diag C): Ḡ/(s sᵀ) minus, on C's diagonal, Σ_j (Ḡ∘R + (Ḡ∘R)ᵀ)_ij / (2 C_ii)."""
    def vjp(g, ans, x, y=None, rowvar=True, *, dtype=None):
        c = np.atleast_2d(np.cov(x, y, rowvar))
        r = np.atleast_2d(ans)
        g = np.reshape(np.asarray(g, dtype=np.result_type(g, c)), r.shape)
        d = np.diagonal(c)
        s = np.sqrt(d)
        gr = g * r
        g_c = g / np.outer(s, s) - np.diag((np.sum(gr, axis=1) + np.sum(gr, axis=0)) / (2 * d))
        return _cov_grad(g_c, x, y, rowvar, False, None, None, None, k)
    return vjp


def _corrcoef_jvp(k):
    def jvp(t, ans, x, y=None, rowvar=True, *, dtype=None):
        c = np.atleast_2d(np.cov(x, y, rowvar))
        r = np.atleast_2d(ans)
        tangents = (t, zero) if k == 0 else (zero, t)
        dc = np.atleast_2d(_cov_tangent(*tangents, x, y, rowvar, False, None, None, None))
        d = np.diagonal(c)
        ratio = np.diagonal(dc) / d
        dr = dc / np.outer(np.sqrt(d), np.sqrt(d)) - 0.5 * r * (ratio[:, None] + ratio[None, :])
        return np.reshape(dr, np.shape(ans))
    return jvp


defvjp(np.corrcoef, _corrcoef_vjp(0), _corrcoef_vjp(1))
defjvp(np.corrcoef, _corrcoef_jvp(0), _corrcoef_jvp(1))


# ---- nan-scans ---------------------------------------------------------------------------------
def _nancumsum_dx(g, ans, a, axis=None, dtype=None, out=None):
    return np.where(np.isnan(a), 0.0, _cumsum_dx(g, None, a, axis)).astype(np.result_type(a, g), copy=False)


def _nancumprod_dx(g, ans, a, axis=None, dtype=None, out=None):
    filled = np.where(np.isnan(a), 1.0, a)
    return np.where(np.isnan(a), 0.0, _cumprod_dx(g, ans, filled, axis)).astype(np.result_type(a, g), copy=False)


def _nancumprod_jvp(t, ans, a, axis=None, dtype=None, out=None):
    return _cumprod_jvp(np.where(np.isnan(a), 0.0, t), ans, np.where(np.isnan(a), 1.0, a), axis)


defvjp(np.nancumsum, _nancumsum_dx)
defjvp(np.nancumsum, lambda t, ans, a, axis=None, dtype=None, out=None: np.cumsum(
    np.where(np.isnan(a), 0.0, t), axis), piecewise_linear=True)
defvjp(np.nancumprod, _nancumprod_dx)
defjvp(np.nancumprod, _nancumprod_jvp)

_QUANTILES = [lookup(f) for f in (np.quantile, np.percentile, np.median, np.nanquantile, np.nanpercentile,
                                  np.nanmedian)]
note("every method (the two order statistics each quantile interpolates get the cotangent); tied values share it "
     "evenly; q has no gradient; weights= refused", *_QUANTILES)
note("the values move with the permutation (ties share nothing: each output takes one input)", lookup(np.partition))
note("m and y; fweights=/aweights= refused", lookup(np.cov))
note("x and y", lookup(np.corrcoef))
note("NaN entries get no gradient", lookup(np.nancumsum), lookup(np.nancumprod))
del _func, _scale, _nan, _q, _vjp, _jvp
