"""The kinds of the write helpers' results (rules/writes.py), for kind inference (kinds.py).

``owned``, ``cleared``, ``cleared_in_place``, ``written_part`` and
``added_into`` are runtime helpers, not rules, so inference cannot run them
on examples (``added_into`` takes a vjp; the in-place ones write into their
argument). Their results follow from their arguments' kinds in the cases
below; anything else is unknown (None). The same predicates say where
optimize/inline_writes.py may replace a helper by plain indexing.
"""
from __future__ import annotations

from typing import Any, Callable

import gast
import numpy as np

from ..rules.indexing import _getitem_add_into
from ..rules.templates import NONE, ZERO, Kind

Kinds = frozenset  # of Kind; None stands for "anything"
WRITE_HELPERS = ("owned", "cleared", "cleared_in_place", "written_part", "added_into")
FLOAT64 = np.dtype(np.float64)
REAL_SCALARS = frozenset({Kind(float), Kind(int), Kind(np.float64)})


def float64_arrays(kinds: Kinds | None, ndim: int | None = None) -> bool:
    """Every kind a float64 NumPy array (of this rank)."""
    return bool(kinds) and all(k.type is np.ndarray and k.dtype == FLOAT64 and (ndim is None or len(k.shape) == ndim)
                               for k in kinds)


def int_index(kinds: Kinds | None) -> bool:
    """An index that is a Python int (a variable or a constant of the code)."""
    return bool(kinds) and all(k.type is int for k in kinds)


def element_rank(kinds: Kinds | None) -> int | None:
    """How many axes an index selects one element of: 1 for a Python int, n for a tuple of n ints
    (``K[i, j]``); None for anything else (a slice, an array of indices)."""
    if int_index(kinds):
        return 1
    ranks = {len(k.items) if k.type is tuple and k.items and all(i.type is int for i in k.items) else None
             for k in kinds or ()}
    return ranks.pop() if len(ranks) == 1 and None not in ranks else None


def real_scalars(kinds: Kinds | None, ints: bool = True) -> bool:
    """Every kind a Python or NumPy real number (``ints``: Python ints too)."""
    return bool(kinds) and all(k.variable() in REAL_SCALARS and (ints or k.type is not int) for k in kinds)


def one_shape(kinds: Kinds | None) -> tuple | None:
    """The shape of every kind, when they are arrays of one shape."""
    shapes = {k.shape if k.type is np.ndarray else None for k in kinds or ()}
    return shapes.pop() if len(shapes) == 1 and None not in shapes else None


def reads_by_index(vjp: Any) -> bool:
    """A vjp whose in-place form is getitem's (``added_into``'s fast path: ``dy[i] += g``)."""
    return getattr(getattr(vjp, "add_into", None), "__wrapped__", None) is _getitem_add_into


def added_by_index(args: list[gast.expr], expr: Callable[[gast.expr], Kinds | None], vjps: dict[str, Any],
                   zero_ok: bool = False) -> bool:
    """``added_into(d, vjp, g, None, x, i)`` is ``d[i] += g``: ``vjp`` reads ``x[i]``, ``d`` a float64 array
    of ``x``'s shape (or, with ``zero_ok``, the zero tangent), ``g`` a real number, ``i`` an int.
    (rules/writes.py's common case; a zero ``d`` gets ``np.zeros(x.shape)`` first, for a float ``g``.)"""
    if len(args) != 6 or not isinstance(args[1], gast.Name) or not reads_by_index(vjps.get(args[1].id)) \
            or not (isinstance(args[3], gast.Constant) and args[3].value is None):
        return False
    total, g, x, index = expr(args[0]), expr(args[2]), expr(args[4]), expr(args[5])
    shape = one_shape(x)
    arrays = frozenset(k for k in total or () if k is not ZERO)
    if shape is None or not float64_arrays(x) or element_rank(index) != len(shape):
        return False
    if arrays and (not float64_arrays(arrays) or one_shape(arrays) != shape):
        return False
    if total is None or ZERO in total and not zero_ok:
        return False
    return real_scalars(g, ints=ZERO not in total)


def constant_slice(kinds: Kinds | None) -> slice | None:
    """The slice of constant bounds an index's kinds say it is (``slice(1, -1, None)``), else None."""
    if kinds and len(kinds) == 1:
        kind = next(iter(kinds))
        if kind.type is slice and kind.const is not None:
            return slice(*kind.const[0])
    return None


def slice_part(dy: Kinds, y: Kinds, index: Kinds, value: Kinds) -> Kinds | None:
    """The kinds of ``written_part(dy, y, s, v)`` for ``y[s] = v`` of a constant slice ``s`` and an array ``v``
    of ``y[s]``'s shape: ``dy[s]``, copied (rules/writes.py), a float64 array of that shape; zero for zero."""
    s = constant_slice(index)
    if s is None or not dy or not (y and all(k.type is np.ndarray and k.dtype == FLOAT64 and k.shape for k in y)) \
            or not float64_arrays(value):
        return None
    shapes = {np.empty(k.shape)[s].shape for k in y} | {k.shape for k in value}
    if len(shapes) != 1:
        return None
    shape = shapes.pop()
    if not all(k is ZERO or k.type is np.ndarray and k.dtype == FLOAT64 and np.empty(k.shape)[s].shape == shape
               for k in dy):
        return None
    return frozenset(ZERO if k is ZERO else Kind(np.ndarray, FLOAT64, shape) for k in dy)


def write_helper_kinds(helper: str, args: list[gast.expr], expr: Callable[[gast.expr], Kinds | None],
                       vjps: dict[str, Any]) -> Kinds | None:
    """The kinds of ``helper(*args)``'s result, or None where they do not follow from the arguments' kinds."""
    if not args or any(isinstance(a, gast.Starred) for a in args):
        return None
    first = expr(args[0])
    read = {"owned": args[:1], "written_part": args[:4], "added_into": [args[0], *args[2:3], *args[4:6]]}
    operands = [expr(a) for a in read.get(helper, args[:2])]
    if any(o is None for o in operands):
        return None
    if any(not o for o in operands):
        return frozenset()  # an operand with no kind yet (the fixpoint will come back)
    if helper in ("owned", "cleared", "cleared_in_place"):
        if len(args) != (1 if helper == "owned" else 2):
            return None
        # a copy of an array, or the array itself, of the same kind; the zero tangent stays zero
        return first if all(k is ZERO or k.type is np.ndarray for k in first) else None
    if helper == "written_part" and len(args) == 4:
        y, index, value = (expr(a) for a in args[1:])
        if y is None or index is None or value is None:
            return None
        if y and all(k.type is np.ndarray and k.dtype.kind not in "fc" for k in y):
            return frozenset({ZERO})  # a write into integers or booleans casts the value: no gradient
        if not (y and all(k.type is np.ndarray and k.dtype.kind == "f" for k in y)):
            return None
        sliced = slice_part(first, y, index, value)
        if sliced is not None:
            return sliced
        rank = element_rank(index)
        if not (rank is not None and all(len(k.shape) == rank for k in y) and real_scalars(value)):
            return None
        out = set()
        for k in first:
            if k is ZERO:
                out.add(ZERO)
            elif k.type is np.ndarray and len(k.shape) == rank and k.dtype.kind in "fiub":
                out.add(Kind(float))  # float(dy[index])
            else:
                return None
        return frozenset(out)
    if helper == "added_into" and added_by_index(args, expr, vjps, zero_ok=True):
        return frozenset(Kind(np.ndarray, FLOAT64, one_shape(expr(args[4]))) if k is ZERO else k for k in first)
    return None


__all__ = ["WRITE_HELPERS", "write_helper_kinds", "constant_slice", "slice_part", "added_by_index", "float64_arrays", "int_index", "element_rank", "real_scalars",
           "one_shape", "reads_by_index", "NONE"]
