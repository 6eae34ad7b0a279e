"""adsrc.explain: which adjoint ran and why, the lines left to rules' generic forms, the compile cache's
misses and the compile's phases (api/explain.py, ir/stopwatch.py)."""
from __future__ import annotations

import numpy as np
import pytest

import adsrc
from adsrc.api.explain import generic_calls
from adsrc.ir.stopwatch import phase, recording


def smooth(x):
    return np.sum(np.sin(x) * x)


def sorted_part(x):
    y = np.tanh(x)
    return np.sum(np.sort(y)[:2]) + np.sum(y * y)


def looped(x, n):
    s = 0.0
    for i in range(n):
        s = s + np.sum(x * np.cos(x * i))
    return s


def test_a_fully_written_out_gradient():
    found = adsrc.explain(smooth, np.linspace(0.0, 1.0, 5))
    assert found.specialized and found.reason == ""
    assert found.generic_calls == ()
    assert "specialized for x: float64[5]" in found.adjoint
    assert "every contribution is written out" in str(found)
    assert np.array_equal(adsrc.grad(smooth)(np.linspace(0.0, 1.0, 5)),
                          np.sin(np.linspace(0.0, 1.0, 5)) + np.linspace(0.0, 1.0, 5) * np.cos(np.linspace(0.0, 1.0, 5)))


def test_the_lines_left_to_generic_rules_are_named_with_their_rules():
    found = adsrc.explain(sorted_part, np.linspace(-1.0, 1.0, 6))
    lines = {c.code: set(c.rules) for c in found.generic_calls}
    assert lines == {"return np.sum(np.sort(y)[:2]) + np.sum(y * y)":
                     {"numpy.sort (called)"}}  # the slice [:2]'s vjp is written out (optimize/indexed.py)
    assert all(c.line.startswith("test_explain.py:") for c in found.generic_calls)
    assert "numpy.sort (called)" in str(found)


def of_a_dict(p):
    return np.sum(p["w"] * p["w"]) * 2.0


def test_the_generic_adjoint_says_why():
    found = adsrc.explain(of_a_dict, {"w": np.ones(3)})
    assert not found.specialized
    assert found.reason == "none of them is a float, an int or a NumPy array (or a list of them)"
    assert "ran: the generic adjoint (none of them" in str(found)
    saved = adsrc.config.specialize
    adsrc.config.specialize = False
    try:
        found = adsrc.explain(smooth, np.ones(3))
    finally:
        adsrc.config.specialize = saved
    assert not found.specialized and "specialization is off" in found.reason
    assert "generic form" in found.adjoint or "Adjoint of smooth" in found.adjoint


def test_cache_misses_of_the_call_are_reported():
    def f(x):
        return np.sum(x ** 3)
    first = adsrc.explain(f, np.ones(3))
    assert first.compiled_now and first.misses and "first compile" in first.misses[-1].cause
    again = adsrc.explain(f, np.ones(3))
    assert not again.compiled_now and again.misses == ()
    assert "the compile cache held" in str(again)


def test_the_compile_phases_are_timed_on_a_compile_of_its_own():
    found = adsrc.explain(looped, np.ones(4), 3)
    for name in ("parse and check", "front end", "ANF and activity", "reverse transform", "pass deadcode",
                 "specialize"):
        assert found.compile_seconds[name] >= 0.0, name
    assert found.compile_seconds["total"] >= found.compile_seconds["specialize"]
    again = adsrc.explain(looped, np.ones(4), 3)  # cached for the call, timed all the same
    assert "specialize" in again.compile_seconds


def test_eager_and_wrt_are_those_of_grad():
    found = adsrc.explain(looped, np.ones(4), 2, eager=True)
    assert "eager" in found.adjoint
    found = adsrc.explain(lambda_wrt, 1.0, np.ones(3), wrt=1)
    assert "with respect to y" in found.adjoint


def lambda_wrt(a, y):
    return a * np.sum(y * y)


def test_a_derivative_is_refused():
    with pytest.raises(adsrc.errors.InvalidArgument, match="explain f itself"):
        adsrc.explain(adsrc.grad(smooth), np.ones(2))


def test_generic_calls_reads_the_header_and_the_line_comments():
    source = """# Adjoint of f
sin_dx = rule_vjp('numpy.sin', 0)
sort_dx = rule_vjp('numpy.sort', 0)

def f_adjoint(x):
    def pullback(g):
        # line 3: y = np.sin(x)
        d = sin_dx(g, None, x)
        s = Stack(sort_dx, 'f.py:4')
        # line 4: return np.sum(np.sort(y))  (the same at every step of the loop below)
        d = accumulate(d, Thunk(sort_dx, g, None, x))
        d = added_into(d, sin_dx, g, None, x, 0)
        return (d,)
"""
    found = generic_calls(source, "f.py")
    assert [(c.line, c.code, c.rules) for c in found] == [
        ("f.py:3", "y = np.sin(x)", ("numpy.sin (called)", "numpy.sort (stacked)")),
        ("f.py:4", "return np.sum(np.sort(y))", ("numpy.sort (deferred)", "numpy.sin (passed to a helper)"))]


def test_the_stopwatch_adds_up_and_costs_nothing_outside_a_recording():
    with phase("outside"):  # nothing records: nothing kept
        pass
    with recording() as times:
        for _ in range(3):
            with phase("a"):
                pass
        with recording() as inner:
            with phase("b"):
                pass
    assert list(times) == ["a"] and list(inner) == ["b"]
