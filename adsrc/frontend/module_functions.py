"""Small helper functions of the same file, copied in where they are called, so that one adjoint sees it all.

A call ``field(y, k)`` of a function defined at module level in the
differentiated function's file would otherwise run that function's own
adjoint: a call at each step of a loop, returning a pullback, whose values'
kinds the caller's specialization cannot see. Written as a local function
instead (``def field(y): ...`` inside), the same code is inlined
(inline.py) and specialized with the rest. This pass makes the two spellings
one: it copies such a function into the differentiated function as a local
function (its free names bound to what they are in its module, as
generators.py does for a module-level generator) and the call then calls
the copy, which inline.py inlines. The module-level name stays a read that
the compile cache checks, so rebinding it compiles again.

Only straight-line arithmetic is copied, which runs the same inlined as
called: a plain function (no rule registered for it, no closure, no
``*args``, ``**kwargs`` or keyword-only parameters, no decorator) whose body
is assignments to its own names and one ``return`` at the end, at most
MAX_STATEMENTS of them, calling only functions of modules (``np.sin``), a
few pure builtins and other such functions of the file (none of those being
copied: no recursion), called with plain arguments, one of them a value of
the caller's, not in a ``while`` condition, its result not updated in place
afterwards. Anything else keeps its call, and its own adjoint, as before.
Copies nest up to MAX_DEPTH calls deep.
"""
from __future__ import annotations

import inspect
import types

import gast

from ..ir.build import name
from ..ir.naming import Namer
from ..rules import registry
from .generators import copy_module_function
from .parse import Parsed, parse_function

MAX_STATEMENTS = 40
MAX_DEPTH = 3

__all__ = ["inline_module_functions"]


def inline_module_functions(parsed: Parsed, namer: Namer) -> None:
    """Copy the small module-level functions ``parsed``'s function calls into it (see the module docstring)."""
    node = parsed.node
    caller_bound = {a.id for a in node.args.args + node.args.kwonlyargs} | {
        n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)} | {
        n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef)}
    copies: dict[int, str] = {}
    definitions: list[gast.stmt] = []
    # A result later updated in place stays a call: its own adjoint knows it is a new array, which the
    # caller's alias analysis would not know of the copied code's names.
    updated = _updated_in_place(node)
    kept = {id(stmt.value) for stmt in gast.walk(node) if isinstance(stmt, gast.Assign)
            and any(isinstance(n, gast.Name) and n.id in updated for t in stmt.targets for n in gast.walk(t))}

    def visit(tree: gast.AST, chain: tuple, depth: int) -> None:
        in_while_tests = {id(n) for w in gast.walk(tree) if isinstance(w, gast.While) for n in gast.walk(w.test)}
        bound = caller_bound if tree is node else caller_bound | {a.id for a in tree.args.args} | {
            n.id for n in gast.walk(tree) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
        for call in [n for n in gast.walk(tree) if isinstance(n, gast.Call)]:
            func_name = call.func.id if isinstance(call.func, gast.Name) else None
            if func_name is None or func_name in bound or id(call) in in_while_tests or id(call) in kept:
                continue
            func = parsed.resolve(func_name)
            if not _copyable(func, parsed, chain) or not _plain_call(call, func, bound):
                continue
            if id(func) not in copies:
                try:
                    theirs = parse_function(func)
                except Exception:  # no source to read: its own adjoint says why, as before
                    continue
                if not _plain_body(theirs.node, theirs.resolve):
                    continue
                fn = copy_module_function(parsed, namer, func, theirs, caller_bound)
                _rename_own_names(fn, {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}, namer)
                copies[id(func)] = fn.name
                if depth + 1 < MAX_DEPTH:
                    visit(fn, chain + (func,), depth + 1)
                definitions.append(fn)
            if func_name not in parsed.copied:
                parsed.copied.append(func_name)  # rebinding it must compile again (the cache checks it)
            call.func = gast.copy_location(name(copies[id(func)]), call.func)

    visit(node, (parsed.func,), 0)
    node.body = definitions + node.body
    _spell_as_called(node, copies, parsed, caller_bound)


def _spell_as_called(node: gast.FunctionDef, copies: dict[int, str], parsed: Parsed, caller_bound: set[str]) -> None:
    """Name each copy as the function it copies where nothing else in the function reads or binds that
    name (it is then only ever called, now the copy): the generated code and the errors read ``keep(xs)``
    as the user wrote it, not ``keep_1(xs)``."""
    loaded = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    by_copy = {fresh: func_id for func_id, fresh in copies.items()}
    renamed: dict[str, str] = {}
    for fn in (s for s in node.body if isinstance(s, gast.FunctionDef) and s.name in by_copy):
        original = next((k for k in parsed.copied if id(parsed.resolve(k)) == by_copy[fn.name]), None)
        if original is None or original in loaded or original in caller_bound or original in renamed.values():
            continue
        renamed[fn.name] = original
    for n in gast.walk(node):
        if isinstance(n, gast.Name) and n.id in renamed:
            n.id = renamed[n.id]
        elif isinstance(n, gast.FunctionDef) and n.name in renamed:
            n.name = renamed[n.name]


def _rename_own_names(fn: gast.FunctionDef, taken: set[str], namer: Namer) -> None:
    """Give the copy's parameters and locals that the caller also spells fresh names: a name the caller
    reads from its closure (``lambda p: helper(p, X)``) must stay free in the caller."""
    own = {a.id for a in fn.args.args} | {n.id for n in gast.walk(fn) if isinstance(n, gast.Name)
                                          and not isinstance(n.ctx, gast.Load)}
    mapping = {k: namer.fresh(k) for k in sorted(own & taken)}
    for n in gast.walk(fn):
        if isinstance(n, gast.Name) and n.id in mapping:
            n.id = mapping[n.id]


# Methods of arrays, lists and dicts that change their receiver.
_IN_PLACE_METHODS = frozenset({"sort", "fill", "put", "resize", "itemset", "setflags", "partition", "byteswap",
                               "append", "extend", "insert", "pop", "remove", "clear", "reverse", "update",
                               "setdefault", "popitem", "__setitem__", "__iadd__", "__imul__"})


def _updated_in_place(node: gast.FunctionDef) -> set[str]:
    """The names the function changes the value of in place: ``y += 1``, ``y[0] = 0``, ``y.sort()``,
    ``y.append(v)``, ``np.add.at(y, ...)``, or ``out=y``."""
    out = set()
    for n in gast.walk(node):
        if isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name):
            out.add(n.target.id)
        elif isinstance(n, (gast.Subscript, gast.Attribute)) and isinstance(n.ctx, gast.Store):
            base = n.value
            while isinstance(base, (gast.Subscript, gast.Attribute)):
                base = base.value
            if isinstance(base, gast.Name):
                out.add(base.id)
        elif isinstance(n, gast.Call) and isinstance(n.func, gast.Attribute):
            if isinstance(n.func.value, gast.Name) and n.func.attr in _IN_PLACE_METHODS:
                out.add(n.func.value.id)
            if n.func.attr == "at":  # np.add.at(y, i, v)
                out.update(a.id for a in n.args[:1] if isinstance(a, gast.Name))
        if isinstance(n, gast.Call):
            out.update(k.value.id for k in n.keywords if k.arg == "out" and isinstance(k.value, gast.Name))
    return out


def _copyable(func, parsed: Parsed, chain: tuple) -> bool:
    if type(func) is not types.FunctionType or func in chain or hasattr(func, "__wrapped__"):
        return False
    code = func.__code__
    if code.co_filename != parsed.func.__code__.co_filename or code.co_freevars or code.co_kwonlyargcount \
            or code.co_flags & (inspect.CO_VARARGS | inspect.CO_VARKEYWORDS | inspect.CO_GENERATOR
                                | inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR) or func.__name__ == "<lambda>":
        return False
    try:
        # a rule registered for it (or its registration as nondifferentiable) is what differentiates it
        return registry.lookup(func) is None and not registry.is_nondifferentiable(func)
    except TypeError:
        return False


def _plain_call(call: gast.Call, func, bound: set[str]) -> bool:
    """Arguments Python binds plainly, one of them a value of the caller's (a call of constants alone
    computes nothing to differentiate: it keeps its call)."""
    params = func.__code__.co_varnames[:func.__code__.co_argcount]
    values = [*call.args, *(k.value for k in call.keywords)]
    return not any(isinstance(a, gast.Starred) for a in call.args) and len(call.args) <= len(params) \
        and all(k.arg is not None and k.arg in params[len(call.args):] for k in call.keywords) \
        and any(isinstance(n, gast.Name) and n.id in bound for v in values for n in gast.walk(v))


def _plain_body(fn: gast.FunctionDef, resolve) -> bool:
    """Straight-line arithmetic: assignments to its own names and one return at the end, whose calls are of
    functions of modules (``np.sin``) or builtins, or of other module functions of the file; no
    attribute or item is written, no method of anything but an array it computed is called."""
    if fn.decorator_list or len(fn.body) > MAX_STATEMENTS or not fn.body \
            or not isinstance(fn.body[-1], gast.Return) or fn.body[-1].value is None:
        return False
    own = {a.id for a in fn.args.args}
    for stmt in fn.body[:-1]:
        if not (isinstance(stmt, gast.Assign) and all(isinstance(t, gast.Name) for t in stmt.targets)):
            return False
        own.update(t.id for t in stmt.targets)
    forbidden = (gast.Lambda, gast.Yield, gast.YieldFrom, gast.NamedExpr, gast.ListComp, gast.SetComp,
                 gast.DictComp, gast.GeneratorExp, gast.Await, gast.Starred)
    for stmt in fn.body:
        for n in gast.walk(stmt):
            if isinstance(n, forbidden):
                return False
            if isinstance(n, gast.Call) and not _pure_callee(n.func, own, resolve):
                return False
    return True


def _pure_callee(func: gast.expr, own: set[str], resolve) -> bool:
    if isinstance(func, gast.Attribute):  # np.sin, np.linalg.norm: a module's function; w.T.dot: not kept
        base = func.value
        while isinstance(base, gast.Attribute):
            base = base.value
        return isinstance(base, gast.Name) and base.id not in own and isinstance(resolve(base.id), types.ModuleType)
    if isinstance(func, gast.Name) and func.id not in own:
        found = resolve(func.id)
        return isinstance(found, types.BuiltinFunctionType) and func.id in _PURE_BUILTINS \
            or type(found) is types.FunctionType
    return False


_PURE_BUILTINS = frozenset({"abs", "min", "max", "sum", "len", "float", "int", "pow", "round"})
