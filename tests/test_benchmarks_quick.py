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
