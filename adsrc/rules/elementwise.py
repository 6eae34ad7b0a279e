"""Elementwise NumPy operations: arithmetic operators and ufuncs.

Operators in user code (``+ - * / // % ** unary -``) map to these ufuncs, so
these rules serve both spellings. Broadcasting is undone with ``unbroadcast``.
Ties in maximum/minimum (and the fmax/fmin pair) send half the cotangent to each
side, so the gradient is the average of the two one-sided ones.

At the singular points of their formulas (docs/rules.md, "Singular points"):
``x**0`` has derivative exactly 0, also at x == 0 (``y * x**(y-1)`` is taken with
the exponent 0 where y == 0); abs is 0 at 0; sqrt, cbrt, log and the inverse
trigonometric functions are infinite where their slope is. Rules whose
derivative can be infinite or undefined multiply through ``registry.times``: a
zero cotangent or tangent contributes exactly 0 there, so a branch that
``np.where`` discarded adds nothing (not NaN) to the gradient.

``multiply`` declares a batched ``fuse`` form: in ``acc = acc + s_i * x`` every
contribution to ``x`` shares one cotangent, so k of them are ``g * sum(s_i)``;
and when every other factor is a scalar, k contributions are one ``tensordot``.
"""
from __future__ import annotations

import functools
import math
from typing import Callable

import numpy as np

from .registry import defderivative, defjvp, deflinear, defmethod, defvjp, lookup, times, zero_where_zero
from ._util import as_array, cast_like, no_value, note, replace_zero, shape_of, unbroadcast, zero
from ._sequences import SEQUENCES, concatenated_part, concatenated_tangent, repeated_part, repeated_tangent
from .templates import NONE, broadcasts_to, defalternative, deftemplate, float64_arrays, float_scalar, same_shape

_LN2 = math.log(2.0)
_LN10 = math.log(10.0)
_DEG = 180.0 / math.pi
_RAD = math.pi / 180.0

# Arithmetic.
# ``+`` of lists or tuples concatenates (rules/_sequences.py): known from its result.
def _add_dx(g, ans, x, y):
    return concatenated_part(g, x, 0) if isinstance(ans, SEQUENCES) else unbroadcast(g, x)


def _add_dy(g, ans, x, y):
    return concatenated_part(g, y, len(ans) - len(y)) if isinstance(ans, SEQUENCES) else unbroadcast(g, y)


def _add_tx(t, ans, x, y):
    return concatenated_tangent(t, x, 0, len(y)) if isinstance(ans, SEQUENCES) else t


def _add_ty(t, ans, x, y):
    return concatenated_tangent(t, y, len(x), 0) if isinstance(ans, SEQUENCES) else t


defvjp(np.add, _add_dx, _add_dy)
defvjp(np.subtract, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(-g, y))
defjvp(np.add, _add_tx, _add_ty, piecewise_linear=True)
note("of lists or tuples (xs + ys concatenates): each operand gets its items' cotangents", lookup(np.add))
defjvp(np.subtract, lambda t, ans, x, y: t, lambda t, ans, x, y: -t, piecewise_linear=True)
# Specialized code inlines these where the kinds make unbroadcast a no-op (templates.py).
deftemplate(lookup(np.add), 0, "g", same_shape("g", "x"))
deftemplate(lookup(np.add), 1, "g", same_shape("g", "y"))
deftemplate(lookup(np.subtract), 0, "g", same_shape("g", "x"))
deftemplate(lookup(np.subtract), 1, "-g", same_shape("g", "y"))


def _float_with_array(name: str, *arrays: str, vector: bool):
    """``name`` is a float and the cotangent (and ``arrays``) float64 arrays of one shape, of one dimension
    (``vector``) or more: the float's contribution is summed over every axis, by unbroadcast as by np.sum
    (which for a vector is np.add.reduce, without np.sum's Python wrapper)."""
    def check(kinds):
        return float_scalar(name)(kinds) and float64_arrays("g", *arrays)(kinds) \
            and (len(kinds["g"].shape) == 1) == vector
    return check


def _sums(rule, position: int, name: str, summed: str, *arrays: str) -> None:
    defalternative(lookup(rule), position, f"np.add.reduce({summed})", _float_with_array(name, *arrays, vector=True))
    defalternative(lookup(rule), position, f"np.sum({summed})", _float_with_array(name, *arrays, vector=False))


# A float added to an array (y + w).
_sums(np.add, 0, "x", "g")
_sums(np.add, 1, "y", "g")
_sums(np.subtract, 0, "x", "g")
_sums(np.subtract, 1, "y", "-g")


def _weak_dtypes(values):
    """The dtypes of non-Python scalars among ``values`` (Python scalars do not promote)."""
    return {np.result_type(v) for v in values if not isinstance(v, (int, float))}


def _fuse_scaled(side: int):
    """Batch k contributions ``g_i * other_i`` to the same factor of a product."""

    def fuse(calls):
        if any(kwargs for _, kwargs in calls):
            return None
        if any(isinstance(args[1], SEQUENCES) for args, _ in calls):
            return None  # a repeated list (rules/_sequences.py)
        gs = [args[0] for args, _ in calls]
        mine = [args[2 + side] for args, _ in calls]
        other = [args[3 - side] for args, _ in calls]
        shape = shape_of(mine[0])
        if any(shape_of(m) != shape for m in mine):
            return None
        other_shapes = {shape_of(o) for o in other}
        if all(g is gs[0] for g in gs) and len(other_shapes) == 1:
            return unbroadcast(gs[0] * functools.reduce(np.add, other), mine[0])
        g_shapes = {shape_of(g) for g in gs}
        if other_shapes == {()} and len(g_shapes) == 1:
            stacked = np.stack(gs)
            dtype = np.result_type(stacked.dtype, *_weak_dtypes(other))
            scales = np.array([complex(o) if np.iscomplexobj(o) else float(o) for o in other], dtype=dtype)
            return unbroadcast(np.tensordot(scales, stacked.astype(dtype, copy=False), axes=1), mine[0])
        if len(g_shapes) == 1 and len(other_shapes) == 1 and () not in g_shapes | other_shapes:
            # k products g_i * o_i of arrays of one shape each, reduced to the factor: stacked, multiplied
            # once and summed over the steps (for a scalar factor, one dot product of the stacks)
            left, right = np.stack(gs), np.stack(other)
            if not shape and left.shape == right.shape:
                return unbroadcast(np.dot(left.ravel(), right.ravel()), mine[0])
            rank = max(left.ndim, right.ndim)  # each step's factors broadcast against each other, not the steps
            left, right = (np.reshape(a, a.shape[:1] + (1,) * (rank - a.ndim) + a.shape[1:]) for a in (left, right))
            return unbroadcast(np.multiply(left, right).sum(axis=0), mine[0])
        return None

    return fuse


# ``*`` of a list or tuple and a count repeats it (rules/_sequences.py): known from its result.
def _multiply_dx(g, ans, x, y):
    if isinstance(ans, SEQUENCES):
        return repeated_part(g, x) if isinstance(x, SEQUENCES) else zero
    return unbroadcast(g * y, x)


def _multiply_dy(g, ans, x, y):
    if isinstance(ans, SEQUENCES):
        return repeated_part(g, y) if isinstance(y, SEQUENCES) else zero
    return unbroadcast(g * x, y)


deflinear(np.multiply, _multiply_dx, _multiply_dy, fuse={0: _fuse_scaled(0), 1: _fuse_scaled(1)})
_multiply_tx, _multiply_ty = lookup(np.multiply).jvps


def _repeated_tx(t, ans, x, y):
    if isinstance(ans, SEQUENCES):
        return repeated_tangent(t, x, y) if isinstance(x, SEQUENCES) else zero
    return _multiply_tx.__wrapped__(t, ans, x, y)


def _repeated_ty(t, ans, x, y):
    if isinstance(ans, SEQUENCES):
        return repeated_tangent(t, y, x) if isinstance(y, SEQUENCES) else zero
    return _multiply_ty.__wrapped__(t, ans, x, y)


defjvp(np.multiply, _repeated_tx, _repeated_ty)
note("of a list or tuple and a count (xs * n repeats it): each item gets the sum over its copies",
     lookup(np.multiply))
deftemplate(lookup(np.multiply), 0, "g * y", broadcasts_to("x", "g", "y"))
deftemplate(lookup(np.multiply), 1, "g * x", broadcasts_to("y", "g", "x"))
# A float factor of an array (y * w).
_sums(np.multiply, 0, "x", "g * y", "y")
_sums(np.multiply, 1, "y", "g * x", "x")
# A zero cotangent (or tangent) gives exactly zero even where y is 0 (registry.times):
# np.where(y != 0, x / y, 0.0) has a finite gradient at y == 0.
defvjp(
    np.divide,
    lambda g, ans, x, y: unbroadcast(zero_where_zero(np.divide(g, y), g), x),
    lambda g, ans, x, y: unbroadcast(times(g, np.divide(-ans, y)), y),
)


def _numpy_quotient(*names: str) -> Callable[[dict], bool]:
    """One of these is a NumPy float or array: ``a / b`` is then ``np.divide(a, b)`` (a Python float's
    ``/`` would raise at 0)."""
    return lambda k: any(k[n].type is np.float64 or k[n].type is np.ndarray for n in names)


deftemplate(lookup(np.divide), 0, "singular.zero_where_zero(g / y, g)",
            lambda k: _numpy_quotient("g", "y")(k) and broadcasts_to("x", "g", "y")(k))
defalternative(lookup(np.divide), 0, "singular.zero_where_zero(np.divide(g, y), g)", broadcasts_to("x", "g", "y"))
deftemplate(lookup(np.divide), 1, "singular.times(g, -ans / y)",
            lambda k: k["ans"] is not NONE and _numpy_quotient("ans", "y")(k) and broadcasts_to("y", "g", "ans", "y")(k))
defalternative(lookup(np.divide), 1, "singular.times(g, np.divide(-ans, y))",
               lambda k: k["ans"] is not NONE and broadcasts_to("y", "g", "ans", "y")(k))
defjvp(np.divide, lambda t, ans, x, y: zero_where_zero(np.divide(t, y), t),
       lambda t, ans, x, y: times(t, np.divide(-ans, y)))


def _exponent_less_one(y):
    """``y - 1``, but 0 where ``y == 0``: then ``y * x**(y - 1)`` is ``0 * x**0 = 0``, also at x == 0
    (where ``x**-1`` would be inf and the product NaN). x**0 is the constant 1."""
    if type(y) in (int, float):
        return y - 1 if y != 0 else 0
    return np.where(np.equal(y, 0), 0, np.subtract(y, 1))


def _smooth_exponent(y) -> bool:
    """A Python integer exponent of at least 1: ``y x**(y-1)`` is then finite wherever ``x`` is, so its
    product with ``g`` is taken plainly, as for ``np.square(x)`` and ``x * x``: one square, one rule."""
    return type(y) is int and y >= 1


def _power_dx(g, ans, x, y):
    """y x**(y-1): 0 for y == 0 (at x == 0 too), y for y == 1, inf at x == 0 for 0 < y < 1."""
    if _smooth_exponent(y):
        return unbroadcast(g * (y * np.power(x, y - 1)), x)
    return unbroadcast(times(g, y * np.power(x, _exponent_less_one(y))), x)


def _power_dy(g, ans, x, y):
    """x**y log x, taken as 0 at x == 0; NaN where x < 0 (x**y is then defined at integer y only)."""
    return unbroadcast(times(g, ans * np.log(replace_zero(x, 1.0))), y)


def _float_power_dx(g, ans, x, y):
    return cast_like(unbroadcast(times(g, y * np.float_power(x, _exponent_less_one(y))), x), x)


def _float_power_dy(g, ans, x, y):
    return cast_like(unbroadcast(times(g, ans * np.log(replace_zero(x, 1.0))), y), y)


def _power_jvp_x(t, ans, x, y):
    return times(t, y * np.power(x, _exponent_less_one(y)))


def _power_jvp_y(t, ans, x, y):
    return times(t, ans * np.log(replace_zero(x, 1.0)))


defvjp(np.power, _power_dx, _power_dy)
def _squared_float(k: dict) -> bool:
    """``x ** 2`` of a NumPy float or float array: ``np.power(x, 1)`` is ``x`` bit for bit, so its
    derivative ``2 * np.power(x, 1)`` is ``2 * x``, without a ufunc call on a scalar."""
    return k["y"].const == (2,) and type(k["y"].const[0]) is int and (k["x"].type is np.float64
                                     or k["x"].type is np.ndarray and k["x"].dtype.kind == "f")


deftemplate(lookup(np.power), 0, "g * (y * np.power(x, y - 1))",  # x ** 3: _power_dx's first case
            lambda k: k["y"].const is not None and _smooth_exponent(k["y"].const[0]) and not _squared_float(k)
            and broadcasts_to("x", "g", "x")(k))
defalternative(lookup(np.power), 0, "g * (y * x)", lambda k: _squared_float(k) and broadcasts_to("x", "g", "x")(k))
defjvp(np.power, _power_jvp_x, _power_jvp_y)
defvjp(np.float_power, _float_power_dx, _float_power_dy)
defjvp(np.float_power, lambda t, ans, x, y: times(t, y * np.float_power(x, _exponent_less_one(y))),
       lambda t, ans, x, y: times(t, ans * np.log(replace_zero(x, 1.0))))
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
deftemplate(lookup(np.negative), 0, "-g")
deflinear(np.positive, lambda g, ans, x: g)
defvjp(np.absolute, lambda g, ans, x: g * np.sign(x))
defjvp(np.absolute, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defvjp(np.fabs, lambda g, ans, x: g * np.sign(x))
defjvp(np.fabs, lambda t, ans, x: t * np.sign(x), piecewise_linear=True)
defvjp(np.copysign, lambda g, ans, x, y: unbroadcast(np.where(np.signbit(y), -g, g) * np.sign(x), x), None)
defjvp(np.copysign, lambda t, ans, x, y: np.where(np.signbit(y), -t, t) * np.sign(x), None, piecewise_linear=True)
deflinear(np.ldexp, lambda g, ans, x, n: unbroadcast(np.ldexp(g, n), x), None)

# Roots and powers.
defderivative(np.sqrt, lambda ans, x: 0.5 / ans, singular=True)
defderivative(np.cbrt, lambda ans, x: 1.0 / (3.0 * ans * ans), singular=True)
defderivative(np.square, lambda ans, x: 2.0 * x)
defderivative(np.reciprocal, lambda ans, x: -ans * ans, singular=True)

# Exponentials and logarithms (np.divide: a Python float 0.0 gives inf, not ZeroDivisionError).
defderivative(np.exp, lambda ans, x: ans)
defderivative(np.exp2, lambda ans, x: ans * _LN2)
defderivative(np.expm1, lambda ans, x: (ans + 1.0))
defderivative(np.log, lambda ans, x: np.divide(1.0, x), singular=True)
defderivative(np.log2, lambda ans, x: np.divide(1.0, x * _LN2), singular=True)
defderivative(np.log10, lambda ans, x: np.divide(1.0, x * _LN10), singular=True)
defderivative(np.log1p, lambda ans, x: np.divide(1.0, x + 1.0), singular=True)
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
defderivative(np.arcsin, lambda ans, x: 1.0 / np.sqrt(1.0 - x * x), singular=True)
defderivative(np.arccos, lambda ans, x: -1.0 / np.sqrt(1.0 - x * x), singular=True)
defderivative(np.arctan, lambda ans, x: 1.0 / (1.0 + x * x))
# arctan2(y, x) is the angle of the point (x, y).
# At the origin, where the angle is not continuous (no derivative exists), the gradient is taken as 0.
defvjp(
    np.arctan2,
    lambda g, ans, y, x: unbroadcast(g * x / replace_zero(x * x + y * y, 1.0), y),
    lambda g, ans, y, x: unbroadcast(-g * y / replace_zero(x * x + y * y, 1.0), x),
)
defjvp(np.arctan2, lambda t, ans, y, x: t * x / replace_zero(x * x + y * y, 1.0),
       lambda t, ans, y, x: -t * y / replace_zero(x * x + y * y, 1.0))
defderivative(np.sinh, lambda ans, x: np.cosh(x))
defderivative(np.cosh, lambda ans, x: np.sinh(x))
defderivative(np.tanh, lambda ans, x: (1.0 - ans * ans))
defderivative(np.arcsinh, lambda ans, x: 1.0 / np.sqrt(x * x + 1.0))
defderivative(np.arccosh, lambda ans, x: 1.0 / np.sqrt(x * x - 1.0), singular=True)
defderivative(np.arctanh, lambda ans, x: np.divide(1.0, 1.0 - x * x), singular=True)
# At (0, 0), hypot is a norm at 0: the gradient is the subgradient 0, as for linalg.norm.
defvjp(np.hypot, lambda g, ans, x, y: unbroadcast(g * x / replace_zero(ans, 1.0), x),
       lambda g, ans, x, y: unbroadcast(g * y / replace_zero(ans, 1.0), y))
defjvp(np.hypot, lambda t, ans, x, y: t * x / replace_zero(ans, 1.0), lambda t, ans, x, y: t * y / replace_zero(ans, 1.0))
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
    """Which of a, lo, hi each output element of ``minimum(maximum(a, lo), hi)`` came from.

    At a bound, a itself wins (the cotangent passes through inside the closed
    interval [lo, hi]); where lo == hi (or lo > hi) the output is hi whatever a
    is, so hi wins there, even at a == lo == hi, where a does not move the output.
    """
    lo, hi = _bounds(a_min, a_max, kwargs)
    from_a = np.ones(np.shape(a), dtype=bool) if lo is None else a >= lo
    clipped = a if lo is None else np.maximum(a, lo)
    if hi is None:
        from_hi = np.zeros(np.shape(clipped), dtype=bool)
    elif lo is None:
        from_hi = clipped > hi
    else:
        from_hi = (clipped > hi) | (as_array(lo) >= hi)
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

# heaviside(x1, x2) is 0, x2 or 1 as x1 < 0, == 0, > 0: piecewise constant in x1, x2 where x1 == 0.
defvjp(np.heaviside, None, lambda g, ans, x1, x2: unbroadcast(g * (as_array(x1) == 0), x2))
defjvp(np.heaviside, None, lambda t, ans, x1, x2: t * (as_array(x1) == 0), piecewise_linear=True)

# Real-valued identities and cleanups.
deflinear(np.conjugate, lambda g, ans, x: np.conjugate(g))
deflinear(np.real, lambda g, ans, x: np.real(g))
defvjp(np.nan_to_num, lambda g, ans, x, *args, **kwargs: g * np.isfinite(x))
defjvp(np.nan_to_num, lambda t, ans, x, *args, **kwargs: t * np.isfinite(x), piecewise_linear=True)

defmethod("clip", np.clip)
defmethod("conjugate", np.conjugate, receivers="number")
defmethod("conj", np.conjugate)

note("d/dx: y x**(y-1), exactly 0 for y == 0 (also at x == 0), inf at x == 0 for 0 < y < 1; "
     "d/dy: x**y log x, 0 at x == 0, NaN where x < 0", lookup(np.power), lookup(np.float_power))
note("inf at 0 (0 where the cotangent is 0)", lookup(np.sqrt), lookup(np.cbrt))
note("inf at 0, where the value is -inf (0 where the cotangent is 0, as in a discarded np.where branch)",
     lookup(np.log), lookup(np.log2), lookup(np.log10))
note("inf at -1, where the value is -inf (0 where the cotangent is 0)", lookup(np.log1p))
note("infinite at the ends of the domain (0 where the cotangent is 0)",
     *(lookup(f) for f in (np.arcsin, np.arccos, np.arccosh, np.arctanh, np.reciprocal)))
note("a zero cotangent gives 0 where y == 0 (np.where(y != 0, x / y, 0.0) has a finite gradient)",
     lookup(np.divide))
note("the subgradient 0 at (0, 0), as for a norm", lookup(np.hypot))
note("0 at the origin, where the angle is not continuous", lookup(np.arctan2))
note("the quotient is piecewise constant: d/dy = -quotient", lookup(np.remainder), lookup(np.fmod))
note("ties send half of g to each side", *(lookup(f) for f in (np.maximum, np.minimum, np.fmax, np.fmin)))
note("bounds may be arrays, None, or the min=/max= keywords; each gets the gradient where it is active "
     "(a itself at a bound; the upper bound where lo == hi)",
     lookup(np.clip))
note("the subgradient at 0 is 0", lookup(np.absolute), lookup(np.fabs))
note("no gradient for the condition", lookup(np.where))
note("x2, where x1 == 0; x1 is piecewise constant", lookup(np.heaviside))
