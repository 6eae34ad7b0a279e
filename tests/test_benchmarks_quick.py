"""Keep benchmarks/ from rotting: the quick run works, the hand gradients are right.

No timing is asserted anywhere: CI machines are too noisy for that. The real
numbers live in docs/performance.md.
"""
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks import hand  # noqa: E402
from benchmarks.checks import fd_entries  # noqa: E402
from benchmarks.spellings import FAMILIES, variants  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402


def test_quick_run_prints_the_table(tmp_path):
    out = tmp_path / "results.json"
    proc = subprocess.run(
        # Only the systems adsrc always has: the comparison frameworks, where a
        # machine happens to have them, would make this smoke test slow.
        [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick", "--json", str(out),
         "--systems", "primal,hand,adsrc-lazy,adsrc-eager"],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| workload | system | median µs | / hand | / primal |" in proc.stdout
    results = json.loads(out.read_text())["results"]
    measured = {(r["workload"], r["system"]) for r in results if r["error"] is None}
    for name in WORKLOADS:  # primal and hand need nothing optional: they always run
        assert (name, "primal") in measured
        assert (name, "hand") in measured
        assert (name, "adsrc-lazy") in measured and (name, "adsrc-eager") in measured
    assert all(r["ok"] == "yes" for r in results if r["system"] in ("hand", "adsrc-lazy", "adsrc-eager")), \
        proc.stdout


def test_filters_and_unknown_names():
    run = [sys.executable, str(ROOT / "benchmarks" / "run.py"), "--quick"]
    proc = subprocess.run(run + ["--workloads", "regression", "--systems", "primal,hand"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    table = [line for line in proc.stdout.splitlines() if line.startswith("| regression |")]
    assert len(table) == 2
    proc = subprocess.run(run + ["--systems", "nonesuch"], cwd=ROOT, capture_output=True,
                          text=True, timeout=600)
    assert proc.returncode != 0 and "nonesuch" in proc.stderr


@pytest.mark.parametrize("name", list(WORKLOADS))
def test_hand_gradient_matches_central_differences(name):
    wl = WORKLOADS[name]
    args = wl.make_args(True)
    grads = hand.HAND[name](*args)
    assert len(grads) == len(wl.wrt)
    rng = np.random.default_rng(2)
    for i, g in zip(wl.wrt, grads):
        assert np.shape(g) == np.shape(args[i]) and type(g) is type(args[i])
        size = np.size(args[i])
        entries = rng.choice(size, size=min(size, 12), replace=False)
        expected = fd_entries(wl.f, args, i, entries)
        np.testing.assert_allclose(np.ravel(g)[entries], expected, rtol=1e-5, atol=1e-7)


@pytest.mark.parametrize("shape", __import__("benchmarks.compile_shapes", fromlist=["SHAPES"]).SHAPES)
@pytest.mark.parametrize("n", [1, 7, 23])
def test_compile_shapes_differentiate_right(shape, n):
    """The long functions benchmarks/compile_shapes.py times, at small sizes: right gradients, both modes."""
    from benchmarks.compile_shapes import make
    from gradcheck import check
    check(make(shape, n), np.linspace(0.1, 0.9, 5), 0.3, wrt=(0, 1))


def _spelling_variants():
    return [pytest.param(family, v, id=f"{family.name}: {v.label}")
            for family in FAMILIES.values() for v in variants(family)]


@pytest.mark.parametrize("family, variant", _spelling_variants())
def test_every_spelling_differentiates_right_or_is_refused(family, variant):
    """benchmarks/spellings.py's generated variants at tiny sizes: each computes its family's
    function, and adsrc either refuses it before running (an AdsrcError naming the line) or
    gets the gradient right, lazy and eager, against central finite differences."""
    import adsrc
    from gradcheck import check
    args = family.make_args(True)
    first = variants(family)[0]
    np.testing.assert_allclose(variant.f(*args), first.f(*args), rtol=1e-12)
    try:
        adsrc.grad(variant.f, wrt=family.wrt)(*args)
    except adsrc.AdsrcError as e:
        assert str(e).startswith(f"<spellings: {family.name}: {variant.label}>:"), str(e)  # names file:line
        return
    check(variant.f, *args, wrt=family.wrt)


def test_spellings_quick_run_prints_a_table_per_family():
    proc = subprocess.run([sys.executable, "-m", "benchmarks.spellings", "--quick", "--family", "ewma,heat"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "| family | variants | not timed | worst variant |" in proc.stdout
    assert proc.stdout.count("**(worst)**") == 2
    assert "### ewma:" in proc.stdout and "### heat:" in proc.stdout


def _evals(kind):
    from benchmarks.gradbench import EVALS
    return [pytest.param(e, id=f"{e.name} {e.form} {e.derivative}") for e in EVALS if (e.derivative == "gradient") == kind]


@pytest.mark.parametrize("size", ["tiny", "small"])
def test_gradbench_loop_and_vectorized_forms_agree(size):
    from benchmarks.gradbench import EVALS
    for loop, vectorized in zip(EVALS[::2], EVALS[1::2]):
        assert (loop.name, loop.form, vectorized.form) == (vectorized.name, "loop", "vectorized")
        np.testing.assert_allclose(loop.f(*loop.make_args(size)), vectorized.f(*vectorized.make_args(size)),
                                   rtol=1e-10, atol=1e-12, err_msg=loop.name)


@pytest.mark.parametrize("e", _evals(True))
def test_gradbench_gradients_match_central_differences(e):
    from gradcheck import check
    check(e.f, *e.make_args("tiny"), wrt=e.wrt)


def _numerical_jacobian(f, args, i, eps=1e-6):
    """d f / d args[i] by central differences, flattened: (outputs, entries of args[i])."""
    columns = []
    for k in range(np.size(args[i])):
        step = np.zeros(np.size(args[i]))
        step[k] = eps
        step = step.reshape(np.shape(args[i]))
        hi = f(*args[:i], args[i] + step, *args[i + 1:])
        lo = f(*args[:i], args[i] - step, *args[i + 1:])
        columns.append((np.ravel(hi) - np.ravel(lo)) / (2 * eps))
    return np.stack(columns, axis=1)


def _dense_ba(blocks, d_werr, cams, X, w, obs):
    """The sparse BA Jacobian (reprojection rows, then weight rows) as a dense matrix over (cams, X, w)."""
    p, n, m = len(w), cams.size, X.size
    J = np.zeros((3 * p, n + m + p))
    for i, (c, j) in enumerate(obs):
        columns = list(range(11 * c, 11 * c + 11)) + list(range(n + 3 * j, n + 3 * j + 3)) + [n + m + i]
        J[2 * i:2 * i + 2, columns] = blocks[i]
        J[2 * p + i, n + m + i] = d_werr[i]
    return J


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("e", _evals(False))
def test_gradbench_jacobians_and_newton_steps_match_central_differences(e, eager):
    import adsrc
    from benchmarks.gradbench_run import derivative
    args = e.make_args("tiny")
    with adsrc.eager_unthunk(eager):
        result = derivative(e)(*args)
    if e.name == "ba":
        expected = np.hstack([_numerical_jacobian(e.f, args, i) for i in e.wrt])
        got = _dense_ba(*result, *args[:4])
    elif e.name == "ht":
        expected, got = _numerical_jacobian(e.f, args, 0), np.asarray(result[0])
    else:  # k-means' Newton step: the gradient over the Hessian's diagonal
        points, centroids = args
        grad = _numerical_jacobian(e.f, args, 1)[0].reshape(centroids.shape)
        h, diag = 1e-4, np.zeros(centroids.size)
        for k in range(centroids.size):
            step = np.zeros(centroids.size)
            step[k] = h
            step = step.reshape(centroids.shape)
            diag[k] = (e.f(points, centroids + step) - 2 * e.f(points, centroids)
                       + e.f(points, centroids - step)) / h ** 2
        expected, got = grad / diag.reshape(centroids.shape), result[0]
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-7)


def test_gradbench_quick_run_prints_its_table():
    proc = subprocess.run([sys.executable, "-m", "benchmarks.gradbench_run", "--quick", "--eval", "lse,ba"],
                          cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    rows = [line for line in proc.stdout.splitlines() if line.startswith("| lse |") or line.startswith("| ba |")]
    assert len(rows) == 4 and all(line.endswith("| yes |") for line in rows), proc.stdout
