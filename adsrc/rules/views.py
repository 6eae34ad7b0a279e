"""Writes through a view: the index into the base array that a write into a view of it writes.

``v = y[1:]`` then ``v[0] = e`` writes ``y[1]``: NumPy's basic indexing gives a
view, and a write into the view changes the array it was taken of. The front
end (frontend/view_writes.py) runs such a write as a write into ``y`` itself,
``y[written_through(y, (slice(1, None, None),), 0)] = e``, so that the rules of
writes (rules/writes.py: the old elements taped and restored, the written
value's cotangent taken from ``y``'s) see the array that changes.

:func:`written_through` composes the two indices: slices and integers compose
exactly (through ``range``, whose slicing and indexing are the same as a
sequence's), and anything else (an integer array, a mask, ``None``) through
the positions of the base's elements. The composed index selects the same
elements in the same order and shape as ``y[outer][inner]``, so the written
value broadcasts as Python's write broadcasts it, and of repeated positions
the last one wins as in NumPy.
"""
from __future__ import annotations

import operator
from typing import Any

import numpy as np

from .registry import register_nondifferentiable


def _integer(part: Any) -> bool:
    return isinstance(part, (int, np.integer)) and not isinstance(part, (bool, np.bool_))


def _expanded(index: tuple, ndim: int) -> list | None:
    """``index`` with its Ellipsis spelled out and trailing axes filled, or None for one this does not
    compose exactly (a new axis, an array, a mask)."""
    if not all(_integer(p) or isinstance(p, slice) or p is Ellipsis for p in index):
        return None
    parts = list(index)
    if Ellipsis in parts:
        at = parts.index(Ellipsis)
        parts[at:at + 1] = [slice(None)] * (ndim - len(parts) + 1)
    if len(parts) > ndim:
        return None  # too many indices: NumPy says so, through the positions' index below
    return parts + [slice(None)] * (ndim - len(parts))


def _as_slice(r: range) -> slice:
    return slice(r.start, r.stop if r.stop >= 0 else None, r.step)


def written_through(base: np.ndarray, outer: Any, inner: Any) -> Any:
    """The index into ``base`` that ``base[outer][inner] = v`` writes, where ``base[outer]`` is a view
    (``outer`` basic: integers and slices); raises what Python's write would raise where it is none.

    >>> import numpy as np
    >>> written_through(np.zeros((3, 4)), (slice(1, None, None),), (0, slice(None, None, -2)))
    (1, slice(3, None, -2))
    """
    shape = np.shape(base)
    outer = outer if type(outer) is tuple else (outer,)
    inner = inner if type(inner) is tuple else (inner,)
    parts = _expanded(outer, len(shape))
    if parts is None:
        raise TypeError(f"adsrc: the index {outer!r} of a view written through is not basic")
    axes: list = []
    for n, part in zip(shape, parts):
        if isinstance(part, slice):
            axes.append(range(*part.indices(n)))
        else:
            k = operator.index(part)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis with size {n}")
            axes.append(k % n)
    free = [a for a, axis in enumerate(axes) if isinstance(axis, range)]
    if not free:
        kind = type(base[outer])
        spelled = kind.__name__ if kind.__module__ == "builtins" else f"{kind.__module__}.{kind.__name__}"
        raise TypeError(f"'{spelled}' object does not support item assignment")  # (as Python's reads)
    picks = _expanded(inner, len(free))
    if picks is not None:
        try:
            for a, pick in zip(free, picks):
                axes[a] = axes[a][pick]  # a range indexed or sliced as the view's axis is
            return tuple(_as_slice(axis) if isinstance(axis, range) else axis for axis in axes)
        except IndexError:
            pass  # NumPy's own error, from the positions below
    positions = np.arange(int(np.prod(shape)), dtype=np.intp).reshape(shape)[outer][inner]
    return np.unravel_index(positions, shape)


def row_count(base: Any) -> int:
    """How many rows ``for row in base`` runs over (Python's TypeError for a 0-d array, as its loop raises).

    >>> row_count(np.zeros((3, 2)))
    3
    """
    iter(base)
    return len(base)


register_nondifferentiable(written_through)
register_nondifferentiable(row_count)
