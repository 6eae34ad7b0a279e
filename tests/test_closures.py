"""Local functions used as values: closures over the differentiated function's variables.

A ``def`` or ``lambda`` defined inside a differentiated function and passed
to another function, returned, stored or given to ``adsrc.grad`` is made as
Python makes it (adsrc/rules/closures.py); a call of it compiles it with
its captured values as leading parameters, so gradients reach the variables
it captures. Every gradient is checked against central finite differences
in float64, lazy and eager; forward mode (jvp) and second order (hessian)
where they apply. What adsrc cannot make the way Python would (a captured
variable changed after the definition) is refused, naming file:line.
"""
import dataclasses

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax

from gradcheck import check


def apply(fn, y):
    return fn(y) * 2.0


def make_scaler(w):
    def scale(y):
        return w * y
    return scale


# ---- the programs ----------------------------------------------------------------------
def lambda_to_a_parameter(x):
    g = lambda y: np.sin(x) * y + x ** 2  # noqa: E731
    return apply(g, 3.0)


def def_capturing_an_intermediate(x):
    h = np.tanh(x)

    def g(y):
        return np.sum(h * y) + np.sum(x)
    return apply(g, x)


def called_through_a_variable(x):
    def g(y):
        return y * x ** 2
    k = g
    return np.sum(k(x))


def stored_in_a_list(x):
    fs = [lambda y: y * x, lambda y: np.exp(y * x)]
    total = 0.0
    for fn in fs:
        total = total + fn(1.5)
    return np.sum(total)


def lambda_in_an_expression(x):
    return np.sum(apply(lambda y: y * np.cos(x), 2.0))


def local_def_returned_and_called(x):
    scale = make_scaler(np.sin(x))
    return np.sum(scale(x) * scale(2.0))


def grad_of_a_local_function(x):
    inner = lambda y: x * y ** 2  # noqa: E731
    return x * adsrc.grad(inner)(2.0)


def grad_of_a_lambda_in_an_expression(x):
    return adsrc.grad(lambda y: np.exp(y) * np.tanh(x[0]))(x[1])


def closure_inside_a_closure(x):
    def outer(y):
        return apply(lambda z: z * y * x, 2.0)
    return apply(outer, x)


def loop_of_lambdas(x):
    s = 0.0
    for i in range(3):
        s = s + apply(lambda y: y * x ** 2, float(i))
    return s


def lambda_calling_a_local_function(x):
    def h(y):
        return y * x
    return apply(lambda y: h(y) * x, 2.0) + h(3.0)


SCALAR = [lambda_calling_a_local_function, lambda_to_a_parameter, def_capturing_an_intermediate, called_through_a_variable, stored_in_a_list,
          lambda_in_an_expression, local_def_returned_and_called, grad_of_a_local_function, closure_inside_a_closure,
          loop_of_lambdas]


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
def test_gradients_reach_the_captured_variables(f):
    check(f, 0.7)  # lazy and eager, against central differences; the value is Python's


@pytest.mark.parametrize("f", SCALAR, ids=lambda f: f.__name__)
def test_forward_mode(f):
    x, eps = 0.7, 1e-6
    value, tangent = adsrc.jvp(f, (x,), (1.0,))
    np.testing.assert_allclose(value, f(x), rtol=1e-12)
    np.testing.assert_allclose(tangent, (f(x + eps) - f(x - eps)) / (2 * eps), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("f", [f for f in SCALAR if f is not grad_of_a_local_function], ids=lambda f: f.__name__)
def test_second_order(f):
    x, eps = 0.7, 1e-4
    expected = (adsrc.grad(f)(x + eps) - adsrc.grad(f)(x - eps)) / (2 * eps)
    np.testing.assert_allclose(adsrc.hessian(f)(x), expected, rtol=1e-6, atol=1e-8)


def test_grad_of_a_lambda_inside_reaches_the_captured_array():
    x = np.array([0.3, 0.5])
    check(grad_of_a_lambda_in_an_expression, x)
    expected = np.array([np.exp(0.5) * (1 - np.tanh(0.3) ** 2), np.exp(0.5) * np.tanh(0.3)])
    np.testing.assert_allclose(adsrc.grad(grad_of_a_lambda_in_an_expression)(x), expected, rtol=1e-12)


def test_a_local_function_returned_is_the_one_python_makes():
    def f(x):
        g = lambda y: x * y  # noqa: E731
        return g

    made = adsrc.value_and_grad(lambda x: f(x)(2.0))(3.0)
    assert made == (6.0, 2.0)


# ---- refusals: what adsrc could not make as Python makes it ---------------------------------
def rebinds_a_captured_variable(x):
    g = lambda y: x * y  # noqa: E731
    x = x + 1.0
    return apply(g, 2.0)


def writes_into_a_captured_array(x):
    v = x * 1.0
    g = lambda y: np.sum(v) * y  # noqa: E731
    v[0] = 0.0
    return apply(g, 2.0)


def lambda_in_a_comprehension(x):
    return sum(apply(lambda y: y * x, k) for k in [1.0, 2.0])


def recursive_local_function(x):
    def g(n):
        return x if n == 0 else g(n - 1) * x
    return apply(g, 2)


def evaluate_twice(fn, y):
    return fn(y) + fn(y)


adsrc.register_adjoint(evaluate_twice, None, lambda g, ans, fn, y: g * 0.0)  # a rule blind to fn


def passed_to_a_rule_blind_to_it(x):
    g = lambda y: y * x  # noqa: E731
    return evaluate_twice(g, 1.0)


@pytest.mark.parametrize("f, message", [
    (passed_to_a_rule_blind_to_it, "passing the local function g, which captures differentiable values"),
    (rebinds_a_captured_variable, "changing x after the lambda, which captures it"),
    (writes_into_a_captured_array, "changing v after the lambda"),
    (lambda_in_a_comprehension, "a lambda inside a comprehension"),
    (recursive_local_function, "the local function g, which calls itself"),
], ids=lambda v: getattr(v, "__name__", ""))
def test_refused_with_where_and_a_remedy(f, message):
    x = np.array([1.0, 2.0]) if f is writes_into_a_captured_array else 1.0
    with pytest.raises(UnsupportedSyntax, match=message) as error:
        adsrc.grad(lambda z: np.sum(f(z)))(x)
    assert "test_closures.py:" in str(error.value)


@dataclasses.dataclass
class Scaled:
    w: float

    def loss(self, v):
        return np.sum(np.tanh(self.w * v))


def grad_of_a_method_of_a_differentiated_object(x):
    model = Scaled(x * 0.5)
    return np.sum(adsrc.grad(model.loss)(x))


def test_grad_of_a_method_whose_object_is_differentiated_is_refused_not_dropped():
    with pytest.raises(adsrc.errors.RefusedWhenRun, match="what the function it differentiates holds"):
        adsrc.grad(grad_of_a_method_of_a_differentiated_object)(0.3)
    with pytest.raises(adsrc.errors.RefusedWhenRun, match="what the function it differentiates holds"):
        adsrc.jvp(grad_of_a_method_of_a_differentiated_object, (0.3,), (1.0,))
