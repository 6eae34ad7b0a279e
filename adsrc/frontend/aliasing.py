"""Aliasing: which local names may share memory, for the write checks and the in-place rewrites.

Input: a parsed function. Output: answers about its local names, computed
once per function (flow-insensitively, so they may say "shared" where a path
does not share, never the reverse):

* :meth:`Aliasing.growable_lists`: lists ``.append`` may grow (built here,
  never given a second name);
* :meth:`Aliasing.writable_arrays`: arrays ``x[i] = v`` may write (every
  value they hold is an array made here, none of them a view or a second
  name of another);
* :meth:`Aliasing.makes_fresh_list`: whether an expression makes a new
  list (lists.py says which lists ``xs[i] = v`` may write);
* :meth:`Aliasing.shared_names`: locals whose array another name may see
  (``x op= e`` on them is guarded at run time);
* :meth:`Aliasing.makes_fresh_array`: whether an expression makes a new
  array (a constructor, ``.copy()``, arithmetic).

The fence (mutations.py) refuses writes and appends outside these sets; desugar
guards augmented assignments of shared names; writes.py reads the tables of
view-making attributes, methods and functions kept here.
"""
from __future__ import annotations

import functools

import gast
import numpy as np

from ..ir.dataflow import names as name_nodes
from .parse import _MISSING, Parsed

# Functions that return a new array (never a view of an argument), so that an
# array made by one of them may be written with x[i] = v.
_FRESH_ARRAYS = {
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "array", "copy", "arange", "linspace", "eye", "identity", "tile", "concatenate", "stack",
}
_FRESH_CALLABLES = (np.zeros, np.ones, np.empty, np.full, np.array, np.copy, np.eye, np.identity)

# Attributes, methods and NumPy functions whose result may be a view sharing the array's memory
# (frontend/writes.py reads the same tables).
VIEW_ATTRIBUTES = frozenset({"T", "mT", "real", "imag"})
VIEW_METHODS = frozenset({"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "diagonal"})
VIEW_FUNCTIONS = frozenset({
    "reshape", "transpose", "matrix_transpose", "ravel", "squeeze", "expand_dims", "swapaxes", "moveaxis",
    "rollaxis", "broadcast_to", "diagonal", "atleast_1d", "atleast_2d", "atleast_3d", "asarray", "asanyarray",
    "real", "imag", "split", "array_split",
})


def static_value(parsed: Parsed, locals_: set[str], node: gast.AST) -> object:
    """The object a name or attribute chain refers to, if it is not a local; else _MISSING."""
    if isinstance(node, gast.Name):
        return _MISSING if node.id in locals_ else parsed.resolve(node.id)
    if isinstance(node, gast.Attribute):
        base = static_value(parsed, locals_, node.value)
        if base is _MISSING:
            return _MISSING
        try:
            return getattr(base, node.attr)
        except Exception:  # a property may raise anything
            return _MISSING
    return _MISSING


def local_names(parsed: Parsed) -> set[str]:
    """Every name the function binds: assigned, a parameter, a loop target, a local function."""
    found = {n.id for n in name_nodes(parsed.node) if not isinstance(n.ctx, gast.Load)}
    return found | {n.name for n in gast.walk(parsed.node) if isinstance(n, gast.FunctionDef)}


class Aliasing:
    """The aliasing facts of one function (each computed once)."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self._writable: set[str] | None = None
        self._shared: dict[str, bool] | None = None

    @functools.cached_property
    def locals(self) -> set[str]:
        return local_names(self.parsed)

    def static(self, node: gast.AST) -> object:
        return static_value(self.parsed, self.locals, node)

    def growable_lists(self) -> set[str]:
        """Local lists that ``.append`` may grow: built here from a list literal or a
        comprehension, and never given a second name (so no alias sees the growth)."""
        built, aliased = set(), set()
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                value = node.value
                names = [n.id for n in gast.walk(node.targets[0]) if isinstance(n, gast.Name)]
                if isinstance(value, (gast.List, gast.ListComp)):
                    built.update(names)
                elif isinstance(value, gast.Name):
                    aliased.add(value.id)
                    aliased.update(names)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                aliased.update(e.id for e in elts if isinstance(e, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        return built - aliased - params

    def writable_arrays(self) -> set[str]:
        """Local arrays that ``x[i] = v`` may write: every value they hold is a fresh array
        made here (a constructor, ``.copy()`` or arithmetic), never a view of another array,
        and they are never given a second name. adsrc runs the write on a copy."""
        if self._writable is not None:
            return self._writable
        fresh, other = set(), set()
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                target = node.targets[0].id
                (fresh if self.makes_fresh_array(node.value) else other).add(target)
                if isinstance(node.value, gast.Name):
                    other.add(node.value.id)
            elif isinstance(node, gast.Assign):
                for n in gast.walk(node.targets[0]):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        other.add(n.id)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)) and isinstance(
                    getattr(node, "ctx", gast.Load()), gast.Load):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                other.update(e.id for e in elts if isinstance(e, gast.Name))
            if isinstance(node, gast.For):
                other.update(n.id for n in gast.walk(node.target) if isinstance(n, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        self._writable = fresh - other - params
        return self._writable

    def makes_fresh_list(self, value: gast.AST) -> bool:
        """Whether an expression makes a new list: a display, a comprehension, ``[...] * n``, ``list(...)``,
        ``sorted(...)``, or ``+`` of two of them."""
        if isinstance(value, (gast.List, gast.ListComp)):
            return True
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Mult):  # [v] * n (not [v] * an_array)
            left, right = value.left, value.right
            return isinstance(left, (gast.List, gast.ListComp)) and self._a_count(right) \
                or isinstance(right, (gast.List, gast.ListComp)) and self._a_count(left)
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
            return self.makes_fresh_list(value.left) and self.makes_fresh_list(value.right)
        if isinstance(value, gast.Call) and not any(isinstance(a, gast.Starred) for a in value.args):
            target = self.static(value.func)
            return target is list or target is sorted
        return False

    def _a_count(self, value: gast.AST) -> bool:
        """Whether an expression looks like a number of items: a constant, a name, ``len(...)``, ``int(...)``,
        or arithmetic of them (a NumPy call would make ``[v] * n`` an array)."""
        if isinstance(value, (gast.Constant, gast.Name, gast.Attribute)):
            return True
        if isinstance(value, gast.BinOp):
            return self._a_count(value.left) and self._a_count(value.right)
        if isinstance(value, gast.UnaryOp):
            return self._a_count(value.operand)
        return isinstance(value, gast.Call) and any(self.static(value.func) is f for f in (len, int, max, min))

    def makes_fresh_array(self, value: gast.AST) -> bool:
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return not self.makes_fresh_list(value)
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
                return True
            target = self.static(func)
            if target is _MISSING:
                return False
            numpy_function = getattr(target, "__module__", None) == "numpy"
            return any(target is f for f in _FRESH_CALLABLES) or (
                numpy_function and getattr(target, "__name__", None) in _FRESH_ARRAYS)
        return False

    def shared_names(self) -> dict[str, bool]:
        """Locals whose array may also be reachable through another name: given a second
        name (``v = x``, ``v = G``), an item or attribute of another object (``row = W[0]``,
        ``a, b = pair``, ``for row in m``, ``for v in vs``), a parameter (its caller holds the
        argument too), or taken as a view of another array (``x.T``, ``x.reshape(...)``).
        For them ``x += e`` in place and ``x = x + e`` differ when they hold an array (the
        other name sees the change), so desugar guards their augmented assignments at run
        time. Maps each to whether it may be shared whatever the array (else only when the
        array is a view). The counter of ``range`` or ``enumerate`` is never an array."""
        if self._shared is not None:
            return self._shared
        aliased: set[str] = set()
        views: set[str] = set()
        swapped: list[set[str]] = []

        def bind(target: gast.AST, value: gast.AST) -> None:
            shares = isinstance(value, (gast.Name, gast.Attribute)) or (
                isinstance(value, gast.Subscript) and isinstance(value.value, (gast.Name, gast.Attribute)))
            if isinstance(target, gast.Name):
                if shares:
                    aliased.add(target.id)  # the object itself (or an item of it), which another name holds
                    if isinstance(value, gast.Name) and value.id in self.locals:
                        aliased.add(value.id)
                elif self._may_be_view(value):
                    views.add(target.id)
            elif isinstance(target, (gast.Tuple, gast.List)):
                if _same_length_literal(target, value):
                    if _permutes(target, value):  # a, b = b, a: each array keeps one name,
                        swapped.append(_names(target))  # and what shares it shares it still
                    else:
                        for t, v in zip(target.elts, value.elts):
                            bind(t, v)
                    return
                # items of what is unpacked: of a list or tuple that holds them, rows of an array
                (aliased if shares else views).update(_names(target))

        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                bind(node.targets[0], node.value)
            elif isinstance(node, gast.AnnAssign) and node.value is not None:
                bind(node.target, node.value)
            elif isinstance(node, gast.For):
                target, iterable = node.target, node.iter
                if isinstance(iterable, gast.Call) and isinstance(iterable.func, gast.Name) and iterable.args:
                    builtin = self.static(iterable.func)
                    if builtin is range:
                        continue
                    if builtin is enumerate and isinstance(target, gast.Tuple) and len(target.elts) == 2:
                        target, iterable = target.elts[1], iterable.args[0]  # the counter is an int
                if isinstance(iterable, (gast.List, gast.Tuple)) \
                        and not any(isinstance(e, gast.Starred) for e in iterable.elts):
                    for item in iterable.elts:  # for v in [a, b]: v is a, then b
                        bind(target, item)
                else:  # the items the iterable holds, or rows of an array (views of it)
                    aliased.update(_names(target))
            elif isinstance(node, gast.FunctionDef):  # the function's, or a local function's
                aliased.update(a.id for a in node.args.args)
        changed = True
        while changed:
            changed = False
            for group in swapped:
                for kind in (aliased, views):
                    if kind & group and not group <= kind:
                        kind.update(group)
                        changed = True
        self._shared = {name: name in aliased for name in aliased | views}
        return self._shared

    def _may_be_view(self, value: gast.AST) -> bool:
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            return True
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING:
                return func.attr in VIEW_METHODS or func.attr in VIEW_ATTRIBUTES
            target = self.static(func)
            return getattr(target, "__name__", None) in VIEW_FUNCTIONS and \
                getattr(target, "__module__", "") == "numpy"
        return False


def _names(target: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(target) if isinstance(n, gast.Name)}


def _same_length_literal(target: gast.AST, value: gast.AST) -> bool:
    """True if ``target = value`` unpacks a tuple or list display item by item."""
    return isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts) \
        and not any(isinstance(e, gast.Starred) for e in value.elts)


def _permutes(target: gast.AST, value: gast.AST) -> bool:
    """True for ``a, b = b, a``: names rebound to one another's objects, which no other name gets."""
    names = [e.id for e in target.elts if isinstance(e, gast.Name)]
    values = [e.id for e in value.elts if isinstance(e, gast.Name)]
    return len(names) == len(values) == len(target.elts) == len(set(names)) and sorted(names) == sorted(values)
