"""One linear algebra and one recurrence however they are spelled (optimize/kinds.py, rules/templates.py).

* ``np.dot``, ``np.inner``, ``np.vdot``, ``a.dot(b)``, ``a @ b`` and ``np.matmul`` of real vectors and
  matrices share matmul's templates (``defsame``), so their specialized adjoints compute the
  contributions inline, and give what the generic adjoint gives, bit for bit in eager mode.
* A read sees the kinds of the one assignment that reaches it: after ``d = d + c`` the cotangent is no
  longer the ``zero`` it started as, so the rules that follow are inlined. Branches, loops, breaks, tape
  pops and tuple targets keep what reaches a read honest: every program here agrees with
  the generic adjoint and with central finite differences, lazy and eager.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from gradcheck import check
from test_specialize import compare, specialized_source

RS = np.random.RandomState(3)
V, W = RS.randn(5), RS.randn(5)
M, N = RS.randn(4, 5), RS.randn(5, 3)


# ---- one linear algebra -------------------------------------------------------------------------
def dot_vv(a, b):
    return np.dot(a, b) * 2.0


def inner_vv(a, b):
    return np.inner(a, b) + np.sum(a)


def vdot_vv(a, b):
    return np.vdot(a, b) * np.vdot(b, b)


def method_vv(a, b):
    return a.dot(b) - a.dot(a)


def matmul_vv(a, b):
    return (a @ b) * np.matmul(b, a)


def dot_mv(m, a):
    return np.sum(np.tanh(np.dot(m, a)))


def dot_vm(a, n):
    return np.sum(np.dot(a, n) ** 2)


def matmul_vm(a, n):
    return np.sum(np.sin(a @ n))


def dot_mm(m, n):
    return np.sum(np.cos(np.dot(m, n)))


def method_mv(m, a):
    return np.sum(m.dot(a) * m.dot(a))


LINEAR = [(dot_vv, (V, W)), (inner_vv, (V, W)), (vdot_vv, (V, W)), (method_vv, (V, W)), (matmul_vv, (V, W)),
          (dot_mv, (M, V)), (dot_vm, (V, N)), (matmul_vm, (V, N)), (dot_mm, (M, N)), (method_mv, (M, V))]


@pytest.mark.parametrize("f, args", LINEAR, ids=lambda v: getattr(v, "__name__", ""))
def test_linear_spellings_agree_with_the_generic_adjoint(f, args):
    compare(f, args, (0, 1))
    check(f, *args, wrt=(0, 1))


def accumulate_dot(v, c):
    s = 0.0
    for ci in c:
        s = s + np.dot(v, v) * ci
    return s


def accumulate_inner(v, c):
    s = 0.0
    for ci in c:
        s = s + np.inner(v, v) * ci
    return s


def accumulate_vdot(v, c):
    s = 0.0
    for ci in c:
        s = s + np.vdot(v, v) * ci
    return s


def accumulate_matmul(v, c):
    s = 0.0
    for ci in c:
        s = s + (v @ v) * ci
    return s


def rnn_dot(wh, h, xs):
    for x in xs:
        h = np.tanh(np.dot(wh, h) + x)
    return np.sum(h)


@pytest.mark.parametrize("f", [accumulate_dot, accumulate_inner, accumulate_vdot, accumulate_matmul],
                         ids=lambda f: f.__name__)
def test_an_accumulated_inner_product_is_inlined_however_spelled(f):
    args = (RS.randn(6), RS.randn(7))
    source = specialized_source(f, args)
    assert "rule_vjp" not in source and "Stack" not in source, source
    compare(f, args, 0, exact_lazy=False)  # the generic adjoint's Stack sums in another order
    check(f, *args, wrt=0)


def test_a_matrix_vector_dot_in_a_loop_is_inlined():
    args = (RS.randn(4, 4) * 0.4, RS.randn(4), RS.randn(6, 4))
    source = specialized_source(rnn_dot, args, wrt=(0, 1))
    assert "numpy.dot" not in source, source
    compare(rnn_dot, args, (0, 1), exact_lazy=False)
    check(rnn_dot, *args, wrt=(0, 1))


def test_np_dot_is_not_taken_for_an_arrays_method():
    """``np.dot(v, v)`` is a call of the module's function: its kind is known (a NumPy float)."""
    source = specialized_source(accumulate_dot, (RS.randn(3), RS.randn(4)))
    assert "ds * ci" in source, source


def rnn_transposed(wh, h, xs):
    for x in xs:
        h = np.tanh(h @ wh.T + x)
    return np.sum(h)


@pytest.mark.parametrize("n", [4, 24])
def test_a_transposed_matrix_in_a_loop(n):
    """``h @ W.T``: a vector times a matrix inline, and the transposes' contributions summed before one
    transpose (a linear rule's batched form) where they are too large to compute at once."""
    args = (RS.randn(n, n) * 0.3, RS.randn(n), RS.randn(5, n))
    compare(rnn_transposed, args, (0, 1), exact_lazy=False)
    check(rnn_transposed, *args, wrt=(0, 1))


def test_a_linear_rules_contributions_are_summed_first():
    from adsrc.rules import registry
    vjp = registry.lookup(np.transpose).vjps[0]
    x = RS.randn(3, 4)
    gs = [RS.randn(4, 3) for _ in range(5)]
    calls = [((g, x.T, x), {}) for g in gs]
    np.testing.assert_allclose(vjp.fuse(calls), sum(g.T for g in gs), rtol=1e-14)
    # other layouts, other options, or other index arrays: each call runs
    assert vjp.fuse(calls + [((RS.randn(3, 4), x, x.T), {})]) is None
    swap = registry.lookup(np.swapaxes).vjps[0]
    assert swap.fuse([((gs[0], x.T, x, 0, 1), {}), ((gs[1], x.T, x, 1, 0), {})]) is None
    np.testing.assert_allclose(swap.fuse([((gs[0], x.T, x, 0, 1), {}), ((gs[1], x.T, x, 0, 1), {})]),
                               gs[0].T + gs[1].T, rtol=1e-14)
    take = registry.lookup(np.take).vjps[0]
    v = RS.randn(6)
    first, second = np.array([0, 2]), np.array([1, 3])
    assert take.fuse([((np.ones(2), None, v, first), {}), ((np.ones(2), None, v, second), {})]) is None
    same = take.fuse([((np.ones(2), None, v, first), {}), ((np.full(2, 2.0), None, v, first), {})])
    np.testing.assert_array_equal(same, [3.0, 0, 3.0, 0, 0, 0])


# ---- one square ----------------------------------------------------------------------------------
def squares_in_a_branchy_loop(x):
    s = 0.0
    for t in range(len(x)):
        if x[t] > 0:
            s = s + x[t] ** 2
        else:
            s = s - x[t] ** 3
    return s


def square_spellings(x):
    return np.sum(x ** 2) + np.sum(np.square(x)) * 0.5 + np.sum(x * x) * 0.25 + np.sum(x ** 1)


def test_an_integer_power_is_inlined():
    args = (RS.randn(9),)
    source = specialized_source(squares_in_a_branchy_loop, args)
    assert "power_dx" not in source and "ds * (2 * x_t)" in source and "np.power(x_t, 1)" not in source, source
    compare(squares_in_a_branchy_loop, args, 0)
    check(squares_in_a_branchy_loop, *args, wrt=0)


def test_square_spellings_agree():
    x = RS.randn(6)
    compare(square_spellings, (x,), 0)
    check(square_spellings, x, wrt=0)
    assert np.allclose(adsrc.grad(square_spellings)(x), 2 * x + x + 0.5 * x + 1.0, rtol=1e-14)


def test_powers_that_are_not_smooth_keep_the_zero_guard():
    """``x ** 0.5`` at 0 in a discarded branch: its zero cotangent gives exactly 0, not NaN."""
    def f(x):
        return np.sum(np.where(x > 0, x ** 0.5, 0.0))
    x = np.array([0.0, 4.0])
    with np.errstate(divide="ignore", invalid="ignore"):
        for eager in (False, True):
            assert np.array_equal(adsrc.grad(f, eager=eager)(x), [0.0, 0.25])


def test_a_python_float_to_an_integer_power():
    def f(x):
        y = x
        for _ in range(3):
            y = y ** 2 * 0.5 + x
        return y
    compare(f, (0.7,), 0)
    check(f, 0.7, wrt=0)
    assert type(adsrc.grad(f)(0.7)) is type(adsrc.grad(f, eager=True)(0.7))


# ---- slices, tuples of several kinds, element indices ------------------------------------------
def heat_by_concatenation(u, k):
    for _ in range(6):
        lap = np.concatenate(([0.0], u[2:] - 2 * u[1:-1] + u[:-2], [0.0]))
        u = u + k * lap
    return np.sum(u ** 2)


def kernel_matrix(x, ell):
    n = len(x)
    K = np.zeros((n, n))    # a length, then a shape: what the kinds follow to know K's shape
    for i in range(n):
        for j in range(n):
            K[i, j] = np.exp(-(x[i] - x[j]) ** 2 / ell)
    return np.sum(K * K)


def sliced_columns(m, v):
    top = m[:2, 1:]
    return np.sum(top @ v[1:]) + np.sum(m[:, None, 0] * v[0])


@pytest.mark.parametrize("f, args, generic", [
    (heat_by_concatenation, (RS.randn(7), 0.1), ("Stack", "accumulate(")),
    (kernel_matrix, (RS.randn(5), 0.7), ("written_part", "added_into")),
    (sliced_columns, (RS.randn(3, 3), RS.randn(3)), ("accumulate(",))], ids=lambda v: getattr(v, "__name__", ""))
def test_slices_tuples_and_element_indices(f, args, generic):
    source = specialized_source(f, args, wrt=(0, 1))
    assert not any(helper in source for helper in generic), source
    compare(f, args, (0, 1), exact_lazy=False)
    check(f, *args, wrt=(0, 1))


def test_an_element_of_a_matrix_written_in_a_loop_is_plain_indexing():
    source = specialized_source(kernel_matrix, (RS.randn(5), 0.7))
    assert "dexp_over = dK[i, j]" in source and "dK[i, j] = 0.0" in source and "written_part" not in source


def test_a_length_kept_in_a_name_gives_the_shape_it_makes():
    assert _reads('''
def f(x):
    n = len(x)
    K = np.zeros((n, n))
    p = np.negative(K)
    m = 2
    for i in range(3):
        m = m + 1
    L = np.zeros((m, m))
    q = np.negative(L)
    return K
''', x=np.ones(4)) == [["float64[4, 4]"], None]


# ---- what reaches a read -----------------------------------------------------------------------
def scalar_recurrence(x, a):
    s = x[0]
    total = 0.0
    for t in range(1, len(x)):
        s = a * x[t] + (1 - a) * s
        total = total + s * s
    return total


def test_a_carried_scalar_recurrence_is_inlined():
    args = (RS.randn(9), 0.3)
    source = specialized_source(scalar_recurrence, args)
    assert "add_dx" not in source and "multiply_dy" not in source, source
    compare(scalar_recurrence, args, (0, 1), exact_lazy=False)
    check(scalar_recurrence, *args, wrt=(0, 1))


def rebound_in_a_branch(x, flag):
    y = 2.0
    if flag > 0:
        y = x * x          # an array in one branch, a float in the other
    z = y * x
    return np.sum(z) + np.sum(y)


def rebound_in_a_loop(x, n):
    y = 1.5
    total = 0.0
    for i in range(n):
        total = total + np.sum(y * x)
        y = x * 2.0 + total   # a float at the first step, an array at the next
    return total


def rebound_before_a_break(x, n):
    y = 0.5
    for i in range(n):
        y = x * 3.0
        if i == 1:
            break
        y = 2.0        # a float after the steps that do not break, the array after the one that does
    return np.sum(y * x)


def rebound_in_nested_branches(x, a, b):
    y = 1.0
    if a > 0:
        if b > 0:
            y = x * x
        else:
            y = 3.0
    else:
        y = y + 1.0
    return np.sum(y * x)


def rebound_by_a_tuple(x):
    y = 0.25
    y, z = x * 2.0, 1.0   # a tuple target: the array, whatever y held before
    return np.sum(y * z + y)


def rebound_in_a_while(x, n):
    y = 1.0
    i = 0
    while i < n:
        y = y * x if i else x + 1.0
        i += 1
    return np.sum(y)


READS = [(rebound_in_a_branch, (RS.randn(4), 1.0)), (rebound_in_a_branch, (RS.randn(4), -1.0)),
         (rebound_in_a_loop, (RS.randn(4), 3)), (rebound_before_a_break, (RS.randn(4), 1)),
         (rebound_before_a_break, (RS.randn(4), 3)), (rebound_in_nested_branches, (RS.randn(4), 1.0, 1.0)),
         (rebound_in_nested_branches, (RS.randn(4), 1.0, -1.0)), (rebound_in_nested_branches, (RS.randn(4), -1.0, 1.0)), (rebound_by_a_tuple, (RS.randn(4),)),
         (rebound_in_a_while, (RS.randn(4), 3))]


@pytest.mark.parametrize("f, args", READS, ids=lambda v: getattr(v, "__name__", ""))
def test_reads_see_what_reaches_them(f, args):
    compare(f, args, 0)
    check(f, *args, wrt=0)
    assert np.array_equal(adsrc.value_and_grad(f)(*args)[0], f(*args))


# ---- the analysis itself: the kinds each read is given ------------------------------------------
def _reads(source: str, **params):
    """The kinds kinds.py gives the argument of each ``np.negative(...)`` in ``source``, in order."""
    import gast
    from adsrc.optimize.kinds import Inference
    from adsrc.rules.templates import kind_of
    tree = gast.parse(source).body[0]
    kinds = {name: frozenset({kind_of(value)}) for name, value in params.items()}
    inference = Inference(tree, kinds, {"np": np}, {}, {"zero": "zero"}, "tape")
    probes = [n.args[0] for n in gast.walk(tree) if isinstance(n, gast.Call)
              and isinstance(n.func, gast.Attribute) and n.func.attr == "negative"]
    probes.sort(key=lambda n: (n.lineno, n.col_offset))
    return [None if k is None else sorted(repr(kind) for kind in k)
            for k in (inference.expr(p) for p in probes)]


def test_a_read_after_an_assignment_sees_that_assignment():
    assert _reads('''
def f(x):
    y = 0.5
    p = np.negative(y)
    y = x * 2.0
    p = np.negative(y)
    return y
''', x=np.ones(3)) == [["0.5"], ["float64[3]"]]  # a constant where it reaches


def test_a_loop_head_sees_what_the_previous_step_left():
    assert _reads('''
def f(x):
    y = 0.5
    for i in range(3):
        p = np.negative(y)
        y = x * 2.0
        p = np.negative(y)
    p = np.negative(y)
    return y
''', x=np.ones(3)) == [["float", "float64[3]"], ["float64[3]"], ["float", "float64[3]"]]


def test_after_a_branch_a_read_sees_both_branches():
    assert _reads('''
def f(x, c):
    y = 0.5
    if c:
        y = x * 2.0
    p = np.negative(y)
    if c:
        y = x * 3.0
    else:
        y = x + 1.0
    p = np.negative(y)
    return y
''', x=np.ones(3), c=1.0) == [["0.5", "float64[3]"], ["float64[3]"]]


def test_a_pop_a_tuple_target_and_a_while_loop_forget():
    assert _reads('''
def f(x):
    tape = []
    y = 0.5
    tape.append(y)
    y = x * 2.0
    y = tape.pop()
    p = np.negative(y)
    z = 1.0
    z, w = x * 2.0, 1.0
    p = np.negative(z)
    v = 1.0
    while v < 3.0:
        p = np.negative(v)
        v = v + 1.0
    return y
''', x=np.ones(3)) == [["float", "float64[3]"], None, ["float"]]


def test_a_nested_function_sees_the_unions():
    assert _reads('''
def f(x):
    y = 0.5
    y = x * 2.0
    def pullback(g):
        p = np.negative(y)
        return g
    return y, pullback
''', x=np.ones(3)) == [["float", "float64[3]"]]


def test_a_list_that_may_change_is_not_given_a_kind():
    assert _reads('''
def f(x):
    t = ([0.5], x)
    t[0].append(1.0)
    p = np.negative(np.concatenate(t))
    s = ([0.5], x)
    q = np.negative(np.concatenate(s))
    return p
''', x=np.ones(3)) == [None, ["float64[4]"]]


def test_a_shape_a_size_and_what_constants_give_are_constants():
    assert _reads('''
def f(x):
    n = x.shape[0]
    m = x.size
    k = n * 2 - m
    a = np.zeros(n)
    b = np.zeros((m, k))
    p = np.negative(a)
    q = np.negative(b)
    return a
''', x=np.ones(4)) == [["float64[4]"], ["float64[4, 4]"]]


def ewma_by_size(x, a):
    s = np.zeros(x.size)
    s[0] = x[0]
    for t in range(1, x.shape[0]):
        s[t] = a * x[t] + (1 - a) * s[t - 1]
    return np.sum(s * s)


def test_a_loop_bounded_by_a_shape_is_specialized_as_by_len():
    args = (RS.randn(8), 0.3)
    source = specialized_source(ewma_by_size, args, wrt=(0, 1))
    assert "written_part" not in source and "added_into" not in source, source
    compare(ewma_by_size, args, (0, 1), exact_lazy=False)
    check(ewma_by_size, *args, wrt=(0, 1))


def squares_by_a_float_exponent(x):
    s = 0.0
    for t in range(len(x)):
        s = s + x[t] ** 2.0 * 0.0  # a zero cotangent at an infinite element: 0, not NaN (a float exponent's guard)
    return s + np.sum(x)


def test_a_float_exponent_of_two_keeps_the_zero_guard():
    x = np.array([1.0, np.inf, -2.0])
    source = specialized_source(squares_by_a_float_exponent, (x,))
    assert "(2.0 * x_t)" not in source
    compare(squares_by_a_float_exponent, (x,), 0)
    assert np.array_equal(adsrc.grad(squares_by_a_float_exponent)(x), np.ones(3))
