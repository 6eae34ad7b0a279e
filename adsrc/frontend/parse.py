"""Parse: from a live function to a gast FunctionDef with original line numbers.

Input: a Python function object. Output: a :class:`Parsed` record holding its
``gast.FunctionDef`` (line numbers are those of the original file, columns
those of the original indentation), the file name, the source lines and a
resolver for the names the function reads from outside (closure cells, then
globals, then builtins).

The source is that of the function's code object, never that of a function it
wraps (``functools.wraps`` sets ``__wrapped__``, which inspect would follow).
The adjoint receives every parameter positionally, in signature order, so the
definition's positional-only and keyword-only parameters, and ``*args`` (as one
tuple), are listed in ``args.args`` along with the others. An ``async def`` is returned as it is
(an ``AsyncFunctionDef``), for the fence to reject.
"""
from __future__ import annotations

import builtins
import inspect
import textwrap
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import SourceUnavailable
from ..ir.build import lambda_as_def

_MISSING = object()


@dataclass
class Parsed:
    func: Callable
    node: gast.FunctionDef
    filename: str
    first_line: int
    indent: int
    closure: dict[str, Any] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return getattr(self.func, "__name__", "f")

    def where(self, node: Any = None) -> str:
        """``file:line:col`` of a node (or of the function) in the original file."""
        line = getattr(node, "lineno", None) or self.first_line
        col = getattr(node, "col_offset", None)
        return f"{self.filename}:{line}" + ("" if col is None else f":{col + 1}")

    def resolve(self, name: str) -> Any:
        """The object a free name refers to: closure cell, global, builtin, or _MISSING."""
        return resolve_outside(self.func, self.closure, name)

    def source_line(self, lineno: int) -> str:
        import linecache

        return linecache.getline(self.filename, lineno).strip()


def resolve_outside(func: Callable, closure: dict[str, Any], name: str) -> Any:
    """What ``name`` means inside ``func`` if it is not a local: its closure cell
    (values in ``closure``), else a global, else a builtin, else _MISSING."""
    if name in closure:
        return closure[name]
    globals_ = getattr(func, "__globals__", {})
    if name in globals_:
        return globals_[name]
    return getattr(builtins, name, _MISSING)


def closure_values(func: Callable) -> dict[str, Any]:
    code = getattr(func, "__code__", None)
    cells = getattr(func, "__closure__", None) or ()
    values = {}
    for name, cell in zip(code.co_freevars if code else (), cells):
        try:
            values[name] = cell.cell_contents
        except ValueError:  # an empty cell: the name is assigned later in the outer scope
            continue
    return values


def parse_function(func: Callable) -> Parsed:
    name = getattr(func, "__name__", repr(func))
    if not inspect.isfunction(func):
        raise SourceUnavailable(name, f"it is a {type(func).__name__}, not a Python function")
    try:
        # The code object's source: inspect would follow __wrapped__ from a function
        # to the one it wraps (functools.wraps), whose source computes something else.
        lines, first_line = inspect.getsourcelines(func.__code__)
        filename = inspect.getsourcefile(func.__code__) or func.__code__.co_filename
    except (OSError, TypeError) as error:
        code = func.__code__
        raise SourceUnavailable(name, str(error), f"{code.co_filename}:{code.co_firstlineno}") from None
    text = "".join(lines)
    dedented = textwrap.dedent(text)
    indent = len(text) - len(text.lstrip()) - (len(dedented) - len(dedented.lstrip()))
    try:
        module = gast.parse(dedented)
    except SyntaxError:
        # A lambda inside a larger expression: its lines alone may not parse.
        raise SourceUnavailable(name, "its source lines do not parse on their own") from None
    node = _find_definition(module, func)
    if node is None:
        raise SourceUnavailable(name, "its definition was not found in its source lines")
    for child in gast.walk(node):
        if hasattr(child, "lineno"):
            child.lineno += first_line - 1
            if hasattr(child, "end_lineno") and child.end_lineno is not None:
                child.end_lineno += first_line - 1
            if hasattr(child, "col_offset") and child.col_offset is not None:
                child.col_offset += indent
    node.decorator_list = []
    args = node.args
    star = [args.vararg] if args.vararg is not None else []  # *args arrives as one tuple
    args.args = list(args.posonlyargs) + list(args.args) + star + list(args.kwonlyargs)
    args.vararg = None
    args.posonlyargs, args.kwonlyargs, args.kw_defaults, args.defaults = [], [], [], []
    return Parsed(func, node, filename, first_line, indent, closure_values(func))


_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def _find_definition(module: gast.Module, func: Callable) -> gast.FunctionDef | None:
    name = func.__code__.co_name  # not __name__, which functools.wraps or a user may change
    for child in module.body:
        if isinstance(child, _DEFINITIONS) and child.name == name:
            return child
    for child in gast.walk(module):
        if isinstance(child, _DEFINITIONS) and child.name == name:
            return child
    if name == "<lambda>":
        lambdas = [n for n in gast.walk(module) if isinstance(n, gast.Lambda)]
        params = func.__code__.co_varnames[: func.__code__.co_argcount]
        matching = [n for n in lambdas if tuple(a.id for a in n.args.args) == params]
        if len(matching) == 1:
            return lambda_as_def(matching[0])
    return None
