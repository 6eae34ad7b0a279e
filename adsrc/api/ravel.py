"""``ravel_pytree``: a tree's leaves as one flat vector, and the function that rebuilds the tree.

``flat, unravel = ravel_pytree(tree)`` concatenates the leaves (each one
raveled in C order) into a 1-D array; ``unravel(v)`` splits a vector of that
length back into leaves of the original shapes and dtypes, in a tree of the
original structure. Both are differentiable where adsrc differentiates a
function that calls them, through rules registered below (reverse and
forward mode): ``ravel_pytree`` as a primitive of its tree, and ``unravel``
(an :class:`Unravel`, a ``functools.partial`` of :func:`unravel_pytree`) as
a primitive of its vector. They are linear, so each rule is the other's reshaping.
"""
from __future__ import annotations

import functools
import math
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..rules.registry import defjvp, defvjp
from ..values import TangentTuple, unthunk, zero
from .trees import TreeStructure, tree_flatten

__all__ = ["Layout", "Unravel", "ravel_pytree", "unravel_pytree"]


class Layout:
    """Where each leaf of a tree lies in its flat vector: its structure, and each leaf's span, shape and dtype."""

    __slots__ = ("structure", "shapes", "dtypes", "types", "offsets", "size", "flat_dtype")

    def __init__(self, structure: TreeStructure, leaves: list[Any], flat_dtype: np.dtype):
        self.structure = structure
        self.shapes = [np.shape(leaf) for leaf in leaves]
        self.dtypes = [np.result_type(leaf) for leaf in leaves]
        self.types = [type(leaf) for leaf in leaves]
        sizes = [math.prod(shape) for shape in self.shapes]
        self.offsets = np.cumsum([0] + sizes).tolist()
        self.size = self.offsets[-1]
        self.flat_dtype = flat_dtype

    def _pieces(self, flat: Any, cotangent: bool) -> list[Any]:
        """``flat`` cut into one value per leaf, each of its leaf's shape: of its leaf's type and dtype, or
        (``cotangent``) a cotangent for it: zero for a leaf that has none (an int, a bool)."""
        flat = np.asarray(flat)
        if flat.shape != (self.size,):
            raise InvalidArgument(f"unravel takes a 1-D array of {self.size} elements (the leaves of "
                                  f"{self.structure!r}), not one of shape {flat.shape}")
        out = []
        for k, (shape, dtype, kind) in enumerate(zip(self.shapes, self.dtypes, self.types)):
            piece = flat[self.offsets[k]:self.offsets[k + 1]]
            if dtype.kind not in "fc":
                out.append(zero if cotangent else _as_leaf(piece, shape, dtype, kind))
                continue
            if dtype.kind == "f" and piece.dtype.kind == "c":
                piece = np.real(piece)  # a real leaf keeps the real part (of a value or of a cotangent)
            out.append(_as_leaf(piece, shape, piece.dtype if cotangent else dtype, kind))
        return out

    def _ravel(self, parts: list[Any], dtype: np.dtype, cotangent: bool = True) -> np.ndarray:
        """One vector from one value (or zero) per leaf, in order; a (co)tangent has zeros at integer leaves."""
        out = np.zeros(self.size, dtype=dtype)
        for k, (value, shape) in enumerate(zip(parts, self.shapes)):
            value = unthunk(value)
            if value is not zero and value is not None and (self.dtypes[k].kind in "fc" or not cotangent):
                value = np.asarray(value)
                out[self.offsets[k]:self.offsets[k + 1]] = np.ravel(np.broadcast_to(
                    np.real(value) if dtype.kind != "c" else value, shape))
        return out


def unravel_pytree(layout: Layout, flat: Any) -> Any:
    """The tree of ``layout`` (a :class:`Layout`) rebuilt from the vector ``flat``; the primitive behind
    :class:`Unravel`, which has a rule."""
    return layout.structure.unflatten(layout._pieces(flat, cotangent=False))


class Unravel(functools.partial):
    """Rebuilds a tree from a flat vector: the second result of :func:`ravel_pytree`.

    ``unravel(v)`` takes a 1-D array of ``unravel.size`` elements and returns a
    tree of ``unravel.structure`` whose leaves have the shapes and dtypes of the
    tree it was made from (a Python float as a float, an int as an int). It is
    ``functools.partial(unravel_pytree, layout)``, so that a differentiated
    function that calls it reaches the rule of ``unravel_pytree``.
    """

    @property
    def structure(self) -> TreeStructure:
        return self.args[0].structure

    @property
    def size(self) -> int:
        return self.args[0].size

    def __repr__(self) -> str:
        return f"Unravel({self.structure!r}, size={self.size})"

    def ravel_like(self, tree: Any, dtype: Any = None) -> np.ndarray:
        """The vector of ``tree``, a tree of this structure (a gradient of the raveled tree), in this
        layout: its leaves raveled where the original's are, zeros for ``adsrc.zero`` and for the
        original's integer leaves. ``dtype``: the vector's (the flat vector's by default).

        >>> import numpy as np, adsrc
        >>> flat, unravel = adsrc.ravel_pytree({"a": np.ones(2), "b": 1.0})
        >>> unravel.ravel_like({"b": 3.0, "a": np.array([1.0, 2.0])})
        array([1., 2., 3.])
        """
        layout = self.args[0]
        parts = [unthunk(p) for p in layout.structure.flatten_up_to(tree, what="ravel_like")]
        return layout._ravel(parts, np.dtype(layout.flat_dtype if dtype is None else dtype))


def _as_leaf(piece: np.ndarray, shape: tuple, dtype: np.dtype, kind: type) -> Any:
    if kind is float or kind is int or kind is complex or kind is bool:
        return kind(piece[0])
    value = piece.reshape(shape).astype(dtype)  # a copy: no leaf shares the vector's memory
    return value[()] if issubclass(kind, np.generic) else value


def ravel_pytree(tree: Any) -> tuple[np.ndarray, Unravel]:
    """``(flat, unravel)``: the leaves of ``tree`` concatenated into one 1-D array, and its inverse.

    Each leaf is raveled in C order, in the order of ``tree_leaves``; ``flat``
    has the leaves' common dtype (float64 when they are all ints), and is a new
    array. ``unravel(v)`` rebuilds the tree from any vector of ``flat``'s
    length, each leaf with its own shape and dtype. Both are differentiable:
    a loss of ``unravel(v)`` has a gradient with respect to ``v``, and a loss of
    ``ravel_pytree(tree)[0]`` one with respect to ``tree``.

    >>> import numpy as np, adsrc
    >>> params = {"W": np.ones((2, 2)), "b": np.array([0.5, -0.5])}
    >>> flat, unravel = adsrc.ravel_pytree(params)
    >>> flat
    array([ 1. ,  1. ,  1. ,  1. ,  0.5, -0.5])
    >>> unravel(np.arange(6.0))["W"]
    array([[0., 1.],
           [2., 3.]])
    """
    leaves, structure = tree_flatten(tree)
    if any(not isinstance(leaf, (int, float, complex, np.ndarray, np.generic)) for leaf in leaves):
        bad = next(leaf for leaf in leaves if not isinstance(leaf, (int, float, complex, np.ndarray, np.generic)))
        raise InvalidArgument(f"ravel_pytree concatenates numbers and NumPy arrays; this tree has a leaf of type "
                              f"{type(bad).__name__} (convert it with np.asarray, or leave it out of the tree)")
    dtypes = [np.result_type(leaf) for leaf in leaves]
    dtype = np.result_type(*dtypes) if dtypes else np.dtype(np.float64)
    if dtype.kind not in "fc":
        dtype = np.dtype(np.float64)
    layout = Layout(structure, leaves, dtype)
    return layout._ravel(leaves, dtype, cotangent=False), Unravel(unravel_pytree, layout)


# ---- rules: both functions are linear, so each one's vjp is a reshaping, written with two more linear
# primitives, whose rules are each other: the vjps themselves are then differentiable (second order).
def ravel_parts(layout: Layout, tree: Any) -> np.ndarray:
    """The vector of the tangent or cotangent ``tree`` of a tree of ``layout``: zero where a part is missing."""
    parts = [unthunk(p) for p in layout.structure.flatten_up_to(unthunk(tree), strict=False,
                                                                 what="a tangent or cotangent of a tree")]
    dtype = np.result_type(layout.flat_dtype, *(np.result_type(p) for p in parts if p is not zero and p is not None))
    return layout._ravel(parts, dtype)


def parts_tree(layout: Layout, flat: Any) -> Any:
    """The tangent or cotangent of a tree of ``layout`` held by the vector ``flat`` (adsrc's containers)."""
    return layout.structure.cotangent(layout._pieces(unthunk(flat), cotangent=True))


def _ravel_parts_dtree(g, ans, layout, tree):
    return parts_tree(layout, g)


def _ravel_parts_jvp(t, ans, layout, tree):
    return ravel_parts(layout, t)


def _parts_tree_dflat(g, ans, layout, flat):
    return ravel_parts(layout, g)


def _parts_tree_jvp(t, ans, layout, flat):
    return parts_tree(layout, t)


def _ravel_dtree(g, ans, tree):
    return unravel_parts(ans[1], g[0])


def unravel_parts(unravel: Unravel, flat: Any) -> Any:
    """``parts_tree`` for the layout of ``unravel`` (what the vjp of ``ravel_pytree`` reads from its result)."""
    return parts_tree(unravel.args[0], flat)


def _unravel_parts_dflat(g, ans, unravel, flat):
    return ravel_parts(unravel.args[0], g)


def _unravel_parts_jvp(t, ans, unravel, flat):
    return unravel_parts(unravel, t)


def _ravel_jvp(t, ans, tree):
    return TangentTuple((ravel_parts(ans[1].args[0], t), zero))


def _unravel_dflat(g, ans, layout, flat):
    return ravel_parts(layout, g)


def _unravel_jvp(t, ans, layout, flat):
    return parts_tree(layout, t)


defvjp(ravel_parts, None, _ravel_parts_dtree, module="adsrc")
defjvp(ravel_parts, None, _ravel_parts_jvp)
defvjp(parts_tree, None, _parts_tree_dflat, module="adsrc")
defjvp(parts_tree, None, _parts_tree_jvp)
defvjp(unravel_parts, None, _unravel_parts_dflat, module="adsrc")
defjvp(unravel_parts, None, _unravel_parts_jvp)
defvjp(ravel_pytree, _ravel_dtree, module="adsrc")
defjvp(ravel_pytree, _ravel_jvp)
defvjp(unravel_pytree, None, _unravel_dflat, module="adsrc")
defjvp(unravel_pytree, None, _unravel_jvp)
