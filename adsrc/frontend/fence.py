"""Syntax fence: reject every construct the compiler cannot differentiate, up front.

Input: a parsed FunctionDef. Output: nothing; raises UnsupportedSyntax naming
the first unsupported construct and its original ``file:line:col`` before any
code runs. The fence is an allowlist, so a construct added to Python later is
rejected rather than silently mistranslated.

Besides syntax, the fence rejects calls that would change an object behind the
compiler's back, since gradients would then be silently wrong: ``setattr`` and
``delattr``, ``exec`` and ``eval``, methods that mutate their object
(``xs.append(v)``, ``a.fill(0)``, ``a.sort()``, ``obj.__setitem__(...)``),
NumPy functions that write into an argument (``np.copyto``, ``np.add.at``, ...)
and any ``out=`` argument. A name the function assigns itself is never taken
for the builtin or global of the same name.
"""
from __future__ import annotations

import builtins
import random
import types

import gast
import numpy as np

from ..errors import UnsupportedSyntax
from .parse import _MISSING, Parsed

_NAMES = {
    "Try": "try/except", "TryStar": "try/except*", "With": "a with statement",
    "AsyncWith": "async with", "AsyncFor": "async for", "Await": "await",
    "AsyncFunctionDef": "an async function", "Yield": "yield", "YieldFrom": "yield from",
    "Global": "global", "Nonlocal": "nonlocal", "ClassDef": "a class definition",
    "Delete": "del", "NamedExpr": "the walrus operator (:=)", "Match": "match",
    "Import": "import inside the function", "ImportFrom": "import inside the function",
    "FunctionDef": "a nested function definition", "Lambda": "lambda",
    "Dict": "a dict literal", "Set": "a set literal", "DictComp": "a dict comprehension",
    "SetComp": "a set comprehension", "ListComp": "a list comprehension outside sum(...)",
    "GeneratorExp": "a generator expression outside sum(...)", "Starred": "star-unpacking",
}

# Builtins whose effect the compiler cannot see: name -> construct.
_OPAQUE_BUILTINS = {
    "setattr": ("setattr", "it changes an object behind the compiler's back; return the new value instead"),
    "delattr": ("delattr", "it changes an object behind the compiler's back"),
    "exec": ("exec", "the compiler cannot see the code it runs"),
    "eval": ("eval", "the compiler cannot see the code it evaluates; write the expression itself"),
}

# Methods that change the object they are called on (lists, dicts, sets, arrays).
# Functions that return a new array (never a view of an argument), so that an
# array made by one of them may be written with x[i] = v.
_FRESH_ARRAYS = {
    "zeros", "ones", "empty", "full", "zeros_like", "ones_like", "empty_like", "full_like",
    "array", "copy", "arange", "linspace", "eye", "identity", "tile", "concatenate", "stack",
}
_FRESH_CALLABLES = (np.zeros, np.ones, np.empty, np.full, np.array, np.copy, np.eye, np.identity)

# Methods and NumPy functions whose result may be a view sharing the argument's memory.
_VIEW_METHODS = {"reshape", "transpose", "ravel", "squeeze", "swapaxes", "view", "diagonal", "T", "real"}
_VIEW_FUNCTIONS = {
    "reshape", "transpose", "ravel", "squeeze", "expand_dims", "swapaxes", "moveaxis", "broadcast_to",
    "diagonal", "atleast_1d", "atleast_2d", "atleast_3d", "asarray", "real", "imag", "split", "array_split",
}

_MUTATING_METHODS = {
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
    "setdefault", "popitem", "add", "discard", "fill", "resize", "put", "itemset",
    "setflags", "partition", "shuffle", "__setattr__", "__delattr__", "__setitem__", "__delitem__",
    "__iadd__", "__isub__", "__imul__", "__itruediv__", "__ifloordiv__", "__imatmul__",
    "__ipow__", "__imod__",
}

# Functions that write into one of their arguments.
_INPLACE_FUNCTIONS = {
    id(f): label for f, label in [
        (np.copyto, "np.copyto"), (np.put, "np.put"), (np.place, "np.place"),
        (np.putmask, "np.putmask"), (np.fill_diagonal, "np.fill_diagonal"),
        (np.put_along_axis, "np.put_along_axis"), (np.random.shuffle, "np.random.shuffle"),
        (random.shuffle, "random.shuffle"), (object.__setattr__, "object.__setattr__"),
        (object.__delattr__, "object.__delattr__"),
    ]
}

_STATEMENTS = (
    gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.If, gast.For,
    gast.While, gast.Break, gast.Continue, gast.Return, gast.Pass, gast.Assert, gast.Raise,
)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Compare, gast.Call, gast.Attribute,
    gast.Subscript, gast.Slice, gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Dict,
    gast.IfExp, gast.JoinedStr, gast.FormattedValue, gast.keyword, gast.comprehension,
    gast.ListComp, gast.GeneratorExp,
)
_OTHER = (
    gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop,
)


class SyntaxFence(gast.NodeVisitor):
    """Visits a function body and raises on the first node outside the allowlist."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self._writable: set[str] | None = None
        self._shared: dict[str, bool] | None = None
        self._top_targets: list[gast.AST] = []
        self.locals = {n.id for n in gast.walk(parsed.node)
                       if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}

    def growable_lists(self) -> set[str]:
        """Local lists that ``.append`` may grow: built here from a list literal or a
        comprehension, and never given a second name (so no alias sees the growth)."""
        built, aliased = set(), set()
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                value = node.value
                names = [n.id for n in gast.walk(node.targets[0]) if isinstance(n, gast.Name)]
                if isinstance(value, (gast.List, gast.ListComp)):
                    built.update(names)
                elif isinstance(value, gast.Name):
                    aliased.add(value.id)
                    aliased.update(names)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                aliased.update(e.id for e in elts if isinstance(e, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        return built - aliased - params

    def writable_arrays(self) -> set[str]:
        """Local arrays that ``x[i] = v`` may write: every value they hold is a fresh array
        made here (a constructor, ``.copy()`` or arithmetic), never a view of another array,
        and they are never given a second name. adsrc runs the write on a copy."""
        if self._writable is not None:
            return self._writable
        fresh, other = set(), set()
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name):
                target = node.targets[0].id
                (fresh if self._makes_fresh_array(node.value) else other).add(target)
                if isinstance(node.value, gast.Name):
                    other.add(node.value.id)
            elif isinstance(node, gast.Assign):
                for n in gast.walk(node.targets[0]):
                    if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                        other.add(n.id)
            if isinstance(node, (gast.List, gast.Tuple, gast.Dict, gast.Set)) and isinstance(
                    getattr(node, "ctx", gast.Load()), gast.Load):
                elts = node.values if isinstance(node, gast.Dict) else node.elts
                other.update(e.id for e in elts if isinstance(e, gast.Name))
            if isinstance(node, gast.For):
                other.update(n.id for n in gast.walk(node.target) if isinstance(n, gast.Name))
        params = {a.id for a in self.parsed.node.args.args + self.parsed.node.args.kwonlyargs
                  + self.parsed.node.args.posonlyargs}
        self._writable = fresh - other - params
        return self._writable

    def _makes_fresh_array(self, value: gast.AST) -> bool:
        if isinstance(value, (gast.BinOp, gast.UnaryOp)):
            return True
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and func.attr == "copy" and not value.args:
                return True
            target = self.static(func)
            if target is _MISSING:
                return False
            numpy_function = getattr(target, "__module__", None) == "numpy"
            return any(target is f for f in _FRESH_CALLABLES) or (
                numpy_function and getattr(target, "__name__", None) in _FRESH_ARRAYS)
        return False

    def visit_Expr(self, node: gast.Expr) -> None:
        call = node.value
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
                and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords:
            if call.func.value.id in self.growable_lists():
                self.visit(call.args[0])
                return
            self.fail(node, "the in-place method .append() on a list not built in this function "
                      "(or given a second name)", "build the list here, from [] or a comprehension")
        self.generic_visit(node)

    def visit_top_level(self, stmt: gast.stmt) -> None:
        """Local functions (``def g`` or ``g = lambda``) are allowed at the top of the body:
        they are inlined at their calls (see inline.py), so their bodies are fenced too."""
        if isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list and not any(
                isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(stmt)):
            for inner in stmt.body:
                self.visit(inner)
            for default in stmt.args.defaults:
                self.visit(default)
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) \
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            self.visit(stmt.value.body)
            for default in stmt.value.args.defaults:
                self.visit(default)
        else:
            self.visit(stmt)

    def visit_Lambda(self, node: gast.Lambda) -> None:
        self.fail(node, "a lambda that is not assigned to a name at the top of the function",
                  "write `name = lambda ...` at the top level of the function, then call name(...)")

    def visit_ListComp(self, node: gast.ListComp) -> None:
        for gen in node.generators:
            if gen.is_async:
                self.fail(node, "async comprehension")
            self._check_target(gen.target)
        self.generic_visit(node)

    visit_GeneratorExp = visit_ListComp

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        raise UnsupportedSyntax(construct, self.parsed.where(node), hint)

    def static(self, node: gast.AST) -> object:
        """The object a name or attribute chain refers to, if it is not a local; else _MISSING."""
        if isinstance(node, gast.Name):
            return _MISSING if node.id in self.locals else self.parsed.resolve(node.id)
        if isinstance(node, gast.Attribute):
            base = self.static(node.value)
            if base is _MISSING:
                return _MISSING
            try:
                return getattr(base, node.attr)
            except Exception:  # a property may raise anything
                return _MISSING
        return _MISSING

    # -- constructs named more precisely than by their node type ----------
    def visit_Try(self, node: gast.Try) -> None:
        kind = "try/except" if node.handlers else "try"
        self.fail(node, f"{kind}/finally" if node.finalbody else kind)

    def visit_FunctionDef(self, node: gast.FunctionDef) -> None:
        if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(node)):
            self.fail(node, "a generator function defined inside the function")
        self.fail(node, "a nested function definition", "define it at module level and call it")

    def visit_Global(self, node: gast.Global) -> None:
        self.fail(node, "global", "pass the value in as an argument and return the new value")

    def visit_Nonlocal(self, node: gast.Nonlocal) -> None:
        self.fail(node, "nonlocal", "pass the value in as an argument and return the new value")

    def visit_Name(self, node: gast.Name) -> None:
        if node.id in _OPAQUE_BUILTINS and isinstance(node.ctx, gast.Load) \
                and self.static(node) is getattr(builtins, node.id):
            self.fail(node, *_OPAQUE_BUILTINS[node.id])
        self.generic_visit(node)

    def visit_Attribute(self, node: gast.Attribute) -> None:
        if node.attr in _MUTATING_METHODS and node.attr.startswith("__"):
            self.fail(node, f"the in-place method {node.attr}", "it changes its object; build a new value instead")
        self.generic_visit(node)

    def generic_visit(self, node: gast.AST) -> None:
        if not isinstance(node, _STATEMENTS + _EXPRESSIONS + _OTHER):
            kind = type(node).__name__
            self.fail(node, _NAMES.get(kind, kind))
        super().generic_visit(node)

    def visit_Assign(self, node: gast.Assign) -> None:
        if len(node.targets) != 1:
            self.fail(node, "chained assignment (a = b = ...)")
        self._top_targets = [node.targets[0]]
        self._check_target(node.targets[0])
        self.visit(node.value)

    def visit_AugAssign(self, node: gast.AugAssign) -> None:
        self._top_targets = [node.target]
        self._check_target(node.target)
        self.visit(node.value)

    def shared_names(self) -> dict[str, bool]:
        """Locals whose array may also be reachable through another name: given a second
        name (``v = x``), or taken as a view of another array (``row = W[0]``, ``x.T``,
        ``x.reshape(...)``). For them ``x += e`` in place and ``x = x + e`` differ when
        they hold an array, so desugar guards their augmented assignments at run time.
        Maps each to whether it was given a second name (else it may only be a view)."""
        if self._shared is not None:
            return self._shared
        aliased: set[str] = set()
        views: set[str] = set()
        for node in gast.walk(self.parsed.node):
            if not (isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Name)):
                continue
            target, value = node.targets[0].id, node.value
            if isinstance(value, gast.Name) and value.id in self.locals:
                aliased.update((target, value.id))
            elif self._may_be_view(value):
                views.add(target)
        self._shared = {name: name in aliased for name in aliased | views}
        return self._shared

    def _may_be_view(self, value: gast.AST) -> bool:
        if isinstance(value, (gast.Subscript, gast.Attribute)):
            return True
        if isinstance(value, gast.Call):
            func = value.func
            if isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING:
                return func.attr in _VIEW_METHODS
            target = self.static(func)
            return getattr(target, "__name__", None) in _VIEW_FUNCTIONS and \
                getattr(target, "__module__", "") == "numpy"
        return False

    def visit_AnnAssign(self, node: gast.AnnAssign) -> None:
        if node.value is None:
            self.fail(node, "an annotation without a value")
        self._check_target(node.target)
        self.visit(node.value)

    def _check_target(self, target: gast.AST) -> None:
        if isinstance(target, gast.Name):
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._check_target(elt)
            return
        if isinstance(target, gast.Subscript):
            base = target.value
            if isinstance(base, gast.Name) and base.id in self.writable_arrays() and target in self._top_targets:
                self.visit(target.slice)
                return
            self.fail(target, "assignment to a subscript (x[i] = ...) of an array not created in this function",
                      "create it here with np.zeros, np.empty, np.array(...), x.copy() and the like, "
                      "or build a new array with np.where or np.concatenate")
        if isinstance(target, gast.Attribute):
            self.fail(target, "assignment to an attribute")
        if isinstance(target, gast.Starred):
            self.fail(target, "star-assignment (a, *b = ...)")
        self.fail(target, _NAMES.get(type(target).__name__, type(target).__name__))

    def visit_For(self, node: gast.For) -> None:
        if node.orelse:
            self.fail(node, "for ... else")
        self._check_target(node.target)
        self.generic_visit(node)

    def visit_While(self, node: gast.While) -> None:
        if node.orelse:
            self.fail(node, "while ... else")
        self.generic_visit(node)

    def visit_Call(self, node: gast.Call) -> None:
        func = node.func
        if isinstance(func, gast.Name) and func.id == "sum" and node.args and isinstance(
            node.args[0], (gast.GeneratorExp, gast.ListComp)
        ):
            comp = node.args[0]
            for gen in comp.generators:
                if gen.is_async:
                    self.fail(comp, "async comprehension")
                self._check_target(gen.target)
                self.visit(gen.iter)
                for cond in gen.ifs:
                    self.visit(cond)
            self.visit(comp.elt)
            for arg in node.args[1:]:
                self.visit(arg)
            return
        for arg in node.args:
            if isinstance(arg, gast.Starred):
                self.fail(arg, "a starred argument (f(*xs))")
        for kw in node.keywords:
            if kw.arg == "out":
                self.fail(kw.value, "out= (writing into an existing array)", "use the returned value instead")
        target = self.static(func)
        label = _INPLACE_FUNCTIONS.get(id(target)) if target is not _MISSING else None
        if label is not None:
            self.fail(node, f"the in-place function {label}", "it writes into its argument; build a new value instead")
        if isinstance(func, gast.Attribute) and isinstance(getattr(target, "__self__", None), np.ufunc) \
                and func.attr == "at":
            self.fail(node, f"the in-place function {_dotted(func)}",
                      "it writes into its first argument; build a new array instead")
        if isinstance(func, gast.Attribute) and func.attr in _MUTATING_METHODS \
                and not isinstance(self.static(func.value), types.ModuleType):
            self.fail(node, f"the in-place method .{func.attr}()", "it changes its object, so gradients "
                      "would be wrong; build a new value instead (a list literal, np.concatenate, np.where, np.sort, ...)")
        self.generic_visit(node)


def check_syntax(parsed: Parsed) -> None:
    """Raise UnsupportedSyntax for the first unsupported construct in the function."""
    if isinstance(parsed.node, gast.AsyncFunctionDef):
        raise UnsupportedSyntax("an async function (async def)", parsed.where(parsed.node))
    args = parsed.node.args
    if args.kwarg is not None:
        raise UnsupportedSyntax("**kwargs parameters", parsed.where(parsed.node))
    fence = SyntaxFence(parsed)
    for stmt in parsed.node.body:
        fence.visit_top_level(stmt)


def _dotted(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return "..."
