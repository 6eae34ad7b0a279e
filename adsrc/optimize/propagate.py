"""Assignment propagation in the pullback.

Input: a pullback. Output: the same with reads of ``a`` after a copy
``a = b`` replaced by ``b``, in the statements that follow in the same block
while neither name is reassigned. Dead-code elimination then removes copies
nobody reads any more.
"""
from __future__ import annotations

import gast

from ..ir.dataflow import blocks, stores


class _Rename(gast.NodeTransformer):
    def __init__(self, old: str, new: str):
        self.old, self.new, self.count = old, new, 0

    def visit_Name(self, node: gast.Name) -> gast.Name:
        if node.id == self.old and isinstance(node.ctx, gast.Load):
            self.count += 1
            return gast.Name(id=self.new, ctx=gast.Load(), annotation=None, type_comment=None)
        return node


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    changed = False
    for block in list(blocks(pullback.body)):
        for i, stmt in enumerate(block):
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                    and isinstance(stmt.value, gast.Name)):
                continue
            old, new = stmt.targets[0].id, stmt.value.id
            if old == new:
                continue
            for later in block[i + 1:]:
                if isinstance(later, (gast.If, gast.For, gast.While, gast.FunctionDef)):
                    break
                rename = _Rename(old, new)
                if isinstance(later, (gast.Assign, gast.Expr)):
                    later.value = rename.visit(later.value)
                elif isinstance(later, gast.Return) and later.value is not None:
                    later.value = rename.visit(later.value)
                changed |= rename.count > 0
                if {old, new} & stores(later):
                    break
    return changed
