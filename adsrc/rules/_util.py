"""Helpers shared by the rule families."""
from __future__ import annotations

from typing import Any

import numpy as np


_PY_SCALARS = frozenset({float, int, complex, bool})


def shape_of(value: Any) -> tuple:
    """``np.shape`` without its cost for the common cases (arrays and Python scalars)."""
    if type(value) in _PY_SCALARS:
        return ()
    shape = getattr(value, "shape", None)
    return np.shape(value) if shape is None else shape


def unbroadcast(g: Any, like: Any) -> Any:
    """Sum ``g`` down to the shape of ``like``, undoing NumPy broadcasting.

    Returns ``g`` itself when the shapes already agree (the common case).
    """
    shape = shape_of(like)
    g_shape = shape_of(g)
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g_shape[extra + i] != 1
    )
    summed = np.sum(g, axis=axes) if axes else g
    return np.reshape(summed, shape)


def replace_zero(x: Any, value: float) -> Any:
    """``x`` with exact zeros replaced, to keep log(0)-style factors finite."""
    return np.where(x == 0, value, x)
