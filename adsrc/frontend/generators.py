"""Generator functions the differentiated function calls, run to their end where they are called.

A call ``g(a)`` of a generator function (``def g(p): ... yield v ...``),
defined inside the differentiated function or at module level in its file,
where a loop, a comprehension, ``*`` or a builtin that consumes it at once
(``list``, ``tuple``, ``sum``, ``zip``...) takes the generator it makes,
becomes a call of the list-making function it stands for: the same body,
``yield v`` appending ``v`` to a fresh list and ``yield from xs`` appending
each item of ``xs``, the list returned at the end. That function is then a
local function, inlined at its calls (inline.py), so the gradient flows
through what is yielded. A generator defined at module level is copied into
the function with its free names and default values bound to the objects
they are in its own module, and so are the module-level generators it calls
(``for p in pieces(v)``, ``yield from pieces(v)``), each copied once.

As for a generator expression (comprehensions.py), the generator runs to
its end where it is called, before the loop that consumes it: the values are
Python's, since the functions adsrc differentiates change nothing they are
given (effects.py). So a generator is refused (UnsupportedSyntax) where
running it to its end could differ: one with a ``while`` loop (it may not
end), a ``return`` before its last statement, ``yield`` used as a value
(``x = yield v``), or one that is used in any other way (kept, passed,
given to ``next``).
"""
from __future__ import annotations

import copy
import inspect
import operator

import gast

from ..errors import UnsupportedSyntax
from ..ir.build import assign, located, name, store
from ..ir.naming import Namer, free_names
from .parse import OutsideName, Parsed, parse_function

# Builtins that take their iterable whole, at once, as their first argument.
_CONSUMERS = ("list", "tuple", "sum", "sorted", "min", "max", "zip", "enumerate", "dict", "set", "any", "all")


def _is_generator(fn: gast.FunctionDef) -> bool:
    own = [n for stmt in fn.body for n in _own_nodes(stmt)]
    return any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in own)


def _own_nodes(node: gast.AST):
    """The nodes of ``node`` outside the functions and lambdas nested in it."""
    yield node
    for child in gast.iter_child_nodes(node):
        if not isinstance(child, (gast.FunctionDef, gast.Lambda)):
            yield from _own_nodes(child)


class _Lowering:
    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed, self.namer = parsed, namer
        self.copied: dict[int, str] = {}  # id of a module-level generator function -> its local copy's name
        self.definitions: list[gast.stmt] = []
        node = parsed.node
        self.caller_bound = {a.id for a in node.args.args} | {
            n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)} | {
            n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef)}

    def fail(self, node: gast.AST, construct: str, hint: str, parsed: Parsed | None = None) -> None:
        raise UnsupportedSyntax(construct, (parsed or self.parsed).where(node), hint)

    def as_list_function(self, fn: gast.FunctionDef, parsed: Parsed) -> None:
        """Rewrite the generator function ``fn`` in place into the function returning the list of what it yields."""
        items = self.namer.fresh("yielded")
        for node in (n for stmt in fn.body for n in _own_nodes(stmt)):
            if isinstance(node, gast.While):
                self.fail(node, f"a while loop in the generator {fn.name}",
                          "adsrc runs a generator to its end where it is called, so it must end: loop with for")
            if isinstance(node, (gast.Yield, gast.YieldFrom)) and not self._statement_yield(fn, node):
                self.fail(node, f"yield used as a value in the generator {fn.name}",
                          "yield as a statement of its own")
        returns = [n for stmt in fn.body for n in _own_nodes(stmt) if isinstance(n, gast.Return)]
        if any(r is not fn.body[-1] or r.value is not None for r in returns):
            self.fail(returns[0], f"a return in the generator {fn.name} before its end, or with a value",
                      "end it by falling off its last statement")
        body = [s for s in fn.body if not isinstance(s, gast.Return)]
        fn.body = located([assign(items, gast.List(elts=[], ctx=gast.Load()), fn)], fn) \
            + self._appending(body, items) + located([gast.Return(value=name(items))], fn.body[-1])

    def _statement_yield(self, fn: gast.FunctionDef, node: gast.AST) -> bool:
        return any(isinstance(s, gast.Expr) and s.value is node for stmt in fn.body for s in _own_nodes(stmt))

    def _appending(self, stmts: list[gast.stmt], items: str) -> list[gast.stmt]:
        out = []
        for stmt in stmts:
            if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Yield):
                value = stmt.value.value or gast.Constant(value=None, kind=None)
                out.extend(located([gast.Expr(value=gast.Call(func=gast.Attribute(
                    value=name(items), attr="append", ctx=gast.Load()), args=[value], keywords=[]))], stmt))
                continue
            if isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.YieldFrom):
                each = self.namer.fresh("item")
                append = gast.Expr(value=gast.Call(func=gast.Attribute(value=name(items), attr="append",
                                                                       ctx=gast.Load()), args=[name(each)], keywords=[]))
                out.extend(located([gast.For(target=store(each), iter=stmt.value.value, body=[append], orelse=[],
                                             type_comment=None)], stmt))
                continue
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.With)) and hasattr(stmt, field):
                    setattr(stmt, field, self._appending(getattr(stmt, field), items))
            out.append(stmt)
        return out

    def module_copy(self, func, call: gast.Call) -> str:
        """The name of the local copy of the module-level generator function ``func``, made on first use."""
        if id(func) in self.copied:
            return self.copied[id(func)]
        if getattr(func, "__code__", None) is None or func.__code__.co_filename != self.parsed.func.__code__.co_filename:
            self.fail(call, f"calling the generator function {getattr(func, '__name__', func)} from another file",
                      "define it in the differentiated function's file, or make it return a list")
        code = func.__code__
        if code.co_freevars or code.co_kwonlyargcount or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS):
            self.fail(call, f"calling the generator function {func.__name__}, a closure or with *args, **kwargs or "
                            "keyword-only parameters", "define it at module level with plain parameters")
        theirs = parse_function(func)
        fn = copy_module_function(self.parsed, self.namer, func, theirs, self.caller_bound)
        self.copied[id(func)] = fn.name
        self.as_list_function(fn, theirs)
        own = {a.id for a in fn.args.args} | {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)
                                               and not isinstance(n.ctx, gast.Load)}
        self.lower_module_calls(fn, own, theirs)  # the generators it calls in turn (copied before it)
        self.definitions.append(fn)
        return fn.name

    def lower_module_calls(self, root: gast.AST, bound: set[str], parsed: Parsed) -> None:
        """Each call in ``root`` of a module-level generator function (a name ``root`` does not bind) becomes a
        call of its list-making local copy; refused where it is not consumed at once."""
        consumed = _consumed_calls(root)
        for n in list(gast.walk(root)):
            if not (isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id not in bound):
                continue
            func = self.parsed.resolve(n.func.id)
            if not inspect.isgeneratorfunction(func):
                continue
            if id(n) not in consumed:
                self.fail(n, f"the generator {n.func.id}(...) used other than by a loop or a call that takes it "
                             "whole", "iterate over it (`for v in g(...)`), or make a list of it (`list(g(...))`)",
                          parsed)
            if n.func.id not in self.parsed.copied:
                self.parsed.copied.append(n.func.id)  # rebinding it must compile again (the cache checks it)
            n.func = gast.copy_location(name(self.module_copy(func, n)), n.func)


def copy_module_function(parsed: Parsed, namer: Namer, func, theirs: Parsed, caller_bound: set[str]) -> gast.FunctionDef:
    """A copy of the module-level function ``func`` (parsed as ``theirs``) to define inside ``parsed``'s
    function under a fresh name: each free name that the caller binds itself or resolves to another
    object is renamed to a slot holding what it is in ``func``'s module, and the defaults are slots too."""
    fn = copy.deepcopy(theirs.node)
    fn.name = namer.fresh(func.__name__)
    bound = {a.id for a in fn.args.args} | {n.id for stmt in fn.body for n in gast.walk(stmt)
                                              if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    mapping = {}
    for free in free_names(fn):
        if free not in bound and (free in caller_bound or theirs.resolve(free) is not parsed.resolve(free)):
            mapping[free] = namer.fresh(free)
            parsed.closure[mapping[free]] = theirs.resolve(free)
            parsed.helpers.add(mapping[free])  # the cache checks what the name means in func instead
            parsed.checked.append((func, OutsideName(free), theirs.resolve(free)))
    for node in gast.walk(fn):
        if isinstance(node, gast.Name) and node.id in mapping:
            node.id = mapping[node.id]
    defaults = []
    if func.__defaults__:
        parsed.checked.append((func, operator.attrgetter("__defaults__"), func.__defaults__))
    for value in func.__defaults__ or ():
        slot = namer.fresh(f"{func.__name__}_default")
        parsed.closure[slot] = value
        parsed.helpers.add(slot)  # func's own default: the cache checks func.__defaults__ instead
        defaults.append(name(slot))
    fn.args.defaults = defaults
    return fn


def _consumed_calls(node: gast.FunctionDef) -> set[int]:
    """The ids of the calls whose result a loop, a comprehension, ``*`` or a consuming builtin takes at once."""
    out = set()
    for n in gast.walk(node):
        if isinstance(n, gast.For):
            out.add(id(n.iter))
        elif isinstance(n, gast.comprehension):
            out.add(id(n.iter))
        elif isinstance(n, gast.Starred) and isinstance(n.ctx, gast.Load):
            out.add(id(n.value))
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Name) and n.func.id in _CONSUMERS:
            out.update(id(a) for a in n.args if n.func.id in ("zip",) or a is n.args[0])
    return out


def lower_generators(parsed: Parsed, namer: Namer) -> None:
    """Rewrite, in place, the generator functions ``parsed`` defines or calls (see the module's docstring)."""
    node = parsed.node
    lowering = _Lowering(parsed, namer)
    local = {s.name: s for s in node.body if isinstance(s, gast.FunctionDef) and _is_generator(s)}
    for fn in local.values():
        lowering.as_list_function(fn, parsed)
    consumed = _consumed_calls(node)
    for n in list(gast.walk(node)):
        if isinstance(n, gast.Name) and n.id in local and isinstance(n.ctx, gast.Load):
            calls = [c for c in gast.walk(node) if isinstance(c, gast.Call) and c.func is n]
            if not calls or id(calls[0]) not in consumed:
                lowering.fail(n, f"the generator {n.id} used other than by a loop or a call that takes it whole",
                              "iterate over it (`for v in g(...)`), or make a list of it (`list(g(...))`)")
    lowering.lower_module_calls(node, lowering.caller_bound | set(local), parsed)
    node.body = lowering.definitions + node.body
