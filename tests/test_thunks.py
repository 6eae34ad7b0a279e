"""Thunks and AccThunk: flat accumulation, bounded pending memory, both modes."""
import numpy as np
import pytest

import adsrc
from adsrc.backend.pipeline import REVERSE, compile
from adsrc.values.thunks import depth
from gradcheck import check


def test_zero_absorbs_arithmetic():
    x = np.arange(3.0)
    assert adsrc.zero + x is x and x + adsrc.zero is x
    assert 2.5 + adsrc.zero == 2.5 and adsrc.zero * x is adsrc.zero
    assert adsrc.accumulate(adsrc.zero, x) is x
    assert adsrc.unthunk(adsrc.zero) is adsrc.zero


def test_accumulate_is_flat_and_merges_by_concatenation():
    a = adsrc.Thunk(np.multiply, np.ones(3), 2.0)
    acc = adsrc.accumulate(a, adsrc.Thunk(np.multiply, np.ones(3), 3.0))
    assert type(acc) is adsrc.AccThunk and len(acc) == 2
    other = adsrc.accumulate(adsrc.Thunk(np.multiply, np.ones(3), 4.0), np.ones(3))
    merged = adsrc.accumulate(acc, other)
    assert merged is acc and len(acc) == 4 and depth(acc) == 1
    assert all(type(p) is not adsrc.AccThunk for p in acc.pending)
    np.testing.assert_array_equal(adsrc.unthunk(acc), np.full(3, 10.0))


def test_materialization_never_writes_into_contributions():
    user = np.ones(4)
    acc = adsrc.accumulate(user, np.full(4, 2.0))
    acc = adsrc.accumulate(acc, adsrc.Thunk(np.multiply, np.ones(4), 5.0))
    result = adsrc.unthunk(acc)
    np.testing.assert_array_equal(result, np.full(4, 8.0))
    np.testing.assert_array_equal(user, np.ones(4))
    assert result is not user


def test_zero_cotangent_thunk_is_dropped():
    t = adsrc.Thunk(np.multiply, adsrc.zero, 2.0)
    total = np.ones(2)
    result = adsrc.accumulate(total, t)
    expected = np.ones(2) + np.multiply(np.zeros(2), 2.0)  # the contribution is 0 * 2.0
    np.testing.assert_array_equal(adsrc.unthunk(result), expected)
    assert result is total  # dropped: nothing added, no holder built
    np.testing.assert_array_equal(total, np.ones(2))
    assert adsrc.accumulate(adsrc.zero, t) is adsrc.zero


def accumulate_many(v, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(v * 1.5)
    return s


def chain_accumulates(v, n):
    y = v
    for i in range(n):
        y = y * 0.999 + v
    return np.sum(y)


@pytest.mark.parametrize("f", [accumulate_many, chain_accumulates])
def test_100k_contributions_stay_flat(f):
    v = np.linspace(0.5, 1.0, 8)
    n = 100_000
    value, pullback = compile(f, (0,), REVERSE).function(v, n)
    raw = pullback(1.0)[0]  # the loop's Stack computed its total when the loop ended (test_stacks.py)
    assert depth(raw) <= 1 and (type(raw) is not adsrc.AccThunk or len(raw) <= adsrc.config.max_pending)
    lazy = adsrc.unthunk(raw)
    eager = adsrc.grad(f, eager=True)(v, n)
    np.testing.assert_allclose(lazy, eager, rtol=1e-9)
    if f is accumulate_many:
        np.testing.assert_allclose(lazy, np.full(8, 1.5 * n))


def test_small_loops_match_finite_differences():
    v = np.linspace(0.5, 1.0, 4)
    check(accumulate_many, v, 7)
    check(chain_accumulates, v, 7)


def test_repr_shows_structure():
    acc = adsrc.accumulate(adsrc.Thunk(np.multiply, np.ones(3), 2.0), adsrc.Thunk(np.multiply, np.ones(3), 3.0))
    assert "2 pending" in repr(acc) and "multiply x2" in repr(acc)
