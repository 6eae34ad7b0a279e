"""Liveness over structured code: a pullback, or a function in ANF.

``annotate(stmts, live_after)`` stores on each statement the set of names
live after it (the ``LIVE_OUT`` annotation) and returns the names live before the list.
"""
from __future__ import annotations

import gast

from . import annotations as anno


def loads(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}


def stores(node: gast.AST) -> set[str]:
    return {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}


def annotate(stmts: list[gast.stmt], live_after: set[str], jump: set[str] | None = None) -> set[str]:
    """Store on each statement the names live after it; return the names live before ``stmts``.

    Loops (``for`` and ``while``) iterate to a fixpoint; ``break`` and
    ``continue`` see what is live at the head of their loop (which includes
    what is live after it), so the result never misses a live name.
    """
    live = set(live_after)
    for stmt in reversed(stmts):
        anno.set(stmt, anno.LIVE_OUT, set(live))
        if isinstance(stmt, gast.Assign):
            live = (live - stores(stmt.targets[0])) | loads(stmt.value) | loads(stmt.targets[0])
        elif isinstance(stmt, gast.If):
            live = loads(stmt.test) | annotate(stmt.body, live, jump) | annotate(stmt.orelse, live, jump)
        elif isinstance(stmt, (gast.For, gast.While)):
            head = set(live)
            test = loads(stmt.test) if isinstance(stmt, gast.While) else set()
            killed = stores(stmt.target) if isinstance(stmt, gast.For) else set()
            while True:
                entry = ((annotate(stmt.body, head | test, head | test) - killed) | live | test)
                if entry <= head:
                    break
                head |= entry
            annotate(stmt.body, head | test, head | test)
            live = head | test | (loads(stmt.iter) if isinstance(stmt, gast.For) else set())
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            live = set(jump) if jump is not None else live
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
