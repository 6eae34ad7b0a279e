"""Helpers shared by the rule families.

They exist so that each rule stays one short line and keeps its input's dtype:
a float32 input with a float32 cotangent must give a float32 contribution, so
constants are Python floats and masks are applied by multiplying ``g``.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Sequence

import numpy as np

from ..values import is_zero, zero  # noqa: F401  (rule modules import both from here)
from ..values.arrays import (broadcast_like, is_foreign, to_library,  # noqa: F401  (rules import broadcast_like)
                             zeros as zeros_in)


_PY_SCALARS = frozenset({float, int, complex, bool})


def shape_of(value: Any) -> tuple:
    """``np.shape`` without its cost for the common cases (arrays and Python scalars)."""
    if type(value) in _PY_SCALARS:
        return ()
    shape = getattr(value, "shape", None)
    return np.shape(value) if shape is None else shape


def unbroadcast(g: Any, like: Any) -> Any:
    """Sum ``g`` down to the shape of ``like``, undoing NumPy broadcasting.

    Returns ``g`` itself when the shapes already agree (the common case).
    """
    g_shape = getattr(g, "shape", None)
    if g_shape is not None and g_shape == getattr(like, "shape", None):
        return g  # the common case, decided without a function call
    if g_shape is None and type(like) in _PY_SCALARS and type(g) in _PY_SCALARS:
        return g  # Python numbers: nothing was broadcast
    shape = shape_of(like)
    g_shape = shape_of(g)
    if g_shape == shape:
        return g
    extra = len(g_shape) - len(shape)
    axes = tuple(range(extra)) + tuple(
        extra + i for i, n in enumerate(shape) if n == 1 and g_shape[extra + i] != 1
    )
    summed = np.sum(g, axis=axes) if axes else g
    return np.reshape(summed, shape)


def replace_zero(x: Any, value: float) -> Any:
    """``x`` with exact zeros replaced, to keep log(0)-style factors finite."""
    return np.where(x == 0, value, x)


def reduced_axes(axis: Any, ndim: int) -> tuple[int, ...]:
    """The axes a reduction with this ``axis`` argument removes, as non-negative ints."""
    if axis is None:
        return tuple(range(ndim))
    axes = (axis,) if np.ndim(axis) == 0 else tuple(axis)
    return tuple(sorted(int(a) % ndim for a in axes)) if ndim else ()


def keep_dims(value: Any, x: Any, axis: Any, keepdims: Any) -> Any:
    """Give a reduced value its size-1 axes back so that it broadcasts against ``x``."""
    ndim = np.ndim(x)
    if (not no_value(keepdims) and keepdims) or ndim == 0:
        return value
    kept = np.reshape(value, [1 if i in reduced_axes(axis, ndim) else n for i, n in enumerate(np.shape(x))])
    return to_library(kept, x)  # a NumPy cotangent of a CuPy reduction must not meet CuPy arrays as NumPy


def zeros_for(x: Any, g: Any) -> np.ndarray:
    """A fresh zero array shaped like ``x`` in the dtype a contribution to ``x`` should have (and in the
    library of ``x`` or ``g``: a Dask cotangent gives Dask zeros)."""
    if type(x) is np.ndarray and (type(g) is np.ndarray or type(g) is float or type(g) is np.float64):
        return np.zeros(x.shape, np.result_type(x, g))  # both NumPy: no other library to look for
    return zeros_in(np.shape(x), np.result_type(x, g), (x, g))


def is_array(value: Any) -> bool:
    """A NumPy array, or an array of another library (Dask, CuPy): not a list or tuple of elements."""
    return isinstance(value, np.ndarray) or is_foreign(value)


def as_array(value: Any, dtype: Any = None) -> Any:
    """``np.asarray``, except that an array of another library (Dask, CuPy) stays in its library, uncomputed."""
    if is_foreign(value):
        return value if dtype is None or value.dtype == dtype else value.astype(dtype)
    return np.asarray(value, dtype=dtype)


def cast_like(value: Any, x: Any) -> Any:
    """``value`` in ``x``'s floating dtype and shape, for rules whose output dtype differs."""
    dtype = getattr(x, "dtype", None)
    if dtype is not None and np.issubdtype(dtype, np.inexact):
        if dtype.kind != "c" and np.iscomplexobj(value):
            value = np.real(value)  # the cotangent of a real value: its imaginary part carries nothing
        return np.reshape(as_array(value, dtype=dtype), np.shape(x))
    return value


def variadic(make: Callable[[int], Callable], count: int, names: Sequence[str]) -> list[Callable]:
    """``count`` vjps for a function of any number of positional arguments.

    ``make(i)`` returns the vjp of argument ``i``; its signature is set to
    ``(g, ans, *names)`` so that the generated adjoint reads ``max_db``.
    """
    signature = inspect.Signature(
        [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("g", "ans", *names)]
    )
    vjps = []
    for i in range(count):
        fn = make(i)
        fn.__signature__ = signature
        vjps.append(fn)
    return vjps


def no_value(value: Any) -> bool:
    """True when an optional argument was not given (None or NumPy's ``<no value>``)."""
    return value is None or value is np._NoValue


def reduced_size(x: Any, axis: Any) -> int:
    """How many elements of ``x`` each output of a reduction over ``axis`` combines."""
    shape = np.shape(x)
    return int(np.prod([shape[i] for i in reduced_axes(axis, len(shape))], dtype=np.int64))


def _simple(value: Any) -> bool:
    if isinstance(value, (tuple, list)):
        return all(_simple(v) for v in value)
    return value is None or value is np._NoValue or isinstance(value, (bool, int, str, type, np.dtype, np.integer))


def fuse_linear(vjp: Callable) -> Callable:
    """A ``fuse`` form for a vjp that is linear in ``g`` and reads its inputs only through shapes.

    k contributions with the same input shape and the same options are
    ``vjp(g_1 + ... + g_k)``: the small cotangents are summed, and the
    full-size result (a broadcast, say) is made once instead of k times.
    """

    def fuse(calls):
        (args0, kwargs0) = calls[0]
        key = (np.shape(args0[2]), args0[3:], sorted(kwargs0.items()))
        if not _simple(list(args0[3:]) + list(kwargs0.values())):
            return None
        total = args0[0]
        for args, kwargs in calls[1:]:
            if not _simple(list(args[3:]) + list(kwargs.values())):
                return None
            if (np.shape(args[2]), args[3:], sorted(kwargs.items())) != key:
                return None
            if np.shape(args[0]) != np.shape(total):
                return None
            total = total + args[0]
        return vjp(total, *args0[1:], **kwargs0)

    return fuse


def note(text: str, *rules_: Any) -> None:
    """Attach a remark for docs/rules.md (ties, conventions, limits) to registered rules."""
    for rule in rules_:
        rule.notes = text
