"""Assignments: everyday forms of ``=`` rewritten into single, flat assignments.

Input: a parsed function (before the fence). Output: the same function, in
place, in which every assignment has one target that is a name, a subscript,
an attribute or a flat tuple of them, so that the fence's analyses and the
later passes need to know only that form. Each rewrite does what Python does:

* ``a = b = e`` (chained assignment) evaluates ``e`` once and binds the
  targets left to right: ``a = e; b = a`` (through a fresh name when ``a`` is
  not a plain name, or is rebound by a later target);
* ``(a, b), c = e`` (nested unpacking): ``pair, c = e; a, b = pair``, the
  outer level through fresh names first where the order of binding could
  matter (a name bound twice, a subscript target);
* ``a, *rest, z = e`` (star-assignment): ``items = list(e)``, the length check
  Python makes (``ValueError: not enough values to unpack``), then
  ``a = items[0]; rest = items[1:-1]; z = items[-1]``; ``rest`` is a list,
  as in Python;
* ``w = w.copy()`` at the top level of the body, followed by ``w[i] = v``:
  from that statement on, ``w`` is another variable (``w_1``), which holds an
  array made here and may be written; likewise ``args = list(args)`` (any new
  list: lists.py), ``args`` a ``*args`` parameter too. Python's ``w`` means
  exactly that; only the name of the first variable (a parameter, an alias)
  could not be written. Skipped where a local function reads ``w`` (it would
  see the new array, by late binding).

The same unpacking rewrites apply to loop and comprehension targets once
desugar has turned them into assignments (:func:`flatten_assignments`).
"""
from __future__ import annotations

import builtins

import gast

from ..errors import UnsupportedSyntax
from ..ir.build import assign, const, located, name, store
from ..ir.naming import Namer, Rename
from .parse import _MISSING, Parsed

def lower_assignments(parsed: Parsed, fresh_array=None) -> None:
    """Rewrite chained, nested and starred assignments of ``parsed``'s function in place;
    ``fresh_array(value)`` says whether an assignment's value is an array made there
    (for copy-then-write)."""
    node = parsed.node
    names, complex_, defs, written = set(), False, [], False
    for child in gast.walk(node):  # one walk: most functions need none of the rewrites
        if isinstance(child, gast.Name):
            names.add(child.id)
        elif isinstance(child, gast.Assign):
            complex_ = complex_ or len(child.targets) > 1 or (
                isinstance(child.targets[0], (gast.Tuple, gast.List)) and not _is_flat(child.targets[0]))
        elif isinstance(child, gast.FunctionDef) and child is not node:
            defs.append(child)
        elif isinstance(child, gast.Subscript) and isinstance(child.ctx, gast.Store):
            written = True
    namer = Namer(names)
    if complex_:
        node.body = flatten_assignments(node.body, namer, parsed)
        for child in defs:
            child.body = flatten_assignments(child.body, namer, parsed)
    if fresh_array is not None and written:
        _split_copied_names(node, namer, fresh_array)


def flatten_assignments(stmts: list[gast.stmt], namer: Namer, parsed: Parsed) -> list[gast.stmt]:
    """``stmts`` (and the blocks inside them) with every assignment single and flat."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While)):
                setattr(stmt, field, flatten_assignments(getattr(stmt, field), namer, parsed))
        if isinstance(stmt, gast.Assign):
            out.extend(_lower(stmt, namer, parsed))
        else:
            out.append(stmt)
    return out


def _lower(stmt: gast.Assign, namer: Namer, parsed: Parsed) -> list[gast.stmt]:
    if len(stmt.targets) > 1:
        first, rest = stmt.targets[0], stmt.targets[1:]
        later = {n.id for t in rest for n in gast.walk(t) if isinstance(n, gast.Name)}
        if isinstance(first, gast.Name) and first.id not in later:
            holder, head = first.id, []
        else:
            holder = namer.fresh("value")
            head = [assign(holder, stmt.value, stmt)]
            rest = stmt.targets
        if not head:
            head = [assign(first, stmt.value, stmt)]
        tail = [assign(t, name(holder), stmt) for t in rest]
        return [s for one in located(head + tail, stmt) for s in _lower(one, namer, parsed)]
    target = stmt.targets[0]
    if not isinstance(target, (gast.Tuple, gast.List)) or _is_flat(target):
        return [stmt]
    if any(isinstance(e, gast.Starred) for e in target.elts):
        return _unpack_starred(stmt, namer, parsed)
    return _unpack_nested(stmt, namer, parsed)


def _is_flat(target: gast.AST) -> bool:
    return all(not isinstance(e, (gast.Tuple, gast.List, gast.Starred)) for e in target.elts)


def _hint(target: gast.AST) -> str:
    names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
    return "_".join(names[:2]) if names else "items"


def _unpack_nested(stmt: gast.Assign, namer: Namer, parsed: Parsed) -> list[gast.stmt]:
    """``(a, b), c = e``: the outer level into names, then each inner level from its name."""
    target = stmt.targets[0]
    names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
    ordered = len(names) != len(set(names)) or any(
        isinstance(n, (gast.Subscript, gast.Attribute)) for n in gast.walk(target))
    outer, inner = [], []
    for elt in target.elts:
        if isinstance(elt, (gast.Tuple, gast.List)) or ordered:
            holder = namer.fresh(_hint(elt))
            outer.append(store(holder))
            inner.append(assign(elt, name(holder), stmt))
        else:
            outer.append(elt)
    first = assign(gast.Tuple(elts=outer, ctx=gast.Store()), stmt.value, stmt)
    return [first] + [s for one in located(inner, stmt) for s in _lower(one, namer, parsed)]


def _unpack_starred(stmt: gast.Assign, namer: Namer, parsed: Parsed) -> list[gast.stmt]:
    """``a, *rest, z = e``: ``items = list(e)``, Python's length check, then each target by index."""
    target = stmt.targets[0]
    where = parsed.where(target)
    for builtin in ("list", "len", "ValueError"):
        if _binds(parsed, builtin):
            raise UnsupportedSyntax(f"star-assignment in a function that rebinds {builtin}", where,
                                    "unpack by index instead (a = xs[0]; rest = xs[1:])")
    star = next(i for i, e in enumerate(target.elts) if isinstance(e, gast.Starred))
    before, after = star, len(target.elts) - star - 1
    items = namer.fresh(f"{_hint(target.elts[star].value)}_items" if before + after else "items")
    count = before + after
    message = f"not enough values to unpack (expected at least {count}, got {{}})"
    check = gast.parse(
        f"if len({items}) < {count}:\n    raise ValueError({message!r}.format(len({items})))").body[0]
    out: list[gast.stmt] = [assign(items, gast.Call(func=name("list"), args=[stmt.value], keywords=[]), stmt)]
    if count:
        out.append(gast.copy_location(check, stmt))
    for i, elt in enumerate(target.elts):
        if i < star:
            index = const(i)
        elif i == star:
            upper = const(-after) if after else None
            index = gast.Slice(lower=const(before) if before else None, upper=upper, step=None)
            elt = elt.value
        else:
            index = const(i - len(target.elts))
        out.append(assign(elt, gast.Subscript(value=name(items), slice=index, ctx=gast.Load()), stmt))
    located(out, stmt)
    return [s for one in out for s in (_lower(one, namer, parsed) if isinstance(one, gast.Assign) else [one])]


def _binds(parsed: Parsed, builtin: str) -> bool:
    """True if ``builtin`` does not mean the builtin in this function (a local, a global or closure value)."""
    if any(isinstance(n, gast.Name) and n.id == builtin and not isinstance(n.ctx, gast.Load)
           for n in gast.walk(parsed.node)):
        return True
    obj = parsed.resolve(builtin)
    return obj is not _MISSING and obj is not getattr(builtins, builtin)


def _split_copied_names(node: gast.FunctionDef, namer: Namer, fresh_array) -> None:
    """``w = w.copy()`` (or any fresh array or list) at the top level, then ``w[i] = v``: a new name from there
    on."""
    args = node.args
    params = {a.id for a in args.args + args.posonlyargs + args.kwonlyargs + [args.vararg, args.kwarg]
              if isinstance(a, gast.Name)}
    closures = {n.id for child in gast.walk(node) if isinstance(child, (gast.FunctionDef, gast.Lambda))
                and child is not node for n in gast.walk(child) if isinstance(n, gast.Name)}
    body = node.body
    first_store, last_write = _top_level_uses(body)
    for k, stmt in enumerate(body):
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)):
            continue
        old = stmt.targets[0].id
        if last_write.get(old, -1) <= k or old in closures:  # no write into it after this statement
            continue
        if not (old in params or first_store.get(old, k) < k) or not fresh_array(stmt.value):
            continue  # its first value: nothing to split from
        new = namer.fresh(old)
        stmt.targets[0] = store(new)
        for later in body[k + 1:]:
            Rename({old: new}).visit(later)
        first_store, last_write = _top_level_uses(body)


def _top_level_uses(body: list[gast.stmt]) -> tuple[dict[str, int], dict[str, int]]:
    """For each name: the first top-level statement that assigns it, and the last one that writes into it
    by subscript (``w[i] = v``), by position in ``body``."""
    first_store: dict[str, int] = {}
    last_write: dict[str, int] = {}
    for k, stmt in enumerate(body):
        for n in gast.walk(stmt):
            if isinstance(n, gast.Name) and isinstance(n.ctx, gast.Store):
                first_store.setdefault(n.id, k)
            elif isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store) and isinstance(n.value, gast.Name):
                last_write[n.value.id] = k
    return first_store, last_write
