"""Derivatives of order 1 to 4: generated code, compile time and run time (docs/higher-order.md).

    python benchmarks/orders.py            # 5 interleaved rounds
    python benchmarks/orders.py --quick    # 1 round; no claims

For scalar functions with loops, branches, writes into arrays, helpers and
closures (tests/test_orders.py's), order k is ``grad`` applied k times; for a
function of a vector (Rosenbrock in R^3), order 2 is ``hessian``, 3
``jacobian(hessian)`` and 4 ``hessian(hessian)``. Per function and order:
the lines of code generated on the first call (every module adsrc compiles
for it, the levels' above included, counted as they are loaded), that first call's time
(compiling), and the median of later calls over the median of the function
itself. Rounds are interleaved; the first call is not in the medians.
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
sys.path.insert(0, os.path.join(ROOT, "tests"))

import adsrc  # noqa: E402
from adsrc.backend import pipeline  # noqa: E402
from adsrc.second_order import compile as compile_module  # noqa: E402
from test_orders import FUNCTIONS, POINT  # noqa: E402


def rosenbrock(x):
    return np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1.0 - x[:-1]) ** 2)


def derivatives(func, vector: bool) -> list:
    """Order 1 to 4 of ``func``."""
    if vector:
        return [adsrc.grad(func), adsrc.hessian(func), adsrc.jacobian(adsrc.hessian(func)),
                adsrc.hessian(adsrc.hessian(func))]
    made, out = func, []
    for _ in range(4):
        made = adsrc.grad(made)
        out.append(made)
    return out


_generated = [0]  # lines of every module adsrc has generated (linecache keeps only the recent ones)


def _counting(load):
    def counted(source, *args, **kwargs):
        _generated[0] += source.count("\n") + 1
        return load(source, *args, **kwargs)

    return counted


for _module in (compile_module, pipeline):
    _module.load = _counting(_module.load)


def generated_lines() -> int:
    return _generated[0]


def timed(call, point) -> float:
    start = time.perf_counter()
    call(point)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--quick", action="store_true")
    rounds = 1 if parser.parse_args().quick else 5
    cases = [(f.__name__, f, POINT, False) for f in FUNCTIONS]
    cases.append(("rosenbrock (R^3)", rosenbrock, np.array([0.3, -0.2, 0.9]), True))
    print("| function | order | generated lines | first call, s | later calls / function |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, func, point, vector in cases:
        made = derivatives(func, vector)
        lines, first = [], []
        for d in made:
            before = generated_lines()
            first.append(timed(d, point))
            lines.append(generated_lines() - before)
        times: list[list[float]] = [[] for _ in range(len(made) + 1)]
        for _ in range(rounds):
            for k, call in enumerate([func, *made]):
                repeat = 1 if k >= 3 else 5
                times[k].append(min(timed(call, point) for _ in range(repeat)))
        base = statistics.median(times[0])
        for k in range(len(made)):
            ratio = statistics.median(times[k + 1]) / base
            print(f"| {label} | {k + 1} | {lines[k]:,} | {first[k]:.2f} | {ratio:,.0f} |")


if __name__ == "__main__":
    main()
