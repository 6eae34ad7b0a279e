"""Tangent (jvp) rules of the reductions and scans in reductions.py, kept apart to keep both modules short.

A reduction's jvp sums (gradient of a unit cotangent) * t over the reduced
axes, then reshapes to the result, which drops those axes unless keepdims
kept them. max/min-type reductions average the tangents of tied winners, as
their vjps split the cotangent evenly. prod and cumprod stay exact when an
input is zero.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp
from ._tangent import linear, without
from ._util import keep_dims, no_value, reduced_axes, reduced_size, zero
from .reductions import _NO, _average_parts, _ddof, _drop_initial, _nanvar_parts, _others_product, _unsupported_where, _winners_share, logsumexp


# A reduction's jvp sums (gradient of a unit cotangent) * t over the reduced
# axes; reshaping to ``ans`` drops those axes unless keepdims kept them.
def _reduce_to(ans, values, x, axis):
    return np.reshape(np.sum(values, axis=reduced_axes(axis, np.ndim(x)), keepdims=True), np.shape(ans))


def _prod_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "prod")
    others = _others_product(x, reduced_axes(axis, np.ndim(x)))
    return _reduce_to(ans, t * (others if no_value(initial) else others * initial), x, axis)


def _max_jvp(t, ans, x, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "max/min")
    return _reduce_to(ans, t * _winners_share(np.ones(np.shape(ans)), ans, x, axis, keepdims), x, axis)


def _var_jvp(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return _reduce_to(ans, centered * t, x, axis) * (2.0 / (reduced_size(x, axis) - _ddof(ddof, kwargs)))


def _nanvar_jvp(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    centered, dof = _nanvar_parts(x, axis, ddof, kwargs)
    return np.reshape(np.sum(centered * np.where(np.isnan(x), 0.0, t), axis=reduced_axes(axis, np.ndim(x)),
                             keepdims=True) * 2.0 / dof, np.shape(ans))


def _nanprod_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    valid = ~np.isnan(x)
    return _prod_jvp(np.where(valid, t, 0.0), ans, np.where(valid, x, 1), axis, initial=initial, where=where)


def _average_jvp_a(t, ans, a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    value = np.average(t, axis, weights, keepdims=keepdims)
    return (value, zero) if returned else value


def _average_jvp_weights(t, ans, a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    """d/dw of sum(w a) / sum(w): sum(t_w (a - average)) / sum(w); with returned, also d sum(w)."""
    avg = ans[0] if returned else ans
    _, total = _average_parts(a, axis, weights)
    tw = np.broadcast_to(_average_parts(a, axis, t)[0], np.shape(a))
    axes = reduced_axes(axis, np.ndim(a))
    spread = np.sum(tw * (a - keep_dims(avg, a, axis, keepdims)), axis=axes, keepdims=True)
    value = np.reshape(spread / total, np.shape(avg))
    if not returned:
        return value
    return value, np.reshape(np.sum(tw, axis=axes, keepdims=True), np.shape(ans[1]))


def _cumprod_jvp(t, ans, x, axis=None, dtype=None, out=None):
    """ans * cumsum(t / x); when an input is zero, the exact O(n^2) sum of one-factor replacements."""
    x, t = np.asarray(x), np.asarray(t)
    if axis is None:
        return _cumprod_jvp(np.ravel(t), np.ravel(ans), np.ravel(x), 0)
    if np.all(x != 0):
        return ans * np.cumsum(t / x, axis)
    xs, ts = np.moveaxis(x, axis, -1), np.moveaxis(t, axis, -1)
    total = np.zeros(np.broadcast_shapes(xs.shape, ts.shape), dtype=np.result_type(x, t))
    for i in range(xs.shape[-1]):
        replaced = np.array(np.broadcast_to(xs, total.shape))
        replaced[..., i] = ts[..., i]
        total[..., i:] += np.cumprod(replaced, -1)[..., i:]
    return np.moveaxis(total, -1, axis)


def _cumulative_prod_jvp(t, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    axis = 0 if axis is None else axis
    value = _cumprod_jvp(t, _drop_initial(ans, x, axis, include_initial), x, axis)
    if not include_initial:
        return value
    pad = [(0, 0)] * np.ndim(value)
    pad[axis % np.ndim(value)] = (1, 0)
    return np.pad(value, pad)


def _zeros_for_option(value):
    return value if no_value(value) else np.zeros(np.shape(value))


defjvp(np.sum, lambda t, ans, x, *args, **kwargs: np.sum(t, *args, **without(kwargs, "initial")), linear=True)
defjvp(np.mean, linear(np.mean), linear=True)
defjvp(np.prod, _prod_jvp)
for _f in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin):
    defjvp(_f, _max_jvp, linear=True)
defjvp(np.ptp, lambda t, ans, x, axis=None, out=None, keepdims=_NO: _max_jvp(
    t, np.max(x, axis=axis, keepdims=keepdims), x, axis, keepdims=keepdims) - _max_jvp(
    t, np.min(x, axis=axis, keepdims=keepdims), x, axis, keepdims=keepdims), linear=True)
defjvp(np.var, _var_jvp)
defjvp(np.std, lambda t, ans, x, *args, **kwargs: _var_jvp(t, ans, x, *args, **kwargs) / (2.0 * ans))
defjvp(np.nansum, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, **kwargs: np.sum(
    np.where(np.isnan(x), 0.0, t), axis=axis, keepdims=keepdims), linear=True)
defjvp(np.nanmean, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, **kwargs: np.nanmean(
    np.where(np.isnan(x), np.nan, t), axis=axis, keepdims=keepdims), linear=True)
defjvp(np.nanprod, _nanprod_jvp)
defjvp(np.nanvar, _nanvar_jvp)
defjvp(np.nanstd, lambda t, ans, x, *args, **kwargs: _nanvar_jvp(t, ans, x, *args, **kwargs) / (2.0 * ans))
defjvp(np.average, _average_jvp_a, None, _average_jvp_weights)
defjvp(np.cumsum, linear(np.cumsum), linear=True)
defjvp(np.cumprod, _cumprod_jvp)
if hasattr(np, "cumulative_sum"):
    defjvp(np.cumulative_sum, linear(np.cumulative_sum), linear=True)
    defjvp(np.cumulative_prod, _cumulative_prod_jvp)
defjvp(logsumexp, lambda t, ans, x, axis=None, keepdims=False: _reduce_to(
    ans, t * np.exp(x - keep_dims(ans, x, axis, keepdims)), x, axis))
defjvp(np.diff, lambda t, ans, a, n=1, axis=-1, prepend=_NO, append=_NO: np.diff(
    t, n, axis, _zeros_for_option(prepend), _zeros_for_option(append)), linear=True)
