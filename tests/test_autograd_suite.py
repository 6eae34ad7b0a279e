"""The autograd-suite harness (scripts/autograd_suite), end to end on a small autograd-style test file.

The file is written here, in autograd's style (``import autograd.numpy as np``,
``from autograd.test_util import check_grads``), not taken from autograd. The
runner runs it through the shim in a pytest subprocess; the summary must
count each test where it belongs: passes through grad, check_grads (order 2,
both modes), elementwise_grad, hessian, jacobian, value_and_grad, make_vjp,
argnum and a complex argument; a skip for an autograd-only API; and
failures, grouped by cause, for a wrong value, a wrong rule check_grads
catches, a wrong complex derivative the shim's complex check catches, and
an argument check_grads could not check (which must not pass silently).
"""
import importlib.util
import json
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AUTOGRAD_STYLE_TESTS = '''
import adsrc
import autograd.numpy as np
import autograd.numpy.random as npr
from autograd import elementwise_grad, grad, hessian, jacobian, make_vjp, value_and_grad
from autograd.extend import primitive, defvjp
from autograd.test_util import check_grads, combo_check


def test_grad_scalar():
    assert abs(grad(lambda x: x ** 3 + np.sin(x))(2.0) - (12.0 + np.cos(2.0))) < 1e-12


def test_grad_argnum():
    fun = lambda x, y: x * np.exp(y)
    assert abs(grad(fun, 1)(2.0, 0.5) - 2.0 * np.exp(0.5)) < 1e-12


def test_check_grads_order_two():
    def fun(x, scale=2.0):
        return np.sum(np.tanh(x) * x) * scale
    check_grads(fun)(npr.randn(3))
    check_grads(fun, modes=["rev"])(npr.randn(2, 2), scale=3.0)


def test_combo_check_with_keywords():
    combo_check(np.sum, (0,))([npr.randn(2, 3)], axis=[None, 0, 1], keepdims=[True, False])


def test_elementwise_grad():
    x = npr.randn(4)
    assert np.allclose(elementwise_grad(np.sin)(x), np.cos(x))


def test_hessian_and_jacobian():
    x = npr.randn(3)
    assert np.allclose(hessian(lambda x: np.sum(x ** 3))(x), np.diag(6 * x))
    assert np.allclose(jacobian(lambda x: x ** 2)(x), np.diag(2 * x))


def test_value_and_grad_and_make_vjp():
    value, gradient = value_and_grad(lambda x: np.sum(x ** 2))(np.array([1.0, 2.0]))
    assert value == 5.0 and np.allclose(gradient, [2.0, 4.0])
    pullback, ans = make_vjp(lambda x: 3.0 * x)(np.ones(2))
    assert np.allclose(pullback(np.array([1.0, -1.0])), [3.0, -3.0])


def test_uses_primitive():
    @primitive
    def double(x):
        return 2.0 * x
    defvjp(double, lambda ans, x: lambda g: 2.0 * g)
    check_grads(double)(1.0)


def test_wrong_value():
    assert grad(lambda x: x * x)(3.0) == 7.0


def log_with_a_wrong_rule(x):
    return np.log(x)


adsrc.register_adjoint(log_with_a_wrong_rule, lambda g, ans, x: g * x)


def test_wrong_rule():
    check_grads(lambda x: log_with_a_wrong_rule(x) * 2.0, modes=["rev"], order=1)(2.0)


def test_complex_check_grads():
    def sin_times(z):
        return np.sin(z) * z
    check_grads(sin_times, order=1)(np.array([0.3 + 0.4j, -1.0 + 0.2j]))


def hidden_scale(z):
    return z * 3.0


adsrc.register_nondifferentiable(hidden_scale)   # a wrong derivative: adsrc sees 0, finite differences 3


def test_complex_wrong_derivative_is_caught():
    def sin_plus(z):
        return np.sin(z) + hidden_scale(z)
    check_grads(sin_plus, modes=["rev"], order=1)(np.array([0.3 + 0.4j]))


def test_integer_argument_is_not_checked_silently():
    check_grads(lambda n: n * 2.0)(3)
'''


def _runner():
    spec = importlib.util.spec_from_file_location("autograd_suite_run", ROOT / "scripts" / "autograd_suite" / "run.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_counts_passes_skips_and_failures(tmp_path, capsys):
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_style.py").write_text(textwrap.dedent(AUTOGRAD_STYLE_TESTS))
    summary_file = tmp_path / "summary.json"
    status = _runner().main([str(tests), "--json", str(summary_file), "--timeout", "120"])
    summary = json.loads(summary_file.read_text())
    outcomes = {record["nodeid"].split("::")[-1]: record for record in summary["tests"]}
    assert status == 1 and summary["collected"] == 13
    assert {name for name, r in outcomes.items() if r["outcome"] == "passed"} == {
        "test_grad_scalar", "test_grad_argnum", "test_check_grads_order_two", "test_combo_check_with_keywords",
        "test_elementwise_grad", "test_hessian_and_jacobian", "test_value_and_grad_and_make_vjp",
        "test_complex_check_grads"}
    assert summary["skipped_autograd_only"] == 1
    assert outcomes["test_uses_primitive"]["reason"] == "autograd-only API: autograd.extend.primitive"
    assert (summary["runnable"], summary["passed"], summary["failed"]) == (12, 8, 4)
    assert outcomes["test_wrong_value"]["cause"] == "wrong value: a test assertion failed"
    assert outcomes["test_wrong_rule"]["cause"] == "wrong derivative: check_grads first order, rev (vjp)"
    assert (outcomes["test_complex_wrong_derivative_is_caught"]["cause"]
            == "wrong derivative: check_grads first order, rev (vjp), the shim's complex check")
    assert (outcomes["test_integer_argument_is_not_checked_silently"]["cause"]
            == "argument not checked: check_grads holds it fixed (int)")
    printed = capsys.readouterr().out
    assert "| passed | 8 |" in printed and "| skipped: autograd-only API | 1 |" in printed
