"""The zero cotangent, the test for it, and the base class of deferred values.

``zero`` is what a variable's gradient (or tangent) is before anything
reaches it: an exact, free zero that absorbs arithmetic. ``is_zero`` is the
one test for it; ``is_zero_tree`` also counts a container whose every leaf
is zero. :class:`Deferred` is the base of Thunk and AccThunk, so that lower
layers can recognize a value that still has to be materialized without
knowing how.
"""
from __future__ import annotations

from typing import Any

__all__ = ["ZeroTangent", "zero", "is_zero", "is_zero_tree", "Deferred", "seed"]


class ZeroTangent:
    """The gradient of something that received no contribution: an exact, free zero.

    It absorbs arithmetic (``zero + g is g``, ``zero * g is zero``) so that
    eager adjoint code can use plain operators. NumPy defers to it
    (``__array_ufunc__ = None``), so ``array + zero`` returns the array itself.
    """

    __slots__ = ()
    __array_ufunc__ = None
    _instance: "ZeroTangent | None" = None

    def __new__(cls) -> "ZeroTangent":
        if cls._instance is None:
            cls._instance = super().__new__(cls)
        return cls._instance

    def __repr__(self) -> str:
        return "zero"

    def __bool__(self) -> bool:
        return False

    def __reduce__(self):
        return (ZeroTangent, ())

    def __add__(self, other: Any) -> Any:
        return other

    __radd__ = __add__

    def __sub__(self, other: Any) -> Any:
        return zero if other is zero else -other

    def __rsub__(self, other: Any) -> Any:
        return other

    def __mul__(self, other: Any) -> "ZeroTangent":
        return self

    __rmul__ = __truediv__ = __matmul__ = __rmatmul__ = __mul__

    def __neg__(self) -> "ZeroTangent":
        return self


zero = ZeroTangent()


def is_zero(value: Any) -> bool:
    """True for the symbolic zero, and for None (an argument given no tangent or cotangent)."""
    return value is zero or value is None


def is_zero_tree(value: Any) -> bool:
    """``is_zero``, or a tuple, list or dict (a container cotangent too) of nothing but such zeros."""
    if value is zero or value is None:
        return True
    if isinstance(value, (tuple, list)):
        return all(is_zero_tree(x) for x in value)
    if isinstance(value, dict):
        return all(is_zero_tree(x) for x in value.values())
    return False


class Deferred:
    """A value not computed yet: ``materialize()`` computes it (Thunk, AccThunk)."""

    __slots__ = ()

    def materialize(self) -> Any:
        raise NotImplementedError


def seed(value: Any) -> Any:
    """The unit cotangent of a scalar result: ``1`` in its floating dtype, else ``1.0``."""
    dtype = getattr(value, "dtype", None)
    return dtype.type(1) if dtype is not None and dtype.kind == "f" else 1.0
