"""Specialized adjoints of functions of lists and tuples (backend/specialized.py's sequence kinds), of reads
by index written out (optimize/indexed.py), and of Stacks fed by ``push`` (values/stacks.py).

A list or tuple of arrays of one dtype and shape, or of numbers of one type, has a kind; any other (mixed
shapes or dtypes, empty, of other objects) is unknown and runs the generic adjoint or another
specialization. Each case is compared with the generic adjoint (values bit for bit, eager gradients bit
for bit, lazy ones to rounding) and with central finite differences in lazy and eager mode.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import adsrc
from adsrc.backend.pipeline import REVERSE, compile as compiled
from adsrc.backend.specialized import signature
from adsrc.runtime import rule_vjp
from adsrc.values.stacks import Stack
from gradcheck import check
from test_specialize import compare, specialized_source

rng = np.random.default_rng(3)


def first_rows(W, xs):
    return sum((W @ xi)[0] for xi in xs)


def tanh_sums(W, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(W @ x))
    return s


def rnn(Wh, Wx, h0, xs):
    h = h0
    for xt in xs:
        h = np.tanh(Wh @ h + Wx @ xt)
    return np.sum(h)


def picked(W, xs, n):
    s = 0.0
    for i in range(n):
        s = s + (W @ xs[i])[i % 2] * 0.5
    return s


def of_floats(w, cs):
    s = 0.0
    for c in cs:
        s = s + math.sin(w * c) * c
    return s


def _vectors(n, size, dtype=np.float64):
    return [rng.standard_normal(size).astype(dtype) for _ in range(n)]


def test_list_of_arrays_reads_like_hand_written_code():
    W, xs = rng.standard_normal((4, 4)), _vectors(9, 4)
    source = specialized_source(first_rows, (W, xs))
    assert "xs: list[9 x float64[4]]" in source
    assert "n_xi = len(xs)" in source and "tape.append(xi)" in source
    backward = source.split("def pullback", 1)[1]
    assert "np.zeros((4,))" in backward and "dW_at_xi[0] += dsum_xi" in backward
    assert "dW_stack.push(dW_at_xi, xi)" in backward and "getitem" not in source
    eager = specialized_source(first_rows, (W, xs), eager=True)
    assert "np.zeros((4,))" in eager and "getitem" not in eager
    compare(first_rows, (W, xs), 0, exact_lazy=False)
    check(first_rows, W, xs)


@pytest.mark.parametrize("sequence", [list, tuple])
def test_lists_and_tuples_agree_with_the_generic_adjoint(sequence):
    W = rng.standard_normal((5, 3)) * 0.5
    xs = sequence(_vectors(7, 3))
    assert "specialized for" in specialized_source(tanh_sums, (W, xs))
    compare(tanh_sums, (W, xs), 0, exact_lazy=False)
    check(tanh_sums, W, xs)
    check(first_rows, rng.standard_normal((2, 3)), xs)


def test_rnn_over_a_list():
    Wh, Wx, h0 = rng.standard_normal((6, 6)) * 0.3, rng.standard_normal((6, 2)), rng.standard_normal(6)
    for xs in (_vectors(40, 2), rng.standard_normal((40, 2))):  # 40 steps: the Stacks compact on the way
        source = specialized_source(rnn, (Wh, Wx, h0, xs), wrt=(0, 1))
        assert "dWh_at_h_plus_Wx_at_xt.dot(Wh)" in source and "matmul_db" not in source and ".push(" in source
        compare(rnn, (Wh, Wx, h0, xs), (0, 1, 2), exact_lazy=False)
        check(rnn, Wh, Wx, h0, xs, wrt=(0, 1, 2))


def test_index_of_a_loop_counter_and_other_dtypes():
    W, xs = rng.standard_normal((2, 3)), _vectors(5, 3)
    source = specialized_source(picked, (W, xs, 5))
    assert "np.zeros((2,))" in source
    compare(picked, (W, xs, 5), 0, exact_lazy=False)
    check(picked, W, xs, 5)
    W32, xs32 = W.astype(np.float32), _vectors(5, 3, np.float32)
    compare(picked, (W32, xs32, 5), 0, exact_lazy=False)
    check(picked, W32, xs32, 5, rtol=1e-2, atol=1e-3)
    compare(first_rows, (W, [x.astype(np.float32) for x in xs]), 0, exact_lazy=False)  # float64 W, float32 x


def test_negative_zero_cotangent_is_kept_bit_for_bit():
    def f(W, xs):
        return sum((W @ xi)[1] * -0.0 for xi in xs)

    W, xs = rng.standard_normal((2, 2)), _vectors(3, 2)
    compare(f, (W, xs), 0)


def test_list_of_floats_and_gradients_of_the_list():
    cs = [float(c) for c in rng.standard_normal(6)]
    assert "cs: list[6 x float]" in specialized_source(of_floats, (0.7, cs))
    compare(of_floats, (0.7, cs), (0, 1))
    check(of_floats, 0.7, cs, wrt=(0, 1))
    xs = _vectors(4, 3)
    compare(first_rows, (rng.standard_normal((2, 3)), xs), (0, 1), exact_lazy=False)


@pytest.mark.parametrize("xs", [
    [np.ones(3), np.ones(4)],                                         # shapes differ
    [np.ones(3), np.ones(3, np.float32)],                             # dtypes differ
    [np.ones(3), 1.0],                                                # an array and a number
    [1.0, 2],                                                         # a float and an int
    [np.ones(3), np.ma.masked_array(np.ones(3))],                     # a subclass
    [],                                                               # empty
    [[1.0, 2.0], [3.0, 4.0]],                                         # lists of lists
])
def test_sequences_without_one_kind_are_unknown(xs):
    assert signature([np.ones(2), xs])[1] is None


def test_sequences_of_one_kind_have_a_key():
    assert signature([[np.ones(3), np.zeros(3)]]) == ((list, 2, np.dtype(np.float64), (3,)),)
    assert signature([(1.0, 2.0)]) == ((tuple, 2, float),)
    assert signature([[np.float64(1.0)], [3]]) == ((list, 1, np.float64), (list, 1, int))


def test_mixed_sequences_run_the_generic_adjoint():
    def total(W, xs):
        s = 0.0
        for x in xs:
            s = s + np.sum(np.tanh(W @ x[:2]))
        return s

    W = rng.standard_normal((3, 2))
    mixed = [rng.standard_normal(2), rng.standard_normal(3), rng.standard_normal(2).astype(np.float32)]
    assert "specialized" not in specialized_source(total, (W, mixed))  # W's kind alone changes nothing
    compare(total, (W, mixed), 0, exact_lazy=False)
    check(total, W, mixed, rtol=1e-4)
    for xs in ([], _vectors(3, 2), _vectors(5, 2), mixed):  # a new key per length; the empty list
        expected = sum(np.outer(1.0 - np.tanh(W @ x[:2]) ** 2, x[:2]) for x in xs) if xs else np.zeros((3, 2))
        np.testing.assert_allclose(adsrc.grad(total)(W, xs), expected, rtol=1e-10)
    keys = compiled(total, (0,), REVERSE).specialized
    assert sum(1 for key in keys if key[1] is not None) == 2


def test_a_list_passed_to_another_function_is_not_known():
    def extend(xs):
        return xs + [xs[0]]

    def f(W, xs):
        s = 0.0
        for x in extend(xs):
            s = s + np.sum(W @ x)
        return s

    def g(W, xs):
        ys = xs
        return sum(np.sum(W @ y) for y in ys)

    W, xs = rng.standard_normal((2, 3)), _vectors(4, 3)
    for fn in (f, g):
        assert "xs: list" not in specialized_source(fn, (W, xs))
        check(fn, W, xs)


def test_stack_push_adds_as_add_does():
    matmul_da = rule_vjp("numpy.matmul", 0)
    W = rng.standard_normal((3, 4))
    calls = [(rng.standard_normal(3), None, W, rng.standard_normal(4)) for _ in range(10)]
    calls.append((np.array([1.5]), None, rng.standard_normal((1, 4)), rng.standard_normal(4)))  # one element
    saved = adsrc.config.max_pending
    adsrc.config.max_pending = 3
    try:
        pushed, added = Stack(matmul_da), Stack(matmul_da)
        for call in calls[:10]:
            pushed.push(*call)
            added.add(*call)
            assert len(pushed) <= 3  # the bound holds
        small = Stack(matmul_da)
        small.push(*calls[10])
        assert len(small) == 0
    finally:
        adsrc.config.max_pending = saved
    np.testing.assert_allclose(pushed.total(), added.total(), rtol=1e-13)
    np.testing.assert_allclose(pushed.total(), sum(np.outer(g, b) for g, _, _, b in calls[:10]), rtol=1e-12)
    np.testing.assert_array_equal(small.total(), np.outer(calls[10][0], calls[10][3]))


def test_gradient_of_a_tuple_of_arrays_read_by_index():
    def f(ps, x):
        return np.sum(np.tanh(ps[0] @ x)) + np.sum(ps[1] @ x * x)

    ps, x = (rng.standard_normal((3, 3)), rng.standard_normal((3, 3))), rng.standard_normal(3)
    assert "ps: tuple[2 x float64[3, 3]]" in specialized_source(f, (ps, x))
    compare(f, (ps, x), (0, 1), exact_lazy=False)
    check(f, ps, x, wrt=(0, 1))
