"""Generators, map over a lambda and functools.reduce over Python code, in the differentiated function.

Each accepted program gives Python's value and a gradient checked against central finite differences in
float64, lazy and eager (gradcheck.check); each refused one is refused before it runs, naming its line.
"""
from __future__ import annotations

import functools

import numpy as np
import pytest

import adsrc
from adsrc.errors import AdsrcError, UnsupportedSyntax
from gradcheck import check

RNG = np.random.default_rng(24)
W = RNG.standard_normal(12)
X = RNG.standard_normal((2, 2))


# ---- generator functions ------------------------------------------------------------------------------
def layers(flat, sizes=((2, 2), (2, 1))):
    """Yields (weights, bias) of each layer, cutting them from the front of ``flat`` (which it rebinds)."""
    for m, n in sizes:
        yield flat[:m * n].reshape(m, n), flat[m * n:m * n + n]
        flat = flat[(m + 1) * n:]


def predict_with_module_generator(flat, x):
    for weights, bias in layers(flat):
        x = np.tanh(x @ weights + bias)
    return np.sum(x ** 2)


def predict_with_local_generator(flat, x):
    def pairs(v):
        for i in range(0, 6, 2):
            yield v[i], v[i + 1]
        yield from [v[6], v[7]]

    total = 0.0
    for a, b in zip(pairs(flat), range(3)):
        total = total + np.sin(a[0] if np.ndim(a) else a) * b
    return total + sum(np.cos(t) if np.ndim(t) == 0 else t[0] for t in pairs(flat)) + np.sum(x)


def stacked_from_generator(flat, x):
    kept = list(layers(flat))
    first, second = kept
    return np.sum(np.tanh(x @ first[0] + first[1]) @ second[0]) + len(kept)


def summed_generator(flat, x):
    return sum(np.sum(w ** 2) + np.sum(b) for w, b in layers(flat)) * np.sum(x)


def scaled_layers(flat, scale):  # a module-level generator over another one
    for weights, bias in layers(flat):
        yield weights * scale, bias


def all_layers_then_extra(flat):
    yield from scaled_layers(flat, 0.5)
    yield flat[:4].reshape(2, 2), flat[4:6]


def predict_through_generators_of_generators(flat, x):
    h = x
    for weights, bias in scaled_layers(flat, 2.0):
        h = np.tanh(h @ weights + bias)
    return np.sum(h ** 2) + sum(np.sum(w * b[0]) for w, b in all_layers_then_extra(flat))


@pytest.mark.parametrize("f", [predict_with_module_generator, predict_with_local_generator,
                               stacked_from_generator, summed_generator, predict_through_generators_of_generators])
def test_generators_give_pythons_value_and_the_gradient(f):
    check(f, W, X, wrt=(0, 1))


def endless(v):
    i = 0
    while True:
        yield v[i % 3]
        i = i + 1


def uses_endless(v):
    total = 0.0
    for item, _ in zip(endless(v), range(4)):
        total = total + item
    return total


def keeps_the_generator(v):
    items = layers(v)
    return np.sum(next(items)[0])


def yield_as_value(v):
    def echo(u):
        got = yield u
        yield got
    return sum(echo(v))


def early_return(v):
    def upto(u):
        for t in u:
            if t > 0:
                return
            yield t
    return sum(upto(v))


@pytest.mark.parametrize("f, message", [
    (uses_endless, "a while loop in the generator endless"),
    (keeps_the_generator, "the generator layers"),
    (yield_as_value, "yield used as a value"),
    (early_return, "a return in the generator upto before its end"),
])
def test_generators_that_running_to_the_end_would_change_are_refused(f, message):
    with pytest.raises(UnsupportedSyntax, match=message) as caught:
        adsrc.grad(f)(W[:3])
    assert f"{__file__}:" in str(caught.value)


# ---- map over a lambda ---------------------------------------------------------------------------------
def sum_of_mapped_lambda(ws, x):
    scale = 3.0
    return sum(map(lambda t: np.sum(np.sin(t * x) * scale), ws))


def two_iterables(ws, x):
    return max(map(lambda a, b: np.sum(a * b), ws, [x, 2.0 * x])) + sum(list(map(lambda w: np.sum(w), ws)))


@pytest.mark.parametrize("f", [sum_of_mapped_lambda, two_iterables])
def test_map_over_a_lambda_consumed_at_once(f):
    ws = RNG.standard_normal((2, 2, 2))
    check(f, ws, X, wrt=(0, 1))


# ---- functools.reduce ----------------------------------------------------------------------------------
def layer(h, w):
    return np.tanh(h @ w)


def reduce_with_lambda(ws, x):
    shift = 0.5
    return np.sum(functools.reduce(lambda h, w: np.tanh(h @ w + shift), ws, x))


def reduce_with_local_function(ws, x):
    def step(h, w):
        return np.sin(h @ w) * 2.0
    return np.sum(functools.reduce(step, list(ws), x) ** 2)


def reduce_with_module_function(ws, x):
    out = functools.reduce(layer, ws, x) if np.sum(x) > -100.0 else x
    return np.sum(out ** 3)


@pytest.mark.parametrize("f", [reduce_with_lambda, reduce_with_local_function, reduce_with_module_function])
def test_reduce_over_python_code_is_the_loop_it_runs(f):
    ws = RNG.standard_normal((3, 2, 2)) * 0.8
    check(f, ws, X, wrt=(0, 1))


def reduce_without_initial(ws, x):
    return np.sum(functools.reduce(lambda a, b: a * b, ws)) * np.sum(x)


def reduce_without_initial_over_a_list(ws, x):
    rows = [np.sin(x[0]) * w for w in ws]
    return np.sum(functools.reduce(layer, [x] + rows))


@pytest.mark.parametrize("f", [reduce_without_initial, reduce_without_initial_over_a_list])
def test_reduce_without_an_initial_value_starts_from_the_first_item(f):
    check(f, RNG.standard_normal((3, 2, 2)) * 0.8, X, wrt=(0, 1))


def reduce_of_nothing(ws, x):
    return functools.reduce(lambda a, b: a + b, ws[:0]) + np.sum(x)


def test_reduce_of_an_empty_iterable_raises_pythons_type_error():
    with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
        reduce_of_nothing(RNG.standard_normal((3, 2)), X)
    for eager in (False, True):
        with pytest.raises(TypeError, match="reduce\\(\\) of empty iterable with no initial value"):
            adsrc.grad(reduce_of_nothing, wrt=1, eager=eager)(RNG.standard_normal((3, 2)), X)


# ---- functools.partial ---------------------------------------------------------------------------------
def scaled(a, x, power=2.0, shift=0.0):
    return a * np.sin(x) ** power + shift


def partial_of_module_function(w, x):
    f = functools.partial(scaled, w[0], power=3.0, shift=w[1])
    return np.sum(f(x)) + np.sum(f(x * 2.0, shift=1.0))


def partial_of_local_function(w, x):
    def affine(a, b, z):
        return a * z + b
    total = 0.0
    for k in range(2):
        g = functools.partial(affine, w[k], w[k + 2])
        total = total + np.sum(np.tanh(g(x)))
    return total


def partial_of_a_lambda(w, x):
    wave = lambda z, c, p=1.0: np.sin(z * p) * c  # noqa: E731
    g = functools.partial(wave, c=w[0])
    return np.sum(g(x)) + np.sum(g(x, p=w[1]))


@pytest.mark.parametrize("f", [partial_of_module_function, partial_of_local_function, partial_of_a_lambda])
def test_a_partial_only_called_is_the_call_it_makes(f):
    check(f, W, X, wrt=(0, 1))


def partial_passed_on(w, x):
    f = functools.partial(scaled, w[0])
    return np.sum(list(map(f, [x, x]))[0]) + np.sum(apply(f, x))


def apply(f, x):
    return f(x)


def test_a_partial_used_as_a_value_is_refused():
    with pytest.raises(AdsrcError, match=r"functools.partial; a partial is differentiated where it is bound once.*"
                                         r"pass `lambda x: f\(a, x, k=v\)`") as caught:
        adsrc.grad(partial_passed_on)(W, X)
    assert f"{__file__}:" in str(caught.value)


def _pieces(x):
    yield x * 2.0
    yield x


def _sum_of_pieces(x):
    return sum(np.sum(p) for p in _pieces(x))


def test_a_module_generator_rebound_compiles_again():
    """The generator's code is copied into the adjoint: rebinding its name must not leave a stale gradient."""
    global _pieces
    saved = _pieces
    g = adsrc.grad(_sum_of_pieces)
    assert np.array_equal(g(np.ones(2)), [3.0, 3.0])

    def _pieces(x):  # noqa: F811
        yield x * 7.0
    try:
        assert np.array_equal(g(np.ones(2)), [7.0, 7.0])
        assert np.array_equal(adsrc.grad(_sum_of_pieces, eager=True)(np.ones(2)), [7.0, 7.0])
    finally:
        _pieces = saved


# ---- for a, b in zip(*xs): as many sequences as the target has names ---------------------------------
def split_layers(flat):
    """All the weight matrices, then all the biases, as zip(*...) in the loop below takes them."""
    return [[flat[:4].reshape(2, 2), flat[6:10].reshape(2, 2)], [flat[4:6], flat[10:12]]]


def predict_zipped(flat, x):
    for weights, bias in zip(*split_layers(flat)):
        x = np.tanh(x @ weights + bias)
    return np.sum(x ** 2)


def zipped_rows(m):
    total = 0.0
    for a, b, c in zip(*m):   # the rows of m, column by column
        total = total + a * np.sin(b) - c ** 2
    return total


def zipped_none(v, parts):
    total = np.sum(v)
    for a, b in zip(*parts):
        total = total + a * b
    return total


@pytest.mark.parametrize("f, args", [(predict_zipped, (W, X)), (zipped_rows, (RNG.standard_normal((3, 4)),))],
                         ids=["layers", "rows"])
def test_a_loop_over_zip_of_a_starred_value_zips_as_many_as_its_target_names(f, args):
    check(f, *args)
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(*args)[0] == f(*args)


def test_zip_of_a_starred_value_that_zips_no_step_runs_no_step_and_a_wrong_count_raises_pythons_error():
    v = RNG.standard_normal(3)
    for parts in ([], [[], [1.0, 2.0], [3.0]]):  # no sequence, or one of three empty: zip yields nothing
        assert adsrc.value_and_grad(zipped_none)(v, parts) == (zipped_none(v, parts), pytest.approx(np.ones(3)))
    for parts in ([[1.0], [2.0], [3.0]], [[1.0, 2.0]]):
        with pytest.raises(ValueError) as python:
            zipped_none(v, parts)
        with pytest.raises(ValueError) as ours:
            adsrc.grad(zipped_none)(v, parts)
        assert str(ours.value) == str(python.value)


# ---- zip(*xs) consumed where it is made, into one name, a list or an unpacking -----------------------
def one_name_per_step(flat):
    xs = [flat[:3], flat[3:6] * 2.0, np.cos(flat[6:9])]
    total = 0.0
    for step in zip(*xs):
        total = total + step[0] * step[1] - step[2] ** 2
    return total


def columns_of_a_matrix(m):
    return sum(np.prod(np.array(column)) for column in zip(*m))


def listed(flat):
    pairs = list(zip(*[flat[:4], np.sin(flat[4:8])]))
    return sum(a * b for a, b in pairs) + pairs[1][0]


def unzipped(flat):
    points = [(flat[0], flat[1]), (flat[2], flat[3] * 3.0), (flat[4], flat[5])]
    xs, ys = zip(*points)  # the unzip idiom: tuples of the firsts and of the seconds
    return np.sum(np.array(xs) * np.array(ys)) + xs[2] ** 2


def shortest_wins(flat):
    xs = [flat[:2], flat[2:7], [flat[7], flat[8], flat[0]]]
    return sum(a * b * c for a, b, c in [tuple(step) for step in zip(*xs)])


def as_tuple(flat):
    steps = tuple(zip(*[flat[:3], flat[3:6]]))
    return steps[0][0] * steps[2][1] + len(steps)


FLAT = np.linspace(-1.0, 1.5, 12) + 0.1


@pytest.mark.parametrize("f, args", [(one_name_per_step, (FLAT,)), (columns_of_a_matrix, (FLAT.reshape(3, 4),)),
                                     (listed, (FLAT,)), (unzipped, (FLAT,)), (shortest_wins, (FLAT,)),
                                     (as_tuple, (FLAT,))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_zip_of_a_starred_value_consumed_at_once_is_the_list_of_its_tuples(f, args):
    check(f, *args)
    for eager in (False, True):
        assert adsrc.value_and_grad(f, eager=eager)(*args)[0] == f(*args)
    value, tangent = adsrc.jvp(f, args, (np.ones_like(args[0]),))
    assert value == f(*args)
    np.testing.assert_allclose(tangent, np.sum(adsrc.grad(f)(*args)), rtol=1e-10)


def kept(flat):
    z = zip(*[flat[:2], flat[2:4]])
    return sum(a * b for a, b in z)


def test_zip_of_a_starred_value_kept_as_a_value_is_refused():
    with pytest.raises(AdsrcError, match="zip"):
        adsrc.grad(kept)(FLAT)


# ---- a local factory: a local function that defines a function and returns it -------------------------
def factory_called_then_its_result(W, x):
    def make(M):
        def predict(v):
            return np.tanh(M @ v)
        return predict

    return np.sum(make(W)(x) ** 2)


def two_predictors_from_one_factory(W, x):
    def make(M, scale):
        shift = scale * 0.5

        def predict(v, power=2.0):
            return np.sum(np.sin(M @ v + shift) ** power)
        shift = shift + 1.0    # the closure reads the factory's frame when called: this value
        return predict

    first = make(W, 1.0)
    second = make(W * 2.0, 3.0)
    return first(x) + second(x, 3.0) + first(x * 0.5)


@pytest.mark.parametrize("f", [factory_called_then_its_result, two_predictors_from_one_factory])
def test_a_function_a_local_factory_returns_is_inlined_where_it_is_called(f):
    args = (RNG.standard_normal((2, 2)), RNG.standard_normal(2))
    check(f, *args, wrt=(0, 1))
    for eager in (False, True):
        assert adsrc.value_and_grad(f, wrt=(0, 1), eager=eager)(*args)[0] == f(*args)


def factory_result_returned(W, x):
    def make(M):
        def predict(v):
            return M @ v
        return predict

    predictor = make(W)
    return np.sum(predictor(x)), predictor


def test_the_function_a_local_factory_returns_used_as_a_value_is_refused():
    with pytest.raises(UnsupportedSyntax, match="used other than by calling it") as caught:
        adsrc.grad(factory_result_returned, has_aux=True)(np.eye(2), np.ones(2))
    assert "test_iteration_constructs.py:" in str(caught.value)
