"""Structured arguments and results as flat lists of leaves, and back.

``flatten(tree)`` returns a tree's leaves (floats, arrays, anything that is
not a container) in order, with a function that rebuilds a tree of the same
structure from new leaves. Tuples, lists and dicts (nested) are containers,
as in ``adsrc.values.leaves``; a NamedTuple is rebuilt as its own type, and
an object (a dataclass, a registered class, a model) is flattened into its
attributes that hold floats and rebuilt as a copy holding the new leaves.
``jacobian``, ``hessian`` and ``check_grads`` see structured arguments only
through these two functions, so that other containers (dataclasses,
registered pytrees) need only be taught here.
"""
from __future__ import annotations

import math
from typing import Any, Callable

import numpy as np

from ..values.arrays import is_foreign, to_library
from ..values.pytrees import attributes, holds_floats, is_object, rebuild


def flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """``(leaves, unflatten)``: ``unflatten(leaves)`` rebuilds ``tree``'s structure around new leaves.

    >>> leaves, unflatten = flatten({"w": (1.0, 2.0), "b": 3.0})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> unflatten([10.0, 20.0, 30.0])
    {'w': (10.0, 20.0), 'b': 30.0}
    """
    if isinstance(tree, dict):
        keys = list(tree)
        return _flatten_children([tree[k] for k in keys], lambda items: dict(zip(keys, items)))
    if isinstance(tree, (list, tuple)):
        kind = type(tree)
        if kind is list or kind is tuple:
            return _flatten_children(list(tree), kind)
        if hasattr(tree, "_fields"):  # a NamedTuple takes its fields as arguments
            return _flatten_children(list(tree), lambda items: kind(*items))
        return _flatten_children(list(tree), kind)
    if is_object(tree):  # a dataclass, a registered class, a model: its attributes that hold floats
        names = [name for name, value in attributes(tree).items() if holds_floats(value)]
        return _flatten_children([getattr(tree, name) for name in names],
                                 lambda items: rebuild(tree, dict(zip(names, items)), _given))
    return [tree], lambda leaves: leaves[0]


def _given(new: Any, old: Any) -> Any:
    return new


def _flatten_children(children: list[Any], rebuild: Callable[[list[Any]], Any]):
    flat: list[Any] = []
    spans: list[tuple[int, int, Callable]] = []
    for child in children:
        leaves, unflatten = flatten(child)
        spans.append((len(flat), len(flat) + len(leaves), unflatten))
        flat.extend(leaves)

    def unflatten(leaves: list[Any]) -> Any:
        return rebuild([unflatten_child(leaves[start:stop]) for start, stop, unflatten_child in spans])

    return flat, unflatten


def leaf_paths(tree: Any) -> list[tuple[tuple, Any]]:
    """Each leaf with the keys that reach it, in the order of :func:`flatten`.

    >>> leaf_paths({"w": (1.0, 2.0), "b": 3.0})
    [(('w', 0), 1.0), (('w', 1), 2.0), (('b',), 3.0)]
    """
    if isinstance(tree, dict):
        return [((key, *path), leaf) for key in tree for path, leaf in leaf_paths(tree[key])]
    if isinstance(tree, (list, tuple)):
        return [((i, *path), leaf) for i, item in enumerate(tree) for path, leaf in leaf_paths(item)]
    if is_object(tree):
        return [((name, *path), leaf) for name, value in attributes(tree).items() if holds_floats(value)
                for path, leaf in leaf_paths(value)]
    return [((), tree)]


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


def stack_columns(parts: list[Any], out_like: Any, in_like: Any) -> Any:
    """Directional derivatives of the leaf ``out_like``, one per element of ``in_like``, as one block
    of shape ``out.shape + in.shape`` (a float when both are scalars)."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return parts[0] if is_foreign(parts[0]) else float(parts[0])
    if not parts:  # an empty input
        return np.zeros(shape)
    return np.reshape(np.stack([c if is_foreign(c) else np.asarray(c) for c in parts], axis=-1), shape)


def stack_rows(parts: list[Any], out_like: Any, in_like: Any) -> Any:
    """Gradients of the leaf ``in_like``, one per element of ``out_like``, as one block of shape
    ``out.shape + in.shape``."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return parts[0] if is_foreign(parts[0]) else float(parts[0])
    if not parts:  # an empty output
        return np.zeros(shape)
    return np.reshape(np.stack([r if is_foreign(r) else np.asarray(r) for r in parts]), shape)
