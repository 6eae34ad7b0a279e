"""scipy.special: the logistic and error functions, gamma and beta functions, xlogy, logsumexp, softmax.

Imported by ``rules/__init__.py`` only when SciPy is installed (SciPy is an
optional dependency). SciPy's ufuncs report no module, so each rule is
registered under ``module="scipy.special"``: its qualified name is the one a
user imports (``scipy.special.erf``). ``digamma`` and ``psi`` are one object,
named ``digamma`` here. Each rule's jvp is beside its vjp; the derivatives are
themselves SciPy functions with rules (``digamma`` by ``polygamma``), so
second derivatives work.

At the singular points: ``logit`` and ``erfinv`` are infinite at the ends of
their domains, ``xlogy(x, y)`` and ``xlog1py(x, y)`` are 0 for x == 0 whatever
y is, so their derivative in y is exactly 0 there.
"""
from __future__ import annotations

import math

import numpy as np
import scipy.special as special

from .registry import defderivative, defjvp, defvjp, lookup, times
from ._util import cast_like, keep_dims, note, unbroadcast, zero

_MODULE = "scipy.special"
_TWO_OVER_SQRT_PI = 2.0 / math.sqrt(math.pi)
_SQRT_PI_OVER_TWO = math.sqrt(math.pi) / 2.0

# Elementwise functions of one argument, by their derivative d(ans, x).
defderivative(special.expit, lambda ans, x: ans * (1.0 - ans), module=_MODULE)
defderivative(special.logit, lambda ans, x: np.divide(1.0, x * (1.0 - x)), singular=True, module=_MODULE)
defderivative(special.erf, lambda ans, x: _TWO_OVER_SQRT_PI * np.exp(-x * x), module=_MODULE)
defderivative(special.erfc, lambda ans, x: -_TWO_OVER_SQRT_PI * np.exp(-x * x), module=_MODULE)
defderivative(special.erfinv, lambda ans, x: _SQRT_PI_OVER_TWO * np.exp(ans * ans), singular=True, module=_MODULE)
defderivative(special.gamma, lambda ans, x: ans * special.digamma(x), module=_MODULE)
defderivative(special.gammaln, lambda ans, x: special.digamma(x), module=_MODULE)
defderivative(special.digamma, lambda ans, x: cast_like(special.polygamma(1, x), x), name="digamma", module=_MODULE)


# polygamma(n, x): the n-th derivative of digamma; n is an order, with no gradient.
def _polygamma_dx(g, ans, n, x):
    return cast_like(unbroadcast(g * special.polygamma(np.add(n, 1), x), x), x)


defvjp(special.polygamma, None, _polygamma_dx, module=_MODULE)
defjvp(special.polygamma, None, lambda t, ans, n, x: t * special.polygamma(np.add(n, 1), x))


# beta(a, b) = Γ(a)Γ(b)/Γ(a+b), betaln its logarithm: d/da log B = ψ(a) - ψ(a+b).
def _dlog_beta(a, b):
    return special.digamma(a) - special.digamma(a + b)


defvjp(special.beta, lambda g, ans, a, b: cast_like(unbroadcast(g * ans * _dlog_beta(a, b), a), a),
       lambda g, ans, a, b: cast_like(unbroadcast(g * ans * _dlog_beta(b, a), b), b), module=_MODULE)
defjvp(special.beta, lambda t, ans, a, b: t * ans * _dlog_beta(a, b), lambda t, ans, a, b: t * ans * _dlog_beta(b, a))
defvjp(special.betaln, lambda g, ans, a, b: cast_like(unbroadcast(g * _dlog_beta(a, b), a), a),
       lambda g, ans, a, b: cast_like(unbroadcast(g * _dlog_beta(b, a), b), b), module=_MODULE)
defjvp(special.betaln, lambda t, ans, a, b: t * _dlog_beta(a, b), lambda t, ans, a, b: t * _dlog_beta(b, a))


# xlogy(x, y) = x log y and xlog1py(x, y) = x log1p(y), both 0 where x == 0 (whatever y is).
def _over(x, y):
    """x / y, and 0 at x == y == 0 (where xlogy is 0 for every y)."""
    return np.divide(x, np.where(np.equal(x, 0) & np.equal(y, 0), 1.0, y))


defvjp(special.xlogy, lambda g, ans, x, y: cast_like(unbroadcast(times(g, np.log(y)), x), x),
       lambda g, ans, x, y: cast_like(unbroadcast(g * _over(x, y), y), y), module=_MODULE)
defjvp(special.xlogy, lambda t, ans, x, y: times(t, np.log(y)), lambda t, ans, x, y: t * _over(x, y))
defvjp(special.xlog1py, lambda g, ans, x, y: cast_like(unbroadcast(times(g, np.log1p(y)), x), x),
       lambda g, ans, x, y: cast_like(unbroadcast(g * _over(x, y + 1.0), y), y), module=_MODULE)
defjvp(special.xlog1py, lambda t, ans, x, y: times(t, np.log1p(y)), lambda t, ans, x, y: t * _over(x, y + 1.0))


# logsumexp(a, axis, b, keepdims, return_sign) = log |sum(b exp(a))|; with return_sign, (value, sign).
def _logsumexp_weights(ans, a, axis, b, keepdims, return_sign):
    """d value / d(b exp(a)) times exp(a): sign * b exp(a - value), shaped like a (b broadcast)."""
    if not return_sign:
        return np.exp(a - keep_dims(ans, a, axis, keepdims))
    value, sign = ans
    return np.exp(a - keep_dims(value, a, axis, keepdims)) * keep_dims(sign, a, axis, keepdims)


def _logsumexp_cotangent(g, return_sign):
    return g[0] if return_sign else g


def _logsumexp_da(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    weights = _logsumexp_weights(ans, a, axis, b, keepdims, return_sign)
    if b is not None:
        weights = weights * b
    g = _logsumexp_cotangent(g, return_sign)
    if g is zero:  # only the sign received a cotangent
        return zero
    return cast_like(unbroadcast(keep_dims(g, a, axis, keepdims) * weights, a), a)


def _logsumexp_db(g, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
    weights = _logsumexp_weights(ans, a, axis, b, keepdims, return_sign)
    g = _logsumexp_cotangent(g, return_sign)
    if g is zero:
        return zero
    return cast_like(unbroadcast(keep_dims(g, a, axis, keepdims) * weights, b), b)


def _logsumexp_jvp(position):
    def jvp(t, ans, a, axis=None, b=None, keepdims=False, return_sign=False):
        weights = _logsumexp_weights(ans, a, axis, b, keepdims, return_sign)
        if position == 0 and b is not None:
            weights = weights * b
        total = np.sum(t * weights, axis=axis, keepdims=keepdims)
        return (total, zero) if return_sign else total

    return jvp


defvjp(special.logsumexp, _logsumexp_da, None, _logsumexp_db, module=_MODULE)
defjvp(special.logsumexp, _logsumexp_jvp(0), None, _logsumexp_jvp(2))


# softmax(x, axis) = exp(x) / sum(exp(x)); log_softmax its logarithm. axis=None: over every element.
def _sum_back(value, axis):
    return np.sum(value, axis=axis, keepdims=True)


def _softmax_dx(g, ans, x, axis=None):
    return ans * (g - _sum_back(g * ans, axis))


def _log_softmax_dx(g, ans, x, axis=None):
    return g - np.exp(ans) * _sum_back(g, axis)


defvjp(special.softmax, _softmax_dx, module=_MODULE)
defjvp(special.softmax, _softmax_dx)  # the Jacobian of softmax is symmetric: its jvp is its vjp
defvjp(special.log_softmax, _log_softmax_dx, module=_MODULE)
defjvp(special.log_softmax, lambda t, ans, x, axis=None: t - _sum_back(np.exp(ans) * t, axis))

note("the order n has no gradient", lookup(special.polygamma))
note("0 for x == 0 whatever y is: d/dy is exactly 0 there", lookup(special.xlogy), lookup(special.xlog1py))
note("a and the weights b; with return_sign=True the cotangent of the sign is ignored (piecewise constant)",
     lookup(special.logsumexp))
note("infinite at the ends of the domain (0 where the cotangent is 0)", lookup(special.logit), lookup(special.erfinv))
