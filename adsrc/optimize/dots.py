"""Fused dot products: a number's gradient from a straight run of vector statements, computed once.

Input: a specialized lazy pullback, the kinds of its names (kinds.py) and its
namespace. Output: the same where one block holds a run of at least
``MIN_RUN`` statements that each add one dot product to the same gradient,

    dw = dw + np.add.reduce(dy199 * tanh_y198)      (np.sum of more axes)
    ...
    dw = dw + np.add.reduce(dy197 * tanh_y196)

(``y = t * w`` for a float ``w`` next to an array ``t``, once per statement),
and nothing else in between reads or writes ``dw``. Each becomes two list
appends, and one dot product of the concatenated operands adds them all where
the run ends:

    dw_terms.append(dy197)
    dw_factors.append(tanh_y196)
    ...
    dw = dw + np.vdot(np.concatenate(dw_terms), np.concatenate(dw_factors))

Two NumPy calls and a float addition per statement become two appends: the
sum is the same, in another order (equal to rounding). Only lazy mode does
this; an eager adjoint adds each contribution where it comes, as the generic
one does.

The operands must be float64 arrays of one shape (at least one dimension), so
that the concatenation is the stacked rows. The lists refer to arrays that the
pullback's names keep alive anyway; the concatenation copies them, so a run is
cut at ``config.max_pending`` statements or at ``config.max_pending_bytes`` of
the copies (bounds read when the adjoint is specialized). A run ends before any
statement that mentions ``dw`` (other than another addition ``dw = dw + e``
to a run that adds to ``dw``'s earlier value: that stays where it is), writes anything in place (an augmented
assignment, a store into an item or attribute, an ``out=``, an owned buffer's
in-place helper: it might write into an operand held), holds a block, or
jumps (``return``, ``break``, ``continue``, ``raise``).
"""
from __future__ import annotations

from typing import Any, Callable

import gast
import numpy as np

from ..config import config
from ..ir.build import assign, method, name
from ..ir.dataflow import blocks, names
from .stacks import _fresh

__all__ = ["run", "MIN_RUN"]

MIN_RUN = 8  # fewer statements than this are left as they are: the concatenations would cost more
_IN_PLACE_HELPERS = ("added_into", "cleared_in_place", "drop_last_in_place")
_JUMPS = (gast.Return, gast.Break, gast.Continue, gast.Raise)  # the block's end might not be reached


def run(pullback: gast.FunctionDef, namespace: dict[str, Any], array_kind: Callable[[gast.expr], Any],
        taken: set[str]) -> bool:
    """Fuse the runs of ``pullback`` (see the module docstring); ``array_kind(node)`` is the one ``Kind``
    the kinds prove for ``node``, or None; ``taken`` the names in use (the new ones are added). Whether
    any changed."""
    numpy_names = {label for label, value in namespace.items() if value is np}
    if not numpy_names:
        return False
    taken |= {n.id for n in names(pullback)}
    changed = False
    lists: dict[str, tuple[str, str]] = {}
    for block in list(blocks(pullback.body)):
        changed |= _block(block, numpy_names, array_kind, taken, lists)
    return changed


def _site(stmt: gast.stmt, numpy_names: set[str], array_kind) -> tuple[str, bool, gast.expr, gast.expr, Any] | None:
    """``(d, adds, a, b, kind)`` for ``d = d + np.add.reduce(a * b)`` (``adds``) or ``d = np.add.reduce(a * b)``
    where ``a`` and ``b`` are names of float64 arrays of one shape; None for any other statement."""
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    d = stmt.targets[0].id
    value, adds = stmt.value, False
    if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add) and isinstance(value.left, gast.Name) \
            and value.left.id == d:
        value, adds = value.right, True
    if not (isinstance(value, gast.Call) and len(value.args) == 1 and not value.keywords
            and _numpy_name(value.func, numpy_names) is not None):
        return None
    product = value.args[0]
    if not (isinstance(product, gast.BinOp) and isinstance(product.op, gast.Mult)
            and isinstance(product.left, gast.Name) and isinstance(product.right, gast.Name)
            and d not in (product.left.id, product.right.id)):
        return None
    kind = array_kind(product.left)
    if kind is None or kind != array_kind(product.right) or kind.type is not np.ndarray \
            or kind.dtype != np.float64 or not kind.shape or not all(kind.shape):
        return None
    return d, adds, product.left, product.right, kind


def _numpy_name(func: gast.expr, numpy_names: set[str]) -> str | None:
    """``np`` for ``np.add.reduce`` or ``np.sum`` (the sum of all elements of one argument), else None."""
    if isinstance(func, gast.Attribute) and func.attr == "reduce" and isinstance(func.value, gast.Attribute) \
            and func.value.attr == "add":
        func = func.value
    elif not (isinstance(func, gast.Attribute) and func.attr == "sum"):
        return None
    return func.value.id if isinstance(func.value, gast.Name) and func.value.id in numpy_names else None


def _added_to(stmt: gast.stmt) -> str | None:
    """``d`` for ``d = d + e`` where ``e`` does not mention ``d``."""
    if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
            and isinstance(stmt.value, gast.BinOp) and isinstance(stmt.value.op, gast.Add) \
            and isinstance(stmt.value.left, gast.Name) and stmt.value.left.id == stmt.targets[0].id:
        d = stmt.targets[0].id
        if all(n.id != d for n in names(stmt.value.right)):
            return d
    return None


def _writes_in_place(stmt: gast.stmt) -> bool:
    for node in gast.walk(stmt):
        if isinstance(node, (gast.AugAssign, gast.Delete)):
            return True
        if isinstance(node, (gast.Subscript, gast.Attribute)) and isinstance(node.ctx, (gast.Store, gast.Del)):
            return True
        if isinstance(node, gast.keyword) and node.arg == "out":
            return True
        if isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in _IN_PLACE_HELPERS:
            return True
    return False


class _Run:
    def __init__(self, d: str, adds: bool, kind: Any, numpy_name: str) -> None:
        self.d, self.adds, self.kind, self.numpy_name = d, adds, kind, numpy_name
        self.sites: list[tuple[gast.stmt, gast.expr, gast.expr]] = []


def _block(block: list[gast.stmt], numpy_names: set[str], array_kind, taken: set[str],
           lists: dict[str, tuple[str, str]]) -> bool:
    max_count = config.max_pending
    max_bytes = config.max_pending_bytes
    open_runs: dict[str, _Run] = {}
    replaced: dict[int, list[gast.stmt]] = {}  # id of a site -> what it becomes
    ends: dict[int, list[gast.stmt]] = {}  # id of a statement -> the totals to put before it (-1: at the end)
    changed = False

    def close(run: _Run, before: int) -> None:
        nonlocal changed
        per_dot = min(max_count, max_bytes // (2 * _kind_bytes(run.kind)))
        if len(run.sites) < MIN_RUN or per_dot < MIN_RUN:
            return
        changed = True
        if run.d not in lists:
            lists[run.d] = (_fresh(f"{run.d}_terms", taken), _fresh(f"{run.d}_factors", taken))
        terms, factors = lists[run.d]
        chunks = -(-len(run.sites) // per_dot)  # as few dots as the bounds allow, of about equal lengths
        size = -(-len(run.sites) // chunks)
        adds, carried = run.adds, []
        for start in range(0, len(run.sites), size):
            chunk = run.sites[start:start + size]
            for i, (stmt, a, b) in enumerate(chunk):
                if i == 0:
                    new = [assign(terms, gast.List(elts=[a], ctx=gast.Load()), stmt),
                           assign(factors, gast.List(elts=[b], ctx=gast.Load()), stmt)]
                else:
                    new = [gast.copy_location(gast.Expr(value=method(terms, "append", a)), stmt),
                           gast.copy_location(gast.Expr(value=method(factors, "append", b)), stmt)]
                replaced[id(stmt)] = carried + new if i == 0 else new
            total = assign(run.d, _total(run.d, adds, run.numpy_name, terms, factors), chunk[-1][0])
            if start + size < len(run.sites):  # before the next chunk's lists are made
                carried = [total]
            else:
                ends.setdefault(before, []).append(total)
            adds = True

    for index, stmt in enumerate(block):
        site = _site(stmt, numpy_names, array_kind)
        if site is not None:
            d, adds, a, b, kind = site
            current = open_runs.get(d)
            if current is not None and (not adds or current.kind != kind):
                close(open_runs.pop(d), index)
                current = None
            if current is None:
                reduce = stmt.value.right if adds else stmt.value
                current = open_runs[d] = _Run(d, adds, kind, _numpy_name(reduce.func, numpy_names))
            current.sites.append((stmt, a, b))
            mentioned = {n.id for n in names(stmt)} - {d}
        else:
            mentioned = {n.id for n in names(stmt)}
            added = _added_to(stmt)
            if added is not None and added in open_runs and open_runs[added].adds:
                mentioned.discard(added)  # another addition to d: d's run goes on, its total added later
            if _writes_in_place(stmt) or isinstance(stmt, _JUMPS) \
                    or any(isinstance(getattr(stmt, f, None), list) for f in ("body", "orelse", "handlers")):
                mentioned = set(open_runs)
        for d in [d for d in open_runs if d in mentioned and (site is None or d != site[0])]:
            close(open_runs.pop(d), index)
    for current in open_runs.values():
        close(current, -1)
    if not changed:
        return False
    out: list[gast.stmt] = []
    for index, stmt in enumerate(block):
        out += ends.get(index, [])
        out += replaced.get(id(stmt), [stmt])
    out += ends.get(-1, [])
    block[:] = out
    return True


def _kind_bytes(kind: Any) -> int:
    """The bytes of an array of ``kind``."""
    return int(np.prod(kind.shape)) * np.dtype(kind.dtype).itemsize


def _total(d: str, adds: bool, numpy_name: str, terms: str, factors: str) -> gast.expr:
    """``d + np.vdot(np.concatenate(terms), np.concatenate(factors))``, without ``d +`` unless ``adds``."""
    operands = [method(numpy_name, "concatenate", name(label)) for label in (terms, factors)]
    dot = method(numpy_name, "vdot", *operands)
    return gast.BinOp(left=name(d), op=gast.Add(), right=dot) if adds else dot


