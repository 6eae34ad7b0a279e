"""Other spellings of primitives: operator functions, container constructors, scalar casts, ufunc methods.

* ``operator.add``, ``sub``, ``mul``, ``truediv``, ``mod``, ``pow``, ``neg``,
  ``pos``, ``matmul``, ``abs``: the functions behind ``+ - * / % ** - + @``
  and ``abs``, called directly or passed around as values; each has the rule
  of the operator it spells (``operator.mul`` that of ``np.multiply``, which
  ``*`` maps to), its batched forms included.
* (``tuple(x)``, ``list(x)`` and ``dict(x)`` are in iterables.py.)
* ``np.float64(x)``, ``np.float32(x)``, ``np.float16(x)``: the cast, whose
  derivative is the identity (as ``x.astype(np.float32)``'s); the value and
  its tangent have the dtype NumPy gives, the contribution keeps the
  argument's dtype. (A cast to an integer type, ``np.int64(x)``, has no
  gradient, as ``int(x)``: nondiff.py.)
* ``np.add.reduce``, ``np.multiply.reduce``, ``np.maximum.reduce``,
  ``np.minimum.reduce``, ``np.add.accumulate``, ``np.multiply.accumulate``:
  sum, prod, max, min, cumsum and cumprod along ``axis=0`` by default (the
  rules of those functions); ``np.maximum.accumulate`` and
  ``np.minimum.accumulate``: the running extreme, each element's cotangent
  going to the element that set it; ``ufunc.outer`` for every binary ufunc
  with a rule: every element of ``a`` with every element of ``b``, the result
  of shape ``a.shape + b.shape`` (``np.multiply.outer``, ``np.add.outer`` and
  ``np.subtract.outer`` with rules of their own, the others through their
  ufunc's rule on ``a`` reshaped to broadcast against ``b``).

``functools.reduce(f, seq[, initial])`` with ``f`` a primitive that has a
rule (``operator.add``, ``operator.mul``, ``np.maximum``...) differentiates
in ``seq`` and ``initial``: its vjp runs the fold again, keeping every
partial result, and sends the cotangent back through ``f``'s own vjps. A
function without a rule (a lambda) is refused when the gradient is taken:
write the loop instead, which adsrc differentiates.

``np.add.at(y, indices, v)`` and ``np.subtract.at`` write into ``y`` in place,
repeated indices adding up. Into an array the function made (the rules of
``y[i] = v``, frontend/mutations.py), the frontend runs the call as the write
``y[...] = ufunc_at(np.add, y, indices, v)``: :func:`ufunc_at` does the same
on a copy, and has the rule (``y``'s cotangent passes through, ``v`` gets
``g[indices]``). Into an input, or with another ufunc, it is refused.
"""
from __future__ import annotations

import builtins
import functools
import operator

import numpy as np

from ..errors import InvalidArgument
from ..values import add_tangents
from .registry import allow_complex, defjvp, defvjp, lookup
from ._util import cast_like, is_array, is_zero, note, unbroadcast, zero

_NO = np._NoValue


def _same_rule(func, primitive, name, module):
    """Register ``func`` with the rule of ``primitive``: the same vjps, jvps and batched forms."""
    rule = lookup(primitive)
    vjps = [None if v is None else v.__wrapped__ for v in rule.vjps]
    fuse = {i: v.fuse.__wrapped__ for i, v in enumerate(rule.vjps) if v is not None and v.fuse is not None}
    add_into = {i: v.add_into.__wrapped__ for i, v in enumerate(rule.vjps) if v is not None and v.add_into is not None}
    made = defvjp(func, *vjps, name=name, module=module, fuse=fuse or None, add_into=add_into or None)
    defjvp(func, *(None if j is None else j.__wrapped__ for j in rule.jvps), piecewise_linear=rule.piecewise_linear)
    if rule.complex_ok:  # operator.mul is np.multiply: correct for complex values as that is
        allow_complex(func)
    note(f"the rule of {rule.qualname}", made)
    return made


# ---- operator ----------------------------------------------------------------------------------
for _func, _primitive in (
    (operator.add, np.add), (operator.sub, np.subtract), (operator.mul, np.multiply),
    (operator.truediv, np.true_divide), (operator.mod, np.remainder), (operator.pow, np.power),
    (operator.neg, np.negative), (operator.pos, np.positive), (operator.matmul, np.matmul),
    (operator.abs, builtins.abs),
):
    _same_rule(_func, _primitive, _func.__name__, "operator")


# ---- scalar casts --------------------------------------------------------------------------------
def _cast_dx(g, ans, x=0.0):
    if isinstance(x, float):
        return float(g)
    return cast_like(g, x)


def _cast_jvp(kind: type):
    """The tangent of ``kind(x)``: ``kind(t)``, in the result's dtype."""
    def jvp(t, ans, x=0.0):
        return kind(t)

    return jvp


for _kind in (np.float64, np.float32, np.float16):
    defvjp(_kind, _cast_dx, module="numpy")
    defjvp(_kind, _cast_jvp(_kind), piecewise_linear=True)
    note("the contribution keeps the argument's dtype (a float for a Python float); the tangent has the "
         "result's", lookup(_kind))


# ---- ufunc methods -------------------------------------------------------------------------------
def _along_axis0(base, cumulative):
    """The vjp (or jvp) of sum/prod/cumsum/cumprod, for the ufunc method whose axis defaults to 0."""
    if cumulative:
        def along(g, ans, array, axis=0, dtype=None, out=None):
            return base(g, ans, array, axis, dtype)
    else:
        def along(g, ans, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
            return base(g, ans, array, axis, dtype, None, keepdims, initial, _NO if where is True else where)
    return along


for _method, _primitive, _cumulative in ((np.add.reduce, np.sum, False), (np.multiply.reduce, np.prod, False),
                                         (np.add.accumulate, np.cumsum, True),
                                         (np.multiply.accumulate, np.cumprod, True)):
    _rule = lookup(_primitive)
    _name = f"{_method.__self__.__name__}_{_method.__name__}"
    defvjp(_method, _along_axis0(_rule.vjps[0].__wrapped__, _cumulative), name=_name, module="numpy")
    defjvp(_method, _along_axis0(_rule.jvps[0].__wrapped__, _cumulative), piecewise_linear=_rule.piecewise_linear)
    note(f"{_rule.qualname} along axis=0 by default", lookup(_method))
# np.sum's tangent rule passes initial= on, which would make add.reduce's tangent affine: its own, without it.
defjvp(np.add.reduce, lambda t, ans, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO, where=True:
       np.add.reduce(t, axis, dtype, None, keepdims, where=where), piecewise_linear=True)


def _extreme_along_axis0(base):
    """The vjp (or jvp) of np.max/np.min for maximum.reduce/minimum.reduce (axis 0 by default, a dtype)."""
    def along(g, ans, array, axis=0, dtype=None, out=None, keepdims=False, initial=_NO, where=True):
        return base(g, ans, array, axis, None, keepdims, initial, _NO if where is True else where)
    return along


for _method, _primitive in ((np.maximum.reduce, np.max), (np.minimum.reduce, np.min)):
    _rule = lookup(_primitive)
    defvjp(_method, _extreme_along_axis0(_rule.vjps[0].__wrapped__),
           name=f"{_method.__self__.__name__}_reduce", module="numpy")
    defjvp(_method, _extreme_along_axis0(_rule.jvps[0].__wrapped__), piecewise_linear=True)
    note(f"{_rule.qualname} along axis=0 by default (ties share the cotangent)", lookup(_method))


def _running_source(ufunc, array, axis):
    """For each element of ``ufunc.accumulate(array, axis)`` (maximum or minimum), the position along
    ``axis`` of the element it equals: the first to reach the running extreme (ties keep the earlier).
    ``array`` and the positions come back with ``axis`` moved last."""
    x = np.moveaxis(np.asarray(array), axis, -1)
    running = ufunc.accumulate(x, axis=-1)
    previous = np.concatenate([x[..., :1], running[..., :-1]], axis=-1)
    positions = np.arange(x.shape[-1])
    new = (positions == 0) | (ufunc(x, previous) != previous)  # strictly beyond the extreme so far
    return x, np.maximum.accumulate(np.where(new, positions, 0), axis=-1)


def _running_extreme_vjp(ufunc):
    def vjp(g, ans, array, axis=0, dtype=None, out=None):
        x, source = _running_source(ufunc, array, axis)
        g = np.moveaxis(np.asarray(g), axis, -1)
        total = np.zeros(x.shape, dtype=np.result_type(x, g))
        rows = np.arange(total.size // max(x.shape[-1], 1))[:, None]
        np.add.at(total.reshape(-1, x.shape[-1]), (rows, source.reshape(-1, x.shape[-1])), g.reshape(-1, x.shape[-1]))
        return _as_argument(np.moveaxis(total, -1, axis), array)
    return vjp


def _running_extreme_jvp(ufunc):
    def jvp(t, ans, array, axis=0, dtype=None, out=None):
        _, source = _running_source(ufunc, array, axis)
        t = np.moveaxis(np.broadcast_to(t, np.shape(array)), axis, -1)
        return np.moveaxis(np.take_along_axis(t, source, axis=-1), -1, axis)
    return jvp


for _ufunc in (np.maximum, np.minimum):
    defvjp(_ufunc.accumulate, _running_extreme_vjp(_ufunc), name=f"{_ufunc.__name__}_accumulate", module="numpy")
    defjvp(_ufunc.accumulate, _running_extreme_jvp(_ufunc), piecewise_linear=True)
    note("the running extreme along axis=0 by default: each element's cotangent goes to the element that set it "
         "(the first to reach it, on ties)", lookup(_ufunc.accumulate))


def _outer_axes(a, b):
    return tuple(range(np.ndim(a))), tuple(range(np.ndim(a), np.ndim(a) + np.ndim(b)))


def _as_argument(value, like):
    """A contribution summed to ``like``'s shape, a float for a Python float."""
    return float(value) if isinstance(like, (int, float)) else cast_like(value, like)


def _times_outer_da(g, ans, a, b):
    return _as_argument(np.tensordot(g, b, axes=np.ndim(b)), a)


def _times_outer_db(g, ans, a, b):
    return _as_argument(np.tensordot(a, g, axes=np.ndim(a)), b)


def _plus_outer_da(g, ans, a, b):
    return _as_argument(np.sum(g, axis=_outer_axes(a, b)[1]), a)


def _plus_outer_db(g, ans, a, b):
    return _as_argument(np.sum(g, axis=_outer_axes(a, b)[0]), b)


def _minus_outer_db(g, ans, a, b):
    return _as_argument(-np.sum(g, axis=_outer_axes(a, b)[0]), b)


def _spread(t, ans, a, b, first):
    """The tangent of a or b alone, broadcast to the outer result's shape."""
    t = np.asarray(t)
    shaped = np.reshape(t, np.shape(t) + (1,) * np.ndim(b)) if first else np.reshape(t, (1,) * np.ndim(a) + np.shape(t))
    return np.broadcast_to(shaped, np.shape(ans))


defvjp(np.multiply.outer, _times_outer_da, _times_outer_db, name="multiply_outer", module="numpy")
defjvp(np.multiply.outer, lambda t, ans, a, b: np.multiply.outer(t, b), lambda t, ans, a, b: np.multiply.outer(a, t))
defvjp(np.add.outer, _plus_outer_da, _plus_outer_db, name="add_outer", module="numpy")
defjvp(np.add.outer, lambda t, ans, a, b: _spread(t, ans, a, b, True), lambda t, ans, a, b: _spread(t, ans, a, b, False),
       piecewise_linear=True)
defvjp(np.subtract.outer, _plus_outer_da, _minus_outer_db, name="subtract_outer", module="numpy")
defjvp(np.subtract.outer, lambda t, ans, a, b: _spread(t, ans, a, b, True),
       lambda t, ans, a, b: -_spread(t, ans, a, b, False), piecewise_linear=True)
note("a with every element of b: the result's shape is a.shape + b.shape",
     lookup(np.multiply.outer), lookup(np.add.outer), lookup(np.subtract.outer))


def _outer_operands(a, b):
    """``a`` shaped ``a.shape + (1,) * b.ndim``, so that ``ufunc(a, b)`` is ``ufunc.outer(a, b)``."""
    return np.reshape(a, np.shape(a) + (1,) * np.ndim(b)), b


def _outer_vjp(rule, i):
    def vjp(g, ans, a, b):
        spread = _outer_operands(a, b)
        part = rule.vjps[i](g, ans, *spread)
        return _as_argument(np.reshape(part, np.shape((a, b)[i])), (a, b)[i])
    return vjp


def _outer_jvp(rule, i):
    def jvp(t, ans, a, b):
        spread = _outer_operands(a, b)
        return rule.jvps[i](_outer_operands(t, b)[0] if i == 0 else t, ans, *spread)
    return jvp


# Every other binary ufunc with a rule: its own rule, on a reshaped to broadcast against b.
_BINARY = {u for u in vars(np).values() if isinstance(u, np.ufunc) and u.nin == 2 and u.nout == 1 and u.signature is None
           and lookup(u) is not None and len(lookup(u).vjps) == 2 and None not in lookup(u).jvps}
for _ufunc in sorted(_BINARY - {np.add, np.subtract, np.multiply}, key=lambda u: u.__name__):
    _rule = lookup(_ufunc)
    defvjp(_ufunc.outer, *(_outer_vjp(_rule, i) for i in range(2)), name=f"{_ufunc.__name__}_outer", module="numpy")
    defjvp(_ufunc.outer, *(_outer_jvp(_rule, i) for i in range(2)), piecewise_linear=_rule.piecewise_linear)
    note(f"the rule of {_rule.qualname}, every element of a with every element of b", lookup(_ufunc.outer))


# ---- np.add.at and np.subtract.at, run as a write of a new value ----------------------------------------
AT_UFUNCS = (np.add, np.subtract)  # the ufuncs whose .at the frontend runs through ufunc_at


def ufunc_at(ufunc, a, indices, b):
    """``ufunc.at(a, indices, b)`` on a copy of ``a``, returned (``np.add.at`` as a function with a rule).

    >>> import numpy as np
    >>> from adsrc.rules.spellings import ufunc_at
    >>> ufunc_at(np.add, np.zeros(3), [0, 2, 0], np.array([1.0, 2.0, 3.0]))
    array([4., 0., 2.])
    """
    out = np.array(a, copy=True)
    ufunc.at(out, indices, b)
    return out


def _at_da(g, ans, ufunc, a, indices, b):
    return _as_argument(g, a)


def _at_db(g, ans, ufunc, a, indices, b):
    part = np.asarray(g)[indices]  # repeated indices read the same element once each, as .at added it
    part = part if ufunc is np.add else -part
    return _as_argument(unbroadcast(part, b), b)


def _at_jvp_b(t, ans, ufunc, a, indices, b):
    return ufunc_at(ufunc, np.zeros(np.shape(ans), dtype=np.result_type(ans, t)), indices, t)


defvjp(ufunc_at, None, _at_da, None, _at_db)
defjvp(ufunc_at, None, lambda t, ans, ufunc, a, indices, b: t, None, _at_jvp_b, piecewise_linear=True)
note("np.add.at(y, indices, v) and np.subtract.at into an array the function made, run as the write "
     "y[...] = ufunc_at(np.add, y, indices, v); repeated indices add up", lookup(ufunc_at))


# ---- functools.reduce(f, seq[, initial]) with a primitive f ---------------------------------------
def _fold(function, iterable, initial):
    """The rule of ``function``, the items folded, and every partial result (the first is the start)."""
    rule = lookup(function)
    if rule is None or len(rule.vjps) < 2:
        label = getattr(function, "__qualname__", None) or repr(function)
        raise InvalidArgument(f"functools.reduce is differentiated through the gradient rule of the function "
                              f"it folds with, and {label} has none: write the loop instead (adsrc "
                              f"differentiates it), or fold with a function that has a rule (operator.add, "
                              f"operator.mul, np.maximum...)")
    items = list(iterable)
    start, rest = (initial[0], items) if initial else (items[0], items[1:])
    partial = [start]
    for item in rest:
        partial.append(function(partial[-1], item))
    return rule, rest, partial


def _reduce_backward(g, function, iterable, initial):
    """The cotangents of the start and of each folded item, from the last step back."""
    rule, rest, partial = _fold(function, iterable, initial)
    items_g = [zero] * len(rest)
    for k in reversed(range(len(rest))):
        args = (partial[k], rest[k])
        out = partial[k + 1]
        if rule.vjps[1] is not None:
            items_g[k] = rule.vjps[1](g, out, *args)
        g = zero if rule.vjps[0] is None else rule.vjps[0](g, out, *args)
    return g, items_g


def _in_structure(contributions, iterable):
    if is_array(iterable):  # rows of an array (of NumPy or another library): an array again
        given = [c for c in contributions if not is_zero(c)]
        if not given:
            return zero
        rows = [given[0] * 0.0 if is_zero(c) else c for c in contributions]
        return cast_like(np.reshape(np.stack(rows), np.shape(iterable)), iterable)
    return type(iterable)(contributions) if isinstance(iterable, (list, tuple)) else list(contributions)


def _reduce_dsequence(g, ans, function, sequence, *initial):
    g_start, items_g = _reduce_backward(g, function, sequence, initial)
    return _in_structure(items_g if initial else [g_start] + items_g, sequence)


def _reduce_dinitial(g, ans, function, sequence, *initial):
    return _reduce_backward(g, function, sequence, initial)[0]


def _reduce_tangent(t_start, t_items, function, sequence, initial):
    rule, rest, partial = _fold(function, sequence, initial)
    total = t_start
    for k, t_item in enumerate(t_items):
        args, out = (partial[k], rest[k]), partial[k + 1]
        step = zero
        if not is_zero(total):
            step = rule.jvps[0](total, out, *args)
        if not is_zero(t_item):
            step = add_tangents(step, rule.jvps[1](t_item, out, *args))
        total = step
    return total


def _reduce_jvp_sequence(t, ans, function, sequence, *initial):
    t_items = list(t) if isinstance(t, (list, tuple, np.ndarray)) else [t]
    if initial:
        return _reduce_tangent(zero, t_items, function, sequence, initial)
    return _reduce_tangent(t_items[0], t_items[1:], function, sequence, initial)


def _reduce_jvp_initial(t, ans, function, sequence, *initial):
    return _reduce_tangent(t, [zero] * len(list(sequence)), function, sequence, initial)


defvjp(functools.reduce, None, _reduce_dsequence, _reduce_dinitial, name="reduce", module="functools")
defjvp(functools.reduce, None, _reduce_jvp_sequence, _reduce_jvp_initial)
note("with a function that has a rule (operator.add, np.maximum...); the vjp folds again, keeping each partial "
     "result", lookup(functools.reduce))
