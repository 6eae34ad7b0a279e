"""Liveness over the structured, jump-free code of a pullback.

``annotate(stmts, live_after)`` stores on each statement the set of names
live after it (the ``LIVE_OUT`` annotation) and returns the names live before the list.
"""
from __future__ import annotations

import gast

from ..ir import annotations as anno


def loads(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def stores(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def annotate(stmts: list[gast.stmt], live_after: set[str]) -> set[str]:
    live = set(live_after)
    for stmt in reversed(stmts):
        anno.set(stmt, anno.LIVE_OUT, set(live))
        if isinstance(stmt, gast.Assign):
            live = (live - stores(stmt.targets[0])) | loads(stmt.value) | loads(stmt.targets[0])
        elif isinstance(stmt, gast.If):
            live = loads(stmt.test) | annotate(stmt.body, live) | annotate(stmt.orelse, live)
        elif isinstance(stmt, gast.For):
            head = set(live)
            while True:
                entry = (annotate(stmt.body, head) - stores(stmt.target)) | live
                if entry <= head:
                    break
                head |= entry
            annotate(stmt.body, head)
            live = head | loads(stmt.iter)
        elif isinstance(stmt, gast.Return):
            live = loads(stmt.value) if stmt.value is not None else set()
        elif isinstance(stmt, gast.FunctionDef):
            live = live | {n for n in loads(stmt)}
        else:
            live = live | loads(stmt)
    return live


def blocks(stmts: list[gast.stmt]):
    """Every statement list nested in ``stmts``, itself included."""
    yield stmts
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                yield from blocks(inner)
