"""The examples in examples/: each runs as a script (in a subprocess, with a
timeout), and the gradients they rely on are checked here, against finite
differences, rather than in the examples themselves."""
import os
import subprocess
import sys

import numpy as np
import pytest

import adsrc
from gradcheck import check

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
EXAMPLES = os.path.join(ROOT, "examples")
sys.path.insert(0, EXAMPLES)

import ewma  # noqa: E402
import mlp_training  # noqa: E402
import rnn  # noqa: E402
import spring_system  # noqa: E402

# Only a guard against a script that hangs: how long a script takes depends on the machine and
# its load (particle.py takes 2.5 s on an idle one, 10 s on a loaded CI runner); speed is measured
# in benchmarks/, not here.
SCRIPT_TIMEOUT_SECONDS = 180


def run_script(name):
    out = subprocess.run([sys.executable, os.path.join(EXAMPLES, name)], capture_output=True, text=True,
                         timeout=SCRIPT_TIMEOUT_SECONDS, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    return out.stdout


# dask_*.py start a cluster on a large matrix, cupy_*.py need a GPU: test_dask.py and test_cupy.py run them
@pytest.mark.parametrize("name", sorted(f for f in os.listdir(EXAMPLES)
                                         if f.endswith(".py") and not f.startswith(("dask_", "cupy_"))))
def test_every_example_runs_as_a_script(name):
    assert run_script(name).strip()


# -- MLP training ----------------------------------------------------------------------

def test_mlp_script_prints_a_falling_loss_and_its_adjoint():
    out = run_script("mlp_training.py")
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("step")]
    assert len(losses) >= 3 and losses[-1] < 0.2 * losses[0]
    assert "def loss_adjoint(params, X, Y):" in out


def test_mlp_training_lowers_the_loss():
    _, history = mlp_training.train(steps=100)
    assert history[-1] < 0.2 * history[0]
    # Gradient descent with a small enough step lowers the loss at almost every step.
    rises = sum(b > a for a, b in zip(history, history[1:]))
    assert rises <= len(history) // 10


def test_mlp_gradient_against_finite_differences():
    rng = np.random.default_rng(4)
    W1, b1, W2, b2 = mlp_training.init(rng, n_hidden=4)
    X = np.linspace(-1.0, 1.0, 6).reshape(1, -1)
    Y = np.cos(X)

    def flat(W1, b1, W2, b2):
        return mlp_training.loss((W1, b1, W2, b2), X, Y)

    grads = adsrc.grad(mlp_training.loss)((W1, b1, W2, b2), X, Y)
    expected = check(flat, W1, b1, W2, b2, wrt=(0, 1, 2, 3))
    assert isinstance(grads, tuple) and len(grads) == 4
    for got, want in zip(grads, expected):
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)


# -- RNN ---------------------------------------------------------------------------------

def test_rnn_script_prints_loss_and_gradient_norms():
    out = run_script("rnn.py")
    assert out.startswith("loss = ")
    for name in "WUbV":
        assert f"|dloss/d{name}|" in out
    assert "def rnn_loss_adjoint(W, U, b, V, xs, ys):" in out


@pytest.mark.parametrize("steps", [1, 4])
def test_rnn_gradient_against_finite_differences(steps):
    W, U, b, V, xs, ys = rnn.make_problem(seed=7, n_hidden=4, n_in=3, n_out=2, steps=steps)
    check(rnn.rnn_loss, W, U, b, V, xs, ys, wrt=(0, 1, 2, 3))


def test_rnn_gradient_with_respect_to_the_inputs():
    W, U, b, V, xs, ys = rnn.make_problem(seed=8, n_hidden=3, n_in=2, n_out=2, steps=3)
    check(rnn.rnn_loss, W, U, b, V, xs, ys, wrt=(4, 5))


# -- spring system ---------------------------------------------------------------------------

def test_spring_script_lowers_the_loss_and_hits_the_target():
    out = run_script("spring_system.py")
    losses = [float(line.split()[-1]) for line in out.splitlines() if line.startswith("iteration")]
    assert losses[-1] < 0.01 * losses[0]
    final = float(out.split("last mass ends at ")[1].split()[0])
    assert abs(final - spring_system.TARGET) < 0.01


def test_spring_optimization_lowers_the_loss():
    v0, history = spring_system.optimize(iterations=20)
    assert all(b <= a + 1e-12 for a, b in zip(history, history[1:]))
    assert history[-1] < 0.01 * history[0]
    assert np.all(v0 > 0)  # the chain must be pushed away from the wall


def test_spring_gradient_against_finite_differences():
    n = spring_system.N
    masses = np.linspace(1.0, 2.0, n)
    D = spring_system.difference_matrix(n)
    v0 = np.array([0.3, -0.1, 0.2, 0.4])[:n]
    check(spring_system.loss, v0, 20.0, masses, D, wrt=(0, 1, 2), rtol=1e-5, atol=1e-7)


def test_ewma_writes_in_place_and_matches_finite_differences():
    x = np.sin(np.linspace(0.0, 3.0, 8))
    check(ewma.ewma_loss, x, 0.3, wrt=(0, 1))
    source = adsrc.adjoint_source(ewma.ewma_loss, wrt=(0, 1))
    assert "s_overwritten_1 = s[t].copy()" in source and "s[t] = s_overwritten_1" in source
    assert "s_overwritten = s[0].copy()" not in source  # its restore is dead, and so is the copy
