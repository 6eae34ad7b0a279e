"""The ``math`` module on Python floats.

Scientific code mixes ``math.exp(t)`` with NumPy; these rules compute with
``math`` too, so a scalar gradient stays a cheap Python float instead of
becoming a 0-d array. Functions of a sequence (fsum, prod, dist) return a
list of per-element gradients, or an array when the sequence was an array.
"""
from __future__ import annotations

import math

import numpy as np

from .registry import defderivative, defjvp, defvjp, lookup, times
from ._tangent import dense
from ._util import is_array, note, variadic

_SQRT_PI = math.sqrt(math.pi)


def _sign(x):
    return float((x > 0) - (x < 0))


def _over(a, b):
    """``a / b`` on floats, IEEE-style as NumPy divides: +-inf (not ZeroDivisionError) when ``b`` is 0.

    A derivative that is infinite at a point where the function is finite
    (sqrt and cbrt at 0, asin and acos at +-1, acosh at 1) is inf there.
    """
    if b:
        return a / b
    if not a:
        return math.nan
    return math.copysign(math.inf, a) * math.copysign(1.0, b)


defderivative(math.sin, lambda ans, x: math.cos(x))
defderivative(math.cos, lambda ans, x: -math.sin(x))
defderivative(math.tan, lambda ans, x: (1.0 + ans * ans))
defderivative(math.asin, lambda ans, x: _over(1.0, math.sqrt(1.0 - x * x)), singular=True)
defderivative(math.acos, lambda ans, x: _over(-1.0, math.sqrt(1.0 - x * x)), singular=True)
defderivative(math.atan, lambda ans, x: 1.0 / (1.0 + x * x))
# At the origin, where the angle is not continuous, the gradient is taken as 0 (as np.arctan2's).
defvjp(math.atan2, lambda g, ans, y, x: g * x / ((x * x + y * y) or 1.0),
       lambda g, ans, y, x: -g * y / ((x * x + y * y) or 1.0))
defderivative(math.sinh, lambda ans, x: math.cosh(x))
defderivative(math.cosh, lambda ans, x: math.sinh(x))
defderivative(math.tanh, lambda ans, x: (1.0 - ans * ans))
defderivative(math.asinh, lambda ans, x: 1.0 / math.sqrt(x * x + 1.0))
defderivative(math.acosh, lambda ans, x: _over(1.0, math.sqrt(x * x - 1.0)), singular=True)
defderivative(math.atanh, lambda ans, x: _over(1.0, 1.0 - x * x), singular=True)
defderivative(math.exp, lambda ans, x: ans)
defderivative(math.expm1, lambda ans, x: (ans + 1.0))
defderivative(math.log2, lambda ans, x: _over(1.0, x * math.log(2.0)), singular=True)
defderivative(math.log10, lambda ans, x: _over(1.0, x * math.log(10.0)), singular=True)
defderivative(math.log1p, lambda ans, x: _over(1.0, 1.0 + x), singular=True)
defderivative(math.sqrt, lambda ans, x: _over(0.5, ans), singular=True)
defvjp(math.fabs, lambda g, ans, x: g * _sign(x))  # the subgradient 0 at 0
defderivative(math.erf, lambda ans, x: (2.0 / _SQRT_PI) * math.exp(-x * x))
defderivative(math.erfc, lambda ans, x: -(2.0 / _SQRT_PI) * math.exp(-x * x))
defvjp(math.degrees, lambda g, ans, x: g * (180.0 / math.pi))
defvjp(math.radians, lambda g, ans, x: g * (math.pi / 180.0))
defvjp(math.copysign, lambda g, ans, x, y: g * _sign(x) * math.copysign(1.0, y), None)
defvjp(math.ldexp, lambda g, ans, x, i: g * 2.0**i, None)
# fmod and remainder: x - n*y with n piecewise constant, recovered as (x - ans) / y.
defvjp(math.fmod, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * (x - ans) / y)
defvjp(math.remainder, lambda g, ans, x, y: g, lambda g, ans, x, y: -g * (x - ans) / y)
if hasattr(math, "exp2"):
    defderivative(math.exp2, lambda ans, x: ans * math.log(2.0))
if hasattr(math, "cbrt"):
    defderivative(math.cbrt, lambda ans, x: _over(1.0, 3.0 * ans * ans), singular=True)

# Tangents: the same derivatives, times t.
defjvp(math.atan2, lambda t, ans, y, x: t * x / ((x * x + y * y) or 1.0),
       lambda t, ans, y, x: -t * y / ((x * x + y * y) or 1.0))
defjvp(math.fabs, lambda t, ans, x: t * _sign(x), piecewise_linear=True)
defjvp(math.degrees, lambda t, ans, x: t * (180.0 / math.pi), piecewise_linear=True)
defjvp(math.radians, lambda t, ans, x: t * (math.pi / 180.0), piecewise_linear=True)
defjvp(math.copysign, lambda t, ans, x, y: t * _sign(x) * math.copysign(1.0, y), None, piecewise_linear=True)
defjvp(math.ldexp, lambda t, ans, x, i: t * 2.0**i, None, piecewise_linear=True)
defjvp(math.fmod, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * (x - ans) / y)
defjvp(math.remainder, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * (x - ans) / y)


def _log_dx(g, ans, x, base=math.e):
    return times(g, _over(1.0, x * math.log(base)))


def _log_dbase(g, ans, x, base=math.e):
    return -g * math.log(x) / (base * math.log(base) ** 2)


defvjp(math.log, _log_dx, _log_dbase)
defjvp(math.log, _log_dx, _log_dbase)  # scalar: each vjp is its own jvp


def _pow_dy(g, ans, x, y):
    """d x**y / dy = x**y log x, taken as 0 where x <= 0 (y must then be an integer)."""
    return g * ans * math.log(x) if x > 0 else 0.0 * g


def _pow_dx(g, ans, x, y):
    """y * x**(y - 1): 0 for y == 0 (x**0 is the constant 1), also at x == 0; inf at x == 0 for 0 < y < 1."""
    if y == 0:
        return 0.0 * g
    if x == 0 and y < 1:
        return times(g, math.inf)
    return g * y * math.pow(x, y - 1.0)


defvjp(math.pow, _pow_dx, _pow_dy)
defjvp(math.pow, _pow_dx, _pow_dy)  # scalar: each vjp is its own jvp


def _hypot_vjp(k):
    def vjp(g, ans, *coords):
        return g * coords[k] / ans if ans else 0.0 * g

    return vjp


_HYPOT_COORDS = 16
defvjp(math.hypot, *variadic(_hypot_vjp, _HYPOT_COORDS, ("x", "y", "z", "w")))
defjvp(math.hypot, *variadic(_hypot_vjp, _HYPOT_COORDS, ("x", "y", "z", "w")))  # scalar: each vjp is its own jvp


def _like_sequence(values, seq):
    """Per-element gradients as the sequence's own kind: an array for an array, else a list."""
    if is_array(seq):  # a Dask array's elements were computed by the math function already
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
defjvp(math.fsum, lambda t, ans, seq: math.fsum(dense(t, seq)), piecewise_linear=True)
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

note("up to 16 coordinates; the subgradient 0 at the origin", lookup(math.hypot))
note("d/dbase for the optional base too", lookup(math.log))
note("inf at 0, as np.sqrt (0 where the cotangent is 0)", *(lookup(f) for f in (math.sqrt, getattr(math, "cbrt", None))
                                                            if lookup(f)))
note("infinite at the ends of the domain, as NumPy's (0 where the cotangent is 0)",
     *(lookup(f) for f in (math.asin, math.acos, math.acosh)))
note("0 at the origin, where the angle is not continuous", lookup(math.atan2))
note("d/dx exactly 0 for y == 0 (also at x == 0), inf at x == 0 for 0 < y < 1; d/dy 0 where x <= 0",
     lookup(math.pow))
note("returns a list of per-element gradients (an array for an array)",
     *(lookup(f) for f in (math.fsum, math.prod, math.dist, getattr(math, "sumprod", None)) if lookup(f)))
