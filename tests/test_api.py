"""The public API: decorator, vjp, mode switch, cache and errors."""
import os
import subprocess
import sys
import threading

import math

import numpy as np
import pytest

import adsrc
from adsrc import errors

W = np.arange(6.0).reshape(2, 3) / 10


def loss(W, x):
    return np.sum(np.tanh(W @ x))


def vector_valued(x):
    return np.sin(x) * 2.0


@adsrc.differentiate
def decorated(x):
    return np.sum(x * x)


@adsrc.differentiate(wrt=(0, 1), eager=False)
def decorated_pair(x, y):
    return np.sum(x * y)


def test_decorator_bare_and_with_options():
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(decorated(x), 2 * x)
    value, g = decorated.value_and_grad(x)
    assert value == 5.0 and np.allclose(g, 2 * x)
    assert decorated.__wrapped__(x) == 5.0
    assert "def decorated_adjoint" in decorated.source
    gx, gy = decorated_pair(x, x + 1)
    np.testing.assert_allclose(gx, x + 1)
    np.testing.assert_allclose(gy, x)


def test_vjp_of_array_valued_function():
    x = np.array([0.1, 0.2, 0.3])
    value, pullback = adsrc.vjp(vector_valued, x)
    np.testing.assert_allclose(value, np.sin(x) * 2)
    ct = np.array([1.0, -1.0, 2.0])
    np.testing.assert_allclose(pullback(ct), ct * 2 * np.cos(x))
    np.testing.assert_allclose(pullback(ct), ct * 2 * np.cos(x))  # callable twice


def loop_loss(W, xs):
    total = 0.0
    for x in xs:
        total = total + np.sum(np.tanh(W @ x))
    return total


def test_modes_give_same_gradients_and_different_source():
    xs = np.ones((4, 3))
    lazy = adsrc.grad(loop_loss, eager=False)(W, xs)
    eager = adsrc.grad(loop_loss, eager=True)(W, xs)
    np.testing.assert_allclose(lazy, eager, rtol=1e-12)
    lazy_src = adsrc.adjoint_source(loop_loss)
    eager_src = adsrc.adjoint_source(loop_loss, eager=True)
    assert "Stack(" in lazy_src and ".add(" in lazy_src  # the loop's contributions to dW, stacked
    assert "Thunk(" not in eager_src.split("def ", 1)[1] and "unthunk(" not in eager_src.split("def ", 1)[1]


def test_context_manager_is_read_at_call_time():
    g = adsrc.grad(loss)
    with adsrc.eager_unthunk():
        assert adsrc.config.eager_unthunk is True
        eager = g(W, np.ones(3))
        with adsrc.eager_unthunk(False):
            assert adsrc.config.eager_unthunk is False
    assert adsrc.config.eager_unthunk is False
    np.testing.assert_allclose(eager, g(W, np.ones(3)))


def test_context_setting_is_thread_local():
    seen = {}
    ready = threading.Event()

    def other():
        ready.wait()
        seen["other"] = adsrc.config.eager_unthunk

    t = threading.Thread(target=other)
    t.start()
    with adsrc.eager_unthunk():
        ready.set()
        t.join()
        assert adsrc.config.eager_unthunk is True
    assert seen["other"] is False


def test_environment_variable_sets_the_default():
    code = "import adsrc; print(adsrc.config.eager_unthunk)"
    env = dict(os.environ, ADSRC_EAGER_UNTHUNK="1")
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "True"


def test_redefined_function_gets_fresh_adjoint():
    namespace = {}
    src = "import numpy as np\ndef f(x):\n    return np.sum(x * {k})\n"
    path = os.path.join(os.path.dirname(__file__), "_redefined_tmp.py")
    try:
        for k in (2.0, 3.0):
            with open(path, "w") as fh:
                fh.write(src.format(k=k))
            import importlib.util

            spec = importlib.util.spec_from_file_location(f"_redefined_{int(k)}", path)
            mod = importlib.util.module_from_spec(spec)
            import linecache

            linecache.checkcache(path)
            spec.loader.exec_module(mod)
            namespace[k] = adsrc.grad(mod.f)(np.ones(2))
    finally:
        os.remove(path)
    np.testing.assert_allclose(namespace[2.0], [2.0, 2.0])
    np.testing.assert_allclose(namespace[3.0], [3.0, 3.0])


FACTOR = 2.0


def uses_global(x):
    return np.sum(x * FACTOR)


def test_changed_global_is_seen():
    global FACTOR
    assert np.allclose(adsrc.grad(uses_global)(np.ones(2)), 2.0)
    FACTOR = 5.0
    try:
        assert np.allclose(adsrc.grad(uses_global)(np.ones(2)), 5.0)
    finally:
        FACTOR = 2.0


def test_closure_values():
    def make(k):
        def f(x):
            return np.sum(np.sin(x) * k)
        return f

    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(adsrc.grad(make(2.0))(x), 2 * np.cos(x))
    np.testing.assert_allclose(adsrc.grad(make(3.0))(x), 3 * np.cos(x))


# -- errors ---------------------------------------------------------------
def uses_try(x):
    try:
        y = x * 2
    except ValueError:
        y = x
    return np.sum(y)


opaque = np.frompyfunc(math.sin, 2, 1)  # a C function (a ufunc made at run time) with no rule


def uses_opaque(x):
    y = x * 2.0
    return np.sum(opaque(y, 1.0))


def line_of(func, text):
    import inspect

    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


def test_unsupported_syntax_names_construct_and_line():
    with pytest.raises(errors.UnsupportedSyntax) as info:
        adsrc.grad(uses_try)(np.ones(2))
    assert "try/except" in str(info.value)
    assert f"test_api.py:{line_of(uses_try, 'try:')}:" in str(info.value)


def test_no_gradient_rule_names_function_line_and_remedy():
    with pytest.raises(errors.NoGradientRule) as info:
        adsrc.grad(uses_opaque)(np.ones(2))
    message = str(info.value)
    assert "opaque" in message and "register_adjoint" in message
    assert f"test_api.py:{line_of(uses_opaque, 'opaque(y, 1.0)')}" in message


def test_non_scalar_output_suggests_vjp():
    with pytest.raises(errors.NonScalarOutput) as info:
        adsrc.grad(vector_valued)(np.ones(3))
    assert "vjp" in str(info.value) and "(3,)" in str(info.value)
    assert f"test_api.py:{line_of(vector_valued, 'def vector_valued')}" in str(info.value)


def test_source_unavailable():
    with pytest.raises(errors.SourceUnavailable):
        adsrc.grad(np.argsort)(np.ones(2))  # np.sin has a rule: grad(np.sin) differentiates it
    namespace = {}
    exec("def typed_at_repl(x):\n    return x * x\n", namespace)
    with pytest.raises(errors.SourceUnavailable) as info:
        adsrc.grad(namespace["typed_at_repl"])(1.0)
    assert "<string>:1" in str(info.value)


def test_errors_share_a_base_class():
    for cls in (errors.UnsupportedSyntax, errors.NoGradientRule, errors.NonScalarOutput,
                errors.SourceUnavailable, errors.InvalidArgument):
        assert issubclass(cls, adsrc.AdsrcError)


def test_bad_wrt_and_integer_inputs():
    with pytest.raises(errors.InvalidArgument, match="no parameter named 'z'"):
        adsrc.grad(loss, wrt="z")
    with pytest.raises(errors.InvalidArgument, match="out of range"):
        adsrc.grad(loss, wrt=5)
    with pytest.raises(errors.InvalidArgument, match="integers"):
        adsrc.grad(loss)(np.ones((2, 3), dtype=int), np.ones(3))


def test_lambda_assigned_to_a_name():
    square = lambda x: x * x  # noqa: E731
    assert adsrc.grad(square)(3.0) == 6.0


def fragile(x):
    return x * 1.0


adsrc.register_adjoint(fragile, lambda g, ans, x: np.ones(7) + g)  # a broken rule


def uses_fragile(x):
    y = x * 3.0
    total = 0.0
    for i in range(2):
        total = total + np.sum(fragile(x) * y)
    return total


def test_errors_in_the_backward_sweep_name_the_original_line():
    expected = f"test_api.py:{line_of(uses_fragile, 'fragile(x) * y')}"
    for eager in (False, True):
        with pytest.raises(ValueError) as info:
            adsrc.grad(uses_fragile, eager=eager)(np.ones(3))
        notes = " ".join(getattr(info.value, "__notes__", []))
        assert expected in notes, notes
        if not eager:
            assert "eager_unthunk" in notes


def failing_rule_user(x):
    return np.sum(np.sqrt(x) * 2.0)


def test_materialization_error_names_origin_and_switch():
    acc = adsrc.accumulate(adsrc.Thunk(np.multiply, np.ones(2), 2.0),
                           adsrc.Thunk(np.multiply, np.ones(2), np.ones(3)), "model.py:7")
    with pytest.raises(ValueError) as info:
        adsrc.unthunk(adsrc.accumulate(acc, np.ones(2)))
    notes = " ".join(info.value.__notes__)
    assert "model.py:7" in notes and "eager_unthunk" in notes
