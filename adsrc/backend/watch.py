"""The compiled derivative one caller runs, checked at each call in a few identity tests.

``compile(func, wrt, mode)`` looks its entry up in the compile cache and
checks it with ``Compiled.current``, which resolves each outside name the
function read again (closure cell, global, builtin) and walks each dotted name
down from its root. A gradient function (``grad(f)``) or ``vjp`` asks for the
same entry of the same function at every call, so :class:`Adjoints` keeps, per
mode, the entry it was given last with a :class:`Watch`: the same checks, with
where each name resolves worked out once. A watch holds while

* the function's code object is the one compiled (``f.__code__ = ...``),
* its defaults are the objects compiled against,
* every global, closure cell and builtin it read is still the same object, and
  so is every function, class or module reached by a dotted name it read,
* no rule was registered or replaced since (``registry.version()``), and the
  compile cache was not cleared or told to forget the function.

Otherwise the call goes through ``compile`` again, which finds or compiles the
current entry, and the watch is made anew. Only plain Python functions are
watched (a bound method, partial, callable instance, checkpointed or lifted
function goes through ``compile`` at every call), and one whose name resolves
to an empty closure cell (the name is bound later in the outer scope) is not.
"""
from __future__ import annotations

import builtins
import inspect
from functools import partial
from operator import attrgetter
from typing import Any, Callable

from ..frontend.parse import _MISSING
from ..rules import registry
from ..rules.checkpoint import compiled_as
from ..rules.closures import lifted_from
from .pipeline import EAGER, REVERSE, Compiled, cache, compile


class Watch:
    """The checks of ``entry.current(func, ...)`` for one function: getters applied to the function, and
    getters of what it reads from outside (a global, a closure cell, a builtin, an attribute), each with
    the object it must give. It holds no reference to the function, which is given to ``current``."""

    __slots__ = ("entry", "_own", "_outside", "_version", "_generation")

    def __init__(self, entry: Compiled, own: list[tuple[Callable[[Any], Any], Any]],
                 outside: list[tuple[Callable[[], Any], Any]], generation: int):
        self.entry = entry
        self._own = own
        self._outside = outside
        self._version = entry.rules_version
        self._generation = generation

    def current(self, func: Callable) -> bool:
        if registry.version() != self._version or cache.generation != self._generation:
            return False
        try:
            for get, expected in self._own:
                if get(func) is not expected:
                    return False
            for read, expected in self._outside:
                if read() is not expected:
                    return False
        except Exception:  # an attribute that is gone, a closure cell emptied
            return False
        return True


def watch(func: Callable, entry: Compiled, generation: int) -> Watch | None:
    """A watch of ``entry`` compiled for the plain function ``func``; None where a name resolves in a way
    the checks below do not follow (an empty closure cell)."""
    code = func.__code__
    positional, keywords = entry.defaults
    own: list[tuple[Callable[[Any], Any], Any]] = [(attrgetter("__code__"), code),
                                                   (attrgetter("__defaults__"), positional)]
    if keywords or func.__kwdefaults__ is not None:
        own.append((entry.same_defaults, True))
    else:
        own.append((attrgetter("__kwdefaults__"), None))
    outside: list[tuple[Callable[[], Any], Any]] = []
    cells = dict(zip(code.co_freevars, func.__closure__ or ()))
    globals_ = func.__globals__
    for key, obj in entry.reads:
        if key in cells:
            cell = cells[key]
            try:
                cell.cell_contents
            except ValueError:
                return None
            outside.append((partial(getattr, cell, "cell_contents"), obj))
            continue
        outside.append((partial(globals_.get, key, _MISSING), obj if key in globals_ else _MISSING))
        if key not in globals_:  # a builtin: while no global of that name hides it
            outside.append((partial(getattr, builtins, key, _MISSING), obj))
    # each chain's root is one of the reads, checked above: look down from it
    outside += [(partial(get, root), obj) for root, get, obj in entry.attributes]
    return Watch(entry, own, outside, generation)


def watchable(func: Callable) -> bool:
    """Whether ``compile`` compiles ``func`` itself: a plain function, not checkpointed or lifted."""
    return inspect.isfunction(func) and compiled_as(func) is func and lifted_from(func) is None


class Adjoints:
    """``compile(func, wrt, mode)`` of a reverse mode for one function, given at each call: the entry
    last returned for the lazy and for the eager mode, while its watch holds. It holds no reference to
    the function (``vjp`` keeps one per function, weakly)."""

    __slots__ = ("wrt", "_watches")

    def __init__(self, func: Callable, wrt: tuple[int, ...]):
        self.wrt = wrt
        self._watches: list[Watch | None] | None = [None, None] if watchable(func) else None

    def get(self, func: Callable, eager: bool) -> Compiled:
        """The adjoint ``compile(func, wrt, EAGER if eager else REVERSE)`` returns now."""
        watches = self._watches
        mode = EAGER if eager else REVERSE
        if watches is None:
            return compile(func, self.wrt, mode)
        seen = watches[eager]
        if seen is not None and seen.current(func):
            return seen.entry
        generation = cache.generation  # before compiling: a clear meanwhile leaves the watch stale, not wrong
        entry = compile(func, self.wrt, mode)
        watches[eager] = watch(func, entry, generation)
        return entry
