"""The compile cache: compiled code per code object and options, never stale, never unbounded.

An entry is kept per (code object, options), weakly keyed on the code
object: when a function's code is garbage collected (a notebook cell run
again, a module reloaded), its entries go with it. An entry is reused only
while ``entry.current(func, closure)`` holds, which checks every outside
value the function read at compile time (globals, closure cells, module
attributes, defaults) by identity. A few entries are kept per key, so that
closures that share one code object but close over different values (the
functions a factory returns) do not recompile in turn.
"""
from __future__ import annotations

import collections
import threading
import weakref
from dataclasses import dataclass
from typing import Any, Callable

from ..frontend.parse import closure_values

ENTRIES_PER_KEY = 4
MISSES_KEPT = 64


@dataclass(frozen=True)
class Miss:
    """One compile: the function (``name (file:line)``), what was compiled, and why no entry served."""

    function: str
    options: str
    cause: str


class CompileCache:
    """Thread-safe; ``get`` compiles with ``build()`` on a miss."""

    def __init__(self) -> None:
        self._entries: "weakref.WeakKeyDictionary[Any, dict[tuple, list]]" = weakref.WeakKeyDictionary()
        self._lock = threading.RLock()
        self.generation = 0  # counts forget and clear calls: what remembers an entry outside the cache checks it
        self.compiles = 0
        self.misses: collections.deque[Miss] = collections.deque(maxlen=MISSES_KEPT)

    def get(self, func: Callable, options: tuple, build: Callable[[], Any]) -> Any:
        code = getattr(func, "__code__", None)
        if code is None:
            return build()
        closure = closure_values(func) if getattr(func, "__closure__", None) else {}
        entry = self._current(code, options, func, closure)
        if entry is not None:
            return entry
        with self._lock:
            entry = self._current(code, options, func, closure)  # another thread may have compiled it meanwhile
            if entry is None:
                self._count_miss(code, options, func, closure)
                entry = build()
                kept = self._entries.setdefault(code, {}).setdefault(options, [])
                kept.insert(0, entry)
                del kept[ENTRIES_PER_KEY:]
        return entry

    def _current(self, code: Any, options: tuple, func: Callable, closure: dict) -> Any:
        for entry in self._entries.get(code, {}).get(options, ()):
            if entry.current(func, closure):
                return entry
        return None

    def _count_miss(self, code: Any, options: tuple, func: Callable, closure: dict) -> None:
        kept = self._entries.get(code, {}).get(options, ())
        if kept:
            cause = getattr(kept[0], "why_stale", _unknown)(func, closure) \
                or "the entry kept was compiled for other closure values"
            if len(kept) > 1:
                cause += f" (and {len(kept) - 1} older entries did not serve either)"
        elif code in self._entries:
            cause = "first compile for these options (the function was compiled for others)"
        else:
            cause = "first compile of this code"
        self.compiles += 1
        where = f"{code.co_filename}:{code.co_firstlineno}"
        self.misses.append(Miss(f"{code.co_name} ({where})", _options(options), cause))

    def entries(self, func: Callable) -> list:
        """The compiled entries kept for ``func``'s code, all options (for tests and debugging)."""
        by_options = self._entries.get(getattr(func, "__code__", None), {}) if hasattr(func, "__code__") else {}
        return [entry for kept in by_options.values() for entry in kept]

    def forget(self, func: Callable) -> None:
        with self._lock:
            self._entries.pop(getattr(func, "__code__", None), None)
            self.generation += 1

    def clear(self) -> None:
        """Forget everything: after a rule is registered or replaced, every adjoint is compiled anew."""
        with self._lock:
            self._entries.clear()
            self.generation += 1


def _unknown(func: Callable, closure: dict) -> str:
    return "what the entry kept was compiled against changed"


def _options(options: tuple) -> str:
    """``wrt=(0,), reverse, eager`` for the options ``(wrt, mode, ...)`` that backend/pipeline.py gives."""
    if len(options) < 2:
        return ", ".join(map(str, options))
    wrt, mode, *rest = options
    kind = getattr(mode, "direction", str(mode)) + (", eager" if getattr(mode, "eager", False) else "")
    return ", ".join([f"wrt={wrt}", kind, *map(str, rest)])
