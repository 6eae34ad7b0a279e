"""Desugar: rewrite the function into the small structured core the later passes handle.

Input: a fenced FunctionDef. Output: a FunctionDef in which

* functions defined inside it (``def`` or ``name = lambda``) are inlined
  at their calls (see inline.py);
* ``x op= e`` is ``x = x op e`` and ``x: T = e`` is ``x = e``;
* ``with np.errstate(...)`` and ``with warnings.catch_warnings()`` bodies
  sit between markers that codegen makes a with statement again (see
  ir/contexts.py);
* ``sum(e for x in xs if c)`` (or over a list comprehension) is an explicit
  accumulation loop placed before the statement that used it, and any other
  list comprehension or generator expression a loop that appends to a list;
  a dict comprehension a loop that appends ``(key, value)`` pairs, then
  ``dict(pairs)``; ``list(zip(...))``, ``tuple(enumerate(...))``,
  ``list(reversed(...))`` and ``dict(zip(...))`` are the comprehensions that
  build the same container;
  a comprehension in a branch of ``a if c else b``, or after the first
  operand of ``and``/``or``, runs only where Python would run it: that
  expression becomes an if statement assigning a fresh name, as does any
  ``and``/``or`` whose operands are not all evidently bools (its result may
  be a differentiable operand);
* loops over enumerate, zip, reversed, dicts and their views are lowered as
  loops.py says, and every assignment is single and flat (assignments.py);
  ``a, b = e`` reads what Python's unpacking iterates;
* the builtins generated code calls (``range``, ``len``, ``min``, ``list``,
  ``dict``) are called under names the function does not
  bind: their own name where the function never rebinds it, else a fresh
  name bound by ``from builtins import ...`` at the top of the body (see
  :func:`builtin_name`); ``zip``, ``enumerate``, ``reversed`` and ``sum`` are
  lowered only where the name is the builtin;
* every ``break``, ``continue`` and ``return`` is the last statement of its
  block, and nothing follows a statement that may jump: what followed is
  copied into each branch that falls through, so the reverse pass needs only
  branch records and iteration counts;
* a ``return`` inside a loop sets a result and a flag and breaks, and the
  function has either one ``return`` at its end or a ``result`` variable;
  a function that may end without a return returns None.
"""
from __future__ import annotations

import builtins
import copy

import gast

from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..rules.spellings import ufunc_at
from ..ir.build import assign, call, const, located, name, store
from ..ir.contexts import lower_with
from ..ir.dataflow import names as name_nodes
from ..ir.naming import Namer, Rename, rewrite_expressions, stored_names
from .aliasing import Aliasing, local_names
from .assignments import flatten_assignments
from .closures import Closures
from .inline import inline_local_functions
from .loops import LoopLowering, _names_in
from .mutations import ufunc_at_call
from .parse import _MISSING, Parsed

# Builtins that generated code may call: the index loops of zip (here) and of ANF,
# and the backward sweep's replay of loops.
GENERATED_BUILTINS = ("range", "len", "min", "list", "dict")
_COMPREHENSIONS = (gast.GeneratorExp, gast.ListComp, gast.DictComp)


class Simplify(gast.NodeTransformer):
    """``x op= e`` to ``x = x op e``; annotated assignment to plain assignment.

    Where ``x`` may share its array with another name, the two differ for an
    array (in place, the other name sees the change), so the rewrite is
    preceded by ``rebinding(x, 'file:line')``, which refuses an array at run time.
    So is ``xs[i] op= e`` on a list the function writes (``lists``): Python
    changes an array item in place, which another name or item may share.
    """

    def __init__(self, shared: dict[str, bool] | None = None, guard: str | None = None,
                 parsed: Parsed | None = None, lists: set[str] = frozenset()):
        self.shared, self.guard, self.parsed, self.lists = shared or {}, guard, parsed, lists

    def visit_AugAssign(self, node: gast.AugAssign):
        target = node.target
        if isinstance(target, gast.Name) and target.id in self.shared and self.guard:
            check = gast.Expr(value=call(self.guard, name(target.id), const(self.parsed.where(node)),
                                         const(self.shared[target.id])))
            return located([check], node) + [self._rewrite(node)]
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in self.lists and self.guard:
            item = gast.Subscript(value=name(target.value.id), slice=copy.deepcopy(target.slice), ctx=gast.Load())
            check = gast.Expr(value=call(self.guard, item, const(self.parsed.where(node)), const(True)))
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
        spelled = self.spelled_out(node)
        if spelled is not None:
            return self.visit(spelled)
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
    return any(isinstance(n, _COMPREHENSIONS) for n in gast.walk(node))


class Desugar(LoopLowering):
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.result: str | None = None
        self.flag: str | None = None
        self.lists: set[str] = set()  # names of the lists comprehensions became (sequences)
        self.aliases: dict[str, str] = {}  # builtin -> the fresh name generated code calls it by
        self.bound_builtins: set[str] = set()  # the aliases the generated code needs bound

    # -- builtins ----------------------------------------------------------
    def find_bindings(self, node: gast.FunctionDef) -> None:
        """Which names the function binds itself, and which it reads from outside."""
        mentioned = name_nodes(node)
        self._mentioned = {n.id for n in mentioned}
        self._bound = {n.id for n in mentioned if not isinstance(n.ctx, gast.Load)}
        self._bound |= {a.id for a in node.args.args + node.args.kwonlyargs}
        self._bound |= {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n is not node}
        # Names that hold a dict somewhere: zip over them is refused before anything runs.
        self._dicts = {t.id for n in gast.walk(node) if isinstance(n, gast.Assign) and _makes_dict(n.value, self)
                       for t in n.targets if isinstance(t, gast.Name)}

    def is_builtin(self, builtin: str) -> bool:
        """True if ``builtin`` means the builtin of that name everywhere in the function."""
        if builtin in self._bound:
            return False
        real = getattr(builtins, builtin, _MISSING)
        obj = self.parsed.resolve(builtin)
        return real is not _MISSING and (obj is _MISSING or obj is real)

    def builtin(self, builtin: str) -> str:
        """The name generated code calls ``builtin`` by: its own, unless the function binds
        that name (a parameter, a local, a global or closure value of that name)."""
        if builtin in self.aliases:
            self.bound_builtins.add(builtin)
            return self.aliases[builtin]
        return builtin

    def reserve_builtins(self) -> None:
        """Give each builtin generated code may call a name the function does not bind.

        A builtin the function never rebinds keeps its name, which no temporary
        may then take. Any other gets a fresh name, entered in the function's
        outside values (so that resolvers know it for the builtin, a
        non-differentiable function) and bound by ``from builtins import``.
        """
        for builtin in GENERATED_BUILTINS:
            if builtin not in self._mentioned or self.is_builtin(builtin):
                self.namer.taken.add(builtin)
            else:
                alias = self.namer.fresh(builtin)
                self.aliases[builtin] = alias
                self.parsed.closure[alias] = getattr(builtins, builtin)

    def bind_builtins(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """``from builtins import range as range_1, ...`` first, for the aliases generated code calls.

        The later passes lower loops (ANF) and replay them (the reverse pass)
        with ``range`` and ``len``: wherever the function has a loop, those two
        are bound too."""
        if any(isinstance(n, (gast.For, gast.While)) for s in body for n in gast.walk(s)):
            for builtin in ("range", "len"):
                self.builtin(builtin)
        names = [gast.alias(name=b, asname=self.aliases[b]) for b in GENERATED_BUILTINS if b in self.bound_builtins]
        if not names:
            return body
        binding = gast.ImportFrom(module="builtins", names=names, level=0)
        return located([binding], body[0] if body else self.parsed.node) + body

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
        """One ``return`` at the end; a function that may end without one returns None, as in Python."""
        returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
        if len(returns) == 1 and body and body[-1] is returns[0] and self.result is None:
            if returns[0].value is None:
                returns[0].value = located([const(None)], returns[0])[0]
            return body
        if not returns:
            return body + located([gast.Return(value=const(None))], body[-1] if body else self.parsed.node)
        result = self._result()
        start = located([assign(result, const(None))], body[0]) if _falls_through(body) else []
        body = [_ReturnToResult(result).visit(s) for s in body]
        end = gast.Return(value=name(result))
        return start + body + located([end], body[-1] if body else self.parsed.node)

    def shared_names(self) -> dict[str, bool]:
        if getattr(self, "_shared", None) is None:
            self._shared = Aliasing(self.parsed).shared_names()
        return self._shared

    def prepare(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """Simplify assignments, drop docstrings and hoist comprehensions in one body."""
        body = lower_with(body, self.namer.fresh)
        simplify = Simplify(self.shared_names(), self.runtime.get("rebinding"), self.parsed,
                            anno.get(self.parsed.node, anno.WRITTEN_LISTS, set()))
        body = [out for s in body for out in _as_list(simplify.visit(s))]
        body = [s for s in body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
        return self.hoist_sums(body)

    def rename_shadowing_locals(self, node: gast.FunctionDef) -> None:
        """A local variable named like a builtin generated code calls (``len = ...``) gets a
        fresh name: it is local throughout the function, so nothing else changes, and the
        generated code can call the builtin by its own name."""
        params = {a.id for a in node.args.args + node.args.kwonlyargs}
        local = stored_names(node.body) | {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef)
                                           and n is not node}
        mapping = {b: self.namer.fresh(b) for b in GENERATED_BUILTINS if b in local and b not in params}
        self.renamed = mapping
        if not mapping:
            return
        for stmt in node.body:
            Rename(mapping).visit(stmt)
            for child in gast.walk(stmt):
                if isinstance(child, gast.FunctionDef) and child.name in mapping:
                    child.name = mapping[child.name]

    def ufunc_at_writes(self, stmts: list[gast.stmt], locals_: set[str] | None = None) -> list[gast.stmt]:
        """``np.add.at(y, i, v)`` (or np.subtract.at), which the fence let through into an array made here,
        becomes the write ``y[...] = ufunc_at(np.add, y, i, v)``: the same elements written in place, through
        a function with a rule (rules/spellings.py), so that the rules of writes apply."""
        helper = self.runtime.get("ufunc_at")
        locals_ = local_names(self.parsed) if locals_ is None else locals_
        out = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    setattr(stmt, field, self.ufunc_at_writes(getattr(stmt, field), locals_))
            if helper is not None and ufunc_at_call(stmt, self.parsed, locals_) is not None:
                target, index, value = stmt.value.args
                write = gast.Subscript(value=name(target.id), slice=const(Ellipsis), ctx=gast.Store())
                stmt = assign(write, call(helper, stmt.value.func.value, target, index, value), like=stmt)
                self.parsed.closure[helper] = ufunc_at
            out.append(stmt)
        return out

    def run(self, node: gast.FunctionDef) -> gast.FunctionDef:
        self.rename_shadowing_locals(node)
        self._all_names = _names_in(node.body) | _names_in([node.args])
        self._hoisted: set[str] = set()
        self.find_bindings(node)
        self.reserve_builtins()
        body = self.prepare(node.body)
        body = inline_local_functions(self.parsed, self.namer, body, self.prepare,
                                      Closures(self.parsed, self.namer, self.runtime, self.renamed))
        body = self.lower_loops(body)
        body = flatten_assignments(body, self.namer, self.parsed)
        self.check_unpacking(body)
        body = self.ufunc_at_writes(body)
        body = self.convert_returns(body, 0)
        body = self.normalize_jumps(body)
        body = self.single_exit(body)
        if self.flag is not None:
            body = located([assign(self.flag, const(False))], body[0]) + body
        node.body = self.bind_builtins(body)
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


def _falls_through(block: list[gast.stmt]) -> bool:
    """True if control may reach the end of ``block`` (its last statement is no return or raise)."""
    if not block:
        return True
    last = block[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return False
    if isinstance(last, gast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    return True


def _makes_dict(value: gast.expr, desugar: "Desugar") -> bool:
    """True for a dict display or comprehension, or a call of the builtin dict."""
    if isinstance(value, (gast.Dict, gast.DictComp)):
        return True
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "dict" \
        and desugar.is_builtin("dict")


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


def builtin_name(parsed: Parsed, builtin: str) -> str:
    """The name under which code generated for ``parsed`` calls ``builtin`` (``range``, ``len``, ...).

    Its own name, unless the function binds that name: then the alias the
    ``from builtins import ...`` statement that desugar put first in the body
    binds (see :data:`GENERATED_BUILTINS`). For the later passes that emit
    such calls (ANF's index loops, the reverse pass's replay of loops).
    """
    for stmt in parsed.node.body:
        if isinstance(stmt, gast.ImportFrom) and stmt.module == "builtins":
            for alias in stmt.names:
                if alias.name == builtin:
                    return alias.asname or alias.name
    return builtin


def desugar(parsed: Parsed, namer: Namer, runtime: dict[str, str] | None = None) -> gast.FunctionDef:
    desugarer = Desugar(parsed, namer)
    desugarer.runtime = runtime or {}
    return desugarer.run(parsed.node)
