"""Python builtins: abs, pow, float, sum, and max/min of several values.

``max(a, b, c)`` sends the cotangent to the winning argument; tied winners
share it evenly. ``max(seq)`` and ``sum(seq)`` of one sequence return a list
of per-element gradients (an array when ``seq`` is an array). The variadic
forms accept up to sixteen arguments (an argument past the rule's last
vjp would get no gradient, so the limit is generous).
"""
from __future__ import annotations

import builtins

import numpy as np

from .registry import defjvp, defvjp, lookup
from ._tangent import dense
from ._util import broadcast_like, cast_like, is_array, note, unbroadcast, variadic, zero
from .elementwise import _power_dx, _power_dy, _power_jvp_x, _power_jvp_y

_MAX_ARGS = 16
_NAMES = ("a", "b", "c", "d", "e", "f", "h", "k")  # then arg8, arg9, ...

defvjp(builtins.abs, lambda g, ans, x: g * np.sign(x))
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


def _extremum_vjp(k):
    """The vjp of argument ``k`` of max/min: g over the number of tied winners."""

    def vjp(g, ans, *args, key=None, default=None):
        rank = key or (lambda v: v)
        if len(args) == 1:  # max(sequence)
            seq = args[0]
            if is_array(seq):
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
            if is_array(seq):
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
    lambda t, ans, base, exp, mod=None: _power_jvp_x(t, ans, base, exp),
    lambda t, ans, base, exp, mod=None: _power_jvp_y(t, ans, base, exp),
)
defjvp(builtins.sum, lambda t, ans, iterable, start=0: builtins.sum(dense(t, iterable)),
       lambda t, ans, iterable, start=0: t, piecewise_linear=True)
defjvp(builtins.max, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
defjvp(builtins.min, *variadic(_extremum_jvp, _MAX_ARGS, _NAMES), piecewise_linear=True)
note("of up to 16 values, or of one sequence; tied winners share g evenly", lookup(builtins.max), lookup(builtins.min))
note("of a list (a list of gradients) or of an array (over its first axis)", lookup(builtins.sum))
note("identity; the gradient keeps the argument's dtype", lookup(builtins.float))
note("as np.power: d/dbase exactly 0 for exp == 0, also at base == 0", lookup(builtins.pow))
note("the subgradient at 0 is 0", lookup(builtins.abs))
