"""SciPy through adsrc.grad, adsrc.jvp and second order: special, stats and linalg in user programs.

The rules themselves are checked one by one by the generated tests (tests/library_samples.py); here
whole functions that call SciPy are checked against finite differences, lazy and eager, in forward
mode and differentiated twice, including the spellings users write (keyword arguments to
``norm.logpdf``, ``cho_solve(cho_factor(a), b)``). Skipped when SciPy is not installed.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

scipy = pytest.importorskip("scipy")

import scipy.linalg as sla  # noqa: E402
import scipy.signal as signal  # noqa: E402
import scipy.special as sp  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.stats import multivariate_normal, norm  # noqa: E402

import adsrc  # noqa: E402
from adsrc.errors import InvalidArgument, NoGradientRule  # noqa: E402
from gradcheck import check, check_complex, numerical_grad  # noqa: E402

RNG = np.random.default_rng(11)


def gaussian_nll(mu, log_sigma, xs):
    total = 0.0
    for x in xs:  # a loop: the contributions to mu and log_sigma accumulate lazily
        total = total - norm.logpdf(x, loc=mu, scale=np.exp(log_sigma))
    return total


def student_and_gamma(x, df, a):
    return np.sum(stats.t.logpdf(x, df, 0.2, 1.5)) + np.sum(stats.gamma.logpdf(np.abs(x) + 1.0, a, scale=2.0))


def cdfs(x, mu):
    return np.sum(norm.logcdf(x, mu) + stats.beta.cdf(sp.expit(x), 2.0, 3.0) + stats.poisson.logpmf(3, mu * mu))


def mvn_loglik(mean, chol, xs):
    cov = chol @ chol.T + 0.5 * np.eye(3)
    return np.sum(multivariate_normal.logpdf(xs, mean=mean, cov=cov))


def special_mix(x, w):
    h = sp.softmax(w @ x, axis=0)
    return (sp.logsumexp(sp.log_softmax(x)) + np.sum(sp.xlogy(h, h)) + np.sum(sp.gammaln(np.exp(x)))
            + np.sum(sp.erf(x) * sp.digamma(2.0 + x * x)) + sp.betaln(np.exp(x[0]), 2.0))


def cholesky_solve(a_half, b):
    a = a_half @ a_half.T + 3.0 * np.eye(3)
    return np.sum(sla.cho_solve(sla.cho_factor(a), b) ** 2) + np.sum(sla.cho_solve(sla.cho_factor(a, lower=True), b))


def lu_and_friends(a, b):
    m = a + 3.0 * np.eye(3)
    x = sla.lu_solve(sla.lu_factor(m), b)
    y = sla.solve_triangular(m, x, lower=True)
    z = sla.solve(m, y, assume_a="gen") + sla.inv(m) @ b
    return np.sum(z * z) + sla.det(m) + np.sum(sla.expm(0.3 * a)) + np.sum(sla.eigh(a + a.T, eigvals_only=True) ** 3)


CASES = [
    (gaussian_nll, (0.3, -0.2, RNG.normal(size=5)), (0, 1)),
    (student_and_gamma, (RNG.normal(size=4), 3.5, 2.5), (0, 1, 2)),
    (cdfs, (RNG.normal(size=3), 1.3), (0, 1)),
    (mvn_loglik, (RNG.normal(size=3), RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))), (0, 1, 2)),
    (special_mix, (RNG.normal(size=3) * 0.5, RNG.normal(size=(3, 3))), (0, 1)),
    (cholesky_solve, (RNG.normal(size=(3, 3)), RNG.normal(size=(3, 2))), (0, 1)),
    (lu_and_friends, (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=3)), (0, 1)),
]


@pytest.mark.parametrize("f,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_gradient_lazy_and_eager(f, args, wrt):
    check(f, *args, wrt=wrt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,wrt", CASES, ids=[c[0].__name__ for c in CASES])
def test_forward_mode(f, args, wrt):
    tangents = tuple((RNG.normal(size=np.shape(a)) if np.ndim(a) else float(RNG.normal())) if i in wrt
                     else (np.zeros(np.shape(a)) if np.ndim(a) else 0.0) for i, a in enumerate(args))
    value, tangent = adsrc.jvp(f, args, tangents)
    eps = 1e-6

    def along(step):
        return f(*(a + step * np.asarray(t) if np.ndim(a) else a + step * t for a, t in zip(args, tangents)))

    np.testing.assert_allclose(tangent, (along(eps) - along(-eps)) / (2 * eps), rtol=1e-5, atol=1e-6)
    assert value == pytest.approx(f(*args))


@pytest.mark.parametrize("f,args,wrt", CASES[:5] + CASES[6:], ids=[c[0].__name__ for c in CASES[:5] + CASES[6:]])
def test_hessian_vector_product(f, args, wrt):
    """Second order: the jvp of the gradient against finite differences of the gradient."""
    i = wrt[0]
    v = RNG.normal(size=np.shape(args[i])) if np.ndim(args[i]) else float(RNG.normal())
    got = adsrc.hvp(f, wrt=i)(*args, v)
    eps = 1e-5
    moved = [list(args), list(args)]
    moved[0][i] = args[i] + eps * v
    moved[1][i] = args[i] - eps * v
    grad = adsrc.grad(f, wrt=i)
    np.testing.assert_allclose(got, (grad(*moved[0]) - grad(*moved[1])) / (2 * eps), rtol=1e-4, atol=1e-5)


def test_cho_solve_with_a_lower_factor():
    # Not in the generated cases (finite differences would move the flag True to 0.999999).
    rng = np.random.default_rng(3)
    c = np.tril(2.0 * np.eye(3) + rng.uniform(-0.5, 0.5, (3, 3))) + np.triu(rng.uniform(-1, 1, (3, 3)), 1)
    b = rng.normal(size=3)

    def f(c, b):
        return np.sum(np.sin(sla.cho_solve((c, True), b)))

    dc = check(f, c, b, wrt=(0, 1))[0]
    assert np.all(np.triu(dc, 1) == 0.0)  # the upper triangle is not read


def test_norm_logpdf_by_keyword_reads_as_math():
    source = adsrc.adjoint_source(gaussian_nll, wrt=(0, 1))
    assert "rule_vjp('scipy.stats.norm_logpdf', 1)" in source and "norm_logpdf_dscale" in source


def test_logsumexp_is_a_rule_not_traced():
    def f(x):
        return sp.logsumexp(x, b=np.array([1.0, 2.0, 0.5]))

    x = RNG.normal(size=3)
    np.testing.assert_allclose(adsrc.grad(f)(x), numerical_grad(f, (x,), 0), rtol=1e-6)
    assert "logsumexp_da" in adsrc.adjoint_source(f)


def test_shape_parameter_of_a_cdf_is_refused_at_compile_time():
    def f(x, df):
        return np.sum(stats.t.cdf(x, df))

    with pytest.raises(NoGradientRule, match=r"scipy.stats.t_cdf with respect to argument 1 \('df'\)"):
        adsrc.grad(f, wrt=1)(np.ones(2), 3.0)
    with pytest.raises(NoGradientRule, match="df"):
        adsrc.jvp(f, (np.ones(2), 3.0), (np.zeros(2), 1.0))
    assert adsrc.grad(f)(np.ones(2), 3.0) == pytest.approx(stats.t.pdf(np.ones(2), 3.0))  # x is fine


@pytest.mark.parametrize("func,args,refused", [
    (sp.gammainc, (2.0, 1.5), 0), (sp.gammaincc, (2.0, 1.5), 0), (sp.boxcox, (1.5, 0.5), 1),
    (sp.inv_boxcox, (0.5, 0.5), 1)])
def test_parameters_without_a_derivative_are_refused_at_compile_time(func, args, refused):
    def f(a, b):
        return func(a, b)

    with pytest.raises(NoGradientRule, match=f"scipy.special.{func.__name__} with respect to argument {refused}"):
        adsrc.grad(f, wrt=refused)(*args)
    other = 1 - refused
    assert adsrc.grad(f, wrt=other)(*args) == pytest.approx(numerical_grad(f, args, other), rel=1e-6)


def test_new_special_functions_at_their_singular_points():
    # 1/Gamma is 0 at the poles -n of Gamma, with slope (-1)^n n!
    np.testing.assert_allclose(adsrc.grad(lambda x: np.sum(sp.rgamma(x)))(np.array([0.0, -1.0, -2.0, -3.0])),
                               [1.0, -1.0, 2.0, -6.0])
    # entr = -x log x: slope +inf at 0, 0 where entr is the constant -inf (x < 0)
    np.testing.assert_array_equal(adsrc.grad(lambda x: np.sum(sp.entr(x)))(np.array([0.0, -1.0])), [np.inf, 0.0])
    # J1, I1, I1e have slope 1/2 at 0 (their formulas divide by x)
    for func in (sp.j1, sp.i1, sp.i1e):
        assert adsrc.grad(lambda x: func(x))(0.0) == 0.5
        assert adsrc.jvp(lambda x: func(x), (0.0,), (2.0,))[1] == 1.0


def test_eigh_of_a_pencil_is_refused_clearly():
    def f(a):
        return np.sum(sla.eigh(a, np.eye(2), eigvals_only=True))

    with pytest.raises(NotImplementedError, match="one matrix"):
        adsrc.grad(f)(np.array([[2.0, 0.3], [0.3, 1.0]]))


def test_scipy_function_without_a_rule_names_the_call():
    def f(x):
        return sp.spence(x).sum()

    with pytest.raises(NoGradientRule, match="sp.spence"):
        adsrc.grad(f)(np.array([0.5, 0.2]))


def test_scipy_rules_load_when_scipy_is_imported_after_adsrc(tmp_path):
    import subprocess
    import sys

    program = (
        "import numpy as np, adsrc\n"
        "from adsrc.rules import optional\n"
        "assert optional.loaded() == [], optional.loaded()\n"   # import adsrc does not import SciPy
        "import sys; assert 'scipy' not in sys.modules\n"
        "import scipy.special as sp\n"
        "adsrc.register_adjoint(sp.expit, lambda g, ans, x: 2.0 * g * ans * (1.0 - ans))\n"  # a user's rule
        "def f(x):\n"
        "    return np.sum(sp.erf(x))\n"
        "print(adsrc.grad(f)(np.zeros(2))[0])\n"  # the first lookup of a SciPy function: its rules load
        "def h(x):\n"
        "    return np.sum(sp.expit(x))\n"
        "print(adsrc.grad(h)(np.zeros(2))[0])\n"
    )
    script = tmp_path / "late_scipy.py"  # a file: adsrc reads the functions' source
    script.write_text(program)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    out = run.stdout.split()
    assert float(out[0]) == pytest.approx(2.0 / np.sqrt(np.pi))
    assert float(out[1]) == pytest.approx(0.5)  # the user's rule (twice the true 0.25) still replaces adsrc's


def test_math_gamma_digamma_without_scipy_agrees_with_scipys():
    from adsrc.rules.pymath import _digamma

    xs = [x for x in np.linspace(-5.45, 60.0, 2001) if abs(x - round(x)) > 1e-3] + [0.2, 1.0, 2.0, 1e3, 1e8]
    np.testing.assert_allclose([_digamma(float(x)) for x in xs], sp.digamma(xs), rtol=1e-12, atol=1e-12)
    assert adsrc.grad(lambda x: math.gamma(x))(4.5) == pytest.approx(math.gamma(4.5) * sp.digamma(4.5), rel=1e-13)
    assert adsrc.grad(lambda x: math.lgamma(x))(-1.5) == pytest.approx(sp.digamma(-1.5), rel=1e-13)


# ---- issue 13's further SciPy rules (autograd's test_scipy.py): each through a whole program -------------
ORDER = 1.7  # a Bessel order: no gradient


def incomplete_beta_and_bessel(x):
    v = ORDER
    return (np.sum(sp.betainc(2.0, 3.5, x / 4.0) - sp.betaincc(1.5, 2.0, x / 5.0)) + np.sum(sp.jv(v, x) * sp.yn(2, x))
            + np.sum(sp.iv(v, x) + sp.ive(2.5, x) + sp.kv(v, x) + sp.kve(1, x) + sp.kn(2, x) + sp.yv(1.5, x))
            + np.sum(sp.multigammaln(x + 2.0, 3)) + np.sum(sp.gammasgn(x - 2.0) * x))


def tails(x, loc, scale):
    return (np.sum(norm.sf(x, loc, scale) + norm.logsf(x, loc, scale) + stats.t.logsf(x, 3.0, loc, scale))
            + np.sum(stats.chi2.logpdf(x + 2.0, 2.5, loc, scale) + stats.chi2.cdf(x + 2.0, 3, loc, scale)
                     + stats.chi2.sf(x + 2.0, 1.5) + stats.poisson.logsf(2, scale)))


def normalized_dirichlet(x, alpha):
    p = x / np.sum(x)
    return stats.dirichlet.logpdf(p, alpha) + stats.dirichlet.pdf(p[:2], alpha)  # all components, and all but one


def gaussian_entropy_and_density(mean, half, xs):
    cov = half @ half.T + np.eye(3)
    return (multivariate_normal.entropy(mean, cov) + np.sum(multivariate_normal.pdf(xs, mean, cov))
            + multivariate_normal.entropy(mean, np.diag(cov)) + np.sum(multivariate_normal.logpdf(xs, mean, 2.0)))


def smoothed(a, kernel):
    full = signal.convolve(a, kernel)
    same = signal.convolve(a, kernel, mode="same")
    valid = signal.convolve(kernel, a, mode="valid", method="direct")  # the larger operand second: swapped
    return np.sum(np.sin(full)) + np.sum(same ** 2) + np.sum(np.cos(valid))


def matrix_equations(a, b, q):
    spd = a @ a.T + np.eye(3)
    x = sla.solve_sylvester(a + 3.0 * np.eye(3), b + 3.0 * np.eye(3), q)
    root = sla.sqrtm(spd)
    ab = np.stack([np.concatenate([[0.0], q[0, 1:]]), 4.0 + a[0], np.concatenate([b[1, :2], [0.0]])])
    return np.sum(x * x) + np.sum(np.sin(root)) + np.sum(sla.solve_banded((1, 1), ab, q[2]) ** 2)


_ALPHA = np.array([1.5, 2.5, 3.0])
NEW_CASES = [
    (incomplete_beta_and_bessel, (RNG.uniform(1.3, 3.0, 4),), (0,)),
    (tails, (RNG.normal(size=4), RNG.normal(size=4) * 0.3, RNG.uniform(1.0, 2.0, 4)), (0, 1, 2)),
    (normalized_dirichlet, (RNG.dirichlet(_ALPHA), _ALPHA), (0, 1)),
    (gaussian_entropy_and_density, (RNG.normal(size=3), RNG.normal(size=(3, 3)), RNG.normal(size=(4, 3))), (0, 1, 2)),
    (smoothed, (RNG.normal(size=(5, 4)), RNG.normal(size=(3, 2))), (0, 1)),
    (matrix_equations, (RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 3)) * 0.5, RNG.normal(size=(3, 3))),
     (0, 1, 2)),
]


@pytest.mark.parametrize("f,args,wrt", NEW_CASES, ids=[c[0].__name__ for c in NEW_CASES])
def test_new_rules_lazy_and_eager(f, args, wrt):
    check(f, *args, wrt=wrt, rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("f,args,wrt", NEW_CASES, ids=[c[0].__name__ for c in NEW_CASES])
def test_new_rules_forward_and_second_order(f, args, wrt):
    """jvp and vjp against finite differences, and both again for the gradient (forward over reverse)."""
    adsrc.check_grads(f, args, order=2)


def test_erf_and_erfc_of_complex_values():
    z = np.array([0.3 + 0.4j, -1.2 + 0.1j, 0.8 - 0.6j])

    def f(z):
        return np.sum(np.abs(sp.erf(z)) ** 2 + np.real(sp.erfc(z * z)))

    check_complex(f, z)
    # holomorphic: the derivative of erf is 2/sqrt(pi) exp(-z^2), the real formula unchanged
    value, tangent = adsrc.jvp(lambda z: sp.erf(z), (z,), (np.ones(3, complex),))
    np.testing.assert_allclose(tangent, 2.0 / np.sqrt(np.pi) * np.exp(-z * z), rtol=1e-13)


def test_sqrtm_of_a_matrix_with_negative_eigenvalues_is_complex():
    a = np.array([[-2.0, 0.5, 0.1], [0.5, 1.5, 0.2], [0.1, 0.2, 2.5]])

    def f(a):
        return np.sum(np.real(sla.sqrtm(a)) + np.imag(sla.sqrtm(a)) ** 2)

    check(f, a, rtol=1e-5, atol=1e-6)
    adsrc.check_grads(f, (a,), order=2)


def test_singular_sylvester_equations_are_refused():
    ones = np.ones((3, 3))  # eigenvalues 3, 0, 0: a and -b share the eigenvalue 0
    with pytest.raises(InvalidArgument, match="Sylvester equation is singular"):
        adsrc.grad(lambda q: np.sum(sla.solve_sylvester(ones, ones, q)))(np.eye(3))
    with pytest.raises(InvalidArgument, match="sqrtm of a singular matrix"):
        adsrc.grad(lambda a: np.sum(sla.sqrtm(a)))(np.diag([1.0, 0.0, 2.0]))


def test_sylvester_of_mixed_real_and_complex_is_refused():
    # SciPy solves a x + x b = q wrongly when a is complex and b real with complex eigenvalues (its real Schur
    # form is not triangular): no gradient of that value is right
    a = 2.0 * np.eye(2) + 0.3j
    b = np.array([[2.0, 1.0], [-1.0, 2.0]])  # eigenvalues 2 +- i
    x = sla.solve_sylvester(a, b, np.eye(2))
    assert np.abs(a @ x + x @ b - np.eye(2)).max() > 1e-3  # still wrong in this SciPy: else drop the refusal
    with pytest.raises(InvalidArgument, match="mix of real and complex"):
        adsrc.grad(lambda b: np.sum(np.abs(sla.solve_sylvester(a, b, np.eye(2)))))(b)
    # both complex: SciPy's value is right, and so is the gradient
    check_complex(lambda b: np.sum(np.abs(sla.solve_sylvester(a, b, np.eye(2))) ** 2), b + 0.1j)


def test_singular_multivariate_normal():
    cov = np.diag([1.0, 2.0, 0.0])

    def logpdf(x, mean, cov):
        return multivariate_normal.logpdf(np.concatenate([x[:2], mean[2:]]), mean, cov, allow_singular=True)

    x, mean = np.array([0.3, -0.2, 0.0]), np.array([0.1, 0.4, 0.5])
    check(logpdf, x, mean, cov, wrt=(0, 1))
    # the pseudo-inverse: the gradient in x is -pinv(cov) (x - mean) on the support
    np.testing.assert_allclose(adsrc.grad(logpdf)(x, mean, cov), [-0.2, 0.3, 0.0])
    with pytest.raises(InvalidArgument, match="cov is singular"):
        adsrc.grad(logpdf, wrt=2)(x, mean, cov)


def test_shape_parameters_of_new_rules_are_refused():
    with pytest.raises(NoGradientRule, match=r"scipy.special.jv with respect to argument 0 .*'v'"):
        adsrc.grad(lambda v, x: sp.jv(v, x))(1.5, 2.0)
    with pytest.raises(NoGradientRule, match=r"scipy.special.betainc with respect to argument 1 .*'b'"):
        adsrc.grad(lambda a, b, x: sp.betainc(a, b, x), wrt=1)(1.5, 2.0, 0.3)
    with pytest.raises(NoGradientRule, match=r"scipy.stats.chi2_sf with respect to argument 1 \('df'\)"):
        adsrc.grad(lambda x, df: stats.chi2.sf(x, df), wrt=1)(1.5, 2.0)


def test_cdf_slope_where_the_density_is_infinite():
    # chi2 with df = 1 at x == loc: the density is infinite, the cdf's slope +inf inside the support and 0
    # outside; the rule takes 0 in every parameter, in both modes (not NaN from inf - inf)
    def f(x, loc):
        return stats.chi2.cdf(x, 1.0, loc)

    assert adsrc.grad(f, wrt=(0, 1))(1.0, 1.0) == (0.0, 0.0)
    assert adsrc.jvp(f, (1.0, 1.0), (1.0, 1.0))[1] == 0.0
    assert adsrc.grad(f)(1.5, 1.0) == pytest.approx(stats.chi2.pdf(1.5, 1.0, 1.0))


def _decay(y, t, rate):
    return -rate * y


def test_odeint_differentiates_through_its_rule():  # tests/test_odeint.py checks it in full
    from scipy.integrate import odeint

    def f(rate):
        return np.sum(odeint(_decay, np.ones(2), np.linspace(0.0, 1.0, 3), (rate,), rtol=1e-11, atol=1e-12))

    expected = -2 * (0.5 * np.exp(-0.25) + 1.0 * np.exp(-0.5))  # d/dr of 2 (1 + e^(-r/2) + e^(-r)) at 0.5
    assert adsrc.grad(f)(0.5) == pytest.approx(expected, rel=1e-7)


def test_no_gradient_functions_load_when_scipy_is_imported_after_adsrc(tmp_path):
    import subprocess
    import sys

    program = (
        "import numpy as np, adsrc\n"
        "import scipy.special as sp\n"
        "def f(x):\n"
        "    return np.sum(sp.gammasgn(x) * x)\n"  # the first SciPy function met: registered with no gradient
        "print(adsrc.grad(f)(np.array([0.5, -0.5]))[1])\n"
    )
    script = tmp_path / "late_gammasgn.py"
    script.write_text(program)
    run = subprocess.run([sys.executable, str(script)], capture_output=True, text=True)
    assert run.returncode == 0, run.stderr
    assert float(run.stdout.split()[0]) == -1.0  # gammasgn(-0.5) = -1, a constant


# -- frozen distributions: norm(loc, scale).logpdf is norm.logpdf(x, loc, scale) ----------------------------
FROZEN = (stats.norm(0.3, 2.0), stats.norm(loc=-0.2, scale=0.5), stats.t(3.0, scale=0.5), stats.gamma(2.0))


def frozen_methods(x):
    a, b, c, d = FROZEN
    return (np.sum(a.logpdf(x)) + np.sum(b.cdf(x * 2.0)) + np.sum(b.logsf(x)) + np.sum(c.pdf(x))
            + np.sum(d.logpdf(x + 2.0)))


def frozen_made_inside(x):
    d = stats.norm(0.5, 2.0)
    return np.sum(d.logpdf(x) * x)


@pytest.mark.parametrize("f", [frozen_methods, frozen_made_inside], ids=lambda f: f.__name__)
def test_a_frozen_distribution_with_constant_parameters_is_its_distribution_with_them(f):
    check(f, RNG.normal(size=3))


def test_a_frozen_distribution_keeps_the_compile_cache():
    g = adsrc.grad(frozen_methods)
    x = RNG.normal(size=3)
    g(x)
    assert "the compile cache held" in str(adsrc.explain(frozen_methods, x))


def frozen_of_a_parameter(p):
    d = stats.norm(p[0], 2.0)
    return np.sum(d.logpdf(np.array([0.1, 0.5])))


def test_a_distribution_frozen_with_differentiated_parameters_is_refused_with_the_working_form():
    with pytest.raises(NoGradientRule, match=r"stats.norm.logpdf\(x, \*params\)") as error:
        adsrc.grad(frozen_of_a_parameter)(np.array([0.3, 1.0]))
    assert "test_scipy.py:" in str(error.value)
