"""Everyday syntax (issue 12): each construct runs as Python would, or is refused naming its line.

Each accepted program's value is compared bit for bit with Python's (lazy,
eager and forward mode), its gradient with central finite differences (lazy
and eager), and its JVP with a directional finite difference. The
constructs: star-assignment, nested unpacking, chained assignment, with over
np.errstate and warnings.catch_warnings, enumerate(xs, start),
enumerate(zip(...)), reversed(...), copy-then-write on the same name, a
dict's values/items/keys/get and dict comprehensions, unpacking what Python
unpacks (a dict's keys), and NameError for a name defined nowhere. The last
test runs random programs of tests/progen.py that use these constructs in
forward mode too.
"""
from __future__ import annotations

import math
import operator
import os
import tempfile
import warnings

import numpy as np
import pytest

import adsrc
import diffgen
from adsrc.errors import NoGradientRule, UndefinedName, UnsupportedSyntax
from gradcheck import check
from test_binding import directional, full_check, line_of, same

x3 = np.array([0.3, -0.8, 1.1])
W3 = np.array([[0.5, -0.2, 0.9], [1.2, 0.4, -0.6], [-0.3, 0.8, 0.1]])


# -- unpacking ---------------------------------------------------------------------------
def star_first(x):
    a, *rest = x
    return a * sum(rest) + len(rest)


def star_middle(x, W):
    first, *middle, last = W
    head, *tail = [x[0], x[1] * 2.0]
    return np.sum(first * last) + np.sum(middle[0] * x) + head * tail[0]


def star_in_loop_target(x, W):
    t = 0.0
    for a, *rest in [(x[0], x[1], x[2]), (W[0, 0], W[1, 1])]:
        t = t + a * sum(rest)
    return t


def nested(x, W):
    (a, b), c = (x[0], x[1]), x[2]
    (row, (p, q)), s = (W[0], (x[1], W[2, 2])), x
    return a * b * c + np.sum(row * s) * p + q


def nested_in_loops(x, W):
    t = 0.0
    for i, (xi, row) in enumerate(zip(x, W)):
        t = t + i * xi * np.sum(row)
    for (a, b), c in [((x[0], x[1]), x[2]), ((W[0, 0], W[0, 1]), W[0, 2])]:
        t = t + a * b - c
    return t + sum(u * v for (u, v), w in [((x[0], x[2]), 1.0)])


def nested_names_bound_in_order(x):
    (a, b), a = (x[0], x[1]), x[2]  # Python binds a twice, left to right: x[2] wins
    return a * 10.0 + b


def chained(x, W):
    a = b = W @ x
    c = d = e = x[0] * 2.0
    return np.sum(a * b) + c * d * e


def chained_with_unpacking(x):
    p, q = r = (x[0], x[1])
    return p * q + r[0]


@pytest.mark.parametrize("f,args", [
    (star_first, (x3,)), (star_middle, (x3, W3)), (star_in_loop_target, (x3, W3)), (nested, (x3, W3)),
    (nested_in_loops, (x3, W3)), (nested_names_bound_in_order, (x3,)), (chained, (x3, W3)),
    (chained_with_unpacking, (x3,)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_unpacking_and_chained_assignment(f, args):
    full_check(f, *args, wrt=tuple(range(len(args))))


def star_too_short(x):
    a, b, *rest = x
    return a * b


def unpack_too_long(x):
    a, b = x
    return a * b


def test_unpacking_raises_pythons_value_error():
    for f in (star_too_short, unpack_too_long):
        arg = x3[:1] if f is star_too_short else x3
        with pytest.raises(ValueError) as python:
            f(arg)
        for eager in (False, True):
            with pytest.raises(ValueError) as ours:
                adsrc.grad(f, eager=eager)(arg)
            assert str(ours.value) == str(python.value)


def unpack_a_dict(x):
    d = {1: x, 0: 2.0 * x}
    a, b = d  # a dict unpacks into its keys
    u, v = d.values()
    k, *others = d
    return x * a + b + u * v + k * len(others)


def test_unpacking_a_dict_gives_its_keys():
    assert unpack_a_dict(1.5) == 1.5 * 1 + 0 + 1.5 * 3.0 + 1
    full_check(unpack_a_dict, 1.5)


# -- loops -------------------------------------------------------------------------------
def enumerate_from(x, W):
    t = 0.0
    for i, v in enumerate(x, 1):
        t = t + i * v
    for i, row in enumerate(W, start=-1):
        t = t + i * np.sum(row)
    return t


def enumerate_zip(x, W):
    t = 0.0
    for i, (a, row) in enumerate(zip(x, W)):
        t = t + i * a * np.sum(row)
    for i, (a, (b, c)) in enumerate(zip(x, zip(x * 2.0, W[0])), 1):
        t = t + i * a * b * c
    return t


def reversed_loops(x, W):
    t = 0.0
    for v in reversed(x):
        t = t * 0.5 + v
    for row in reversed(W):
        t = t + np.sum(row) * t
    for i, v in enumerate(reversed([x[0], W[1, 1], 2.0])):
        t = t + i * v
    for a, row in zip(reversed(x), W):
        t = t + a * row[0]
    for k in reversed({"a": 1, "bb": 2}):
        t = t + len(k) * x[0]
    return t


def containers_of_iterators(x, W):
    pairs = list(zip(x, W))
    back = list(reversed(x))
    counted = tuple(enumerate(x, 1))
    table = dict(zip(["a", "b", "a"], [x[0], x[1], x[2]]))
    return sum(a * np.sum(r) for a, r in pairs) + back[0] * 3.0 + counted[1][0] * counted[1][1] \
        + table["a"] * table["b"]


@pytest.mark.parametrize("f", [enumerate_from, enumerate_zip, reversed_loops, containers_of_iterators],
                         ids=lambda f: f.__name__)
def test_loops(f):
    full_check(f, x3, W3, wrt=(0, 1))


def reversed_argument(x, xs):
    t = 0.0
    for v in reversed(xs):
        t = t * x + v
    return t


def test_reversed_over_an_argument_that_is_not_a_sequence_is_refused_when_it_runs():
    full_check(reversed_argument, 0.5, [1.0, 2.0, 3.0])
    full_check(reversed_argument, 0.5, np.array([1.0, 2.0, 3.0]), wrt=(0, 1))
    with pytest.raises(UnsupportedSyntax) as info:
        adsrc.grad(reversed_argument)(0.5, {1.0: 0, 2.0: 1})
    assert line_of(reversed_argument, "reversed(xs)") in str(info.value)


# -- with ------------------------------------------------------------------------------------
def with_errstate(x):
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(x) / 2.0
    return np.sum(np.where(np.isfinite(y), y, 0.0))


def with_catch_warnings(x):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        y = np.sqrt(x)
    return np.sum(np.nan_to_num(y))


def with_return_in_loop(x):
    t = 0.0
    for i in range(2):
        with np.errstate(over="ignore"):
            t = t + np.exp(x[i]) * x[i]
    with np.errstate(divide="ignore"), warnings.catch_warnings(record=True) as caught:
        return t * 2.0 + len(caught)


def test_with_runs_the_body_under_the_context():
    positive = np.array([0.5, 1.5, 2.0])
    for f in (with_errstate, with_catch_warnings, with_return_in_loop):
        full_check(f, positive)
    edges = np.array([0.0, -1.0, 2.0])
    for f in (with_errstate, with_catch_warnings):  # log(0) and sqrt(-1) warn, unless the context says not to
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the forward sweep runs under the function's own context
            same(adsrc.jvp(f, (edges,), (np.ones(3),))[0], f(edges))
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            same(adsrc.value_and_grad(f)(edges)[0], f(edges))  # the backward sweep need not (it may warn)
    source = adsrc.adjoint_source(with_return_in_loop)
    assert "with np.errstate(over='ignore'):" in source and "as caught:" in source


def raises_under_errstate(x):
    with np.errstate(all="raise"):
        y = x / 0.0
    return np.sum(y)


def warns_under_catch_warnings(x):
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        y = np.log(x)
    return np.sum(y)


def test_with_leaves_the_context_when_the_body_raises():
    before = np.geterr()
    for run in (lambda: adsrc.grad(raises_under_errstate)(x3), lambda: adsrc.jvp(raises_under_errstate, (x3,), (x3,)),
                lambda: adsrc.grad(raises_under_errstate, eager=True)(x3)):
        with pytest.raises(FloatingPointError):
            run()
        assert np.geterr() == before
    filters = list(warnings.filters)
    with pytest.raises(RuntimeWarning):
        adsrc.grad(warns_under_catch_warnings)(np.array([0.0, 1.0]))
    assert warnings.filters == filters


def test_second_order_through_with():
    v = np.array([1.0, -0.5, 0.25])
    positive = np.array([0.5, 1.5, 2.0])
    hv = adsrc.hvp(with_errstate)(positive, v)
    np.testing.assert_allclose(hv, -0.5 / positive ** 2 * v, rtol=1e-6)


def with_open(x):
    with open(os.devnull) as fh:  # noqa: F841
        y = x * 2.0
    return np.sum(y)


def with_break(x):
    t = 0.0
    for v in x:
        with np.errstate(all="ignore"):
            t = t + v
            if t > 1.0:
                break
    return t


def with_return_in_the_middle(x):
    with np.errstate(all="ignore"):
        if x[0] > 0:
            return np.sum(x)
        y = x * 2.0
    return np.sum(y)


def test_other_with_statements_are_refused_naming_the_line():
    cases = [(with_open, "with open", "np.errstate"), (with_break, "        break", "jump"),
             (with_return_in_the_middle, "return np.sum(x)", "jump")]
    for f, text, words in cases:
        with pytest.raises(UnsupportedSyntax) as info:
            adsrc.grad(f)(x3)
        assert line_of(f, text) in str(info.value) and words in str(info.value), str(info.value)


# -- copy then write ---------------------------------------------------------------------------
def copy_then_write(w, x):
    w = w.copy()
    w[0] = 0.0
    x = x * 2.0
    x[1:] = w[1:, 0]
    return np.sum(w @ x)


def copy_then_write_in_a_loop(w):
    w = np.array(w)
    for i in range(3):
        w[i, i] = w[i, i] * 2.0
    return np.sum(w * w)


def test_copy_then_write_on_the_same_name():
    full_check(copy_then_write, W3, x3, wrt=(0, 1))
    full_check(copy_then_write_in_a_loop, W3)
    w = W3.copy()
    adsrc.grad(copy_then_write)(w, x3)
    assert np.array_equal(w, W3)


def write_into_parameter_in_a_branch(w):
    if w[0, 0] > 0:
        w = w.copy()
    w[0] = 0.0
    return np.sum(w)


def test_a_write_that_may_reach_the_argument_changes_it_as_python_does():
    """On the path without the copy Python's write changes the caller's array: so does adsrc's
    (frontend/freshness.py, api/written.py; tests/test_writes_fresh.py has more)."""
    for start in (np.abs(W3) + 0.1, -np.abs(W3) - 0.1):
        after = start.copy()
        write_into_parameter_in_a_branch(after)
        for eager in (False, True):
            given = start.copy()
            gradient = adsrc.grad(write_into_parameter_in_a_branch, eager=eager)(given)
            np.testing.assert_array_equal(given, after)
            expected = np.ones_like(start)
            expected[0] = 0.0
            np.testing.assert_array_equal(gradient, expected)


# -- dicts -------------------------------------------------------------------------------------
def dict_check(f, params, *rest):
    """The gradient wrt a dict of floats/arrays against finite differences (lazy and eager), the value
    bit for bit, and the JVP along a random direction."""
    want = f(params, *rest)
    rng = np.random.default_rng(0)
    direction = {k: rng.uniform(-1, 1, np.shape(v)) if isinstance(v, np.ndarray) else 0.7
                 for k, v in params.items()}
    for eager in (False, True):
        value, grads = adsrc.value_and_grad(f, eager=eager)(params, *rest)
        same(value, want)
        assert set(grads) == set(params)
        for key, leaf in params.items():
            got = np.asarray(grads[key], dtype=float)
            expected = np.zeros(np.shape(leaf))
            for index in np.ndindex(np.shape(leaf)):
                moved = []
                for sign in (1, -1):
                    copy = {k: np.array(v, copy=True) if isinstance(v, np.ndarray) else v for k, v in params.items()}
                    if isinstance(leaf, np.ndarray):
                        copy[key][index] += sign * 1e-6
                    else:
                        copy[key] = leaf + sign * 1e-6
                    moved.append(f(copy, *rest))
                expected[index] = (moved[0] - moved[1]) / 2e-6
            np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7, err_msg=f"{key}, eager={eager}")
    if rest:
        check(f, params, *rest, wrt=1)  # and the gradient wrt the array beside the dict
    value, tangent = adsrc.jvp(f, (params, *rest), (direction,) + (None,) * len(rest))
    same(value, want)
    plus = {k: v + 1e-6 * direction[k] for k, v in params.items()}
    minus = {k: v - 1e-6 * direction[k] for k, v in params.items()}
    np.testing.assert_allclose(tangent, (f(plus, *rest) - f(minus, *rest)) / 2e-6, rtol=1e-5, atol=1e-7)


def dict_values(params, x):
    return sum(np.sum(v * x) for v in params.values()) + sum(params.values())[0]


def dict_items(params, x):
    t = 0.0
    for k, v in params.items():
        t = t + np.sum(v * v) * len(k)
    for i, (k, v) in enumerate(params.items(), 1):
        t = t + i * np.sum(v)
    return t


def dict_get(params, x):
    return np.sum(params.get("w", x) * 2.0) + np.sum(params.get("missing", x * 3.0)) + np.sum(params.get("b"))


def dict_keys(params, x):
    t = 0.0
    for k in list(params.keys()):
        t = t + np.sum(params[k] * x)
    for k in params.keys():
        t = t + np.sum(params[k])
    return t


def dict_comprehension(params, x):
    scaled = {k: v * x for k, v in params.items()}
    squares = {k: np.sum(v * v) for k, v in scaled.items() if k != "skip"}
    doubled = {i: v for i, v in enumerate([x[0], x[1], x[0] * 3.0])}
    last_wins = {k % 2: v for k, v in enumerate(x)}
    return squares["w"] + squares["b"] * doubled[2] + last_wins[0] + len(squares)


def zip_over_views(params, x):
    t = 0.0
    for (k, v), c in zip(params.items(), [1.0, 2.0]):
        t = t + np.sum(v) * c
    for k, v in zip(params.keys(), params.values()):
        t = t + np.sum(v * x) * len(k)
    local = dict(params)
    for k, v in zip(local, reversed(local.values())):
        t = t + np.sum(v * x) * len(k)
    return t


def zip_over_a_dict_argument(params, x):
    t = 0.0
    for k, v in zip(params, params.values()):
        t = t + np.sum(v * x) * len(k)
    return t


def test_zip_over_a_dict_argument_is_refused_when_it_runs():
    # Indexing the dict by position would not give its keys; only a value can tell it is a dict.
    with pytest.raises(UnsupportedSyntax) as info:
        adsrc.grad(zip_over_a_dict_argument)({"w": x3}, x3)
    assert line_of(zip_over_a_dict_argument, "zip(params") in str(info.value)


def sorted_views(params, x):
    t = 0.0
    for i, (k, v) in enumerate(sorted(params.items(), key=operator.itemgetter(0))):
        t = t + np.sum(np.sin(v) * x) * (i + 1.0)
    for k in sorted(params):  # keys carry no tangent
        t = t + np.sum(np.cos(params[k]))
    for k in sorted(params.keys(), reverse=True):  # k, unpacked with v above, carries none here either
        t = t + np.sum(params[k] * x) * len(k)
    for v in sorted(params.values(), key=np.sum):
        t = t + np.sum(v * v)
    return t


def dict_with_keywords(params, x):
    d = dict(params, b=params["b"] * x, c=x[0])  # b replaces params' own b
    e = dict([("w", x)], w2=params["w"] * 2.0)
    f = dict(scale=np.sum(x))
    return np.sum(d["w"] * d["b"]) + d["c"] + np.sum(e["w"] * e["w2"]) + f["scale"] * len(d)


@pytest.mark.parametrize("f", [dict_values, dict_items, dict_get, dict_keys, dict_comprehension, zip_over_views,
                               sorted_views, dict_with_keywords], ids=lambda f: f.__name__)
def test_dict_methods_and_comprehensions(f):
    dict_check(f, {"w": np.array([0.3, -1.2, 0.5]), "b": np.array([1.1, 0.4, -0.2])}, x3)


@pytest.mark.parametrize("f", [sorted_views, dict_with_keywords], ids=lambda f: f.__name__)
def test_dict_views_and_keywords_at_second_order(f):
    params = {"w": np.array([0.3, -1.2, 0.5]), "b": np.array([1.1, 0.4, -0.2])}
    for eager in (False, True):
        with adsrc.eager_unthunk(eager):
            adsrc.check_grads(f, (params, x3), order=2)


def test_a_dict_keyword_holds_its_own_gradient():
    # dict(pairs, b=v): the entry by keyword replaces the pair's b, whose value then gets no gradient
    def f(x, y):
        return dict([("b", x)], b=y)["b"] * 3.0

    assert adsrc.grad(f, wrt=(0, 1))(2.0, 5.0) == (0.0, 3.0)
    assert adsrc.jvp(f, (2.0, 5.0), (1.0, 0.0)) == (15.0, 0.0)


def test_a_dict_method_on_another_object_is_the_objects_own():
    class Box:
        def get(self, key, default):
            return default

    def uses_get(x, box):
        return box.get("w", x) * 2.0

    for eager in (False, True):  # Box.get returns x: the gradient is 2, not dict.get's
        with adsrc.eager_unthunk(eager):
            assert adsrc.grad(uses_get)(1.5, Box()) == 2.0


# -- errors a user can act on -----------------------------------------------------------------
def misspelled(x):
    return np.sum(np.tahn(x)) + sum_of_squares(x)  # noqa: F821


def misspelled_local(x):
    total = x * 2.0
    return np.sum(totl)  # noqa: F821


def test_a_name_defined_nowhere_raises_name_error():
    with pytest.raises(NameError) as python:
        misspelled_local(x3)
    with pytest.raises(UndefinedName) as info:
        adsrc.grad(misspelled_local)(x3)
    assert isinstance(info.value, NameError)
    assert str(python.value).split(".")[0].split(" Did")[0] in str(info.value)  # "name 'totl' is not defined"
    assert line_of(misspelled_local, "totl") in str(info.value)
    assert "did you mean 'total'?" in str(info.value)
    with pytest.raises(UndefinedName) as info:
        adsrc.grad(misspelled)(x3)
    assert "sum_of_squares" in str(info.value) and line_of(misspelled, "sum_of_squares") in str(info.value)


def keeps_an_iterator(x):
    pairs = zip(x, x)
    return sum(a * b for a, b in pairs)


def vectorized_inside(x):
    return np.sum(np.vectorize(math.erf)(x))


erf = np.vectorize(math.erf)


def vectorized_at_module_level(x):
    return np.sum(erf(x))


def test_remedies_a_user_can_follow():
    with pytest.raises(NoGradientRule) as info:
        adsrc.grad(keeps_an_iterator)(x3)
    assert "register_adjoint" not in str(info.value) and "for a, b in zip(xs, ys)" in str(info.value)
    with pytest.raises(NoGradientRule) as info:
        adsrc.grad(vectorized_inside)(x3)
    message = str(info.value)
    assert "register_adjoint(np.vectorize" not in message and "f = np.vectorize(math.erf)" in message
    attribute = str(NoGradientRule("the attribute .w", "f.py:1"))
    assert "register_adjoint" not in attribute and "params['w']" in attribute
    # ... and what it says works:
    adsrc.register_adjoint(erf, lambda g, ans, x: g * 2.0 / math.sqrt(math.pi) * np.exp(-x * x))
    np.testing.assert_allclose(adsrc.grad(vectorized_at_module_level)(x3), 2.0 / math.sqrt(math.pi) * np.exp(-x3 ** 2))


# -- random programs, forward mode too ---------------------------------------------------------
SYNTAX_TAGS = {"star-assignment", "nested unpacking", "chained assignment", "with np.errstate or warnings.catch_warnings",
               "dict methods", "dict comprehension", "reversed", "enumerate with a start", "enumerate over zip",
               "copy then write"}


def test_random_programs_with_the_new_syntax_in_every_mode():
    """Smooth random programs (tests/progen.py) that use the constructs above: the checks of
    test_differential.py (value bit for bit, inputs untouched, lazy = eager, finite differences), and
    the JVP against a directional finite difference."""
    diffgen.register_tick()
    programs = [p for batch in range(20) for p in diffgen.make_batch(1000 + batch, 60)
                if p["smooth"] and SYNTAX_TAGS & set(p["tags"])]
    source = diffgen.EXTENDED_HEADER + "\n\n\n".join(p["source"] for p in programs) + "\n"
    accepted, seen, forward = 0, set(), 0
    with tempfile.TemporaryDirectory() as directory:
        module = diffgen.load_module(os.path.join(directory, "syntax_programs.py"), "syntax_programs", source)
        for program in programs:
            f = getattr(module, program["name"])
            args = diffgen.arguments(program)
            outcome, problems, refusal = diffgen.check_program(f, args, fd=True,
                                                               effects=diffgen.ALIAS_TAG in program["tags"])
            assert not problems, diffgen.reproducer(program, problems, 0, diffgen.SEED)
            if outcome != "accepted":
                continue
            accepted += 1
            seen |= SYNTAX_TAGS & set(program["tags"])
            rng = np.random.default_rng(1)
            tangents = (rng.uniform(-1, 1, args[0].shape), rng.uniform(-1, 1, args[1].shape), 0.3, None)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    value, tangent = adsrc.jvp(f, args, tangents)
                except adsrc.AdsrcError:  # forward mode may refuse what reverse mode runs (a view read...)
                    continue
                expected = f(*args)
                slope = directional(f, args, tangents)
            same(value, expected)
            forward += 1
            if np.isfinite(slope) and abs(expected) < 1e6:
                np.testing.assert_allclose(tangent, slope, rtol=1e-4, atol=1e-6, err_msg=program["source"])
    assert accepted >= 60 and forward >= 0.9 * accepted, (accepted, forward)
    assert seen == SYNTAX_TAGS, SYNTAX_TAGS - seen


# -- second order ---------------------------------------------------------------------------
def lists_sliced(x):
    xs = [x[0], x[1], x[2]]
    rest = xs[1:]
    return xs[0] * rest[0] * rest[1]


def unpacking_and_dicts(x):
    a, *rest = x
    (b, c), d = (x[0], x[1]), x[2]
    p = q = a * b
    table = {k: v * v for k, v in zip(["u", "w"], rest)}
    return p * q * sum(rest) + c * d ** 2 + sum(table.values()) * table.get("u", 1.0)


@pytest.mark.parametrize("f", [lists_sliced, unpacking_and_dicts], ids=lambda f: f.__name__)
def test_hessian_vector_products(f):
    # The tangent of an eager adjoint's dxs + part adds list cotangents leaf by leaf (it concatenated them).
    v = np.array([1.0, 0.5, -0.25])
    gradient = adsrc.grad(f)
    expected = (gradient(x3 + 1e-6 * v) - gradient(x3 - 1e-6 * v)) / 2e-6
    np.testing.assert_allclose(adsrc.hvp(f)(x3, v), expected, rtol=1e-5, atol=1e-7)
