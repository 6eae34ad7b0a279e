"""Every public name has a docstring with a runnable example, and every example in the API runs as shown.

The examples are run with doctest: the names of ``adsrc.__all__`` (each
object's own docstring) and every docstring in the modules of ``adsrc.api``.
"""
from __future__ import annotations

import doctest
import importlib
import inspect
import pkgutil

import pytest

import adsrc
import adsrc.api

API_MODULES = [importlib.import_module(f"adsrc.api.{m.name}") for m in pkgutil.iter_modules(adsrc.api.__path__)]


def _run(test: doctest.DocTest) -> str:
    output: list[str] = []
    runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE)
    runner.run(test, out=output.append, clear_globs=True)
    assert runner.failures == 0 or output, "doctest failed without output"
    return "".join(output) if runner.failures else ""


@pytest.mark.parametrize("name", adsrc.__all__)
def test_every_public_name_has_a_docstring_with_an_example_that_runs(name):
    obj = getattr(adsrc, name)
    doc = inspect.getdoc(obj)
    assert doc, f"adsrc.{name} has no docstring"
    assert ">>>" in doc, f"adsrc.{name}'s docstring has no example"
    test = doctest.DocTestParser().get_doctest(doc, {}, f"adsrc.{name}", None, 0)
    failures = _run(test)
    assert not failures, failures


@pytest.mark.parametrize("module", API_MODULES, ids=lambda m: m.__name__)
def test_every_example_in_the_api_modules_runs(module):
    tests = [t for t in doctest.DocTestFinder(exclude_empty=True).find(module, module.__name__) if t.examples]
    failures = "".join(_run(t) for t in tests)
    assert not failures, failures


def test_the_check_catches_a_wrong_example():
    doc = ">>> 1 + 1\n3\n"
    test = doctest.DocTestParser().get_doctest(doc, {}, "wrong", None, 0)
    assert "Expected:\n    3" in _run(test)
