"""Inline: replace calls of functions defined inside the function by their bodies.

Input: a function body (after Simplify) whose top level may define local
functions (``def g(y): ...`` or ``g = lambda y: ...``). Output: the same body
without those definitions; each call ``g(a)`` is replaced by the local
function's body, hoisted before the statement that made the call, with its
parameters bound to fresh names and its locals renamed, and the call itself
by the returned expression. A closure over the enclosing function's
variables then needs nothing special: the inlined code reads them directly,
as Python's late-binding closure would at the time of the call.

Default values are another matter: Python evaluates them once, where the
function is defined. So the definition is replaced by assignments of its
defaults to fresh names, and a call that omits an argument reads that name.
A local function defined twice, or called (directly or through another local
function) before its definition, is refused: inlining each call with the one
body would not do what Python does.

A local function used as a value (passed, returned, stored, given to
``adsrc.grad``), and a lambda in an expression, is not inlined: its
definition becomes the assignment that makes it as Python does, from its own
code object and the values it captures (closures.py).
"""
from __future__ import annotations

import builtins
import copy

import gast

from ..errors import UnsupportedSyntax
from ..ir.build import assign, const, lambda_as_def
from ..ir.naming import Namer, Rename, rewrite_expressions, stored_names
from .closures import Closures
from .parse import Parsed

_MAX_DEPTH = 32



class Inliner:
    def __init__(self, parsed: Parsed, namer: Namer, prepare=lambda body: body, closures: Closures | None = None):
        self.parsed = parsed
        self.closures = closures or Closures(parsed, namer, {}, {})
        self.namer = namer
        self.prepare = prepare  # desugars a body (augmented assignments, comprehensions)
        self.local: dict[str, gast.FunctionDef] = {}
        self.made: set[str] = set()  # the local functions that an inlined factory call defined
        self.depth = 0

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        raise UnsupportedSyntax(construct, self.parsed.where(node), hint)

    # -- finding local functions -------------------------------------------
    def extract(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """Take the local function definitions out of ``body``; each leaves the assignments of
        its default values (evaluated there, as Python does) in its place, and, if it is used as a
        value, the assignment that makes its closure (closures.py)."""
        rest = []
        defined_at: dict[str, int] = {}
        slots: dict[str, tuple[gast.Assign, int, str]] = {}
        for stmt in body:
            fn, lineno, label = None, getattr(stmt, "lineno", 0), "local function"
            if isinstance(stmt, gast.FunctionDef):
                fn = stmt
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) \
                    and isinstance(stmt.targets[0], gast.Name):
                fn = gast.copy_location(lambda_as_def(stmt.value, stmt.targets[0].id), stmt)
                lineno, label = getattr(stmt.value, "lineno", lineno), "lambda"
            if fn is None:
                rest.append(stmt)
                continue
            if fn.name in self.local:
                self.fail(stmt, f"defining the local function {fn.name} twice",
                          "give each definition its own name")
            self.local[fn.name] = fn
            rest.extend(self.bind_defaults(fn, stmt))
            slots[fn.name] = (gast.copy_location(assign(fn.name, const(None)), stmt), lineno, label)
            rest.append(slots[fn.name][0])
        valued = self._used_as_values(rest)
        for fname, (slot, lineno, label) in slots.items():
            if fname in valued:
                slot.value = self.closures.make(self.local[fname], lineno, label, rest, rest.index(slot), slot)
        dropped = {id(slot) for fname, (slot, _, _) in slots.items() if fname not in valued}
        slot_of = {id(slot): fname for fname, (slot, _, _) in slots.items()}
        kept = 0
        for stmt in rest:  # where each is defined, counted in what is kept
            if id(stmt) in slot_of:
                defined_at[slot_of[id(stmt)]] = kept
            kept += id(stmt) not in dropped
        rest = [s for s in rest if id(s) not in dropped]
        for position, stmt in enumerate(rest):
            if id(stmt) not in slot_of:
                _LambdaMaker(self.closures, rest, position).visit(stmt)
        self._check_defined_before_use(rest, defined_at)
        called = {c.func.id for node in rest + list(self.local.values()) for c in self._calls(node)}
        for name, fn in self.local.items():
            if name not in called:
                continue  # used only as a value: Python runs its own code (closures.py)
            returns = [n for n in _own_nodes(fn.body) if isinstance(n, gast.Return)]
            if not fn.body or not isinstance(fn.body[-1], gast.Return) or len(returns) != 1:
                self.fail(fn, f"the local function {name} with a return that is not its last statement",
                          "give it a single return at the end, or define it at module level")
            if fn.args.vararg or fn.args.kwarg or fn.args.kwonlyargs:
                self.fail(fn, f"the local function {name} with *args, **kwargs or keyword-only parameters")
        for stmt in rest:
            for node in gast.walk(stmt):
                if isinstance(node, gast.Name) and node.id in self.local and id(stmt) not in slot_of:
                    if isinstance(node.ctx, gast.Store):
                        self.fail(node, f"rebinding the local function {node.id}")
        return rest

    def _used_as_values(self, rest: list[gast.stmt]) -> set[str]:
        """The local functions read other than as the callee of a call (``grad(g)``, ``return g``),
        with those such a function reads: its closure captures them."""
        def read(nodes: list[gast.AST], calls_too: bool) -> set[str]:
            callees = {id(n.func) for node in nodes for n in gast.walk(node) if isinstance(n, gast.Call)}
            return {n.id for node in nodes for n in gast.walk(node) if isinstance(n, gast.Name)
                    and n.id in self.local and isinstance(n.ctx, gast.Load) and (calls_too or id(n) not in callees)}

        valued = read(rest, False)
        for fn in self.local.values():
            valued |= read(fn.body, False)
        for lam in [n for node in rest for n in gast.walk(node) if isinstance(n, gast.Lambda)]:
            valued |= read([lam.body], True)  # a lambda made where it stands captures what it calls too
        pending = list(valued)
        while pending:
            for captured in read(self.local[pending.pop()].body, True) - valued:
                valued.add(captured)
                pending.append(captured)
        return valued

    def bind_defaults(self, fn: gast.FunctionDef, where: gast.stmt) -> list[gast.stmt]:
        """``name_default = <default>`` for each default that is not a constant, at the definition;
        the definition's defaults then read those names."""
        params = [a.id for a in fn.args.args]
        out = []
        for k, default in enumerate(fn.args.defaults):
            if isinstance(default, gast.Constant):
                continue
            param = params[len(params) - len(fn.args.defaults) + k]
            fresh = self.namer.fresh(f"{param}_default")
            out.append(gast.copy_location(gast.Assign(targets=[gast.Name(
                id=fresh, ctx=gast.Store(), annotation=None, type_comment=None)], value=default,
                type_comment=None), default if getattr(default, "lineno", None) else where))
            fn.args.defaults[k] = gast.copy_location(
                gast.Name(id=fresh, ctx=gast.Load(), annotation=None, type_comment=None), default)
        return self.prepare(out)

    def _calls(self, node: gast.AST) -> list[gast.Call]:
        return [n for n in gast.walk(node) if isinstance(n, gast.Call) and isinstance(n.func, gast.Name)
                and n.func.id in self.local]

    def _check_defined_before_use(self, rest: list[gast.stmt], defined_at: dict[str, int]) -> None:
        """Refuse a call, at the top level, of a local function not yet defined there, or of one
        whose body calls (perhaps through others) a local function not yet defined."""
        needs: dict[str, set[str]] = {}

        def closure(fname: str) -> set[str]:
            if fname not in needs:
                needs[fname] = {fname}
                for inner in self._calls(self.local[fname]):
                    needs[fname] |= closure(inner.func.id)
            return needs[fname]

        for position, stmt in enumerate(rest):
            for node in self._calls(stmt):
                missing = sorted(f for f in closure(node.func.id) if defined_at[f] > position)
                if missing:
                    self.fail(node, f"calling the local function {node.func.id} before its definition"
                              + ("" if missing == [node.func.id] else f" (of {', '.join(missing)})"),
                              "define it before the call, as Python requires")

    # -- inlining ------------------------------------------------------------
    def block(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if hasattr(stmt, field):
                    setattr(stmt, field, self.block(getattr(stmt, field)))
            if isinstance(stmt, gast.While) and self._calls_local(stmt.test):
                self.fail(stmt.test, "a call of a local function in a while condition",
                          "compute the condition into a variable at the end of the loop body")
            before: list[gast.stmt] = []
            rewrite_expressions(stmt, _CallReplacer(self, before))
            out.extend(before)
            if not self.alias(stmt):
                out.append(stmt)
        return out

    def _calls_local(self, node: gast.AST) -> bool:
        return any(isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in self.local
                   for n in gast.walk(node))

    def expand(self, call: gast.Call, before: list[gast.stmt]) -> gast.expr:
        """Hoist the body of a local function for one call; return the value it returns."""
        fn = self.local[call.func.id]
        if any(isinstance(n, gast.Lambda) for s in fn.body for n in gast.walk(s)):
            self.fail(call, f"calling the local function {fn.name}, which makes a lambda, by its name",
                      f"pass {fn.name} as a value (then Python's own code runs), or define it at module level")
        if self.depth >= _MAX_DEPTH:
            self.fail(call, f"recursion in the local function {fn.name}", "define it at module level")
        params = [a.id for a in fn.args.args]
        defaults = dict(zip(params[len(params) - len(fn.args.defaults):], fn.args.defaults))
        if len(call.args) > len(params):
            self.fail(call, f"calling {fn.name} with too many arguments")
        bound = dict(zip(params, call.args))
        for kw in call.keywords:
            if kw.arg not in params or kw.arg in bound:
                self.fail(call, f"calling {fn.name} with the keyword {kw.arg}")
            bound[kw.arg] = kw.value
        mapping = {p: self.namer.fresh(p) for p in params}
        for local in stored_names(fn.body):
            if local not in mapping:
                mapping[local] = self.namer.fresh(local)
        for p in params:
            value = bound.get(p, copy.deepcopy(defaults.get(p)))
            if value is None:
                self.fail(call, f"calling {fn.name} without its argument {p}")
            before.append(gast.copy_location(
                gast.Assign(targets=[gast.Name(id=mapping[p], ctx=gast.Store(), annotation=None,
                                               type_comment=None)], value=value, type_comment=None), call))
        body = [Rename(mapping).visit(s) for s in copy.deepcopy(fn.body)]
        body = self._made_functions(body)
        self.depth += 1
        try:
            inner = self.block(body[:-1] + [gast.copy_location(gast.Expr(value=body[-1].value), body[-1])])
        finally:
            self.depth -= 1
        before.extend(inner[:-1])
        return inner[-1].value


    def _made_functions(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """The functions an inlined body defines at its top (a factory's ``def predict(x): ...``, which it
        returns): each a local function of its own, named afresh for this call, its body reading this
        call's renamed locals as Python's closure reads the factory's frame; its defaults are evaluated
        where it is defined. A name the call's value is bound to (``predictor = make(W)``) is then that
        function (see :meth:`alias`)."""
        names = {s.name: self.namer.fresh(s.name) for s in body if isinstance(s, gast.FunctionDef)}
        if not names:
            return body
        body = [Rename(names).visit(s) for s in body]
        out = []
        for stmt in body:
            if not isinstance(stmt, gast.FunctionDef):
                out.append(stmt)
                continue
            stmt.name = names.get(stmt.name, stmt.name)
            if stmt.decorator_list or any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(stmt)):
                self.fail(stmt, "a decorated or generator function defined in a local function",
                          "define it at module level")
            out.extend(self.bind_defaults(stmt, stmt))
            stmt.body = self.prepare(stmt.body)
            self.local[stmt.name] = stmt
            self.made.add(stmt.name)
        return out

    def alias(self, stmt: gast.stmt) -> bool:
        """``predictor = predict_1``, where ``predict_1`` is a function a factory call made
        (:meth:`_made_functions`): ``predictor`` is that function from here on, called by inlining it;
        the assignment goes. Refused where ``predictor`` is bound elsewhere too, or read other than
        as the callee of a call (it would have to be the closure Python makes)."""
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and isinstance(stmt.value, gast.Name) and stmt.value.id in self.made):
            return False
        alias, made = stmt.targets[0].id, stmt.value.id
        uses = [n for n in gast.walk(self.parsed.node) if isinstance(n, gast.Name) and n.id == alias]
        callees = {id(n.func) for n in gast.walk(self.parsed.node) if isinstance(n, gast.Call)}
        if sum(isinstance(n.ctx, gast.Store) for n in uses) != 1 or any(
                isinstance(n.ctx, gast.Load) and id(n) not in callees for n in uses):
            self.fail(stmt, f"the function a local factory returns, bound to {alias}, which is rebound or "
                      f"used other than by calling it", f"only call {alias} (its factory's body is inlined, "
                      f"then its own at each call), or define the factory at module level")
        self.local[alias] = self.local[made]
        return True


def _own_nodes(body: list[gast.stmt]):
    """The nodes of a function's body, not those of the functions it defines."""
    stack = list(body)
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (gast.FunctionDef, gast.Lambda)):
            stack.extend(gast.iter_child_nodes(node))


class _LambdaMaker(gast.NodeTransformer):
    """A lambda in an expression of a top-level statement: made there, as Python makes it (closures.py)."""

    def __init__(self, closures: Closures, body: list[gast.stmt], position: int):
        self.closures, self.body, self.position = closures, body, position

    def visit_Lambda(self, node: gast.Lambda) -> gast.expr:
        return self.closures.make(lambda_as_def(node, "lambda"), node.lineno, "lambda", self.body, self.position, node)

    def visit_Call(self, node: gast.Call) -> gast.Call:
        """The ``key=`` lambda of sorted, min or max stays as written: it only ranks, carrying no gradient."""
        callee = self.closures.parsed.resolve(node.func.id) if isinstance(node.func, gast.Name) else None
        ranks = any(callee is f for f in (builtins.sorted, builtins.min, builtins.max))  # `is`: an array compares
        kept = [k for k in node.keywords if ranks and k.arg == "key" and isinstance(k.value, gast.Lambda)]
        node.func = self.visit(node.func)
        node.args = [self.visit(a) for a in node.args]
        for k in node.keywords:
            if k not in kept:
                k.value = self.visit(k.value)
        return node


class _CallReplacer(gast.NodeTransformer):
    def __init__(self, inliner: Inliner, before: list[gast.stmt]):
        self.inliner = inliner
        self.before = before

    def visit_Call(self, node: gast.Call) -> gast.expr:
        self.generic_visit(node)
        if isinstance(node.func, gast.Name) and node.func.id in self.inliner.local:
            return self.inliner.expand(node, self.before)
        return node

    def visit_Lambda(self, node: gast.Lambda) -> gast.Lambda:
        return node


def inline_local_functions(parsed: Parsed, namer: Namer, body: list[gast.stmt], prepare,
                           closures: Closures | None = None) -> list[gast.stmt]:
    """Inline the local functions defined at the top of ``body``; ``prepare`` desugars a body;
    ``closures`` makes the closures of those used as values."""
    inliner = Inliner(parsed, namer, prepare, closures)
    rest = inliner.extract(body)
    if not inliner.local:
        return rest
    for fn in inliner.local.values():
        fn.body = prepare(fn.body)
    out = inliner.block(rest)
    _check_all_inlined(inliner, out)
    return out


def _check_all_inlined(inliner: Inliner, body: list[gast.stmt]) -> None:
    """A call of a local function left where no inlining reached (a for loop's target, say), of a
    function no statement defines any more, is refused here rather than left to fail as it runs."""
    stored = stored_names(body)
    for stmt in body:
        for node in _own_nodes([stmt]):
            if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) \
                    and node.func.id in inliner.local and node.func.id not in stored:
                inliner.fail(node, f"a call of the local function {node.func.id} in this place",
                             "call it in an assignment of its own just before, and use that variable here")
