"""Liveness over structured code: a pullback, or a function in ANF.

``liveness(stmts, live_after, visit)`` walks ``stmts`` backwards and returns
the names live before them. ``visit(stmt, live)``, if given, is called once
per statement with the names live right after it; the set is updated in
place as the walk goes on, so a visitor reads it then and there (or copies
what it keeps). Nothing is stored on the nodes: the walk costs time in
proportion to the code, not to the code times the number of live names.
"""
from __future__ import annotations

from typing import Callable

import gast

Visit = Callable[[gast.stmt, set], None]


def loads(node: gast.AST) -> set[str]:
    return {n.id for n in names(node) if type(n.ctx) is gast.Load}


def stores(node: gast.AST) -> set[str]:
    return {n.id for n in names(node) if type(n.ctx) is gast.Store}


_SKIPPED_FIELDS = frozenset({"ctx", "op", "type_comment", "kind"})
_child_fields: dict[type, tuple[str, ...]] = {gast.Name: (), gast.Constant: ()}


def _fields_of(cls: type) -> tuple[str, ...]:
    found = _child_fields[cls] = tuple(f for f in getattr(cls, "_fields", ()) if f not in _SKIPPED_FIELDS)
    return found


def names(node: gast.AST) -> list[gast.Name]:
    """Every ``Name`` node in ``node`` (what ``gast.walk`` would find, several times faster: the passes
    ask this of whole adjoints, once or more per pass)."""
    found: list[gast.Name] = []
    stack = [node]
    while stack:
        current = stack.pop()
        cls = type(current)
        if cls is gast.Name:
            found.append(current)
            continue
        fields = _child_fields.get(cls)
        for field in _fields_of(cls) if fields is None else fields:
            value = getattr(current, field, None)
            if type(value) is list:
                stack.extend(value)
            elif isinstance(value, gast.AST):
                stack.append(value)
    return found


def nodes(node: gast.AST) -> list[gast.AST]:
    """Every node in ``node``, itself included, but the expression contexts and operators (what
    ``gast.walk`` finds but those, in another order, several times faster)."""
    found: list[gast.AST] = []
    stack = [node]
    while stack:
        current = stack.pop()
        found.append(current)
        cls = type(current)
        fields = _child_fields.get(cls)
        for field in _fields_of(cls) if fields is None else fields:
            value = getattr(current, field, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, gast.AST))
            elif isinstance(value, gast.AST):
                stack.append(value)
    return found


def parents(node: gast.AST) -> dict[int, gast.AST]:
    """``id(child) -> parent`` for every node in ``node`` (as :func:`nodes` finds them)."""
    found: dict[int, gast.AST] = {}
    stack = [node]
    while stack:
        current = stack.pop()
        cls = type(current)
        fields = _child_fields.get(cls)
        for field in _fields_of(cls) if fields is None else fields:
            value = getattr(current, field, None)
            if type(value) is list:
                for v in value:
                    if isinstance(v, gast.AST):
                        found[id(v)] = current
                        stack.append(v)
            elif isinstance(value, gast.AST):
                found[id(value)] = current
                stack.append(value)
    return found


def liveness(stmts: list[gast.stmt], live_after: set[str], visit: Visit | None = None,
             jump: set[str] | None = None, written: frozenset[str] = frozenset()) -> set[str]:
    """The names live before ``stmts``, given those live after them.

    Loops (``for`` and ``while``) iterate to a fixpoint before ``visit`` sees
    their bodies; ``break`` and ``continue`` see what is live at the head of
    their loop (which includes what is live after it), so no live name is
    ever missed. A write ``y[i] = v`` into an array of ``written`` does not
    read ``y``'s elements: it leaves ``y`` live only if something reads it
    (deadcode.py: a restoring write in a loop is not kept alive by itself).
    """
    live = set(live_after)
    _backward(stmts, live, visit, jump, written)
    return live


def _target_loads(target: gast.AST, written: frozenset[str]) -> set[str]:
    if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) and target.value.id in written:
        return loads(target.slice)
    return loads(target)


def _backward(stmts: list[gast.stmt], live: set[str], visit: Visit | None, jump: set[str] | None,
              written: frozenset[str] = frozenset()) -> None:
    for stmt in reversed(stmts):
        if visit is not None:
            visit(stmt, live)
        if isinstance(stmt, gast.Assign):
            live -= stores(stmt.targets[0])
            live |= loads(stmt.value)
            live |= _target_loads(stmt.targets[0], written)
        elif isinstance(stmt, gast.If):
            body = liveness(stmt.body, live, visit, jump, written)
            orelse = liveness(stmt.orelse, live, visit, jump, written)
            live.clear()
            live |= body
            live |= orelse
            live |= loads(stmt.test)
        elif isinstance(stmt, (gast.For, gast.While)):
            test = loads(stmt.test) if isinstance(stmt, gast.While) else set()
            killed = stores(stmt.target) if isinstance(stmt, gast.For) else set()
            head = live | test
            while True:
                entry = (liveness(stmt.body, head, None, head, written) - killed) | test
                if entry <= head:
                    break
                head |= entry
            liveness(stmt.body, head, visit, head, written)
            live |= head
            if isinstance(stmt, gast.For):
                live |= loads(stmt.iter)
        elif isinstance(stmt, (gast.Break, gast.Continue)):
            if jump is not None:
                live.clear()
                live |= jump
        elif isinstance(stmt, gast.Return):
            live.clear()
            if stmt.value is not None:
                live |= loads(stmt.value)
        else:
            live |= loads(stmt)


def blocks(stmts: list[gast.stmt]):
    """Every statement list nested in ``stmts``, itself included."""
    yield stmts
    for stmt in stmts:
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                yield from blocks(inner)


def statements(stmts: list[gast.AST]):
    """Every statement in ``stmts`` and nested in them, function bodies and handlers included."""
    for stmt in stmts:
        if isinstance(stmt, gast.stmt):
            yield stmt
        for field in stmt._fields:
            inner = getattr(stmt, field, None)
            if type(inner) is list and inner and isinstance(inner[0], (gast.stmt, gast.excepthandler,
                                                                       gast.match_case)):
                yield from statements(inner)
