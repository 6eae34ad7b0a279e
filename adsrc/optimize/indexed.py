"""The vjp of a read by index, ``x[i]``, written out where the kinds decide it.

Input: a pullback about to be specialized (optimize/specialize.py), its kinds
(kinds.py), the rules of the vjps its module binds, and a function that gives
a module its name in the generated module. Output: the same pullback where
each statement ``dx = getitem_dx(g, None, x, i)`` whose ``x`` is a real array
of known dtype and shape, ``g`` a real number or array and ``i`` an integer
becomes the two statements the vjp runs for those kinds::

    dx = np.zeros((10,))
    dx[0] += g

(rules/indexing.py: ``zeros_for(x, g)``, then ``_getitem_add_into``'s
``buffer[index] += g``; where NumPy's ``result_type`` of ``x`` and ``g`` is
float64, the dtype of ``np.zeros``). So the values
are the vjp's bit for bit, without its wrapper, its type checks, or ``x``
kept on the tape for its shape. A rule template (rules/templates.py) is one
expression; this one needs a statement to write into the array it makes.
"""
from __future__ import annotations

import operator
from typing import Any, Callable

import gast
import numpy as np

from ..ir.build import assign, clone, const, method, name
from ..ir.dataflow import loads, names, nodes, stores
from ..rules import registry
from ..rules.templates import Kind, example, real
from .kinds import Inference, own_rule_function, single
from .write_kinds import constant_slice

_COTANGENTS = (float, np.float64, np.ndarray)


def one_hots(block: list[gast.stmt], inference: Inference, rules: dict[str, tuple[Any, int]],
             vjps: dict[str, Callable], module_alias: Callable) -> bool:
    """Rewrite the reads by index of ``block`` and the blocks nested in it; whether any changed."""
    rule = registry.lookup(operator.getitem)
    changed = False
    out: list[gast.stmt] = []
    for stmt in block:
        for part in ("body", "orelse"):
            inner = getattr(stmt, part, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                changed |= one_hots(inner, inference, rules, vjps, module_alias)
        written = _written(stmt, inference, rules, vjps, rule, module_alias)
        out += written or [stmt]
        changed |= bool(written)
    block[:] = out
    return changed


def _read_by_index(value: gast.expr, inference: Inference, rules: dict, vjps: dict, rule: Any,
                   slices: bool = True) -> Kind | None:
    """The kind of ``x`` where ``value`` is ``getitem_dx(g, None, x, i)`` that the two statements of the module
    docstring compute exactly: ``x`` a real array, ``g`` a real number or array (float64 with ``x``), ``i`` an
    int or a slice of constant bounds (a basic index: each element at most once, so ``+=`` is the vjp's)."""
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and not value.keywords
            and len(value.args) == 4):
        return None
    label = value.func.id
    if rules.get(label) != (rule, 0) or not own_rule_function(vjps.get(label)):
        return None
    g, ans, x, index = value.args
    if not all(isinstance(a, (gast.Name, gast.Constant)) for a in (ans, x)) \
            or not (slices or isinstance(g, (gast.Name, gast.Constant))):
        return None
    array = single(inference.expr(x))
    cotangent = inference.expr(g)
    if array is None or array.type is not np.ndarray or not real(array) or array.dtype.kind not in "fiu" \
            or cotangent is None or not all(k.type in _COTANGENTS and real(k) for k in cotangent):
        return None
    if not (isinstance(index, gast.Constant) and type(index.value) is int
            or isinstance(index, gast.Name) and inference.expr(index) == {Kind(int)}
            or slices and _constant_slice(index, inference) and array.shape):
        return None
    dtypes = {np.result_type(example(array), example(k)) for k in cotangent}
    if len(dtypes) != 1:
        return None
    if dtypes.pop() != np.float64:
        return None  # (the kinds know no float32 number, so no float32 cotangent reaches here)
    return array


def _constant_slice(index: gast.expr, inference: Inference) -> bool:
    """``slice(1, -1, None)`` of int or None constants, as the kinds know it (write_kinds.constant_slice)."""
    return isinstance(index, gast.Call) and constant_slice(inference.expr(index)) is not None


def written_index(index: gast.expr) -> gast.expr:
    """An index as it is written: ``slice(1, -1, None)`` as ``1:-1``."""
    if not isinstance(index, gast.Call):
        return clone(index)
    bounds = [None if isinstance(a, gast.Constant) and a.value is None else clone(a) for a in index.args]
    if len(bounds) == 1:  # slice(stop)
        bounds = [None, bounds[0], None]
    bounds += [None] * (3 - len(bounds))
    return gast.Slice(lower=bounds[0], upper=bounds[1], step=bounds[2])


def _added_at(target: str, call: gast.Call, like: gast.stmt) -> gast.stmt:
    """``target[i] += g`` for ``getitem_dx(g, None, x, i)``."""
    g, index = call.args[0], call.args[3]
    element = gast.Subscript(value=name(target), slice=written_index(index), ctx=gast.Store())
    return gast.copy_location(gast.AugAssign(target=element, op=gast.Add(), value=clone(g)), like)


def _written(stmt: gast.stmt, inference: Inference, rules: dict, vjps: dict, rule: Any,
             module_alias: Callable, slices: bool = False) -> list[gast.stmt] | None:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)):
        return None
    array = _read_by_index(stmt.value, inference, rules, vjps, rule, slices)
    if array is None or stmt.targets[0].id in loads(stmt.value):  # g read after the target is made zeros
        return None
    np_name = module_alias("np", np)
    target = stmt.targets[0].id
    made = assign(target, method(np_name, "zeros", const(array.shape)), like=stmt)
    return [made, _added_at(target, stmt.value, stmt)]


def scatter_adds(block: list[gast.stmt], inference: Inference, rules: dict[str, tuple[Any, int]],
                 vjps: dict[str, Callable], module_alias: Callable, cleared: str | None = None) -> bool:
    """``d = d + getitem_dx(g, None, x, i)`` as ``d[i] += g`` where ``d`` is a float64 array of ``x``'s shape
    that no other name or object can refer to: the last assignment before it in this block made it (the
    ``np.zeros`` of a read by index, or an arithmetic of arrays, which NumPy returns as a new array) and
    nothing read it since. The same sums (``d[k] + g[k]`` where ``i`` reads, ``d[k]`` elsewhere, but for
    the sign of a zero) without a dense array of zeros per read: a stencil's ``u[1:-1]``, ``u[:-2]`` and
    ``u[2:]`` add into one buffer; ``d = cleared(d, s)`` (the write ``y[s] = v`` taking its part back) of
    such a ``d`` is ``d[s] = 0.0``, not a copy. A read by a slice of constant bounds, ``d = getitem_dx(g, None, x, s)``,
    is first the two statements of the module docstring. Nested blocks are rewritten with nothing known
    fresh at their start. Run last (after optimize/dots.py, which gathers additions, not writes)."""
    rule = registry.lookup(operator.getitem)
    changed = False
    fresh: set[str] = set()
    out: list[gast.stmt] = []
    for stmt in block:
        for part in ("body", "orelse"):
            inner = getattr(stmt, part, None)
            if isinstance(inner, list) and not isinstance(stmt, gast.FunctionDef):
                changed |= scatter_adds(inner, inference, rules, vjps, module_alias, cleared)
        written = _written(stmt, inference, rules, vjps, rule, module_alias, slices=True)
        if written is not None:  # d = np.zeros(shape); d[s] += g: a new array, written in place
            out += written
            fresh = (fresh - loads(stmt)) | {stmt.targets[0].id}
            changed = True
            continue
        added = _scatter_add(stmt, fresh, inference, rules, vjps, rule) or _clear(stmt, fresh, inference, cleared)
        if added is not None:
            out.append(added)
            changed = True
            continue  # d is still the array it was: fresh
        out.append(stmt)
        if isinstance(stmt, gast.AugAssign) and isinstance(stmt.target, gast.Subscript) \
                and isinstance(stmt.target.value, gast.Name):  # d[i] += e writes into d, keeping no reference
            fresh -= loads(stmt.value) | loads(stmt.target.slice)
            continue
        fresh -= _referencing_loads(stmt)  # a read may keep a reference (a view, a container)
        if isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name) \
                and _makes_an_array(stmt.value, inference):
            fresh.add(stmt.targets[0].id)
        else:
            fresh -= stores(stmt)
    block[:] = out
    return changed


def _scatter_add(stmt: gast.stmt, fresh: set[str], inference: Inference, rules: dict, vjps: dict,
                 rule: Any) -> gast.stmt | None:
    if not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], gast.Name)
            and stmt.targets[0].id in fresh and isinstance(stmt.value, gast.BinOp)
            and isinstance(stmt.value.op, gast.Add)):
        return None
    d = stmt.targets[0].id
    left, right = stmt.value.left, stmt.value.right
    other = right if isinstance(left, gast.Name) and left.id == d else left if (
        isinstance(right, gast.Name) and right.id == d) else None
    held = single(inference.expr(gast.Name(id=d, ctx=gast.Load(), annotation=None, type_comment=None)))
    if other is None or held is None or held.type is not np.ndarray or held.dtype != np.float64 \
            or d in loads(other):
        return None
    array = _read_by_index(other, inference, rules, vjps, rule)
    if array is not None:
        return _added_at(d, other, stmt) if held.shape == array.shape else None
    added = single(inference.expr(other))  # d + e of an array e of d's shape and dtype: d += e, the same sums
    if added is None or added.type is not np.ndarray or added.dtype != np.float64 or added.shape != held.shape:
        return None
    return gast.copy_location(gast.AugAssign(target=name(d, gast.Store()), op=gast.Add(), value=other), stmt)


def _clear(stmt: gast.stmt, fresh: set[str], inference: Inference, cleared: str | None) -> gast.stmt | None:
    """``d = cleared(d, s)`` of a fresh float64 array ``d`` and an int or a constant slice ``s``: ``d[s] = 0.0``."""
    if cleared is None or not (isinstance(stmt, gast.Assign) and len(stmt.targets) == 1
                               and isinstance(stmt.targets[0], gast.Name) and stmt.targets[0].id in fresh):
        return None
    d, value = stmt.targets[0].id, stmt.value
    if not (isinstance(value, gast.Call) and isinstance(value.func, gast.Name) and value.func.id == cleared
            and len(value.args) == 2 and not value.keywords and isinstance(value.args[0], gast.Name)
            and value.args[0].id == d):
        return None
    held = single(inference.expr(value.args[0]))
    index = value.args[1]
    if held is None or held.type is not np.ndarray or held.dtype != np.float64 or not held.shape:
        return None
    if not (_constant_slice(index, inference) or isinstance(index, gast.Name) and inference.expr(index) == {Kind(int)}
            and len(held.shape) == 1):
        return None
    target = gast.Subscript(value=name(d), slice=written_index(index), ctx=gast.Store())
    return gast.copy_location(gast.Assign(targets=[target], value=const(0.0), type_comment=None), stmt)


def _referencing_loads(stmt: gast.stmt) -> set[str]:
    """The names ``stmt`` reads other than as ``d[s].copy()``, a copy of a part (which keeps no reference)."""
    copied = set()
    for node in nodes(stmt):
        if isinstance(node, gast.Call) and not node.args and not node.keywords \
                and isinstance(node.func, gast.Attribute) and node.func.attr == "copy" \
                and isinstance(node.func.value, gast.Subscript) and isinstance(node.func.value.value, gast.Name):
            copied.add(id(node.func.value.value))
    return {n.id for n in names(stmt) if type(n.ctx) is gast.Load and id(n) not in copied}


def _makes_an_array(value: gast.expr, inference: Inference) -> bool:
    """``np.zeros(shape)``, or an arithmetic of known arrays and numbers: a new array no one else holds."""
    if isinstance(value, gast.Call) and inference.resolve(value.func) is np.zeros:
        return True
    if not isinstance(value, gast.BinOp):
        return False
    kinds = [inference.expr(value), inference.expr(value.left), inference.expr(value.right)]
    return all(k is not None and k and all(kind.type in _COTANGENTS for kind in k) for k in kinds) \
        and all(kind.type is np.ndarray for kind in kinds[0])
