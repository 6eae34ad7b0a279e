"""scipy.integrate.odeint differentiated (api/ode.py): the adjoint ODE backward, the sensitivities forward.

Every gradient and tangent is checked against central finite differences of
odeint itself (tight tolerances on both sides), lazy and eager.
"""
import numpy as np
import pytest

import adsrc
from adsrc.errors import AdsrcError, InvalidArgument

scipy_integrate = pytest.importorskip("scipy.integrate")
odeint = scipy_integrate.odeint

TIGHT = dict(rtol=1e-11, atol=1e-11)
T = np.linspace(0.0, 2.0, 6)


def _central(f, args, i, h=1e-6):
    args = list(args)
    x = args[i]
    if np.ndim(x) == 0:
        up, down = list(args), list(args)
        up[i], down[i] = x + h, x - h
        return (f(*up) - f(*down)) / (2 * h)
    out = np.zeros(np.shape(x))
    for k in np.ndindex(np.shape(x)):
        e = np.zeros(np.shape(x))
        e[k] = h
        up, down = list(args), list(args)
        up[i], down[i] = x + e, x - e
        out[k] = (f(*up) - f(*down)) / (2 * h)
    return out


def forced_oscillator(y, t, k, c):
    return np.array([y[1], -k * y[0] - c * y[1] + np.sin(t)])


def oscillator_loss(y0, k, c):
    ys = odeint(forced_oscillator, y0, T, (k, c), **TIGHT)
    return np.sum(ys[:, 0] ** 2) + ys[-1, 1]


def logistic_growth(t, y, rates, power):  # tfirst=True, a vector of parameters
    return rates * y * (1.0 - y ** power)


def growth_loss(y0, rates):
    ys = odeint(logistic_growth, y0, T, (rates, 2), tfirst=True, **TIGHT)  # an int argument: held fixed
    return np.sum(np.log(ys[-1]))


CASES = [(oscillator_loss, (np.array([1.0, 0.2]), 2.0, 0.3)),
         (growth_loss, (np.array([0.1, 0.3, 0.6]), np.array([0.5, 1.0, 1.5])))]


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f, args", CASES, ids=["oscillator", "logistic"])
def test_the_gradient_of_odeint_matches_finite_differences(f, args, eager):
    wrt = tuple(range(len(args)))
    value, grads = adsrc.value_and_grad(f, wrt=wrt, eager=eager)(*args)
    assert value == f(*args)
    for i, g in zip(wrt, grads):
        np.testing.assert_allclose(g, _central(f, args, i), rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("f, args", CASES, ids=["oscillator", "logistic"])
def test_the_tangent_of_odeint_matches_finite_differences(f, args):
    rng = np.random.default_rng(3)
    directions = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
                       for a in args)
    value, tangent = adsrc.jvp(f, args, directions)
    expected = sum(np.sum(_central(f, args, i) * d) for i, d in enumerate(directions))
    assert value == f(*args)
    np.testing.assert_allclose(tangent, expected, rtol=1e-5, atol=1e-7)


def _twice(k):
    return odeint(forced_oscillator, np.array([1.0, 0.0]), T, (k, 0.1))[-1, 0]


def test_a_second_derivative_through_odeint_is_refused_naming_the_function():
    with pytest.raises(InvalidArgument, match="second derivative through odeint") as error:
        adsrc.grad(adsrc.grad(_twice))(2.0)
    assert "test_odeint.py" in str(error.value)


def _with_dfun(y0):
    return odeint(forced_oscillator, y0, T, (2.0, 0.1), Dfun=lambda y, t, k, c: np.eye(2))[-1, 0]


def _over_time(t1):
    return odeint(forced_oscillator, np.array([1.0, 0.0]), np.array([0.0, t1]), (2.0, 0.1))[-1, 0]


@pytest.mark.parametrize("f, x", [(_with_dfun, np.array([1.0, 0.0])), (_over_time, 1.0)], ids=["Dfun", "t"])
def test_what_the_rule_does_not_differentiate_is_refused(f, x):
    with pytest.raises(AdsrcError):
        adsrc.grad(f)(x)
