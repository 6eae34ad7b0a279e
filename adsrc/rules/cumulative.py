"""Scans and differences: cumsum, cumprod, cumulative_sum, cumulative_prod, diff.

Takes NumPy's running sums and products (and their inverse, the forward
difference np.diff) and gives each its vjp and jvp, and the array methods
``x.cumsum()`` and ``x.cumprod()``. A scan's vjp is the reverse scan of the
cotangent. cumprod is exact when some inputs are zero: there it falls back to
an O(n^2) sum of the products of the others, never dividing by a zero.
statistics.py builds the nan-scans on these rules.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, deflinear, defmethod, defvjp, lookup
from ._util import as_array, no_value, note

_NO = np._NoValue


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

for _name, _f in [("cumsum", np.cumsum), ("cumprod", np.cumprod)]:
    defmethod(_name, _f)


def _padded(g, axis, before, after):
    """``g`` with ``before`` and ``after`` zeros along ``axis``: np.pad's constant zeros, without its cost
    (a dense NumPy array; another library's goes through np.pad, which dispatches to it)."""
    if type(g) is not np.ndarray:
        pad = [(0, 0)] * g.ndim
        pad[axis % g.ndim] = (before, after)
        return np.pad(g, pad)
    axis = axis % g.ndim
    shape = list(g.shape)
    shape[axis] += before + after
    out = np.zeros(shape, dtype=g.dtype)
    index = [slice(None)] * g.ndim
    index[axis] = slice(before, before + g.shape[axis])
    out[tuple(index)] = g
    return out


def _diff_da(g, ans, a, n=1, axis=-1, prepend=_NO, append=_NO):
    """Apply the adjoint of one forward difference n times, then drop prepend/append."""
    g = as_array(g)
    for _ in range(n):
        g = _padded(g, axis, 1, 0) - _padded(g, axis, 0, 1)
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

note("exact with zeros (an O(n^2) path is used when an input is 0)", lookup(np.cumprod))
note("n, prepend and append", lookup(np.diff))
