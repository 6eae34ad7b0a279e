"""``+`` and ``*`` of lists and tuples: concatenation and repetition, which the rules of np.add and
np.multiply (the operators' rules) differentiate when their result is a list or a tuple.

``xs + ys`` gives ``xs`` the first ``len(xs)`` items of the cotangent and ``ys``
the rest; ``xs * n`` (or ``n * xs``) gives item ``k`` of ``xs`` the sum of the
cotangents of its ``n`` copies, and the count nothing. The tangents are the
same in the other direction: ``dxs`` followed by zeros (then zeros followed by
``dys``), and ``dxs`` repeated ``n`` times.
"""
from __future__ import annotations

from typing import Any

from ..values import TangentList, TangentTuple, add_tangents, is_zero, unthunk, zero

SEQUENCES = (list, tuple)


def _like(items: list, like: Any) -> Any:
    return TangentTuple(items) if isinstance(like, tuple) else TangentList(items)


def _items(t: Any, like: Any) -> list:
    t = unthunk(t)
    return [zero] * len(like) if is_zero(t) else list(t)


def concatenated_part(g: Any, like: Any, start: int) -> Any:
    """The cotangent of the operand ``like`` of a concatenation, whose items start at ``start``."""
    g = unthunk(g)
    if is_zero(g):
        return zero
    return _like(list(g[start:start + len(like)]), like)


def repeated_part(g: Any, like: Any) -> Any:
    """The cotangent of the sequence ``like`` repeated into a sequence whose cotangent is ``g``."""
    g = unthunk(g)
    if is_zero(g) or not like:
        return zero
    size = len(like)
    parts = [zero] * size
    for position, item in enumerate(g):
        parts[position % size] = add_tangents(parts[position % size], item)
    return _like(parts, like)


def concatenated_tangent(t: Any, like: Any, before: int, after: int) -> Any:
    """The tangent of a concatenation from that of one operand ``like``: zeros for the other's items."""
    return _like([zero] * before + _items(t, like) + [zero] * after, like)


def repeated_tangent(t: Any, like: Any, count: int) -> Any:
    """The tangent of ``like * count`` from that of ``like``."""
    return _like(_items(t, like) * max(count, 0), like)
