"""What the compile cache did: how many adjoints were compiled, and why each call that compiled did.

A derivative (``grad(f)``, ``vjp``, ``jvp``, ...) compiles ``f`` once and
reuses the adjoint while everything ``f`` read from outside at compile time
is the same object: its globals and closure cells, the functions and methods
reached by dotted names (``np.linalg.norm``, ``rs.randn`` on a RandomState,
``model.energy``), its defaults, and the rules. A change sends the next call
through the compiler again: a cache miss. ``cache_info()`` counts them and
keeps the latest with their causes, for a program that is slower than it
should be.
"""
from __future__ import annotations

from dataclasses import dataclass

from ..backend.cache import Miss
from ..backend.pipeline import cache

__all__ = ["CacheInfo", "Miss", "cache_info"]


@dataclass(frozen=True)
class CacheInfo:
    """``compiles``: adjoints compiled since the process started; ``misses``: the latest compiles
    (at most 64), oldest first, each a :class:`Miss` with the function, what was compiled and the cause."""

    compiles: int
    misses: tuple[Miss, ...]

    def __str__(self) -> str:
        lines = [f"{self.compiles} compiles; the latest {len(self.misses)}:"]
        lines += [f"  {m.function} [{m.options}]: {m.cause}" for m in self.misses]
        return "\n".join(lines)


def cache_info() -> CacheInfo:
    """How many adjoints were compiled, and the causes of the latest compiles.

    >>> import numpy as np, adsrc
    >>> scale = 2.0
    >>> def f(x):
    ...     return np.sum(x * scale)
    >>> before = adsrc.cache_info().compiles
    >>> df = adsrc.grad(f)
    >>> _ = df(np.ones(3)); _ = df(np.ones(3))      # compiled once, reused
    >>> scale = 3.0                                  # f reads another object now
    >>> _ = df(np.ones(3))
    >>> adsrc.cache_info().compiles - before
    2
    >>> print(adsrc.cache_info().misses[-1].cause)
    'scale', which it reads from outside, is another object than when it was compiled (float then, float now)
    """
    return CacheInfo(cache.compiles, tuple(cache.misses))
