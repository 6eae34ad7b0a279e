"""Compile-time measurements: how long each phase and pass of a compile took, when someone asks.

The compiler marks its phases with :func:`phase` (``with phase("transform"):``).
Outside :func:`recording` a phase costs one attribute read; inside it, its time
is added to the recording under its name, so that ``adsrc.explain`` can say
where a slow compile spends its time.

>>> from adsrc.ir.stopwatch import phase, recording
>>> with recording() as times:
...     with phase("parse"):
...         pass
>>> list(times)
['parse']
"""
from __future__ import annotations

import threading
import time
from contextlib import contextmanager
from typing import Iterator

__all__ = ["phase", "recording"]

_state = threading.local()


@contextmanager
def recording() -> Iterator[dict[str, float]]:
    """Record the phases that run inside: name -> seconds, in the order they first ran."""
    times: dict[str, float] = {}
    outer = getattr(_state, "times", None)
    _state.times = times
    try:
        yield times
    finally:
        _state.times = outer


@contextmanager
def phase(name: str) -> Iterator[None]:
    """Time what runs inside under ``name`` (added up over its runs) while something records."""
    times = getattr(_state, "times", None)
    if times is None:
        yield
        return
    start = time.perf_counter()
    try:
        yield
    finally:
        times[name] = times.get(name, 0.0) + time.perf_counter() - start
