"""The backward block of one active ANF statement, for the reverse pass (transforms/reverse.py).

Input: an ANF assignment annotated PRIM: a primitive of any kind, or a write
in place ``y[i] = v``. Output: its forward statements, its backward block (a
comment naming the original line, then one accumulation per active operand)
and the names whose values that block reads and the forward sweep must save
(``saved``: the local ones that are not stable).

* ``t = a`` and ``t = (a, b)``: each operand gets ``dt`` or its part of it.
* ``t = op(a, b)``: one vjp call per active argument; inside a loop, for a
  variable the loop does not reassign, a deferred thunk (``worth_deferring``).
* ``t = g(a)`` for a user function, or for a callee that is a value: the
  forward sweep calls the callee's adjoint and keeps its pullback, which the
  backward block calls.
* ``t = [*xs, v]`` grows ``xs`` in place and ``y[i] = v`` writes in place: the
  forward sweep keeps what they change, the backward block puts it back.

``BackwardBlocks`` is a mixin of ``Reverse``, which gives it the state it
reads and adds to (``act``, ``eager``, ``parsed``, ``namer``, ``rt``, ``acc``,
``locals``, ``single_use``, ``write_aliases``, ``loop_depth``,
``loop_assigned``, ``vjp_names``, ``header``, ``callees``) and ``adj`` and
``line_comment``.
Also here: ``beyond_rule``, the error for a differentiable argument past a
rule's last vjp, which forward mode raises too.
"""
from __future__ import annotations

import os

import gast

from ..errors import NoGradientRule
from ..frontend.prims import Prim, argument_label, call_site
from ..ir.build import assign, call, clone, const, dotted, name, store


class BackwardBlocks:
    # -- what is saved and what is accumulated ----------------------------
    def saved(self, needed: list[str]) -> list[str]:
        """The needed values that must go on the tape (not stable, local)."""
        out = []
        for n in needed:
            if n in self.locals and not self.act.stable(n) and n not in out:
                out.append(n)
        return out

    def vjp_name(self, rule, index: int) -> str:
        vjp = rule.vjps[index]
        if vjp not in self.vjp_names:
            label = self.namer.fresh(vjp.__name__)
            self.vjp_names[vjp] = label
            self.header.append(f"{label} = {self.rt['rule_vjp']}({rule.qualname!r}, {index})")
        return self.vjp_names[vjp]

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

    # -- one active statement ---------------------------------------------
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
