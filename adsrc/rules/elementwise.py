"""Elementwise NumPy operations: arithmetic operators and ufuncs.

Operators in user code (``+ - * / // % ** unary -``) map to these ufuncs, so
these rules serve both spellings. Broadcasting is undone with ``unbroadcast``.
Ties in maximum/minimum (and the fmax/fmin pair) send half the cotangent to each
side, so the gradient is the average of the two one-sided ones.

``multiply`` declares a batched ``fuse`` form: in ``acc = acc + s_i * x`` every
contribution to ``x`` shares one cotangent, so k of them are ``g * sum(s_i)``;
and when every other factor is a scalar, k contributions are one ``tensordot``.
"""
from __future__ import annotations

import functools
import math

import numpy as np

from .registry import defderivative, defjvp, deflinear, defmethod, defvjp, lookup
from ._util import cast_like, no_value, note, replace_zero, unbroadcast, zero

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_DEG = 180.0 / math.pi
_RAD = math.pi / 180.0

# Arithmetic.
defvjp(np.add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y))
defvjp(np.subtract, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(-g, y))
defjvp(np.add, lambda t, ans, x, y: t, lambda t, ans, x, y: t, piecewise_linear=True)
defjvp(np.subtract, lambda t, ans, x, y: t, lambda t, ans, x, y: -t, piecewise_linear=True)


def _weak_dtypes(values):
    """The dtypes of non-Python scalars among ``values`` (Python scalars do not promote)."""
    return {np.result_type(v) for v in values if not isinstance(v, (int, float))}


def _fuse_scaled(side: int):
    """Batch k contributions ``g_i * other_i`` to the same factor of a product."""

    def fuse(calls):
        if any(kwargs for _, kwargs in calls):
            return None
        gs = [args[0] for args, _ in calls]
        mine = [args[2 + side] for args, _ in calls]
        other = [args[3 - side] for args, _ in calls]
        shape = np.shape(mine[0])
        if any(np.shape(m) != shape for m in mine):
            return None
        if all(g is gs[0] for g in gs) and len({np.shape(o) for o in other}) == 1:
            return unbroadcast(gs[0] * functools.reduce(np.add, other), mine[0])
        if all(np.ndim(o) == 0 for o in other) and len({np.shape(g) for g in gs}) == 1:
            stacked = np.stack(gs)
            dtype = np.result_type(stacked.dtype, *_weak_dtypes(other))
            scales = np.array([complex(o) if np.iscomplexobj(o) else float(o) for o in other], dtype=dtype)
            return unbroadcast(np.tensordot(scales, stacked.astype(dtype, copy=False), axes=1), mine[0])
        return None

    return fuse


deflinear(
    np.multiply,
    lambda g, ans, x, y: unbroadcast(g * y, x),
    lambda g, ans, x, y: unbroadcast(g * x, y),
    fuse={0: _fuse_scaled(0), 1: _fuse_scaled(1)},
)
defvjp(np.divide, lambda g, ans, x, y: unbroadcast(g / y, x), lambda g, ans, x, y: unbroadcast(-g * ans / y, y))
defjvp(np.divide, lambda t, ans, x, y: t / y, lambda t, ans, x, y: -t * ans / y)
defvjp(
    np.power,
    lambda g, ans, x, y: unbroadcast(g * y * np.power(x, y - 1), x),
    lambda g, ans, x, y: unbroadcast(g * ans * np.log(replace_zero(x, 1.0)), y),
)
defjvp(np.power, lambda t, ans, x, y: t * y * np.power(x, y - 1),
       lambda t, ans, x, y: t * ans * np.log(replace_zero(x, 1.0)))
defvjp(
    np.float_power,
    lambda g, ans, x, y: cast_like(unbroadcast(g * y * np.float_power(x, y - 1), x), x),
    lambda g, ans, x, y: cast_like(unbroadcast(g * ans * np.log(replace_zero(x, 1.0)), y), y),
)
defjvp(np.float_power, lambda t, ans, x, y: t * y * np.float_power(x, y - 1),
       lambda t, ans, x, y: t * ans * np.log(replace_zero(x, 1.0)))
# x % y == x - floor(x / y) * y; the quotient is piecewise constant.
defvjp(
    np.remainder,
    lambda g, ans, x, y: unbroadcast(g, x),
    lambda g, ans, x, y: unbroadcast(-g * np.floor_divide(x, y), y),
)
defjvp(np.remainder, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * np.floor_divide(x, y))
defvjp(np.fmod, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(-g * np.trunc(x / y), y))
defjvp(np.fmod, lambda t, ans, x, y: t, lambda t, ans, x, y: -t * np.trunc(x / y))
deflinear(np.negative, lambda g, ans, x: -g)
deflinear(np.positive, lambda g, ans, x: g)
defvjp(np.absolute, lambda g, ans, x: g * np.sign(x))
defjvp(np.absolute, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defvjp(np.fabs, lambda g, ans, x: g * np.sign(x))
defjvp(np.fabs, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defvjp(np.copysign, lambda g, ans, x, y: unbroadcast(np.where(np.signbit(y), -g, g) * np.sign(x), x), None)
defjvp(np.copysign, lambda t, ans, x, y: np.where(np.signbit(y), -t, t) * np.sign(x), None, piecewise_linear=True)
deflinear(np.ldexp, lambda g, ans, x, n: unbroadcast(np.ldexp(g, n), x), None)

# Roots and powers.
defderivative(np.sqrt, lambda ans, x: 0.5 / ans)
defderivative(np.cbrt, lambda ans, x: 1.0 / (3.0 * ans * ans))
defderivative(np.square, lambda ans, x: 2.0 * x)
defderivative(np.reciprocal, lambda ans, x: -ans * ans)

# Exponentials and logarithms.
defderivative(np.exp, lambda ans, x: ans)
defderivative(np.exp2, lambda ans, x: ans * _LN2)
defderivative(np.expm1, lambda ans, x: (ans + 1.0))
defderivative(np.log, lambda ans, x: 1.0 / x)
defderivative(np.log2, lambda ans, x: 1.0 / (x * _LN2))
defderivative(np.log10, lambda ans, x: 1.0 / (x * _LN10))
defderivative(np.log1p, lambda ans, x: 1.0 / (x + 1.0))
defvjp(
    np.logaddexp,
    lambda g, ans, x, y: unbroadcast(g * np.exp(x - ans), x),
    lambda g, ans, x, y: unbroadcast(g * np.exp(y - ans), y),
)
defvjp(
    np.logaddexp2,
    lambda g, ans, x, y: unbroadcast(g * np.exp2(x - ans), x),
    lambda g, ans, x, y: unbroadcast(g * np.exp2(y - ans), y),
)
defjvp(np.logaddexp, lambda t, ans, x, y: t * np.exp(x - ans), lambda t, ans, x, y: t * np.exp(y - ans))
defjvp(np.logaddexp2, lambda t, ans, x, y: t * np.exp2(x - ans), lambda t, ans, x, y: t * np.exp2(y - ans))

# Trigonometric and hyperbolic.
defderivative(np.sin, lambda ans, x: np.cos(x))
defderivative(np.cos, lambda ans, x: -np.sin(x))
defderivative(np.tan, lambda ans, x: (1.0 + ans * ans))
defderivative(np.arcsin, lambda ans, x: 1.0 / np.sqrt(1.0 - x * x))
defderivative(np.arccos, lambda ans, x: -1.0 / np.sqrt(1.0 - x * x))
defderivative(np.arctan, lambda ans, x: 1.0 / (1.0 + x * x))
# arctan2(y, x) is the angle of the point (x, y).
defvjp(
    np.arctan2,
    lambda g, ans, y, x: unbroadcast(g * x / (x * x + y * y), y),
    lambda g, ans, y, x: unbroadcast(-g * y / (x * x + y * y), x),
)
defjvp(np.arctan2, lambda t, ans, y, x: t * x / (x * x + y * y), lambda t, ans, y, x: -t * y / (x * x + y * y))
defderivative(np.sinh, lambda ans, x: np.cosh(x))
defderivative(np.cosh, lambda ans, x: np.sinh(x))
defderivative(np.tanh, lambda ans, x: (1.0 - ans * ans))
defderivative(np.arcsinh, lambda ans, x: 1.0 / np.sqrt(x * x + 1.0))
defderivative(np.arccosh, lambda ans, x: 1.0 / np.sqrt(x * x - 1.0))
defderivative(np.arctanh, lambda ans, x: 1.0 / (1.0 - x * x))
defvjp(np.hypot, lambda g, ans, x, y: unbroadcast(g * x / ans, x), lambda g, ans, x, y: unbroadcast(g * y / ans, y))
defjvp(np.hypot, lambda t, ans, x, y: t * x / ans, lambda t, ans, x, y: t * y / ans)
deflinear(np.deg2rad, lambda g, ans, x: g * _RAD)
deflinear(np.radians, lambda g, ans, x: g * _RAD)
deflinear(np.rad2deg, lambda g, ans, x: g * _DEG)
deflinear(np.degrees, lambda g, ans, x: g * _DEG)


def _sinc_dx(g, ans, x):
    """d sinc/dx = (cos(pi x) - sinc(x)) / x; near 0, its series -pi^2 x / 3 (1 - pi^2 x^2 / 10),
    which is also right to differentiate again (second order)."""
    near = np.abs(x) < 1e-3
    safe = np.where(near, 1.0, x)
    series = -(math.pi**2 / 3.0) * x * (1.0 - (math.pi**2 / 10.0) * x * x)
    return g * np.where(near, series, (np.cos(math.pi * x) - ans) / safe)


defvjp(np.sinc, _sinc_dx)
defjvp(np.sinc, _sinc_dx)  # linear in its first argument, so the vjp is the jvp too


# Selection: the cotangent goes to the winner; ties split it evenly.
def _winner(g, x, y, x_wins):
    return np.where(x == y, g * 0.5, g * x_wins)


defvjp(
    np.maximum,
    lambda g, ans, x, y: unbroadcast(_winner(g, x, y, x > y), x),
    lambda g, ans, x, y: unbroadcast(_winner(g, y, x, y > x), y),
)
defvjp(
    np.minimum,
    lambda g, ans, x, y: unbroadcast(_winner(g, x, y, x < y), x),
    lambda g, ans, x, y: unbroadcast(_winner(g, y, x, y < x), y),
)
# fmax/fmin ignore a NaN operand, so the other one wins.
defvjp(
    np.fmax,
    lambda g, ans, x, y: unbroadcast(_winner(g, x, y, (x > y) | np.isnan(y)), x),
    lambda g, ans, x, y: unbroadcast(_winner(g, y, x, (y > x) | np.isnan(x)), y),
)
defvjp(
    np.fmin,
    lambda g, ans, x, y: unbroadcast(_winner(g, x, y, (x < y) | np.isnan(y)), x),
    lambda g, ans, x, y: unbroadcast(_winner(g, y, x, (y < x) | np.isnan(x)), y),
)
defjvp(np.maximum, lambda t, ans, x, y: _winner(t, x, y, x > y), lambda t, ans, x, y: _winner(t, y, x, y > x),
       piecewise_linear=True)
defjvp(np.minimum, lambda t, ans, x, y: _winner(t, x, y, x < y), lambda t, ans, x, y: _winner(t, y, x, y < x),
       piecewise_linear=True)
defjvp(np.fmax, lambda t, ans, x, y: _winner(t, x, y, (x > y) | np.isnan(y)),
       lambda t, ans, x, y: _winner(t, y, x, (y > x) | np.isnan(x)), piecewise_linear=True)
defjvp(np.fmin, lambda t, ans, x, y: _winner(t, x, y, (x < y) | np.isnan(y)),
       lambda t, ans, x, y: _winner(t, y, x, (y < x) | np.isnan(x)), piecewise_linear=True)


def _bounds(a_min, a_max, kwargs):
    """clip's bounds from either spelling: ``clip(a, lo, hi)`` or ``clip(a, min=, max=)``."""
    lo = kwargs.get("min") if no_value(a_min) else a_min
    hi = kwargs.get("max") if no_value(a_max) else a_max
    return (None if no_value(lo) else lo), (None if no_value(hi) else hi)


def _clip_parts(a, a_min, a_max, kwargs):
    """Which of a, lo, hi each output element of ``minimum(maximum(a, lo), hi)`` came from."""
    lo, hi = _bounds(a_min, a_max, kwargs)
    from_a = np.ones(np.shape(a), dtype=bool) if lo is None else a >= lo
    clipped = a if lo is None else np.maximum(a, lo)
    from_hi = np.zeros(np.shape(clipped), dtype=bool) if hi is None else clipped > hi
    return lo, hi, from_a & ~from_hi, ~from_a & ~from_hi, from_hi


def _clip_da(g, ans, a, a_min=None, a_max=None, out=None, **kwargs):
    """Inside [lo, hi] the cotangent passes through; outside, it goes to the bound."""
    return unbroadcast(g * _clip_parts(a, a_min, a_max, kwargs)[2], a)


def _clip_dlo(g, ans, a, a_min=None, a_max=None, out=None, **kwargs):
    lo, _, _, to_lo, _ = _clip_parts(a, a_min, a_max, kwargs)
    return zero if lo is None else unbroadcast(g * to_lo, lo)


def _clip_dhi(g, ans, a, a_min=None, a_max=None, out=None, **kwargs):
    _, hi, _, _, to_hi = _clip_parts(a, a_min, a_max, kwargs)
    return zero if hi is None else unbroadcast(g * to_hi, hi)


defvjp(np.clip, _clip_da, _clip_dlo, _clip_dhi)
defvjp(
    np.where,
    None,
    lambda g, ans, condition, x, y: unbroadcast(np.where(condition, g, 0), x),
    lambda g, ans, condition, x, y: unbroadcast(np.where(condition, 0, g), y),
)


def _clip_jvp(part):
    """The tangent of a, lo or hi (``part`` 2, 3 or 4 of _clip_parts) where that one is the output."""

    def jvp(t, ans, a, a_min=None, a_max=None, out=None, **kwargs):
        return t * _clip_parts(a, a_min, a_max, kwargs)[part]

    return jvp


defjvp(np.clip, _clip_jvp(2), _clip_jvp(3), _clip_jvp(4), piecewise_linear=True)
defjvp(np.where, None, lambda t, ans, c, x, y: np.where(c, t, 0), lambda t, ans, c, x, y: np.where(c, 0, t), piecewise_linear=True)

# Real-valued identities and cleanups.
deflinear(np.conjugate, lambda g, ans, x: np.conjugate(g))
deflinear(np.real, lambda g, ans, x: np.real(g))
defvjp(np.nan_to_num, lambda g, ans, x, *args, **kwargs: g * np.isfinite(x))
defjvp(np.nan_to_num, lambda t, ans, x, *args, **kwargs: t * np.isfinite(x), piecewise_linear=True)

defmethod("clip", np.clip)
defmethod("conjugate", np.conjugate)
defmethod("conj", np.conjugate)

note("d/dy is x**y log x; NaN where x < 0", lookup(np.power), lookup(np.float_power))
note("the quotient is piecewise constant: d/dy = -quotient", lookup(np.remainder), lookup(np.fmod))
note("ties send half of g to each side", *(lookup(f) for f in (np.maximum, np.minimum, np.fmax, np.fmin)))
note("bounds may be arrays, None, or the min=/max= keywords; each gets the gradient where it is active",
     lookup(np.clip))
note("the subgradient at 0 is 0", lookup(np.absolute), lookup(np.fabs))
note("no gradient for the condition", lookup(np.where))
