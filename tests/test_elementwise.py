"""adsrc.elementwise_grad: the vjp with a cotangent of ones, checked against finite differences and a loop of
scalar gradients, lazy and eager."""
import numpy as np
import pytest

import adsrc
from gradcheck import numerical_jvp

X = np.array([0.3, -0.7, 1.2, 2.0])


def cube(x):
    return x ** 3


def softplus_scaled(x, scale=2.0):
    return np.log1p(np.exp(scale * x)) / scale


@pytest.mark.parametrize("func", [np.tanh, np.exp, np.sin, cube, softplus_scaled], ids=lambda f: f.__name__)
@pytest.mark.parametrize("eager", [False, True])
def test_elementwise_functions_match_differences_and_a_loop_of_scalar_grads(func, eager):
    got = adsrc.elementwise_grad(func, eager=eager)(X)
    assert got.shape == X.shape and got.dtype == X.dtype
    np.testing.assert_allclose(got, numerical_jvp(func, (X,), (np.ones_like(X),)), rtol=1e-6)
    scalar = adsrc.grad(func, eager=eager)
    np.testing.assert_allclose(got, [scalar(float(v)) for v in X], rtol=1e-12)


def test_other_arguments_wrt_and_keywords():
    def scaled(x, a):
        return np.sin(a * x)
    dx = adsrc.elementwise_grad(scaled)(X, 2.0)
    np.testing.assert_allclose(dx, 2.0 * np.cos(2.0 * X))
    da = adsrc.elementwise_grad(scaled, wrt=1)(X, 2.0)  # the gradient of sum(f) with respect to a
    np.testing.assert_allclose(da, np.sum(X * np.cos(2.0 * X)))
    both = adsrc.elementwise_grad(scaled, argnums=(0, 1))(X, 2.0)
    np.testing.assert_allclose(both[0], dx)
    np.testing.assert_allclose(both[1], da)
    np.testing.assert_allclose(adsrc.elementwise_grad(softplus_scaled)(X, scale=3.0),
                               1.0 / (1.0 + np.exp(-3.0 * X)))


def test_a_non_elementwise_function_gives_the_sum_of_the_jacobians_rows():
    def mix(x):
        return np.cumsum(x) * x
    jac = adsrc.jacobian(mix)(X)
    np.testing.assert_allclose(adsrc.elementwise_grad(mix)(X), np.sum(jac, axis=0))


def test_scalars_and_structured_outputs():
    np.testing.assert_allclose(adsrc.elementwise_grad(np.tanh)(0.5), 1.0 - np.tanh(0.5) ** 2)

    def pair(x):
        return x ** 2, {"e": np.exp(x)}
    np.testing.assert_allclose(adsrc.elementwise_grad(pair)(X), 2 * X + np.exp(X))
