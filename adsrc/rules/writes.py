"""The adjoint of a write into an array: ``y[index] = value``, run in place.

The forward sweep writes in place and keeps only what the write overwrote
(``y_overwritten = y[index].copy()``); the backward block of the write, in
generated code:

    dvalue = accumulate(dvalue, written_part(dy, y, index, value))   # what the write put there
    dy = cleared(dy, index)                                       # the old elements no longer reach y
    y[index] = y_overwritten                                      # undo the write

Both helpers are linear in the cotangent ``dy`` and return new arrays: they
never write into a cotangent that something else may share.

A write into a list the function made (``xs[i] = v``, frontend/lists.py) runs
the same block: the forward sweep keeps the item it replaces (no copy: a
list's items are replaced, never changed), ``written_part`` is the item's
cotangent ``dxs[i]``, ``cleared`` a new list cotangent with ``zero`` there.

In a loop, copying ``dy`` at every write costs O(size of y) per step. Where the
optimizer proves that a loop's backward sweep uses a cotangent only in these
forms (optimize/owned.py), it copies it once before the loop (``owned``) and
updates it in place inside (``cleared_in_place``, ``added_into``): O(size of
the write or read) per step. ``written_part`` returns a copy, never a view of
``dy``, so that those updates cannot reach a value it returned.

Repeated indices follow NumPy: of several writes to one element, the one
NumPy kept is the one whose value reaches it, so only that one gets its
cotangent (found by replaying the same assignment with position numbers).
A write into an array of integers or booleans casts the value, which has no
gradient then.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..values import TangentList, add_tangents, drop_last, is_zero, unthunk, zero
from ..values.arrays import is_mutable, owned_copy
from ._util import unbroadcast, zeros_for
from .indexing import _getitem_add_into


_FLOAT64 = np.dtype(np.float64)
_REAL_SCALARS = frozenset({float, int, np.float64})


def _fancy(index: Any) -> bool:
    """Whether an index selects with integer arrays or lists, which may repeat an element."""
    parts = index if isinstance(index, tuple) else (index,)
    for part in parts:
        if isinstance(part, (list, np.ndarray)) and np.asarray(part).dtype.kind in "iu":
            return True
    return False


def written_part(dy: Any, y: np.ndarray, index: Any, value: Any) -> Any:
    """The cotangent of ``value`` in ``y[index] = value``, given the cotangent ``dy`` of ``y`` after it."""
    if type(dy) is not np.ndarray:
        dy = unthunk(dy)
        if is_zero(dy):
            return zero
    if type(y) is list:  # xs[i] = v: the item's cotangent
        part = dy[index]
        return part.real if _complex(part) and not _complex(value) else part
    if y.dtype.kind not in "fc":  # a write into integers or booleans casts the value: no gradient
        return zero
    if type(index) is int and type(dy) is np.ndarray and dy.ndim == 1 and type(value) in _REAL_SCALARS:
        return float(dy[index])  # the common case: a number written into a vector
    part = np.asarray(dy)[index]
    if type(index) is not int and _fancy(index):
        position = np.full(np.shape(dy), -1, dtype=np.intp)
        order = np.arange(np.size(part), dtype=np.intp).reshape(np.shape(part))
        position[index] = order
        part = np.where(position[index] == order, part, 0)
    part = unbroadcast(part, value)
    if isinstance(value, (float, int)) and not isinstance(value, bool):
        return float(part)
    if isinstance(part, np.ndarray) and np.may_share_memory(part, dy):
        return part.copy()  # a view of dy would change with it (cleared_in_place)
    return part


def cleared(dy: Any, index: Any) -> Any:
    """``dy`` with ``dy[index] = 0``, as a new array: the elements the write replaced get nothing from after it."""
    dy = unthunk(dy)
    if is_zero(dy):
        return zero
    if isinstance(dy, (list, tuple)):  # a list's cotangent (xs[i] = v): the item's cotangent replaced by zero
        out = TangentList(dy)
        out[index] = zero
        return out
    out = np.array(dy)
    out[index] = 0
    return out


def owned(dy: Any) -> Any:
    """A copy of the cotangent ``dy`` that nothing else refers to, made before a loop whose backward sweep
    then updates it in place (``cleared_in_place``, ``added_into``): ``dy`` may be a rule's broadcast view,
    the user's seed or another variable's cotangent. An immutable array (Dask) is returned as it is."""
    dy = unthunk(dy)
    if isinstance(dy, list):
        return TangentList(dy)  # a list's cotangent: its items are replaced, never written into
    return zero if is_zero(dy) else owned_copy(dy)


def drop_last_in_place(dxs: Any) -> Any:
    """``drop_last`` for a list's cotangent that ``owned`` copied: its last item removed in place."""
    if type(dxs) is TangentList:
        dxs.pop()
        return dxs
    return drop_last(dxs)


def cleared_in_place(dy: Any, index: Any) -> Any:
    """``cleared`` for a cotangent that ``owned`` copied: ``dy[index] = 0`` in ``dy`` itself.
    (Out of place for an immutable array.)"""
    if type(dy) is np.ndarray or not is_zero(dy) and is_mutable(dy):
        dy[index] = 0
        return dy
    if type(dy) is TangentList:
        dy[index] = zero
        return dy
    return cleared(dy, index)


def added_into(dy: Any, vjp: Any, g: Any, *args: Any, **kwargs: Any) -> Any:
    """``dy + vjp(g, *args, **kwargs)`` for a vjp with an in-place form (a read by index: getitem, take),
    added into ``dy`` itself, which ``owned`` copied (or which this allocates): O(size of ``g``), not
    O(size of the array read). Out of place for an immutable array or a container."""
    x = args[vjp.position + 1]
    if type(dy) is np.ndarray and dy.dtype is _FLOAT64 and type(g) in _REAL_SCALARS \
            and type(x) is np.ndarray and dy.shape == x.shape:  # the common case: a number read from an array
        if type(args[-1]) is int and getattr(vjp.add_into, "__wrapped__", None) is _getitem_add_into:
            dy[args[-1]] += g  # x[i]
        else:
            vjp.add_into(dy, g, *args, **kwargs)
        return dy
    g = unthunk(g)
    if g is zero:
        return dy
    add_into = vjp.add_into
    if type(x) is list and type(args[-1]) is int and getattr(add_into, "__wrapped__", None) is _getitem_add_into \
            and (is_zero(dy) or type(dy) is TangentList and len(dy) == len(x)) and not isinstance(g, (list, tuple, dict)):
        return _added_to_item(dy, x, args[-1], g)
    if add_into is None or not isinstance(x, np.ndarray) and not is_mutable(x):
        contribution = vjp(g, *args, **kwargs)
        return contribution if is_zero(dy) else dy + contribution
    if np.iscomplexobj(g) and not np.iscomplexobj(x):
        g = g.real  # a real array's cotangent keeps the real part (docs/complex.md)
    if is_zero(dy):
        dy = zeros_for(x, g)
    elif not is_mutable(dy) or dy.shape != np.shape(x):
        return dy + vjp(g, *args, **kwargs)
    elif np.result_type(dy, g) != dy.dtype:
        dy = dy.astype(np.result_type(dy, g))  # a new array, owned as well
    add_into(dy, g, *args, **kwargs)
    return dy


def _added_to_item(dxs: Any, xs: list, i: int, g: Any) -> Any:
    """The cotangent of the list ``xs`` plus ``g`` at item ``i`` (of ``xs[i]``, a number or an array): the item
    replaced by a sum, so that an item shared with another value is never written into."""
    if is_zero(dxs):
        dxs = TangentList([zero] * len(xs))
    if _complex(g) and not _complex(xs[i]):
        g = g.real  # a real item's cotangent keeps the real part (docs/complex.md)
    dxs[i] = add_tangents(dxs[i], g)
    return dxs


def _complex(value: Any) -> bool:
    return type(value) is complex or getattr(getattr(value, "dtype", None), "kind", None) == "c"


def written_tangent(dy: Any, y: np.ndarray, index: Any, dvalue: Any) -> Any:
    """Forward mode: the tangent of ``y`` after ``y[index] = value``, as a new array (a new list for a
    list ``y``)."""
    if type(y) is list:
        dy = unthunk(dy)
        out = TangentList([zero] * len(y) if is_zero(dy) else dy)
        out[index] = unthunk(dvalue)
        return out
    if not np.issubdtype(y.dtype, np.inexact):
        return zero
    dy = unthunk(dy)
    out = np.zeros(y.shape, dtype=y.dtype) if is_zero(dy) else np.array(dy, dtype=np.result_type(dy, y))
    out[index] = 0 if is_zero(dvalue) else dvalue
    return out


def detached(value: Any) -> Any:
    """A returned array that shares memory with an array written in place (or a list grown in place): a
    copy, which the backward sweep's restoring of that array cannot change."""
    if isinstance(value, list):
        return list(value)  # a list grown in place, which the backward sweep shrinks back
    if type(value) is tuple:  # return parts, count: the tuple display holding such a list
        return tuple(detached(item) for item in value)
    return value.copy() if isinstance(value, np.ndarray) else value
