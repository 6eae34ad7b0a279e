"""Constant folding and branch simplification, in both sweeps.

Input: an adjoint. Output: the same with ``if c: pass else: B`` written
``if not c: B``, ``if not c: pass else: B`` written ``if c: B``, branches on
constant conditions replaced by the branch taken, empty else-branches
dropped, and branches and ``range`` loops with nothing left in them removed.
An empty loop stays where its target is read anywhere in the adjoint (after
``for i in range(3): pass``, ``i`` is 2, and a later read must see it).
"""
from __future__ import annotations

import gast

from ..ir.build import is_comment
from ..ir.dataflow import loads


def _empty(block: list[gast.stmt]) -> bool:
    """Nothing to run: only ``pass`` statements and line comments."""
    return all(isinstance(s, gast.Pass) or is_comment(s) for s in block)


_BLOCK_ITEMS = (gast.stmt, gast.excepthandler, gast.match_case)


class _Fold(gast.NodeTransformer):
    def __init__(self, read: set[str]):
        self.changed = False
        self.read = read  # every name the adjoint (pullback included) reads

    def generic_visit(self, node: gast.AST) -> gast.AST:
        """Into blocks of statements only: no expression holds an ``if`` or a ``for`` statement (and
        visiting every expression node would cost most of the pass's time)."""
        for field in node._fields:
            block = getattr(node, field, None)
            if not (type(block) is list and block and isinstance(block[0], _BLOCK_ITEMS)):
                continue
            kept = []
            for stmt in block:
                stmt = self.visit(stmt)
                if stmt is None:
                    continue
                if isinstance(stmt, list):
                    kept.extend(stmt)
                else:
                    kept.append(stmt)
            block[:] = kept
        return node

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
        it = node.iter
        simple_range = isinstance(it, gast.Call) and isinstance(it.func, gast.Name) and it.func.id == "range" \
            and all(isinstance(a, (gast.Name, gast.Constant)) for a in it.args)
        target_read = any(isinstance(n, gast.Name) and n.id in self.read for n in gast.walk(node.target))
        if _empty(node.body) and simple_range and not target_read:
            self.changed = True
            return None
        return node


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    read = loads(adjoint)
    fold = _Fold(read)
    fold.visit(adjoint)
    return fold.changed
