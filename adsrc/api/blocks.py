"""Blocks of derivatives over the leaves of structured arguments: unit tangents, zeros, stacked blocks.

``jacobian``, ``hessian`` and ``gradients``' forward-over-reverse forms
walk the leaves of a tree (``trees.py``) one element at a time with these.
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..values.arrays import is_foreign, to_library


def is_float_leaf(leaf: Any) -> bool:
    """Whether a leaf is a real floating-point scalar or array (what has a derivative)."""
    if is_foreign(leaf):  # a Dask or CuPy array
        return leaf.dtype.kind == "f"
    if isinstance(leaf, (bool, np.bool_)) or not isinstance(leaf, (float, int, np.ndarray, np.generic)):
        return False
    return np.result_type(leaf).kind == "f"


def unit_vectors(leaf: Any) -> list[Any]:
    """One unit tangent per element of a float leaf, of its type and shape (a float for a Python float;
    an array of the leaf's library for a Dask or CuPy array)."""
    if not isinstance(leaf, (np.ndarray, np.generic)) and not is_foreign(leaf):
        return [1.0]
    dtype = np.result_type(leaf.dtype, 1.0)
    out = []
    for j in range(math.prod(np.shape(leaf))):  # np.size would compute a Dask array
        e = np.zeros(np.shape(leaf), dtype=dtype)
        e.flat[j] = 1.0
        out.append(dtype.type(e) if isinstance(leaf, np.generic) else to_library(e, leaf))
    return out


def zeros_like_leaf(leaf: Any) -> Any:
    """A zero of a leaf's type and shape."""
    if isinstance(leaf, np.ndarray) or is_foreign(leaf):
        return np.zeros_like(leaf)
    if isinstance(leaf, np.generic):
        return leaf.dtype.type(0)
    return 0.0


def scalar_block(part: Any, out_like: Any, in_like: Any) -> Any:
    """The derivative of a scalar by a scalar: a float for Python floats; where either is a NumPy scalar
    (or 0-d array), a NumPy scalar of their floating dtype, as ``grad`` gives (float32 stays float32)."""
    if is_foreign(part):
        return part
    numpy_like = [v for v in (out_like, in_like) if isinstance(v, (np.generic, np.ndarray))]
    if not numpy_like:
        return float(part)
    dtype = np.result_type(*(v.dtype for v in numpy_like), np.float16)
    if np.iscomplexobj(part) and dtype.kind != "c":
        dtype = np.result_type(dtype, np.complex64)
    return dtype.type(np.asarray(part)[()])


def stack_columns(parts: list[Any], out_like: Any, in_like: Any) -> Any:
    """Directional derivatives of the leaf ``out_like``, one per element of ``in_like``, as one block
    of shape ``out.shape + in.shape`` (a float when both are scalars)."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return scalar_block(parts[0], out_like, in_like)
    if not parts:  # an empty input
        return np.zeros(shape)
    return np.reshape(np.stack([c if is_foreign(c) else np.asarray(c) for c in parts], axis=-1), shape)


def stack_rows(parts: list[Any], out_like: Any, in_like: Any) -> Any:
    """Gradients of the leaf ``in_like``, one per element of ``out_like``, as one block of shape
    ``out.shape + in.shape``."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return scalar_block(parts[0], out_like, in_like)
    if not parts:  # an empty output
        return np.zeros(shape)
    return np.reshape(np.stack([r if is_foreign(r) else np.asarray(r) for r in parts]), shape)
