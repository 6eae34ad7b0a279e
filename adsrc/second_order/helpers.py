"""Tangent helpers that generated any-Python forward code calls for operators, loops and writes.

transform.py turns ``c = a * b`` into ``c = a * b`` plus
``dc = fwd.binary('Mult', c, a, b, da, db)``, a loop into one over
``fwd.iterate(seq, dseq)``, ``out[i] = v`` into the write plus
``dout = fwd.store(dout, out, i, dv)``, and so on: the helpers are here.
Their common rule: a tangent is ``zero`` or a value of the primal's
structure and shape; ``is_zero`` also recognises containers of zeros.

Arrays written in place get a tangent array of their own (``own``), kept in a
per-evaluation ownership map (``ownership()``) so that a helper writing into
its caller's buffer writes into the caller's tangent too. An array may have
several, one per level of tangents (second_order/towers.py).
"""
from __future__ import annotations

import contextlib
import contextvars
import inspect
import operator
from typing import Any, Iterator

import numpy as np

from ..errors import NotDifferentiable
from ..values.arrays import is_array
from ..rules import registry
from ..frontend.anf import BINARY
from ..values import TangentDict, TangentList, TangentTuple, add_tangents, as_tangent, part
from ..values import is_zero_tree, zero
from ..values.pytrees import attribute_tangent, is_namedtuple, is_object
from ..values.pytrees import holds_floats as structure_holds_floats


_BINARY_BY_NAME = {op.__name__: func for op, func in BINARY.items()}




def carries_nothing(value: Any) -> bool:
    """``zero``, or a tuple of such zeros. Unlike ``is_zero_tree``, a list or dict tangent never is, even
    empty or of zeros: where only that is known, the helpers keep the very object, which may grow or be
    written in place, and code differentiated again must find it."""
    if value is zero or value is None:
        return True
    if isinstance(value, tuple):
        return all(carries_nothing(x) for x in value)
    return False


def holds_floats(value: Any) -> bool:
    """Whether a value can carry a tangent: it holds a float or complex number somewhere."""
    if isinstance(value, (bool, int, str, bytes, type(None), slice, np.dtype, type)) or value is zero:
        return False
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray):
        return value.dtype.kind in "fcO"
    if isinstance(value, (np.integer, np.bool_)):
        return False
    if isinstance(value, (list, tuple)):
        return any(holds_floats(v) for v in value)
    if isinstance(value, dict):
        return any(holds_floats(v) for v in value.values())
    if is_object(value):  # a model, a dataclass, a callable layer: its fields say
        return structure_holds_floats(value)
    return not callable(value) and not inspect.ismodule(value)


def _all_zero(tangents: tuple, ktangents: dict) -> bool:
    """No tangent carries a value (a list of zeros does not, though it is kept as the object it is)."""
    return all(is_zero_tree(t) for t in tangents) and all(is_zero_tree(t) for t in ktangents.values())


def items(t: Any, like: Any) -> list:
    """The per-item tangents of a sequence ``like`` whose tangent is ``t``."""
    if carries_nothing(t):
        return [zero] * len(like)
    return list(t)


def binary(op: str, ans: Any, a: Any, b: Any, da: Any, db: Any) -> Any:
    """The tangent of ``ans = a <op> b`` (a ``gast`` operator name)."""
    if carries_nothing(da) and carries_nothing(db):
        return zero
    if op == "Add" and isinstance(ans, (TangentTuple, TangentList, TangentDict)):
        return add_tangents(da, db)  # cotangent containers add leaf by leaf (adsrc/values/containers.py)
    if isinstance(ans, (list, tuple)):  # concatenation or repetition of containers
        kind = TangentList if isinstance(ans, list) else TangentTuple
        if op == "Add":
            return kind(items(da, a) + items(db, b))
        if op == "Mult" and isinstance(a, (list, tuple)):
            return kind(items(da, a) * b)
        if op == "Mult" and isinstance(b, (list, tuple)):  # n * xs
            return kind(items(db, b) * a)
        raise NotDifferentiable(f"forward mode through {op} of containers")
    func = _BINARY_BY_NAME.get(op)
    rule = registry.lookup(func) if func is not None else None
    if rule is None:
        if not holds_floats(ans):
            return zero
        raise NotDifferentiable(f"forward mode has no tangent for the operator {op}")
    return _rule_tangent(rule, ans, (a, b), (da, db))


def unary(op: str, ans: Any, a: Any, da: Any) -> Any:
    if carries_nothing(da):
        return zero
    return -da if op == "USub" else da


def _rule_tangent(rule, ans, args, tangents) -> Any:
    total = zero
    for i, t in enumerate(tangents):
        if is_zero_tree(t):  # a list of zeros carries no tangent into a rule
            continue
        if i < len(rule.jvps) and rule.jvps[i] is not None:
            total = add_tangents(total, rule.jvps[i](t, ans, *args))
        elif i < len(rule.vjps) and rule.vjps[i] is not None:
            raise NotDifferentiable(f"{rule.qualname} has no tangent rule for argument {i} (adsrc.rules.registry.defjvp)")
    return total


def attribute(obj: Any, dobj: Any, name: str, value: Any) -> Any:
    """The tangent of ``obj.name``: through a registered attribute (``.T``), a structure's field, or zero
    for an inert one."""
    if carries_nothing(dobj) or name in registry.INERT_ATTRIBUTES and is_array(obj) or not holds_floats(value):
        return zero
    prim = registry.attribute_primitive(name)
    if prim is None or is_object(obj) or is_namedtuple(obj):  # a field of a structure: self.w, params.b
        return attribute_tangent(dobj, obj, name)
    rule = registry.lookup(prim)
    if rule is None:
        raise NotDifferentiable(f"forward mode has no tangent for the attribute .{name}")
    return _rule_tangent(rule, value, (obj,), (dobj,))


def subscript(dobj: Any, index: Any) -> Any:
    """The tangent of ``obj[index]``."""
    if dobj is zero:
        return zero
    return as_tangent(part(dobj, index))


def iterate(seq: Any, dseq: Any) -> Iterator[tuple[Any, Any]]:
    """``(item, tangent of item)`` for each item of ``seq``."""
    if carries_nothing(dseq):
        for item in seq:
            yield item, zero
        return
    seq = list(seq) if not isinstance(seq, (list, tuple, np.ndarray)) else seq
    yield from zip(seq, items(dseq, seq))


def unpack(t: Any, count: int) -> tuple:
    """The tangents of the ``count`` targets of ``a, b, ... = value``."""
    if carries_nothing(t):
        return (zero,) * count
    out = tuple(t)
    if len(out) != count:
        raise ValueError(f"forward mode: a tangent of {len(out)} items for {count} targets")
    return out


def unpack_starred(t: Any, value: Any, before: int, after: int) -> tuple:
    """The tangents of the targets of ``a, *rest, b = value``: ``before`` items, the list ``rest`` gets, and
    ``after`` items."""
    ts = items(t, list(value))
    return (*ts[:before], TangentList(ts[before:len(ts) - after]), *ts[len(ts) - after:])


def star(t: Any, value: Any) -> list:
    """The tangents of the items of ``*value``."""
    return items(t, list(value) if not isinstance(value, (list, tuple, np.ndarray)) else value)


def keyword_tangents(t: Any, value: dict) -> dict:
    """The tangents of the entries of ``**value``."""
    return {} if carries_nothing(t) else {k: t.get(k, zero) for k in value}


def arg_tangent(tangents: tuple, ktangents: dict, index: int, name: str) -> Any:
    return tangents[index] if index < len(tangents) else ktangents.get(name, zero)


def vararg_tangents(tangents: tuple, start: int) -> TangentTuple:
    return TangentTuple(tangents[start:])


def kwarg_tangents(ktangents: dict, named: tuple) -> TangentDict:
    return TangentDict({k: v for k, v in ktangents.items() if k not in named})


def opaque_value(value: Any, tangents: tuple, what: str) -> Any:
    """Zero for a construct forward mode does not see into, unless a tangent would be lost."""
    if not holds_floats(value) or all(is_zero_tree(t) for t in tangents):
        return zero
    raise NotDifferentiable(f"forward mode through {what}, whose inputs carry a tangent")


_owned: contextvars.ContextVar[dict | None] = contextvars.ContextVar("adsrc_owned_tangents", default=None)


@contextlib.contextmanager
def ownership() -> Iterator[None]:
    """Share the tangents of arrays written in place between the functions of one evaluation."""
    token = _owned.set({})
    try:
        yield
    finally:
        _owned.reset(token)


def _owned_already(t: Any, value: Any) -> bool:
    owned = _owned.get()
    entries = owned.get(id(value), ()) if owned is not None else ()
    return any(v is value and fresh is t for v, fresh in entries)


def own(t: Any, value: Any) -> Any:
    """A tangent for ``value`` that may be written in place: the one already owned, or a fresh copy."""
    if not isinstance(value, (np.ndarray, list, dict)):
        return t
    if _owned_already(t, value):
        return t
    owned = _owned.get()
    if isinstance(value, np.ndarray):
        fresh = np.zeros(value.shape, dtype=np.result_type(value, 1.0)) if carries_nothing(t) else np.array(t)
    elif isinstance(value, list):
        fresh = TangentList(items(t, value))
    else:
        fresh = TangentDict({} if carries_nothing(t) else t)
    if owned is not None:  # one entry per level of tangents (code differentiated again owns its own)
        owned.setdefault(id(value), []).append((value, fresh))
    return fresh


def own_list(t: Any, value: Any) -> Any:
    """Before a list grows in place: its tangent as a list that can grow alongside."""
    return own(t, value) if isinstance(value, list) and not isinstance(t, list) else t


def store(t: Any, value: Any, index: Any, item_tangent: Any, op: str | None = None) -> Any:
    """After ``value[index] = item`` (or ``+=``/``-=``): the tangent of ``value``, updated in place."""
    if carries_nothing(t) and carries_nothing(item_tangent):
        return t
    if isinstance(value, np.ndarray) and value.dtype.kind in "biu":
        return zero  # a write into integers or booleans casts the item: no tangent survives it
    if isinstance(value, np.ndarray) and value.base is not None and not _owned_already(t, value):
        # A view: its tangent would have to be a view of the tangent of the array it shows.
        raise NotDifferentiable("forward mode through a write into a view of another array")
    t = own(t, value)
    if op is None:
        t[index] = 0.0 if carries_nothing(item_tangent) and isinstance(t, np.ndarray) else item_tangent
    elif not is_zero_tree(item_tangent):
        t[index] = operator.add(t[index], item_tangent) if op == "Add" else operator.sub(t[index], item_tangent)
    return t
