"""What comes back: every gradient fresh, only real scalars differentiated, only plain arrays taken.

1. Each returned gradient (or tangent) is a new array that shares memory with
   nothing else returned and with no input, even when two of them received the
   same contribution, so that updating one in place leaves the others alone.
2. grad and value_and_grad refuse a result that is not a real number (a str,
   a bool, a complex, None, ...) with NonScalarOutput, instead of returning
   zeros or the gradient of the real part.
3. ndarray subclasses (np.matrix, masked arrays) are refused with
   InvalidArgument naming the parameter, instead of a silently wrong gradient.
"""
import fractions

import numpy as np
import pytest

import adsrc
from adsrc import errors
from gradcheck import numerical_grad

pytestmark = pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")

MODES = [False, True]
X = np.array([1.0, -2.0, 0.5])
Y = np.array([0.3, 0.7, -1.1])


def array_leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in array_leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in array_leaves(v)]
    return [tree] if isinstance(tree, np.ndarray) else []


def assert_fresh(returned, *inputs):
    """No returned array shares memory with another returned array or with any input."""
    out = array_leaves(returned)
    ins = array_leaves(inputs)
    for k, a in enumerate(out):
        assert a.flags.writeable
        for b in out[k + 1:]:
            assert not np.shares_memory(a, b), "two returned arrays share memory"
        for b in ins:
            assert not np.shares_memory(a, b), "a returned array shares memory with an input"


def line_of(func):
    return f"{func.__code__.co_filename}:{func.__code__.co_firstlineno}"


# ---- 1. every returned gradient is fresh -------------------------------------------------------
def square_of_sum(x, y):
    return np.sum((x + y) ** 2)


def square_of_list_sum(xs):
    return np.sum((xs[0] + xs[1]) ** 2)


def square_of_dict_sum(d):
    return np.sum((d["a"] + d["b"][0]) ** 2)


def sum_of_squares(x):
    return np.sum(x * x)


def identity(x, y):
    return x + y


def twice_the_same(x):
    y = 2.0 * x
    return y, y


@pytest.mark.parametrize("eager", MODES)
def test_positional_gradients_with_the_same_contribution_are_distinct(eager):
    gx, gy = adsrc.grad(square_of_sum, (0, 1), eager=eager)(X, Y)
    assert_fresh((gx, gy), X, Y)
    np.testing.assert_allclose(gx, numerical_grad(square_of_sum, (X, Y), 0), rtol=1e-6)
    np.testing.assert_allclose(gy, numerical_grad(square_of_sum, (X, Y), 1), rtol=1e-6)
    expected = gy.copy()
    gx *= 0.5
    np.testing.assert_array_equal(gy, expected)


@pytest.mark.parametrize("eager", MODES)
def test_value_and_grad_gradients_are_distinct(eager):
    value, (gx, gy) = adsrc.value_and_grad(square_of_sum, ("x", "y"), eager=eager)(X, Y)
    assert value == square_of_sum(X, Y)
    assert_fresh((gx, gy), X, Y)


@pytest.mark.parametrize("eager", MODES)
@pytest.mark.parametrize("kind", [list, tuple])
def test_sequence_elements_get_distinct_gradients(eager, kind):
    xs = kind([X, Y])
    grads = adsrc.grad(square_of_list_sum, eager=eager)(xs)
    assert type(grads) is kind and len(grads) == 2
    assert_fresh(grads, X, Y)
    np.testing.assert_allclose(grads[0], 2 * (X + Y))
    np.testing.assert_allclose(grads[1], 2 * (X + Y))


@pytest.mark.parametrize("eager", MODES)
def test_dict_elements_get_distinct_gradients(eager):
    d = {"a": X, "b": [Y]}
    grads = adsrc.grad(square_of_dict_sum, eager=eager)(d)
    assert_fresh(grads, X, Y)
    grads["a"][0] = 100.0
    np.testing.assert_allclose(grads["b"][0], 2 * (X + Y))


@pytest.mark.parametrize("eager", MODES)
def test_repeated_wrt_gets_distinct_gradients(eager):
    a, b = adsrc.grad(sum_of_squares, (0, 0), eager=eager)(X)
    assert_fresh((a, b), X)
    np.testing.assert_allclose(a, 2 * X)
    np.testing.assert_allclose(b, 2 * X)
    a, b = adsrc.grad(square_of_sum, (1, "y"), eager=eager)(X, Y)
    assert_fresh((a, b), X, Y)


@pytest.mark.parametrize("eager", MODES)
def test_vjp_gradients_are_distinct_from_each_other_and_the_cotangent(eager):
    value, pullback = adsrc.vjp(identity, X, Y, wrt=(0, 1), eager=eager)
    cotangent = np.array([1.0, 2.0, 3.0])
    gx, gy = pullback(cotangent)
    assert_fresh((gx, gy), X, Y, cotangent, value)
    np.testing.assert_array_equal(gx, cotangent)
    np.testing.assert_array_equal(gy, cotangent)
    value, pullback = adsrc.vjp(square_of_sum, X, Y, wrt=(0, 1), eager=eager)
    first = pullback(1.0)
    second = pullback(1.0)
    assert_fresh(first + second, X, Y)


def test_jvp_tangent_leaves_are_distinct():
    tangent_in = np.array([1.0, 0.0, 2.0])
    value, tangent = adsrc.jvp(twice_the_same, (X,), (tangent_in,))
    assert_fresh(tangent, X, tangent_in, value)
    np.testing.assert_allclose(tangent[0], 2 * tangent_in)
    np.testing.assert_allclose(tangent[1], 2 * tangent_in)


def test_jvp_of_a_gradient_returns_distinct_arrays():
    tx, ty = np.array([1.0, 0.0, 0.0]), np.array([0.0, 1.0, 0.0])
    gradient = adsrc.value_and_grad(square_of_sum, (0, 1))
    (value, g), (dvalue, dg) = adsrc.jvp(gradient, (X, Y), (tx, ty))
    assert_fresh(g + dg, X, Y, tx, ty)
    np.testing.assert_allclose(dg[0], 2 * (tx + ty))
    np.testing.assert_allclose(dg[1], 2 * (tx + ty))


def test_a_unique_owned_gradient_is_not_copied():
    # the fast path: the adjoint's own result comes back as it is
    from adsrc.api.arguments import Fresh

    gradient = np.ones(3)
    fresh = Fresh((X,))
    assert fresh.finish(gradient, X) is gradient
    again = fresh.finish(gradient, X)
    assert again is not gradient and not np.shares_memory(again, gradient)
    view_of_input = X[:]
    assert not np.shares_memory(Fresh((X,)).finish(view_of_input, X), X)


# ---- 2. only real scalar results are differentiated ----------------------------------------------
def returns_str(x):
    return "loss"


def returns_allclose(x):
    return np.allclose(x, 1.0)


def returns_python_bool(x):
    return bool(np.sum(x) > 0)


def returns_complex(x):
    return np.sum(x) * (1 + 2j)


def returns_complex_array(x):
    return np.asarray(np.sum(x) + 0j)


def returns_python_complex(x):
    return float(np.sum(x)) + 1j


def returns_none(x):
    np.sum(x)
    return None


def returns_fraction(x):
    return fractions.Fraction(1, 3)


@pytest.mark.parametrize("eager", MODES)
@pytest.mark.parametrize("func, what", [
    (returns_str, "str"), (returns_allclose, "bool"), (returns_python_bool, "bool"),
    (returns_complex, "complex"), (returns_complex_array, "complex"), (returns_python_complex, "complex"),
    (returns_none, "None"), (returns_fraction, "Fraction"),
])
def test_non_real_results_are_refused(func, what, eager):
    for make in (adsrc.grad, adsrc.value_and_grad):
        with pytest.raises(errors.NonScalarOutput) as info:
            make(func, eager=eager)(X)
        message = str(info.value)
        assert f"returned {'a ' if what != 'None' else ''}" in message and what in message, message
        assert func.__name__ in message and line_of(func) in message, message


@pytest.mark.parametrize("func", [returns_str, returns_allclose, returns_complex])
def test_non_real_results_are_refused_at_second_order(func):
    with pytest.raises(errors.NonScalarOutput) as info:
        adsrc.hessian(func)(X)
    assert line_of(func) in str(info.value)
    with pytest.raises(errors.NonScalarOutput):
        adsrc.jvp(adsrc.grad(func), (X,), (X,))


def zero_dim_result(x):
    return np.asarray(np.sum(x * x))


def float32_result(x):
    return np.sum(x * x)


@pytest.mark.parametrize("eager", MODES)
def test_real_scalar_results_still_work(eager):
    np.testing.assert_allclose(adsrc.grad(zero_dim_result, eager=eager)(X), 2 * X)
    x32 = X.astype(np.float32)
    g = adsrc.grad(float32_result, eager=eager)(x32)
    assert g.dtype == np.float32
    np.testing.assert_allclose(g, 2 * x32)


# ---- 3. ndarray subclasses are refused ---------------------------------------------------------
def matrix_product_sum(x, M):
    return np.sum(x * M)


def sum_of_list(xs):
    return np.sum(xs[0] * xs[1])


@pytest.mark.parametrize("eager", MODES)
def test_matrix_argument_is_refused(eager):
    M = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(errors.InvalidArgument) as info:
        adsrc.grad(sum_of_squares, eager=eager)(M)
    message = str(info.value)
    assert "'x'" in message and "np.asarray(x)" in message and "matrix" in message, message
    # not differentiated, but it still changes what * means: the gradient would be wrong
    with pytest.raises(errors.InvalidArgument, match=r"'M'.*np\.asarray\(M\)"):
        adsrc.grad(matrix_product_sum, eager=eager)(np.ones((2, 2)), M)


@pytest.mark.parametrize("eager", MODES)
def test_masked_array_argument_is_refused(eager):
    masked = np.ma.MaskedArray([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(errors.InvalidArgument) as info:
        adsrc.grad(sum_of_squares, eager=eager)(masked)
    assert "'x'" in str(info.value) and "np.asarray(x)" in str(info.value)
    with pytest.raises(errors.InvalidArgument, match="'xs'"):
        adsrc.grad(sum_of_list, eager=eager)([np.ones(3), masked])
    with pytest.raises(errors.InvalidArgument, match="'x'"):
        adsrc.value_and_grad(sum_of_squares, eager=eager)(masked)


def test_subclasses_are_refused_by_vjp_and_jvp():
    M = np.matrix([[1.0, 2.0], [3.0, 4.0]])
    with pytest.raises(errors.InvalidArgument, match="'x'"):
        adsrc.vjp(sum_of_squares, M)
    with pytest.raises(errors.InvalidArgument, match="'M'"):
        adsrc.jvp(matrix_product_sum, (np.ones((2, 2)), M), (np.ones((2, 2)), None))
    with pytest.raises(errors.InvalidArgument, match="tangent"):
        adsrc.jvp(matrix_product_sum, (np.ones((2, 2)), np.ones((2, 2))), (M, None))
    _, pullback = adsrc.vjp(identity, np.ones((2, 2)), np.ones((2, 2)))
    with pytest.raises(errors.InvalidArgument, match="cotangent"):
        pullback(M)


@pytest.mark.parametrize("eager", MODES)
def test_plain_arguments_stay_accepted(eager):
    assert adsrc.grad(sum_of_squares, eager=eager)(1.5) == 3.0
    g = adsrc.grad(sum_of_squares, eager=eager)(np.float64(1.5))
    assert type(g) is np.float64 and g == 3.0
    np.testing.assert_allclose(adsrc.grad(sum_of_squares, eager=eager)(X), 2 * X)
    grads = adsrc.grad(sum_of_list, eager=eager)((X, [Y][0]))
    np.testing.assert_allclose(grads[0], Y)
    np.testing.assert_allclose(adsrc.grad(matrix_product_sum, eager=eager)(X, 2), 2 * np.ones(3))
    d = adsrc.grad(square_of_dict_sum, eager=eager)({"a": 1.0, "b": (np.float32(2.0),)})
    assert d["a"] == 6.0 and type(d["b"]) is tuple and d["b"][0] == 6.0


def pair_product(xs, config):
    return np.sum(xs[0] * xs[1])


@pytest.mark.parametrize("eager", MODES)
def test_nested_subclass_is_named_by_its_path(eager):
    masked = np.ma.MaskedArray([1.0, 2.0, 3.0], mask=[0, 1, 0])
    with pytest.raises(errors.InvalidArgument) as info:
        adsrc.grad(pair_product, eager=eager)([X, Y], {"a": [1, {"b": masked}]})
    message = str(info.value)
    assert "'config'" in message and "np.asarray(config['a'][1]['b'])" in message, message
    assert "filled" in message and line_of(pair_product) in message


@pytest.mark.parametrize("eager", MODES)
def test_a_container_that_holds_itself_is_fine_where_it_is_not_differentiated(eager):
    loop = []
    loop.append(loop)
    grads = adsrc.grad(pair_product, eager=eager)([X, Y], loop)
    np.testing.assert_allclose(grads[0], Y)
    _, pullback = adsrc.vjp(pair_product, [X, Y], loop)
    assert_fresh(pullback(1.0), X, Y)
