"""Specialization of the writes into arrays: the write helpers as plain indexing, where the kinds make it exact.

Input: an adjoint whose loops already own their indexed gradients
(optimize/owned.py: ``d = owned(d)`` before the loop, ``cleared_in_place``,
``added_into`` and ``written_part`` inside), and the kinds inferred for it
(kinds.py, write_kinds.py). Output: the same adjoint where each helper call
does what rules/writes.py's common case does, written out:

* ``dv = written_part(dy, y, i, v)`` as ``dv = dy[i]``, where ``dy`` is a
  float64 vector, ``y`` a float array, ``i`` an int and ``v`` a number (the
  helper returns ``float(dy[i])``: the same number, as a NumPy float);
* ``dy = cleared_in_place(dy, i)`` as ``dy[i] = 0.0``, where ``dy`` is a
  float array (never the zero tangent);
* ``dy = added_into(dy, getitem_dx, g, None, y, i)`` as ``dy[i] += g``, where
  ``dy`` is a float64 array of ``y``'s shape, ``g`` a number and ``i`` an int;
* ``dx = owned(dx)`` right after ``dx = zero``, before a loop that only adds
  numbers into ``dx`` by index, as ``dx = np.zeros(shape)``: what the first
  ``added_into`` allocates (and zeros where the loop runs no step, the
  gradient's value then as well);
* in the forward sweep, ``y_overwritten = y[i].copy()`` as ``y[i]`` where
  ``y[i]`` is a NumPy float, which is immutable (``scalar_copies``, after
  the optimizer; backend/specialized.py also leaves the numbers out of the
  names that may share memory with a written array, so that a restore no
  number reads is dead);
* last (``as_lists``, after the optimizer), a float64 vector gradient the
  adjoint owns that a loop only indexes by ints (``d[i]``, ``d[i] = 0.0``,
  ``d[i] += g``) as a Python list over that loop: ``d = d.tolist()`` for
  ``d = owned(d)`` (or ``[0.0] * n`` for ``np.zeros((n,))``) before it, ``d = np.array(d)``
  after it. The same doubles (float and np.float64 are both IEEE doubles);
  indexing a list and Python float arithmetic cost a third of NumPy's
  scalar indexing. Only where the loop does nothing a Python float would do
  otherwise than a NumPy float: no division, power or modulo (which raise on
  Python floats), no attribute and no call but the tape's ``pop()``.

Anything else (slices, fancy indices, broadcasting, thunks, a gradient that
may be zero) keeps its helper.
"""
from __future__ import annotations

from typing import Any, Callable

import gast
import numpy as np

from ..ir.build import assign, attribute, clone, const, method, name
from ..rules.templates import ZERO, Kind
from .indexed import written_index
from .kinds import Inference
from .write_kinds import (added_by_index, element_rank, float64_arrays, int_index, one_shape, real_scalars,
                          slice_part)


def _call_of(node: gast.AST, label: str | None) -> gast.Call | None:
    if label is not None and isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == label and not node.keywords:
        return node
    return None


def _subscript(array: gast.expr, index: gast.expr, ctx: gast.expr_context) -> gast.Subscript:
    return gast.Subscript(value=name(array.id), slice=clone(index), ctx=ctx)  # the array itself is read


def _loads(node: gast.AST, label: str) -> int:
    return sum(1 for n in gast.walk(node) if isinstance(n, gast.Name) and n.id == label)


class WriteInliner:
    """Rewrites one adjoint's write helpers (see the module docstring)."""

    def __init__(self, adjoint: gast.FunctionDef, inference: Inference, runtime: dict[str, str],
                 vjps: dict[str, Any], module_alias: Callable[[str, Any], str]):
        self.adjoint = adjoint
        self.inference = inference
        self.rt = runtime
        self.vjps = vjps
        self.module_alias = module_alias
        self.changed = False

    def run(self) -> bool:
        pullback = next((s for s in self.adjoint.body if isinstance(s, gast.FunctionDef)), None)
        if pullback is not None:
            self._preallocate(pullback.body)
            self._block(pullback.body)
            self._parts(pullback)
        return self.changed

    # ---- the backward sweep ------------------------------------------------------
    def _block(self, stmts: list[gast.stmt]) -> None:
        for i, stmt in enumerate(stmts):
            for part in ("body", "orelse"):
                if isinstance(getattr(stmt, part, None), list):
                    self._block(getattr(stmt, part))
            replaced = self._statement(stmt)
            if replaced is not None:
                stmts[i] = gast.copy_location(replaced, stmt)
                self.changed = True

    def _statement(self, stmt: gast.stmt) -> gast.stmt | None:
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return None
        target, value, expr = stmt.targets[0], stmt.value, self.inference.expr
        found = _call_of(value, self.rt.get("cleared_in_place"))
        if found is not None and len(found.args) == 2 and _same(found.args[0], target) \
                and expr(target) and all(k.type is np.ndarray and k.dtype.kind == "f" for k in expr(target)):
            return gast.Assign(targets=[_subscript(target, found.args[1], gast.Store())],
                               value=gast.Constant(value=0.0, kind=None), type_comment=None)
        found = _call_of(value, self.rt.get("added_into"))
        if found is not None and _same(found.args[0], target) and added_by_index(found.args, expr, self.vjps):
            return gast.AugAssign(target=_subscript(target, found.args[5], gast.Store()), op=gast.Add(),
                                  value=clone(found.args[2]))
        return None

    def _parts(self, pullback: gast.FunctionDef) -> None:
        """``written_part(dy, y, i, v)`` as ``dy[i]`` wherever it is read."""
        inliner, expr = self, self.inference.expr

        class Parts(gast.NodeTransformer):
            def visit_Call(inner, node):  # noqa: N805
                inner.generic_visit(node)
                found = _call_of(node, inliner.rt.get("written_part"))
                if found is None or len(found.args) != 4 or not isinstance(found.args[0], gast.Name):
                    return node
                dy, y, index, v = found.args
                rank = element_rank(expr(index))
                if rank is not None and float64_arrays(expr(dy), ndim=rank) and expr(y) \
                        and all(k.type is np.ndarray and k.dtype.kind == "f" for k in expr(y)) \
                        and real_scalars(expr(v)):
                    inliner.changed = True
                    return _subscript(dy, index, gast.Load())  # float(dy[i]): the same number
                sliced = slice_part(expr(dy), expr(y), expr(index), expr(v))
                if sliced is not None and ZERO not in sliced and isinstance(index, gast.Call):
                    inliner.changed = True  # y[s] = v of a constant slice s: dy[s], copied (a view would change)
                    part = _subscript(dy, written_index(index), gast.Load())
                    return gast.Call(func=gast.Attribute(value=part, attr="copy", ctx=gast.Load()), args=[], keywords=[])
                return node

        Parts().visit(pullback)

    def _preallocate(self, stmts: list[gast.stmt]) -> None:
        """``d = zero`` ... ``d = owned(d)`` before a loop that only adds numbers into ``d`` by index (and ``d``
        read after it only to add to it or to return it): ``d = np.zeros(shape)`` at the owned."""
        for i, stmt in enumerate(stmts):
            owned = self._owned(stmt)
            if owned is None or i + 1 >= len(stmts) or not isinstance(stmts[i + 1], (gast.For, gast.While)):
                continue
            start = self._zero_before(stmts, i, owned)
            shape = self._added_only(stmts[i + 1], owned)
            if start is None or shape is None or not self._only_summed_after(stmts[i + 2:], owned):
                continue
            np_alias = self.module_alias("np", np)
            stmts[i] = gast.copy_location(
                assign(owned, method(np_alias, "zeros", const(shape))), stmt)
            del stmts[start]
            self.changed = True
            return self._preallocate(stmts)  # the indices moved

    def _owned(self, stmt: gast.stmt) -> str | None:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
            found = _call_of(stmt.value, self.rt.get("owned"))
            if found is not None and len(found.args) == 1 and _same(found.args[0], stmt.targets[0]):
                return stmt.targets[0].id
        return None

    def _zero_before(self, stmts: list[gast.stmt], at: int, d: str) -> int | None:
        """The position of ``d = zero``, the last statement before ``at`` that mentions ``d``."""
        for j in range(at - 1, -1, -1):
            if _loads(stmts[j], d):
                stmt = stmts[j]
                if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                        and stmt.targets[0].id == d and isinstance(stmt.value, gast.Name) \
                        and stmt.value.id == self.rt.get("zero"):
                    return j
                return None
        return None

    def _added_only(self, loop: gast.stmt, d: str) -> tuple | None:
        """The shape of the array ``d`` receives numbers into, where the loop mentions ``d`` only in
        ``d = added_into(d, getitem_dx, g, None, x, i)`` of a float ``g`` (numbers that allocate a float64
        zero array at the first step)."""
        sites, shapes = 0, set()
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name) and node.targets[0].id == d:
                found = _call_of(node.value, self.rt.get("added_into"))
                if found is None or not _same(found.args[0], node.targets[0]) \
                        or not added_by_index(found.args, self.inference.expr, self.vjps, zero_ok=True) \
                        or not real_scalars(self.inference.expr(found.args[2]), ints=False):
                    return None
                sites += 1
                shapes.add(one_shape(self.inference.expr(found.args[4])))
        if not sites or len(shapes) != 1 or _loads(loop, d) != 2 * sites:
            return None
        return shapes.pop()

    def _only_summed_after(self, stmts: list[gast.stmt], d: str) -> bool:
        """After the loop, ``d`` is only added to (``d = accumulate(d, c)``, ``d = d + c``) or returned: a zero
        array there sums as the zero tangent does."""
        for stmt in stmts:
            uses = _loads(stmt, d)
            if not uses:
                continue
            if isinstance(stmt, gast.Return) and isinstance(stmt.value, gast.Tuple) \
                    and any(_same(e, d) for e in stmt.value.elts) and uses == 1:
                continue
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id == d \
                    and uses == 2:
                value = stmt.value
                summed = _call_of(value, self.rt.get("accumulate"))
                if summed is not None and _same(summed.args[0], d) and _loads(summed.args[1], d) == 0:
                    continue
                if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and _same(value.left, d):
                    continue
            return False
        return True

    # ---- the forward sweep --------------------------------------------------------
    def scalar_copies(self) -> bool:
        """``y[i].copy()`` as ``y[i]`` where that is a NumPy float (run after the optimizer, which drops the
        copies no restore reads any more by their form)."""
        self._scalar_copies([s for s in self.adjoint.body if not isinstance(s, gast.FunctionDef)])
        return self.changed

    def _scalar_copies(self, stmts: list[gast.stmt]) -> None:
        inliner = self

        class Copies(gast.NodeTransformer):
            def visit_Call(inner, node):  # noqa: N805
                inner.generic_visit(node)
                func = node.func
                if isinstance(func, gast.Attribute) and func.attr == "copy" and not node.args and not node.keywords \
                        and isinstance(func.value, gast.Subscript) \
                        and inliner.inference.expr(func.value) == {Kind(np.float64)}:
                    inliner.changed = True
                    return func.value  # a NumPy float is immutable: no copy needed
                return node

        for stmt in stmts:
            Copies().visit(stmt)


class ListLoops:
    """A loop's owned float64 gradient vectors as Python lists (``as_lists``; see the module docstring)."""

    def __init__(self, inference: Inference, runtime: dict[str, str], np_alias: str):
        self.inference = inference
        self.rt = runtime
        self.np = np_alias
        self.changed = False

    def block(self, stmts: list[gast.stmt]) -> None:
        j = 0
        while j < len(stmts):
            loop = stmts[j]
            if isinstance(loop, (gast.For, gast.While)) and self._plain(loop):
                listed = [d for d in sorted({n.value.id for n in gast.walk(loop) if isinstance(n, gast.Subscript)
                                             and isinstance(n.value, gast.Name)}) if self._indexed_only(loop, d)]
                for d in listed:
                    at = self._made_before(stmts, j, d)
                    if at is None:
                        continue
                    n = self._length(d)
                    made = stmts[at]
                    if self._zeros(made.value) and n is not None:  # [0.0] * n in place of np.zeros((n,))
                        made.value = gast.BinOp(left=gast.List(elts=[const(0.0)], ctx=gast.Load()), op=gast.Mult(),
                                                right=const(n))
                    else:  # d = owned(d): a list copies anyway
                        made.value = method(d, "tolist")
                    keywords = {} if n else {"dtype": attribute(self.np, "float64")}  # an empty list: float64 still
                    stmts.insert(j + 1, assign(d, method(self.np, "array", name(d), **keywords)))
                    self.changed = True
            else:
                for part in ("body", "orelse"):
                    if isinstance(getattr(loop, part, None), list) and not isinstance(loop, gast.FunctionDef):
                        self.block(getattr(loop, part))
            j += 1

    def _plain(self, loop: gast.stmt) -> bool:
        """Nothing in ``loop`` that a Python float does otherwise than a NumPy float, and no way out of it
        but its end (or a ``break``); a for loop's iterable is evaluated once, before its steps."""
        parts = loop.body + loop.orelse + ([loop.test] if isinstance(loop, gast.While) else [])
        for node in (n for part in parts for n in gast.walk(part)):
            if isinstance(node, (gast.Return, gast.FunctionDef, gast.Lambda, gast.Yield, gast.YieldFrom,
                                 gast.Try, gast.With)):
                return False
            if isinstance(node, (gast.BinOp, gast.AugAssign)) and not isinstance(node.op, (gast.Add, gast.Sub,
                                                                                             gast.Mult)):
                return False
            if isinstance(node, gast.UnaryOp) and not isinstance(node.op, (gast.USub, gast.UAdd)):
                return False
            if isinstance(node, gast.Attribute) and node.attr != "pop":
                return False
            if isinstance(node, gast.Call) and not (isinstance(node.func, gast.Attribute) and node.func.attr == "pop"
                                                    and not node.args and not node.keywords):
                return False
        return True

    def _indexed_only(self, loop: gast.stmt, d: str) -> bool:
        """``d`` a float64 vector that ``loop`` mentions only in ``d[i]``, ``d[i] = 0.0`` and ``d[i] += g``."""
        if not float64_arrays(self.inference.kinds(d), ndim=1):
            return False
        allowed = set()
        for node in gast.walk(loop):
            if isinstance(node, gast.Assign) and len(node.targets) == 1 and self._element(node.targets[0], d):
                if not (isinstance(node.value, gast.Constant) and type(node.value.value) is float):
                    return False
                allowed.add(id(node.targets[0].value))
            elif isinstance(node, gast.AugAssign) and self._element(node.target, d):
                if not real_scalars(self.inference.expr(node.value)):
                    return False
                allowed.add(id(node.target.value))
            elif isinstance(node, gast.Subscript) and isinstance(node.ctx, gast.Load) and self._element(node, d):
                allowed.add(id(node.value))
        return all(id(n) in allowed for n in gast.walk(loop) if isinstance(n, gast.Name) and n.id == d)

    def _element(self, node: gast.AST, d: str) -> bool:
        return isinstance(node, gast.Subscript) and _same(node.value, d) \
            and not isinstance(node.slice, (gast.Slice, gast.Tuple)) and int_index(self.inference.expr(node.slice))

    def _made_before(self, stmts: list[gast.stmt], j: int, d: str) -> int | None:
        """The position of ``d = owned(d)`` or ``d = np.zeros(shape)``, the last statement before ``j`` that
        mentions ``d``: an array the adjoint made, which nothing else holds."""
        for at in range(j - 1, -1, -1):
            if _loads(stmts[at], d):
                stmt = stmts[at]
                if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and _same(stmt.targets[0], d):
                    owned = _call_of(stmt.value, self.rt.get("owned"))
                    if (owned is not None and len(owned.args) == 1 and _same(owned.args[0], d)) \
                            or self._zeros(stmt.value):
                        return at
                return None
        return None

    def _zeros(self, value: gast.expr) -> bool:
        return isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and _same(value.func.value, self.np) and value.func.attr == "zeros" and len(value.args) == 1 \
            and not value.keywords and isinstance(value.args[0], gast.Constant)

    def _length(self, d: str) -> int | None:
        shape = one_shape(self.inference.kinds(d))
        return shape[0] if shape is not None and len(shape) == 1 else None


def as_lists(adjoint: gast.FunctionDef, inference: Inference, runtime: dict[str, str], np_alias: str) -> bool:
    """The loops' owned float64 gradient vectors that they only index by ints, as Python lists over those
    loops (last, after every pass that reads the kinds: a list is not a kind they follow)."""
    pullback = next((s for s in adjoint.body if isinstance(s, gast.FunctionDef)), None)
    if pullback is None:
        return False
    lists = ListLoops(inference, runtime, np_alias)
    lists.block(pullback.body)
    return lists.changed


def _same(node: gast.AST, other: gast.AST | str) -> bool:
    label = other if isinstance(other, str) else getattr(other, "id", None)
    return isinstance(node, gast.Name) and node.id == label


def inline_writes(adjoint: gast.FunctionDef, inference: Inference, runtime: dict[str, str], vjps: dict[str, Any],
                  module_alias: Callable[[str, Any], str]) -> bool:
    """Rewrite ``adjoint``'s write helpers in place where exact for these kinds; whether anything changed."""
    return WriteInliner(adjoint, inference, runtime, vjps, module_alias).run()




__all__ = ["inline_writes", "WriteInliner", "as_lists"]
