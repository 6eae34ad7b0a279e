"""Syntax fence: reject every construct the compiler cannot differentiate, up front.

Input: a parsed FunctionDef. Output: nothing; raises UnsupportedSyntax naming
the first unsupported construct and its original ``file:line:col`` before any
code runs. The fence is an allowlist, so a construct added to Python later is
rejected rather than silently mistranslated.

Besides syntax, the fence rejects calls that would change an object behind the
compiler's back, since gradients would then be silently wrong: ``setattr`` and
``delattr``, ``exec`` and ``eval``, methods that mutate their object
(``xs.append(v)``, ``a.fill(0)``, ``a.sort()``, ``obj.__setitem__(...)``),
NumPy functions that write into an argument (``np.copyto``, ``np.multiply.at``, ...)
and any ``out`` argument, by keyword or by position (``np.exp(y, y)``). Such a
method or function is refused in any use, not only in a direct call
(``fill = y.fill``, ``getattr(y, "sort")``), as is ``getattr`` with a name that
is not a constant string. A module is accepted only as the base of an
attribute (``np.sum``): bound to a local name (``xp = np``), its functions
would be taken for methods of a value. A name the function assigns itself is
never taken for the builtin or global of the same name.

``np.add.at(y, indices, v)`` and ``np.subtract.at`` are writes into ``y``:
accepted as a statement where ``y[i] = v`` would be, into an array the
function made (desugar.py runs them as such a write), refused otherwise.
Which local arrays may be written and which lists may grow (the names no
other name can see) is aliasing.py's to say. A name defined nowhere (not a
local, a closure cell, a global or a builtin) raises UndefinedName, a
NameError, naming its line. ``with`` is accepted over ``np.errstate(...)``
and ``warnings.catch_warnings()`` only, with no jump out of its body but a
final ``return`` (see ir/contexts.py).
"""
from __future__ import annotations

import builtins
import difflib
import functools
import inspect
import operator
import random
import types
import warnings

import gast
import numpy as np

from ..errors import UndefinedName, UnsupportedSyntax
from ..ir import annotations as anno
from ..rules.spellings import AT_UFUNCS
from .aliasing import Aliasing, static_value
from .lists import written_lists
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
_MUTATING_METHODS = {
    "append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "update",
    "setdefault", "popitem", "add", "discard", "fill", "resize", "put", "itemset",
    "setflags", "setfield", "byteswap", "partition", "shuffle", "__setattr__", "__delattr__",
    "__setitem__", "__delitem__", "__setstate__", "__iadd__", "__isub__", "__imul__", "__itruediv__",
    "__ifloordiv__", "__imatmul__", "__ipow__", "__imod__", "__iand__", "__ior__", "__ixor__",
    "__ilshift__", "__irshift__",
}

# Functions that write into one of their arguments.
_INPLACE_FUNCTIONS = {
    id(f): label for f, label in [
        (np.copyto, "np.copyto"), (np.put, "np.put"), (np.place, "np.place"),
        (np.putmask, "np.putmask"), (np.fill_diagonal, "np.fill_diagonal"),
        (np.put_along_axis, "np.put_along_axis"), (np.random.shuffle, "np.random.shuffle"),
        (random.shuffle, "random.shuffle"), (object.__setattr__, "object.__setattr__"),
        (object.__delattr__, "object.__delattr__"),
    ] + [(getattr(operator, n), f"operator.{n}") for n in (
        "setitem", "delitem", "iadd", "isub", "imul", "itruediv", "ifloordiv", "imatmul", "ipow", "imod",
        "iand", "ior", "ixor", "ilshift", "irshift", "iconcat")]
}

# Functions that reach an attribute named by a string, called directly: the string must be a
# constant naming no in-place method. Maps each to the positions of its name arguments (None: all).
_BY_NAME = {id(getattr): (1,), id(operator.attrgetter): None}
# Functions refused in any use: label -> remedy.
_OPAQUE_FUNCTIONS = {
    id(operator.methodcaller): ("operator.methodcaller", "it calls a method named by a string, which may change "
                                "its object; call the method directly (obj.name(...))"),
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


class SyntaxFence(gast.NodeVisitor):
    """Visits a function body and raises on the first node outside the allowlist."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.aliasing = Aliasing(parsed)  # which locals may share memory (aliasing.py)
        self.locals = self.aliasing.locals
        self._callables: dict[str, list] | None = None
        self._top_targets: list[gast.AST] = []
        self._inside = ""  # "a comprehension" while visiting one (a lambda there is refused)

    def visit_Expr(self, node: gast.Expr) -> None:
        call = node.value
        if ufunc_at_call(node, self.parsed, self.locals) is not None \
                and call.args[0].id in self.aliasing.writable_arrays():
            for arg in call.args:
                self.visit(arg)
            return
        if isinstance(call, gast.Call) and isinstance(call.func, gast.Attribute) and call.func.attr == "append" \
                and isinstance(call.func.value, gast.Name) and len(call.args) == 1 and not call.keywords:
            if call.func.value.id in self.aliasing.growable_lists():
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
            for default in stmt.args.defaults:
                self.visit(default)
            for inner in stmt.body:
                self.visit(inner)
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
                self.fail(node, f"a with statement over {_dotted(context)}",
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
        if node.id in _OPAQUE_BUILTINS and isinstance(node.ctx, gast.Load) \
                and self.static(node) is getattr(builtins, node.id):
            self.fail(node, *_OPAQUE_BUILTINS[node.id])
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

    def visit_Attribute(self, node: gast.Attribute) -> None:
        if node.attr in _MUTATING_METHODS and node.attr.startswith("__"):
            self.fail(node, f"the in-place method {node.attr}", "it changes its object; build a new value instead")
        base = self.static(node.value)
        if isinstance(node.ctx, gast.Load):
            self._check_member(node, base, node.attr, _dotted(node))
            self._check_value(node, self.static(node))
        if isinstance(base, types.ModuleType):
            return  # a module as the base of an attribute (np.sum): its one supported use
        self.generic_visit(node)

    # -- values that would change an object, or hide a callee, out of the fence's sight --
    # A direct call of an in-place method or function is refused in visit_Call, which
    # does not visit the callee it checked; any other use of one (``fill = y.fill``,
    # ``f(np.copyto)``) reaches the checks below, and so is refused as well.
    def _check_member(self, node: gast.AST, base: object, attr: str, label: str) -> None:
        """Refuse ``label``, the attribute ``attr`` of a value (``base`` if it is known
        statically), used as a value when it is an in-place method or function."""
        if attr in _MUTATING_METHODS and not isinstance(base, types.ModuleType):
            self.fail(node, f"the in-place method .{attr}() taken as a value ({label})",
                      "it changes its object behind the compiler's back, so gradients would be wrong; "
                      "build a new value instead (np.full_like, np.sort, np.concatenate, ...)")
        if base is not _MISSING and attr == "at" and isinstance(base, np.ufunc):
            self.fail(node, f"the in-place function {label}", "it writes into its first argument; "
                      "build a new array instead")

    def _check_value(self, node: gast.AST, target: object) -> None:
        """Refuse a use, other than a direct call, of an in-place function, of a function
        that reaches attributes by name, and any use of a module but as an attribute's base."""
        if target is _MISSING:
            return
        label = _INPLACE_FUNCTIONS.get(id(target))
        if label is not None:
            self.fail(node, f"the in-place function {label}", "it writes into its argument; build a new value instead")
        if id(target) in _BY_NAME:
            self.fail(node, f"{_dotted(node)} used other than in a direct call",
                      "read the attribute directly (obj.name)")
        if id(target) in _OPAQUE_FUNCTIONS:
            self.fail(node, *_OPAQUE_FUNCTIONS[id(target)])
        if isinstance(target, types.ModuleType):
            self.fail(node, f"the module {target.__name__} used as a value ({_dotted(node)})",
                      f"refer to it by its global name where you use it ({_dotted(node)}.f(...)): "
                      "adsrc knows what a module's function computes only through a name it can resolve "
                      "before the function runs")

    def _check_by_name(self, node: gast.Call, target: object) -> None:
        """``getattr(obj, "name")``, ``operator.attrgetter("name")``: the name must be a constant
        string, and the attribute it names no in-place method (nor, for getattr, a module)."""
        label = _dotted(node.func)
        positions = _BY_NAME[id(target)]
        positions = range(len(node.args)) if positions is None else positions
        for k in positions:
            name = node.args[k] if k < len(node.args) else None
            if not (isinstance(name, gast.Constant) and isinstance(name.value, str)):
                self.fail(node, f"{label} with an attribute name that is not a constant string",
                          "read the attribute directly (obj.name), so that adsrc sees what it is")
            if target is getattr:
                self._check_member(node, self.static(node.args[0]), name.value,
                                   f"getattr({_dotted(node.args[0])}, {name.value!r})")
                self._check_value(node, self.static(gast.Attribute(value=node.args[0], attr=name.value,
                                                                   ctx=gast.Load())))
            else:
                for attr in name.value.split("."):
                    self._check_member(node, _MISSING, attr, f"{label}({name.value!r})")
        for arg in node.args:
            if not (target is getattr and arg is node.args[0] and isinstance(self.static(arg), types.ModuleType)):
                self.visit(arg)  # getattr(np, "sum") reads the module as np.sum does
        for kw in node.keywords:
            self.visit(kw.value)

    def _check_positional_out(self, node: gast.Call, target: object) -> None:
        """Refuse ``np.exp(y, y)``: an argument past a ufunc's inputs (or in the place of an
        ``out`` parameter) is an array the call writes into, like ``out=``. The callee is
        resolved statically; called through a local name, it is any function the name may
        be bound to here (see :meth:`local_callables`)."""
        func = node.func
        if target is not _MISSING:
            candidates = [(target, False)]
        elif isinstance(func, gast.Attribute) and self.static(func.value) is _MISSING:
            candidates = [(getattr(np.ndarray, func.attr, _MISSING), True)]  # a method of a local value
        else:
            root = func
            while isinstance(root, (gast.Subscript, gast.Attribute, gast.Call)):
                root = root.func if isinstance(root, gast.Call) else root.value
            bound = self.local_callables().get(root.id, []) if isinstance(root, gast.Name) else []
            candidates = [(c, False) for c in bound]
        for candidate, method in candidates:
            position = _out_position(candidate, method)
            if position is not None and len(node.args) > position:
                callee = _dotted(func) if target is not _MISSING or method else \
                    f"{_dotted(func)}, which may be {_qualified(candidate)},"
                self.fail(node.args[position], f"an out argument passed by position ({callee} writes into "
                          f"its argument {position + 1})",
                          "pass only its inputs and use the value it returns (y = np.exp(y), not np.exp(y, y))")

    def local_callables(self) -> dict[str, list]:
        """For each local name, the functions with an ``out`` argument (a ufunc, ``np.sum``, ...)
        it may be bound to: those named in any value assigned to it (``e = np.exp``,
        ``for f in [np.sin, np.cos]``, ``g(np.exp)`` for a parameter of a local function
        ``g``), directly or through other local names."""
        if self._callables is not None:
            return self._callables
        local_defs = {}
        for stmt in self.parsed.node.body:
            if isinstance(stmt, gast.FunctionDef):
                local_defs[stmt.name] = [a.id for a in stmt.args.args]
            elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) \
                    and isinstance(stmt.targets[0], gast.Name):
                local_defs[stmt.targets[0].id] = [a.id for a in stmt.value.args.args]
        pairs = []
        for node in gast.walk(self.parsed.node):
            if isinstance(node, gast.Assign):
                pairs += [(t, node.value) for t in node.targets]
            elif isinstance(node, gast.AnnAssign) and node.value is not None:
                pairs.append((node.target, node.value))
            elif isinstance(node, (gast.For, gast.comprehension)):
                pairs.append((node.target, node.iter))
            elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in local_defs:
                params = local_defs[node.func.id]
                pairs += [(gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None), a)
                          for p, a in zip(params, node.args)]
                pairs += [(gast.Name(id=kw.arg, ctx=gast.Store(), annotation=None, type_comment=None), kw.value)
                          for kw in node.keywords if kw.arg in params]
            elif isinstance(node, gast.FunctionDef) and node is not self.parsed.node:
                params = [a.id for a in node.args.args]
                pairs += [(gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None), d)
                          for p, d in zip(params[len(params) - len(node.args.defaults):], node.args.defaults)]
        found: dict[str, dict[int, object]] = {}
        flows: dict[str, set[str]] = {}
        for target, value in pairs:
            names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
            for part in _values_in(value):
                if isinstance(part, gast.Name) and part.id in self.locals:
                    for n in names:
                        flows.setdefault(n, set()).add(part.id)
                    continue
                obj = self.static(part)
                if _out_position(obj) is not None:
                    for n in names:
                        found.setdefault(n, {})[id(obj)] = obj
        changed = True
        while changed:
            changed = False
            for n, sources in flows.items():
                for source in sources:
                    new = {k: v for k, v in found.get(source, {}).items() if k not in found.get(n, {})}
                    if new:
                        found.setdefault(n, {}).update(new)
                        changed = True
        self._callables = {n: list(objs.values()) for n, objs in found.items()}
        return self._callables

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

    def _check_module_binding(self, target: gast.AST, value: gast.AST) -> None:
        """Refuse ``np = numpy``: a call through a local name is a method call on a local value
        to the later passes, so the module's functions would not be differentiated."""
        module = self.static(value) if isinstance(value, (gast.Name, gast.Attribute)) else _MISSING
        if isinstance(module, types.ModuleType) and isinstance(target, gast.Name):
            self.fail(value, f"assigning the module {module.__name__} to the local name {target.id}",
                      f"use the module's global name ({_dotted(value)}.f(...)) instead of a local name")

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
            base = target.value
            if isinstance(base, gast.Name) and base.id in self.written_lists and target in self._top_targets:
                self._check_list_write(target, base.id)
                return
            if isinstance(base, gast.Name) and base.id in self.aliasing.writable_arrays() and target in self._top_targets:
                self.visit(target.slice)
                return
            root = base
            while isinstance(root, gast.Subscript):
                root = root.value
            if root is not base and isinstance(root, gast.Name) and self._made_here(root.id, self.aliasing.makes_fresh_list):
                self.fail(target, f"assignment into an item of an item of the list {root.id} (xs[i][j] = ...)",
                          "the item may be shared (with [v] * n, or another name): replace the item instead "
                          f"(row = {_dotted(base).replace('[...]', '[i]', 1)}.copy(); row[j] = ...; "
                          f"{_dotted(base).replace('[...]', '[i]', 1)} = row), or build a new list")
            if isinstance(base, gast.Name) and self._made_here(base.id, self.aliasing.makes_fresh_array):
                self.fail(target, f"assignment to a subscript of {base.id}, which may still hold an array the "
                          f"function did not make (the copy is made on some paths only, or another name shares it)",
                          f"make the copy at the top level of the function, before any branch or loop "
                          f"({base.id} = {base.id}.copy()), or copy into a new name and write into that")
            self.fail(target, "assignment to a subscript (x[i] = ...) of an array or list not created in this function",
                      "create it here with np.zeros, np.empty, np.array(...), x.copy() and the like, "
                      "or build a new array with np.where or np.concatenate; a list with xs = list(xs) at the top "
                      "of the function, or [v] * n, or a comprehension")
        if isinstance(target, gast.Attribute):
            self.fail(target, "assignment to an attribute")
        if isinstance(target, gast.Starred):  # a loop's or comprehension's; desugar unpacks it (assignments.py)
            self._check_target(target.value)
            return
        self.fail(target, _NAMES.get(type(target).__name__, type(target).__name__))

    def _made_here(self, local: str, fresh) -> bool:
        """Whether some assignment gives ``local`` a value ``fresh`` says is new (an array, a list)."""
        return any(isinstance(n, gast.Assign) and isinstance(n.targets[0], gast.Name) and n.targets[0].id == local
                   and fresh(n.value) for n in gast.walk(self.parsed.node))

    @functools.cached_property
    def written_lists(self) -> dict[str, str]:
        """The lists written by item, each with why it may not be written ('' if it may: lists.py);
        the accepted ones are noted on the function for ANF (anno.WRITTEN_LISTS)."""
        found = written_lists(self.aliasing)
        anno.set(self.parsed.node, anno.WRITTEN_LISTS, {name for name, reason in found.items() if not reason})
        return found

    def _check_list_write(self, target: gast.Subscript, base: str) -> None:
        """``xs[i] = v`` into a list made here: accepted where nothing else can reach the list (lists.py),
        with an index that selects one item."""
        reason = self.written_lists[base]
        if reason:
            self.fail(target, f"assignment to an item of the list {base} (xs[i] = ...), which {reason}",
                      f"adsrc writes into a list only where no other name, container, callee or closure can see "
                      f"it, since Python's write would change what they see too: build {base} here "
                      f"({base} = list(...), [..] * n, a comprehension), use only {base} itself, and pass copies "
                      f"(list({base})) or items (*{base}) elsewhere; or build a new list instead of writing")
        if any(isinstance(n, gast.Slice) for n in gast.walk(target.slice)):
            self.fail(target, f"assignment to a slice of the list {base} (xs[i:j] = ...), which may change its "
                      f"length", f"write the items one by one ({base}[k] = ...), or build a new list "
                      f"({base} = {base}[:i] + [...] + {base}[j:])")
        self.visit(target.slice)

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
        for kw in node.keywords:
            if kw.arg == "out":
                self.fail(kw.value, "out= (writing into an existing array)", "use the returned value instead")
        target = self.static(func)
        self._check_positional_out(node, target)
        if target is not _MISSING and id(target) in _BY_NAME:
            self._check_by_name(node, target)
            return
        label = _INPLACE_FUNCTIONS.get(id(target)) if target is not _MISSING else None
        if label is not None:
            self.fail(node, f"the in-place function {label}", "it writes into its argument; build a new value instead")
        if isinstance(func, gast.Attribute) and any(getattr(target, "__self__", None) is u for u in AT_UFUNCS) \
                and func.attr == "at":
            self.fail(node, f"{_dotted(func)} into an array not created in this function (or given a second name, "
                      f"or used as a value)", "it writes into its first argument, as y[i] = v does, which adsrc runs "
                      "only on an array made here: copy it first (y = y.copy()) and write into the copy, or build a "
                      "new array (np.add.at(out, idx, v) into a 1-D out is out = out + np.bincount(idx, weights=v, "
                      "minlength=len(out)))")
        if isinstance(func, gast.Attribute) and isinstance(getattr(target, "__self__", None), np.ufunc) \
                and func.attr == "at":
            self.fail(node, f"the in-place function {_dotted(func)}",
                      "it writes into its first argument; build a new array instead (np.add.at(out, idx, v) "
                      "into a 1-D out is out = out + np.bincount(idx, weights=v, minlength=len(out)))")
        if isinstance(func, gast.Attribute) and func.attr in _MUTATING_METHODS \
                and not isinstance(self.static(func.value), types.ModuleType):
            self.fail(node, f"the in-place method .{func.attr}()", "it changes its object, so gradients "
                      "would be wrong; build a new value instead (a list literal, np.concatenate, np.where, np.sort, ...)")
        self.visit(func)
        for arg in node.args:  # f(*xs) spreads a sequence into arguments, as Python does
            self.visit(arg.value if isinstance(arg, gast.Starred) else arg)
        ranks = target in (builtins.sorted, builtins.min, builtins.max)
        for kw in node.keywords:
            if ranks and kw.arg == "key" and isinstance(kw.value, gast.Lambda):
                self.visit(kw.value.body)  # a key only ranks: it runs as written, carrying no gradient
                continue
            self.visit(kw.value)


def _out_position(target: object, method: bool = False) -> int | None:
    """The index of the positional argument of ``target`` that is ``out`` (an array the call
    writes into), or None: ``nin`` for a ufunc, else the position of a parameter named ``out``
    of a NumPy function, ufunc method or (``method``: called on a value) array method."""
    if target is _MISSING or not callable(target):
        return None
    owner = getattr(target, "__self__", None)
    cached = owner is None or isinstance(owner, (types.ModuleType, np.ufunc))  # not a method of a value
    key = (id(target), method)
    if cached and key in _OUT_POSITIONS:
        return _OUT_POSITIONS[key][1]
    position = None
    if isinstance(target, np.ufunc):
        position = target.nin
    elif method or str(getattr(target, "__module__", None) or "").startswith("numpy") \
            or isinstance(owner, (np.ufunc, np.ndarray, np.generic)):
        try:
            params = list(inspect.signature(target).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if "out" in positional:
            position = positional.index("out") - (1 if method else 0)
    if cached:
        _OUT_POSITIONS[key] = (target, position)  # keeps target alive, so its id stays its own
    return position


_OUT_POSITIONS: dict[tuple[int, bool], tuple[object, int | None]] = {}


def check_syntax(parsed: Parsed) -> None:
    """Raise UnsupportedSyntax for the first unsupported construct in the function."""
    if isinstance(parsed.node, gast.AsyncFunctionDef):
        raise UnsupportedSyntax("an async function (async def)", parsed.where(parsed.node))
    fence = SyntaxFence(parsed)
    for stmt in parsed.node.body:
        fence.visit_top_level(stmt)


def _escaping_jumps(stmts: list[gast.stmt]):
    """The return, break and continue statements that leave ``stmts`` (not those of a loop inside)."""
    for stmt in stmts:
        if isinstance(stmt, (gast.Return, gast.Break, gast.Continue)):
            yield stmt
        elif isinstance(stmt, (gast.For, gast.While)):
            yield from (n for n in gast.walk(stmt) if isinstance(n, gast.Return))
        elif isinstance(stmt, (gast.If, gast.With)):
            yield from _escaping_jumps(stmt.body + getattr(stmt, "orelse", []))


def _values_in(value: gast.AST):
    """The names and attribute chains in an expression whose value may be part of its value:
    all of them but the callees of its calls (``f`` in ``f(x)``)."""
    if isinstance(value, (gast.Name, gast.Attribute)):
        yield value
        if isinstance(value, gast.Name):
            return
    for field, child in gast.iter_fields(value):
        if isinstance(value, gast.Call) and field == "func":
            continue
        for item in child if isinstance(child, list) else [child]:
            if isinstance(item, gast.AST):
                yield from _values_in(item)


def ufunc_at_call(stmt: gast.stmt, parsed: Parsed, locals_: set[str]) -> np.ufunc | None:
    """The ufunc of a statement ``np.add.at(y, indices, v)`` or ``np.subtract.at(...)`` (three positional
    arguments, ``y`` a name), which the frontend runs as a write into ``y``; else None."""
    if not (isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call)):
        return None
    call, func = stmt.value, stmt.value.func
    if not (isinstance(func, gast.Attribute) and func.attr == "at" and len(call.args) == 3 and not call.keywords
            and isinstance(call.args[0], gast.Name) and not any(isinstance(a, gast.Starred) for a in call.args)):
        return None
    ufunc = static_value(parsed, locals_, func.value)
    return ufunc if any(ufunc is u for u in AT_UFUNCS) else None


def _qualified(obj: object) -> str:
    name = getattr(obj, "__name__", type(obj).__name__)
    return f"np.{name}" if isinstance(obj, np.ufunc) or getattr(obj, "__module__", None) == "numpy" else name


def _dotted(node: gast.AST) -> str:
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    if isinstance(node, gast.Subscript):
        return f"{_dotted(node.value)}[...]"
    if isinstance(node, gast.Call):
        return f"{_dotted(node.func)}(...)"
    return "..."
