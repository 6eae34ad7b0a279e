"""Syntax fence: reject every construct the compiler cannot differentiate, up front.

Input: a parsed FunctionDef. Output: nothing; raises UnsupportedSyntax naming
the first unsupported construct and its original ``file:line:col`` before any
code runs. The fence is an allowlist, so a construct added to Python later is
rejected rather than silently mistranslated.
"""
from __future__ import annotations

import gast

from .errors import UnsupportedSyntax
from .parse import Parsed

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

_STATEMENTS = (
    gast.Assign, gast.AugAssign, gast.AnnAssign, gast.Expr, gast.If, gast.For,
    gast.While, gast.Break, gast.Continue, gast.Return, gast.Pass, gast.Assert, gast.Raise,
)
_EXPRESSIONS = (
    gast.BinOp, gast.UnaryOp, gast.BoolOp, gast.Compare, gast.Call, gast.Attribute,
    gast.Subscript, gast.Slice, gast.Name, gast.Constant, gast.Tuple, gast.List,
    gast.IfExp, gast.JoinedStr, gast.FormattedValue, gast.keyword, gast.comprehension,
)
_OTHER = (
    gast.expr_context, gast.operator, gast.unaryop, gast.cmpop, gast.boolop,
)


class SyntaxFence(gast.NodeVisitor):
    """Visits a function body and raises on the first node outside the allowlist."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        raise UnsupportedSyntax(construct, self.parsed.where(node), hint)

    def generic_visit(self, node: gast.AST) -> None:
        if not isinstance(node, _STATEMENTS + _EXPRESSIONS + _OTHER):
            kind = type(node).__name__
            self.fail(node, _NAMES.get(kind, kind))
        super().generic_visit(node)

    def visit_Assign(self, node: gast.Assign) -> None:
        if len(node.targets) != 1:
            self.fail(node, "chained assignment (a = b = ...)")
        self._check_target(node.targets[0])
        self.visit(node.value)

    def visit_AugAssign(self, node: gast.AugAssign) -> None:
        self._check_target(node.target)
        self.visit(node.value)

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
            self.fail(target, "assignment to a subscript (x[i] = ...)",
                      "build a new array with np.where or np.concatenate instead")
        if isinstance(target, gast.Attribute):
            self.fail(target, "assignment to an attribute")
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
        self.generic_visit(node)


def check_syntax(parsed: Parsed) -> None:
    """Raise UnsupportedSyntax for the first unsupported construct in the function."""
    args = parsed.node.args
    if args.vararg is not None or args.kwarg is not None:
        raise UnsupportedSyntax("*args or **kwargs parameters", parsed.where(parsed.node))
    fence = SyntaxFence(parsed)
    for stmt in parsed.node.body:
        fence.visit(stmt)
