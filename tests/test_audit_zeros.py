"""Gradients that once came back zero without a word, found by an audit of every place adsrc gives zero.

Each is checked against central finite differences in lazy and eager mode
(or, for second order, against finite differences of the gradient).
"""
from __future__ import annotations

from typing import NamedTuple

import numpy as np
import pytest

import adsrc


def central(f, x, eps=1e-6):
    return (f(x + eps) - f(x - eps)) / (2 * eps)


class Gamma:
    def __init__(self, shape, rate):
        self.shape, self.rate = shape, rate  # .shape is a float parameter here, not an array's shape


class GammaParams(NamedTuple):
    shape: float
    scale: float


class Holder:
    def __init__(self, w):
        self.w = w


def log_density(w, x):
    p = GammaParams(shape=w, scale=1.0)
    return (p.shape - 1) * np.log(x) - x / p.scale


def by_shape(d, x):
    return d.shape * x + d.rate * x


def default_of_getattr(m, w):
    return getattr(m, "missing", w) * 3.0 + getattr(m, "w", w) * 2.0


@pytest.mark.parametrize("eager", [False, True])
def test_an_attribute_named_shape_on_a_structure_carries_its_gradient(eager):
    with adsrc.eager_unthunk(eager):
        gradient = adsrc.grad(by_shape)(Gamma(1.5, 0.5), 2.0)
        assert gradient.shape == pytest.approx(2.0) and gradient.rate == pytest.approx(2.0)
        assert adsrc.grad(log_density)(2.5, 2.0) == pytest.approx(central(lambda w: log_density(w, 2.0), 2.5))


def test_an_arrays_shape_still_carries_none():
    def f(x):
        return np.sum(x ** 2) * x.shape[0] + x.size

    x = np.array([0.5, -1.0, 2.0])
    np.testing.assert_allclose(adsrc.grad(f)(x), 2 * x * 3)
    with adsrc.eager_unthunk():
        np.testing.assert_allclose(adsrc.grad(f)(x), 2 * x * 3)


@pytest.mark.parametrize("eager", [False, True])
def test_the_default_of_getattr_gets_the_gradient_when_it_is_returned(eager):
    with adsrc.eager_unthunk(eager):
        assert adsrc.grad(default_of_getattr, wrt=1)(Holder(1.0), 0.5) == pytest.approx(3.0)
    _, tangent = adsrc.jvp(lambda w: default_of_getattr(Holder(1.0), w), (0.5,), (1.0,))
    assert tangent == pytest.approx(3.0)


def test_second_order_through_an_array_method_of_a_dask_array():
    da = pytest.importorskip("dask.array")

    def f(x):
        return np.sum(x.copy() ** 3)

    x, v = np.array([0.3, 0.7, 1.2, 0.4]), np.array([1.0, -0.5, 0.25, 0.3])
    with np.testing.suppress_warnings() as sup:
        sup.filter(FutureWarning)
        out = adsrc.hvp(f)(da.from_array(x, chunks=2), da.from_array(v, chunks=2))
    np.testing.assert_allclose(np.asarray(out), 6 * x * v)


def test_second_order_through_the_derivative_for_arguments_of_any_type():
    def g(d):
        return np.sum(d["w"] ** 4) + d["w"].sum() ** 2

    hessian = adsrc.hessian(g)({"w": np.array([1.0, 2.0])})
    np.testing.assert_allclose(hessian["w"]["w"], [[14.0, 2.0], [2.0, 50.0]])


def test_an_operator_an_object_defines_itself_is_an_error_not_a_gradient():
    class V:
        def __init__(self, v):
            self.v = v

        def __add__(self, other):
            return V(self.v * 2.0 + other.v)

    def f(a, b):
        return np.sum((a + b).v)

    with pytest.raises(adsrc.AdsrcError, match="__add__"):
        adsrc.grad(f)(V(np.ones(2)), V(np.ones(2)))


class Layer:
    def __init__(self, w):
        self.w = w

    def fwd(self, x):
        return self.w * x


class BoundNet:
    def __init__(self, layer):
        self.layer, self.act = layer, layer.fwd


class PartialNet:
    def __init__(self, w):
        import functools

        self.f = functools.partial(np.multiply, w)


def test_a_bound_method_or_partial_held_in_an_attribute_is_refused_rather_than_given_zero():
    with pytest.raises(TypeError, match="bound method"):
        adsrc.grad(lambda_free_bound)(BoundNet(Layer(1.5)), 3.0)
    with pytest.raises(adsrc.AdsrcError, match="partial"):
        adsrc.grad(lambda_free_partial)(PartialNet(1.5), 3.0)
    # the same object's method called through the object it belongs to works
    assert adsrc.grad(through_layer)(BoundNet(Layer(1.5)), 3.0).layer.w == pytest.approx(3.0)


def lambda_free_bound(m, x):
    return m.act(x)


def lambda_free_partial(m, x):
    return m.f(x)


def through_layer(m, x):
    return m.layer.fwd(x)


class Cached:
    def __init__(self, w):
        self.w = w

    @__import__("functools").cached_property
    def w2(self):
        return 2.0 * self.w


def reads_cached(m, x):
    return m.w2 * x


def test_a_cached_property_is_refused_rather_than_given_zero():
    with pytest.raises(TypeError, match="cached_property"):
        adsrc.grad(reads_cached)(Cached(1.5), 3.0)


def to_ints(w):
    return np.sum(w.astype(int) * 1.0) + np.sum(np.asarray(w, dtype=int)) + np.sum(w, dtype=int) + np.sum(w)


@pytest.mark.parametrize("eager", [False, True])
def test_a_cast_to_integers_has_no_gradient(eager):
    with adsrc.eager_unthunk(eager):
        np.testing.assert_allclose(adsrc.grad(to_ints)(np.array([1.3, 2.6])), [1.0, 1.0])


def fill_(out, x):
    out[:] = x * x


def push(items, v):
    items.append(v)


def helper(x):
    return np.sin(x)


def fills(x):
    out = np.zeros(3)
    fill_(out, x)
    return np.sum(out)


def pushes(x):
    out = []
    push(out, x * x)
    return np.sum(out[0])


def through_helper(x):
    return np.sum(helper(x))


def test_a_called_function_that_changes_what_it_is_given_is_refused_before_anything_runs():
    for f, name in ((fills, "fill_"), (pushes, "push")):
        with pytest.raises(adsrc.errors.UnsupportedSyntax, match=f"calling {name}, which changes"):
            adsrc.grad(f)(np.array([1.5, 0.5, 0.2]))
    np.testing.assert_allclose(adsrc.grad(through_helper)(np.array([0.5, 1.0])), np.cos([0.5, 1.0]))
