"""``adsrc.explain``: why a gradient costs what it costs.

A gradient is fast where adsrc knows the kinds of the values (a float, an
array of this dtype and shape) and can write each rule's contribution as the
NumPy expression it computes; it is slower where the adjoint calls a rule's
generic form, which looks at its arguments every time, or where each call
compiles again. :func:`explain` runs the gradient once, as ``grad`` would, and
says for that call:

* which adjoint ran: the one specialized for the arguments' kinds, or the
  generic one and why;
* the lines of the function whose contributions still go through a rule's
  generic form (called, deferred in a thunk, or stacked over a loop's steps);
* whether the call compiled (a cache miss) and why, from ``cache_info()``;
* how long each phase and pass of a compile of it takes (measured on a
  compile of its own, so that the numbers do not depend on the cache).
"""
from __future__ import annotations

import os
import re
from dataclasses import dataclass
from typing import Any, Callable

from ..backend.cache import Miss
from ..backend.pipeline import Mode, cache, compile, compile_uncached
from ..backend.specialized import generic_reason, signature, specialized
from ..config import config
from ..errors import InvalidArgument
from ..ir.stopwatch import recording
from .arguments import Wrt, bind, choose_wrt, positions
from .derivative import Derivative
from .gradients import value_and_grad
from .primitives import callable_for

__all__ = ["Explanation", "GenericCall", "explain"]

_BINDING = re.compile(r"^(\w+) = rule_vjp\('([^']+)', (\d+)\)$")
_LINE = re.compile(r"^\s*# line (\d+): (.*?)(  \(.*\))?$")


@dataclass(frozen=True)
class GenericCall:
    """A line of the function (``file.py:12`` and its text) whose contributions go through the generic
    form of these rules, each with how: ``called`` (at once), ``deferred`` (a thunk), ``stacked`` (held
    over a loop's steps and computed as one batch where the rule has a batched form) or ``passed to a
    helper`` (a write's helper adds the contribution into an element of a gradient)."""

    line: str
    code: str
    rules: tuple[str, ...]


@dataclass(frozen=True)
class Explanation:
    """What :func:`explain` found; ``str()`` of it is a report to read."""

    function: str
    specialized: bool
    adjoint: str  # the title line of the adjoint that ran
    reason: str  # why the generic adjoint ran ('' when the specialized one did)
    generic_calls: tuple[GenericCall, ...]
    compiled_now: bool  # whether this call compiled (its derivative was not in the compile cache)
    misses: tuple[Miss, ...]  # the compiles this call caused, with their causes
    compile_seconds: dict[str, float]  # phase or pass -> seconds, on a compile of its own
    source: str  # the adjoint that ran

    def __str__(self) -> str:
        lines = [f"explain {self.function}:",
                 f"  ran: {'the specialized adjoint' if self.specialized else 'the generic adjoint'}"
                 + ("" if self.specialized else f" ({self.reason})"),
                 f"  {self.adjoint}"]
        if self.generic_calls:
            lines.append("  lines whose contributions go through a rule's generic form:")
            lines += [f"    {c.line}: {c.code}\n      {', '.join(c.rules)}" for c in self.generic_calls]
        else:
            lines.append("  every contribution is written out as NumPy (no rule's generic form)")
        lines.append("  this call compiled: " + ("yes" if self.compiled_now else "no (the compile cache held)"))
        lines += [f"    {m.function} [{m.options}]: {m.cause}" for m in self.misses]
        total = self.compile_seconds.get("total", 0.0)
        lines.append(f"  a compile of it takes {total:.3f} s:")
        lines += [f"    {name:32s} {seconds:8.3f} s" for name, seconds in self.compile_seconds.items() if name != "total"]
        return "\n".join(lines)


def explain(func: Callable, *args: Any, wrt: Wrt | None = None, argnums: Wrt | None = None,
            eager: bool | None = None, **kwargs: Any) -> Explanation:
    """Run ``grad(func)(*args, **kwargs)`` once and say why it costs what it costs (see the module docstring).

    ``wrt``, ``argnums`` and ``eager`` are as in :func:`value_and_grad`. The phases' times (``parse and
    check``, ``front end``, ``ANF and activity``, ``reverse transform``, each optimizer ``pass``, ``specialize``,
    ``finish the generic adjoint``) add up where one runs inside another: the passes run inside the
    specialization too.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(np.sin(x) ** 2) + np.sum(np.sort(x)[:2])
    >>> found = adsrc.explain(f, np.linspace(0.0, 1.0, 4))
    >>> found.specialized
    True
    >>> [sorted(c.rules) for c in found.generic_calls]
    [['numpy.sort (called)']]
    >>> "pass deadcode" in found.compile_seconds
    True
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        raise InvalidArgument("explain(grad(f), ...) explains a derivative of a derivative, which runs through the "
                              "second-order pass; explain f itself")
    eager = config.eager_unthunk if eager is None else bool(eager)
    before, seen = cache.compiles, list(cache.misses)
    value_and_grad(func, wrt=wrt, eager=eager)(*args, **kwargs)
    compiled_now = cache.compiles > before
    misses = tuple(_new(seen, list(cache.misses)))

    wrt_positions, _ = positions(func, wrt)
    mode = Mode("reverse", eager, True)
    generic = compile(func, wrt_positions, mode)
    key = signature(bind(func, tuple(args), kwargs))
    found = specialized(generic, key) if config.specialize else None
    ran = found if found is not None else generic
    source = ran.source
    with recording() as times:
        from time import perf_counter
        start = perf_counter()
        fresh = compile_uncached(func, wrt_positions, mode)
        special = specialized(fresh, key) if config.specialize else None
        if special is None:
            _ = fresh.source  # the generic adjoint is finished when first read
        times["total"] = perf_counter() - start
    return Explanation(
        function=f"{getattr(func, '__qualname__', func)}", specialized=found is not None,
        adjoint=source.splitlines()[0].lstrip("# "),
        reason="" if found is not None else generic_reason(generic, key) if config.specialize
        else "specialization is off (adsrc.config.specialize is False)",
        generic_calls=tuple(generic_calls(source, os.path.basename(func.__code__.co_filename))),
        compiled_now=compiled_now, misses=misses, compile_seconds=dict(times), source=source)


def _new(before: list[Miss], after: list[Miss]) -> list[Miss]:
    """The misses ``after`` holds beyond ``before`` (the cache keeps the latest 64)."""
    if not before:
        return after
    last = before[-1]
    at = max((i for i, m in enumerate(after) if m is last), default=None)
    return after if at is None else after[at + 1:]


def generic_calls(source: str, filename: str) -> list[GenericCall]:
    """The lines of an adjoint's source whose contributions call a rule's vjp (``name = rule_vjp(...)``
    in its header) rather than an expression written out, grouped by the original line they come from."""
    labels = {}
    for line in source.splitlines():
        found = _BINDING.match(line)
        if found:
            labels[found.group(1)] = found.group(2)
    if not labels or "def pullback" not in source:
        return []
    uses = re.compile(r"\b(Thunk\(|Stack\()?(" + "|".join(map(re.escape, labels)) + r")\b(\()?")
    calls: dict[tuple[str, str], list[str]] = {}
    current = ("?", "")
    for line in source.split("def pullback", 1)[1].splitlines():
        header = _LINE.match(line)
        if header:
            current = (f"{filename}:{header.group(1)}", header.group(2))
            continue
        for wrapper, label, called in uses.findall(line):
            how = "deferred" if wrapper == "Thunk(" else "stacked" if wrapper == "Stack(" else \
                "called" if called else "passed to a helper"
            entry = f"{labels[label]} ({how})"
            rules = calls.setdefault(current, [])
            if entry not in rules:
                rules.append(entry)
    return [GenericCall(line, code, tuple(rules)) for (line, code), rules in calls.items()]
