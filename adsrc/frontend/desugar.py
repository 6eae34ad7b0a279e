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
* ``for i, x in enumerate(xs)`` is a plain loop ``for x in xs`` with a
  counter beside it, so it iterates as Python does (a dict gives its keys);
  ``for a, b in zip(as_, bs)`` is an index loop, which only a sequence
  (list, tuple, range, str, NumPy array) runs as Python would: a zip over
  something else (a dict, a dict view, a set, a generator) is refused, at
  compile time where the argument is evidently not a sequence, else by a
  check before the loop that raises UnsupportedSyntax naming the line;
* a loop whose iterable is a name the loop itself rebinds (``for x in x``)
  runs over the object the name held when the loop began; tuple loop
  targets are unpacked in the body;
* the builtins generated code calls (``range``, ``len``, ``min`` and the
  ones the zip check needs) are called under names the function does not
  bind: their own name where the function never rebinds it, else a fresh
  name bound by ``from builtins import ...`` at the top of the body (see
  :func:`builtin_name`); ``zip``, ``enumerate`` and ``sum`` are lowered only
  where the name is the builtin;
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
from ..rules.iterables import unpacked
from .assignments import flatten_assignments
from .inline import inline_local_functions
from ..ir.contexts import lower_with
from ..ir.build import assign, call, const, located, name, store
from ..ir.naming import Namer, Rename, rewrite_expressions, stored_names
from .aliasing import Aliasing
from .parse import _MISSING, Parsed

# Builtins that generated code may call: the index loops of zip (here) and of ANF,
# and the backward sweep's replay of loops.
GENERATED_BUILTINS = ("range", "len", "min", "list", "dict")
# Methods whose result is a dict view: never indexed by position.
_DICT_VIEWS = ("keys", "values", "items")
_COMPREHENSIONS = (gast.GeneratorExp, gast.ListComp, gast.DictComp)


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


class Desugar:
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
        self._mentioned = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
        self._bound = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
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
        """The sequence a loop indexes: a name, bound to a fresh one if the loop rebinds it
        (Python iterates over the object the name held when the loop began)."""
        if isinstance(expr, gast.Name) and expr.id not in _rebound(loop):
            return expr
        seq = self.namer.fresh(hint)
        before.append(assign(seq, expr, expr))
        return name(seq)

    def _builtin_call(self, node: gast.expr) -> str | None:
        """The name of the builtin ``node`` calls (zip, enumerate), if it is one, without ``*``."""
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and self.is_builtin(node.func.id) \
                and not any(isinstance(a, gast.Starred) for a in node.args) \
                and all(k.arg is not None for k in node.keywords):
            return node.func.id
        return None

    def _lower_for(self, loop: gast.For) -> list[gast.stmt]:
        it, target, before = loop.iter, loop.target, []
        func = self._builtin_call(it)
        if func == "enumerate" and 1 <= len(it.args) + len(it.keywords) <= 2 and it.args \
                and all(k.arg == "start" for k in it.keywords):
            return self._lower_enumerate(loop)
        if func == "zip" and it.args and not it.keywords:
            return self._lower_zip(loop)
        if func == "reversed" and len(it.args) == 1 and not it.keywords:
            return self._lower_reversed(loop)
        if self._as_sequence(it) is not it:
            # for k, v in d.items(), for k in d: over a list of what iterating gives, which a loop can
            # index; the same items in the same order, since nothing in the function can change the dict.
            loop.iter = it = self._as_sequence(it)
        if isinstance(it, gast.Name) and it.id in _names_in([target]):
            # for x in x: the loop runs over what x held first.
            loop.iter = self._sequence(it, f"{it.id}_seq", before, loop)
        if not isinstance(target, gast.Name):
            item = self.namer.fresh("item")
            loop.target = store(item)
            loop.body = located([gast.Assign(targets=[target], value=name(item), type_comment=None)], loop) + loop.body
        return located(before, loop) + [loop]

    def _lower_enumerate(self, loop: gast.For) -> list[gast.stmt]:
        """``for i, x in enumerate(xs, start)``: ``for x in xs`` with a counter, which
        iterates over ``xs`` as Python does (a dict gives its keys)."""
        it, target = loop.iter, loop.target
        start = it.args[1] if len(it.args) > 1 else it.keywords[0].value if it.keywords else const(0)
        pair = isinstance(target, gast.Tuple) and len(target.elts) == 2
        hint = f"next_{target.elts[0].id}" if pair and isinstance(target.elts[0], gast.Name) else "count"
        count = self.namer.fresh(hint)
        step = assign(count, gast.BinOp(left=name(count), op=gast.Add(), right=const(1)))
        if pair:
            index, item = target.elts
            prefix = [gast.Assign(targets=[index], value=name(count), type_comment=None), step]
        else:
            fresh = self.namer.fresh("item")
            item = store(fresh)
            prefix = [gast.Assign(targets=[target], value=gast.Tuple(elts=[name(count), name(fresh)],
                                                                      ctx=gast.Load()), type_comment=None), step]
        before = located([assign(count, start)], loop)
        loop.iter, loop.target = it.args[0], item
        loop.body = located(prefix, loop) + loop.body
        return before + self._lower_for(loop)

    def _lower_zip(self, loop: gast.For) -> list[gast.stmt]:
        """``for a, b in zip(as_, bs)``: ``for i in range(loop_length(where, as_, bs)): a = as_[i]; b = bs[i]``;
        ``loop_length`` checks that each argument is a sequence, which indexing runs as Python's zip
        (``min(len(as_), len(bs))`` where that is evident).
        A zip among the arguments (``zip(xs, zip(ys, zs))``) adds its own to the index loop."""
        it, target, before = loop.iter, loop.target, []
        index = self.namer.fresh("i")
        seqs: list[tuple[gast.expr, gast.expr]] = []
        items = self._zip_items(it, index, loop, before, seqs)
        if all(self._is_sequence(arg) for arg, _ in seqs):
            lengths = [call(self.builtin("len"), copy.deepcopy(seq)) for _, seq in seqs]
            count = lengths[0] if len(lengths) == 1 else call(self.builtin("min"), *lengths)
        else:  # loop_length refuses, when the loop starts, an argument that indexing would not iterate as zip does
            count = call(self.runtime["loop_length"], const(self.parsed.where(it)), *[copy.deepcopy(s) for _, s in seqs])
        loop.iter = call(self.builtin("range"), count)
        if isinstance(target, gast.Tuple) and len(target.elts) == len(items):
            prefix = [gast.Assign(targets=[t], value=v, type_comment=None) for t, v in zip(target.elts, items)]
        else:
            prefix = [gast.Assign(targets=[target], value=gast.Tuple(elts=items, ctx=gast.Load()), type_comment=None)]
        loop.target = store(index)
        loop.body = located(prefix, loop) + loop.body
        return located(before, loop) + [loop]

    def _lower_reversed(self, loop: gast.For) -> list[gast.stmt]:
        """``for x in reversed(xs)``: ``for i in range(len(xs) - 1, -1, -1): x = xs[i]``, over a sequence
        (``loop_length`` refuses, when the loop starts, anything else)."""
        it, before = loop.iter, []
        arg = it.args[0]
        arg = self._as_sequence(arg)  # reversed(d) runs over d's keys, last first
        self._refuse_non_sequence(arg)
        seq = self._sequence(arg, "seq", before, loop)
        if self._is_sequence(arg):
            count = call(self.builtin("len"), copy.deepcopy(seq))
        else:
            count = call(self.runtime["loop_length"], const(self.parsed.where(it)), copy.deepcopy(seq))
        index = self.namer.fresh("i")
        last = gast.BinOp(left=count, op=gast.Sub(), right=const(1))
        loop.iter = call(self.builtin("range"), last, const(-1), const(-1))
        item = gast.Subscript(value=copy.deepcopy(seq), slice=name(index), ctx=gast.Load())
        prefix = [gast.Assign(targets=[loop.target], value=item, type_comment=None)]
        loop.target = store(index)
        loop.body = located(prefix, loop) + loop.body
        return located(before, loop) + [loop]

    def _as_sequence(self, arg: gast.expr) -> gast.expr:
        """``list(arg)`` for a dict or a dict view (what iterating it gives, in order, as a list a loop can
        index: nothing in the function can change the dict), else ``arg``."""
        if self._is_view(arg) or isinstance(arg, (gast.Dict, gast.DictComp)) \
                or (isinstance(arg, gast.Name) and arg.id in self._dicts):
            return located([call(self.builtin("list"), arg)], arg)[0]
        return arg

    def _is_view(self, node: gast.expr) -> bool:
        """True for ``d.keys()``, ``d.values()``, ``d.items()``."""
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
            and node.func.attr in _DICT_VIEWS and not node.args and not node.keywords

    def _zip_items(self, it: gast.Call, index: str, loop: gast.For, before: list, seqs: list) -> list[gast.expr]:
        """The items zip(...) yields at position ``index``: ``seq[index]`` for each argument, a tuple of
        them for an argument that is itself a zip. Collects (argument, sequence) pairs in ``seqs``."""
        items: list[gast.expr] = []
        for arg in it.args:
            if self._builtin_call(arg) == "zip" and arg.args and not arg.keywords:
                items.append(gast.Tuple(elts=self._zip_items(arg, index, loop, before, seqs), ctx=gast.Load()))
                continue
            position: gast.expr = name(index)
            if self._builtin_call(arg) == "reversed" and len(arg.args) == 1 and not arg.keywords:
                arg = arg.args[0]  # zip(reversed(xs), ys): xs[-1 - i], the last items first
                position = gast.BinOp(left=const(-1), op=gast.Sub(), right=name(index))
            arg = self._as_sequence(arg)  # zip(d, xs) pairs d's keys, in order, with xs
            self._refuse_non_sequence(arg)
            seq = self._sequence(arg, "seq", before, loop)
            seqs.append((arg, seq))
            items.append(gast.Subscript(value=copy.deepcopy(seq), slice=position, ctx=gast.Load()))
        return items

    def _is_sequence(self, arg: gast.expr) -> bool:
        """True if ``arg`` evidently evaluates to a sequence: a list or tuple display, a string,
        a call of the builtin range, the list a comprehension became."""
        return isinstance(arg, (gast.List, gast.Tuple)) \
            or (isinstance(arg, gast.Constant) and isinstance(arg.value, str)) \
            or (isinstance(arg, gast.Name) and arg.id in self.lists) \
            or self._builtin_call(arg) in ("range", "list")

    def _refuse_non_sequence(self, arg: gast.expr) -> None:
        """Refuse, before anything runs, a zip (or reversed) over what is evidently not a sequence."""
        remedy = ("adsrc runs zip and reversed over sequences (lists, tuples, arrays, dicts) by position; "
                  "make a list of the items first (sorted(s) for a set)")
        if isinstance(arg, gast.Call) and isinstance(arg.func, gast.Attribute) and arg.func.attr in _DICT_VIEWS:
            raise UnsupportedSyntax(f"zip over .{arg.func.attr}() (a dict view)", self.parsed.where(arg), remedy)
        if isinstance(arg, (gast.Dict, gast.Set, gast.DictComp, gast.SetComp)) \
                or (isinstance(arg, gast.Name) and arg.id in self._dicts):
            raise UnsupportedSyntax("zip over a dict (or set)", self.parsed.where(arg), remedy)

    def check_unpacking(self, stmts: list[gast.stmt]) -> None:
        """``a, b = e``, where ``e`` is no display of two items: ``a, b = unpacked(e, 2, 'file:line')``.
        The later passes read the items by position, which only a sequence of that length gives as
        Python's unpacking does; ``unpacked`` (rules/iterables.py) makes any other iterable (a dict,
        whose keys Python unpacks) the tuple of its items and raises Python's ValueError on a length
        that does not match."""
        helper = self.runtime.get("unpacked")
        if helper is None:
            return
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    self.check_unpacking(getattr(stmt, field))
            if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], (gast.Tuple, gast.List))):
                continue
            count = len(stmt.targets[0].elts)
            value = stmt.value
            if isinstance(value, (gast.Tuple, gast.List)) and len(value.elts) == count \
                    and not any(isinstance(e, gast.Starred) for e in value.elts):
                continue
            stmt.value = located([call(helper, value, const(count), const(self.parsed.where(stmt)))], stmt)[0]
            self.parsed.closure[helper] = unpacked

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
        simplify = Simplify(self.shared_names(), self.runtime.get("rebinding"), self.parsed)
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
        if not mapping:
            return
        for stmt in node.body:
            Rename(mapping).visit(stmt)
            for child in gast.walk(stmt):
                if isinstance(child, gast.FunctionDef) and child.name in mapping:
                    child.name = mapping[child.name]

    def run(self, node: gast.FunctionDef) -> gast.FunctionDef:
        self.rename_shadowing_locals(node)
        self._all_names = _names_in(node.body) | _names_in([node.args])
        self._hoisted: set[str] = set()
        self.find_bindings(node)
        self.reserve_builtins()
        body = self.prepare(node.body)
        body = inline_local_functions(self.parsed, self.namer, body, self.prepare)
        body = self.lower_loops(body)
        body = flatten_assignments(body, self.namer, self.parsed)
        self.check_unpacking(body)
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


def _rebound(loop: gast.For) -> set[str]:
    """The names a loop assigns: its target's and its body's."""
    return stored_names(loop.body) | _names_in([loop.target])


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
