"""adsrc.fixed_point: the iteration, its refusal to return unconverged, and its derivatives by the implicit
function theorem, against central finite differences in float64 (lazy and eager), closed forms, and forward
mode."""
import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import check, numerical_jvp

W = np.array([[0.3, -0.2, 0.1], [0.05, 0.25, -0.3], [-0.1, 0.2, 0.2]])
A = np.array([0.5, -0.4, 0.9])


def babylonian(a, x):
    return 0.5 * (x + a / x)


def root(a):
    return adsrc.fixed_point(babylonian, a, np.ones_like(a))


def contraction(a, x):
    return np.tanh(W @ x + a)


def squared_equilibrium(a):
    return np.sum(adsrc.fixed_point(contraction, a, np.zeros(3)) ** 2)


def equilibrium_loss(a, weights):
    x = adsrc.fixed_point(lambda a, x: np.tanh(weights @ x + a), a, np.zeros(3))  # captures weights
    return np.sum(x * np.arange(1.0, 4.0))


def unrolled_loss(a, weights, steps=200):
    x = np.zeros(3)
    for _ in range(steps):
        x = np.tanh(weights @ x + a)
    return np.sum(x * np.arange(1.0, 4.0))


def test_the_solution_is_a_fixed_point():
    x = adsrc.fixed_point(contraction, A, np.zeros(3))
    np.testing.assert_allclose(x, contraction(A, x), atol=1e-10)
    np.testing.assert_allclose(root(np.array([2.0, 9.0])), [np.sqrt(2.0), 3.0], rtol=1e-12)


def test_sqrt_by_babylonian_iteration_has_gradient_one_over_two_sqrt():
    a = np.array([0.5, 2.0, 9.0])
    def loss(a):
        return np.sum(root(a))
    got = check(loss, a)
    np.testing.assert_allclose(got, 0.5 / np.sqrt(a), rtol=1e-10)
    def scalar(a):
        return adsrc.fixed_point(babylonian, a, 1.0)
    assert abs(adsrc.grad(scalar)(4.0) - 0.25) < 1e-12


def test_a_contraction_matches_differences_and_the_unrolled_loop():
    check(squared_equilibrium, A)
    got = check(equilibrium_loss, A, W, wrt=(0, 1))  # the captured matrix gets its gradient too
    reference = adsrc.grad(unrolled_loss, wrt=(0, 1))(A, W)
    np.testing.assert_allclose(got[0], reference[0], rtol=1e-8, atol=1e-10)
    np.testing.assert_allclose(got[1], reference[1], rtol=1e-8, atol=1e-10)


def test_forward_mode_solves_the_tangent_equation():
    ta, tw = np.array([1.0, -0.5, 0.25]), np.full((3, 3), 0.1)
    value, tangent = adsrc.jvp(equilibrium_loss, (A, W), (ta, tw))
    np.testing.assert_allclose(value, equilibrium_loss(A, W))
    np.testing.assert_allclose(tangent, numerical_jvp(equilibrium_loss, (A, W), (ta, tw)), rtol=1e-6)
    gradient = adsrc.grad(equilibrium_loss, wrt=(0, 1))(A, W)
    np.testing.assert_allclose(tangent, np.sum(gradient[0] * ta) + np.sum(gradient[1] * tw), rtol=1e-9)


def test_pytree_parameters_and_state():
    def step(p, x):
        return {"s": 0.5 * (x["s"] + p["c"] / x["s"]), "t": np.tanh(p["w"] * x["t"] + p["b"])}

    def loss(p):
        x = adsrc.fixed_point(step, p, {"s": 1.0, "t": np.zeros(2)})
        return x["s"] + np.sum(x["t"] ** 2)

    p = {"c": 3.0, "w": np.array([0.4, -0.3]), "b": np.array([0.2, 0.7])}
    for eager in (False, True):
        g = adsrc.grad(loss, eager=eager)(p)
        assert set(g) == {"c", "w", "b"}
        np.testing.assert_allclose(g["c"], 0.5 / np.sqrt(3.0), rtol=1e-10)
        for key in ("w", "b"):
            direction = {k: (np.ones_like(v) if k == key else np.zeros_like(v)) if isinstance(v, np.ndarray)
                         else 0.0 for k, v in p.items()}
            def along(h, key=key, direction=direction):
                return loss({k: v + h * direction[k] for k, v in p.items()})
            fd = (along(1e-6) - along(-1e-6)) / 2e-6
            np.testing.assert_allclose(np.sum(g[key]), fd, rtol=1e-6)


def test_the_starting_point_gets_no_gradient():
    def loss(x0):
        return np.sum(adsrc.fixed_point(babylonian, 4.0, x0))
    np.testing.assert_allclose(adsrc.grad(loss)(np.array([1.0, 3.0])), 0.0)


def test_non_convergence_raises_and_never_returns():
    with pytest.raises(errors.NotConverged, match="did not converge in 30 iterations"):
        adsrc.fixed_point(lambda a, x: 2.0 * x + a, 1.0, 1.0, max_iter=30)
    with pytest.raises(errors.NotConverged):  # overflows to inf, then NaN: stops at once
        adsrc.fixed_point(lambda a, x: x * x + a, 1.0, 2.0)
    with pytest.raises(errors.NotConverged):
        adsrc.grad(lambda a: adsrc.fixed_point(babylonian, a, 1.0, max_iter=3))(2.0)
    with pytest.raises(errors.InvalidArgument, match="max_iter"):
        adsrc.fixed_point(babylonian, 2.0, 1.0, max_iter=0)


def test_the_adjoint_solve_raises_when_it_does_not_converge():
    # converges forward (x* = 0 attracts), but the adjoint equation's iteration needs more steps than allowed
    def slow(a, x):
        return 0.999 * x + 0.0 * a
    def loss(a):
        return adsrc.fixed_point(slow, a, 1e-12, tol=1e-3, max_iter=5)
    with pytest.raises(errors.NotConverged, match="the adjoint of fixed_point"):
        adsrc.grad(loss)(1.0)


def test_second_order_is_refused():
    with pytest.raises(errors.NotDifferentiable, match="second derivatives through adsrc.fixed_point"):
        adsrc.hessian(squared_equilibrium)(A)
