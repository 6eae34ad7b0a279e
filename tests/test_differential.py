"""Differential tests: adsrc's adjoints against plain Python, on hand-written and random programs.

For every program, tests/diffgen.py's ``check_program`` runs the function as
plain Python and through ``adsrc.value_and_grad`` in lazy and in eager mode
(each on its own copy of the arguments) and checks that

* the adjoint returns the function's value bit for bit;
* the arguments are bit-identical afterwards (adsrc never writes user data);
* every gradient is shaped and typed like its argument, and no gradient
  shares memory with another one or with an argument;
* lazy and eager gradients agree (rtol 1e-10, float64);
* for smooth programs, gradients match central finite differences;
* a program adsrc refuses (an ``AdsrcError``) is refused in both modes before
  any of its code ran (each program starts with a counted ``_tick()``).

Programs: the hand-written ones of tests/diff_programs.py (one per construct)
and the programs of tests/safety_programs.py's FAMILIES, then BATCHES *
PER_BATCH random programs from tests/progen.py's ExtendedGenerator: views and
reads of them after writes, writes into arrays made in the function
(repeated indices too), in-place operators on views and loop targets, zip and
enumerate over dicts and lists, shadowed builtins, local functions and
lambdas with defaults. The seed is ``ADSRC_DIFF_SEED`` (default
diffgen.DEFAULT_SEED), so a CI run is deterministic. The batches run in worker
processes while the other tests run (see background.py); each batch is one
test, whose failure message lists every failing program with its problems,
its arguments and its source. ``test_acceptance`` requires that at least
MIN_ACCEPTED of the random programs are accepted and checked (not refused),
and prints the counts (``pytest -s``).
"""
from __future__ import annotations

import inspect
import warnings

import numpy as np
import pytest

import background
import diff_programs
import diffgen
import safety_programs

BATCHES = 50
PER_BATCH = 100  # 50 * 100 = 5,000 random programs per run
MIN_ACCEPTED = 0.6


# -- hand-written programs -------------------------------------------------------------------------
def describe(name: str, problems: list, args: tuple, source: str = "") -> str:
    lines = [f"{name}: " + "; ".join(sorted({c for c, _ in problems}))]
    lines += [f"    [{c}] {d}" for c, d in problems]
    lines.append(f"args = {diffgen.args_repr(args)}")
    return "\n".join(lines) + ("\n" + source if source else "")


def source_of(func) -> str:
    return inspect.getsource(func)


@pytest.mark.parametrize("func", diff_programs.PROGRAMS, ids=lambda f: f.__name__)
def test_hand_written_program(func):
    diffgen.register_tick()
    args, wrt = diff_programs.arguments(func)
    outcome, problems, refusal = diffgen.check_program(func, args, wrt=wrt, fd=func.__name__ in diff_programs.SMOOTH)
    if problems:
        pytest.fail(describe(func.__name__, problems, args, source_of(func)), pytrace=False)
    # adsrc may refuse any program (before running it); these ones it must refuse.
    if func.__name__ in diff_programs.REFUSED:
        assert outcome == "refused", f"{func.__name__} was not refused ({outcome})"
    if func.__name__ in diff_programs.ACCEPTED:
        assert outcome == "accepted", f"{func.__name__} was refused: {refusal}"


@pytest.mark.parametrize("func", safety_programs.FAMILIES, ids=lambda f: f.__name__)
def test_rule_family_program(func):
    rng = np.random.default_rng(7)
    args = (rng.uniform(0.5, 1.5, (3, 3)), rng.uniform(0.5, 1.5, (3, 3)))
    outcome, problems, refusal = diffgen.check_program(func, args, wrt=(0, 1), fd=True, ticks=False)
    if problems:
        pytest.fail(describe(func.__name__, problems, args, source_of(func)), pytrace=False)
    assert outcome == "accepted", refusal


# -- random programs -------------------------------------------------------------------------------
_results: dict[int, dict] = {}


def batch_result(batch: int) -> dict:
    """diffgen.run_batch for this batch, computed once per session (in a worker when the pool runs)."""
    if batch not in _results:
        _results[batch] = background.result(("differential", batch), diffgen.run_batch, batch, PER_BATCH,
                                            diffgen.SEED)
    return _results[batch]


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_programs(batch):
    result = batch_result(batch)
    failures = result["failures"]
    classes = ", ".join(f"{c}: {k}" for c, k in sorted(result["classes"].items(), key=lambda i: -i[1]))
    if failures:
        pytest.fail(f"{len(failures)} of {PER_BATCH} random programs failed (ADSRC_DIFF_SEED={diffgen.SEED}, "
                    f"batch {batch}; {classes}).\nEach runs in a module that starts with (tests/ on sys.path): "
                    f"{diffgen.EXTENDED_HEADER.strip()!r}\n\n" + "\n\n".join(failures), pytrace=False)


test_random_programs.background_job = lambda item: (
    ("differential", item.callspec.params["batch"]), diffgen.run_batch,
    (item.callspec.params["batch"], PER_BATCH, diffgen.SEED))


def generate_all(seed: int) -> dict:
    """Every random program of the session, generated without adsrc; each must compile as Python."""
    names = set()
    for batch in range(BATCHES):
        for program in diffgen.make_batch(batch, PER_BATCH, seed):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                compile(program["source"], program["name"], "exec")
            names.add(program["name"])
    return {"programs": len(names)}


def test_acceptance():
    """At least 5,000 random programs ran; at least MIN_ACCEPTED of them were accepted and checked."""
    generated = background.result(("differential", "all"), generate_all, diffgen.SEED)
    assert generated["programs"] == BATCHES * PER_BATCH >= 5000
    outcomes, classes, tags, refusals, seconds = {}, {}, {}, {}, 0.0
    for batch in range(BATCHES):
        result = batch_result(batch)
        seconds += result["seconds"]
        for key, count in result["outcomes"].items():
            outcomes[key] = outcomes.get(key, 0) + count
        for key, count in result["classes"].items():
            classes[key] = classes.get(key, 0) + count
        for key, count in result["refusals"].items():
            refusals[key] = refusals.get(key, 0) + count
        for tag, counts in result["tags"].items():
            for key, count in counts.items():
                tags.setdefault(tag, {})[key] = tags.setdefault(tag, {}).get(key, 0) + count
    total = sum(outcomes.values())
    accepted = outcomes.get("accepted", 0)
    report = [f"differential: {total} random programs (ADSRC_DIFF_SEED={diffgen.SEED}), {seconds:.1f} s of checking; "
              f"accepted {accepted} ({accepted / max(total, 1):.1%}), refused {outcomes.get('refused', 0)}, "
              f"broken {outcomes.get('broken', 0)}"]
    report += [f"  failure class {c}: {k} programs" for c, k in sorted(classes.items(), key=lambda i: -i[1])]
    report += [f"  refusal {c}: {k}" for c, k in sorted(refusals.items(), key=lambda i: -i[1])]
    report += [f"  construct {t}: {c}" for t, c in sorted(tags.items())]
    print("\n" + "\n".join(report))
    assert total == BATCHES * PER_BATCH
    assert accepted >= MIN_ACCEPTED * total, "\n".join(report)


# Runs in the background too, so that it is moved after the batches above and reads their results.
test_acceptance.background_job = lambda item: (("differential", "all"), generate_all, (diffgen.SEED,))
