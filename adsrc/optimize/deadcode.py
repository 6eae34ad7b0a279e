"""Dead-code elimination in the pullback.

Input: a pullback. Output: the same without assignments whose targets are
never read afterwards and whose right-hand side has no effect (a reset to
zero, an unused initialization, an unread materialization, an unread vjp).
Accumulations, tape pops and callee pullbacks are left alone: they have
effects on shared state.
"""
from __future__ import annotations

import gast

from ..ir import annotations as anno
from ..ir.dataflow import annotate, blocks, stores


def _pure(node: gast.AST, context) -> bool:
    if isinstance(node, (gast.Name, gast.Constant)):
        return True
    if isinstance(node, (gast.Tuple, gast.List)):
        return all(_pure(e, context) for e in node.elts)
    if isinstance(node, gast.BinOp):
        return _pure(node.left, context) and _pure(node.right, context)
    if isinstance(node, gast.Call) and isinstance(node.func, gast.Name):
        return node.func.id in context.pure_calls and all(_pure(a, context) for a in node.args)
    return False


def _names_only(target: gast.AST) -> bool:
    """A target that binds names (not a write into an array, which is an effect)."""
    if isinstance(target, (gast.Tuple, gast.List)):
        return all(_names_only(e) for e in target.elts)
    return isinstance(target, gast.Name)


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    annotate(pullback.body, set())
    changed = False
    for block in list(blocks(pullback.body)):
        keep = []
        for stmt in block:
            if isinstance(stmt, gast.Assign) and _names_only(stmt.targets[0]) \
                    and not (stores(stmt.targets[0]) & anno.get(stmt, anno.LIVE_OUT)) and _pure(stmt.value, context):
                changed = True
                continue
            keep.append(stmt)
        block[:] = keep
    return changed
