"""Arrays of other libraries (Dask, CuPy, ...): recognizing them, and making arrays in their namespace.

adsrc's generated code and rules are plain NumPy calls. An array type that
implements NumPy's dispatch protocols (``__array_ufunc__``, NEP 13, and
``__array_function__``, NEP 18) receives those calls itself, so the same
adjoint runs on it unchanged: ``np.tanh(w)`` of a Dask array is a Dask array.
What does not dispatch is allocation from a shape alone (``np.zeros(shape)``)
and conversion (``np.asarray``, ``float``): these would make a NumPy array,
or, for Dask, compute. The helpers here allocate in the namespace of a given
array instead, and tell the runtime whether an array may be written in place
(a Dask array may not: it is immutable) and whether reading its value would
compute it (``lazy``).

A *foreign* array is one that is not a NumPy array or scalar but has a
``shape`` and a ``dtype`` and implements ``__array_function__`` or the
array API standard's ``__array_namespace__``. Dask and CuPy are the tested
ones; see docs/scaling.md.
"""
from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["is_array", "is_number", "is_dict", "receives", "is_foreign", "foreign_in", "library", "is_lazy", "is_mutable", "namespace", "zeros", "owned_copy",
           "broadcast_like", "to_library"]

_NUMPY_TYPES = (np.ndarray, np.generic)
_PLAIN = frozenset({float, int, bool, complex, np.ndarray, type(None), str})
_IMMUTABLE_LIBRARIES = frozenset({"dask"})
_LAZY_LIBRARIES = frozenset({"dask"})


def is_foreign(value: Any) -> bool:
    """True for an array of another library that adsrc can run NumPy code on (a Dask or CuPy array)."""
    kind = type(value)
    if kind in _PLAIN or isinstance(value, _NUMPY_TYPES):
        return False
    return (hasattr(kind, "__array_function__") or hasattr(kind, "__array_namespace__")) \
        and hasattr(value, "shape") and hasattr(value, "dtype")


def is_array(value: Any) -> bool:
    """A value whose methods are an array's: a NumPy array or scalar, or a Dask or CuPy array."""
    return type(value) is np.ndarray or isinstance(value, _NUMPY_TYPES) or is_foreign(value)


def is_number(value: Any) -> bool:
    """An array (``is_array``) or a Python number: ``.real``, ``.imag`` and ``.conjugate()`` are its own."""
    return isinstance(value, (int, float, complex)) or is_array(value)


def is_dict(value: Any) -> bool:
    """A dict whose ``get``, ``items``, ``keys`` and ``values`` are dict's own."""
    return type(value) is dict


_RECEIVES = {"array": is_array, "number": is_number, "dict": is_dict}


def receives(kind: str, value: Any) -> bool:
    """Whether a method or attribute rule for receivers of ``kind`` (rules/registry.py) applies to ``value``."""
    return _RECEIVES[kind](value)


def foreign_in(tree: Any) -> Any:
    """The first foreign array in a (nested) tuple, list or dict, or None."""
    if is_foreign(tree):
        return tree
    if isinstance(tree, (list, tuple, dict)):
        for item in (tree.values() if isinstance(tree, dict) else tree):
            found = foreign_in(item)
            if found is not None:
                return found
    return None


def library(value: Any) -> str:
    """The top-level module of ``value``'s type: ``"dask"``, ``"cupy"``, ``"numpy"``..."""
    return type(value).__module__.split(".", 1)[0]


def is_lazy(value: Any) -> bool:
    """True for an array whose values exist only once computed (a Dask array): reading one computes it."""
    return is_foreign(value) and library(value) in _LAZY_LIBRARIES


def is_mutable(value: Any) -> bool:
    """True for an array adsrc may write into once it owns it (NumPy, CuPy); False for Dask arrays."""
    if isinstance(value, np.ndarray):
        return True
    return is_foreign(value) and library(value) not in _IMMUTABLE_LIBRARIES \
        and hasattr(type(value), "__setitem__")


def namespace(value: Any) -> Any:
    """The module whose functions make arrays of ``value``'s type.

    An array implementing ``__array_function__`` gets ``numpy`` itself, since
    NumPy's functions dispatch to it (``np.zeros_like(w)`` of a Dask array is a
    Dask array). An array API array without it gets its own namespace, through
    array-api-compat when that is installed.
    """
    if not is_foreign(value) or hasattr(type(value), "__array_function__"):
        return np
    try:
        import array_api_compat
    except ImportError:
        return value.__array_namespace__()
    return array_api_compat.array_namespace(value)


def zeros(shape: Any, dtype: Any, like: Any) -> Any:
    """Zeros of ``shape`` and ``dtype`` in the library of ``like`` (one array among several: the first foreign)."""
    like = foreign_in(like)
    if like is None:
        return np.zeros(shape, dtype=dtype)
    xp = namespace(like)
    if xp is np:
        return np.zeros_like(like, shape=shape, dtype=dtype)
    return xp.zeros(shape, dtype=dtype)


def owned_copy(value: Any) -> Any:
    """A copy of an array that nothing else refers to; an immutable array (Dask) is returned as it is."""
    if isinstance(value, np.ndarray):
        return np.array(value)
    if is_foreign(value) and is_mutable(value):
        return value.copy()
    return value


def broadcast_like(value: Any, like: Any) -> Any:
    """``np.broadcast_to(value, like.shape)``, in the library of ``like`` when that is another one.

    A Dask result gets ``like``'s chunks, so that it lines up with ``like``
    block for block instead of being one chunk of its whole shape.
    """
    if not is_foreign(like):
        return np.broadcast_to(value, np.shape(like))
    if library(like) == "dask":
        import dask.array as dask_array  # only reached with a Dask array in hand
        return dask_array.broadcast_to(dask_array.asarray(value), like.shape, chunks=like.chunks)
    return namespace(like).broadcast_to(to_library(value, like), like.shape)


def to_library(value: Any, like: Any) -> Any:
    """``value`` (a NumPy array or a number) as an array of ``like``'s library; anything else unchanged.

    CuPy, like most array libraries, does not mix its arrays with NumPy arrays
    in one operation: a NumPy array made from a shape must be converted
    first (for CuPy, a copy to the GPU).
    """
    if is_foreign(value) or not is_foreign(like):
        return value
    xp = namespace(like)
    return np.asarray(value, like=like) if xp is np else xp.asarray(value)
