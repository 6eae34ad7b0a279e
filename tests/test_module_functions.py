"""Small module-level helpers of the same file copied in where they are called (frontend/module_functions.py):
one adjoint sees them, so their kinds are known and the gradient is written out; gradients agree with
central finite differences in lazy and eager mode; what is not copied keeps its own adjoint."""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from gradcheck import check

RS = np.random.RandomState(5)
SCALE = 2.0


def field(y, k):
    return -k * y + np.sin(y) * SCALE


def euler(y0, k):
    y = y0
    for _ in range(20):
        y = y + 0.01 * field(y, k)
    return np.sum(y)


def euler_local(y0, k):
    def f(y):
        return -k * y + np.sin(y) * SCALE
    y = y0
    for _ in range(20):
        y = y + 0.01 * f(y)
    return np.sum(y)


def specialized(f, args, wrt=(0, 1)):
    return adsrc.adjoint_source(f, wrt, args=args)


def test_a_module_helper_is_written_out_as_a_local_one_is():
    args = (RS.randn(4), 0.5)
    source = specialized(euler, args)
    assert "adjoint_of(field" not in source and "field_y_pullback" not in source, source
    check(euler, *args, wrt=(0, 1))
    for eager in (False, True):
        ours = adsrc.value_and_grad(euler, wrt=(0, 1), eager=eager)(*args)
        local = adsrc.value_and_grad(euler_local, wrt=(0, 1), eager=eager)(*args)
        assert ours[0] == local[0] == euler(*args)
        for a, b in zip(ours[1], local[1]):
            np.testing.assert_allclose(a, b, rtol=1e-13)


def test_rebinding_the_helper_or_a_global_it_reads_compiles_again():
    global field, SCALE
    saved_field, saved_scale = field, SCALE
    g = adsrc.grad(euler, wrt=1)
    args = (RS.randn(3), 0.5)
    first = g(*args)
    try:
        SCALE = 3.0
        assert g(*args) != first
        np.testing.assert_allclose(g(*args), adsrc.grad(euler_local, wrt=1)(*args), rtol=1e-13)

        def field(y, k):  # noqa: F811
            return -2.0 * k * y
        changed = g(*args)
        check(euler, *args, wrt=1)
        np.testing.assert_allclose(changed, adsrc.grad(euler, wrt=1, eager=True)(*args), rtol=1e-13)
        assert changed != first
    finally:
        field, SCALE = saved_field, saved_scale


def layer(w, x):
    return np.tanh(w @ x)


def two_layers(w1, w2, x):
    return layer(w2, layer(w1, x))


def net(w1, w2, x):
    return np.sum(two_layers(w1, w2, x) ** 2)


def test_helpers_calling_helpers():
    args = (RS.randn(3, 4), RS.randn(2, 3), RS.randn(4))
    source = specialized(net, args, wrt=(0, 1))
    assert "adjoint_of" not in source, source
    check(net, *args, wrt=(0, 1))


def countdown(x, n):
    if n == 0:
        return x
    return countdown(x * 1.5, n - 1)


def early(x):
    if x > 0:
        return x * x
    return -x


def many(*xs):
    return sum(xs)


squared = lambda x: x * x  # noqa: E731


def custom(x):
    return x * 3.0


adsrc.register_adjoint(custom, lambda g, ans, x: g * 100.0)  # a rule of its own: it must be what runs


def uses_the_others(x):
    return countdown(x, 2) + early(x) + many(x, x) + squared(x) + custom(x)


def test_what_is_not_copied_keeps_its_own_adjoint():
    source = adsrc.adjoint_source(uses_the_others, 0)
    for callee in ("countdown", "early", "many", "squared"):
        assert f"adjoint_of({callee}" in source or "adjoint_of_call" in source, callee
    assert adsrc.grad(uses_the_others)(0.7) == pytest.approx(2.25 + 1.4 + 2.0 + 1.4 + 100.0)


def doubled(a):
    return a * 2.0


def updated_after(x):
    y = doubled(x)
    y *= 2.0
    return np.sum(y * x)


def test_a_result_updated_in_place_stays_a_call():
    x = RS.randn(3)
    check(updated_after, x, wrt=0)
    assert adsrc.value_and_grad(updated_after)(x)[0] == updated_after(x)


def shadowed(x):
    doubled = lambda v: v * 5.0  # noqa: E731
    return doubled(x)


def test_a_name_the_caller_binds_is_its_own():
    assert adsrc.grad(shadowed)(1.0) == 5.0


def picky(x):
    return x[np.array([0, 5])]


def calls_picky(x):
    return np.sum(picky(x) ** 2)


def test_an_error_in_a_copied_helper_names_its_line():
    with pytest.raises(IndexError) as info:
        adsrc.grad(calls_picky)(np.ones(3))
    notes = "\n".join(getattr(info.value, "__notes__", []))
    assert "test_module_functions.py" in notes, notes


def tripled(z):
    return z * 3.0


def with_a_registered_helper(x):
    return np.sum(np.sin(x) + tripled(x))


def test_a_helper_registered_as_nondifferentiable_keeps_its_registration():
    adsrc.register_nondifferentiable(tripled)
    x = np.array([0.3, -0.2])
    np.testing.assert_allclose(adsrc.grad(with_a_registered_helper)(x), np.cos(x), rtol=1e-14)
    np.testing.assert_allclose(adsrc.grad(with_a_registered_helper, eager=True)(x), np.cos(x), rtol=1e-14)


GAIN = 2.0


def _gained(y):
    return y * GAIN


def shadows_the_helpers_global(x):
    GAIN = 5.0  # noqa: N806  (the caller's own GAIN; the helper reads the module's)
    return np.sum(_gained(x)) * GAIN


def test_a_global_the_helper_reads_under_a_name_the_caller_binds_is_checked():
    global GAIN
    x = np.array([0.5, -1.0])
    df = adsrc.grad(shadows_the_helpers_global)
    np.testing.assert_allclose(df(x), [10.0, 10.0])
    count = adsrc.cache_info().compiles
    df(x)
    assert adsrc.cache_info().compiles == count  # the cache holds
    try:
        GAIN = 3.0
        np.testing.assert_allclose(df(x), [15.0, 15.0])  # rebinding the helper's global compiles again
    finally:
        GAIN = 2.0
