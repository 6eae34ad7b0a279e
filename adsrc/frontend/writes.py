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

import dataclasses

import gast

from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.dataflow import blocks, liveness
from .aliasing import Aliasing, call_shares
from .freshness import Freshness
from .mutations import source_label


def _prim(stmt: gast.stmt):
    return anno.get(stmt, anno.PRIM, None) if isinstance(stmt, gast.Assign) else None


def _shares(stmt: gast.Assign, prim, locals_: set[str]) -> bool:
    """Whether the value an ANF statement computes may share memory with its arguments (aliasing.py's
    rule: unless the call is known to make a new array). A copy ``t = a`` is ``a``; a call of a user
    function or of a value may return its argument; a rule as its callee says (``np.asarray(y)`` is
    ``y``, ``y.reshape(...)`` a view of it, ``y.conj()`` of a real ``y`` is ``y``, ``np.sum(y)`` new)."""
    if prim.kind in ("copy", "pack", "append", "dynamic"):
        return True
    if prim.kind == "call":
        return call_shares(prim.callee)
    if prim.kind != "rule":
        return False
    keywords = {k.arg: k.value for k in prim.keywords if k.arg is not None}
    value = stmt.value
    if isinstance(value, gast.Call) and isinstance(value.func, gast.Attribute) \
            and isinstance(value.func.value, gast.Name) and value.func.value.id in locals_:
        return call_shares(value.func.attr, prim.args[1:], keywords, method=True)  # y.conj(), y.astype(...)
    return call_shares(prim.rule.func, prim.args, keywords)


def write_aliases(node: gast.FunctionDef, where, parsed=None) -> set[str]:
    """The names that may share memory with an array written in place; refuses a view read after a write.

    ``where(node)`` gives a node's original ``file:line:col``, for the error. With ``parsed`` (the
    function's, whose node ``node`` replaces), a name that may have been a view of the written name
    somewhere but is proven not to hold its array at the write (freshness.py: ``u = new`` in a loop
    holds the previous iteration's copy when ``new`` is copied again) is not a stale view there.
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
    locals_ = {n.id for n in gast.walk(node) if isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load)}
    sharing = []  # (target, the names its value may share memory with)
    for stmt in statements:
        prim = _prim(stmt)
        if prim is None or prim.kind == "write" or not isinstance(stmt.targets[0], gast.Name) \
                or not _shares(stmt, prim, locals_):
            continue
        sources = {a.id for a in prim.args if isinstance(a, gast.Name)}
        if prim.kind != "copy":
            sources -= lists
        sharing.append((stmt.targets[0].id, sources))
    changed = True
    while changed:
        changed = False
        for target, sources in sharing:
            bases = (sources & written).union(*(view_of.get(s, set()) for s in sources))
            if bases and not bases <= view_of.get(target, set()):
                view_of.setdefault(target, set()).update(bases)
                changed = True
    stale_views: dict[int, list[str]] = {}
    freshness = None if parsed is None else Freshness(Aliasing(dataclasses.replace(parsed, node=node)))

    def visit(stmt: gast.stmt, live: set[str]) -> None:
        if getattr(_prim(stmt), "kind", None) == "write":
            base = stmt.targets[0].value.id
            stale_views[id(stmt)] = sorted(
                v for v, bases in view_of.items() if base in bases and v in live
                and (freshness is None or (not freshness.holds_made(stmt) if v == base
                                           else freshness.may_share(stmt, v))))

    liveness(node.body, set(), visit)
    for write in writes:
        base = write.targets[0].value.id
        stale = stale_views.get(id(write))
        if stale:
            raise UnsupportedSyntax(
                f"reading a view of {base} ({', '.join(stale)}: {base} itself, a view of it, or what a call "
                f"returned, which may be either) after writing into {base}", where(write),
                f"take a copy where the view is made (for example {base}[...].copy() or np.array({base})), "
                f"or index {base} again after the write")
    return written | set(view_of)


# NumPy functions that always return an array, and may return their argument itself or a view of it.
_ARRAY_OF_ARGUMENT = frozenset({
    "asarray", "asanyarray", "ascontiguousarray", "asfortranarray", "asarray_chkfinite", "require", "array",
    "atleast_1d", "atleast_2d", "atleast_3d", "reshape", "ravel", "transpose", "swapaxes", "moveaxis",
    "expand_dims", "broadcast_to", "squeeze",
})


def _refuse_updates_of_returned_arguments(parsed, aliasing: Aliasing) -> None:
    """Refuse ``y op= e`` where ``y`` is assigned ``np.asarray(x)``, ``np.array(x, copy=False)``,
    ``np.atleast_1d(x)`` or another NumPy function that always returns an array, which may be ``x``
    itself or a view of it: Python's update would change ``x``. (The check made when the statement
    runs would refuse it whatever ``x`` is, since the name holds an array; this one refuses it first.)"""
    bound: dict[str, gast.AST] = {}
    for child in gast.walk(parsed.node):
        if isinstance(child, gast.Assign) and isinstance(child.targets[0], gast.Name) \
                and isinstance(child.value, gast.Call):
            target = aliasing.static(child.value.func)
            if getattr(target, "__module__", None) == "numpy" and getattr(target, "__name__", None) \
                    in _ARRAY_OF_ARGUMENT and aliasing.call_shares(child.value):
                bound.setdefault(child.targets[0].id, child)
    updates = [child for child in gast.walk(parsed.node) if isinstance(child, gast.AugAssign)
               and isinstance(child.target, gast.Name) and child.target.id in bound]
    if updates:
        stmt = min(updates, key=lambda u: (u.lineno, u.col_offset))
        name, binding = stmt.target.id, bound[stmt.target.id]
        call = parsed.source_line(binding.lineno)
        raise UnsupportedSyntax(
            f"updating {name} in place ({name} op= e), where {name} may be the very array "
            f"{source_label(binding.value.func)}(...) "
            f"was given or a view of it (line {binding.lineno}: {call})", parsed.where(stmt),
            f"Python's update would change that array too: copy it first ({name} = np.array(...) with its "
            f"default copy=True, or .copy()), or write {name} = {name} op ... to make a new array")


def refuse_updates_seen_through_views(parsed) -> None:
    """Refuse ``y op= e`` while a view of ``y`` taken earlier is still used afterwards.

    Python updates an array in place, so the view sees the update; adsrc runs
    ``y = y op e``, a new array, and the view would keep the old elements.
    Decided before anything runs, from the function's own code: a view of
    ``y`` is a name whose value may share ``y``'s memory through steps only
    an array takes (aliasing.py's :attr:`~adsrc.frontend.aliasing.Aliasing.reach`):
    a subscript, a transposition or a reshape of ``y``, ``np.asarray(y)``,
    ``np.array(y, copy=False)``, a loop target over ``y`` (a row of it),
    transitively. A name that may hold ``y``'s object itself whatever it is
    (``t = (y, 1)``, ``v = f(y)``, ``xs.append(y)``) makes ``y`` a shared name
    instead, whose ``y op= e`` is refused when it runs if ``y`` holds an array
    (a number is updated as Python does). Also refused here: ``y op= e`` where
    ``y = np.asarray(x)`` and the like, which always hold an array.
    """
    node = parsed.node
    aliasing = Aliasing(parsed)
    _refuse_updates_of_returned_arguments(parsed, aliasing)
    view_of = {name: {base for base, hows in bases.items() if "view" in hows}
               for name, bases in aliasing.reach.items()}
    view_of = {name: bases for name, bases in view_of.items() if bases}
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
