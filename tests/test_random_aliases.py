"""Random programs that write through a name which may be an argument's array (tests/progen_aliases.py).

Issue 25: ``y = np.array(x, copy=False); y[0] = 0.0`` writes into ``x`` in
Python, and adsrc gave a silently wrong gradient (it took the result for a
copy), as it did for ``y = np.atleast_1d(x); y *= 2.0``. Each of BATCHES *
PER_BATCH random programs binds a name through one of the spellings that may
give back an argument's array or a view of it (or through one that makes a
new array), writes into it in one of the ways Python allows, and reads the
arguments afterwards. tests/diffgen.py's ``check_program(..., effects=True)``
then requires, in lazy and in eager mode, either

* a refusal before any of the program's code ran (``RefusedWhenRun`` right
  before its statement), as ``UnsupportedSyntax`` (``NoGradientRule`` for
  ``x.view()``, which has no rule) naming a ``file:line`` of the program, with
  the arguments left as they were; or
* Python's value bit for bit, the arguments left exactly as the plain call
  leaves them, and gradients equal to central finite differences (float64)
  at the arguments' values on entry, the same in both modes; the eager mode
  is checked once more under ``with adsrc.eager_unthunk():``.

The seed is ``ADSRC_ALIAS_SEED`` (default DEFAULT_SEED); batches run in worker
processes (tests/background.py). ``test_counts`` prints how many programs
were generated, refused and accepted and checked, by construct (``pytest -s``),
and requires both outcomes for both kinds of spelling.
"""
from __future__ import annotations

import os
import random
import re
import sys
import tempfile
import time
import warnings

import background
import diffgen
import numpy as np
import pytest
from progen_aliases import HEADER, AliasGenerator

import adsrc

DEFAULT_SEED = 2_525
SEED = int(os.environ.get("ADSRC_ALIAS_SEED", DEFAULT_SEED))
BATCHES = 4
PER_BATCH = 100


def arguments(args_seed: int, dim: int, n: int) -> tuple:
    data = np.random.default_rng(args_seed)
    return data.uniform(-1.0, 1.0, dim), data.uniform(-1.0, 1.0, (dim, dim)), float(data.uniform(-1, 1)), n


def make_batch(batch: int, count: int, seed: int = SEED) -> list[dict]:
    """The programs of one batch: the same for the same (seed, batch)."""
    rng = random.Random(seed * 1_000_003 + batch)
    programs = []
    for k in range(count):
        dim = rng.randint(2, 4)
        gen = AliasGenerator(rng, f"alias_{batch}_{k}", dim)
        source = gen.program()
        programs.append({"name": gen.name, "source": source, "smooth": gen.smooth, "tags": sorted(gen.tags),
                         "dim": dim, "n": rng.randrange(3), "args_seed": rng.randrange(2 ** 31)})
    return programs


def program_arguments(program: dict) -> tuple:
    return arguments(program["args_seed"], program["dim"], program["n"])


def reproducer(program: dict, problems: list, seed: int, batch: int) -> str:
    lines = [f"--- {program['name']} (ADSRC_ALIAS_SEED={seed}, batch {batch}): "
             + "; ".join(sorted({c for c, _ in problems}))]
    lines += [f"    [{c}] {d}" for c, d in problems]
    lines += [f"constructs: {', '.join(program['tags'])}", f"args = {diffgen.args_repr(program_arguments(program))}",
              program["source"]]
    return "\n".join(lines)


def eager_context_problems(func, args: tuple, outcome: str) -> list:
    """The eager mode once more, as ``with adsrc.eager_unthunk():`` sets it: refused where the checks above
    saw a refusal, else the gradients of ``eager=False`` (they matched finite differences)."""
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        call_args = diffgen.copy_args(args)
        try:
            with adsrc.eager_unthunk():
                eager = adsrc.grad(func, wrt=diffgen.WRT)(*call_args)
        except adsrc.AdsrcError as error:
            return [] if outcome == "refused" else [("eager_unthunk() refused an accepted program", str(error))]
        if outcome == "refused":
            return [("eager_unthunk() accepted a refused program", "")]
        lazy = adsrc.grad(func, wrt=diffgen.WRT, eager=False)(*diffgen.copy_args(args))
    if not all(diffgen.close(a, b, rtol=1e-10) for a, b in zip(lazy, eager)):
        return [("eager_unthunk() gradients differ from lazy ones", f"{eager!r} vs {lazy!r}")]
    return []


def run_batch(batch: int, count: int, seed: int = SEED) -> dict:
    """Check every program of a batch (in a worker process): outcomes, failures and counts by construct."""
    diffgen.register_tick()
    started = time.perf_counter()
    programs = make_batch(batch, count, seed)
    source = HEADER + "\n\n" + "\n\n".join(p["source"] for p in programs)
    result = {"outcomes": {}, "failures": [], "tags": {}, "refusals": {}, "python_changes_arguments": 0}
    name = f"alias_batch_{seed}_{batch}"
    with tempfile.TemporaryDirectory() as directory:
        path = os.path.join(directory, f"{name}.py")
        module = diffgen.load_module(path, name, source)
        try:
            for program in programs:
                func, args = getattr(module, program["name"]), program_arguments(program)
                plain = diffgen.copy_args(args)
                try:
                    with warnings.catch_warnings(), np.errstate(all="ignore"):
                        warnings.simplefilter("ignore")
                        func(*plain)
                except Exception:  # noqa: BLE001  (check_program reports it)
                    pass
                result["python_changes_arguments"] += bool(diffgen.changed_inputs(plain, args))
                outcome, problems, refusal = diffgen.check_program(func, args, fd=program["smooth"], effects=True,
                                                                   path=path)
                if outcome in ("accepted", "refused") and not problems:
                    problems = eager_context_problems(func, args, outcome)
                result["outcomes"][outcome] = result["outcomes"].get(outcome, 0) + 1
                for tag in program["tags"]:
                    counts = result["tags"].setdefault(tag, {})
                    counts[outcome] = counts.get(outcome, 0) + 1
                if refusal:
                    refusal = re.sub(r"\b[a-z]+\d+\b", "v", refusal)
                    result["refusals"][refusal] = result["refusals"].get(refusal, 0) + 1
                if problems or outcome == "broken":
                    result["failures"].append(reproducer(program, problems, seed, batch))
        finally:
            sys.modules.pop(name, None)
    result["seconds"] = time.perf_counter() - started
    return result


_results: dict[int, dict] = {}


def batch_result(batch: int) -> dict:
    if batch not in _results:
        _results[batch] = background.result(("aliases", batch), run_batch, batch, PER_BATCH, SEED)
    return _results[batch]


@pytest.mark.parametrize("batch", range(BATCHES))
def test_random_alias_programs(batch):
    failures = batch_result(batch)["failures"]
    if failures:
        pytest.fail(f"{len(failures)} of {PER_BATCH} random programs failed (ADSRC_ALIAS_SEED={SEED}, batch "
                    f"{batch}).\nEach runs in a module that starts with (tests/ on sys.path):\n{HEADER}\n\n"
                    + "\n\n".join(failures), pytrace=False)


test_random_alias_programs.background_job = lambda item: (
    ("aliases", item.callspec.params["batch"]), run_batch, (item.callspec.params["batch"], PER_BATCH, SEED))


def test_generator_is_deterministic_and_compiles():
    first, again = make_batch(0, PER_BATCH), make_batch(0, PER_BATCH)
    assert [p["source"] for p in first] == [p["source"] for p in again]
    compile(HEADER + "\n\n".join(p["source"] for p in first), "batch", "exec")


def summary(seed: int, results: list[dict]) -> tuple[dict, dict, str]:
    outcomes, tags, refusals, seconds, changing = {}, {}, {}, 0.0, 0
    for result in results:
        seconds += result["seconds"]
        changing += result["python_changes_arguments"]
        for key, count in result["outcomes"].items():
            outcomes[key] = outcomes.get(key, 0) + count
        for key, count in result["refusals"].items():
            refusals[key] = refusals.get(key, 0) + count
        for tag, counts in result["tags"].items():
            for key, count in counts.items():
                tags.setdefault(tag, {})[key] = tags.setdefault(tag, {}).get(key, 0) + count
    total = sum(outcomes.values())
    report = [f"aliases: {total} random programs (ADSRC_ALIAS_SEED={seed}), {seconds:.1f} s of checking; "
              f"{changing} of them change an argument in plain Python; refused {outcomes.get('refused', 0)}, "
              f"accepted and checked {outcomes.get('accepted', 0)}, broken {outcomes.get('broken', 0)}"]
    report += [f"  refusal {c}: {k}" for c, k in sorted(refusals.items(), key=lambda i: -i[1])]
    report += [f"  construct {t}: {c}" for t, c in sorted(tags.items())]
    return outcomes, tags, "\n".join(report)


def test_counts():
    """Both outcomes happen: aliases of arguments refused, new arrays accepted, for several write forms."""
    outcomes, tags, report = summary(SEED, [batch_result(b) for b in range(BATCHES)])
    print("\n" + report)
    assert sum(outcomes.values()) == BATCHES * PER_BATCH
    assert outcomes.get("refused", 0) > 0 and outcomes.get("accepted", 0) > 0, report
    refused = sum(c.get("refused", 0) for t, c in tags.items() if t.startswith("alias "))
    accepted = sum(c.get("accepted", 0) for t, c in tags.items() if t.startswith("fresh "))
    assert refused > 0 and accepted > 0, report
    for form in ("item", "slice op=", "op="):
        assert tags.get(f"write {form}", {}).get("accepted", 0) > 0, f"no accepted program uses {form}\n{report}"
        assert tags.get(f"write {form}", {}).get("refused", 0) > 0, f"no refused program uses {form}\n{report}"


test_counts.background_job = lambda item: (("aliases", "generated"), make_batch, (0, PER_BATCH, SEED))


if __name__ == "__main__":  # python tests/test_random_aliases.py SEED...: the counts of other seeds
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    for seed in map(int, sys.argv[1:] or [SEED]):
        results = [run_batch(b, PER_BATCH, seed) for b in range(BATCHES)]
        print(summary(seed, results)[2])
        for result in results:
            for failure in result["failures"]:
                print(failure + "\n")
