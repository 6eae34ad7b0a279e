"""Owned cotangent buffers: a loop's writes and reads by index update a gradient in place.

Input: a pullback. Output: the same where a backward loop uses a gradient
``d`` only in these forms (and nowhere else in the loop):

* ``d = cleared(d, index)``, the write ``y[index] = v`` clearing its part,
  which copies ``d``: written ``d = cleared_in_place(d, index)``;
* a contribution of a read by index, ``u = y[index]`` (getitem, take, any
  vjp with an in-place ``add_into`` form), which builds a dense array the
  size of ``y``: ``d = accumulate(d, getitem_dx(du, None, y, index))``,
  ``d = d + getitem_dx(...)`` or ``d = accumulate(d, Thunk(getitem_dx, ...))``,
  written ``d = added_into(d, getitem_dx, du, None, y, index)``;
* ``written_part(d, y, index, v)``, which reads ``d[index]`` and returns a copy;
* for a list grown by ``xs.append(v)`` (which the forward sweep runs in
  place, transforms/reverse_blocks.py), ``part(d, -1)``, which reads the last item,
  and ``d = drop_last(d)``, which copies the rest: written
  ``d = drop_last_in_place(d)``. A list's items are replaced, never written
  into, since an item may be shared.

Right before such a loop, ``d = owned(d)`` copies ``d`` once. Inside the
loop ``d`` then always holds ``zero``, that copy, or an array the helpers
allocated themselves, and no other name, thunk or container refers to it,
since nothing else in the loop reads ``d``: updating it in place cannot
change any other value. Each step costs the size of what it writes or
reads, not the size of the array (an EWMA over n steps: O(n), not O(n^2)).

Every form reads ``d`` before assigning it, so ``d`` is bound before the
loop wherever the loop mentions it. The pass runs once, after the others
have reached their fixpoint, on the code they left.
"""
from __future__ import annotations

from typing import Any

import gast

from ..ir.build import assign, call, name
from ..ir.dataflow import stores

_HELPERS = ("cleared", "written_part", "owned", "cleared_in_place", "added_into", "drop_last_in_place")


class _Forms:
    """Recognizes and rewrites the statements of one pullback that use a gradient in an in-place-safe way."""

    def __init__(self, context):
        self.acc = context.accumulation
        self.rt = context.runtime
        self.vjps = context.vjps
        self.part, self.drop_last = context.part, context.drop_last

    def in_place_vjp(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Name) and getattr(self.vjps.get(node.id), "add_into", None) is not None

    def update(self, stmt: gast.stmt) -> tuple[str, str, gast.Call] | None:
        """``(kind, d, call)`` for ``d = cleared(d, i)`` ("clear"), ``d = drop_last(d)`` ("drop") or an
        index contribution to ``d`` ("add")."""
        if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
            return None
        d, value = stmt.targets[0].id, stmt.value
        if self.acc.is_call(value, self.rt["cleared"]) and len(value.args) == 2 and _is_name(value.args[0], d) \
                and d not in _loads(value.args[1]):
            return "clear", d, value
        if self.acc.is_call(value, self.drop_last) and len(value.args) == 1 and _is_name(value.args[0], d):
            return "drop", d, value
        added = self.acc.added(value)
        if not added or not _is_name(added[0], d):
            return None
        contribution = added[1]
        if not isinstance(contribution, gast.Call) or d in _loads(contribution):
            return None
        if self.acc.is_deferred(contribution):
            if contribution.args and self.in_place_vjp(contribution.args[0]):
                return "add", d, contribution
        elif self.in_place_vjp(contribution.func):
            return "add", d, contribution
        return None

    def safe(self, stmt: gast.stmt, d: str) -> bool:
        """Whether ``stmt`` uses ``d`` only in the forms above (or not at all)."""
        form = self.update(stmt)
        if form is not None and form[1] == d:
            return True
        if isinstance(stmt, (gast.For, gast.While, gast.If)):
            header = [stmt.test] if isinstance(stmt, (gast.If, gast.While)) else [stmt.target, stmt.iter]
            return all(d not in _names(h) for h in header) and \
                all(self.safe(s, d) for s in stmt.body + stmt.orelse)
        if d in stores(stmt) or isinstance(stmt, gast.FunctionDef) and d in _names(stmt):
            return False
        reads = sum(1 for n in gast.walk(stmt) if isinstance(n, gast.Name) and n.id == d)
        parts = sum(1 for n in gast.walk(stmt) if (self.acc.is_call(n, self.rt["written_part"])
                                                   or self.acc.is_call(n, self.part))
                    and n.args and _is_name(n.args[0], d))
        return reads == parts

    def updated(self, stmts: list[gast.stmt]) -> set[str]:
        """The gradients that the statements (nested ones too) update in one of the forms above."""
        found = set()
        for node in stmts:
            for stmt in gast.walk(node):
                form = self.update(stmt) if isinstance(stmt, gast.stmt) else None
                if form is not None:
                    found.add(form[1])
        return found

    def rewrite(self, stmts: list[gast.stmt], owned: set[str]) -> None:
        """Write the updates of the ``owned`` gradients in place, in ``stmts`` and the blocks inside them."""
        for stmt in stmts:
            form = self.update(stmt)
            if form is not None and form[1] in owned:
                kind, d, node = form
                if kind == "clear":
                    stmt.value = call(self.rt["cleared_in_place"], *node.args)
                elif kind == "drop":
                    stmt.value = call(self.rt["drop_last_in_place"], *node.args)
                elif self.acc.is_deferred(node):
                    stmt.value = gast.Call(func=name(self.rt["added_into"]), args=[name(d)] + node.args,
                                           keywords=node.keywords)
                else:
                    stmt.value = gast.Call(func=name(self.rt["added_into"]), args=[name(d), node.func] + node.args,
                                           keywords=node.keywords)
            for field in ("body", "orelse"):
                inner = getattr(stmt, field, None)
                if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                    self.rewrite(inner, owned)

    def block(self, stmts: list[gast.stmt], handled: frozenset[str]) -> bool:
        """Hoist ``d = owned(d)`` before each outermost loop that updates ``d`` only in the forms above."""
        changed = False
        out: list[gast.stmt] = []
        for stmt in stmts:
            inner = handled
            if isinstance(stmt, (gast.For, gast.While)):
                owned = sorted(d for d in self.updated([stmt]) - handled if self.safe(stmt, d))
                if owned:
                    self.rewrite(stmt.body, set(owned))
                    out.extend(assign(d, call(self.rt["owned"], name(d))) for d in owned)
                    inner = handled | set(owned)
                    changed = True
            if isinstance(stmt, (gast.For, gast.While, gast.If)):
                changed |= self.block(stmt.body, inner)
                changed |= self.block(stmt.orelse, inner)
            out.append(stmt)
        stmts[:] = out
        return changed


def _is_name(node: gast.AST, d: str) -> bool:
    return isinstance(node, gast.Name) and node.id == d


def _names(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}


def _loads(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context: Any) -> bool:
    if not context.vjps or any(h not in context.runtime for h in _HELPERS):
        return False
    return _Forms(context).block(pullback.body, frozenset())
