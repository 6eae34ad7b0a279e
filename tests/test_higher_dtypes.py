"""Second derivatives keep the input's floating dtype, as grad does: float32 in, float32 out."""
import numpy as np
import pytest

import adsrc


def curve(x):
    return np.sin(x) * x ** 2


def field(v):
    return np.sum(np.sin(v) * v ** 2)


def _second(x):  # d2/dx2 of sin(x) x^2
    return (2.0 - x ** 2) * np.sin(x) + 4.0 * x * np.cos(x)


@pytest.mark.parametrize("make", [lambda f: adsrc.grad(adsrc.grad(f)), adsrc.hessian,
                                  lambda f: adsrc.jacobian(adsrc.grad(f))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_a_second_derivative_at_a_numpy_scalar_keeps_its_dtype(make, dtype):
    got = make(curve)(dtype(0.7))
    assert type(got) is dtype
    np.testing.assert_allclose(got, _second(0.7), rtol=1e-5 if dtype is np.float32 else 1e-12)


@pytest.mark.parametrize("make", [lambda f: adsrc.grad(adsrc.grad(f)), adsrc.hessian])
def test_a_second_derivative_at_a_python_float_is_a_float(make):
    got = make(curve)(0.7)
    assert type(got) is float
    assert got == pytest.approx(_second(0.7), rel=1e-12)


def test_a_hessian_and_a_first_derivative_at_float32_are_float32():
    v = np.array([0.7, -0.2], np.float32)
    assert adsrc.grad(field)(v).dtype == np.float32
    assert adsrc.hessian(field)(v).dtype == np.float32
    assert adsrc.hvp(field)(v, np.ones(2, np.float32)).dtype == np.float32
    np.testing.assert_allclose(adsrc.hessian(field)(v), np.diag(_second(v.astype(float))), rtol=1e-5)
