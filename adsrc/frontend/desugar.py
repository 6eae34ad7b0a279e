"""Desugar: rewrite the function into the small structured core the later passes handle.

Input: a fenced FunctionDef. Output: a FunctionDef in which

* functions defined inside it (``def`` or ``name = lambda``) are inlined
  at their calls (see inline.py);
* ``x op= e`` is ``x = x op e`` and ``x: T = e`` is ``x = e``;
* ``sum(e for x in xs if c)`` (or over a list comprehension) is an explicit
  accumulation loop placed before the statement that used it, and any other
  list comprehension or generator expression a loop that appends to a list;
  a comprehension in a branch of ``a if c else b``, or after the first
  operand of ``and``/``or``, runs only where Python would run it: that
  expression becomes an if statement assigning a fresh name, as does any
  ``and``/``or`` whose operands are not all evidently bools (its result may
  be a differentiable operand);
* ``for i, x in enumerate(xs)`` and ``for a, b in zip(as_, bs)`` are index
  loops, and tuple loop targets are unpacked in the body;
* every ``break``, ``continue`` and ``return`` is the last statement of its
  block, and nothing follows a statement that may jump: what followed is
  copied into each branch that falls through, so the reverse pass needs only
  branch records and iteration counts;
* a ``return`` inside a loop sets a result and a flag and breaks, and the
  function has either one ``return`` at its end or a ``result`` variable.
"""
from __future__ import annotations

import copy

import gast

from ..errors import UnsupportedSyntax
from .inline import inline_local_functions
from ..ir.build import assign, call, const, located, name, store
from ..ir.naming import Namer, Rename, rewrite_expressions, stored_names
from .parse import Parsed


class Simplify(gast.NodeTransformer):
    """``x op= e`` to ``x = x op e``; annotated assignment to plain assignment.

    Where ``x`` may share its array with another name, the two differ for an
    array (in place, the other name sees the change), so the rewrite is
    preceded by ``rebinding(x, 'file:line')``, which refuses an array at run time.
    """

    def __init__(self, shared: dict[str, bool] | None = None, guard: str | None = None,
                 parsed: Parsed | None = None):
        self.shared, self.guard, self.parsed = shared or {}, guard, parsed

    def visit_AugAssign(self, node: gast.AugAssign):
        target = node.target
        if isinstance(target, gast.Name) and target.id in self.shared and self.guard:
            check = gast.Expr(value=call(self.guard, name(target.id), const(self.parsed.where(node)),
                                         const(self.shared[target.id])))
            return located([check], node) + [self._rewrite(node)]
        return self._rewrite(node)

    def _rewrite(self, node: gast.AugAssign) -> gast.Assign:
        target = node.target
        if isinstance(target, gast.Subscript):
            current = gast.Subscript(value=copy.deepcopy(target.value), slice=copy.deepcopy(target.slice),
                                     ctx=gast.Load())
            located([current], node)
        else:
            current = name(target.id)
        value = gast.BinOp(left=current, op=node.op, right=node.value)
        gast.copy_location(value, node)
        return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None), node)

    def visit_AnnAssign(self, node: gast.AnnAssign) -> gast.Assign:
        return gast.copy_location(gast.Assign(targets=[node.target], value=node.value, type_comment=None), node)


def _as_list(result) -> list[gast.stmt]:
    return result if isinstance(result, list) else [result]


def _names_in(nodes) -> set[str]:
    return {n.id for node in nodes for n in gast.walk(node) if isinstance(n, gast.Name)}



class _ComprehensionHoister(gast.NodeTransformer):
    """Replaces comprehensions in one statement by fresh names, collecting their loops.

    ``sum(e for x in xs)`` becomes a running total; any other list
    comprehension or generator expression becomes a list built by
    ``.append`` (a generator is consumed at once: adsrc has no lazy sequences).
    """

    def __init__(self, desugar: "Desugar"):
        self.desugar = desugar
        self.before: list[gast.stmt] = []

    def loops(self, comp, body: list[gast.stmt]) -> list[gast.stmt]:
        for gen in reversed(comp.generators):
            if gen.ifs:
                test = gen.ifs[0] if len(gen.ifs) == 1 else gast.BoolOp(op=gast.And(), values=gen.ifs)
                body = [gast.If(test=test, body=body, orelse=[])]
            body = [gast.For(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None)]
        return body

    def hint(self, comp, prefix: str, fallback: str) -> str:
        first = comp.generators[0].target
        return f"{prefix}{first.id}" if isinstance(first, gast.Name) else fallback

    def visit_Call(self, node: gast.Call):
        func = node.func
        if not (isinstance(func, gast.Name) and func.id == "sum" and node.args
                and isinstance(node.args[0], (gast.GeneratorExp, gast.ListComp))):
            return self.generic_visit(node)
        comp = node.args[0]
        start = self.visit(node.args[1]) if len(node.args) > 1 else const(0)
        self.desugar.isolate_targets(comp)
        total = self.desugar.namer.fresh(self.hint(comp, "sum_", "total"))
        body = [assign(total, gast.BinOp(left=name(total), op=gast.Add(), right=comp.elt), node)]
        self.before.extend(located([assign(total, start, node)] + self.loops(comp, body), node))
        return name(total)

    def visit_ListComp(self, node):
        self.desugar.isolate_targets(node)
        items = self.desugar.namer.fresh(self.hint(node, "list_of_", "items"))
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(items), attr="append", ctx=gast.Load()),
            args=[node.elt], keywords=[]))
        empty = assign(items, gast.List(elts=[], ctx=gast.Load()), node)
        self.before.extend(located([empty] + self.loops(node, [append]), node))
        return name(items)

    visit_GeneratorExp = visit_ListComp

    def visit_IfExp(self, node: gast.IfExp):
        """``a if c else b`` with a comprehension in a branch: an if statement, so the
        comprehension runs only when its branch is taken."""
        if not (_has_comprehension(node.body) or _has_comprehension(node.orelse)):
            return self.generic_visit(node)
        test = self.visit(node.test)
        choice = self.desugar.namer.fresh("choice")
        branch = gast.If(test=test, body=[assign(choice, node.body, node)],
                         orelse=[assign(choice, node.orelse, node)])
        self.before.extend(located([branch], node))
        return name(choice)

    def visit_BoolOp(self, node: gast.BoolOp):
        """``a and b`` / ``a or b`` that may yield a number, or with a comprehension after
        the first operand: nested if statements assigning a fresh name, so that each
        operand runs only when Python would evaluate it and a gradient can flow
        through the operand that is the result."""
        if all(_is_truth_value(v) for v in node.values) \
                and not any(_has_comprehension(v) for v in node.values[1:]):
            return self.generic_visit(node)
        result = self.desugar.namer.fresh("either" if isinstance(node.op, gast.Or) else "both")

        def chain(values: list[gast.expr]) -> list[gast.stmt]:
            first = assign(result, values[0], node)
            if len(values) == 1:
                return [first]
            test = name(result) if isinstance(node.op, gast.And) else \
                gast.UnaryOp(op=gast.Not(), operand=name(result))
            return [first, gast.If(test=test, body=chain(values[1:]), orelse=[])]

        self.before.extend(located(chain([self.visit(node.values[0])] + node.values[1:]), node))
        return name(result)


def _is_truth_value(node: gast.AST) -> bool:
    """True for an operand that is evidently a bool (a comparison, a not, True/False)."""
    if isinstance(node, gast.BoolOp):
        return all(_is_truth_value(v) for v in node.values)
    return isinstance(node, gast.Compare) or (isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not)) \
        or (isinstance(node, gast.Constant) and isinstance(node.value, bool))


def _has_comprehension(node: gast.AST) -> bool:
    return any(isinstance(n, (gast.GeneratorExp, gast.ListComp)) for n in gast.walk(node))


class Desugar:
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.result: str | None = None
        self.flag: str | None = None

    # -- comprehensions --------------------------------------------------
    def isolate_targets(self, comp: gast.AST) -> None:
        """Rename comprehension variables that would clash once hoisted into the function."""
        inside = set()
        for gen in comp.generators:
            inside |= _names_in([gen.target])
        outside = self._all_names - _names_in([comp]) | (self._hoisted & inside)
        clashes = {n: self.namer.fresh(n) for n in inside if n in outside}
        if clashes:
            Rename(clashes).visit(comp)
        self._hoisted |= _names_in(g.target for g in comp.generators)

    def hoist_sums(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.While):
                if any(isinstance(n, (gast.GeneratorExp, gast.ListComp)) for n in gast.walk(stmt.test)):
                    raise UnsupportedSyntax("sum over a comprehension in a while condition",
                                            self.parsed.where(stmt.test))
            hoister = _ComprehensionHoister(self)
            rewrite_expressions(stmt, hoister)
            for field in ("body", "orelse"):
                if hasattr(stmt, field):
                    setattr(stmt, field, self.hoist_sums(getattr(stmt, field)))
            out.extend(self.hoist_sums(hoister.before))
            out.append(stmt)
        return out

    # -- loops -----------------------------------------------------------
    def lower_loops(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if hasattr(stmt, field):
                    setattr(stmt, field, self.lower_loops(getattr(stmt, field)))
            if isinstance(stmt, gast.For):
                out.extend(self._lower_for(stmt))
            else:
                out.append(stmt)
        return out

    def _sequence(self, expr: gast.expr, hint: str, before: list, loop: gast.For) -> gast.expr:
        """The sequence a loop indexes: a name, bound to a fresh one if the body rebinds it
        (Python iterates over the object the name held when the loop began)."""
        if isinstance(expr, gast.Name) and expr.id not in stored_names(loop.body):
            return expr
        seq = self.namer.fresh(hint)
        before.append(assign(seq, expr, expr))
        return name(seq)

    def _lower_for(self, loop: gast.For) -> list[gast.stmt]:
        it, target, before = loop.iter, loop.target, []
        func = it.func.id if isinstance(it, gast.Call) and isinstance(it.func, gast.Name) else None
        if func == "enumerate" and len(it.args) == 1 and not it.keywords and isinstance(target, gast.Tuple) \
                and len(target.elts) == 2 and isinstance(target.elts[0], gast.Name):
            seq = self._sequence(it.args[0], "seq", before, loop)
            index = target.elts[0].id
            loop.iter = call("range", call("len", seq))
            loop.target = store(index)
            loop.body = located([gast.Assign(targets=[target.elts[1]], value=gast.Subscript(
                value=copy.deepcopy(seq), slice=name(index), ctx=gast.Load()), type_comment=None)], loop) + loop.body
        elif func == "zip" and it.args and not it.keywords and isinstance(target, gast.Tuple) \
                and len(target.elts) == len(it.args):
            seqs = [self._sequence(a, "seq", before, loop) for a in it.args]
            index = self.namer.fresh("i")
            lengths = [call("len", copy.deepcopy(s)) for s in seqs]
            loop.iter = call("range", lengths[0] if len(lengths) == 1 else call("min", *lengths))
            loop.target = store(index)
            loop.body = located([gast.Assign(targets=[t], value=gast.Subscript(
                value=copy.deepcopy(s), slice=name(index), ctx=gast.Load()), type_comment=None)
                for t, s in zip(target.elts, seqs)], loop) + loop.body
        elif not isinstance(target, gast.Name):
            item = self.namer.fresh("item")
            loop.target = store(item)
            loop.body = located([gast.Assign(targets=[target], value=name(item), type_comment=None)], loop) + loop.body
        return located(before, loop) + [loop]

    # -- returns and jumps ----------------------------------------------
    def convert_returns(self, stmts: list[gast.stmt], depth: int) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.Return) and depth > 0:
                value = stmt.value if stmt.value is not None else const(None)
                out += located([assign(self._result(), value), assign(self._flag(), const(True)),
                                gast.Break()], stmt)
                continue
            if isinstance(stmt, (gast.For, gast.While)):
                has_return = any(isinstance(n, gast.Return) for n in gast.walk(stmt))
                stmt.body = self.convert_returns(stmt.body, depth + 1)
                out.append(stmt)
                if has_return:
                    jump = gast.Break() if depth > 0 else gast.Return(value=name(self._result()))
                    out.append(gast.copy_location(gast.If(test=name(self._flag()), body=located([jump], stmt), orelse=[]), stmt))
                continue
            if isinstance(stmt, gast.If):
                stmt.body = self.convert_returns(stmt.body, depth)
                stmt.orelse = self.convert_returns(stmt.orelse, depth)
            out.append(stmt)
        return out

    def _result(self) -> str:
        if self.result is None:
            self.result = self.namer.fresh("result")
        return self.result

    def _flag(self) -> str:
        if self.flag is None:
            self.flag = self.namer.fresh("returned")
        return self.flag

    def normalize_jumps(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.If):
                stmt.body = self.normalize_jumps(stmt.body)
                stmt.orelse = self.normalize_jumps(stmt.orelse)
            elif isinstance(stmt, (gast.For, gast.While)):
                stmt.body = self.normalize_jumps(stmt.body)
            out.append(stmt)
            if _is_jump(stmt):
                return out
            if isinstance(stmt, gast.If) and _may_jump(stmt):
                rest = self.normalize_jumps(stmts[i + 1:])
                if rest:
                    _append_rest(stmt, rest)
                return out
        return out

    def single_exit(self, body: list[gast.stmt]) -> list[gast.stmt]:
        returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
        if len(returns) == 1 and body and body[-1] is returns[0] and self.result is None:
            return body
        result = self._result()
        body = [_ReturnToResult(result).visit(s) for s in body]
        end = gast.Return(value=name(result))
        return body + located([end], body[-1] if body else self.parsed.node)

    def shared_names(self) -> dict[str, bool]:
        if getattr(self, "_shared", None) is None:
            from .fence import SyntaxFence

            self._shared = SyntaxFence(self.parsed).shared_names()
        return self._shared

    def prepare(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """Simplify assignments, drop docstrings and hoist comprehensions in one body."""
        simplify = Simplify(self.shared_names(), self.runtime.get("rebinding"), self.parsed)
        body = [out for s in body for out in _as_list(simplify.visit(s))]
        body = [s for s in body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
        return self.hoist_sums(body)

    def run(self, node: gast.FunctionDef) -> gast.FunctionDef:
        self._all_names = _names_in(node.body) | _names_in([node.args])
        self._hoisted: set[str] = set()
        body = self.prepare(node.body)
        body = inline_local_functions(self.parsed, self.namer, body, self.prepare)
        body = self.lower_loops(body)
        body = self.convert_returns(body, 0)
        body = self.normalize_jumps(body)
        body = self.single_exit(body)
        if self.flag is not None:
            body = located([assign(self.flag, const(False))], body[0]) + body
        node.body = body
        return node


class _ReturnToResult(gast.NodeTransformer):
    """``return e`` becomes ``result = e``; the function then ends in ``return result``."""

    def __init__(self, result: str):
        self.result = result

    def visit_Return(self, node: gast.Return) -> gast.stmt:
        value = node.value if node.value is not None else const(None)
        if isinstance(value, gast.Name) and value.id == self.result:
            return gast.copy_location(gast.Pass(), node)
        return assign(self.result, value, node)


def _is_jump(stmt: gast.stmt) -> bool:
    return isinstance(stmt, (gast.Break, gast.Continue, gast.Return))


def _may_jump(stmt: gast.stmt) -> bool:
    """True if control may leave ``stmt`` by break, continue or return."""
    if _is_jump(stmt):
        return True
    if isinstance(stmt, gast.If):
        return any(_may_jump(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, (gast.For, gast.While)):
        return any(isinstance(n, gast.Return) for n in gast.walk(stmt))
    return False


def _append_rest(node: gast.If, rest: list[gast.stmt]) -> None:
    for block in (node.body, node.orelse):
        if block and _is_jump(block[-1]):
            continue
        if block and isinstance(block[-1], gast.If) and _may_jump(block[-1]):
            _append_rest(block[-1], rest)
            continue
        block.extend(copy.deepcopy(rest))


def desugar(parsed: Parsed, namer: Namer, runtime: dict[str, str] | None = None) -> gast.FunctionDef:
    desugarer = Desugar(parsed, namer)
    desugarer.runtime = runtime or {}
    return desugarer.run(parsed.node)
