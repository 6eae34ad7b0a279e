"""adsrc.minimize: SciPy's minimize over pytrees with adsrc's gradients and Hessian-vector products, against
SciPy given hand-written derivatives and a Newton iteration written out by hand."""
import dataclasses
import sys
from typing import NamedTuple

import numpy as np
import pytest

optimize = pytest.importorskip("scipy.optimize")

import adsrc  # noqa: E402
from adsrc import errors  # noqa: E402

RNG = np.random.default_rng(0)
FEATURES = RNG.standard_normal((60, 3))
LABELS = (FEATURES @ np.array([1.5, -2.0, 0.5]) + 0.3 + RNG.standard_normal(60) > 0).astype(float)
PENALTY = 0.1


def logistic_loss(p, X, y):
    z = X @ p["w"] + p["b"]
    return np.sum(np.logaddexp(0.0, z) - y * z) / len(y) + 0.5 * PENALTY * np.sum(p["w"] ** 2)


def flat_loss(theta, X, y):  # the same loss of one vector (w, b), with its gradient and Hessian by hand
    z = X @ theta[:-1] + theta[-1]
    return np.sum(np.logaddexp(0.0, z) - y * z) / len(y) + 0.5 * PENALTY * np.sum(theta[:-1] ** 2)


def flat_gradient(theta, X, y):
    z = X @ theta[:-1] + theta[-1]
    r = (1.0 / (1.0 + np.exp(-z)) - y) / len(y)
    return np.concatenate([X.T @ r + PENALTY * theta[:-1], [np.sum(r)]])


def newton_solution(X, y, steps=30):
    A = np.hstack([X, np.ones((len(y), 1))])
    theta = np.zeros(A.shape[1])
    for _ in range(steps):
        s = 1.0 / (1.0 + np.exp(-(A @ theta)))
        H = A.T @ (A * (s * (1 - s))[:, None]) / len(y) + PENALTY * np.diag([1.0] * (A.shape[1] - 1) + [0.0])
        theta = theta - np.linalg.solve(H, flat_gradient(theta, X, y))
    return theta


START = {"w": np.zeros(3), "b": 0.0}


@pytest.mark.parametrize("eager", [False, True])
def test_logistic_regression_matches_scipy_with_a_hand_written_gradient_and_newton(eager):
    options = {"gtol": 1e-12, "ftol": 1e-15, "maxiter": 500}
    result = adsrc.minimize(logistic_loss, START, args=(FEATURES, LABELS), method="L-BFGS-B", options=options,
                            eager=eager)
    reference = optimize.minimize(flat_loss, np.zeros(4), args=(FEATURES, LABELS), jac=flat_gradient,
                                  method="L-BFGS-B", options=options)
    assert result.success and set(result.x) == {"w", "b"} and isinstance(result.x["b"], float)
    np.testing.assert_allclose(result.x_flat, reference.x, rtol=1e-10, atol=1e-12)
    newton = newton_solution(FEATURES, LABELS)
    np.testing.assert_allclose(result.x["w"], newton[:3], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(result.x["b"], newton[3], rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(result.jac_flat, flat_gradient(result.x_flat, FEATURES, LABELS), atol=1e-12)
    np.testing.assert_allclose(result.jac["w"], result.jac_flat[:3])
    # one adsrc call per evaluation, value and gradient together, and as many evaluations as SciPy made
    assert result.nfev == result.ncalls == reference.nfev and result.nhvp == 0


def rosen(p):
    x = p["x"]
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)


@pytest.mark.parametrize("method", ["Newton-CG", "trust-ncg", "trust-krylov"])
def test_rosenbrock_with_hessian_vector_products_follows_scipys_exact_path(method):
    x0 = np.array([-1.2, 1.0, 0.5])
    result = adsrc.minimize(rosen, {"x": x0}, method=method, options={"maxiter": 500})
    assert result.success and result.nhvp > 0
    np.testing.assert_allclose(result.x["x"], np.ones(3), atol=1e-6)
    exact = optimize.minimize(optimize.rosen, x0, jac=optimize.rosen_der, hessp=optimize.rosen_hess_prod,
                              method=method, options={"maxiter": 500})
    assert (result.nit, result.nfev) == (exact.nit, exact.nfev)  # the same steps: the products are exact
    np.testing.assert_allclose(result.x_flat, exact.x, rtol=1e-9, atol=1e-12)


def test_methods_needing_the_full_hessian_get_it_from_hessian_vector_products():
    x0 = np.array([-1.2, 1.0, 0.5])
    result = adsrc.minimize(rosen, {"x": x0}, method="trust-exact")
    exact = optimize.minimize(optimize.rosen, x0, jac=optimize.rosen_der, hess=optimize.rosen_hess,
                              method="trust-exact")
    assert result.success and result.nit == exact.nit
    np.testing.assert_allclose(result.x_flat, exact.x, rtol=1e-9, atol=1e-12)


class Line(NamedTuple):
    slope: np.ndarray
    intercept: float


@dataclasses.dataclass
class Quadratic:
    center: np.ndarray
    height: float


def test_namedtuple_and_dataclass_parameters_come_back_in_their_structure():
    target = np.array([2.0, -1.0])

    def line_loss(p, target):
        return np.sum((p.slope - target) ** 2) + (p.intercept + 3.0) ** 2
    result = adsrc.minimize(line_loss, Line(np.zeros(2), 0.0), args=(target,))
    assert type(result.x) is Line and type(result.jac) is Line
    np.testing.assert_allclose(result.x.slope, target, atol=1e-6)
    np.testing.assert_allclose(result.x.intercept, -3.0, atol=1e-6)

    def bowl(q, target):
        return np.sum((q.center - target) ** 4) + (q.height - 0.5) ** 2
    found = adsrc.minimize(bowl, Quadratic(np.zeros(2), 0.0), args=(target,), method="Newton-CG")
    assert isinstance(found.x, Quadratic)
    np.testing.assert_allclose(found.x.center, target, atol=1e-2)
    np.testing.assert_allclose(found.x.height, 0.5, atol=1e-8)


def test_bounds_as_trees_and_as_scipy_takes_them_agree():
    start = {"x": np.array([-1.2, 1.0, 0.5])}
    tree = adsrc.minimize(rosen, start, method="L-BFGS-B", bounds=({"x": 0.0}, {"x": np.array([0.5, 0.5, None])}))
    flat = adsrc.minimize(rosen, start, method="L-BFGS-B", bounds=[(0.0, 0.5), (0.0, 0.5), (0.0, None)])
    np.testing.assert_allclose(tree.x_flat, flat.x_flat, rtol=1e-12)
    assert tree.x["x"][0] == 0.5 and np.all(tree.x["x"] >= 0.0)
    with pytest.raises(errors.InvalidArgument, match="leaves"):
        adsrc.minimize(rosen, start, method="L-BFGS-B", bounds=({"x": 0.0, "y": 1.0}, None))


def test_callback_float32_leaves_and_refused_parameters():
    seen = []
    result = adsrc.minimize(rosen, {"x": np.array([-1.2, 1.0], dtype=np.float32)}, callback=seen.append)
    assert len(seen) == result.nit and all(set(s) == {"x"} for s in seen)
    assert result.x["x"].dtype == np.float64
    np.testing.assert_allclose(result.x["x"], [1.0, 1.0], atol=1e-5)
    with pytest.raises(errors.InvalidArgument, match="real floating-point parameters"):
        adsrc.minimize(rosen, {"x": np.array([1, 2])})


def test_without_scipy_the_error_names_the_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "scipy", None)
    with pytest.raises(errors.MissingDependency, match=r'pip install "adsrc\[scipy\]"'):
        adsrc.minimize(rosen, {"x": np.zeros(2)})
