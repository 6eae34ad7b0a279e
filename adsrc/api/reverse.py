"""One function's reverse mode for one ``wrt``: what each call of ``grad``, ``value_and_grad`` or ``vjp``
does around the adjoint it runs.

Before: bind the arguments, refuse what has no gradient, find the compiled
adjoint for the mode (eager or lazy, read at each call) and, where asked, the
one specialized for the arguments' kinds. After: make each gradient shaped,
typed and owned like its argument (``Fresh``). What stays the same from call
to call is worked out once, in a :class:`Reverse` made with the derivative
(``grad(f)``) or, for ``vjp``, kept per function: how to bind a plain call
(``Binding``) and the adjoint last compiled, with a watch of what the compile
cache would check (backend/watch.py). Every check keeps its meaning; only
the work of repeating it is saved.
"""
from __future__ import annotations

import weakref
from types import FunctionType
from typing import Any, Callable, Sequence

from ..backend.pipeline import Compiled
from ..backend.specialized import signature, specialized
from ..backend.watch import Adjoints, watchable
from ..config import config
from ..errors import InvalidArgument
from ..values import part
from .arguments import Binding, Fresh, Wrt, check_differentiable, positions_and_picks


class Reverse:
    """The parts of a reverse-mode call of a function with respect to the positions ``wrt``, the function
    given at each call (a Reverse holds no reference to it, so that ``vjp`` can keep one per function).

    ``many``: the gradients come as a tuple (``wrt`` was a tuple or list). ``picks``: per item of ``wrt``,
    the index into the ``*args`` parameter it counts into, or None (arguments.positions_and_picks); the
    adjoint is then compiled for each parameter once, and the gradients picked from the tuple's.
    """

    __slots__ = ("wrt", "many", "picks", "_asked", "_binding", "_adjoints", "_code")

    def __init__(self, func: Callable, wrt: tuple[int, ...], many: bool, picks: tuple[int | None, ...] = ()):
        self.picks = picks if any(p is not None for p in picks) else ()
        self._asked = wrt  # the parameter of each item of wrt, repeated where several count into *args
        if self.picks:
            wrt = tuple(dict.fromkeys(wrt))
        self.wrt = wrt
        self.many = many
        self._binding = Binding(func)
        self._adjoints = Adjoints(func, wrt)
        self._code = getattr(func, "__code__", None)  # what the positions were found in (for vjp's memo)

    def prepare(self, func: Callable, args: tuple, kwargs: dict, eager: bool | None,
                specialize: bool) -> tuple[Sequence[Any], Compiled]:
        """The arguments in signature order, checked, and the adjoint to run on them: for ``eager`` (None:
        the context's setting), specialized for their kinds if ``specialize`` and ``config.specialize``."""
        values = self._binding(func, args, kwargs)
        if self.picks:  # items of *args: each checked alone, the tuple's other items need not be floats
            picked = [(p, k) for p, k in zip(self._asked, self.picks) if k is not None]
            check_differentiable(func, values, tuple(p for p, k in zip(self._asked, self.picks) if k is None),
                                 picked)
        else:
            check_differentiable(func, values, self.wrt)
        adjoint = self._adjoints.get(func, config.eager_unthunk if eager is None else eager)
        if specialize and config.specialize:  # the adjoint specialized for the arguments' kinds, if any
            adjoint = specialized(adjoint, signature(values)) or adjoint
        return values, adjoint

    def finish(self, grads: Sequence[Any], values: Sequence[Any], *others: Any) -> Any:
        """The gradients the caller gets: each its own array (no two sharing memory, none sharing an
        argument's or one of ``others``', the value or a cotangent), shaped and typed like its argument;
        a tuple if ``many``."""
        fresh = Fresh(values, *others)
        wrt = self.wrt
        if self.picks:
            return self._picked(grads, values, fresh)
        if len(grads) == 1:
            finished = fresh.finish(grads[0], values[wrt[0]])
            return (finished,) if self.many else finished
        return tuple([fresh.finish(g, values[i]) for g, i in zip(grads, wrt)])


    def _picked(self, grads: Sequence[Any], values: Sequence[Any], fresh: Fresh) -> Any:
        """The gradients for items of ``wrt`` that count into ``*args``: items of that tuple's gradient."""
        finished = []
        for position, pick in zip(self._asked, self.picks):
            gradient, value = grads[self.wrt.index(position)], values[position]
            if pick is not None:
                if pick >= len(value):
                    raise InvalidArgument(f"wrt asks for argument {pick + 1} given to *args, and the call gave "
                                          f"{len(value)}")
                gradient, value = part(gradient, pick), value[pick]
            finished.append(fresh.finish(gradient, value))
        return tuple(finished) if self.many else finished[0]


_kept: "weakref.WeakKeyDictionary[Callable, dict[Any, Reverse]]" = weakref.WeakKeyDictionary()


def reverse_of(func: Callable, wrt: Wrt) -> Reverse:
    """``Reverse(func, *positions_and_picks(func, wrt))``, kept per plain function and ``wrt`` (an int, a name or a
    tuple of them) while the function's code is the one its positions were found in: what ``vjp``, made
    anew at each call, runs."""
    kind = type(wrt)
    simple = kind is int or kind is str or kind is tuple and all(type(w) is int or type(w) is str for w in wrt)
    if not simple or type(func) is not FunctionType:
        return Reverse(func, *positions_and_picks(func, wrt))
    kept = _kept.get(func)
    if kept is None:
        if not watchable(func):
            return Reverse(func, *positions_and_picks(func, wrt))
        kept = _kept.setdefault(func, {})
    found = kept.get(wrt)
    if found is None or found._code is not func.__code__:
        found = kept[wrt] = Reverse(func, *positions_and_picks(func, wrt))
    return found
