"""adsrc.jvp and adsrc.hvp called inside a differentiated function (second derivatives, forward inside reverse).

The primals get J^T c_y plus the derivative of J^T c_t along the tangent, the
tangents J^T c_t (api/nested_jvp.py). Each gradient is checked against central
finite differences of the function, lazy and eager; what would be a third
derivative, or a gradient through what a function object holds, is refused.
"""
import numpy as np
import pytest

import adsrc
from gradcheck import numerical_grad


def _central(f, x):
    return numerical_grad(f, (x,), 0)


def field(x):
    return np.sin(x) * x[::-1]


def pair(a, b):
    return np.tanh(a * b) + a ** 2


def scalar(x):
    return np.sum(np.exp(0.3 * x) * x)


def with_aux(x):
    return np.cos(x) * 2.0, {"n": 3}


def both_outputs(x):
    y, t = adsrc.jvp(field, (x,), (np.ones_like(x),))
    return np.sum(y * t)


def tangent_only(x):
    _, t = adsrc.jvp(field, (x,), (np.array([1.0, -2.0, 0.5]),))
    return np.sum(t ** 2)


def value_only(x):
    y, _ = adsrc.jvp(field, (x,), (np.ones_like(x),))
    return np.sum(y ** 3)


def direction_depends_on_x(x):
    y, t = adsrc.jvp(field, (x,), (np.cos(x),))
    return np.sum(t) + np.sum(y)


def one_argument_fixed(x):
    y, t = adsrc.jvp(pair, (x, x * 2.0), (np.ones_like(x), None))
    return np.sum(t * y)


def both_arguments_moved(x):
    _, t = adsrc.jvp(pair, (x, np.sin(x)), (x[::-1], np.ones_like(x)))
    return np.sum(t)


def scalar_function(x):
    y, t = adsrc.jvp(scalar, (x,), (x,))  # the directional derivative along x itself
    return y * t


def closure(x):
    c = np.cos(x[0])

    def inner(z):
        return np.sin(z) * c

    _, t = adsrc.jvp(inner, (x,), (np.ones_like(x),))
    return np.sum(t ** 2)


def in_a_loop(x):
    for _ in range(3):
        _, t = adsrc.jvp(field, (x,), (np.ones_like(x),))
        x = x - 0.1 * t
    return np.sum(x ** 2)


def aux(x):
    y, t, info = adsrc.jvp(with_aux, (x,), (np.ones_like(x),), has_aux=True)
    return np.sum(y * t) * info["n"]


X = np.array([0.3, -0.8, 1.1])
PROGRAMS = [both_outputs, tangent_only, value_only, direction_depends_on_x, one_argument_fixed,
            both_arguments_moved, scalar_function, closure, in_a_loop, aux]


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_jvp_inside_a_differentiated_function(f, eager):
    value, gradient = adsrc.value_and_grad(f, eager=eager)(X)
    assert value == f(X)
    np.testing.assert_allclose(gradient, _central(f, X), rtol=1e-6, atol=1e-7)


def _through_tangent(x, v):
    _, t = adsrc.jvp(field, (x,), (v,))
    return np.sum(np.sin(t))


@pytest.mark.parametrize("eager", [False, True])
def test_the_gradient_with_respect_to_the_tangent_and_the_primal(eager):
    v = np.array([0.5, 1.0, -1.5])
    gx, gv = adsrc.grad(_through_tangent, wrt=(0, 1), eager=eager)(X, v)
    np.testing.assert_allclose(gx, _central(lambda x: _through_tangent(x, v), X), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(gv, _central(lambda w: _through_tangent(X, w), v), rtol=1e-6, atol=1e-7)


def test_under_vjp():
    def f(x):
        return adsrc.jvp(field, (x,), (np.ones_like(x),))[1] * 2.0

    value, pullback = adsrc.vjp(f, X)
    w = np.array([1.0, -1.0, 0.25])
    np.testing.assert_allclose(value, f(X))
    np.testing.assert_allclose(pullback(w), _central(lambda x: np.dot(f(x), w), X), rtol=1e-6, atol=1e-7)


def _of_a_gradient(x):
    return np.sum(adsrc.jvp(adsrc.grad(scalar), (x,), (np.ones_like(x),))[1])


def _of_a_gradient_along_x(x):
    y, t = adsrc.jvp(adsrc.grad(scalar), (x,), (np.sin(x),))  # the direction depends on x too
    return np.sum(y * t) + np.sum(t ** 2)


@pytest.mark.parametrize("func", [_of_a_gradient, _of_a_gradient_along_x])
def test_a_jvp_of_a_gradient_inside_is_a_third_derivative(func):
    v = np.array([0.3, 1.0, -0.5])
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            expected = _central(func, X)
            np.testing.assert_allclose(adsrc.grad(func)(X), expected, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(adsrc.jvp(func, (X,), (v,))[1], expected @ v, rtol=1e-6, atol=1e-8)


class Holder:
    def __init__(self, w):
        self.w = w

    def apply(self, x):
        return np.sin(x) * self.w


def test_a_bound_method_as_a_fixed_function():
    holder = Holder(np.array([1.0, 2.0, 3.0]))

    def f(x):
        return np.sum(adsrc.jvp(holder.apply, (x,), (np.ones_like(x),))[1] ** 2)

    np.testing.assert_allclose(adsrc.grad(f)(X), _central(f, X), rtol=1e-6, atol=1e-7)


def test_a_gradient_through_what_the_function_holds_is_refused():
    def f(w):
        holder = Holder(w)
        return np.sum(adsrc.jvp(holder.apply, (X,), (np.ones_like(X),))[1])

    with pytest.raises(adsrc.AdsrcError):
        adsrc.grad(f)(np.array([1.0, 2.0, 3.0]))


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_forward_mode_over_a_jvp_inside(f):
    direction = np.array([0.7, -1.0, 0.4])
    value, tangent = adsrc.jvp(f, (X,), (direction,))
    assert value == f(X)
    np.testing.assert_allclose(tangent, np.dot(_central(f, X), direction), rtol=1e-6, atol=1e-7)


def _jacobian_by_differences(f, x, h=1e-5):
    return np.stack([(f(x + h * e) - f(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("program", [p for p in PROGRAMS if p not in (closure, aux)], ids=lambda p: p.__name__)
def test_a_third_derivative_through_a_jvp_inside(program, eager):
    v = np.array([0.4, -1.0, 0.7])
    with adsrc.eager_unthunk(eager):
        expected = _jacobian_by_differences(adsrc.grad(program), X)
        np.testing.assert_allclose(adsrc.hessian(program)(X), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(adsrc.hvp(program)(X, v), expected @ v, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(adsrc.jvp(adsrc.grad(program), (X,), (v,))[1], expected @ v, rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("program", [closure, aux], ids=lambda p: p.__name__)
def test_a_third_derivative_through_a_jvp_of_a_local_function_or_with_aux_is_refused(program):
    with pytest.raises(adsrc.errors.InvalidArgument, match="order 3") as error:
        adsrc.hessian(program)(X)
    assert "test_forward_inside.py:" in str(error.value)


def cubic(x):
    return np.sum(np.sin(x) * x ** 2)


HVP = adsrc.hvp(cubic)
V = np.array([1.0, -0.5, 2.0])


def hvp_made_inline(v):
    return np.sum(adsrc.hvp(cubic)(X, v) ** 2)


def hvp_kept_in_a_global(v):
    return np.sum(HVP(X, v) * v)  # v^T H v


def hvp_of_two_arguments(v):
    Hv = adsrc.hvp(pair_sum, wrt=1)
    return np.sum(np.cos(Hv(X, X[::-1], v)))


def pair_sum(a, b):
    return np.sum(pair(a, b))


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", [hvp_made_inline, hvp_kept_in_a_global, hvp_of_two_arguments], ids=lambda f: f.__name__)
def test_hvp_inside_a_differentiated_function_in_its_direction(f, eager):
    value, gradient = adsrc.value_and_grad(f, eager=eager)(V)
    assert value == f(V)
    np.testing.assert_allclose(gradient, _central(f, V), rtol=1e-6, atol=1e-7)


def test_hvp_inside_forward_mode_in_its_direction():
    value, tangent = adsrc.jvp(hvp_kept_in_a_global, (V,), (X,))
    assert value == hvp_kept_in_a_global(V)
    np.testing.assert_allclose(tangent, np.dot(_central(hvp_kept_in_a_global, V), X), rtol=1e-6)


def _hvp_in_its_point(x):
    return np.sum(HVP(x, V))


def test_hvp_in_its_arguments_is_a_third_derivative():
    expected = _central(_hvp_in_its_point, X)
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            np.testing.assert_allclose(adsrc.grad(_hvp_in_its_point)(X), expected, rtol=1e-6, atol=1e-8)
            np.testing.assert_allclose(adsrc.jvp(_hvp_in_its_point, (X,), (V,))[1], expected @ V, rtol=1e-6)


# -- jacobian and hessian made inside, of functions that read the differentiated value -----------------
def _swap(z, w):
    return np.sin(z) * w[::-1]


def jacobian_of_a_lambda_over_the_input(a):
    J = adsrc.jacobian(lambda z: np.sin(z) * a)(a)
    return np.sum(J * J)


def jacobian_of_a_local_def(a):
    def flow(z):
        return np.tanh(z * a[0]) + a * z

    return np.sum(np.cos(adsrc.jacobian(flow)(a * 0.5)))


def jacobian_forward_of_a_lambda(a):
    J = adsrc.jacobian(lambda z: z ** 2 * a, mode="fwd")(a[::-1])
    return np.sum(J * a)


def jacobian_of_two_arguments(a):
    J = adsrc.jacobian(_swap, argnums=1)(a, a * 2.0)
    return np.sum(J * a)


def hvp_of_a_lambda_in_its_direction(a):
    w = X * 2.0
    return np.sum(adsrc.hvp(lambda z: np.sum(np.sin(z) * w))(X, a) ** 2)


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", [jacobian_of_a_lambda_over_the_input, jacobian_of_a_local_def,
                               jacobian_forward_of_a_lambda, jacobian_of_two_arguments,
                               hvp_of_a_lambda_in_its_direction], ids=lambda f: f.__name__)
def test_jacobian_inside_of_a_function_that_reads_the_input(f, eager):
    # Second order: the Jacobian's rows are gradients, and their vjp reaches what the lambda captured.
    value, gradient = adsrc.value_and_grad(f, eager=eager)(V)
    assert value == f(V)
    np.testing.assert_allclose(gradient, _central(f, V), rtol=1e-6, atol=1e-7)


def test_jacobian_inside_forward_mode_of_a_function_that_reads_the_input():
    f = jacobian_of_a_lambda_over_the_input
    value, tangent = adsrc.jvp(f, (V,), (X,))
    assert value == f(V)
    np.testing.assert_allclose(tangent, np.dot(_central(f, V), X), rtol=1e-6)


def _hessian_of_a_lambda(a):
    return np.sum(adsrc.hessian(lambda z: np.sum(np.sin(z) * a * z))(a))


def test_hessian_of_a_lambda_over_the_input_is_a_third_derivative_refused():
    with pytest.raises(adsrc.errors.InvalidArgument, match="third derivative") as error:
        adsrc.grad(_hessian_of_a_lambda)(V)
    assert "test_forward_inside.py:" in str(error.value)


def _hvp_of_a_lambda_over_the_input(a):
    return np.sum(adsrc.hvp(lambda z: np.sum(np.sin(z) * a))(X, a) ** 2)


def test_hvp_of_a_lambda_over_the_input_is_a_third_derivative_refused():
    with pytest.raises(adsrc.errors.AdsrcError, match="third derivative") as error:
        adsrc.grad(_hvp_of_a_lambda_over_the_input)(V)
    assert "test_forward_inside.py:" in str(error.value)
