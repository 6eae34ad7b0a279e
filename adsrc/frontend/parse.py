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
import functools
import inspect
import os
import sysconfig
import textwrap
import types
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..errors import SourceUnavailable, UnsupportedSyntax
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
    # Names the front end adds and binds itself (a local function's definition; frontend/inline.py):
    # resolved before anything outside, and bound in the generated module's namespace.
    generated: dict[str, Any] = field(default_factory=dict)
    # Outside names of functions whose code the front end copied in (frontend/generators.py): no longer
    # read by the code it made, but what that code means, so the compile cache checks them as reads.
    copied: list[str] = field(default_factory=list)
    # Names the front end bound in ``closure`` to adsrc's own helpers (frontend/view_writes.py's
    # written_through): not the program's, so the compile cache does not look for them outside.
    helpers: set[str] = field(default_factory=set)
    # More for the compile cache to check, as (object, getter, what the getter gave at compile time): a
    # copied function's defaults and the outside values its copy holds in helpers (frontend/generators.py).
    checked: list[tuple[Any, Callable[[Any], Any], Any]] = field(default_factory=list)

    @property
    def name(self) -> str:
        return getattr(self.func, "__name__", "f")

    def where(self, node: Any = None) -> str:
        """``file:line:col`` of a node (or of the function) in the original file."""
        line = getattr(node, "lineno", None) or self.first_line
        col = getattr(node, "col_offset", None)
        return f"{self.filename}:{line}" + ("" if col is None else f":{col + 1}")

    def resolve(self, name: str) -> Any:
        """The object a free name refers to: a name the front end bound, closure cell, global, builtin,
        or _MISSING."""
        if name in self.generated:
            return self.generated[name]
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


class OutsideName:
    """A getter: what ``name`` means inside a function now (``resolve_outside``), for the compile cache."""

    def __init__(self, name: str):
        self.name = self.path = name

    def __call__(self, func: Callable) -> Any:
        return resolve_outside(func, closure_values(func), self.name)


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


_LIBRARY_PATHS = tuple(sorted({os.path.realpath(sysconfig.get_paths()[key]) + os.sep
                               for key in ("stdlib", "platstdlib", "purelib", "platlib")}))
_PACKAGE = os.path.dirname(os.path.dirname(os.path.realpath(__file__))) + os.sep


def in_library(func: Callable) -> bool:
    """Whether a Python function comes from an installed library, the standard library or adsrc itself
    (adsrc calls those primitives: a rule or nothing, never their source)."""
    filename = os.path.realpath(func.__code__.co_filename)
    return filename.startswith(_LIBRARY_PATHS) or filename.startswith(_PACKAGE)


def _explicit_super(node: gast.FunctionDef, closure: dict[str, Any]) -> None:
    """``super()`` in a method as ``super(__class__, self)``: what Python's zero-argument form means, spelled
    so that it still means it in generated code (which has no ``__class__`` cell of its own)."""
    params = node.args.posonlyargs + node.args.args
    if "__class__" not in closure or not params:
        return
    for child in gast.walk(node):
        if isinstance(child, gast.Call) and isinstance(child.func, gast.Name) and child.func.id == "super" \
                and not child.args and not child.keywords:
            child.args = [gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)
                          for name in ("__class__", params[0].id)]
            for arg in child.args:
                gast.copy_location(arg, child)


def forwards_everything(func: Callable) -> bool:
    """A ``functools.wraps`` wrapper that takes ``(*args, **kwargs)`` and stands for the function it wraps."""
    if not inspect.isfunction(func) or not hasattr(func, "__wrapped__"):
        return False
    # The code's own parameters: functools.wraps also copies a __signature__ the wrapped function has
    # (a lifted closure's, rules/closures.py), which inspect reads even with follow_wrapped=False.
    code = func.__code__
    return code.co_argcount == 0 and code.co_kwonlyargcount == 0 and bool(code.co_flags & inspect.CO_VARARGS)


def signature_of(func: Callable) -> inspect.Signature:
    """The signature adsrc binds a call to: a forwarding wrapper's is the wrapped function's."""
    return inspect.signature(func, follow_wrapped=forwards_everything(func))


def _as_wrapped_signature(node: gast.FunctionDef, func: Callable, where: str) -> None:
    """Give a forwarding wrapper ``def w(*args, **kwargs)`` the wrapped function's parameters, and
    rebuild ``args`` and ``kwargs`` from them first: the same call, with parameters one can differentiate."""
    params = list(signature_of(func).parameters.values())
    own = [node.args.vararg.id] + ([node.args.kwarg.id] if node.args.kwarg is not None else [])
    used = {n.id for n in gast.walk(node) if isinstance(n, gast.Name)}
    clash = sorted(p.name for p in params if p.name in used or p.name in own)
    if clash:
        raise UnsupportedSyntax(f"the wrapper {func.__name__}(*args, **kwargs) that also uses the names "
                                f"{', '.join(clash)} of the function it wraps", where,
                                "rename the wrapper's own variables")

    def load(name: str) -> gast.Name:
        return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)

    positional, keywords, mapping = [], [], []
    for p in params:
        if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            positional.append(load(p.name))
        elif p.kind is p.VAR_POSITIONAL:
            positional.append(gast.Starred(value=load(p.name), ctx=gast.Load()))
        elif p.kind is p.KEYWORD_ONLY:
            keywords.append(p.name)
        else:
            mapping.append(p.name)
    prologue = [gast.Assign(targets=[gast.Name(id=own[0], ctx=gast.Store(), annotation=None, type_comment=None)],
                            value=gast.Tuple(elts=positional, ctx=gast.Load()), type_comment=None)]
    if len(own) > 1:
        keys = [gast.Constant(value=k, kind=None) for k in keywords] + [None] * len(mapping)
        prologue.append(gast.Assign(targets=[gast.Name(id=own[1], ctx=gast.Store(), annotation=None,
                                                       type_comment=None)],
                                    value=gast.Dict(keys=keys, values=[load(k) for k in keywords + mapping]),
                                    type_comment=None))
    elif keywords or mapping:
        raise UnsupportedSyntax(f"the wrapper {func.__name__}(*args) of a function with keyword-only "
                                f"parameters", where)
    for stmt in prologue:
        gast.copy_location(stmt, node)
        for child in gast.walk(stmt):
            gast.copy_location(child, node)
    node.body = prologue + node.body
    node.args = gast.arguments(
        args=[gast.Name(id=p.name, ctx=gast.Param(), annotation=None, type_comment=None) for p in params],
        posonlyargs=[], vararg=None, kwonlyargs=[], kw_defaults=[], kwarg=None, defaults=[])


def bound_parts(func: Any) -> tuple[Any, tuple, dict]:
    """The Python function a callable runs, with the arguments it passes first and the keywords it adds.

    A bound method passes its object (``model.loss`` runs ``Model.loss(model, ...)``), a
    ``functools.partial`` its stored arguments, a callable instance itself to ``type(obj).__call__``.
    Anything else comes back as it is, with nothing bound.
    """
    prefix: tuple = ()
    keywords: dict = {}
    for _ in range(16):
        if isinstance(func, types.MethodType):
            prefix, func = (func.__self__,) + prefix, func.__func__
        elif isinstance(func, functools.partial):
            prefix, keywords, func = tuple(func.args) + prefix, {**func.keywords, **keywords}, func.func
        elif not inspect.isroutine(func) and not inspect.isclass(func) \
                and inspect.isfunction(getattr(type(func), "__call__", None)) \
                and not in_library(type(func).__call__):
            prefix, func = (func,) + prefix, type(func).__call__
        else:
            break
    return func, prefix, keywords


def parse_function(func: Callable, lifted: bool = False) -> Parsed:
    """``func`` parsed; ``lifted``: a closure whose cells (``co_freevars``) become its first parameters."""
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
    node = _find_definition(module, func, first_line, indent)
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
    _explicit_super(node, closure_values(func))
    if forwards_everything(func):
        _as_wrapped_signature(node, func, f"{filename}:{node.lineno}")
    args = node.args
    star = [args.vararg] if args.vararg is not None else []  # *args arrives as one tuple
    double = [args.kwarg] if args.kwarg is not None else []  # **kwargs as one dict
    args.args = list(args.posonlyargs) + list(args.args) + star + list(args.kwonlyargs) + double
    args.vararg = args.kwarg = None
    args.posonlyargs, args.kwonlyargs, args.kw_defaults, args.defaults = [], [], [], []
    closure = closure_values(func)
    if lifted:
        args.args = [gast.Name(id=v, ctx=gast.Param(), annotation=None, type_comment=None)
                     for v in func.__code__.co_freevars] + args.args
        closure = {}
    return Parsed(func, node, filename, first_line, indent, closure)


_DEFINITIONS = (gast.FunctionDef, gast.AsyncFunctionDef)


def _find_definition(module: gast.Module, func: Callable, first_line: int = 1,
                     indent: int = 0) -> gast.FunctionDef | None:
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
        if len(matching) > 1:  # several: the one on the code's line whose body starts where its code does
            code, line = func.__code__, func.__code__.co_firstlineno
            column = first_column(code, line)
            matching = [n for n in matching if n.lineno + first_line - 1 == line
                        and n.body.col_offset + indent == column]
        if len(matching) == 1:
            return lambda_as_def(matching[0])
    return None


def first_column(code: types.CodeType, lineno: int) -> int:
    """The leftmost column, on line ``lineno``, of a code object's instructions (-1 if none)."""
    return min((col for line, _, col, end in code.co_positions()
                if line == lineno and col is not None and end is not None and end > col), default=-1)
