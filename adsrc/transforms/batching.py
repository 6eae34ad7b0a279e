"""The vmap transform: a function's source rewritten to run on a batch of examples at once.

Input: a parsed function (frontend/parse.py) and, for each parameter, what is
known of the argument it gets (rules/batching.py ``Info``: batched on axis 0
or not, and its rank per example; containers as tuples, lists and dicts of
infos). Output: the source of the batched function, with the same
parameters, and what is known of its result.

Each expression is rewritten by the batching rule of its primitive
(rules/batching.py); an expression that touches no batched value is left as
written. A call without a rule (or outside what its rule covers) loops over
the batch, ``np.stack([f(x[k]) for k in range(batch_size)])``, its batched
arguments computed once before the statement. A call of the user's own
Python function is batched by transforming that function too (``nested``).

Control flow must be the same for every example: an ``if``, ``while``,
conditional expression, ``and``/``or``, ``assert`` or comprehension that
depends on a batched value is refused before anything runs, naming its line,
as is writing into an array (``x[i] = v``, ``x += v`` on a batched value). A
name that is batched on one path and not on another is repeated for every
example where the paths meet, and a loop's names are followed to a fixed
point.
"""
from __future__ import annotations

import ast
import importlib
import re
from typing import Any, Callable, Optional

import gast
import numpy as np

from ..errors import UnsupportedSyntax
from ..frontend.parse import _MISSING, Parsed
from ..rules.batching import Info, Mismatch, Seq, Val, broadcast, is_batched, join
from .batched_expressions import NUMPY_NAME, Expressions, _code, _wrap, info_of

__all__ = ["Batcher", "info_of", "NUMPY_NAME"]


class Batcher(Expressions):
    """One function's batched source. ``nested(func, infos)`` batches a called user function, returning
    ``(function, info of its result, its loop fallbacks)`` or None; ``batcher.source()`` gives ``(source, result info,
    names to bind)``."""

    def __init__(self, parsed: Parsed, params: list[Any], nested: Callable[[Callable, list], Optional[tuple]]):
        self.parsed = parsed
        self.params = params
        self.nested = nested
        self._taken = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)}
        self._locals = {n.id for n in gast.walk(parsed.node)
                        if isinstance(n, gast.Name) and isinstance(n.ctx, (gast.Store, gast.Param))}
        self.imported: dict[str, Any] = {}  # names an import inside the function binds
        self.reads: dict[str, Any] = {}  # names from outside (globals, closure cells) and what they held
        self._own = self._own_values()
        self.size = self.fresh("batch_size")
        self.bindings: dict[str, Any] = {}
        self.forced: Optional[Any] = None  # the result's info every return must give (second pass)
        self.returns: list[Any] = []
        self.pre: list[str] = []
        self.hoisting = 0  # > 0 inside a conditional expression: nothing may move before the statement
        self.loops = 0  # calls run once per example (the fallback), in this function and those it batches

    # ---- the function ------------------------------------------------------------------------------
    def source(self) -> tuple[str, Any, dict[str, Any]]:
        node = self.parsed.node
        if self.parsed.resolve(NUMPY_NAME) not in (np, _MISSING) or NUMPY_NAME in self._locals:
            raise UnsupportedSyntax("a function that names something else `np`", self.parsed.where(node),
                                    "adsrc.vmap writes NumPy as `np` in the batched code")
        names = [a.id for a in node.args.args]
        for _ in range(3):
            self.returns, self.loops = [], 0
            env = dict(zip(names, self.params))
            body, _ = self.block(node.body, env)
            result = self.returns[0] if self.returns else Info(False, None)
            for other in self.returns[1:]:
                result = self.join(result, other, node)
            if len(self.returns) <= 1 or self.forced == result:
                break
            self.forced = result
        first = self._first_batched(names)
        used = any(re.search(rf"\b{self.size}\b", line) for line in body)
        head = [f"{self.size} = np.shape({first})[0]"] if first and used else []
        name = (node.name.rstrip("_") if node.name.isidentifier() else "f") + "_vmap"
        lines = [f"def {name}({', '.join(names)}):", *_indent(head + body)]
        source = ast.unparse(ast.parse("\n".join(lines))) + "\n"
        return source, result, self.bindings

    def _first_batched(self, names: list[str]) -> Optional[str]:
        def find(code: str, info: Any) -> Optional[str]:
            if isinstance(info, Info):
                return code if info.batched else None
            keys = info.keys() if isinstance(info, dict) else range(len(info))
            for key in keys:
                found = find(f"{code}[{key!r}]", info[key])
                if found:
                    return found
            return None

        return next((c for c in (find(n, i) for n, i in zip(names, self.params)) if c), None)

    def _own_values(self) -> set[str]:
        """The local names that only ever hold values the function made itself (a literal, a display, an
        arithmetic result, np.zeros(...), list(...)): no argument shares their memory, so a write into
        one is the same in every example's own run. Anything else (a parameter, a view, what a call
        returned) may be shared."""
        made: dict[str, bool] = {}

        def mark(target: gast.AST, own: bool) -> None:
            for t in gast.walk(target):  # the names bound (x[i] = v binds none)
                if isinstance(t, gast.Name) and isinstance(t.ctx, (gast.Store, gast.Param)):
                    made[t.id] = made.get(t.id, True) and own and t is target

        for n in gast.walk(self.parsed.node):  # x op= y keeps what x holds: a value made here stays one
            if isinstance(n, gast.Assign):
                for target in n.targets:
                    mark(target, self._makes(n.value))
            elif isinstance(n, gast.AnnAssign):
                mark(n.target, n.value is not None and self._makes(n.value))
            elif isinstance(n, (gast.For, gast.comprehension, gast.NamedExpr)):
                mark(n.target, False)
            elif isinstance(n, gast.Name) and isinstance(n.ctx, gast.Param):
                mark(n, False)
        return {name for name, own in made.items() if own}

    _CONSTRUCTORS = (np.zeros, np.ones, np.empty, np.full, np.zeros_like, np.ones_like, np.empty_like,
                     np.full_like, np.copy, np.array, np.arange, np.linspace, np.eye, np.identity, list, dict, set)

    def _makes(self, value: gast.AST) -> bool:
        if isinstance(value, (gast.Constant, gast.List, gast.Dict, gast.Set, gast.ListComp, gast.DictComp,
                              gast.SetComp, gast.BinOp, gast.UnaryOp, gast.Compare)):
            return True
        if isinstance(value, gast.Call):
            func = self.static(value.func)
            try:
                return any(func is c for c in self._CONSTRUCTORS) and not (
                    func is np.array and any(k.arg == "copy" for k in value.keywords))
            except TypeError:
                return False
        return False

    def fresh(self, base: str) -> str:
        name, count = base, 1
        while name in self._taken:
            count += 1
            name = f"{base}{count}"
        self._taken.add(name)
        return name

    def join(self, a: Any, b: Any, node: gast.AST) -> Any:
        """What is known of a value that is ``a`` on one path and ``b`` on another (rules/batching.py
        ``join``), refused where the two are batched values of different kinds."""
        try:
            return join(a, b)
        except Mismatch:
            raise self.refuse(node, "a name or result that holds batched values of different kinds on "
                                    "different paths (a tuple and an array, say)",
                              "give it values of the same kind on every path") from None

    def refuse(self, node: gast.AST, construct: str, hint: str) -> UnsupportedSyntax:
        return UnsupportedSyntax(f"under adsrc.vmap, {construct}", self.parsed.where(node), hint)

    # ---- statements --------------------------------------------------------------------------------
    def block(self, stmts: list, env: dict) -> tuple[list[str], dict]:
        lines: list[str] = []
        for stmt in stmts:
            self.pre = []
            out = self.statement(stmt, env)
            lines += self.pre + out
        return lines, env

    def statement(self, stmt: gast.stmt, env: dict) -> list[str]:
        if isinstance(stmt, gast.Assign):
            value = self.expr(stmt.value, env)
            lines = []
            if len(stmt.targets) > 1 and not value.code.isidentifier():
                temp = self.fresh("value")
                lines.append(f"{temp} = {value.code}")
                value = Val(temp, value.info)
            for target in stmt.targets:
                lines += self.assign(target, value, env)
            return lines
        if isinstance(stmt, gast.AugAssign):
            target = self.expr(stmt.target, env) if not isinstance(stmt.target, gast.Name) or \
                stmt.target.id in env else Val(stmt.target.id, Info(False, None))
            value = self.expr(stmt.value, env)
            if is_batched(target.info) or is_batched(value.info):
                if isinstance(stmt.target, gast.Name) and stmt.target.id in self._own \
                        and isinstance(target.info, Info) and target.info.rank == 0:
                    # a number the function made: x op= y rebinds x, as x = x op y does
                    binop = gast.BinOp(left=gast.Name(id=stmt.target.id, ctx=gast.Load(), annotation=None,
                                                      type_comment=None), op=stmt.op, right=stmt.value)
                    return self.assign(stmt.target, self.expr(gast.copy_location(binop, stmt), env), env)
                raise self.refuse(stmt, "an augmented assignment of a batched value",
                                  "Python would write into the array in place; write `x = x + y` instead")
            self._owned_or_refuse(stmt.target, stmt)
            return [_code(stmt)]
        if isinstance(stmt, gast.Return):
            value = self.expr(stmt.value, env) if stmt.value is not None else Val("None", Info(False, None))
            self.returns.append(value.info)
            if self.forced is not None:
                value = self.coerced(value, self.forced)
            return [f"return {value.code}"]
        if isinstance(stmt, gast.Expr):
            if isinstance(stmt.value, gast.Constant):
                return [_code(stmt)]
            return self.effect(stmt, env)
        if isinstance(stmt, gast.If):
            return self.branches(stmt, env)
        if isinstance(stmt, (gast.For, gast.While)):
            return self.loop(stmt, env)
        if isinstance(stmt, (gast.Pass, gast.Break, gast.Continue)):
            return [_code(stmt)]
        if isinstance(stmt, (gast.Import, gast.ImportFrom)) and getattr(stmt, "level", 0) == 0:
            self._import(stmt)
            return [_code(stmt)]
        if isinstance(stmt, gast.Assert):
            test = self.expr(stmt.test, env)
            if is_batched(test.info):
                raise self.refuse(stmt, "an assert on a batched value",
                                  "check the examples before the call (np.all(...) over the batch)")
            return [_code(stmt)]
        raise self.refuse(stmt, f"a `{type(stmt).__name__}` statement",
                          "adsrc.vmap batches assignments, returns, calls, if, for and while")

    def _import(self, stmt: gast.Import | gast.ImportFrom) -> None:
        """An import inside the function: the names it binds mean those objects (imported now, as the
        statement will when it runs), so their calls find their batching rules."""
        for alias in stmt.names:
            if isinstance(stmt, gast.ImportFrom):
                module = importlib.import_module(stmt.module)
                value = getattr(module, alias.name, _MISSING)
                if value is _MISSING:  # a submodule
                    value = importlib.import_module(f"{stmt.module}.{alias.name}")
                self.imported[alias.asname or alias.name] = value
            elif alias.asname:
                self.imported[alias.asname] = importlib.import_module(alias.name)
            else:
                root = alias.name.split(".")[0]
                importlib.import_module(alias.name)
                self.imported[root] = importlib.import_module(root)

    def assign(self, target: gast.AST, value: Val, env: dict) -> list[str]:
        if isinstance(target, gast.Name):
            env[target.id] = value.info
            return [f"{target.id} = {value.code}"]
        if isinstance(target, (gast.Tuple, gast.List)) and not any(isinstance(e, gast.Starred) for e in target.elts):
            count = len(target.elts)
            info = value.info
            if isinstance(info, Info):
                if info.batched:
                    if info.rank == 0:
                        raise self.refuse(target, "unpacking a batched scalar", "it cannot be unpacked")
                    code = f"np.moveaxis({_wrap(value.code)}, 1, 0)"
                else:
                    code = value.code
                rank = None if info.rank is None else info.rank - 1
                parts = [Info(info.batched, rank)] * count
            elif isinstance(info, (tuple, list)) and len(info) == count:
                code, parts = value.code, list(info)
            else:
                raise self.refuse(target, "unpacking a value of unknown length", "unpack before the call")
            temp = self.fresh("parts")
            lines = [f"{temp} = {code}"]
            for k, (element, part) in enumerate(zip(target.elts, parts)):
                lines += self.assign(element, Val(f"{temp}[{k}]", part), env)
            return lines
        place = self.expr(target.value, env) if isinstance(target, (gast.Subscript, gast.Attribute)) else None
        if place is not None and not is_batched(place.info) and not is_batched(value.info) and (
                not isinstance(target, gast.Subscript) or not is_batched(self.expr(target.slice, env).info)):
            self._owned_or_refuse(target, target)
            return [f"{_code(target)} = {value.code}"]
        raise self.refuse(target, "writing into an array or object with a batched value",
                          "build the result with np.where, np.concatenate or np.stack instead")

    def effect(self, stmt: gast.Expr, env: dict) -> list[str]:
        """A call made for its effect runs once per example, as a loop over the examples would; a method
        of a local value (``parts.append(v)``) changes that value, the same for every example if nothing
        batched takes part, and is refused otherwise."""
        call = stmt.value
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute):
            base = call.func.value
            while isinstance(base, (gast.Attribute, gast.Subscript)):
                base = base.value
            if isinstance(base, gast.Name) and base.id in self._locals:
                value = self.expr(call, env)
                if is_batched(value.info) or value.code != _code(call) and "for " in value.code:
                    raise self.refuse(stmt, "changing a local value with a batched value",
                                      "build lists of batched values as a display [a, b] or with np.stack")
                self._owned_or_refuse(call.func.value, stmt)
                return [_code(stmt)]
        value = self.expr(stmt.value, env, effect=True)
        return [value.code]

    def _owned_or_refuse(self, target: gast.AST, node: gast.AST) -> None:
        """A write runs once for the whole batch: the same as once per example only into a value the
        function made itself, which no other example's run sees."""
        base = target
        while isinstance(base, (gast.Attribute, gast.Subscript)):
            base = base.value
        if isinstance(base, gast.Name) and base.id in self._own:
            return
        raise self.refuse(node, "writing into a value that an argument or another name may share",
                          "the batched function runs once, so the write would happen once instead of once per "
                          "example; copy it first (y = np.copy(x)) or build a new value")

    def coerced(self, value: Val, want: Any) -> Val:
        """``value`` as ``want`` describes it: unbatched parts repeated for every example where ``want``
        has them batched."""
        have = value.info
        if isinstance(want, Info):
            if want.batched and not is_batched(have):
                return Val(broadcast(value, self.size), want)
            return Val(value.code, want)
        if have == want:
            return value
        if not value.code.isidentifier():
            temp = self.fresh("value")
            self.pre.append(f"{temp} = {value.code}")
            value = Val(temp, have)
        if isinstance(want, Seq) and isinstance(have, Seq):
            return Val(f"[{self.coerced(Val('each', have.item), want.item).code} for each in {value.code}]", want)
        if isinstance(want, dict) and isinstance(have, dict):
            items = [f"{k!r}: {self.coerced(Val(f'{value.code}[{k!r}]', have[k]), want[k]).code}" for k in want]
            return Val("{" + ", ".join(items) + "}", want)
        if isinstance(want, (tuple, list)) and isinstance(have, (tuple, list)):
            items = [self.coerced(Val(f"{value.code}[{k}]", h), w).code for k, (h, w) in enumerate(zip(have, want))]
            shown = f"({', '.join(items)},)" if isinstance(want, tuple) else f"[{', '.join(items)}]"
            return Val(shown, want)
        return Val(value.code, want)

    def _meet(self, ends: list[dict], node: gast.AST) -> tuple[dict, list[list[str]]]:
        """The names after paths that end in ``ends``, and the statements each path needs at its end."""
        met: dict = {}
        for env in ends:
            for name, info in env.items():
                met[name] = self.join(met[name], info, node) if name in met else info
        fixes = []
        for env in ends:
            self.pre = []
            lines = []
            for name, info in env.items():
                if is_batched(met[name]) != is_batched(info) or met[name] != info:
                    value = self.coerced(Val(name, info), met[name])
                    if value.code != name:
                        lines.append(f"{name} = {value.code}")
            fixes.append(self.pre + lines)
        return met, fixes

    def _suite(self, stmts: list, env: dict) -> list[str]:
        saved = self.pre
        lines, _ = self.block(stmts, env)
        self.pre = saved
        return lines or ["pass"]

    def branches(self, stmt: gast.If, env: dict) -> list[str]:
        test = self.expr(stmt.test, env)
        if is_batched(test.info):
            raise self.refuse(stmt, "an if statement whose test depends on a batched value",
                              "choose per example with np.where(test, a, b), or loop over the batch in Python")
        pre = self.pre
        body_env, else_env = dict(env), dict(env)
        body = self._suite(stmt.body, body_env)
        orelse = self._suite(stmt.orelse, else_env) if stmt.orelse else []
        met, (fix_body, fix_else) = self._meet([body_env, else_env], stmt)
        if (fix_body or fix_else) and _jumps(stmt):
            raise self.refuse(stmt, "a name batched on one branch only, in a branch that jumps",
                              "assign the name a batched value on both branches")
        env.clear()
        env.update(met)
        self.pre = pre
        lines = [f"if {test.code}:", *_indent(body + fix_body)]
        if orelse or fix_else:
            lines += ["else:", *_indent((orelse + fix_else) or ["pass"])]
        return lines

    def loop(self, stmt: gast.For | gast.While, env: dict) -> list[str]:
        pre = self.pre
        head, before = dict(env), dict(env)
        item = self.fresh("item") if isinstance(stmt, gast.For) and not isinstance(stmt.target, gast.Name) else None
        for _ in range(8):
            self.pre = []
            inner = dict(head)
            if isinstance(stmt, gast.For):
                element = self.element(self.expr(stmt.iter, dict(head)), stmt)
                header_pre, self.pre = self.pre, []
                if item is None:
                    inner[stmt.target.id] = element.info
                    target_lines = []
                else:
                    target_lines = self.assign(stmt.target, Val(item, element.info), inner)
                header = f"for {item or stmt.target.id} in {element.code}:"
            else:
                test = self.expr(stmt.test, dict(head))
                header_pre, self.pre = self.pre, []
                if is_batched(test.info):
                    raise self.refuse(stmt, "a while loop whose test depends on a batched value",
                                      "run a fixed number of steps and freeze finished examples with np.where")
                target_lines, header = [], f"while {test.code}:"
            body = self._suite(stmt.body, inner)
            met, _ = self._meet([head, inner], stmt)
            if met == head:
                break
            head = met
        else:
            raise self.refuse(stmt, "a loop whose names do not settle", "give them the same kind on every pass")
        _, (start,) = self._meet_to(before, head)
        _, (end,) = self._meet_to(inner, head)
        if end and _jumps(stmt):
            raise self.refuse(stmt, "a name that becomes batched in a loop that breaks or continues",
                              "give the name a batched value before the loop")
        env.clear()
        env.update(head)
        self.pre = pre
        lines = start + header_pre + [header, *_indent(target_lines + body + end)]
        if stmt.orelse:
            lines += ["else:", *_indent(self._suite(stmt.orelse, env))]
        return lines

    def _meet_to(self, have: dict, want: dict) -> tuple[dict, list[list[str]]]:
        lines = []
        self.pre = []
        for name, info in have.items():
            if name in want and want[name] != info:
                value = self.coerced(Val(name, info), want[name])
                if value.code != name:
                    lines.append(f"{name} = {value.code}")
        return want, [self.pre + lines]

    def element(self, iterable: Val, node: gast.AST) -> Val:
        """What a for loop's name holds on each pass over ``iterable``."""
        info = iterable.info
        if isinstance(info, Info):
            rank = None if info.rank is None else info.rank - 1
            if info.batched:
                if info.rank is None:
                    raise self.refuse(node, "a loop over a batched value of unknown rank",
                                      "loop over a range or an array made by NumPy operations with batching rules")
                if info.rank == 0:
                    raise self.refuse(node, "a loop over a batched scalar", "it cannot be iterated")
                return Val(f"np.moveaxis({_wrap(iterable.code)}, 1, 0)", Info(True, rank))
            return Val(iterable.code, Info(False, rank))
        if isinstance(info, Seq):
            return Val(iterable.code, info.item)
        members = list(info.values()) if isinstance(info, dict) else list(info)
        if isinstance(info, dict):
            if is_batched(info):
                raise self.refuse(node, "a loop over a dict that holds batched values", "loop over its keys")
            return Val(iterable.code, Info(False, None))
        common = members[0] if members else Info(False, None)
        for m in members[1:]:
            common = self.join(common, m, node)
        return Val(iterable.code, common)


def _jumps(stmt: gast.AST) -> bool:
    return any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(stmt))


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for sub in lines for line in sub.split("\n")]
