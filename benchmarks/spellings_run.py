"""The measuring half of benchmarks/spellings.py: check every variant, time it, print the tables.

Timing reuses benchmarks/measure.py (one process, interleaved samples, the
garbage collector run before each sample): per variant the primal, adsrc's
lazy gradient and adsrc's eager gradient are sampled in turns, so that load
from elsewhere on the machine hits the three alike and their ratios hold.
A variant's numbers are printed only once its answers are checked (see
spellings.py); otherwise its row says ``FAIL`` or ``refused`` and why.
"""
from __future__ import annotations

import os
import re
import sys
import time
from dataclasses import dataclass
from typing import Optional

import numpy as np

from . import systems
from .checks import close, directional_fd_ok
from .measure import Settings, run_workload
from .workloads import Workload

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAZY_OVER_EAGER = 1.05   # targets, as in docs/performance.md
GRAD_OVER_PRIMAL = 3.0


def _untraced(prepare):
    """A system without the transform-time and memory phases: only call time matters here."""
    def wrapped(wl, args):
        p = prepare(wl, args)
        p.transform, p.traced = None, False
        return p
    return wrapped


SYSTEMS = {
    "primal": _untraced(systems.primal),
    "lazy": _untraced(systems.CORE["adsrc-lazy"]),
    "eager": _untraced(systems.CORE["adsrc-eager"]),
}


def settings(quick: bool, cpu_time: bool = False) -> Settings:
    """Few samples (a family has dozens of variants); ``cpu_time``: samples in process CPU time."""
    s = Settings.quick_run() if quick else Settings(
        False, repeats=9, min_sample_s=0.005, budget_s=1.0, transform_repeats=1, slow_call_s=10.0,
        phase_timeout_s=300)
    if cpu_time:
        s.clock = time.process_time
    return s


@dataclass
class Row:
    label: str
    primal_us: Optional[float] = None
    lazy: Optional[float] = None    # gradient / primal
    eager: Optional[float] = None
    over_eager: Optional[float] = None  # lazy time / eager time
    status: str = "ok"              # ok, FAIL: why, refused: why
    spread: float = 1.0             # over several passes: the largest worst ratio over the smallest

    @property
    def worst(self) -> float:
        """The larger of the lazy and eager ratios; a failure is worse than any time."""
        if self.status != "ok":
            return float("inf")
        return max(self.lazy, self.eager)


def _refusal(error: str) -> bool:
    """Whether a cell's error names an AdsrcError: adsrc refused the variant before running it."""
    import adsrc.errors

    cls = getattr(adsrc.errors, error.split(":")[0].split()[-1], None)
    return isinstance(cls, type) and issubclass(cls, adsrc.errors.AdsrcError)


def _grad(f, wrt):
    import adsrc
    return adsrc.grad(f, wrt=wrt)


def failure_reason(call, error: str) -> str:
    """The failure's message, untruncated where ``call()`` raises it again, with file names made short."""
    try:
        call()
    except Exception as e:
        error = f"{type(e).__name__}: {str(e).strip().splitlines()[0]}"
    # A variant's made-up file name says nothing its row does not: keep the line and column.
    error = re.sub(r"<spellings: [^>]*>:", "line ", error).replace(ROOT + os.sep, "").replace("|", "/")
    return error if len(error) <= 240 else error[:237] + "..."


def _value(f, args):
    return float(f(*args))


def measure_variant(v, family, args, s: Settings, reference) -> Row:
    """Check and time one variant; ``reference`` is (value, lazy grads) of the family's first, or None."""
    wl = Workload(v.label, v.f, family.wrt, family.make_args, lambda a: 0, v.source)
    cells = {c.system: c for c in run_workload(wl, args, SYSTEMS, s)}
    row = Row(v.label)
    errors = [(name, c.error) for name, c in cells.items() if c.error]
    if errors:
        name, error = errors[0]
        reason = failure_reason(lambda: _grad(v.f, family.wrt)(*args), error)
        row.status = f"{'refused' if _refusal(error) else 'FAIL'} ({name}): {reason}"
        return row
    lazy, eager = cells["lazy"].grads, cells["eager"].grads
    problems = []
    if not directional_fd_ok(v.f, args, family.wrt, lazy):
        problems.append("lazy gradient disagrees with a finite difference")
    if not close(eager, lazy, 1e-10):
        problems.append("eager gradient differs from lazy")
    if reference is not None:
        value, ref_grads = reference
        if not np.isclose(_value(v.f, args), value, rtol=1e-10, atol=0.0):
            problems.append("value differs from the first variant's")
        if not close(lazy, ref_grads, 1e-10):
            problems.append("gradient differs from the first variant's")
    if problems:
        row.status = "FAIL: " + "; ".join(problems)
        return row
    primal = cells["primal"].median_us
    row.primal_us, row.lazy, row.eager = primal, cells["lazy"].median_us / primal, cells["eager"].median_us / primal
    row.over_eager = cells["lazy"].median_us / cells["eager"].median_us
    return row


def worst_of(passes: list[Row]) -> Row:
    """One variant over several passes: each ratio at its worst, a failure in any pass kept."""
    failed = [r for r in passes if r.status != "ok"]
    if failed:
        return failed[0]
    worst = max(r.worst for r in passes)
    return Row(passes[0].label, primal_us=min(r.primal_us for r in passes), lazy=max(r.lazy for r in passes),
               eager=max(r.eager for r in passes), over_eager=max(r.over_eager for r in passes),
               spread=worst / min(r.worst for r in passes))


def measure_family(family, quick: bool, cpu_time: bool = False, progress=sys.stderr) -> list[Row]:
    from .spellings import variants

    s = settings(quick, cpu_time)
    args = family.make_args(quick)
    rows, reference = [], None
    for k, v in enumerate(variants(family)):
        row = measure_variant(v, family, args, s, reference)
        if k == 0 and row.status == "ok":
            import adsrc
            reference = (_value(v.f, args), adsrc.grad(v.f, wrt=family.wrt)(*args))
        print(f"  {family.name}: {v.label}: " + (row.status if row.status != "ok" else
              f"{row.primal_us:,.1f} us, lazy {row.lazy:.2f}x, eager {row.eager:.2f}x"),
              file=progress, flush=True)
        rows.append(row)
    return rows


def _fmt(x, digits=2):
    return "" if x is None else f"{x:.{digits}f}"


def family_table(family, rows: list[Row]) -> str:
    """One family's variants, the worst first; the worst timed one is marked."""
    ordered = sorted(rows, key=lambda r: -r.worst)
    timed = [r for r in ordered if r.status == "ok"]
    worst = timed[0] if timed else None
    lines = [f"### {family.name}: {family.what} ({len(rows)} variants)", "",
             "| variant | primal µs | lazy / primal | eager / primal | lazy / eager | spread | ok |",
             "| --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in ordered:
        if r.status != "ok":
            lines.append(f"| {r.label} |  |  |  |  |  | {r.status} |")
            continue
        mark = " **(worst)**" if r is worst else ""
        lines.append(f"| {r.label}{mark} | {r.primal_us:,.1f} | {_fmt(r.lazy)} | {_fmt(r.eager)} | "
                     f"{_fmt(r.over_eager)} | {_fmt(r.spread)} | yes |")
    return "\n".join(lines)


def summary_table(results) -> str:
    """Per family: the worst variant's ratios, the worst lazy / eager, failures; the worst family first."""
    lines = ["| family | variants | not timed | worst variant | lazy / primal | eager / primal | "
             "best variant's worse ratio | worst lazy / eager | targets |",
             "| --- | ---: | ---: | --- | ---: | ---: | ---: | ---: | --- |"]
    def key(item):
        timed = [r for r in item[1] if r.status == "ok"]
        return -max((r.worst for r in timed), default=float("inf"))
    for family, rows in sorted(results, key=key):
        timed = [r for r in rows if r.status == "ok"]
        if not timed:
            lines.append(f"| {family.name} | {len(rows)} | {len(rows)} | none timed |  |  |  |  | no |")
            continue
        worst, best = max(timed, key=lambda r: r.worst), min(timed, key=lambda r: r.worst)
        ratio = max(r.over_eager for r in timed)
        met = worst.worst <= GRAD_OVER_PRIMAL and ratio <= LAZY_OVER_EAGER and len(timed) == len(rows)
        lines.append(f"| {family.name} | {len(rows)} | {len(rows) - len(timed)} | {worst.label} | "
                     f"{_fmt(worst.lazy)} | {_fmt(worst.eager)} | {_fmt(best.worst)} | {_fmt(ratio)} | "
                     f"{'yes' if met else 'no'} |")
    return "\n".join(lines)


def run_families(families, quick: bool, passes: int = 1, cpu_time: bool = False) -> int:
    """Measure ``families`` ``passes`` times over (each pass all of them, in turn), keep each variant's
    worst pass, and print one summary and one table per family (markdown, to stdout)."""
    from .report import machine_info

    measured = {family.name: [] for family in families}
    for k in range(passes):
        for family in families:
            print(f"{family.name} (pass {k + 1} of {passes}) ...", file=sys.stderr, flush=True)
            measured[family.name].append(measure_family(family, quick, cpu_time))
    results = [(family, [worst_of(list(rows)) for rows in zip(*measured[family.name])]) for family in families]
    m = machine_info()
    print(f"Machine: {m['cpu']}, {m['cpus']} CPUs; Python {m['python']}, NumPy {m['numpy']}; "
          f"{passes} pass(es), each variant's worst shown; {'CPU' if cpu_time else 'wall'} time{' (quick sizes: no claims)' if quick else ''}\n")
    print(summary_table(results))
    for family, rows in results:
        print("\n" + family_table(family, rows))
    return 0
