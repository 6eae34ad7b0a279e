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
LIMIT = 1e6  # a program whose value is larger (or not finite) overflowed: finite differences say nothing


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


def verify(func, args) -> int | None:
    """check() with a tolerance scaled to the function's magnitude (finite-difference rounding).

    The number of gradient entries check() compared with finite differences
    (every element of x, W and s), or None when the program was skipped.
    """
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        value = func(*args)
    if not np.isfinite(value) or abs(value) > LIMIT:
        return None  # the program overflowed; finite differences say nothing
    grads = check(func, *args, wrt=(0, 1, 2), rtol=1e-4, atol=1e-6 * max(1.0, abs(value)))
    return sum(int(np.size(g)) for g in grads)


def run_batch(batch: int) -> tuple[dict, str | None]:
    """Check every program of a batch; (outcomes, the first failure or None). Runs in a worker.

    ``outcomes`` maps the name of each program run to what :func:`verify` returned.
    """
    programs = make_batch(batch)
    source = MODULE_HEADER + "\n\n\n".join(src for _, src, _ in programs) + "\n"
    outcomes = {}
    with tempfile.TemporaryDirectory() as directory:
        module = load_module(pathlib.Path(directory) / f"props_{batch}.py", f"props_{batch}", source)
        for k, (name, src, dim) in enumerate(programs):
            args = arguments(batch * 1000 + k, dim, n=k % 4)
            try:
                outcomes[name] = verify(getattr(module, name), args)
            except Exception as error:
                return outcomes, (f"program {name} (batch {batch}, n={args[3]}) failed: "
                                  f"{type(error).__name__}: {error}\narguments: {args!r}\n{src}")
    return outcomes, None


_results: dict[int, tuple[dict, str | None]] = {}


def batch_result(batch: int) -> tuple[dict, str | None]:
    """run_batch(batch), computed once per session (in a worker when the pool runs)."""
    if batch not in _results:
        _results[batch] = background.result(("properties", batch), run_batch, batch)
    return _results[batch]


def checked(outcomes: dict) -> list[str]:
    return [name for name, compared in outcomes.items() if compared is not None]


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs_match_finite_differences(batch):
    outcomes, failure = batch_result(batch)
    assert failure is None, failure
    assert len(checked(outcomes)) >= 0.9 * PER_BATCH, f"{len(checked(outcomes))} of {PER_BATCH} checked"


test_random_programs_match_finite_differences.background_job = lambda item: (
    ("properties", item.callspec.params["batch"]), run_batch, (item.callspec.params["batch"],))


def expected_programs() -> dict[str, int | None]:
    """Every program of the session, run without adsrc: name -> the number of gradient
    entries to compare with finite differences, or None if the program overflows."""
    expected = {}
    with tempfile.TemporaryDirectory() as directory:
        for batch in range(BATCHES):
            programs = make_batch(batch)
            source = MODULE_HEADER + "\n\n\n".join(src for _, src, _ in programs) + "\n"
            module = load_module(pathlib.Path(directory) / f"plain_{batch}.py", f"plain_{batch}", source)
            for k, (name, src, dim) in enumerate(programs):
                with np.errstate(all="ignore"):
                    value = getattr(module, name)(*arguments(batch * 1000 + k, dim, n=k % 4))
                finite = bool(np.isfinite(value)) and abs(value) <= LIMIT
                expected[name] = dim + dim * dim + 1 if finite else None  # x, W and s
    return expected


def test_enough_programs():
    """Every generated program ran; each one that does not overflow (run without adsrc) was
    checked, every element of its gradient against finite differences; that is >= 2,000."""
    expected = background.result(("properties", "expected"), expected_programs)
    assert len(expected) == BATCHES * PER_BATCH
    outcomes = {}
    for batch in range(BATCHES):
        batch_outcomes, failure = batch_result(batch)
        assert failure is None, failure
        outcomes.update(batch_outcomes)
    missing = sorted(expected.keys() - outcomes.keys())
    assert not missing, f"{len(missing)} programs never ran, e.g. {missing[:5]}"
    assert outcomes.keys() == expected.keys()
    wrong = {name: (outcomes[name], entries) for name, entries in expected.items() if outcomes[name] != entries}
    assert not wrong, (f"{len(wrong)} programs not checked as they should be; (gradient entries compared, "
                       f"expected; None: skipped), e.g. {dict(list(wrong.items())[:5])}")
    done = checked(outcomes)
    assert len(done) >= 2000, f"only {len(done)} of {len(outcomes)} programs were checked"


# Runs in the background too, so that it is moved after the batches above and
# reads their results rather than taking their jobs away from the pool.
test_enough_programs.background_job = lambda item: (("properties", "expected"), expected_programs, ())
