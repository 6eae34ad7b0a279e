"""Linear algebra: matmul/dot, transpose and the norm.

The matmul vjps declare a batched ``fuse`` form: k contributions
``g_i @ B_iᵀ`` to the same A are one product of the concatenated factors, so
512 outer products in a loop become one GEMM.
"""
from __future__ import annotations

import numpy as np

from ..registry import defattribute, defmethod, defvjp
from ._util import unbroadcast


def _matmul_da(g, ans, a, b):
    if np.ndim(b) == 1:
        g_col = np.expand_dims(g, -1)
        if np.ndim(a) == 1:
            return g * b
        return unbroadcast(g_col * b, a)
    if np.ndim(a) == 1:
        return unbroadcast(np.matmul(b, np.expand_dims(g, -1))[..., 0], a)
    return unbroadcast(np.matmul(g, np.swapaxes(b, -1, -2)), a)


def _matmul_db(g, ans, a, b):
    if np.ndim(a) == 1:
        if np.ndim(b) == 1:
            return g * a
        return unbroadcast(np.expand_dims(a, -1) * np.expand_dims(g, -2), b)
    if np.ndim(b) == 1:
        return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), np.expand_dims(g, -1))[..., 0], b)
    return unbroadcast(np.matmul(np.swapaxes(a, -1, -2), g), b)


def _as_2d_factors(calls, side):
    """Left/right factors of each contribution as 2-D blocks, or None if not batchable."""
    lefts, rights = [], []
    for args, kwargs in calls:
        g, _, a, b = args
        if kwargs or np.ndim(a) > 2 or np.ndim(b) > 2:
            return None
        if side == 0:  # dA = g ⊗ b: rows of g against rows of b
            if np.ndim(a) != 2:
                return None
            lefts.append(np.reshape(g, (np.shape(a)[0], -1)))
            rights.append(np.reshape(b, (np.shape(a)[1], -1)).T if np.ndim(b) == 2 else np.reshape(b, (1, -1)))
        else:  # dB = a ⊗ g
            if np.ndim(b) != 2:
                return None
            lefts.append(np.reshape(a, (-1, np.shape(b)[0])).T if np.ndim(a) == 2 else np.reshape(a, (-1, 1)))
            rights.append(np.reshape(g, (-1, np.shape(b)[1])))
    if len({l.shape[0] for l in lefts}) != 1 or len({r.shape[1] for r in rights}) != 1:
        return None
    return lefts, rights


def _fuse_matmul(side):
    def fuse(calls):
        factors = _as_2d_factors(calls, side)
        if factors is None:
            return None
        lefts, rights = factors
        return np.concatenate(lefts, axis=1) @ np.concatenate(rights, axis=0)

    return fuse


for _f in (np.matmul, np.dot):
    defvjp(_f, _matmul_da, _matmul_db, fuse={0: _fuse_matmul(0), 1: _fuse_matmul(1)})


def _transpose_dx(g, ans, x, axes=None):
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort(axes))


def _norm_dx(g, ans, x, ord=None, axis=None, keepdims=False):
    if ord not in (None, 2, "fro") or (axis is not None and np.ndim(axis) != 0 and ord == 2):
        raise NotImplementedError(f"the gradient of linalg.norm with ord={ord!r} is not supported yet")
    if axis is not None and not keepdims:
        axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
        g = np.expand_dims(g, axes)
        ans = np.expand_dims(ans, axes)
    safe = np.where(ans == 0, 1, ans)
    return g * x / safe


defvjp(np.transpose, _transpose_dx)
defvjp(np.linalg.norm, _norm_dx)

defattribute("T", np.transpose)
defmethod("transpose", np.transpose)
defmethod("dot", np.dot)
