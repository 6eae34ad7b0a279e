"""Property: random smooth programs have adsrc gradients equal to finite differences.

Programs come from tests/progen.py in smooth mode: arithmetic (+ - * / and
small integer powers), @, np.sin/cos/tanh/exp/log (of positive values),
np.sum/mean, indexing and slicing, transposes and reshapes, for loops over
range, arrays and enumerate, while loops, if/else on conditions that read no
differentiated value, reused variables, augmented assignment, tuple
unpacking, sum over generator expressions, and calls of helper functions
defined in the same module. Shapes are random (vectors and square matrices of
size 1 to 3), broadcasting included.

Each program is checked with tests/gradcheck.py's ``check`` (central finite
differences in float64, lazy and eager mode, inputs untouched). Programs are
generated from fixed seeds (deterministic in CI); a batch of programs shares
one module file. At least 2,000 programs run per session, in worker processes
while the other tests run (see background.py; compiling dominates). A program
that fails is reported with its source and seed; its minimized form belongs
in test_regressions.py.
"""
from __future__ import annotations

import importlib.util
import pathlib
import random
import sys
import tempfile
import warnings

import numpy as np
import pytest

import background
from gradcheck import check
from progen import MODULE_HEADER, Generator

BATCHES = 25
PER_BATCH = 84  # 25 * 84 = 2,100 programs


def load_module(path, name: str, source: str):
    path.write_text(source)
    spec = importlib.util.spec_from_file_location(name, str(path))
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def make_batch(batch: int):
    """(name, source, dim) of each program in a batch; the same for the same batch number."""
    rng = random.Random(7_000 + batch)
    programs = []
    for k in range(PER_BATCH):
        dim = rng.randint(1, 3)
        gen = Generator(rng, f"pr{batch}_{k}", smooth=True, size=rng.randint(1, 4), dim=dim)
        programs.append((gen.name, gen.program(), dim))
    return programs


def arguments(seed: int, dim: int, n: int):
    data = np.random.default_rng(seed)
    return data.uniform(-1.0, 1.0, dim), data.uniform(-1.0, 1.0, (dim, dim)), float(data.uniform(-1, 1)), n


def verify(func, args):
    """check() with a tolerance scaled to the function's magnitude (finite-difference rounding)."""
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        value = func(*args)
    if not np.isfinite(value) or abs(value) > 1e6:
        return "skipped"  # the program overflowed; finite differences say nothing
    check(func, *args, wrt=(0, 1, 2), rtol=1e-4, atol=1e-6 * max(1.0, abs(value)))
    return "checked"


def run_batch(batch: int) -> tuple[dict, str | None]:
    """Check every program of a batch; (counts, the first failure or None). Runs in a worker."""
    programs = make_batch(batch)
    source = MODULE_HEADER + "\n\n\n".join(src for _, src, _ in programs) + "\n"
    counts = {"checked": 0, "skipped": 0}
    with tempfile.TemporaryDirectory() as directory:
        module = load_module(pathlib.Path(directory) / f"props_{batch}.py", f"props_{batch}", source)
        for k, (name, src, dim) in enumerate(programs):
            args = arguments(batch * 1000 + k, dim, n=k % 4)
            try:
                counts[verify(getattr(module, name), args)] += 1
            except Exception as error:
                return counts, (f"program {name} (batch {batch}, n={args[3]}) failed: "
                                f"{type(error).__name__}: {error}\narguments: {args!r}\n{src}")
    return counts, None


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs_match_finite_differences(batch):
    counts, failure = background.result(("properties", batch), run_batch, batch)
    assert failure is None, failure
    assert counts["checked"] >= 0.9 * PER_BATCH, counts


test_random_programs_match_finite_differences.background_job = lambda item: (
    ("properties", item.callspec.params["batch"]), run_batch, (item.callspec.params["batch"],))


def test_enough_programs():
    assert BATCHES * PER_BATCH >= 2000
