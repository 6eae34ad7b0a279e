"""Dead-code elimination in the pullback.

Input: a pullback. Output: the same without assignments whose targets are
never read afterwards and whose right-hand side has no effect (a reset to
zero, an unused initialization, an unread materialization, an unread vjp),
and restoring writes into arrays that nothing reads afterwards.
Accumulations, tape pops and callee pullbacks are left alone: they have
effects on shared state.
"""
from __future__ import annotations

import gast

from ..ir import annotations as anno
from ..ir.dataflow import blocks, liveness, loads, names, nodes, stores


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


def _restores_unread(target: gast.AST, live: set[str], context) -> bool:
    """A write into an array the function made (the backward sweep undoing a write) that nothing reads
    afterwards: neither the array nor anything that may share its memory."""
    return isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
        and target.value.id in context.write_aliases and not (context.write_aliases & live)


def _calls_locals(adjoint: gast.FunctionDef, pullback: gast.FunctionDef) -> bool:
    """Whether the pullback calls a function that is a value of the adjoint (a callee's pullback, a local
    function), which may read an array the forward sweep passed it without naming it here."""
    local = {n.id for n in names(adjoint) if type(n.ctx) is gast.Store}
    return any(type(n) is gast.Call and type(n.func) is gast.Name and n.func.id in local for n in nodes(pullback))


def _pops_alias(stmt: gast.stmt, aliases: set[str]) -> bool:
    """Whether ``stmt`` (or a statement in it) is a tape pop that gives a name that may share memory with
    a written array: that name holds the array itself again (the tape kept the reference)."""
    return any(isinstance(node, gast.Assign) and anno.has(node, anno.PUSHES) and stores(node.targets[0]) & aliases
               for node in gast.walk(stmt) if isinstance(node, gast.stmt))


def _alias_pops_after(pullback: gast.FunctionDef, aliases: set[str]) -> set[int]:
    """The statements after which (in the backward sweep's order, a loop's next iterations included) such
    a pop may run: a restore there may be read through the name the pop gives back, though no name of the
    array is live across the pop (``v = s`` pushed, ``s[t] = 3.0``, then ``v = tape.pop()`` and ``v`` read)."""
    found: set[int] = set()

    def block(stmts: list[gast.stmt], after: bool) -> None:
        later = [after] * (len(stmts) + 1)
        for i in range(len(stmts) - 1, -1, -1):
            later[i] = later[i + 1] or _pops_alias(stmts[i], aliases)
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, (gast.For, gast.While)):
                block(stmt.body, later[i + 1] or _pops_alias(stmt, aliases))  # the next iterations too
                block(stmt.orelse, later[i + 1])
            elif isinstance(stmt, gast.If):
                block(stmt.body, later[i + 1])
                block(stmt.orelse, later[i + 1])
            elif later[i + 1]:
                found.add(id(stmt))

    if aliases:
        block(pullback.body, False)
    return found


def run(adjoint: gast.FunctionDef, pullback: gast.FunctionDef, context) -> bool:
    dead: set[int] = set()
    # Restores are dead where nothing reads the array after them, unless a callee's pullback might, or a
    # name the tape gives back later may be the array.
    restores = not _calls_locals(adjoint, pullback)
    popped_later = _alias_pops_after(pullback, context.write_aliases) if restores else set()

    def visit(stmt: gast.stmt, live: set[str]) -> None:
        if not isinstance(stmt, gast.Assign):
            return
        target = stmt.targets[0]
        if (_names_only(target) and not (stores(target) & live) and _pure(stmt.value, context)) \
                or restores and id(stmt) not in popped_later and _restores_unread(target, live, context):
            dead.add(id(stmt))

    liveness(pullback.body, set(), visit, written=frozenset(context.write_aliases) if restores else frozenset())
    if dead:
        for block in list(blocks(pullback.body)):
            block[:] = [s for s in block if id(s) not in dead]
    return _drop_unread_copies(adjoint, pullback) or bool(dead)


def _drop_unread_copies(adjoint: gast.FunctionDef, pullback: gast.FunctionDef) -> bool:
    """Remove ``old = y[i].copy()`` from the forward sweep when no restore reads ``old`` any more."""
    read = loads(adjoint)
    changed = False
    for block in list(blocks(adjoint.body)):  # blocks() does not enter the pullback's def
        kept = [s for s in block if not (
            isinstance(s, gast.Assign) and isinstance(s.targets[0], gast.Name) and s.targets[0].id not in read
            and _copies_an_element(s.value))]
        if len(kept) < len(block):
            block[:] = kept or [gast.Pass()]
            changed = True
    return changed


def _copies_an_element(value: gast.AST) -> bool:
    return isinstance(value, gast.Call) and not value.args and isinstance(value.func, gast.Attribute) \
        and value.func.attr == "copy" and isinstance(value.func.value, gast.Subscript)
