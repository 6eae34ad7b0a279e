"""Reductions: sum and mean, with axis and keepdims."""
from __future__ import annotations

import numpy as np

from ..registry import defmethod, defvjp


def _expand(g, x, axis, keepdims):
    """Reshape a reduced cotangent so that it broadcasts against ``x`` again."""
    shape = np.shape(x)
    if axis is None or keepdims:
        return g
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return np.expand_dims(g, tuple(a % len(shape) for a in axes))


def _sum_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    return np.broadcast_to(_expand(g, x, axis, keepdims), np.shape(x))


def _mean_dx(g, ans, x, axis=None, dtype=None, out=None, keepdims=False):
    count = np.size(x) // max(np.size(ans), 1) if np.ndim(x) else 1
    return np.broadcast_to(_expand(g, x, axis, keepdims) / count, np.shape(x))


defvjp(np.sum, _sum_dx)
defvjp(np.mean, _mean_dx)

defmethod("sum", np.sum)
defmethod("mean", np.mean)
