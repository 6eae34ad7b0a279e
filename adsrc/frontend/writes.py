"""Writes into arrays: which values may share memory with an array written in place, and what is refused.

Input: a function in ANF whose writes ``y[index] = v`` are annotated as
``Prim("write")``. The fence has made sure that a written array is made in
the function and never given a second name, so it can be written in place
(the reverse pass tapes what each write overwrites and restores it).
Output: the names whose values may share memory with a written array (the
array itself and the views taken of it, transitively), which the reverse
pass treats with care: a contribution that reads one is computed at once,
never deferred, since a deferred one would see the array after the backward
sweep restored it; a returned one is copied.

Refused, with the lines: reading a view of an array after a write into that
array (``head = y[:2]; y[0] = v; ... head ...``). Python shows the write
through the view; adsrc would differentiate the view as if it still held
the old elements.
"""
from __future__ import annotations

import operator

import gast
import numpy as np

from ..errors import UnsupportedSyntax
from ..ir import annotations as anno
from ..ir.dataflow import liveness

# Primitives whose result may be a view of their first argument.
VIEWS = frozenset({
    operator.getitem, np.reshape, np.transpose, np.ravel, np.squeeze, np.swapaxes, np.moveaxis, np.rollaxis,
    np.diagonal, np.expand_dims, np.broadcast_to, np.atleast_1d, np.atleast_2d, np.atleast_3d, np.asarray,
    np.asanyarray, np.real, np.imag, np.matrix_transpose if hasattr(np, "matrix_transpose") else np.transpose,
})


def _prim(stmt: gast.stmt):
    return anno.get(stmt, anno.PRIM, None) if isinstance(stmt, gast.Assign) else None


def _statements(stmts: list[gast.stmt]):
    for stmt in stmts:
        yield stmt
        for field in ("body", "orelse"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list):
                yield from _statements(inner)


def write_aliases(node: gast.FunctionDef, where) -> set[str]:
    """The names that may share memory with an array written in place; refuses a view read after a write.

    ``where(node)`` gives a node's original ``file:line:col``, for the error.
    """
    statements = list(_statements(node.body))
    writes = [s for s in statements if getattr(_prim(s), "kind", None) == "write"]
    if not writes:
        return set()
    # base of each view: name -> the written array it may be a view of (transitively)
    view_of: dict[str, set[str]] = {}
    written = {w.targets[0].value.id for w in writes}
    changed = True
    while changed:
        changed = False
        for stmt in statements:
            prim = _prim(stmt)
            if prim is None or prim.kind == "write" or not isinstance(stmt.targets[0], gast.Name):
                continue
            is_view = prim.kind == "copy" or (prim.kind == "rule" and prim.rule.func in VIEWS)
            source = prim.args[0] if prim.args else None
            if not is_view or not isinstance(source, gast.Name):
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
