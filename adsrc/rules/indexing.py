"""Indexing: subscripts (``x[i]``, ``x[a:b, ::2]``, ``x[idx]``, ``x[mask]``), take, take_along_axis.

Subscripting a tuple, list or dict (the result of a function returning several
values, like slogdet) gives a gradient of that structure, ``adsrc.zero``
except at the index. Basic subscripts (ints, slices, Ellipsis, None) select each element at most
once, so the cotangent is written into place. Integer-array and boolean
subscripts go through ``np.add.at``, so repeated indices add up.

Each declares an in-place ``add_into`` form: a row scattered into a matrix is
added straight into the accumulator's buffer, so a loop over the rows of ``x``
costs O(size of x), not O(rows x size of x).
"""
from __future__ import annotations

import operator

import numpy as np

from .registry import defjvp, deflinear, defmethod, defvjp, lookup
from ..values import part
from ._util import note, zero, zeros_for


def _is_basic(index) -> bool:
    """True when ``index`` selects each element at most once (no fancy indexing)."""
    if type(index) is int:
        return True
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts
    )


def _getitem_add_into(buffer, g, ans, x, index):
    if _is_basic(index):
        buffer[index] += g
    else:
        np.add.at(buffer, index, g)


def _container_grad(g, x, index):
    """``x[index]`` of a tuple, list or dict (the result of slogdet, eigh, split...):
    a gradient of the same structure, ``zero`` everywhere but at ``index``."""
    if isinstance(x, dict):
        return {key: g if key == index else zero for key in x}
    parts = [zero] * len(x)
    if isinstance(index, slice):
        for i, piece in zip(range(len(x))[index], g):
            parts[i] = piece
    else:
        parts[index] = g
    return parts if isinstance(x, list) else tuple(parts)


def _getitem_dx(g, ans, x, index):
    if isinstance(x, (tuple, list, dict)):
        return _container_grad(g, x, index)
    out = zeros_for(x, g)
    _getitem_add_into(out, g, None, x, index)
    return out


defvjp(operator.getitem, _getitem_dx, None, add_into={0: _getitem_add_into}, name="getitem").module = "operator"
defjvp(operator.getitem, lambda t, ans, x, index: part(t, index), None, piecewise_linear=True)


def _take_index(shape, indices, axis, mode):
    """take's selection as an index tuple that np.add.at understands."""
    n = int(np.prod(shape, dtype=np.int64)) if axis is None else shape[axis]
    idx = np.asarray(indices)
    if mode == "wrap":
        idx = idx % n
    elif mode == "clip":
        idx = np.clip(idx, 0, n - 1)
    if axis is None:
        return np.unravel_index(idx % n, shape)
    return (slice(None),) * (axis % len(shape)) + (idx,)


def _take_add_into(buffer, g, ans, a, indices, axis=None, out=None, mode="raise"):
    np.add.at(buffer, _take_index(np.shape(a), indices, axis, mode), g)


def _take_da(g, ans, a, indices, axis=None, out=None, mode="raise"):
    grad = zeros_for(a, g)
    _take_add_into(grad, g, None, a, indices, axis, out, mode)
    return grad


def _along_axis_index(shape, indices, axis):
    grids = [np.arange(n).reshape([-1 if d == i else 1 for d in range(len(shape))]) for i, n in enumerate(shape)]
    grids[axis % len(shape)] = indices
    return tuple(grids)


def _take_along_axis_add_into(buffer, g, ans, arr, indices, axis=-1):
    if axis is None:
        np.add.at(buffer, np.unravel_index(np.asarray(indices) % np.size(arr), np.shape(arr)), g)
    else:
        np.add.at(buffer, _along_axis_index(np.shape(arr), indices, axis), g)


def _take_along_axis_darr(g, ans, arr, indices, axis=-1):
    grad = zeros_for(arr, g)
    _take_along_axis_add_into(grad, g, None, arr, indices, axis)
    return grad


deflinear(np.take, _take_da, None, add_into={0: _take_add_into})
deflinear(np.take_along_axis, _take_along_axis_darr, None, add_into={0: _take_along_axis_add_into})

defmethod("take", np.take)

note("ints (negative too), slices, Ellipsis, None, integer arrays (repeats add up), boolean masks",
     lookup(operator.getitem))
note("repeated indices add up; modes raise, wrap, clip", lookup(np.take))
