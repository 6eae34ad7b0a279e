"""Per-example gradients of a small MLP: ``adsrc.vmap(adsrc.grad(loss))`` against a loop of ``adsrc.grad`` calls.

    python benchmarks/vmap_per_example.py            # batch 256, lazy and eager (about a minute)
    python benchmarks/vmap_per_example.py --quick    # batch 16, a few samples; no claims

The MLP has one tanh hidden layer (16 inputs, 64 hidden units, 4 outputs) and
a squared-error loss per example. Both ways give the gradient of every
example's loss with respect to the parameters (a dict of four arrays); they
are first checked to agree to 1e-12. Samples are interleaved (one of each way
per round), so load from elsewhere on the machine slows both alike and the
ratio survives; the table shows median times and the loop / vmap ratio for
lazy and eager accumulation, and the worst ratio of any round.
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

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import adsrc  # noqa: E402


def loss(params, x, y):
    h = np.tanh(params["W1"] @ x + params["b1"])
    out = params["W2"] @ h + params["b2"]
    return 0.5 * np.sum((out - y) ** 2)


def problem(batch: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    params = {"W1": rng.normal(size=(64, 16)) / 4, "b1": rng.normal(size=64),
              "W2": rng.normal(size=(4, 64)) / 8, "b2": rng.normal(size=4)}
    return params, rng.normal(size=(batch, 16)), rng.normal(size=(batch, 4))


def by_loop(gradient, params, xs, ys):
    grads = [gradient(params, x, y) for x, y in zip(xs, ys)]
    return {k: np.stack([g[k] for g in grads]) for k in params}


def _time(call) -> float:
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


def measure(batch: int, rounds: int, eager: bool) -> dict:
    params, xs, ys = problem(batch)
    gradient = adsrc.grad(loss, eager=eager)
    per_example = adsrc.vmap(gradient, in_axes=(None, 0, 0))
    batched, looped = per_example(params, xs, ys), by_loop(gradient, params, xs, ys)
    for k in params:  # the same numbers, or no timing at all
        np.testing.assert_allclose(batched[k], looped[k], rtol=1e-12, atol=1e-14)
    vmap_s, loop_s = [], []
    for _ in range(rounds):  # interleaved: one sample of each per round
        vmap_s.append(_time(lambda: per_example(params, xs, ys)))
        loop_s.append(_time(lambda: by_loop(gradient, params, xs, ys)))
    ratios = [lo / v for lo, v in zip(loop_s, vmap_s)]
    return {"mode": "eager" if eager else "lazy", "vmap_ms": 1e3 * statistics.median(vmap_s),
            "loop_ms": 1e3 * statistics.median(loop_s),
            "ratio": statistics.median(loop_s) / statistics.median(vmap_s), "worst": min(ratios)}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="batch 16, 3 rounds: checks that it runs")
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--rounds", type=int, default=21)
    args = parser.parse_args(argv)
    batch, rounds = (16, 3) if args.quick else (args.batch, args.rounds)
    print(f"per-example gradients of an MLP (16-64-4), batch {batch}, {rounds} interleaved rounds")
    print("| mode | vmap(grad) ms | loop of grad ms | loop / vmap | worst round |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for eager in (False, True):
        r = measure(batch, rounds, eager)
        print(f"| {r['mode']} | {r['vmap_ms']:.2f} | {r['loop_ms']:.2f} | {r['ratio']:.1f}x | {r['worst']:.1f}x |")


if __name__ == "__main__":
    main()
