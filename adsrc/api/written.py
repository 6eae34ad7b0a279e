"""A call of a function that writes into arrays it was given, run with the effect Python's call has.

``x[0] = x[0] * x[1]`` or ``vx -= dt * g`` on a parameter changes the
caller's array. The derivative (compiled with the writes in place, taping
what they overwrite) runs on a private copy of each such array, taken when
the call begins; after the forward sweep the copy holds exactly what the
caller's array holds after the plain call, and that is written into the
caller's array. The backward sweep then restores the copy, never the
caller's array, and the gradient is with respect to the values at entry,
as central differences of the plain function (on a fresh copy each time)
give. A pullback called again re-runs the forward sweep from the values at
entry, and writes nothing more into the caller's array.

Refused before anything runs: an argument for a written parameter that is
not a NumPy array (for ``x op= e`` only, a number is rebound as Python
does), a read-only one, and one that shares memory with another argument
(or something an argument holds) or with an array the function reads as a
global or closure value: Python would show the writes through that other
name, which the derivative does not follow. Any other call of such a
derivative is refused (rules/given.py).
"""
from __future__ import annotations

from typing import Any, Callable, Iterator, Sequence

import numpy as np

from ..backend.pipeline import Compiled
from ..errors import RefusedWhenRun
from ..rules.given import PREPARED, REPEATED


class PreparedCall:
    """The calls of one derivative for one set of arguments (``values``, in signature order) that writes
    into some of them; see the module's docstring.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     x[0] = x[0] * x[1]
    ...     return np.sum(x ** 2)
    >>> x = np.array([2.0, 3.0])
    >>> adsrc.grad(f)(x).tolist(), x.tolist()
    ([36.0, 30.0], [6.0, 3.0])
    """

    def __init__(self, compiled: Compiled, values: Sequence[Any]):
        self.given = list(values)
        self.positions: list[int] = []
        if REPEATED.get():
            param, (_, _, where) = next(iter(compiled.written.items()))
            raise RefusedWhenRun(f"{REPEATED.get()} of a function that writes into the array {param} was given",
                                 where, f"{REPEATED.get()} calls the function more than once, so Python's writes "
                                 f"would add up: copy the array in the function ({param} = {param}.copy())")
        for param, (kind, returned, where) in compiled.written.items():
            i = compiled.params.index(param)
            if i >= len(self.given):
                continue
            value = self.given[i]
            if not isinstance(value, np.ndarray):
                if kind == "update":
                    continue  # x op= e on a number rebinds x, as Python does
                raise RefusedWhenRun(f"writing into {param}, given a {type(value).__name__}", where,
                                     "adsrc writes into an argument only where it is a NumPy array; pass one, "
                                     f"or copy it in the function ({param} = np.array({param}))")
            if type(value) is not np.ndarray or not value.flags.writeable:
                what = "a read-only array" if type(value) is np.ndarray else f"a {type(value).__name__}"
                raise RefusedWhenRun(f"writing into {param}, given {what}", where,
                                     f"pass a writeable NumPy array, or copy it in the function ({param} = "
                                     f"np.array({param}))")
            if returned:
                raise RefusedWhenRun(f"updating the array {param} was given in place and returning it", where,
                                     f"Python gives back the caller's own array, which adsrc does not: return a copy "
                                     f"({param}.copy()), or write {param} = {param} op ... to make a new array")
            self.positions.append(i)
        for i in self.positions:
            param = compiled.params[i]
            others = [v for k, v in enumerate(self.given) if k != i] + [obj for _, obj in compiled.reads]
            for other in _arrays(others):
                if np.may_share_memory(self.given[i], other):
                    raise RefusedWhenRun(
                        f"writing into the array {param} was given, which shares memory with another argument "
                        f"(or what one holds) or with an array the function reads from outside",
                        compiled.written[param][2], f"Python would show the writes through that other name, "
                        f"which adsrc does not follow: pass {param} a copy ({param}.copy()), or copy it in "
                        f"the function")
        self.entry = {i: self.given[i].copy(order="K") for i in self.positions}
        self.done = False

    def arguments(self) -> list[Any]:
        """The arguments of one run: for each written array, a new copy of its values at entry."""
        args = list(self.given)
        for i, value in self.entry.items():
            args[i] = value.copy(order="K")
        return args

    def run(self, function: Callable, *extra: Any) -> Any:
        """``function(*arguments, *extra)``, the derivative's forward sweep; after the first (even one that
        raised), the caller's arrays get what the private copies hold."""
        args = self.arguments()
        token = PREPARED.set(True)
        try:
            return function(*args, *extra)
        finally:  # also where the forward sweep raised: Python's call would have written what it wrote so far
            PREPARED.reset(token)
            if not self.done:
                for i in self.positions:
                    np.copyto(self.given[i], args[i], casting="no")
                self.done = True


def prepared(compiled: Compiled, values: Sequence[Any]) -> PreparedCall | None:
    """The :class:`PreparedCall` for a derivative that writes into arguments, else None."""
    return PreparedCall(compiled, values) if compiled.written else None


def run(compiled: Compiled, call: PreparedCall | None, values: Sequence[Any], *extra: Any) -> Any:
    """``compiled.function(*values, *extra)``, through ``call`` where there is one."""
    if call is None:
        return compiled.function(*values, *extra)
    return call.run(compiled.function, *extra)


def runner(compiled: Compiled, values: Sequence[Any]) -> Callable[..., Any]:
    """What runs ``compiled.function(*values)`` through a :class:`PreparedCall` (the arguments it is
    then given are ``values`` again, which it replaces by the private copies)."""
    call = PreparedCall(compiled, values)
    return lambda *given, **_: call.run(compiled.function, *given[len(values):])


def _arrays(values: list[Any], depth: int = 3) -> Iterator[np.ndarray]:
    """The NumPy arrays among ``values`` and what their lists, tuples, dicts and attributes hold
    (``depth`` levels down)."""
    seen: set[int] = set()
    stack = [(v, 0) for v in values]
    while stack:
        value, level = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, np.ndarray):
            yield value
            continue
        if level >= depth or isinstance(value, (str, bytes, int, float, complex, type)) or callable(value):
            continue
        if isinstance(value, (list, tuple)):
            stack += [(v, level + 1) for v in value]
        elif isinstance(value, dict):
            stack += [(v, level + 1) for v in value.values()]
        elif hasattr(value, "__dict__") and not isinstance(getattr(value, "__name__", None), str):
            stack += [(v, level + 1) for v in vars(value).values()]
