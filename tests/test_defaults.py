"""Default values that are objects (``nonlinearity=np.tanh``, an array, a callable object), as Python reads them.

Python evaluates a default once, when the ``def`` runs; a call that leaves a
parameter to such a default binds its arguments when it runs, with that very
object (calls.py), so the gradient is the function's at the default. Each
gradient is checked against central finite differences, lazy and eager.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from gradcheck import numerical_grad


def fd(f, x, *rest):
    return numerical_grad(f, (x, *rest), 0)


class Scale:
    def __init__(self, k):
        self.k = k

    def __call__(self, v):
        return v * self.k


SHIFT = np.array([0.1, -0.2])


def nn_predict(params, X, nonlinearity=np.tanh):
    return nonlinearity(X @ params)


def with_array_default(params, X, shift=SHIFT):
    return np.sin(X @ params + shift)


def with_object_default(params, X, act=Scale(2.5)):
    return act(X @ params) ** 2


def with_keyword_only(params, X, *, act=np.sin, scale=1.5):
    return act(X @ params) * scale


def by_default(params, X):
    return np.sum(nn_predict(params, X) ** 2)


def by_keyword_given(params, X):
    return np.sum(nn_predict(params, X, nonlinearity=np.sin))


def array_default(params, X):
    return np.sum(with_array_default(params, X))


def object_default(params, X):
    return np.sum(with_object_default(params, X))


def keyword_only_default(params, X):
    return np.sum(with_keyword_only(params, X))


def in_a_loop(params, X):
    total = 0.0
    for _ in range(3):
        total = total + np.sum(nn_predict(params * 0.5, X))
    return total


@pytest.mark.parametrize("f", [by_default, by_keyword_given, array_default, object_default, keyword_only_default,
                               in_a_loop])
@pytest.mark.parametrize("eager", [False, True])
def test_object_defaults(f, eager):
    params, X = np.array([0.3, -0.1, 0.2]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    with adsrc.eager_unthunk(eager):
        value, gradient = adsrc.value_and_grad(f)(params, X)
    assert value == f(params, X)
    np.testing.assert_allclose(gradient, fd(f, params, X), rtol=1e-6, atol=1e-9)


def test_a_changed_default_is_read_at_the_next_call():
    def loss(p):
        return np.sum(scaled(p))

    def scaled(p, k=np.array([2.0, 2.0])):
        return p * k

    p = np.array([1.0, 1.0])
    np.testing.assert_allclose(adsrc.grad(loss)(p), [2.0, 2.0])
    scaled.__defaults__ = (np.array([3.0, 3.0]),)
    np.testing.assert_allclose(adsrc.grad(loss)(p), [3.0, 3.0])


def test_forward_mode_with_a_default_object():
    params, X = np.array([0.3, -0.1, 0.2]), np.linspace(-1.0, 1.0, 6).reshape(2, 3)
    t = np.array([1.0, 0.5, -0.5])
    _, tangent = adsrc.jvp(lambda p: by_default(p, X), (params,), (t,))
    np.testing.assert_allclose(tangent, fd(by_default, params, X) @ t, rtol=1e-6)
