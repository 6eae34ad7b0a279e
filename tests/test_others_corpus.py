"""A corpus of programs written by others (tests/others/), each differentiated by adsrc.

For every program: adsrc's value equals the program's own, bit for bit; its gradient, in lazy and in eager
mode, matches central finite differences in float64 over every leaf of every argument differentiated (lists,
tuples and dicts of arrays included); the two modes agree; the arguments are left untouched; and, where JAX
is installed, JAX's gradient of the same source run against jax.numpy agrees too (test_others_corpus_jax.py,
slow: JAX runs the programs op by op).
"""
from __future__ import annotations

import copy

import numpy as np
import pytest

import adsrc
import others

MODES = [False, True]  # eager_unthunk off (lazy) and on


def leaves(tree):
    if isinstance(tree, dict):
        return [leaf for key in sorted(tree) for leaf in leaves(tree[key])]  # in JAX's order
    if isinstance(tree, (list, tuple)):
        return [leaf for item in tree for leaf in leaves(item)]
    return [tree]


def rebuilt(tree, values):
    """``tree`` with its leaves replaced, in order, by ``values`` (consumed from the front)."""
    if isinstance(tree, dict):
        return {key: rebuilt(tree[key], values) for key in sorted(tree)}
    if isinstance(tree, (list, tuple)):
        return type(tree)(rebuilt(item, values) for item in tree)
    return values.pop(0)


def finite_differences(f, args, position, eps=1e-6):
    """The gradient of f with respect to argument ``position``, leaf by leaf, element by element."""
    tree = args[position]
    base = [np.array(leaf, dtype=np.float64) for leaf in leaves(tree)]
    out = []
    for k, leaf in enumerate(base):
        grad = np.zeros_like(leaf)
        for index in np.ndindex(leaf.shape):
            values = []
            for step in (eps, -eps):
                moved = [b.copy() for b in base]
                moved[k][index] += step
                moved = [float(m) if isinstance(orig, float) else m for m, orig in zip(moved, leaves(tree))]
                values.append(f(*args[:position], rebuilt(tree, moved), *args[position + 1:]))
            grad[index] = (values[0] - values[1]) / (2 * eps)
        out.append(grad)
    return out


def positions(program):
    return program.WRT if isinstance(program.WRT, tuple) else (program.WRT,)


def params():
    out = []
    for name in others.NAMES:
        reason = getattr(others.load(name), "XFAIL", None)
        marks = [pytest.mark.xfail(reason=reason, strict=True)] if reason else []
        out.append(pytest.param(name, marks=marks, id=name))
    return out


@pytest.mark.parametrize("name", params())
def test_gradient_matches_finite_differences_in_both_modes(name):
    program = others.load(name)
    args = program.ARGS
    before = copy.deepcopy(args)
    expected_value = program.loss(*args)
    wrt = positions(program)
    results = {}
    for eager in MODES:
        value, grads = adsrc.value_and_grad(program.loss, wrt=wrt, eager=eager)(*args)
        assert value == expected_value, f"eager={eager}: the value differs from the program's own"
        results[eager] = grads
        for now, then in zip(leaves(args), leaves(before)):
            assert np.array_equal(now, then), "adsrc changed an argument"
    for k, position in enumerate(wrt):
        expected = finite_differences(program.loss, args, position)
        for eager in MODES:
            got = leaves(results[eager][k])
            assert len(got) == len(expected)
            for g, e, arg in zip(got, expected, leaves(args[position])):
                assert np.shape(g) == np.shape(arg)
                np.testing.assert_allclose(g, e, rtol=1e-5, atol=1e-6,
                                           err_msg=f"argument {position}, eager={eager}")
        for a, b in zip(leaves(results[False][k]), leaves(results[True][k])):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", [n for n in others.NAMES if getattr(others.load(n), "XFAIL", None)])
def test_a_program_adsrc_cannot_run_yet_is_refused_before_it_runs(name):
    program = others.load(name)
    for eager in MODES:
        with pytest.raises(adsrc.AdsrcError) as caught:
            adsrc.value_and_grad(program.loss, wrt=positions(program), eager=eager)(*program.ARGS)
        assert f"{program.__file__}:" in str(caught.value), "the refusal names no file:line"
