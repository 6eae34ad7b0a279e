"""pytest plugin for running autograd's tests on adsrc (loaded by run.py with ``-p adsrc_autograd_plugin``).

- A test that uses an autograd-only API is skipped with the reason
  "autograd-only API: <name>" (see autograd/_only.py), also when it failed
  after touching one (adsrc refusing to differentiate a stand-in is not a
  finding about adsrc).
- Each test runs under a timeout (SIGALRM; ``ADSRC_AUTOGRAD_TIMEOUT`` seconds).
- Every outcome, with its exception and a cause key for grouping, goes to
  the JSON lines file ``ADSRC_AUTOGRAD_RESULTS``.
"""
from __future__ import annotations

import json
import os
import re
import signal

import pytest

from autograd import _only

TIMEOUT = float(os.environ.get("ADSRC_AUTOGRAD_TIMEOUT", "60"))
RESULTS = os.environ.get("ADSRC_AUTOGRAD_RESULTS")


class TestTimeout(BaseException):
    """A test ran longer than ADSRC_AUTOGRAD_TIMEOUT (a BaseException so nothing on the way catches it)."""


def _alarm(signum, frame):
    raise TestTimeout(f"timeout after {TIMEOUT:g} s")


# Tests of autograd's own wrappers rather than of derivatives: what they check has no counterpart in adsrc,
# which hands NumPy's functions plain values. Each is skipped as autograd-only, with its reason.
AUTOGRAD_BEHAVIOUR = {
    "test_wrappers.py::test_wrapped_name_and_docs": "the names and docstrings of autograd's operators",
    "test_wrappers.py::test_custom_where": "autograd.numpy.where's keyword arguments, which NumPy's where lacks",
    "test_wrappers.py::test_custom_where_dtypes": "the result types of autograd.numpy.where's wrapper",
    "test_numpy.py::test_scalar_array_box_attributes": "an ArrayBox shows a Python float as a 0-d array",
    "test_fft.py::test_rfftn_odd_not_implemented": "autograd's NotImplementedError for rfftn of odd sizes",
    **{f"test_scipy.py::{name}": "the axes= and dot_axes= keywords of autograd.scipy.signal.convolve, which "
                                 "scipy.signal.convolve lacks"
       for name in ("test_convolve_generalization", "test_convolve_ignore", "test_convolve_ignore_dot")},
}


def pytest_collection_modifyitems(items):
    for item in items:
        key = item.nodeid.split("[")[0]
        reason = AUTOGRAD_BEHAVIOUR.get(key) or AUTOGRAD_BEHAVIOUR.get(key.rsplit("/", 1)[-1])
        if reason:
            item.add_marker(pytest.mark.skip(reason=f"{_only.REASON} (behaviour): {reason}"))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item, nextitem):
    _only.touched.clear()
    _only.capped.clear()
    yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item):
    _only.in_test[0] = True
    previous = signal.signal(signal.SIGALRM, _alarm)
    signal.setitimer(signal.ITIMER_REAL, TIMEOUT)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        _only.in_test[0] = False


_WHERE = re.compile(r"(<[^>]*>|[\w./\\-]+\.py)(:\d+)+(:)?\s*")
_NUMBER = re.compile(r"\b\d+(\.\d+)?(e[-+]?\d+)?\b")


def _clean(text: str) -> str:
    text = _WHERE.sub("", text.splitlines()[0] if text else "")
    return _NUMBER.sub("N", text).strip()[:110]


def cause_of(error: BaseException) -> str:
    """A short key naming why a test failed, for grouping (file:line and numbers removed)."""
    from adsrc import errors
    kind = next((k for k in type(error).__mro__ if k.__module__ == errors.__name__), type(error))
    name = kind.__name__
    message = str(error)
    if isinstance(error, TestTimeout):
        return "timeout"
    if name == "NoGradientRule":
        return f"no gradient rule for {getattr(error, 'name', '?')}"
    if name in ("UnsupportedSyntax", "RefusedWhenRun"):
        construct = getattr(error, "construct", "?")
        return f"unsupported syntax: {_clean(construct)}"
    if name == "AssertionError" and "not checked: adsrc.check_grads holds" in message:
        return f"argument not checked: check_grads holds it fixed ({message.rsplit('(', 1)[-1].rstrip(')')})"
    if name == "AssertionError" and message.startswith("check_grads:"):
        order = "second order" if "second order" in message else "first order"
        mode = "fwd (jvp)" if "forward mode" in message else "rev (vjp)"
        shim = ", the shim's complex check" if "complex check" in message else ""
        return f"wrong derivative: check_grads {order}, {mode}{shim}"
    if "complex" in message.lower() and (isinstance(error, errors.AdsrcError)
                                         or name in ("AssertionError", "TypeError", "NotImplementedError")):
        if "not checked" in message:
            return "complex argument: check_grads holds it fixed (not checked)"
        rule = re.search(r"the (gradient|tangent) rule (\w+) met a complex value", message)
        if rule:
            return f"complex refused by the {rule.group(1)} rule {rule.group(2)}"
        return f"complex refused ({name})"
    if name == "Failed" and "DID NOT RAISE" in message:
        return f"expected an error, none raised ({_clean(message)})"
    if name == "AssertionError":
        return "wrong value: a test assertion failed"
    return f"{name}: {_clean(message)}"


_NUMPY_ATTRIBUTE = re.compile(r"module 'numpy((?:\.\w+)?)' has no attribute '(\w+)'")


def _autograd_numpy_only(excinfo) -> None:
    """A name autograd.numpy has and NumPy lacks (np.make_diagonal), or a failure inside a stand-in, is
    autograd-only: record it so that the test is reported skipped."""
    if excinfo is None:
        return
    error = excinfo.value
    match = _NUMPY_ATTRIBUTE.search(str(error)) if isinstance(error, AttributeError) else None
    if match:
        _only.touched.append(f"autograd.numpy{match.group(1)}.{match.group(2)}")
    elif "autograd/_only.py" in str(error):
        _only.touched.append("a stand-in, differentiated")


def _write(record: dict) -> None:
    if RESULTS:
        with open(RESULTS, "a") as file:
            file.write(json.dumps(record) + "\n")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed:
        _autograd_numpy_only(call.excinfo)
    if call.when == "call" and report.failed and _only.touched:
        names = sorted(set(_only.touched))
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, f"Skipped: {_only.REASON}: {', '.join(names)}")
    if report.when == "call" or report.outcome != "passed":
        record = {"nodeid": item.nodeid, "when": report.when, "outcome": report.outcome}
        if _only.capped:
            record["capped"] = sorted(set(_only.capped))
        if report.outcome == "skipped":
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
            record["reason"] = reason.removeprefix("Skipped: ")
            record["autograd_only"] = _only.REASON in reason
            record["beyond_second_order"] = _only.BEYOND in reason
        elif report.outcome == "failed" and call.excinfo is not None:
            error = call.excinfo.value
            record["error"] = f"{type(error).__name__}: {str(error)[:600]}"
            record["cause"] = cause_of(error)
        if report.outcome != "passed" or report.when == "call":
            _write(record)


def pytest_collectreport(report):
    if report.failed:
        error = getattr(report, "longrepr", None)
        text = str(error).strip().splitlines()[-1] if error else "?"
        _write({"nodeid": report.nodeid, "when": "collect", "outcome": "error", "error": text[:600],
                "cause": f"collection error: {_clean(text)}"})
    elif report.skipped:
        reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else str(report.longrepr)
        _write({"nodeid": report.nodeid, "when": "collect", "outcome": "skipped",
                "reason": reason.removeprefix("Skipped: "), "autograd_only": _only.REASON in reason})
