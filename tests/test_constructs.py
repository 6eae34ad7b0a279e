"""Every supported construct, checked against finite differences in lazy and eager mode."""

import numpy as np
import pytest

import adsrc
from gradcheck import check

rng = np.random.default_rng(0)
A = rng.normal(size=(3, 4))
B = rng.normal(size=(4, 2))
v3 = rng.normal(size=3)
v4 = rng.normal(size=4)


# -- arithmetic ---------------------------------------------------------------
def arith(x, y):
    return np.sum(x * y + x / (y * y + 1.0) - y ** 2 + (-x) ** 2 * 0.5)


def power_float(x):
    return x ** 3 + 2.0 * x ** 0.5


def matmul_chain(W, V):
    return np.sum(np.tanh(W @ V) @ np.ones(2))


def unary_core(x):
    return np.sum(np.exp(x) + np.log(x * x + 1) + np.sin(x) * np.cos(x) + np.sqrt(x * x + 2.0))


def mean_transpose(x):
    return np.mean(x.T @ x) + np.mean(np.transpose(x), axis=0)[1]


def norm_reshape(x):
    return np.linalg.norm(np.reshape(x, (2, 6))) + np.sum(x.reshape(4, 3)[1:3, ::2])


def broadcast(x, b):
    return np.sum(np.tanh(x + b) * b)


def scalars(x, y):
    z = x * y + x / y - y
    return z * z


def slicing(x):
    return np.sum(x[1:, ::2] * x[0, 0]) + x[-1, 2] + np.sum(x[:, 1])


@pytest.mark.parametrize("f,args,wrt", [
    (arith, (v3, v3 + 2.0), (0, 1)),
    (power_float, (1.7,), 0),
    (matmul_chain, (A, B), (0, 1)),
    (unary_core, (v4,), 0),
    (mean_transpose, (A,), 0),
    (norm_reshape, (rng.normal(size=12),), 0),
    (broadcast, (A, v4), (0, 1)),
    (scalars, (1.3, 2.1), (0, 1)),
    (slicing, (A,), 0),
], ids=lambda p: getattr(p, "__name__", None))
def test_operations(f, args, wrt):
    check(f, *args, wrt=wrt)


# -- control flow ---------------------------------------------------------------
def branches(x, t):
    if t > 0:
        y = x * 2.0
    elif t < -1:
        y = np.sin(x)
    else:
        y = x * x
    return np.sum(y)


def conditional_expression(x):
    y = x * 3.0 if np.sum(x) > 0 else x * x
    return np.sum(y)


def for_range(x, n):
    y = x
    for i in range(n):
        y = np.tanh(y) * 1.5 + x * i
    return np.sum(y)


def for_array(W, xs):
    total = 0.0
    for xi in xs:
        total = total + np.sum(np.tanh(W @ xi))
    return total


def for_over_active(x):
    total = 0.0
    for row in x:
        total = total + np.sum(row * row) * row[0]
    return total


def while_loop(x):
    y = x
    k = 0
    while k < 4:
        y = y * 0.5 + np.sin(y)
        k += 1
    return np.sum(y)


def break_continue(x):
    total = 0.0
    for i in range(10):
        if i % 3 == 1:
            continue
        total = total + np.sum(x * i)
        if i > 6:
            break
        total = total * 0.9
    return total


def early_return(x):
    s = np.sum(x)
    if s > 100:
        return s * 2.0
    y = x * x
    if s < -100:
        return np.sum(y)
    return np.sum(y * x)


def return_in_loop(x):
    y = x
    for i in range(10):
        y = y * 1.1
        if np.sum(y) > 3.0:
            return np.sum(y * y)
    return np.sum(y)


def nested_loops(W, x):
    h = x
    for i in range(3):
        for j in range(2):
            h = np.tanh(W @ h) + h * j
    return np.sum(h)


def aug_and_unpack(x, y):
    a, b = x * 2.0, y + 1.0
    a, b = b, a
    a += b * 3.0
    a *= y
    return np.sum(a - b)


def enumerate_zip(W, xs, ys):
    total = 0.0
    for i, xi in enumerate(xs):
        total = total + np.sum(W @ xi) * i
    for xi, yi in zip(xs, ys):
        total = total + np.sum((W @ xi - yi) ** 2)
    return total


def comprehension_sum(W, x):
    return sum((W @ xi)[0] for xi in x)


def comprehension_with_if(W, x):
    return sum(np.sum(W @ xi) for xi in x if xi[0] > 0) + sum([np.sum(xi * W[0]) for xi in x])


def helper(a, b):
    return np.tanh(a) * b + a


def calls_helper(x, y):
    z = helper(x, y)
    return np.sum(helper(z, 2.0) * y)


def scale(a, factor=3.0):
    return a * factor


def calls_with_defaults(x):
    return np.sum(scale(x)) + np.sum(scale(x, factor=0.5)) + np.sum(scale(a=x))


def power_rec(x, n):
    if n == 0:
        return 1.0
    return x * power_rec(x, n - 1)


def calls_recursive(x):
    return power_rec(x, 4) + power_rec(x * 2.0, 2)


def helper_in_loop(x):
    y = x
    for i in range(5):
        y = helper(y, 0.5)
    return np.sum(y)


@pytest.mark.parametrize("f,args,wrt", [
    (branches, (v3, 1.0), 0),
    (branches, (v3, -2.0), 0),
    (branches, (v3, -0.5), 0),
    (conditional_expression, (v3,), 0),
    (conditional_expression, (-np.abs(v3),), 0),
    (for_range, (v3, 4), 0),
    (for_array, (A, [v4, v4 * 2, -v4]), 0),
    (for_array, (A, rng.normal(size=(5, 4))), (0, 1)),
    (for_over_active, (A,), 0),
    (while_loop, (v3,), 0),
    (break_continue, (v3,), 0),
    (early_return, (v3,), 0),
    (early_return, (v3 - 200,), 0),
    (return_in_loop, (np.abs(v3),), 0),
    (return_in_loop, (np.abs(v3) * 0.01,), 0),
    (nested_loops, (rng.normal(size=(3, 3)), v3), (0, 1)),
    (aug_and_unpack, (v3, v3 * 2), (0, 1)),
    (enumerate_zip, (A, rng.normal(size=(4, 4)), rng.normal(size=(4, 3))), (0, 1, 2)),
    (comprehension_sum, (A, [v4, v4 * 2]), 0),
    (comprehension_with_if, (A, rng.normal(size=(6, 4))), (0, 1)),
    (calls_helper, (v3, v3 + 1), (0, 1)),
    (calls_with_defaults, (v3,), 0),
    (calls_recursive, (1.3,), 0),
    (helper_in_loop, (v3,), 0),
], ids=lambda p: getattr(p, "__name__", None))
def test_control_flow(f, args, wrt):
    check(f, *args, wrt=wrt)


def test_wrt_by_name_and_tuple():
    g1 = adsrc.grad(matmul_chain, wrt="V")(A, B)
    g2 = adsrc.grad(matmul_chain, wrt=(1,))(A, B)
    assert isinstance(g2, tuple) and np.allclose(g1, g2[0])


def test_gradient_types_follow_arguments():
    assert type(adsrc.grad(power_float)(1.5)) is float
    x32 = np.ones(3, dtype=np.float32)
    g = adsrc.grad(unary_core)(x32)
    assert g.dtype == np.float32 and g.shape == (3,)


def test_constant_and_integer_arguments_are_not_differentiated():
    g = adsrc.grad(for_range)(v3, 3)
    assert g.shape == v3.shape


ALL_CASES = [
    (arith, (v3, v3 + 2.0), (0, 1)), (matmul_chain, (A, B), (0, 1)), (branches, (v3, -2.0), (0,)),
    (break_continue, (v3,), (0,)), (early_return, (v3,), (0,)), (return_in_loop, (np.abs(v3),), (0,)),
    (nested_loops, (rng.normal(size=(3, 3)), v3), (0, 1)), (enumerate_zip, (A, rng.normal(size=(4, 4)),
     rng.normal(size=(4, 3))), (0, 1, 2)), (calls_recursive, (1.3,), (0,)), (helper_in_loop, (v3,), (0,)),
    (comprehension_with_if, (A, rng.normal(size=(6, 4))), (0, 1)), (aug_and_unpack, (v3, v3 * 2), (0, 1)),
]


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f,args,wrt", ALL_CASES, ids=lambda p: getattr(p, "__name__", None))
def test_raw_and_optimized_adjoints_agree(f, args, wrt, eager):
    from adsrc.backend.pipeline import Mode, compile

    results = []
    for optimize in (False, True):
        value, pullback = compile(f, wrt, Mode("reverse", eager, optimize)).function(*args)
        results.append([adsrc.unthunk(g) for g in pullback(1.0)])
    for raw, optimized in zip(*results):
        np.testing.assert_allclose(raw, optimized, rtol=1e-12, atol=1e-14)
    assert "not optimized" in adsrc.adjoint_source(f, wrt, eager=eager, optimize=False)


def unpack_call(x):
    a, b = np.split(x, 2)
    return np.sum(a * b)


def loop_over_expression(x):
    total = 0.0
    for row in x * 2.0:
        total = total + np.sum(row * row)
    return total


def chained_methods(x):
    return np.var(x).sum() + np.concatenate([x, x * 2.0]).sum() + (x @ x.T).trace()


def comprehension_anywhere(W, xs):
    hs = [np.tanh(W @ x) for x in xs if x[0] > -10]
    return np.sum(np.stack(hs)) + sum(np.sum(h * h) for h in hs) + np.sum(hs[0])


def list_append(x):
    out = []
    for i in range(3):
        out.append(x * i)
    out.append(np.sin(x))
    return np.sum(np.array(out)) + np.sum(out[1] * out[3])


@pytest.mark.parametrize("f,args,wrt", [
    (unpack_call, (np.arange(1.0, 5.0),), 0),
    (loop_over_expression, (A,), 0),
    (chained_methods, (A,), 0),
    (comprehension_anywhere, (rng.normal(size=(3, 3)), [v3, v3 * 2]), (0, 1)),
    (list_append, (v3,), 0),
], ids=lambda p: getattr(p, "__name__", None))
def test_values_read_several_times(f, args, wrt):
    check(f, *args, wrt=wrt)
