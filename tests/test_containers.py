"""Tuples, lists and dicts: as arguments, built inside the function, and as results."""
import numpy as np
import pytest

import adsrc
from gradcheck import check, numerical_grad

rng = np.random.default_rng(3)


def mlp(params, x, y):
    h1 = np.tanh(x @ params["W1"] + params["b1"])
    h2 = np.tanh(h1 @ params["W2"].T + params["b2"])
    cache = {"hidden": h2, "scale": 0.5}
    out = cache["hidden"] @ params["W3"]
    return ((out - y) ** 2).sum() * cache["scale"] / x.shape[0]


def make_params():
    return {
        "W1": rng.normal(size=(4, 5)) * 0.5, "b1": rng.normal(size=5) * 0.1,
        "W2": rng.normal(size=(6, 5)) * 0.5, "b2": rng.normal(size=6) * 0.1,
        "W3": rng.normal(size=(6, 2)) * 0.5,
    }


def flat_check(f, tree, *rest, eager):
    """Finite differences leaf by leaf of a dict/list argument."""
    grads = adsrc.grad(f, eager=eager)(tree, *rest)
    keys = tree.keys() if isinstance(tree, dict) else range(len(tree))
    for key in keys:
        def along(leaf, key=key):
            moved = dict(tree) if isinstance(tree, dict) else list(tree)
            moved[key] = leaf
            return f(type(tree)(moved) if not isinstance(tree, dict) else moved, *rest)
        expected = numerical_grad(along, (tree[key],), 0)
        np.testing.assert_allclose(grads[key], expected, rtol=1e-5, atol=1e-7)
        assert grads[key].shape == np.shape(tree[key])
    return grads


@pytest.mark.parametrize("eager", [False, True])
def test_mlp_with_dict_parameters(eager):
    params = make_params()
    x, y = rng.normal(size=(8, 4)), rng.normal(size=(8, 2))
    grads = flat_check(mlp, params, x, y, eager=eager)
    assert set(grads) == set(params)


def layers(ws, x):
    h = x
    for W in ws:
        h = np.tanh(W @ h)
    first, second = ws[0], ws[1]
    return np.sum(h) + np.sum(first * second)


@pytest.mark.parametrize("eager", [False, True])
def test_list_argument_iterated_and_unpacked(eager):
    ws = [rng.normal(size=(3, 3)) for _ in range(3)]
    grads = flat_check(layers, ws, rng.normal(size=3), eager=eager)
    assert isinstance(grads, list) and len(grads) == 3


def tuple_arg(pair, scale):
    a, b = pair
    return np.sum(a * b) * scale


def test_tuple_argument_gives_tuple_gradient():
    pair = (rng.normal(size=3), rng.normal(size=3))
    g = adsrc.grad(tuple_arg)(pair, 2.0)
    assert isinstance(g, tuple)
    np.testing.assert_allclose(g[0], pair[1] * 2.0)
    np.testing.assert_allclose(g[1], pair[0] * 2.0)


def literals(x, y):
    d = {"a": x * 2.0, "b": y}
    t = (x, y * y)
    items = [d["a"], t[1]]
    return np.sum(items[0] * items[1]) + np.sum(d["b"])


def test_literals_inside_the_function():
    check(literals, rng.normal(size=3), rng.normal(size=3), wrt=(0, 1))


def unused_entry(params, x):
    return np.sum(params["used"] * x)


def test_entries_without_gradient_are_zero():
    params = {"used": np.ones(3), "unused": np.ones(2)}
    g = adsrc.grad(unused_entry)(params, np.arange(3.0))
    np.testing.assert_array_equal(g["unused"], np.zeros(2))
    np.testing.assert_array_equal(g["used"], np.arange(3.0))


def pair_valued(x):
    return (x * 2.0, np.sin(x))


def test_vjp_of_tuple_valued_function():
    x = rng.normal(size=3)
    value, pullback = adsrc.vjp(pair_valued, x)
    ct = (np.ones(3), np.full(3, 2.0))
    np.testing.assert_allclose(pullback(ct), 2.0 + 2.0 * np.cos(x))


def local_functions(W, x):
    scale = 2.0

    def layer(h, bias=0.1):
        z = W @ h + bias
        return np.tanh(z) * scale

    square = lambda v: v * v  # noqa: E731
    h = layer(x)
    h = layer(layer(h), bias=0.0)
    return np.sum(square(h)) + sum(np.sum(layer(r)) for r in [x, h])


def test_local_functions_and_lambdas_are_inlined_with_their_closures():
    W = rng.normal(size=(3, 3)) * 0.5
    check(local_functions, W, rng.normal(size=3), wrt=(0, 1))
    source = adsrc.adjoint_source(local_functions)
    assert "def layer" not in source and "lambda" not in source


def local_function_as_value(x):
    def g(y):
        return y * 2.0
    return np.sum(np.apply_along_axis(g, 0, x))


def test_local_function_passed_to_a_library_function_without_a_rule_is_refused():
    with pytest.raises(adsrc.errors.NoGradientRule, match="np.apply_along_axis"):
        adsrc.grad(local_function_as_value)(np.ones(3))


def fill_rows(W, x):
    out = np.zeros((3, 2))
    for i in range(3):
        out[i] = np.tanh(W @ x) * i
    out[:, 1] += x[0]
    acc = x.copy()
    acc[0] = acc[1] * out[2, 0]
    return np.sum(out ** 2) + np.sum(acc)


def test_subscript_assignment_on_arrays_made_here():
    check(fill_rows, rng.normal(size=(2, 2)), rng.normal(size=2), wrt=(0, 1))


def writes_into_view(x):
    a = np.zeros(4)
    b = a.reshape(2, 2)  # through a sliced view it runs as Python: tests/test_view_writes.py
    b[0, 0] = x[0]
    return np.sum(a)


@pytest.mark.parametrize("f", [writes_into_view])  # into an argument: as Python's (test_writes_fresh.py)
def test_subscript_assignment_elsewhere_is_refused(f):
    with pytest.raises(adsrc.errors.UnsupportedSyntax, match="not an array made in this function"):
        adsrc.grad(f)(np.ones(3))


def total_of(*terms):
    s = 0.0
    for t in terms:
        s = s + np.sum(t * t)
    return s


def calls_star_args(x, y):
    return total_of(x, y * 2.0) + total_of(x)


def test_star_args_in_callees_and_in_the_differentiated_function():
    check(calls_star_args, rng.normal(size=3), rng.normal(size=2), wrt=(0, 1))
    terms = (rng.normal(size=3), rng.normal(size=2))
    np.testing.assert_allclose(adsrc.grad(total_of)(*terms), 2 * terms[0])  # argnums count the call's arguments
    for wrt in ((0, 1), "terms"):  # each, or the *args tuple by its name
        g = adsrc.grad(total_of, wrt=wrt)(*terms)
        assert isinstance(g, tuple) and len(g) == 2
        np.testing.assert_allclose(g[0], 2 * terms[0])
        np.testing.assert_allclose(g[1], 2 * terms[1])
