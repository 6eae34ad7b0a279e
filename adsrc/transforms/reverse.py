"""Reverse: turn an ANF function into its adjoint, a forward sweep plus a pullback.

Input: an ANF FunctionDef (see frontend/anf.py) and its activity. Output: a FunctionDef
``f_adjoint(*params)`` that runs the forward sweep and returns
``(value, pullback)``; ``pullback(d_result)`` runs the backward sweep and
returns the adjoints of the differentiated parameters.

* Each active primitive ``t = op(a, b)`` is kept in the forward sweep and gets,
  in the backward sweep, a block that starts with a comment naming the
  original line, then one accumulation per active operand: lazily,
  ``da = accumulate(da, Thunk(op_da, dt, t, a, b))``; eagerly,
  ``da = da + op_da(dt, t, a, b)``.
* Values the backward sweep needs are read straight from the forward sweep's
  scope (a closure) when they are assigned once outside loops; any other is
  pushed on ``tape`` right after the statement and popped in its block.
* A branch saves its condition, a loop its iteration count; the backward sweep
  replays branches and loops in reverse. ``break`` and ``continue`` need
  nothing more because desugar made them end their blocks.
* A call of a user function calls that function's own adjoint, and the
  pullback it returns is saved like any other value.
* An active variable overwritten by a value that carries no gradient
  (``total = 0.0`` inside a loop, a loop target taken from a constant list)
  has its adjoint reset to zero there, so that what it received after the
  overwrite does not leak into its earlier value.
"""
from __future__ import annotations

import copy
import os
from typing import Any

import gast

from ..frontend.activity import Activity, target_names
from ..errors import NoGradientRule
from ..frontend.prims import Prim, argument_label, call_site
from ..frontend.desugar import builtin_name
from ..ir import annotations as anno
from ..ir.build import (arguments, assign, call, clone, const, dotted, is_comment, line_comment,
                        merge_comments, name, names_tuple, store)
from ..ir.naming import Namer
from .accumulation import Accumulation
from ..frontend.parse import Parsed


class Reverse:
    def __init__(self, parsed: Parsed, namer: Namer, activity: Activity, eager: bool,
                 wrt: list[str], runtime: dict[str, str], locals_: set[str], write_aliases: set[str] = frozenset()):
        self.parsed = parsed
        self.namer = namer
        self.act = activity
        self.eager = eager
        self.wrt = wrt
        self.rt = runtime  # runtime helper -> its name in the generated module
        self.acc = Accumulation(runtime, eager)
        self.locals = locals_
        self.adjoints: dict[str, str] = {}
        self.tape: str | None = None
        self.loop_depth = 0
        self.vjp_names: dict[Any, str] = {}
        self.header: list[str] = []
        self.single_use: set[str] = set()
        self.loop_assigned: list[set[str]] = []
        self.callees: list[tuple[Any, tuple[int, ...]]] = []  # the user functions whose adjoints this one calls
        # Names whose values may share memory with an array written in place (frontend/writes.py).
        self.write_aliases = set(write_aliases)

    # -- names ------------------------------------------------------------
    def adj(self, var: str) -> str:
        if var not in self.adjoints:
            self.adjoints[var] = self.namer.adjoint(var)
        return self.adjoints[var]

    def vjp_name(self, rule, index: int) -> str:
        vjp = rule.vjps[index]
        if vjp not in self.vjp_names:
            label = self.namer.fresh(vjp.__name__)
            self.vjp_names[vjp] = label
            self.header.append(f"{label} = {self.rt['rule_vjp']}({rule.qualname!r}, {index})")
        return self.vjp_names[vjp]

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

    def line_comment(self, node: gast.AST) -> gast.stmt:
        return line_comment(self.parsed, node)

    def saved(self, needed: list[str]) -> list[str]:
        """The needed values that must go on the tape (not stable, local)."""
        out = []
        for n in needed:
            if n in self.locals and not self.act.stable(n) and n not in out:
                out.append(n)
        return out

    # -- accumulation -----------------------------------------------------
    def accumulate(self, var: str, contribution: gast.expr) -> gast.stmt:
        """``dvar += contribution``, lazily or eagerly; a single-use temporary is just assigned.

        A deferred contribution carries its original ``file:line``, for errors
        raised when it is finally materialized.
        """
        d = self.adj(var)
        if var in self.single_use:
            return assign(d, contribution)
        return self.acc.add(d, contribution, self.origin)

    @staticmethod
    def reads(vjp, position: int) -> bool:
        """Whether ``vjp`` reads its parameter at ``position`` (1 is ans, 2 the first argument)."""
        uses = getattr(vjp, "uses", None)
        return True if uses is None else uses(position)

    def rule_contribution(self, prim: Prim, index: int, target: str, lazy: bool) -> gast.expr:
        vjp_fn = prim.rule.vjps[index]
        vjp = self.vjp_name(prim.rule, index)
        values = [name(target)] + prim.args
        args = [name(self.adj(target))] + [
            clone(v) if self.reads(vjp_fn, k + 1) else const(None) for k, v in enumerate(values)]
        keywords = [gast.keyword(arg=k.arg, value=clone(k.value)) for k in prim.keywords]
        if not lazy:
            return gast.Call(func=name(vjp), args=args, keywords=keywords)
        return self.acc.deferred(vjp, args, keywords)

    def materialized(self, var: str) -> bool:
        """True where the adjoint of ``var`` is never a thunk when its definition is reached."""
        return self.eager or var in self.single_use

    # -- statements -------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> tuple[list[gast.stmt], list[gast.stmt]]:
        """Reverse a statement list; tape pushes of neighbouring statements share one tuple.

        A push is delayed past the following statements until control flow
        intervenes; the matching pop then serves the backward blocks of the
        whole group. A statement that reassigns a pending name ``h`` and has
        values of its own to save keeps the old value under another name first
        (``h_prev = h``, no copy of data), which the group pushes and its
        backward blocks read, so that a loop body of simple statements pushes
        once per iteration.
        """
        fwd: list[gast.stmt] = []
        bwd: list[gast.stmt] = []
        group_fwd: list[gast.stmt] = []
        group_bwd: list[gast.stmt] = []
        pending: list[str] = []

        def flush() -> None:
            nonlocal group_fwd, group_bwd, pending, bwd
            fwd.extend(group_fwd)
            if pending:
                push, pop = self.push(pending), self.pop(pending)
                anno.set(pop, anno.PUSHES, [push])
                fwd.append(push)
                at = 1 if group_bwd and is_comment(group_bwd[0]) else 0
                group_bwd.insert(at, pop)
            bwd = group_bwd + bwd
            group_fwd, group_bwd, pending = [], [], []

        for stmt in stmts:
            f, b, save = self.stmt(stmt)
            simple = isinstance(stmt, gast.Assign)
            writes = simple and isinstance(stmt.targets[0], gast.Subscript)  # in place: rebinds nothing
            assigned = {n.id for t in (stmt.targets if simple and not writes else []) for n in gast.walk(t)
                        if isinstance(n, gast.Name)}
            clash = assigned & set(pending)
            if simple and not writes and clash and save and self.can_keep_previous(clash, group_bwd):
                f = self.keep_previous(sorted(clash), pending, group_bwd) + f
            elif not simple or clash:
                flush()
            group_fwd += f
            group_bwd = b + group_bwd
            pending += [n for n in save if n not in pending]
            if not simple:
                flush()
        flush()
        return fwd, merge_comments(bwd)

    def can_keep_previous(self, names: set[str], group_bwd: list[gast.stmt]) -> bool:
        """Whether the pending ``names`` can be saved under other names: none shares memory with an array
        written in place, and the group's backward blocks only read them."""
        return not names & self.write_aliases and not any(
            isinstance(n, gast.Name) and n.id in names and not isinstance(n.ctx, gast.Load)
            for s in group_bwd for n in gast.walk(s))

    def keep_previous(self, names: list[str], pending: list[str], group_bwd: list[gast.stmt]) -> list[gast.stmt]:
        """``h_prev = h`` for each pending name about to be reassigned: the group saves ``h_prev``
        instead, and the backward blocks already in the group read it."""
        copies = []
        for old in names:
            kept = self.namer.fresh(f"{old}_prev")
            self.locals.add(kept)
            pending[pending.index(old)] = kept
            for s in group_bwd:
                for n in gast.walk(s):
                    if isinstance(n, gast.Name) and n.id == old:
                        n.id = kept
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

    def primitive(self, stmt: gast.Assign, target: str, prim: Prim) -> tuple[list, list, list[str]]:
        """Forward statements, the backward block, and what to save, for one active primitive."""
        self.origin = f"{os.path.basename(self.parsed.filename)}:{stmt.lineno}"
        active = [i for i, a in enumerate(prim.args) if isinstance(a, gast.Name) and self.act.active(a.id)]
        body: list[gast.stmt] = []
        if prim.kind != "copy" and not self.materialized(target):
            body.append(assign(self.adj(target), self.acc.materialized(name(self.adj(target)))))
        emit = {"copy": self.copy_block, "pack": self.pack_block, "append": self.append_block,
                "rule": self.rule_block, "call": self.call_block, "dynamic": self.dynamic_block}[prim.kind]
        needed = emit(stmt, target, prim, active, body)
        body.append(assign(self.adj(target), name(self.rt["zero"])))
        forward = self.grown_in_place(stmt, target, prim, body, needed) if prim.kind == "append" else [stmt]
        return forward, [self.line_comment(stmt)] + body, self.saved(needed)

    def grown_in_place(self, stmt, target: str, prim: Prim, body: list, needed: list[str]) -> list[gast.stmt]:
        """``t = [*xs, v]`` (``xs.append(v)`` in the source) runs as ``xs.append(v); t = xs``: O(1), as in
        Python, where a copy per append costs O(len(xs)) and keeps every version. The backward block undoes
        it with ``t.pop()``, as a write is undone, so that each block sees the list as it was."""
        items, value = prim.args
        grow = gast.Expr(value=gast.Call(func=gast.Attribute(value=name(items.id), attr="append", ctx=gast.Load()),
                                         args=[clone(value)], keywords=[]))
        body.append(gast.Expr(value=gast.Call(func=gast.Attribute(value=name(target), attr="pop", ctx=gast.Load()),
                                              args=[], keywords=[])))
        needed.append(target)
        return [gast.copy_location(grow, stmt), gast.copy_location(assign(target, name(items.id)), stmt)]

    def copy_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = a``: ``da += dt``."""
        source = prim.args[0].id
        dvalue = name(self.adj(target))
        if source in self.single_use and not self.materialized(target):
            dvalue = self.acc.materialized(dvalue)
        body.append(self.accumulate(source, dvalue))
        return []

    def pack_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = (a, b)`` or ``{k: a}``: each element gets its part of ``dt``."""
        for i in active:
            part = call(self.rt["part"], name(self.adj(target)), clone(prim.keys[i]))
            body.append(self.accumulate(prim.args[i].id, part))
        return []

    def append_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = [*xs, v]``: ``v`` gets the last part of ``dt``, ``xs`` the rest."""
        items, value = prim.args
        d = name(self.adj(target))
        if isinstance(value, gast.Name) and self.act.active(value.id):
            body.append(self.accumulate(value.id, call(self.rt["part"], d, const(-1))))
        if self.act.active(items.id):
            body.append(self.accumulate(items.id, call(self.rt["drop_last"], clone(d))))
        return []

    def rule_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = op(a, b)``: one vjp call (or deferred thunk) per active argument."""
        for i in active:
            arg = prim.args[i].id
            if i >= len(prim.rule.vjps):
                raise beyond_rule(prim, i, self.parsed.where(stmt))
            if prim.rule.vjps[i] is not None:
                lazy = not self.eager and arg not in self.single_use and self.worth_deferring(arg) \
                    and not self.reads_written_array(prim, target)
                body.append(self.accumulate(arg, self.rule_contribution(prim, i, target, lazy)))
            elif arg in self.single_use:
                body.append(assign(self.adj(arg), name(self.rt["zero"])))
        reads = [n.id for a in prim.args + [k.value for k in prim.keywords]
                 for n in gast.walk(a) if isinstance(n, gast.Name)]
        return reads + [target]

    def reads_written_array(self, prim: Prim, target: str) -> bool:
        """Whether a contribution would read an array written in place (or a view of one): a deferred
        one would read it after the backward sweep restored its earlier elements."""
        names = {n.id for a in prim.args + [k.value for k in prim.keywords] for n in gast.walk(a)
                 if isinstance(n, gast.Name)} | {target}
        return bool(names & self.write_aliases)

    def write(self, stmt: gast.Assign, prim: Prim) -> tuple[list, list, list[str]]:
        """``y[index] = v``, in place: the forward sweep keeps what the write overwrites; the backward
        block gives ``v`` its part of ``dy``, clears that part, and restores ``y``. Into a list
        (``xs[i] = v``), the same with the item that was there: ``dv`` gets ``dxs[i]``."""
        base, index, value = prim.args
        array = base.id
        self.origin = f"{os.path.basename(self.parsed.filename)}:{stmt.lineno}"
        old = self.namer.fresh(f"{array}_overwritten")
        self.locals.add(old)
        self.act.sites[old] = 1
        if self.loop_depth:
            self.act.in_loop.add(old)
        where = stmt.targets[0].slice
        overwritten = gast.Subscript(value=name(array), slice=clone(where), ctx=gast.Load())
        if not prim.into_list:  # an array's elements are written into; a list's item is replaced, never changed
            overwritten = gast.Call(func=gast.Attribute(value=overwritten, attr="copy", ctx=gast.Load()),
                                    args=[], keywords=[])
        keep = gast.copy_location(assign(old, overwritten), stmt)
        body: list[gast.stmt] = []
        needed = [old, array] + [n.id for n in gast.walk(index) if isinstance(n, gast.Name)]
        if self.act.active(array):
            d = self.adj(array)
            later: list[gast.stmt] = []
            if isinstance(value, gast.Name) and self.act.active(value.id):
                part = call(self.rt["written_part"], name(d), name(array), clone(index), clone(value))
                if value.id == array or value.id in self.write_aliases:
                    # y[...] = y: the value's share goes back into dy after the write's part is cleared
                    held = self.namer.fresh(f"{self.adj(value.id)}_written")
                    body.append(assign(held, part))
                    later.append(self.accumulate(value.id, name(held)))
                else:
                    body.append(self.accumulate(value.id, part))
                needed.append(value.id)
            body.append(assign(d, call(self.rt["cleared"], name(d), clone(index))))
            body.extend(later)
        body.append(assign(gast.Subscript(value=name(array), slice=clone(where), ctx=gast.Store()), name(old)))
        return [keep, stmt], [self.line_comment(stmt)] + body, self.saved(needed)

    def call_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = g(a, b)`` for a user function: the forward sweep calls g's adjoint and
        keeps its pullback, which the backward block calls."""
        pullback = self.namer.fresh(f"{target}_pullback")
        callee = self.namer.fresh(f"{prim.callee.__name__}_adjoint")
        self.header.append(
            f"{callee} = {self.rt['adjoint_of']}({dotted(prim.func)}, wrt={tuple(active)!r}, eager={self.eager})")
        self.callees.append((prim.callee, tuple(active)))
        stmt.targets = [gast.Tuple(elts=[store(target), store(pullback)], ctx=gast.Store())]
        stmt.value = gast.Call(func=name(callee), args=prim.args, keywords=prim.keywords)
        self.locals.add(pullback)
        self.act.sites[pullback] = 1
        if self.loop_depth:
            self.act.in_loop.add(pullback)
        parts = [self.namer.fresh(f"{self.adj(prim.args[i].id)}_{prim.callee.__name__}") for i in active]
        if parts:
            body.append(assign(gast.Tuple(elts=[store(p) for p in parts], ctx=gast.Store()),
                               gast.Call(func=name(pullback), args=[name(self.adj(target))], keywords=[])))
            for i, part in zip(active, parts):
                arg = prim.args[i].id
                value = name(part)
                if not self.eager and (arg in self.single_use or self.reads_written_array(prim, target)):
                    value = self.acc.materialized(value)
                body.append(self.accumulate(arg, value))
        return [pullback]

    def dynamic_block(self, stmt, target: str, prim: Prim, active: list[int], body: list) -> list[str]:
        """``t = f(a)`` or ``t = obj.m(a)`` where the callee is a value: the forward sweep calls the call
        site's adjoint (resolved when it runs, calls.py) and keeps its pullback."""
        keywords = [k.arg for k in prim.keywords if isinstance(k.value, gast.Name) and self.act.active(k.value.id)]
        wrt = tuple(active) + tuple(keywords)
        label, options = call_site(prim, self.parsed.where(stmt))
        callee = self.namer.fresh(f"{label}_adjoint")
        self.header.append(f"{callee} = {self.rt['adjoint_of_call']}(wrt={wrt!r}, eager={self.eager}, {options})")
        pullback = self.namer.fresh(f"{target}_pullback")
        stmt.targets = [gast.Tuple(elts=[store(target), store(pullback)], ctx=gast.Store())]
        stmt.value = gast.Call(func=name(callee), args=[clone(a) for a in prim.args],
                               keywords=[gast.keyword(arg=k.arg, value=clone(k.value)) for k in prim.keywords])
        self.locals.add(pullback)
        self.act.sites[pullback] = 1
        if self.loop_depth:
            self.act.in_loop.add(pullback)
        sources = [prim.args[i].id for i in active] + \
            [k.value.id for k in prim.keywords if k.arg in keywords]
        parts = [self.namer.fresh(f"{self.adj(arg)}_{label}") for arg in sources]
        if parts:
            body.append(assign(gast.Tuple(elts=[store(p) for p in parts], ctx=gast.Store()),
                               gast.Call(func=name(pullback), args=[name(self.adj(target))], keywords=[])))
            for arg, part in zip(sources, parts):
                body.append(self.accumulate(arg, name(part)))
        return [pullback]

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

    def kill(self, names: list[str]) -> list[gast.stmt]:
        """Backward statements resetting the adjoints of the active ``names`` (overwritten here)."""
        return [assign(self.adj(n), name(self.rt["zero"])) for n in names if self.act.active(n)]

    def worth_deferring(self, var: str) -> bool:
        """Whether a contribution to ``var`` should be a thunk rather than computed now.

        Only inside a loop, and only for a variable the loop does not reassign:
        such a variable (a weight used at every step) collects one contribution
        per iteration, which materialization then fuses or adds in place.
        Elsewhere the number of contributions is small and fixed by the code,
        so deferring them would cost more than it saves.
        """
        return bool(self.loop_assigned) and not self.loop_variant(var)

    def loop_variant(self, var: str) -> bool:
        """True if ``var`` is reassigned in the innermost loop around the current statement.

        Such a variable gets a contribution or two per iteration and is read
        in the same iteration of the backward sweep, so deferring them cannot
        pay; contributions to loop-invariant variables (a weight used in every
        iteration) are the ones worth keeping as thunks.
        """
        return bool(self.loop_assigned) and var in self.loop_assigned[-1]

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

    # -- the whole function -----------------------------------------------
    def function(self, node: gast.FunctionDef, adjoint_name: str) -> gast.FunctionDef:
        self.single_use = anno.get(node, anno.SINGLE_USE, set())
        for stmt in gast.walk(node):  # lists grown in place (grown_in_place): what reads them must not be deferred
            if isinstance(stmt, gast.Assign) and getattr(anno.get(stmt, anno.PRIM, None), "kind", None) == "append":
                self.write_aliases |= {stmt.targets[0].id, anno.get(stmt, anno.PRIM).args[0].id}
        ret = node.body[-1]
        body_f, body_b = self.block(node.body[:-1])
        result = ret.value
        if isinstance(result, gast.Name) and self.act.active(result.id):
            seed = self.adj(result.id)
        else:
            seed = self.namer.fresh("dresult")
        params = [a.id for a in node.args.args]
        outputs = [self.adj(p) if self.act.active(p) else None for p in self.wrt]
        inits = [assign(d, name(self.rt["zero"])) for var, d in self.adjoints.items() if d != seed]
        returned = gast.Tuple(elts=[name(o) if o else name(self.rt["zero"]) for o in outputs], ctx=gast.Load())
        pullback_name = self.namer.fresh("pullback")
        pullback = gast.FunctionDef(
            name=pullback_name,
            args=arguments([seed]),
            body=inits + body_b + [gast.Return(value=returned)],
            decorator_list=[], returns=None, type_comment=None, type_params=[],
        )
        tape_init = [assign(self.tape, gast.List(elts=[], ctx=gast.Load()))] if self.tape else []
        if isinstance(result, gast.Name) and result.id in self.write_aliases:
            result = call(self.rt["detached"], result)  # the pullback restores the array it may share
        final = gast.Return(value=gast.Tuple(elts=[result, name(pullback_name)], ctx=gast.Load()))
        return gast.FunctionDef(
            name=adjoint_name, args=arguments(params),
            body=tape_init + body_f + [pullback, final],
            decorator_list=[], returns=None, type_comment=None, type_params=[],
        )


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


def beyond_rule(prim: Prim, index: int, where: str, forward: bool = False) -> NoGradientRule:
    """The error for a differentiable value passed where a rule declares nothing: past its last vjp.

    (A ``None`` vjp within the rule's arguments marks one with no gradient, an
    index or a shape, and stays silent.) Its gradient would otherwise be dropped.
    """
    rule = prim.rule
    count = len(rule.vjps)
    func = f"{rule.module}.{rule.name}" if rule.module else rule.name
    how = (f"adsrc.register_adjoint({func}, ...) giving a vjp for that argument too, and "
           f"adsrc.rules.registry.defjvp({func}, ...) a jvp" if forward else
           f"adsrc.register_adjoint({func}, ...) giving a vjp for that argument too")
    return NoGradientRule(
        f"{rule.qualname} with respect to {argument_label(prim, index)}: its rule covers "
        f"{count} argument{'s' if count != 1 else ''}, and this one carries a gradient",
        where,
        f"{how} (one per argument, None for one with no gradient), or pass a value there that does not "
        f"depend on the differentiated inputs")
