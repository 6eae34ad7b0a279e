"""Measure one workload on every system: median time, transform time, peak memory.

Samples are interleaved: each round takes one sample of every system in turn,
so a burst of load from elsewhere on a shared 2-core machine slows all systems
of a round alike instead of ruining one system's numbers, and the ratios
between them survive. Memory is measured in separate calls: tracemalloc slows
every allocation, so a traced call is never timed. Every phase runs under a
wall-clock limit (SIGALRM), so a runaway system becomes ``n/a``, not a hang.
"""
from __future__ import annotations

import contextlib
import gc
import signal
import statistics
import time
import tracemalloc
from dataclasses import dataclass, field
from typing import Callable, Optional

from .checks import to_numpy
from .systems import Unavailable


@dataclass
class Settings:
    quick: bool
    repeats: int            # at most this many timed samples per cell
    min_sample_s: float     # one sample loops the call until it lasts this long
    budget_s: float         # a cell stops sampling after this long (once 3 samples exist)
    transform_repeats: int  # transform-time measurements per adsrc/jit cell
    slow_call_s: float      # a warm-up call longer than this is the only sample
    phase_timeout_s: int    # wall-clock limit for each phase of a cell
    # What a sample measures: wall time, or with time.process_time this process's CPU time, which
    # does not grow while other work on a shared machine holds the cores.
    clock: Callable[[], float] = time.perf_counter

    @classmethod
    def full_run(cls):
        return cls(False, repeats=21, min_sample_s=0.005, budget_s=3.0,
                   transform_repeats=3, slow_call_s=10.0, phase_timeout_s=900)

    @classmethod
    def quick_run(cls):
        return cls(True, repeats=3, min_sample_s=0.0005, budget_s=0.2,
                   transform_repeats=1, slow_call_s=2.0, phase_timeout_s=30)


@dataclass
class Cell:
    workload: str
    system: str
    median_us: Optional[float] = None
    transform_ms: Optional[float] = None
    peak_kib: Optional[float] = None
    traced: bool = True
    self_ok: Optional[bool] = None   # the system's own check (hand: finite differences)
    samples: int = 0
    error: Optional[str] = None
    grads: Optional[tuple] = field(default=None, repr=False)

    def progress(self):
        if self.error:
            return f"n/a: {self.error}"
        extra = f", transform {self.transform_ms:.1f} ms" if self.transform_ms is not None else ""
        return f"{self.median_us:,.1f} us ({self.samples} samples{extra})"


class CellTimeout(BaseException):
    """BaseException, so that no ``except Exception`` in measured code eats it."""


@contextlib.contextmanager
def _time_limit(seconds):
    def expire(signum, frame):
        raise CellTimeout()

    old = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, old)


def _short(e: BaseException):
    msg = str(e).strip().splitlines()[0] if str(e).strip() else ""
    text = f"{type(e).__name__}: {msg}" if msg else type(e).__name__
    return text if len(text) <= 110 else text[:107] + "..."


@contextlib.contextmanager
def _guarded(cell, s: Settings):
    """Run one phase of a cell; any failure becomes the cell's n/a reason."""
    try:
        with _time_limit(s.phase_timeout_s):
            yield
    except Unavailable as e:
        cell.error = str(e)
    except CellTimeout:
        cell.error = f"timed out after {s.phase_timeout_s} s"
    except Exception as e:
        cell.error = _short(e)


def _loop(call, number, clock=time.perf_counter):
    t0 = clock()
    for _ in range(number):
        call()
    return clock() - t0


@dataclass
class _Live:
    """A cell being timed: its call, calls per sample, samples so far."""
    cell: Cell
    prepared: object
    number: int = 1
    samples: list = field(default_factory=list)
    spent_s: float = 0.0
    single: bool = False  # too slow to repeat: one warm call is the only sample

    def done(self, s: Settings):
        n = len(self.samples)
        return self.single or n >= s.repeats or (n >= 3 and self.spent_s > s.budget_s)


def _start(cell, prepare, wl, args, s: Settings):
    """Prepare, warm up, check the answer; time a second call if the first was slow."""
    p = prepare(wl, args)
    cell.traced = p.traced
    t0 = time.perf_counter()
    out = p.call()  # warm-up; also the answer that gets checked
    first_s = time.perf_counter() - t0
    if p.grads:
        cell.grads = tuple(to_numpy(g) for g in out)
        if p.self_check is not None:
            cell.self_ok = p.self_check(out)
    live = _Live(cell, p)
    if first_s > s.slow_call_s:  # slow, or only the first call (jit compiles in it)?
        second_s = _loop(p.call, 1, s.clock)
        if second_s > s.slow_call_s:
            live.samples.append(second_s)
            live.single = True
    return live


def _calibrate(x, s: Settings):
    """Loop fast calls (doubling the count) until a sample lasts min_sample_s,
    so timer resolution never dominates; the calibration is a sample too."""
    while True:
        t = _loop(x.prepared.call, x.number, s.clock)
        if t >= s.min_sample_s or x.number >= 1 << 20:
            break
        x.number *= 2
    x.samples.append(t / x.number)
    x.spent_s += t


def _transform_seconds(transform, warm_s, s: Settings):
    times = []
    start = time.perf_counter()
    for _ in range(s.transform_repeats):
        times.append(transform(warm_s))
        if time.perf_counter() - start > s.budget_s:
            break
    return statistics.median(times)


def _peak_extra_bytes(call):
    """Peak bytes allocated during one call, above what was live before it."""
    gc.collect()
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        tracemalloc.reset_peak()
        result = call()
        peak = tracemalloc.get_traced_memory()[1]
        del result
    finally:
        tracemalloc.stop()
    return peak - base


def run_workload(wl, args, systems, s: Settings):
    """Measure ``wl`` on each of ``systems`` (name -> prepare); one Cell each.

    The garbage collector stays on while timing, since collecting what a
    system allocates is part of its cost, but runs before each sample, so no
    system pays for another's garbage. Everything alive once the systems are
    warm (torch's and jax's modules are some 200k objects) is frozen out of
    the collector: otherwise each collection would cost 0.3 s here, and every
    system would pay for the libraries that happen to be imported.
    """
    cells = [Cell(wl.name, name) for name in systems]
    live = []
    for cell, prepare in zip(cells, systems.values()):
        with _guarded(cell, s):
            live.append(_start(cell, prepare, wl, args, s))
    live = [x for x in live if not x.cell.error]
    gc.collect()
    gc.freeze()
    try:
        for x in live:
            if not x.single:
                with _guarded(x.cell, s):
                    _calibrate(x, s)
        _sample_rounds(live, s)
        _finish(live, s)
    finally:
        gc.unfreeze()
    for cell in cells:
        if cell.error:
            cell.median_us = cell.transform_ms = cell.peak_kib = None
    return cells


def _sample_rounds(live, s: Settings):
    """One sample of every unfinished cell per round, until all are done."""
    while True:
        active = [x for x in live if not x.done(s) and not x.cell.error]
        if not active:
            break
        for x in active:
            gc.collect()
            with _guarded(x.cell, s):
                t = _loop(x.prepared.call, x.number, s.clock)
                x.samples.append(t / x.number)
                x.spent_s += t


def _finish(live, s: Settings):
    """Median, then transform time and peak memory, in calls of their own."""
    for x in live:
        cell, p = x.cell, x.prepared
        if cell.error:
            continue
        warm = statistics.median(x.samples)
        cell.median_us, cell.samples = warm * 1e6, len(x.samples)
        if p.transform is not None:
            with _guarded(cell, s):
                cell.transform_ms = _transform_seconds(p.transform, warm, s) * 1e3
        if p.traced and not cell.error:
            with _guarded(cell, s):
                cell.peak_kib = _peak_extra_bytes(p.call) / 1024
