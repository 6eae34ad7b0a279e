"""Folding: a temporary read once, written back into the expression that reads it.

Input: a specialized adjoint and its kinds (kinds.py). Output: the same
adjoint where ``t = e`` followed by the one statement that reads ``t`` becomes
that statement with ``(e)`` in place of ``t``, where

* ``t`` is assigned once and read once in the whole adjoint (the tape keeps
  neither, and no loop reads it again);
* ``e`` is pure: operators and the NumPy and ``math`` functions kinds.py knows,
  on values whose kinds are known (numbers and arrays, whose operations have
  no effect), so computing it a few statements later changes nothing;
* the statements in between only push on the tape or assign other names
  from pure expressions that do not read what ``e`` reads assigned there;
* the reading statement is simple (an assignment) in the same block, so ``e``
  is computed as many times as before, in the same line's block.

So the ANF form's temporaries go where the specialization made them plain
values: the forward sweep of ``y = math.sin(y) * 0.5 + x`` reads as the line
itself again, and the backward sweep's ``dy = dy * 0.5 * math.cos(y)``. The
operations and their order are the same, so the values are bit for bit.
"""
from __future__ import annotations

from collections import Counter

import gast

from ..ir.build import is_comment
from ..ir.dataflow import names, statements
from .kinds import Inference, library_primitive, own_rule_function

_PURE_NODES = (gast.Name, gast.Constant, gast.BinOp, gast.UnaryOp, gast.Compare, gast.IfExp, gast.Tuple,
               gast.Load, gast.operator, gast.unaryop, gast.cmpop, gast.Attribute, gast.Call, gast.keyword)


class Folder:
    def __init__(self, adjoint: gast.FunctionDef, inference: Inference, tape: str | None):
        self.adjoint = adjoint
        self.inference = inference
        self.tape = tape
        self.stores: Counter = Counter()
        self.loads: Counter = Counter()
        for node in names(adjoint):
            (self.loads if isinstance(node.ctx, gast.Load) else self.stores)[node.id] += 1
        self.changed = False

    def run(self) -> bool:
        self._block(self.adjoint.body)
        return self.changed

    def _block(self, stmts: list[gast.stmt]) -> None:
        for stmt in stmts:
            for part in ("body", "orelse"):
                if isinstance(getattr(stmt, part, None), list):
                    self._block(getattr(stmt, part))
        i = 0
        while i < len(stmts):
            if self._fold(stmts, i):
                del stmts[i]
                self.changed = True
            else:
                i += 1

    def _fold(self, stmts: list[gast.stmt], i: int) -> bool:
        stmt = stmts[i]
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            return False
        temp = stmt.targets[0].id
        if self.stores[temp] != 1 or self.loads[temp] != 1 or not self._pure(stmt.value):
            return False
        reads = {n.id for n in gast.walk(stmt.value) if isinstance(n, gast.Name)}
        for later in stmts[i + 1:]:
            if isinstance(later, gast.Assign) and isinstance(later.targets[0], gast.Name):
                if any(isinstance(n, gast.Name) and n.id == temp for n in gast.walk(later.value)):
                    return self._substitute(later, temp, stmt.value)
                if later.targets[0].id in reads or not self._pure(later.value):
                    return False
            elif not self._is_push(later, temp):
                return False
        return False

    def _is_push(self, stmt: gast.stmt, temp: str) -> bool:
        value = getattr(stmt, "value", None)
        return isinstance(stmt, gast.Expr) and not is_comment(stmt) and isinstance(value, gast.Call) \
            and isinstance(value.func, gast.Attribute) and value.func.attr == "append" \
            and isinstance(value.func.value, gast.Name) and value.func.value.id == self.tape \
            and not any(isinstance(n, gast.Name) and n.id == temp for n in gast.walk(value))

    def _pure(self, value: gast.expr) -> bool:
        for node in gast.walk(value):
            if not isinstance(node, _PURE_NODES):
                return False
            if isinstance(node, gast.Name) and isinstance(node.ctx, gast.Load) \
                    and node.id in self.inference.assigned and self.inference.kinds(node.id) is None:
                return False
            if isinstance(node, gast.Call):
                callee = self.inference.resolve(node.func)
                label = node.func.id if isinstance(node.func, gast.Name) else None
                if not (library_primitive(callee) or label in self.inference.vjps
                        and own_rule_function(self.inference.vjps[label])):
                    return False
        return True

    @staticmethod
    def _substitute(stmt: gast.Assign, temp: str, value: gast.expr) -> bool:
        class Substitute(gast.NodeTransformer):
            def visit_Name(inner, node):  # noqa: N805
                return value if node.id == temp and isinstance(node.ctx, gast.Load) else node

        stmt.value = Substitute().visit(stmt.value)
        return True


def fold(adjoint: gast.FunctionDef, inference: Inference, tape: str | None) -> bool:
    """Fold the temporaries of ``adjoint`` in place (see the module docstring); whether any changed.
    A copy left as ``d = d`` (a cotangent passed on unchanged, ``dx = dy`` then ``dy = dx``) goes away."""
    changed = Folder(adjoint, inference, tape).run()
    for node in [adjoint, *statements(adjoint.body)]:
        for field in ("body", "orelse"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            kept = [s for s in block if not (isinstance(s, gast.Assign) and len(s.targets) == 1
                                             and isinstance(s.targets[0], gast.Name) and isinstance(s.value, gast.Name)
                                             and s.targets[0].id == s.value.id)]
            if len(kept) < len(block):
                block[:] = kept or [gast.Pass()]
                changed = True
    return changed
