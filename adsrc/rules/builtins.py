"""Python builtins: abs, pow, float, sum, and max/min of several values.

``max(a, b, c)`` sends the cotangent to the winning argument; tied winners
share it evenly. ``max(seq)`` and ``sum(seq)`` of one sequence return a list
of per-element gradients (an array when ``seq`` is an array). The variadic
forms accept up to eight arguments.
"""
from __future__ import annotations

import builtins

import numpy as np

from .registry import defjvp, defvjp, lookup
from ._tangent import dense
from ._util import cast_like, note, replace_zero, unbroadcast, variadic, zero

_MAX_ARGS = 8
_NAMES = ("a", "b", "c", "d", "e", "f", "h", "k")

defvjp(builtins.abs, lambda g, ans, x: g * np.sign(x))
defvjp(builtins.float, lambda g, ans, x: cast_like(g, x))
defvjp(
    builtins.pow,
    lambda g, ans, base, exp, mod=None: unbroadcast(g * exp * base ** (exp - 1), base),
    lambda g, ans, base, exp, mod=None: unbroadcast(g * ans * np.log(replace_zero(base, 1.0)), exp),
)


def _sum_dseq(g, ans, iterable, start=0):
    if isinstance(iterable, np.ndarray):
        return np.broadcast_to(g, np.shape(iterable))
    return [unbroadcast(g, item) for item in iterable]


defvjp(builtins.sum, _sum_dseq, lambda g, ans, iterable, start=0: unbroadcast(g, start))


def _extremum_vjp(k):
    """The vjp of argument ``k`` of max/min: g over the number of tied winners."""

    def vjp(g, ans, *args, key=None, default=None):
        rank = key or (lambda v: v)
        if len(args) == 1:  # max(sequence)
            seq = args[0]
            if isinstance(seq, np.ndarray):
                wins = seq == ans
                return g * wins / int(np.sum(wins))
            wins = [rank(v) == rank(ans) for v in seq]
            share = g / builtins.sum(wins)
            return [share if w else zero for w in wins]
        if rank(args[k]) != rank(ans):
            return zero
        return g / builtins.sum(1 for v in args if rank(v) == rank(ans))

    return vjp


defvjp(builtins.max, *variadic(_extremum_vjp, _MAX_ARGS, _NAMES))
defvjp(builtins.min, *variadic(_extremum_vjp, _MAX_ARGS, _NAMES))


def _extremum_jvp(k):
    """The tangent of max/min through argument ``k``: t where it wins, over the number of tied winners."""

    def jvp(t, ans, *args, key=None, default=None):
        rank = key or (lambda v: v)
        if len(args) == 1:  # max(sequence): the winners' tangents, averaged
            seq = args[0]
            if isinstance(seq, np.ndarray):
                wins = seq == ans
                return np.sum(t * wins) / int(np.sum(wins))
            wins = [rank(v) == rank(ans) for v in seq]
            return builtins.sum(ti for ti, w in zip(dense(t, seq), wins) if w) / builtins.sum(wins)
        if rank(args[k]) != rank(ans):
            return zero
        return t / builtins.sum(1 for v in args if rank(v) == rank(ans))

    return jvp


defjvp(builtins.abs, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defjvp(builtins.float, lambda t, ans, x: float(t) if np.ndim(t) == 0 else t, piecewise_linear=True)
defjvp(
    builtins.pow,
    lambda t, ans, base, exp, mod=None: t * exp * base ** (exp - 1),
    lambda t, ans, base, exp, mod=None: t * ans * np.log(replace_zero(base, 1.0)),
)
defjvp(builtins.sum, lambda t, ans, iterable, start=0: builtins.sum(dense(t, iterable)),
       lambda t, ans, iterable, start=0: t, piecewise_linear=True)
defjvp(builtins.max, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
defjvp(builtins.min, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
note("of up to 8 values, or of one sequence; tied winners share g evenly", lookup(builtins.max), lookup(builtins.min))
note("of a list (a list of gradients) or of an array (over its first axis)", lookup(builtins.sum))
note("identity; the gradient keeps the argument's dtype", lookup(builtins.float))
