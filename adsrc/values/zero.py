"""The zero cotangent, the test for it, the seed of a scalar result, and the base of deferred values.

``zero`` is what a variable's gradient (or tangent) is before anything
reaches it: an exact, free zero that absorbs arithmetic. ``is_zero`` is the
one test for it; ``is_zero_tree`` also counts a container whose every leaf
is zero. :class:`Deferred` is the base of Thunk and AccThunk, so that lower
layers can recognize a value that still has to be materialized without
knowing how. ``seed`` is the unit cotangent of a scalar result, and
``check_real_scalar`` refuses a result that has no such seed: grad and
second order both call it.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import NonScalarOutput
from .arrays import is_foreign, library

__all__ = ["ZeroTangent", "zero", "is_zero", "is_zero_tree", "Deferred", "seed", "check_real_scalar"]


class ZeroTangent:
    """The gradient of something that received no contribution: an exact, free zero.

    It absorbs arithmetic (``zero + g is g``, ``zero * g is zero``) so that
    eager adjoint code can use plain operators. NumPy defers to it
    (``__array_ufunc__ = None``), so ``array + zero`` returns the array itself.
    ``adsrc.zero`` is its one instance.

    >>> import numpy as np, adsrc
    >>> x = np.array([1.0, 2.0])
    >>> adsrc.zero + x is x, adsrc.zero * x, adsrc.ZeroTangent() is adsrc.zero
    (True, zero, True)
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
    """The unit cotangent of a scalar result: ``1`` in its floating dtype, else ``1.0``; for an array of
    one element (``np.sum(x, keepdims=True)``), an array of ones of its shape."""
    dtype = getattr(value, "dtype", None)
    if type(value) is np.ndarray and value.ndim:
        return np.ones(value.shape, dtype=dtype if dtype.kind == "f" else np.float64)
    return dtype.type(1) if dtype is not None and dtype.kind == "f" else 1.0


def check_real_scalar(value: Any, name: str, place: str) -> None:
    """Refuse a result that grad cannot differentiate: anything but a real number or a real array of one
    element (a 0-d array, or the shape (1,) or (1, 1) of ``np.sum(x, keepdims=True)``, as autograd accepts).

    A str, None or other object, a bool (a comparison, np.allclose) and a
    complex number have no gradient that grad can return; zeros, or the
    gradient of the real part, would be silently wrong.
    """
    kind = type(value)
    if kind is np.float64 or kind is float or kind is np.float32:
        return
    if isinstance(value, np.ndarray):
        if value.size != 1:
            raise NonScalarOutput(name, value.shape, place)
        dtype = value.dtype
        if kind is not np.ndarray:
            raise NonScalarOutput(name, (), place, f"a {kind.__name__} (an ndarray subclass)",
                                  "return a plain float, e.g. float(np.asarray(value))")
        described = f"a 0-d array of dtype {dtype}"
    elif is_foreign(value):  # a Dask or CuPy array: its shape and dtype are known without computing it
        if tuple(value.shape) != ():
            raise NonScalarOutput(name, tuple(value.shape), place)
        dtype = np.dtype(value.dtype)
        described = f"a 0-d {library(value)} array of dtype {dtype}"
    elif isinstance(value, np.generic):
        dtype = value.dtype
        described = f"a {kind.__name__}"
    elif isinstance(value, bool):
        dtype = np.dtype(bool)
        described = "a bool"
    elif isinstance(value, (int, float)):
        return
    elif isinstance(value, complex):
        dtype = np.dtype(complex)
        described = "a complex"
    elif isinstance(value, (list, tuple)):
        if isinstance(value, tuple) and len(value) == 2 and np.ndim(value[0]) == 0 \
                and not isinstance(value[0], (str, bool, complex)):  # (loss, aux)
            raise NonScalarOutput(name, (), place, "a pair", f"if {name} returns (loss, aux), pass has_aux=True "
                                  f"(adsrc.grad({name}, has_aux=True) returns (gradient, aux)); else "
                                  + _CONTAINER_REMEDY.format(name=name))
        try:
            shape = np.shape(value)
        except ValueError:
            shape = None
        if shape:
            raise NonScalarOutput(name, shape, place)
        raise NonScalarOutput(name, (), place, f"a {kind.__name__}", _CONTAINER_REMEDY.format(name=name))
    elif isinstance(value, dict):
        raise NonScalarOutput(name, (), place, f"a {kind.__name__}", _CONTAINER_REMEDY.format(name=name))
    else:
        if value is None:
            raise NonScalarOutput(name, (), place, "None", "return the quantity to differentiate (a function "
                                                           "with no return statement returns None)")
        raise NonScalarOutput(name, (), place, f"a {kind.__name__}", "return the quantity to differentiate")
    if dtype.kind in "fiu":
        return
    if dtype.kind == "b":
        remedy = ("a bool (a comparison, np.allclose, ...) has no gradient; return the real-valued "
                  "quantity itself")
    elif dtype.kind == "c":
        remedy = ("adsrc differentiates real-valued functions only; return a real quantity computed "
                  "from real parts instead")
    else:
        remedy = "return the quantity to differentiate"
    raise NonScalarOutput(name, (), place, described, remedy)


_CONTAINER_REMEDY = ("use adsrc.vjp({name}, *args) and call the pullback with a cotangent of the same "
                     "structure instead")
