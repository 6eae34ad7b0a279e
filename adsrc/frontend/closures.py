"""Local functions used as values: their definitions become calls that make the closure Python makes.

Input: a local function (``def g`` or a lambda) of the function being
compiled that is used as a value (passed to a function, returned, stored,
given to ``adsrc.grad``), and the top-level statements around it. Output: the
expression that makes it, ``local_function(g_code, (x, w), defaults)``
(rules/closures.py): the code object Python compiled for it, found among the
enclosing function's constants, with the values of the variables it captures
(its ``co_freevars``, in order) and its defaults. A call of the closure then
compiles it with those values as leading parameters, so gradients reach them.

Python's closure reads a captured variable when it runs; ``local_function``
reads it when the definition runs. The two agree when nothing rebinds the
variable after the definition (nor writes into it), and when it was assigned
before: both are checked here, and anything else is refused.
"""
from __future__ import annotations

import copy
import types
from typing import Any

import gast

from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.build import const, name
from ..rules.closures import LocalDefinition, local_function
from .parse import Parsed, first_column


class Closures:
    """Makes the closure expressions of one function's local functions (see the module docstring)."""

    def __init__(self, parsed: Parsed, namer: Any, runtime: dict[str, str], renamed: dict[str, str]):
        self.parsed = parsed
        self.namer = namer
        self.renamed = renamed  # locals renamed by desugar (a local named like a builtin)
        self.maker = runtime.get("local_function", "local_function")
        parsed.generated[self.maker] = local_function
        self.params = {a.id for a in parsed.node.args.args}

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        raise UnsupportedSyntax(construct, self.parsed.where(node), hint)

    def code_of(self, fn: gast.FunctionDef, lineno: int, label: str) -> types.CodeType:
        """The code object Python compiled for the local function ``fn`` defined on line ``lineno``."""
        code_name = "<lambda>" if label == "lambda" else fn.name
        params = tuple(a.id for a in fn.args.args + fn.args.kwonlyargs)
        found = [c for c in self.parsed.func.__code__.co_consts if isinstance(c, types.CodeType)
                 and c.co_name == code_name and c.co_firstlineno == lineno
                 and c.co_varnames[:c.co_argcount + c.co_kwonlyargcount] == params[:c.co_argcount + c.co_kwonlyargcount]]
        if len(found) > 1:  # several on one line: the one whose code starts where this one's body does
            start = getattr(fn.body[-1].value if label == "lambda" else fn.body[0], "col_offset", 0)
            columns = [(first_column(c, lineno), c) for c in found]
            found = [min(((col, c) for col, c in columns if col >= start), key=lambda pair: pair[0],
                         default=(0, None))[1]]
        if not found or found[0] is None:
            self.fail(fn, f"using {_what(fn, label)} as a value", "define it with def, or at module level")
        return found[0]

    def make(self, fn: gast.FunctionDef, lineno: int, label: str, body: list[gast.stmt], position: int,
             where: gast.AST) -> gast.expr:
        """``local_function(definition, (captured...), defaults)`` for ``fn``, defined by the top-level
        statement ``body[position]`` (the statement itself counts as after the definition)."""
        code = self.code_of(fn, lineno, label)
        definition = LocalDefinition(code, self.parsed.func.__globals__,
                                     getattr(code, "co_qualname", code.co_name), self.parsed.where(where))
        key = self.namer.fresh(f"{fn.name if label != 'lambda' else 'lambda'}_code")
        self.parsed.generated[key] = definition
        captured = []
        for var in code.co_freevars:
            local = self.renamed.get(var, var)
            if var == fn.name:
                self.fail(where, f"using the local function {fn.name}, which calls itself, as a value",
                          "define it at module level")
            self.check_captured(_what(fn, label), local, var, body, position, where)
            captured.append(name(local))
        defaults = gast.Tuple(elts=copy.deepcopy(fn.args.defaults), ctx=gast.Load()) if fn.args.defaults else const(None)
        values = gast.Tuple(elts=captured, ctx=gast.Load())
        anno.set(values, anno.HINT, f"{fn.name}_captures")
        args = [name(key), values, defaults]
        given = [(a.id, d) for a, d in zip(fn.args.kwonlyargs, fn.args.kw_defaults) if d is not None]
        if given:
            args.append(gast.Dict(keys=[const(k) for k, _ in given], values=[copy.deepcopy(d) for _, d in given]))
        made = gast.Call(func=name(self.maker), args=args, keywords=[])
        for node in gast.walk(made):
            gast.copy_location(node, where)
        return made

    def check_captured(self, what: str, local: str, var: str, body: list[gast.stmt], position: int,
                       where: gast.AST) -> None:
        """A captured local must be assigned before the definition and never rebound (or written into)
        after it: the closure then reads what Python's would."""
        before = {n.id for stmt in body[:position] for n in gast.walk(stmt)
                  if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store)}
        after = [n for stmt in body[position:] for n in gast.walk(stmt) if _stores_into(n, local)]
        is_local = local in before or local in self.params or after
        if not is_local:
            return  # a closure cell or global of the enclosing function: read as it is
        if after:
            self.fail(after[0], f"changing {var} after {what}, which captures it, is defined",
                      f"give the new value its own name, so that {what} reads the value it was defined with")
        if local not in before and local not in self.params:
            self.fail(where, f"{what} capturing {var} before it is assigned", f"assign {var} before defining it")


def _what(fn: gast.FunctionDef, label: str) -> str:
    return "the lambda" if label == "lambda" else f"the local function {fn.name}"


def _stores_into(node: gast.AST, local: str) -> bool:
    """Whether ``node`` rebinds ``local`` or writes into it (``local[i] = v``, ``local.a = v``)."""
    if isinstance(node, gast.Name):
        return node.id == local and isinstance(node.ctx, (gast.Store, gast.Del))
    if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, (gast.Store, gast.Del)):
        root = node.value
        while isinstance(root, (gast.Subscript, gast.Attribute)):
            root = root.value
        return isinstance(root, gast.Name) and root.id == local
    return False
