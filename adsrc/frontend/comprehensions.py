"""Comprehensions: hoisted out of the statements that use them, as loops adsrc differentiates.

A mixin of :class:`~adsrc.frontend.desugar.Desugar` (which gives it the
parsed function, the namer, the builtins' names, the set of lists
comprehensions became, and the names of the function, ``_all_names``).
Input: the statements of a body (after Simplify). Output: the same
statements, each preceded by the loops its comprehensions became:

* ``sum(e for x in xs if c)`` (or over a list comprehension) is an explicit
  accumulation loop into a fresh name; any other list comprehension or
  generator expression a loop that appends to a fresh list (a generator is
  consumed at once: adsrc has no lazy sequences); a dict comprehension a loop
  that appends ``(key, value)`` pairs, then ``dict(pairs)``;
* ``list(zip(...))``, ``tuple(enumerate(...))``, ``list(reversed(...))`` and
  ``dict(zip(...))`` are first the comprehensions that build the same
  container;
* a comprehension in a branch of ``a if c else b``, or after the first
  operand of ``and``/``or``, runs only where Python would run it: that
  expression becomes an if statement assigning a fresh name, as does any
  ``and``/``or`` whose operands are not all evidently bools (its result may be
  a differentiable operand);
* ``functools.reduce(f, xs, initial)`` over Python code is the loop it
  runs (folds.py);
* comprehension variables that would clash once hoisted into the function
  are renamed. A comprehension in a while condition is refused
  (UnsupportedSyntax).
"""
from __future__ import annotations

import gast

from ..errors import UnsupportedSyntax
from ..ir.build import assign, call, const, located, name, store
from ..ir.naming import Rename, rewrite_expressions
from .folds import is_fold, lower_fold
from .loops import _names_in

_COMPREHENSIONS = (gast.GeneratorExp, gast.ListComp, gast.DictComp)


class _ComprehensionHoister(gast.NodeTransformer):
    """Replaces comprehensions in one statement by fresh names, collecting their loops.

    ``sum(e for x in xs)`` becomes a running total; any other list
    comprehension or generator expression becomes a list built by
    ``.append`` (a generator is consumed at once: adsrc has no lazy sequences).
    """

    def __init__(self, desugar: "ComprehensionHoisting"):
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
        spelled = self.spelled_out(node)
        if spelled is not None:
            return self.visit(spelled)
        if is_fold(self.desugar.parsed, node, self.desugar._local_functions, self.desugar._bound):
            node.args[1:] = [self.visit(a) for a in node.args[1:]]
            return lower_fold(node, self.desugar.namer.fresh, self.before)
        if not (isinstance(func, gast.Name) and func.id == "sum" and node.args
                and isinstance(node.args[0], (gast.GeneratorExp, gast.ListComp))
                and self.desugar.is_builtin("sum")):
            return self.generic_visit(node)
        comp = node.args[0]
        start = self.visit(node.args[1]) if len(node.args) > 1 else const(0)
        self.desugar.isolate_targets(comp)
        total = self.desugar.namer.fresh(self.hint(comp, "sum_", "total"))
        body = [assign(total, gast.BinOp(left=name(total), op=gast.Add(), right=comp.elt), node)]
        self.before.extend(located([assign(total, start, node)] + self.loops(comp, body), node))
        return name(total)

    def spelled_out(self, node: gast.Call) -> gast.expr | None:
        """``list(zip(xs, ys))``, ``tuple(enumerate(xs))``, ``list(reversed(xs))``, ``dict(zip(ks, vs))``
        as the comprehension that builds the same container (``[(a, b) for a, b in zip(xs, ys)]``),
        which adsrc differentiates; None for any other call."""
        outer = self.desugar._builtin_call(node)
        if outer not in ("list", "tuple", "dict") or len(node.args) != 1 or node.keywords:
            return None
        inner = node.args[0]
        kind = self.desugar._builtin_call(inner)
        zipped = self.desugar.zip_of_starred(inner)
        if zipped is not None:  # list(zip(*xs)): the list of tuples; tuple(...) and dict(...) of that list
            return zipped if outer == "list" else gast.copy_location(
                gast.Call(func=node.func, args=[zipped], keywords=[]), node)
        if kind == "zip" and inner.args and not inner.keywords:
            items = [self.desugar.namer.fresh("item") for _ in inner.args]
        elif kind == "enumerate" and 1 <= len(inner.args) <= 2 and not inner.keywords:
            items = [self.desugar.namer.fresh("count"), self.desugar.namer.fresh("item")]
        elif kind == "reversed" and len(inner.args) == 1 and not inner.keywords and outer != "dict":
            items = [self.desugar.namer.fresh("item")]
        else:
            return None
        target = store(items[0]) if len(items) == 1 else gast.Tuple(elts=[store(i) for i in items], ctx=gast.Store())
        loop = [gast.comprehension(target=target, iter=inner, ifs=[], is_async=0)]
        if outer == "dict":
            if len(items) != 2:
                return None
            return located([gast.DictComp(key=name(items[0]), value=name(items[1]), generators=loop)], node)[0]
        elt = name(items[0]) if len(items) == 1 else gast.Tuple(elts=[name(i) for i in items], ctx=gast.Load())
        comp = located([gast.ListComp(elt=elt, generators=loop)], node)[0]
        return comp if outer == "list" else gast.copy_location(
            gast.Call(func=node.func, args=[comp], keywords=[]), node)

    def visit_Lambda(self, node: gast.Lambda) -> gast.Lambda:
        """Only the defaults run where the lambda is defined; its body is desugared where it is inlined."""
        node.args.defaults = [self.visit(d) for d in node.args.defaults]
        return node

    def visit_ListComp(self, node):
        self.desugar.isolate_targets(node)
        items = self.desugar.namer.fresh(self.hint(node, "list_of_", "items"))
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(items), attr="append", ctx=gast.Load()),
            args=[node.elt], keywords=[]))
        empty = assign(items, gast.List(elts=[], ctx=gast.Load()), node)
        self.before.extend(located([empty] + self.loops(node, [append]), node))
        self.desugar.lists.add(items)
        return name(items)

    visit_GeneratorExp = visit_ListComp

    def visit_DictComp(self, node):
        """``{k: v for ...}``: a list of ``(k, v)`` pairs built by a loop, then ``dict(pairs)``, which
        keeps each key's first position and last value, as the comprehension does."""
        self.desugar.isolate_targets(node)
        pairs = self.desugar.namer.fresh(self.hint(node, "pairs_of_", "pairs"))
        pair = gast.Tuple(elts=[node.key, node.value], ctx=gast.Load())
        append = gast.Expr(value=gast.Call(
            func=gast.Attribute(value=name(pairs), attr="append", ctx=gast.Load()), args=[pair], keywords=[]))
        empty = assign(pairs, gast.List(elts=[], ctx=gast.Load()), node)
        self.before.extend(located([empty] + self.loops(node, [append]), node))
        self.desugar.lists.add(pairs)
        return call(self.desugar.builtin("dict"), name(pairs))

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
    """True if ``node`` holds a comprehension, or a call that may be a ``reduce`` hoisted as a loop (folds.py)."""
    return any(isinstance(n, _COMPREHENSIONS) or isinstance(n, gast.Call) and (
        getattr(n.func, "id", None) == "reduce" or getattr(n.func, "attr", None) == "reduce")
        for n in gast.walk(node))


class ComprehensionHoisting:
    """Hoists the comprehensions of a body into loops before the statements that use them."""

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
                if any(isinstance(n, _COMPREHENSIONS) for n in gast.walk(stmt.test)):
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
