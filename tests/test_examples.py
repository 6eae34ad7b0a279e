"""The examples: their gradients, and that they run as scripts."""
import os
import subprocess
import sys

import numpy as np
import pytest

import adsrc
from gradcheck import check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, os.path.join(ROOT, "examples"))

import loop_accumulate  # noqa: E402
import regression  # noqa: E402


@pytest.mark.parametrize("eager", [False, True])
def test_loop512_gradient_first_row_is_512(eager):
    W = np.ones((10, 10))
    x = [np.ones(10) for _ in range(512)]
    dW = adsrc.grad(loop_accumulate.f, eager=eager)(W, x)
    assert np.all(dW[0] == 512) and np.all(dW[1:] == 0)


def test_loop_small_against_finite_differences():
    rng = np.random.default_rng(1)
    check(loop_accumulate.f, rng.normal(size=(3, 3)), [rng.normal(size=3) for _ in range(5)])


def test_regression_against_finite_differences():
    rng = np.random.default_rng(2)
    check(regression.f, rng.normal(size=(2, 10)), rng.normal(size=(10, 100)), wrt=(0, 1))


@pytest.mark.parametrize("script", ["regression.py", "loop_accumulate.py"])
def test_examples_run(script):
    out = subprocess.run([sys.executable, os.path.join(ROOT, "examples", script)],
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert "def f_adjoint" in out.stdout


def run_cli(*args):
    return subprocess.run([sys.executable, "-m", "adsrc", *args], capture_output=True, text=True,
                          timeout=120, cwd=ROOT)


def test_cli_dump_both_modes():
    lazy = run_cli("dump", "examples/loop_accumulate.py:f", "--wrt", "W")
    eager = run_cli("dump", "examples/regression.py:f", "--wrt", "0,1", "--eager")
    assert lazy.returncode == 0 and "Stack(" in lazy.stdout
    assert eager.returncode == 0 and "eager unthunking" in eager.stdout and "dx" in eager.stdout


@pytest.mark.parametrize("args,message", [
    (("dump", "examples/missing.py:f"), "no such file"),
    (("dump", "examples/regression.py:nope"), "no function named"),
    (("dump", "examples/regression.py:f", "--wrt", "q"), "no parameter named"),
    (("dump", "examples/regression.py"), "FILE.py:FUNC"),
])
def test_cli_errors_are_one_line(args, message):
    out = run_cli(*args)
    assert out.returncode == 2
    assert message in out.stderr and "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
