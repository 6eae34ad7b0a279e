"""Removal of materializations that can never find a thunk.

Input: a pullback. Output: the same without ``d = unthunk(d)`` for adjoints
that never hold a thunk: every value assigned to them is computed at once
(no ``Thunk(...)`` is accumulated into them, and they receive nothing from a
callee's pullback or from another adjoint that might hold one).
"""
from __future__ import annotations

import gast

from ..ir.dataflow import blocks, names, statements


def _call_name(node: gast.AST) -> str | None:
    return node.func.id if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) else None


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    acc = context.accumulation
    assignments: list[tuple[list[str], gast.expr]] = []
    for node in statements(pullback.body):
        if isinstance(node, gast.Assign):
            targets = [n.id for n in names(node.targets[0])]
            assignments.append((targets, node.value))
    # The pullback's cotangent parameter is always a value: the API passes a
    # seed or the user's cotangent, and callers materialize before calling.
    maybe: set[str] = set()
    changed = True
    while changed:
        changed = False
        for targets, value in assignments:
            if set(targets) <= maybe:
                continue
            name = _call_name(value)
            thunky = False
            if acc.is_materialization(value):
                thunky = False
            elif acc.is_lazy_add(value):
                thunky = any(acc.is_deferred(a) or (isinstance(a, gast.Name) and a.id in maybe)
                             for a in value.args[:2])
            elif isinstance(value, gast.Name):
                thunky = value.id in maybe
            elif name is not None and name not in context.pure_calls and name not in (context.part, context.drop_last):
                thunky = True  # a callee's pullback may return AccThunks
            elif name in (context.part, context.drop_last):
                thunky = any(isinstance(a, gast.Name) and a.id in maybe for a in value.args[:1])
            if thunky:
                maybe.update(targets)
                changed = True
    removed = False
    for block in list(blocks(pullback.body)):
        keep = []
        for stmt in block:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                    and acc.is_materialization(stmt.value) and stmt.targets[0].id not in maybe \
                    and isinstance(stmt.value.args[0], gast.Name) and stmt.value.args[0].id not in maybe:
                if stmt.targets[0].id == stmt.value.args[0].id:
                    removed = True
                    continue
                stmt.value = stmt.value.args[0]
                removed = True
            keep.append(stmt)
        if len(keep) < len(block) or keep != block:
            block[:] = keep or [gast.Pass()]
    return removed
