"""Writes into arrays: which values may share memory with an array written in place, and what is refused.

Input: a function in ANF whose writes ``y[index] = v`` are annotated as
``Prim("write")`` (``into_list`` for a write into a list, whose items and
slices are never views of it). The fence has made sure that a written array is made in
the function and never given a second name, so it can be written in place
(the reverse pass tapes what each write overwrites and restores it).
Output: the names whose values may share memory with a written array (the
array itself and the views taken of it, transitively), which the reverse
pass treats with care: a contribution that reads one is computed at once,
never deferred, since a deferred one would see the array after the backward
sweep restored it; a returned one is copied.

Refused, with the lines: reading a view of an array after a write into that
array (``head = y[:2]; y[0] = v; ... head ...``), and an update in place
(``y op= e``, which adsrc runs as ``y = y op e``) while a view of ``y`` is
still used. Python shows the change through the view; adsrc would not.
"""
from __future__ import annotations

import operator

import gast
import numpy as np

from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.dataflow import blocks, liveness
from .aliasing import VIEW_ATTRIBUTES, VIEW_FUNCTIONS, VIEW_METHODS
from .parse import _MISSING

# Primitives whose result may be a view of their first argument (the fence's table, as functions).
VIEWS = frozenset({operator.getitem} | {getattr(np, name) for name in VIEW_FUNCTIONS if hasattr(np, name)})


def _prim(stmt: gast.stmt):
    return anno.get(stmt, anno.PRIM, None) if isinstance(stmt, gast.Assign) else None


def write_aliases(node: gast.FunctionDef, where) -> set[str]:
    """The names that may share memory with an array written in place; refuses a view read after a write.

    ``where(node)`` gives a node's original ``file:line:col``, for the error.
    """
    statements = [stmt for block in blocks(node.body) for stmt in block]
    writes = [s for s in statements if getattr(_prim(s), "kind", None) == "write"]
    if not writes:
        return set()
    # base of each view: name -> the written array it may be a view of (transitively)
    view_of: dict[str, set[str]] = {}
    written = {w.targets[0].value.id for w in writes}
    # A list's items and slices, and arrays made of it, never share the list: only its copies do.
    lists = {w.targets[0].value.id for w in writes if _prim(w).into_list}
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            prim = _prim(stmt)
            if prim is None or prim.kind == "write" or not isinstance(stmt.targets[0], gast.Name):
                continue
            is_view = prim.kind == "copy" or (prim.kind == "rule" and prim.rule.func in VIEWS)
            source = prim.args[0] if prim.args else None
            if not is_view or not isinstance(source, gast.Name) or source.id in lists and prim.kind != "copy":
                continue
            bases = ({source.id} & written) | view_of.get(source.id, set())
            target = stmt.targets[0].id
            if bases and not bases <= view_of.get(target, set()):
                view_of.setdefault(target, set()).update(bases)
                changed = True
    stale_views: dict[int, list[str]] = {}

    def visit(stmt: gast.stmt, live: set[str]) -> None:
        if getattr(_prim(stmt), "kind", None) == "write":
            base = stmt.targets[0].value.id
            stale_views[id(stmt)] = sorted(v for v, bases in view_of.items() if base in bases and v in live)

    liveness(node.body, set(), visit)
    for write in writes:
        base = write.targets[0].value.id
        stale = stale_views.get(id(write))
        if stale:
            raise UnsupportedSyntax(
                f"reading a view of {base} ({', '.join(stale)}) after writing into {base}", where(write),
                f"take a copy where the view is made (for example {base}[...].copy()), "
                f"or index {base} again after the write")
    return written | set(view_of)


def _view_source(value: gast.AST, parsed) -> str | None:
    """The local name ``value`` may be a view of, through any chain of views (``y[...]``, ``y.T``,
    ``y.reshape(...)[:, 0]``, ``np.transpose(y)``...), or None."""
    node, steps = value, 0
    while True:
        if isinstance(node, gast.Subscript):
            node = node.value
        elif isinstance(node, gast.Attribute) and node.attr in VIEW_ATTRIBUTES:
            node = node.value
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Attribute) \
                and node.func.attr in VIEW_METHODS and not _rooted_outside(node.func.value, parsed):
            node = node.func.value
        elif isinstance(node, gast.Call) and node.args and _resolves_to_view_function(node.func, parsed):
            node = node.args[0]
        else:
            break
        steps += 1
    return node.id if steps and isinstance(node, gast.Name) else None


def _rooted_outside(node: gast.AST, parsed) -> bool:
    """``np`` or ``np.linalg``: a dotted name whose root is not a local of the function."""
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name) and parsed.resolve(node.id) is not _MISSING


def _resolves_to_view_function(func: gast.AST, parsed) -> bool:
    parts = []
    while isinstance(func, gast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, gast.Name):
        return False
    obj = parsed.resolve(func.id)
    for attr in reversed(parts):
        obj = getattr(obj, attr, None)
    return any(obj is view for view in VIEWS)


def refuse_updates_seen_through_views(parsed) -> None:
    """Refuse ``y op= e`` while a view of ``y`` taken earlier is still used afterwards.

    Python updates an array in place, so the view sees the update; adsrc runs
    ``y = y op e``, a new array, and the view would keep the old elements.
    Decided before anything runs, from the function's own code: a loop target
    over ``y`` (a row of it) counts as a view, as does any name assigned a
    subscript, a transposition or a reshape of ``y``, transitively.
    """
    node = parsed.node
    view_of: dict[str, set[str]] = {}
    changed = True
    while changed:
        changed = False
        for child in gast.walk(node):
            pairs: list[tuple[str, str]] = []
            if isinstance(child, gast.Assign) and isinstance(child.targets[0], gast.Name):
                source = _view_source(child.value, parsed)
                if source is not None:
                    pairs.append((child.targets[0].id, source))
            elif isinstance(child, gast.For) and isinstance(child.iter, gast.Name):
                targets = [child.target] if isinstance(child.target, gast.Name) else []
                pairs += [(t.id, child.iter.id) for t in targets]
            elif isinstance(child, gast.For) and isinstance(child.iter, gast.Call) \
                    and isinstance(child.iter.func, gast.Name) and child.iter.func.id == "enumerate" \
                    and child.iter.args and isinstance(child.iter.args[0], gast.Name) \
                    and isinstance(child.target, gast.Tuple) and len(child.target.elts) == 2 \
                    and isinstance(child.target.elts[1], gast.Name):
                pairs.append((child.target.elts[1].id, child.iter.args[0].id))
            for view, source in pairs:
                bases = {source} | view_of.get(source, set())
                if view != source and not bases <= view_of.get(view, set()):
                    view_of.setdefault(view, set()).update(bases - {view})
                    changed = True
    if not view_of:
        return
    found: list[tuple[gast.AugAssign, list[str]]] = []

    def visit(stmt: gast.stmt, live: set[str]) -> None:
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Name):
            base = stmt.target.id
            stale = sorted(v for v, bases in view_of.items() if base in bases and v in live)
            if stale:
                found.append((stmt, stale))

    liveness(node.body, set(), visit)
    if found:
        stmt, stale = min(found, key=lambda pair: pair[0].lineno)
        base = stmt.target.id
        raise UnsupportedSyntax(
            f"updating {base} in place (x op= e) while a view of it ({', '.join(stale)}) is used afterwards",
            parsed.where(stmt), f"Python changes {base} in place, so the view would see the update; write "
                                f"{base} = {base} op ... to make a new array, or take the view after the update")
