"""Python builtins: abs, pow, float, sum, max/min of several values, sorted, and getattr.

``getattr(obj, name)`` (and ``obj.name`` on a structure: a model's
``self.w``, a NamedTuple's or dataclass's field) sends the cotangent to that
attribute of ``obj``'s cotangent (values/pytrees.py).

``max(a, b, c)`` sends the cotangent to the winning argument; tied winners
share it evenly. ``max(seq)`` and ``sum(seq)`` of one sequence return a list
of per-element gradients (an array when ``seq`` is an array). The variadic
forms accept up to sixteen arguments (an argument past the rule's last
vjp would get no gradient, so the limit is generous).
"""
from __future__ import annotations

import builtins
from typing import Any

import numpy as np

from .registry import attribute_primitive, defjvp, defvjp, lookup, receivers_of
from ..values.arrays import receives
from ..values.pytrees import attribute_cotangent, attribute_tangent
from ._tangent import dense
from ._util import broadcast_like, cast_like, is_array, note, unbroadcast, variadic, zero
from .elementwise import _power_dx, _power_dy, _power_jvp_x, _power_jvp_y
from .iterables import VIEWS as _VIEWS

_MAX_ARGS = 16
_NAMES = ("a", "b", "c", "d", "e", "f", "h", "k")  # then arg8, arg9, ...

defvjp(builtins.abs, lambda g, ans, x: g * np.sign(x))


def _array_attribute(obj: Any, name: str) -> Any:
    """The rule of ``obj.name`` where it is an array's attribute with one (``x.T`` of an array read as
    ``getattr(x, "T")``, or where the code did not show that ``x`` is an array: frontend/receivers.py)."""
    prim = attribute_primitive(name)
    if prim is None or not receives(receivers_of("attribute", name), obj):
        return None
    return lookup(prim)


def _getattr_dx(g, ans, obj, name, default=None):
    rule = _array_attribute(obj, name)
    return attribute_cotangent(g, obj, name) if rule is None else rule.vjps[0](g, ans, obj)


def _getattr_jvp(t, ans, obj, name, default=None):
    rule = _array_attribute(obj, name)
    return attribute_tangent(t, obj, name) if rule is None else rule.jvps[0](t, ans, obj)


def _getattr_ddefault(g, ans, obj, name, default=None):
    """The default's cotangent: the result's where the object lacks the attribute (and so returned it)."""
    return zero if hasattr(obj, name) else g


defvjp(builtins.getattr, _getattr_dx, None, _getattr_ddefault)
defjvp(builtins.getattr, _getattr_jvp, None, lambda t, ans, obj, name, default=None: zero if hasattr(obj, name) else t,
       piecewise_linear=True)
defvjp(builtins.float, lambda g, ans, x: cast_like(g, x))


def _pow_dbase(g, ans, base, exp, mod=None):
    """exp * base**(exp - 1), as np.power's: 0 for exp == 0, also at base == 0."""
    return _power_dx(g, ans, base, exp)


def _pow_dexp(g, ans, base, exp, mod=None):
    return _power_dy(g, ans, base, exp)


defvjp(builtins.pow, _pow_dbase, _pow_dexp)


def _sum_dseq(g, ans, iterable, start=0):
    if is_array(iterable):
        return broadcast_like(g, iterable)
    return [unbroadcast(g, item) for item in iterable]


defvjp(builtins.sum, _sum_dseq, lambda g, ans, iterable, start=0: unbroadcast(g, start))


def _winner(items, ans) -> int:
    """The position of the item max/min/sorted returned: Python returns the item itself, so the
    first one that *is* ``ans`` (a key may rank different values equal; only that one won)."""
    return next(i for i, v in enumerate(items) if v is ans)


def _extremum_vjp(k):
    """The vjp of argument ``k`` of max/min: g over the number of tied winners; with ``key=``, g to
    the item Python returned."""

    def vjp(g, ans, *args, key=None, default=None):
        if len(args) == 1:  # max(sequence)
            seq = args[0]
            if is_array(seq) and key is None:
                wins = seq == ans
                return g * wins / int(np.sum(wins))
            if key is not None and not is_array(seq):
                won = _winner(seq, ans)
                return [g if i == won else zero for i in range(len(seq))]
            rank = key or (lambda v: v)
            wins = [rank(v) == rank(ans) for v in seq]
            share = g / builtins.sum(wins)
            return [share if w else zero for w in wins]
        if key is not None:
            return g if _winner(args, ans) == k else zero
        if args[k] != ans:
            return zero
        return g / builtins.sum(1 for v in args if v == ans)

    return vjp


def _yields_keys(iterable) -> bool:
    """True for a dict or its keys view: iterating gives keys, which carry no gradient."""
    return isinstance(iterable, (dict, type({}.keys())))


def _identity(item):
    """What matches an item of ``sorted``'s result to the item it came from: the object itself, or for a
    tuple its items (``d.items()`` makes new pairs each time it is iterated, of the same keys and values)."""
    return tuple(id(part) for part in item) if type(item) is tuple else id(item)


def _sorted_order(ans, iterable, key, reverse) -> list[int]:
    """Where each item of ``ans = sorted(iterable, key=key, reverse=reverse)`` came from.

    The items of a list, tuple or dict view are the objects sorted returned, matched by identity (the key
    is not called again: it may read variables changed since); an array's by sorting positions the same way.
    """
    if isinstance(iterable, (list, tuple, *_VIEWS)):
        unused: dict[Any, list[int]] = {}
        for i, item in enumerate(iterable):
            unused.setdefault(_identity(item), []).append(i)
        return [unused[_identity(item)].pop(0) for item in ans]
    rank = key or (lambda v: v)
    return builtins.sorted(range(len(iterable)), key=lambda i: rank(iterable[i]), reverse=reverse)


def _sorted_dseq(g, ans, iterable, key=None, reverse=False):
    if _yields_keys(iterable):
        return zero
    order = _sorted_order(ans, iterable, key, reverse)
    out = [zero] * len(order)
    for position, source in enumerate(order):
        out[source] = g[position]
    if not is_array(iterable):
        return out  # a list, tuple or view: a list of the items' cotangents
    given = [v for v in out if v is not zero]  # an array's items: stacked back into an array of its library
    if not given:
        return zero
    return np.stack([given[0] * 0.0 if v is zero else v for v in out])


def _sorted_jvp(t, ans, iterable, key=None, reverse=False):
    """The tangents in sorted order; where items tie (without a key), the direction orders them as
    sorting ``x + h * t`` would, as np.sort's jvp does. A dict's keys carry no tangent."""
    if _yields_keys(iterable):
        return zero
    tangents = [t[i] for i in _sorted_order(ans, iterable, key, reverse)]
    if key is None:
        start = 0
        for end in range(1, len(ans) + 1):
            if end == len(ans) or not ans[end] == ans[start]:
                if end - start > 1:  # tied items: their tangents, zeros made explicit, in sorted order
                    tied = [dense(ti, item) for ti, item in zip(tangents[start:end], ans[start:end])]
                    tangents[start:end] = builtins.sorted(tied, reverse=reverse)
                start = end
    return tangents  # sorted returns a list, of an array's items too


defvjp(builtins.sorted, _sorted_dseq)
defjvp(builtins.sorted, _sorted_jvp, piecewise_linear=True)


defvjp(builtins.max, *variadic(_extremum_vjp, _MAX_ARGS, _NAMES))
defvjp(builtins.min, *variadic(_extremum_vjp, _MAX_ARGS, _NAMES))


def _extremum_jvp(k):
    """The tangent of max/min through argument ``k``: t where it wins, over the number of tied winners."""

    def jvp(t, ans, *args, key=None, default=None):
        if len(args) == 1:  # max(sequence): the winners' tangents, averaged
            seq = args[0]
            if is_array(seq) and key is None:
                wins = seq == ans
                return np.sum(t * wins) / int(np.sum(wins))
            if key is not None and not is_array(seq):
                return dense(t, seq)[_winner(seq, ans)]
            rank = key or (lambda v: v)
            wins = [rank(v) == rank(ans) for v in seq]
            return builtins.sum(ti for ti, w in zip(dense(t, seq), wins) if w) / builtins.sum(wins)
        if key is not None:
            return t if _winner(args, ans) == k else zero
        if args[k] != ans:
            return zero
        return t / builtins.sum(1 for v in args if v == ans)

    return jvp


defjvp(builtins.abs, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defjvp(builtins.float, lambda t, ans, x: float(t) if np.ndim(t) == 0 else t, piecewise_linear=True)
defjvp(
    builtins.pow,
    lambda t, ans, base, exp, mod=None: _power_jvp_x(t, ans, base, exp),
    lambda t, ans, base, exp, mod=None: _power_jvp_y(t, ans, base, exp),
)
defjvp(builtins.sum, lambda t, ans, iterable, start=0: builtins.sum(dense(t, iterable)),
       lambda t, ans, iterable, start=0: t, piecewise_linear=True)
defjvp(builtins.max, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
defjvp(builtins.min, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
note("of up to 16 values, or of one sequence; tied winners share g evenly; with key=, g goes to the item "
     "Python returned", lookup(builtins.max), lookup(builtins.min))
note("key= and reverse= as Python's (a stable sort): each item's gradient goes back to where it came from",
     lookup(builtins.sorted))
note("of a list (a list of gradients) or of an array (over its first axis)", lookup(builtins.sum))
note("identity; the gradient keeps the argument's dtype", lookup(builtins.float))
note("as np.power: d/dbase exactly 0 for exp == 0, also at base == 0", lookup(builtins.pow))
note("the subgradient at 0 is 0", lookup(builtins.abs))
