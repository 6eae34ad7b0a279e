"""Writes and reads by index in loops: the backward sweep updates the gradient in place (optimize/owned.py).

A loop whose backward sweep only clears, reads by index and adds by index into
a gradient copies it once before the loop (``owned``) and updates it in place
inside (``cleared_in_place``, ``added_into``), instead of copying the whole
array at every step. Each program is checked against central finite
differences in lazy and eager mode (gradcheck.check, which also checks that
the inputs are untouched), and the generated code is checked for the form
it should take: in place where nothing else reads the gradient in the loop,
copying where something does.
"""
from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from duck_array import DuckArray
from gradcheck import check
from test_writes import traced_peak

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks.workloads import ewma  # noqa: E402  (the benchmark's EWMA, the one issue 14 measures)




def cumulative_recurrence(x):
    c = x * 1.0                 # a copy of the input, written in place
    for t in range(1, len(x)):
        c[t] = c[t - 1] * np.sin(c[t]) + c[t - 1] ** 2 * 0.1
    return np.sum(np.tanh(c))


def row_writes(x, W):
    h = np.zeros((4, 3))
    h[0] = x
    for t in range(1, 4):
        h[t] = np.tanh(W @ h[t - 1]) + x * h[t - 1, 0]
    return np.sum(h ** 2)


def slice_writes(x):
    y = np.zeros(len(x) + 2)
    for t in range(len(x)):
        y[t:t + 2] = y[t:t + 2] * 0.5 + x[t]     # overlapping slices, read then written
    y[::2] = y[1::2] * y[::2]
    return np.sum(y ** 2)


def reads_before_and_after_writes(x):
    s = np.ones(len(x))
    for t in range(1, len(x)):
        before = s[t]
        s[t] = s[t - 1] * x[t] + before
        after = s[t]
        s[t - 1] = after * 0.5 + s[t - 1] * x[t - 1]
    return np.sum(s ** 2)


def fancy_reads_and_writes(x):
    s = np.zeros(len(x))
    for t in range(2, len(x)):
        pair = s[[t - 1, t - 1, t - 2]]          # a repeated index: its cotangents add up
        s[[t, t]] = np.sum(pair) * x[t] + x[x > x[t]].sum()
    return np.sum(s ** 2) + np.sum(s)


def nested_loops(x):
    s = x * 1.0
    total = 0.0
    for k in range(3):
        for t in range(1, len(x)):
            s[t] = s[t] * 0.5 + s[t - 1] * x[k]
        total = total + np.sum(s * x)            # a read of all of s: the inner loop only is in place
    return total


def read_in_full_inside_the_loop(x):
    s = np.zeros(len(x))
    total = 0.0
    for t in range(len(x)):
        s[t] = x[t] * 2.0
        total = total + np.sum(s * x)            # reads all of s at every step: copying stays
    return total


def branches_in_the_loop(x):
    s = np.zeros(len(x))
    for t in range(1, len(x)):
        if x[t] > 0.5:
            s[t] = s[t - 1] * x[t]
        else:
            s[t] = x[t] - s[t - 1]
    return np.sum(s ** 3)


def gradient_shared_with_another_variable(x):
    s = x * 1.0
    for t in range(1, len(x)):
        s[t] = s[t - 1] * 0.5 + s[t]
    y = s + x            # add's vjp passes dy through: ds and dx start as one array, which the loop must not write
    return np.sum(y * y)


PROGRAMS = [
    (gradient_shared_with_another_variable, (np.linspace(0.1, 0.6, 5),), (0,)),
    (ewma, (np.sin(np.linspace(0.0, 3.0, 9)), 0.3), (0, 1)),
    (cumulative_recurrence, (np.linspace(0.2, 0.9, 7),), (0,)),
    (row_writes, (np.array([0.3, -0.2, 0.5]), np.linspace(-0.5, 0.5, 9).reshape(3, 3)), (0, 1)),
    (slice_writes, (np.linspace(0.1, 0.8, 6),), (0,)),
    (reads_before_and_after_writes, (np.linspace(0.3, 0.9, 6),), (0,)),
    (fancy_reads_and_writes, (np.array([0.2, 0.9, 0.4, 0.7, 0.1, 0.6]),), (0,)),
    (nested_loops, (np.linspace(0.1, 0.6, 5),), (0,)),
    (read_in_full_inside_the_loop, (np.linspace(0.1, 0.6, 5),), (0,)),
    (branches_in_the_loop, (np.array([0.2, 0.9, 0.4, 0.7, 0.1, 0.6]),), (0,)),
]


@pytest.mark.parametrize("f, args, wrt", PROGRAMS, ids=lambda p: getattr(p, "__name__", ""))
def test_gradients_match_finite_differences_in_lazy_and_eager_mode(f, args, wrt):
    for eager in (False, True):
        assert adsrc.value_and_grad(f, wrt=wrt, eager=eager)(*args)[0] == f(*args)  # bit for bit
    check(f, *args, wrt=wrt)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_the_loop_clears_and_adds_in_place_into_a_copy_made_once(eager):
    source = adsrc.adjoint_source(ewma, wrt=(0, 1), eager=eager)
    loop = source[source.index("for _ in range"):]
    before = source[:source.index("for _ in range")]
    assert "ds = owned(ds)" in before
    assert "ds = cleared_in_place(ds, t)" in loop and "cleared(" not in loop
    assert "ds = added_into(ds, getitem_dx, ds_t_minus_1, None, s, t_minus_1)" in loop
    # in both modes: a gradient read by index is added in place, not collected on a Stack (optimize/stacks.py)
    assert "dx = owned(dx)" in before and "dx = added_into(dx, getitem_dx, dx_t, None, x, t)" in loop
    assert "owned(" not in loop  # once, before the loop


def test_a_loop_that_reads_the_gradient_in_full_keeps_copying():
    source = adsrc.adjoint_source(read_in_full_inside_the_loop)
    assert "ds = cleared(ds, t)" in source and "owned(ds)" not in source and "cleared_in_place" not in source


def test_nested_loops_copy_before_the_inner_loop_only():
    source = adsrc.adjoint_source(nested_loops)
    outer = source.index(" in range(n_k)")
    inner = source.index(" in range(n_t)")
    assert source.index("ds = owned(ds)") > outer and source.index("ds = owned(ds)") < inner


def test_the_users_seed_and_arrays_are_never_written():
    def filled(x):
        s = x * 1.0
        for t in range(1, len(x)):
            s[t] = s[t - 1] * 0.5 + x[t]
        return s                                 # the seed is the gradient of s itself

    x = np.linspace(0.1, 0.5, 5)
    kept = x.copy()
    seed = np.arange(1.0, 6.0)
    seed.setflags(write=False)                   # a write into it would raise
    for eager in (False, True):
        value, pullback = adsrc.vjp(filled, x, eager=eager)
        dx = pullback(seed)
        expected = np.array([sum(seed[j] * 0.5 ** (j - i) for j in range(i, 5)) for i in range(5)])
        np.testing.assert_allclose(dx, expected, rtol=1e-12)
        assert dx is not seed and not np.shares_memory(dx, seed)
    np.testing.assert_array_equal(x, kept)
    np.testing.assert_array_equal(seed, np.arange(1.0, 6.0))


def test_a_broadcast_seed_from_sum_is_copied_before_it_is_written():
    # np.sum's vjp gives a read-only broadcast view; written in place, it would raise or change every element.
    def f(x):
        s = np.zeros(len(x))
        for t in range(len(x)):
            s[t] = x[t] * (t + 1.0)
        return np.sum(s)

    for eager in (False, True):
        np.testing.assert_array_equal(adsrc.grad(f, eager=eager)(np.ones(4)), [1.0, 2.0, 3.0, 4.0])


def test_a_view_read_after_the_loop_writes_its_base():
    def sliced(x):  # taken again after each write (frontend/view_writes.py): Python's value
        s = np.ones(len(x))
        head = s[:2]
        for t in range(len(x)):
            s[t] = s[t - 1] * x[t]
        return np.sum(head * x[:2])

    x = np.array([0.5, 1.5, 2.0, 3.0])
    assert adsrc.value_and_grad(sliced)(x)[0] == sliced(x)
    check(sliced, x)

    def reshaped(x):  # a view not taken by slicing: still refused
        s = np.ones(len(x))
        head = s.reshape(2, 2)
        for t in range(len(x)):
            s[t] = s[t - 1] * x[t]
        return np.sum(head[0] * x[:2])

    with pytest.raises(UnsupportedSyntax, match="head"):
        adsrc.grad(reshaped)(np.ones(4))


def recurrence_in_a_copy(x, w):
    s = x * 1.0
    for t in range(1, 4):
        s[t] = s[t - 1] * w[t] + s[t]
    return np.sum(s * w)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_mutable_arrays_of_another_library_are_updated_in_place_and_stay_in_it(eager):
    x, w = np.arange(1.0, 6.0), np.linspace(0.5, 1.5, 5)
    expected = check(recurrence_in_a_copy, x, w, wrt=(0, 1))
    dx, dw = adsrc.grad(recurrence_in_a_copy, wrt=(0, 1), eager=eager)(DuckArray(x), DuckArray(w))
    assert isinstance(dx, DuckArray) and isinstance(dw, DuckArray)
    np.testing.assert_allclose(dx.numpy(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(dw.numpy(), expected[1], rtol=1e-12)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_immutable_dask_arrays_keep_the_out_of_place_path(eager):
    da = pytest.importorskip("dask.array")
    x, w = np.arange(1.0, 6.0), np.linspace(0.5, 1.5, 5)
    expected = adsrc.grad(recurrence_in_a_copy, wrt=(0, 1))(x, w)
    dx, dw = adsrc.grad(recurrence_in_a_copy, wrt=(0, 1), eager=eager)(da.from_array(x, chunks=2),
                                                                        da.from_array(w, chunks=2))
    assert isinstance(dx, da.Array) and isinstance(dw, da.Array)
    np.testing.assert_allclose(dx.compute(), expected[0], rtol=1e-12)
    np.testing.assert_allclose(dw.compute(), expected[1], rtol=1e-12)


# ---- lists grown by append: in place in the forward sweep, popped back in the backward sweep --------
def ewma_list(x, a):
    s = [x[0]]
    for t in range(1, len(x)):
        s.append(a * x[t] + (1 - a) * s[t - 1])
    return np.sum(np.array(s) ** 2)


def rows_in_a_list(x, W):
    rows = [x]
    for t in range(3):
        rows.append(np.tanh(W @ rows[-1]) * rows[t][0])
    return np.sum(np.stack(rows) ** 2)


def appends_in_branches_and_comprehensions(x):
    ys = []
    for t in range(len(x)):
        if x[t] > 0.5:
            ys.append(x[t] ** 2)
        else:
            ys.append(x[t] * ys[-1] if ys else x[t])
    squares = [y * y for y in ys]
    return sum(squares) + ys[0] * ys[-1]


def whole_list_read_at_each_step(x):
    ys = [x[0]]
    total = 0.0
    for t in range(1, len(x)):
        ys.append(np.mean(np.array(ys)) * x[t] + ys[t - 1])
        total = total + sum(ys) * x[t]          # reads all of ys: its gradient keeps the copying forms
    return total + np.sum(np.stack(ys) ** 2)


def list_of_lists(x):
    rows = []
    for t in range(len(x)):
        rows.append([x[t], x[t] * 2.0])
    return sum(r[0] * r[1] for r in rows)


def list_of_nested_tuples(x):
    pairs = []
    for t in range(len(x)):
        pairs.append(((x[t], x[t] ** 2), 1.0 + t))   # items read back whole: their cotangents are tuples
    return sum(u * v * w for (u, v), w in pairs)


LIST_PROGRAMS = [
    (list_of_nested_tuples, (np.linspace(0.2, 0.9, 5),), (0,)),
    (whole_list_read_at_each_step, (np.linspace(0.2, 0.9, 5),), (0,)),
    (list_of_lists, (np.linspace(0.2, 0.9, 5),), (0,)),
    (ewma_list, (np.sin(np.linspace(0.0, 3.0, 9)), 0.3), (0, 1)),
    (rows_in_a_list, (np.array([0.3, -0.2, 0.5]), np.linspace(-0.5, 0.5, 9).reshape(3, 3)), (0, 1)),
    (appends_in_branches_and_comprehensions, (np.array([0.2, 0.9, 0.4, 0.7, 0.1, 0.6]),), (0,)),
]


@pytest.mark.parametrize("f, args, wrt", LIST_PROGRAMS, ids=lambda p: getattr(p, "__name__", ""))
def test_list_appends_match_finite_differences_in_lazy_and_eager_mode(f, args, wrt):
    for eager in (False, True):
        assert adsrc.value_and_grad(f, wrt=wrt, eager=eager)(*args)[0] == f(*args)
    check(f, *args, wrt=wrt)


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_an_append_runs_in_place_and_the_backward_sweep_pops_it(eager):
    source = adsrc.adjoint_source(ewma_list, wrt=(0, 1), eager=eager)
    assert "s.append(" in source and "[*s" not in source
    loop = source[source.index("for _ in range"):]
    assert "s_next.pop()" in loop and "ds = drop_last_in_place(ds)" in loop
    assert "ds = added_into(ds, getitem_dx, ds_t_minus_1, None, s, t_minus_1)" in loop
    assert "ds = owned(ds)" in source[:source.index("for _ in range")]


def test_a_returned_list_is_not_shrunk_by_the_pullback():
    def grown(x):
        ys = [x[0]]
        for t in range(1, len(x)):
            ys.append(ys[-1] * x[t])
        return ys

    x = np.array([0.5, 2.0, 3.0])
    for eager in (False, True):
        value, pullback = adsrc.vjp(grown, x, eager=eager)
        assert len(value) == 3 and value == grown(x)
        np.testing.assert_allclose(pullback([1.0, 1.0, 1.0]), [1.0 + 2.0 + 6.0, 0.5 + 1.5, 1.0])
        assert len(value) == 3 and value == grown(x)


def test_tape_memory_grows_with_the_appends_not_with_their_square():
    def fill(x):
        s = [x[0]]
        for t in range(1, len(x)):
            s.append(s[-1] * 0.5 + x[t])
        return np.sum(np.array(s))

    x = np.ones(4000)
    peak, pullback = traced_peak(fill, x)
    # A copy of the list per append kept 4000 lists of 2000 items on average (64 MB); in place it is a few MB.
    assert peak < 8e6, peak
    np.testing.assert_allclose(pullback(1.0), [2.0 - 0.5 ** (3999 - t) for t in range(4000)])


def list_ewma_of_x(x):
    return ewma_list(x, 0.3)


@pytest.mark.parametrize("f", [cumulative_recurrence, fancy_reads_and_writes, slice_writes, list_ewma_of_x,
                               appends_in_branches_and_comprehensions],
                         ids=lambda f: f.__name__)
def test_second_order_through_the_in_place_loops(f):
    x = np.array([0.2, 0.9, 0.4, 0.7, 0.1, 0.6])
    hessian = adsrc.hessian(f)(x)
    gradient = adsrc.grad(f)
    eps = 1e-5
    columns = [(gradient(x + eps * e) - gradient(x - eps * e)) / (2 * eps) for e in np.eye(len(x))]
    np.testing.assert_allclose(hessian, np.array(columns), rtol=1e-5, atol=1e-6)
