"""Syntax fence: reject every construct the compiler cannot differentiate, up front.

Input: a parsed FunctionDef. Output: nothing; raises UnsupportedSyntax naming
the first unsupported construct and its original ``file:line:col`` before any
code runs. The fence is an allowlist, so a construct added to Python later is
rejected rather than silently mistranslated.

This module checks statements and syntax: which nodes may appear, local
functions at the top of the body only (``def g`` or ``g = lambda``, inlined
by inline.py), no lambda inside a comprehension, assignment targets, no
``else`` on loops. A name defined nowhere (not a local, a closure cell, a
global or a builtin) raises UndefinedName, a NameError, naming its line. A
name the function assigns itself is never taken for the builtin or global of
the same name. ``with`` is accepted over ``np.errstate(...)`` and
``warnings.catch_warnings()`` only, with no jump out of its body but a final
``return`` (see ir/contexts.py).

What would change an object behind the compiler's back (``setattr``,
in-place methods and functions, ``out`` arguments, ``np.add.at``, writes
into arrays and lists the function did not make, modules as values) is
checked by the :class:`~adsrc.frontend.mutations.MutationChecks` this
visitor mixes in; which local arrays may be written and which lists may grow
is aliasing.py's to say.
"""
from __future__ import annotations

import builtins
import difflib
import warnings

import gast
import numpy as np

from ..errors import UndefinedName, UnsupportedSyntax
from ..ir import annotations as anno
from .aliasing import Aliasing, static_value
from .mutations import MutationChecks, source_label
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

# Context managers a with statement may enter (see ir/contexts.py): they change how the body's
# operations behave, nothing the gradient depends on.
_CONTEXTS = (np.errstate, warnings.catch_warnings)

_STATEMENTS = (
    gast.With, gast.withitem, gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.If, gast.For,
    gast.While, gast.Break, gast.Continue, gast.Return, gast.Pass, gast.Assert, gast.Raise,
)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Compare, gast.Call, gast.Attribute,
    gast.Subscript, gast.Slice, gast.Name, gast.Constant, gast.Tuple, gast.List, gast.Dict,
    gast.IfExp, gast.JoinedStr, gast.FormattedValue, gast.keyword, gast.comprehension,
    gast.ListComp, gast.GeneratorExp, gast.DictComp,
)
_OTHER = (
    gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop,
)


class SyntaxFence(MutationChecks, gast.NodeVisitor):
    """Visits a function body and raises on the first node outside the allowlist."""

    writes_params = True  # a write into a parameter's array runs as Python's (api/written.py)

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.aliasing = Aliasing(parsed)  # which locals may share memory (aliasing.py)
        self.locals = self.aliasing.locals
        self._top_targets: list[gast.AST] = []
        self._inside = ""  # "a comprehension" while visiting one (a lambda there is refused)

    def visit_top_level(self, stmt: gast.stmt) -> None:
        """Local functions (``def g`` or ``g = lambda``) are allowed at the top of the body:
        they are inlined at their calls (see inline.py), so their bodies are fenced too."""
        if isinstance(stmt, gast.FunctionDef) and not stmt.decorator_list and not any(
                isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(stmt)):
            for default in stmt.args.defaults:
                self.visit(default)
            for inner in stmt.body:  # a function it defines (a factory's, which it returns) is inlined too
                self.visit_top_level(inner)
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) \
                and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name):
            for default in stmt.value.args.defaults:
                self.visit(default)
            self.visit(stmt.value.body)
        else:
            self.visit(stmt)

    def visit_Lambda(self, node: gast.Lambda) -> None:
        """A lambda in an expression is made where it stands (closures.py); its body is compiled when it
        is called. Inside a comprehension it is refused (Python compiles it in the comprehension's scope)."""
        if self._inside:
            self.fail(node, f"a lambda inside {self._inside}",
                      "write `name = lambda ...` at the top level of the function, or define it at module level")
        for default in node.args.defaults:
            self.visit(default)

    def visit_ListComp(self, node: gast.ListComp) -> None:
        for gen in node.generators:
            if gen.is_async:
                self.fail(node, "async comprehension")
            self._check_target(gen.target)
        inside, self._inside = self._inside, self._inside or "a comprehension"
        self.generic_visit(node)
        self._inside = inside

    visit_GeneratorExp = visit_DictComp = visit_ListComp

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        raise UnsupportedSyntax(construct, self.parsed.where(node), hint)

    def static(self, node: gast.AST) -> object:
        """The object a name or attribute chain refers to, if it is not a local; else _MISSING."""
        return static_value(self.parsed, self.locals, node)

    # -- constructs named more precisely than by their node type ----------
    def visit_Try(self, node: gast.Try) -> None:
        kind = "try/except" if node.handlers else "try"
        self.fail(node, f"{kind}/finally" if node.finalbody else kind)

    def visit_FunctionDef(self, node: gast.FunctionDef) -> None:
        if any(isinstance(n, (gast.Yield, gast.YieldFrom)) for n in gast.walk(node)):
            self.fail(node, "a generator function defined inside the function")
        self.fail(node, "a nested function definition", "define it at module level and call it")

    def visit_With(self, node: gast.With) -> None:
        for item in node.items:
            context = item.context_expr
            if not (isinstance(context, gast.Call) and any(self.static(context.func) is c for c in _CONTEXTS)):
                self.fail(node, f"a with statement over {source_label(context)}",
                          "adsrc runs the body of `with np.errstate(...)` and `with warnings.catch_warnings()`; "
                          "enter any other context around the call of the gradient instead")
            if item.optional_vars is not None and not isinstance(item.optional_vars, gast.Name):
                self.fail(item.optional_vars, "a with statement binding something other than a name")
            self.visit(context)
        for jump in _escaping_jumps(node.body):
            if jump is not node.body[-1] or not isinstance(jump, gast.Return):
                self.fail(jump, "a jump out of a with statement (return, break or continue), but for a return "
                          "that ends its body", "set a variable inside the with statement and jump after it")
        for stmt in node.body:
            self.visit(stmt)

    def visit_Global(self, node: gast.Global) -> None:
        self.fail(node, "global", "pass the value in as an argument and return the new value")

    def visit_Nonlocal(self, node: gast.Nonlocal) -> None:
        self.fail(node, "nonlocal", "pass the value in as an argument and return the new value")

    def visit_Name(self, node: gast.Name) -> None:
        self._check_builtin(node)
        if isinstance(node.ctx, gast.Load):
            target = self.static(node)
            if target is _MISSING and node.id not in self.locals:
                raise UndefinedName(node.id, self.parsed.where(node), self._closest(node.id))
            self._check_value(node, target)
        self.generic_visit(node)

    def _closest(self, missing: str) -> str:
        """The defined name most like ``missing`` (a misspelling), or ''."""
        known = self.locals | set(getattr(self.parsed.func, "__globals__", {})) | set(self.parsed.closure) \
            | set(dir(builtins))
        close = difflib.get_close_matches(missing, sorted(known), n=1)
        return close[0] if close else ""

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
        self._check_module_binding(node.targets[0], node.value)
        self.visit(node.value)

    def visit_AugAssign(self, node: gast.AugAssign) -> None:
        self._top_targets = [node.target]
        self._check_target(node.target)
        self.visit(node.value)

    def visit_AnnAssign(self, node: gast.AnnAssign) -> None:
        if node.value is None:
            self.fail(node, "an annotation without a value")
        self._check_target(node.target)
        self._check_module_binding(node.target, node.value)
        self.visit(node.value)

    def _check_target(self, target: gast.AST) -> None:
        if isinstance(target, gast.Name):
            return
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._check_target(elt)
            return
        if isinstance(target, gast.Subscript):
            self._check_subscript_target(target)
            return
        if isinstance(target, gast.Attribute):
            self.fail(target, "assignment to an attribute")
        if isinstance(target, gast.Starred):  # a loop's or comprehension's; desugar unpacks it (assignments.py)
            self._check_target(target.value)
            return
        self.fail(target, _NAMES.get(type(target).__name__, type(target).__name__))

    def visit_Starred(self, node: gast.Starred) -> None:
        if not isinstance(node.ctx, gast.Store):
            self.fail(node, "star-unpacking (*xs) in an expression", "build the list or tuple with + or list(...)")
        self.visit(node.value)

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
        """``sum(...)`` over a comprehension, which desugar makes a loop: its element is visited as inside
        a comprehension; any other call is checked for what it may change (mutations.py)."""
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
            inside, self._inside = self._inside, "a comprehension"
            self.visit(comp.elt)
            self._inside = inside
            for arg in node.args[1:]:
                self.visit(arg)
            return
        super().visit_Call(node)  # what the call may change (mutations.py)


def check_syntax(parsed: Parsed) -> None:
    """Raise UnsupportedSyntax for the first unsupported construct in the function."""
    if isinstance(parsed.node, gast.AsyncFunctionDef):
        raise UnsupportedSyntax("an async function (async def)", parsed.where(parsed.node))
    fence = SyntaxFence(parsed)
    for stmt in parsed.node.body:
        fence.visit_top_level(stmt)
    _note_written_params(fence)


def _note_written_params(fence: SyntaxFence) -> None:
    """Note on the function the parameters whose given arrays it writes (anno.WRITTEN_PARAMS); refuse
    returning such an array written by index, which Python gives back as the caller's own object."""
    parsed = fence.parsed
    noted: dict = {"updates": set()}
    for param, nodes in fence.written_params().items():
        by_index = [n for n in nodes if not (isinstance(n, gast.AugAssign) and isinstance(n.target, gast.Name))]
        returned = fence.freshness.returns_param(param)
        if returned and by_index:
            fence.fail(by_index[0], f"writing into the array the parameter {param} was given, and returning it "
                       f"(or a view of it)", f"Python gives back the caller's own array, which adsrc does not: "
                       f"return a copy ({param}.copy()), or only write into it")
        noted[param] = ("array" if by_index else "update", returned, parsed.where((by_index or nodes)[0]))
        noted["updates"] |= {(n.lineno, n.col_offset) for n in nodes if n not in by_index}
    anno.set(parsed.node, anno.WRITTEN_PARAMS, noted)


def _escaping_jumps(stmts: list[gast.stmt]):
    """The return, break and continue statements that leave ``stmts`` (not those of a loop inside)."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Return, gast.Break, gast.Continue)):
            yield stmt
        elif isinstance(stmt, (gast.For, gast.While)):
            yield from (n for n in gast.walk(stmt) if isinstance(n, gast.Return))
        elif isinstance(stmt, (gast.If, gast.With)):
            yield from _escaping_jumps(stmt.body + getattr(stmt, "orelse", []))
