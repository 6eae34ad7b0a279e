"""Removal of zero contributions in the pullback.

Input: a pullback. Output: the same without statements that add a known zero
(``d = accumulate(d, zero)``, ``d = d + zero``, or adding a variable that is
zero at that point), and with ``d = d + c`` written ``d = c`` where ``d`` is
known to be zero (eager code, right after its initialization).
"""
from __future__ import annotations

import gast

from .dataflow import stores


class _Zeros:
    def __init__(self, context):
        self.context = context
        self.changed = False

    def is_zero(self, node: gast.AST, known: set[str]) -> bool:
        return isinstance(node, gast.Name) and (node.id == self.context.zero or node.id in known)

    def is_thunk(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
            and node.func.id == self.context.thunk

    def block(self, stmts: list[gast.stmt], known: set[str]) -> set[str]:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                target, value = stmt.targets[0].id, stmt.value
                adds = None
                if isinstance(value, gast.Call) and isinstance(value.func, gast.Name) \
                        and value.func.id == self.context.accumulate and len(value.args) >= 2:
                    adds = value.args[:2]
                elif isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
                    adds = [value.left, value.right]
                if adds and self.is_zero(adds[0], known) and isinstance(value, gast.Call) \
                        and not self.is_thunk(adds[1]):
                    stmt.value = adds[1]  # accumulate(zero, c) is c unless c is to be deferred
                    self.changed = True
                elif adds and isinstance(adds[0], gast.Name) and adds[0].id == target:
                    if self.is_zero(adds[1], known):
                        self.changed = True
                        continue
                    if isinstance(value, gast.BinOp) and adds[0].id in known:
                        stmt.value = adds[1]
                        self.changed = True
                if isinstance(stmt.value, gast.Name) and stmt.value.id == self.context.zero:
                    known = known | {target}
                else:
                    known = known - {target}
            elif isinstance(stmt, gast.If):
                assigned = stores(stmt)
                self.block(stmt.body, known - assigned)
                self.block(stmt.orelse, known - assigned)
                known = known - assigned
            elif isinstance(stmt, gast.For):
                assigned = stores(stmt)
                self.block(stmt.body, known - assigned)
                known = known - assigned
            else:
                known = known - stores(stmt)
            out.append(stmt)
        stmts[:] = out or [gast.Pass()]
        return known


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    zeros = _Zeros(context)
    zeros.block(pullback.body, set())
    return zeros.changed
