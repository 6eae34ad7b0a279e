"""The generated adjoint module is self-contained Python.

Each test writes ``adsrc.adjoint_source(f)`` to a .py file, with nothing in
front of it: the header imports what the function reads from outside
(``import numpy as np``, ``from user_module import helper``). It imports that file as an ordinary module,
runs ``<name>_adjoint(*args)`` and its pullback, and checks that it gets the
same value and gradients as ``adsrc.value_and_grad``.
"""
import importlib.util
import itertools
import os
import sys
import textwrap

import numpy as np
import pytest

import adsrc
from adsrc.values.containers import CONTAINERS

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
_serial = itertools.count()

# A user module with a helper function, a global constant and several import styles.
USER_MODULE = '''
import math
import numpy as np
from numpy import tanh

SCALE = 3.0


def helper(x):
    return np.sin(x) * SCALE


def g(x, y):
    return np.sum(helper(x) * y) + math.exp(1.0) * np.sum(tanh(y))


def branchy(x, n):
    total = 0.0
    i = 0
    while i < n:
        if i % 2 == 0:
            total = total + np.sum(x * x)
        else:
            total = total - np.sum(np.cos(x))
        i += 1
    return total
'''


def import_file(path):
    name = f"adsrc_selfcontained_{next(_serial)}_{os.path.splitext(os.path.basename(path))[0]}"
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def materialize(gradient):
    """A pullback's raw output with every thunk materialized (containers leaf by leaf)."""
    gradient = adsrc.unthunk(gradient)
    if isinstance(gradient, dict):
        return {k: materialize(v) for k, v in gradient.items()}
    if isinstance(gradient, CONTAINERS):
        return [materialize(v) for v in gradient]
    return gradient


def assert_same(got, expected):
    if isinstance(expected, dict):
        for key, value in expected.items():
            assert_same(got.get(key, adsrc.zero) if isinstance(got, dict) else got[key], value)
    elif isinstance(expected, CONTAINERS):
        for i, value in enumerate(expected):
            assert_same(adsrc.zero if got is adsrc.zero else got[i], value)
    elif got is adsrc.zero:
        assert np.all(np.asarray(expected) == 0)
    else:
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def run_standalone(tmp_path, func, args, wrt, eager, imports=""):
    """Write the adjoint module with ``imports`` in front, import it, run it; return (value, grads)."""
    source = adsrc.adjoint_source(func, wrt, eager=eager)
    path = tmp_path / f"{func.__name__}_adjoint_{'eager' if eager else 'lazy'}.py"
    path.write_text(textwrap.dedent(imports) + source)
    module = import_file(str(path))
    adjoint = getattr(module, f"{func.__name__}_adjoint")
    value, pullback = adjoint(*args)
    grads = pullback(1.0)
    assert isinstance(grads, tuple) and len(grads) == (len(wrt) if isinstance(wrt, tuple) else 1)
    return value, [materialize(g) for g in grads]


def check_standalone(tmp_path, func, args, wrt, eager, imports=""):
    value, grads = run_standalone(tmp_path, func, args, wrt, eager, imports)
    expected_value, expected = adsrc.value_and_grad(func, wrt, eager=eager)(*args)
    expected = expected if isinstance(wrt, tuple) else (expected,)
    np.testing.assert_allclose(value, expected_value, rtol=1e-12)
    assert len(grads) == len(expected)
    for got, want in zip(grads, expected):
        assert_same(got, want)


@pytest.fixture(scope="module")
def examples():
    sys.path.insert(0, EXAMPLES)
    try:
        import loop_accumulate
        import mlp_training
        import regression
        import rnn
        import spring_system
        yield {"loop": loop_accumulate, "regression": regression, "mlp": mlp_training,
               "rnn": rnn, "spring": spring_system}
    finally:
        sys.path.remove(EXAMPLES)


@pytest.fixture(scope="module")
def user_module(tmp_path_factory):
    directory = tmp_path_factory.mktemp("user")
    (directory / "selfcontained_user.py").write_text(USER_MODULE)
    sys.path.insert(0, str(directory))
    try:
        import selfcontained_user
        yield selfcontained_user
    finally:
        sys.path.remove(str(directory))
        sys.modules.pop("selfcontained_user", None)


@pytest.mark.parametrize("eager", [False, True])
def test_loop_example_needs_no_imports_at_all(tmp_path, examples, eager):
    W = np.arange(9.0).reshape(3, 3) / 10
    x = [np.linspace(-1.0, 1.0, 3) * (i + 1) for i in range(7)]
    check_standalone(tmp_path, examples["loop"].f, (W, x), 0, eager)


@pytest.mark.parametrize("eager", [False, True])
def test_regression_with_numpy_import(tmp_path, examples, eager):
    rng = np.random.default_rng(0)
    args = (rng.normal(size=(2, 10)), rng.normal(size=(10, 20)))
    check_standalone(tmp_path, examples["regression"].f, args, (0, 1), eager)


@pytest.mark.parametrize("eager", [False, True])
def test_rnn_loop_with_tape(tmp_path, examples, eager):
    rnn = examples["rnn"]
    args = rnn.make_problem(seed=3, steps=6)
    check_standalone(tmp_path, rnn.rnn_loss, args, (0, 1, 2, 3), eager)


@pytest.mark.parametrize("eager", [False, True])
def test_mlp_tuple_of_parameters(tmp_path, examples, eager):
    mlp = examples["mlp"]
    rng = np.random.default_rng(1)
    X = np.linspace(-1.0, 1.0, 8).reshape(1, -1)
    args = (mlp.init(rng, n_hidden=5), X, np.sin(X))
    check_standalone(tmp_path, mlp.loss, args, 0, eager)


@pytest.mark.parametrize("eager", [False, True])
def test_spring_simulation_with_module_globals(tmp_path, examples, eager):
    spring = examples["spring"]
    n = spring.N
    args = (np.linspace(0.1, 0.4, n), 20.0, np.linspace(1.0, 2.0, n), spring.difference_matrix(n))
    check_standalone(tmp_path, spring.loss, args, (0, 1), eager)


@pytest.mark.parametrize("eager", [False, True])
def test_user_helper_constants_and_import_styles(tmp_path, user_module, eager):
    rng = np.random.default_rng(2)
    args = (rng.normal(size=4), rng.normal(size=4))
    check_standalone(tmp_path, user_module.g, args, (0, 1), eager)


@pytest.mark.parametrize("eager", [False, True])
def test_while_loop_and_branches(tmp_path, user_module, eager):
    args = (np.array([0.5, -1.0, 2.0]), 5)
    check_standalone(tmp_path, user_module.branchy, args, 0, eager)

