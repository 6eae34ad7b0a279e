"""Optimizer: small passes over the generated adjoint, run to a fixpoint.

The reverse pass emits a simple, regular adjoint (every adjoint initialized
and reset, every value an operation reads saved on the tape); these passes
remove what that regularity wastes. Each pass is a module with one
``run(adjoint, pullback, context) -> bool`` that says whether it changed
anything. ``compile(..., optimize=False)`` skips them, to show the raw form.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gast

from ..ir.build import is_comment
from ..transforms.accumulation import Accumulation
from . import constfold, deadcode, owned, propagate, stacks, tape, unthunks, zeros

PASSES = (constfold, zeros, unthunks, propagate, deadcode, tape, stacks)


@dataclass
class Context:
    """What the passes need to know about the generated module.

    ``accumulation`` recognizes the accumulation statements the reverse pass
    emitted; ``tape`` is the tape's name (None once removed); ``part`` and
    ``drop_last`` name the container helpers; ``pure_calls`` are calls with
    no effect, which dead-code elimination may drop; ``write_aliases`` the
    names that may share memory with an array written in place (a restoring
    write into one is dead once none of them is read again); ``runtime`` the
    names of the runtime helpers and ``vjps`` the vjp functions under their
    names in the module (for owned.py, which runs once, after the fixpoint).
    """

    accumulation: Accumulation
    tape: str | None
    part: str = "part"
    drop_last: str = "drop_last"
    pure_calls: set[str] = field(default_factory=set)
    write_aliases: set[str] = field(default_factory=set)
    runtime: dict[str, str] = field(default_factory=dict)
    vjps: dict[str, Callable] = field(default_factory=dict)


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
    owned.run(adjoint, pullback, context)
    _drop_orphan_comments(adjoint)
    return adjoint


def _drop_orphan_comments(node: gast.AST) -> None:
    """Remove line comments whose block lost every statement after them.

    A comment heads the statements of one original line; when the passes
    remove all of those, the comment would stand alone (and a block holding
    only a comment is not valid Python).
    """
    for part in ("body", "orelse"):
        block = getattr(node, part, None)
        if not isinstance(block, list):
            continue
        for stmt in block:
            _drop_orphan_comments(stmt)
        kept = []
        for i, stmt in enumerate(block):
            if is_comment(stmt) and all(is_comment(s) or isinstance(s, gast.Pass) for s in block[i + 1:]):
                continue
            kept.append(stmt)
        if len(kept) != len(block):
            block[:] = kept or [gast.Pass()]
