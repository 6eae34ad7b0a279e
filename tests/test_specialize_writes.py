"""Specialized writes into arrays the function creates (optimize/inline_writes.py, write_kinds.py): the write
helpers as indexing where the kinds make it exact. The specialized adjoint gives the generic adjoint's value
bit for bit and its gradients (bit for bit in eager mode, to rounding in lazy mode), and agrees with central
finite differences in lazy and eager mode; on programs chosen for the cases the helpers tell apart (an index
that is an int or not, negative, a slice, a row, a value that is a number or an array, a gradient that may be
zero, a loop of no step) and on random loops of writes.
"""
from __future__ import annotations

import os
import random
import sys

import numpy as np
import pytest

import adsrc
from gradcheck import check
from sources import function_from_source
from test_specialize import compare, specialized_source

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
from benchmarks.workloads import WORKLOADS  # noqa: E402

ewma = WORKLOADS["ewma"].f  # s = np.zeros(len(x)); s[0] = x[0]; s[t] = a * x[t] + (1 - a) * s[t - 1] in a loop


def negative_index(x, a):
    s = np.zeros(len(x))
    s[-1] = x[0]
    for t in range(1, len(x)):
        s[-t - 1] = s[-t] * a + x[t]
    return np.sum(s * s)


def slices(x, a):
    s = np.zeros(len(x))
    s[1:3] = x[:2] * a
    s[3:] = s[1] * x[3:]
    s[0] = s[2] - a
    return np.sum(s ** 2)


def rows(x, a):
    m = np.zeros((3, len(x)))
    for i in range(3):
        m[i] = x * (i + a)
        m[i, 0] = a * m[i, 1]
    return np.sum(np.sin(m))


def empty_like(x, a):
    y = np.empty_like(x)
    for i in range(len(x)):
        y[i] = np.sin(x[i]) * a
    return np.sum(y * x)


def read_after(x, a):
    s = np.zeros(len(x))
    total = 0.0
    for t in range(len(x)):
        s[t] = x[t] * a + s[t - 1] * 0.5
        total = total + s[t] ** 2
    return total + np.sum(s * x) + s[2]


def twice_per_step(x, a):
    s = np.zeros(len(x))
    for t in range(1, len(x)):
        s[t] = x[t] * a
        s[t] = s[t] + s[t - 1] * a
        s[t - 1] = s[t - 1] * 0.5
    return np.sum(s ** 2)


def constants_written(x, a):
    s = np.zeros(len(x))
    for t in range(len(x)):
        s[t] = 1.0
        s[t] = s[t] * x[t] + a
    s[0] = 2
    return np.sum(s ** 3)


def integers_written(x, a):
    k = np.zeros(len(x), dtype=np.int64)
    s = np.zeros(len(x))
    for t in range(len(x)):
        k[t] = x[t] * 10
        s[t] = x[t] * a + k[t]
    return np.sum(s ** 2)


def nested_loops(x, a):
    m = np.zeros((len(x), 2))
    for i in range(len(x)):
        for j in range(2):
            m[i, j] = x[i] * (a + j)
    return np.sum(m ** 2)


def scalar_argument(a, x):
    s = np.zeros(len(x))
    s[0] = a
    for t in range(1, len(x)):
        s[t] = s[t - 1] * a + x[t]
    return np.sum(s)


def two_inputs_read(x, a):
    s = np.zeros(len(x))
    d = x * 2.0
    for t in range(1, len(x)):
        s[t] = x[t] * d[t - 1] + a * s[t - 1]
    return np.sum(s ** 2) + np.sum(d)


def slice_read_in_loop(x, a):  # the backward loop adds into ds[:t]: ds stays an array
    s = np.zeros(len(x))
    s[0] = x[0]
    for t in range(1, len(x)):
        s[t] = s[t - 1] * a + np.sum(s[:t]) * x[t]
    return np.sum(s ** 2)


def summed_in_loop(x, a):  # the backward loop adds a broadcast gradient into all of ds: an array
    s = np.zeros(len(x))
    total = 0.0
    for t in range(1, len(x)):
        s[t] = s[t - 1] * a + x[t]
        total = total + np.sum(s) * a
    return total


def matrix_in_loop(x, a):  # a 2-D gradient: an array
    m = np.zeros((len(x), 2))
    m[0, 0] = x[0]
    for t in range(1, len(x)):
        m[t, 0] = m[t - 1, 0] * a + x[t]
        m[t, 1] = m[t, 0] * m[t - 1, 1] - a
    return np.sum(m ** 2)


def divided_in_loop(x, a):  # a division in the backward loop (a Python float would raise on 0): arrays
    s = np.zeros(len(x))
    s[0] = x[0]
    for t in range(1, len(x)):
        s[t] = s[t - 1] / (1 + a * a) + x[t]
    return np.sum(s ** 2)


def two_lists(x, a):  # ds and du both lists over the backward loop
    s = np.zeros(len(x))
    u = np.zeros(len(x))
    for t in range(1, len(x)):
        u[t] = x[t] * a - u[t - 1]
        s[t] = s[t - 1] * u[t] + x[t - 1]
    return np.sum(s * s) + u[0] + s[0]


WRITE_PROGRAMS = [ewma, negative_index, slices, rows, empty_like, read_after, twice_per_step, constants_written,
                  integers_written, nested_loops, scalar_argument, two_inputs_read, slice_read_in_loop,
                  summed_in_loop, matrix_in_loop, divided_in_loop, two_lists]


def arguments(f, n, seed=0):
    r = np.random.default_rng(seed)
    x, a = r.uniform(-1, 1, n), float(r.uniform(0.2, 0.8))
    return (a, x) if f is scalar_argument else (x, a)


@pytest.mark.parametrize("f", WRITE_PROGRAMS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("n", [1, 2, 7])
def test_write_programs(f, n):
    if n < {slices: 4, read_after: 3, rows: 2}.get(f, 1):
        pytest.skip("reads elements past a short x")
    args = arguments(f, n, seed=n)
    compare(f, args, (0, 1), exact_lazy=False)
    check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-7)


def test_ewma_reads_like_a_numpy_loop():
    x, a = np.linspace(-1, 1, 50), 0.3
    for eager in (False, True):
        source = specialized_source(ewma, (x, a), (0, 1), eager=eager)
        forward, backward = source.split("def pullback", 1)
        assert "copy()" not in forward and "overwritten" not in source  # nothing reads s after the loop
        for line in ("da_times_x_t_plus_times = ds[t]", "ds[t] = 0.0", "ds[t_minus_1] += ds_t_minus_1",
                     "dx[t] += dx_t", "da = da - dt_1_minus_a",
                     # Python lists over the loop: indexing them costs a third of NumPy's scalar indexing
                     "ds = ds.tolist()\n        dx = [0.0] * 50\n        for _ in range(n_t):",
                     "        dx = np.array(dx)\n        ds = np.array(ds)\n"):
            assert line in backward, line
        for helper in ("written_part", "cleared_in_place", "added_into", "Stack", "Thunk", "accumulate(", "owned("):
            assert helper not in backward, helper


@pytest.mark.parametrize("eager", [False, True])
def test_lists_only_where_the_loop_only_indexes(eager):
    x, a = np.linspace(-1, 1, 6), 0.3
    backward = specialized_source(two_lists, (x, a), (0, 1), eager=eager).split("def pullback", 1)[1]
    assert "ds = np.array(ds)" in backward and "du = np.array(du)" in backward
    for f in (slice_read_in_loop, summed_in_loop, divided_in_loop, rows, nested_loops):
        backward = specialized_source(f, (x, a), (0, 1), eager=eager).split("def pullback", 1)[1]
        assert "tolist()" not in backward and "[0.0] *" not in backward and "np.array(" not in backward, f
    # a 2-D gradient written by element (m[t, 1]) stays an array; the vector only indexed is a list
    backward = specialized_source(matrix_in_loop, (x, a), (0, 1), eager=eager).split("def pullback", 1)[1]
    assert "dm[t, 1] = 0.0" in backward and "dm.tolist()" not in backward and "dx = [0.0] * 6" in backward


def test_lists_give_numpy_arrays_of_floats():
    for n in (1, 2, 5):  # n = 1: a loop of no step
        x, a = np.linspace(-1, 1, n), 0.3
        for eager in (False, True):
            dx, da = adsrc.grad(ewma, wrt=(0, 1), eager=eager)(x, a)
            assert type(dx) is np.ndarray and dx.dtype == np.float64 and dx.shape == (n,)


def test_a_number_overwritten_needs_no_copy():
    x, a = np.linspace(-1, 1, 6), 0.3
    forward = specialized_source(integers_written, (x, a), (0, 1)).split("def pullback", 1)[0]
    assert "s_overwritten = s[t]\n" in forward  # a NumPy float is immutable
    assert "k_overwritten = k[t].copy()" in forward  # an int64 element: not a kind the specializer follows
    forward = specialized_source(slices, (x, a), (0, 1)).split("def pullback", 1)[0]
    assert "s_overwritten_2 = s[0]\n" in forward and "s[3:].copy()" in forward


def test_a_slice_written_is_its_part_copied_and_cleared_in_place():
    x, a = np.linspace(-1, 1, 6), 0.3
    source = specialized_source(slices, (x, a), (0, 1)).split("def pullback", 1)[1]
    # s[3:] = v, s[1:3] = v of constant slices: the part copied (a view would change), then cleared in place
    assert "ds_1_times_x_item_1 = ds[3:].copy()" in source and "ds[3:] = 0.0" in source
    assert "ds[1:3] = 0.0" in source and "dx[3:] += " in source and "slice(" not in source


def test_what_is_not_exact_stays_generic():
    x, a = np.linspace(-1, 1, 6), 0.3
    source = specialized_source(rows, (x, a), (0, 1)).split("def pullback", 1)[1]
    assert "written_part(" in source  # a row written: an array, not a number


def test_inputs_untouched_and_repeated_calls():
    x, a = np.linspace(-1, 1, 40), 0.4
    before = x.copy()
    df = adsrc.grad(ewma, wrt=(0, 1))
    first = df(x, a)
    second = df(x, a)
    assert np.array_equal(x, before)
    np.testing.assert_array_equal(first[0], second[0])
    assert first[1] == second[1]


# ---- restores a callee's pullback needs (optimize/deadcode.py) ---------------------------------------
def summed_sines(v):
    return np.sum(np.sin(v) * v)


def written_after_a_call(x, a):
    s = x * a
    y = summed_sines(s)
    s[1] = 3.0  # summed_sines' pullback reads s as it was: the backward sweep must restore s[1]
    return y


def written_after_calls_in_a_loop(x, a):
    s = x * a
    total = 0.0
    for t in range(len(x)):
        total = total + summed_sines(s)
        s[t] = 3.0
    return total


def written_after_inlined_calls(x, a):
    # summed_sines is copied in: its parameter is s itself, kept on the tape and read backward after the
    # writes of later steps are undone, though nothing reads s by its name after the loop
    s = np.sin(x) + a
    total = 0.0
    for t in range(len(x)):
        total = total + summed_sines(s) * a
        s[t] = 3.0
    return total


@pytest.mark.parametrize("f", [written_after_a_call, written_after_calls_in_a_loop, written_after_inlined_calls],
                         ids=lambda f: f.__name__)
def test_restores_that_a_callee_pullback_reads(f):
    args = (np.linspace(-1, 1, 5), 0.3)
    compare(f, args, (0, 1), exact_lazy=False)
    check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-7)


# ---- random loops of writes ---------------------------------------------------------------------
def _random_program(rng: random.Random, trial: int) -> str:
    """A loop over t writing numbers into arrays it made (``np.zeros(len(x))`` or ``np.empty_like(x)`` filled
    first), reading them at t, t - 1 or negative indices, then a reduction that reads them again."""
    reads = ["x[t]", "s[t - 1]", "s[t]", "u[t - 1]", "x[t - 1]", "a", "s[-t]", "u[t]"]
    exprs = ["{} * {}", "{} + {}", "np.sin({}) * {}", "{} * 0.5 - {}", "math.tanh({}) + {}"]
    lines = ["    s = np.zeros(len(x))",
             "    u = np.empty_like(x)" if trial % 2 else "    u = np.zeros(len(x))",
             "    u[:] = x * a" if trial % 2 else "    u[0] = x[0]",
             "    for t in range(1, len(x)):"]
    for _ in range(rng.randint(1, 4)):
        target = rng.choice(["s[t]", "u[t]", "s[t - 1]", "s[-t]"])
        value = rng.choice(exprs).format(rng.choice(reads), rng.choice(reads))
        lines.append(f"        {target} = {value}")
    ending = rng.choice(["np.sum(s ** 2) + np.sum(u * x)", "np.sum(s * u) + s[1]", "np.sum(np.cos(s)) + u[-1]"])
    return "def prog(x, a):\n" + "\n".join(lines) + f"\n    return {ending}\n"


def test_random_write_loops():
    rng = random.Random(5)
    for trial in range(30):
        f = function_from_source(_random_program(rng, trial), "prog", f"<random write program {trial}>")
        r = np.random.default_rng(trial)
        args = (r.uniform(-1, 1, rng.choice([2, 5, 9])), float(r.uniform(0.2, 0.8)))
        compare(f, args, (0, 1), exact_lazy=False)
        check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-6)
