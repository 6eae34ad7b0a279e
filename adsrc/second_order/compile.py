"""Compile and cache the any-Python forward pass (transform.py) for a live function.

``general_jvp(fn)`` finds the definition of ``fn`` in the source it came from
(a file, or a generated module registered in linecache), lambdas included,
transforms it, compiles it with the values its free names had (globals,
closure cells, builtins) and the original defaults, and caches the result per
function and code object. A function that cannot be transformed is cached as
such, with the reason, so that the dispatcher treats it as opaque.
"""
from __future__ import annotations

import copy
import dis
import inspect
import linecache
import os
import textwrap
import threading
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Callable

import gast

from ..backend.cache import CompileCache
from ..backend.codegen import load, module_source
from ..ir.build import const, lambda_as_def
from ..errors import SourceUnavailable, UnsupportedSyntax
from .transform import AnyForward
from ..ir.naming import Namer, free_names
from ..frontend.parse import _MISSING, closure_values, resolve_outside

_FWD = "fwd"  # the dispatcher module's name in generated code (made unique per module)
_OWN = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep  # adsrc's own files
_lock = threading.RLock()


_TREES_KEPT = 64
_trees: "OrderedDict[str, tuple[tuple[str, ...], gast.Module]]" = OrderedDict()


def _module_tree(filename: str) -> gast.Module:
    """The parsed source file (or generated module) a function comes from.

    Parsed once while its text is unchanged (an edited file is parsed again);
    the most recently used files are kept, never more than a few dozen.
    """
    lines = tuple(linecache.getlines(filename))
    if not lines:
        raise SourceUnavailable(filename, "its source is not available")
    with _lock:
        cached = _trees.get(filename)
        if cached is None or cached[0] != lines:
            cached = (lines, gast.parse("".join(lines)))
        _trees[filename] = cached
        _trees.move_to_end(filename)
        while len(_trees) > _TREES_KEPT:
            _trees.popitem(last=False)
    return cached[1]


def _own_lines(fn: Callable) -> gast.Module:
    """The lines that define ``fn`` alone, parsed, with the line numbers they have in their file."""
    try:
        lines, first = inspect.getsourcelines(fn.__code__)
        tree = gast.parse(textwrap.dedent("".join(lines)))
    except (OSError, SyntaxError) as error:
        raise SourceUnavailable(fn.__name__, f"its source lines do not parse on their own ({error})") from None
    gast.increment_lineno(tree, first - 1)
    return tree


def _definition(fn: Callable) -> gast.FunctionDef:
    """The definition of ``fn`` in its source file: a def by name and line, or a lambda by position."""
    code = fn.__code__
    try:
        tree = _module_tree(code.co_filename)
    except SyntaxError:  # a file that is not Python as a whole (a Markdown page run by Sybil): the def's own lines
        tree = _own_lines(fn)
    if fn.__name__ != "<lambda>":
        for node in gast.walk(tree):
            if isinstance(node, gast.FunctionDef) and node.name == fn.__name__ and code.co_firstlineno in (
                    node.lineno, *(d.lineno for d in node.decorator_list)):
                return node
        raise SourceUnavailable(fn.__name__, "its definition was not found in its source")
    spots = [(i.positions.lineno, i.positions.col_offset) for i in dis.get_instructions(code)
             if i.positions.lineno is not None and i.positions.col_offset is not None
             and (i.positions.col_offset, i.positions.end_col_offset) != (0, 0)]  # (0, 0): no source span
    params = code.co_varnames[: code.co_argcount + code.co_kwonlyargcount]
    for node in gast.walk(tree):
        if isinstance(node, gast.Lambda) and node.lineno <= code.co_firstlineno <= node.end_lineno:
            body = node.body
            names = tuple(a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs)
            inside = all((body.lineno, body.col_offset) <= spot <= (body.end_lineno, body.end_col_offset)
                         for spot in spots)
            if names == params and inside:
                return lambda_as_def(node)
    raise SourceUnavailable("<lambda>", "it was not found in its source")


@dataclass
class GeneralJVP:
    """A transformed function (or why ``fn`` cannot be transformed), and the outside values it was made with."""

    function: Callable | None
    failure: Exception | None
    reads: list[tuple[str, Any]] = field(default_factory=list)
    defaults: tuple = ()

    def current(self, func: Callable, closure: dict[str, Any]) -> bool:
        return func.__defaults__ is self.defaults[0] and func.__kwdefaults__ is self.defaults[1] and \
            all(resolve_outside(func, closure, key) is obj for key, obj in self.reads)


def compile_general_jvp(fn: Callable, level: int = 1) -> GeneralJVP:
    """The JVP of any Python function with readable source, in the ``(tangents, ktangents, *args)`` convention.
    ``level`` numbers the tangents it takes (dispatch.call_at): code generated at one level is differentiated
    again at another."""
    node = copy.deepcopy(_definition(fn))
    where = f"{fn.__code__.co_filename}:{node.lineno}"
    namer = Namer({n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | {node.name})
    fwd = namer.fresh(_FWD)
    transformer = AnyForward(namer, fwd, where, level)
    defaults = node.args.defaults
    node.args.defaults = [const(None) for _ in defaults]
    node.args.kw_defaults = [None if d is None else const(None) for d in node.args.kw_defaults]
    function = transformer.function(node, top=True)
    order = "" if level == 1 else f" at level {level}"
    title = f"Forward mode (JVP{order}, any-Python pass) of {getattr(fn, '__qualname__', fn.__name__)} ({where}). Generated by adsrc."
    source = module_source([f"import adsrc.second_order.dispatch as {fwd}"], function, title)
    closure = closure_values(fn)
    reads = [(key, resolve_outside(fn, closure, key)) for key in free_names(node)]
    reads = [(key, value) for key, value in reads if value is not _MISSING]
    namespace: dict[str, Any] = {"__name__": f"adsrc_jvp_{fn.__name__}", **dict(reads)}
    compiled = load(source, f"{fn.__name__} ({where}), forward mode", namespace, node.name)
    compiled.__defaults__ = fn.__defaults__
    compiled.__kwdefaults__ = fn.__kwdefaults__
    compiled.__adsrc_jvp__ = level
    # adsrc's own modules read globals that stay what they were: checked at every call, they cost a third of
    # a third derivative's time (the dispatcher reads some fifty). Their closures' cells are checked still
    # (one code serves many closures), and so is everything generated code reads: equal sources compile to
    # equal code objects, told apart only by the values their namespaces hold.
    own = fn.__code__.co_filename.startswith(_OWN)
    checked = [(key, value) for key, value in reads if key in fn.__code__.co_freevars] if own else reads
    return GeneralJVP(compiled, None, checked, (fn.__defaults__, fn.__kwdefaults__))


_cache = CompileCache()


def _build(fn: Callable, level: int) -> GeneralJVP:
    try:
        return compile_general_jvp(fn, level)
    except (UnsupportedSyntax, SourceUnavailable, SyntaxError, OSError, TypeError) as error:
        return GeneralJVP(None, error, [], (fn.__defaults__, fn.__kwdefaults__))


def general_jvp(fn: Callable, level: int = 1) -> tuple[Callable | None, Exception | None]:
    """``(jvp, None)``, or ``(None, why)`` when ``fn`` cannot be transformed; cached like the pipeline's code."""
    entry = _cache.get(fn, (level,), lambda: _build(fn, level))
    return entry.function, entry.failure
