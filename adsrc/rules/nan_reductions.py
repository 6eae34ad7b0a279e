"""NaN-ignoring reductions: nansum, nanmean, nanmax/nanmin, nanprod, nanvar, nanstd.

Takes NumPy's nan-reductions and gives each its vjp and jvp, built on those of
the plain reductions (reductions.py): NaN entries get no gradient, and no
tangent. nanmax and nanmin split the cotangent evenly between tied maxima, as
max and min do; nanprod is exact with zeros in the input, as prod is.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, defvjp, lookup
from .reductions import _ddof, _max_jvp, _prod_dx, _prod_jvp, _unsupported_where, _winners_share
from ._util import keep_dims, note, reduced_axes, replace_zero

_NO = np._NoValue


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

note("ties split g evenly among the maxima/minima", lookup(np.nanmax), lookup(np.nanmin))
note("exact with zeros in the input (products of the others, no division)", lookup(np.nanprod))
note("ddof and correction=", lookup(np.nanvar))
note("ddof and correction=; at zero spread the subgradient 0 (in both modes)", lookup(np.nanstd))
note("NaN entries get no gradient", lookup(np.nansum), lookup(np.nanmean))
