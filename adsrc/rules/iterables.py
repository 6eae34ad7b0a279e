"""Containers made from others: list(...), tuple(...), dict(...), and a dict's views and .get().

The cotangent of a dict view is a list, one entry per item in the dict's
order (``d.values()`` iterates in insertion order, and adsrc refuses anything
that changes a dict), so ``sum(d.values())`` and ``for k, v in d.items()``
hand their gradients back to the dict's entries. ``list(xs)`` and
``tuple(xs)`` of a list, tuple, array, dict view or dict (its keys) give each
item's cotangent back to the item it came from. ``dict(pairs)`` (what a dict
comprehension becomes) gives each value the cotangent of its key, and a key
that repeats, as in Python, keeps only its last value; ``dict(pairs, b=x)``
differentiates as ``dict_with(pairs, {"b": x})``, where an entry by keyword
replaces a pair of the same key. The methods differentiate
only on a dict; on another object they raise InvalidArgument.
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from ..errors import InvalidArgument
from ..values import TangentDict, TangentList, TangentTuple, is_zero, part, zero
from .registry import defjvp, defmethod, defvjp, register_nondifferentiable

VIEWS = (type({}.keys()), type({}.values()), type({}.items()))  # a dict's views


def _item_cotangents(g: Any, like: Any) -> Any:
    """The cotangent of the iterable ``like``, given ``g``, one cotangent per item it yields."""
    if is_zero(g):
        return zero
    if isinstance(like, np.ndarray):
        out = np.zeros(like.shape, dtype=np.result_type(like, 1.0))
        for i, gi in enumerate(g):
            if not is_zero(gi):
                out[i] = gi
        return out
    if isinstance(like, tuple):
        return TangentTuple(g)
    if isinstance(like, (list, type({}.values()), type({}.items()))):
        return TangentList(g)
    if isinstance(like, (dict, type({}.keys()), range, str)):
        return zero  # keys, characters, integers: nothing to differentiate
    raise InvalidArgument(f"adsrc differentiates list(...) and tuple(...) of a list, tuple, array, dict or dict "
                          f"view, not of a {type(like).__name__} (iterating it may have effects adsrc cannot replay)")


def _items_of(t: Any, like: Any) -> Any:
    """The tangents of the items the iterable ``like`` yields, given its tangent ``t``."""
    if is_zero(t) or isinstance(like, (dict, type({}.keys()), range, str)):
        return zero  # keys, characters, integers: no tangent
    return [t[i] for i in range(len(t))] if isinstance(like, np.ndarray) else list(t)


def _list_dx(g, ans, iterable):
    return _item_cotangents(g, iterable)


def _tuple_dx(g, ans, iterable):
    return _item_cotangents(g, iterable)


defvjp(builtins.list, _list_dx)
def _list_jvp(t, ans, iterable):
    items = _items_of(t, iterable)
    return zero if is_zero(items) else TangentList(items)


def _tuple_jvp(t, ans, iterable):
    items = _items_of(t, iterable)
    return zero if is_zero(items) else TangentTuple(items)


defjvp(builtins.list, _list_jvp, piecewise_linear=True)
defvjp(builtins.tuple, _tuple_dx)
defjvp(builtins.tuple, _tuple_jvp, piecewise_linear=True)


def _last_positions(keys: list) -> dict:
    """Each key's last position among ``keys``: the value ``dict(pairs)`` keeps."""
    return {k: i for i, k in enumerate(keys)}


def _dict_dpairs(g, ans, pairs, **given):
    """``dict(pairs, **given)``: each key's last pair gets its cotangent, unless a keyword replaced it."""
    if isinstance(pairs, dict):
        return TangentDict({k: zero if k in given else part(g, k) for k in pairs}) if not is_zero(g) else zero
    keys = [k for k, _ in pairs]
    last = _last_positions(keys)
    return TangentList([TangentTuple((zero, part(g, k) if last[k] == i and k not in given else zero))
                        for i, k in enumerate(keys)])


def _dict_jvp(t, ans, pairs, **given):
    if is_zero(t):
        return zero
    if isinstance(pairs, dict):
        return TangentDict({k: zero if k in given else part(t, k) for k in pairs})
    return TangentDict((k, part(ti, 1)) for (k, _), ti in zip(pairs, t) if k not in given)


defvjp(builtins.dict, _dict_dpairs)
defjvp(builtins.dict, _dict_jvp, piecewise_linear=True)

def dict_with(pairs, entries):
    """``dict(pairs, **entries)``: what ``dict(pairs, b=x)`` differentiates as (a rule differentiates
    positional arguments; dict's keywords are entries, which replace a pair of the same key)."""
    return builtins.dict(pairs, **entries)


def _without(g, keys) -> Any:
    """The dict cotangent ``g`` without ``keys``."""
    return TangentDict((k, v) for k, v in g.items() if k not in keys)


defvjp(dict_with, lambda g, ans, pairs, entries: _dict_dpairs(_without(g, entries), ans, pairs),
       lambda g, ans, pairs, entries: TangentDict((k, part(g, k)) for k in entries))
defjvp(dict_with, lambda t, ans, pairs, entries: _without(_dict_jvp(t, ans, pairs), entries),
       lambda t, ans, pairs, entries: TangentDict(t), piecewise_linear=True)


# ---- a, b = value: what Python's unpacking iterates -----------------------------------------
def unpacked(value, count, where=""):
    """``value`` as ``a, b = value`` unpacks it, for generated code that then reads its items by
    position: a list, tuple or array as it is, any other iterable (a dict: its keys) as the tuple of
    what iterating it gives; Python's ValueError if it does not hold ``count`` items."""
    items = value if isinstance(value, (list, tuple, np.ndarray)) else tuple(value)
    if len(items) > count:
        raise ValueError(f"too many values to unpack (expected {count})")
    if len(items) < count:
        raise ValueError(f"not enough values to unpack (expected {count}, got {len(items)})")
    return items


def _unpacked_dvalue(g, ans, value, count, where=""):
    if isinstance(value, (list, tuple, np.ndarray)):
        return g
    return _item_cotangents(g, value)


def _unpacked_jvp(t, ans, value, count, where=""):
    if is_zero(t) or isinstance(value, (list, tuple, np.ndarray)):
        return t
    items = _items_of(t, value)
    return zero if is_zero(items) else TangentTuple(items)


defvjp(unpacked, _unpacked_dvalue, None, None)
defjvp(unpacked, _unpacked_jvp, None, None, piecewise_linear=True)


# ---- for a, b in zip(*value): the sequences zipped, as many as the loop's target names --------
def zipped_star(value, count, where=""):
    """The ``count`` sequences that ``for a, b in zip(*value)`` zips (``count`` names in its target), for
    generated code that then zips them by position. Python's ``zip(*value)`` zips as many sequences as
    ``value`` holds, and unpacking a step's items into ``count`` names raises ValueError at the first
    step if that is not ``count``; where there is no first step (``value`` is empty, or one of its items
    is), the loop runs none: then ``count`` empty tuples. A list, tuple or array is taken as it is, any
    other iterable as the tuple of what iterating it gives (as ``unpacked`` takes it)."""
    items = value if isinstance(value, (list, tuple, np.ndarray)) else tuple(value)
    if len(items) == count:
        return items
    if len(items) == 0 or any(len(item) == 0 for item in items):
        return ((),) * count  # zip yields nothing: the loop unpacks nothing, as Python's
    if len(items) > count:
        raise ValueError(f"too many values to unpack (expected {count})")
    raise ValueError(f"not enough values to unpack (expected {count}, got {len(items)})")


def _no_step(ans) -> bool:
    return all(isinstance(a, tuple) and not a for a in ans)


defvjp(zipped_star, lambda g, ans, value, count, where="": zero if _no_step(ans) else
       _unpacked_dvalue(g, ans, value, count), None, None)
defjvp(zipped_star, lambda t, ans, value, count, where="": zero if _no_step(ans) else
       _unpacked_jvp(t, ans, value, count), None, None, piecewise_linear=True)


# ---- zip(*value) consumed where it is made: the list of tuples it yields -------------------
def zip_star(value, where=""):
    """``list(zip(*value))``: what ``for t in zip(*value)``, ``list(zip(*value))`` and ``a, b = zip(*value)``
    consume, for generated code (how many sequences ``value`` holds is known only when it runs). A list,
    tuple or array is taken as it is, any other iterable as the tuple of what iterating it gives."""
    items = value if isinstance(value, (list, tuple, np.ndarray)) else tuple(value)
    return list(zip(*items))


def _zip_star_dvalue(g, ans, value, where=""):
    """Sequence ``k``'s item ``j`` gets part ``k`` of step ``j``'s cotangent (zip stops at the shortest:
    the items after it get none); each sequence's, then ``value``'s, cotangent as its items' are given."""
    if is_zero(g):
        return zero
    items = value if isinstance(value, (list, tuple, np.ndarray)) else tuple(value)
    steps = [zero if is_zero(gj) else gj for gj in g]
    per_sequence = []
    for k, sequence in enumerate(items):
        parts = [zero if is_zero(gj) else part(gj, k) for gj in steps]
        parts += [zero] * (len(sequence) - len(parts))
        per_sequence.append(zero if all(is_zero(p) for p in parts) else _item_cotangents(parts, sequence))
    if all(is_zero(d) for d in per_sequence):
        return zero
    if isinstance(items, np.ndarray):
        return _item_cotangents([zero if is_zero(d) else d for d in per_sequence], items)
    return _item_cotangents(per_sequence, value if isinstance(value, (list, tuple)) else items)


def _zip_star_jvp(t, ans, value, where=""):
    items = _items_of(t, value)
    if is_zero(items):
        return zero
    sequences = value if isinstance(value, (list, tuple, np.ndarray)) else tuple(value)
    columns = [zero if is_zero(tk) else _items_of(tk, seq) for tk, seq in zip(items, sequences)]
    return TangentList(TangentTuple(zero if is_zero(c) else c[j] for c in columns) for j in range(len(ans)))


defvjp(zip_star, _zip_star_dvalue, None)
defjvp(zip_star, _zip_star_jvp, None, piecewise_linear=True)


# ---- a dict's methods: d.values(), d.items(), d.keys(), d.get(key, default) -------------
def _require_dict(d: Any, method: str) -> None:
    if not isinstance(d, dict):
        raise InvalidArgument(f"adsrc differentiates .{method}() of a dict, not of a {type(d).__name__}; "
                              f"read the values you need as a list first")


def dict_values(d):
    """``d.values()``, as the primitive the method differentiates as."""
    return d.values()


def dict_items(d):
    """``d.items()``, as the primitive the method differentiates as."""
    return d.items()


def dict_keys(d):
    """``d.keys()``: no gradient (keys are not differentiated)."""
    return d.keys()


def dict_get(d, key, default=None):
    """``d.get(key, default)``, as the primitive the method differentiates as."""
    return d.get(key, default)


def _values_dd(g, ans, d):
    _require_dict(d, "values")
    return zero if is_zero(g) else TangentDict(zip(d.keys(), g))


def _items_dd(g, ans, d):
    _require_dict(d, "items")
    return zero if is_zero(g) else TangentDict((k, part(gi, 1)) for k, gi in zip(d.keys(), g))


def _get_dd(g, ans, d, key, default=None):
    _require_dict(d, "get")
    return TangentDict({key: g}) if key in d else zero


def _get_ddefault(g, ans, d, key, default=None):
    _require_dict(d, "get")
    return zero if key in d else g


defvjp(dict_values, _values_dd)
defjvp(dict_values, lambda t, ans, d: zero if is_zero(t) else TangentList(part(t, k) for k in d),
       piecewise_linear=True)
defvjp(dict_items, _items_dd)
defjvp(dict_items, lambda t, ans, d: zero if is_zero(t) else TangentList(TangentTuple((zero, part(t, k)))
                                                                         for k in d), piecewise_linear=True)
defvjp(dict_get, _get_dd, None, _get_ddefault)
defjvp(dict_get, lambda t, ans, d, key, default=None: part(t, key) if key in d else zero, None,
       lambda t, ans, d, key, default=None: zero if key in d else t, piecewise_linear=True)
register_nondifferentiable(dict_keys)
for _name, _f in (("values", dict_values), ("items", dict_items), ("keys", dict_keys), ("get", dict_get)):
    defmethod(_name, _f, receivers="dict")
