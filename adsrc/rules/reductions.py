"""Reductions and scans: sum, mean, prod, max/min, var/std, cumsum/cumprod, logsumexp.

Every reduction takes ``axis`` as None, an int or a tuple, and ``keepdims``.
max and min split the cotangent evenly between tied maxima (so ``max`` of a
constant vector sends ``g / n`` to each element). prod and cumprod are exact
when some inputs are zero (they never divide by an input that is zero).

sum and mean declare a batched ``fuse`` form: k contributions to the same input
are one broadcast of the summed cotangents.

Each reduction's jvp is registered beside its vjp. A reduction's jvp sums
(gradient of a unit cotangent) * t over the reduced axes, then reshapes to the
result, which drops those axes unless keepdims kept them. max/min-type
reductions average the tangents of tied winners, as their vjps split the
cotangent evenly. prod and cumprod stay exact when an input is zero.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument
from .registry import defjvp, deflinear, defmethod, defvjp, lookup
from ._tangent import without
from .templates import arrays, deftemplate
from ._util import (as_array, broadcast_like, cast_like, fuse_linear, is_zero, keep_dims, no_value, note, reduced_axes, reduced_size, replace_zero,
                    zero)

__all__ = ["logsumexp"]

_NO = np._NoValue


def _unsupported_where(where, name):
    if not no_value(where):
        raise NotImplementedError(f"the gradient of {name} with where= is not supported")


def _sum_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    if axis is None and where is _NO and type(x) is np.ndarray:
        return np.broadcast_to(g, x.shape)  # the common call, np.sum(x): no reshaping needed
    spread = broadcast_like(keep_dims(g, x, axis, keepdims), x)
    return spread if no_value(where) else spread * where


def _mean_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, *, where=_NO):
    if axis is None and where is _NO and type(x) is np.ndarray and x.size:
        return np.broadcast_to(g / x.size, x.shape)  # np.mean(x)
    spread = keep_dims(g, x, axis, keepdims)
    if no_value(where):
        return broadcast_like(spread / max(reduced_size(x, axis), 1), x)
    mask = np.broadcast_to(where, np.shape(x))
    count = np.sum(mask, axis=reduced_axes(axis, np.ndim(x)), keepdims=True)
    return spread * mask / np.maximum(count, 1).astype(np.result_type(x, g))


def _others_product(x, axes):
    """For each element, the product of the other elements in its reduction group."""
    x = as_array(x)
    keep = [i for i in range(x.ndim) if i not in axes]
    order = keep + list(axes)
    moved = np.transpose(x, order)
    flat = np.reshape(moved, moved.shape[: len(keep)] + (-1,))
    ones = np.ones_like(flat[..., :1])
    left = np.cumprod(np.concatenate([ones, flat[..., :-1]], -1), -1)
    right = np.flip(np.cumprod(np.concatenate([ones, np.flip(flat, -1)[..., :-1]], -1), -1), -1)
    return np.transpose(np.reshape(left * right, moved.shape), np.argsort(order))


def _prod_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "prod")
    others = _others_product(x, reduced_axes(axis, np.ndim(x)))
    if not no_value(initial):
        others = others * initial
    return keep_dims(g, x, axis, keepdims) * others


def _winners_share(g, ans, x, axis, keepdims, extra_mask=None):
    """g split evenly among the elements equal to the reduction's result."""
    x = as_array(x)
    wins = x == keep_dims(ans, x, axis, keepdims)
    if extra_mask is not None:
        wins = wins & extra_mask
    dtype = np.result_type(x, g)
    count = np.sum(wins, axis=reduced_axes(axis, x.ndim), keepdims=True)
    share = (keep_dims(g, x, axis, keepdims) * wins).astype(dtype, copy=False)
    return share / np.maximum(count, 1).astype(dtype)


def _max_dx(g, ans, x, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "max/min")
    return _winners_share(g, ans, x, axis, keepdims)


def _ptp_dx(g, ans, x, axis=None, out=None, keepdims=_NO):
    g = keep_dims(g, x, axis, keepdims)
    high = _winners_share(g, np.max(x, axis=axis, keepdims=True), x, axis, True)
    low = _winners_share(g, np.min(x, axis=axis, keepdims=True), x, axis, True)
    return high - low


def _ddof(ddof, kwargs):
    correction = kwargs.get("correction", _NO)
    return ddof if no_value(correction) else correction


def _per_dof(numerator, x, axis, ddof, kwargs):
    """``numerator / (n - ddof)`` as a Python float, IEEE-style (inf, not ZeroDivisionError) when
    ``n == ddof``, where NumPy's value is inf or NaN too."""
    dof = reduced_size(x, axis) - _ddof(ddof, kwargs)
    return numerator / dof if dof else numerator * float("inf")


def _var_dx(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    _unsupported_where(kwargs.get("where"), "var")
    centered = x - np.mean(x, axis=axis, keepdims=True)
    return keep_dims(g, x, axis, keepdims) * centered * _per_dof(2.0, x, axis, ddof, kwargs)


def _std_dx(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    """centered / ((n - ddof) std); at zero spread (std == 0) the subgradient 0, as the jvp."""
    _unsupported_where(kwargs.get("where"), "std")
    centered = x - np.mean(x, axis=axis, keepdims=True)
    scale = keep_dims(replace_zero(ans, np.inf), x, axis, keepdims)
    return keep_dims(g, x, axis, keepdims) * centered / scale * _per_dof(1.0, x, axis, ddof, kwargs)


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
    return _reduce_to(ans, centered * t, x, axis) * _per_dof(2.0, x, axis, ddof, kwargs)


def _std_jvp(t, ans, x, *args, **kwargs):
    """var's tangent / (2 std); at zero spread (std == 0) the subgradient 0, as the vjp (not 0 / 0)."""
    return _var_jvp(t, ans, x, *args, **kwargs) / (2.0 * replace_zero(ans, np.inf))


defvjp(np.sum, _sum_dx, fuse={0: fuse_linear(_sum_dx)})
# The cotangent of a whole sum, spread over x: np.full's values are broadcast_to's (in writable memory).
deftemplate(lookup(np.sum), 0, "np.full(x.shape, g)", lambda k: arrays({"x": None})(k) and k["g"].shape is None)
defjvp(np.sum, lambda t, ans, x, *args, **kwargs: np.sum(t, *args, **without(kwargs, "initial")),
       piecewise_linear=True)
deflinear(np.mean, _mean_dx, fuse={0: fuse_linear(_mean_dx)})
defvjp(np.prod, _prod_dx)
defjvp(np.prod, _prod_jvp)
for _f in (np.max, np.min, np.amax, np.amin):
    defvjp(_f, _max_dx)
    defjvp(_f, _max_jvp, piecewise_linear=True)
defvjp(np.ptp, _ptp_dx)
defjvp(np.ptp, lambda t, ans, x, axis=None, out=None, keepdims=_NO: _max_jvp(
    t, np.max(x, axis=axis, keepdims=keepdims), x, axis, keepdims=keepdims) - _max_jvp(
    t, np.min(x, axis=axis, keepdims=keepdims), x, axis, keepdims=keepdims), piecewise_linear=True)
defvjp(np.var, _var_dx)
defjvp(np.var, _var_jvp)
defvjp(np.std, _std_dx)
defjvp(np.std, _std_jvp)


# NaN-ignoring variants: NaN entries get no gradient.
def _nansum_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "nansum")
    return keep_dims(g, x, axis, keepdims) * ~np.isnan(x)


def _nanmean_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, *, where=_NO):
    _unsupported_where(where, "nanmean")
    valid = ~np.isnan(x)
    count = np.sum(valid, axis=reduced_axes(axis, np.ndim(x)), keepdims=True)
    return keep_dims(g, x, axis, keepdims) * valid / np.maximum(count, 1).astype(np.result_type(x, g))


def _nanmax_dx(g, ans, x, axis=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    _unsupported_where(where, "nanmax/nanmin")
    return _winners_share(g, ans, x, axis, keepdims)


def _nanprod_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    valid = ~np.isnan(x)
    return _prod_dx(g, None, np.where(valid, x, 1), axis, keepdims=keepdims, initial=initial, where=where) * valid


def _nanvar_parts(x, axis, ddof, kwargs):
    valid = ~np.isnan(x)
    centered = np.where(valid, x - np.nanmean(x, axis=axis, keepdims=True), 0)
    count = np.sum(valid, axis=reduced_axes(axis, np.ndim(x)), keepdims=True)
    return centered, (count - _ddof(ddof, kwargs)).astype(np.result_type(x, 1.0))


def _nanvar_dx(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    centered, dof = _nanvar_parts(x, axis, ddof, kwargs)
    return keep_dims(g, x, axis, keepdims) * centered * 2.0 / dof


def _nanstd_dx(g, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    centered, dof = _nanvar_parts(x, axis, ddof, kwargs)
    return keep_dims(g, x, axis, keepdims) * centered / (dof * keep_dims(replace_zero(ans, np.inf), x, axis, keepdims))


def _nanvar_jvp(t, ans, x, axis=None, dtype=None, out=None, ddof=0, keepdims=_NO, **kwargs):
    centered, dof = _nanvar_parts(x, axis, ddof, kwargs)
    return np.reshape(np.sum(centered * np.where(np.isnan(x), 0.0, t), axis=reduced_axes(axis, np.ndim(x)),
                             keepdims=True) * 2.0 / dof, np.shape(ans))


def _nanprod_jvp(t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, initial=_NO, where=_NO):
    valid = ~np.isnan(x)
    return _prod_jvp(np.where(valid, t, 0.0), ans, np.where(valid, x, 1), axis, initial=initial, where=where)


defvjp(np.nansum, _nansum_dx)
defjvp(np.nansum, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, **kwargs: np.sum(
    np.where(np.isnan(x), 0.0, t), axis=axis, keepdims=keepdims), piecewise_linear=True)
defvjp(np.nanmean, _nanmean_dx)
defjvp(np.nanmean, lambda t, ans, x, axis=None, dtype=None, out=None, keepdims=_NO, **kwargs: np.nanmean(
    np.where(np.isnan(x), np.nan, t), axis=axis, keepdims=keepdims), piecewise_linear=True)
defvjp(np.nanmax, _nanmax_dx)
defjvp(np.nanmax, _max_jvp, piecewise_linear=True)
defvjp(np.nanmin, _nanmax_dx)
defjvp(np.nanmin, _max_jvp, piecewise_linear=True)
defvjp(np.nanprod, _nanprod_dx)
defjvp(np.nanprod, _nanprod_jvp)
defvjp(np.nanvar, _nanvar_dx)
defjvp(np.nanvar, _nanvar_jvp)
defvjp(np.nanstd, _nanstd_dx)
defjvp(np.nanstd, lambda t, ans, x, *args, **kwargs: _nanvar_jvp(t, ans, x, *args, **kwargs) / (
    2.0 * replace_zero(ans, np.inf)))


def _average_parts(a, axis, weights):
    """Weights shaped to broadcast against ``a``, and their sum along ``axis``."""
    a = as_array(a)
    w = as_array(weights)
    if w.shape != a.shape:  # 1-D weights along one axis
        w = np.reshape(w, [n if i == axis % a.ndim else 1 for i, n in enumerate(a.shape)])
    return w, np.sum(np.broadcast_to(w, a.shape), axis=axis, keepdims=True)


def _average_da(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    if returned:
        g = g[0]
        if is_zero(g):
            return zero
    if weights is None:
        return _mean_dx(g, None, a, axis, keepdims=keepdims)
    w, total = _average_parts(a, axis, weights)
    return keep_dims(g, a, axis, keepdims) * w / total


def _average_dweights(g, ans, a, axis=None, weights=None, returned=False, *, keepdims=_NO):
    g_sum = 0.0
    if returned:
        (g, g_sum), ans = g, ans[0]
        g_sum = 0.0 if is_zero(g_sum) else keep_dims(g_sum, a, axis, keepdims)
        g = np.zeros(np.shape(ans)) if is_zero(g) else g
    w, total = _average_parts(a, axis, weights)
    full = keep_dims(g, a, axis, keepdims) * (a - keep_dims(ans, a, axis, keepdims)) / total + g_sum
    full = np.broadcast_to(full, np.shape(a))
    if np.shape(weights) == np.shape(a):
        return full
    return np.sum(full, axis=tuple(i for i in range(np.ndim(a)) if i != axis % np.ndim(a)))


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


defvjp(np.average, _average_da, None, _average_dweights)
defjvp(np.average, _average_jvp_a, None, _average_jvp_weights)


# Scans.
def _reverse_cumsum(g, axis):
    return np.flip(np.cumsum(np.flip(g, axis), axis), axis)


def _cumsum_dx(g, ans, x, axis=None, dtype=None, out=None):
    if axis is None:
        return np.reshape(_reverse_cumsum(np.ravel(g), 0), np.shape(x))
    return _reverse_cumsum(g, axis)


def _cumprod_dx(g, ans, x, axis=None, dtype=None, out=None):
    """sum_{j>=i} g_j ans_j / x_i; when an input is zero, an exact O(n^2) fallback."""
    x = as_array(x)
    if axis is None:
        return np.reshape(_cumprod_dx(np.ravel(g), np.ravel(ans), np.ravel(x), 0), x.shape)
    if np.all(x != 0):
        return _reverse_cumsum(g * ans, axis) / x
    xs, gs = np.moveaxis(x, axis, -1), np.moveaxis(as_array(g), axis, -1)
    out = np.zeros(xs.shape, dtype=np.result_type(x, g))
    for i in range(xs.shape[-1]):
        without = xs.copy()
        without[..., i] = 1
        out[..., i] = np.sum((gs * np.cumprod(without, -1))[..., i:], -1)
    return np.moveaxis(out, -1, axis)


def _drop_initial(g, x, axis, include_initial):
    return np.delete(g, 0, axis=0 if axis is None else axis) if include_initial else g


def _cumulative_sum_dx(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    return _cumsum_dx(_drop_initial(g, x, axis, include_initial), None, x, 0 if axis is None else axis)


def _cumulative_prod_dx(g, ans, x, *, axis=None, dtype=None, out=None, include_initial=False):
    axis = 0 if axis is None else axis
    g, ans = (_drop_initial(v, x, axis, include_initial) for v in (g, ans))
    return _cumprod_dx(g, ans, x, axis)


def _cumprod_jvp(t, ans, x, axis=None, dtype=None, out=None):
    """ans * cumsum(t / x); when an input is zero, the exact O(n^2) sum of one-factor replacements."""
    x, t = as_array(x), as_array(t)
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


deflinear(np.cumsum, _cumsum_dx)
defvjp(np.cumprod, _cumprod_dx)
defjvp(np.cumprod, _cumprod_jvp)
if hasattr(np, "cumulative_sum"):
    deflinear(np.cumulative_sum, _cumulative_sum_dx)
    defvjp(np.cumulative_prod, _cumulative_prod_dx)
    defjvp(np.cumulative_prod, _cumulative_prod_jvp)


def logsumexp(x, axis=None, keepdims=False):
    """``log(sum(exp(x), axis))`` without overflow: the maximum is factored out first.

    Differentiable with adsrc (its gradient is the softmax of ``x``).
    """
    x = as_array(x)
    shift = np.max(x, axis=axis, keepdims=True) if x.size else np.zeros((1,) * x.ndim, x.dtype)
    shift = np.where(np.isfinite(shift), shift, 0)
    out = np.log(np.sum(np.exp(x - shift), axis=axis, keepdims=True)) + shift
    if keepdims:
        return out
    out = np.squeeze(out, axis=reduced_axes(axis, x.ndim))
    return out[()] if out.ndim == 0 else out


def _logsumexp_dx(g, ans, x, axis=None, keepdims=False):
    return keep_dims(g, x, axis, keepdims) * np.exp(x - keep_dims(ans, x, axis, keepdims))


defvjp(logsumexp, _logsumexp_dx)
defjvp(logsumexp, lambda t, ans, x, axis=None, keepdims=False: _reduce_to(
    ans, t * np.exp(x - keep_dims(ans, x, axis, keepdims)), x, axis))

for _name, _f in [("sum", np.sum), ("mean", np.mean), ("prod", np.prod), ("max", np.max), ("min", np.min),
                  ("std", np.std), ("var", np.var), ("cumsum", np.cumsum), ("cumprod", np.cumprod)]:
    defmethod(_name, _f)


def _diff_da(g, ans, a, n=1, axis=-1, prepend=_NO, append=_NO):
    """Apply the adjoint of one forward difference n times, then drop prepend/append."""
    g = as_array(g)
    for _ in range(n):
        pad = [(0, 0)] * g.ndim
        pad[axis % g.ndim] = (1, 0)
        before = np.pad(g, pad)
        pad[axis % g.ndim] = (0, 1)
        g = before - np.pad(g, pad)
    axis = axis % g.ndim
    start = 0 if no_value(prepend) else (np.shape(prepend)[axis] if np.ndim(prepend) else 1)
    index = [slice(None)] * g.ndim
    index[axis] = slice(start, start + np.shape(a)[axis])
    return g[tuple(index)]


def _zeros_for_option(value):
    return value if no_value(value) else np.zeros(np.shape(value))


defvjp(np.diff, _diff_da)
defjvp(np.diff, lambda t, ans, a, n=1, axis=-1, prepend=_NO, append=_NO: np.diff(
    t, n, axis, _zeros_for_option(prepend), _zeros_for_option(append)), piecewise_linear=True)

note("ties split g evenly among the maxima/minima",
     *(lookup(f) for f in (np.max, np.min, np.amax, np.amin, np.nanmax, np.nanmin, np.ptp)))
note("exact with zeros in the input (products of the others, no division)", lookup(np.prod), lookup(np.nanprod))
note("exact with zeros (an O(n^2) path is used when an input is 0)", lookup(np.cumprod))
note("ddof and correction=", lookup(np.var), lookup(np.nanvar))
note("ddof and correction=; at zero spread the subgradient 0 (in both modes)", lookup(np.std), lookup(np.nanstd))
note("NaN entries get no gradient", lookup(np.nansum), lookup(np.nanmean))
note("weights, when passed positionally, are differentiable; returned=True takes a tuple cotangent",
     lookup(np.average))
note("a public function: adsrc.rules.reductions.logsumexp(x, axis=None, keepdims=False)", lookup(logsumexp))
note("where= is supported", lookup(np.sum), lookup(np.mean))
note("n, prepend and append", lookup(np.diff))


# ---- counting: bincount and histogram ------------------------------------------------------
# Their counts are piecewise constant in the data, but a weighted count is linear in the
# weights, and a histogram's edges (and a density's bin widths) move with the data's extremes,
# the bins given as edges, and the range.
def _inexact(value):
    return np.issubdtype(np.result_type(value), np.inexact)


def _bincount_dweights(g, ans, x, weights=None, minlength=0):
    """bincount(x, weights)[k] sums the weights of the x_i == k: each weight gets g[x_i]."""
    if weights is None or not _inexact(ans):
        return zero
    return np.reshape(np.asarray(g)[np.asarray(x)], np.shape(weights))


deflinear(np.bincount, None, _bincount_dweights)


def _histogram_layout(a, bins, range_, weights):
    """The edges of np.histogram(a, bins, range, weights=weights), each element's bin (-1: outside),
    the (weighted) counts, and where the edges came from: the bins array, the range, or min/max of a."""
    a = np.ravel(a)
    edges = np.histogram_bin_edges(a, bins, range_, None if weights is None else np.ravel(weights))
    which = np.searchsorted(edges, a, side="right") - 1
    which[a == edges[-1]] = len(edges) - 2  # the last bin is closed
    which[(a < edges[0]) | (a > edges[-1]) | np.isnan(a)] = -1
    inside = which >= 0
    w = np.ones(a.shape) if weights is None else np.ravel(weights)
    counts = np.bincount(which[inside], w[inside], minlength=len(edges) - 1)
    source = "bins" if np.ndim(bins) == 1 else ("range" if range_ is not None else "data")
    return edges, which, inside, counts, source


def _edge_weights(edges):
    """t with edges = lo (1 - t) + hi t, for edges spaced evenly from lo to hi."""
    n = len(edges) - 1
    return np.arange(n + 1) / max(n, 1)


def _extreme_shares(a):
    """d min(a)/da and d max(a)/da, ties sharing evenly (as np.min/np.max); as float arrays shaped like a."""
    a = np.asarray(a, dtype=float)
    if a.size == 0:
        return np.zeros(a.shape), np.zeros(a.shape)
    low, high = a == np.min(a), a == np.max(a)
    return low / np.sum(low), high / np.sum(high)


def _histogram_vjp(position):
    """The vjp of np.histogram's argument at ``position``: a (0), bins (1), range (2) or weights (4)."""

    def vjp(g, ans, a, bins=10, range=None, density=None, weights=None):
        g_hist, g_edges = g
        hist, edges_out = ans
        edges, which, inside, counts, source = _histogram_layout(a, bins, range, weights)
        g_hist = 0.0 * hist if is_zero(g_hist) or not _inexact(hist) else np.asarray(g_hist, dtype=float)
        g_edges = np.zeros(edges.shape) if is_zero(g_edges) else np.asarray(g_edges, dtype=float)
        if density:
            total, widths = np.sum(counts), np.diff(edges)
            g_counts = g_hist / (total * widths) - np.sum(g_hist * hist) / total
            g_widths = -g_hist * hist / widths
            g_edges = g_edges + np.concatenate([[0.0], g_widths]) - np.concatenate([g_widths, [0.0]])
        else:
            g_counts = g_hist
        if position == 4:
            if weights is None:
                return zero
            return cast_like(np.where(inside, g_counts[np.maximum(which, 0)], 0.0).reshape(np.shape(weights)),
                             weights)
        return _edges_grad(position, g_edges, edges, source, a, bins, range)

    return vjp


def _check_spread(source, a, range_, moving):
    """Where the range of the edges is empty (all of a equal, or range=(v, v)), NumPy widens it to
    (v - 0.5, v + 0.5): the edges jump as soon as it opens, so they have no derivative there."""
    if source == "bins" or not moving:
        return
    lo, hi = (np.min(a), np.max(a)) if source == "data" else range_
    if np.size(a) and lo == hi:
        raise InvalidArgument(
            f"np.histogram: the bin edges are not differentiable where their range is empty ({lo} to {hi}, "
            f"widened to +-0.5 by NumPy: they jump as soon as it opens); pass the edges as bins, or a range "
            f"that does not depend on the differentiated values")


def _edges_grad(position, g_edges, edges, source, a, bins, range_):
    """The cotangent of the bin edges sent to a (0), bins (1) or range (2), whichever they came from."""
    if position == 1:
        return cast_like(np.reshape(g_edges, np.shape(bins)), bins) if source == "bins" else zero
    t = _edge_weights(edges)
    g_lo, g_hi = np.sum(g_edges * (1.0 - t)), np.sum(g_edges * t)
    mine = (position == 0 and source == "data") or (position == 2 and source == "range")
    _check_spread(source, a, range_, mine and (g_lo != 0 or g_hi != 0))
    if position == 2:
        return type(range_)((g_lo, g_hi)) if source == "range" else zero
    if source != "data":  # position 0: the data moves the edges only through its extremes
        return zero
    low, high = _extreme_shares(a)
    return cast_like(g_lo * low + g_hi * high, a)


def _edges_tangent(position, t, edges, source, a, range_=None):
    _check_spread(source, a, range_, (position == 0 and source == "data") or (position == 2 and source == "range"))
    if position == 1:
        return np.asarray(t, dtype=float).reshape(edges.shape) if source == "bins" else np.zeros(edges.shape)
    spread = _edge_weights(edges)
    if position == 2 and source == "range":
        return t[0] * (1.0 - spread) + t[1] * spread
    if position == 0 and source == "data":
        low, high = _extreme_shares(a)
        return np.sum(t * low) * (1.0 - spread) + np.sum(t * high) * spread
    return np.zeros(edges.shape)


def _histogram_jvp(position):
    def jvp(t, ans, a, bins=10, range=None, density=None, weights=None):
        hist, _ = ans
        edges, which, inside, counts, source = _histogram_layout(a, bins, range, weights)
        t_counts = np.zeros(counts.shape)
        t_edges = np.zeros(edges.shape)
        if position == 4:
            tw = np.ravel(t)
            t_counts = np.bincount(which[inside], tw[inside], minlength=len(counts)).astype(float)
        else:
            t_edges = _edges_tangent(position, t, edges, source, a, range)
        if density:
            total, widths = np.sum(counts), np.diff(edges)
            t_hist = t_counts / (total * widths) - hist * np.sum(t_counts) / total - hist * np.diff(t_edges) / widths
        else:
            t_hist = t_counts if _inexact(hist) else zero
        return (t_hist, t_edges)

    return jvp


defvjp(np.histogram, _histogram_vjp(0), _histogram_vjp(1), _histogram_vjp(2), None, _histogram_vjp(4))
defjvp(np.histogram, _histogram_jvp(0), _histogram_jvp(1), _histogram_jvp(2), None, _histogram_jvp(4))


def _bin_edges_vjp(position):
    def vjp(g, ans, a, bins=10, range=None, weights=None):
        source = "bins" if np.ndim(bins) == 1 else ("range" if range is not None else "data")
        return _edges_grad(position, np.asarray(g, dtype=float), ans, source, a, bins, range)

    return vjp


def _bin_edges_jvp(position):
    def jvp(t, ans, a, bins=10, range=None, weights=None):
        source = "bins" if np.ndim(bins) == 1 else ("range" if range is not None else "data")
        return _edges_tangent(position, t, ans, source, a, range)

    return jvp


defvjp(np.histogram_bin_edges, *(_bin_edges_vjp(i) for i in range(3)))
defjvp(np.histogram_bin_edges, *(_bin_edges_jvp(i) for i in range(3)), piecewise_linear=True)

note("the weights (the counts are linear in them); the minlength bins get nothing", lookup(np.bincount))
note("hist is piecewise constant in a; weights, density, and the edges (a bins array, the range, or "
     "min/max of a, ties sharing evenly) are differentiable", lookup(np.histogram))
note("the edges: a bins array, the range, or min/max of a (ties sharing evenly)", lookup(np.histogram_bin_edges))
