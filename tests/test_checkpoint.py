"""Checkpointing: adsrc.checkpoint (a call recomputed in the backward sweep) and adsrc.checkpoint_loop
(one stored state per segment). Every gradient is checked against the un-checkpointed gradient (to
rounding) and central finite differences in float64, lazy and eager; forward mode and second order
against the plain function; memory by tracemalloc's peak (allocation sizes, not time)."""
from __future__ import annotations

import math
import tracemalloc

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument, RefusedWhenRun
from adsrc.rules.checkpoint import segment_length
from gradcheck import check

RNG = np.random.default_rng(7)


# ---- a checkpointed function ------------------------------------------------------------
def block_plain(x, w):
    h = np.tanh(w @ x)
    return h * 2.0 + np.sin(x)


block = adsrc.checkpoint(block_plain)


def layers(x, w):
    for _ in range(4):
        x = block(x, w)
    return np.sum(x ** 2)


def layers_plain(x, w):
    for _ in range(4):
        x = block_plain(x, w)
    return np.sum(x ** 2)


X = RNG.normal(size=3)
W = RNG.normal(size=(3, 3)) * 0.4


def test_a_checkpointed_call_gives_the_plain_gradient_and_finite_differences():
    for eager in (False, True):
        got = adsrc.grad(layers, wrt=(0, 1), eager=eager)(X, W)
        plain = adsrc.grad(layers_plain, wrt=(0, 1), eager=eager)(X, W)
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-13, atol=1e-15)
    check(layers, X, W, wrt=(0, 1))


def test_a_checkpointed_call_is_the_function_when_called_normally():
    assert block(X, W) is not None and np.array_equal(block(X, W), block_plain(X, W))
    assert block.__name__ == "block_plain" and block.__wrapped__ is block_plain
    assert adsrc.checkpoint(block) .__wrapped__ is block_plain  # checkpointing twice is once
    assert layers(X, W) == layers_plain(X, W)
    with pytest.raises(InvalidArgument, match="Python function"):
        adsrc.checkpoint(np.tanh)


def test_the_adjoint_links_to_the_recomputing_derivative():
    source = adsrc.adjoint_source(layers, wrt=1)
    assert "adjoint_of(block, wrt=(0, 1), eager=False)" in source
    assert type(adsrc.runtime.adjoint_of(block, (0,), False)).__name__ == "RecomputingDerivative"
    assert type(adsrc.runtime.adjoint_of(block_plain, (0,), False)).__name__ == "CalleeDerivative"


@adsrc.checkpoint
def scaled_sum(x, scale=2.0, *rest):
    total = x * scale
    for r in rest:
        total = total + np.cos(r * x)
    return total


def uses_varargs(x, y):
    return np.sum(scaled_sum(x, 3.0, y, x * 0.5)) + np.sum(scaled_sum(y))


def test_a_checkpointed_function_with_star_args_and_a_default():
    check(uses_varargs, X, X[::-1].copy(), wrt=(0, 1))


def test_grad_of_a_checkpointed_function_itself_is_grad_of_the_function():
    for eager in (False, True):
        got = adsrc.grad(adsrc.checkpoint(layers_plain), wrt=(0, 1), eager=eager)(X, W)
        plain = adsrc.grad(layers_plain, wrt=(0, 1), eager=eager)(X, W)
        for a, b in zip(got, plain):
            np.testing.assert_array_equal(a, b)


def test_forward_mode_and_second_order_through_a_checkpointed_call():
    tx, tw = RNG.normal(size=3), RNG.normal(size=(3, 3))
    value, tangent = adsrc.jvp(layers, (X, W), (tx, tw))
    plain_value, plain_tangent = adsrc.jvp(layers_plain, (X, W), (tx, tw))
    assert value == plain_value
    np.testing.assert_allclose(tangent, plain_tangent, rtol=1e-13)
    np.testing.assert_allclose(adsrc.hvp(layers)(X, W, tx), adsrc.hvp(layers_plain)(X, W, tx), rtol=1e-12)
    np.testing.assert_allclose(adsrc.hessian(layers)(X, W), adsrc.hessian(layers_plain)(X, W), rtol=1e-12)


SHIFT = np.ones(3)


@adsrc.checkpoint
def shifted(x):
    return np.sin(x) + SHIFT


def uses_shifted(x):
    return np.sum(shifted(x) ** 2)


def test_a_recomputation_that_gives_another_value_is_refused():
    global SHIFT
    value, pullback = adsrc.vjp(uses_shifted, X)
    saved = SHIFT
    SHIFT = SHIFT + 1.0  # the global the function reads changes between the sweeps
    try:
        with pytest.raises(RefusedWhenRun, match="gave another value"):
            pullback(1.0)
    finally:
        SHIFT = saved
    np.testing.assert_allclose(pullback(1.0), adsrc.grad(uses_shifted)(X))


# ---- a checkpointed loop ----------------------------------------------------------------
def heat_step(u, a):
    lap = np.roll(u, 1) - 2.0 * u + np.roll(u, -1)
    return u + a * lap


def heat(u0, a, n=37, every=None):
    u = adsrc.checkpoint_loop(heat_step, u0, n, (a,), every)
    return np.sum(u ** 2) + np.sum(np.sin(u))


def heat_plain(u0, a, n=37):
    u = u0
    for _ in range(n):
        u = heat_step(u, a)
    return np.sum(u ** 2) + np.sum(np.sin(u))


U0 = RNG.normal(size=12)
A = 0.2 + 0.02 * RNG.normal(size=12)


@pytest.mark.parametrize("n, every", [(37, None), (37, 1), (37, 5), (37, 37), (37, 100), (1, None), (0, None),
                                      (16, None)])
def test_a_checkpointed_loop_gives_the_plain_gradient(n, every):
    for eager in (False, True):
        got = adsrc.grad(heat, wrt=(0, 1), eager=eager)(U0, A, n, every)
        plain = adsrc.grad(heat_plain, wrt=(0, 1), eager=eager)(U0, A, n)
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    assert heat(U0, A, n, every) == heat_plain(U0, A, n)


def test_a_checkpointed_loop_matches_finite_differences():
    check(heat, U0, A, wrt=(0, 1))
    check(heat, U0, 0.21, wrt=(0, 1))  # a float constant


def coupled_step(state, a, b, cells, gain=0.5):
    u, v = state
    return (u + a * (v - u) * gain, v + b * np.tanh(u[:cells].sum()))


def coupled(u, v, a, b):
    u, v = adsrc.checkpoint_loop(coupled_step, (u, v), 9, (a, b, 2), every=4)
    return np.sum(u * v)


def coupled_plain(u, v, a, b):
    state = (u, v)
    for _ in range(9):
        state = coupled_step(state, a, b, 2)
    u, v = state
    return np.sum(u * v)


def test_a_loop_over_a_tuple_state_with_an_integer_constant_and_a_default():
    args = (RNG.normal(size=4), RNG.normal(size=4), 0.3, 0.1)
    check(coupled, *args, wrt=(0, 1, 2, 3))
    for eager in (False, True):
        got = adsrc.grad(coupled, wrt=(0, 1, 2, 3), eager=eager)(*args)
        plain = adsrc.grad(coupled_plain, wrt=(0, 1, 2, 3), eager=eager)(*args)
        for a, b in zip(got, plain):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_the_pullback_of_a_checkpointed_loop_can_be_called_again():
    value, pullback = adsrc.vjp(heat, U0, A, wrt=(0, 1))
    first, second = pullback(1.0), pullback(2.0)
    for a, b in zip(first, second):
        np.testing.assert_allclose(2 * a, b, rtol=1e-13)


def test_forward_mode_and_second_order_through_a_checkpointed_loop():
    tu, ta = RNG.normal(size=12), RNG.normal(size=12)
    value, tangent = adsrc.jvp(heat, (U0, A), (tu, ta))
    plain_value, plain_tangent = adsrc.jvp(heat_plain, (U0, A), (tu, ta))
    assert value == plain_value
    np.testing.assert_allclose(tangent, plain_tangent, rtol=1e-12)
    np.testing.assert_allclose(adsrc.hvp(heat)(U0, A, tu), adsrc.hvp(heat_plain)(U0, A, tu), rtol=1e-12)
    np.testing.assert_allclose(adsrc.hvp(heat, wrt=1)(U0, A, ta), adsrc.hvp(heat_plain, wrt=1)(U0, A, ta),
                               rtol=1e-12)


def test_the_loops_arguments_are_checked():
    with pytest.raises(InvalidArgument, match="tuple"):
        adsrc.checkpoint_loop(heat_step, U0, 3, A)
    with pytest.raises(InvalidArgument, match="non-negative"):
        adsrc.checkpoint_loop(heat_step, U0, -1, (A,))
    with pytest.raises(InvalidArgument, match="every"):
        adsrc.checkpoint_loop(heat_step, U0, 3, (A,), 0)
    assert np.array_equal(adsrc.checkpoint_loop(np.tanh, U0, 2), np.tanh(np.tanh(U0)))
    with pytest.raises(InvalidArgument, match="Python function"):
        adsrc.grad(tanh_loop)(U0)


def tanh_loop(u):
    return np.sum(adsrc.checkpoint_loop(np.tanh, u, 3))


def test_segment_length_is_the_ceiling_of_the_square_root():
    assert [segment_length(n, None) for n in (0, 1, 2, 4, 5, 9, 10, 10000)] == [1, 1, 2, 2, 3, 3, 4, 100]
    assert segment_length(50, 7) == 7


# ---- memory: tracemalloc's peak while the gradient is computed ---------------------------
def peak_bytes(func, *args) -> int:
    tracemalloc.start()
    try:
        adsrc.grad(func, wrt=(0, 1))(*args)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def long_heat(u0, a, n):
    u = adsrc.checkpoint_loop(heat_step, u0, n, (a,))
    return np.sum(u ** 2)


def long_heat_plain(u0, a, n):
    u = u0
    for _ in range(n):
        u = heat_step(u, a)
    return np.sum(u ** 2)


def test_a_checkpointed_loop_keeps_memory_of_order_sqrt_n_states():
    u0 = np.linspace(0.0, 1.0, 2000)  # 16 KB
    a = np.full(2000, 0.1)
    state = u0.nbytes
    long_heat(u0, a, 4), long_heat_plain(u0, a, 4)  # compile outside the measurement
    adsrc.grad(long_heat, wrt=(0, 1))(u0, a, 4), adsrc.grad(long_heat_plain, wrt=(0, 1))(u0, a, 4)
    for n in (100, 400):
        plain = peak_bytes(long_heat_plain, u0, a, n)
        checkpointed = peak_bytes(long_heat, u0, a, n)
        assert plain > n * state  # every step's tape: the test can tell the two apart
        assert checkpointed < 16 * math.sqrt(n) * state, (n, checkpointed / state)


def deep_plain(x):
    h = x
    for _ in range(20):
        h = np.sin(h) * 1.01
    return h


deep = adsrc.checkpoint(deep_plain)


def chain(x, scale):
    for _ in range(10):
        x = deep(x) * scale
    return np.sum(x)


def chain_plain(x, scale):
    for _ in range(10):
        x = deep_plain(x) * scale
    return np.sum(x)


def test_a_checkpointed_call_keeps_no_tape_of_its_function_between_the_sweeps():
    x = np.linspace(0.0, 1.0, 2000)
    state = x.nbytes
    adsrc.grad(chain, wrt=(0, 1))(x, 1.0), adsrc.grad(chain_plain, wrt=(0, 1))(x, 1.0)  # compile first
    plain = peak_bytes(chain_plain, x, 1.0)
    checkpointed = peak_bytes(chain, x, 1.0)
    assert plain > 200 * state  # 10 calls x 20 steps, each keeping its values
    assert checkpointed < 80 * state, checkpointed / state  # 10 arguments and one call's tape
    check(chain, x[:5].copy(), 0.9, wrt=(0, 1))


# ---- the example and the benchmark ------------------------------------------------------
def test_the_example_and_the_quick_benchmark_run():
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    example = subprocess.run([sys.executable, os.path.join(root, "examples", "heat_checkpoint.py")],
                             capture_output=True, text=True, timeout=120, cwd=root)
    assert example.returncode == 0, example.stderr
    assert "the two gradients agree" in example.stdout
    bench = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "checkpointing.py"), "--quick"],
                           capture_output=True, text=True, timeout=120, cwd=root)
    assert bench.returncode == 0, bench.stderr  # nonzero when a checkpointed gradient differs from the plain one
    assert "| 200 | checkpointed |" in bench.stdout


def test_the_examples_gradient_against_finite_differences():
    import os
    import sys

    sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples"))
    import heat_checkpoint

    x = np.linspace(0.0, 1.0, 6)
    check(heat_checkpoint.energy, np.exp(-(x - 0.3) ** 2), 0.25 + 0.2 * np.sin(2 * np.pi * x), wrt=(0, 1))


@adsrc.checkpoint
def wave(x):
    return math.sin(x) * x


def scalar_steps(x, c):
    return c * x + math.cos(x)


def twice(x):
    y = wave(x) + wave(x * 0.5)
    return adsrc.checkpoint_loop(scalar_steps, y, 5, (0.9,), 2)


def twice_plain(x):
    y = wave.__wrapped__(x) + wave.__wrapped__(x * 0.5)
    for _ in range(5):
        y = scalar_steps(y, 0.9)
    return y


def test_grad_of_grad_through_both_forms_on_a_python_float():
    for x in (0.3, 1.7):
        assert adsrc.grad(twice)(x) == pytest.approx(adsrc.grad(twice_plain)(x), rel=1e-13)
        assert adsrc.grad(adsrc.grad(twice))(x) == pytest.approx(adsrc.grad(adsrc.grad(twice_plain))(x), rel=1e-12)
        h = 1e-5
        fd = (adsrc.grad(twice)(x + h) - adsrc.grad(twice)(x - h)) / (2 * h)
        assert adsrc.grad(adsrc.grad(twice))(x) == pytest.approx(fd, rel=1e-6)
    check(twice, 0.4)


def by_keyword(u0, a):
    u = adsrc.checkpoint_loop(heat_step, u0, 20, constants=(a,), every=3)
    return np.sum(u ** 2)


def local_step(u0, a):
    s = lambda u, a: u * a  # noqa: E731
    return np.sum(adsrc.checkpoint_loop(s, u0, 20, (a,)))


def test_keywords_the_constants_alone_and_a_local_step():
    check(by_keyword, U0, A, wrt=1)
    np.testing.assert_allclose(adsrc.grad(heat, wrt=1)(U0, A), adsrc.grad(heat_plain, wrt=1)(U0, A), rtol=1e-12)
    check(local_step, U0, A, wrt=(0, 1))  # a local step function is made as Python makes it (closures.py)


def heat_loop_plain(u0, a, n):
    u = u0
    for _ in range(n):
        u = heat_step(u, a)
    return u


def test_the_loop_itself_differentiated_from_the_api():
    cotangent = RNG.normal(size=12)
    for eager in (False, True):
        value, pullback = adsrc.vjp(adsrc.checkpoint_loop, heat_step, U0, 30, (A,), wrt=(1, 3), eager=eager)
        plain_value, plain_pullback = adsrc.vjp(heat_loop_plain, U0, A, 30, wrt=(0, 1), eager=eager)
        assert np.array_equal(value, plain_value)
        (d_state, d_constants), (d_u0, d_a) = pullback(cotangent), plain_pullback(cotangent)
        np.testing.assert_allclose(d_state, d_u0, rtol=1e-12)
        assert isinstance(d_constants, tuple) and len(d_constants) == 1
        np.testing.assert_allclose(d_constants[0], d_a, rtol=1e-12)


def test_forward_mode_with_a_tuple_state_and_an_integer_constant():
    # (Second order is not compared here: a Hessian through a tuple of arrays is wrong in adsrc
    # with or without checkpointing, e.g. s = (u, v); a, b = s; np.sum(a * a * b).)
    args = (RNG.normal(size=4), RNG.normal(size=4), 0.3, 0.1)
    tangents = (RNG.normal(size=4), RNG.normal(size=4), 0.5, -0.2)
    value, tangent = adsrc.jvp(coupled, args, tangents)
    plain_value, plain_tangent = adsrc.jvp(coupled_plain, args, tangents)
    assert value == plain_value and tangent == pytest.approx(plain_tangent, rel=1e-12)
    eps = 1e-6
    shifted = [[a + eps * t for a, t in zip(args, tangents)], [a - eps * t for a, t in zip(args, tangents)]]
    assert tangent == pytest.approx((coupled(*shifted[0]) - coupled(*shifted[1])) / (2 * eps), rel=1e-6)
