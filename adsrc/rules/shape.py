"""Shape and indexing: reshape and subscripting (``x[i]``, ``x[a:b, ::2]``).

Subscripting declares an in-place form: a row scattered into a matrix is added
straight into the accumulator's buffer, so a loop over the rows of ``x``
costs O(size of x), not O(rows x size of x).
"""
from __future__ import annotations

import operator

import numpy as np

from ..registry import defmethod, defvjp


def _reshape_dx(g, ans, x, *shape, **kwargs):
    return np.reshape(g, np.shape(x))


def _is_basic(index) -> bool:
    """True when ``index`` selects each element at most once (no fancy indexing)."""
    parts = index if isinstance(index, tuple) else (index,)
    return all(
        p is None or p is Ellipsis or isinstance(p, (slice, int, np.integer)) for p in parts
    )


def _getitem_add_into(buffer, g, ans, x, index):
    if _is_basic(index):
        buffer[index] += g
    else:
        np.add.at(buffer, index, g)


def _getitem_dx(g, ans, x, index):
    out = np.zeros(np.shape(x), dtype=np.result_type(x, g))
    _getitem_add_into(out, g, ans, x, index)
    return out


defvjp(np.reshape, _reshape_dx)
defvjp(operator.getitem, _getitem_dx, None, add_into={0: _getitem_add_into}, name="getitem")

defmethod("reshape", np.reshape)
