"""Mutations: the fence's checks of what would change an object behind the compiler's back.

A mixin of :class:`~adsrc.frontend.fence.SyntaxFence`, which gives it
``parsed``, ``locals``, ``aliasing``, ``fail``, ``static`` and the visitor
(``visit``, ``generic_visit``). Input: the names, attributes, calls and
assignment targets the fence visits. Output: nothing; ``fail`` raises
UnsupportedSyntax, with the construct's ``file:line:col``, for what would make
gradients silently wrong:

* ``setattr`` and ``delattr``, ``exec`` and ``eval``; methods that mutate
  their object (``xs.append(v)``, ``a.fill(0)``, ``a.sort()``,
  ``obj.__setitem__(...)``); NumPy functions that write into an argument
  (``np.copyto``, ``np.multiply.at``, ...) and any ``out`` argument, by
  keyword or by position (``np.exp(y, y)``; called through a local name, any
  function the name may be bound to: out_arguments.py). Such a method or
  function is refused in any use, not only in a direct call
  (``fill = y.fill``, ``getattr(y, "sort")``), as is ``getattr`` with a name
  that is not a constant string;
* a module anywhere but as the base of an attribute (``np.sum``): bound to a
  local name (``xp = np``), its functions would be taken for methods of a
  value;
* writes into what the function did not make. ``y[i] = v`` is accepted into an
  array only the function sees (aliasing.py for the whole function, or
  freshness.py at the write itself), or, in the differentiated function's
  own fence, into the array a parameter was given where no other name read
  afterwards may hold it (api/written.py runs such a call as Python's; the
  parameters are noted as ``anno.WRITTEN_PARAMS``), ``xs[i] = v`` into such a
  list (lists.py says which, and notes them on the function as ``anno.WRITTEN_LISTS``),
  ``xs.append(v)`` on a list that may grow (aliasing.py), and
  ``np.add.at(y, indices, v)`` or ``np.subtract.at`` as a statement where
  ``y[i] = v`` would be (:func:`ufunc_at_call`; desugar.py runs it as such a
  write).
"""
from __future__ import annotations

import builtins
import functools
import operator
import random
import types

import gast
import numpy as np

from ..ir import annotations as anno
from ..rules.spellings import AT_UFUNCS
from .aliasing import static_value
from .freshness import Freshness
from .lists import written_lists
from .out_arguments import callables_with_out, out_position, qualified_name
from .parse import _MISSING, Parsed

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


class MutationChecks:
    """The checks of a :class:`~adsrc.frontend.fence.SyntaxFence` that see mutations: statements that
    write (``np.add.at``, ``.append``), attributes, calls, and subscripts assigned to."""

    def visit_Expr(self, node: gast.Expr) -> None:
        call = node.value
        if ufunc_at_call(node, self.parsed, self.locals) is not None \
                and self._writable(call.args[0]):
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

    def _check_builtin(self, node: gast.Name) -> None:
        """Refuse ``setattr``, ``delattr``, ``exec`` and ``eval`` (the builtins, not local names)."""
        if node.id in _OPAQUE_BUILTINS and isinstance(node.ctx, gast.Load) \
                and self.static(node) is getattr(builtins, node.id):
            self.fail(node, *_OPAQUE_BUILTINS[node.id])

    def visit_Attribute(self, node: gast.Attribute) -> None:
        if node.attr in _MUTATING_METHODS and node.attr.startswith("__"):
            self.fail(node, f"the in-place method {node.attr}", "it changes its object; build a new value instead")
        base = self.static(node.value)
        if isinstance(node.ctx, gast.Load):
            self._check_member(node, base, node.attr, source_label(node))
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
            self.fail(node, f"{source_label(node)} used other than in a direct call",
                      "read the attribute directly (obj.name)")
        if id(target) in _OPAQUE_FUNCTIONS:
            self.fail(node, *_OPAQUE_FUNCTIONS[id(target)])
        if isinstance(target, types.ModuleType):
            self.fail(node, f"the module {target.__name__} used as a value ({source_label(node)})",
                      f"refer to it by its global name where you use it ({source_label(node)}.f(...)): "
                      "adsrc knows what a module's function computes only through a name it can resolve "
                      "before the function runs")

    def _check_by_name(self, node: gast.Call, target: object) -> None:
        """``getattr(obj, "name")``, ``operator.attrgetter("name")``: the name must be a constant
        string, and the attribute it names no in-place method (nor, for getattr, a module)."""
        label = source_label(node.func)
        positions = _BY_NAME[id(target)]
        positions = range(len(node.args)) if positions is None else positions
        for k in positions:
            name = node.args[k] if k < len(node.args) else None
            if not (isinstance(name, gast.Constant) and isinstance(name.value, str)):
                self.fail(node, f"{label} with an attribute name that is not a constant string",
                          "read the attribute directly (obj.name), so that adsrc sees what it is")
            if target is getattr:
                self._check_member(node, self.static(node.args[0]), name.value,
                                   f"getattr({source_label(node.args[0])}, {name.value!r})")
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
            bound = self.local_callables.get(root.id, []) if isinstance(root, gast.Name) else []
            candidates = [(c, False) for c in bound]
        for candidate, method in candidates:
            position = out_position(candidate, method)
            if position is not None and len(node.args) > position:
                callee = source_label(func) if target is not _MISSING or method else \
                    f"{source_label(func)}, which may be {qualified_name(candidate)},"
                self.fail(node.args[position], f"an out argument passed by position ({callee} writes into "
                          f"its argument {position + 1})",
                          "pass only its inputs and use the value it returns (y = np.exp(y), not np.exp(y, y))")

    @functools.cached_property
    def local_callables(self) -> dict[str, list]:
        """For each local name, the functions with an ``out`` argument it may be bound to (out_arguments.py)."""
        return callables_with_out(self.parsed, self.locals)

    def _check_module_binding(self, target: gast.AST, value: gast.AST) -> None:
        """Refuse ``np = numpy``: a call through a local name is a method call on a local value
        to the later passes, so the module's functions would not be differentiated."""
        module = self.static(value) if isinstance(value, (gast.Name, gast.Attribute)) else _MISSING
        if isinstance(module, types.ModuleType) and isinstance(target, gast.Name):
            self.fail(value, f"assigning the module {module.__name__} to the local name {target.id}",
                      f"use the module's global name ({source_label(value)}.f(...)) instead of a local name")

    def _check_subscript_target(self, target: gast.Subscript) -> None:
        """Accept ``xs[i] = v`` or ``y[i] = v`` into a list or an array only the function sees, as the whole
        target of an assignment; refuse any other assignment to a subscript."""
        base = target.value
        if isinstance(base, gast.Name) and base.id in self.written_lists and target in self._top_targets:
            self._check_list_write(target, base.id)
            return
        if isinstance(base, gast.Name) and target in self._top_targets and self._writable(target):
            self.visit(target.slice)
            return
        root = base
        while isinstance(root, gast.Subscript):
            root = root.value
        if root is not base and isinstance(root, gast.Name) and self._made_here(root.id, self.aliasing.makes_fresh_list):
            self.fail(target, f"assignment into an item of an item of the list {root.id} (xs[i][j] = ...)",
                      "the item may be shared (with [v] * n, or another name): replace the item instead "
                      f"(row = {source_label(base).replace('[...]', '[i]', 1)}.copy(); row[j] = ...; "
                      f"{source_label(base).replace('[...]', '[i]', 1)} = row), or build a new list")
        if root is not base and isinstance(root, gast.Name):  # (view_writes.py took those with basic indices)
            self.fail(target, f"assignment into an index of an index of {root.id} ({source_label(target)} = ...) "
                      f"where an inner index may be an array or not an int: indexing by an array makes a copy, "
                      f"and Python's write into it is lost",
                      f"write through one index ({root.id}[i, j] = ...), with ints known to be ints (a literal, "
                      f"a range loop's counter, arithmetic of them)")
        shared = self._shared_binding(base.id) if isinstance(base, gast.Name) else None
        if shared is not None:
            sharing = self.aliasing.call_shares(shared)
            what = f"may be the very array {source_label(shared.func)}(...) was given, or a view of it" if sharing \
                else f"holds what {source_label(shared.func)}(...) returned, a function of the program's own"
            why = "Python's write would change that array too: " if sharing else ""
            self.fail(target, f"assignment to a subscript of {base.id} (x[i] = ...), which {what} (line "
                      f"{shared.lineno}: {self.parsed.source_line(shared.lineno)}), not an array made in this function",
                      f"{why}write into a copy ({base.id} = np.array(...) with its default copy=True, or "
                      f"{base.id} = {base.id}.copy() before the write), or build a new array with np.where or "
                      f"np.concatenate")
        sharers = self.freshness.sharers(target) if isinstance(base, gast.Name) else []
        if sharers:
            self.fail(target, f"assignment to a subscript of {base.id} (x[i] = ...) while another name that may "
                      f"hold the same array ({', '.join(sharers)}) is read after the write",
                      f"Python's write would show through {', '.join(sharers)}, which adsrc does not follow: write "
                      f"into a copy ({base.id} = {base.id}.copy() before the write), or read a copy through the "
                      f"other name")
        given = self.freshness.written_params(target) if isinstance(base, gast.Name) else []
        if given and base.id not in given and not self.writes_params:
            self.fail(target, f"assignment to a subscript of {base.id} (x[i] = ...), which may hold the array "
                      f"the parameter {', '.join(given)} was given (on some path to the write)",
                      f"Python's write would change the caller's array: copy it on every path "
                      f"({base.id} = {given[0]}.copy()), or build a new array with np.where or np.concatenate")
        if isinstance(base, gast.Name) and self._made_here(base.id, self.aliasing.makes_fresh_array):
            self.fail(target, f"assignment to a subscript of {base.id}, which may still hold an array the "
                      f"function did not make (the copy is made on some paths only, or another name shares it)",
                      f"make the copy at the top level of the function, before any branch or loop "
                      f"({base.id} = {base.id}.copy()), or copy into a new name and write into that")
        self.fail(target, "assignment to a subscript (x[i] = ...) of an array or list not created in this function",
                  "create it here with np.zeros, np.empty, np.array(...), x.copy() and the like, "
                  "or build a new array with np.where or np.concatenate; a list with xs = list(xs) at the top "
                  "of the function, or [v] * n, or a comprehension")

    def _writable(self, target: gast.AST) -> bool:
        """Whether a write into ``target`` (``y[...]``, or ``y`` of ``np.add.at(y, ...)``) changes only an
        array the function made that no other name sees: ``y`` is such an array wherever it is written
        (aliasing.py), or is at this write (freshness.py, which follows the code statement by statement)."""
        name = target.value.id if isinstance(target, gast.Subscript) else target.id
        return name in self.aliasing.writable_arrays() or self.freshness.writable_target(target)

    def written_params(self) -> dict[str, list[gast.stmt]]:
        """The parameters whose given arrays the accepted writes may change, each with those writes: by
        index (``p[i] = v``, ``np.add.at(p, ...)``), or updates ``p op= e`` that run in place where ``p``
        holds an array no other name reads afterwards."""
        found: dict[str, list[gast.stmt]] = {}
        for node in gast.walk(self.parsed.node):
            target = None
            if isinstance(node, gast.Assign) and isinstance(node.targets[0], gast.Subscript):
                target = node.targets[0]
            elif isinstance(node, gast.AugAssign):  # y[i] op= v, or y op= v
                target = node.target
            elif isinstance(node, gast.Expr) and ufunc_at_call(node, self.parsed, self.locals) is not None:
                target = node.value.args[0]
            if target is None or not self.freshness.writable(node):
                continue  # not a write, or one the per-name rule accepted (into an array made here)
            for param in self.freshness.written_params(target):
                found.setdefault(param, []).append(node)
        return found

    writes_params = False  # whether a write may change a parameter's own array (the fence's, not the effects')

    @functools.cached_property
    def freshness(self) -> Freshness:
        return Freshness(self.aliasing, params=self.writes_params)

    def _shared_binding(self, local: str) -> gast.Call | None:
        """The first call assigned to ``local`` that is not known to make a new array: one whose result
        may be an array another name holds (``np.asarray(x)``, ``np.array(x, copy=False)``,
        ``x.reshape(...)``; aliasing.py), or a function of the program's own, if any."""
        for n in gast.walk(self.parsed.node):
            if isinstance(n, (gast.Assign, gast.AnnAssign)) and isinstance(getattr(n, "value", None), gast.Call):
                target = n.targets[0] if isinstance(n, gast.Assign) else n.target
                if isinstance(target, gast.Name) and target.id == local \
                        and not self.aliasing.makes_fresh_array(n.value):
                    return n.value
        return None

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

    def visit_Call(self, node: gast.Call) -> None:
        func = node.func
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
            self.fail(node, f"{source_label(func)} into an array not created in this function (or given a second name, "
                      f"or used as a value)", "it writes into its first argument, as y[i] = v does, which adsrc runs "
                      "only on an array made here: copy it first (y = y.copy()) and write into the copy, or build a "
                      "new array (np.add.at(out, idx, v) into a 1-D out is out = out + np.bincount(idx, weights=v, "
                      "minlength=len(out)))")
        if isinstance(func, gast.Attribute) and isinstance(getattr(target, "__self__", None), np.ufunc) \
                and func.attr == "at":
            self.fail(node, f"the in-place function {source_label(func)}",
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


def source_label(node: gast.AST) -> str:
    """How a message names an expression: ``np.add.at``, ``xs[...]``, ``open(...)``."""
    if isinstance(node, gast.Name):
        return node.id
    if isinstance(node, gast.Attribute):
        return f"{source_label(node.value)}.{node.attr}"
    if isinstance(node, gast.Subscript):
        return f"{source_label(node.value)}[...]"
    if isinstance(node, gast.Call):
        return f"{source_label(node.func)}(...)"
    return "..."
