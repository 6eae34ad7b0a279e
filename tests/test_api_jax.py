"""What JAX and autograd users reach for: argnums, has_aux, check_grads, structured Jacobians and Hessians.

Every derivative here is checked against central finite differences in
float64, in lazy and in eager mode; check_grads is shown to fail on rules
registered wrong on purpose, naming the mode and the argument.
"""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument
from adsrc.rules.registry import defjvp
from gradcheck import numerical_grad

EPS = 1e-6
RNG = np.random.default_rng(5)
MODES = [False, True]  # eager_unthunk off (lazy) and on


# ---- finite differences over structured arguments, independent of adsrc's own flattening ------------
def tree_leaves(tree):
    if isinstance(tree, dict):
        return [leaf for v in tree.values() for leaf in tree_leaves(v)]
    if isinstance(tree, (list, tuple)):
        return [leaf for v in tree for leaf in tree_leaves(v)]
    return [tree]


def tree_replace(tree, leaves):
    """``tree`` with its leaves replaced, in order, by ``leaves`` (consumed from the front)."""
    if isinstance(tree, dict):
        return {k: tree_replace(v, leaves) for k, v in tree.items()}
    if isinstance(tree, (list, tuple)):
        return type(tree)(tree_replace(v, leaves) for v in tree)
    return leaves.pop(0)


def fd_block(f, args, position, leaf_index, out_index):
    """d (leaf ``out_index`` of f's output) / d (leaf ``leaf_index`` of argument ``position``)."""
    base = tree_leaves(args[position])
    x = np.asarray(base[leaf_index], dtype=np.float64)

    def at(moved):
        leaves = list(base)
        leaves[leaf_index] = moved if isinstance(base[leaf_index], np.ndarray) else float(moved)
        new = list(args)
        new[position] = tree_replace(args[position], leaves)
        return np.asarray(tree_leaves(f(*new))[out_index], dtype=np.float64)

    out_shape = at(x).shape
    columns = []
    for j in range(x.size):
        e = np.zeros_like(x)
        e.flat[j] = EPS
        columns.append((at(x + e) - at(x - e)) / (2 * EPS))
    return np.reshape(np.stack(columns, axis=-1), out_shape + x.shape)


# ---- argnums, and wrt as a list ---------------------------------------------------------------------
def pair_loss(w, x):
    return np.sum(np.tanh(w @ x) ** 2)


W0 = RNG.standard_normal((2, 3))
X0 = RNG.standard_normal(3)


def test_argnums_is_wrt_on_every_entry_point():
    by_wrt = adsrc.value_and_grad(pair_loss, wrt=(0, 1))(W0, X0)
    for spelling in ((0, 1), [0, 1], ("w", "x"), ["w", 1]):
        value, (dw, dx) = adsrc.value_and_grad(pair_loss, argnums=spelling)(W0, X0)
        assert value == by_wrt[0]
        np.testing.assert_array_equal(dw, by_wrt[1][0])
        np.testing.assert_array_equal(dx, by_wrt[1][1])
    np.testing.assert_allclose(adsrc.grad(pair_loss, argnums=1)(W0, X0), numerical_grad(pair_loss, (W0, X0), 1),
                               rtol=1e-6, atol=1e-8)
    np.testing.assert_array_equal(adsrc.vjp(pair_loss, W0, X0, argnums=1)[1](1.0), by_wrt[1][1])
    np.testing.assert_array_equal(adsrc.differentiate(argnums="x")(pair_loss)(W0, X0), by_wrt[1][1])
    hx = adsrc.hessian(pair_loss, argnums=1)(W0, X0)
    np.testing.assert_allclose(hx, adsrc.hessian(pair_loss, wrt=1)(W0, X0), rtol=1e-12)
    np.testing.assert_allclose(adsrc.hvp(pair_loss, argnums=1)(W0, X0, np.ones(3)), hx @ np.ones(3), rtol=1e-10)
    np.testing.assert_allclose(adsrc.jacobian(pair_loss, argnums=1)(W0, X0), by_wrt[1][1], rtol=1e-12)
    assert adsrc.adjoint_source(pair_loss, argnums=1) == adsrc.adjoint_source(pair_loss, wrt=1)
    assert adsrc.jvp_source(pair_loss, argnums=1) == adsrc.jvp_source(pair_loss, wrt=1)


@pytest.mark.parametrize("call", [
    lambda: adsrc.grad(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.value_and_grad(pair_loss, wrt=0, argnums=1),
    lambda: adsrc.vjp(pair_loss, W0, X0, wrt=0, argnums=0),
    lambda: adsrc.differentiate(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.hessian(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.jacobian(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.hvp(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.adjoint_source(pair_loss, wrt=0, argnums=0),
    lambda: adsrc.jvp_source(pair_loss, wrt=0, argnums=0),
])
def test_giving_wrt_and_argnums_is_refused(call):
    with pytest.raises(InvalidArgument, match="argnums is another name for wrt"):
        call()


def two_shapes(x, y):
    return np.sum(x) ** 2 * np.sum(y ** 3)


def test_wrt_as_a_list_is_a_tuple_everywhere():
    x, y = np.array([0.5, -1.0]), np.array([1.0, 2.0, 0.3])
    for eager in MODES:
        as_list = adsrc.grad(two_shapes, wrt=[0, 1], eager=eager)(x, y)
        assert isinstance(as_list, tuple) and len(as_list) == 2
        for k in range(2):
            np.testing.assert_allclose(as_list[k], numerical_grad(two_shapes, (x, y), k), rtol=1e-6)
    h_list, h_tuple = adsrc.hessian(two_shapes, wrt=[0, 1])(x, y), adsrc.hessian(two_shapes, wrt=(0, 1))(x, y)
    for i in range(2):
        for j in range(2):
            np.testing.assert_array_equal(h_list[i][j], h_tuple[i][j])
    jac = adsrc.jacobian(two_shapes, wrt=[0, 1])(x, y)
    np.testing.assert_allclose(jac[1], numerical_grad(two_shapes, (x, y), 1), rtol=1e-6)
    hv = adsrc.hvp(two_shapes, wrt=[0, 1])(x, y, [np.ones(2), np.ones(3)])
    np.testing.assert_allclose(hv[0], h_tuple[0][0] @ np.ones(2) + h_tuple[0][1] @ np.ones(3), rtol=1e-10)


# ---- has_aux ----------------------------------------------------------------------------------------
def loss_with_aux(w, x):
    prediction = np.tanh(w @ x)
    loss = np.sum(prediction ** 2)
    return loss, {"prediction": prediction, "steps": 3, "name": "mse"}


def list_aux(x):
    y = np.sin(x)
    return [np.sum(y * y), y]


@pytest.mark.parametrize("eager", MODES)
def test_has_aux_returns_aux_as_computed_and_the_gradient_of_the_loss(eager):
    def loss_only(w, x):
        return loss_with_aux(w, x)[0]
    expected_aux = loss_with_aux(W0, X0)[1]
    dw, aux = adsrc.grad(loss_with_aux, has_aux=True, eager=eager)(W0, X0)
    np.testing.assert_allclose(dw, numerical_grad(loss_only, (W0, X0), 0), rtol=1e-6, atol=1e-9)
    assert aux["steps"] == 3 and aux["name"] == "mse"
    np.testing.assert_array_equal(aux["prediction"], expected_aux["prediction"])  # bit for bit

    (value, aux), (dw2, dx) = adsrc.value_and_grad(loss_with_aux, argnums=(0, 1), has_aux=True, eager=eager)(W0, X0)
    assert value == loss_with_aux(W0, X0)[0]
    np.testing.assert_array_equal(aux["prediction"], expected_aux["prediction"])
    np.testing.assert_array_equal(dw2, dw)
    np.testing.assert_allclose(dx, numerical_grad(loss_only, (W0, X0), 1), rtol=1e-6, atol=1e-9)

    x = np.array([0.2, 1.1])
    (value, y), dx = adsrc.value_and_grad(list_aux, has_aux=True, eager=eager)(x)
    np.testing.assert_array_equal(y, np.sin(x))
    np.testing.assert_allclose(dx, 2 * np.sin(x) * np.cos(x), rtol=1e-12)


@pytest.mark.parametrize("eager", MODES)
def test_vjp_with_aux_differentiates_the_output_only(eager):
    def vector_aux(x):
        out = np.sin(x) * 2.0
        return out, np.sum(out)
    x = np.array([0.3, -0.4, 1.2])
    value, pullback, aux = adsrc.vjp(vector_aux, x, has_aux=True, eager=eager)
    np.testing.assert_array_equal(value, np.sin(x) * 2.0)
    assert aux == np.sum(np.sin(x) * 2.0)
    u = np.array([1.0, -2.0, 0.5])
    np.testing.assert_allclose(pullback(u), 2.0 * np.cos(x) * u, rtol=1e-12)
    np.testing.assert_allclose(pullback(u), 2.0 * np.cos(x) * u, rtol=1e-12)  # a second call re-runs the sweep


def test_jvp_with_aux_differentiates_the_output_only():
    def vector_aux(x, scale):
        out = np.sin(x) * scale
        return out, {"total": np.sum(out), "count": 2}
    x, t = np.array([0.3, -0.4]), np.array([1.0, 0.5])
    value, tangent, aux = adsrc.jvp(vector_aux, (x, 2.0), (t, None), has_aux=True)
    np.testing.assert_array_equal(value, np.sin(x) * 2.0)
    assert aux == {"total": np.sum(np.sin(x) * 2.0), "count": 2}
    expected = (np.sin(x + EPS * t) - np.sin(x - EPS * t)) * 2.0 / (2 * EPS)
    np.testing.assert_allclose(tangent, expected, rtol=1e-8)
    _, tangent, _ = adsrc.jvp(vector_aux, (x, 2.0), (None, 1.0), has_aux=True)
    np.testing.assert_allclose(tangent, np.sin(x), rtol=1e-12)
    with pytest.raises(InvalidArgument, match="must return a pair"):
        adsrc.jvp(not_a_pair, (2.0,), (1.0,), has_aux=True)
    with pytest.raises(InvalidArgument, match="a derivative returns gradients"):
        adsrc.jvp(adsrc.grad(not_a_pair), (2.0,), (1.0,), has_aux=True)


@pytest.mark.parametrize("eager", MODES)
def test_differentiate_with_aux(eager):
    @adsrc.differentiate(argnums="w", has_aux=True, eager=eager)
    def step(w, x):
        return loss_with_aux(w, x)
    dw, aux = step(W0, X0)
    (value, aux2), dw2 = step.value_and_grad(W0, X0)
    np.testing.assert_array_equal(dw, dw2)
    np.testing.assert_allclose(dw, numerical_grad(lambda w, x: loss_with_aux(w, x)[0], (W0, X0), 0),
                               rtol=1e-6, atol=1e-9)
    assert aux["name"] == aux2["name"] == "mse" and "has_aux=True" in repr(step)


def not_a_pair(x):
    return x * x


@pytest.mark.parametrize("call, message", [
    (lambda: adsrc.grad(not_a_pair, has_aux=True)(2.0), "must return a pair"),
    (lambda: adsrc.vjp(not_a_pair, 2.0, has_aux=True), "must return a pair"),
    (lambda: adsrc.grad(adsrc.grad(loss_with_aux, has_aux=True))(W0, X0), "has_aux=True"),
    (lambda: adsrc.jvp(adsrc.grad(loss_with_aux, has_aux=True), (W0, X0), (W0, None)), "has_aux=True"),
    (lambda: adsrc.vjp(adsrc.grad(loss_with_aux, has_aux=True), W0, X0), "has_aux=True"),
    (lambda: adsrc.hessian(adsrc.grad(loss_with_aux, has_aux=True)), "has_aux=True"),
    (lambda: adsrc.jacobian(adsrc.grad(loss_with_aux, has_aux=True)), "has_aux=True"),
    (lambda: adsrc.grad(adsrc.grad(not_a_pair), has_aux=True), "a derivative returns gradients"),
    (lambda: adsrc.vjp(adsrc.grad(not_a_pair), 2.0, has_aux=True), "a derivative returns gradients"),
])
def test_what_has_aux_cannot_do_is_refused_naming_the_function(call, message):
    with pytest.raises(InvalidArgument, match=message) as info:
        call()
    assert __file__ in str(info.value)


# ---- jacobian and hessian over tuples, lists and dicts ---------------------------------------------
def dict_loss(p):
    return np.sum(np.tanh(p["w"] @ p["x"]) ** 2) + p["b"] ** 2 * np.sum(p["x"])


def tuple_loss(pair, scale):
    w, x = pair
    return np.sum(np.sin(w * x[0]) * scale) + np.sum(x ** 3)


def list_loss(parts):
    return np.sum(parts[0] * parts[1] ** 2) + np.sum(parts[0] ** 3)


def structured_output(x, p):
    return {"y": np.sin(x) * p["a"], "pair": (np.sum(x * p["b"]), p["a"] * 2.0)}


P = {"w": RNG.standard_normal((2, 3)), "x": RNG.standard_normal(3), "b": 0.7}
PAIR = (RNG.standard_normal(2), RNG.standard_normal(2))
PARTS = [RNG.standard_normal(3), RNG.standard_normal(3)]


def check_hessian_nested(f, args, wrt, hessian_of):
    """H[i][j] for a tuple wrt, then each argument's structure nested twice, against finite differences."""
    many = isinstance(wrt, tuple)
    positions = wrt if many else (wrt,)
    grad_of = adsrc.grad(f, wrt)

    def gradient_leaves(*a):  # the gradient as a flat list of leaves, for finite differences
        return tree_leaves(grad_of(*a))
    offsets, total = [], 0
    for q in positions:
        offsets.append(total)
        total += len(tree_leaves(args[q]))
    h = hessian_of(*args)
    outer = h if many else (h,)
    for i, q in enumerate(positions):
        for j, r in enumerate(positions):
            block_tree = outer[i] if not many else outer[i]
            # outer[i] is argument q's structure with, at each leaf, the tuple (or single) over wrt
            blocks_i = tree_leaves_with_inner(block_tree, args[q], many)
            for a, inner in enumerate(blocks_i):
                block_for_r = inner[j] if many else inner
                leaves_r = tree_leaves(block_for_r)
                assert len(leaves_r) == len(tree_leaves(args[r]))
                for b, block in enumerate(leaves_r):
                    expected = fd_block(lambda *z: gradient_leaves(*z), args, r, b, offsets[i] + a)
                    assert np.shape(block) == np.shape(expected), (i, j, a, b)
                    np.testing.assert_allclose(block, expected, rtol=1e-5, atol=1e-7)


def tree_leaves_with_inner(tree, like, many):
    """The subtrees of ``tree`` found at the positions of ``like``'s leaves."""
    if isinstance(like, dict):
        return [leaf for k in like for leaf in tree_leaves_with_inner(tree[k], like[k], many)]
    if isinstance(like, (list, tuple)):
        assert type(tree) is type(like)
        return [leaf for i in range(len(like)) for leaf in tree_leaves_with_inner(tree[i], like[i], many)]
    return [tree]


@pytest.mark.parametrize("eager", MODES)
def test_hessian_of_a_dict_is_the_dict_nested_twice(eager):
    with adsrc.eager_unthunk(eager):
        h = adsrc.hessian(dict_loss)(P)
    assert set(h) == {"w", "x", "b"} and set(h["w"]) == {"w", "x", "b"}
    assert h["w"]["x"].shape == (2, 3, 3) and h["x"]["w"].shape == (3, 2, 3) and isinstance(h["b"]["b"], float)
    np.testing.assert_allclose(h["w"]["x"], np.moveaxis(h["x"]["w"], 0, -1), rtol=1e-10)  # symmetric
    check_hessian_nested(dict_loss, (P,), 0, adsrc.hessian(dict_loss))


@pytest.mark.parametrize("eager", MODES)
def test_hessian_of_tuples_and_lists_is_indexed_twice(eager):
    with adsrc.eager_unthunk(eager):
        h = adsrc.hessian(tuple_loss)(PAIR, 1.5)
        assert isinstance(h, tuple) and isinstance(h[0], tuple) and h[0][1].shape == (2, 2)
        check_hessian_nested(tuple_loss, (PAIR, 1.5), 0, adsrc.hessian(tuple_loss))
        h = adsrc.hessian(list_loss)(PARTS)
        assert isinstance(h, list) and isinstance(h[1], list) and h[1][0].shape == (3, 3)
        check_hessian_nested(list_loss, (PARTS,), 0, adsrc.hessian(list_loss))
        # a tuple wrt over a tuple argument and a float: H[i][index in argument i][j][index in argument j]
        h = adsrc.hessian(tuple_loss, argnums=(0, 1))(PAIR, 1.5)
        assert h[0][1][0][1].shape == (2, 2) and h[0][1][1].shape == (2,)  # d2f/dx dx, d2f/dx dscale
        assert isinstance(h[1][1], float) and h[1][0][1].shape == (2,)  # d2f/dscale2, d2f/dscale dx
        check_hessian_nested(tuple_loss, (PAIR, 1.5), (0, 1), adsrc.hessian(tuple_loss, argnums=(0, 1)))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
@pytest.mark.parametrize("eager", MODES)
def test_jacobian_of_structured_outputs_and_arguments(mode, eager):
    x, p = np.array([0.3, -1.2]), {"a": 0.8, "b": np.array([2.0, -1.0])}
    with adsrc.eager_unthunk(eager):
        j = adsrc.jacobian(structured_output, argnums=(0, 1), mode=mode)(x, p)
    # output structure outside, the tuple over argnums inside it, each argument's structure inside that
    out_leaves = [j["y"], j["pair"][0], j["pair"][1]]
    for k, per_argument in enumerate(out_leaves):
        assert isinstance(per_argument, tuple) and set(per_argument[1]) == {"a", "b"}
        np.testing.assert_allclose(per_argument[0], fd_block(structured_output, (x, p), 0, 0, k), rtol=1e-6,
                                   atol=1e-9)
        for b, key in enumerate(["a", "b"]):
            expected = fd_block(structured_output, (x, p), 1, b, k)
            assert np.shape(per_argument[1][key]) == expected.shape
            np.testing.assert_allclose(per_argument[1][key], expected, rtol=1e-6, atol=1e-9)


@pytest.mark.parametrize("eager", MODES)
def test_jacobian_of_a_scalar_function_of_a_dict_is_its_gradient(eager):
    with adsrc.eager_unthunk(eager):
        j = adsrc.jacobian(dict_loss)(P)
        g = adsrc.grad(dict_loss)(P)
    for key in P:
        np.testing.assert_allclose(j[key], g[key], rtol=1e-12)


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_blocks_of_an_integer_output_are_zero(mode):
    def with_a_count(x):
        return x * 2.0, 3
    j = adsrc.jacobian(with_a_count, mode=mode)(np.array([1.0, 2.0]))
    np.testing.assert_array_equal(j[0], 2.0 * np.eye(2))
    np.testing.assert_array_equal(j[1], np.zeros(2))


@pytest.mark.parametrize("mode", ["rev", "fwd"])
def test_jacobian_with_empty_inputs_and_outputs(mode):
    def f(x, y):
        return np.sum(x) * y

    def g(x):
        return x[:0] * 2.0
    dx, dy = adsrc.jacobian(f, (0, 1), mode=mode)(np.zeros(0), np.array([1.0, 2.0]))
    assert dx.shape == (2, 0) and dy.shape == (2, 2) and not dy.any()
    assert adsrc.jacobian(g, mode=mode)(np.ones(2)).shape == (0, 2)


def test_jacobian_refuses_integers_among_the_differentiated_leaves():
    def f(pair):
        return np.sum(pair[0]) * pair[1]
    for mode in ("rev", "fwd"):
        with pytest.raises(InvalidArgument, match="integers"):
            adsrc.jacobian(f, mode=mode)((np.ones(2), 3))


def test_hvp_of_a_dict_argument_takes_a_dict_direction():
    def f(p):
        return np.sum(p["a"] ** 3) * p["b"]
    p, v = {"a": np.array([1.0, 2.0]), "b": 3.0}, {"a": np.array([1.0, -1.0]), "b": 0.5}
    hv = adsrc.hvp(f)(p, v)
    h = adsrc.hessian(f)(p)
    np.testing.assert_allclose(hv["a"], h["a"]["a"] @ v["a"] + h["a"]["b"] * v["b"], rtol=1e-12)
    np.testing.assert_allclose(hv["b"], h["b"]["a"] @ v["a"] + h["b"]["b"] * v["b"], rtol=1e-12)
    np.testing.assert_allclose(hv["a"], 6 * p["a"] * p["b"] * v["a"] + 3 * p["a"] ** 2 * v["b"], rtol=1e-12)


def test_grad_of_grad_with_respect_to_a_dict():
    def f(x, p):
        return np.sin(x) * p["a"] ** 2 + x * np.sum(p["b"])
    p = {"a": 0.5, "b": np.array([1.0, 2.0])}
    mixed = adsrc.grad(adsrc.grad(f), 1)(0.3, p)  # d/dp of df/dx = cos(x) a^2 + sum(b)
    np.testing.assert_allclose(mixed["a"], 2 * np.cos(0.3) * 0.5, rtol=1e-10)
    np.testing.assert_allclose(mixed["b"], [1.0, 1.0], rtol=1e-12)


def test_grad_of_a_gradient_that_is_a_dict_is_refused():
    with pytest.raises(adsrc.errors.NonScalarOutput):
        adsrc.grad(adsrc.grad(dict_loss))(P)


# ---- check_grads --------------------------------------------------------------------------------------
def wide(x, y):
    return np.outer(np.sin(x), y) * 2.0


def mixed_structures(p, pair, xs, scale):
    return {"a": np.tanh(p["w"] @ pair[0]) * scale, "b": [np.sum(xs[0] * xs[1]), pair[1] ** 2]}


@pytest.mark.parametrize("eager", MODES)
def test_check_grads_passes_on_correct_derivatives(eager):
    with adsrc.eager_unthunk(eager):
        assert adsrc.check_grads(wide, (np.array([0.1, 0.5]), np.array([1.0, -2.0, 0.3]))) is None
        assert adsrc.check_grads(wide, [np.array([0.2]), np.array([1.0])]) is None
        args = ({"w": RNG.standard_normal((2, 3))}, (RNG.standard_normal(3), 0.4),
                [RNG.standard_normal(2), RNG.standard_normal(2)], 1.3)
        assert adsrc.check_grads(mixed_structures, args) is None
        assert adsrc.check_grads(dict_loss, (P,), order=2) is None
        assert adsrc.check_grads(tuple_loss, (PAIR, 1.5), order=2, modes=("rev",)) is None
        assert adsrc.check_grads(pair_loss, (W0, X0), order=2, modes=("fwd",)) is None
        # order 2 of functions that are not real scalars: through sum(u * f) for a random u
        assert adsrc.check_grads(wide, (np.array([0.1, 0.5]), np.array([1.0, -2.0, 0.3])), order=2) is None
        assert adsrc.check_grads(structured_output, (np.array([0.3, -1.2]), {"a": 0.8, "b": np.ones(2)}),
                                 order=2) is None
        assert adsrc.check_grads(mixed_structures, args, order=2, modes=("rev",)) is None
        assert adsrc.check_grads(adsrc.grad(dict_loss), (P,)) is None  # a gradient, at first order


def test_check_grads_in_float32_uses_looser_defaults():
    def f(x):
        return np.sum(np.sin(x) * x)
    x = np.array([0.5, 1.0], dtype=np.float32)
    assert adsrc.check_grads(f, (x,), order=2) is None
    with pytest.raises(AssertionError, match="eps 0.001"):
        adsrc.check_grads(uses_wrong_log, (np.float32(0.5), x + 1.0), modes=("rev",))


def with_an_integer(x, n):
    return np.sum(x ** n)


def test_check_grads_holds_non_float_arguments_fixed():
    assert adsrc.check_grads(with_an_integer, (np.array([0.5, 2.0]), 3), order=2) is None


def wrong_log(x):
    return np.log(x)


adsrc.register_adjoint(wrong_log, lambda g, ans, x: g * x)  # should be g / x
defjvp(wrong_log, lambda t, ans, x: t / x)  # right


def scaled_sin(x):
    return np.sin(x)


adsrc.register_adjoint(scaled_sin, lambda g, ans, x: g * np.cos(x))  # right
defjvp(scaled_sin, lambda t, ans, x: 2.0 * t * np.cos(x))  # should be t * cos(x)


def rounded_sin(x):
    return np.sin(x)


# right at first order, but np.round has no derivative: the second derivative is lost
adsrc.register_adjoint(rounded_sin, lambda g, ans, x: g * np.cos(np.round(x, 12)))
defjvp(rounded_sin, lambda t, ans, x: t * np.cos(x))


def uses_wrong_log(scale, x):
    return scale * wrong_log(x)


def uses_scaled_sin(x):
    return scaled_sin(x) * 3.0


def uses_rounded_sin(x):
    return np.sum(rounded_sin(x))


def test_check_grads_fails_on_a_wrong_vjp_naming_the_argument():
    x = np.array([1.5, 2.0])
    with pytest.raises(AssertionError, match=r"reverse mode \(vjp\) of uses_wrong_log with respect to argument 1 "
                                             r"\('x'\) differs from central finite differences by up to"):
        adsrc.check_grads(uses_wrong_log, (0.5, x))
    adsrc.check_grads(uses_wrong_log, (0.5, x), modes=("fwd",))  # its jvp is right


def test_check_grads_fails_on_a_wrong_jvp():
    with pytest.raises(AssertionError, match=r"forward mode \(jvp\) of uses_scaled_sin with respect to argument 0"):
        adsrc.check_grads(uses_scaled_sin, (np.array([0.1, 0.9]),))
    adsrc.check_grads(uses_scaled_sin, (np.array([0.1, 0.9]),), modes=("rev",))


def test_check_grads_order_2_fails_on_a_wrong_second_derivative():
    x = np.array([0.4, 1.1])
    adsrc.check_grads(uses_rounded_sin, (x,))
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match="second order: .* of grad\\(uses_rounded_sin\\)"):
            adsrc.check_grads(uses_rounded_sin, (x,), order=2, modes=(mode,))


def test_check_grads_order_2_of_an_array_valued_function_fails_on_a_wrong_second_derivative():
    def twice(x):
        return rounded_sin(x) * 2.0
    x = np.array([0.4, 1.1])
    adsrc.check_grads(twice, (x,))
    for mode in ("fwd", "rev"):
        with pytest.raises(AssertionError, match=r"second order, through np.sum\(u \* twice\(...\)\)"):
            adsrc.check_grads(twice, (x,), order=2, modes=(mode,))


def test_check_grads_order_2_of_an_array_valued_lambda():
    # the contracted function is named after the lambda: "<lambda>" must become an identifier
    adsrc.check_grads(lambda x: np.sin(x) * np.ones(2), (0.3,), order=2)
    with pytest.raises(AssertionError, match="second order"):
        adsrc.check_grads(lambda x: rounded_sin(x) * np.ones(2), (0.3,), order=2, modes=("rev",))


def test_check_grads_error_reports_the_error_it_found():
    with pytest.raises(AssertionError) as info:
        adsrc.check_grads(uses_wrong_log, (1.0, 2.0), modes=("rev",), seed=3)
    reported = float(str(info.value).split("by up to ")[1].split(" ")[0])
    # the directions drawn: t and u for argument 0 (which passes), then t and u for argument 1;
    # <vjp(u), t> - <u, J t> = u t scale (x - 1/x) with scale 1 and x 2
    rng = np.random.default_rng(3)
    rng.standard_normal(2)
    t, u = rng.standard_normal(2)
    assert reported == pytest.approx(abs(u * t * (2.0 - 0.5)), rel=1e-3)


def test_check_grads_of_a_derivative_checks_the_orders_above_it():
    adsrc.check_grads(adsrc.grad(dict_loss), (P,), order=2)  # third derivatives, through grad(f) inside
    adsrc.check_grads(wide, (np.ones(2), np.ones(2)), order=3)


@pytest.mark.parametrize("call, message", [
    (lambda: adsrc.check_grads(wide, np.ones(2)), "tuple of arguments"),
    (lambda: adsrc.check_grads(wide, (np.ones(2), np.ones(2)), order=0), "order 1, 2, 3"),
    (lambda: adsrc.check_grads(wide, (np.ones(2), np.ones(2)), modes=("backward",)), "modes"),
    (lambda: adsrc.check_grads(wide, (np.ones(2), np.ones(2)), modes="fwd"), "modes"),
])
def test_check_grads_refuses_what_it_cannot_check(call, message):
    with pytest.raises(InvalidArgument, match=message):
        call()


# ---- the same nesting and values as JAX itself, where JAX is installed ----------------------------------
def both_numpys(xnp):
    """The same functions, written against NumPy (for adsrc) or jax.numpy (for JAX)."""
    def scalar(p, pair):
        return xnp.sum(xnp.tanh(p["w"] @ pair[0]) ** 2) * pair[1] + p["b"] ** 2 * xnp.sum(pair[0] ** 3)

    def structured(x, p):
        return {"y": xnp.sin(x) * p["a"], "pair": (xnp.sum(x * p["b"]), p["a"] * 2.0)}

    def with_aux(x, xs):
        loss = xnp.sum(xnp.sin(x) * xs[0]) + xnp.sum(xs[1] ** 2)
        return loss, {"x": x * 2.0}
    return scalar, structured, with_aux


def assert_same_tree(ours, theirs, jax):
    assert jax.tree_util.tree_structure(ours) == jax.tree_util.tree_structure(theirs)
    for a, b in zip(jax.tree_util.tree_leaves(ours), jax.tree_util.tree_leaves(theirs)):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, np.asarray(b), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("argnums", [0, 1, (0, 1), [1, 0]])
def test_hessian_and_jacobian_nest_as_jax_does(argnums):
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours, theirs = both_numpys(np), both_numpys(jax.numpy)
    p, pair = {"w": np.arange(6.0).reshape(2, 3) / 10, "b": 0.7}, (np.array([0.1, -0.3, 0.5]), 1.5)
    jax_argnums = tuple(argnums) if isinstance(argnums, list) else argnums
    assert_same_tree(adsrc.hessian(ours[0], argnums=argnums)(p, pair),
                     jax.hessian(theirs[0], argnums=jax_argnums)(p, pair), jax)
    x, q = np.array([0.3, -1.2]), {"a": 0.8, "b": np.array([2.0, -1.0])}
    for mode, jacobian in (("rev", jax.jacrev), ("fwd", jax.jacfwd)):
        assert_same_tree(adsrc.jacobian(ours[1], argnums=argnums, mode=mode)(x, q),
                         jacobian(theirs[1], argnums=jax_argnums)(x, q), jax)


def test_has_aux_returns_what_jax_returns():
    jax = pytest.importorskip("jax")
    jax.config.update("jax_enable_x64", True)
    ours, theirs = both_numpys(np)[2], both_numpys(jax.numpy)[2]
    x, xs = np.array([0.2, 0.9]), [np.array([1.0, -2.0]), np.array([0.5, 0.25])]
    assert_same_tree(adsrc.grad(ours, argnums=(0, 1), has_aux=True)(x, xs),
                     jax.grad(theirs, argnums=(0, 1), has_aux=True)(x, xs), jax)
    assert_same_tree(adsrc.value_and_grad(ours, argnums=1, has_aux=True)(x, xs),
                     jax.value_and_grad(theirs, argnums=1, has_aux=True)(x, xs), jax)
    value, pullback, aux = adsrc.vjp(ours, x, xs, wrt=(0, 1), has_aux=True)
    jax_value, jax_pullback, jax_aux = jax.vjp(theirs, x, xs, has_aux=True)
    assert_same_tree((value, pullback(2.0), aux), (jax_value, jax_pullback(2.0), jax_aux), jax)
    tangents = (np.array([1.0, -1.0]), [np.array([0.5, 0.0]), np.array([0.0, 2.0])])
    assert_same_tree(adsrc.jvp(ours, (x, xs), tangents, has_aux=True),
                     jax.jvp(theirs, (x, xs), tangents, has_aux=True), jax)


def test_check_grads_refuses_complex_arguments_rather_than_passing_unchecked():
    def f(z):
        return np.sum(np.abs(z) ** 2)

    with pytest.raises(adsrc.errors.InvalidArgument, match="complex"):
        adsrc.check_grads(f, (np.array([1.0 + 2.0j]),))


# ---- argnums that count into *args, as JAX's do ---------------------------------------------------------
def starred_only(*args):
    return np.sum(args[0] ** 2 * args[1])


def named_then_starred(a, *rest):
    return np.sum(a * rest[0] * np.sin(rest[1]))


def symmetrized(A, B):
    return np.sum(A * B * B)


def forwards_the_rest(*args):  # lambda *args: fun(sym(args[0]), *args[1:]) in a well-known example
    return symmetrized(0.5 * (args[0] + args[0].T), *args[1:])


STARRED = [(starred_only, 0), (starred_only, 1), (starred_only, (1, 0)), (named_then_starred, 2),
           (named_then_starred, (0, 1, 2)), (forwards_the_rest, 0), (forwards_the_rest, 1)]


@pytest.mark.parametrize("eager", MODES)
@pytest.mark.parametrize("f, wrt", STARRED, ids=lambda v: getattr(v, "__name__", repr(v)))
def test_argnums_count_the_calls_positional_arguments_into_star_args(f, wrt, eager):
    args = (RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2)), RNG.standard_normal((2, 2)))
    args = args[:2] if f is not named_then_starred else args
    value, got = adsrc.value_and_grad(f, argnums=wrt, eager=eager)(*args)
    assert value == f(*args)
    items = wrt if isinstance(wrt, tuple) else (wrt,)
    expected = tuple(numerical_grad(f, args, i) for i in items)
    got = got if isinstance(wrt, tuple) else (got,)
    assert len(got) == len(expected)
    for g, e, i in zip(got, expected, items):
        assert np.shape(g) == np.shape(args[i])
        np.testing.assert_allclose(g, e, rtol=1e-6, atol=1e-8)
    _, pullback = adsrc.vjp(f, *args, argnums=wrt, eager=eager)
    np.testing.assert_allclose(np.asarray(pullback(1.0) if isinstance(wrt, tuple) else [pullback(1.0)]),
                               np.asarray(got))


def test_argnums_past_the_calls_star_args_and_a_second_derivative_of_one_are_refused():
    x = np.ones(3)
    with pytest.raises(InvalidArgument, match="argument 3 given to \\*args"):
        adsrc.grad(starred_only, argnums=2)(x, x)
    for again in (lambda: adsrc.hessian(starred_only)(x, x), lambda: adsrc.jvp(adsrc.grad(starred_only), (x, x),
                                                                                (x, None))):
        with pytest.raises(InvalidArgument, match="\\*args"):
            again()


@pytest.mark.parametrize("f, primals, tangents", [
    (starred_only, (np.array([0.3, 0.5]), np.array([1.0, 2.0])), (np.array([1.0, -1.0]), None)),
    (starred_only, (np.array([0.3, 0.5]), np.array([1.0, 2.0])), (None, np.array([0.5, 2.0]))),
    (named_then_starred, (np.array([0.3, 0.5]), np.array([1.0, 2.0]), np.array([0.2, 0.4])),
     (None, np.ones(2), np.array([1.0, 3.0]))),
], ids=["first", "second", "named then starred"])
def test_jvp_gives_the_tangents_of_arguments_given_to_star_args_to_them(f, primals, tangents):
    value, tangent = adsrc.jvp(f, primals, tangents)
    assert value == f(*primals)
    expected = sum(np.sum(numerical_grad(f, primals, i) * t) for i, t in enumerate(tangents) if t is not None)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
