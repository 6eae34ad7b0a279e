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
import linecache
from typing import Any

import gast

_serial = itertools.count(1)


def unparse(node: gast.AST) -> str:
    tree = gast.gast_to_ast(node)
    ast.fix_missing_locations(tree)
    return ast.unparse(tree)


def module_source(header: list[str], function: gast.FunctionDef, title: str) -> str:
    lines = [f"# {title}", *header, "", "", unparse(function), ""]
    return "\n".join(lines)


def load(source: str, label: str, namespace: dict[str, Any], function_name: str) -> Any:
    """Compile ``source``, run it in ``namespace`` and return ``function_name`` from it."""
    filename = f"<adsrc adjoint {next(_serial)} of {label}>"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    code = compile(source, filename, "exec")
    exec(code, namespace)
    return namespace[function_name]
