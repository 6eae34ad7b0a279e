"""The expressions of the vmap transform (transforms/batching.py): each rewritten by its primitive's
batching rule (rules/batching.py), left as written where it touches no batched value, or run once per
example (the loop fallback), its batched arguments computed once before the statement.

:class:`Expressions` is the half of :class:`~adsrc.transforms.batching.Batcher` that reads
expressions; the other half walks statements and keeps what is known of each name.
"""
from __future__ import annotations

import ast
import inspect
from typing import Any, Callable, Optional

import gast
import numpy as np

from ..frontend.parse import _MISSING
from ..rules.batching import (EXAMPLES_CHECK, Display, Info, Seq, Val, aligned, examples_are_arrays, is_batched, literal, rule_for)

__all__ = ["Expressions", "info_of", "NUMPY_NAME"]

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
_SHAPED = ("reshape", "transpose")  # methods that also take their tuple as separate arguments
_KEEP_SHAPE = ("astype", "round", "conjugate")  # methods whose result has the receiver's shape


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


class Expressions:
    """Rewriting expressions, for :class:`~adsrc.transforms.batching.Batcher` (which provides ``parsed``,
    ``size``, ``pre``, ``hoisting``, ``loops``, ``bindings``, ``nested``, ``fresh``, ``refuse`` and
    ``coerced``). ``reads`` collects what each name from outside meant, for the cache to check."""

    def expr(self, node: gast.AST, env: dict, effect: bool = False) -> Val:
        if isinstance(node, gast.Name):
            if node.id in env:
                return Val(node.id, env[node.id])
            value = self.parsed.resolve(node.id)
            self.reads[node.id] = value
            return Val(node.id, info_of(value))
        if isinstance(node, gast.Constant):
            return Val(_code(node), info_of(node.value))
        if isinstance(node, gast.BinOp):
            left, right = self.expr(node.left, env), self.expr(node.right, env)
            if isinstance(node.op, gast.MatMult):
                return self.primitive(node, "@", "@", [left, right], {}, env,
                                      original=f"{_wrap(left.code)} @ {_wrap(right.code)}")
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
        if isinstance(node, (gast.ListComp, gast.GeneratorExp)):
            return self.comprehension(node, env)
        return self.opaque(node, env)

    def comprehension(self, node: gast.ListComp | gast.GeneratorExp, env: dict) -> Val:
        """``[e for v in xs if c]``: the same comprehension with ``e`` batched, a list of items alike (a
        generator of batched values becomes a list, so that it can be read once per example). Each
        ``xs`` steps over an example's first axis; the conditions must be the same for every example."""
        reads = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Load)}
        if not any(is_batched(env[n]) for n in reads if n in env):
            return self.opaque(node, env)
        inner = dict(env)
        clauses = []
        first = self.expr(node.generators[0].iter, inner)  # evaluated once, before the items
        self.hoisting += 1  # the rest once per item: nothing of it may move before the statement
        try:
            for generator in node.generators:
                iterable = first if generator is node.generators[0] else self.expr(generator.iter, inner)
                element = self.element(iterable, generator)
                target = generator.target
                names = getattr(target, "elts", None)
                if isinstance(target, gast.Name):
                    inner[target.id] = element.info
                elif names is not None and all(isinstance(t, gast.Name) for t in names) and (
                        not is_batched(element.info) or isinstance(element.info, (tuple, list))
                        and len(element.info) == len(names)):
                    for j, t in enumerate(names):
                        inner[t.id] = element.info[j] if isinstance(element.info, (tuple, list)) else \
                            Info(False, None)
                else:
                    raise self.refuse(generator, "unpacking batched items in a comprehension",
                                      "unpack them in the comprehension's expression (p[0], p[1])")
                tests = [self.expr(test, inner) for test in generator.ifs]
                if any(is_batched(t.info) for t in tests):
                    raise self.refuse(generator, "a comprehension's condition that depends on a batched value",
                                      "choose per example with np.where")
                clauses.append(f"for {_code(target)} in {element.code}" + "".join(f" if {t.code}" for t in tests))
            item = self.expr(node.elt, inner)
        finally:
            self.hoisting -= 1
        return Val(f"[{item.code} {' '.join(clauses)}]", Seq(item.info))

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
        info = self.join(body.info, orelse.info, node)
        body, orelse = self.coerced(body, info), self.coerced(orelse, info)
        return Val(f"{_wrap(body.code)} if {_wrap(test.code)} else {_wrap(orelse.code)}", info)

    def subscript(self, node: gast.Subscript, env: dict) -> Val:
        value = self.expr(node.value, env)
        index = node.slice
        if isinstance(value.info, Seq):  # a comprehension's list: each item alike
            selector = self.expr(index, env) if not isinstance(index, gast.Slice) else None
            if selector is not None and is_batched(selector.info) or isinstance(index, gast.Slice) and any(
                    is_batched(self.expr(b, env).info) for b in (index.lower, index.upper, index.step) if b):
                raise self.refuse(node, "choosing from a list by a batched index", "use np.stack and indexing")
            info = value.info if isinstance(index, gast.Slice) else value.info.item
            return Val(f"{_wrap(value.code)}[{_code(index)}]", info)
        if not isinstance(value.info, Info):
            if isinstance(index, gast.Slice):  # a tuple's or list's slice: its items' infos, if the bounds are known
                bounds = [literal(Val(_code(b), None)) if b is not None else None
                          for b in (index.lower, index.upper, index.step)]
                if isinstance(value.info, (tuple, list)) and all(b is None or isinstance(b, int) for b in bounds):
                    return Val(f"{_wrap(value.code)}[{_code(index)}]", value.info[slice(*bounds)])
                return self.opaque(node, env)
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
                common = self.join(common, m, node)
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
            if node.id in self.imported:
                return self.imported[node.id]
            if node.id in self._locals:
                return _MISSING
            self.reads[node.id] = found = self.parsed.resolve(node.id)
            return found
        if isinstance(node, gast.Attribute):
            base = self.static(node.value)
            if base is _MISSING or not inspect.ismodule(base) and not isinstance(base, type):
                return _MISSING
            return getattr(base, node.attr, _MISSING)
        return _MISSING

    def call(self, node: gast.Call, env: dict, effect: bool) -> Val:
        if any(isinstance(a, gast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
            return self.opaque(node, env)  # f(*xs), f(**kw): left as written, refused if it reads a batched value
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

    def primitive(self, node: gast.AST, name: str, func: Any, args: list[Val], kwargs: dict[str, Val], env: dict,
                  effect: bool = False, original: str | None = None) -> Val:
        batched = any(is_batched(a.info) for a in args) or any(is_batched(v.info) for v in kwargs.values())
        names, count = list(kwargs), len(args)

        def per_example(codes: list[str]) -> str:  # the call of one example, given its arguments' codes
            if name == "@":
                return f"{codes[0]} @ {codes[1]}"
            return _call(name, codes[:count], [f"{k}={v}" for k, v in zip(names, codes[count:])])

        if effect:
            return self.fallback(node, per_example, [*args, *kwargs.values()], {}, effect=True)
        rule = rule_for(func) if func is not None else None
        wrapped = [Val(_wrap(a.code), a.info) if not isinstance(a, Display) else a for a in args]
        kw = {k: Val(_wrap(v.code), v.info) for k, v in kwargs.items()}
        if rule is not None:
            found = rule(name, wrapped, kw, self.size)
            if found is not None:
                if not batched:
                    shown = original or _call(name, [a.code for a in args], [f"{k}={v.code}" for k, v in kwargs.items()])
                    return Val(shown, found.info)
                return found
        if not batched:
            shown = original or _call(name, [a.code for a in args], [f"{k}={v.code}" for k, v in kwargs.items()])
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
        rank = None
        if rule is not None:  # the rule may still know the rank of one example's result: an array's
            one = rule(name, [_one_example(a) for a in wrapped], {k: _one_example(v) for k, v in kw.items()},
                       self.size)
            if one is not None and isinstance(one.info, Info) and one.info.rank is not None:
                rank = one.info.rank
        looped = self.fallback(node, per_example, [*args, *kwargs.values()], {}, known=rank is not None)
        return Val(looped.code, Info(True, rank))

    def fallback(self, node: gast.AST, build: Callable[[list[str]], str], args: list[Val], kwargs: dict,
                 effect: bool = False, known: bool = False) -> Val:
        """The documented fallback: the call once per example, its batched arguments computed once before
        the statement, the results stacked. Unless a rule ``known`` them to be arrays, the results are
        checked to be arrays or numbers when they are made: stacked, a list would become an array, on which
        ``+`` means something else."""
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
                    raise self.refuse(node, "a call without a batching rule inside a conditional expression or "
                                            "a comprehension", "compute it in a statement of its own before")
                temp = self.fresh("batched")
                self.pre.append(f"{temp} = {code}")
                code = temp
            codes.append(_per_example(code, arg.info, k))
        self._taken.discard(k)
        if effect:
            return Val(f"for {k} in range({self.size}):\n    {build(codes)}", Info(False, None))
        results = f"[{build(codes)} for {k} in range({self.size})]"
        if not known:
            if self.hoisting:
                raise self.refuse(node, "a call without a batching rule inside a conditional expression or a "
                                        "comprehension", "compute it in a statement of its own before")
            temp = self.fresh("per_example")
            self.pre += [f"{temp} = {results}", f"{EXAMPLES_CHECK}({temp}, {self.parsed.where(node)!r})"]
            self.bindings[EXAMPLES_CHECK] = examples_are_arrays
            results = temp
        return Val(f"np.stack({results})", Info(True, None))


def _call(name: str, args: list[str], keywords: list[str]) -> str:
    return f"{name}({', '.join(list(args) + list(keywords))})"


def _unbatched(info: Any) -> Any:
    if isinstance(info, Info):
        return Info(False, info.rank)
    if isinstance(info, Seq):
        return Seq(_unbatched(info.item))
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
    if isinstance(info, Seq):
        return f"[{_per_example('each', info.item, k)} for each in {code}]"
    if isinstance(info, dict):
        return "{" + ", ".join(f"{key!r}: {_per_example(f'{code}[{key!r}]', i, k)}" for key, i in info.items()) + "}"
    items = [_per_example(f"{code}[{j}]", i, k) for j, i in enumerate(info)]
    return f"({', '.join(items)},)" if isinstance(info, tuple) else f"[{', '.join(items)}]"


def _indexed_rank(rank: Optional[int], kinds: list[str]) -> Optional[int]:
    if rank is None or "array" in kinds or "unknown" in kinds:
        return None
    return rank - kinds.count("int") + kinds.count("new")
