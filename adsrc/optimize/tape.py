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
from ..ir.dataflow import blocks, liveness, loads


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
            isinstance(n, gast.Attribute) and isinstance(n.value, gast.Name) and n.value.id == context.tape
            for n in gast.walk(adjoint)):
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
    made one after another, no other push lies between, and nothing else in the forward sweep reads them."""
    changed = False
    forward = [s for block in blocks(adjoint.body) for s in block if not isinstance(s, gast.FunctionDef)]
    for block in list(blocks(adjoint.body)):
        for j, push in enumerate(block):
            if not _is_push(push, tape):
                continue
            saved = _names(push.value.args[0])
            if not all(isinstance(n, gast.Name) for n in saved):
                continue
            copies = {s.targets[0].id: i for i, s in enumerate(block[:j]) if anno.get(s, anno.TAPE_COPY, False)}
            where = sorted(copies.get(n.id, -1) for n in saved)
            if where[0] < 0 or where != list(range(where[0], where[0] + len(where))) \
                    or any(_is_push(s, tape) for s in block[where[0]:j]):
                continue
            names = {n.id for n in saved}
            if any(isinstance(n, gast.Name) and n.id in names and n not in saved
                   for s in forward if not anno.get(s, anno.TAPE_COPY, False) for n in _own_names(s)):
                continue  # a copy the forward sweep reads elsewhere (the pullback's own, popped, are its own)
            source = {block[i].targets[0].id: block[i].value for i in where}
            push.value.args[0] = _rebuild([name(source[n.id].id) for n in saved], gast.Load())
            block[where[0]:where[-1] + 1] = [push]
            del block[j - len(where) + 1]
            changed = True
            break
    return changed


def _own_names(stmt: gast.stmt) -> list[gast.AST]:
    """The nodes of ``stmt`` outside the blocks it holds (a loop's target and iterable, an if's test)."""
    if not any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse")):
        return list(gast.walk(stmt))
    heads = [getattr(stmt, f) for f in ("target", "iter", "test") if getattr(stmt, f, None) is not None]
    return [n for head in heads for n in gast.walk(head)]
