"""adsrc.optimizers: each update rule against the same rule written out here leaf by leaf in NumPy, the
autograd calling convention (grad(x, i), callback(x, i, g), num_iters), the stateful form, and real
training runs (an MLP with adam, logistic regression with sgd) whose gradients are checked too."""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument
from adsrc.optimizers import SGD, Adam, RMSProp, adam, apply_updates, rmsprop, sgd
from gradcheck import check


def start():
    return {"layer": (np.array([[0.5, -1.0, 0.25], [2.0, 0.3, -0.7]]), np.array([0.1, -0.2, 0.3])),
            "rest": [np.array(0.8), 1.5]}


def fake_grad(x, i):
    """A gradient that depends on the parameters and on the iteration, of x's structure."""
    return adsrc.tree_map(lambda leaf: np.sin(leaf) + 0.1 * (i + 1) * leaf, x)


# The rules, written out independently, one leaf at a time.
def hand_sgd(leaves, grads, state, i, step_size, mass):
    state = state or [np.zeros_like(np.asarray(p, float)) for p in leaves]
    state = [mass * v - (1 - mass) * g for v, g in zip(state, grads)]
    return [p + step_size * v for p, v in zip(leaves, state)], state


def hand_rmsprop(leaves, grads, state, i, step_size, gamma, eps):
    state = state or [np.ones_like(np.asarray(p, float)) for p in leaves]
    state = [gamma * r + (1 - gamma) * g * g for r, g in zip(state, grads)]
    return [p - step_size * g / (np.sqrt(r) + eps) for p, g, r in zip(leaves, grads, state)], state


def hand_adam(leaves, grads, state, i, step_size, b1, b2, eps):
    ms, vs = state or ([np.zeros_like(np.asarray(p, float)) for p in leaves],) * 2
    ms = [b1 * m + (1 - b1) * g for m, g in zip(ms, grads)]
    vs = [b2 * v + (1 - b2) * g * g for v, g in zip(vs, grads)]
    t = i + 1
    out = [p - step_size * (m / (1 - b1 ** t)) / (np.sqrt(v / (1 - b2 ** t)) + eps) for p, m, v in zip(leaves, ms, vs)]
    return out, (ms, vs)


RULES = [
    (sgd, hand_sgd, dict(step_size=0.3, mass=0.8)),
    (rmsprop, hand_rmsprop, dict(step_size=0.05, gamma=0.7, eps=1e-8)),
    (adam, hand_adam, dict(step_size=0.02, b1=0.8, b2=0.95, eps=1e-8)),
]


@pytest.mark.parametrize("optimizer,hand,options", RULES, ids=["sgd", "rmsprop", "adam"])
def test_each_step_is_the_update_rule_and_the_callback_sees_x_i_and_g(optimizer, hand, options):
    x0 = start()
    before = [np.array(leaf, copy=True) for leaf in adsrc.tree_leaves(x0)]
    seen, returned = [], []

    def gradient(x, i):
        g = fake_grad(x, i)
        returned.append(g)
        return g

    def callback(x, i, g):
        seen.append((adsrc.tree_map(np.copy, x), i, g))

    out = optimizer(gradient, x0, callback=callback, num_iters=6, **options)
    # the same run by hand, leaf by leaf
    leaves, structure = adsrc.tree_flatten(x0)
    leaves = [np.asarray(p, float) for p in leaves]
    state = None
    for i in range(6):
        x, i_seen, g_seen = seen[i]
        assert i_seen == i and g_seen is returned[i]
        for a, b in zip(adsrc.tree_leaves(x), leaves):
            np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
        grads = [np.asarray(g, float) for g in adsrc.tree_leaves(fake_grad(structure.unflatten(leaves), i))]
        leaves, state = hand(leaves, grads, state, i, **options)
    assert len(seen) == len(returned) == 6
    assert adsrc.tree_structure(out) == structure and type(out["rest"][1]) is float
    for a, b in zip(adsrc.tree_leaves(out), leaves):
        assert np.shape(a) == np.shape(b)
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)
    for a, b in zip(adsrc.tree_leaves(x0), before):  # x0 is not modified
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("optimizer", [sgd, rmsprop, adam])
def test_num_iters_is_respected(optimizer):
    calls = []
    out = optimizer(lambda x, i: calls.append(i) or fake_grad(x, i), start(), num_iters=4)
    assert calls == [0, 1, 2, 3]
    assert adsrc.tree_structure(out) == adsrc.tree_structure(start())
    untouched = optimizer(lambda x, i: calls.append(i), start(), num_iters=0)
    for a, b in zip(adsrc.tree_leaves(untouched), adsrc.tree_leaves(start())):
        np.testing.assert_array_equal(a, b)
    assert calls == [0, 1, 2, 3]
    with pytest.raises(InvalidArgument, match="num_iters"):
        optimizer(fake_grad, start(), num_iters=-1)


@pytest.mark.parametrize("optimizer,stateful", [(sgd, SGD(0.3, 0.8)), (rmsprop, RMSProp(0.05, 0.7)),
                                                (adam, Adam(0.02, 0.8, 0.95))])
def test_the_stateful_form_takes_the_same_steps(optimizer, stateful):
    params = start()
    state = stateful.init(params)
    for i in range(5):
        updates, state = stateful.update(fake_grad(params, i), state, params)
        assert adsrc.tree_structure(updates) == adsrc.tree_structure(params)
        params = apply_updates(params, updates)
    assert state.count == 5 and all(v.dtype == np.float64 for v in state.vectors.values())
    options = {k: v for k, v in vars(stateful).items()}
    looped = optimizer(fake_grad, start(), num_iters=5, **options)
    for a, b in zip(adsrc.tree_leaves(params), adsrc.tree_leaves(looped)):
        np.testing.assert_allclose(a, b, rtol=1e-12, atol=1e-14)


def test_float32_parameters_keep_their_dtype_and_a_float64_state():
    x0 = {"w": np.array([1.0, -2.0], dtype=np.float32)}
    dtypes = []
    out = adam(lambda x, i: dtypes.append(x["w"].dtype) or {"w": 2 * x["w"]}, x0, step_size=0.1, num_iters=50)
    assert out["w"].dtype == np.float32 and set(dtypes) == {np.dtype(np.float32)}
    assert np.all(np.abs(out["w"]) < np.abs(x0["w"]))


def test_a_zero_gradient_leaf_and_complex_parameters():
    def only_a(x, i):
        return {"a": 2 * x["a"], "b": adsrc.zero}
    out = sgd(only_a, {"a": np.array([1.0]), "b": np.array([5.0])}, num_iters=20)
    assert out["b"][0] == 5.0 and abs(out["a"][0]) < 1.0
    with pytest.raises(InvalidArgument, match="real parameters"):
        adam(fake_grad, {"z": np.array([1.0 + 1j])}, num_iters=1)


# ---- real runs ------------------------------------------------------------------------
RNG = np.random.default_rng(0)
INPUTS = RNG.uniform(-2.0, 2.0, size=(64, 2))
TARGETS = np.sin(INPUTS[:, :1]) * np.cos(INPUTS[:, 1:])


def init_mlp(rng, sizes=(2, 16, 1)):
    return {"W1": rng.normal(0.0, 1.0 / np.sqrt(sizes[0]), (sizes[0], sizes[1])), "b1": np.zeros(sizes[1]),
            "W2": rng.normal(0.0, 1.0 / np.sqrt(sizes[1]), (sizes[1], sizes[2])), "b2": np.zeros(sizes[2])}


def mlp_loss(params, inputs, targets):
    hidden = np.tanh(inputs @ params["W1"] + params["b1"])
    outputs = hidden @ params["W2"] + params["b2"]
    return np.mean((outputs - targets) ** 2)


def test_an_mlp_trained_with_adam_reduces_its_loss_by_a_large_factor():
    params = init_mlp(np.random.default_rng(1))
    flat, unravel = adsrc.ravel_pytree(params)
    check(lambda v: mlp_loss(unravel(v), INPUTS[:8], TARGETS[:8]), flat)  # the gradient adam follows
    gradient = adsrc.grad(mlp_loss)
    losses = []

    def record(p, i, g):
        losses.append(mlp_loss(p, INPUTS, TARGETS))

    trained = adam(lambda p, i: gradient(p, INPUTS, TARGETS), params, callback=record, step_size=0.03,
                   num_iters=400)
    final = mlp_loss(trained, INPUTS, TARGETS)
    assert losses[0] == pytest.approx(mlp_loss(params, INPUTS, TARGETS))
    assert final < losses[0] / 20, (losses[0], final)
    with adsrc.eager_unthunk():  # eager accumulation follows the same path
        eager = adam(lambda p, i: gradient(p, INPUTS, TARGETS), params, step_size=0.03, num_iters=20)
    lazy = adam(lambda p, i: gradient(p, INPUTS, TARGETS), params, step_size=0.03, num_iters=20)
    for a, b in zip(adsrc.tree_leaves(eager), adsrc.tree_leaves(lazy)):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


FEATURES = np.hstack([RNG.normal(size=(200, 2)), np.ones((200, 1))])
LABELS = (FEATURES @ np.array([2.0, -1.0, 0.5]) + 0.3 * RNG.normal(size=200) > 0).astype(float)


def logistic_loss(w, features, labels):
    logits = features @ w
    return np.mean(np.logaddexp(0.0, logits) - labels * logits)


def test_logistic_regression_with_sgd():
    w0 = np.zeros(3)
    gradient = adsrc.grad(logistic_loss)
    for eager in (False, True):  # the gradient against the formula X^T (sigmoid(Xw) - y) / n
        w = np.array([0.3, -0.2, 0.1])
        expected = FEATURES.T @ (1 / (1 + np.exp(-FEATURES @ w)) - LABELS) / len(LABELS)
        np.testing.assert_allclose(adsrc.grad(logistic_loss, eager=eager)(w, FEATURES, LABELS), expected,
                                   rtol=1e-12)
    check(logistic_loss, np.array([0.3, -0.2, 0.1]), FEATURES[:20], LABELS[:20])
    w = sgd(lambda w, i: gradient(w, FEATURES, LABELS), w0, step_size=0.5, num_iters=300)
    assert logistic_loss(w, FEATURES, LABELS) < 0.5 * logistic_loss(w0, FEATURES, LABELS)
    accuracy = np.mean((FEATURES @ w > 0) == (LABELS > 0))
    assert accuracy > 0.85, accuracy
    assert np.all(w0 == 0.0)
