"""A minimal array library for the tests: a mutable array that implements NumPy's dispatch protocols only.

``DuckArray`` holds a NumPy array and answers ufuncs (NEP 13) and NumPy
functions (NEP 18) by unwrapping its operands, calling NumPy and wrapping
array results. It has no ``__array__``: converting one to NumPy
(``np.asarray``) raises, and, as with CuPy, an operation that mixes it with
a NumPy array (not a scalar) raises too, so a test on DuckArrays fails
wherever adsrc would leave the array's library or bring NumPy arrays into it. Like a CuPy array, and unlike a Dask
array, it is mutable; it stands in for CuPy on machines without a GPU.
"""
from __future__ import annotations

from typing import Any

import numpy as np


def unwrap(value: Any) -> Any:
    if isinstance(value, DuckArray):
        return value.data
    if isinstance(value, np.ndarray) and value.ndim and value.dtype.kind in "fc":
        # As CuPy: NumPy data does not mix with this library's arrays; it must be converted explicitly.
        # (Integer and boolean arrays, indices and axes, pass.)
        raise TypeError(f"a DuckArray operation was given a NumPy array of shape {value.shape}")
    if isinstance(value, (list, tuple)):
        return type(value)(unwrap(v) for v in value)
    if isinstance(value, dict):
        return {k: unwrap(v) for k, v in value.items()}
    return value


def wrap(value: Any) -> Any:
    if isinstance(value, np.ndarray):
        return DuckArray(value)
    if isinstance(value, np.generic) and not isinstance(value, np.dtype):
        return DuckArray(np.asarray(value))  # like CuPy, reductions give 0-d arrays
    if isinstance(value, (list, tuple)) and not hasattr(value, "_fields"):
        return type(value)(wrap(v) for v in value)
    return value


class DuckArray(np.lib.mixins.NDArrayOperatorsMixin):
    """An array of another library: it works with NumPy's functions, and converts to NumPy only on request."""

    __slots__ = ("data",)

    def __init__(self, data: Any):
        self.data = np.array(data) if not isinstance(data, np.ndarray) else data

    shape = property(lambda self: self.data.shape)
    dtype = property(lambda self: self.data.dtype)
    ndim = property(lambda self: self.data.ndim)
    size = property(lambda self: self.data.size)
    nbytes = property(lambda self: self.data.nbytes)
    T = property(lambda self: DuckArray(self.data.T))

    @property
    def base(self) -> Any:
        return None if self.data.base is None else self.data.base

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        out = kwargs.get("out")
        if out is not None:
            kwargs["out"] = tuple(unwrap(o) for o in out)
        result = getattr(ufunc, method)(*unwrap(inputs), **kwargs)
        return out[0] if out is not None and len(out) == 1 else wrap(result)

    def __array_function__(self, func, types, args, kwargs):
        if func in (np.asarray, np.array):  # np.asarray(a, like=duck): the explicit conversion, as cupy.asarray
            return DuckArray(func(args[0].data if isinstance(args[0], DuckArray) else args[0], *args[1:], **kwargs))
        return wrap(func(*unwrap(args), **unwrap(kwargs)))

    def __getitem__(self, index: Any) -> Any:
        return wrap(self.data[unwrap(index)])

    def __setitem__(self, index: Any, value: Any) -> None:
        self.data[unwrap(index)] = unwrap(value)

    def __len__(self) -> int:
        return len(self.data)

    def __bool__(self) -> bool:
        return bool(self.data)  # as CuPy: a one-element array has a truth value (read from the device)

    def __float__(self) -> float:
        return float(self.data)

    def __getattr__(self, name: str) -> Any:
        """Array methods (``x.sum()``, ``x.all()``...) run on the data and give DuckArrays."""
        if name.startswith("__"):
            raise AttributeError(name)
        method = getattr(self.data, name)
        return (lambda *args, **kwargs: wrap(method(*unwrap(args), **unwrap(kwargs)))) if callable(method) \
            else wrap(method)

    def copy(self) -> "DuckArray":
        return DuckArray(self.data.copy())

    def astype(self, dtype: Any, copy: bool = True) -> "DuckArray":
        return DuckArray(self.data.astype(dtype, copy=copy))

    def reshape(self, *shape: Any) -> "DuckArray":
        return DuckArray(self.data.reshape(*shape))

    def numpy(self) -> np.ndarray:
        """The values as a NumPy array: the one explicit way out."""
        return self.data.copy()

    def __repr__(self) -> str:
        return f"DuckArray({self.data!r})"
