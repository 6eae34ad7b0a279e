"""View writes: a write through a view of an array, run as the write into that array it is.

Input: a parsed function, before the fence. Output: the same function, in
place, where

* ``v = y[s]``, the only binding of ``v``, with a basic index ``s`` (slices,
  integers known to be ints, ``...``), keeps its index:
  ``v_index = (slice(1, None, None),)`` then ``v = y[v_index]``;
* a write through it, ``v[i] = e`` or ``v[i] op= e``, is the write into ``y``
  it is (rules/views.py: ``k = written_through(y, v_index, i)`` then
  ``y[k] = e``), and through a view of a view, down to the array it was taken
  of: the fence then checks the write into that array as any other (made
  here, or a parameter's where its writes are allowed);
* a write into an index of an index, ``y[s][i] = e`` (``s`` basic; deeper
  too: ``T[a][b][c] = e``), is the write through the view ``y[s]``:
  ``k = written_through(y, s, i)`` then ``y[k] = e``; where ``y`` may be a
  list (bound to a list display, a comprehension...), it is left to the list
  writes' checks, as are views of a list (``y[1:]`` of a list is a copy);
* ``v op= e`` on a view by slices of an array the function made (every
  binding of ``y`` makes a new array) changes it in place: it is the write
  ``v[...] op= e`` through the view;
* ``for row in K:`` (or ``enumerate(K)``) over an array the function made,
  writing through ``row``, is ``for i in range(row_count(K)): row = K[i]``,
  the views Python's loop gives, so the writes through ``row`` are the above;
* after a write into ``y`` (through a view or not), the views of ``y`` are
  taken again (``v = y[v_index]``), so that a read of ``v`` afterwards reads
  the view of the array after the write, as Python's does, and the reverse
  pass sees a view taken after the write instead of one read stale.

Where the view and the array are not both unchanged names from the view's
binding to the write (one is rebound in between, or the binding does not
run on every path to the write), nothing is rewritten and the fence refuses
the write as before. A view taken again after a write into its array must be
one whatever ``y`` is: an index of slices only (``y[i]`` of a vector is a
number, a copy that the write does not change). A view written through is
one (the write raises, as Python's does, if it is not).
"""
from __future__ import annotations

import builtins
import copy
from dataclasses import dataclass, field
from typing import Callable

import gast

from ..ir.build import assign, call, const, name, store
from ..ir.naming import Namer
from ..rules.views import row_count, written_through
from .parse import Parsed


@dataclass(eq=False)
class _View:
    name: str
    base: str
    binding: gast.Assign
    value: gast.Subscript  # y[s], in the binding
    slices_only: bool  # taken again after any write into its base
    index: str = ""  # the name its index is kept in, once used
    retaken: list = field(default_factory=list)


def lower_view_writes(parsed: Parsed, lists: Callable[[gast.AST], bool] = lambda value: False,
                      arrays: Callable[[gast.AST], bool] = lambda value: False) -> None:
    """Rewrite ``parsed``'s writes through views of its arrays, in place (see the module's docstring).
    ``lists``: whether a value makes a new list (a name bound to one is left to the list writes' checks);
    ``arrays``: whether it makes a new NumPy array (``v op= e`` of a view of one is in place)."""
    node = parsed.node
    _loops_over_rows(parsed, _store_counts(node), arrays)
    stores: dict[str, int] = {}
    # a comprehension's targets are its own names (Python 3 scopes them): they rebind nothing here
    own = {id(n) for c in gast.walk(node) if isinstance(c, gast.comprehension) for n in gast.walk(c.target)}
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, (gast.Store, gast.Del)) and id(child) not in own:
            stores[child.id] = stores.get(child.id, 0) + 1
    _updates_through_views(node, stores, arrays)
    if not any(isinstance(c, (gast.Assign, gast.AugAssign)) and isinstance(_target(c), gast.Subscript)
               and isinstance(_target(c).value, (gast.Name, gast.Subscript)) for c in gast.walk(node)):
        return
    places = _places(node.body)
    ints = _int_names(node, stores)
    # names that may hold a list (y[1:] of a list is a copy; y[i][j] = e writes an item): the list writes' own
    listy = {t.id for stmt in places for t, value in _pairs(stmt) if isinstance(t, gast.Name) and lists(value)}
    views: dict[str, _View] = {}
    for stmt in places:
        for target, value in _pairs(stmt):
            if isinstance(target, gast.Name) and _subscript_of_name(value) and stores.get(target.id) == 1 \
                    and value.value.id != target.id and value.value.id not in listy:
                parts = value.slice.elts if isinstance(value.slice, gast.Tuple) else [value.slice]
                if all(_basic(p, ints) for p in parts):
                    views[target.id] = _View(target.id, value.value.id, stmt, value,
                                             all(isinstance(p, gast.Slice) or _ellipsis(p) for p in parts))
    if not views and not any(_chained(_target(stmt), ints) for stmt in places):
        return
    namer = Namer({n.id for n in gast.walk(node) if isinstance(n, gast.Name)})
    helper = namer.fresh("written_through")
    rewrites: dict[int, list[gast.stmt]] = {}
    for stmt, (block, at, chain) in places.items():
        target = _target(stmt)
        if not isinstance(target, gast.Subscript):
            continue
        out: list[gast.stmt] = []
        index, inner = copy.deepcopy(target.slice), target.value
        while _chained_part(inner, ints):  # y[a][b] = e: the write into y[a] at b, then into y at the two
            composed = namer.fresh(f"{_root(inner)}_written")
            out.append(assign(composed, call(helper, copy.deepcopy(inner.value), _as_expression(inner.slice),
                                             _as_expression(index)), like=stmt))
            index, inner = name(composed), inner.value
        if not isinstance(inner, gast.Name) or (out and inner.id in listy):
            continue
        written, through = inner.id, []
        while written in views and _holds(views[written], stmt, places):
            through.append(views[written])
            written = views[written].base
        again = [v for v in views.values() if v.base == written and _holds(v, stmt, places)
                 and (v.slices_only or v in through)]
        if not through and not again and not out:
            continue
        for view in through:
            view.index = view.index or namer.fresh(f"{view.name}_index")
            composed = namer.fresh(f"{written}_written")
            out.append(assign(composed, call(helper, name(view.base), name(view.index), _as_expression(index)),
                              like=stmt))
            index = name(composed)
        written_stmt = copy.copy(stmt)
        new_target = gast.Subscript(value=name(written), slice=index, ctx=gast.Store())
        if isinstance(stmt, gast.Assign):
            written_stmt.targets = [gast.copy_location(new_target, target)]
        else:
            written_stmt.target = gast.copy_location(new_target, target)
        out.append(written_stmt)
        for view in _in_binding_order(_with_views_of(again + through, views, stmt, places), places):
            view.index = view.index or namer.fresh(f"{view.name}_index")
            out.append(assign(view.name, gast.Subscript(value=name(view.base), slice=name(view.index),
                                                        ctx=gast.Load()), like=stmt))
        rewrites[id(stmt)] = out
    if not rewrites:
        return
    for view in views.values():
        if view.index:
            taken = view.value
            rewrites.setdefault(id(view.binding), [view.binding])[:0] = [
                assign(view.index, _as_expression(taken.slice), like=view.binding)]
            taken.slice = name(view.index)  # (the binding, kept last, now reads the kept index)
    parsed.closure[helper] = written_through
    parsed.helpers.add(helper)
    if stores.get("slice") or parsed.resolve("slice") is not builtins.slice:  # (a name of the program's own)
        spelled = namer.fresh("slice")
        parsed.closure[spelled] = builtins.slice
        parsed.helpers.add(spelled)
        for stmts in rewrites.values():
            for stmt in stmts:
                for child in gast.walk(stmt):
                    if isinstance(child, gast.Call) and getattr(child, "_adsrc_slice", False):
                        child.func.id = spelled
    _replace(node.body, rewrites)


def _store_counts(node: gast.FunctionDef) -> dict[str, int]:
    out: dict[str, int] = {}
    own = {id(n) for c in gast.walk(node) if isinstance(c, gast.comprehension) for n in gast.walk(c.target)}
    for child in gast.walk(node):
        if isinstance(child, gast.Name) and isinstance(child.ctx, (gast.Store, gast.Del)) and id(child) not in own:
            out[child.id] = out.get(child.id, 0) + 1
    return out


def _loops_over_rows(parsed: Parsed, stores: dict[str, int], arrays) -> None:
    """``for row in K:`` (or ``for i, row in enumerate(K):``) over an array the function made, whose body
    writes through ``row`` (``row[j] = e``, ``row[j] op= e``) and binds neither name, is
    ``for i in range(row_count(K)): row = K[i]``: the rows are the views Python's loop gives, so each
    write through one is the write into ``K`` it is."""
    node = parsed.node
    if parsed.resolve("range") is not builtins.range or "range" in stores:
        return
    arrays_here = _array_names(node, stores, arrays)
    helper = ""
    for loop in [n for n in gast.walk(node) if isinstance(n, gast.For)]:
        row = counter = base = None
        if isinstance(loop.target, gast.Name) and isinstance(loop.iter, gast.Name):
            row, base = loop.target.id, loop.iter.id
        elif isinstance(loop.target, gast.Tuple) and len(loop.target.elts) == 2 \
                and all(isinstance(e, gast.Name) for e in loop.target.elts) and isinstance(loop.iter, gast.Call) \
                and isinstance(loop.iter.func, gast.Name) and "enumerate" not in stores \
                and parsed.resolve(loop.iter.func.id) is builtins.enumerate \
                and len(loop.iter.args) == 1 and not loop.iter.keywords and isinstance(loop.iter.args[0], gast.Name):
            (counter, row), base = (e.id for e in loop.target.elts), loop.iter.args[0].id
        # (row op= e: in place if K has two axes or more, a new number bound to row if one; left as it is)
        if row is None or base not in arrays_here or stores.get(row) != 1 \
                or counter is not None and stores.get(counter) != 1 or row == base or counter == base:
            continue
        own = [n for stmt in loop.body for n in _own(stmt)]
        if any(isinstance(n, gast.Name) and not isinstance(n.ctx, gast.Load) and n.id == base for n in own):
            continue
        if not any(isinstance(n, (gast.Assign, gast.AugAssign)) and _writes_through(_target(n), row) for n in own):
            continue
        if not helper:
            helper = Namer({n.id for n in gast.walk(node) if isinstance(n, gast.Name)} | set(parsed.closure)
                           ).fresh("row_count")
            parsed.closure[helper] = row_count
            parsed.helpers.add(helper)
        counter = counter or Namer({n.id for n in gast.walk(node) if isinstance(n, gast.Name)}).fresh(f"{row}_at")
        loop.iter = gast.copy_location(call("range", call(helper, name(base))), loop.iter)
        loop.target = gast.copy_location(store(counter), loop.target)
        loop.body[:0] = [gast.copy_location(assign(row, gast.Subscript(value=name(base), slice=name(counter),
                                                                       ctx=gast.Load()), like=loop), loop)]
        for child in gast.walk(loop.iter) + gast.walk(loop.body[0]) if False else []:
            pass


def _writes_through(target: gast.AST | None, row: str) -> bool:
    return isinstance(target, gast.Subscript) and getattr(_root_node(target), "id", None) == row


def _own(stmt: gast.stmt):
    """The nodes of a statement, not of the functions and classes defined in it."""
    stack = [stmt]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(c for c in gast.iter_child_nodes(n) if not isinstance(c, (gast.FunctionDef, gast.ClassDef,
                                                                                gast.Lambda)))


def _array_names(node: gast.FunctionDef, stores: dict[str, int], arrays) -> set[str]:
    """The names bound only (and at least once) to new arrays, or updated in place, and not parameters."""
    bindings = _bindings(node)
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    updated: dict[str, int] = {}
    for c in gast.walk(node):
        if isinstance(c, gast.AugAssign) and isinstance(c.target, gast.Name):
            updated[c.target.id] = updated.get(c.target.id, 0) + 1
    return {base for base, made in bindings.items() if base not in params
            and stores.get(base) == len(made) + updated.get(base, 0) and all(arrays(value) for value in made)}


def _updates_through_views(node: gast.FunctionDef, stores: dict[str, int], arrays) -> None:
    """``v op= e``, where ``v`` is bound once otherwise, to ``y[s]`` (slices only: a view), and every binding
    of ``y`` makes a new array, changes the view in place: it becomes ``v[...] op= e``, a write through the
    view (and ``v`` is then bound once)."""
    bindings = _bindings(node)
    arrays_here = _array_names(node, stores, arrays)
    updates = [c for c in gast.walk(node) if isinstance(c, gast.AugAssign) and isinstance(c.target, gast.Name)]
    counts: dict[str, int] = {}
    for update in updates:
        counts[update.target.id] = counts.get(update.target.id, 0) + 1

    def in_place(v: str) -> bool:
        values = bindings.get(v, [])
        if len(values) != 1 or stores.get(v) != 1 + counts[v] or not _subscript_of_name(values[0]):
            return False
        parts = values[0].slice.elts if isinstance(values[0].slice, gast.Tuple) else [values[0].slice]
        return values[0].value.id != v and all(isinstance(p, gast.Slice) or _ellipsis(p) for p in parts) \
            and values[0].value.id in arrays_here

    views = {v for v in counts if in_place(v)}
    for update in (u for u in updates if u.target.id in views):
        update.target = gast.copy_location(gast.Subscript(value=gast.copy_location(name(update.target.id),
                                                                                   update.target),
                                                          slice=const(Ellipsis), ctx=gast.Store()), update.target)
    for v in views:
        stores[v] -= counts[v]


def _bindings(node: gast.FunctionDef) -> dict[str, list[gast.AST]]:
    """name -> the values assignments bind it to (an item of what is unpacked: a None constant)."""
    bindings: dict[str, list[gast.AST]] = {}
    for child in gast.walk(node):
        if isinstance(child, gast.Assign):
            for target, value in (p for t in child.targets for p in _pairs_of(t, child.value)):
                if isinstance(target, gast.Name):
                    bindings.setdefault(target.id, []).append(value)
    return bindings


def _pairs_of(target: gast.AST, value: gast.AST) -> list[tuple[gast.AST, gast.AST]]:
    if isinstance(target, (gast.Tuple, gast.List)):
        if isinstance(value, (gast.Tuple, gast.List)) and len(target.elts) == len(value.elts) \
                and not any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
            return [p for t, v in zip(target.elts, value.elts) for p in _pairs_of(t, v)]
        return [(n, gast.Constant(value=None, kind=None)) for n in gast.walk(target) if isinstance(n, gast.Name)]
    return [(target, value)]


# -- what a statement is -------------------------------------------------------------------------------
def _target(stmt: gast.stmt) -> gast.AST | None:
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1:
        return stmt.targets[0]
    if isinstance(stmt, gast.AugAssign):
        return stmt.target
    return None


def _pairs(stmt: gast.stmt) -> list[tuple[gast.AST, gast.AST]]:
    """The (target, value) pairs an assignment binds one by one: ``v = e``, ``a, b = e1, e2``."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1):
        return []
    target, value = stmt.targets[0], stmt.value
    if isinstance(target, (gast.Tuple, gast.List)) and isinstance(value, (gast.Tuple, gast.List)) \
            and len(target.elts) == len(value.elts) \
            and not any(isinstance(e, gast.Starred) for e in target.elts + value.elts):
        return list(zip(target.elts, value.elts))
    return [(target, value)]


def _subscript_of_name(node: gast.AST | None) -> bool:
    return isinstance(node, gast.Subscript) and isinstance(node.value, gast.Name)


def _chained_part(node: gast.AST, ints: set[str]) -> bool:
    """Whether ``node`` is ``e[s]`` with a basic index ``s`` (a view of ``e``, where ``e`` is an array)."""
    if not isinstance(node, gast.Subscript):
        return False
    parts = node.slice.elts if isinstance(node.slice, gast.Tuple) else [node.slice]
    return all(_basic(p, ints) for p in parts)


def _chained(target: gast.AST | None, ints: set[str]) -> bool:
    """Whether ``target`` is ``y[s]...[i]``, a write into a view (``s`` basic) of the name ``y``."""
    if not isinstance(target, gast.Subscript) or not _chained_part(target.value, ints):
        return False
    return isinstance(_root_node(target), gast.Name)


def _root_node(node: gast.AST) -> gast.AST:
    while isinstance(node, gast.Subscript):
        node = node.value
    return node


def _root(node: gast.AST) -> str:
    return getattr(_root_node(node), "id", "view")


def _ellipsis(part: gast.AST) -> bool:
    return isinstance(part, gast.Constant) and part.value is Ellipsis


def _basic(part: gast.AST, ints: set[str]) -> bool:
    """A part of an index known to keep indexing basic: a slice, ``...``, or an int."""
    return isinstance(part, gast.Slice) or _ellipsis(part) or _surely_int(part, ints)


def _surely_int(expr: gast.AST, ints: set[str]) -> bool:
    if isinstance(expr, gast.Constant):
        return type(expr.value) is int
    if isinstance(expr, gast.Name):
        return expr.id in ints
    if isinstance(expr, gast.UnaryOp) and isinstance(expr.op, (gast.USub, gast.UAdd)):
        return _surely_int(expr.operand, ints)
    if isinstance(expr, gast.BinOp) and isinstance(expr.op, (gast.Add, gast.Sub, gast.Mult, gast.FloorDiv, gast.Mod)):
        return _surely_int(expr.left, ints) and _surely_int(expr.right, ints)
    return False


def _int_names(node: gast.FunctionDef, stores: dict[str, int]) -> set[str]:
    """Names bound only as the counter of ``for i in range(...)`` (the builtin), or of ``enumerate``'s."""
    counted: dict[str, int] = {}
    for child in gast.walk(node):
        if isinstance(child, gast.For) and isinstance(child.iter, gast.Call) and isinstance(child.iter.func, gast.Name):
            target, func = child.target, child.iter.func.id
            if func == "range" and isinstance(target, gast.Name):
                counted[target.id] = counted.get(target.id, 0) + 1
            elif func == "enumerate" and isinstance(target, gast.Tuple) and isinstance(target.elts[0], gast.Name):
                counted[target.elts[0].id] = counted.get(target.elts[0].id, 0) + 1
    params = {a.id for a in node.args.posonlyargs + node.args.args + node.args.kwonlyargs}
    return {n for n, k in counted.items() if stores.get(n) == k and n not in params
            and n not in ("range", "enumerate")}


def _as_expression(index: gast.AST) -> gast.expr:
    """An index as the value it is outside a subscript (``1:, 0`` is ``(slice(1, None, None), 0)``)."""
    if isinstance(index, gast.Slice):
        made = call("slice", *[copy.deepcopy(p) if p is not None else const(None)
                               for p in (index.lower, index.upper, index.step)])
        made._adsrc_slice = True  # (respelled where the program binds the name slice)
        return made
    if isinstance(index, gast.Tuple):
        return gast.Tuple(elts=[_as_expression(p) for p in index.elts], ctx=gast.Load())
    return copy.deepcopy(index)


# -- where a statement is ------------------------------------------------------------------------------
def _places(body: list[gast.stmt]) -> dict:
    """Every statement of the function's blocks (not of the functions in it): stmt -> (its block, its
    position there, the chain of (block, position) from the body down to it)."""
    found: dict = {}

    def visit(block: list[gast.stmt], chain: tuple) -> None:
        for at, stmt in enumerate(block):
            here = chain + ((block, at),)
            found[stmt] = (block, at, here)
            for field_ in ("body", "orelse", "finalbody"):
                inner = getattr(stmt, field_, None)
                if isinstance(inner, list) and not isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
                    visit(inner, here)

    visit(body, ())
    return found


def _holds(view: _View, stmt: gast.stmt, places: dict) -> bool:
    """Whether at ``stmt`` the name ``view.name`` is the view its binding took of ``view.base``: the
    binding runs on every path to ``stmt`` (it is in a block around it, before it), and neither name is
    bound between them."""
    block, at, _ = places[view.binding]
    chain = places[stmt][2]
    level = next((k for k, (b, _) in enumerate(chain) if b is block), None)
    if level is None or chain[level][1] <= at:
        return False
    between = block[at + 1:chain[level][1]]
    if block[chain[level][1]] is not stmt:
        between = between + [block[chain[level][1]]]  # the loop or branch around stmt: all of it
    watched = {view.name, view.base}
    for child in (c for s in between for c in gast.walk(s)):
        if isinstance(child, gast.Name) and not isinstance(child.ctx, gast.Load) and child.id in watched:
            return False
        if isinstance(child, (gast.Global, gast.Nonlocal)) and watched & set(child.names):
            return False
    return True


def _with_views_of(views_: list[_View], views: dict[str, _View], stmt: gast.stmt, places: dict) -> list[_View]:
    """``views_`` and the views of them taken again too (slices only, or written through)."""
    out = list(views_)
    changed = True
    while changed:
        changed = False
        for view in views.values():
            if view not in out and view.slices_only and any(v.name == view.base for v in out) \
                    and _holds(view, stmt, places):
                out.append(view)
                changed = True
    return out


def _in_binding_order(views_: list[_View], places: dict) -> list[_View]:
    """Views before the views taken of them."""
    ordered: list[_View] = []
    remaining = list(dict.fromkeys(views_, None))
    while remaining:
        for view in remaining:
            if not any(other.name == view.base for other in remaining if other is not view):
                ordered.append(view)
                remaining.remove(view)
                break
        else:  # (a cycle cannot bind once each; keep what is left as it is)
            ordered += remaining
            break
    return ordered


def _replace(block: list[gast.stmt], rewrites: dict[int, list[gast.stmt]]) -> None:
    out = []
    for stmt in block:
        for field_ in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field_, None)
            if isinstance(inner, list) and not isinstance(stmt, (gast.FunctionDef, gast.ClassDef)):
                _replace(inner, rewrites)
        out.extend(rewrites.get(id(stmt), [stmt]))
    block[:] = out


__all__ = ["lower_view_writes"]
