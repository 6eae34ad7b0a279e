"""ANF: split active statements into one primitive operation per statement.

Input: a desugared FunctionDef and its activity. Output: the same function in
which every active assignment has the form ``t = op(a, b, ...)`` with atomic
operands (names and constants), annotated with a :class:`~.prims.Prim` that
says which rule differentiates it (``anno.PRIM``), and the temporaries read
once, right after their definitions (``anno.SINGLE_USE``). Temporaries are
named after what they hold (``W_at_xi = W @ xi``). Inactive statements are
left exactly as written. This module flattens statements and expressions;
calls are split by its base class, frontend/callees.py's ``CallSplitter``
(callees resolved to a rule, a user function, a call of a value or an error).

Also here, because they need to know what is active:

* ``for x in xs`` over a differentiated sequence becomes an index loop
  ``for i in range(len(xs)): x = xs[i]``, so that gradients reach ``xs``
  (over a copy of the name ``xs`` if the body rebinds it);
* ``v = v`` is dropped (its backward would reset ``dv`` after adding to it);
* a primitive whose target is also one of its operands (``h = np.tanh(h)``)
  writes a fresh temporary first (``h_next``), so the backward sweep can
  still see the old value;
* every write ``x[i] = v`` stays in place, annotated ``Prim("write")``;
  ``xs.append(v)`` on a differentiated list becomes ``xs = [*xs, v]``.
"""
from __future__ import annotations

import contextlib
import operator

import gast
import numpy as np

from ..rules.assembly import INDEX_TRICKS, index_concatenate
from ..rules.closures import local_function
from .activity import Activity, gradient_reads, is_append, target_names
from .desugar import builtin_name
from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.build import call, const, located, name, store
from ..ir.naming import Namer, hint_for, stored_names
from .callees import CallSplitter, local_names
from .parse import Parsed
from .prims import Prim
from .receivers import ReceiverKinds

BINARY = {
    gast.Add: np.add, gast.Sub: np.subtract, gast.Mult: np.multiply, gast.Div: np.true_divide,
    gast.Pow: np.power, gast.MatMult: np.matmul, gast.FloorDiv: np.floor_divide, gast.Mod: np.mod,
}
UNARY = {gast.USub: np.negative, gast.UAdd: np.positive}


class ANF(CallSplitter):
    """One function's ANF conversion: ``block`` converts a list of statements (see the module docstring)."""

    def __init__(self, parsed: Parsed, namer: Namer, activity: Activity, locals_: set[str],
                 receivers: ReceiverKinds | None = None):
        super().__init__(parsed, locals_, receivers)
        self.namer = namer
        self.varied = set(activity.varied)
        self.activity = activity
        self.out: list[gast.stmt] = []
        self.line: gast.AST | None = None
        # Temporaries read exactly once, by the statement right after their
        # definitions: each gets one contribution per definition, so the
        # backward sweep computes it at once instead of deferring it.
        self.single_use: set[str] = set()
        self.closures: set[str] = set()  # names holding a local function made here (rules/closures.py)

    # -- plumbing ---------------------------------------------------------
    @contextlib.contextmanager
    def collecting(self):
        saved, self.out = self.out, []
        try:
            yield self.out
        finally:
            self.out = saved

    def emit(self, target: str, value: gast.expr, prim: Prim | None = None) -> None:
        stmt = gast.Assign(targets=[store(target)], value=value, type_comment=None)
        gast.copy_location(stmt, self.line)
        for child in gast.walk(value):
            if getattr(child, "lineno", None) is None and hasattr(child, "lineno"):
                gast.copy_location(child, self.line)
        if prim is not None:
            anno.set(stmt, anno.PRIM, prim)
            if any(self.is_varied(a) for a in prim.args):
                self.varied.add(target)
            if prim.rule is not None and prim.rule.func is local_function \
                    or prim.kind == "copy" and isinstance(prim.args[0], gast.Name) and prim.args[0].id in self.closures:
                self.closures.add(target)
        self.out.append(stmt)

    def is_varied(self, expr: gast.AST) -> bool:
        return bool(gradient_reads(expr, self.resolve_callee, self.inert_attribute) & self.varied)

    def where(self, node: gast.AST) -> str:
        return self.parsed.where(node if getattr(node, "lineno", None) else self.line)

    # -- statements -------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        with self.collecting() as out:
            for stmt in stmts:
                self.line = stmt
                self.stmt(stmt)
        return out

    def stmt(self, stmt: gast.stmt) -> None:
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
            self.set_item(stmt.targets[0], stmt.value)
        elif isinstance(stmt, gast.Assign):
            targets = target_names(stmt.targets[0])
            if not any(self.activity.active(t) for t in targets) or not self.is_varied(stmt.value):
                self.out.append(stmt)
            elif isinstance(stmt.targets[0], gast.Name):
                self.expr_into(stmt.value, stmt.targets[0].id)
            else:
                self.unpack(stmt.targets[0], stmt.value)
        elif isinstance(stmt, gast.If):
            stmt.body = self.block(stmt.body)
            stmt.orelse = self.block(stmt.orelse)
            self.line = stmt
            self.out.append(stmt)
        elif isinstance(stmt, gast.While):
            stmt.body = self.block(stmt.body)
            self.line = stmt
            self.out.append(stmt)
        elif isinstance(stmt, gast.For):
            self.loop(stmt)
        elif is_append(stmt) and self.activity.active(stmt.value.func.value.id):
            self.append(stmt)
        elif isinstance(stmt, gast.Return) and stmt.value is not None and self.is_varied(stmt.value):
            stmt.value = self.expr(stmt.value)
            self.out.append(stmt)
        else:
            self.out.append(stmt)

    def loop(self, loop: gast.For) -> None:
        target = loop.target.id
        is_range = isinstance(loop.iter, gast.Call) and isinstance(loop.iter.func, gast.Name) \
            and loop.iter.func.id == "range"
        if not is_range and self.activity.active(target) and self.is_varied(loop.iter):
            seq = self.expr(loop.iter)
            if isinstance(seq, gast.Name) and seq.id in stored_names(loop.body):
                # The body rebinds the name; the loop runs over the object it held first.
                first = self.namer.fresh(f"{seq.id}_seq")
                self.emit(first, seq, Prim("copy", [seq]))
                seq = name(first)
            if isinstance(seq, gast.Name):
                self.single_use.discard(seq.id)  # read in every iteration
            index = self.namer.fresh("i")
            loop.iter = call(builtin_name(self.parsed, "range"),
                             call(self.runtime["loop_length"], const(self.parsed.where(loop)), seq))
            gast.copy_location(loop.iter, loop)
            loop.target = store(index)
            body = self.block([gast.copy_location(gast.Assign(
                targets=[store(target)], value=gast.Subscript(value=seq, slice=name(index), ctx=gast.Load()),
                type_comment=None), loop)])
            loop.body = body + self.block(loop.body)
        else:
            loop.body = self.block(loop.body)
        self.line = loop
        self.out.append(loop)

    def set_item(self, target: gast.Subscript, value: gast.expr) -> None:
        """``x[i] = v`` stays a write in place, over atoms, annotated ``Prim("write", [x, i, v])``.

        Every write is annotated, differentiated array or not: the reverse pass
        tapes what it overwrites and restores it, since the backward sweep may
        read the array's earlier elements. A write into a list (the fence's
        ``WRITTEN_LISTS``) is marked ``into_list``: it replaces an item.
        """
        base = target.value.id
        atom = self.expr(value) if self.activity.active(base) else value
        forward_index, index_value = self.index(target.slice)
        write = gast.Assign(targets=[gast.Subscript(value=name(base), slice=forward_index, ctx=gast.Store())],
                            value=atom, type_comment=None)
        located([write], self.line)
        into_list = base in anno.get(self.parsed.node, anno.WRITTEN_LISTS, set())
        anno.set(write, anno.PRIM, Prim("write", [name(base), index_value, atom], into_list=into_list))
        self.out.append(write)

    def append(self, stmt: gast.Expr) -> None:
        """``xs.append(v)`` on a differentiated list becomes ``xs = [*xs, v]``.

        The adjoint runs it in place again and pops it back in the backward
        sweep (transforms/reverse_blocks.py, ``grown_in_place``); forward mode keeps
        the copy, which leaves every version of the list as it was.
        """
        items = stmt.value.func.value.id
        value = self.expr(stmt.value.args[0])
        grown = gast.List(elts=[gast.Starred(value=name(items), ctx=gast.Load()), value], ctx=gast.Load())
        fresh = self.namer.fresh(f"{items}_next")
        self.single_use.add(fresh)
        self.emit(fresh, grown, Prim("append", [name(items), value]))
        self.emit(items, name(fresh), Prim("copy", [name(fresh)]))

    def unpack(self, target: gast.AST, value: gast.expr) -> None:
        names = target_names(target)
        if not all(isinstance(e, gast.Name) for e in target.elts):
            raise UnsupportedSyntax("nested unpacking of differentiable values", self.where(target))
        if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == len(target.elts):
            atoms = []
            for elt in value.elts:
                atom = self.expr(elt)
                if isinstance(atom, gast.Name) and atom.id in names:
                    copy_name = self.namer.fresh(f"{atom.id}_old")
                    self.emit(copy_name, atom, Prim("copy", [atom]))
                    atom = name(copy_name)
                atoms.append(atom)
        else:
            whole = self.expr(value)
            self.single_use.discard(whole.id)  # read once per target
            atoms = [gast.Subscript(value=whole, slice=const(i), ctx=gast.Load()) for i in range(len(names))]
        for t, atom in zip(names, atoms):
            self.expr_into(atom, t)

    # -- expressions ------------------------------------------------------
    def expr(self, node: gast.expr) -> gast.expr:
        """Emit statements computing ``node``; return an atom holding its value."""
        if self.atomic(node):
            return node
        if isinstance(node, gast.IfExp) or not self.is_varied(node):
            tmp = self.namer.fresh(hint_for(node))
            self.expr_into(node, tmp)
        else:
            value, prim = self.primitive(node)
            tmp = self.namer.fresh(hint_for(node if anno.has(node, anno.HINT) else value))
            self.emit(tmp, value, prim)
        self.single_use.add(tmp)
        return name(tmp)

    def atomic(self, node: gast.expr) -> bool:
        if isinstance(node, (gast.Name, gast.Constant)):
            return True
        if isinstance(node, gast.UnaryOp) and isinstance(node.operand, gast.Constant):
            return True
        if isinstance(node, (gast.Tuple, gast.List)):
            return all(self.atomic(e) and not self.is_varied(e) for e in node.elts)
        if isinstance(node, gast.Dict):
            return False
        if isinstance(node, gast.Attribute):
            root = node
            while isinstance(root, gast.Attribute):
                root = root.value
            return isinstance(root, gast.Name) and root.id not in self.locals
        return False

    def expr_into(self, node: gast.expr, target: str) -> None:
        """Emit statements that leave the value of ``node`` in ``target``."""
        if isinstance(node, gast.Name) and node.id == target:
            # ``v = v`` does nothing; as a copy, its backward would reset dv after adding dv.
            self.out.append(gast.copy_location(gast.Pass(), self.line))
            return None
        if isinstance(node, gast.IfExp):
            return self.conditional(node, target)
        if self.atomic(node) or not self.is_varied(node):
            prim = Prim("copy", [node]) if isinstance(node, gast.Name) and self.is_varied(node) else None
            return self.emit(target, node, prim)
        value, prim = self.primitive(node)
        reads = {n.id for a in prim.args for n in gast.walk(a) if isinstance(n, gast.Name)}
        if target in reads:
            fresh = self.namer.fresh(f"{target}_next")
            self.single_use.add(fresh)
            self.emit(fresh, value, prim)
            self.emit(target, name(fresh), Prim("copy", [name(fresh)]))
        else:
            self.emit(target, value, prim)

    def conditional(self, node: gast.IfExp, target: str) -> None:
        with self.collecting() as body:
            self.expr_into(node.body, target)
        with self.collecting() as orelse:
            self.expr_into(node.orelse, target)
        self.out.append(gast.copy_location(gast.If(test=node.test, body=body, orelse=orelse), self.line))

    def primitive(self, node: gast.expr) -> tuple[gast.expr, Prim]:
        """Split a varied, non-atomic expression into (forward expression over atoms, Prim)."""
        if isinstance(node, gast.BinOp) and type(node.op) in BINARY:
            left, right = self.expr(node.left), self.expr(node.right)
            return gast.BinOp(left=left, op=node.op, right=right), self.rule(BINARY[type(node.op)], [left, right], node)
        if isinstance(node, gast.UnaryOp) and type(node.op) in UNARY:
            operand = self.expr(node.operand)
            return gast.UnaryOp(op=node.op, operand=operand), self.rule(UNARY[type(node.op)], [operand], node)
        if isinstance(node, gast.Subscript) and self.is_index_trick(node.value):
            return self.index_trick(node)
        if isinstance(node, gast.Subscript):
            base = self.expr(node.value)
            forward_index, index_value = self.index(node.slice)
            value = gast.Subscript(value=base, slice=forward_index, ctx=gast.Load())
            return value, self.rule(operator.getitem, [base, index_value], node)
        if isinstance(node, gast.Attribute):
            func = self.attribute_of(node)
            base = self.expr(node.value)
            value = gast.Attribute(value=base, attr=node.attr, ctx=gast.Load())
            if func is None:  # an attribute of a structure: self.w, params.b
                return value, self.rule(getattr, [base, const(node.attr)], node)
            return value, self.rule(func, [base], node)
        if isinstance(node, gast.Call):
            return self.call(node)
        if isinstance(node, (gast.Tuple, gast.List)):
            elts = [self.expr(e) for e in node.elts]
            keys = [const(i) for i in range(len(elts))]
            return type(node)(elts=elts, ctx=gast.Load()), Prim("pack", elts, keys=keys)
        if isinstance(node, gast.Dict):
            if any(k is None for k in node.keys):
                raise UnsupportedSyntax("dict unpacking (**d) of differentiable values", self.where(node))
            keys = [self.expr(k) for k in node.keys]
            values = [self.expr(v) for v in node.values]
            return gast.Dict(keys=keys, values=values), Prim("pack", values, keys=keys)
        raise UnsupportedSyntax(f"differentiating through {type(node).__name__}", self.where(node))

    def is_index_trick(self, base: gast.expr) -> bool:
        """``np.r_`` or ``np.c_`` (a dotted name rooted outside the function): a subscript that concatenates."""
        return self.global_chain(base) and isinstance(self.resolve_callee(base), INDEX_TRICKS)

    def index_trick(self, node: gast.Subscript) -> tuple[gast.expr, Prim]:
        """``np.r_[a, b]`` as ``index_concatenate(np.r_, (a, b))``, which does exactly ``np.r_[(a, b)]``
        but is a call with a rule, so the items get their gradients (in every mode, second order too)."""
        _, index_value = self.index(node.slice)
        items = self.expr(index_value)
        func = name(self.runtime["index_concatenate"])
        return (gast.Call(func=func, args=[node.value, items], keywords=[]),
                self.rule(index_concatenate, [node.value, items], node))

    def index(self, node: gast.expr) -> tuple[gast.expr, gast.expr]:
        """An index as (forward subscript syntax, the same index as a value for the vjp)."""
        if isinstance(node, gast.Slice):
            parts = [self.expr(p) if p is not None else None for p in (node.lower, node.upper, node.step)]
            forward = gast.Slice(lower=parts[0], upper=parts[1], step=parts[2])
            return forward, call("slice", *[p if p is not None else const(None) for p in parts])
        if isinstance(node, gast.Tuple):
            pairs = [self.index(e) for e in node.elts]
            return (gast.Tuple(elts=[p[0] for p in pairs], ctx=gast.Load()),
                    gast.Tuple(elts=[p[1] for p in pairs], ctx=gast.Load()))
        atom = self.expr(node)
        return atom, atom


def to_anf(parsed: Parsed, node: gast.FunctionDef, namer: Namer, activity: Activity,
           runtime: dict[str, str], receivers: ReceiverKinds | None = None) -> gast.FunctionDef:
    anf = ANF(parsed, namer, activity, local_names(node), receivers)
    anf.runtime = runtime
    node.body = anf.block(node.body)
    anno.set(node, anno.SINGLE_USE, anf.single_use)
    return node
