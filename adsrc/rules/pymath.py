"""The ``math`` module on Python floats.

Scientific code mixes ``math.exp(t)`` with NumPy; these rules compute with
``math`` too, so a scalar gradient stays a cheap Python float instead of
becoming a 0-d array. Functions of a sequence (fsum, prod, dist) return a
list of per-element gradients, or an array when the sequence was an array.
"""
from __future__ import annotations

import math

import numpy as np

from ..registry import defjvp, defvjp, lookup
from ._tangent import dense
from ._util import note, variadic

_SQRT_PI = math.sqrt(math.pi)


def _sign(x):
    return float((x > 0) - (x < 0))


defvjp(math.sin, lambda g, ans, x: g * math.cos(x))
defvjp(math.cos, lambda g, ans, x: -g * math.sin(x))
defvjp(math.tan, lambda g, ans, x: g * (1.0 + ans * ans))
defvjp(math.asin, lambda g, ans, x: g / math.sqrt(1.0 - x * x))
defvjp(math.acos, lambda g, ans, x: -g / math.sqrt(1.0 - x * x))
defvjp(math.atan, lambda g, ans, x: g / (1.0 + x * x))
defvjp(math.atan2, lambda g, ans, y, x: g * x / (x * x + y * y), lambda g, ans, y, x: -g * y / (x * x + y * y))
defvjp(math.sinh, lambda g, ans, x: g * math.cosh(x))
defvjp(math.cosh, lambda g, ans, x: g * math.sinh(x))
defvjp(math.tanh, lambda g, ans, x: g * (1.0 - ans * ans))
defvjp(math.asinh, lambda g, ans, x: g / math.sqrt(x * x + 1.0))
defvjp(math.acosh, lambda g, ans, x: g / math.sqrt(x * x - 1.0))
defvjp(math.atanh, lambda g, ans, x: g / (1.0 - x * x))
defvjp(math.exp, lambda g, ans, x: g * ans)
defvjp(math.expm1, lambda g, ans, x: g * (ans + 1.0))
defvjp(math.log2, lambda g, ans, x: g / (x * math.log(2.0)))
defvjp(math.log10, lambda g, ans, x: g / (x * math.log(10.0)))
defvjp(math.log1p, lambda g, ans, x: g / (1.0 + x))
defvjp(math.sqrt, lambda g, ans, x: g * 0.5 / ans)
defvjp(math.fabs, lambda g, ans, x: g * _sign(x))
defvjp(math.erf, lambda g, ans, x: g * (2.0 / _SQRT_PI) * math.exp(-x * x))
defvjp(math.erfc, lambda g, ans, x: -g * (2.0 / _SQRT_PI) * math.exp(-x * x))
defvjp(math.degrees, lambda g, ans, x: g * (180.0 / math.pi))
defvjp(math.radians, lambda g, ans, x: g * (math.pi / 180.0))
defvjp(math.copysign, lambda g, ans, x, y: g * _sign(x) * math.copysign(1.0, y), None)
defvjp(math.ldexp, lambda g, ans, x, i: g * 2.0**i, None)
# fmod and remainder: x - n*y with n piecewise constant, recovered as (x - ans) / y.
defvjp(math.fmod, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * (x - ans) / y)
defvjp(math.remainder, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * (x - ans) / y)
if hasattr(math, "exp2"):
    defvjp(math.exp2, lambda g, ans, x: g * ans * math.log(2.0))
if hasattr(math, "cbrt"):
    defvjp(math.cbrt, lambda g, ans, x: g / (3.0 * ans * ans))

# Tangents: the same derivatives, times t.
defjvp(math.sin, lambda t, ans, x: t * math.cos(x))
defjvp(math.cos, lambda t, ans, x: -t * math.sin(x))
defjvp(math.tan, lambda t, ans, x: t * (1.0 + ans * ans))
defjvp(math.asin, lambda t, ans, x: t / math.sqrt(1.0 - x * x))
defjvp(math.acos, lambda t, ans, x: -t / math.sqrt(1.0 - x * x))
defjvp(math.atan, lambda t, ans, x: t / (1.0 + x * x))
defjvp(math.atan2, lambda t, ans, y, x: t * x / (x * x + y * y), lambda t, ans, y, x: -t * y / (x * x + y * y))
defjvp(math.sinh, lambda t, ans, x: t * math.cosh(x))
defjvp(math.cosh, lambda t, ans, x: t * math.sinh(x))
defjvp(math.tanh, lambda t, ans, x: t * (1.0 - ans * ans))
defjvp(math.asinh, lambda t, ans, x: t / math.sqrt(x * x + 1.0))
defjvp(math.acosh, lambda t, ans, x: t / math.sqrt(x * x - 1.0))
defjvp(math.atanh, lambda t, ans, x: t / (1.0 - x * x))
defjvp(math.exp, lambda t, ans, x: t * ans)
defjvp(math.expm1, lambda t, ans, x: t * (ans + 1.0))
defjvp(math.log2, lambda t, ans, x: t / (x * math.log(2.0)))
defjvp(math.log10, lambda t, ans, x: t / (x * math.log(10.0)))
defjvp(math.log1p, lambda t, ans, x: t / (1.0 + x))
defjvp(math.sqrt, lambda t, ans, x: t * 0.5 / ans)
defjvp(math.fabs, lambda t, ans, x: t * _sign(x), linear=True)
defjvp(math.erf, lambda t, ans, x: t * (2.0 / _SQRT_PI) * math.exp(-x * x))
defjvp(math.erfc, lambda t, ans, x: -t * (2.0 / _SQRT_PI) * math.exp(-x * x))
defjvp(math.degrees, lambda t, ans, x: t * (180.0 / math.pi), linear=True)
defjvp(math.radians, lambda t, ans, x: t * (math.pi / 180.0), linear=True)
defjvp(math.copysign, lambda t, ans, x, y: t * _sign(x) * math.copysign(1.0, y), None, linear=True)
defjvp(math.ldexp, lambda t, ans, x, i: t * 2.0**i, None, linear=True)
defjvp(math.fmod, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * (x - ans) / y)
defjvp(math.remainder, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * (x - ans) / y)
if hasattr(math, "exp2"):
    defjvp(math.exp2, lambda t, ans, x: t * ans * math.log(2.0))
if hasattr(math, "cbrt"):
    defjvp(math.cbrt, lambda t, ans, x: t / (3.0 * ans * ans))


def _log_dx(g, ans, x, base=math.e):
    return g / (x * math.log(base))


def _log_dbase(g, ans, x, base=math.e):
    return -g * math.log(x) / (base * math.log(base) ** 2)


defvjp(math.log, _log_dx, _log_dbase)
defjvp(math.log, _log_dx, _log_dbase)  # scalar: each vjp is its own jvp


def _pow_dy(g, ans, x, y):
    """d x**y / dy = x**y log x, taken as 0 where x <= 0 (y must then be an integer)."""
    return g * ans * math.log(x) if x > 0 else 0.0 * g


defvjp(math.pow, lambda g, ans, x, y: g * y * math.pow(x, y - 1.0) if y != 0 else 0.0 * g, _pow_dy)
defjvp(math.pow, lambda t, ans, x, y: t * y * math.pow(x, y - 1.0) if y != 0 else 0.0 * t, _pow_dy)


def _hypot_vjp(k):
    def vjp(g, ans, *coords):
        return g * coords[k] / ans if ans else 0.0 * g

    return vjp


defvjp(math.hypot, *variadic(_hypot_vjp, 4, ("x", "y", "z", "w")))
defjvp(math.hypot, *variadic(_hypot_vjp, 4, ("x", "y", "z", "w")))  # scalar: each vjp is its own jvp


def _like_sequence(values, seq):
    """Per-element gradients as the sequence's own kind: an array for an array, else a list."""
    if isinstance(seq, np.ndarray):
        return np.reshape(np.asarray(values, dtype=np.result_type(seq, 1.0)), np.shape(seq))
    return list(values)


def _products_of_others(values):
    """prod of all values but the i-th, for every i, without dividing (zeros are fine)."""
    left, right = [1.0] * len(values), [1.0] * len(values)
    for i in range(1, len(values)):
        left[i] = left[i - 1] * values[i - 1]
        right[-1 - i] = right[-i] * values[-i]
    return [a * b for a, b in zip(left, right)]


def _prod_dx(g, ans, iterable, *, start=1):
    values = list(iterable)
    return _like_sequence([g * start * p for p in _products_of_others(values)], iterable)


def _dist_dp(g, ans, p, q):
    return _like_sequence([g * (a - b) / ans if ans else 0.0 * g for a, b in zip(p, q)], p)


def _dist_dq(g, ans, p, q):
    return _like_sequence([g * (b - a) / ans if ans else 0.0 * g for a, b in zip(p, q)], q)


defvjp(math.fsum, lambda g, ans, seq: _like_sequence([g for _ in seq], seq))
defvjp(math.prod, _prod_dx)
defvjp(math.dist, _dist_dp, _dist_dq)
defjvp(math.fsum, lambda t, ans, seq: math.fsum(dense(t, seq)), linear=True)
defjvp(math.prod, lambda t, ans, iterable, *, start=1: start * math.fsum(
    a * b for a, b in zip(dense(t, iterable), _products_of_others(list(iterable)))))
defjvp(math.dist, lambda t, ans, p, q: math.fsum(a * b for a, b in zip(dense(t, p), _dist_dp(1.0, ans, p, q))),
       lambda t, ans, p, q: math.fsum(a * b for a, b in zip(dense(t, q), _dist_dq(1.0, ans, p, q))))
if hasattr(math, "sumprod"):
    defvjp(
        math.sumprod,
        lambda g, ans, p, q: _like_sequence([g * b for b in q], p),
        lambda g, ans, p, q: _like_sequence([g * a for a in p], q),
    )
    defjvp(math.sumprod, lambda t, ans, p, q: math.sumprod(dense(t, p), q),
           lambda t, ans, p, q: math.sumprod(p, dense(t, q)))

note("up to 4 coordinates", lookup(math.hypot))
note("d/dbase for the optional base too", lookup(math.log))
note("returns a list of per-element gradients (an array for an array)",
     *(lookup(f) for f in (math.fsum, math.prod, math.dist, getattr(math, "sumprod", None)) if lookup(f)))
