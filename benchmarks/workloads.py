"""The benchmark workloads, written the way a user would write them.

Each primal function uses only the module-level name ``np``, so that
frameworks.py can run the very same code object under ``autograd.numpy``,
``jax.numpy`` or a torch shim by swapping that one global. Keep them plain:
they are the input adsrc is meant to handle, not tuned code.

Sizes come in two sets: the full ones (``quick=False``) and a tiny one for the
CI smoke run (``quick=True``), where loops are short so that slow systems
finish in seconds. The workload names stay the same in both.
"""
from __future__ import annotations

import linecache
import math
from dataclasses import dataclass
from typing import Callable

import numpy as np


# --- primal functions -------------------------------------------------------

def regression(w, x):
    return np.sum(w @ x) + np.linalg.norm(w)


def loop512(W, x):
    return sum((W @ xi)[0] for xi in x)


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    return np.mean((out - Y) ** 2)


def rnn100(Wh, Wx, h0, xs):
    h = h0
    for xt in xs:
        h = np.tanh(Wh @ h + Wx @ xt)
    return np.sum(h)


def scalar_chain(x, n):
    y = x
    for _ in range(n):
        y = np.sin(y) * 0.5 + x
    return y


def accum100k(v, c):
    s = 0.0
    for ci in c:
        s = s + np.sum(v * ci)
    return s


def scalar_math(x, n):
    y = x
    for _ in range(n):
        y = math.sin(y) * 0.5 + x
    return y


def ewma(x, a):
    s = np.zeros(len(x))
    s[0] = x[0]
    for t in range(1, len(x)):
        s[t] = a * x[t] + (1 - a) * s[t - 1]
    return np.sum(s ** 2)


def wide256(W, xs):
    s = 0.0
    for x in xs:
        s = s + np.sum(np.tanh(W @ x))
    return s


def _straight_line(statements):
    """A function of ``statements`` straight-line statements, with source adsrc can read (via linecache)."""
    lines = ["def straight_line(x, w):", "    y0 = x * w"]
    for i in range(1, statements):
        lines.append(f"    y{i} = np.tanh(y{i - 1}) * w + x" if i % 2 else f"    y{i} = np.sin(y{i - 1}) + y{i // 2}")
    lines.append(f"    return np.sum(y{statements - 1})")
    return function_from_source(lines, f"<benchmarks: straight-line function of {statements} statements>",
                                "straight_line")


def function_from_source(lines: list[str], filename: str, name: str) -> Callable:
    """The function ``name`` defined by ``lines``, under ``filename`` in linecache so that adsrc reads its source."""
    source = "\n".join(lines) + "\n"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = {"np": np}
    exec(compile(source, filename, "exec"), namespace)
    return namespace[name]


straight200 = _straight_line(200)
straight1000 = _straight_line(1000)


# --- inputs -----------------------------------------------------------------

def _rng():
    return np.random.default_rng(0)


def _regression_args(quick):
    r = _rng()
    return r.standard_normal((2, 10)), r.standard_normal((10, 100))


def _loop512_args(quick):
    n = 16 if quick else 512
    return np.ones((10, 10)), [np.ones(10) for _ in range(n)]


def _mlp_args(quick):
    r = _rng()
    batch, n_in, n_hid, n_out = (8, 16, 16, 4) if quick else (64, 256, 256, 10)
    return (
        r.standard_normal((n_in, n_hid)) / np.sqrt(n_in),
        np.zeros(n_hid),
        r.standard_normal((n_hid, n_out)) / np.sqrt(n_hid),
        np.zeros(n_out),
        r.standard_normal((batch, n_in)),
        r.standard_normal((batch, n_out)),
    )


def _rnn100_args(quick):
    r = _rng()
    steps, hidden, n_in = (10, 8, 4) if quick else (100, 32, 16)
    return (
        r.standard_normal((hidden, hidden)) * 0.5 / np.sqrt(hidden),
        r.standard_normal((hidden, n_in)) / np.sqrt(n_in),
        np.zeros(hidden),
        r.standard_normal((steps, n_in)),
    )


def _scalar_chain_args(quick):
    return 0.3, (50 if quick else 1000)


def _accum100k_args(quick):
    r = _rng()
    return r.standard_normal(8), r.standard_normal(200 if quick else 100_000)


def _ewma_args(quick):
    return np.sin(np.linspace(0.0, 30.0, 200 if quick else 16_000)), 0.3


def _wide256_args(quick):
    r = _rng()
    n, steps = (16, 8) if quick else (256, 256)
    return r.standard_normal((n, n)) / np.sqrt(n), list(r.standard_normal((steps, n)))


def _straight_args(quick):
    r = _rng()
    return r.standard_normal(4 if quick else 64) * 0.1, 0.5


# --- registry ---------------------------------------------------------------

@dataclass(frozen=True)
class Workload:
    """One benchmark: the primal, which arguments to differentiate, its inputs.

    ``trips(args)`` is the number of Python loop iterations one call runs;
    tracing systems (jax.jit) unroll that many, so the runner skips them past
    a limit instead of compiling for minutes.
    """

    name: str
    f: Callable
    wrt: tuple[int, ...]
    make_args: Callable[[bool], tuple]
    trips: Callable[[tuple], int]
    what: str


WORKLOADS: dict[str, Workload] = {
    w.name: w
    for w in [
        Workload("regression", regression, (0,), _regression_args, lambda a: 0,
                 "sum(w @ x) + norm(w), w 2x10, x 10x100"),
        Workload("loop512", loop512, (0,), _loop512_args, lambda a: len(a[1]),
                 "sum((W @ xi)[0] for xi in x), W 10x10, 512 vectors"),
        Workload("mlp", mlp, (0, 1, 2, 3), _mlp_args, lambda a: 0,
                 "2-layer tanh MLP 256-256-10, batch 64, MSE"),
        Workload("rnn100", rnn100, (0, 1), _rnn100_args, lambda a: len(a[3]),
                 "h = tanh(Wh @ h + Wx @ x_t), 100 steps, hidden 32, input 16"),
        Workload("scalar_chain", scalar_chain, (0,), _scalar_chain_args, lambda a: a[1],
                 "Python float, 1000 x (y = sin(y) * 0.5 + x)"),
        Workload("accum100k", accum100k, (0,), _accum100k_args, lambda a: len(a[1]),
                 "one 8-vector used 100,000 times: s += sum(v * c_i)"),
        Workload("scalar_math", scalar_math, (0,), _scalar_chain_args, lambda a: a[1],
                 "Python float and math.sin, 1000 x (y = math.sin(y) * 0.5 + x)"),
        Workload("ewma", ewma, (0, 1), _ewma_args, lambda a: len(a[0]),
                 "s[t] = a * x[t] + (1 - a) * s[t - 1] written into an array, 16,000 steps"),
        Workload("wide256", wide256, (0,), _wide256_args, lambda a: len(a[1]),
                 "sum(tanh(W @ x_t)) over 256 steps, W 256x256"),
        Workload("straight200", straight200, (0, 1), _straight_args, lambda a: 0,
                 "200 straight-line statements (compile time), 64-vectors"),
        Workload("straight1000", straight1000, (0, 1), _straight_args, lambda a: 1000 * 1000,  # too big to trace
                 "1,000 straight-line statements (compile time), 64-vectors"),
    ]
}
