"""Issue 13's NumPy rules through the public API: factorizations (svd, qr, pinv, lstsq), statistics,
signals and polynomials, building arrays, np.r_ and np.c_, and results of one element in any shape.

The generated tests (test_rules, test_forward, test_singular, test_higher) check every rule alone, from
tests/rule_samples_numpy.py. Here the same rules run inside user functions, in lazy and eager mode, in
forward mode and at second order, against finite differences; and the refusals are checked: where a
derivative is undefined (repeated singular values, completing columns, a rank-deficient R), adsrc
raises rather than return a number.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument, NoGradientRule, NonScalarOutput
from gradcheck import check, numerical_grad

RNG = np.random.default_rng(13)


def directional(f, args, directions, eps=1e-6):
    plus = f(*[a + eps * d for a, d in zip(args, directions)])
    minus = f(*[a - eps * d for a, d in zip(args, directions)])
    return (plus - minus) / (2 * eps)


def check_forward(f, *args):
    directions = [RNG.normal(size=np.shape(a)) for a in args]
    _, tangent = adsrc.jvp(f, tuple(args), tuple(directions))
    np.testing.assert_allclose(tangent, directional(f, args, directions), rtol=1e-5, atol=1e-7)


def check_hvp(f, x):
    v = RNG.normal(size=np.shape(x))
    got = adsrc.hvp(f)(x, v)
    expected = directional(lambda y: adsrc.grad(f)(y), [x], [v])
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-6)


# ---- user functions over the new rules ------------------------------------------------------------
def svd_loss(a):
    u, s, vh = np.linalg.svd(a, full_matrices=False)
    return np.sum(s ** 2) + np.sum(u[:, 0] ** 3) * np.sum(vh[0] * np.arange(vh.shape[1]))


def qr_loss(a):
    q, r = np.linalg.qr(a)
    return np.sum(np.tanh(q)) + np.sum(np.diag(r) ** 2)


def pinv_loss(a):
    return np.sum(np.linalg.pinv(a) ** 2)


def lstsq_loss(a, b):
    x, residuals, rank, s = np.linalg.lstsq(a, b)
    return np.sum(x ** 2) + np.sum(residuals) + np.sum(s)


def statistics_loss(x):
    return (np.median(x) + np.percentile(x, 30.0) + np.sum(np.quantile(x, [0.1, 0.9], axis=1))
            + np.sum(np.cov(x) ** 2) + np.sum(np.corrcoef(x)) + np.sum(np.partition(x, 2, axis=1)[:, 2]))


def signal_loss(x):
    kernel = np.array([0.25, 0.5, 0.25])
    smooth = np.convolve(x, kernel, "same") + np.correlate(x, kernel[:2], "full")[1:]
    grid = np.interp(np.linspace(-0.5, 4.5, 7), np.arange(5), x)
    return (np.sum(smooth ** 2) + np.sum(grid ** 3) + np.trapezoid(x ** 2, np.cumsum(np.ones(5)))
            + np.polyval(x, 0.7) + np.sum(np.gradient(x, 0.5) ** 2))


def assembly_loss(x, y):
    xx, yy = np.meshgrid(x, y)
    chosen = np.select([xx > 0.0, yy > 0.0], [xx * yy, yy ** 2], 0.5)
    stacked = np.block([[xx, yy], [yy, xx]])
    kept = np.delete(np.insert(x, 1, y[0] * 2.0), 0)
    return np.sum(chosen ** 2) + np.sum(stacked * np.arange(stacked.size).reshape(stacked.shape)) + np.sum(kept ** 3)


def index_tricks(x, y):
    z = np.r_[x, y * 2.0, 0:3, 7.0]
    w = np.c_[x, y]
    return np.sum(z ** 2) + np.sum(w[:, 0] * w[:, 1] ** 2) + np.sum(np.r_["0,2", x, y] ** 3)


X34 = RNG.normal(size=(3, 4))


@pytest.mark.parametrize("f,args,wrt", [
    (svd_loss, (RNG.normal(size=(4, 3)),), 0),
    (svd_loss, (RNG.normal(size=(3, 5)),), 0),
    (qr_loss, (RNG.normal(size=(4, 3)),), 0),
    (pinv_loss, (RNG.normal(size=(3, 4)),), 0),
    (lstsq_loss, (RNG.normal(size=(5, 3)), RNG.normal(size=5)), (0, 1)),
    (statistics_loss, (X34,), 0),
    (signal_loss, (RNG.normal(size=5),), 0),
    (assembly_loss, (RNG.normal(size=3), RNG.normal(size=2)), (0, 1)),
    (index_tricks, (RNG.normal(size=3), RNG.normal(size=3)), (0, 1)),
], ids=lambda v: getattr(v, "__name__", ""))
def test_user_functions_match_finite_differences(f, args, wrt):
    check(f, *args, wrt=wrt, rtol=1e-5, atol=1e-6)
    check_forward(f, *args)


def eigh_loss(a):
    w, v = np.linalg.eigh(a)  # a tuple result whose two parts both get a cotangent
    return np.sum(w ** 2) + np.sum(v[:, 0] ** 3)


@pytest.mark.parametrize("f,x", [(svd_loss, RNG.normal(size=(3, 3))), (qr_loss, RNG.normal(size=(3, 2))),
                                 (eigh_loss, np.diag([1.0, 2.0, 4.0]) + 0.1 * RNG.normal(size=(3, 3))),
                                 (pinv_loss, RNG.normal(size=(2, 3))), (statistics_loss, X34),
                                 (signal_loss, RNG.normal(size=5))],
                         ids=lambda v: getattr(v, "__name__", ""))
def test_second_order_matches_finite_differences(f, x):
    check_hvp(f, x)


def test_index_tricks_second_order_and_source():
    x, y = RNG.normal(size=3), RNG.normal(size=3)
    check_hvp(index_tricks_of_x, x)
    h = adsrc.hessian(lambda_free_r)(x)
    np.testing.assert_allclose(h, np.diag(12.0 * x), rtol=1e-10)
    source = adsrc.adjoint_source(index_tricks, wrt=(0, 1))
    assert "index_concatenate(np.r_, items)" in source and "index_concatenate(np.c_" in source
    value, _ = adsrc.value_and_grad(index_tricks, wrt=(0, 1))(x, y)
    assert value == index_tricks(x, y)  # the forward sweep runs np.r_ exactly as written


Y_FIXED = RNG.normal(size=3)


def index_tricks_of_x(x):
    return index_tricks(x, Y_FIXED)


def lambda_free_r(x):
    return np.sum(np.r_[x, x] ** 3)


def r_with_ranges(x):
    return np.sum(np.r_[x, 0:2, np.array([4, 5]), -1.5, x[:1]] * np.arange(9.0))


def test_index_tricks_skip_ranges_and_integers():
    x = RNG.normal(size=3)
    grad = check(r_with_ranges, x)
    np.testing.assert_allclose(grad, np.arange(3.0) + np.array([8.0, 0.0, 0.0]))


# ---- refusals where the derivative is undefined ---------------------------------------------------------
def singular_vectors(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u[:, 0]) + np.sum(s)


def singular_values(a):
    return np.sum(np.linalg.svd(a, compute_uv=False) ** 2) + np.sum(np.linalg.svd(a)[1])


def first_columns(a):
    u, s, vh = np.linalg.svd(a)  # full_matrices=True: U is 4 x 4, only its first 2 columns are determined
    return np.sum(u[:, :2] ** 2 * np.arange(4.0)[:, None]) + np.sum(s)


def every_column(a):
    u, s, vh = np.linalg.svd(a)
    return np.sum(u * np.arange(16.0).reshape(4, 4))


def q_of(a):
    q, r = np.linalg.qr(a)
    return np.sum(q * np.arange(q.size).reshape(q.shape))


@pytest.mark.parametrize("eager", [False, True])
def test_svd_refuses_singular_vectors_of_repeated_singular_values(eager):
    with pytest.raises(InvalidArgument, match="repeat"):
        adsrc.grad(singular_vectors, eager=eager)(np.eye(3))
    # the singular values alone are differentiable there
    np.testing.assert_allclose(adsrc.grad(singular_values, eager=eager)(np.eye(3)), 3.0 * np.eye(3))
    with pytest.raises(InvalidArgument, match="repeat"):
        adsrc.jvp(singular_vectors, (np.eye(3),), (np.ones((3, 3)),))


def test_svd_full_matrices_refuses_only_the_completing_columns():
    a = RNG.normal(size=(4, 2))
    check(first_columns, a)
    with pytest.raises(InvalidArgument, match="complete the orthonormal basis"):
        adsrc.grad(every_column)(a)
    _, tangent = adsrc.jvp(lambda_free_u, (a,), (np.ones((4, 2)),))
    assert np.all(np.isnan(tangent[:, 2:])) and np.all(np.isfinite(tangent[:, :2]))


def lambda_free_u(a):
    return np.linalg.svd(a)[0]


def test_qr_refuses_rank_deficient_and_completing_columns():
    with pytest.raises(InvalidArgument, match="full rank"):
        adsrc.grad(q_of)(np.array([[1.0, 2.0], [2.0, 4.0], [0.0, 0.0]]))
    with pytest.raises(InvalidArgument, match="complete"):
        adsrc.grad(complete_q)(RNG.normal(size=(3, 2)))


def complete_q(a):
    q, r = np.linalg.qr(a, mode="complete")
    return np.sum(q * np.arange(9.0).reshape(3, 3))


def test_svd_hermitian_is_refused():
    with pytest.raises(InvalidArgument, match="hermitian"):
        adsrc.grad(hermitian_svd)(np.eye(2) * 2.0)


def hermitian_svd(a):
    return np.sum(np.linalg.svd(a, hermitian=True)[1])


# ---- order statistics at ties -------------------------------------------------------------------------
def median_of(x):
    return np.median(x)


def test_median_ties_share_the_cotangent_and_the_tangent_is_directional():
    x = np.full(5, 2.0)
    np.testing.assert_allclose(adsrc.grad(median_of)(x), np.full(5, 0.2))
    # moving every value together moves the median with them; moving one alone does not
    assert adsrc.jvp(median_of, (x,), (np.ones(5),))[1] == pytest.approx(1.0)
    assert adsrc.jvp(median_of, (x,), (np.eye(5)[0],))[1] == 0.0
    assert adsrc.jvp(median_of, (x,), (np.array([3.0, -1.0, 0.5, 2.0, 0.0]),))[1] == 0.5


# ---- results of one element ----------------------------------------------------------------------------
def keepdims_sum(x):
    return np.sum(x ** 2, keepdims=True)


def one_by_one(x):
    return x @ x.T


def two_elements(x):
    return x[:2] * 2.0


@pytest.mark.parametrize("eager", [False, True])
def test_results_of_one_element_are_scalars(eager):
    x = RNG.normal(size=3)
    np.testing.assert_allclose(adsrc.grad(keepdims_sum, eager=eager)(x), 2 * x)
    value, grad = adsrc.value_and_grad(keepdims_sum, eager=eager)(x)
    assert value.shape == (1,) and np.allclose(grad, 2 * x)
    row = RNG.normal(size=(1, 4))
    np.testing.assert_allclose(adsrc.grad(one_by_one, eager=eager)(row), 2 * row)
    assert adsrc.grad(keepdims_sum, eager=eager)(x.astype(np.float32)).dtype == np.float32
    with pytest.raises(NonScalarOutput, match=r"\(2,\)"):
        adsrc.grad(two_elements, eager=eager)(x)


def test_results_of_one_element_at_second_order():
    x = RNG.normal(size=3)
    np.testing.assert_allclose(adsrc.hessian(keepdims_sum)(x), 2 * np.eye(3))
    np.testing.assert_allclose(numerical_grad(lambda v: float(keepdims_sum(v)[0]), (x,), 0), 2 * x, rtol=1e-6)


# ---- windows and Python numbers in user code -------------------------------------------------------------
def moving_average(x):
    windows = np.lib.stride_tricks.sliding_window_view(x, 3)
    return np.sum(np.mean(windows, axis=-1) ** 2)


def python_numbers(a, b):
    quotient, remainder = divmod(a, b)
    mantissa, exponent = math.frexp(a * b)
    fraction, _ = math.modf(a)
    return remainder * mantissa + fraction ** 2


def test_sliding_windows_and_python_numbers():
    check(moving_average, RNG.normal(size=7))
    check_forward(moving_average, RNG.normal(size=7))
    check(python_numbers, 2.3, 0.7, wrt=(0, 1))


def quantile_in_q(x, q):
    return np.quantile(x, q)


def test_a_differentiable_argument_without_a_gradient_is_refused():
    # q moves the result, but the rule gives it no gradient: refused before running, not a silent zero
    with pytest.raises(NoGradientRule, match="quantile"):
        adsrc.grad(quantile_in_q, wrt=1)(RNG.normal(size=5), 0.3)
    np.testing.assert_allclose(adsrc.grad(quantile_in_q)(np.arange(5.0), 0.3), [0.0, 0.8, 0.2, 0.0, 0.0])


# ---- casts to NumPy scalar types -------------------------------------------------------------------
def cast_to_int(w):
    rows = np.int64(w[:, -1])  # indices: no gradient, as int(x)
    return np.sum(w[:, :-1][rows] ** 2) + np.int32(w[0, 0]) * w[0, 0] + np.bool_(w[1, 1] > 0.0) * w[1, 1]


def cast_to_float64(w):
    return np.sum(np.float64(w) ** 3) + np.float64(w[0, 0]) * 2.0


W_ROWS = np.concatenate([RNG.normal(size=(4, 3)), [[0.5], [1.5], [2.5], [-0.5]]], axis=1)  # away from integers


@pytest.mark.parametrize("f", [cast_to_int, cast_to_float64], ids=lambda f: f.__name__)
def test_casts_match_finite_differences(f):
    check(f, W_ROWS)
    check_forward(f, W_ROWS)
    check_hvp(f, W_ROWS)


def cast_to_float32(x, s):
    return np.sum(np.float32(x) * np.float16(s))


def test_a_cast_to_float32_or_float16_keeps_numpys_dtypes():
    # its derivative is the identity (as x.astype(np.float32)'s): the value and its tangent in NumPy's
    # dtype, each gradient in its argument's
    x, s = np.array([0.5, -1.25, 2.0]), 1.5  # exact in float16: no rounding to blur the comparison
    for eager in (False, True):
        gx, gs = adsrc.grad(cast_to_float32, wrt=(0, 1), eager=eager)(x, s)
        assert gx.dtype == np.float64 and type(gs) is float
        np.testing.assert_array_equal(gx, np.full(3, s))
        assert gs == np.sum(x)
    value, tangent = adsrc.jvp(cast_to_float32, (x, s), (np.ones(3), 1.0))
    assert value.dtype == np.float32 and tangent.dtype == np.float32 and value == cast_to_float32(x, s)
    assert tangent == np.float32(3 * s + np.sum(x))
    np.testing.assert_array_equal(adsrc.hvp(lambda x: np.sum(np.float32(x) ** 2))(x, np.ones(3)), np.full(3, 2.0))
