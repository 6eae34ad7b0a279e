"""The compile cache keeps an adjoint that calls bound methods of outside objects, and says why it missed.

A bound method (``rs.randn`` on a RandomState, ``model.energy`` on a user
object) is a new object at each attribute read, so the cache checks what it
is made of: the object it is bound to and the function it binds. Rebinding
either compiles again, with the right gradient; ``adsrc.cache_info()``
counts the compiles and gives each one's cause.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from gradcheck import check

rs = np.random.RandomState(0)
rng = np.random.default_rng(0)


def noisy(w):
    return np.sum(w * rs.randn(3))


def noisy_generator(w):
    return np.sum(np.sin(w) * rng.standard_normal(3))


class Model:
    def __init__(self, scale):
        self.scale = scale

    def energy(self, w):
        return np.sum(w ** 2) * self.scale


class Holder:
    def __init__(self, model):
        self.model = model


model = Model(2.0)
holder = Holder(Model(3.0))


def through_model(w):
    return model.energy(w) + np.sum(np.sin(w))


def through_holder(w):
    return holder.model.energy(w)


def compiles(run, times=4):
    before = adsrc.cache_info().compiles
    results = [run() for _ in range(times)]
    return adsrc.cache_info().compiles - before, results


@pytest.mark.parametrize("eager", [False, True])
def test_random_state_method_compiles_once(eager):
    global rs
    w = np.linspace(0.1, 0.9, 3)
    df = adsrc.grad(noisy, eager=eager)
    df(w)
    rs = np.random.RandomState(5)  # another object bound to the global: compiled again once
    count, _ = compiles(lambda: df(w))
    assert count == 1 and "'rs'" in adsrc.cache_info().misses[-1].cause
    count, _ = compiles(lambda: df(w))
    assert count == 0


def test_random_state_gradient_is_each_calls_noise():
    global rs
    rs = np.random.RandomState(11)
    reference = np.random.RandomState(11)
    df = adsrc.grad(noisy)
    for _ in range(5):
        np.testing.assert_array_equal(df(np.ones(3)), reference.randn(3))


def test_generator_method_compiles_once():
    w = np.linspace(0.1, 0.9, 3)
    df = adsrc.grad(noisy_generator)
    df(w)
    count, _ = compiles(lambda: df(w))
    assert count == 0


@pytest.mark.parametrize("eager", [False, True])
def test_user_object_method_compiles_once_and_follows_rebinding(eager):
    global model
    w = np.linspace(0.1, 0.9, 3)
    df = adsrc.grad(through_model, eager=eager)
    model = Model(2.0)
    df(w)
    count, grads = compiles(lambda: df(w))
    assert count == 0
    np.testing.assert_allclose(grads[-1], 4.0 * w + np.cos(w), rtol=1e-13)

    model = Model(5.0)  # another object bound to the global
    np.testing.assert_allclose(df(w), 10.0 * w + np.cos(w), rtol=1e-13)

    original = Model.energy
    try:
        Model.energy = lambda self, w: np.sum(w ** 3) * self.scale  # the class's function replaced
        np.testing.assert_allclose(df(w), 15.0 * w ** 2 + np.cos(w), rtol=1e-13)
        causes = [m.cause for m in adsrc.cache_info().misses if m.function.startswith("through_model")]
        assert "'.energy'" in causes[-1] and "another object" in causes[-1]
    finally:
        Model.energy = original
    np.testing.assert_allclose(df(w), 10.0 * w + np.cos(w), rtol=1e-13)

    model.energy = lambda w: np.sum(np.exp(w))  # a function on the instance hides the method
    try:
        np.testing.assert_allclose(df(w), np.exp(w) + np.cos(w), rtol=1e-13)
    finally:
        del model.energy
    np.testing.assert_allclose(df(w), 10.0 * w + np.cos(w), rtol=1e-13)
    check(through_model, w)


def test_method_reached_through_an_attribute_follows_the_object():
    w = np.linspace(0.1, 0.9, 3)
    df = adsrc.grad(through_holder)
    holder.model = Model(3.0)
    np.testing.assert_allclose(df(w), 6.0 * w, rtol=1e-13)
    count, _ = compiles(lambda: df(w))
    assert count == 0
    holder.model = Model(7.0)  # the object the method is bound to, replaced on the holder
    np.testing.assert_allclose(df(w), 14.0 * w, rtol=1e-13)
    check(through_holder, w)


def test_cache_info_names_the_cause():
    offset = {"value": 1.0}

    def make():
        shift = offset["value"]

        def f(x):
            return np.sum(np.sin(x) + shift)
        return f

    f = make()
    df = adsrc.grad(f)
    df(np.ones(2))
    info = adsrc.cache_info()
    assert info.misses[-1].function.startswith("f (") and "first compile" in info.misses[-1].cause
    assert "wrt=(0,)" in info.misses[-1].options
    assert "compiles" in str(info)
    g = make()  # the same code closing over another cell value: compiled for it
    offset["value"] = 2.0
    g = make()
    adsrc.grad(g)(np.ones(2))
    assert adsrc.cache_info().misses[-1].function.startswith("f (")


# -- the helpers the front end binds itself are not outside names of the program ------------------------
def written_through_a_row(x):
    K = np.zeros((3, 3))
    for i in range(3):
        K[i][0] = x[i] * 2.0  # lowered with written_through (frontend/view_writes.py)
    for row in K:
        row[1] = np.sum(row) * 0.5  # lowered with row_count
    return np.sum(K * K)


@pytest.mark.parametrize("eager", [False, True])
def test_a_write_through_a_view_keeps_the_compile_cache(eager):
    # Each call compiled again before: the cache looked for written_through among the program's globals.
    x = np.linspace(0.1, 0.9, 3)
    df = adsrc.grad(written_through_a_row, eager=eager)
    df(x)
    count, results = compiles(lambda: df(x), times=3)
    assert count == 0
    assert all(np.array_equal(r, results[0]) for r in results)


W0 = np.ones(2)


def _pieces(p, w=W0):
    yield p[:2] * w, p[2]


def generator_with_a_default(p):
    s = 0.0
    for W, b in _pieces(p):
        s = s + np.sum(W * W) * b
    return s


def test_a_module_generator_with_a_default_keeps_the_compile_cache():
    x = np.array([0.3, -0.5, 0.9])
    df = adsrc.grad(generator_with_a_default)
    df(x)
    count, _ = compiles(lambda: df(x), times=3)
    assert count == 0


def test_a_module_generator_default_changed_is_read_at_the_next_call():
    x = np.array([0.3, -0.5, 0.9])
    df = adsrc.grad(generator_with_a_default)
    first = df(x)
    saved = _pieces.__defaults__
    try:
        _pieces.__defaults__ = (np.array([3.0, 3.0]),)
        np.testing.assert_allclose(df(x)[:2], first[:2] * 9.0)  # (3 W)^2 b against (1 W)^2 b
    finally:
        _pieces.__defaults__ = saved
