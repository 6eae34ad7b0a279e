"""Desugar: rewrite the function into the small structured core the later passes handle.

Input: a fenced FunctionDef. Output: a FunctionDef in which

* functions defined inside it (``def`` or ``name = lambda``) are inlined
  at their calls (see inline.py);
* ``x op= e`` is ``x = x op e`` and ``x: T = e`` is ``x = e``;
* ``with np.errstate(...)`` and ``with warnings.catch_warnings()`` bodies
  sit between markers that codegen makes a with statement again (see
  ir/contexts.py);
* ``sum(e for x in xs if c)`` (or over a list comprehension) is an explicit
  accumulation loop placed before the statement that used it, and any other
  list comprehension or generator expression a loop that appends to a list;
  a dict comprehension a loop that appends ``(key, value)`` pairs, then
  ``dict(pairs)``; ``list(zip(...))``, ``tuple(enumerate(...))``,
  ``list(reversed(...))`` and ``dict(zip(...))`` are the comprehensions that
  build the same container;
  a comprehension in a branch of ``a if c else b``, or after the first
  operand of ``and``/``or``, runs only where Python would run it: that
  expression becomes an if statement assigning a fresh name, as does any
  ``and``/``or`` whose operands are not all evidently bools (its result may
  be a differentiable operand) (comprehensions.py);
* loops over enumerate, zip, reversed, dicts and their views are lowered as
  loops.py says, and every assignment is single and flat (assignments.py);
  ``a, b = e`` reads what Python's unpacking iterates;
* the builtins generated code calls (``range``, ``len``, ``min``, ``list``,
  ``dict``) are called under names the function does not
  bind: their own name where the function never rebinds it, else a fresh
  name bound by ``from builtins import ...`` at the top of the body (see
  :func:`builtin_name`); ``zip``, ``enumerate``, ``reversed`` and ``sum`` are
  lowered only where the name is the builtin;
* every ``break``, ``continue`` and ``return`` is the last statement of its
  block, and nothing follows a statement that may jump: what followed is
  copied into each branch that falls through, so the reverse pass needs only
  branch records and iteration counts;
* a ``return`` inside a loop sets a result and a flag and breaks, and the
  function has either one ``return`` at its end or a ``result`` variable;
  a function that may end without a return returns None (jumps.py).

Desugar does the rest itself, in :meth:`Desugar.run`: it combines the
mixins of comprehensions.py, jumps.py and loops.py, and calls inline.py,
assignments.py and ir/contexts.py.
"""
from __future__ import annotations

import builtins
import copy

import gast

from ..ir import annotations as anno
from ..rules.spellings import ufunc_at
from ..ir.build import assign, call, const, located, name
from ..ir.contexts import lower_with
from ..ir.dataflow import names as name_nodes
from ..ir.naming import Namer, Rename, stored_names
from .aliasing import Aliasing, local_names
from .assignments import flatten_assignments
from .closures import Closures
from .comprehensions import ComprehensionHoisting
from .inline import inline_local_functions
from .jumps import JumpLowering
from .loops import LoopLowering, _names_in
from .mutations import ufunc_at_call
from .parse import _MISSING, Parsed

# Builtins that generated code may call: the index loops of zip (here) and of ANF,
# and the backward sweep's replay of loops.
GENERATED_BUILTINS = ("range", "len", "min", "list", "dict")


class Simplify(gast.NodeTransformer):
    """``x op= e`` to ``x = x op e``; annotated assignment to plain assignment.

    Where ``x`` may share its array with another name, the two differ for an
    array (in place, the other name sees the change), so the rewrite is
    preceded by ``rebinding(x, 'file:line')``, which refuses an array at run time.
    So is ``xs[i] op= e`` on a list the function writes (``lists``): Python
    changes an array item in place, which another name or item may share.
    """

    def __init__(self, shared: dict[str, bool] | None = None, guard: str | None = None,
                 parsed: Parsed | None = None, lists: set[str] = frozenset(), runtime: dict | None = None,
                 namer: Namer | None = None):
        self.shared, self.guard, self.parsed, self.lists = shared or {}, guard, parsed, lists
        self.runtime, self.namer = runtime or {}, namer
        written = anno.get(parsed.node, anno.WRITTEN_PARAMS, {}) if parsed is not None else {}
        self.updates = written.get("updates", set())

    def visit_AugAssign(self, node: gast.AugAssign):
        target = node.target
        if isinstance(target, gast.Name) and (node.lineno, node.col_offset) in self.updates:
            return self._in_place(node)
        if isinstance(target, gast.Name) and target.id in self.shared and self.guard:
            check = gast.Expr(value=call(self.guard, name(target.id), const(self.parsed.where(node)),
                                         const(self.shared[target.id])))
            return located([check], node) + [self._rewrite(node)]
        if isinstance(target, gast.Subscript) and isinstance(target.value, gast.Name) \
                and target.value.id in self.lists and self.guard:
            item = gast.Subscript(value=name(target.value.id), slice=copy.deepcopy(target.slice), ctx=gast.Load())
            check = gast.Expr(value=call(self.guard, item, const(self.parsed.where(node)), const(True)))
            return located([check], node) + [self._rewrite(node)]
        return self._rewrite(node)

    def _in_place(self, node: gast.AugAssign) -> list[gast.stmt]:
        """``p op= e`` where ``p`` may hold the array a parameter was given (and no other name read
        afterwards does: frontend/freshness.py): in place, as Python runs it, where ``p`` is an array
        (``t = p op e; p[...] = t``, after the check that Python would cast ``t`` into ``p``); a
        rebinding where it is a number."""
        target, where = node.target.id, const(self.parsed.where(node))
        updated = self.namer.fresh(f"{target}_updated")
        value = gast.copy_location(gast.BinOp(left=name(target), op=node.op, right=copy.deepcopy(node.value)), node)
        write = gast.Assign(targets=[gast.Subscript(value=name(target), slice=const(Ellipsis), ctx=gast.Store())],
                            value=name(updated), type_comment=None)
        body = [assign(updated, value),
                gast.Expr(value=call(self.runtime["updated_in_place"], name(target), name(updated), where)), write]
        test = call(self.runtime["in_place"], name(target))
        return located([gast.If(test=test, body=body, orelse=[self._rewrite(node)])], node)

    def _rewrite(self, node: gast.AugAssign) -> gast.Assign:
        target = node.target
        if isinstance(target, gast.Subscript):
            current = gast.Subscript(value=copy.deepcopy(target.value), slice=copy.deepcopy(target.slice),
                                     ctx=gast.Load())
            located([current], node)
        else:
            current = name(target.id)
        value = gast.BinOp(left=current, op=node.op, right=node.value)
        gast.copy_location(value, node)
        return gast.copy_location(gast.Assign(targets=[target], value=value, type_comment=None), node)

    def visit_AnnAssign(self, node: gast.AnnAssign) -> gast.Assign:
        return gast.copy_location(gast.Assign(targets=[node.target], value=node.value, type_comment=None), node)


def _as_list(result) -> list[gast.stmt]:
    return result if isinstance(result, list) else [result]


class Desugar(ComprehensionHoisting, JumpLowering, LoopLowering):
    """Rewrites one function into the structured core, in :meth:`run`."""

    def __init__(self, parsed: Parsed, namer: Namer):
        self.parsed = parsed
        self.namer = namer
        self.result: str | None = None
        self.flag: str | None = None
        self.lists: set[str] = set()  # names of the lists comprehensions became (sequences)
        self.aliases: dict[str, str] = {}  # builtin -> the fresh name generated code calls it by
        self.bound_builtins: set[str] = set()  # the aliases the generated code needs bound

    # -- builtins ----------------------------------------------------------
    def find_bindings(self, node: gast.FunctionDef) -> None:
        """Which names the function binds itself, and which it reads from outside."""
        mentioned = name_nodes(node)
        self._mentioned = {n.id for n in mentioned}
        self._bound = {n.id for n in mentioned if not isinstance(n.ctx, gast.Load)}
        self._bound |= {a.id for a in node.args.args + node.args.kwonlyargs}
        self._bound |= {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n is not node}
        # The functions defined inside it (def or name = lambda): a reduce over one is a loop (folds.py).
        self._local_functions = {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n is not node}
        self._local_functions |= {t.id for n in gast.walk(node) if isinstance(n, gast.Assign)
                                  and isinstance(n.value, gast.Lambda) for t in n.targets if isinstance(t, gast.Name)}
        # Names that hold a dict somewhere: zip over them is refused before anything runs.
        self._dicts = {t.id for n in gast.walk(node) if isinstance(n, gast.Assign) and _makes_dict(n.value, self)
                       for t in n.targets if isinstance(t, gast.Name)}

    def is_builtin(self, builtin: str) -> bool:
        """True if ``builtin`` means the builtin of that name everywhere in the function."""
        if builtin in self._bound:
            return False
        real = getattr(builtins, builtin, _MISSING)
        obj = self.parsed.resolve(builtin)
        return real is not _MISSING and (obj is _MISSING or obj is real)

    def builtin(self, builtin: str) -> str:
        """The name generated code calls ``builtin`` by: its own, unless the function binds
        that name (a parameter, a local, a global or closure value of that name)."""
        if builtin in self.aliases:
            self.bound_builtins.add(builtin)
            return self.aliases[builtin]
        return builtin

    def reserve_builtins(self) -> None:
        """Give each builtin generated code may call a name the function does not bind.

        A builtin the function never rebinds keeps its name, which no temporary
        may then take. Any other gets a fresh name, entered in the function's
        outside values (so that resolvers know it for the builtin, a
        non-differentiable function) and bound by ``from builtins import``.
        """
        for builtin in GENERATED_BUILTINS:
            if builtin not in self._mentioned or self.is_builtin(builtin):
                self.namer.taken.add(builtin)
            else:
                alias = self.namer.fresh(builtin)
                self.aliases[builtin] = alias
                self.parsed.closure[alias] = getattr(builtins, builtin)

    def bind_builtins(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """``from builtins import range as range_1, ...`` first, for the aliases generated code calls.

        The later passes lower loops (ANF) and replay them (the reverse pass)
        with ``range`` and ``len``: wherever the function has a loop, those two
        are bound too."""
        if any(isinstance(n, (gast.For, gast.While)) for s in body for n in gast.walk(s)):
            for builtin in ("range", "len"):
                self.builtin(builtin)
        names = [gast.alias(name=b, asname=self.aliases[b]) for b in GENERATED_BUILTINS if b in self.bound_builtins]
        if not names:
            return body
        binding = gast.ImportFrom(module="builtins", names=names, level=0)
        return located([binding], body[0] if body else self.parsed.node) + body

    def shared_names(self) -> dict[str, bool]:
        if getattr(self, "_shared", None) is None:
            self._shared = Aliasing(self.parsed).shared_names()
        return self._shared

    def prepare(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """Simplify assignments, drop docstrings and hoist comprehensions in one body."""
        body = lower_with(body, self.namer.fresh)
        simplify = Simplify(self.shared_names(), self.runtime.get("rebinding"), self.parsed,
                            anno.get(self.parsed.node, anno.WRITTEN_LISTS, set()), self.runtime, self.namer)
        body = [out for s in body for out in _as_list(simplify.visit(s))]
        body = [s for s in body if not (isinstance(s, gast.Expr) and isinstance(s.value, gast.Constant))]
        return self.hoist_sums(body)

    def rename_shadowing_locals(self, node: gast.FunctionDef) -> None:
        """A local variable named like a builtin generated code calls (``len = ...``) gets a
        fresh name: it is local throughout the function, so nothing else changes, and the
        generated code can call the builtin by its own name."""
        params = {a.id for a in node.args.args + node.args.kwonlyargs}
        local = stored_names(node.body) | {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef)
                                           and n is not node}
        mapping = {b: self.namer.fresh(b) for b in GENERATED_BUILTINS if b in local and b not in params}
        self.renamed = mapping
        if not mapping:
            return
        for stmt in node.body:
            Rename(mapping).visit(stmt)
            for child in gast.walk(stmt):
                if isinstance(child, gast.FunctionDef) and child.name in mapping:
                    child.name = mapping[child.name]

    def ufunc_at_writes(self, stmts: list[gast.stmt], locals_: set[str] | None = None) -> list[gast.stmt]:
        """``np.add.at(y, i, v)`` (or np.subtract.at), which the fence let through into an array made here,
        becomes the write ``y[...] = ufunc_at(np.add, y, i, v)``: the same elements written in place, through
        a function with a rule (rules/spellings.py), so that the rules of writes apply."""
        helper = self.runtime.get("ufunc_at")
        locals_ = local_names(self.parsed) if locals_ is None else locals_
        out = []
        for stmt in stmts:
            for field in ("body", "orelse"):
                if isinstance(stmt, (gast.If, gast.For, gast.While)):
                    setattr(stmt, field, self.ufunc_at_writes(getattr(stmt, field), locals_))
            if helper is not None and ufunc_at_call(stmt, self.parsed, locals_) is not None:
                target, index, value = stmt.value.args
                write = gast.Subscript(value=name(target.id), slice=const(Ellipsis), ctx=gast.Store())
                stmt = assign(write, call(helper, stmt.value.func.value, target, index, value), like=stmt)
                self.parsed.closure[helper] = ufunc_at
            out.append(stmt)
        return out

    def run(self, node: gast.FunctionDef) -> gast.FunctionDef:
        self.rename_shadowing_locals(node)
        self._all_names = _names_in(node.body) | _names_in([node.args])
        self._hoisted: set[str] = set()
        self.find_bindings(node)
        self.reserve_builtins()
        body = self.prepare(node.body)
        body = inline_local_functions(self.parsed, self.namer, body, self.prepare,
                                      Closures(self.parsed, self.namer, self.runtime, self.renamed))
        body = self.lower_loops(body)
        body = flatten_assignments(body, self.namer, self.parsed)
        self.check_unpacking(body)
        body = self.ufunc_at_writes(body)
        body = self.convert_returns(body, 0)
        body = self.normalize_jumps(body)
        body = self.single_exit(body)
        if self.flag is not None:
            body = located([assign(self.flag, const(False))], body[0]) + body
        node.body = self.bind_builtins(body)
        return node


def _makes_dict(value: gast.expr, desugar: "Desugar") -> bool:
    """True for a dict display or comprehension, or a call of the builtin dict."""
    if isinstance(value, (gast.Dict, gast.DictComp)):
        return True
    return isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == "dict" \
        and desugar.is_builtin("dict")


def builtin_name(parsed: Parsed, builtin: str) -> str:
    """The name under which code generated for ``parsed`` calls ``builtin`` (``range``, ``len``, ...).

    Its own name, unless the function binds that name: then the alias the
    ``from builtins import ...`` statement that desugar put first in the body
    binds (see :data:`GENERATED_BUILTINS`). For the later passes that emit
    such calls (ANF's index loops, the reverse pass's replay of loops).
    """
    for stmt in parsed.node.body:
        if isinstance(stmt, gast.ImportFrom) and stmt.module == "builtins":
            for alias in stmt.names:
                if alias.name == builtin:
                    return alias.asname or alias.name
    return builtin


def desugar(parsed: Parsed, namer: Namer, runtime: dict[str, str] | None = None) -> gast.FunctionDef:
    desugarer = Desugar(parsed, namer)
    desugarer.runtime = runtime or {}
    return desugarer.run(parsed.node)
