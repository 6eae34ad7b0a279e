"""Optimizer: small passes over the generated adjoint, run to a fixpoint.

The reverse pass emits a simple, regular adjoint (every adjoint initialized
and reset, every value an operation reads saved on the tape); these passes
remove what that regularity wastes. Each pass is a module with one
``run(adjoint, pullback, context) -> bool`` that says whether it changed
anything. ``compile(..., optimize=False)`` skips them, to show the raw form.
"""
from __future__ import annotations

import copy
from dataclasses import dataclass, field
from typing import Callable

import gast

from ..ir import annotations as anno
from ..ir.build import copy_tree, is_comment
from ..ir.stopwatch import phase
from ..transforms.accumulation import Accumulation
from . import constfold, deadcode, owned, propagate, stacks, tape, unthunks, zeros

PASSES = (constfold, zeros, unthunks, propagate, deadcode, tape)
FINAL_PASSES = PASSES + (stacks,)  # stacks last: a specialization (optimize/specialize.py) first inlines what it can


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


def optimize(adjoint: gast.FunctionDef, context: Context, max_rounds: int = 20, final: bool = True) -> gast.FunctionDef:
    """Run the passes to a fixpoint; ``final=False`` stops before the passes that give loops their
    run-time accumulators (stacks.py, owned.py), which :func:`finish` runs: backend/specialized.py keeps
    the adjoint between the two, to specialize it first."""
    _fixpoint(adjoint, context, PASSES, max_rounds)
    if final:
        finish(adjoint, context, max_rounds)
    return adjoint


def finish(adjoint: gast.FunctionDef, context: Context, max_rounds: int = 20) -> gast.FunctionDef:
    """The last passes: Stacks for loops' deferred contributions, owned buffers for their indexed ones.
    The adjoint comes at the fixpoint of PASSES: they run again only where Stacks changed something."""
    if stacks.run(adjoint, pullback_of(adjoint), context):
        _fixpoint(adjoint, context, FINAL_PASSES, max_rounds)
    owned.run(adjoint, pullback_of(adjoint), context)
    _drop_orphan_comments(adjoint)
    return adjoint


def _fixpoint(adjoint: gast.FunctionDef, context: Context, passes: tuple, max_rounds: int) -> None:
    pullback = pullback_of(adjoint)
    for _ in range(max_rounds):
        changed = False
        for optimization in passes:
            with phase(f"pass {optimization.__name__.rsplit('.', 1)[-1]}"):
                changed |= optimization.run(adjoint, pullback, context)
        if not changed:
            break


_PUSHES_FIELD = "adsrc_" + anno.PUSHES


def copy_adjoint(function: gast.FunctionDef) -> gast.FunctionDef:
    """A deep copy of the syntax tree that shares the annotations' values (a Prim holds its rule),
    except the tape pops' pushes, which are nodes of the tree and must be the copy's own."""
    copies: dict[int, gast.AST] = {}
    copied = copy_tree(function, copies)
    for pop in [node for node in copies.values() if _PUSHES_FIELD in node.__dict__]:
        # each push by its copy in the tree (one no longer in the tree: a copy of its own)
        anno.set(pop, anno.PUSHES, [copies.get(id(p)) or copy.deepcopy(p) for p in anno.get(pop, anno.PUSHES)])
    return copied


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
