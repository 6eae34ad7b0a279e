"""Pytrees: structured values as flat lists of leaves and a structure, and back.

A tree's *leaves* are what is not a container: floats, arrays, ints,
strings. Tuples, lists and dicts (nested) are containers, as in
``adsrc.values.leaves``; a NamedTuple is rebuilt as its own type; an object
(a dataclass, a registered class, a model) is flattened into its attributes
that hold floats, the others (ints, strings, functions, None) being its
configuration, and is rebuilt as a copy holding the new leaves. ``None`` is
an empty subtree: it has no leaves and is rebuilt as ``None`` (as in JAX).

:class:`TreeStructure` is what is left of a tree without its leaves; it
compares with ``==`` and rebuilds trees with :meth:`TreeStructure.unflatten`.
``jacobian``, ``hessian`` and ``check_grads`` see structured arguments only
through :func:`flatten`, and the public ``tree_*`` functions and
``ravel_pytree`` through :func:`tree_flatten`: one flattener for all.
"""
from __future__ import annotations

from typing import Any, Callable, Iterator

from ..errors import InvalidArgument
from ..values import TangentDict, TangentList, TangentTuple, zero
from ..values.pytrees import attributes, holds_floats, is_namedtuple, is_object, rebuild

__all__ = ["TreeStructure", "flatten", "leaf_paths", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
           "tree_unflatten"]

_LEAF, _NONE, _DICT, _LIST, _TUPLE, _NAMEDTUPLE, _SEQUENCE, _OBJECT = (
    "leaf", "none", "dict", "list", "tuple", "namedtuple", "sequence", "object")


class TreeStructure:
    """The structure of a tree: its containers and their keys, without the leaves.

    Two structures are equal when their containers have the same types and
    keys (a dict's keys in the same order, an object's float-holding
    attribute names), so that the leaves of one tree fit the other. An
    object's other attributes are not compared: they come back from the tree
    the structure was taken from.

    >>> import adsrc
    >>> s = adsrc.tree_structure({"w": (1.0, 2.0), "b": 3.0})
    >>> s
    TreeStructure({'w': (*, *), 'b': *})
    >>> s.num_leaves, s == adsrc.tree_structure({"w": (0.0, 0.0), "b": 0.0})
    (3, True)
    >>> s.unflatten([10.0, 20.0, 30.0])
    {'w': (10.0, 20.0), 'b': 30.0}
    """

    __slots__ = ("kind", "type", "keys", "children", "num_leaves", "_template")

    def __init__(self, kind: str, node_type: type | None = None, keys: tuple = (),
                 children: tuple["TreeStructure", ...] = (), template: Any = None):
        self.kind, self.type, self.keys, self.children = kind, node_type, keys, children
        self.num_leaves = 1 if kind == _LEAF else sum(c.num_leaves for c in children)
        self._template = template  # an object's own value: its configuration comes back from it

    def _key(self) -> tuple:
        return (self.kind, self.type, self.keys, self.children)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, TreeStructure) and self._key() == other._key()

    def __hash__(self) -> int:
        return hash(self._key())

    def __repr__(self) -> str:
        return f"TreeStructure({self._show()})"

    def _show(self) -> str:
        parts = [c._show() for c in self.children]
        if self.kind == _LEAF:
            return "*"
        if self.kind == _NONE:
            return "None"
        if self.kind == _DICT:
            return "{" + ", ".join(f"{k!r}: {p}" for k, p in zip(self.keys, parts)) + "}"
        if self.kind == _LIST:
            return "[" + ", ".join(parts) + "]"
        if self.kind == _TUPLE:
            return "(" + ", ".join(parts) + ("," if len(parts) == 1 else "") + ")"
        named = self.kind in (_NAMEDTUPLE, _OBJECT)
        inner = ", ".join(f"{k}={p}" for k, p in zip(self.keys, parts)) if named else ", ".join(parts)
        return f"{self.type.__name__}({inner})"

    def unflatten(self, leaves: Any) -> Any:
        """A tree of this structure holding ``leaves`` (a sequence of :attr:`num_leaves` values), in order."""
        leaves = list(leaves)
        if len(leaves) != self.num_leaves:
            raise InvalidArgument(f"tree_unflatten: the structure {self!r} has {self.num_leaves} leaves, "
                                  f"and {len(leaves)} were given")
        return self._build(iter(leaves))

    def _build(self, leaves: Iterator[Any]) -> Any:
        if self.kind == _LEAF:
            return next(leaves)
        if self.kind == _NONE:
            return None
        items = [c._build(leaves) for c in self.children]
        if self.kind == _DICT:
            return dict(zip(self.keys, items))
        if self.kind in (_LIST, _TUPLE, _SEQUENCE):
            return self.type(items)
        if self.kind == _NAMEDTUPLE:
            return self.type(*items)
        return rebuild(self._template, dict(zip(self.keys, items)), _given)

    def flatten_up_to(self, tree: Any, strict: bool = True, what: str = "tree_map") -> list[Any]:
        """The parts of ``tree`` at this structure's leaves, in order: the leaves of a tree of this
        structure, or whole subtrees where ``tree`` goes deeper.

        A dict's entries are matched by key, whatever their order. ``adsrc.zero``
        in place of a subtree is a zero at each of its leaves. With ``strict``
        False (the cotangent or tangent of a tree), a missing entry is a zero,
        and an object's parts may be given as a dict of its attributes.
        """
        out: list[Any] = []
        self._up_to(tree, (), out, strict, what)
        return out

    def _up_to(self, tree: Any, path: tuple, out: list, strict: bool, what: str) -> None:
        if self.kind == _LEAF:
            out.append(tree)
            return
        if tree is zero or tree is None and (self.kind == _NONE or not strict):
            out.extend([zero] * self.num_leaves)
            return
        if self.kind == _NONE:
            raise _mismatch(what, path, "None", tree)
        if self.kind == _DICT or self.kind == _OBJECT and isinstance(tree, dict) and not strict:
            if not isinstance(tree, dict):
                raise _mismatch(what, path, "a dict", tree)
            if strict and set(tree) != set(self.keys):
                raise InvalidArgument(f"{what}: the dicts at {_path(path)} have different keys: "
                                      f"{sorted(map(repr, tree))} where the first has {sorted(map(repr, self.keys))}")
            parts = [tree.get(k, zero) for k in self.keys]
        elif self.kind == _OBJECT:
            if not isinstance(tree, self.type):
                raise _mismatch(what, path, f"a {self.type.__name__}", tree)
            parts = [getattr(tree, k, zero) for k in self.keys]
        else:
            if not isinstance(tree, (list, tuple)) or strict and type(tree) is not self.type:
                raise _mismatch(what, path, f"a {self.type.__name__}", tree)
            if len(tree) != len(self.children) and (strict or len(tree) > len(self.children)):
                raise InvalidArgument(f"{what}: the {type(tree).__name__} at {_path(path)} has {len(tree)} "
                                      f"items where the first has {len(self.children)}")
            parts = list(tree) + [zero] * (len(self.children) - len(tree))
        for key, child, value in zip(self.keys, self.children, parts):
            child._up_to(value, path + (key,), out, strict, what)

    def cotangent(self, parts: list[Any]) -> Any:
        """A cotangent (or tangent) of a tree of this structure from one per leaf, in adsrc's cotangent
        containers: a dict of attributes for an object, a tuple for a NamedTuple, zero for None."""
        return self._cotangent(iter(parts))

    def _cotangent(self, parts: Iterator[Any]) -> Any:
        if self.kind == _LEAF:
            return next(parts)
        items = [c._cotangent(parts) for c in self.children]
        if self.kind == _NONE:
            return zero
        if self.kind in (_DICT, _OBJECT):
            return TangentDict(zip(self.keys, items))
        return TangentList(items) if self.kind == _LIST else TangentTuple(items)

    def paths(self) -> list[tuple]:
        """The keys that reach each leaf, in order (an object's attribute names, a sequence's positions)."""
        if self.kind == _LEAF:
            return [()]
        return [(key, *path) for key, child in zip(self.keys, self.children) for path in child.paths()]


def _path(path: tuple) -> str:
    return "the top" if not path else "".join(f"[{k!r}]" for k in path)


def _mismatch(what: str, path: tuple, expected: str, got: Any) -> InvalidArgument:
    return InvalidArgument(f"{what}: the trees differ at {_path(path)}: {expected} in the first, a "
                           f"{type(got).__name__} here; give trees of one structure (tree_structure(t) shows one)")


def _given(new: Any, old: Any) -> Any:
    return new


def tree_flatten(tree: Any) -> tuple[list[Any], TreeStructure]:
    """``(leaves, structure)``: the leaves of ``tree`` in order, and its structure.

    Tuples, lists and dicts (in insertion order) are containers, and so are
    NamedTuples, dataclasses, classes registered with ``adsrc.register_pytree``
    and plain objects, through their attributes that hold floats. ``None`` is
    an empty subtree. ``tree_unflatten(structure, leaves)`` rebuilds it.

    >>> import numpy as np, adsrc
    >>> leaves, structure = adsrc.tree_flatten({"w": np.ones(2), "b": (0.5, None)})
    >>> leaves
    [array([1., 1.]), 0.5]
    >>> adsrc.tree_unflatten(structure, [np.zeros(2), 1.5])
    {'w': array([0., 0.]), 'b': (1.5, None)}
    """
    leaves: list[Any] = []
    return leaves, _flatten_into(tree, leaves)


def _flatten_into(tree: Any, leaves: list[Any]) -> TreeStructure:
    if tree is None:
        return TreeStructure(_NONE)
    if isinstance(tree, dict):
        keys = tuple(tree)
        return TreeStructure(_DICT, dict, keys, tuple(_flatten_into(tree[k], leaves) for k in keys))
    if isinstance(tree, (list, tuple)):
        kind = type(tree)
        label = _LIST if kind is list else _TUPLE if kind is tuple else _NAMEDTUPLE if is_namedtuple(tree) \
            else _SEQUENCE
        keys = tuple(kind._fields) if label == _NAMEDTUPLE else tuple(range(len(tree)))
        return TreeStructure(label, kind, keys, tuple(_flatten_into(item, leaves) for item in tree))
    if is_object(tree):  # a dataclass, a registered class, a model: its attributes that hold floats
        names = tuple(name for name, value in attributes(tree).items() if holds_floats(value))
        return TreeStructure(_OBJECT, type(tree), names, tuple(_flatten_into(getattr(tree, n), leaves) for n in names),
                             template=tree)
    leaves.append(tree)
    return TreeStructure(_LEAF)


def flatten(tree: Any) -> tuple[list[Any], Callable[[list[Any]], Any]]:
    """``(leaves, unflatten)``: ``unflatten(leaves)`` rebuilds ``tree``'s structure around new leaves.

    >>> leaves, unflatten = flatten({"w": (1.0, 2.0), "b": 3.0})
    >>> leaves
    [1.0, 2.0, 3.0]
    >>> unflatten([10.0, 20.0, 30.0])
    {'w': (10.0, 20.0), 'b': 30.0}
    """
    leaves, structure = tree_flatten(tree)
    return leaves, structure.unflatten


def leaf_paths(tree: Any) -> list[tuple[tuple, Any]]:
    """Each leaf with the keys that reach it, in the order of :func:`flatten`.

    >>> leaf_paths({"w": (1.0, 2.0), "b": 3.0})
    [(('w', 0), 1.0), (('w', 1), 2.0), (('b',), 3.0)]
    """
    leaves, structure = tree_flatten(tree)
    return list(zip(structure.paths(), leaves))


def tree_leaves(tree: Any) -> list[Any]:
    """The leaves of ``tree``, in the order of :func:`tree_flatten`.

    >>> import adsrc
    >>> adsrc.tree_leaves([1.0, {"a": 2.0, "b": None}, (3.0,)])
    [1.0, 2.0, 3.0]
    """
    return tree_flatten(tree)[0]


def tree_structure(tree: Any) -> TreeStructure:
    """The structure of ``tree`` (a :class:`TreeStructure`, which compares with ``==``).

    >>> import adsrc
    >>> adsrc.tree_structure((1.0, [2.0, 3.0])) == adsrc.tree_structure((0.0, [0.0, 0.0]))
    True
    >>> adsrc.tree_structure((1.0, [2.0, 3.0])) == adsrc.tree_structure((0.0, (0.0, 0.0)))
    False
    """
    return tree_flatten(tree)[1]


def tree_unflatten(structure: TreeStructure, leaves: Any) -> Any:
    """The tree of ``structure`` holding ``leaves``, in order (the inverse of :func:`tree_flatten`).

    >>> import adsrc
    >>> adsrc.tree_unflatten(adsrc.tree_structure({"a": 1.0, "b": [2.0]}), [5.0, 6.0])
    {'a': 5.0, 'b': [6.0]}
    """
    if not isinstance(structure, TreeStructure):
        raise InvalidArgument(f"tree_unflatten takes a TreeStructure (from tree_structure or tree_flatten), "
                              f"not a {type(structure).__name__}")
    return structure.unflatten(leaves)


def tree_map(f: Callable[..., Any], tree: Any, *rest: Any) -> Any:
    """A tree of ``tree``'s structure holding ``f(leaf, *others)`` at each leaf.

    ``rest`` are trees of the same structure (dict entries are matched by key),
    or deeper, in which case ``f`` receives their whole subtree at each of
    ``tree``'s leaves. ``adsrc.zero`` in place of a subtree of a tree in
    ``rest`` is a zero at each of its leaves, and absorbs arithmetic, so that
    an update such as ``p - 0.1 * g`` leaves ``p`` as it is there.

    >>> import numpy as np, adsrc
    >>> params = {"w": np.array([1.0, 2.0]), "b": 0.5}
    >>> grads = adsrc.grad(lambda p: np.sum(p["w"] ** 2) + p["b"])(params)
    >>> adsrc.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    {'w': array([0.8, 1.6]), 'b': 0.4}
    """
    leaves, structure = tree_flatten(tree)
    others = [structure.flatten_up_to(other, what=f"tree_map (tree {i + 1})") for i, other in enumerate(rest)]
    return structure.unflatten([f(*items) for items in zip(leaves, *others)])
