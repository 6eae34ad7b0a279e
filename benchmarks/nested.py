"""A derivative inside the function differentiated: examples/saddle.py and examples/particle.py.

    python benchmarks/nested.py            # 7 interleaved rounds (about a minute)
    python benchmarks/nested.py --quick    # 2 rounds; no claims

For each eval and each nesting (outer reverse or forward, over an inner
reverse or forward derivative) the table gives the median time of the
nested derivative, over the median time of the plain function (which calls
the inner derivative itself), and the worst round's ratio. Rounds are
interleaved (the plain function, then each nesting), so load from elsewhere
on the machine slows them alike; the first call of each, which compiles, is
not timed.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)
sys.path.insert(0, os.path.join(ROOT, "examples"))

import particle  # noqa: E402
import saddle  # noqa: E402

NESTINGS = [(outer, inner) for outer in ("reverse", "forward") for inner in ("reverse", "forward")]


def _timed(run) -> float:
    started = time.perf_counter()
    run()
    return time.perf_counter() - started


def evals():
    p = np.array([0.8, -0.6])
    yield "saddle", (lambda: saddle.worst_case(p)), {n: (lambda n=n: saddle.nesting(*n)(p)) for n in NESTINGS}
    yield "particle", (lambda: particle.landing_miss(0.05)), \
        {n: (lambda n=n: particle.nesting(*n)(0.05)) for n in NESTINGS}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    rounds = 2 if parser.parse_args().quick else 7
    print("| eval | outer over inner | derivative (ms) | function (ms) | ratio | worst round |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for name, plain, nested in evals():
        plain()
        for run in nested.values():
            run()  # compiles
        times = {"plain": [], **{n: [] for n in nested}}
        for _ in range(rounds):
            times["plain"].append(_timed(plain))
            for n, run in nested.items():
                times[n].append(_timed(run))
        base = statistics.median(times["plain"])
        for (outer, inner) in nested:
            ratios = [t / b for t, b in zip(times[(outer, inner)], times["plain"])]
            median = statistics.median(times[(outer, inner)])
            print(f"| {name} | {outer} over {inner} | {median * 1e3:.1f} | {base * 1e3:.1f} | {median / base:.1f} "
                  f"| {max(ratios):.1f} |")


if __name__ == "__main__":
    main()
