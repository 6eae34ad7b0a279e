"""Reverse: turn an ANF function into its adjoint, a forward sweep plus a pullback.

Input: an ANF FunctionDef (see frontend/anf.py) and its activity. Output: a FunctionDef
``f_adjoint(*params)`` that runs the forward sweep and returns
``(value, pullback)``; ``pullback(d_result)`` runs the backward sweep and
returns the adjoints of the differentiated parameters.

* Each active primitive ``t = op(a, b)`` is kept in the forward sweep and gets,
  in the backward sweep, a block that starts with a comment naming the
  original line, then one accumulation per active operand: lazily,
  ``da = accumulate(da, Thunk(op_da, dt, t, a, b))``; eagerly,
  ``da = da + op_da(dt, t, a, b)``.
* Values the backward sweep needs are read straight from the forward sweep's
  scope (a closure) when they are assigned once outside loops; any other is
  pushed on ``tape`` right after the statement and popped in its block.
* A branch saves its condition, a loop its iteration count; the backward sweep
  replays branches and loops in reverse. ``break`` and ``continue`` need
  nothing more because desugar made them end their blocks.
* A call of a user function calls that function's own adjoint, and the
  pullback it returns is saved like any other value.
* An active variable overwritten by a value that carries no gradient
  (``total = 0.0`` inside a loop, a loop target taken from a constant list)
  has its adjoint reset to zero there, so that what it received after the
  overwrite does not leak into its earlier value.

``Reverse`` holds what the pass knows (adjoint names, the tape, the loops it
is in, the rule vjps and callee adjoints the generated module's header
binds) and puts the whole function together: the seed, the pullback and the
returned pair. Its statements go through two mixins:
``ReverseControlFlow`` (transforms/reverse_control_flow.py: statement
lists, branches, loops, the tape) and ``BackwardBlocks``
(transforms/reverse_blocks.py: the backward block of each active statement).
"""
from __future__ import annotations

from typing import Any

import gast

from ..frontend.activity import Activity
from ..frontend.parse import Parsed
from ..ir import annotations as anno
from ..ir.build import arguments, assign, call, line_comment, name
from ..ir.naming import Namer
from .accumulation import Accumulation
from .reverse_blocks import BackwardBlocks
from .reverse_control_flow import ReverseControlFlow


class Reverse(ReverseControlFlow, BackwardBlocks):
    def __init__(self, parsed: Parsed, namer: Namer, activity: Activity, eager: bool,
                 wrt: list[str], runtime: dict[str, str], locals_: set[str], write_aliases: set[str] = frozenset()):
        self.parsed = parsed
        self.namer = namer
        self.act = activity
        self.eager = eager
        self.wrt = wrt
        self.rt = runtime  # runtime helper -> its name in the generated module
        self.acc = Accumulation(runtime, eager)
        self.locals = locals_
        self.adjoints: dict[str, str] = {}
        self.tape: str | None = None
        self.loop_depth = 0
        self.vjp_names: dict[Any, str] = {}
        self.header: list[str] = []
        self.single_use: set[str] = set()
        self.loop_assigned: list[set[str]] = []
        self.callees: list[tuple[Any, tuple[int, ...]]] = []  # the user functions whose adjoints this one calls
        # Names whose values may share memory with an array written in place (frontend/writes.py).
        self.write_aliases = set(write_aliases)

    # -- names ------------------------------------------------------------
    def adj(self, var: str) -> str:
        if var not in self.adjoints:
            self.adjoints[var] = self.namer.adjoint(var)
        return self.adjoints[var]

    def line_comment(self, node: gast.AST) -> gast.stmt:
        return line_comment(self.parsed, node)

    # -- the whole function -----------------------------------------------
    def function(self, node: gast.FunctionDef, adjoint_name: str) -> gast.FunctionDef:
        self.single_use = anno.get(node, anno.SINGLE_USE, set())
        for stmt in gast.walk(node):  # lists grown in place (grown_in_place): what reads them must not be deferred
            if isinstance(stmt, gast.Assign) and getattr(anno.get(stmt, anno.PRIM, None), "kind", None) == "append":
                self.write_aliases |= {stmt.targets[0].id, anno.get(stmt, anno.PRIM).args[0].id}
        self.write_aliases |= _displays_holding(node, self.write_aliases)
        ret = node.body[-1]
        body_f, body_b = self.block(node.body[:-1])
        result = ret.value
        if isinstance(result, gast.Name) and self.act.active(result.id):
            seed = self.adj(result.id)
        else:
            seed = self.namer.fresh("dresult")
        params = [a.id for a in node.args.args]
        outputs = [self.adj(p) if self.act.active(p) else None for p in self.wrt]
        inits = [assign(d, name(self.rt["zero"])) for var, d in self.adjoints.items() if d != seed]
        returned = gast.Tuple(elts=[name(o) if o else name(self.rt["zero"]) for o in outputs], ctx=gast.Load())
        pullback_name = self.namer.fresh("pullback")
        pullback = gast.FunctionDef(
            name=pullback_name,
            args=arguments([seed]),
            body=inits + body_b + [gast.Return(value=returned)],
            decorator_list=[], returns=None, type_comment=None, type_params=[],
        )
        tape_init = [assign(self.tape, gast.List(elts=[], ctx=gast.Load()))] if self.tape else []
        if isinstance(result, gast.Name) and result.id in self.write_aliases:
            result = call(self.rt["detached"], result)  # the pullback restores the array it may share
        final = gast.Return(value=gast.Tuple(elts=[result, name(pullback_name)], ctx=gast.Load()))
        return gast.FunctionDef(
            name=adjoint_name, args=arguments(params),
            body=tape_init + body_f + [pullback, final],
            decorator_list=[], returns=None, type_comment=None, type_params=[],
        )


def _displays_holding(node: gast.FunctionDef, aliases: set[str]) -> set[str]:
    """The names assigned a tuple display that holds one of ``aliases`` (``t = (parts, start)`` before
    ``return t``): returned, they are detached too, item by item."""
    found: set[str] = set()
    for stmt in gast.walk(node):
        if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name) \
                and isinstance(stmt.value, gast.Tuple) \
                and any(isinstance(e, gast.Name) and e.id in aliases | found for e in stmt.value.elts):
            found.add(stmt.targets[0].id)
    return found
