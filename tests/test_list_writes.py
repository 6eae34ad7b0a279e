"""Writes into lists the function made (``xs[i] = v``): in place, as Python does, taped and undone.

Each program is checked for Python's value bit for bit, inputs unchanged,
gradients against central finite differences in lazy and eager mode, the JVP,
and the Hessian against finite differences of the gradient. A list that
another name, container, callee or closure could see is refused before
anything runs, naming the line (frontend/lists.py).
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from gradcheck import check, numerical_grad
from test_writes import test_writes_in_forward_mode_and_second_order as forward_and_second_order


def doubles_an_item_of_a_display(x):
    xs = [x, x[::-1] * 3.0]
    xs[0] = xs[0] * 2.0          # overwrites an item read in its own value
    return np.sum(xs[0] * xs[1])


def rnn_states(x):
    hs = [None] * 4
    h = x
    for t in range(4):
        h = np.tanh(h * 1.5 + x[t])
        hs[t] = h
    return np.sum(sum(hs) * x)


def floats_in_a_loop(x):
    ys = [0.0] * len(x)
    for i in range(len(x)):
        ys[i] = x[i] ** 2 + (ys[i - 1] if i > 0 else 0.0)
    return sum(ys) + ys[-1] * x[0]


def overwrites_after_a_read(x):
    xs = [x[0], x[1], x[2]]
    a = xs[1] * x[3]           # reads the item the next line replaces
    xs[1] = xs[2] * 5.0
    xs[-1] = a + xs[0]         # a negative index
    return xs[0] * xs[1] * xs[2] + a


def list_of_arrays_from_a_comprehension(x):
    rows = [x * k for k in range(3)]
    for k in range(3):
        rows[k] = np.sin(rows[k]) + rows[(k + 1) % 3]
    return np.sum(np.stack(rows) ** 2)


def written_in_a_branch(x):
    xs = list(x)
    for i in range(len(xs)):
        if xs[i] > 0.5:
            xs[i] = xs[i] * xs[0]
        else:
            xs[i] = -xs[i]
    return sum(xs) * x[1]


def loops_over_the_list_it_writes(x):
    hs = [x[0], x[1], x[2], x[3], x[4]]
    for i, h in enumerate(hs):
        if i + 1 < len(hs):
            hs[i + 1] = hs[i + 1] + h * 0.5   # the loop reads the written item next, as Python does
    total = 0.0
    for h in reversed(hs):
        total = total * 0.9 + h
    return total + np.sum(np.array(hs) * x)


def augmented_item_and_returned_copy(x):
    xs = [x[0] * 1.0, x[1] * 2.0]      # floats: xs[i] op= e rebinds the item, as xs[i] = xs[i] op e
    xs[0] += x[2] * xs[1]
    xs[1] *= xs[0]
    return xs[0] + xs[1] * x[3]


def _fun(a, b, c):
    return np.sum(a * b) * c


def starred_args_written(*args):
    args = list(args)
    args[1] = args[1] * args[2]
    return _fun(*args)


def parameter_rebound_by_list(x, args):
    args = list(args)
    args[0] = x * args[1]
    return np.sum(args[0] * args[1])


def repeated_and_concatenated(x):
    xs = [x * 1.0] * 3                 # three references to one array: a write replaces one of them
    xs[1] = xs[0] * 2.0
    ys = [x[0], x[1]] + [x[3]]
    ys += [x[2] * ys[2]]
    ys[0] = ys[3] * ys[1]
    pair = 2 * (x[4], x[0])            # a tuple repeated
    return np.sum(xs[0] * xs[1] + xs[2]) + ys[0] * ys[2] + ys[3] + pair[1] * pair[2]


PROGRAMS = [repeated_and_concatenated, doubles_an_item_of_a_display, rnn_states, floats_in_a_loop, overwrites_after_a_read,
            list_of_arrays_from_a_comprehension, written_in_a_branch, loops_over_the_list_it_writes,
            augmented_item_and_returned_copy]


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_list_writes_match_python_and_finite_differences(f):
    x = np.random.default_rng(7).uniform(0.1, 0.9, 5)
    kept = x.copy()
    for eager in (False, True):
        value = adsrc.value_and_grad(f, eager=eager)(x)[0]
        assert value == f(x)  # bit for bit
    np.testing.assert_array_equal(x, kept)
    check(f, x)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_list_writes_in_forward_mode_and_second_order(f):
    """The JVP against finite differences, the Hessian against differences of the gradient."""
    forward_and_second_order(f)


def calls_the_star_function(a, b, c):
    return starred_args_written(a, b, c)


def test_args_rebound_by_list_in_a_star_function():
    a, b, c = np.array([0.3, 0.7]), np.array([1.5, -0.5]), 0.8
    for eager in (False, True):
        assert adsrc.value_and_grad(calls_the_star_function, wrt=(0, 1, 2), eager=eager)(a, b, c)[0] \
            == starred_args_written(a, b, c)
    check(calls_the_star_function, a, b, c, wrt=(0, 1, 2))
    value, tangent = adsrc.jvp(calls_the_star_function, (a, b, c), (np.ones(2), np.zeros(2), 0.0))
    np.testing.assert_allclose(tangent, np.sum(b * c) * c, rtol=1e-12)
    hessian = adsrc.hessian(lambda a: calls_the_star_function(a, b, c))(a)
    np.testing.assert_allclose(hessian, np.zeros((2, 2)), atol=1e-12)


def _symmetrized(fun, argnum):
    """autograd's test helper (tests/test_scipy.py): a function passed in, called with an argument replaced."""
    def symmetrized_fun(*args, **kwargs):
        args = list(args)
        args[argnum] = 0.5 * (args[argnum] + np.swapaxes(args[argnum], -1, -2))
        return fun(*args, **kwargs)

    return symmetrized_fun


def test_a_rule_called_with_a_written_list_spread_into_it():
    from scipy.stats import multivariate_normal

    logpdf = _symmetrized(multivariate_normal.logpdf, 2)

    def f(x, mean, cov):
        return logpdf(x, mean, cov, allow_singular=False)

    rng = np.random.default_rng(3)
    x, mean, a = rng.normal(size=3), rng.normal(size=3), rng.normal(size=(3, 3))
    cov = a @ a.T + 3 * np.eye(3)
    for eager in (False, True):
        assert adsrc.value_and_grad(f, wrt=(0, 1, 2), eager=eager)(x, mean, cov)[0] == f(x, mean, cov)
    check(f, x, mean, cov, wrt=(0, 1, 2))
    hessian = adsrc.hessian(f)(x, mean, cov)
    np.testing.assert_allclose(hessian, -np.linalg.inv(cov), rtol=1e-8)


def test_a_parameter_rebound_by_list():
    x, args = np.array([0.3, 0.7]), (np.array([1.5, -0.5]), np.array([2.0, 0.25]))
    kept = [a.copy() for a in args]
    for eager in (False, True):
        value, grads = adsrc.value_and_grad(parameter_rebound_by_list, wrt=(0, 1), eager=eager)(x, args)
        assert value == parameter_rebound_by_list(x, args)
        np.testing.assert_allclose(grads[0], args[1] ** 2, rtol=1e-12)  # sum(x * b * b)
        assert np.all(grads[1][0] == 0)  # args[0] was replaced before anything read it
        np.testing.assert_allclose(grads[1][1], 2 * x * args[1], rtol=1e-12)
    for a, b in zip(args, kept):
        np.testing.assert_array_equal(a, b)
    check(lambda x, b: parameter_rebound_by_list(x, (x * 0.0, b)), x, args[1], wrt=(0, 1))


def test_the_generated_code_replaces_the_item_and_restores_it():
    source = adsrc.adjoint_source(rnn_states, args=(np.ones(5),))
    assert "        hs_overwritten = hs[t]\n" in source  # the item itself: a list's items are never changed
    assert "dh = accumulate(dh, written_part(dhs, hs, t, h))" in source
    # In the loop the list's cotangent is copied once and its item cleared in place: O(1) per step.
    assert "dhs = owned(dhs)" in source and "dhs = cleared_in_place(dhs, t)" in source
    assert "hs[t] = hs_overwritten" in source


def test_a_returned_list_is_not_changed_by_the_pullback():
    def f(x):
        xs = [x * 1.0, x * 2.0]
        xs[1] = x ** 2
        return xs

    x = np.array([1.0, 2.0])
    value, pullback = adsrc.vjp(f, x)
    kept = [v.copy() for v in value]
    np.testing.assert_array_equal(pullback([np.ones(2), np.ones(2)]), [3.0, 5.0])
    assert len(value) == 2 and all(np.array_equal(a, b) for a, b in zip(value, kept))
    np.testing.assert_array_equal(value[1], x ** 2)


def _refused(f, *words):
    with pytest.raises(UnsupportedSyntax) as info:
        adsrc.grad(f)(np.array([0.5, 1.5]))
    message = str(info.value)
    assert f"{__file__}:" in message, message
    for word in words:
        assert word in message, message
    return message


def test_a_second_name_is_refused():
    def f(x):
        xs = [x, x * 2.0]
        ys = xs
        xs[0] = x * 3.0
        return np.sum(ys[0])

    _refused(f, "second name", "list xs", "line ")


def test_a_list_stored_in_another_container_is_refused():
    def f(x):
        xs = [x, x * 2.0]
        outer = [xs]
        xs[0] = x * 3.0
        return np.sum(outer[0][0])

    _refused(f, "another container", "list xs")


def test_a_list_a_closure_reads_is_refused():
    def f(x):
        xs = [x, x * 2.0]
        first = lambda: xs[0]  # noqa: E731
        xs[0] = x * 3.0
        return np.sum(first())

    _refused(f, "local function or lambda", "list xs")


def test_a_list_passed_to_a_function_of_the_user_is_refused():
    def keep(v):
        return v

    def f(x):
        xs = [x, x * 2.0]
        kept = keep(xs)
        xs[0] = x * 3.0
        return np.sum(kept[0])

    _refused(f, "keep(...)", "list xs")


def test_a_parameter_list_is_refused():
    def f(x, xs):
        if x[0] > 0:
            xs = list(xs)     # on some paths only: xs may still be the caller's list
        xs[0] = x * 3.0
        return np.sum(xs[0])

    with pytest.raises(UnsupportedSyntax) as info:
        adsrc.grad(f)(np.array([0.5, 1.5]), [np.ones(2)])
    assert "parameter" in str(info.value) and f"{__file__}:" in str(info.value)


def test_a_slice_assignment_is_refused():
    def f(x):
        xs = [x, x * 2.0, x]
        xs[0:2] = [x * 3.0]
        return np.sum(xs[0])

    _refused(f, "slice", "length")


def test_a_list_unpacked_into_an_iterator_kept_for_later_is_refused():
    def f(x):
        xs = [x, x * 2.0]
        pairs = enumerate(xs)
        xs[0] = x * 3.0
        return sum(np.sum(v) for _, v in pairs)

    _refused(f, "enumerate", "list xs")


def test_a_write_into_an_item_of_an_item_is_refused():
    def f(x):
        rows = [[x[0], x[1]], [x[1], x[0]]]
        rows[0][1] = x[0] * 3.0
        return rows[0][0] * rows[0][1]

    _refused(f, "item of an item", "list rows", "row = rows[i].copy()")


def test_a_list_written_inside_a_local_function_is_refused():
    def f(x):
        def g(v):
            ys = [v, v]
            ys[0] = v * 2.0
            return ys[0] * ys[1]

        return np.sum(g(x))

    _refused(f, "local function", "list ys", "module level")


def test_a_list_that_grows_and_is_written():
    def f(x):
        xs = []
        for i in range(3):
            xs.append(x * (i + 1.0))
            xs[i] = xs[i] * xs[0]
        return np.sum(xs[0] * xs[2] + xs[1])

    x = np.array([0.3, 0.8])
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(x)[0] == f(x)
    check(f, x)


def test_a_list_made_by_multiplying_with_an_array_is_an_array():
    def f(x):
        ys = [[1.0, 2.0]] * np.ones((2, 2))   # NumPy broadcasts: a 2x2 array, whose rows are views
        ys[0] = x * 2.0
        return np.sum(ys * x)

    x = np.array([0.3, 0.8])
    assert adsrc.value_and_grad(f)(x)[0] == f(x)
    check(f, x)


def test_a_rule_called_with_star_arguments():
    """``np.multiply(*pair)``: the rule's arguments are bound when the call runs (calls.py), as for ``f(*args)``."""
    def f(x):
        pair = (x, x * 3.0)
        items = list(pair)
        items[0] = items[0] + 1.0
        return np.sum(np.multiply(*items)) + np.sum(np.multiply(*pair))

    x = np.array([0.5, 1.5])
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(x)[0] == f(x)
    check(f, x)
    value, tangent = adsrc.jvp(f, (x,), (np.array([1.0, -2.0]),))
    np.testing.assert_allclose(tangent, numerical_grad(f, (x,), 0) @ np.array([1.0, -2.0]), rtol=1e-7)
    np.testing.assert_allclose(adsrc.hessian(f)(x), 12.0 * np.eye(2), rtol=1e-12)


def test_an_augmented_write_into_an_array_item_is_refused_when_run():
    """``xs[i] += v`` changes an array item in place in Python, which another name may share (here ``a``)."""
    def f(x):
        a = x * 2.0
        xs = [a, x]
        xs[0] += x
        return np.sum(a * xs[0])

    with pytest.raises(adsrc.errors.RefusedWhenRun) as info:
        adsrc.grad(f)(np.array([0.5, 1.5]))
    assert "op= e" in str(info.value) and f"{__file__}:" in str(info.value)

    def g(x):
        a = x * 2.0
        xs = [a, x]
        xs[0] = xs[0] + x                  # a new array, as in Python
        return np.sum(a * xs[0])

    check(g, np.array([0.5, 1.5]))


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_specialized_adjoints_agree_with_the_generic_one(f):
    from test_specialize import compare

    compare(f, (np.random.default_rng(5).uniform(0.1, 0.9, 5),), (0,), exact_lazy=False)


def test_min_of_two_lists_may_be_the_list_itself():
    def f(x):
        xs = [x[0], x[1]]
        smaller = min(xs, [5.0, 5.0])   # xs itself
        xs[0] = x[1] * 3.0
        return smaller[0] * x[0]

    _refused(f, "min(...)", "list xs")


# ---- a list grown or written here, returned inside a tuple (return parts, count) --------------------
def appended_then_returned_with_a_count(x):
    parts = []
    start = 0
    for i in range(3):
        parts.append(np.sin(x[i]) * 2.0)
    return parts, start


def written_then_returned_with_a_count(x):
    parts = [0.0, 0.0]
    parts[0] = x[0] * 3.0
    parts[1] = x[1] ** 2
    return parts, 1


def nested_return(x):
    parts = []
    for i in range(3):
        parts.append(x[i] * x[0])
    return (parts, 2), x[1]


def uses_the_returned_pair(x):
    grown, n = appended_then_returned_with_a_count(x)
    written, m = written_then_returned_with_a_count(x)
    (inner, k), y = nested_return(x)
    return grown[0] * grown[2] + n + written[0] * written[1] * m + inner[2] * k + y


@pytest.mark.parametrize("f", [appended_then_returned_with_a_count, written_then_returned_with_a_count,
                               nested_return], ids=lambda f: f.__name__)
@pytest.mark.parametrize("eager", [False, True])
def test_a_list_returned_in_a_tuple_is_returned_as_python_returns_it(f, eager):
    x = np.array([0.3, -0.7, 1.1])
    value, pullback = adsrc.vjp(f, x, eager=eager)
    assert repr(value) == repr(f(x))
    cotangent = adsrc.tree_map(lambda leaf: 1.0 if isinstance(leaf, float) else np.ones_like(leaf), value)
    first = pullback(cotangent)
    assert repr(value) == repr(f(x)), "the backward sweep changed the returned list"
    np.testing.assert_allclose(pullback(cotangent), first)


def test_a_function_that_returns_a_list_in_a_tuple_differentiates():
    check(uses_the_returned_pair, np.array([0.3, -0.7, 1.1]))


def stored_in_a_tuple_then_grown(x):
    parts = []
    pair = (parts, 0)
    parts.append(x[0])
    return np.sum(np.array(pair[0]))


def test_a_list_stored_in_a_tuple_before_it_grows_is_still_refused():
    with pytest.raises(UnsupportedSyntax, match="append"):
        adsrc.grad(stored_in_a_tuple_then_grown)(np.array([0.3, -0.7, 1.1]))
