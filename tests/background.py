"""Run the heavy generated-program tests in worker processes, alongside the rest.

A test function with a ``background_job`` attribute names, for each of its
collected items, a job ``(key, function, args)``. When collection finishes,
conftest.py calls :func:`start`, which submits every selected item's job to
a pool of worker processes (one per core, at most two) and moves those items
to the end of the run, so the main process runs the other tests while the
workers compile and check programs. The test then collects its job's result
with :func:`result`, which computes it in the test's own process when no pool
is running (one core, or the test was run some other way).
"""
from __future__ import annotations

import concurrent.futures
import multiprocessing
import os
from typing import Any, Callable

_pool: concurrent.futures.ProcessPoolExecutor | None = None
_futures: dict[Any, concurrent.futures.Future] = {}


def _job(item) -> tuple | None:
    make = getattr(getattr(item, "function", None), "background_job", None)
    return make(item) if make is not None else None


def start(items: list) -> None:
    """Submit the jobs of the selected items and move those items last (in place)."""
    global _pool
    jobs = [(item, _job(item)) for item in items]
    background = [item for item, job in jobs if job is not None]
    workers = min(2, os.cpu_count() or 1)
    if not background or workers < 2:
        return
    _pool = concurrent.futures.ProcessPoolExecutor(workers, mp_context=multiprocessing.get_context("spawn"))
    for _, (key, function, args) in ((i, j) for i, j in jobs if j is not None):
        _futures[key] = _pool.submit(function, *args)
    items[:] = [item for item, job in jobs if job is None] + background


def result(key: Any, function: Callable, *args: Any, timeout: float = 900) -> Any:
    """The job's result: from the pool if it was submitted there, else computed now."""
    future = _futures.pop(key, None)
    if future is None:
        return function(*args)
    return future.result(timeout=timeout)


def stop() -> None:
    global _pool
    if _pool is not None:
        _pool.shutdown(cancel_futures=True)
        _pool = None
    _futures.clear()
