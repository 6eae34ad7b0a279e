"""A function with a gradient rule given to the API itself (grad(np.sin)): every derivative API goes
through one generated caller (adsrc/api/primitives.py); a library function with no rule is refused."""
import math

import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import check, numerical_grad, numerical_jvp

X = np.array([0.3, -0.7, 1.2])
POSITIVE = np.array([0.3, 0.7, 1.2])

SCALAR_VALUED = [(np.sum, X), (np.prod, X), (np.linalg.norm, X), (np.max, X), (np.mean, X),
                 (np.sin, 0.4), (np.sqrt, 2.0), (math.exp, 0.3), (np.var, X)]
ELEMENTWISE = [np.sin, np.tanh, np.exp, np.sqrt, np.log, np.arctan, abs]


@pytest.mark.parametrize("func,x", SCALAR_VALUED, ids=lambda v: getattr(v, "__name__", ""))
def test_grad_and_value_and_grad_of_a_primitive_match_finite_differences(func, x):
    check(func, x)  # lazy and eager, value included
    np.testing.assert_allclose(adsrc.grad(func)(x), numerical_grad(func, (x,), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("func", ELEMENTWISE, ids=lambda f: f.__name__)
def test_jvp_vjp_and_jacobian_of_an_elementwise_primitive(func):
    t = np.array([1.0, -2.0, 0.5])
    value, tangent = adsrc.jvp(func, (POSITIVE,), (t,))
    np.testing.assert_allclose(value, func(POSITIVE))
    np.testing.assert_allclose(tangent, numerical_jvp(func, (POSITIVE,), (t,)), rtol=1e-6)
    for eager in (False, True):
        _, pullback = adsrc.vjp(func, POSITIVE, eager=eager)
        np.testing.assert_allclose(pullback(t), numerical_jvp(func, (POSITIVE,), (t,)), rtol=1e-6)
    jac = adsrc.jacobian(func)(POSITIVE)
    np.testing.assert_allclose(np.diag(jac), numerical_jvp(func, (POSITIVE,), (np.ones(3),)), rtol=1e-6)
    np.testing.assert_allclose(jac - np.diag(np.diag(jac)), 0.0)


@pytest.mark.parametrize("func", [np.sin, np.exp, np.tanh, np.sqrt], ids=lambda f: f.__name__)
def test_second_derivatives_of_a_primitive(func):
    first = adsrc.grad(func)
    expected = (first(0.7 + 1e-5) - first(0.7 - 1e-5)) / 2e-5
    np.testing.assert_allclose(adsrc.hessian(func)(0.7), expected, rtol=1e-6)
    np.testing.assert_allclose(adsrc.grad(adsrc.grad(func))(0.7), expected, rtol=1e-6)


def test_hvp_of_norm_and_options_by_position():
    v = np.array([1.0, 0.5, -1.0])
    gradient = adsrc.grad(np.linalg.norm)
    expected = (gradient(X + 1e-6 * v) - gradient(X - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(adsrc.hvp(np.linalg.norm)(X, v), expected, rtol=1e-5)
    l1 = adsrc.grad(np.linalg.norm)(X, 1)  # ord=1, by position, as np.linalg.norm takes it
    np.testing.assert_allclose(l1, np.sign(X))
    np.testing.assert_allclose(adsrc.grad(np.linalg.norm)(X, ord=1), np.sign(X))


def test_two_argument_primitives_and_wrt():
    dx, dy = adsrc.grad(np.arctan2, wrt=(0, 1))(0.3, 0.4)
    np.testing.assert_allclose([dx, dy], [numerical_grad(np.arctan2, (0.3, 0.4), i) for i in (0, 1)], rtol=1e-6)
    da, db = adsrc.grad(np.dot, argnums=(0, 1))(X, 2 * X)
    np.testing.assert_allclose(da, 2 * X)
    np.testing.assert_allclose(db, X)


def test_check_grads_and_the_adjoint_source_of_a_primitive():
    adsrc.check_grads(np.tanh, (X,), order=2)
    source = adsrc.adjoint_source(np.sin)
    assert "def sin_adjoint(x):" in source and "np.sin(x)" in source
    assert "def tanh_jvp(x, dx):" in adsrc.jvp_source(np.tanh)


def test_scipy_functions_with_rules():
    special = pytest.importorskip("scipy.special")
    check(special.logsumexp, X)
    np.testing.assert_allclose(adsrc.grad(special.gammaln)(2.5), special.digamma(2.5))


def test_a_library_function_without_a_rule_is_refused_naming_what_to_do():
    with pytest.raises(errors.SourceUnavailable) as info:
        adsrc.grad(np.argsort)(X)
    assert "np.argsort is a library function with no gradient rule" in str(info.value)
    assert "adsrc.register_adjoint(np.argsort, ...)" in str(info.value)
    with pytest.raises(errors.SourceUnavailable, match="np.einsum"):  # no positional parameters to give
        adsrc.grad(np.einsum)("i->", X)
