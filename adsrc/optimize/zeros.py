"""Removal of zero contributions in the pullback.

Input: a pullback. Output: the same without statements that add a known zero
(``d = accumulate(d, zero)``, ``d = d + zero``, or adding a variable that is
zero at that point), and with ``d = d + c`` written ``d = c`` where ``d`` is
known to be zero (eager code, right after its initialization).
"""
from __future__ import annotations

import gast

from ..ir.dataflow import stores


class _Zeros:
    def __init__(self, context):
        self.acc = context.accumulation
        self.changed = False

    def known_zero(self, node: gast.AST, known: set[str]) -> bool:
        return self.acc.is_zero(node) or (isinstance(node, gast.Name) and node.id in known)

    def block(self, stmts: list[gast.stmt], known: set[str]) -> set[str]:
        """``known``: the names zero before ``stmts``, a set of the caller's that this updates in place."""
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name):
                target, value = stmt.targets[0].id, stmt.value
                adds = self.acc.added(value)
                if adds and self.known_zero(adds[0], known) and self.acc.is_lazy_add(value) \
                        and not self.acc.is_deferred(adds[1]):
                    stmt.value = adds[1]  # accumulate(zero, c) is c unless c is to be deferred
                    self.changed = True
                elif adds and isinstance(adds[0], gast.Name) and adds[0].id == target:
                    if self.known_zero(adds[1], known):
                        self.changed = True
                        continue
                    if isinstance(value, gast.BinOp) and adds[0].id in known:
                        stmt.value = adds[1]
                        self.changed = True
                if self.acc.is_zero(stmt.value):
                    known.add(target)
                else:
                    known.discard(target)
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
                known -= stores(stmt)
            out.append(stmt)
        stmts[:] = out or [gast.Pass()]
        return known


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    zeros = _Zeros(context)
    zeros.block(pullback.body, set())
    return zeros.changed
