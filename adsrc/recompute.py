"""Derivatives that recompute instead of storing: the checkpointed loop, and the check they share.

``runtime.adjoint_of(checkpoint_loop, wrt, eager)`` returns a
:class:`LoopAdjoint`, ``runtime.jvp_of(checkpoint_loop, wrt)`` a
:class:`LoopJvp`; generated code calls them like any callee's derivative.
(The derivative of a checkpointed function, ``runtime.RecomputingDerivative``,
is a ``CalleeDerivative`` and lives beside it.)

The adjoint of ``checkpoint_loop(step, state, n, constants, every)``:

* forward sweep: the plain loop, keeping the state at the start of every
  segment of ``k`` steps (``k = every``, or ``ceil(sqrt(n))``): ``ceil(n / k)``
  states, and no tape;
* backward sweep, segment by segment from the last: run ``step``'s adjoint
  from the segment's stored state (``k`` tapes, one segment's worth), check
  that it ends where the forward sweep went on from (the next stored state, or
  the result), then call the ``k`` pullbacks in reverse.

Memory: ``ceil(n / k)`` states plus one segment's ``k`` step tapes; time: one
plain run of the loop more than the plain adjoint. This module is in the
runtime layer: ``runtime.py`` imports it, and it compiles through the
backend.
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

import numpy as np

from .backend.pipeline import EAGER, FORWARD, Mode, compile
from .errors import InvalidArgument, RefusedWhenRun
from .rules.checkpoint import check_loop, segment_length, unwrap
from .values import TangentTuple, accumulate, add_tangents, as_tangent, is_zero, part, unthunk, zero

__all__ = ["LoopAdjoint", "LoopJvp", "same_value", "refuse_changed", "stored_loop_adjoint"]

# The positions of checkpoint_loop(step, state, n, constants, every) that can carry a gradient.
STATE, CONSTANTS = 1, 3
_NAMES = ("step", "state", "n", "constants", "every")


def same_value(a: Any, b: Any) -> bool:
    """Whether two results are the same value: equal arrays (NaN equal to NaN) of one dtype and shape,
    equal numbers, containers of such, item by item."""
    if isinstance(a, (tuple, list)) or isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same_value(x, y) for x, y in zip(a, b))
    if isinstance(a, dict) or isinstance(b, dict):
        return type(a) is type(b) and a.keys() == b.keys() and all(same_value(a[k], b[k]) for k in a)
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        if not (isinstance(a, np.ndarray) and isinstance(b, np.ndarray)) or a.dtype != b.dtype:
            return False
        try:
            return bool(np.array_equal(a, b, equal_nan=a.dtype.kind in "fc"))
        except TypeError:
            return bool(np.array_equal(a, b))
    if type(a) is not type(b):
        return False
    return a is b or a == b or (a != a and b != b)


def refuse_changed(func: Callable, what: str) -> RefusedWhenRun:
    """The error for a recomputation that did not give the value the forward sweep computed."""
    code = unwrap(func).__code__
    return RefusedWhenRun(
        f"checkpointing {what}, which gave another value when the backward sweep ran it again "
        f"(it reads random numbers, a global or an object that changed in between, or the time)",
        f"{code.co_filename}:{code.co_firstlineno}",
        "recomputing it would give a wrong gradient; remove the checkpoint, or make it a function of its "
        "arguments alone (pass a random generator's draws in as arguments)")


def _step_extras(step: Callable, count: int) -> tuple:
    """The defaults of the step's parameters after ``state, *constants`` (its adjoint takes every
    parameter positionally); refuses a step that cannot be called as ``step(state, *constants)`` with
    positional parameters alone."""
    func = unwrap(step)
    if not inspect.isfunction(func):
        raise InvalidArgument(f"checkpoint_loop: to differentiate the loop, step must be a Python function "
                              f"(def or lambda) whose source adsrc can read, not a {type(step).__name__}")
    params = list(inspect.signature(func, follow_wrapped=False).parameters.values())
    label = func.__qualname__
    for p in params:
        if p.kind not in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD):
            raise InvalidArgument(f"checkpoint_loop: the step {label} has a {p.kind.description} parameter "
                                  f"({p.name}); give it one positional parameter for the state and one for each "
                                  f"constant")
    if len(params) < 1 + count:
        raise InvalidArgument(f"checkpoint_loop: the step {label} takes {len(params)} arguments, but it is "
                              f"called with the state and {count} constants")
    extras = params[1 + count:]
    missing = [p.name for p in extras if p.default is p.empty]
    if missing:
        raise InvalidArgument(f"checkpoint_loop: the step {label} needs {', '.join(missing)}: pass "
                              f"{'it' if len(missing) == 1 else 'them'} in constants")
    return tuple(p.default for p in extras)


def _floating(value: Any) -> bool:
    """A constant that can carry a gradient: a float, a float array, or a container (its leaves decide)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, tuple, list, dict)):
        return True
    dtype = getattr(value, "dtype", None)
    return dtype is not None and dtype.kind == "f"


def _refuse_positions(wrt: tuple[int, ...], what: str) -> None:
    extra = [_NAMES[i] if i < len(_NAMES) else str(i) for i in wrt if i not in (STATE, CONSTANTS)]
    if extra:
        raise InvalidArgument(f"checkpoint_loop: {what} with respect to {', '.join(extra)}: only the state and "
                              f"the constants carry a gradient (step, n and every must not depend on the "
                              f"differentiated inputs)")


class LoopAdjoint:
    """``adjoint_of(checkpoint_loop, wrt, eager)``: ``(value, pullback)`` of the checkpointed loop."""

    __slots__ = ("wrt", "mode")

    def __init__(self, wrt: tuple[int, ...], mode: Mode):
        _refuse_positions(wrt, "differentiating")
        self.wrt, self.mode = wrt, mode

    def __call__(self, step: Callable, state: Any, n: int, constants: tuple | None = None,
                 every: int | None = None) -> tuple[Any, Callable[[Any], tuple]]:
        n, constants, every = check_loop(step, n, constants, every)
        extras = _step_extras(step, len(constants))
        # The step's arguments that get a gradient: the state, and the constants that can carry one.
        differentiated = [j for j, c in enumerate(constants) if _floating(c)] if CONSTANTS in self.wrt else []
        step_wrt = (0,) + tuple(1 + j for j in differentiated)
        adjoint = compile(step, step_wrt, self.mode).function  # a problem in step is reported before the loop runs
        k = segment_length(n, every)
        stored = []
        for i in range(n):
            if i % k == 0:
                stored.append(state)
            state = step(state, *constants)
        value = state
        lazy = not self.mode.eager

        def pullback(g: Any) -> tuple:
            d_state, d_constants = g, [zero] * len(constants)
            if not is_zero(g):
                end = value
                for s in reversed(range(len(stored))):
                    x, pullbacks = stored[s], []
                    for _ in range(min(k, n - s * k)):
                        x, back = adjoint(x, *constants, *extras)
                        pullbacks.append(back)
                    if not same_value(x, end):
                        raise refuse_changed(step, f"the loop's step {unwrap(step).__qualname__}")
                    end = stored[s]
                    for back in reversed(pullbacks):
                        grads = back(unthunk(d_state))
                        d_state = grads[0]
                        for j, c in zip(differentiated, grads[1:]):
                            d_constants[j] = accumulate(d_constants[j], c) if lazy else \
                                add_tangents(d_constants[j], unthunk(c))
                    # Nothing pending may keep this segment's values alive past it.
                    d_constants = [unthunk(d) for d in d_constants]
            out = {STATE: d_state, CONSTANTS: TangentTuple(d_constants)}
            return tuple(out[i] for i in self.wrt)

        return value, pullback

    def __repr__(self) -> str:
        return f"adjoint_of(checkpoint_loop, wrt={self.wrt}, eager={self.mode.eager})"


class LoopJvp:
    """``jvp_of(checkpoint_loop, wrt)``: the loop run with the step's JVP (forward mode stores nothing)."""

    __slots__ = ("wrt",)

    def __init__(self, wrt: tuple[int, ...]):
        _refuse_positions(wrt, "forward mode")
        self.wrt = wrt

    def __call__(self, step: Callable, state: Any, n: int, constants: tuple | None, every: int | None,
                 *tangents: Any) -> tuple[Any, Any]:
        n, constants, every = check_loop(step, n, constants, every)
        extras = _step_extras(step, len(constants))
        given = dict(zip(self.wrt, tangents))
        d_state, d_constants = given.get(STATE, zero), given.get(CONSTANTS, zero)
        step_wrt = tuple(range(1 + len(constants)))
        jvp = compile(step, step_wrt, FORWARD).function
        tangents_of_constants = [part(d_constants, j) for j in range(len(constants))]
        for _ in range(n):
            state, d_state = jvp(state, *constants, *extras, d_state, *tangents_of_constants)
        return state, d_state

    def __repr__(self) -> str:
        return f"jvp_of(checkpoint_loop, wrt={self.wrt})"


def stored_loop_adjoint(wrt: tuple[int, ...], step: Callable, state: Any, n: int, constants: tuple | None = None,
                        every: int | None = None) -> tuple[Any, Callable[[Any], tuple]]:
    """The loop's adjoint without checkpoints (every step's pullback kept), eager: what second order
    differentiates in place of :class:`LoopAdjoint` (it transforms this function's source), since its
    inner level keeps every value anyway."""
    n, constants, every = check_loop(step, n, constants, every)
    extras = _step_extras(step, len(constants))
    differentiated = [j for j, c in enumerate(constants) if _floating(c)] if CONSTANTS in wrt else []
    adjoint = compile(step, (0,) + tuple(1 + j for j in differentiated), EAGER).function
    pullbacks = []
    for _ in range(n):
        state, back = adjoint(state, *constants, *extras)
        pullbacks.append(back)

    def pullback(g: Any) -> tuple:
        d_state = g
        d_constants = [zero] * len(constants)
        for back in reversed(pullbacks):
            grads = back(d_state)
            d_state = grads[0]
            for k in range(len(differentiated)):
                j = differentiated[k]
                d_constants[j] = add_tangents(d_constants[j], grads[1 + k])
        out = {STATE: d_state, CONSTANTS: as_tangent(tuple(d_constants))}
        return tuple(out[i] for i in wrt)

    return state, pullback
