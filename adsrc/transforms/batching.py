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
import inspect
import re
from typing import Any, Callable, Optional

import gast
import numpy as np

from ..errors import UnsupportedSyntax
from ..frontend.parse import _MISSING, Parsed
from ..rules.batching import Display, Info, Val, aligned, is_batched, join, literal, rule_for

__all__ = ["Batcher", "info_of", "NUMPY_NAME"]

NUMPY_NAME = "np"  # the name the batched code calls NumPy by; the transform refuses a function that rebinds it

_OPERATORS = {gast.Add: (np.add, "+"), gast.Sub: (np.subtract, "-"), gast.Mult: (np.multiply, "*"),
              gast.Div: (np.true_divide, "/"), gast.FloorDiv: (np.floor_divide, "//"),
              gast.Mod: (np.remainder, "%"), gast.Pow: (np.power, "**"), gast.BitAnd: (np.bitwise_and, "&"),
              gast.BitOr: (np.bitwise_or, "|"), gast.BitXor: (np.bitwise_xor, "^"),
              gast.LShift: (np.left_shift, "<<"), gast.RShift: (np.right_shift, ">>")}
_COMPARISONS = {gast.Lt: "<", gast.LtE: "<=", gast.Gt: ">", gast.GtE: ">=", gast.Eq: "==", gast.NotEq: "!="}
_UNARY = {gast.USub: "-", gast.UAdd: "+", gast.Invert: "~"}
# Array methods, batched as the NumPy function of the same name with the receiver first.
_METHODS = {name: getattr(np, name) for name in (
    "sum", "prod", "mean", "std", "var", "max", "min", "any", "all", "argmax", "argmin", "transpose",
    "reshape", "ravel", "swapaxes", "clip", "dot", "copy", "conj")}
_SHAPED = ("reshape", "transpose")
_KEEP_SHAPE = ("astype", "round", "conjugate")  # methods whose result has the receiver's shape  # methods that also take their tuple as separate arguments


def info_of(value: Any) -> Info:
    """What is known of an unbatched value the function reads from outside (a global, a constant)."""
    if isinstance(value, (bool, int, float, complex, np.generic, np.ndarray)):
        return Info(False, np.ndim(value))
    return Info(False, None)


def _code(node: gast.AST) -> str:
    return ast.unparse(gast.gast_to_ast(node))


def _wrap(code: str) -> str:
    """``code`` as an operand: in parentheses unless it is a name (ast.unparse drops the needless ones)."""
    return code if code.isidentifier() else f"({code})"


class Batcher:
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
                result = join(result, other)
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
        if isinstance(stmt, gast.Assert):
            test = self.expr(stmt.test, env)
            if is_batched(test.info):
                raise self.refuse(stmt, "an assert on a batched value",
                                  "check the examples before the call (np.all(...) over the batch)")
            return [_code(stmt)]
        raise self.refuse(stmt, f"a `{type(stmt).__name__}` statement",
                          "adsrc.vmap batches assignments, returns, calls, if, for and while")

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
                return Val(f"np.broadcast_to({value.code}, ({self.size},) + np.shape({value.code})).copy()", want)
            return Val(value.code, want)
        if have == want:
            return value
        if not value.code.isidentifier():
            temp = self.fresh("value")
            self.pre.append(f"{temp} = {value.code}")
            value = Val(temp, have)
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
                met[name] = join(met[name], info) if name in met else info
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
                if info.rank == 0:
                    raise self.refuse(node, "a loop over a batched scalar", "it cannot be iterated")
                return Val(f"np.moveaxis({_wrap(iterable.code)}, 1, 0)", Info(True, rank))
            return Val(iterable.code, Info(False, rank))
        members = list(info.values()) if isinstance(info, dict) else list(info)
        if isinstance(info, dict):
            if is_batched(info):
                raise self.refuse(node, "a loop over a dict that holds batched values", "loop over its keys")
            return Val(iterable.code, Info(False, None))
        common = members[0] if members else Info(False, None)
        for m in members[1:]:
            common = join(common, m)
        return Val(iterable.code, common)

    # ---- expressions -------------------------------------------------------------------------------
    def expr(self, node: gast.AST, env: dict, effect: bool = False) -> Val:
        if isinstance(node, gast.Name):
            if node.id in env:
                return Val(node.id, env[node.id])
            value = self.parsed.resolve(node.id)
            return Val(node.id, info_of(value))
        if isinstance(node, gast.Constant):
            return Val(_code(node), info_of(node.value))
        if isinstance(node, gast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            if isinstance(node.op, gast.MatMult):
                return self.primitive(node, "@", "@", [left, right], {}, env)
            func, symbol = _OPERATORS[type(node.op)]
            done = aligned([Val(_wrap(left.code), left.info), Val(_wrap(right.code), right.info)])
            if done is None or (not is_batched(left.info) and not is_batched(right.info)):
                if is_batched(left.info) or is_batched(right.info):
                    return self.fallback(node, lambda a: f"{a[0]} {symbol} {a[1]}", [left, right], {})
                return Val(f"{_wrap(left.code)} {symbol} {_wrap(right.code)}", done[1] if done else
                           Info(False, None))
            codes, info = done
            return Val(f"{codes[0]} {symbol} {codes[1]}", info)
        if isinstance(node, gast.UnaryOp):
            operand = self.expr(node.operand, env)
            if isinstance(node.op, gast.Not):
                if is_batched(operand.info):
                    raise self.refuse(node, "`not` of a batched value", "use np.logical_not")
                return Val(f"not {_wrap(operand.code)}", Info(False, 0))
            return Val(f"{_UNARY[type(node.op)]}{_wrap(operand.code)}", operand.info)
        if isinstance(node, gast.Compare):
            parts = [self.expr(node.left, env)] + [self.expr(c, env) for c in node.comparators]
            if not any(is_batched(p.info) for p in parts):
                return Val(_code(node), Info(False, None) if len(parts) > 2 else
                           (aligned(parts) or (None, Info(False, None)))[1])
            if len(parts) != 2 or type(node.ops[0]) not in _COMPARISONS:
                raise self.refuse(node, "a chained or identity comparison of batched values",
                                  "compare two arrays at a time with <, <=, ==, ...")
            symbol = _COMPARISONS[type(node.ops[0])]
            done = aligned([Val(_wrap(p.code), p.info) for p in parts])
            if done is None:
                return self.fallback(node, lambda a: f"{a[0]} {symbol} {a[1]}", parts, {})
            return Val(f"{done[0][0]} {symbol} {done[0][1]}", done[1])
        if isinstance(node, gast.BoolOp):
            values = [self.expr(v, env) for v in node.values]
            if any(is_batched(v.info) for v in values):
                raise self.refuse(node, "`and`/`or` on a batched value",
                                  "use np.logical_and / np.logical_or, or & and |")
            return Val(_code(node), Info(False, None))
        if isinstance(node, gast.IfExp):
            return self.choice(node, env)
        if isinstance(node, (gast.Tuple, gast.List)):
            parts = tuple(self.expr(e, env) for e in node.elts)
            if any(isinstance(e, gast.Starred) for e in node.elts):
                return self.opaque(node, env)
            if isinstance(node, gast.Tuple):
                return Display(f"({', '.join(p.code for p in parts)},)", tuple(p.info for p in parts), parts)
            return Display(f"[{', '.join(p.code for p in parts)}]", [p.info for p in parts], parts)
        if isinstance(node, gast.Dict):
            keys = [literal(Val(_code(k), None)) if k is not None else None for k in node.keys]
            if any(k is None or not isinstance(k, (str, int)) for k in keys):
                return self.opaque(node, env)
            values = [self.expr(v, env) for v in node.values]
            code = "{" + ", ".join(f"{k!r}: {v.code}" for k, v in zip(keys, values)) + "}"
            return Val(code, {k: v.info for k, v in zip(keys, values)})
        if isinstance(node, gast.Subscript):
            return self.subscript(node, env)
        if isinstance(node, gast.Attribute):
            return self.attribute(node, env)
        if isinstance(node, gast.Call):
            return self.call(node, env, effect)
        return self.opaque(node, env)

    def opaque(self, node: gast.AST, env: dict) -> Val:
        """An expression the transform leaves as written: refused if it reads a batched name."""
        reads = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        if any(is_batched(env[n]) for n in reads if n in env):
            raise self.refuse(node, f"a {type(node).__name__.lower()} that reads a batched value",
                              "write it with NumPy operations on whole arrays, or move it out of the function")
        return Val(_code(node), Info(False, None))

    def choice(self, node: gast.IfExp, env: dict) -> Val:
        test = self.expr(node.test, env)
        if is_batched(test.info):
            raise self.refuse(node, "a conditional expression whose test depends on a batched value",
                              "choose per example with np.where(test, a, b)")
        self.hoisting += 1
        try:
            body, orelse = self.expr(node.body, env), self.expr(node.orelse, env)
        finally:
            self.hoisting -= 1
        info = join(body.info, orelse.info)
        body, orelse = self.coerced(body, info), self.coerced(orelse, info)
        return Val(f"{_wrap(body.code)} if {_wrap(test.code)} else {_wrap(orelse.code)}", info)

    def subscript(self, node: gast.Subscript, env: dict) -> Val:
        value = self.expr(node.value, env)
        index = node.slice
        if not isinstance(value.info, Info):
            key = literal(Val(_code(index), None))
            info = value.info
            if isinstance(info, dict) and key in info or isinstance(info, (tuple, list)) and isinstance(key, int) \
                    and -len(info) <= key < len(info):
                return Val(f"{_wrap(value.code)}[{_code(index)}]", info[key])
            members = list(info.values()) if isinstance(info, dict) else list(info)
            if isinstance(key, slice) or not members:
                return self.opaque(node, env)
            common = members[0]
            for m in members[1:]:
                common = join(common, m)
            selector = self.expr(index, env)
            if is_batched(selector.info):
                raise self.refuse(node, "choosing from a container by a batched index", "use np.stack and indexing")
            return Val(f"{_wrap(value.code)}[{selector.code}]", common)
        parts = index.elts if isinstance(index, gast.Tuple) else [index]
        codes, kinds, batched_index = [], [], False
        for part in parts:
            if isinstance(part, gast.Slice):
                bounds = [self.expr(b, env) for b in (part.lower, part.upper, part.step) if b is not None]
                batched_index |= any(is_batched(b.info) for b in bounds)
                codes.append(_code(part))
                kinds.append("slice")
            elif isinstance(part, gast.Constant) and part.value is None:
                codes.append("None")
                kinds.append("new")
            elif isinstance(part, gast.Constant) and part.value is Ellipsis:
                codes.append("...")
                kinds.append("ellipsis")
            else:
                got = self.expr(part, env)
                batched_index |= is_batched(got.info)
                codes.append(got.code)
                # an index of unknown kind (a tuple? a slice object?) means something else with one more axis
                known = isinstance(got.info, Info) and got.info.rank is not None
                kinds.append("unknown" if not known else "int" if got.info.rank == 0 else "array")
        if not value.info.batched and not batched_index:
            return Val(f"{_wrap(value.code)}[{', '.join(codes)}]", Info(False, _indexed_rank(value.info.rank, kinds)))
        advanced = [k for k, kind in enumerate(kinds) if kind in ("int", "array")]
        contiguous = not advanced or advanced == list(range(advanced[0], advanced[-1] + 1))
        if batched_index or not value.info.batched or ("array" in kinds and not contiguous) or "unknown" in kinds:
            index_val = self._index_value(index, parts, env)  # batched parts taken example by example too
            return self.fallback(node, lambda a: f"{a[0]}[{a[1]}]", [value, index_val], {})
        return Val(f"{_wrap(value.code)}[:, {', '.join(codes)}]", Info(True, _indexed_rank(value.info.rank, kinds)))

    def _index_value(self, index: gast.AST, parts: list, env: dict) -> Val:
        vals = []
        for part in parts:
            if isinstance(part, gast.Slice):
                bounds = [self.expr(b, env) if b is not None else Val("None", Info(False, None))
                          for b in (part.lower, part.upper, part.step)]
                if any(is_batched(b.info) for b in bounds):
                    raise self.refuse(part, "a slice with batched bounds", "the examples' results would differ in "
                                                                          "shape; slice before the call")
                vals.append(Val(f"slice({', '.join(b.code for b in bounds)})", Info(False, None)))
            else:
                vals.append(self.expr(part, env))
        if not isinstance(index, gast.Tuple):
            return vals[0]
        return Display(f"({', '.join(v.code for v in vals)},)", tuple(v.info for v in vals), tuple(vals))

    def attribute(self, node: gast.Attribute, env: dict) -> Val:
        obj = self.static(node)
        if obj is not _MISSING:
            return Val(_code(node), info_of(obj))
        value = self.expr(node.value, env)
        if not is_batched(value.info):
            info = value.info if node.attr in ("T", "real", "imag") else Info(False, None)
            if node.attr == "shape" and isinstance(value.info, Info) and value.info.rank is not None:
                info = tuple([Info(False, 0)] * value.info.rank)
            elif node.attr in ("ndim", "size"):
                info = Info(False, 0)
            return Val(f"{_wrap(value.code)}.{node.attr}", info)
        info, code = value.info, _wrap(value.code)
        if node.attr == "T":
            return self.primitive(node, "np.transpose", np.transpose, [value], {}, env)
        if node.attr in ("real", "imag"):
            return Val(f"{code}.{node.attr}", info)
        if node.attr == "shape":
            axes = Info(False, None) if info.rank is None else tuple([Info(False, 0)] * info.rank)
            return Val(f"np.shape({value.code})[1:]", axes)
        if node.attr == "ndim":
            return Val(str(info.rank) if info.rank is not None else f"np.ndim({value.code}) - 1", Info(False, 0))
        if node.attr == "size":
            return Val(f"np.size({value.code}) // {self.size}", Info(False, 0))
        if node.attr == "dtype":
            return Val(f"{code}.dtype", Info(False, None))
        return self.fallback(node, lambda a: f"{a[0]}.{node.attr}", [value], {})

    def static(self, node: gast.AST) -> Any:
        """The object a dotted name outside the function means (``np.linalg.norm``), or _MISSING."""
        if isinstance(node, gast.Name):
            if node.id in self._locals:
                return _MISSING
            return self.parsed.resolve(node.id)
        if isinstance(node, gast.Attribute):
            base = self.static(node.value)
            if base is _MISSING or not inspect.ismodule(base) and not isinstance(base, type):
                return _MISSING
            return getattr(base, node.attr, _MISSING)
        return _MISSING

    def call(self, node: gast.Call, env: dict, effect: bool) -> Val:
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return self._opaque_call(node, env, effect)
        func = self.static(node.func)
        args = [self.expr(a, env) for a in node.args]
        kwargs = {k.arg: self.expr(k.value, env) for k in node.keywords}
        if func is _MISSING and isinstance(node.func, gast.Attribute) and node.func.attr in _KEEP_SHAPE:
            receiver = self.expr(node.func.value, env)
            if isinstance(receiver.info, Info) and not any(is_batched(a.info) for a in [*args, *kwargs.values()]):
                shown = _call(f"{_wrap(receiver.code)}.{node.func.attr}", [a.code for a in args],
                              [f"{k}={v.code}" for k, v in kwargs.items()])
                return Val(shown, receiver.info)
        if func is _MISSING and isinstance(node.func, gast.Attribute) and node.func.attr in _METHODS:
            receiver = self.expr(node.func.value, env)
            if isinstance(receiver.info, Info) and (receiver.info.batched or receiver.info.rank is not None):
                if node.func.attr in _SHAPED and len(args) > 1 or (
                        node.func.attr == "transpose" and len(args) == 1 and
                        isinstance(args[0].info, Info) and args[0].info.rank == 0):
                    args = [Display(f"({', '.join(a.code for a in args)},)", tuple(a.info for a in args),
                                    tuple(args))]
                name = f"np.{node.func.attr}"
                found = self.primitive(node, name, _METHODS[node.func.attr], [receiver] + args, kwargs, env,
                                       effect, _code(node))
                return found
        if func is _MISSING:
            receiver_batched = isinstance(node.func, gast.Attribute) and is_batched(self.expr(node.func.value, env).info)
            if receiver_batched or isinstance(node.func, gast.Name) and node.func.id in env and is_batched(
                    env[node.func.id]):
                raise self.refuse(node, "calling a method of a batched value",
                                  "call the NumPy function of the same name on it (np.sum(x) for x.sum())")
            callee = Val(_code(node.func), Info(False, None))
            return self.primitive(node, callee.code, None, args, kwargs, env, effect)
        module = getattr(func, "__module__", None) or ""
        if module.startswith("numpy.random") or type(func).__module__.startswith("numpy.random"):
            raise self.refuse(node, "drawing random numbers", "draw them for the whole batch before the call and pass "
                                                                  "them in as a batched argument")
        return self.primitive(node, _code(node.func), func, args, kwargs, env, effect)

    def _opaque_call(self, node: gast.Call, env: dict, effect: bool) -> Val:
        value = self.opaque(node, env)
        if effect:
            return value
        return value

    def primitive(self, node: gast.AST, name: str, func: Any, args: list[Val], kwargs: dict[str, Val], env: dict,
                  effect: bool = False, original: str | None = None) -> Val:
        batched = any(is_batched(a.info) for a in args) or any(is_batched(v.info) for v in kwargs.values())
        if effect:
            return self.fallback(node, lambda a, kw=kwargs: _call(name, a, list(kw)), [*args, *kwargs.values()],
                                 {}, effect=True)
        rule = rule_for(func) if func is not None else None
        wrapped = [Val(_wrap(a.code), a.info) if not isinstance(a, Display) else a for a in args]
        kw = {k: Val(_wrap(v.code), v.info) for k, v in kwargs.items()}
        if rule is not None:
            found = rule(name, wrapped, kw, self.size)
            if found is not None:
                if not batched:
                    shown = original or _call(name, [a.code for a in args], [f"{k}={v.code}" for k, v in kwargs.items()],
                                              raw=True)
                    return Val(shown, found.info)
                return found
        if not batched:
            shown = original or _call(name, [a.code for a in args], [f"{k}={v.code}" for k, v in kwargs.items()],
                                      raw=True)
            return Val(shown, Info(False, None))
        if func is not None and inspect.isfunction(func) and not kwargs \
                and not (getattr(func, "__module__", None) or "").startswith(("numpy", "scipy")):
            done = self.nested(func, [a.info for a in args])
            if done is not None:
                function, info, loops = done
                self.loops += loops
                bound = self.fresh(f"{func.__name__}_vmap" if func.__name__.isidentifier() else "f_vmap")
                self.bindings[bound] = function
                return Val(f"{bound}({', '.join(a.code for a in args)})", info)
        names = list(kwargs)
        looped = self.fallback(node, lambda a: _call(name, a[:len(args)], [f"{k}={v}" for k, v in
                                                                           zip(names, a[len(args):])], raw=True),
                               [*args, *kwargs.values()], {})
        if rule is not None:  # the rule may still know the rank of one example's result
            one = rule(name, [_one_example(a) for a in wrapped], {k: _one_example(v) for k, v in kw.items()},
                       self.size)
            if one is not None and isinstance(one.info, Info):
                return Val(looped.code, Info(True, one.info.rank))
        return looped

    def fallback(self, node: gast.AST, build: Callable[[list[str]], str], args: list[Val], kwargs: dict,
                 effect: bool = False) -> Val:
        """The documented fallback: the call once per example, its batched arguments computed once before
        the statement, the results stacked."""
        k = self.fresh("k")
        self.loops += not effect
        codes = []
        for arg in args:
            if not is_batched(arg.info):
                codes.append(_wrap(arg.code))
                continue
            code = arg.code
            if not code.isidentifier():
                if self.hoisting:
                    raise self.refuse(node, "a call without a batching rule inside a conditional expression",
                                      "compute it in a statement of its own before the choice")
                temp = self.fresh("batched")
                self.pre.append(f"{temp} = {code}")
                code = temp
            codes.append(_per_example(code, arg.info, k))
        self._taken.discard(k)
        if effect:
            return Val(f"for {k} in range({self.size}):\n    {build(codes)}", Info(False, None))
        return Val(f"np.stack([{build(codes)} for {k} in range({self.size})])", Info(True, None))


def _call(name: str, args: list[str], keywords: list[str], raw: bool = False) -> str:
    return f"{name}({', '.join(list(args) + list(keywords))})"


def _unbatched(info: Any) -> Any:
    if isinstance(info, Info):
        return Info(False, info.rank)
    if isinstance(info, dict):
        return {k: _unbatched(v) for k, v in info.items()}
    return type(info)(_unbatched(v) for v in info)


def _one_example(val: Val) -> Val:
    """``val`` as one example sees it: the same source and ranks, nothing batched."""
    if isinstance(val, Display):
        return Display(val.code, _unbatched(val.info), tuple(_one_example(p) for p in val.parts))
    return Val(val.code, _unbatched(val.info))


def _per_example(code: str, info: Any, k: str) -> str:
    """The expression for example ``k`` of a batched value (a container: of each batched member)."""
    if isinstance(info, Info):
        return f"{code}[{k}]" if info.batched else code
    if isinstance(info, dict):
        return "{" + ", ".join(f"{key!r}: {_per_example(f'{code}[{key!r}]', i, k)}" for key, i in info.items()) + "}"
    items = [_per_example(f"{code}[{j}]", i, k) for j, i in enumerate(info)]
    return f"({', '.join(items)},)" if isinstance(info, tuple) else f"[{', '.join(items)}]"


def _indexed_rank(rank: Optional[int], kinds: list[str]) -> Optional[int]:
    if rank is None or "array" in kinds or "unknown" in kinds:
        return None
    return rank - kinds.count("int") + kinds.count("new")


def _jumps(stmt: gast.AST) -> bool:
    return any(isinstance(n, (gast.Break, gast.Continue)) for n in gast.walk(stmt))


def _indent(lines: list[str]) -> list[str]:
    return ["    " + line for sub in lines for line in sub.split("\n")]
