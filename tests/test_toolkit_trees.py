"""The public pytree functions (tree_map, tree_leaves, tree_structure, tree_flatten, tree_unflatten) and
ravel_pytree, differentiated through by its rules: gradients against central differences, lazy and eager."""
from __future__ import annotations

import dataclasses
from typing import NamedTuple

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument
from gradcheck import check, numerical_grad


class Layer(NamedTuple):
    w: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Config:
    scale: np.ndarray
    shift: float
    steps: int = 3
    name: str = "cfg"
    extra: object = None


class Pair:
    def __init__(self, left, right):
        self.left, self.right = left, right


adsrc.register_pytree(Pair, lambda p: ((p.left, p.right), None), lambda aux, c: Pair(*c))


class Model:  # a plain object: its float attributes are its parameters
    def __init__(self, w, k):
        self.w, self.k = w, k


def sample_tree():
    return {"layer": Layer(np.array([[0.5, -1.0], [2.0, 0.25]]), np.array([0.1, -0.3])),
            "cfg": Config(np.array([1.5, 0.5, -0.5]), 0.7),
            "pair": Pair(np.array([0.2]), 1.25),
            "model": Model(np.array([0.3, 0.4]), 2),
            "list": [0.9, None, (np.float64(-0.4),)]}


def test_flatten_and_unflatten_round_trip_every_kind_of_node():
    tree = sample_tree()
    leaves, structure = adsrc.tree_flatten(tree)
    assert all(a is b for a, b in zip(leaves, adsrc.tree_leaves(tree)))
    assert len(leaves) == structure.num_leaves == 9  # the model's int k is its configuration, not a leaf
    assert [np.shape(leaf) for leaf in leaves] == [(2, 2), (2,), (3,), (), (1,), (), (2,), (), ()]
    new = adsrc.tree_unflatten(structure, [leaf * 2 for leaf in leaves])
    assert type(new["layer"]) is Layer and type(new["cfg"]) is Config and type(new["pair"]) is Pair
    assert type(new["model"]) is Model and new["model"].k == 2 and new["cfg"].steps == 3 and new["cfg"].name == "cfg"
    assert new["list"][1] is None and type(new["list"][2]) is tuple
    np.testing.assert_array_equal(new["layer"].w, 2 * tree["layer"].w)
    np.testing.assert_array_equal(new["pair"].left, 2 * tree["pair"].left)
    assert adsrc.tree_structure(new) == structure and hash(adsrc.tree_structure(new)) == hash(structure)
    assert tree["cfg"].shift == 0.7  # the original is untouched


def test_structures_compare_by_containers_and_keys():
    s = adsrc.tree_structure
    assert s({"a": 1.0, "b": [2.0]}) == s({"a": np.zeros(3), "b": ["x"]})
    assert s([1.0, 2.0]) != s((1.0, 2.0))
    assert s({"a": 1.0, "b": 2.0}) != s({"b": 1.0, "a": 2.0})  # a dict's order is its leaves' order
    assert s({"a": 1.0}) != s({"a": 1.0, "b": 2.0})
    assert s(Layer(1.0, 2.0)) != s((1.0, 2.0))
    assert s([1.0, None]) != s([1.0, 2.0])
    assert repr(s({"w": (1.0, None), "l": Layer(1.0, 2.0)})) == "TreeStructure({'w': (*, None), 'l': Layer(w=*, b=*)})"
    with pytest.raises(InvalidArgument, match="has 2 leaves, and 3 were given"):
        adsrc.tree_unflatten(s([1.0, 2.0]), [1.0, 2.0, 3.0])
    with pytest.raises(InvalidArgument, match="takes a TreeStructure"):
        adsrc.tree_unflatten([1.0], [1.0])


def test_none_is_an_empty_subtree_everywhere():
    tree = {"a": None, "b": [None, 1.0], "c": (None,)}
    assert adsrc.tree_leaves(tree) == [1.0]
    assert adsrc.tree_map(lambda x: x + 1, tree) == {"a": None, "b": [None, 2.0], "c": (None,)}
    flat, unravel = adsrc.ravel_pytree(tree)
    assert flat.tolist() == [1.0] and unravel(np.array([5.0])) == {"a": None, "b": [None, 5.0], "c": (None,)}


def loss_with_none(p):
    return np.sum(p["w"] ** 2) * p["s"]


@pytest.mark.parametrize("eager", [False, True])
def test_the_gradient_of_none_is_none(eager):
    params = {"w": np.array([1.0, -2.0]), "s": 1.5, "unused": None, "nested": [None, (None,)]}
    g = adsrc.grad(loss_with_none, eager=eager)(params)
    assert g["unused"] is None and g["nested"] == [None, (None,)]
    np.testing.assert_allclose(g["w"], 2 * params["w"] * 1.5)
    assert adsrc.tree_structure(g) == adsrc.tree_structure(params)


# ---- tree_map over gradients -------------------------------------------------------
def dict_loss(p):
    return np.sum(np.tanh(p["W"] @ p["x"])) + p["c"] ** 2


def list_loss(p):
    return np.sum(p[0] * p[1][0]) + np.sum(np.sin(p[1][1]))


def layer_loss(p):
    return np.sum((p.w @ p.b) ** 2)


def config_loss(p):
    return np.sum(p.scale ** 3) * p.shift


def model_loss(m):
    return np.sum(np.exp(m.w)) * m.k


def pair_loss(p):
    return np.sum(p.left ** 2) * p.right


CASES = [
    (dict_loss, {"W": np.array([[0.3, -0.1], [0.2, 0.4]]), "x": np.array([1.0, -1.0]), "c": 0.5,
                 "unused": np.array([7.0, 8.0])}),
    (list_loss, [np.array([0.5, 1.5]), (np.array([2.0, -1.0]), np.array([0.1, 0.2, 0.3]))]),
    (layer_loss, Layer(np.array([[1.0, 2.0], [0.5, -1.0]]), np.array([0.3, -0.2]))),
    (config_loss, Config(np.array([0.5, -1.0, 2.0]), 1.5)),
    (model_loss, Model(np.array([0.1, -0.2]), 3)),
    (pair_loss, Pair(np.array([0.5, -1.5]), 2.0)),
]


@pytest.mark.parametrize("loss,params", CASES, ids=lambda v: getattr(v, "__name__", ""))
@pytest.mark.parametrize("eager", [False, True])
def test_a_gradient_step_by_tree_map_matches_one_on_the_flat_vector(loss, params, eager):
    grads = adsrc.grad(loss, eager=eager)(params)
    assert adsrc.tree_structure(grads) == adsrc.tree_structure(params)
    stepped = adsrc.tree_map(lambda p, g: p - 0.1 * g, params, grads)
    assert type(stepped) is type(params)
    # the reference: the same step on the flat vector, with the gradient from central differences
    flat, unravel = adsrc.ravel_pytree(params)
    fd = numerical_grad(lambda v: loss(unravel(v)), [flat], 0)
    expected, got = flat - 0.1 * fd, adsrc.ravel_pytree(stepped)[0]
    np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-8)
    if isinstance(params, dict):  # where nothing flowed the gradient is zeros: the step leaves it
        np.testing.assert_array_equal(stepped["unused"], params["unused"])


def test_tree_map_treats_the_symbolic_zero_as_zeros_and_matches_dicts_by_key():
    params = {"a": np.array([1.0, 2.0]), "b": {"c": 3.0, "d": np.ones(2)}}
    out = adsrc.tree_map(lambda p, g: p - 0.5 * g, params, {"b": adsrc.zero, "a": np.array([2.0, 2.0])})
    np.testing.assert_array_equal(out["a"], [0.0, 1.0])
    assert out["b"]["c"] == 3.0 and out["b"]["d"] is params["b"]["d"]  # p - 0.5 * zero is p
    sums = adsrc.tree_map(lambda x, y, z: x + y + z, [1.0, (2.0,)], [10.0, (20.0,)], [100.0, (200.0,)])
    assert sums == [111.0, (222.0,)]
    # a tree in rest may go deeper: f gets the whole subtree there
    assert adsrc.tree_map(lambda x, sub: x * len(sub), [1.0, 2.0], [[0, 0], [0, 0, 0]]) == [2.0, 6.0]


@pytest.mark.parametrize("other,message", [
    ([1.0, 2.0], r"differ at the top: a tuple in the first, a list here"),
    ((1.0, {"x": 2.0}), r"the dicts at \[1\] have different keys"),
    ((1.0, {"k": 2.0}, 3.0), r"has 3 items where the first has 2"),
    ((1.0, None), r"differ at \[1\]: a dict in the first, a NoneType here"),
])
def test_tree_map_refuses_trees_of_another_structure(other, message):
    with pytest.raises(InvalidArgument, match=message):
        adsrc.tree_map(lambda a, b: a + b, (1.0, {"k": 2.0}), other)


# ---- ravel_pytree ----------------------------------------------------------------------
def test_ravel_pytree_concatenates_and_unravel_restores_shapes_and_dtypes():
    tree = {"w": np.arange(6.0).reshape(2, 3), "h": np.array([1.5, 2.5], dtype=np.float32),
            "s": np.float32(0.5), "f": 3.0, "n": 4, "t": Layer(np.array([[7.0]]), np.array([8.0, 9.0]))}
    flat, unravel = adsrc.ravel_pytree(tree)
    assert flat.dtype == np.float64 and flat.shape == (14,) and unravel.size == 14
    np.testing.assert_array_equal(flat, [0, 1, 2, 3, 4, 5, 1.5, 2.5, 0.5, 3, 4, 7, 8, 9])
    back = unravel(flat)
    assert back["h"].dtype == np.float32 and type(back["s"]) is np.float32 and type(back["f"]) is float
    assert type(back["n"]) is int and back["n"] == 4 and type(back["t"]) is Layer
    for a, b in zip(adsrc.tree_leaves(back), adsrc.tree_leaves(tree)):
        np.testing.assert_array_equal(a, b)
        assert np.shape(a) == np.shape(b)
    flat[0] = 100.0  # no sharing, either way
    assert tree["w"][0, 0] == 0.0 and back["w"][0, 0] == 0.0
    assert adsrc.ravel_pytree({"a": np.ones(2, np.float32)})[0].dtype == np.float32
    assert adsrc.ravel_pytree([])[0].shape == (0,)
    with pytest.raises(InvalidArgument, match="1-D array of 14 elements"):
        unravel(np.zeros(13))
    with pytest.raises(InvalidArgument, match="leaf of type str"):
        adsrc.ravel_pytree({"a": 1.0, "name": "x"})


PARAMS = {"layer": Layer(np.array([[0.5, -1.0], [2.0, 0.25]]), np.array([0.1, -0.3])),
          "cfg": Config(np.array([1.5, 0.5, -0.5]), 0.7), "pair": Pair(np.array([0.2, -0.6]), 1.25),
          "list": [0.9, None, (np.array([-0.4]),)]}
FLAT, UNRAVEL = adsrc.ravel_pytree(PARAMS)


def loss_of_flat(flat):
    p = UNRAVEL(flat)
    h = np.tanh(p["layer"].w @ p["layer"].b + p["pair"].left)
    return np.sum(h * p["cfg"].scale[:2]) * p["cfg"].shift + p["pair"].right * p["list"][0] ** 2 \
        + np.sum(p["list"][2][0] ** 3)


def test_a_loss_of_unravel_has_the_gradient_of_central_differences_lazy_and_eager():
    g = check(loss_of_flat, FLAT)
    assert g.shape == FLAT.shape and abs(g[6]) > 0  # cfg.scale[2] is unused: its entry is zero, others are not
    assert g[FLAT.size - 1] != 0 and g[6 + 2] == 0  # the last leaf is used; scale's last element is not


def test_forward_mode_and_the_hessian_through_unravel():
    v = np.linspace(-1.0, 1.0, FLAT.size)
    _, tangent = adsrc.jvp(loss_of_flat, (FLAT,), (v,))
    eps = 1e-6
    np.testing.assert_allclose(tangent, (loss_of_flat(FLAT + eps * v) - loss_of_flat(FLAT - eps * v)) / (2 * eps),
                               rtol=1e-6)
    hessian = adsrc.hessian(loss_of_flat)(FLAT)
    gradient = adsrc.grad(loss_of_flat)
    fd = np.stack([(gradient(FLAT + eps * e) - gradient(FLAT - eps * e)) / (2 * eps) for e in np.eye(FLAT.size)])
    np.testing.assert_allclose(hessian, fd, rtol=1e-5, atol=1e-6)


def loss_of_tree(tree):
    flat, _ = adsrc.ravel_pytree(tree)
    return np.sum(np.sin(flat) * np.arange(1.0, flat.size + 1.0)) + np.sum(flat[:3]) ** 2


@pytest.mark.parametrize("eager", [False, True])
def test_a_loss_of_ravel_pytree_has_the_gradient_of_central_differences(eager):
    g = adsrc.grad(loss_of_tree, eager=eager)(PARAMS)
    assert adsrc.tree_structure(g) == adsrc.tree_structure(PARAMS) and type(g["cfg"]) is Config
    fd = numerical_grad(lambda v: loss_of_tree(UNRAVEL(v)), [FLAT], 0)
    np.testing.assert_allclose(UNRAVEL.ravel_like(g), fd, rtol=1e-6, atol=1e-8)
    tangent = adsrc.tree_map(np.ones_like, PARAMS)
    _, out = adsrc.jvp(loss_of_tree, (PARAMS,), (tangent,))
    np.testing.assert_allclose(out, np.sum(fd), rtol=1e-6)


def round_trip(tree):
    flat, unravel = adsrc.ravel_pytree(tree)
    p = unravel(2.0 * flat)
    return np.sum(p["a"] ** 2) + p["b"][0] * p["b"][1]


def test_ravel_and_unravel_inside_one_differentiated_function():
    params = {"a": np.array([0.5, -1.0, 2.0]), "b": [0.25, 3.0]}
    for eager in (False, True):
        g = adsrc.grad(round_trip, eager=eager)(params)
        np.testing.assert_allclose(g["a"], 8.0 * params["a"], rtol=1e-12)
        np.testing.assert_allclose(g["b"], [4.0 * 3.0, 4.0 * 0.25], rtol=1e-12)
