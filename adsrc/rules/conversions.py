"""Conversions, numbers split in parts, spaced ranges and the Kaiser window: asfortranarray,
asarray_chkfinite, require, real_if_close, frexp, modf, divmod, nextafter, geomspace, logspace, i0, kaiser; and the functions of
this kind whose results carry no gradient (lexsort, matrix_rank, einsum_path, index helpers).

frexp, modf and divmod return a tuple whose integer-valued part (the exponent, the integral part, the
quotient) is piecewise constant: only the other part carries a gradient. At the points where that part
jumps (a power of two for frexp, an integer for modf, a multiple of y for divmod), the rule gives the
one-sided derivative from the side where the value is continuous.
"""
from __future__ import annotations

import math

import numpy as np

from .registry import defderivative, defjvp, deflinear, defvjp, lookup, register_nondifferentiable
from ._util import cast_like, is_zero, note, unbroadcast, zero, zeros_for
from .shape import _array_dobject


# ---- conversions that return their input's values ---------------------------------------------------------
def _same_values(g, ans, a, *args, **kwargs):
    return _array_dobject(g, None, a)


for _f in (np.asfortranarray, np.asarray_chkfinite, np.require, np.real_if_close):
    deflinear(_f, _same_values)


# ---- numbers split in parts -------------------------------------------------------------------------------
def _first(g):
    return g[0] if isinstance(g, (tuple, list)) else g


def _frexp_dx(g, ans, x):
    g_mantissa = _first(g)
    return zero if is_zero(g_mantissa) else cast_like(g_mantissa * np.ldexp(1.0, -ans[1]), x)


def _modf_dx(g, ans, x):
    g_fraction = _first(g)
    return zero if is_zero(g_fraction) else cast_like(g_fraction, x)


def _divmod_vjp(k):
    """The remainder x - floor(x / y) y; the quotient is piecewise constant."""
    def vjp(g, ans, x, y):
        g_remainder = g[1]
        if is_zero(g_remainder):
            return zero
        return unbroadcast(g_remainder if k == 0 else -g_remainder * ans[0], (x, y)[k])
    return vjp


defvjp(np.frexp, _frexp_dx)
defjvp(np.frexp, lambda t, ans, x: (t * np.ldexp(1.0, -ans[1]), zero), piecewise_linear=True)
defvjp(np.modf, _modf_dx)
defjvp(np.modf, lambda t, ans, x: (t, np.zeros(np.shape(ans[1]))), piecewise_linear=True)
defvjp(np.divmod, _divmod_vjp(0), _divmod_vjp(1))
defjvp(np.divmod, lambda t, ans, x, y: (np.zeros(np.shape(ans[0])), np.broadcast_to(t, np.shape(ans[1]))),
       lambda t, ans, x, y: (np.zeros(np.shape(ans[0])), -t * ans[0]))
# nextafter(x, y) moves x by one unit in the last place: the identity in x, nothing in y.
defvjp(np.nextafter, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: zeros_for(y, g)[()])
defjvp(np.nextafter, lambda t, ans, x, y: t, lambda t, ans, x, y: np.zeros(np.shape(ans))[()], piecewise_linear=True)


# The same for Python numbers: math.frexp, math.modf, divmod, math.nextafter.
def _py_divmod_vjp(k):
    def vjp(g, ans, x, y):
        return zero if is_zero(g[1]) else float(g[1] if k == 0 else -g[1] * ans[0])
    return vjp


defvjp(math.frexp, lambda g, ans, x: zero if is_zero(_first(g)) else math.ldexp(_first(g), -ans[1]))
defjvp(math.frexp, lambda t, ans, x: (math.ldexp(t, -ans[1]), zero), piecewise_linear=True)
defvjp(math.modf, lambda g, ans, x: zero if is_zero(_first(g)) else float(_first(g)))
defjvp(math.modf, lambda t, ans, x: (t, 0.0), piecewise_linear=True)
defvjp(divmod, _py_divmod_vjp(0), _py_divmod_vjp(1))
defjvp(divmod, lambda t, ans, x, y: (0.0, t), lambda t, ans, x, y: (0.0, -t * ans[0]))
defvjp(math.nextafter, lambda g, ans, x, y, *steps: g, lambda g, ans, x, y, *steps: 0.0)
defjvp(math.nextafter, lambda t, ans, x, y, *steps: t, lambda t, ans, x, y, *steps: 0.0, piecewise_linear=True)


# ---- spaced ranges ----------------------------------------------------------------------------------------
def _fractions(num, endpoint, ndim, axis):
    """Where each of the ``num`` points sits between start (0) and stop (1), along ``axis`` of the result."""
    steps = np.arange(num, dtype=float) / (max(num - 1, 1) if endpoint else max(num, 1))
    shape = [1] * ndim
    shape[axis] = num
    return np.reshape(steps, shape)


def _along(value, ans, axis):
    """A start or stop value broadcast against the result, with the points' axis inserted."""
    return np.expand_dims(value, axis % np.ndim(ans)) if np.ndim(value) else value


def _geomspace_vjp(k):
    """out = start^(1-f) stop^f: d/dstart = (1 - f) out / start, d/dstop = f out / stop."""
    def vjp(g, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        f = _fractions(num, endpoint, np.ndim(ans), axis % np.ndim(ans))
        share = (1.0 - f) if k == 0 else f
        total = g * share * ans / _along((start, stop)[k], ans, axis)
        return cast_like(unbroadcast(np.sum(total, axis=axis % np.ndim(ans)), (start, stop)[k]), (start, stop)[k])
    return vjp


def _geomspace_jvp(k):
    def jvp(t, ans, start, stop, num=50, endpoint=True, dtype=None, axis=0):
        f = _fractions(num, endpoint, np.ndim(ans), axis % np.ndim(ans))
        share = (1.0 - f) if k == 0 else f
        return share * ans * _along(np.asarray(t) / (start, stop)[k], ans, axis)
    return jvp


defvjp(np.geomspace, _geomspace_vjp(0), _geomspace_vjp(1))
defjvp(np.geomspace, _geomspace_jvp(0), _geomspace_jvp(1))


def _logspace_factor(k, ans, start, stop, num, endpoint, base, axis):
    """d out / d(start, stop) as a factor of the result: out ln(base) (1 - f), out ln(base) f."""
    f = _fractions(num, endpoint, np.ndim(ans), axis % np.ndim(ans))
    return ans * np.log(_along(base, ans, axis)) * ((1.0 - f) if k == 0 else f)


def _logspace_vjp(k):
    def vjp(g, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        total = g * _logspace_factor(k, ans, start, stop, num, endpoint, base, axis)
        return cast_like(unbroadcast(np.sum(total, axis=axis % np.ndim(ans)), (start, stop)[k]), (start, stop)[k])
    return vjp


def _logspace_jvp(k):
    def jvp(t, ans, start, stop, num=50, endpoint=True, base=10.0, dtype=None, axis=0):
        return _logspace_factor(k, ans, start, stop, num, endpoint, base, axis) * _along(t, ans, axis)
    return jvp


defvjp(np.logspace, _logspace_vjp(0), _logspace_vjp(1))
defjvp(np.logspace, _logspace_jvp(0), _logspace_jvp(1))

# ---- the Kaiser window and its Bessel function -------------------------------------------------------------
def bessel_i1(x):
    """The modified Bessel function I1, i0's derivative: sum over k of (x/2)^(2k+1) / (k! (k+1)!).

    Every term has the sign of x, so the sum is accurate; it runs until the terms stop mattering
    (about |x| + 30 terms, vectorized).
    """
    x = np.asarray(x, dtype=np.result_type(x, 1.0))
    half = x / 2.0
    term = half
    total = term
    k = 0
    while np.any(np.abs(term) > np.finfo(total.dtype).eps * np.abs(total)):
        term = term * half * half / ((k + 1) * (k + 2))
        total = total + term
        k += 1
    return total[()]


defderivative(np.i0, lambda ans, x: bessel_i1(x))


def _kaiser_parts(M, beta):
    n = np.arange(M, dtype=float)
    ratio = np.sqrt(1.0 - (2.0 * n / max(M - 1, 1) - 1.0) ** 2)
    return ratio, np.i0(beta * ratio), np.i0(beta)


def _kaiser_slope(M, beta):
    """d w_n / d beta for w_n = I0(beta r_n) / I0(beta)."""
    if M <= 1:  # np.kaiser(1, beta) is [1.0] whatever beta (and shorter windows are empty)
        return np.zeros(max(M, 0))
    ratio, top, bottom = _kaiser_parts(M, beta)
    return (ratio * bessel_i1(beta * ratio) * bottom - top * bessel_i1(beta)) / bottom ** 2


defvjp(np.kaiser, None, lambda g, ans, M, beta: cast_like(np.sum(g * _kaiser_slope(M, beta)), beta))
defjvp(np.kaiser, None, lambda t, ans, M, beta: t * _kaiser_slope(M, beta))


# Results that carry no gradient: orders, ranks, contraction plans, masks and indices.
register_nondifferentiable(np.lexsort, np.linalg.matrix_rank, np.einsum_path, np.isposinf, np.isneginf,
                           np.diag_indices_from, np.tril_indices_from, np.triu_indices_from, np.mask_indices, np.ix_,
                           np.bartlett, np.blackman, np.hamming, np.hanning)

note("the mantissa (the exponent is piecewise constant)", lookup(np.frexp))
note("the fractional part (the integral part is piecewise constant)", lookup(np.modf))
note("the remainder (the quotient is piecewise constant)", lookup(np.divmod))
note("start and stop; the base has no gradient", lookup(np.logspace))
note("start and stop (of one sign, as NumPy requires)", lookup(np.geomspace))
del _f
note("the derivative I1 by its series (adsrc.rules.conversions.bessel_i1)", lookup(np.i0))
note("beta; the window length has no gradient", lookup(np.kaiser))
note("the mantissa; the remainder; the fractional part (Python numbers)", lookup(math.frexp), lookup(divmod),
     lookup(math.modf))
