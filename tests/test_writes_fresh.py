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
from adsrc.errors import AdsrcError, RefusedWhenRun, UnsupportedSyntax
from gradcheck import check, numerical_grad


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


# -- double buffers: names swapped or rotated after a write hold different arrays on every path
# (freshness.py follows each case of what the names hold, not their union) --
def swapped_buffers(u, k):
    a, b = u.copy(), np.zeros_like(u)
    for _ in range(3):
        b[1:-1] = a[1:-1] * k
        a, b = b, a
    return np.sum(a ** 2)


def jacobi_double_buffer(u0, k):
    old, new = u0.copy(), u0.copy()
    for _ in range(6):
        new[1:-1] = old[1:-1] + k * (old[2:] - 2 * old[1:-1] + old[:-2])
        old, new = new, old
    return np.sum(old ** 2) + np.sum(new * u0)


def three_buffers_rotated(x):
    a, b, c = np.ones(3), np.zeros(3), x[:3] * 1.0
    for i in range(5):
        a[i % 3] = np.sin(b[i % 3]) + c[(i + 1) % 3] * x[i % 3]
        a, b, c = b, c, a
    return np.sum(a * b * c) + np.sum(a)


def swapped_on_a_branch(x):
    a, b = x.copy(), x * 2.0
    for i in range(4):
        b[i % 3] = a[i % 3] * b[(i + 1) % 3]
        if x[i % 3] > 0.5:
            a, b = b, a
    return np.sum(a ** 2 + b)


def swapped_in_a_while_loop(x):
    a, b, n = x.copy(), np.zeros_like(x), 0
    while n < 5:
        b[:] = np.tanh(a) * x + a[::-1]
        a, b = b, a
        n += 1
    return np.sum(a * x) + np.sum(b)


def swapped_then_one_made_the_other(x):
    a, b = np.zeros(3), np.zeros(3)
    for i in range(3):
        a[i] = x[i]
        a, b = b, a
        b = a  # from here both names hold one array: the next write would show through b
    return np.sum(a * b)


def swapped_after_many_branches(x):  # each if doubles the cases of what s holds: 16 before the buffers
    s = 0.0
    if x[0] > 0.4:
        s = s + np.cos(x[0])
    if x[1] > 0.4:
        s = s + np.cos(x[1])
    if x[2] > 0.4:
        s = s * x[2]
    if x[0] > 0.6:
        s = s - x[1]
    a, b = x.copy(), np.zeros_like(x)
    for i in range(3):
        b[1:] = a[:-1] * s + x[1:]
        a, b = b, a
    return np.sum(a * x) + np.sum(b) + s


def aliased_after_many_branches(x):
    s = np.sum(x)
    for j in range(3):
        if x[j] > 0.4:
            s = s + x[j] if x[j] > 0.9 else s - 1.0
    for v in [x[0:2], x[1:3]]:
        s = s * np.sum(v)
    a, b = np.zeros(3), np.zeros(3)
    for i in range(3):
        a[i] = x[i] * s
        a, b = b, a
        if s > 100.0:
            b = a  # on this path both names hold one array
    return np.sum(a * b)


RNG = np.random.default_rng(3)
CASES = [
    (heat, (RNG.random(9), 0.3), (0, 1)),
    (copied_on_one_branch, (RNG.random(4) + 0.5,), 0),
    (copied_on_one_branch, (RNG.random(4) - 1.5,), 0),
    (while_loop_rebinding, (RNG.random(6),), 0),
    (alias_dead_after_the_write, (RNG.random(4),), 0),
    (copy_of_a_copy_in_a_loop, (RNG.random(5), 0.7), (0, 1)),
    (fft_filter, (RNG.random(9),), 0),
    (swapped_buffers, (RNG.random(6), 0.5), (0, 1)),
    (jacobi_double_buffer, (RNG.random(7), 0.2), (0, 1)),
    (three_buffers_rotated, (RNG.random(5),), 0),
    (swapped_on_a_branch, (RNG.random(3),), 0),
    (swapped_in_a_while_loop, (RNG.random(4),), 0),
    (swapped_after_many_branches, (RNG.random(3),), 0),
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


# -- still refused: the write would show through another name read afterwards --
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


@pytest.mark.parametrize("f, args, message", [
    (written_while_an_alias_is_read_after, (np.ones(3),), r"another name that may hold the same array \(keep\)"),
    (held_by_a_list_read_after, (np.ones(3),), r"another name that may hold the same array \(parts\)"),
    (rebound_to_the_argument_in_the_loop, (np.ones(4),), r"another name that may hold the same array \(u\)"),
    (swapped_then_one_made_the_other, (np.ones(3),), r"another name that may hold the same array \(b\)"),
    (aliased_after_many_branches, (np.ones(3),), r"another name that may hold the same array \(b\)"),
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


# -- writes into the arrays a function was given ----------------------------------------------------
def product_into_the_first(x):
    x[0] = x[0] * x[1]
    return np.sum(x ** 2)


def momentum(vx, g):
    vx -= 0.1 * g
    return np.sum(vx ** 2)


def doubled(x):
    x *= 2.0
    return np.sum(x)


def doubled_one_read_another(x, y):
    x *= 2.0
    return np.sum(y * x[0])


def through_a_second_name(u):
    new = u
    new[0] = new[1] * 2.0
    return np.sum(new * new)


def copied_on_one_path_only(u, flag):
    y = u.copy() if flag else u
    y[0] = np.sin(y[1])
    return np.sum(y ** 3)


def descent_in_a_loop(w, g):
    for _ in range(3):
        w -= 0.1 * np.tanh(w) * g
    return np.sum(w ** 2)


def running_sum_in_place(x):
    for i in range(1, len(x)):
        x[i] = x[i - 1] * 0.5 + x[i] ** 2
    return np.sum(np.sin(x))


def augmented_item(x):
    x[0] += 1.0
    return np.sum(x ** 2)


def add_at_into_the_argument(x):
    np.add.at(x, [0, 0, 2], x[1] * 2.0)
    return np.sum(x ** 2)


def read_and_written_in_a_loop(x):
    s = 0.0
    for i in range(3):
        s = s + np.sum(x ** 2)
        x[i] = x[i] * 2.0 + s
    return s + np.sum(np.cos(x))


def copied_then_written(x):
    y = x.copy()
    x[0] = np.tanh(x[1])
    return np.sum(y * x)


def columns_of_a_matrix(W, v):
    W[:, 0] = np.tanh(W[:, 1] * v[0])
    W *= v[1]
    return np.sum((W @ v) ** 2)


def scaled_number(s, x):
    s *= 2.0                     # a float: rebound, as Python does
    return s * np.sum(x)


PARAMETER_CASES = [
    (product_into_the_first, (np.array([2.0, 3.0, 1.5]),), 0),
    (momentum, (RNG.random(4), RNG.random(4)), (0, 1)),
    (doubled, (RNG.random(3),), 0),
    (doubled_one_read_another, (RNG.random(3), RNG.random(3)), (0, 1)),
    (through_a_second_name, (RNG.random(4),), 0),
    (copied_on_one_path_only, (RNG.random(4), True), 0),
    (copied_on_one_path_only, (RNG.random(4), False), 0),
    (descent_in_a_loop, (RNG.random(3), RNG.random(3)), (0, 1)),
    (running_sum_in_place, (RNG.random(5),), 0),
    (augmented_item, (RNG.random(3),), 0),
    (add_at_into_the_argument, (RNG.random(3),), 0),
    (read_and_written_in_a_loop, (RNG.random(4),), 0),
    (copied_then_written, (RNG.random(3),), 0),
    (columns_of_a_matrix, (RNG.random((3, 2)), RNG.random(2)), (0, 1)),
    (scaled_number, (1.5, RNG.random(3)), (0, 1)),
]


def _copies(args):
    return [np.array(a) if isinstance(a, np.ndarray) else a for a in args]


def _on_copies(f):
    return lambda *args: f(*_copies(args))


@pytest.mark.parametrize("specialize", [True, False], ids=["specialized", "generic"])
@pytest.mark.parametrize("f, args, wrt", PARAMETER_CASES, ids=lambda c: getattr(c, "__name__", ""))
def test_writes_into_arguments_change_them_as_python_does(f, args, wrt, specialize, monkeypatch):
    monkeypatch.setattr(adsrc.config, "specialize", specialize)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    plain = _copies(args)
    expected_value = f(*plain)
    expected = [numerical_grad(_on_copies(f), args, i) for i in positions]
    for eager in (False, True):
        given = _copies(args)
        value, grads = adsrc.value_and_grad(f, wrt=positions, eager=eager)(*given)
        assert value == expected_value  # bit for bit
        for a, b in zip(given, plain):  # the same objects changed, to the same bits
            assert np.array_equal(a, b) and np.result_type(a) == np.result_type(b)
        for k, i in enumerate(positions):
            np.testing.assert_allclose(grads[k], expected[k], rtol=1e-5, atol=1e-7,
                                       err_msg=f"gradient wrt argument {i}, eager={eager}")
        given = _copies(args)
        gradient = adsrc.grad(f, wrt=positions, eager=eager)(*given)
        for a, b in zip(given, plain):
            assert np.array_equal(a, b)
        np.testing.assert_allclose(gradient[0], grads[0], rtol=1e-12, atol=1e-12)


def test_a_pullback_called_again_starts_from_the_values_at_entry():
    x = np.array([2.0, 3.0, 1.5])
    after = x.copy()
    product_into_the_first(after)
    value, pullback = adsrc.vjp(product_into_the_first, x)
    first, second = pullback(1.0), pullback(2.0)
    np.testing.assert_array_equal(x, after)  # changed once, as by one plain call
    expected = numerical_grad(_on_copies(product_into_the_first), (np.array([2.0, 3.0, 1.5]),), 0)
    np.testing.assert_allclose(first, expected, rtol=1e-6)
    np.testing.assert_allclose(second, 2 * expected, rtol=1e-6)


def test_forward_mode_writes_into_the_argument_and_never_into_its_tangent():
    x, t = np.array([2.0, 3.0, 1.5]), np.array([1.0, -1.0, 0.5])
    after = x.copy()
    expected_value = product_into_the_first(after)
    value, tangent = adsrc.jvp(product_into_the_first, (x,), (t,))
    np.testing.assert_array_equal(x, after)
    np.testing.assert_array_equal(t, [1.0, -1.0, 0.5])
    gradient = numerical_grad(_on_copies(product_into_the_first), (np.array([2.0, 3.0, 1.5]),), 0)
    assert value == expected_value
    np.testing.assert_allclose(tangent, np.dot(gradient, t), rtol=1e-6)


SHARED = np.array([1.0, 2.0, 3.0])


def reads_a_global(x):
    x[0] = 5.0
    return np.sum(x * SHARED)


def writes_one_reads_another(x, y):
    x[0] = 2.0
    return np.sum(x * y)


def update_of_integers(v, g):
    v -= g * 0.5
    return np.sum(v * g)


def test_arguments_whose_writes_python_would_show_elsewhere_are_refused_when_called():
    x = np.array([1.0, 2.0, 3.0])
    cases = [(reads_a_global, (SHARED,), "shares memory"),
             (writes_one_reads_another, (x, x), "shares memory"),
             (writes_one_reads_another, (x, x[1:]), "shares memory"),
             (writes_one_reads_another, (x, [x[:2]]), "shares memory"),
             (product_into_the_first, ([2.0, 3.0],), "given a list")]
    read_only = np.ones(3)
    read_only.flags.writeable = False
    cases += [(product_into_the_first, (read_only,), "read-only")]
    for f, args, message in cases:
        before = _copies(args)
        with pytest.raises(RefusedWhenRun, match=message) as info:
            adsrc.grad(f)(*args)
        assert f"{__file__}:" in str(info.value)
        for a, b in zip(args, before):
            assert np.array_equal(a, b)  # nothing ran
    v, g = np.array([3, 4]), np.array([1.0, 2.0])
    with pytest.raises(RefusedWhenRun, match="int64"):
        adsrc.grad(update_of_integers, wrt=1)(v, g)
    with pytest.raises(TypeError):
        update_of_integers(v.copy(), g)  # Python refuses it too


def calls_a_writer(x):
    y = x * 1.0
    return product_into_the_first(y) + np.sum(y)


def test_a_function_writing_its_argument_is_refused_where_another_derivative_calls_it():
    with pytest.raises(UnsupportedSyntax, match="changes what it is given"):
        adsrc.grad(calls_a_writer)(np.ones(3))
    x = np.array([2.0, 3.0, 1.5])
    with pytest.raises(RefusedWhenRun, match="writes into an array it was given"):
        adsrc.hessian(product_into_the_first)(x)
    np.testing.assert_array_equal(x, [2.0, 3.0, 1.5])


def returns_what_it_wrote(x):
    x[0] = 2.0
    return x


def returns_what_it_updated(x):
    x *= 2.0
    return x


def test_returning_an_argument_written_in_place_is_refused():
    with pytest.raises(UnsupportedSyntax, match="returning it"):
        adsrc.vjp(returns_what_it_wrote, np.ones(2))
    x = np.ones(2)
    with pytest.raises(RefusedWhenRun, match="returning it"):
        adsrc.vjp(returns_what_it_updated, x)
    np.testing.assert_array_equal(x, [1.0, 1.0])
    value, pullback = adsrc.vjp(returns_what_it_updated, 1.5)  # a number is rebound: nothing is written
    assert value == 3.0 and pullback(1.0) == 2.0


def scaled_copy(x):
    x[0] = x[0] * 2.0
    return x * 3.0


def test_apis_that_call_the_function_more_than_once_refuse_writes_into_its_arguments():
    x = np.array([2.0, 3.0, 1.5])
    after = x.copy()
    scaled_copy(after)
    jacobian = adsrc.jacobian(scaled_copy)(x)  # one vjp, then its pullback once per row
    np.testing.assert_array_equal(x, after)
    np.testing.assert_allclose(jacobian, np.diag([6.0, 3.0, 3.0]))
    x = np.array([2.0, 3.0, 1.5])
    with pytest.raises(RefusedWhenRun, match="column by column"):
        adsrc.jacobian(scaled_copy, mode="fwd")(x)
    np.testing.assert_array_equal(x, [2.0, 3.0, 1.5])  # refused before it ran
    with pytest.raises(AdsrcError, match="check_grads"):
        adsrc.check_grads(product_into_the_first, (np.array([2.0, 3.0, 1.5]),), modes=("rev",))
