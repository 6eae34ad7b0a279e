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
from ..rules import registry
from ..rules.templates import Kind, example, real
from .kinds import Inference, own_rule_function, single

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


def _written(stmt: gast.stmt, inference: Inference, rules: dict, vjps: dict, rule: Any,
             module_alias: Callable) -> list[gast.stmt] | None:
    if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
            and isinstance(stmt.value, gast.Call) and isinstance(stmt.value.func, gast.Name)
            and not stmt.value.keywords and len(stmt.value.args) == 4):
        return None
    label = stmt.value.func.id
    if rules.get(label) != (rule, 0) or not own_rule_function(vjps.get(label)):
        return None
    g, ans, x, index = stmt.value.args
    if not all(isinstance(a, (gast.Name, gast.Constant)) for a in (g, ans, x, index)):
        return None
    array = single(inference.expr(x))
    cotangent = inference.expr(g)
    if array is None or array.type is not np.ndarray or not real(array) or array.dtype.kind not in "fiu" \
            or cotangent is None or not all(k.type in _COTANGENTS and real(k) for k in cotangent):
        return None
    if not (isinstance(index, gast.Constant) and type(index.value) is int
            or isinstance(index, gast.Name) and inference.expr(index) == {Kind(int)}):
        return None
    dtypes = {np.result_type(example(array), example(k)) for k in cotangent}
    if len(dtypes) != 1:
        return None
    if dtypes.pop() != np.float64:
        return None  # (the kinds know no float32 number, so no float32 cotangent reaches here)
    np_name = module_alias("np", np)
    target = stmt.targets[0].id
    made = assign(target, method(np_name, "zeros", const(array.shape)), like=stmt)
    element = gast.Subscript(value=name(target), slice=clone(index), ctx=gast.Store())
    added = gast.copy_location(gast.AugAssign(target=element, op=gast.Add(), value=clone(g)), stmt)
    return [made, added]
