"""A data-parallel least-squares gradient: NumPy in memory against Dask with 1 and 2 worker processes.

    python benchmarks/dask_scaling.py                 # 500,000 and 5,000,000 rows x 50 (about a minute)
    python benchmarks/dask_scaling.py --rows 100000,400000 --limit 256MiB

Every process gets the same memory limit (``--limit``, 1 GiB by default): the
NumPy run is a child process whose address space is capped there
(RLIMIT_AS), and each Dask worker is a LocalCluster worker process with that
``memory_limit``. The design matrix is a formula of the row and column
numbers, so NumPy and Dask differentiate the very same numbers: NumPy
materializes the whole matrix, Dask makes it chunk by chunk on the workers.
For each size and system the table gives the wall time of one gradient (data
generation included: it is part of the graph), the peak resident memory of
each process (the largest worker's for Dask, the client's beside it), and
whether the gradient matched NumPy's (where NumPy cannot run under the
limit, it is run once more without it, for this check only). Dask is an
optional dependency; the main benchmark (benchmarks/run.py) does not need it.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"  # one BLAS thread per process: the workers are the parallelism

import numpy as np  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path.insert(0, ROOT)

import adsrc  # noqa: E402

FEATURES = 50


def loss(w, X, y):
    """Least squares: the mean squared residual of X @ w against y."""
    r = X @ w - y
    return np.sum(r * r) / X.shape[0]


def design(rows_index, xp=np):
    """Row ``i`` of the design matrix and its target: smooth, reproducible functions of i (any array library)."""
    i = rows_index[:, None] * 1e-5
    X = xp.sin(i + np.arange(FEATURES) * 0.1)
    y = xp.cos(rows_index * 3e-5)
    return X, y


def weights():
    return np.linspace(-1.0, 1.0, FEATURES)


def peak_rss_mib() -> float:
    """This process's peak resident memory so far, in MiB (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


# ---- NumPy, in a child process under the limit ------------------------------------------------
def numpy_child(rows: int) -> None:
    """Runs in the child: the gradient on NumPy arrays; prints one JSON line."""
    try:
        started = time.perf_counter()
        X, y = design(np.arange(rows, dtype=np.float64))
        gradient = adsrc.grad(loss)(weights(), X, y)
        seconds = time.perf_counter() - started
        print(json.dumps({"ok": True, "seconds": seconds, "peak_mib": peak_rss_mib(), "gradient": gradient.tolist()}))
    except MemoryError:
        print(json.dumps({"ok": False, "error": "MemoryError", "peak_mib": peak_rss_mib()}))


def run_numpy(rows: int, limit_bytes: int | None) -> dict:
    def cap():
        if limit_bytes is not None:
            resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))

    out = subprocess.run([sys.executable, os.path.abspath(__file__), "--numpy-child", str(rows)],
                         capture_output=True, text=True, preexec_fn=cap, timeout=1800)
    lines = [line for line in out.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"ok": False, "error": (out.stderr.strip().splitlines() or ["failed"])[-1][:60]}
    return json.loads(lines[-1])


# ---- Dask, on a fresh LocalCluster --------------------------------------------------------------
def run_dask(rows: int, workers: int, limit_bytes: int, chunk_rows: int) -> dict:
    import dask.array as da
    from dask.distributed import Client, LocalCluster

    with LocalCluster(n_workers=workers, threads_per_worker=1, processes=True, memory_limit=limit_bytes,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.run(lambda: None)  # the workers are up before the clock starts
        started = time.perf_counter()
        X, y = design(da.arange(rows, dtype=np.float64, chunks=chunk_rows), xp=da)
        gradient = adsrc.grad(loss)(weights(), X, y)  # a graph: nothing computed yet
        built = time.perf_counter() - started
        gradient = client.compute(gradient).result()
        seconds = time.perf_counter() - started
        worker_peaks = client.run(peak_rss_mib)
    return {"ok": True, "seconds": seconds, "build_seconds": built, "gradient": gradient.tolist(),
            "peak_mib": max(worker_peaks.values()), "client_peak_mib": peak_rss_mib(),
            "chunks": -(-rows // chunk_rows)}


def parse_bytes(text: str) -> int:
    units = {"kib": 2**10, "mib": 2**20, "gib": 2**30, "kb": 10**3, "mb": 10**6, "gb": 10**9, "b": 1}
    lowered = text.strip().lower()
    for unit, factor in units.items():
        if lowered.endswith(unit):
            return int(float(lowered[: -len(unit)]) * factor)
    return int(lowered)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", default="500000,5000000", help="comma-separated row counts")
    parser.add_argument("--limit", default="1GiB", help="memory limit of every process")
    parser.add_argument("--chunk-rows", type=int, default=250_000)
    parser.add_argument("--no-unlimited-check", action="store_true",
                        help="where NumPy cannot run under the limit, do not check Dask against NumPy without it")
    parser.add_argument("--numpy-child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.numpy_child is not None:
        numpy_child(args.numpy_child)
        return
    limit = parse_bytes(args.limit)
    print(f"machine: {platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}, "
          f"NumPy {np.__version__}; memory limit per process {limit / 2**20:,.0f} MiB", file=sys.stderr)
    table = ["| rows x 50 | data | system | time | peak memory per process | gradient |",
             "| ---: | ---: | --- | ---: | ---: | --- |"]
    for rows in (int(r) for r in args.rows.split(",")):
        data_mib = rows * FEATURES * 8 / 2**20
        print(f"{rows:,} rows ({data_mib:,.0f} MiB): NumPy...", file=sys.stderr)
        numpy = run_numpy(rows, limit)
        results = [("NumPy, in memory", numpy)]
        reference = numpy
        if not numpy["ok"] and not args.no_unlimited_check:
            print(f"{rows:,} rows: NumPy without the limit, to check Dask's gradient...", file=sys.stderr)
            reference = run_numpy(rows, None)
        for workers in (1, 2):
            print(f"{rows:,} rows: Dask, {workers} worker(s)...", file=sys.stderr)
            results.append((f"Dask, {workers} worker{'s' if workers > 1 else ''}",
                            run_dask(rows, workers, limit, args.chunk_rows)))
        for system, result in results:
            if not result["ok"]:
                table.append(f"| {rows:,} | {data_mib:,.0f} MiB | {system} | - | - | cannot run: "
                             f"{result['error']} |")
                continue
            peak = f"{result['peak_mib']:,.0f} MiB"
            if "client_peak_mib" in result:
                peak += f" (client {result['client_peak_mib']:,.0f} MiB)"
            if result is numpy:
                verdict = "the reference"
            elif reference["ok"]:
                same = np.allclose(result["gradient"], reference["gradient"], rtol=1e-9, atol=1e-12)
                verdict = "equals NumPy's" if same else "DIFFERS from NumPy's"
                if reference is not numpy:
                    verdict += " (NumPy run without the limit)"
            else:
                verdict = "computed (not checked: NumPy could not run)"
            table.append(f"| {rows:,} | {data_mib:,.0f} MiB | {system} | {result['seconds']:.2f} s | {peak} | "
                         f"{verdict} |")
    print("\n".join(table))


if __name__ == "__main__":
    main()
