"""Writes through views (frontend/view_writes.py): ``v = y[1:]; v[0] = e`` writes ``y[1]``, as Python does.

Each program is checked for Python's value bit for bit, inputs unchanged,
gradients against central finite differences in lazy and eager mode
(gradcheck.check), the JVP, and the Hessian against finite differences of
the gradient. A write through a view that adsrc cannot follow (the view or
its array rebound in between, an index that may be an array, an update
``v op= e`` of a view) stays refused before anything runs, with the line.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import UnsupportedSyntax
from gradcheck import check, numerical_grad
from test_writes import test_writes_in_forward_mode_and_second_order as forward_and_second_order


def into_a_slice_view(x):
    y = np.zeros(len(x))
    y[:] = x
    v = y[1:]
    v[0] = v[0] * x[0]
    return np.sum(y * x) + np.sum(v)


def rows_of_a_matrix(x):
    K = np.outer(x, x) + 1.0
    for i in range(len(x)):
        row = K[i]
        row[i] = row[i] * 2.0 + np.sin(x[i])
        row[(i + 1) % len(x)] = row[i] * x[0]
    return np.sum(K * K)


def view_of_a_view(x):
    y = x * 2.0
    v = y[1:]
    w = v[::2]
    w[0] = w[-1] * x[0]
    return np.sum(y * x) + np.sum(v ** 2) + np.sum(w)


def read_a_view_after_a_write_into_its_array(x):
    y = np.cos(x)
    head = y[:2]
    y[0] = x[1] * 3.0
    return np.sum(head * x[:2]) + np.sum(y)


def recurrence_through_two_views(x):
    out = np.zeros(len(x) + 1)
    prev, nxt = out[:-1], out[1:]
    for t in range(len(x)):
        nxt[t] = 0.5 * prev[t] + np.tanh(x[t])
    return np.sum(out * out) + np.sum(prev * nxt)


def column_updated_in_a_loop(x):
    M = np.ones((len(x), 3)) * x[:, None]
    col = M[:, 1]
    for i in range(len(x)):
        col[i] += x[i] ** 2
    return np.sum(M ** 2)


def fancy_index_through_a_view(x):
    y = x ** 2
    v = y[1:]
    v[np.array([0, 2])] = x[:2] * 3.0
    v[[1, 1]] = x[3]  # repeated positions: the last one wins, as in NumPy
    return np.sum(y * x)


def reversed_view_with_an_ellipsis(x):
    M = np.outer(x, x[:3])
    v = M[..., ::-1]
    v[0, 1:] = x[1:3]
    v[1:, -1] = np.exp(v[1:, 0])
    return np.sum(M * np.arange(M.size).reshape(M.shape))


# -- a write into an index of an index: y[i][j] = e is y[i, j] = e where y[i] is a view ----------------
def matrix_filled_item_by_item(x):
    M = np.zeros((4, 3))
    for i in range(4):
        for j in range(3):
            M[i][j] = np.sin(x[i]) * x[j]
            M[i][j] += x[i] * 0.5
    return np.sum(M @ M.T)


def chained_through_a_view_name(x):
    y = np.ones((3, 4)) * x[0]
    v = y[1:]
    v[0][1] = x[1] * 3.0
    v[1][::-1] = x[:4]
    return np.sum(y * y) + np.sum(v)


def three_indices_deep(x):
    T = np.zeros((2, 3, 2))
    T[1][0][1] = x[2] ** 2
    T[0][1:][0] = x[:2]
    T[...][1][2] -= np.tanh(x[1:3])
    return np.sum(np.sin(T) * np.arange(T.size).reshape(T.shape))


# -- v op= e on a view changes it in place: the update through the view it is ------------------------------
def view_updated_in_place(x):
    y = x * 1.0
    v = y[1:]
    v += x[:-1]
    v *= np.sin(x[1:])
    return np.sum(y * x) + np.sum(v)


def block_updated_in_a_loop(x):
    u = np.zeros((3, 4))
    inner = u[1:, ::2]
    for k in range(3):
        inner -= x[k] * np.ones((2, 2))
        inner *= x[3]
    return np.sum(u * u) + np.sum(inner)


def sliced_tuple_extended(x):  # a tuple's slice is a new tuple: += rebinds the name, as Python's does
    t = (x[0], x[1], x[2])
    v = t[1:]
    v += (x[3],)
    return sum(v) * t[0]


# -- a loop over the rows of an array gives views: a write through a row writes the array -----------------
def rows_written_in_a_loop(x):
    K = np.outer(x, x[:3])
    for row in K:
        row[0] = np.sin(row[1])
        row[1:] *= row[0]
    return np.sum(K * K)


def enumerated_rows(x):
    K = np.zeros((3, 4))
    for i, row in enumerate(K):
        row[:] = x[:4] * (i + 1.0)
        row[1:] += np.tanh(row[:0:-1])
    return np.sum(K @ K.T)


PROGRAMS = [into_a_slice_view, rows_of_a_matrix, view_of_a_view, read_a_view_after_a_write_into_its_array,
            recurrence_through_two_views, column_updated_in_a_loop, fancy_index_through_a_view,
            reversed_view_with_an_ellipsis, matrix_filled_item_by_item, chained_through_a_view_name,
            three_indices_deep, view_updated_in_place, block_updated_in_a_loop, sliced_tuple_extended,
            rows_written_in_a_loop, enumerated_rows]
X = np.array([0.3, 0.8, -0.4, 0.55])


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_writes_through_views_run_as_python(f):
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(X)[0] == f(X)  # bit for bit
    check(f, X)


@pytest.mark.parametrize("f", PROGRAMS, ids=lambda f: f.__name__)
def test_writes_through_views_in_forward_mode_and_second_order(f):
    forward_and_second_order(f)


def test_the_generated_code_writes_into_the_array_the_view_was_taken_of():
    source = adsrc.adjoint_source(into_a_slice_view)
    assert "written_through(y, v_index, 0)" in source
    assert "v = y[v_index]" in source


def into_a_view_of_the_argument(p):
    v = p[1:]
    v[0] = v[0] * p[0]
    return np.sum(p * p)


def test_a_write_through_a_view_of_an_argument_changes_it_as_python_does():
    x, plain = X.copy(), X.copy()
    expected = into_a_view_of_the_argument(plain)
    value, grad = adsrc.value_and_grad(into_a_view_of_the_argument)(x)
    assert value == expected
    np.testing.assert_array_equal(x, plain)  # the caller's array changed as the plain call changed it
    # the gradient is with respect to the values at entry
    np.testing.assert_allclose(grad, numerical_grad(lambda p: into_a_view_of_the_argument(p.copy()), (X,), 0),
                               rtol=1e-6, atol=1e-8)


def scalar_of_a_vector(x):
    y = x * 1.0
    v = y[0]
    v[0] = 1.0  # y[0] of a vector is a number: Python raises TypeError
    return np.sum(y)


def item_of_an_item_of_a_vector(x):
    y = x * 1.0
    y[0][0] = 1.0
    return np.sum(y)


@pytest.mark.parametrize("f", [scalar_of_a_vector, item_of_an_item_of_a_vector])
def test_writing_into_a_number_raises_as_python_does(f):
    with pytest.raises(TypeError) as plain:
        f(X)
    with pytest.raises(TypeError, match="does not support item assignment") as caught:
        adsrc.grad(f)(X)
    assert str(caught.value) == str(plain.value)


def chained_into_an_argument(M, x):
    M[0][1] = x[0] * 2.0
    M[1][::2] += x[1]
    return np.sum(M * x[1])


def test_an_index_of_an_index_of_an_argument_writes_it_as_python_does():
    M, plain, x = np.ones((2, 3)), np.ones((2, 3)), X[:2]
    expected = chained_into_an_argument(plain, x)
    value, grad = adsrc.value_and_grad(chained_into_an_argument, wrt=1)(M, x)
    assert value == expected
    np.testing.assert_array_equal(M, plain)
    np.testing.assert_allclose(grad, numerical_grad(lambda v: chained_into_an_argument(np.ones((2, 3)), v), (x,), 0),
                               rtol=1e-6, atol=1e-8)


def view_rebound_on_a_branch(x):
    y = x * 1.0
    v = y[1:]
    if x[0] > 0:
        v = y[2:]
    v[0] = 5.0
    return np.sum(y * x)


def array_rebound_in_between(x):
    y = x * 1.0
    v = y[1:]
    y = x * 2.0
    v[0] = 5.0
    return np.sum(y * x)


def index_that_may_be_an_array(x, k):
    y = x * 1.0
    v = y[k]
    v[0] = 5.0
    return np.sum(y * x)


@pytest.mark.parametrize("f, args", [
    (view_rebound_on_a_branch, (X,)), (array_rebound_in_between, (X,)),
    (index_that_may_be_an_array, (X, np.array([1, 2]))),
], ids=lambda c: getattr(c, "__name__", ""))
def test_writes_through_views_adsrc_cannot_follow_are_refused(f, args):
    with pytest.raises(UnsupportedSyntax, match=r"test_view_writes.py:\d+"):
        adsrc.grad(f)(*args)


def index_of_an_index_that_may_be_an_array(x, k):
    M = np.zeros((4, 4))
    M[k][0] = x[0]  # M[k] of an integer array is a copy: Python's write is lost
    return np.sum(M * x)


def test_an_index_of_an_index_that_may_be_an_array_is_refused_with_the_one_index_remedy():
    with pytest.raises(UnsupportedSyntax, match=r"test_view_writes.py:\d+:\d+: assignment into an index of an index "
                                                r"of M .*write through one index \(M\[i, j\] = \.\.\.\)"):
        adsrc.grad(index_of_an_index_that_may_be_an_array)(X, np.array([1, 2]))


def rows_of_an_argument(K, x):
    for row in K:  # K is the caller's: the row loop is not rewritten, and the write is refused as before
        row[0] = x[0]
    return np.sum(K) * x[1]


def rows_updated_by_name(x):
    K = np.outer(x, x)
    for row in K:  # in place where K has two axes, a new number bound to row where it has one: refused
        row += x
    return np.sum(K)


@pytest.mark.parametrize("f, args", [(rows_of_an_argument, (np.ones((2, 2)), X)), (rows_updated_by_name, (X,))],
                         ids=lambda c: getattr(c, "__name__", ""))
def test_row_loops_adsrc_cannot_follow_are_refused_with_the_line(f, args):
    with pytest.raises(UnsupportedSyntax, match=r"test_view_writes.py:\d+:\d+"):
        adsrc.grad(f, wrt=len(args) - 1)(*args)


def rows_of_a_number(x):
    K = np.sum(x) * np.ones(())
    for row in K:
        row[0] = 1.0
    return np.sum(K)


def test_a_loop_over_a_0d_array_raises_as_python_does():
    with pytest.raises(TypeError) as plain:
        rows_of_a_number(X)
    with pytest.raises(TypeError) as caught:
        adsrc.grad(rows_of_a_number)(X)
    assert str(caught.value) == str(plain.value)
