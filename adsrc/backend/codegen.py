"""Codegen: from the adjoint's gast tree to Python source and a live function.

Input: the adjoint FunctionDef and the module header lines. Output: the
module's source (via the standard library's ``ast.unparse``; astunparse
emits invalid code for ``x[1:2, ::3]`` on Python 3.11) and the compiled
function. The source is registered with ``linecache`` under a file name
that names the original function, so tracebacks and pdb show generated lines.
"""
from __future__ import annotations

import ast
import itertools
import re
import linecache
import weakref
from typing import Any

import gast

from ..ir.contexts import restore_with
from ..ir.build import is_comment
from ..ir.dataflow import statements

_serial = itertools.count(1)
# Generated file name -> {generated line: "file:line: original statement"}, while its function lives.
_origins: dict[str, dict[int, str]] = {}
_LINE_COMMENT = re.compile(r"^\s*# line (\d+): (.*)$")


def unparse(node: gast.AST) -> str:
    tree = gast.gast_to_ast(node)
    # ast.unparse reads a statement's line number (to look up a type-ignore comment) and nothing else of
    # the locations: only statements without one get one, instead of every node of a long adjoint.
    for stmt in [tree, *statements(getattr(tree, "body", None) or [])]:
        if getattr(stmt, "lineno", None) is None:
            stmt.lineno = 1
    return ast.unparse(tree)


def module_source(header: list[str], function: gast.FunctionDef, title: str) -> str:
    restore_with([function])  # with statements the passes carried as markers (ir/contexts.py)
    lines = [f"# {title}", *header, "", "", unparse(function), ""]
    return "\n".join(lines)


def original_lines(function: gast.FunctionDef, source: str) -> dict[int, int]:
    """Generated line -> original line, for each simple statement of ``function`` (as ``source`` prints it)
    that carries its original statement's line: the forward sweep's, which have no line comment."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return {}
    printed = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == function.name), None)
    if printed is None:
        return {}
    made = [s for s in statements([function]) if not is_comment(s)]
    shown = list(statements([gast.ast_to_gast(printed)]))  # the same walk over what was printed
    if len(made) != len(shown):
        return {}
    compound = (gast.If, gast.For, gast.While, gast.With, gast.Try, gast.FunctionDef)
    return {after.lineno: before.lineno for before, after in zip(made, shown)
            if getattr(before, "lineno", None) and not isinstance(before, compound)}


def load(source: str, label: str, namespace: dict[str, Any], function_name: str,
         original_file: str = "", lines: dict[int, int] | None = None) -> Any:
    """Compile ``source``, run it in ``namespace`` and return ``function_name`` from it; ``lines`` maps
    generated lines without a line comment to the original lines they run (``original_lines``)."""
    filename = f"<adsrc adjoint {next(_serial)} of {label}>"
    while _forgotten:  # the sources of functions collected since the last load
        linecache.cache.pop(_forgotten.pop(), None)
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    origins = _line_map(source, original_file)
    for generated, original in (lines or {}).items():
        if generated not in origins:
            text = linecache.getline(original_file, original).strip()
            origins[generated] = f"{original_file}:{original}: {text}"
    _origins[filename] = origins
    code = compile(source, filename, "exec")
    exec(code, namespace)
    function = namespace[function_name]
    # The line map and the source go with the function: a cache that drops it frees them too.
    weakref.finalize(function, _forget, filename)
    return function


_forgotten: list[str] = []


def _forget(filename: str) -> None:
    # The source leaves linecache at the next load, not here: a collection can run this in the middle of
    # linecache.checkcache's loop over its keys (pdb and doctest call it), which would then miss one.
    _origins.pop(filename, None)
    _forgotten.append(filename)


def _line_map(source: str, original_file: str) -> dict[int, str]:
    """Map each generated line to the original line named by the comment above it."""
    mapping: dict[int, str] = {}
    current = None
    for number, text in enumerate(source.splitlines(), start=1):
        match = _LINE_COMMENT.match(text)
        if match:
            current = f"{original_file}:{match.group(1)}: {match.group(2)}"
        elif text.lstrip().startswith(("def ", "return ")):
            current = None
        if current:
            mapping[number] = current
    return mapping


def explain(error: BaseException) -> None:
    """Add the original file:line to an exception raised inside generated code."""
    tb = error.__traceback__
    notes = []
    while tb is not None:
        filename = tb.tb_frame.f_code.co_filename
        where = _origins.get(filename, {}).get(tb.tb_lineno)
        if where:
            notes.append(f"adsrc: generated line {tb.tb_lineno} of {filename} is the adjoint of {where}")
        tb = tb.tb_next
    for note in notes[-1:]:
        if note not in getattr(error, "__notes__", []):
            error.add_note(note)
