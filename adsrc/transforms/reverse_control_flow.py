"""Statement lists, branches and loops through both sweeps of the reverse pass (transforms/reverse.py).

Input: a list of ANF statements. Output: its forward sweep, with tape pushes,
and its backward sweep, with the matching pops, in reverse order.

* Each statement goes to its rule (``stmt``): an active primitive or a write
  to ``BackwardBlocks`` (transforms/reverse_blocks.py), a branch or a loop
  here. An active variable overwritten by a value that carries no gradient
  has its adjoint reset to zero (``kill``).
* The values a run of simple statements must save go on the tape as one
  tuple, pushed after the run and popped before its backward blocks
  (``block``); a pending value the run reassigns is kept under another name
  (``h_prev = h``) so that the run goes on. Each pop is annotated PUSHES with
  the pushes it undoes, for optimize/tape.py.
* A branch saves its condition, a loop counts its iterations, on the tape
  when inside a loop; the backward sweep replays the branch, and the loop's
  backward body that many times.

``ReverseControlFlow`` is a mixin of ``Reverse``, which gives it the state
(``namer``, ``act``, ``rt``, ``parsed``, ``locals``, ``tape``,
``loop_depth``, ``loop_assigned``, ``write_aliases``) and ``adj``; ``primitive`` and
``write`` come from ``BackwardBlocks``.
"""
from __future__ import annotations

import copy

import gast

from ..frontend.activity import target_names
from ..frontend.desugar import builtin_name
from ..ir import annotations as anno
from ..ir.build import assign, call, const, is_comment, merge_comments, name, names_tuple, store


class ReverseControlFlow:
    # -- the tape ---------------------------------------------------------
    def tape_name(self) -> str:
        if self.tape is None:
            self.tape = self.namer.fresh("tape")
        return self.tape

    def push(self, names: list[str]) -> gast.stmt:
        value = names_tuple(names, gast.Load())
        return gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(self.tape_name()), attr="append", ctx=gast.Load()),
            args=[value], keywords=[]))

    def pop(self, names: list[str]) -> gast.stmt:
        value = gast.Call(func=gast.Attribute(value=name(self.tape_name()), attr="pop", ctx=gast.Load()),
                          args=[], keywords=[])
        return assign(names_tuple(names, gast.Store()), value)

    # -- statement lists --------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """Reverse a statement list; tape pushes of neighbouring statements share one tuple.

        A push is delayed past the following statements until control flow
        intervenes; the matching pop then serves the backward blocks of the
        whole group. A statement that reassigns a pending name ``h`` and has
        values of its own to save keeps the old value under another name first
        (``h_prev = h``, no copy of data), which the group pushes and its
        backward blocks read, so that a loop body of simple statements pushes
        once per iteration. The group indexes the names its backward blocks
        read and bind (``_Group``), so each statement costs its own size, not
        the group's: a long run that rebinds one name compiles in linear time.
        """
        fwd: list[gast.stmt] = []
        groups_bwd: list[list[gast.stmt]] = []  # each group's backward statements, in program order
        group = _Group()

        def flush() -> None:
            nonlocal group
            fwd.extend(group.fwd)
            group_bwd = group.backward()
            if group.pending:
                push, pop = self.push(group.pending), self.pop(group.pending)
                anno.set(pop, anno.PUSHES, [push])
                fwd.append(push)
                at = 1 if group_bwd and is_comment(group_bwd[0]) else 0
                group_bwd.insert(at, pop)
            groups_bwd.append(group_bwd)
            group = _Group()

        for stmt in stmts:
            f, b, save = self.stmt(stmt)
            simple = isinstance(stmt, gast.Assign)
            writes = simple and isinstance(stmt.targets[0], gast.Subscript)  # in place: rebinds nothing
            assigned = {n.id for t in (stmt.targets if simple and not writes else []) for n in gast.walk(t)
                        if isinstance(n, gast.Name)}
            clash = assigned & group.pending_set
            if simple and not writes and clash and save and self.can_keep_previous(clash, group):
                f = self.keep_previous(sorted(clash), group) + f
            elif not simple or clash:
                flush()
            group.add(f, b, save)
            if not simple:
                flush()
        flush()
        return fwd, merge_comments([s for group_bwd in reversed(groups_bwd) for s in group_bwd])

    def can_keep_previous(self, names: set[str], group: "_Group") -> bool:
        """Whether the pending ``names`` can be saved under other names: none shares memory with an array
        written in place, and the group's backward blocks only read them."""
        return not names & self.write_aliases and not names & group.bound

    def keep_previous(self, names: list[str], group: "_Group") -> list[gast.stmt]:
        """``h_prev = h`` for each pending name about to be reassigned: the group saves ``h_prev``
        instead, and the backward blocks already in the group read it."""
        copies = []
        for old in names:
            kept = self.namer.fresh(f"{old}_prev")
            self.locals.add(kept)
            group.rename(old, kept)
            copy_ = assign(kept, name(old))
            anno.set(copy_, anno.TAPE_COPY, True)
            copies.append(copy_)
        return copies

    def stmt(self, stmt: gast.stmt) -> tuple[list, list, list[str]]:
        """Forward statements, backward statements, and the names to save on the tape."""
        if isinstance(stmt, gast.Assign) and anno.has(stmt, anno.PRIM):
            if anno.get(stmt, anno.PRIM).kind == "write":
                return self.write(stmt, anno.get(stmt, anno.PRIM))
            target = stmt.targets[0].id
            if self.act.active(target):
                return self.primitive(stmt, target, anno.get(stmt, anno.PRIM))
            return [stmt], [], []
        if isinstance(stmt, gast.Assign):
            return [stmt], self.kill(target_names(stmt.targets[0])), []
        if isinstance(stmt, gast.If):
            return (*self.branch(stmt), [])
        if isinstance(stmt, (gast.For, gast.While)):
            return (*self.loop(stmt), [])
        return [stmt], [], []

    def kill(self, names: list[str]) -> list[gast.stmt]:
        """Backward statements resetting the adjoints of the active ``names`` (overwritten here)."""
        return [assign(self.adj(n), name(self.rt["zero"])) for n in names if self.act.active(n)]

    # -- branches and loops -----------------------------------------------
    def branch(self, stmt: gast.If) -> tuple[list, list]:
        body_f, body_b = self.block(stmt.body)
        else_f, else_b = self.block(stmt.orelse)
        if not body_b and not else_b:
            stmt.body, stmt.orelse = body_f or [gast.Pass()], else_f
            return [stmt], []
        cond = self.namer.fresh("cond")
        fwd = [gast.copy_location(assign(cond, stmt.test), stmt),
               gast.copy_location(gast.If(test=name(cond), body=body_f or [gast.Pass()], orelse=else_f), stmt)]
        if body_b:
            bwd_if = gast.If(test=name(cond), body=body_b, orelse=else_b)
        else:
            bwd_if = gast.If(test=gast.UnaryOp(op=gast.Not(), operand=name(cond)), body=else_b, orelse=[])
        bwd: list[gast.stmt] = [bwd_if]
        if self.loop_depth:
            # Saved at the end of every path through the branch, before any
            # break or continue, so it is the first thing the backward pops.
            pop = self.pop([cond])
            anno.set(pop, anno.PUSHES, _append_to_paths(fwd[1].body, self.push([cond])) +
                     _append_to_paths(fwd[1].orelse, self.push([cond])))
            bwd.insert(0, pop)
        return fwd, bwd

    def loop(self, stmt: gast.For | gast.While) -> tuple[list, list]:
        self.loop_depth += 1
        assigned = {n.id for n in gast.walk(stmt) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        self.loop_assigned.append(assigned)
        body_f, body_b = self.block(stmt.body)
        self.loop_assigned.pop()
        self.loop_depth -= 1
        if isinstance(stmt, gast.For) and body_b:
            body_b = body_b + self.kill(target_names(stmt.target))
        if not body_b:
            stmt.body = body_f
            return [stmt], []
        hint = f"n_{stmt.target.id}" if isinstance(stmt, gast.For) else "n_iterations"
        count = self.namer.fresh(hint)
        increment = gast.AugAssign(target=store(count), op=gast.Add(), value=const(1))
        stmt.body = [increment] + body_f
        fwd = [assign(count, const(0)), stmt]
        loop_var = self.namer.fresh("_")
        replay = call(builtin_name(self.parsed, "range"), name(count))
        bwd: list[gast.stmt] = [gast.For(target=store(loop_var), iter=replay,
                                         body=body_b, orelse=[], type_comment=None)]
        if self.loop_depth:
            push, pop = self.push([count]), self.pop([count])
            anno.set(pop, anno.PUSHES, [push])
            fwd.append(push)
            bwd.insert(0, pop)
        return fwd, bwd


class _Group:
    """A run of simple statements whose tape pushes share one tuple: their forward and backward
    statements, the names to push, and an index of the names the backward statements read
    (their nodes, for renaming) and bind."""

    def __init__(self) -> None:
        self.fwd: list[gast.stmt] = []
        self._bwd: list[list[gast.stmt]] = []  # each statement's backward statements, in program order
        self.pending: list[str] = []
        self.pending_set: set[str] = set()
        self.reads: dict[str, list[gast.Name]] = {}
        self.bound: set[str] = set()

    def add(self, fwd: list[gast.stmt], bwd: list[gast.stmt], save: list[str]) -> None:
        self.fwd += fwd
        self._bwd.append(bwd)
        for stmt in bwd:
            for n in gast.walk(stmt):
                if isinstance(n, gast.Name):
                    if isinstance(n.ctx, gast.Load):
                        self.reads.setdefault(n.id, []).append(n)
                    else:
                        self.bound.add(n.id)
        for n in save:
            if n not in self.pending_set:
                self.pending.append(n)
                self.pending_set.add(n)

    def backward(self) -> list[gast.stmt]:
        """The group's backward statements: the last statement's first."""
        return [s for stmts in reversed(self._bwd) for s in stmts]

    def rename(self, old: str, new: str) -> None:
        """The pending ``old`` is pushed as ``new``, which the backward statements read instead."""
        self.pending[self.pending.index(old)] = new
        self.pending_set.discard(old)
        self.pending_set.add(new)
        nodes = self.reads.pop(old, [])
        for n in nodes:
            n.id = new
        self.reads.setdefault(new, []).extend(nodes)


def _append_to_paths(block: list[gast.stmt], stmt: gast.stmt) -> list[gast.stmt]:
    """Put a copy of ``stmt`` at the end of every path through ``block``, before its
    jump if it has one; return the copies."""
    last = block[-1] if block else None
    if isinstance(last, gast.If) and _jumps(last):
        return _append_to_paths(last.body, stmt) + _append_to_paths(last.orelse, stmt)
    copied = copy.deepcopy(stmt)
    if isinstance(last, (gast.Break, gast.Continue, gast.Return)):
        block.insert(len(block) - 1, copied)
    elif isinstance(last, gast.Pass) and len(block) == 1:
        block[0] = copied
    else:
        block.append(copied)
    return [copied]


def _jumps(node: gast.AST) -> bool:
    """True if a break, continue or return may leave this if statement's branches."""
    for stmt in node.body + node.orelse:
        if isinstance(stmt, (gast.Break, gast.Continue, gast.Return)):
            return True
        if isinstance(stmt, gast.If) and _jumps(stmt):
            return True
    return False
