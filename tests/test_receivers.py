"""Methods and attributes named like an array's or a dict's, on objects that are not one (frontend/receivers.py).

A rule of a method (``x.sum()``, ``d.get(k)``) or an attribute (``x.T``) is
used only where the code shows that the receiver is of its kind; elsewhere the
call is resolved when it runs (an object's own method through its adjoint, an
array's through its rule), and an attribute differentiates by what it is read
from. Parameters are assumed to be what the function uses them as, checked on
entry: other arguments run the derivative that assumes nothing. Every
gradient here is checked against central finite differences, lazy and eager.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from gradcheck import numerical_grad
from sources import function_from_source


def fd(f, x, *rest):
    return numerical_grad(f, (x, *rest), 0)


def calling(method: str, template: str):
    """``f(w, obj)`` returning ``template`` with the method's name in it, written out as source."""
    code = f"def f(w, obj):\n    return {template.format(method)}\n"
    return function_from_source(code, "f", f"<receivers {method} {template}>")


def check(f, x, *rest, wrt=0):
    expected = fd(f, x, *rest)
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            value, gradient = adsrc.value_and_grad(f, wrt=wrt)(x, *rest)
        assert value == f(x, *rest)
        np.testing.assert_allclose(gradient, expected, rtol=1e-6, atol=1e-8)
    return gradient


# -- the issue's programs: a method reached through an attribute ------------------------------------------
class Parser:
    def __init__(self, k=3.0):
        self.k = k

    def get(self, vect):
        return vect * self.k


class Act:
    def __call__(self, v):
        return np.tanh(v)


class Layer:
    def __init__(self):
        self.parser = Parser()
        self.inner = type("Inner", (), {})()
        self.inner.layer = type("Holder", (), {})()
        self.inner.layer.parser = Parser(2.0)
        self.layers = [Parser(2.0), Parser(0.5)]
        self.by_name = {"a": Parser(1.5)}
        self.act = Act()

    @property
    def through_property(self):
        return self.parser

    def forward(self, w):
        return self.parser.get(w)

    def deep(self, w):
        return self.inner.layer.parser.get(w)

    def chain(self, w):
        h = w
        for layer in self.layers:
            h = layer.get(h)
        return h

    def from_dict(self, w):
        return self.by_name["a"].get(w)

    def with_property(self, w):
        return self.through_property.get(w) * w

    def with_callable(self, w):
        return self.act(self.parser.get(w))


@pytest.mark.parametrize("method, slope", [("forward", 3.0), ("deep", 2.0), ("chain", 1.0), ("from_dict", 1.5)])
def test_method_through_attribute(method, slope):
    loss = calling(method, "np.sum(obj.{}(w))")
    gradient = check(loss, np.ones(2), Layer())
    np.testing.assert_allclose(gradient, [slope, slope])


def test_the_issue_example_exactly():
    def loss(w, layer):
        return np.sum(layer.forward(w))

    np.testing.assert_array_equal(adsrc.grad(loss)(np.ones(2), Layer()), [3.0, 3.0])


def test_method_behind_a_property_and_beside_a_callable():
    def through(w, layer):
        return np.sum(layer.with_property(w))

    def beside(w, layer):
        return np.sum(layer.with_callable(w))

    w = np.array([0.2, -0.3])
    np.testing.assert_allclose(check(through, w, Layer()), 6 * w)
    check(beside, w, Layer())


# -- methods and attributes named like an array's ---------------------------------------------------------
class Named:
    """Methods that an array has too, meaning something else."""

    T = 2.0  # a class attribute named like an array's

    def __init__(self):
        self.k = 3.0

    def sum(self, v):
        return v * self.k

    def dot(self, v):
        return np.sin(v) * self.k

    def mean(self, v):
        return np.sum(v ** 2) * self.k

    def copy(self, v):
        return v * v

    def reshape(self, v):
        return np.tanh(v)

    def values(self, v):
        return v * 0.5

    def items(self, v):
        return np.exp(v)

    def round(self, v):  # an array's .round() has no gradient: this one has
        return v * 4.0

    def argmax(self, v):
        return v * 5.0

    @property
    def real(self):
        return self.k * 2.0


@pytest.mark.parametrize("method", ["sum", "dot", "mean", "copy", "reshape", "values", "items", "round", "argmax"])
def test_user_methods_named_like_an_arrays(method):
    check(calling(method, "np.sum(obj.{}(w) * w)"), np.array([0.3, -0.2, 0.5]), Named())


def test_attributes_named_like_an_arrays():
    def f(w, obj):
        return np.sum(w * obj.T + w ** 2 * obj.real)

    check(f, np.array([0.3, -0.2]), Named())


def test_an_array_held_by_an_object_keeps_its_rules():
    class Model:
        def __init__(self):
            self.W = np.arange(6.0).reshape(2, 3) / 7

        def out(self, w):
            return self.W.T @ (self.W @ w) + self.W.sum() * w + self.W.T.dot(self.W @ w).reshape(3)

    def loss(w, model):
        return np.sum(np.tanh(model.out(w)))

    check(loss, np.array([0.1, 0.2, 0.3]), Model())


def test_gradient_reaches_an_array_read_through_an_attribute_with_respect_to_the_object():
    class Model:
        def __init__(self):
            self.W = np.arange(6.0).reshape(2, 3) / 7

    def loss(model, x):
        return np.sum(np.tanh(model.W.T @ x)) + model.W.sum()

    model, x = Model(), np.array([0.5, -1.0])
    gradient = adsrc.grad(loss)(model, x)
    expected = fd(lambda W: loss(type("M", (), {"W": W})(), x), model.W)
    np.testing.assert_allclose(gradient.W, expected, rtol=1e-6, atol=1e-8)


# -- parameters: assumed to be what the function uses them as, checked on entry ---------------------------
def sums(x):
    return np.sum(x.sum() * np.tanh(x.mean(0)) + x.T)


class Summable:
    def __init__(self, v):
        self.v = v
        self.T = np.full(3, 0.25)  # an attribute named like an array's

    def sum(self):
        return np.sum(self.v ** 2)

    def mean(self, axis):
        return self.v * 0.5



def test_a_parameter_used_as_an_array_is_checked_on_entry():
    source = adsrc.adjoint_source(sums)
    assert "is_array(x)" in source and "sums_general(x)" in source
    x = np.array([0.5, -1.0, 2.0])
    check(sums, x)


def test_a_parameter_of_another_type_runs_the_general_derivative():
    v = np.array([0.5, -1.0, 2.0])
    expected = fd(lambda u: sums(Summable(u)), v)
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            value, gradient = adsrc.value_and_grad(sums)(Summable(v))
        assert value == sums(Summable(v))
        np.testing.assert_allclose(gradient.v, expected, rtol=1e-6)


def test_a_dict_parameter_and_an_object_with_get():
    def f(p, w):
        return np.sum(p.get("w") * w) + np.sum(np.tanh(p["b"]))

    w = np.array([0.5, 2.0])
    params = {"w": np.array([1.0, -2.0]), "b": np.array([0.3, 0.1])}
    gradient = adsrc.grad(f)(params, w)
    np.testing.assert_allclose(gradient["w"], w)
    np.testing.assert_allclose(gradient["b"], 1 - np.tanh(params["b"]) ** 2)

    class Getter:
        def get(self, key):
            return np.array([1.0, 1.0]) * 2.0

        def __getitem__(self, key):
            return np.array([0.0, 0.0])

    np.testing.assert_allclose(adsrc.grad(f, wrt=1)(Getter(), w), [2.0, 2.0])


def test_forward_mode_and_second_order_through_an_objects_method():
    def loss(w, layer):
        return np.sum(layer.with_callable(w) ** 2)

    w, layer = np.array([0.2, -0.4]), Layer()
    t = np.array([1.0, 0.5])
    _, tangent = adsrc.jvp(lambda v: loss(v, layer), (w,), (t,))
    np.testing.assert_allclose(tangent, fd(loss, w, layer) @ t, rtol=1e-6)
    hessian = adsrc.hessian(lambda v: loss(v, layer))(w)
    reference = np.array([fd(lambda v: adsrc.grad(loss)(v, layer)[i], w) for i in range(2)])
    np.testing.assert_allclose(hessian, reference, rtol=1e-5, atol=1e-7)


def test_second_order_of_a_function_with_an_entry_check():
    x = np.array([0.5, -1.0, 2.0])
    hessian = adsrc.hessian(sums)(x)
    reference = np.array([fd(lambda v: adsrc.grad(sums)(v)[i], x) for i in range(3)])
    np.testing.assert_allclose(hessian, reference, rtol=1e-5, atol=1e-7)


def test_a_list_method_on_a_value_whose_type_is_not_shown_is_refused_when_it_runs():
    def f(w, holder):
        return np.sum(holder.items.copy()[0] * w)

    class Holder:
        def __init__(self, w):
            self.items = [w]

    with pytest.raises(adsrc.AdsrcError):
        adsrc.grad(f, wrt=1)(np.ones(2), Holder(np.ones(2)))
