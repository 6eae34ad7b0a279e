"""Writes into arrays proven fresh at the write (frontend/freshness.py), and those still refused.

freshness.py follows a function statement by statement and knows, at each
write ``y[i] = v``, which arrays ``y`` may hold and which other names may
hold them too: a copy made in a loop and written before the old name is
rebound to it is an array no other name sees at the write. Each program is
checked against central finite differences in lazy and eager mode
(gradcheck.check), with its value bit for bit Python's; a write that
another name still read afterwards would show, or that may reach the
caller's array, stays refused before anything runs, with the line.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from gradcheck import check


def heat(u, k):
    for _ in range(5):
        new = u.copy()
        new[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        u = new
    return np.sum(u ** 2)


def copied_on_one_branch(x):
    y = x
    if x[0] > 0:
        y = x.copy()
        y[0] = 0.0
    return np.sum(y * x)


def while_loop_rebinding(x):
    u, n = x, 0
    while n < 4:
        nxt = u * 1.0
        nxt[::2] = np.sin(u[::2]) + u[1::2].sum()
        if n == 2:
            nxt[0] = nxt[0] * u[0]
        u, n = nxt, n + 1
    return np.sum(u ** 2) + n


def alias_dead_after_the_write(x):
    y = np.zeros(len(x)) + x
    z = y
    s = np.sum(z ** 2)           # z read before the write only
    y[1] = y[0] * x[2]
    return s + np.sum(y * x)


def copy_of_a_copy_in_a_loop(x, w):
    a = x.copy()
    for i in range(3):
        b = a.copy()
        b[i] = b[i] * w + a[i + 1]
        b[i + 1] = np.tanh(b[i])
        a = b
    return np.sum(a * x)


def fft_filter(x):
    X = np.fft.fft(x)
    X[3:-2] = 0
    return np.sum(np.real(np.fft.ifft(X)) ** 2)


RNG = np.random.default_rng(3)
CASES = [
    (heat, (RNG.random(9), 0.3), (0, 1)),
    (copied_on_one_branch, (RNG.random(4) + 0.5,), 0),
    (copied_on_one_branch, (RNG.random(4) - 1.5,), 0),
    (while_loop_rebinding, (RNG.random(6),), 0),
    (alias_dead_after_the_write, (RNG.random(4),), 0),
    (copy_of_a_copy_in_a_loop, (RNG.random(5), 0.7), (0, 1)),
    (fft_filter, (RNG.random(9),), 0),
]


@pytest.mark.parametrize("f, args, wrt", CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_fresh_writes_match_python_and_finite_differences(f, args, wrt):
    check(f, *args, wrt=wrt)
    for eager in (False, True):
        value, _ = adsrc.value_and_grad(f, wrt=wrt, eager=eager)(*args)
        assert value == f(*args)  # bit for bit


@pytest.mark.parametrize("specialize", [False, True])
def test_fresh_writes_specialized_and_generic(specialize, monkeypatch):
    monkeypatch.setattr(adsrc.config, "specialize", specialize)
    check(heat, RNG.random(7), 0.2, wrt=(0, 1))


# -- still refused: the write would show through another name, or change what the function was given --
def written_while_an_alias_is_read_after(u):
    new = u.copy()
    keep = new
    new[0] = 1.0
    return np.sum(keep * u)


def held_by_a_list_read_after(u):
    new = u.copy()
    parts = [new, u]
    new[0] = 1.0
    return np.sum(parts[0])


def rebound_to_the_argument_in_the_loop(u):
    new = u.copy()
    for i in range(3):
        new[i] = new[i] * 2.0
        if i == 1:
            new = u
    return np.sum(new)


def a_second_name_of_the_argument(u):
    new = u
    new[0] = 1.0
    return np.sum(new)


def copied_on_one_path_only(u, flag):
    y = u.copy() if flag else u
    y[0] = 0.0
    return np.sum(y)


def swapped_buffers(u, k):
    a, b = u.copy(), np.zeros_like(u)
    for _ in range(3):
        b[1:-1] = a[1:-1] * k
        a, b = b, a
    return np.sum(a ** 2)


@pytest.mark.parametrize("f, args, message", [
    (written_while_an_alias_is_read_after, (np.ones(3),), r"another name that may hold the same array \(keep\)"),
    (held_by_a_list_read_after, (np.ones(3),), r"another name that may hold the same array \(parts\)"),
    (rebound_to_the_argument_in_the_loop, (np.ones(4),), r"subscript of new .* the parameter u was given"),
    (a_second_name_of_the_argument, (np.ones(3),), r"subscript of new .* the parameter u was given"),
    (copied_on_one_path_only, (np.ones(3), True), r"subscript of y .* the parameter u was given"),
    (swapped_buffers, (np.ones(5), 0.5), r"subscript of b"),
], ids=lambda c: getattr(c, "__name__", ""))
def test_writes_the_analysis_cannot_prove_are_refused_before_running(f, args, message):
    before = [np.array(a) for a in args]
    with pytest.raises(UnsupportedSyntax, match=message) as info:
        adsrc.grad(f)(*args)
    assert f"{__file__}:" in str(info.value)
    for a, b in zip(args, before):
        assert np.array_equal(a, b)


def test_what_a_loop_iterates_over_holds_its_arrays_for_the_whole_loop():
    def later_items_see_the_write(x):
        a = x * 2.0
        b = x + 1.0
        s = 0.0
        for v in [b, a]:
            s = s + np.sum(v ** 2)
            a[0] = s     # the list still holds a: its second item is the written array
        return s

    with pytest.raises(UnsupportedSyntax, match=r"the iterable of the loop at line \d+"):
        adsrc.grad(later_items_see_the_write)(np.ones(3))


def stencil_with_boundaries(u, k):
    for _ in range(4):
        new = u.copy()
        new[1:-1] = u[1:-1] + k * (u[2:] - 2 * u[1:-1] + u[:-2])
        new[0] = u[0] * 0.5 + u[1] * k     # u, the previous array, read after writes into the new one
        new[-1] = new[-2]
        u = new
    return np.sum(u ** 3)


def test_the_old_array_is_read_after_writes_into_its_copy():
    check(stencil_with_boundaries, RNG.random(8), 0.25, wrt=(0, 1))
