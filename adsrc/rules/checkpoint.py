"""Checkpointing: calls whose adjoint recomputes instead of storing.

Two callables are differentiated this way:

* a :class:`Checkpointed` function (what ``adsrc.checkpoint(f)`` returns):
  called normally it is ``f``; called from a differentiated function, the
  forward sweep runs plain ``f`` and keeps only its arguments, and the
  backward sweep runs ``f``'s adjoint again, then its pullback;
* :func:`checkpoint_loop` (``state = step(state, *constants)``, ``n`` times):
  the forward sweep keeps one state every ``every`` steps, and the backward
  sweep recomputes each segment from its stored state with the step's adjoint.

This module only says what they are, so that the front end (layer 4) can
recognize them: a call of either is differentiated like a call of a user
function (``Prim("call")``), linked at run time through
``runtime.adjoint_of`` / ``jvp_of``, which build their derivatives
(``runtime.RecomputingDerivative``, ``recompute.py``).
"""
from __future__ import annotations

import functools
import inspect
import math
import numbers
from typing import Any, Callable

from ..errors import InvalidArgument

__all__ = ["Checkpointed", "checkpoint_loop", "recomputes", "compiled_as", "compiled_with", "unwrap", "segment_length"]


class Checkpointed:
    """A function whose adjoint recomputes it: ``adsrc.checkpoint(f)``.

    Calling it calls ``f`` with the same arguments. It has ``f``'s name,
    docstring and signature; ``__wrapped__`` is ``f``.
    """

    def __init__(self, func: Callable[..., Any]):
        if isinstance(func, Checkpointed):
            func = func.__wrapped__
        if not inspect.isfunction(func):
            raise InvalidArgument(f"adsrc.checkpoint takes a Python function (def or lambda), not a "
                                  f"{type(func).__name__}")
        functools.update_wrapper(self, func)
        self.__signature__ = inspect.signature(func, follow_wrapped=False)
        # The adjoint receives *args as one tuple, the last positional value.
        self.packs_varargs = bool(func.__code__.co_flags & inspect.CO_VARARGS)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    def call_positional(self, args: tuple) -> Any:
        """Call ``f`` with arguments in the adjoint's convention: in parameter order, ``*args`` as one tuple."""
        if self.packs_varargs:
            return self.__wrapped__(*args[:-1], *args[-1])
        return self.__wrapped__(*args)

    def __repr__(self) -> str:
        return f"adsrc.checkpoint({self.__wrapped__.__qualname__})"


def segment_length(n: int, every: int | None) -> int:
    """Steps per stored state: ``every``, or ``ceil(sqrt(n))`` (at least 1)."""
    if every is None:
        return max(1, math.isqrt(max(n - 1, 0)) + 1) if n > 1 else 1
    return every


def check_loop(step: Any, n: Any, constants: Any, every: Any) -> tuple:
    """The arguments of :func:`checkpoint_loop`, checked; ``constants`` as a tuple."""
    if not callable(step):
        raise InvalidArgument(f"checkpoint_loop: step must be a function, not a {type(step).__name__}")
    if isinstance(n, bool) or not isinstance(n, numbers.Integral) or n < 0:
        raise InvalidArgument(f"checkpoint_loop: n must be a non-negative integer, not {n!r}")
    if constants is None:
        constants = ()
    if not isinstance(constants, tuple):
        raise InvalidArgument(f"checkpoint_loop: constants must be a tuple (the step's extra arguments), "
                              f"not a {type(constants).__name__}; for one constant a, write (a,)")
    if every is not None and (isinstance(every, bool) or not isinstance(every, numbers.Integral) or every < 1):
        raise InvalidArgument(f"checkpoint_loop: every must be None or a positive integer, not {every!r}")
    return int(n), constants, every


def checkpoint_loop(step: Callable[..., Any], state: Any, n: int, constants: tuple | None = None,
                    every: int | None = None) -> Any:
    """Run ``state = step(state, *constants)`` ``n`` times and return the last state.

    Called normally, it is that loop. Called from a differentiated function,
    its adjoint stores the state once every ``every`` steps (by default
    ``ceil(sqrt(n))``) instead of every step's tape, and the backward sweep
    recomputes each segment from its stored state with ``step``'s adjoint:
    about ``n / every + every`` states in memory instead of ``n`` tapes, for
    one more run of the loop. Gradients flow to ``state`` and to
    ``constants`` (a tuple of the step's other arguments).

    >>> import numpy as np, adsrc
    >>> def step(u, a):
    ...     return u + a * (np.roll(u, 1) - 2 * u + np.roll(u, -1))
    >>> def energy(u0, a):
    ...     return np.sum(adsrc.checkpoint_loop(step, u0, 100, (a,)) ** 2)
    >>> g = adsrc.grad(energy)(np.linspace(0.0, 1.0, 8), 0.1)
    """
    n, constants, every = check_loop(step, n, constants, every)
    for _ in range(n):
        state = step(state, *constants)
    return state


def recomputes(obj: Any) -> bool:
    """Whether a call of ``obj`` is differentiated by recomputation (checkpointed)."""
    return isinstance(obj, Checkpointed) or obj is checkpoint_loop


def unwrap(func: Any) -> Any:
    """The function a checkpointed function wraps; anything else unchanged."""
    return func.__wrapped__ if isinstance(func, Checkpointed) else func


def differentiated_loop(step: Callable[..., Any], state: Any, n: int, constants: tuple | None = None,
                        every: int | None = None) -> Any:
    """What ``grad(checkpoint_loop)`` and the like compile: a caller of the loop, whose adjoint links to
    the loop's (``checkpoint_loop``'s own source, a plain loop over a function value, is not differentiated)."""
    return checkpoint_loop(step, state, n, constants, every)


def compiled_as(func: Any) -> Any:
    """The function the pipeline compiles for ``func``: a checkpointed function's own (recomputing is
    its callers' choice); for checkpoint_loop, :func:`differentiated_loop`."""
    return differentiated_loop if func is checkpoint_loop else unwrap(func)


def compiled_with(callee: Any) -> Any:
    """The function whose derivative a caller compiles along with its own (to report its errors
    before anything runs): a checkpointed function's own; None for checkpoint_loop, whose step is
    a value known only when it runs (its adjoint is compiled before the loop starts)."""
    if callee is checkpoint_loop:
        return None
    return unwrap(callee)
