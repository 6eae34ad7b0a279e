"""Small semantics users of other AD libraries rely on: ``None`` cotangent parts, operator functions on complex values.

Each gradient is checked against central finite differences.
"""
from __future__ import annotations

import operator

import numpy as np

import adsrc


def pair(x):
    return np.sin(x), x ** 2


def test_a_none_part_of_a_cotangent_is_zero():
    x = np.array([0.5, 1.0])
    _, pullback = adsrc.vjp(pair, x)
    np.testing.assert_allclose(pullback((np.ones(2), None)), np.cos(x))
    np.testing.assert_allclose(pullback((None, np.ones(2))), 2 * x)


def operators(z):
    return abs(operator.mul(z, 2.0)) + abs(operator.add(z, 1.0)) + abs(operator.sub(z, 1j)) \
        + abs(operator.truediv(z, 3.0)) + abs(operator.neg(z) * z)


def test_operator_functions_accept_complex_values_as_the_operators_do():
    z, eps = 1.0 + 2.0j, 1e-6
    expected = (operators(z + eps) - operators(z - eps)) / (2 * eps) \
        - 1j * (operators(z + 1j * eps) - operators(z - 1j * eps)) / (2 * eps)
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            gradient = adsrc.grad(operators)(z)
        assert abs(gradient - expected) < 1e-6
