"""scipy.stats: logpdf, pdf, cdf, logcdf, sf and logsf of norm, t, chi2, gamma, beta and poisson.

Imported by ``rules/__init__.py`` only when SciPy is installed. A call such as
``scipy.stats.norm.logpdf(x, mu, sigma)`` calls a *bound method* of the
distribution object ``norm``: a new object at each attribute access, but one
that compares and hashes equal to every other access of the same method of the
same object, so the registry keys the rule by it as it keys any function. Each
rule is named after what the user writes, ``scipy.stats.norm_logpdf`` (its vjps
``norm_logpdf_dx``, ``norm_logpdf_dloc``...), and declares the method's
parameters, ``(x, loc=0.0, scale=1.0)``, so that ``norm.logpdf(x, scale=s)``
with a differentiated ``s`` is moved to its position (the method itself takes
``*args, **kwds``).

Every rule is written from the partial derivatives of the log density, one per
parameter:

* ``logpdf``: the partial itself; ``pdf``: the density times it;
* ``cdf``: the density times the *weight* of the parameter (1 for x, -1 for
  loc, -z for scale, where z is x standardized); ``logcdf``: the same over
  the cdf, computed as ``exp(logpdf - logcdf)``;
* ``sf = 1 - cdf`` and ``logsf``: the same with the weight negated (over the
  sf for logsf); where the density is infinite (at the edge of the support
  of chi2 with df < 2, of gamma and beta with a shape below 1), the slope of
  the cdf and sf is the one-sided slope from outside the support, 0;

so the cdf and sf of t, chi2, gamma and beta have a gradient in x, loc and
scale, and none in the shape parameters (df, a, b): passing a differentiated
shape parameter to them is refused when the function is compiled. chi2 is
gamma with a = df/2 and twice the scale. Poisson's count ``k`` and ``loc``
are integers: its pmf, logpmf, cdf, logcdf, sf and logsf are differentiable
in ``mu``. The multivariate distributions are in scipy_multivariate.py.
"""
from __future__ import annotations

import inspect

import numpy as np
import scipy.special as special
import scipy.stats as stats

from .registry import defjvp, defvjp, zero_where_zero
from ._util import cast_like, note, unbroadcast

_MODULE = "scipy.stats"
_REQUIRED = inspect.Parameter.empty


def _ratio(num, den):
    """num / den, and 0 where both are 0 (a log-density term (a - 1) log y at a == 1, y == 0)."""
    return np.divide(num, np.where(np.equal(num, 0) & np.equal(den, 0), 1.0, den))


# ---- the partial derivatives of each log density, and the weights of its cdf -----------------
def _norm_partials(x, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    return -z / scale, z / scale, (z * z - 1.0) / scale


def _t_partials(x, df, loc=0.0, scale=1.0):
    z = (x - loc) / scale
    q = df + z * z
    dz = -(df + 1.0) * z / q
    ddf = (0.5 * (special.digamma(0.5 * (df + 1.0)) - special.digamma(0.5 * df)) - 0.5 / df
           - 0.5 * np.log1p(z * z / df) + 0.5 * (df + 1.0) * z * z / (df * q))
    return dz / scale, ddf, -dz / scale, (-dz * z - 1.0) / scale


def _gamma_partials(x, a, loc=0.0, scale=1.0):
    y = (x - loc) / scale
    dy = _ratio(a - 1.0, y) - 1.0
    return dy / scale, np.log(y) - special.digamma(a), -dy / scale, -(dy * y + 1.0) / scale


def _chi2_partials(x, df, loc=0.0, scale=1.0):
    """chi2(df, loc, scale) is gamma(df / 2, loc, 2 scale)."""
    dx, da, dloc, dscale = _gamma_partials(x, 0.5 * df, loc, 2.0 * scale)
    return dx, 0.5 * da, dloc, 2.0 * dscale


def _beta_partials(x, a, b, loc=0.0, scale=1.0):
    y = (x - loc) / scale
    dy = _ratio(a - 1.0, y) - _ratio(b - 1.0, 1.0 - y)
    both = special.digamma(a + b)
    return (dy / scale, np.log(y) - special.digamma(a) + both, np.log1p(-y) - special.digamma(b) + both,
            -dy / scale, -(dy * y + 1.0) / scale)


def _poisson_partials(k, mu, loc=0):
    return None, _ratio(k - loc, mu) - 1.0, None


def _poisson_pmf_partials(ans, k, mu, loc=0):
    """d pmf(k) / d mu = pmf(k - 1) - pmf(k), exact at mu == 0 too (where k / mu - 1 is not)."""
    return None, stats.poisson.pmf(k - 1, mu, loc) - ans, None


def _location_scale_weights(position_of_loc):
    """The cdf weights of a location-scale family: 1 for x, -1 for loc, -z for scale, None for shapes."""

    def weights(x, *params):
        loc, scale = params[position_of_loc - 1], params[position_of_loc]
        shapes = [None] * (position_of_loc - 1)
        return (1.0, *shapes, -1.0, -(x - loc) / scale)

    return weights


def _poisson_weights(k, mu, loc=0):
    return None, -1.0, None


# ---- the rules, made from the partials -------------------------------------------------------
class _Family:
    """One distribution: its parameters (name -> default), log-density partials and cdf weights."""

    def __init__(self, dist, label, parameters, partials, weights, density="pdf", log_density=None,
                 density_partials=None):
        self.dist, self.label, self.partials, self.weights = dist, label, partials, weights
        self.density_partials = density_partials  # d pdf / d parameter, where ans * partial is not exact
        self.names = list(parameters)
        self.defaults = parameters
        # The log density whose exp is the cdf's slope (for Poisson, the pmf at floor(k)).
        self.log_density = log_density or getattr(dist, "log" + density)
        self.signature = inspect.Signature([
            inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD, default=d) for n, d in parameters.items()])

    def register(self, method, kind, differentiable):
        func = getattr(self.dist, method)
        head = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_OR_KEYWORD) for n in ("g", "ans")]
        vjps = []
        for i in range(len(self.names)):
            vjp = _vjp(self, kind, i) if differentiable[i] else None
            if vjp is not None:
                vjp.__signature__ = inspect.Signature([*head, *self.signature.parameters.values()])
            vjps.append(vjp)
        rule = defvjp(func, *vjps, name=f"{self.label}_{method}", module=_MODULE)
        defjvp(func, *(_jvp(self, kind, i) if differentiable[i] else None for i in range(len(self.names))))
        rule.extra["signature"] = self.signature  # the parameters a call may name (the method takes **kwds)
        return rule


# Plain functions, not methods, so that second order differentiates them from their source.
def _bound(family, args, kwargs):
    """Every parameter's value: the call's positional arguments, then its keywords or the defaults."""
    rest = [kwargs.get(n, family.defaults[n]) for n in family.names[len(args):]]
    return list(args) + rest


def _slope(family, kind, i, ans, args, kwargs):
    """d ans / d parameter i, elementwise (before summing to the parameter's shape)."""
    values = _bound(family, args, kwargs)
    if kind == "logpdf":
        return family.partials(*values)[i]
    if kind == "pdf" and family.density_partials is not None:
        return family.density_partials(ans, *values)[i]
    if kind == "pdf":  # 0 where the density is 0 (at the edge of the support, log y is -inf)
        return zero_where_zero(ans * family.partials(*values)[i], ans)
    log_ratio = family.log_density(*values)
    if kind in ("logcdf", "logsf"):
        log_ratio = log_ratio - ans
    weight = family.weights(*values)[i]
    return (-weight if kind in ("sf", "logsf") else weight) * _finite_density(np.exp(log_ratio))


def _finite_density(density):
    """The density, taken as 0 where it is infinite: at the edge of the support (chi2 with df < 2, gamma or
    beta with a shape below 1), the slope of the cdf is +inf inside and 0 outside; the rule takes the one
    that exists, 0 (an infinite slope in x and its opposite in loc would sum to NaN in forward mode)."""
    return np.where(np.isinf(density), 0.0, density)


def _vjp(family, kind, i):
    def vjp(g, ans, *args, **kwargs):
        return cast_like(unbroadcast(g * _slope(family, kind, i, ans, args, kwargs), args[i]), args[i])

    return vjp


def _jvp(family, kind, i):
    def jvp(t, ans, *args, **kwargs):
        return t * _slope(family, kind, i, ans, args, kwargs)

    return jvp


def _poisson_cdf_log_density(k, mu, loc=0):
    """The cdf's slope in mu is -pmf(floor(k)): the log density at the last count the cdf includes."""
    return stats.poisson.logpmf(np.floor(k), mu, loc)


_CONTINUOUS = [
    _Family(stats.norm, "norm", {"x": _REQUIRED, "loc": 0.0, "scale": 1.0}, _norm_partials, _location_scale_weights(1)),
    _Family(stats.t, "t", {"x": _REQUIRED, "df": _REQUIRED, "loc": 0.0, "scale": 1.0}, _t_partials,
            _location_scale_weights(2)),
    _Family(stats.gamma, "gamma", {"x": _REQUIRED, "a": _REQUIRED, "loc": 0.0, "scale": 1.0}, _gamma_partials,
            _location_scale_weights(2)),
    _Family(stats.chi2, "chi2", {"x": _REQUIRED, "df": _REQUIRED, "loc": 0.0, "scale": 1.0}, _chi2_partials,
            _location_scale_weights(2)),
    _Family(stats.beta, "beta", {"x": _REQUIRED, "a": _REQUIRED, "b": _REQUIRED, "loc": 0.0, "scale": 1.0},
            _beta_partials, _location_scale_weights(3)),
]
for _family in _CONTINUOUS:
    _every = [True] * len(_family.names)
    _no_shapes = [w is not None for w in _family.weights(*[1.0] * len(_family.names))]
    for _method, _kind in (("logpdf", "logpdf"), ("pdf", "pdf")):
        _family.register(_method, _kind, _every)
    for _method in ("cdf", "logcdf", "sf", "logsf"):
        _rule = _family.register(_method, _method, _no_shapes)
        _rule.extra["no_derivative"] = {
            i: (f"adsrc.register_adjoint(scipy.stats.{_family.label}.{_method}, ...) giving a vjp for {name!r} "
                f"too (adsrc implements none: the derivative in a shape parameter has no closed form), or pass "
                f"a constant there")
            for i, (name, ok) in enumerate(zip(_family.names, _no_shapes)) if not ok}
        edge = "; the slope is 0 where the density is infinite (the edge of the support)" if _family.label in (
            "chi2", "gamma", "beta") else ""
        note(f"no gradient in the shape parameters (refused: no closed form){edge}", _rule)

_POISSON = _Family(stats.poisson, "poisson", {"k": _REQUIRED, "mu": _REQUIRED, "loc": 0}, _poisson_partials,
                   _poisson_weights, density="pmf", log_density=_poisson_cdf_log_density,
                   density_partials=_poisson_pmf_partials)
for _method, _kind in (("logpmf", "logpdf"), ("pmf", "pdf"), ("cdf", "cdf"), ("logcdf", "logcdf"), ("sf", "sf"),
                      ("logsf", "logsf")):
    note("differentiable in mu (k and loc are integers)", _POISSON.register(_method, _kind, [False, True, False]))
