"""Minimal programs for bugs found by the fuzz, property and safety tests.

Each test names the bug it pins. Every bug pinned here is fixed, so every test
must pass: none is marked xfail. (A bug found but not fixed yet would get a
test marked ``xfail(strict=True)``, failing until the fix lands, when it loses
its mark.)
"""
import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import check

x2 = np.array([0.3, 0.8])
x3 = np.array([0.3, -0.8, 1.1])


# -- adjoints of overwritten variables (reverse_control_flow.py, kill) -----------
def nested_sums(x):
    return sum(sum(x[j] * j for j in range(2)) * w for w in x)


def nested_sums_same_variable(x):
    return sum(x[j] * sum(x[j] for j in range(2)) for j in range(2))


def constant_overwrite_in_loop(x):
    out = 0.0
    for i in range(3):
        acc = x * 2.0
        acc = 0.0
        out = out + np.sum(acc * x)
    return out


def tuple_overwrite(x):
    a = x * 3.0
    b = x * 1.0
    out = np.sum(a * b)
    a, b = 1.0, 2.0
    return out + np.sum(a * x)


def loop_target_from_constants(x):
    w = x * 1.0
    total = 0.0
    for w in [1.0, 2.0]:
        total = total + np.sum(w * x)
    return total + np.sum(w * x)


@pytest.mark.parametrize("f", [nested_sums, nested_sums_same_variable, constant_overwrite_in_loop,
                               tuple_overwrite, loop_target_from_constants], ids=lambda f: f.__name__)
def test_overwritten_variable_gets_no_stale_adjoint(f):
    # The inner total of a nested sum restarts at 0 for each outer item; the
    # backward sweep used to carry its adjoint over from one item to the next.
    check(f, x2)


def self_assignment(x):
    v = x * 1.0
    v = v
    for i in range(2):
        v = v
    return np.sum(v * v)


def test_self_assignment_keeps_the_gradient():
    # ``v = v`` became a copy whose backward added dv to dv, then reset dv: zero gradient.
    check(self_assignment, x3)


# -- loops over a name the body rebinds (desugar.py, anf.py) -----------------------
def rebinds_its_sequence(W):
    total = 0.0
    for row in W:
        W = W * 2.0
        total = total + np.sum(row)
    return total + np.sum(W)


def rebinds_its_enumerated_sequence(W):
    total = 0.0
    for i, row in enumerate(W):
        W = W * 2.0
        total = total + np.sum(row) * (i + 1)
    return total


def rebinds_a_zipped_sequence(W, x):
    total = 0.0
    for row, xi in zip(W, x):
        W = W * 0.5
        x = x * 3.0
        total = total + np.sum(row) * xi
    return total


def test_loop_runs_over_the_object_its_name_held_first():
    # The index loop read W[i] from the rebound W: a different value, not just a gradient.
    W = np.array([[0.5, -1.0], [2.0, 0.25]])
    check(rebinds_its_sequence, W)
    check(rebinds_its_enumerated_sequence, W)
    check(rebinds_a_zipped_sequence, W, np.array([1.5, -0.5]), wrt=(0, 1))


# -- the generated module (compiler.py) ---------------------------------------------
def returns_its_argument(a, b):
    t = a * b
    return a


def calls_returns_its_argument(x):
    return np.sum(returns_its_argument(x, 2.0) * x)


def test_adjoint_that_needs_no_runtime_helper_compiles():
    # The header became ``from adsrc.runtime import`` with nothing after it (SyntaxError).
    check(calls_returns_its_argument, x3)


# -- evaluation order (desugar.py) --------------------------------------------------
def comprehension_in_untaken_branch(x, n):
    return np.sum(x) if n > 0 else sum(x[j] for j in range(10))


def comprehension_after_or(x, n):
    ok = n > 0 or sum(x[j] for j in range(10)) > 0
    return np.sum(x) * ok


def and_or_values(x, n):
    b = n > 1 and np.sum(x * 2.0) or np.sum(x * x)
    return b + (np.sum(x) if n > 5 else sum(w for w in x))


def test_comprehension_runs_only_in_its_branch():
    # A comprehension in a conditional expression was hoisted before the
    # statement and evaluated even when its branch was not taken.
    check(comprehension_in_untaken_branch, x3, 1)
    check(comprehension_after_or, x3, 1)
    check(comprehension_in_untaken_branch, np.linspace(0.1, 1.0, 12), 0)


@pytest.mark.parametrize("n", [0, 2, 6])
def test_and_or_carry_gradients(n):
    # ``a and b`` / ``a or b`` returning a number got no gradient at all.
    check(and_or_values, x3, n)


# -- parameters and the fence (parse.py, fence.py, compiler.py) --------------------
def positional_only(x, /, k):
    return np.sum(x * k)


def keyword_only(x, *, k=2.0):
    return np.sum(x * k)


def test_positional_and_keyword_only_parameters():
    # Used to raise IndexError (positional-only) or TypeError (keyword-only)
    # from inside the compiler.
    check(positional_only, x3, 2.0, wrt=(0, 1))
    np.testing.assert_allclose(adsrc.grad(keyword_only)(x3, k=3.0), np.full(3, 3.0))


def fill_in_place(x):
    y = x * 2.0
    y.fill(0.0)
    return np.sum(y)


def inplace_out(x):
    y = x * 1.0
    np.multiply(y, 2.0, out=y)
    return np.sum(y)


def eval_expression(x):
    return np.sum(eval("x * 2.0"))


@pytest.mark.parametrize("f", [fill_in_place, inplace_out, eval_expression], ids=lambda f: f.__name__)
def test_hidden_mutation_is_refused_not_silently_wrong(f):
    # These ran and returned a wrong gradient (ones, ones, zeros).
    with pytest.raises(errors.UnsupportedSyntax):
        adsrc.grad(f)(x3)


async def asynchronous(x):
    return x


def test_async_function_is_unsupported_syntax():
    # Was SourceUnavailable ("definition not found").
    with pytest.raises(errors.UnsupportedSyntax, match="async"):
        adsrc.grad(asynchronous)(1.0)


# -- formerly known bugs, fixed (their xfail marks are gone) ------------------------
def comment_only_block(x, n):
    if n > 1:
        y = x * 2.0
        if n > 2:
            return np.sum(x)
    return np.sum(y) if n > 3 else np.sum(x)


def test_eager_optimizer_leaves_no_comment_only_block():
    check(comment_only_block, x3, 3)


def alias_then_augment(x):
    v = x
    x += 1.0
    return np.sum(v * v)


def augment_a_view(W):
    row = W[0]
    row *= 2.0
    return np.sum(W * W)


@pytest.mark.parametrize("f,arg", [(alias_then_augment, x3), (augment_a_view, np.ones((2, 2)))],
                         ids=["alias", "view"])
def test_augmented_assignment_through_an_alias_is_refused(f, arg):
    # In place, x op= e would change the other name too; adsrc runs it as x = x op e,
    # so it refuses rather than give another value than Python does.
    for eager in (False, True):
        with pytest.raises(adsrc.errors.UnsupportedSyntax, match="another name may share"):
            adsrc.value_and_grad(f, eager=eager)(arg.copy())


def alias_of_a_float(x, s):
    prev = s
    s += np.sum(x * x)
    return s * prev


def test_augmented_assignment_through_an_alias_of_a_number_is_fine():
    check(alias_of_a_float, x3, 0.7, wrt=(0, 1))


def det_of_singular(W):
    return np.linalg.det(np.outer(W[0], W[1]))


def test_det_gradient_at_a_singular_matrix():
    W = np.array([[1.0, 2.0], [3.0, 4.0]])
    check(det_of_singular, W)


def lambda_called_in_a_written_index(x, W, s):
    # Found by the random programs (seed 20251, batch 26): the call in the target's index was left
    # as written after the lambda's definition went, a NameError in the generated code.
    y = np.array(x)
    a = np.sum(y * y)
    g = lambda t, c=a: c
    a = s + g(np.log(x ** 2 + 1.0))
    y[y > g(y)] = np.sum(W @ x)
    return a + np.sum(y * y)


def lambda_called_in_an_augmented_index(x):
    y = x * 1.0
    g = lambda k: k + 1
    y[g(0)] += x[0] * x[2]
    return np.sum(y * y)


@pytest.mark.parametrize("x", [np.array([-0.1, 0.19, -0.95]), np.array([0.3, 0.4, 0.45])], ids=["some", "none"])
def test_a_local_function_called_in_an_assignment_target_is_inlined(x):
    W = np.array([[0.42, -0.1, 0.47], [-0.24, -0.6, -0.23], [0.98, 0.76, -0.04]])
    check(lambda_called_in_a_written_index, x, W, 0.13, wrt=(0, 1, 2))
    check(lambda_called_in_an_augmented_index, x)
