"""One gradient function called many times: what its later calls must still notice.

``grad(f)`` (and ``value_and_grad``, ``vjp``) keeps the adjoint it ran last with a watch
of what the compile cache checks (backend/watch.py, api/reverse.py), so that a warm call
skips the cache's full checks. Each test here calls one derivative, made once, before
and after a change it must see: a global, a builtin hidden by a global, a function
reached by a dotted name, a closure cell, the defaults, the code object, a rule
registered again, the cache told to forget, the eager and specialize settings, new
argument kinds and shapes, keyword arguments, each form of ``wrt``. Gradients are
checked against central differences, in lazy and eager mode, and each returned array
must be the caller's own.
"""
from __future__ import annotations

import gc
import importlib.util
import os
import sys
import textwrap
import weakref

import numpy as np
import pytest

import adsrc
import adsrc.backend.watch
from adsrc.backend.pipeline import EAGER, REVERSE, cache, compile as compiled
from adsrc.errors import InvalidArgument
from gradcheck import numerical_grad

MODES = [False, True]
_EDITS = iter(range(1_500_000_000, 2_000_000_000, 60))


def load(tmp_path, name, source):
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    stamp = next(_EDITS)
    os.utime(path, (stamp, stamp))
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def assert_own(returned, *inputs):
    """Every returned array is writeable and shares memory with no other returned array nor any input."""
    out = [a for a in (returned if isinstance(returned, tuple) else (returned,)) if isinstance(a, np.ndarray)]
    for k, a in enumerate(out):
        assert a.flags.writeable
        assert not any(np.shares_memory(a, b) for b in out[k + 1:])
        assert not any(np.shares_memory(a, b) for b in inputs if isinstance(b, np.ndarray))


def fd(f, args, i):
    return numerical_grad(f, args, i)


X = np.array([0.5, -1.0, 2.0])


# ---- outside values ----------------------------------------------------------------------------
@pytest.mark.parametrize("eager", MODES)
def test_changed_global(tmp_path, eager):
    module = load(tmp_path, f"watch_global_{eager}", """
        import numpy as np
        SCALE = 2.0

        def f(x):
            return np.sum(np.sin(x) * SCALE)
    """)
    df = adsrc.grad(module.f, eager=eager)
    for scale in (2.0, 2.0, 5.0, 5.0, -1.0):
        module.SCALE = scale
        np.testing.assert_allclose(df(X), scale * np.cos(X), rtol=1e-14)
    value, pullback = adsrc.vjp(module.f, X, eager=eager)
    module.SCALE = 3.0
    value, pullback = adsrc.vjp(module.f, X, eager=eager)
    assert value == module.f(X)
    np.testing.assert_allclose(pullback(1.0), 3.0 * np.cos(X), rtol=1e-14)


def test_global_hiding_a_builtin_and_going_away(tmp_path):
    module = load(tmp_path, "watch_builtin", """
        def f(x):
            return abs(x) * 3.0
    """)
    df = adsrc.grad(module.f)
    assert df(-2.0) == -3.0
    assert df(-2.0) == -3.0
    module.abs = lambda x: x * x  # a global of that name now hides the builtin
    assert df(-2.0) == -12.0
    del module.abs
    assert df(-2.0) == -3.0


def test_function_reached_by_a_dotted_name(tmp_path, monkeypatch):
    helpers = load(tmp_path, "watch_helpers", """
        import numpy as np

        def act(x):
            return np.tanh(x)

        def other(x):
            return x * x
    """)
    module = load(tmp_path, "watch_dotted", """
        import numpy as np

        def f(x):
            return np.sum(helpers.act(x))
    """)
    monkeypatch.setitem(sys.modules, "watch_helpers", helpers)  # importable: the generated module imports it
    module.helpers = helpers
    df = adsrc.grad(module.f)
    np.testing.assert_allclose(df(X), 1 - np.tanh(X) ** 2, rtol=1e-14)
    np.testing.assert_allclose(df(X), 1 - np.tanh(X) ** 2, rtol=1e-14)
    original = helpers.act
    helpers.act = helpers.other
    try:
        np.testing.assert_allclose(df(X), 2 * X, rtol=1e-14)
    finally:
        helpers.act = original
    np.testing.assert_allclose(df(X), 1 - np.tanh(X) ** 2, rtol=1e-14)


@pytest.mark.parametrize("eager", MODES)
def test_changed_closure_cell(eager):
    k = 2.0

    def f(x):
        return np.sum(x * x * k)

    df = adsrc.grad(f, eager=eager)
    for value in (2.0, 2.0, 7.0, -0.5):
        k = value
        np.testing.assert_allclose(df(X), 2 * value * X, rtol=1e-14)


# ---- the function itself ---------------------------------------------------------------------
def test_changed_defaults():
    def f(x, k=2.0, *, p=1.0):
        return np.sum(x * k) + p * np.sum(x * x)

    df = adsrc.grad(f)
    np.testing.assert_allclose(df(X), 2.0 + 2 * X)
    np.testing.assert_allclose(df(X), 2.0 + 2 * X)
    # the compile cache compiles again for new defaults (the adjoint may read them): so must a warm call
    f.__defaults__ = (5.0,)
    np.testing.assert_allclose(df(X), 5.0 + 2 * X)
    assert len(cache.entries(f)) == 2
    f.__kwdefaults__["p"] = 3.0  # the same dict, changed in place
    np.testing.assert_allclose(df(X), 5.0 + 6 * X)
    assert len(cache.entries(f)) == 3
    f.__kwdefaults__ = {"p": 0.0}
    np.testing.assert_allclose(df(X), np.full(3, 5.0))
    assert len(cache.entries(f)) == 4

    def g(x, k=2.0):
        return np.sum(x * k)

    dg = adsrc.grad(g)
    dg(X)
    g.__defaults__ = (5.0,)
    np.testing.assert_array_equal(dg(X), np.full(3, 5.0))
    assert len(cache.entries(g)) == 2
    g.__kwdefaults__ = {"unused": 1.0}  # g has no keyword-only parameter, but the cache looks
    np.testing.assert_array_equal(dg(X), np.full(3, 5.0))
    assert len(cache.entries(g)) == 3
    np.testing.assert_allclose(df(X), np.full(3, 5.0))
    assert len(cache.entries(f)) == 4


def test_swapped_code_object():
    def a(x):
        return x * 2.0

    def b(x, y=1.0):
        return x * 3.0 * y

    da = adsrc.grad(a)
    assert da(1.0) == 2.0
    assert da(1.0) == 2.0
    assert adsrc.vjp(a, 1.0)[1](1.0) == 2.0
    a.__code__ = b.__code__
    a.__defaults__ = (1.0,)
    assert da(1.0) == 3.0
    value, pullback = adsrc.vjp(a, 1.0)
    assert value == 3.0 and pullback(1.0) == 3.0

    def c(x, y):
        return x * 2.0 * y

    def d(y, x):  # the same names in the other order: wrt="y" is another position
        return x * 3.0 * y

    assert adsrc.vjp(c, 1.0, 2.0, wrt="y")[1](1.0) == 2.0
    c.__code__ = d.__code__
    assert adsrc.vjp(c, 1.0, 2.0, wrt="y")[1](1.0) == 6.0


def test_redefined_rule():
    def primitive(x):
        return x * 2.0  # its rule, not this source, is differentiated

    def f(x):
        return np.sum(primitive(x))

    adsrc.register_adjoint(primitive, lambda g, ans, x: 2.0 * g)
    df = adsrc.grad(f)
    np.testing.assert_array_equal(df(X), np.full(3, 2.0))
    np.testing.assert_array_equal(df(X), np.full(3, 2.0))
    adsrc.register_adjoint(primitive, lambda g, ans, x: 10.0 * g)  # wrong on purpose: it must be the one used
    np.testing.assert_array_equal(df(X), np.full(3, 10.0))
    with adsrc.eager_unthunk():
        np.testing.assert_array_equal(df(X), np.full(3, 10.0))


def test_forgotten_and_cleared_cache_compile_again():
    def f(x):
        return np.sum(x ** 3)

    df = adsrc.grad(f)
    df(X)
    cache.forget(f)
    assert cache.entries(f) == []
    np.testing.assert_allclose(df(X), 3 * X ** 2)
    assert cache.entries(f)  # not the adjoint kept from before the cache forgot it
    cache.clear()
    np.testing.assert_allclose(df(X), 3 * X ** 2)
    assert cache.entries(f)


def test_a_warm_call_does_not_compile(monkeypatch):
    def f(x, y):
        return np.sum(x * y)

    df = adsrc.grad(f)
    df(X, X)
    calls = []
    original = adsrc.backend.watch.compile
    monkeypatch.setattr(adsrc.backend.watch, "compile", lambda *a: calls.append(a) or original(*a))
    df(X, X)
    adsrc.vjp(f, X, X)[1](1.0)
    assert len(calls) == 1  # vjp's first call; grad's second goes past the compile cache
    adsrc.vjp(f, X, X)[1](1.0)
    assert len(calls) == 1


# ---- settings ----------------------------------------------------------------------------------
def test_eager_setting_read_at_each_call():
    def f(x):
        return np.sum(np.sin(x) * x)

    df = adsrc.grad(f)
    expected = np.cos(X) * X + np.sin(X)
    np.testing.assert_allclose(df(X), expected, rtol=1e-14)
    assert not compiled(f, (0,), EAGER).specialized
    with adsrc.eager_unthunk():
        np.testing.assert_allclose(df(X), expected, rtol=1e-14)
    assert compiled(f, (0,), EAGER).specialized  # the eager adjoint ran, specialized
    with adsrc.eager_unthunk(False):
        df(X)
    saved = adsrc.config.eager_unthunk
    adsrc.config.eager_unthunk = True
    try:
        x4 = np.ones(4)
        df(x4)
        assert any(key[0][1] == (4,) for key in compiled(f, (0,), EAGER).specialized)
        assert not any(key[0][1] == (4,) for key in compiled(f, (0,), REVERSE).specialized)
    finally:
        adsrc.config.eager_unthunk = saved
    lazy = adsrc.grad(f, eager=False)  # eager= given wins over the context
    with adsrc.eager_unthunk():
        lazy(np.ones(5))
    assert any(key[0][1] == (5,) for key in compiled(f, (0,), REVERSE).specialized)
    assert not any(key[0][1] == (5,) for key in compiled(f, (0,), EAGER).specialized)


def test_specialize_setting_read_at_each_call():
    def f(x):
        return np.sum(np.sin(x) * x)

    df = adsrc.grad(f)
    df(X)
    saved = adsrc.config.specialize
    adsrc.config.specialize = False
    try:
        np.testing.assert_allclose(df(np.ones(6)), np.cos(1.0) + np.sin(1.0), rtol=1e-14)
    finally:
        adsrc.config.specialize = saved
    assert not any(key[0][1] == (6,) for key in compiled(f, (0,), REVERSE).specialized)
    df(np.ones(6))
    assert any(key[0][1] == (6,) for key in compiled(f, (0,), REVERSE).specialized)


# ---- arguments ---------------------------------------------------------------------------------
def loss(w, x, scale=1.0):
    return scale * np.sum(np.tanh(w * x))


@pytest.mark.parametrize("eager", MODES)
def test_argument_kinds_change_between_calls(eager):
    dw = adsrc.grad(loss, eager=eager)
    cases = [(0.5, 2.0), (np.float64(0.5), 2.0), (X, X), (X.reshape(3, 1), X), (X.astype(np.float32), 2.0),
             (0.5, X), (X[::2], 2.0), (0.5, 2)]
    for w, x in cases * 2:
        got = dw(w, x)
        assert type(got) is type(w) if not isinstance(w, np.ndarray) else got.dtype == w.dtype
        assert np.shape(got) == np.shape(w)
        expected = fd(loss, (np.asarray(w, np.float64) if isinstance(w, np.ndarray) else float(w), x), 0)
        np.testing.assert_allclose(got, expected, rtol=1e-4 if np.result_type(got) == np.float32 else 1e-6)
        assert_own(got, w, x)


def test_refusals_hold_after_warm_calls():
    dw = adsrc.grad(loss)
    dw(X, X)
    with pytest.raises(InvalidArgument):
        dw(np.arange(3), X)  # integers have no gradient
    with pytest.raises(InvalidArgument):
        dw(np.asmatrix(X), X)  # an ndarray subclass
    with pytest.raises(InvalidArgument):
        dw(X, np.asmatrix(X))  # even where it is not differentiated
    with pytest.raises(InvalidArgument):
        dw(X)  # a missing argument
    with pytest.raises(InvalidArgument):
        dw(X, X, 1.0, 2.0)  # one too many
    with pytest.raises(InvalidArgument):
        dw(X, X, scales=1.0)
    np.testing.assert_allclose(dw(X, X), fd(loss, (X, X), 0))


@pytest.mark.parametrize("eager", MODES)
def test_keyword_arguments_and_defaults(eager):
    dw = adsrc.grad(loss, eager=eager)
    expected = fd(loss, (X, X), 0)
    np.testing.assert_allclose(dw(X, X), expected)
    np.testing.assert_allclose(dw(X, x=X), expected)
    np.testing.assert_allclose(dw(w=X, x=X), expected)
    np.testing.assert_allclose(dw(x=X, w=X, scale=3.0), 3.0 * expected)
    np.testing.assert_allclose(dw(X, X, 2.0), 2.0 * expected)
    np.testing.assert_allclose(dw(X, X), expected)


@pytest.mark.parametrize("eager", MODES)
@pytest.mark.parametrize("wrt", [0, (0,), "x", ("w", "x"), [1, 0], -2, (0, "scale"), (1, 1)])
def test_forms_of_wrt(eager, wrt):
    args = (X, 0.7 * X, 1.5)
    names = ["w", "x", "scale"]
    many = isinstance(wrt, (tuple, list))
    index = [names.index(w) if isinstance(w, str) else w % 3 for w in (wrt if many else [wrt])]
    expected = [fd(loss, args, i) for i in index]
    for derivative in (adsrc.grad(loss, wrt, eager=eager), adsrc.grad(loss, argnums=wrt, eager=eager)):
        for _ in range(2):
            got = derivative(*args)
            assert isinstance(got, tuple) == many
            for g, e in zip(got if many else (got,), expected):
                np.testing.assert_allclose(g, e, rtol=1e-6)
            assert_own(got, *args)
    value, got = adsrc.value_and_grad(loss, wrt, eager=eager)(*args)
    assert value == loss(*args)
    for _ in range(2):
        value, pullback = adsrc.vjp(loss, *args, wrt=wrt, eager=eager)
        got = pullback(1.0)
        assert isinstance(got, tuple) == many
        for g, e in zip(got if many else (got,), expected):
            np.testing.assert_allclose(g, e, rtol=1e-6)
        assert_own(got, *args)


# ---- results -------------------------------------------------------------------------------------
def summed_twice(x, y):
    return np.sum(x + y)


@pytest.mark.parametrize("eager", MODES)
def test_each_call_returns_new_arrays(eager):
    df = adsrc.grad(summed_twice, (0, 1), eager=eager)
    first = df(X, X)
    assert_own(first, X)
    second = df(X, X)
    assert_own(first + second, X)
    first[0][:] = 100.0  # the caller's own: changing it changes nothing adsrc returns later
    third = df(X, X)
    np.testing.assert_array_equal(third[0], np.ones(3))
    np.testing.assert_array_equal(second[0], np.ones(3))
    value, grads = adsrc.value_and_grad(summed_twice, (0, 1), eager=eager)(X, X)
    assert_own(grads, X)


def test_vjp_keeps_no_function_alive():
    def f(x):
        return x * 2.0

    adsrc.vjp(f, 1.0)[1](1.0)
    ref = weakref.ref(f)
    del f
    gc.collect()
    assert ref() is None
