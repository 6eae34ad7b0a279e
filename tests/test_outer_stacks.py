"""Typed stacks of outer products (values/stacks.py ``OuterStack``, optimize/stacks.py ``outer_pushes``) and
loop-invariant statements hoisted out of backward loops (optimize/hoist.py).

A specialized lazy adjoint whose loop adds ``g xᵀ`` of float64 vectors to a gradient holds the factors
and adds them up as GEMMs, one stacked ``g`` for several products of one cotangent; what a backward loop
computes the same at every step is computed once before it, in both modes. Each case is compared with
the generic adjoint and central finite differences, in lazy and eager mode.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.values.stacks import OuterStack
from gradcheck import check
from test_specialize import compare, specialized_source
from test_specialize_sequences import first_rows, rnn, tanh_sums
from test_stacks import while_loop

rng = np.random.default_rng(11)


@pytest.fixture
def small_bounds():
    saved = adsrc.config.max_pending, adsrc.config.max_pending_bytes
    yield
    adsrc.config.max_pending, adsrc.config.max_pending_bytes = saved


def _outer_sum(gs, xs):
    return sum(np.outer(g, x) for g, x in zip(gs, xs))


@pytest.mark.parametrize("limits", [(32, 2**26), (3, 2**26), (1000, 100), (1, 1)])
def test_outer_stack_sums_the_products_within_its_bounds(small_bounds, limits):
    adsrc.config.max_pending, adsrc.config.max_pending_bytes = limits
    gs, xs, ys = rng.standard_normal((10, 4)), rng.standard_normal((10, 3)), rng.standard_normal((10, 5))
    stack = OuterStack("here.py:2")
    most = 0
    for g, x, y in zip(gs, xs, ys):
        stack.push(g, x, y)
        most = max(most, len(stack))
    row_bytes = gs[0].nbytes + xs[0].nbytes + ys[0].nbytes
    assert most <= max(1, min(limits[0], limits[1] // row_bytes)) + 1
    np.testing.assert_allclose(stack.total(0), _outer_sum(gs, xs), rtol=1e-13)
    np.testing.assert_allclose(stack.total(1), _outer_sum(gs, ys), rtol=1e-13)
    assert not np.shares_memory(stack.total(0), stack.total(1))  # each total an array of its own


def test_vectors_that_are_not_contiguous(small_bounds):
    adsrc.config.max_pending = 2
    G, X = rng.standard_normal((3, 7)), rng.standard_normal((5, 7))
    stack = OuterStack()
    for k in range(7):
        stack.push(G[:, k], X[:, k], G[:, k])
    np.testing.assert_allclose(stack.total(0), G @ X.T, rtol=1e-13)
    np.testing.assert_allclose(stack.total(1), G @ G.T, rtol=1e-13)


def test_outer_stack_alone():
    stack = OuterStack("here.py:3")
    assert stack.total() is adsrc.zero and repr(stack) == "OuterStack(0 pending from here.py:3)"
    g = np.array([1.0, -2.0])
    stack.push(g, np.array([0.5, 0.25, 4.0]))
    assert repr(stack) == "OuterStack(1 pending from here.py:3)"
    total = stack.total()
    np.testing.assert_array_equal(total, np.outer(g, [0.5, 0.25, 4.0]))
    assert not np.shares_memory(total, g)


def test_a_failing_batch_names_its_line(small_bounds):
    adsrc.config.max_pending = 1
    stack = OuterStack("model.py:7")
    stack.push(np.ones(2), np.ones(3))
    with pytest.raises(ValueError) as error:  # lengths that differ: the kinds rule this out in generated code
        stack.push(np.ones(2), np.ones(4))
    assert "model.py:7" in "".join(getattr(error.value, "__notes__", []))


def test_rnn_stacks_one_cotangent_for_both_weights():
    Wh, Wx, h0 = rng.standard_normal((5, 5)) * 0.4, rng.standard_normal((5, 2)), rng.standard_normal(5)
    for xs in ([rng.standard_normal(2) for _ in range(70)], rng.standard_normal((70, 2))):  # compacts twice
        source = specialized_source(rnn, (Wh, Wx, h0, xs), wrt=(0, 1))
        backward = source.split("def pullback", 1)[1]
        assert "dWx_dWh_stack = OuterStack(" in backward and "Stack(matmul" not in backward
        assert "dWx_dWh_stack.push(dWh_at_h_plus_Wx_at_xt, xt, h_prev)" in backward
        assert "dWx = dWx_dWh_stack.total(0)" in backward and "dWh = dWx_dWh_stack.total(1)" in backward
        assert "dWh_at_h_plus_Wx_at_xt.dot(Wh)" in backward
        eager = specialized_source(rnn, (Wh, Wx, h0, xs), wrt=(0, 1), eager=True)
        assert "OuterStack" not in eager and ".dot(Wh)" in eager
        compare(rnn, (Wh, Wx, h0, xs), (0, 1, 2), exact_lazy=False)
        check(rnn, Wh, Wx, h0, xs, wrt=(0, 1, 2))


def test_a_sums_cotangent_is_made_once_before_the_loop():
    W, xs = rng.standard_normal((4, 3)), [rng.standard_normal(3) for _ in range(9)]
    for eager in (False, True):
        source = specialized_source(first_rows, (W, xs), eager=eager)
        backward = source.split("def pullback", 1)[1]
        before, loop = backward.split("for _ in range(n_xi):", 1)
        assert "dW_at_xi = np.zeros((4,))" in before and "dW_at_xi[0] += dsum_xi" in before
        assert "(the same at every step of the loop below)" in before
        assert "np.zeros" not in loop and "+=" not in loop
    assert "dW_stack.push(dW_at_xi, xi)" in specialized_source(first_rows, (W, xs))
    compare(first_rows, (W, xs), 0, exact_lazy=False)
    check(first_rows, W, xs)
    source = specialized_source(tanh_sums, (W, xs))
    assert "= np.full((4,), ds)" in source.split("for _ in", 1)[0].split("def pullback", 1)[1]
    compare(tanh_sums, (W, xs), 0, exact_lazy=False)
    check(tanh_sums, W, xs)


def test_zero_trip_loops_with_hoisted_statements():
    W = rng.standard_normal((4, 3))
    empty = np.zeros((0, 3))
    for f in (first_rows, tanh_sums):
        for eager in (False, True):
            got = adsrc.grad(f, eager=eager)(W, empty)
            np.testing.assert_array_equal(got, np.zeros_like(W))
        check(f, W, empty)


def rewritten_cotangent(W, xs):
    s = 0.0
    for k, x in enumerate(xs):
        s = s + np.sum(W @ x) * k  # the cotangent of W @ x changes with k: nothing to hoist
    return s


def written_in_place(W, xs):
    s = 0.0
    out = np.zeros(len(xs))
    for i in range(len(xs)):
        out[i] = np.sum(np.tanh(W @ xs[i]))  # the backward loop writes into an array in place
        s = s + out[i]
    return s + np.sum(out)


def weights_and_bias(W, b, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(W @ x + b)) + np.sum(x @ W)  # two kinds of products of W; a bias
    return s


@pytest.mark.parametrize("f, wrt", [(rewritten_cotangent, 0), (written_in_place, 0), (weights_and_bias, (0, 1))])
def test_loops_that_change_from_step_to_step(f, wrt):
    W, b = rng.standard_normal((3, 3)) * 0.5, rng.standard_normal(3)
    xs = rng.standard_normal((40, 3))
    args = (W, b, xs) if f is weights_and_bias else (W, xs)
    assert "specialized for" in specialized_source(f, args, wrt=wrt)
    compare(f, args, wrt, exact_lazy=False)
    check(f, *args, wrt=wrt)


def nested(W, xs):
    s = 0.0
    for x in xs:
        for k in range(3):
            s = s + (W @ x)[k % 2] * 0.5  # a one-hot cotangent in the inner loop
    return s


def stops_early(W, xs, stop):
    s = 0.0
    for i in range(len(xs)):
        if i == stop:
            break
        s = s + (W @ xs[i])[0]
    return s


@pytest.mark.parametrize("f, extra", [(nested, ()), (while_loop, ()), (stops_early, (0,)), (stops_early, (3,))])
def test_hoisting_in_nested_while_and_broken_loops(f, extra):
    W, xs = rng.standard_normal((3, 4)) * 0.5, [rng.standard_normal(4) for _ in range(6)]
    args = (W, xs, *extra)
    assert "specialized for" in specialized_source(f, args)
    compare(f, args, 0, exact_lazy=False)
    check(f, *args)


def test_an_inner_loops_invariant_leaves_the_outer_loop_too():
    W, xs = rng.standard_normal((3, 4)), [rng.standard_normal(4) for _ in range(5)]
    backward = specialized_source(nested, (W, xs)).split("def pullback", 1)[1]
    before, loops = backward.split("for __1 in range(n_x):", 1)
    assert "dW_at_x_k_mod_2 = ds * 0.5" in before and "(the same at every step of the loop below)" in before
    assert "ds * 0.5" not in loops and "the same at every step" not in loops
    inner = loops.split("for _ in range(n_k):", 1)[1]
    assert "dW_at_x = np.zeros((3,))" in inner and "dW_at_x[k_mod_2] += dW_at_x_k_mod_2" in inner
