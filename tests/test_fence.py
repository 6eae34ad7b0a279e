"""The syntax fence: every function in tests/bad_functions.py is refused up front.

Each must raise the expected AdsrcError subclass, naming the construct and the
original ``file:line`` marked in the corpus, in lazy and in eager mode, for
grad, value_and_grad and adjoint_source, before any of its code runs.
"""
import ast
import inspect
import re
import sys

import numpy as np
import pytest

import adsrc
import bad_functions
from adsrc import errors

SOURCE_FILE = inspect.getsourcefile(bad_functions)
MARKER = re.compile(r"#\s*expect(?:\((\w+)\))?:\s*(\w+):\s*(.+?)\s*$")


def _definitions():
    """(name, first line, last line) of every function definition in the corpus file."""
    tree = ast.parse(open(SOURCE_FILE).read())
    return [(n.name, n.lineno, n.end_lineno) for n in ast.walk(tree)
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))]


def _expectations():
    """corpus name -> (error class, text, line), read from the marker comments."""
    spans = _definitions()
    found = {}
    for lineno, line in enumerate(open(SOURCE_FILE).read().splitlines(), start=1):
        match = MARKER.search(line)
        if not match:
            continue
        owner, cls, text = match.groups()
        if owner is None:
            inside = [(end - start, name) for name, start, end in spans
                      if start <= lineno <= end and name in bad_functions.CORPUS]
            owner = min(inside)[1]
        assert owner not in found, f"two markers for {owner}"
        found[owner] = (getattr(errors, cls), text, lineno)
    return found


EXPECTED = _expectations()


def _arguments(func):
    values = {"x": np.array([0.5, 1.5, 2.5]), "box": bad_functions.Box()}
    return [values[p] for p in inspect.signature(func).parameters
            if p not in ("rest", "options")]


def test_the_corpus_is_large_and_fully_marked():
    assert len(bad_functions.CORPUS) >= 40
    assert sorted(EXPECTED) == sorted(bad_functions.CORPUS)
    classes = {cls for cls, _, _ in EXPECTED.values()}
    assert {errors.UnsupportedSyntax, errors.NoGradientRule} <= classes


@pytest.mark.parametrize("name", bad_functions.CORPUS)
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_refused_before_running(name, eager):
    func = getattr(bad_functions, name)
    cls, text, line = EXPECTED[name]
    del bad_functions.CALLS[:]
    with pytest.raises(adsrc.AdsrcError) as info:
        adsrc.value_and_grad(func, eager=eager)(*_arguments(func))
    error = info.value
    assert type(error) is cls, f"{name}: expected {cls.__name__}, got {type(error).__name__}: {error}"
    message = str(error)
    assert text in message, f"{name}: {text!r} not in {message!r}"
    assert re.search(rf"bad_functions\.py:{line}(:\d+)?\b", message), f"{name}: line {line} not in {message!r}"
    assert error.where.endswith(f"bad_functions.py:{line}") or f"bad_functions.py:{line}:" in error.where
    assert bad_functions.CALLS == [], f"{name}: code ran before the error: {bad_functions.CALLS}"


@pytest.mark.parametrize("name", bad_functions.CORPUS[:20])
def test_adjoint_source_refuses_too(name):
    func = getattr(bad_functions, name)
    cls, text, line = EXPECTED[name]
    with pytest.raises(cls, match=re.escape(text)):
        adsrc.adjoint_source(func)


def test_every_error_names_the_file_and_is_not_a_python_syntax_error():
    for name in bad_functions.CORPUS:
        func = getattr(bad_functions, name)
        with pytest.raises(adsrc.AdsrcError) as info:
            adsrc.grad(func)(*_arguments(func))
        assert "bad_functions.py" in str(info.value)
        assert not isinstance(info.value, SyntaxError)


# -- near misses: constructs that look risky but are supported --------------------
def _uses_np_sort(x):
    y = np.sort(x)  # a NumPy function, not the in-place method
    return np.sum(y * y)


def _local_named_like_a_builtin(x):
    setattr = 2.0  # noqa: F841 - shadows the builtin; not a call of it
    return np.sum(x) * setattr


def _positional_only(x, /, k):
    return np.sum(x * k)


def _keyword_only(x, *, k=3.0):
    return np.sum(x * k)


@pytest.mark.parametrize("func,expected", [
    (_uses_np_sort, lambda x: 2 * x),
    (_local_named_like_a_builtin, lambda x: np.full_like(x, 2.0)),
])
def test_near_misses_still_compile(func, expected):
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(adsrc.grad(func)(x), expected(x))


def test_positional_and_keyword_only_parameters():
    x = np.array([0.3, -1.0, 2.0])
    np.testing.assert_allclose(adsrc.grad(_positional_only)(x, 2.0), np.full(3, 2.0))
    assert adsrc.grad(_positional_only, wrt=1)(x, 2.0) == pytest.approx(np.sum(x))
    np.testing.assert_allclose(adsrc.grad(_keyword_only)(x), np.full(3, 3.0))
    np.testing.assert_allclose(adsrc.grad(_keyword_only)(x, k=0.5), np.full(3, 0.5))
    assert adsrc.grad(_keyword_only, wrt="k")(x, k=0.5) == pytest.approx(np.sum(x))


def test_fence_error_is_raised_from_the_compiler_not_from_generated_code():
    with pytest.raises(errors.UnsupportedSyntax) as info:
        adsrc.grad(bad_functions.try_except)(np.ones(2))
    frames = [f.filename for f in __import__("traceback").extract_tb(info.tb)]
    assert not any("<adsrc adjoint" in f for f in frames)
    assert sys.modules["adsrc.frontend.fence"].__file__ in frames
