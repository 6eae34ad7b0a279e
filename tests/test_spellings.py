"""Other spellings of primitives in user programs: operator functions, tuple/list, np.float64, ufunc methods.

Each rule is checked alone by the generated tests (tests/library_samples.py); here they are called as
users write them, through adsrc.grad (lazy and eager) and adsrc.jvp.
"""
from __future__ import annotations

import functools
import operator

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from gradcheck import check

RNG = np.random.default_rng(5)


def with_operators(x, w):
    h = operator.matmul(w, x)
    h = operator.add(operator.mul(h, h), operator.neg(x))
    return operator.truediv(np.sum(operator.pow(h, 2.0)), operator.abs(operator.sub(np.sum(x), 10.0)))


def with_containers(x):
    parts = tuple(x)
    rows = list(np.reshape(x, (2, 3)))
    return parts[0] * parts[4] + np.sum(rows[1] * rows[0]) + np.float64(parts[2]) ** 2


def with_ufunc_methods(a, b):
    table = np.multiply.outer(a, b) + np.add.outer(a, b) - np.subtract.outer(b, a).T
    return (np.sum(np.add.reduce(table) ** 2) + np.sum(np.multiply.reduce(table, 1))
            + np.sum(np.add.accumulate(table, 1) * np.multiply.accumulate(table)))


def folded(xs, w):
    return np.sum(functools.reduce(operator.mul, xs, w) + functools.reduce(np.maximum, [w, 2.0 * w])
                  + functools.reduce(operator.add, list(xs)))


CASES = [
    (folded, ([RNG.normal(size=2), RNG.normal(size=2)], RNG.uniform(0.5, 1.0, 2)), (0, 1)),
    (with_operators, (RNG.normal(size=3), RNG.normal(size=(3, 3))), (0, 1)),
    (with_containers, (RNG.normal(size=6),), (0,)),
    (with_ufunc_methods, (RNG.uniform(0.5, 1.5, 3), RNG.uniform(0.5, 1.5, 4)), (0, 1)),
]


@pytest.mark.parametrize("f,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_lazy_and_eager(f, args, wrt):
    check(f, *args, wrt=wrt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode(f, args, wrt):
    tangents = tuple([RNG.normal(size=np.shape(x)) for x in a] if isinstance(a, list) else RNG.normal(size=np.shape(a))
                     for a in args)
    _, tangent = adsrc.jvp(f, args, tangents)
    eps = 1e-6

    def moved(a, t, step):
        return [x + step * dx for x, dx in zip(a, t)] if isinstance(a, list) else a + step * t

    plus = f(*(moved(a, t, eps) for a, t in zip(args, tangents)))
    minus = f(*(moved(a, t, -eps) for a, t in zip(args, tangents)))
    np.testing.assert_allclose(tangent, (plus - minus) / (2 * eps), rtol=1e-5, atol=1e-6)


def test_operator_rules_read_as_their_operators():
    source = adsrc.adjoint_source(with_operators, wrt=(0, 1))
    assert "rule_vjp('operator.mul', 0)" in source and "rule_vjp('operator.matmul', 1)" in source


def test_np_add_at_runs_as_a_write_into_an_array_made_here_and_is_refused_into_a_view_of_an_input():
    def scatter(x):
        out = np.zeros(3)
        np.add.at(out, np.array([0, 0, 2]), x)  # repeated indices add up
        return np.sum(out * out)

    def scatter_as_bincount(x):
        out = np.zeros(3)
        out = out + np.bincount(np.array([0, 0, 2]), weights=x, minlength=len(out))
        return np.sum(out * out)

    x = RNG.normal(size=3)
    np.testing.assert_allclose(check(scatter, x), check(scatter_as_bincount, x), rtol=1e-12)

    def into_a_view_of_the_input(out, x):
        view = out.reshape(-1)
        np.add.at(view, np.array([0, 0, 2]), x)
        return np.sum(out * out)

    with pytest.raises(UnsupportedSyntax, match=r"np.add.at into an array not created.*np.bincount\(idx, weights=v"):
        adsrc.grad(into_a_view_of_the_input, wrt=1)(np.zeros(3), np.ones(3))
    # into the input itself: as Python's, the caller's array changed (tests/test_writes_fresh.py)


def times(a, b):
    return a * b


def test_reduce_with_a_function_without_a_rule_is_the_loop_it_runs():
    def f(xs):
        return functools.reduce(times, xs)

    xs = [1.5, 2.0, 3.0]
    assert adsrc.value_and_grad(f)(xs) == (f(xs), [6.0, 4.5, 3.0])
