"""Derivatives of any order: forward mode applied to the forward mode below it, one level at a time.

``along(fn, args, directions)`` differentiates ``fn(*args)`` once along each
direction in turn (a tuple of tangents of ``args``, innermost first). Level 1
is :func:`dispatch.call_at` with the first direction, as in a second
derivative. Level k differentiates level k-1 along the next direction: the
call it makes is ``call_at(k - 1, ...)`` itself, a Python function that the
level-k dispatcher transforms from its source like any other, and so the
code generated at level k-1 and the rules it calls. No interpreter of its
own: one transformer applied to its own output.

The directions are constants, so at each level only the arguments' own
tangents are not zero. The result at level k is a pair (the level below's
result, its tangent), nested k deep: :func:`pick` reads the derivative along
any subset of the directions from it, ``fn(*args)`` itself (none of them) to
the k-th mixed derivative (all of them).

>>> def f(x):
...     return x ** 4
>>> result = along(f, (2.0,), [(1.0,), (1.0,), (1.0,)])
>>> [float(pick(result, mask)) for mask in [(False,) * 3, (True, False, False), (True,) * 3]]
[16.0, 32.0, 48.0]
"""
from __future__ import annotations

from typing import Any, Callable, Sequence

from ..values import zero
from .dispatch import call_at, ownership


def along(fn: Callable, args: tuple, directions: Sequence[tuple]) -> Any:
    """``fn(*args)`` differentiated along each direction in turn, as nested pairs; at least one direction."""
    if not directions:
        raise ValueError("along: at least one direction")
    calls: tuple = (fn, tuple(directions[0]), *args)  # level 1 runs call_at(1, fn, tangents, {}, *args)
    for level, direction in enumerate(directions[1:], start=2):  # level k runs call_at(k, call_at, ...)
        calls = (call_at, _lifted(direction, level - 1), level - 1, calls[0], calls[1], {}, *calls[2:])
    with ownership():
        return call_at(len(directions), calls[0], calls[1], {}, *calls[2:])


def pick(result: Any, mask: Sequence[bool]) -> Any:
    """From what :func:`along` returned, the derivative along the directions ``mask`` selects (innermost
    first); ``zero`` where no tangent reached it."""
    for chosen in reversed(mask):
        if result is zero:
            return zero
        result = result[1] if chosen else result[0]
    return result


def _lifted(direction: tuple, depth: int) -> tuple:
    """The tangents, at the next level, of the arguments of a call ``depth`` levels of ``call_at`` deep: those
    of the innermost call's arguments are ``direction``; the level, function, tangents and keywords are
    constants."""
    if depth == 0:
        return tuple(direction)
    return (zero, zero, zero, zero, *_lifted(direction, depth - 1))
