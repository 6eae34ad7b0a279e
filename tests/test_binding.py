"""When names are bound and read: iteration, defaults, shadowed builtins, loop targets, None.

Each program below runs as Python would, or is refused with UnsupportedSyntax
naming its line: its value is compared bit for bit with Python's, its
gradient with central finite differences (lazy and eager), and its JVP with a
directional finite difference.

* zip and enumerate follow Python's iteration protocol: enumerate counts
  beside a plain loop over its argument; zip indexes sequences (lists,
  tuples, ranges, strings, arrays) and refuses anything else (a dict, a dict
  view), at compile time where the argument is evidently not a sequence,
  else before the loop runs.
* Defaults of local lambdas and defs are evaluated where the function is
  defined, as in Python; a local function defined twice or called before
  its definition is refused.
* Generated code never calls a builtin by a name the function binds itself
  (a parameter, a local, a global or closure value of that name).
* An empty loop whose target is read afterwards is kept.
* ``for x in x`` iterates over the original sequence; a function that
  returns None has no gradient (NonScalarOutput), and its JVP is None.
"""
from __future__ import annotations

import importlib
import inspect

import numpy as np
import pytest

import adsrc
from adsrc.errors import NonScalarOutput, UnsupportedSyntax
from gradcheck import check

x3 = np.array([0.3, -0.8, 1.1])
y3 = np.array([1.5, 0.25, -0.7])
EPS = 1e-6


# -- helpers -------------------------------------------------------------------------
def same(got, want) -> None:
    """Bit for bit: the same type and the same bytes."""
    assert type(got) is type(want), (type(got), type(want))
    assert np.asarray(got).tobytes() == np.asarray(want).tobytes(), (got, want)


def directional(f, args, tangents):
    plus = [a + EPS * t if t is not None else a for a, t in zip(args, tangents)]
    minus = [a - EPS * t if t is not None else a for a, t in zip(args, tangents)]
    return (f(*plus) - f(*minus)) / (2 * EPS)


def full_check(f, *args, wrt=0, forward=True):
    """Value bit for bit (lazy, eager, forward), gradient against finite differences (lazy and
    eager), and the JVP against a directional finite difference."""
    expected = f(*args)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    for eager in (False, True):
        value, _ = adsrc.value_and_grad(f, wrt=positions, eager=eager)(*args)
        same(value, expected)
    check(f, *args, wrt=wrt)
    if forward:
        rng = np.random.default_rng(0)
        tangents = [None] * len(args)
        for i in positions:
            tangents[i] = rng.uniform(-1, 1, np.shape(args[i])) if isinstance(args[i], np.ndarray) else 0.7
        value, tangent = adsrc.jvp(f, tuple(args), tuple(tangents))
        same(value, expected)
        np.testing.assert_allclose(tangent, directional(f, args, tangents), rtol=1e-5, atol=1e-7)


def line_of(f, text: str) -> str:
    """``file:line`` of the first line of f's source that contains ``text``."""
    lines, first = inspect.getsourcelines(f)
    number = first + next(i for i, line in enumerate(lines) if text in line)
    return f"{inspect.getsourcefile(f)}:{number}:"


def refused(f, args, text: str, words: str, forward=True):
    """Every mode refuses f with UnsupportedSyntax at the line holding ``text``, mentioning ``words``."""
    calls = [lambda: adsrc.value_and_grad(f)(*args), lambda: adsrc.value_and_grad(f, eager=True)(*args)]
    if forward:
        calls.append(lambda: adsrc.jvp(f, tuple(args), (1.0,) + (None,) * (len(args) - 1)))
    for run in calls:
        with pytest.raises(UnsupportedSyntax) as info:
            run()
        assert line_of(f, text) in str(info.value), str(info.value)
        assert words in str(info.value), str(info.value)


# -- 1. zip and enumerate follow the iteration protocol ----------------------------------
def zip_dict_and_values(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for k, v in zip(d, d.values()):
        s = s + v * len(k)
    return s


def zip_dict_items(x):
    d = {"a": x, "b": 2.0 * x}
    s = 0.0
    for (k, v), c in zip(d.items(), [1.0, 2.0]):
        s = s + v * c
    return s


def zip_local_dict(x):
    d = {1: 10.0, 0: 20.0}
    s = 0.0
    for k, c in zip(d, [1.0, 2.0]):
        s = s + x * k * c
    return s


def test_zip_over_a_dict_view_or_a_local_dict_iterates_as_python_does():
    # zip(d, ...) pairs d's keys (in insertion order), zip(d.items(), ...) its items: adsrc zips a list of them.
    full_check(zip_dict_and_values, 1.5)
    full_check(zip_dict_items, 1.5)
    full_check(zip_local_dict, 1.5)


def zip_keys_of_argument(x, d):
    s = 0.0
    for k, c in zip(d, [1.0, 2.0]):
        s = s + x * k * c
    return s


def test_zip_over_a_dict_argument_is_refused_when_it_runs():
    # Indexing {1: 10.0, 0: 20.0} by position gave 20.0, 10.0 instead of the keys 1, 0.
    d = {1: 10.0, 0: 20.0}
    assert zip_keys_of_argument(1.5, d) == 1.5 * 1 * 1.0 + 1.5 * 0 * 2.0
    refused(zip_keys_of_argument, (1.5, d), "zip(d, [1.0, 2.0])", "list(d)")
    full_check(zip_keys_of_argument, 1.5, [3.0, -2.0])  # a list is indexed as before
    full_check(zip_keys_of_argument, 1.5, (3.0, -2.0, 5.0))
    full_check(zip_keys_of_argument, 1.5, np.array([3.0, -2.0]))


def enumerate_dict_keys(x):
    d = {"a": x, "b": 2.0 * x, "c": x * x}
    s = 0.0
    for i, k in enumerate(d):
        s = s + d[k] * (i + 1)
    return s


def test_enumerate_over_a_dict_counts_its_keys():
    # In forward mode too: the loop over a dict made here runs over a list of its keys.
    full_check(enumerate_dict_keys, 1.5)


def enumerate_forms(x, ys):
    s = 0.0
    for i, v in enumerate(x, 2):
        s = s + v * i
    for pair in enumerate(ys, start=-1):
        s = s + pair[1] * pair[0]
    for i, (a, b) in enumerate(zip(x, ys)):
        s = s + a * b * i
    for i, v in enumerate(x):
        if i == 1:
            continue
        s = s + v * i
    return s + i


def zip_forms(x, ys):
    s = 0.0
    for pair in zip(x, ys):
        s = s + pair[0] * pair[1]
    for a, b, c in zip(x, ys, (1.0, 2.0)):
        s = s + a * b * c
    for a, (b, c) in zip(x, zip(ys, "ab")):
        s = s + a * b * len(c)
    for a, r in zip(x, range(5)):
        s = s + a * r
    return s


@pytest.mark.parametrize("f", [enumerate_forms, zip_forms], ids=lambda f: f.__name__)
def test_zip_and_enumerate_forms(f):
    full_check(f, x3, y3, wrt=(0, 1))


# -- 2. defaults are evaluated where the local function is defined --------------------------
def lambda_default(x):
    a = 2.0
    f = lambda y, a=a: a * y  # noqa: E731
    a = 3.0
    return f(x) + a


def def_default(x):
    w = x * 2.0

    def g(y, w=w, c=0.5):
        return y * w + c

    w = x * 5.0
    return g(x) + g(x, w) + g(x, c=w)


def default_reads_a_later_rebound_argument(x):
    f = lambda y, scale=x * x: y * scale  # noqa: E731
    x = x + 1.0
    return f(x)


def comprehension_in_default(x):
    def g(y, w=sum(v for v in x)):
        return y * w

    x = x * 3.0
    return np.sum(g(x))


def comprehension_in_lambda_body(x):
    y = np.array([5.0, 6.0])
    f = lambda y: sum(v * 2.0 for v in y)  # noqa: E731
    return f(x) + y[0]


@pytest.mark.parametrize("f", [lambda_default, def_default, default_reads_a_later_rebound_argument],
                         ids=lambda f: f.__name__)
def test_defaults_are_read_when_the_function_is_defined(f):
    full_check(f, 1.5)


@pytest.mark.parametrize("f", [comprehension_in_default, comprehension_in_lambda_body], ids=lambda f: f.__name__)
def test_comprehensions_in_defaults_and_lambda_bodies(f):
    # The lambda's sum used to be hoisted out of the lambda, where y was the outer array.
    full_check(f, np.array([1.0, 2.0]))


def redefined(x):
    g = lambda y: y * 2.0  # noqa: E731
    a = g(x)
    g = lambda y: y * 3.0  # noqa: E731
    return a + g(x)


def called_before_definition(x):
    a = h(x)
    h = lambda y: y * 2.0  # noqa: E731
    return a


def test_a_local_function_defined_twice_or_called_before_its_definition_is_refused():
    assert redefined(1.5) == 1.5 * 2.0 + 1.5 * 3.0
    refused(redefined, (1.5,), "g = lambda y: y * 3.0", "twice")
    with pytest.raises(UnboundLocalError):
        called_before_definition(1.5)
    refused(called_before_definition, (1.5,), "a = h(x)", "before its definition")


def two_local_functions_one_calling_the_other(x):
    def twice(y):
        return y * 2.0

    def then_one_more(y):
        return twice(y) + 1.0
    return np.sum(then_one_more(x) * x)


def test_a_local_function_calling_one_defined_before_it_is_accepted():
    # Its position was counted before the definitions were taken out: the call was refused as too early.
    check(two_local_functions_one_calling_the_other, np.array([0.5, -1.0, 2.0]))


# -- 3. generated code never calls a builtin by a name the function binds ------------------
def params_named_like_builtins(x, ys, range, len, min, max, float, list, tuple, np):
    s = 0.0
    for a, b in zip(x, ys):
        s = s + a * b * range - len * min + max * float
    n = 0
    while n < 2:
        s = s * list + tuple * s * s + np
        n = n + 1
    return s


def test_parameters_named_like_builtins():
    full_check(params_named_like_builtins, x3, y3, 2, 3, 0.5, 1.25, 0.75, 0.5, 0.1, 0.01, wrt=(0, 1))


def loops_with_params_named_like_builtins(x, zip, enumerate, sum):
    total = 0.0
    for a in x:
        total = total + a * a * zip
    k = 0
    while k < 3:
        total = total * enumerate + sum
        k = k + 1
    return total


def test_zip_enumerate_and_sum_named_parameters():
    full_check(loops_with_params_named_like_builtins, x3, 0.5, 0.75, 0.25)


def locals_named_like_builtins(x, ys):
    range = 2.0
    len = x * 3.0
    min = 0.5
    s = 0.0
    for a, b in zip(len, ys):
        s = s + a * b * range + min
    for i, v in enumerate(x):
        s = s + v * i
    return s


def test_locals_named_like_builtins():
    full_check(locals_named_like_builtins, x3, y3, wrt=(0, 1))


def more_locals_named_like_builtins(x):
    max = x * 2.0
    zip = 0.5
    enumerate = 3
    sum = 0.0
    list = [1.0, 2.0]
    tuple = (0.5,)
    float = 1.5
    np = 0.25
    k = 0
    while k < enumerate:
        sum = sum + max[k] * zip * list[k % 2] * tuple[0] * float + np
        k = k + 1
    for m in max:
        sum = sum + m * m
    return sum


def test_more_locals_named_like_builtins():
    full_check(more_locals_named_like_builtins, x3)


GLOBALS_MODULE = """
import numpy as np

len = 3.0
range = 2.0
min = 0.5
isinstance = 7.0


def globals_shadowing(x, ys):
    s = 0.0
    for a, b in zip(x, ys):
        s = s + a * b * range + len * min * isinstance
    k = 0
    while k < 2:
        s = s * s * range
        k = k + 1
    return s
"""


def test_globals_named_like_builtins(tmp_path, monkeypatch):
    (tmp_path / "binding_globals.py").write_text(GLOBALS_MODULE)
    monkeypatch.syspath_prepend(str(tmp_path))
    import binding_globals
    full_check(binding_globals.globals_shadowing, x3 * 0.1, y3, wrt=(0, 1))


def test_generated_code_names_builtins_only_where_the_function_rebinds_them():
    plain = adsrc.adjoint_source(zip_forms, wrt=(0, 1))
    assert "from builtins import" not in plain and "for i in range(loop_length(" in plain
    shadowed = adsrc.adjoint_source(params_named_like_builtins, wrt=(0, 1))
    assert "from builtins import range as range_1, len as len_1" in shadowed
    assert "for _ in range_1(" in shadowed.replace("__1 in", "_ in")
    assert "loop_length" in importlib.import_module("adsrc.runtime").__all__


def make_closure_shadowing_builtins():
    range = 2.0
    len = 3.0
    min = 0.5

    def closure_shadowing(x, ys):
        s = 0.0
        for a, b in zip(x, ys):
            s = s + a * b * range + len * min
        return s

    return closure_shadowing


def test_closure_values_named_like_builtins():
    full_check(make_closure_shadowing_builtins(), x3, y3, wrt=(0, 1))


def zip_named_parameter_is_called(x, zip):
    s = 0.0
    for a, b in zip(x, x):
        s = s + a * b
    return s


def first_pairs(a, b):
    return [(a[0], b[1]), (a[2], b[0])]


def test_a_zip_parameter_is_called_not_lowered():
    # The function's own zip is not the builtin: adsrc must not run the builtin's loop instead.
    expected = zip_named_parameter_is_called(x3, first_pairs)
    assert expected == x3[0] * x3[1] + x3[2] * x3[0]
    try:
        value, _ = adsrc.value_and_grad(zip_named_parameter_is_called)(x3, first_pairs)
    except adsrc.AdsrcError as error:
        assert "zip" in str(error)
    else:
        same(value, expected)


def len_parameter_and_loop_over_argument(x, len):
    s = 0.0
    for v in x:
        s = s + v * v * len
    return s


def range_parameter_and_a_sum(x, range):
    return sum(range * w for w in x)


@pytest.mark.parametrize("f", [len_parameter_and_loop_over_argument, range_parameter_and_a_sum],
                         ids=lambda f: f.__name__)
def test_a_builtin_named_parameter_and_a_loop_over_a_differentiated_argument(f):
    full_check(f, x3, 2)


# -- 4. an empty loop whose target is read afterwards is kept -----------------------------
def empty_loop_target_read(x):
    for i in range(3):
        pass
    return x * i


def empty_loop_bound_target_read(x, n):
    j = 10
    for j in range(n):
        pass
    return x * j


def test_an_empty_loop_binds_its_target():
    full_check(empty_loop_target_read, 1.5)
    full_check(empty_loop_bound_target_read, 1.5, 4)
    full_check(empty_loop_bound_target_read, 1.5, 0)


# -- 5. for x in x, and functions that return None ----------------------------------------
def loop_over_itself(x):
    s = 0.0
    for x in x:
        s = s + x * x
    return s + x


def zip_over_itself(x, y):
    s = 0.0
    for x, y in zip(x, y):
        s = s + x * y
    return s


def enumerate_over_itself(x):
    s = 0.0
    for i, x in enumerate(x):
        s = s + x * i
    return s


def test_a_loop_over_its_own_target_iterates_over_the_original():
    full_check(loop_over_itself, x3)
    full_check(zip_over_itself, x3, y3, wrt=(0, 1))
    full_check(enumerate_over_itself, x3)


def no_return(x):
    y = x * 2.0  # noqa: F841


def bare_return(x):
    y = x * 2.0  # noqa: F841
    return


def returns_in_one_branch(x):
    if x > 0.0:
        return x * 2.0


def return_none_in_loop(x):
    for v in [1.0, 2.0]:
        if v > 1.5:
            return
    return x


@pytest.mark.parametrize("f", [no_return, bare_return, returns_in_one_branch], ids=lambda f: f.__name__)
def test_a_function_that_returns_none_has_no_gradient(f):
    assert f(-1.5) is None
    for eager in (False, True):
        with pytest.raises(NonScalarOutput, match=f.__name__) as info:
            adsrc.grad(f, eager=eager)(-1.5)
        assert "None" in str(info.value)
    value, tangent = adsrc.jvp(f, (-1.5,), (1.0,))
    assert value is None
    assert not np.any(tangent) if tangent is not None else True


def test_a_function_that_returns_none_on_one_path_still_differentiates_on_the_other():
    full_check(returns_in_one_branch, 1.5)
    assert return_none_in_loop(1.5) is None
    with pytest.raises(NonScalarOutput, match="return_none_in_loop"):
        adsrc.grad(return_none_in_loop)(1.5)
