"""Constant folding and branch simplification, in both sweeps.

Input: an adjoint. Output: the same with ``if c: pass else: B`` written
``if not c: B``, ``if not c: pass else: B`` written ``if c: B``, branches on
constant conditions replaced by the branch taken, empty else-branches
dropped, and branches and ``range`` loops with nothing left in them removed.
"""
from __future__ import annotations

import gast

from ..ir.build import is_comment


def _empty(block: list[gast.stmt]) -> bool:
    """Nothing to run: only ``pass`` statements and line comments."""
    return all(isinstance(s, gast.Pass) or is_comment(s) for s in block)


class _Fold(gast.NodeTransformer):
    def __init__(self):
        self.changed = False

    def visit_If(self, node: gast.If):
        self.generic_visit(node)
        test = node.test
        if isinstance(test, gast.Constant):
            self.changed = True
            taken = node.body if test.value else node.orelse
            return taken or None
        if node.orelse and _empty(node.orelse):
            node.orelse = []
            self.changed = True
        if _empty(node.body) and not node.orelse and isinstance(test, gast.Name):
            self.changed = True
            return None
        if _empty(node.body) and node.orelse:
            self.changed = True
            if isinstance(test, gast.UnaryOp) and isinstance(test.op, gast.Not):
                node.test = test.operand
            else:
                node.test = gast.UnaryOp(op=gast.Not(), operand=test)
            node.body, node.orelse = node.orelse, []
        return node


    def visit_For(self, node: gast.For):
        self.generic_visit(node)
        if _empty(node.body) and isinstance(node.iter, gast.Call) and isinstance(node.iter.func, gast.Name) \
                and node.iter.func.id == "range" and all(isinstance(a, (gast.Name, gast.Constant)) for a in node.iter.args):
            self.changed = True
            return None
        return node


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    fold = _Fold()
    fold.visit(adjoint)
    return fold.changed
