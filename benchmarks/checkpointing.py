"""The checkpointing benchmark: a heat-equation simulation, plain adjoint against checkpointed.

    python benchmarks/checkpointing.py            # 80 KB state; 400, 2,000 and 10,000 steps (a few minutes)
    python benchmarks/checkpointing.py --quick    # tiny sizes, seconds; no claims

The state is 10,000 float64 (80 KB); each step is ``u + a * (roll(u, 1) - 2 u +
roll(u, -1))`` with a diffusion coefficient array ``a``; the loss is
``sum(u ** 2)``; the gradient is taken with respect to ``u0`` and ``a``. Each
row is one way of computing it:

* plain: the loop as written, differentiated by adsrc (every step's tape kept);
* checkpointed: ``adsrc.checkpoint_loop(step, u0, n, (a,), every)``, with the
  default ``every = ceil(sqrt(n))`` and with other segment lengths.

Columns: the gradient's median time, its ratio to the primal loop and to the
plain adjoint of the same ``n``, and tracemalloc's peak extra memory during one
gradient (measured in a separate call: tracing slows allocation, so a traced
call is never timed). The plain adjoint is not run past ``--plain-max`` steps:
its tape grows by about 7 states a step (5.4 GB for 10,000 steps).
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"

import argparse  # noqa: E402
import gc  # noqa: E402
import math  # noqa: E402
import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402
import tracemalloc  # noqa: E402

import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import adsrc  # noqa: E402
from benchmarks.report import machine_info  # noqa: E402


def heat_step(u, a):
    return u + a * (np.roll(u, 1) - 2.0 * u + np.roll(u, -1))


def heat_plain(u0, a, n):
    u = u0
    for _ in range(n):
        u = heat_step(u, a)
    return np.sum(u ** 2)


def heat_checkpointed(u0, a, n, every):
    u = adsrc.checkpoint_loop(heat_step, u0, n, (a,), every)
    return np.sum(u ** 2)


def inputs(cells: int):
    x = np.linspace(0.0, 1.0, cells)
    return np.exp(-((x - 0.5) ** 2) / 0.01), np.full(cells, 0.2) + 0.05 * np.sin(6 * np.pi * x)


def median_seconds(call, repeats: int) -> float:
    call()  # warm: compiles
    times = []
    for _ in range(repeats):
        gc.collect()
        t0 = time.perf_counter()
        call()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def peak_extra_bytes(call) -> int:
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        call()
        return tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()


def measure(steps: list[int], cells: int, plain_max: int, repeats: int) -> tuple[list[dict], int]:
    u0, a = inputs(cells)
    state = u0.nbytes
    rows = []
    for n in steps:
        primal_s = median_seconds(lambda: heat_plain(u0, a, n), repeats)
        ways = [("plain", None)] if n <= plain_max else []
        k = math.isqrt(n - 1) + 1
        ways += [("checkpointed", None), ("checkpointed", max(1, k // 4)), ("checkpointed", 4 * k)]
        reference = None
        plain_s = None
        for label, every in ways:
            if label == "plain":
                grad = adsrc.grad(heat_plain, wrt=(0, 1))
                call = lambda: grad(u0, a, n)  # noqa: E731
            else:
                grad = adsrc.grad(heat_checkpointed, wrt=(0, 1))
                call = lambda every=every: grad(u0, a, n, every)  # noqa: E731
            grads = call()
            if reference is None:
                reference = grads
            agree = all(np.allclose(g, r, rtol=1e-12, atol=0) for g, r in zip(grads, reference))
            seconds = median_seconds(call, repeats)
            peak = peak_extra_bytes(call)
            if label == "plain":
                plain_s = seconds
            segment = every if every is not None else k
            rows.append({
                "steps": n, "way": label if every is None else f"{label}, every={every}",
                "segment": segment if label != "plain" else None,
                "stored": math.ceil(n / segment) if label != "plain" else n,
                "seconds": seconds, "primal_seconds": primal_s,
                "vs_primal": seconds / primal_s, "vs_plain": seconds / plain_s if plain_s else None,
                "peak_mib": peak / 2**20, "peak_states": peak / state, "agree": agree,
            })
            print(f"  {n:6d} {rows[-1]['way']:28s} {seconds * 1e3:9.1f} ms  peak {peak / 2**20:8.1f} MiB",
                  file=sys.stderr, flush=True)
    return rows, state


def render(rows: list[dict], state: int, cells: int) -> str:
    lines = [f"State: {cells:,} float64 ({state / 1000:.0f} KB); gradient with respect to u0 and a.", "",
             "| steps | adjoint | stored states | gradient ms | / primal | / plain | peak extra MiB "
             "| peak / state size | grads agree |",
             "| ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rows:
        vs_plain = f"{r['vs_plain']:.2f}" if r["vs_plain"] is not None else "-"
        lines.append(f"| {r['steps']:,} | {r['way']} | {r['stored']:,} | {r['seconds'] * 1e3:,.1f} | "
                     f"{r['vs_primal']:.1f} | {vs_plain} | {r['peak_mib']:,.1f} | {r['peak_states']:,.0f} | "
                     f"{'yes' if r['agree'] else 'NO'} |")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and one repeat (a smoke test)")
    ap.add_argument("--steps", help="comma-separated step counts (default 400,2000,10000)")
    ap.add_argument("--cells", type=int, help="state size in float64 (default 10,000: 80 KB)")
    ap.add_argument("--plain-max", type=int, default=2000, help="largest n the plain adjoint runs (default 2000)")
    ap.add_argument("--repeats", type=int, help="timed repeats per row (default 5)")
    opts = ap.parse_args(argv)
    steps = [int(s) for s in opts.steps.split(",")] if opts.steps else ([50, 200] if opts.quick else [400, 2000, 10000])
    cells = opts.cells or (200 if opts.quick else 10_000)
    repeats = opts.repeats or (1 if opts.quick else 5)
    rows, state = measure(steps, cells, opts.plain_max, repeats)
    machine = machine_info()
    print(render(rows, state, cells))
    print(f"\nMachine: {machine.get('cpu', '?')}; Python {machine.get('python', '?')}, "
          f"NumPy {machine.get('numpy', '?')}; one BLAS thread.")
    return 0 if all(r["agree"] for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
