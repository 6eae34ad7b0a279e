"""Rules users register with adsrc.register_adjoint, and complex values reaching any rule.

* A user's vjp whose contribution does not match its argument (shape, dtype) is
  an error naming the rule and, in a note, the original line; it used to be
  broadcast silently into the gradient.
* Both spellings of register_adjoint take ``(g, ans, *args)``; a rule written
  in the decorator's former ``(ans, g, *args)`` order is refused with a
  TypeError that explains the order.
* Complex intermediates in a real function give the real gradient, with no
  ComplexWarning (docs/complex.md); a complex value met by a rule written for
  real values only (in reverse or forward mode, in a fused or in-place
  contribution) raises InvalidArgument naming the rule and the line.
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import adsrc
import adsrc.rules.registry as registry
from adsrc.errors import AdsrcError, InvalidArgument
from gradcheck import numerical_grad


def line_of(func, text):
    lines, start = inspect.getsourcelines(func)
    return start + next(i for i, line in enumerate(lines) if text in line)


def notes(error):
    return " ".join(getattr(error, "__notes__", []))


# ---- contributions checked against their arguments -----------------------------------------
def summed(x):
    return np.sum(x) * 1.0


def scaled(x):
    return 2.0 * x


def pair(x, w):
    return w * np.sum(x)


def of_list(xs):
    return xs[0] * 2.0 + xs[1]


adsrc.register_adjoint(summed, lambda g, ans, x: g)  # wrong: g is a scalar, x an array; was broadcast silently
adsrc.register_adjoint(scaled, lambda g, ans, x: 2.0 * g[:, None])  # wrong shape (n, 1) for (n,)


@adsrc.register_adjoint(pair)
def pair_rule(g, ans, x, w):
    return g * w * np.ones_like(x), g * np.sum(x)


adsrc.register_adjoint(of_list, lambda g, ans, xs: [2.0 * g, g])


def uses_summed(x):
    y = x * 3.0
    return summed(y) + np.sum(y)


def uses_scaled(x):
    return np.sum(scaled(x) * x)


def uses_pair(x, w):
    return pair(x, w) ** 2


def uses_of_list(a, b):
    return np.sum(of_list([a, b]))


@pytest.mark.parametrize("eager", [False, True])
def test_a_wrong_shape_is_an_error_naming_the_rule_and_line(eager):
    for f, text, shape in ((uses_summed, "summed(y)", "()"), (uses_scaled, "scaled(x)", "(4, 1)")):
        with pytest.raises(InvalidArgument) as info:
            adsrc.grad(f, eager=eager)(np.ones(4))
        message = str(info.value)
        assert "registered for" in message and f.__name__[5:] in message, message
        assert f"shape {shape}" in message and "(4,)" in message and "broadcast" in message, message
        assert f"test_custom_rules.py:{line_of(f, text)}" in notes(info.value), notes(info.value)


@pytest.mark.parametrize("bad,fragment", [
    (lambda g, ans, x: (g > 0).astype(bool), "bool"),
    (lambda g, ans, x: g * 1j, "complex"),
    (lambda g, ans, x: None, "None"),
    (lambda g, ans, x: [g, g], "list"),
    (lambda g, ans, x: np.array(["a"] * 4), "<U1"),
], ids=["bool", "complex", "None", "list", "str"])
def test_a_wrong_dtype_or_kind_is_an_error(bad, fragment):
    def opaque(x):
        return x + 0.0

    def f(x):
        return np.sum(opaque(x) * x)

    adsrc.register_adjoint(opaque, bad)
    with pytest.raises(InvalidArgument, match="registered for opaque") as info:
        adsrc.grad(f)(np.ones(4))
    assert fragment in str(info.value)


def test_valid_contributions_pass_unchanged():
    rng = np.random.default_rng(0)
    x, w = rng.normal(size=3), 1.5
    dx, dw = adsrc.grad(uses_pair, wrt=(0, 1))(x, w)
    total = pair(x, w)
    np.testing.assert_allclose(dx, 2 * total * w * np.ones(3))
    assert dw == pytest.approx(2 * total * np.sum(x))
    da, db = adsrc.grad(uses_of_list, wrt=(0, 1))(np.ones(2), np.ones(2))
    np.testing.assert_array_equal(da, [2.0, 2.0])
    np.testing.assert_array_equal(db, [1.0, 1.0])
    # float32 in, float64 cotangent: a contribution need not keep the argument's precision
    f32 = adsrc.grad(uses_pair)(x.astype(np.float32), w)
    assert f32.dtype == np.float32


def test_builtin_rules_keep_their_fast_path():
    sin_dx = registry.lookup(np.sin).vjps[0]
    assert np.shape(sin_dx(np.ones(3), None, 0.0)) == (3,)  # not checked against the argument
    user = registry.lookup(summed).vjps[0]
    assert user.uses(2)  # the check reads the argument, so the backward sweep keeps it


# ---- one parameter order ---------------------------------------------------------------------
def rescale(x, s):
    return s * x


def test_decorator_takes_g_then_ans():
    @adsrc.register_adjoint(rescale)
    def rescale_rule(g, ans, x, s):
        assert np.shape(ans) == np.shape(x)
        return g * s, np.sum(g * x)

    def f(x, s):
        return np.sum(rescale(x, s) * np.arange(3.0))

    dx, ds = adsrc.grad(f, wrt=(0, 1))(np.ones(3), 2.0)
    np.testing.assert_array_equal(dx, [0.0, 2.0, 4.0])
    assert ds == 3.0
    assert rescale_rule.__name__ == "rescale_rule"  # the decorator returns the rule itself


@pytest.mark.parametrize("source", [
    "def rule(ans, g, x, s):\n    return g * s, g * x\n",
    "def rule(a, g, x, s):\n    return g * s, g * x\n",
    "def rule(ans, cotangent, x, s):\n    return cotangent * s, cotangent * x\n",
])
def test_the_old_decorator_order_is_refused(source):
    namespace = {"np": np}
    exec(source, namespace)
    with pytest.raises(TypeError) as info:
        adsrc.register_adjoint(rescale)(namespace["rule"])
    message = str(info.value)
    assert "(g, ans, *args)" in message and "rule" in message and "rescale" in message, message


def test_the_old_order_is_refused_in_the_direct_form_too():
    with pytest.raises(TypeError, match=r"\(g, ans, \*args\)"):
        adsrc.register_adjoint(rescale, lambda ans, g, x, s: g * s, None)
    with pytest.raises(TypeError, match="unexpected keyword"):
        adsrc.register_adjoint(rescale, lambda g, ans, x, s: g * s, fuses={})


def test_docs_and_examples_use_one_order():
    import pathlib

    root = pathlib.Path(__file__).resolve().parents[1]
    text = (root / "docs" / "rules.md").read_text(encoding="utf-8")
    assert "def scaled_sum_rule(g, ans, x, w):" in text
    assert "(ans, g" not in text


# ---- complex values ------------------------------------------------------------------------
def sqrt_of_negative(x):
    return np.sum(np.abs(np.sqrt(x + 0j)))


def rotated(x):
    return np.sum(np.real(x * 1j * 1j))


def real_part(x):
    return np.sum((x * 1j).real)


def modulus(x):
    return np.sum(np.abs(x + 1j))


def in_a_loop(x):
    total = 0.0
    for k in range(4):
        total = total + np.sum(np.real(x * (1j * k)))
    return total


def cast(x):
    return np.sum(np.real(x.astype(complex)))


COMPLEX = [sqrt_of_negative, rotated, real_part, modulus, in_a_loop, cast]


@pytest.mark.parametrize("eager", [False, True])
@pytest.mark.parametrize("f", COMPLEX, ids=[f.__name__ for f in COMPLEX])
def test_a_complex_intermediate_gives_the_real_gradient(f, eager):
    x = np.array([-1.0, -2.0, 3.0] * 30)
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        got = adsrc.grad(f, eager=eager)(x)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, numerical_grad(f, (x,), 0), rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("f", COMPLEX, ids=[f.__name__ for f in COMPLEX])
def test_a_complex_intermediate_in_forward_mode(f):
    x = np.array([-1.0, -2.0, 3.0])
    v = np.array([0.5, -1.0, 2.0])
    with warnings.catch_warnings():
        warnings.simplefilter("error", np.exceptions.ComplexWarning)
        _, tangent = adsrc.jvp(f, (x,), (v,))
    assert np.isrealobj(tangent)
    assert tangent == pytest.approx((f(x + 1e-6 * v) - f(x - 1e-6 * v)) / 2e-6, rel=1e-6)


def clipped_complex(x):
    return np.sum(np.real(np.maximum(x + 0j, 0.5)))


def test_the_error_names_the_rule_and_the_line():
    with pytest.raises(InvalidArgument, match="real values only") as info:
        adsrc.grad(clipped_complex, eager=True)(np.array([-1.0, 4.0]))
    assert "maximum_dx" in str(info.value)
    assert f"test_custom_rules.py:{line_of(clipped_complex, 'np.maximum')}" in notes(info.value)


def test_fused_and_in_place_forms_check_too():
    multiply = registry.lookup(np.multiply).vjps[0]
    calls = [((np.ones(3), None, np.ones(3), 1j), {}), ((np.ones(3), None, np.ones(3), 2j), {})]
    fused = multiply.fuse(calls)  # a real argument: the real part of g * (1j + 2j)
    assert np.isrealobj(fused) and np.array_equal(fused, np.zeros(3))
    maximum = registry.lookup(np.maximum).vjps[0]
    assert maximum.fuse is None and maximum.add_into is None  # no form that would bypass its check
    getitem = registry.lookup(__import__("operator").getitem).vjps[0]
    buffer = np.zeros(3, dtype=complex)
    getitem.add_into(buffer, np.array([1j]), None, np.zeros(3, dtype=complex), np.array([0]))
    assert buffer[0] == 1j


def test_complex_is_not_an_adsrc_error_for_real_code():
    # The check is on dtypes only: real code is untouched.
    x = np.array([1.0, 2.0])
    np.testing.assert_allclose(adsrc.grad(lambda_free)(x), 2 * x)
    assert issubclass(InvalidArgument, AdsrcError)


def lambda_free(x):
    return np.sum(np.sqrt(x * x) ** 2)


# ---- a function defined again ----------------------------------------------------------------
def test_a_function_defined_again_uses_its_own_rule():
    # Generated code finds a rule by name: a second function of the same name (a cell run again in a
    # notebook) must not pick up the first one's rule.
    results = []
    for factor in (2.0, 5.0):
        def twice(x):
            return x * 1.0

        adsrc.register_adjoint(twice, lambda g, ans, x, factor=factor: g * factor)

        def f(x):
            return twice(x) * 1.0

        results.append(adsrc.grad(f)(1.0))
    assert results == [2.0, 5.0]
