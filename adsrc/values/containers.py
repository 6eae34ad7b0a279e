"""Cotangents of containers: tuples, lists and dicts of arrays, nested (pytrees).

The cotangent of a container is a container of the same kind, made of the
classes below, whose ``+`` adds leaf by leaf (a plain ``list + list`` would
concatenate), so that eager adjoint code can keep writing ``d = d + c``.
Positions that received nothing hold ``zero``; a dict cotangent may simply
lack those keys. Containers are summed into new containers: they are small,
and their leaves are never written in place.
"""
from __future__ import annotations

from typing import Any

from .zero import Deferred, zero

CONTAINERS = (list, tuple, dict)


def part(cotangent: Any, key: Any) -> Any:
    """The cotangent of one element of a container (generated code reads parts with this)."""
    if cotangent is zero:
        return zero
    if isinstance(cotangent, dict):
        return cotangent.get(key, zero)
    return cotangent[key]


class _Elementwise:
    """Mixin: ``+`` is leaf-by-leaf addition of cotangents, on either side."""

    __slots__ = ()

    def __add__(self, other: Any) -> Any:
        return add_tangents(self, other)

    def __radd__(self, other: Any) -> Any:
        return add_tangents(other, self)


class TangentTuple(_Elementwise, tuple):
    """The cotangent of a tuple."""


class TangentList(_Elementwise, list):
    """The cotangent of a list."""


class TangentDict(_Elementwise, dict):
    """The cotangent of a dict; a missing key means a zero cotangent."""


_AS_TANGENT = {tuple: TangentTuple, list: TangentList, dict: TangentDict}


def as_tangent(value: Any) -> Any:
    """A container result of a rule as a cotangent container (others unchanged)."""
    kind = _AS_TANGENT.get(type(value))
    return value if kind is None else kind(value)


def drop_last(cotangent: Any) -> Any:
    """The cotangent of a list before its last item was appended."""
    if cotangent is zero:
        return zero
    return TangentList(cotangent[:-1])


def to_tangent(tree: Any) -> Any:
    """A user's (possibly nested) container cotangent as cotangent containers; a None part is a zero one
    (as for an output that has no cotangent to give)."""
    if tree is None:
        return zero
    if isinstance(tree, dict):
        return TangentDict({k: to_tangent(v) for k, v in tree.items()})
    if isinstance(tree, (list, tuple)):
        kind = TangentList if isinstance(tree, list) else TangentTuple
        return kind(to_tangent(v) for v in tree)
    return tree


def add_tangents(a: Any, b: Any) -> Any:
    """``a + b`` for cotangents that may be containers, with ``zero`` as the identity."""
    a = a.materialize() if isinstance(a, Deferred) else a
    b = b.materialize() if isinstance(b, Deferred) else b
    if a is zero:
        return b
    if b is zero:
        return a
    if isinstance(a, dict) or isinstance(b, dict):
        out = TangentDict(a)
        for key, value in b.items():
            out[key] = add_tangents(out.get(key, zero), value)
        return out
    if isinstance(a, (list, tuple)) or isinstance(b, (list, tuple)):
        if len(a) != len(b):
            raise ValueError(f"cannot add cotangents of containers of lengths {len(a)} and {len(b)}")
        kind = TangentList if isinstance(a, list) else TangentTuple
        return kind(add_tangents(x, y) for x, y in zip(a, b))
    return a + b


def leaves(tree: Any) -> list[Any]:
    """The non-container leaves of a nested container, in order."""
    if type(tree) is dict:
        return [leaf for value in tree.values() for leaf in leaves(value)]
    if isinstance(tree, (list, tuple)):
        return [leaf for value in tree for leaf in leaves(value)]
    return [tree]
