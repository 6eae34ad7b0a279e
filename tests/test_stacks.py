"""Stacked accumulation (adsrc/optimize/stacks.py, adsrc/values/stacks.py) and one tape push per iteration.

A loop of the backward sweep that only adds to a gradient collects each
step's deferred contribution on a Stack; these tests check that the result is
the eager gradient and the finite-difference one, for loops whose
contributions are of one kind or several, run zero times, break, nest, and
that the Stack keeps the memory bounds of adsrc.config.
"""
import sys
from pathlib import Path

import numpy as np
import pytest

import adsrc
from adsrc.values.stacks import Stack
from gradcheck import check

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.workloads import loop512 as outer_products, rnn100 as rnn  # noqa: E402

rng = np.random.default_rng(7)
W = rng.standard_normal((4, 3)) * 0.5
XS = rng.standard_normal((6, 3))


def two_kinds(W, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(W @ x)) + np.sum(W * x[0])
    return s


def branches(W, xs):
    s = 0.0
    for x in xs:
        if x[0] > 0:
            s = s + np.sum(W @ x)
        else:
            s = s + np.sum(np.sin(W) * x[1])
    return s


def breaks(W, xs, stop):
    s = 0.0
    for i in range(len(xs)):
        if i == stop:
            break
        s = s + np.sum(np.tanh(W @ xs[i]))
    return s


def nested(W, xs):
    s = 0.0
    for x in xs:
        for k in range(3):
            s = s + np.sum(np.tanh(W @ (x * k)))
    return s


def read_by_the_outer_loop(W, xs):
    s = 0.0
    V = W
    for k in range(3):
        for x in xs:
            s = s + np.sum(np.tanh(V @ x))
        V = np.sin(V) * 1.5
    return s


def while_loop(W, xs):
    s = 0.0
    i = 0
    while i < len(xs):
        s = s + np.sum(np.cos(W @ xs[i]))
        i = i + 1
    return s


def scalar_weight(a, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.sin(a * x))
    return s


@pytest.mark.parametrize("f", [outer_products, two_kinds, branches, nested, read_by_the_outer_loop, while_loop])
def test_stacked_gradients_match_eager_and_finite_differences(f):
    check(f, W, XS)


def test_a_gradient_the_outer_loop_reads_is_stacked_in_the_inner_loop_only():
    source = adsrc.adjoint_source(read_by_the_outer_loop)
    outer = source.split("def pullback", 1)[1].split("for ", 1)[1]
    inner = outer.split("for ", 1)[1]
    assert "dV_stack = Stack(" in outer.split("for ", 1)[0] and "dV_stack.add(" in inner
    assert "dV = accumulate(dV, dV_stack.total())" in source


def test_rnn_matches_eager_and_finite_differences():
    Wh = rng.standard_normal((3, 3)) * 0.4
    check(rnn, Wh, W[:3], np.zeros(3), XS, wrt=(0, 1, 2))


@pytest.mark.parametrize("stop", [0, 1, 4, 99])
def test_break_at_any_step(stop):
    check(breaks, W, XS, stop)


def test_zero_trip_loop_gives_a_zero_gradient():
    empty = np.zeros((0, 3))
    for eager in (False, True):
        got = adsrc.grad(two_kinds, eager=eager)(W, empty)
        np.testing.assert_array_equal(got, np.zeros_like(W))
    check(two_kinds, W, empty)


def test_scalar_weight_is_computed_at_once():
    check(scalar_weight, 0.7, XS)


def test_the_lazy_code_stacks_and_pushes_once_per_iteration():
    source = adsrc.adjoint_source(rnn, wrt=(0, 1))
    loop = source.split("for xt in xs:", 1)[1].split("sum_h", 1)[0]
    assert loop.count(".append(") == 1, source
    assert "Wh_stack = Stack(matmul_da" in source and "dWh_stack.add(" in source and "Thunk(" not in source
    assert "dWh = dWh_stack.total()" in source
    eager = adsrc.adjoint_source(rnn, wrt=(0, 1), eager=True)
    assert "Stack" not in eager and "h_prev" in eager


def previous_unneeded(h0, xs):
    h = h0
    for x in xs:
        h = np.sin(np.tanh(h) + x)
    return np.sum(h)


def test_a_kept_previous_value_that_no_push_saves_goes_away():
    source = adsrc.adjoint_source(previous_unneeded)
    assert "h_prev" not in source
    check(previous_unneeded, np.full(3, 0.1), XS)


@pytest.fixture
def small_bounds():
    saved = adsrc.config.max_pending, adsrc.config.max_pending_bytes
    yield
    adsrc.config.max_pending, adsrc.config.max_pending_bytes = saved


@pytest.mark.parametrize("limits", [(3, 2**30), (1000, 100)])
def test_stacks_keep_the_memory_bounds(small_bounds, monkeypatch, limits):
    adsrc.config.max_pending, adsrc.config.max_pending_bytes = limits
    seen = []
    add = Stack.add

    def recording(self, *args, **kwargs):
        add(self, *args, **kwargs)
        seen.append((len(self.calls), self.pending_bytes))

    monkeypatch.setattr(Stack, "add", recording)
    # The generic adjoint, whose Stacks take both kinds (a specialization computes the small one at once).
    monkeypatch.setattr(adsrc.config, "specialize", False)
    xs = rng.standard_normal((40, 3))
    lazy = adsrc.grad(two_kinds)(W, xs)
    assert len(seen) == 80
    assert max(n for n, _ in seen) <= limits[0] and max(b for _, b in seen) <= limits[1]
    np.testing.assert_allclose(lazy, adsrc.grad(two_kinds, eager=True)(W, xs), rtol=1e-12)


def test_stack_alone():
    stack = Stack(np.multiply, "here.py:1")
    assert stack.total() is adsrc.zero
    stack.add(adsrc.zero, 2.0)
    stack.add(np.ones(3), 2.0)
    stack.add(1.5, 2.0)  # a scalar cotangent: computed at once
    assert len(stack) == 1 and repr(stack) == "Stack(multiply x1 from here.py:1)"
    np.testing.assert_array_equal(stack.total(), np.full(3, 5.0))


def test_a_failing_contribution_names_its_line():
    def broken(g, x):
        raise ValueError("no")

    stack = Stack(broken, "model.py:12")
    stack.add(np.ones(3), 1.0)
    stack.add(np.ones(3), 1.0)
    with pytest.raises(ValueError) as error:
        stack.total()
    assert "model.py:12" in "".join(getattr(error.value, "__notes__", []))
