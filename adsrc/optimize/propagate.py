"""Assignment propagation in the pullback.

Input: a pullback. Output: the same with reads of ``a`` after a copy
``a = b`` replaced by ``b``, in the statements that follow in the same block
while neither name is reassigned (a compound statement ends the run).
Dead-code elimination then removes copies nobody reads any more.

One sweep per block, in order, with the copies in effect held in a map:
linear in the size of the pullback, so compile time stays linear in the
length of the function.
"""
from __future__ import annotations

import gast

from ..ir.dataflow import blocks, stores


class _Substitute(gast.NodeTransformer):
    """Replaces loads of the map's keys by its values, counting the replacements."""

    def __init__(self, mapping: dict[str, str]):
        self.mapping, self.count = mapping, 0

    def visit_Name(self, node: gast.Name) -> gast.Name:
        new = self.mapping.get(node.id)
        if new is not None and isinstance(node.ctx, gast.Load):
            self.count += 1
            return gast.Name(id=new, ctx=gast.Load(), annotation=None, type_comment=None)
        return node


def _propagate(block: list[gast.stmt]) -> bool:
    copies: dict[str, str] = {}            # a -> b, for each copy ``a = b`` still in effect
    readers: dict[str, set[str]] = {}      # b -> the names a whose copy reads b
    substitute = _Substitute(copies)
    for stmt in block:
        if isinstance(stmt, (gast.If, gast.For, gast.While, gast.FunctionDef)):
            copies.clear()
            readers.clear()
            continue
        if copies and isinstance(stmt, (gast.Assign, gast.AugAssign, gast.Expr, gast.Return)) and stmt.value is not None:
            stmt.value = substitute.visit(stmt.value)
        for name in stores(stmt):
            for reader in readers.pop(name, ()):  # a copy of a name just reassigned no longer holds
                copies.pop(reader, None)
            old = copies.pop(name, None)
            if old is not None:
                readers.get(old, set()).discard(name)
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.Name) and stmt.targets[0].id != stmt.value.id:
            copies[stmt.targets[0].id] = stmt.value.id
            readers.setdefault(stmt.value.id, set()).add(stmt.targets[0].id)
    return substitute.count > 0


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    changed = False
    for block in list(blocks(pullback.body)):
        changed |= _propagate(block)
    return changed
