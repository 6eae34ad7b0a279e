"""scipy.special: logistic, error and normal-distribution functions, gamma and beta functions, Bessel
functions of order 0 and 1 and of any order v, entropies, incomplete gamma and beta, multigammaln,
Box-Cox, xlogy, logsumexp, softmax.

Imported by ``rules/__init__.py`` only when SciPy is installed (SciPy is an
optional dependency). SciPy's ufuncs report no module, so each rule is
registered under ``module="scipy.special"``: its qualified name is the one a
user imports (``scipy.special.erf``). ``digamma`` and ``psi`` are one object,
named ``digamma`` here. Each rule's jvp is beside its vjp; the derivatives are
themselves SciPy functions with rules (``digamma`` by ``polygamma``), so
second derivatives work.

At the singular points: ``logit`` and ``erfinv`` are infinite at the ends of
their domains, ``xlogy(x, y)`` and ``xlog1py(x, y)`` are 0 for x == 0 whatever
y is, so their derivative in y is exactly 0 there. ``j1``, ``i1`` and ``i1e`` divide by x
in their derivative and take its limit 1/2 at x == 0; ``rgamma`` has the slope
(-1)^n n! at the poles -n of Gamma; ``entr``'s slope is +inf at 0. The
parameters ``a`` of ``gammainc``/``gammaincc``, ``a`` and ``b`` of
``betainc``/``betaincc``, the order ``v`` (or ``n``) of the Bessel functions
``jv`` (also spelled ``jn``), ``yv``, ``yn``, ``iv``, ``ive``, ``kv``, ``kve``,
``kn`` and ``lmbda`` of ``boxcox``/``inv_boxcox`` have no rule: a varied one
is refused at compile time. ``gammasgn`` is piecewise constant (no
gradient); ``erf`` and ``erfc`` take complex values.
"""
from __future__ import annotations

import inspect
import math

import numpy as np
import scipy.special as special

from .registry import allow_complex, defderivative, defjvp, defvjp, lookup, register_nondifferentiable, times
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


# ---- more elementwise functions of one argument -------------------------------------------------
_INV_SQRT_2PI = 1.0 / math.sqrt(2.0 * math.pi)
_SQRT_2PI = math.sqrt(2.0 * math.pi)
_DEGREE = math.pi / 180.0


def _over_x(value, x, at_zero):
    """value / x, and ``at_zero`` (the limit) where x == 0."""
    at_origin = np.equal(x, 0)
    return np.where(at_origin, at_zero, np.divide(value, np.where(at_origin, 1.0, x)))


def _entr_derivative(ans, x):
    """-log x - 1: +inf at x == 0; 0 where x < 0 (entr is the constant -inf there)."""
    with np.errstate(divide="ignore"):
        return np.where(np.less(x, 0), 0.0, -np.log(np.where(np.less(x, 0), 1.0, x)) - 1.0)


defderivative(special.ndtr, lambda ans, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x), module=_MODULE)
defderivative(special.log_ndtr, lambda ans, x: _INV_SQRT_2PI * np.exp(-0.5 * x * x - ans), module=_MODULE)
defderivative(special.ndtri, lambda ans, x: _SQRT_2PI * np.exp(0.5 * ans * ans), singular=True, module=_MODULE)
defderivative(special.erfcinv, lambda ans, x: -_SQRT_PI_OVER_TWO * np.exp(ans * ans), singular=True, module=_MODULE)
defderivative(special.erfi, lambda ans, x: _TWO_OVER_SQRT_PI * np.exp(x * x), module=_MODULE)
defderivative(special.erfcx, lambda ans, x: 2.0 * x * ans - _TWO_OVER_SQRT_PI, module=_MODULE)
defderivative(special.dawsn, lambda ans, x: 1.0 - 2.0 * x * ans, module=_MODULE)
# Bessel functions: J0' = -J1, J1' = J0 - J1/x (1/2 at 0), and the same recurrences for Y, I and K.
defderivative(special.j0, lambda ans, x: -special.j1(x), module=_MODULE)
defderivative(special.j1, lambda ans, x: special.j0(x) - _over_x(ans, x, 0.5), module=_MODULE)
defderivative(special.y0, lambda ans, x: -special.y1(x), module=_MODULE)
defderivative(special.y1, lambda ans, x: special.y0(x) - ans / x, module=_MODULE)
defderivative(special.i0, lambda ans, x: special.i1(x), module=_MODULE)
defderivative(special.i1, lambda ans, x: special.i0(x) - _over_x(ans, x, 0.5), module=_MODULE)
defderivative(special.k0, lambda ans, x: -special.k1(x), module=_MODULE)
defderivative(special.k1, lambda ans, x: -special.k0(x) - ans / x, module=_MODULE)
# The exponentially scaled i0e = exp(-|x|) i0 and i1e: the subgradient at 0 takes sign(0) = 0.
defderivative(special.i0e, lambda ans, x: special.i1e(x) - np.sign(x) * ans, module=_MODULE)
defderivative(special.i1e, lambda ans, x: special.i0e(x) - _over_x(ans, x, 0.5) - np.sign(x) * ans, module=_MODULE)
defderivative(special.expm1, lambda ans, x: ans + 1.0, module=_MODULE)
defderivative(special.log1p, lambda ans, x: np.divide(1.0, 1.0 + x), singular=True, module=_MODULE)
defderivative(special.cbrt, lambda ans, x: np.divide(1.0, 3.0 * ans * ans), singular=True, module=_MODULE)
defderivative(special.exp2, lambda ans, x: ans * math.log(2.0), module=_MODULE)
defderivative(special.exp10, lambda ans, x: ans * math.log(10.0), module=_MODULE)
defderivative(special.cosdg, lambda ans, x: -_DEGREE * special.sindg(x), module=_MODULE)
defderivative(special.sindg, lambda ans, x: _DEGREE * special.cosdg(x), module=_MODULE)
defderivative(special.entr, _entr_derivative, singular=True, module=_MODULE)
defderivative(special.loggamma, lambda ans, x: special.digamma(x), module=_MODULE)


def _rgamma_derivative(ans, x):
    """-psi(x) / Gamma(x); at the poles x = -n of Gamma, where 1/Gamma is 0, its slope (-1)^n n!."""
    at_pole = np.less_equal(x, 0) & np.equal(x, np.floor(x))
    regular = -ans * special.digamma(np.where(at_pole, 1.0, x))
    return np.where(at_pole, np.cos(math.pi * x) * special.gamma(1.0 - np.where(at_pole, x, 0.0)), regular)


defderivative(special.rgamma, _rgamma_derivative, module=_MODULE)


# rel_entr(x, y) = x log(x/y) and kl_div(x, y) = x log(x/y) - x + y, for x, y > 0 (0 at x == 0).
def _log_ratio(x, y):
    with np.errstate(divide="ignore"):
        return np.log(x) - np.log(y)


def _binary_vjp(partial, position):
    def vjp(g, ans, x, y):
        return cast_like(unbroadcast(times(g, partial(x, y)), (x, y)[position]), (x, y)[position])

    return vjp


def _binary_jvp(partial):
    return lambda t, ans, x, y: times(t, partial(x, y))


_REL_ENTR = (lambda x, y: _log_ratio(x, y) + 1.0, lambda x, y: -_over(x, y))
_KL_DIV = (_log_ratio, lambda x, y: 1.0 - _over(x, y))
for _func, _partials in ((special.rel_entr, _REL_ENTR), (special.kl_div, _KL_DIV)):
    defvjp(_func, *(_binary_vjp(p, i) for i, p in enumerate(_partials)), module=_MODULE)
    defjvp(_func, *(_binary_jvp(p) for p in _partials))


# Functions differentiable in their last argument x only: d/dx = partial(*args). The leading parameters
# (an order, a shape) have no closed-form derivative, or none at all: a varied one is refused at compile time.
def _in_last_argument(func, partial, names):
    def vjp(g, ans, *args):
        return cast_like(unbroadcast(g * partial(*args), args[-1]), args[-1])

    def jvp(t, ans, *args):
        return t * partial(*args)

    head = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("g", "ans", *names)]
    vjp.__signature__ = inspect.Signature(head)
    rule = defvjp(func, *[None] * (len(names) - 1), vjp, module=_MODULE)
    defjvp(func, *[None] * (len(names) - 1), jvp)
    rule.extra["no_derivative"] = {i: (
        f"adsrc.register_adjoint(scipy.special.{func.__name__}, ...) giving a vjp for {name!r} too (adsrc "
        f"implements none: the derivative in {name!r} has no closed form), or pass a constant there")
        for i, name in enumerate(names[:-1])}
    note(f"no gradient in {', '.join(names[:-1])} (refused when varied)", rule)


# gammainc(a, x) and gammaincc(a, x), regularized incomplete gamma functions: d/dx = ±x^(a-1) e^(-x) / Γ(a).
def _gamma_density(a, x):
    return np.exp(special.xlogy(a - 1.0, x) - x - special.gammaln(a))


# betainc(a, b, x) and betaincc(a, b, x), regularized incomplete beta: d/dx = ±x^(a-1) (1-x)^(b-1) / B(a, b).
def _beta_density(a, b, x):
    return np.exp(special.xlogy(a - 1.0, x) + special.xlog1py(b - 1.0, -x) - special.betaln(a, b))


_in_last_argument(special.gammainc, _gamma_density, ("a", "x"))
_in_last_argument(special.gammaincc, lambda a, x: -_gamma_density(a, x), ("a", "x"))
_in_last_argument(special.betainc, _beta_density, ("a", "b", "x"))
if hasattr(special, "betaincc"):  # SciPy >= 1.11
    _in_last_argument(special.betaincc, lambda a, b, x: -_beta_density(a, b, x), ("a", "b", "x"))

# Bessel functions of order v (no gradient in v), from the recurrences J_v' = (J_(v-1) - J_(v+1)) / 2, the same
# for Y, I_v' = (I_(v-1) + I_(v+1)) / 2 and K_v' = -(K_(v-1) + K_(v+1)) / 2. The scaled ive = exp(-|x|) iv and
# kve = exp(x) kv add the derivative of their scale (ive's subgradient at 0 takes sign(0) = 0). yn and kn take
# an integer order, so its neighbours are n - 1 and n + 1 as integers.
_in_last_argument(special.jv, lambda v, x: 0.5 * (special.jv(v - 1.0, x) - special.jv(v + 1.0, x)), ("v", "x"))
_in_last_argument(special.yv, lambda v, x: 0.5 * (special.yv(v - 1.0, x) - special.yv(v + 1.0, x)), ("v", "x"))
_in_last_argument(special.yn, lambda n, x: 0.5 * (special.yn(np.subtract(n, 1), x) - special.yn(np.add(n, 1), x)),
                  ("n", "x"))
_in_last_argument(special.iv, lambda v, x: 0.5 * (special.iv(v - 1.0, x) + special.iv(v + 1.0, x)), ("v", "x"))
_in_last_argument(special.ive, lambda v, x: 0.5 * (special.ive(v - 1.0, x) + special.ive(v + 1.0, x))
                  - np.sign(x) * special.ive(v, x), ("v", "x"))
_in_last_argument(special.kv, lambda v, x: -0.5 * (special.kv(v - 1.0, x) + special.kv(v + 1.0, x)), ("v", "x"))
_in_last_argument(special.kve, lambda v, x: special.kve(v, x) - 0.5 * (special.kve(v - 1.0, x)
                                                                       + special.kve(v + 1.0, x)), ("v", "x"))
_in_last_argument(special.kn, lambda n, x: -0.5 * (special.kn(np.subtract(n, 1), x) + special.kn(np.add(n, 1), x)),
                  ("n", "x"))


# multigammaln(a, d) = d(d-1)/4 log(pi) + sum_(j<d) gammaln(a - j/2): d/da = sum_(j<d) digamma(a - j/2).
# d is a dimension (an integer), with no gradient.
def _multigammaln_da(a, d):
    return np.sum(special.digamma(np.expand_dims(a, -1) - 0.5 * np.arange(d)), axis=-1)


defvjp(special.multigammaln, lambda g, ans, a, d: cast_like(unbroadcast(g * _multigammaln_da(a, d), a), a), None,
       module=_MODULE)
defjvp(special.multigammaln, lambda t, ans, a, d: t * _multigammaln_da(a, d), None)
note("d is a dimension, with no gradient", lookup(special.multigammaln))

# gammasgn(x), the sign of Gamma(x), is piecewise constant: no gradient.
register_nondifferentiable(special.gammasgn)
# erf and erfc are entire: their derivative 2/sqrt(pi) exp(-z^2) holds for complex z as written (docs/complex.md).
allow_complex(special.erf, special.erfc)


# boxcox(x, lmbda) = (x^lmbda - 1)/lmbda (log x at lmbda == 0): d/dx = x^(lmbda-1); inv_boxcox(y, lmbda) its
# inverse (1 + lmbda y)^(1/lmbda): d/dy = inv_boxcox / (1 + lmbda y). Neither has a gradient in lmbda.
def _boxcox_dx(x, lmbda):
    return np.power(x, np.subtract(lmbda, 1.0))


defvjp(special.boxcox, lambda g, ans, x, lmbda: cast_like(unbroadcast(g * _boxcox_dx(x, lmbda), x), x), None,
       module=_MODULE)
defjvp(special.boxcox, lambda t, ans, x, lmbda: t * _boxcox_dx(x, lmbda), None)
def _inv_boxcox_dy(ans, y, lmbda):
    """(1 + lmbda y)^(1/lmbda - 1), which is exp(y) = ans at lmbda == 0."""
    at_zero = np.equal(lmbda, 0)
    with np.errstate(divide="ignore"):
        power = np.power(1.0 + lmbda * y, np.divide(1.0, np.where(at_zero, 1.0, lmbda)) - 1.0)
    return np.where(at_zero, ans, power)


defvjp(special.inv_boxcox, lambda g, ans, y, lmbda: cast_like(unbroadcast(g * _inv_boxcox_dy(ans, y, lmbda), y), y),
       None, module=_MODULE)
defjvp(special.inv_boxcox, lambda t, ans, y, lmbda: t * _inv_boxcox_dy(ans, y, lmbda), None)
for _func in (special.boxcox, special.inv_boxcox):
    lookup(_func).extra["no_derivative"] = {1: (
        f"adsrc.register_adjoint(scipy.special.{_func.__name__}, ...) giving a vjp for 'lmbda' too, or pass a "
        f"constant there")}

note("no gradient in lmbda (refused when lmbda varies)", lookup(special.boxcox), lookup(special.inv_boxcox))
note("the subgradient at 0 takes sign(0) = 0", lookup(special.i0e), lookup(special.i1e))
note("+inf at x == 0, 0 where x < 0 (entr is -inf there)", lookup(special.entr))
note("d/dx is -inf at x == 0; d/dy is 0 there", lookup(special.rel_entr), lookup(special.kl_div))
note("infinite at the ends of the domain (0 where the cotangent is 0)", lookup(special.ndtri), lookup(special.erfcinv))
