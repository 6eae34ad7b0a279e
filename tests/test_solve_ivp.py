"""scipy.integrate.solve_ivp differentiated (api/ode_ivp.py): the adjoint ODE backward, the sensitivities forward.

Every gradient and tangent is checked against central finite differences of
the whole solve_ivp call (tight tolerances on both sides), lazy and eager, for
explicit and implicit methods; every refusal names the user's function.
"""
import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument, UnsupportedSyntax
from gradcheck import numerical_grad as _central

scipy_integrate = pytest.importorskip("scipy.integrate")
solve_ivp = scipy_integrate.solve_ivp

RTOL, ATOL = 1e-10, 1e-12  # by name: a differentiable keyword (args=) is not passed beside a **mapping
T = np.linspace(0.0, 2.0, 6)


def damped_oscillator(t, y, k, c):
    return np.array([y[1], -k * y[0] - c * y[1] + np.sin(t)])


def oscillator_loss(y0, k, c, method="RK45"):
    sol = solve_ivp(damped_oscillator, (0.0, 2.0), y0, method=method, t_eval=T, args=(k, c), rtol=RTOL, atol=ATOL)
    return np.sum(sol.y[0] ** 2) + sol.y[1, -1] + np.sum(sol.t * sol.y[0])  # sol.t: no gradient, a factor


def logistic_growth(t, y, rates, power):  # a vector of parameters, an int held fixed
    return rates * y * (1.0 - y ** power)


def growth_loss(y0, rates, method="RK45"):
    sol = solve_ivp(logistic_growth, [0.0, 2.0], y0, method, t_eval=T[1:], args=(rates, 2), rtol=RTOL, atol=ATOL)
    return np.sum(np.log(sol["y"][:, -1])) + np.sum(sol.y[:, 1] ** 2)


def last_state(y0, k):  # the last state only, y0 at t_span[0] before the first time asked
    sol = solve_ivp(damped_oscillator, (0.0, 3.0), y0, t_eval=[3.0], args=(k, 0.2), method="DOP853",
                    rtol=RTOL, atol=ATOL)
    final = sol.y[:, -1]
    return final[0] * final[1] + final[0] ** 2


def backward_in_time(y0, k):  # t_span decreasing, method and t_eval by position, an atol per component
    sol = solve_ivp(damped_oscillator, (2.0, 0.0), y0, "LSODA", np.array([1.5, 0.5, 0.0]), args=(k, 0.1),
                    rtol=RTOL, atol=np.array([1e-12, 1e-11]))
    return np.sum(sol.y ** 2)


def decay(t, y):
    return -0.5 * y * (1.0 + 0.1 * np.sin(t))


def without_args(y0):
    return np.sum(solve_ivp(decay, (0.0, 1.0), y0, t_eval=[0.5, 1.0], rtol=RTOL, atol=ATOL).y[:, -1] ** 2)


OSCILLATOR = (np.array([1.0, 0.2]), 2.0, 0.3)
GROWTH = (np.array([0.1, 0.3, 0.6]), np.array([0.5, 1.0, 1.5]))
CASES = [(oscillator_loss, OSCILLATOR, "RK45"), (oscillator_loss, OSCILLATOR, "DOP853"),
         (oscillator_loss, OSCILLATOR, "Radau"), (oscillator_loss, OSCILLATOR, "LSODA"),
         (growth_loss, GROWTH, "RK45"), (growth_loss, GROWTH, "BDF"),
         (last_state, (np.array([1.0, -0.5]), 1.5), None),
         (backward_in_time, (np.array([1.0, 0.3]), 1.3), "LSODA"), (without_args, (np.array([1.0, 2.0]),), None)]
IDS = ["oscillator-RK45", "oscillator-DOP853", "oscillator-Radau", "oscillator-LSODA", "logistic-RK45",
       "logistic-BDF", "last-state-DOP853", "backward-LSODA", "without-args"]


def _at(f, method):
    return f if method is None or f is backward_in_time else (lambda *args: f(*args, method=method))


def _tolerance(method):  # the implicit methods' own error, at these tolerances, is a little larger
    return dict(rtol=1e-6, atol=1e-8) if method in (None, "RK45", "DOP853") else dict(rtol=2e-5, atol=1e-7)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f, args, method", CASES, ids=IDS)
def test_the_gradient_of_solve_ivp_matches_finite_differences(f, args, method, eager):
    wrt = tuple(range(len(args)))
    g = adsrc.value_and_grad(_at(f, method), wrt=wrt, eager=eager)
    value, grads = g(*args)
    assert value == _at(f, method)(*args)
    for i, grad in zip(wrt, grads):
        np.testing.assert_allclose(grad, _central(_at(f, method), args, i), **_tolerance(method))


@pytest.mark.parametrize("f, args, method", [CASES[i] for i in (0, 2, 5, 6, 7)], ids=[IDS[i] for i in (0, 2, 5, 6, 7)])
def test_the_tangent_of_solve_ivp_matches_finite_differences(f, args, method):
    rng = np.random.default_rng(3)
    directions = tuple(rng.standard_normal(np.shape(a)) if np.ndim(a) else float(rng.standard_normal())
                       for a in args)
    value, tangent = adsrc.jvp(_at(f, method), args, directions)
    expected = sum(np.sum(_central(_at(f, method), args, i) * d) for i, d in enumerate(directions))
    assert value == _at(f, method)(*args)
    np.testing.assert_allclose(tangent, expected, **_tolerance(method))


def test_the_gradient_of_the_whole_trajectory_is_the_jacobians_transpose():
    def trajectory(y0, k):
        return solve_ivp(damped_oscillator, (0.0, 2.0), y0, t_eval=T, args=(k, 0.3), rtol=RTOL, atol=ATOL).y

    y0 = np.array([1.0, 0.2])
    forward = adsrc.jacobian(trajectory, wrt=0, mode="fwd")(y0, 2.0)
    reverse = adsrc.jacobian(trajectory, wrt=0)(y0, 2.0)
    assert forward.shape == (2, len(T), 2)
    np.testing.assert_allclose(forward, reverse, rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(reverse[:, 0, :], np.eye(2))  # y at t = 0 is y0


def _refused(keyword, value):
    def f(y0):
        options = {"t_eval": T, keyword: value} if keyword != "t_eval" else {keyword: value}
        method = "Radau" if keyword == "jac" else "RK45"  # where jac has an effect
        return np.sum(solve_ivp(damped_oscillator, (0.0, 2.0), y0, method, args=(2.0, 0.1), **options).y[:, -1])
    return f


def _jac(t, y, k, c):
    return np.array([[0.0, 1.0], [-k, -c]])


def _event(t, y, k, c):
    return y[0]


REFUSED = [("dense_output", True, "dense_output="), ("events", _event, "events="),
           ("vectorized", True, "vectorized="), ("jac", _jac, "jac="), ("t_eval", None, "no t_eval")]


@pytest.mark.parametrize("keyword, value, said", REFUSED, ids=[r[0] for r in REFUSED])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_what_the_rule_does_not_differentiate_is_refused_naming_the_function(keyword, value, said, mode):
    f = _refused(keyword, value)
    with pytest.raises(InvalidArgument, match=said) as error:
        if mode == "reverse":
            adsrc.grad(f)(np.array([1.0, 0.0]))
        else:
            adsrc.jvp(f, (np.array([1.0, 0.0]),), (np.array([1.0, 0.0]),))
    assert "damped_oscillator" in str(error.value) and "test_solve_ivp.py" in str(error.value)


def _over_t_span(t1):
    return solve_ivp(damped_oscillator, (0.0, t1), np.array([1.0, 0.0]), t_eval=[1.0], args=(2.0, 0.1)).y[0, -1]


def _over_t_eval(t1):
    return solve_ivp(damped_oscillator, (0.0, 2.0), np.array([1.0, 0.0]), t_eval=np.array([0.5, t1]),
                     args=(2.0, 0.1)).y[0, -1]


@pytest.mark.parametrize("f, what", [(_over_t_span, "t_span"), (_over_t_eval, "t_eval")], ids=["t_span", "t_eval"])
@pytest.mark.parametrize("mode", ["reverse", "forward"])
def test_a_gradient_with_respect_to_the_times_is_refused(f, what, mode):
    with pytest.raises(InvalidArgument, match=f"with respect to {what}") as error:
        if mode == "reverse":
            adsrc.grad(f)(1.5)
        else:
            adsrc.jvp(f, (1.5,), (1.0,))
    assert "test_solve_ivp.py" in str(error.value)


def _twice(k):
    return solve_ivp(damped_oscillator, (0.0, 1.0), np.array([1.0, 0.0]), t_eval=[1.0], args=(k, 0.1)).y[0, -1]


def test_a_second_derivative_through_solve_ivp_is_refused_naming_the_function():
    with pytest.raises(InvalidArgument, match="second derivative through solve_ivp") as error:
        adsrc.grad(adsrc.grad(_twice))(2.0)
    assert "test_solve_ivp.py" in str(error.value)


def _capturing(k):
    def rhs(t, y):
        return -k * y

    return solve_ivp(rhs, (0.0, 1.0), np.array([1.0]), t_eval=[1.0]).y[0, -1]


def test_a_function_that_captures_a_differentiable_value_is_refused():  # pass the value through args
    with pytest.raises(UnsupportedSyntax, match="captures differentiable values") as error:
        adsrc.grad(_capturing)(0.5)
    assert "test_solve_ivp.py" in str(error.value)
