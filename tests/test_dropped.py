"""Gradients that used to be dropped silently: each is now computed or refused with a clear error.

1. A differentiable keyword argument of a rule's call (``x.clip(min=lo)``,
   ``np.clip(x, a_min=lo, a_max=hi)``) is moved to its parameter's position and
   differentiated like a positional one; where it has no position, the call is
   refused.
2. A differentiable value passed beyond a rule's last vjp (``np.nan_to_num(x,
   True, c)``) is refused at compile time, naming the rule and the argument;
   a position the rule marks non-differentiable (a ``None`` vjp) stays silent.
3. Complex outputs and cotangents are accepted by ``adsrc.vjp`` (docs/complex.md:
   the gradient of a real argument is real), and still refused by grad's and
   second order's unit seed, which need a real scalar.
"""
from __future__ import annotations

import os
import warnings

import numpy as np
import pytest

import adsrc
from adsrc import errors
from adsrc.rules import registry
from adsrc.second_order.gradient import unit_seed
from gradcheck import check, numerical_grad

HERE = os.path.basename(__file__)
X = np.array([-1.3, -0.2, 0.4, 0.9, 2.1])


def line_of(func, marker):
    """``file:line`` of the first line of ``func``'s source holding ``marker``."""
    import inspect

    lines, first = inspect.getsourcelines(func)
    offset = next(k for k, text in enumerate(lines) if marker in text)
    return f"{HERE}:{first + offset}"


def assert_jvp_matches_grad(f, args, wrt):
    """Forward mode agrees with the (finite-difference checked) gradient along a fixed direction."""
    rng = np.random.default_rng(0)
    tangents = tuple(rng.standard_normal(np.shape(a)) if i in wrt else np.zeros(np.shape(a))
                     for i, a in enumerate(args))
    tangents = tuple(float(t) if isinstance(a, float) else t for a, t in zip(args, tangents))
    grads = adsrc.grad(f, wrt=wrt)(*args)
    expected = sum(float(np.sum(g * tangents[i])) for g, i in zip(grads, wrt))
    value, tangent = adsrc.jvp(f, args, tangents)
    assert value == pytest.approx(f(*args), rel=1e-12)
    assert tangent == pytest.approx(expected, rel=1e-9, abs=1e-12)
    numeric = sum(float(np.sum(numerical_grad(f, args, i) * tangents[i])) for i in wrt)
    assert tangent == pytest.approx(numeric, rel=1e-5, abs=1e-7)


# ---- 1. keyword arguments are differentiated, or refused -----------------------------------------
def method_clip_min(x, lo):
    return np.sum(x.clip(min=lo) ** 2)


def method_clip_max(x, hi):
    return np.sum(x.clip(max=hi) ** 2)


def method_clip_both(x, lo, hi):
    return np.sum(np.sin(x.clip(max=hi, min=lo)))


def method_clip_arrays(x, lo, hi):
    return np.sum(np.exp(x.clip(lo, max=hi)))


def function_clip_keywords(x, lo, hi):
    return np.sum(np.clip(x, a_max=hi, a_min=lo) ** 3)


def bincount_weights(w, idx):
    return np.sum(np.bincount(idx, weights=w) ** 2)


def sum_by_keyword(x):
    return np.sum(a=x * x)


def clip_in_loop(x, lo):
    total = 0.0
    for k in range(3):
        total = total + np.sum((x * (k + 1.0)).clip(min=lo) ** 2)
    return total


@pytest.mark.parametrize("f, args, wrt", [
    (method_clip_min, (X, 0.1), (0, 1)),
    (method_clip_max, (X, 0.5), (0, 1)),
    (method_clip_both, (X, -0.5, 1.0), (0, 1, 2)),
    (method_clip_arrays, (X, np.full(5, -0.5), np.array([1.0, 0.0, 0.1, 2.0, 1.5])), (0, 1, 2)),
    (function_clip_keywords, (X, -0.5, 1.0), (0, 1, 2)),
    (bincount_weights, (np.array([0.5, 1.5, -2.0]), np.array([0, 1, 1])), (0,)),
    (sum_by_keyword, (X,), (0,)),
    (clip_in_loop, (X, 0.7), (0, 1)),
], ids=lambda v: getattr(v, "__name__", None))
def test_keyword_arguments_are_differentiated(f, args, wrt):
    grads = check(f, *args, wrt=wrt)
    assert_jvp_matches_grad(f, args, wrt)
    # the bound reaches its gradient where it is active (it was 0 when the keyword was dropped)
    if f in (method_clip_min, method_clip_max):
        assert grads[1] != 0.0


def test_method_keyword_gradient_is_one_where_clipped():
    def f(x, lo):
        return np.sum(x.clip(min=lo))

    for eager in (False, True):
        dx, dlo = adsrc.grad(f, (0, 1), eager=eager)(X, 0.0)
        assert dlo == 2.0  # two elements are clipped to lo
        assert dx.tolist() == [0.0, 0.0, 1.0, 1.0, 1.0]


def test_keyword_bound_second_order():
    def f(x, hi):
        return np.sum(x.clip(max=hi) ** 2)

    # d/dhi = 2 hi * (number clipped), d2/dhi2 = 2 * (number clipped)
    assert adsrc.grad(f, 1)(X, 0.5) == pytest.approx(2 * 0.5 * np.sum(X > 0.5))
    assert adsrc.grad(adsrc.grad(f, 1), 1)(X, 0.5) == pytest.approx(2.0 * np.sum(X > 0.5))
    assert adsrc.hessian(f, 1)(X, 0.5) == pytest.approx(2.0 * np.sum(X > 0.5))


def keyword_only(x, lo):
    return np.sum(np.clip(x, min=lo))  # refused: min is keyword-only in np.clip


def keyword_mapping(x, lo):
    options = {"a_max": 1.0}
    return np.sum(np.clip(x, a_min=lo, **options))  # refused: a **mapping hides the positions


@pytest.mark.parametrize("f, marker", [(keyword_only, "min=lo"), (keyword_mapping, "**options")],
                         ids=["keyword-only", "mapping"])
@pytest.mark.parametrize("eager", [False, True])
def test_keywords_without_a_position_are_refused(f, marker, eager):
    with pytest.raises(errors.UnsupportedSyntax, match="by keyword") as info:
        adsrc.grad(f, 1, eager=eager)(X, 0.0)
    assert line_of(f, marker) in str(info.value)
    assert "positionally" in str(info.value)
    with pytest.raises(errors.UnsupportedSyntax, match="by keyword"):
        adsrc.jvp(f, (X, 0.0), (np.zeros(5), 1.0))


def test_inactive_keywords_stay_keywords():
    def f(x):
        return np.sum(np.sum(x.reshape(5, 1), axis=1, keepdims=True) * x.clip(min=0.0))

    check(f, X)


# ---- 2. an argument past a rule's vjps is refused, an explicit None is not ----------------------
def nan_to_num_fill(x, c):
    return np.sum(np.nan_to_num(x, True, c) * x)  # c is past nan_to_num's only vjp


def max_initial(x, c):
    return x.max(initial=c)  # initial is argument 4 of np.max, which differentiates only a


@pytest.mark.parametrize("f, args, position, marker", [
    (nan_to_num_fill, (X, 0.5), "argument 2 ('nan')", "np.nan_to_num"),
    (max_initial, (X, 5.0), "argument 4 ('initial')", "initial=c"),
], ids=["positional", "keyword"])
@pytest.mark.parametrize("eager", [False, True])
def test_argument_past_the_rule_is_refused(f, args, position, marker, eager):
    with pytest.raises(errors.NoGradientRule) as info:
        adsrc.grad(f, (0, 1), eager=eager)(*args)
    message = str(info.value)
    assert position in message and line_of(f, marker) in message, message
    with pytest.raises(errors.NoGradientRule, match=position.replace("(", r"\(").replace(")", r"\)")):
        adsrc.jvp(f, args, (np.ones(5), 1.0))


def test_argument_past_the_rule_is_refused_at_compile_time():
    def f(x, c):
        return np.sum(np.nan_to_num(x, True, c))

    for eager in (False, True):  # compiling alone raises: nothing has run
        with pytest.raises(errors.NoGradientRule, match="nan_to_num"):
            adsrc.adjoint_source(f, 1, eager=eager)
    with pytest.raises(errors.NoGradientRule, match="nan_to_num"):
        adsrc.jvp_source(f, 1)
    with pytest.raises(errors.NoGradientRule):
        adsrc.vjp(f, X, 0.5, wrt=1)
    assert "nan_to_num" in adsrc.adjoint_source(f, 0)  # not differentiated: nothing to refuse


def test_argument_past_a_user_rule_is_refused():
    def scale(x, k):
        return x * 2.0

    adsrc.register_adjoint(scale, lambda g, ans, x, k: 2.0 * g)

    def f(x, k):
        return np.sum(scale(x, k))

    with pytest.raises(errors.NoGradientRule, match=r"argument 1 \('k'\)"):
        adsrc.grad(f, (0, 1))(X, 3.0)
    check(f, X, 3.0)  # k not differentiated: no gradient reaches it, nothing to refuse


def heaviside_step(x, h):
    return np.sum(np.heaviside(x, h) * h)


def test_explicitly_nondifferentiable_positions_stay_silent():
    # heaviside's rule is (None, dx2): x1 is marked non-differentiable, so a varied x1 is fine
    x = np.array([-1.0, 0.0, 2.0])
    check(heaviside_step, x, 0.5, wrt=1)  # d/dh = heaviside(x, h) + h * (x == 0)
    for eager in (False, True):
        dx, dh = adsrc.grad(heaviside_step, (0, 1), eager=eager)(x, 0.5)
        assert dx.tolist() == [0.0, 0.0, 0.0] and dh == pytest.approx(2.0)
    away = np.array([-1.0, 0.5, 2.0])  # away from the step, finite differences apply to x as well
    check(heaviside_step, away, 0.5, wrt=(0, 1))
    assert_jvp_matches_grad(heaviside_step, (away, 0.5), (0, 1))
    assert adsrc.jvp(heaviside_step, (x, 0.5), (np.ones(3), 1.0))[1] == pytest.approx(2.0)


# ---- 3. complex outputs and cotangents -----------------------------------------------------------
def complex_output(x):
    return x * (1.0 + 2.0j)


def complex_in_container(x):
    return (np.sum(x), x * 1j)


def real_output(x):
    return x * 3.0


@pytest.mark.parametrize("eager", [False, True])
def test_vjp_of_complex_outputs_is_the_transpose(eager):
    g = np.linspace(-1.0, 1.0, 5) + 1j * np.linspace(2.0, 0.0, 5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no ComplexWarning
        value, pullback = adsrc.vjp(complex_output, X, eager=eager)
        got = pullback(g)
        _, pullback = adsrc.vjp(complex_in_container, X, eager=eager)
        in_container = pullback((2.0, g))
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.real(g * (1.0 + 2.0j)))
    np.testing.assert_allclose(in_container, 2.0 + np.real(g * 1j))


@pytest.mark.parametrize("cotangent", [np.full(5, 1.0 + 1.0j), np.ones(5, dtype=np.complex64)],
                         ids=["complex128", "complex64"])
@pytest.mark.parametrize("eager", [False, True])
def test_a_complex_cotangent_of_a_real_output_gives_a_real_gradient(cotangent, eager):
    value, pullback = adsrc.vjp(real_output, X, eager=eager)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = pullback(cotangent)
    assert got.dtype == np.float64
    np.testing.assert_allclose(got, np.full(5, 3.0))


def test_a_python_complex_cotangent():
    value, pullback = adsrc.vjp(lambda_free_scalar, 2.0)
    assert pullback(1.0 + 0.5j) == pytest.approx(4.0)
    assert type(pullback(1.0 + 0.5j)) is float
    assert pullback(1.0) == pytest.approx(4.0)


def lambda_free_scalar(x):
    return x * x


@pytest.mark.parametrize("value", [1.0 + 2.0j, np.complex128(1.0), np.array(2.0 + 0j), np.complex64(1j)])
def test_unit_seed_refuses_complex(value):
    with pytest.raises(errors.NonScalarOutput, match="complex"):
        unit_seed(value)


def test_unit_seed_still_seeds_reals():
    assert unit_seed(2.5) == 1.0
    assert unit_seed(np.float32(2.5)) == 1.0
    with pytest.raises(errors.NonScalarOutput):
        unit_seed(np.ones(2))


def sum_times_complex(x):
    return np.sum(x) * (1 + 2j)


def test_second_order_refuses_complex_outputs_naming_the_function():
    with pytest.raises(errors.NonScalarOutput, match="complex") as info:
        adsrc.jvp(adsrc.grad(sum_times_complex), (X,), (X,))
    assert line_of(sum_times_complex, "def ") in str(info.value)


def test_rule_guard_keeps_the_real_part_for_a_real_argument():
    vjp = registry.lookup(np.sin).vjps[0]
    x = np.array([0.3, 0.4])
    np.testing.assert_allclose(vjp(np.array([1.0 + 1.0j, 0.0]), np.sin(x), x), [np.cos(0.3), 0.0])
    assert np.isrealobj(vjp(np.array([1.0 + 1.0j, 0.0]), np.sin(x), x))
    z = x + 1j
    np.testing.assert_allclose(vjp(np.array([1.0 + 1.0j, 0.0]), np.sin(z), z), [(1 + 1j) * np.cos(z[0]), 0.0])
    linear = registry.lookup(np.negative).vjps[0]
    np.testing.assert_allclose(linear(np.array([1.0j, 2.0]), -x, x), [0.0, -2.0])
    np.testing.assert_allclose(vjp(np.ones(2), np.sin(x), x), np.cos(x))

