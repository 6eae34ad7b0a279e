"""Reductions: sum, mean, prod, max/min, ptp, var/std, average, logsumexp.

Takes NumPy's reductions (and adsrc's own ``logsumexp``) and gives each its vjp
and jvp, registered side by side, and the array methods ``x.sum()``,
``x.mean()``, ``x.prod()``, ``x.max()``, ``x.min()``, ``x.std()``, ``x.var()``.
The NaN-ignoring variants are in nan_reductions.py, the scans (cumsum,
cumprod, diff) in cumulative.py, bincount and histogram in histograms.py.

Every reduction takes ``axis`` as None, an int or a tuple, and ``keepdims``.
max and min split the cotangent evenly between tied maxima (so ``max`` of a
constant vector sends ``g / n`` to each element). prod is exact when some
inputs are zero (it never divides by an input that is zero).

sum and mean declare a batched ``fuse`` form: k contributions to the same input
are one broadcast of the summed cotangents.

A reduction's jvp sums (gradient of a unit cotangent) * t over the reduced
axes, then reshapes to the result, which drops those axes unless keepdims kept
them. max/min-type reductions average the tangents of tied winners, as their
vjps split the cotangent evenly.
"""
from __future__ import annotations

import numpy as np

from ..errors import NotDifferentiable
from .registry import defjvp, deflinear, defmethod, defvjp, lookup
from ._tangent import without
from .templates import arrays, deftemplate
from ._util import (as_array, broadcast_like, fuse_linear, is_zero, keep_dims, no_value, note, reduced_axes,
                    reduced_size, replace_zero, zero)

__all__ = ["logsumexp"]

_NO = np._NoValue


def _unsupported_where(where, name):
    if not no_value(where):
        raise NotDifferentiable(f"the gradient of {name} with where= is not supported")


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
                  ("std", np.std), ("var", np.var)]:
    defmethod(_name, _f)


note("ties split g evenly among the maxima/minima", *(lookup(f) for f in (np.max, np.min, np.amax, np.amin, np.ptp)))
note("exact with zeros in the input (products of the others, no division)", lookup(np.prod))
note("ddof and correction=", lookup(np.var))
note("ddof and correction=; at zero spread the subgradient 0 (in both modes)", lookup(np.std))
note("weights, when passed positionally, are differentiable; returned=True takes a tuple cotangent",
     lookup(np.average))
note("a public function: adsrc.rules.reductions.logsumexp(x, axis=None, keepdims=False)", lookup(logsumexp))
note("where= is supported", lookup(np.sum), lookup(np.mean))
