"""Compile time of long functions in several shapes: is it linear in the number of statements?

Each shape is a function of ``n`` statements on 64-vectors, written out as
source (so that adsrc can read it) and compiled once, cold, by the first
``grad`` call of a new function object:

* ``rebind``: one name rebound ``n`` times, ``y = np.sin(y) * c + x``;
* ``rotate``: three names taking turns, ``r1 = np.sin(r0) * c + x``;
* ``distinct``: a new name per statement, ``y7 = np.sin(y6) * c + x``;
* ``branches``: ``rebind`` with an ``if``/``else`` on a float every 5 lines;
* ``helper``: each statement calls a helper function, ``y = step(y, c) + x``;
* ``loop_body``: ``rebind``'s statements as the body of a 3-trip loop.

Run ``python -m benchmarks.compile_shapes [n ...]`` (default 250 500 1000):
it prints each shape's compile time per size and the ratio of the largest
size's time to the one before; a linear compile doubles when ``n`` doubles.
"""
from __future__ import annotations

import sys
import time
from typing import Callable

import numpy as np

import adsrc

from .workloads import function_from_source

SHAPES = ("rebind", "rotate", "distinct", "branches", "helper", "loop_body")


def _lines(shape: str, n: int) -> tuple[list[str], str]:
    body, last = [], "y"
    for i in range(n):
        if shape in ("rebind", "loop_body", "branches"):
            body.append("y = np.sin(y) * c + x")
            if shape == "branches" and i % 5 == 4:
                body += ["if c > 0.5:", "    y = y * 0.9", "else:", "    y = y * 1.1"]
        elif shape == "rotate":
            last = f"r{i % 3}"
            body.append(f"{last} = np.sin({f'r{(i - 1) % 3}' if i else 'y'}) * c + x")
        elif shape == "distinct":
            last = f"y{i}"
            body.append(f"{last} = np.sin({f'y{i - 1}' if i else 'y'}) * c + x")
        elif shape == "helper":
            body.append("y = step(y, c) + x")
    if shape == "loop_body":
        body = ["for k in range(3):"] + ["    " + line for line in body]
    return body, last


def make(shape: str, n: int) -> Callable:
    """A new function of ``n`` statements in the given shape (a new object: its first call compiles)."""
    body, last = _lines(shape, n)
    lines = ["def step(y, c):", "    return np.sin(y) * c", "", "def f(x, c):", "    y = x"]
    lines += ["    " + line for line in body] + [f"    return np.sum({last})"]
    return function_from_source(lines, f"<benchmarks: {shape} function of {n} statements>", "f")


def compile_seconds(shape: str, n: int) -> float:
    f = make(shape, n)
    x = np.linspace(0.1, 0.9, 64)
    start = time.perf_counter()
    adsrc.grad(f)(x, 0.3)
    return time.perf_counter() - start


def main(sizes: list[int]) -> None:
    print("| shape | " + " | ".join(f"n = {n:,}" for n in sizes) + f" | t({sizes[-1]}) / t({sizes[-2]}) |")
    print("| --- |" + " ---: |" * (len(sizes) + 1))
    for shape in SHAPES:
        times = [compile_seconds(shape, n) for n in sizes]
        cells = " | ".join(f"{t:.2f} s" for t in times)
        print(f"| {shape} | {cells} | {times[-1] / times[-2]:.2f} |", flush=True)


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [250, 500, 1000])
