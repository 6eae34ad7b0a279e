"""Optimizer: small passes over the generated adjoint, run to a fixpoint.

The reverse pass emits a simple, regular adjoint (every adjoint initialized
and reset, every value an operation reads saved on the tape); these passes
remove what that regularity wastes. Each pass is a module with one
``run(adjoint, pullback, context) -> bool`` that says whether it changed
anything. ``compile(..., optimize=False)`` skips them, to show the raw form.
"""
from __future__ import annotations

from dataclasses import dataclass, field

import gast

from . import constfold, deadcode, propagate, tape, unthunks, zeros

PASSES = (constfold, zeros, unthunks, propagate, deadcode, tape)


@dataclass
class Context:
    """What the passes need to know about the generated module's names."""

    zero: str
    accumulate: str
    unthunk: str
    tape: str | None
    thunk: str = "Thunk"
    part: str = "part"
    drop_last: str = "drop_last"
    pure_calls: set[str] = field(default_factory=set)


def pullback_of(adjoint: gast.FunctionDef) -> gast.FunctionDef:
    return next(s for s in adjoint.body if isinstance(s, gast.FunctionDef))


def optimize(adjoint: gast.FunctionDef, context: Context, max_rounds: int = 20) -> gast.FunctionDef:
    pullback = pullback_of(adjoint)
    for _ in range(max_rounds):
        changed = False
        for optimization in PASSES:
            changed |= optimization.run(adjoint, pullback, context)
        if not changed:
            break
    return adjoint
