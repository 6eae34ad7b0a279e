"""Tape pruning: save on the tape only what the backward sweep reads.

Input: an adjoint whose pops are linked to their pushes (the ``PUSHES`` annotation).
Output: each pop restores only names that are read before they are next
assigned, its pushes save only those, and a pop with nothing left goes away
together with its pushes (and the tape itself when no push remains), and a
forward copy ``h_prev = h`` made for a push (transforms/reverse_control_flow.py) goes away
once no push saves it. A push that saves nothing but such copies, made
together just before, saves the values themselves where the copies stood:
``tape.append(y)`` before ``y = f(y)``, not ``y_prev = y`` ... ``tape.append(y_prev)``.
"""
from __future__ import annotations

import gast

from ..ir import annotations as anno
from ..ir.build import name
from ..ir.dataflow import blocks, liveness, loads, names, nodes


def _names(node: gast.AST) -> list[gast.Name]:
    return list(node.elts) if isinstance(node, gast.Tuple) else [node]


def _rebuild(names: list[gast.Name], ctx) -> gast.expr:
    return names[0] if len(names) == 1 else gast.Tuple(elts=names, ctx=ctx)


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    live_after_pop: dict[int, set[str]] = {}

    def visit(stmt: gast.stmt, live: set[str]) -> None:
        if anno.has(stmt, anno.PUSHES):
            live_after_pop[id(stmt)] = {t.id for t in _names(stmt.targets[0])} & live

    liveness(pullback.body, set(), visit)
    changed = False
    removed: set[int] = set()
    for block in blocks(pullback.body):
        for stmt in block:
            pushes = anno.get(stmt, anno.PUSHES, None)
            if pushes is None:
                continue
            targets = _names(stmt.targets[0])
            keep = [i for i, t in enumerate(targets) if t.id in live_after_pop[id(stmt)]]
            if len(keep) == len(targets):
                continue
            changed = True
            if not keep:
                removed.add(id(stmt))
                removed.update(id(p) for p in pushes)
                continue
            stmt.targets[0] = _rebuild([targets[i] for i in keep], gast.Store())
            for push in pushes:
                values = _names(push.value.args[0])
                push.value.args[0] = _rebuild([values[i] for i in keep], gast.Load())
    if removed:
        for block in list(blocks(adjoint.body)) + list(blocks(pullback.body)):
            kept = [s for s in block if id(s) not in removed]
            if len(kept) < len(block):
                block[:] = kept or [gast.Pass()]
    if removed or changed:
        changed |= _drop_unsaved_copies(adjoint)
    if context.tape:
        changed |= _push_before_copies(adjoint, context.tape)
    if context.tape and not any(
            type(n) is gast.Attribute and type(n.value) is gast.Name and n.value.id == context.tape
            for n in nodes(adjoint)):
        adjoint.body = [s for s in adjoint.body if not (
            isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id == context.tape)]
        context.tape = None
        changed = True
    return changed


def _drop_unsaved_copies(adjoint: gast.FunctionDef) -> bool:
    """Remove the forward sweep's ``h_prev = h`` whose name nothing reads any more."""
    read = loads(adjoint)
    changed = False
    for block in list(blocks(adjoint.body)):  # blocks() does not enter the pullback's def
        kept = [s for s in block if not (anno.get(s, anno.TAPE_COPY, False) and s.targets[0].id not in read)]
        if len(kept) < len(block):
            block[:] = kept or [gast.Pass()]
            changed = True
    return changed


def _is_push(stmt: gast.stmt, tape: str) -> bool:
    return (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)
            and isinstance(stmt.value.func, gast.Attribute) and stmt.value.func.attr == "append"
            and isinstance(stmt.value.func.value, gast.Name) and stmt.value.func.value.id == tape)


def _push_before_copies(adjoint: gast.FunctionDef, tape: str) -> bool:
    """``h_prev = h; ...; tape.append(h_prev)`` -> ``tape.append(h); ...`` where the push saves only copies
    made one after another, no other push lies between, and nothing else in the forward sweep reads them.

    One scan of each block: the copies made since the last push are the only ones a push can take back,
    and the forward sweep's reads of each name are counted once, so the pass is linear in the adjoint."""
    changed = False
    reads: dict[str, int] = {}
    for block in blocks(adjoint.body):
        for s in block:
            if not isinstance(s, gast.FunctionDef) and not anno.get(s, anno.TAPE_COPY, False):
                for n in _own_names(s):
                    reads[n.id] = reads.get(n.id, 0) + 1
    for block in list(blocks(adjoint.body)):
        copies: dict[str, int] = {}  # made since the last push: name -> position
        j = 0
        while j < len(block):
            stmt = block[j]
            if anno.get(stmt, anno.TAPE_COPY, False):
                copies[stmt.targets[0].id] = j
            elif _is_push(stmt, tape):
                at = _take_back_copies(block, j, copies, reads)
                if at is not None:
                    changed, j = True, at
                copies = {}
            j += 1
    return changed


def _take_back_copies(block: list[gast.stmt], j: int, copies: dict[str, int], reads: dict[str, int]) -> int | None:
    """Move the push ``block[j]`` up in place of the copies it alone saves; its new position, or None."""
    saved = _names(block[j].value.args[0])
    if not all(isinstance(n, gast.Name) and n.id in copies for n in saved):
        return None
    where = sorted(copies[n.id] for n in saved)
    if where != list(range(where[0], where[0] + len(where))):
        return None
    in_push: dict[str, int] = {}
    for n in saved:
        in_push[n.id] = in_push.get(n.id, 0) + 1
    if any(reads.get(n, 0) > count for n, count in in_push.items()):
        return None  # a copy the forward sweep reads elsewhere (the pullback's own, popped, are its own)
    sources = [block[copies[n.id]].value.id for n in saved]
    for n, source in zip(saved, sources):
        reads[n.id] -= 1
        reads[source] = reads.get(source, 0) + 1
    push = block[j]
    push.value.args[0] = _rebuild([name(source) for source in sources], gast.Load())
    del block[j]
    block[where[0]:where[-1] + 1] = [push]
    return where[0]


def _own_names(stmt: gast.stmt) -> list[gast.Name]:
    """The names in ``stmt`` outside the blocks it holds (a loop's target and iterable, an if's test)."""
    if not any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse")):
        return names(stmt)
    heads = [getattr(stmt, f) for f in ("target", "iter", "test") if getattr(stmt, f, None) is not None]
    return [n for head in heads for n in names(head)]
