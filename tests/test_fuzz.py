"""Fuzz: random valid Python functions either differentiate or raise an AdsrcError.

Programs come from tests/progen.py with a fixed seed per batch (deterministic
in CI), some with wrongly typed expressions and some with a construct adsrc
must refuse. Each batch is written to one module file and imported, in a
worker process while the other tests run (see background.py). For each
program, in lazy and in eager mode, ``value_and_grad`` must

* return the value the function itself returns, with gradients shaped like
  the arguments and equal in both modes; or
* raise an AdsrcError (always, for a program with a refused construct); or
* raise an error of the user's own code: the last traceback frame outside
  NumPy is the generated adjoint or the user's module, never adsrc's own.
"""
from __future__ import annotations

import os
import random
import tempfile
import traceback
import warnings

import numpy as np
import pytest

import adsrc
import background
from diffgen import load_module
from progen import MODULE_HEADER, Generator

BATCHES = 4
PER_BATCH = 40
ADSRC_DIR = os.path.dirname(os.path.abspath(adsrc.__file__))
NUMPY_DIR = os.path.dirname(os.path.abspath(np.__file__))


def blame(error: BaseException) -> str:
    """The file of the last traceback frame outside NumPy."""
    frames = [f.filename for f in traceback.extract_tb(error.__traceback__)
              if not os.path.abspath(f.filename).startswith(NUMPY_DIR)]
    return frames[-1] if frames else "<numpy>"


def run(func, args, eager):
    args = fresh(args)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return adsrc.value_and_grad(func, wrt=(0, 1, 2), eager=eager)(*args)


def fresh(args):
    return tuple(np.array(a) if isinstance(a, np.ndarray) else a for a in args)


def direct(func, args):
    args = fresh(args)
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            return func(*args), None
        except Exception as error:  # the user's own error
            return None, error


def same(a, b) -> bool:
    try:
        return bool(np.allclose(a, b, rtol=1e-9, atol=1e-12, equal_nan=True))
    except (TypeError, ValueError):
        return False


def check_program(module, name: str, is_bad: bool, args) -> tuple[str, str | None]:
    """(outcome, problem): outcome is 'ok', 'refused' or 'user error'; problem is None if fine."""
    func = getattr(module, name)
    expected, user_error = direct(func, args)
    results = {}
    for eager in (False, True):
        try:
            results[eager] = run(func, args, eager)
        except adsrc.AdsrcError:
            results[eager] = "refused"
        except RecursionError as error:
            return "user error", f"RecursionError: {error}"
        except Exception as error:
            where = blame(error)
            if os.path.abspath(where).startswith(ADSRC_DIR):
                detail = "".join(traceback.format_exception(error)[-6:])
                return "crash", f"internal {type(error).__name__} from {where}:\n{detail}"
            results[eager] = "user error"
    lazy, eager = results[False], results[True]
    if is_bad and (lazy != "refused" or eager != "refused"):
        return "ran", "a program with a refused construct was not refused"
    if isinstance(lazy, str) or isinstance(eager, str):
        if lazy != eager:
            return "mixed", f"lazy gave {lazy if isinstance(lazy, str) else 'a gradient'}, " \
                            f"eager {eager if isinstance(eager, str) else 'a gradient'}"
        if lazy == "user error" and user_error is None:
            return "user error", "the adjoint raised but the function itself did not"
        return lazy, None
    if user_error is not None:
        return "ok", f"the function raises {type(user_error).__name__} but its adjoint did not"
    for mode, (value, grads) in (("lazy", lazy), ("eager", eager)):
        if not same(value, expected):
            return "ok", f"{mode} value {value!r} differs from the function's {expected!r}"
        for g, a in zip(grads, args):
            if np.shape(g) != np.shape(a):
                return "ok", f"{mode} gradient of shape {np.shape(g)} for an argument of shape {np.shape(a)}"
    for g_lazy, g_eager in zip(lazy[1], eager[1]):
        if not np.allclose(g_lazy, g_eager, rtol=1e-7, atol=1e-9, equal_nan=True):
            return "ok", f"lazy and eager gradients differ: {g_lazy} vs {g_eager}"
    return "ok", None


def make_batch(batch: int):
    rng = random.Random(20240 + batch)
    programs = []
    for k in range(PER_BATCH):
        gen = Generator(rng, f"fz{batch}_{k}", junk=0.04, bad=1.0 if k % 8 == 3 else 0.0, size=9,
                        dim=1 + batch % 3)
        source = gen.program()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # SyntaxWarning on a wrongly typed subscript
            compile(MODULE_HEADER + source, f"program {k}", "exec")  # the generator writes valid Python
        programs.append((gen.name, source, gen.is_bad))
    return programs


def run_batch(batch: int) -> tuple[dict, list[str]]:
    """Run one batch (in a worker process): (outcome counts, problems found)."""
    programs = make_batch(batch)
    source = MODULE_HEADER + "\n\n\n".join(src for _, src, _ in programs) + "\n"
    outcomes, problems = {}, []
    with tempfile.TemporaryDirectory() as directory, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        module = load_module(os.path.join(directory, f"fuzz_batch_{batch}.py"), f"fuzz_batch_{batch}", source)
        data = np.random.default_rng(batch)
        dim = 1 + batch % 3
        args = (data.normal(size=dim), data.normal(size=(dim, dim)), 0.7, 2)
        for name, src, is_bad in programs:
            outcome, problem = check_program(module, name, is_bad, args)
            if problem:
                problems.append(f"--- {name}: {problem}\n{src}")
            outcomes[outcome] = outcomes.get(outcome, 0) + 1
    return outcomes, problems


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs_compile_or_raise_adsrc_errors(batch):
    outcomes, problems = background.result(("fuzz", batch), run_batch, batch)
    assert not problems, f"{len(problems)} of {PER_BATCH} programs misbehaved:\n" + "\n".join(problems[:3])
    # The generator must exercise the compiler, not only the fence.
    assert outcomes.get("ok", 0) >= PER_BATCH // 3, outcomes
    assert outcomes.get("refused", 0) >= PER_BATCH // 10, outcomes


test_random_programs_compile_or_raise_adsrc_errors.background_job = lambda item: (
    ("fuzz", item.callspec.params["batch"]), run_batch, (item.callspec.params["batch"],))
