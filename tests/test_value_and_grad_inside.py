"""value_and_grad(f) called inside a differentiated function, or differentiated itself (second order).

Its cotangent is a pair (of the value, of the gradients): the value's part pulls
back through grad(f), the gradients' part through the Hessian. Each gradient is
checked against central finite differences of the function, lazy and eager.
"""
import numpy as np
import pytest

import adsrc


def _central(f, x, h=1e-6):
    x = np.asarray(x, float)
    out = np.zeros_like(x)
    for k in range(x.size):
        e = np.zeros_like(x)
        e.flat[k] = h
        out.flat[k] = (f(x + e) - f(x - e)) / (2 * h)
    return out


def energy(a):
    return np.sum(np.sin(a) * a)


def two(a, b):
    return np.sum(np.tanh(a * b) + a ** 2 * b[0])


def both_parts(a):
    v, g = adsrc.value_and_grad(energy)(a)
    return v * 0.5 + np.sum(g * g)


def value_part_only(a):
    v, _ = adsrc.value_and_grad(energy)(a)
    return v ** 2


def gradient_part_only(a):
    _, g = adsrc.value_and_grad(energy)(a)
    return np.sum(np.cos(g))


def kept_in_a_variable(a):
    step = adsrc.value_and_grad(energy)
    v, g = step(a)
    a = a - 0.1 * g
    v2, g2 = step(a)
    return v + v2 + np.sum(g2)


def two_gradients(a):
    v, (ga, gb) = adsrc.value_and_grad(two, wrt=(0, 1))(a, a[::-1] * 0.5)
    return v + np.sum(ga * gb)


def one_of_two(a):
    v, gb = adsrc.value_and_grad(two, wrt=1)(a * 2.0, a)
    return v * np.sum(gb)


A = np.array([0.3, -0.8, 1.1])


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", [both_parts, value_part_only, gradient_part_only, kept_in_a_variable, two_gradients,
                               one_of_two])
def test_value_and_grad_inside_a_differentiated_function(f, eager):
    value, gradient = adsrc.value_and_grad(f, eager=eager)(A)
    assert value == f(A)
    np.testing.assert_allclose(gradient, _central(f, A), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("eager", [False, True])
def test_the_vjp_of_value_and_grad(eager):
    with adsrc.eager_unthunk(eager):
        (v, g), pullback = adsrc.vjp(adsrc.value_and_grad(energy), A)
        w = np.array([1.0, 2.0, -1.0])
        got = pullback((2.0, w))
        only_value = pullback((3.0, None))
    assert v == energy(A)
    np.testing.assert_allclose(g, adsrc.grad(energy)(A))
    expected = _central(lambda a: 2.0 * energy(a) + np.dot(adsrc.grad(energy)(a), w), A)
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(only_value, 3.0 * adsrc.grad(energy)(A), rtol=1e-12)


def test_a_cotangent_that_is_not_a_pair_is_refused():
    _, pullback = adsrc.vjp(adsrc.value_and_grad(energy), A)
    with pytest.raises(adsrc.errors.InvalidArgument, match="pair"):
        pullback(np.ones(3))
