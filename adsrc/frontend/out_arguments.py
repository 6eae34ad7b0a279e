"""Out arguments: which argument of a call is an array it writes into, and which such callees a name may hold.

Input: a callee (a function, a ufunc, a method), or a parsed function and its
local names. Output: :func:`out_position`, the position of a callee's ``out``
argument (``nin`` for a ufunc, else the place of a parameter named ``out`` of
a NumPy function or method), None if it has none; :func:`callables_with_out`,
for each local name, the functions with an ``out`` argument it may be bound to
(``e = np.exp``, ``for f in [np.sin, np.cos]``, a local function's parameter).
The fence (mutations.py) refuses ``np.exp(y, y)`` with them, as it refuses ``out=``.
"""
from __future__ import annotations

import inspect
import types

import gast
import numpy as np

from .aliasing import static_value
from .parse import _MISSING, Parsed


def out_position(target: object, method: bool = False) -> int | None:
    """The index of the positional argument of ``target`` that is ``out`` (an array the call
    writes into), or None: ``nin`` for a ufunc, else the position of a parameter named ``out``
    of a NumPy function, ufunc method or (``method``: called on a value) array method."""
    if target is _MISSING or not callable(target):
        return None
    owner = getattr(target, "__self__", None)
    cached = owner is None or isinstance(owner, (types.ModuleType, np.ufunc))  # not a method of a value
    key = (id(target), method)
    if cached and key in _OUT_POSITIONS:
        return _OUT_POSITIONS[key][1]
    position = None
    if isinstance(target, np.ufunc):
        position = target.nin
    elif method or str(getattr(target, "__module__", None) or "").startswith("numpy") \
            or isinstance(owner, (np.ufunc, np.ndarray, np.generic)):
        try:
            params = list(inspect.signature(target).parameters.values())
        except (TypeError, ValueError):
            params = []
        positional = [p.name for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
        if "out" in positional:
            position = positional.index("out") - (1 if method else 0)
    if cached:
        _OUT_POSITIONS[key] = (target, position)  # keeps target alive, so its id stays its own
    return position


_OUT_POSITIONS: dict[tuple[int, bool], tuple[object, int | None]] = {}


def _values_in(value: gast.AST):
    """The names and attribute chains in an expression whose value may be part of its value:
    all of them but the callees of its calls (``f`` in ``f(x)``)."""
    if isinstance(value, (gast.Name, gast.Attribute)):
        yield value
        if isinstance(value, gast.Name):
            return
    for field, child in gast.iter_fields(value):
        if isinstance(value, gast.Call) and field == "func":
            continue
        for item in child if isinstance(child, list) else [child]:
            if isinstance(item, gast.AST):
                yield from _values_in(item)


def callables_with_out(parsed: Parsed, locals_: set[str]) -> dict[str, list]:
    """For each local name of ``parsed`` (``locals_``), the functions with an ``out`` argument (a ufunc,
    ``np.sum``, ...) it may be bound to: those named in any value assigned to it (``e = np.exp``,
    ``for f in [np.sin, np.cos]``, ``g(np.exp)`` for a parameter of a local function ``g``),
    directly or through other local names."""
    local_defs = {}
    for stmt in parsed.node.body:
        if isinstance(stmt, gast.FunctionDef):
            local_defs[stmt.name] = [a.id for a in stmt.args.args]
        elif isinstance(stmt, gast.Assign) and isinstance(stmt.value, gast.Lambda) \
                and isinstance(stmt.targets[0], gast.Name):
            local_defs[stmt.targets[0].id] = [a.id for a in stmt.value.args.args]
    pairs = []
    for node in gast.walk(parsed.node):
        if isinstance(node, gast.Assign):
            pairs += [(t, node.value) for t in node.targets]
        elif isinstance(node, gast.AnnAssign) and node.value is not None:
            pairs.append((node.target, node.value))
        elif isinstance(node, (gast.For, gast.comprehension)):
            pairs.append((node.target, node.iter))
        elif isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id in local_defs:
            params = local_defs[node.func.id]
            pairs += [(gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None), a)
                      for p, a in zip(params, node.args)]
            pairs += [(gast.Name(id=kw.arg, ctx=gast.Store(), annotation=None, type_comment=None), kw.value)
                      for kw in node.keywords if kw.arg in params]
        elif isinstance(node, gast.FunctionDef) and node is not parsed.node:
            params = [a.id for a in node.args.args]
            pairs += [(gast.Name(id=p, ctx=gast.Store(), annotation=None, type_comment=None), d)
                      for p, d in zip(params[len(params) - len(node.args.defaults):], node.args.defaults)]
    found: dict[str, dict[int, object]] = {}
    flows: dict[str, set[str]] = {}
    for target, value in pairs:
        names = [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]
        for part in _values_in(value):
            if isinstance(part, gast.Name) and part.id in locals_:
                for n in names:
                    flows.setdefault(n, set()).add(part.id)
                continue
            obj = static_value(parsed, locals_, part)
            if out_position(obj) is not None:
                for n in names:
                    found.setdefault(n, {})[id(obj)] = obj
    changed = True
    while changed:
        changed = False
        for n, sources in flows.items():
            for source in sources:
                new = {k: v for k, v in found.get(source, {}).items() if k not in found.get(n, {})}
                if new:
                    found.setdefault(n, {}).update(new)
                    changed = True
    return {n: list(objs.values()) for n, objs in found.items()}


def qualified_name(obj: object) -> str:
    """How a message names a callee: ``np.exp`` for a NumPy function or ufunc, else its ``__name__``."""
    name = getattr(obj, "__name__", type(obj).__name__)
    return f"np.{name}" if isinstance(obj, np.ufunc) or getattr(obj, "__module__", None) == "numpy" else name
