"""Writes into arrays made in the function: in place, taped, undone in the backward sweep.

Each program is checked for Python's value bit for bit, gradients against
finite differences in lazy and eager mode, the JVP, and the Hessian against
finite differences of the gradient. Views read after a write to their base
are refused before anything runs.
"""
from __future__ import annotations

import tracemalloc

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from gradcheck import check, numerical_grad


def inactive_array_written_after_a_read(w):
    x = np.ones(5)
    z = w * x          # the backward sweep needs x as it was here
    x[0] = 5.0
    return np.sum(z * x)


def repeated_indices_keep_the_last_write(x):
    y = np.zeros(3)
    y[[0, 0, 1, 2, 1]] = x  # NumPy keeps x[1] in y[0] and x[4] in y[1]
    return np.sum(y * np.array([1.0, 2.0, 3.0]))


def ewma(x):
    s = np.zeros(len(x))
    s[0] = x[0]
    for t in range(1, len(x)):
        s[t] = 0.3 * x[t] + 0.7 * s[t - 1]
    return np.sum(s ** 2)


def rows_and_elements(x):
    m = np.zeros((3, 5))
    for i in range(3):
        m[i] = x * (i + 1)
        m[i, 0] += m[i, 1] * x[0]
    return np.sum(np.tanh(m))


def slices_and_steps(x):
    y = np.zeros(6)
    y[1:4] = x[:3] ** 2
    y[::2] += x[0]
    z = y * 2
    y[0] = z[3]
    return np.sum(y * z)


def reads_between_writes(x):
    y = np.ones(5)
    p = np.sum(y * x)
    y[2] = x[1] * 3
    q = np.sum(y * x)
    y[2] = x[0]
    return p * q + np.sum(y)


def boolean_mask(x):
    y = x * 1.0
    y[x > 0.5] = 0.0
    return np.sum(y * x)


def integer_array_truncates(x):
    k = np.zeros(5, dtype=np.int64)
    k[0] = x[0] * 10.0  # truncated, as in Python: no gradient through it
    return np.sum(x * k) + np.sum(x)


def write_in_a_branch_and_while(x):
    y = np.zeros(5)
    i = 0
    while i < 5:
        if x[i] > 0.5:
            y[i] = x[i] ** 2
        else:
            y[i] = -x[i]
        i += 1
    return np.sum(y * x)


def writes_an_array_into_itself(x):
    y = x * 1.0
    y[:] = y           # the value is the array: its share goes back after the write's part is cleared
    y[::-1] = y        # overlapping: NumPy copies first
    y[1:] = y[:-1]
    return np.sum(y * x)


PROGRAMS = [writes_an_array_into_itself, inactive_array_written_after_a_read, repeated_indices_keep_the_last_write, ewma, rows_and_elements,
            slices_and_steps, reads_between_writes, boolean_mask, integer_array_truncates,
            write_in_a_branch_and_while]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_writes_match_python_and_finite_differences(f):
    x = np.random.default_rng(7).uniform(0.1, 0.9, 5)
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(x)[0] == f(x)  # bit for bit
    check(f, x)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_writes_in_forward_mode_and_second_order(f):
    x = np.random.default_rng(8).uniform(0.1, 0.9, 5)
    v = np.random.default_rng(9).normal(size=5)
    value, tangent = adsrc.jvp(f, (x,), (v,))
    assert value == f(x)
    np.testing.assert_allclose(tangent, numerical_grad(f, (x,), 0) @ v, rtol=1e-6, atol=1e-8)
    hessian = adsrc.hessian(f)(x)
    gradient = adsrc.grad(f)
    eps = 1e-5
    columns = [(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(5)]
    np.testing.assert_allclose(hessian, np.array(columns), rtol=1e-5, atol=1e-6)


def test_the_generated_code_writes_in_place_and_restores():
    source = adsrc.adjoint_source(ewma)
    assert "s_overwritten_1 = s[t].copy()" in source and "s[t] = s_overwritten_1" in source
    assert source.count("tape.append(") == 1  # one push per iteration: the write joins its line's group
    # The loop clears and adds into ds in place, copied once before it: O(1) per step, not O(len(s)).
    assert "written_part(ds, s, t," in source and "ds = cleared_in_place(ds, t)" in source
    assert "ds = owned(ds)" in source and "ds = added_into(ds, getitem_dx, " in source
    assert "with_item" not in source


def test_a_returned_array_is_not_changed_by_the_pullback():
    def f(x):
        y = np.zeros(3)
        y[1] = x[0] * 2
        return y

    value, pullback = adsrc.vjp(f, np.array([1.0, 2.0, 3.0]))
    kept = value.copy()
    np.testing.assert_array_equal(pullback(np.ones(3)), [2.0, 0.0, 0.0])
    np.testing.assert_array_equal(value, kept)


def test_a_view_read_after_a_write_to_its_base_is_refused():
    def f(x):
        y = np.ones(4)
        head = y.reshape(2, 2)  # a view not taken by slicing: not taken again after the write
        y[0] = x[0] * 3
        return np.sum(head * x[:2])

    with pytest.raises(UnsupportedSyntax) as info:
        adsrc.grad(f)(np.ones(4))
    assert "head" in str(info.value) and "copy" in str(info.value) and f"{__file__}:" in str(info.value)

    def copied(x):
        y = np.ones(4)
        head = y[:2].copy()
        y[0] = x[0] * 3
        return np.sum(head * x[:2])

    def sliced(x):  # a slice of y bound once: taken again after the write (frontend/view_writes.py)
        y = np.ones(4)
        head = y[:2]
        y[0] = x[0] * 3
        return np.sum(head * x[:2])

    for g in (copied, sliced):
        x = np.array([0.5, 1.5, 2.0, 3.0])
        assert adsrc.value_and_grad(g)(x)[0] == g(x)
        check(g, x)


def test_a_view_read_before_the_write_is_fine():
    def f(x):
        y = np.ones((3, 4))
        for t in range(1, 3):
            previous = y[t - 1]          # a view, dead by the time y is written
            y[t] = previous * x[t] + x[0]
        return np.sum(y ** 2)

    check(f, np.array([0.5, 1.5, 2.0, 3.0]))


def traced_peak(f, x):
    """The peak of memory traced while ``adsrc.vjp(f, x)`` runs (compiled before), and its pullback."""
    adsrc.grad(f)(x)  # compile outside the measurement
    tracemalloc.start()
    try:
        _, pullback = adsrc.vjp(f, x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    return peak, pullback


def test_tape_memory_grows_with_what_is_overwritten_not_with_the_array():
    def fill(x):
        s = np.zeros(len(x))
        for t in range(len(x)):
            s[t] = x[t] * 2.0
        return np.sum(s)

    x = np.ones(4000)
    peak, pullback = traced_peak(fill, x)
    # Copying s at each write would hold 4000 arrays of 32 KB (128 MB); in place it is a few MB.
    assert peak < 8e6, peak
    np.testing.assert_array_equal(pullback(1.0), np.full(4000, 2.0))


def test_an_update_in_place_seen_through_a_live_view_is_refused_before_anything_runs():
    def f(x, s):
        y = x * 1.0
        v = y[:2]
        y *= s          # Python scales y in place, and v with it
        return np.sum(v)

    with pytest.raises(UnsupportedSyntax, match=r"view of it \(v\)") as info:
        adsrc.grad(f)(np.ones(3), 2.0)
    assert f"{__file__}:" in str(info.value)

    def g(x, s):
        y = x * 1.0
        v = y[:2]
        total = np.sum(v)   # the view is dead before the update
        y *= s
        return total + np.sum(y)

    check(g, np.array([0.5, 1.5, 2.0]), 2.0, wrt=(0, 1))
