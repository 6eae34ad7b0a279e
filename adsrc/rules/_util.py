"""Helpers shared by the rule families."""
from __future__ import annotations

from typing import Any

import numpy as np


def unbroadcast(g: Any, like: Any) -> Any:
    """Sum ``g`` down to the shape of ``like``, undoing NumPy broadcasting.

    Returns ``g`` itself when the shapes already agree (the common case).
    """
    shape = np.shape(like)
    g_shape = np.shape(g)
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
