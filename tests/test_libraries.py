"""Libraries are primitives: a function from the standard library or an installed package is never
traced into. It has a rule, or its call is refused with NoGradientRule naming the call site (the
user's file:line) and a remedy spelled as the call spells the function. The user's own functions
(and adsrc's) are still transformed from their source.
"""
from __future__ import annotations

import inspect
import json
import statistics

import numpy as np
import pytest

import adsrc
from adsrc.errors import NoGradientRule
from adsrc.frontend.libraries import is_library_function


def line_of(func, text):
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


def mean_of_two(x):
    return statistics.fmean([x, 2.0 * x])


def helper(x):
    return np.sin(x) * x


def uses_helper(x):
    return helper(x) + 1.0


def test_which_functions_are_libraries():
    assert is_library_function(statistics.fmean)
    assert is_library_function(json.dumps)
    assert is_library_function(np.linalg.norm.__wrapped__ if hasattr(np.linalg.norm, "__wrapped__")
                               else np.linalg.norm)
    assert not is_library_function(helper)  # the user's own file
    assert not is_library_function(adsrc.rules.reductions.logsumexp)  # adsrc's own package
    assert not is_library_function(np.sin)  # a ufunc is not a Python function (no rule: refused anyway)
    assert not is_library_function(eval("lambda x: x"))  # code from the REPL or exec


def test_a_standard_library_function_is_refused_at_its_call_site():
    with pytest.raises(NoGradientRule) as info:
        adsrc.grad(mean_of_two)(1.5)
    message = str(info.value)
    assert f"{__file__}:{line_of(mean_of_two, 'statistics.fmean')}:" in message
    assert "adsrc.register_adjoint(statistics.fmean, vjp)" in message
    assert "does not differentiate their source" in message


def test_a_registered_rule_makes_the_library_function_differentiable():
    import adsrc.rules.registry as registry

    def fmean_of_list(x):
        return statistics.fmean(x)

    adsrc.register_adjoint(statistics.fmean, lambda g, ans, data, weights=None: [g / len(data)] * len(data))
    try:
        grads = adsrc.grad(fmean_of_list)([1.0, 2.0, 4.0])
        assert list(grads) == pytest.approx([1 / 3] * 3)
    finally:
        registry._rules.pop(statistics.fmean, None)
        registry._changed()


def test_user_functions_are_still_traced():
    x = 0.7
    assert adsrc.grad(uses_helper)(x) == pytest.approx(np.cos(x) * x + np.sin(x))


def test_a_scipy_function_without_a_rule_is_refused_not_traced():
    stats = pytest.importorskip("scipy.stats")

    def standardized(x):
        return np.sum(stats.zscore(x) * x)

    with pytest.raises(NoGradientRule) as info:
        adsrc.grad(standardized)(np.array([1.0, 2.0, 4.0]))
    assert "adsrc.register_adjoint(stats.zscore, vjp)" in str(info.value)
    assert f"{__file__}:{line_of(standardized, 'stats.zscore')}:" in str(info.value)


def test_second_order_does_not_trace_into_a_library_function():
    import colorsys

    from adsrc.second_order import dispatch

    # The any-Python forward pass (second order) transforms the Python functions a vjp calls, but
    # not a library's: colorsys.rgb_to_yiq (plain arithmetic, which it could transform) is called
    # as it is, and a tangent it would drop is an error naming it.
    value, tangent = dispatch.call(colorsys.rgb_to_yiq, (dispatch.zero,) * 3, {}, 0.2, 0.4, 0.6)
    assert value == colorsys.rgb_to_yiq(0.2, 0.4, 0.6) and tangent is dispatch.zero
    with pytest.raises(NotImplementedError, match="rgb_to_yiq .*comes from a library"):
        dispatch.call(colorsys.rgb_to_yiq, (1.0, dispatch.zero, dispatch.zero), {}, 0.2, 0.4, 0.6)
