"""A rule registered with a vjp only: forward mode and second order through its derived tangent.

The tangent is the transpose of the user's vjp (api/derived_tangents.py). Each
result is checked against central finite differences of the first derivative
(or of the function), in lazy and eager mode; a vjp adsrc cannot differentiate
is refused with NoGradientRule naming the vjp's file:line.
"""
import numpy as np
import pytest

import adsrc
from adsrc.errors import NoGradientRule
from adsrc.rules.registry import defjvp


def _central(f, x, h=1e-6):
    x = np.asarray(x, float)
    cols = []
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        cols.append((np.asarray(f(x + e)) - np.asarray(f(x - e))) / (2 * h))
    return np.stack(cols, axis=-1)


def softplus(x):
    return np.log1p(np.exp(x))


def softplus_vjp(g, ans, x):
    return g / (1.0 + np.exp(-x))


adsrc.register_adjoint(softplus, softplus_vjp)


def scaled(a, x):
    return a * np.sin(x)


@adsrc.register_adjoint(scaled)
def scaled_vjps(g, ans, a, x):  # the decorator form: every argument's contribution at once
    return np.sum(g * np.sin(x)), g * a * np.cos(x)


def pair(x):
    return np.sin(x), x ** 2


def pair_vjp(g, ans, x):
    gs, gq = g
    return gs * np.cos(x) + 2.0 * gq * x


adsrc.register_adjoint(pair, pair_vjp)


def through_softplus(x):
    return np.sum(softplus(x) * x)


def through_scaled(x):
    return np.sum(scaled(x[0], x) ** 2)


def through_pair(x):
    s, q = pair(x)
    return np.sum(s * q)


X = np.array([0.4, -0.7, 1.3])


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", [through_softplus, through_scaled, through_pair])
def test_hessian_through_a_vjp_only_rule_matches_finite_differences(f, eager):
    with adsrc.eager_unthunk(eager):
        hess = adsrc.hessian(f)(X)
    expected = _central(adsrc.grad(f, eager=eager), X)
    np.testing.assert_allclose(hess, expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", [through_softplus, through_scaled, through_pair])
def test_jvp_and_hvp_through_a_vjp_only_rule(f, eager):
    v = np.array([0.3, 1.0, -2.0])
    with adsrc.eager_unthunk(eager):
        value, tangent = adsrc.jvp(f, (X,), (v,))
        product = adsrc.hvp(f)(X, v)
    assert value == f(X)
    np.testing.assert_allclose(tangent, _central(f, X) @ v, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(product, _central(adsrc.grad(f), X) @ v, rtol=1e-6, atol=1e-7)


def test_forward_jacobian_through_a_vjp_only_rule():
    np.testing.assert_allclose(adsrc.jacobian(softplus)(X), _central(softplus, X), rtol=1e-6, atol=1e-8)


def test_a_tangent_of_ones_own_replaces_the_derived_one():
    def double(x):
        return 2.0 * x

    adsrc.register_adjoint(double, lambda g, ans, x: 2.0 * g)
    assert adsrc.jvp(lambda x: np.sum(double(x)), (X,), (np.ones(3),))[1] == pytest.approx(6.0)
    defjvp(double, lambda t, ans, x: 5.0 * t)  # deliberately not double's tangent: it must be the one used
    assert adsrc.jvp(lambda x: np.sum(double(x)), (X,), (np.ones(3),))[1] == pytest.approx(15.0)


def guarded(x):
    return 2.0 * x


def guarded_vjp(g, ans, x):  # a try statement: adsrc does not differentiate it
    try:
        return 2.0 * g
    except FloatingPointError:
        return 0.0 * g


adsrc.register_adjoint(guarded, guarded_vjp)


def through_guarded(x):
    return np.sum(guarded(x) * x)


def test_a_vjp_adsrc_cannot_differentiate_is_refused_naming_its_line():
    np.testing.assert_allclose(adsrc.grad(through_guarded)(X), 4.0 * X)
    line = guarded_vjp.__code__.co_firstlineno
    with pytest.raises(NoGradientRule, match=rf"test_derived_tangents.py:{line}:.*guarded.*defjvp"):
        adsrc.jvp(through_guarded, (X,), (np.ones(3),))
    with pytest.raises(adsrc.AdsrcError, match="guarded"):
        adsrc.hessian(through_guarded)(X)
