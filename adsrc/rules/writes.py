"""The adjoint of a write into an array: ``y[index] = value``, run in place.

The forward sweep writes in place and keeps only what the write overwrote
(``y_overwritten = y[index].copy()``); the backward block of the write, in
generated code:

    dvalue = accumulate(dvalue, written_part(dy, y, index, value))   # what the write put there
    dy = cleared(dy, index)                                       # the old elements no longer reach y
    y[index] = y_overwritten                                      # undo the write

Both helpers are linear in the cotangent ``dy`` and return new arrays: they
never write into a cotangent that something else may share.

Repeated indices follow NumPy: of several writes to one element, the one
NumPy kept is the one whose value reaches it, so only that one gets its
cotangent (found by replaying the same assignment with position numbers).
A write into an array of integers or booleans casts the value, which has no
gradient then.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..values import is_zero, unthunk, zero
from ._util import unbroadcast


def _fancy(index: Any) -> bool:
    """Whether an index selects with integer arrays or lists, which may repeat an element."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (list, np.ndarray)) and np.asarray(part).dtype.kind in "iu":
            return True
    return False


def written_part(dy: Any, y: np.ndarray, index: Any, value: Any) -> Any:
    """The cotangent of ``value`` in ``y[index] = value``, given the cotangent ``dy`` of ``y`` after it."""
    dy = unthunk(dy)
    if is_zero(dy) or not np.issubdtype(y.dtype, np.inexact):
        return zero
    part = np.asarray(dy)[index]
    if _fancy(index):
        position = np.full(np.shape(dy), -1, dtype=np.intp)
        order = np.arange(np.size(part), dtype=np.intp).reshape(np.shape(part))
        position[index] = order
        part = np.where(position[index] == order, part, 0)
    part = unbroadcast(part, value)
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return float(part)
    return part


def cleared(dy: Any, index: Any) -> Any:
    """``dy`` with ``dy[index] = 0``, as a new array: the elements the write replaced get nothing from after it."""
    dy = unthunk(dy)
    if is_zero(dy):
        return zero
    out = np.array(dy)
    out[index] = 0
    return out


def written_tangent(dy: Any, y: np.ndarray, index: Any, dvalue: Any) -> Any:
    """Forward mode: the tangent of ``y`` after ``y[index] = value``, as a new array."""
    if not np.issubdtype(y.dtype, np.inexact):
        return zero
    dy = unthunk(dy)
    out = np.zeros(y.shape, dtype=y.dtype) if is_zero(dy) else np.array(dy, dtype=np.result_type(dy, y))
    out[index] = 0 if is_zero(dvalue) else dvalue
    return out


def detached(value: Any) -> Any:
    """A returned array that shares memory with an array written in place: a copy, which the backward
    sweep's restoring of that array cannot change."""
    return value.copy() if isinstance(value, np.ndarray) else value
