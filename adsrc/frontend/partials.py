"""``f = functools.partial(g, a, k=v)`` called by its name, as the calls of ``g`` it makes.

A partial object holds ``g`` and the values of its arguments, evaluated
where it is made, and ``f(x, j=w)`` calls ``g(a, x, k=v, j=w)`` (a keyword
of the call replacing the partial's own of that name). Where ``f`` is bound
once, by that assignment, and only ever called, the assignment becomes
assignments of the argument values to fresh names, in Python's order, and
each call the call of ``g`` with them: a call adsrc inlines (a local function)
or differentiates (a user function), so the gradient flows into the bound
values too. ``g`` must be a local function (a ``def``, or a name bound once
to a lambda) or a name or dotted name outside
the function (so that naming it again at the call names the same function).
Any other partial is left as written, and refused if a gradient reaches it.
"""
from __future__ import annotations

import copy
import functools

import gast

from ..ir.build import assign, located, name
from ..ir.naming import Namer
from .folds import _resolved
from .parse import Parsed


def _reference(node: gast.AST) -> bool:
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def rewrite_partials(parsed: Parsed, namer: Namer, node: gast.FunctionDef, local: set[str]) -> None:
    """Rewrite, in place, each partial the function makes and only calls (see the module's docstring)."""
    params = {a.id for a in node.args.args}
    stores: dict[str, list[gast.Name]] = {}
    loads: dict[str, list[gast.Name]] = {}
    for n in gast.walk(node):
        if isinstance(n, gast.Name):
            (loads if isinstance(n.ctx, gast.Load) else stores).setdefault(n.id, []).append(n)
    local_functions = {n.name for n in gast.walk(node) if isinstance(n, gast.FunctionDef) and n is not node}
    local_functions |= {n.targets[0].id for n in gast.walk(node)  # a name bound once, to a lambda
                        if isinstance(n, gast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], gast.Name)
                        and isinstance(n.value, gast.Lambda) and len(stores.get(n.targets[0].id, [])) == 1}
    callees = {id(c.func): c for c in gast.walk(node) if isinstance(c, gast.Call)}
    for holder in [n for n in gast.walk(node) if hasattr(n, "body") and isinstance(n.body, list)]:
        for field in ("body", "orelse"):
            block = getattr(holder, field, None)
            if not isinstance(block, list):
                continue
            out = []
            for stmt in block:
                out.extend(_rewritten(parsed, namer, stmt, params, stores, loads, callees, local, local_functions))
            setattr(holder, field, out)


def _rewritten(parsed, namer, stmt, params, stores, loads, callees, local, local_functions) -> list[gast.stmt]:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call)):
        return [stmt]
    made, target = stmt.value, stmt.targets[0].id
    if isinstance(made.func, gast.Name) and made.func.id in local or _resolved(parsed, made.func) is not functools.partial:
        return [stmt]
    if not made.args or any(isinstance(a, gast.Starred) for a in made.args) or any(k.arg is None for k in made.keywords):
        return [stmt]
    func = made.args[0]
    known = isinstance(func, gast.Name) and func.id in local_functions or _reference(func) and not (
        isinstance(func, gast.Name) and func.id in local) and not (
        isinstance(func, gast.Attribute) and _base(func) in local)
    uses = loads.get(target, [])
    if not known or target in params or len(stores.get(target, [])) != 1 or not uses \
            or not all(id(u) in callees for u in uses):
        return [stmt]
    out, bound, keywords = [], [], {}
    for k, value in enumerate(made.args[1:]):
        fresh = namer.fresh(f"{target}_arg{k}")
        out.append(assign(fresh, value, stmt))
        bound.append(fresh)
    for kw in made.keywords:
        fresh = namer.fresh(f"{target}_{kw.arg}")
        out.append(assign(fresh, kw.value, stmt))
        keywords[kw.arg] = fresh
    for use in uses:
        call = callees[id(use)]
        own = {k.arg for k in call.keywords}
        call.func = gast.copy_location(_copy(func), use)
        call.args = [gast.copy_location(name(b), use) for b in bound] + call.args
        call.keywords = [gast.copy_location(gast.keyword(arg=k, value=name(v)), use)
                         for k, v in keywords.items() if k not in own] + call.keywords
        for child in gast.walk(call.func):
            gast.copy_location(child, use)
    return located(out, stmt) if out else []


def _base(node: gast.AST) -> str:
    while isinstance(node, gast.Attribute):
        node = node.value
    return getattr(node, "id", "")


def _copy(node: gast.AST) -> gast.AST:
    return copy.deepcopy(node)
