"""Real program structure: class-based models, methods calling methods, callable objects, functools.partial,
functions passed as values (an RK4 integrator), NamedTuple, dataclass and registered parameters, *args and
**kwargs. Every gradient is checked against central finite differences, in lazy and eager mode."""
from __future__ import annotations

import dataclasses
import functools
from typing import NamedTuple

import numpy as np
import pytest

import adsrc

MODES = pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
rng = np.random.default_rng(7)


def fd(f, x, eps=1e-6):
    """Central differences of a scalar function of one array."""
    x = np.array(x, dtype=float)
    g = np.zeros_like(x)
    for i in range(x.size):
        hi, lo = x.copy(), x.copy()
        hi.flat[i] += eps
        lo.flat[i] -= eps
        g.flat[i] = (f(hi) - f(lo)) / (2 * eps)
    return g


def close(a, b):
    np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)


# ---- a class-based MLP whose parameters live on self ---------------------------------------
class MLP:
    def __init__(self, W1, W2, activation="tanh"):
        self.W1, self.W2 = W1, W2
        self.activation = activation
        self.layers = 2

    def hidden(self, X):
        return np.tanh(X @ self.W1)

    def predict(self, X):
        return self.hidden(X) @ self.W2

    def loss(self, X, y):
        return np.sum((self.predict(X) - y) ** 2)


model = MLP(rng.normal(size=(3, 4)), rng.normal(size=(4, 2)))
X, Y = rng.normal(size=(5, 3)), rng.normal(size=(5, 2))


def with_W1(W):
    return MLP(W, model.W2).loss(X, Y)


def with_W2(W):
    return MLP(model.W1, W).loss(X, Y)


def loss_of_model(m, X, y):
    return m.loss(X, y)


@MODES
def test_bound_method_is_differentiated_with_respect_to_its_arguments(eager):
    dX = adsrc.grad(model.loss, eager=eager)(X, Y)
    close(dX, fd(lambda x: model.loss(x, Y), X))


@MODES
def test_gradient_with_respect_to_self_comes_back_as_the_model(eager):
    g = adsrc.grad(model.loss, wrt="self", eager=eager)(X, Y)
    assert type(g) is MLP and g is not model
    close(g.W1, fd(with_W1, model.W1))
    close(g.W2, fd(with_W2, model.W2))
    assert g.activation == "tanh" and g.layers == 2  # configuration is kept as it is
    assert g.W1 is not model.W1 and not np.shares_memory(g.W1, model.W1)


@MODES
def test_model_passed_to_a_function_and_unbound_method(eager):
    for func in (loss_of_model, MLP.loss):
        g = adsrc.grad(func, eager=eager)(model, X, Y)
        close(g.W1, fd(with_W1, model.W1))


def test_model_gradient_is_unchanged_input():
    before = model.W1.copy()
    adsrc.grad(MLP.loss)(model, X, Y)
    np.testing.assert_array_equal(model.W1, before)


def test_generated_code_names_the_methods():
    source = adsrc.adjoint_source(MLP.predict)
    assert "method='hidden'" in source and "# line" in source


def test_hessian_of_a_method_with_respect_to_its_argument():
    x = rng.normal(size=3)
    h = adsrc.hessian(lambda v: model.loss(v[None, :], Y[:1]))(x)
    expected = np.stack([fd(lambda v: adsrc.grad(lambda w: model.loss(w[None, :], Y[:1]))(v)[j], x)
                         for j in range(3)])
    np.testing.assert_allclose(h, expected, rtol=1e-4, atol=1e-6)


def test_jvp_through_methods_matches_the_gradient():
    t = rng.normal(size=X.shape)
    value, tangent = adsrc.jvp(loss_of_model, (model, X, Y), (None, t, None))
    close(tangent, np.sum(adsrc.grad(loss_of_model, wrt=1)(model, X, Y) * t))
    close(value, model.loss(X, Y))


# ---- callable objects and functools.partial ----------------------------------------------
class Dense:
    def __init__(self, W):
        self.W = W

    def __call__(self, x):
        return np.tanh(x @ self.W)


class Net:
    def __init__(self, first, second):
        self.first, self.second = first, second

    def __call__(self, x):
        return np.sum(self.second(self.first(x)))


net = Net(Dense(rng.normal(size=(3, 4))), Dense(rng.normal(size=(4, 1))))


@MODES
def test_callable_instances_as_layers(eager):
    g = adsrc.grad(net, wrt="self", eager=eager)(X)
    assert type(g) is Net and type(g.first) is Dense
    close(g.first.W, fd(lambda W: Net(Dense(W), net.second)(X), net.first.W))
    close(g.second.W, fd(lambda W: Net(net.first, Dense(W))(X), net.second.W))
    close(adsrc.grad(net, eager=eager)(X), fd(net, X))


def weighted(x, w, scale=1.0):
    return scale * np.sum(w * x ** 2)


@MODES
def test_partial(eager):
    w = rng.normal(size=4)
    x = rng.normal(size=4)
    f = functools.partial(weighted, w=w, scale=3.0)
    close(adsrc.grad(f, eager=eager)(x), fd(f, x))


# ---- functions passed as values ----------------------------------------------------------
def pendulum(y):
    return np.array([y[1], -np.sin(y[0])])


def rk4(f, y, h):
    k1 = f(y)
    k2 = f(y + h / 2 * k1)
    k3 = f(y + h / 2 * k2)
    k4 = f(y + h * k3)
    return y + h / 6 * (k1 + 2 * k2 + 2 * k3 + k4)


def simulate(y0, h, field=pendulum):
    y = y0
    for _ in range(20):
        y = rk4(field, y, h)
    return np.sum(y ** 2)


def decay(y):
    return -0.5 * y


@MODES
def test_rk4_with_the_vector_field_as_an_argument(eager):
    y0 = np.array([0.4, 0.1])
    close(adsrc.grad(simulate, eager=eager)(y0, 0.05), fd(lambda y: simulate(y, 0.05), y0))
    dh = adsrc.grad(simulate, wrt=1, eager=eager)(y0, 0.05)
    close(dh, (simulate(y0, 0.05 + 1e-6) - simulate(y0, 0.05 - 1e-6)) / 2e-6)
    close(adsrc.grad(simulate, eager=eager)(y0, 0.05, decay), fd(lambda y: simulate(y, 0.05, decay), y0))


def apply_all(fs, x):
    total = 0.0
    for f in fs:
        total = total + np.sum(f(x))
    return total


def apply_named(table, x):
    return np.sum(table["act"](x)) + np.sum(table["scale"](x))


@MODES
def test_functions_in_lists_and_dicts_primitives_included(eager):
    x = rng.normal(size=3)
    fs = [np.tanh, np.sin, decay, Dense(rng.normal(size=(3, 3)))]
    close(adsrc.grad(apply_all, wrt=1, eager=eager)(fs, x), fd(lambda v: apply_all(fs, v), x))
    table = {"act": np.tanh, "scale": decay}
    close(adsrc.grad(apply_named, wrt=1, eager=eager)(table, x), fd(lambda v: apply_named(table, v), x))


def spread(f, args):
    return np.sum(f(*args))


def forward_all(x, **options):
    return weighted(x, **options)


def two(a, b):
    return a * b + np.sin(a)


@MODES
def test_star_args_and_kwargs(eager):
    a, b = rng.normal(size=3), rng.normal(size=3)
    g = adsrc.grad(spread, wrt=1, eager=eager)(two, (a, b))
    close(g[0], fd(lambda v: spread(two, (v, b)), a))
    close(g[1], fd(lambda v: spread(two, (a, v)), b))
    w = rng.normal(size=3)
    close(adsrc.grad(forward_all, eager=eager)(a, w=w, scale=2.0), fd(lambda v: forward_all(v, w=w, scale=2.0), a))
    d = adsrc.grad(forward_all, wrt="options", eager=eager)(a, w=w, scale=2.0)
    close(d["w"], fd(lambda v: forward_all(a, w=v, scale=2.0), w))


def calls_missing_method(x):
    return np.sum(x.no_such_method())


def test_an_attribute_python_lacks_raises_what_python_raises():
    with pytest.raises(AttributeError, match="no_such_method"):
        adsrc.grad(calls_missing_method)(np.ones(2))


# ---- structured parameters -----------------------------------------------------------------
class Params(NamedTuple):
    W: np.ndarray
    b: np.ndarray


@dataclasses.dataclass
class Layer:
    W: np.ndarray
    b: np.ndarray
    name: str = "layer"


@dataclasses.dataclass(frozen=True)
class Frozen:
    W: np.ndarray
    b: np.ndarray


def affine_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


@MODES
@pytest.mark.parametrize("kind", [Params, Layer, Frozen], ids=["namedtuple", "dataclass", "frozen"])
def test_structured_parameters_come_back_in_their_own_type(kind, eager):
    p = kind(rng.normal(size=(3, 2)), rng.normal(size=2))
    g = adsrc.grad(affine_loss, eager=eager)(p, X)
    assert type(g) is kind
    close(g.W, fd(lambda W: affine_loss(kind(W, p.b), X), p.W))
    close(g.b, fd(lambda b: affine_loss(kind(p.W, b), X), p.b))


def builds_structures(W, b):
    p = Params(W, b=b)
    q = Layer(W * 2.0, b)
    return affine_loss(p, X) + affine_loss(q, X), p


def returns_structure(W, b):
    return builds_structures(W, b)[0]


@MODES
def test_structures_built_inside_the_function(eager):
    W, b = rng.normal(size=(3, 2)), rng.normal(size=2)
    close(adsrc.grad(returns_structure, eager=eager)(W, b), fd(lambda v: returns_structure(v, b), W))
    value, pullback = adsrc.vjp(builds_structures, W, b, eager=eager)
    assert isinstance(value[1], Params)
    d = pullback((1.0, Params(np.zeros_like(W), np.ones(2))))
    expected = fd(lambda v: returns_structure(v, b), W)
    close(d, expected)


class Keyed(dict):
    """A dict that reads its keys as attributes, as SciPy's OptimizeResult and OdeResult do."""

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None


def keyed_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p["b"]) ** 2) + np.sum(p.W[0])


@MODES
def test_a_dict_read_by_attribute_is_a_dict(eager):
    p = Keyed(W=rng.normal(size=(3, 2)), b=rng.normal(size=2))
    g = adsrc.grad(keyed_loss, eager=eager)(p, X)
    assert isinstance(g, dict) and set(g) == {"W", "b"}
    close(g["W"], fd(lambda W: keyed_loss(Keyed(W=W, b=p.b), X), p.W))
    close(g["b"], fd(lambda b: keyed_loss(Keyed(W=p.W, b=b), X), p.b))
    value, tangent = adsrc.jvp(keyed_loss, (p, X), ({"W": np.zeros((3, 2)), "b": np.ones(2)}, np.zeros_like(X)))
    close(tangent, np.sum(g["b"]))


class Affine:
    __slots__ = ("weights", "bias")

    def __init__(self, weights, bias):
        self.weights, self.bias = weights, bias


adsrc.register_pytree(Affine, lambda a: ((a.weights, a.bias), None), lambda aux, children: Affine(*children))


def registered_loss(a, x):
    return np.sum((x @ a.weights + a.bias) ** 2)


@MODES
def test_registered_pytree(eager):
    a = Affine(rng.normal(size=(3, 2)), rng.normal(size=2))
    g = adsrc.grad(registered_loss, eager=eager)(a, X)
    assert type(g) is Affine
    close(g.weights, fd(lambda W: registered_loss(Affine(W, a.bias), X), a.weights))
    close(g.bias, fd(lambda b: registered_loss(Affine(a.weights, b), X), a.bias))


def test_generated_code_reads_fields_by_name():
    source = adsrc.adjoint_source(affine_loss)
    assert "p.W" in source and "p.b" in source


# ---- the command line names methods --------------------------------------------------------
MODEL_FILE = '''
import numpy as np


class MLP:
    def __init__(self, W1, W2):
        self.W1, self.W2 = W1, W2

    def hidden(self, X):
        return np.tanh(X @ self.W1)

    def loss(self, X, y):
        return np.sum((self.hidden(X) @ self.W2 - y) ** 2)


model = MLP(np.ones((3, 4)) * 0.1, np.ones((4, 2)) * 0.2)
'''


def test_cli_takes_class_dot_method_and_object_dot_method(tmp_path):
    import os
    import subprocess
    import sys

    (tmp_path / "model.py").write_text(MODEL_FILE)
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    env = {**os.environ, "PYTHONPATH": root}

    def run(*args):
        out = subprocess.run([sys.executable, "-m", "adsrc", *args], capture_output=True, text=True, cwd=tmp_path,
                             env=env, timeout=120)
        assert out.returncode == 0, out.stderr
        return out.stdout

    assert "def loss_adjoint(self, X, y):" in run("dump", "model.py:MLP.loss")
    text = run("grad", "model.py:model.loss", "--wrt", "self", "--args", "np.ones((2, 3)), np.zeros((2, 2))")
    assert "dloss/dself.W1" in text and "dloss/dself.W2" in text
    text = run("grad", "model.py:model.loss", "--args", "np.ones((2, 3)), np.zeros((2, 2))")
    assert "dloss/dX" in text


# ---- a loss wrapped in a functools.wraps decorator -----------------------------------------
CALLS = []


def record(name):
    CALLS.append(name)


def logged(func):
    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        record(func.__name__)
        return func(*args, **kwargs)
    return wrapper


def scaled(factor):
    def decorate(func):
        @functools.wraps(func)
        def wrapper(*args, **kwargs):
            return factor * func(*args, **kwargs)
        return wrapper
    return decorate


@logged
def wrapped_loss(w, x, scale=2.0):
    return scale * np.sum(np.tanh(x @ w) ** 2)


@scaled(3.0)
@logged
def doubly_wrapped(w, x):
    return np.sum(np.sin(x @ w))


def calls_wrapped(w, x):
    return wrapped_loss(w, x) + doubly_wrapped(w, x=x)


@MODES
@pytest.mark.parametrize("func", [wrapped_loss, doubly_wrapped, calls_wrapped], ids=lambda f: f.__name__)
def test_functools_wraps_decorators(func, eager):
    w, x = rng.normal(size=(3, 2)), rng.normal(size=(4, 3))
    del CALLS[:]
    close(adsrc.grad(func, eager=eager)(w, x), fd(lambda v: func(v, x), w))
    assert CALLS, "the decorator's own code ran"
    close(adsrc.grad(func, wrt="x", eager=eager)(w, x), fd(lambda v: func(w, v), x))


def test_hessian_and_jvp_of_a_decorated_loss():
    w, x = rng.normal(size=(2, 1)), rng.normal(size=(3, 2))
    h = adsrc.hessian(wrapped_loss)(w, x)
    g = adsrc.grad(wrapped_loss)
    expected = np.stack([fd(lambda v: g(v, x)[i, 0], w) for i in range(2)])
    np.testing.assert_allclose(h.reshape(2, 2), expected.reshape(2, 2), rtol=1e-4, atol=1e-6)
    t = rng.normal(size=w.shape)
    _, tangent = adsrc.jvp(wrapped_loss, (w, x), (t, None))
    close(tangent, np.sum(g(w, x) * t))


# ---- a gradient called inside a differentiated function ------------------------------------
def inner_energy(x):
    return np.sum(np.sin(x) * x ** 2)


def gradient_norm(x):
    force = adsrc.grad(inner_energy)
    return np.sum(force(x) ** 2)


@MODES
def test_grad_called_inside_a_differentiated_function(eager):
    x = np.array([0.3, 0.8, -0.4])
    close(adsrc.grad(gradient_norm, eager=eager)(x), fd(gradient_norm, x))
    t = rng.normal(size=3)
    close(adsrc.jvp(gradient_norm, (x,), (t,))[1], np.sum(fd(gradient_norm, x) * t))


# ---- sorted, min and max with key= ---------------------------------------------------------
def distance(v):
    return abs(v - 0.5)


def ranked(x):
    xs = [x[0], x[1] * 2.0, x[2]]
    ys = sorted(xs, key=distance)
    far = max(xs, key=lambda v: abs(v - 0.5))
    near = min(xs, key=distance)  # a tie by key: Python returns the first, and only it won
    return ys[0] * 3.0 + ys[2] + far * 5.0 + near * 7.0 + sum(sorted(x, reverse=True)[:2])


@MODES
def test_sorted_min_max_with_key(eager):
    x = np.array([0.1, 0.7, 0.9])
    expected = np.array([3.0 + 7.0, 2.0 * (1.0 + 5.0), 0.0]) + np.array([0.0, 1.0, 1.0])
    close(adsrc.grad(ranked, eager=eager)(x), expected)
    x = np.array([0.2, 0.45, 1.3])  # no ties: finite differences apply
    close(adsrc.grad(ranked, eager=eager)(x), fd(ranked, x))


# ---- map, consumed at once ----------------------------------------------------------------
def square(v):
    return v * v


def mapped(x, W):
    a = sum(map(square, [x[0], x[1]]))
    b = sum(map(np.multiply, [x[0], x[1]], [x[2], x[2]]))  # several iterables: zip's shortest
    c = max(map(square, x))
    return a + b * 3.0 + c + sum(sorted(map(np.sin, W[0]))[:2])


@MODES
def test_map_consumed_at_once(eager):
    x, W = np.array([0.3, -0.2, 0.5]), rng.normal(size=(3, 3))
    dx, dW = adsrc.grad(mapped, wrt=(0, 1), eager=eager)(x, W)
    close(dx, fd(lambda v: mapped(v, W), x))
    close(dW, fd(lambda v: mapped(x, v), W))
    assert "item" in adsrc.adjoint_source(mapped)  # the comprehension's variable


# ---- staticmethod and classmethod ---------------------------------------------------------
class Scaled:
    factor = 3.0

    def __init__(self, w):
        self.w = w

    @staticmethod
    def squash(v):
        return np.tanh(v) * 2.0

    @classmethod
    def scale(cls, v):
        return v * cls.factor

    def loss(self, x):
        return np.sum(self.squash(self.w * x) + self.scale(x) * self.w)


@MODES
def test_staticmethods_and_classmethods(eager):
    obj, x = Scaled(rng.normal(size=3)), rng.normal(size=3)
    close(adsrc.grad(obj.loss, eager=eager)(x), fd(obj.loss, x))
    g = adsrc.grad(obj.loss, wrt="self", eager=eager)(x)
    close(g.w, fd(lambda w: Scaled(w).loss(x), obj.w))
    close(adsrc.grad(Scaled.scale, eager=eager)(x[0]), 3.0)
    close(adsrc.grad(squashed, eager=eager)(x), fd(squashed, x))


def squashed(v):
    return np.sum(Scaled.squash(v))


# ---- second order and Jacobians over structures ---------------------------------------------
def small_loss(p, x):
    return np.sum(np.tanh(x @ p.W + p.b) ** 2)


@pytest.mark.parametrize("kind", [Params, Layer], ids=["namedtuple", "dataclass"])
def test_hessian_and_jacobian_over_structures(kind):
    p = kind(rng.normal(size=(2, 1)), rng.normal(size=1))
    x = rng.normal(size=(3, 2))
    h = adsrc.hessian(small_loss)(p, x)
    g = adsrc.grad(small_loss)

    def grad_W(W):
        return g(kind(W, p.b), x).W

    expected = np.stack([fd(lambda W: grad_W(W)[i, 0], p.W).ravel() for i in range(2)])
    np.testing.assert_allclose(np.asarray(h.W.W).reshape(2, 2), expected, rtol=1e-4, atol=1e-6)
    jac = adsrc.jacobian(lambda q: np.tanh(x @ q.W + q.b))(p)  # noqa: E731
    assert np.shape(jac.W) == (3, 1, 2, 1)


def through_parameter(f, x):
    return np.sum(f(x) ** 2)


@MODES
def test_checkpointed_function_passed_as_a_value(eager):
    x = rng.normal(size=3)
    f = adsrc.checkpoint(decay)
    close(adsrc.grad(through_parameter, wrt=1, eager=eager)(f, x), fd(lambda v: through_parameter(f, v), x))


def replaced(W, b, x):
    p = Params(W, b)
    for _ in range(3):
        p = p._replace(W=p.W * 0.9 + 0.1, b=np.tanh(p.b))
    q = p._replace(b=p.b * 2.0)
    return small_loss(q, x)


@MODES
def test_namedtuple_replace(eager):
    W, b, x = rng.normal(size=(2, 1)), rng.normal(size=1), rng.normal(size=(3, 2))
    dW, db = adsrc.grad(replaced, wrt=(0, 1), eager=eager)(W, b, x)
    close(dW, fd(lambda v: replaced(v, b, x), W))
    close(db, fd(lambda v: replaced(W, v, x), b))
    t = rng.normal(size=W.shape)
    close(adsrc.jvp(replaced, (W, b, x), (t, None, None))[1], np.sum(dW * t))


# ---- inheritance and super() ----------------------------------------------------------------
class Base:
    def __init__(self, w):
        self.w = w

    def energy(self, x):
        return np.sum(np.sin(self.w * x))


class Derived(Base):
    def energy(self, x):
        return super().energy(x) * 2.0 + np.sum(self.w ** 2)


@MODES
def test_super_in_a_method(eager):
    obj, x = Derived(rng.normal(size=3)), rng.normal(size=3)
    close(adsrc.grad(obj.energy, eager=eager)(x), fd(obj.energy, x))
    g = adsrc.grad(obj.energy, wrt="self", eager=eager)(x)
    assert type(g) is Derived
    close(g.w, fd(lambda w: Derived(w).energy(x), obj.w))
    t = rng.normal(size=3)
    close(adsrc.jvp(obj.energy, (x,), (t,))[1], np.sum(fd(obj.energy, x) * t))


def total_energy(**parts):
    return sum(np.sum(v * v) for v in parts.values())


def named_parts(x):
    return total_energy(a=x, b=x * 2.0)


@MODES
def test_a_kwargs_function_called_by_name_with_differentiable_keywords(eager):
    x = rng.normal(size=2)
    close(adsrc.grad(named_parts, eager=eager)(x), 10.0 * x)
    close(adsrc.jvp(named_parts, (x,), (np.array([1.0, 0.0]),))[1], 10.0 * x[0])
