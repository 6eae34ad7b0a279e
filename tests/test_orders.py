"""Derivatives of order 3 and 4: the transformer differentiating its own output (second_order/towers.py).

Each derivative is checked against central finite differences (float64) of
the derivative one order below it, itself computed by adsrc, in lazy and in
eager mode: on scalar functions with loops, branches, writes into arrays,
helpers, closures and while loops, on the random programs of tests/progen.py,
and through the compositions of the API (grad of grad of grad, jvp of a
second derivative, hvp differentiated in its point).
"""
from __future__ import annotations

import importlib.util
import pathlib
import random
import sys

import numpy as np
import pytest
from progen import MODULE_HEADER, Generator

import adsrc

H = 1e-4


def central(g, s: float, h: float = H) -> float:
    return (g(s + h) - g(s - h)) / (2 * h)


def _helper(u, k):
    return np.sin(u) * k + u ** 2


def with_a_loop(s):
    y = s
    for _ in range(3):
        y = np.sin(y) * s + 0.5 * y
    return y


def with_a_branch(s):
    total = 0.0
    for k in range(4):
        if k % 2 == 0:
            total = total + np.exp(0.3 * s * k)
        else:
            total = total - np.cos(s) * k
    return total


def with_writes(s):
    a = np.zeros(3)
    a[0] = s
    a[1] = a[0] ** 2
    a[2] = np.sin(a[1]) * s
    b = np.array([s, s * s, 1.0])
    b[1] = b[1] * s
    return np.sum(a * a) + np.sum(b * b)


def with_a_restored_write(s):
    a = np.array([s, s * s, 1.0])
    a[1:] += a[:-1] * 0.5
    return np.sum(a * a)


def with_a_helper(s):
    return _helper(s, 2.0) * _helper(0.5 * s, s)


def with_a_closure(s):
    def scale(u):
        return u * s + np.tanh(u)

    return scale(scale(s))


def with_a_while_loop(s):
    y, k = s, 0
    while k < 3:
        y = y * np.cos(s) + 0.1 * k
        k += 1
    return y


def with_a_vector(s):
    x = np.array([s, 2.0 * s, s ** 2])
    return np.sum(np.log1p(x * x)) + np.prod(np.sin(x))


FUNCTIONS = [with_a_loop, with_a_branch, with_writes, with_a_restored_write, with_a_helper, with_a_closure,
             with_a_while_loop, with_a_vector]
POINT = 0.37


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("func", FUNCTIONS, ids=lambda f: f.__name__)
def test_third_and_fourth_derivatives_match_finite_differences_of_the_order_below(func, eager):
    with adsrc.eager_unthunk(eager):
        d2 = adsrc.grad(adsrc.grad(func))
        d3 = adsrc.grad(d2)
        third, fourth = d3(POINT), adsrc.grad(d3)(POINT)
        np.testing.assert_allclose(third, central(d2, POINT), rtol=1e-6, atol=1e-7)
        np.testing.assert_allclose(fourth, central(d3, POINT, 1e-3), rtol=1e-4, atol=1e-6)
        # the same third derivative by the other compositions of the API
        np.testing.assert_allclose(adsrc.jvp(d2, (POINT,), (1.0,))[1], third, rtol=1e-12)
        np.testing.assert_allclose(adsrc.value_and_grad(d2)(POINT)[1], third, rtol=1e-12)
        np.testing.assert_allclose(adsrc.hessian(adsrc.grad(func))(POINT), third, rtol=1e-12)


def test_a_third_derivative_keeps_float32():
    third = adsrc.grad(adsrc.grad(adsrc.grad(with_a_loop)))(np.float32(POINT))
    assert type(third) is np.float32
    np.testing.assert_allclose(third, adsrc.grad(adsrc.grad(adsrc.grad(with_a_loop)))(POINT), rtol=1e-4)
    x = np.array([0.3, -0.2], dtype=np.float32)
    assert adsrc.jacobian(adsrc.hessian(_summed))(x).dtype == np.float32
    assert adsrc.hessian(adsrc.hessian(_summed))(x).dtype == np.float32


def _summed(x):
    return np.sum(np.sin(x) * x[::-1]) + x[0] ** 2 * x[1]


def test_hvp_in_its_point_and_direction():
    x, v, t = np.array([0.3, -0.2]), np.array([1.0, 0.5]), np.array([-0.4, 0.9])
    hvp = adsrc.hvp(_summed)
    _, tangent = adsrc.jvp(hvp, (x, v), (t, np.zeros(2)))
    expected = (hvp(x + H * t, v) - hvp(x - H * t, v)) / (2 * H)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6, atol=1e-8)
    third = adsrc.jacobian(lambda z: hvp(z, v), mode="fwd")(x)
    np.testing.assert_allclose(third @ t, expected, rtol=1e-6, atol=1e-8)


# ---- the random programs of tests/progen.py, order 3 in s ----------------------------------
PROGRAMS = 10


def _random_programs(tmp_path: pathlib.Path):
    rng = random.Random(31_337)
    made = [Generator(rng, f"ord{k}", smooth=True, size=rng.randint(1, 3), dim=2) for k in range(PROGRAMS)]
    sources = [(gen.name, gen.program()) for gen in made]
    path = tmp_path / "orders_programs.py"
    path.write_text(MODULE_HEADER + "\n\n\n".join(src for _, src in sources) + "\n")
    spec = importlib.util.spec_from_file_location("orders_programs", str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules["orders_programs"] = module
    spec.loader.exec_module(module)
    return [(getattr(module, name), src) for name, src in sources]


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_random_programs_third_and_fourth_derivatives_in_s(tmp_path, eager):
    data = np.random.default_rng(5)
    x, W, n = data.uniform(-1, 1, 2), data.uniform(-1, 1, (2, 2)), 2
    checked = 0
    with adsrc.eager_unthunk(eager):
        for func, source in _random_programs(tmp_path):
            s = float(data.uniform(-0.5, 0.5))
            value = func(x, W, s, n)
            if not np.isfinite(value) or abs(value) > 1e3:
                continue
            d2 = adsrc.grad(adsrc.grad(func, wrt=2), wrt=2)
            d3 = adsrc.grad(d2, wrt=2)
            try:
                got = d3(x, W, s, n)
            except adsrc.errors.AdsrcError:  # refused (a helper writing into its argument): not wrong
                continue
            expected = (d2(x, W, s + H, n) - d2(x, W, s - H, n)) / (2 * H)
            assert np.allclose(got, expected, rtol=1e-5, atol=1e-6 * max(1.0, abs(value))), \
                f"third derivative {got} != finite differences {expected} of\n{source}"
            if checked < 3:  # and order 4 of the first few
                fourth = adsrc.grad(d3, wrt=2)(x, W, s, n)
                expected = (d3(x, W, s + 1e-3, n) - d3(x, W, s - 1e-3, n)) / 2e-3
                assert np.allclose(fourth, expected, rtol=1e-4, atol=1e-5 * max(1.0, abs(value))), \
                    f"fourth derivative {fourth} != finite differences {expected} of\n{source}"
            checked += 1
    assert checked >= PROGRAMS // 2


# ---- a derivative called inside, differentiated twice more -------------------------------------
def _inner(x):
    return np.sum(np.sin(x) * x ** 2)


def _calls_grad(x):
    return np.sum(adsrc.grad(_inner)(x) * np.cos(x))


def _numerical_jacobian(func, x, h=1e-5):
    return np.stack([(func(x + h * e) - func(x - h * e)) / (2 * h) for e in np.eye(x.size)], axis=-1)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_a_third_derivative_through_a_gradient_called_inside(eager):
    x, v = np.array([0.3, -0.5, 0.9]), np.array([1.0, 0.5, -1.0])
    with adsrc.eager_unthunk(eager):
        expected = _numerical_jacobian(adsrc.grad(_calls_grad), x)
        np.testing.assert_allclose(adsrc.hessian(_calls_grad)(x), expected, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(adsrc.hvp(_calls_grad)(x, v), expected @ v, rtol=1e-6, atol=1e-8)
        np.testing.assert_allclose(adsrc.jvp(adsrc.grad(_calls_grad), (x,), (v,))[1], expected @ v,
                                   rtol=1e-6, atol=1e-8)


def test_the_hessian_of_a_saddle_point_through_its_inner_gradient_ascent():
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent.parent / "examples"))
    import saddle

    p = np.array([0.8, -0.6])
    expected = _numerical_jacobian(adsrc.grad(saddle.worst_case), p)
    np.testing.assert_allclose(adsrc.hessian(saddle.worst_case)(p), expected, rtol=1e-6, atol=1e-8)


# ---- Tangent's kinds of test functions (tests/ported_tangent_functions.py), orders 3 and 4 ---------------
import ported_tangent_functions as ported  # noqa: E402

AT = 0.73


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("func", ported.FUNCTIONS, ids=lambda f: f.__name__)
def test_ported_functions_to_order_four(func, eager):
    rest = ported.OTHER_ARGUMENTS.get(func, ())
    with adsrc.eager_unthunk(eager):
        d2 = adsrc.grad(adsrc.grad(func, wrt=0), wrt=0)
        d3 = adsrc.grad(d2, wrt=0)
        d4 = adsrc.grad(d3, wrt=0)
        np.testing.assert_allclose(d3(AT, *rest), central(lambda s: d2(s, *rest), AT), rtol=1e-6, atol=1e-6)
        np.testing.assert_allclose(d4(AT, *rest), central(lambda s: d3(s, *rest), AT, 1e-3), rtol=1e-4, atol=1e-5)


def _two_arguments(x, y):
    return np.sum(np.sin(x) * y ** 2) + np.prod(np.cos(x))


def test_check_grads_checks_order_three():
    adsrc.check_grads(_two_arguments, (np.array([0.3, -0.5]), 0.7), order=3)
    with pytest.raises(adsrc.errors.InvalidArgument, match="order 1, 2, 3"):
        adsrc.check_grads(_two_arguments, (np.array([0.3, -0.5]), 0.7), order=0)


_WEIGHTS = np.array([[1.0, 0.5], [-0.3, 2.0]])
_HESSIAN = adsrc.hessian(_summed)


def _calls_hessian(x):
    return np.sum(adsrc.hessian(_summed)(x) * _WEIGHTS)


def _holds_a_hessian(x):
    return np.sum(np.sin(_HESSIAN(x)))


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("func", [_calls_hessian, _holds_a_hessian], ids=lambda f: f.__name__)
def test_reverse_mode_through_a_hessian_called_inside(func, eager):
    x = np.array([0.3, -0.7])
    with adsrc.eager_unthunk(eager):
        expected = np.array([(func(x + H * e) - func(x - H * e)) / (2 * H) for e in np.eye(2)])
        np.testing.assert_allclose(adsrc.grad(func)(x), expected, rtol=1e-6, atol=1e-8)


# ---- order 3 of the same computations spelled the ways users write them ----------------------------------
def _dot(x):
    return np.dot(x, x) * np.sin(x[0])


def _matmul(x):
    return (x @ x) * np.sin(x[0])


def _shape_loop_with_branch(x):
    s = 0.0
    for i in range(x.shape[0]):
        if x[i] > 0:
            s = s + x[i] ** 3
        else:
            s = s - np.sin(x[i])
    return s


def _comprehension(x):
    return sum([xi ** 2 * x[0] for xi in x])


def _concatenated(x):
    return np.sum(np.concatenate([x, x ** 2]) ** 2 * np.tanh(x[1]))


def _slice_write(x):
    y = x.copy()
    y[1:] = y[1:] * y[:-1]
    return np.sum(y ** 2)


def _recurrence(x):
    h = np.zeros(3)
    for _ in range(3):
        h = np.tanh(np.outer(x, x)[0] + h)
    return np.sum(h)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("func", [_dot, _matmul, _shape_loop_with_branch, _comprehension, _concatenated,
                                  _slice_write, _recurrence], ids=lambda f: f.__name__)
def test_third_derivatives_of_other_spellings(func, eager):
    x = np.array([0.4, -0.3, 0.7])
    with adsrc.eager_unthunk(eager):
        hessian = adsrc.hessian(func)
        np.testing.assert_allclose(adsrc.jacobian(hessian)(x), _numerical_jacobian(hessian, x), rtol=1e-6, atol=1e-7)
