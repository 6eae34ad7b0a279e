"""SciPy through adsrc.grad, adsrc.jvp and second order: special, stats and linalg in user programs.

The rules themselves are checked one by one by the generated tests (tests/library_samples.py); here
whole functions that call SciPy are checked against finite differences, lazy and eager, in forward
mode and differentiated twice, including the spellings users write (keyword arguments to
``norm.logpdf``, ``cho_solve(cho_factor(a), b)``). Skipped when SciPy is not installed.
"""
from __future__ import annotations

import numpy as np
import pytest

scipy = pytest.importorskip("scipy")

import scipy.linalg as sla  # noqa: E402
import scipy.special as sp  # noqa: E402
from scipy import stats  # noqa: E402
from scipy.stats import multivariate_normal, norm  # noqa: E402

import adsrc  # noqa: E402
from adsrc.errors import NoGradientRule  # noqa: E402
from gradcheck import check, numerical_grad  # noqa: E402

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


def test_eigh_of_a_pencil_is_refused_clearly():
    def f(a):
        return np.sum(sla.eigh(a, np.eye(2), eigvals_only=True))

    with pytest.raises(NotImplementedError, match="one matrix"):
        adsrc.grad(f)(np.array([[2.0, 0.3], [0.3, 1.0]]))


def test_scipy_function_without_a_rule_names_the_call():
    def f(x):
        return sp.entr(x).sum()

    with pytest.raises(NoGradientRule, match="sp.entr"):
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
