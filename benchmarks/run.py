"""Run the benchmarks and print one markdown table.

    python benchmarks/run.py                  # full sizes (a few minutes)
    python benchmarks/run.py --quick          # tiny sizes, for CI; no claims
    python benchmarks/run.py --workloads regression,loop512 --systems hand,adsrc-lazy
    python benchmarks/run.py --json results.json

All cells come from one process and one run, so their ratios are comparable
even on a noisy machine. BLAS runs on one thread: the workloads are small, and
a second thread on a 2-core machine only adds scheduling noise. Progress goes
to stderr, the report to stdout. See docs/performance.md for the columns.
"""
from __future__ import annotations

import os

# Before NumPy (or torch, or jax) is imported anywhere: one BLAS/OpenMP thread.
for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[_var] = "1"
os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "")
                           + " --xla_cpu_multi_thread_eigen=false intra_op_parallelism_threads=1")
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import argparse  # noqa: E402
import contextlib  # noqa: E402
import sys  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

from benchmarks import frameworks, systems  # noqa: E402
from benchmarks.measure import Settings, run_workload  # noqa: E402
from benchmarks.report import machine_info, render, to_json  # noqa: E402
from benchmarks.workloads import WORKLOADS  # noqa: E402

SYSTEMS = {**systems.CORE, **frameworks.FRAMEWORKS}


def _names(text, known, what):
    if text is None:
        return list(known)
    names = [n.strip() for n in text.split(",") if n.strip()]
    unknown = [n for n in names if n not in known]
    if unknown:
        raise SystemExit(f"unknown {what}: {', '.join(unknown)} (known: {', '.join(known)})")
    return names


def _one_blas_thread():
    """threadpoolctl also caps BLAS libraries that ignore the environment."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        return contextlib.nullcontext()
    return threadpool_limits(limits=1)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (CI)")
    ap.add_argument("--json", metavar="FILE", help="also write the results as JSON")
    ap.add_argument("--workloads", help="comma-separated subset of: " + ",".join(WORKLOADS))
    ap.add_argument("--systems", help="comma-separated subset of: " + ",".join(SYSTEMS))
    ap.add_argument("--repeats", type=int, help="maximum timed repeats per cell")
    opts = ap.parse_args(argv)

    workloads = _names(opts.workloads, WORKLOADS, "workloads")
    system_names = _names(opts.systems, SYSTEMS, "systems")
    settings = Settings.quick_run() if opts.quick else Settings.full_run()
    if opts.repeats:
        settings.repeats = opts.repeats

    cells = []
    with _one_blas_thread():
        for wname in workloads:
            wl = WORKLOADS[wname]
            args = wl.make_args(opts.quick)
            print(f"{wname} ...", file=sys.stderr, flush=True)
            for cell in run_workload(wl, args, {n: SYSTEMS[n] for n in system_names}, settings):
                print(f"  {wname:13s} {cell.system:12s} {cell.progress()}",
                      file=sys.stderr, flush=True)
                cells.append(cell)
        machine = machine_info()

    print(render(cells, machine, settings))
    if opts.json:
        with open(opts.json, "w") as fh:
            fh.write(to_json(cells, machine, settings))
    return 0


if __name__ == "__main__":
    sys.exit(main())
