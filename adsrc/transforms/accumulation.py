"""The accumulation statement: how an adjoint adds a contribution to a gradient, written and read here.

The reverse pass emits, per contribution to a variable's gradient ``dW``:

* lazily, ``dW = accumulate(dW, Thunk(matmul_da, dt, t, W, x), 'file.py:12')``:
  the contribution is a deferred call of the rule's vjp, collected with the
  others into one flat AccThunk (adsrc/values/thunks.py);
* eagerly, ``dW = dW + matmul_da(dt, t, W, x)``;
* for a contribution that is already a value (a callee's pullback result,
  a part of a container cotangent), ``dW = accumulate(dW, c)`` or ``dW = dW + c``;

and ``dW = unthunk(dW)`` where a gradient must be a value before it is read.
In a loop of the backward sweep that only adds to ``dW``, the optimizer
(adsrc/optimize/stacks.py) collects each deferred contribution on a Stack
(adsrc/values/stacks.py) instead: ``dW_stack = Stack(matmul_da, 'file.py:12')``
before the loop, ``dW_stack.add(dt, t, W, x)`` in it, and
``dW = accumulate(dW, dW_stack.total())`` after it.
The optimizer (adsrc/optimize) recognizes exactly these forms through the same
:class:`Accumulation` object, so a change to what is emitted cannot silently
stop the optimizer from matching it.
"""
from __future__ import annotations

import gast

from ..ir.build import assign, call, const, name


class Accumulation:
    """The accumulation forms of one generated module, under the names its runtime imports got there."""

    def __init__(self, runtime: dict[str, str], eager: bool):
        self.eager = eager
        self.accumulate_name = runtime["accumulate"]
        self.thunk_name = runtime["Thunk"]
        self.unthunk_name = runtime["unthunk"]
        self.zero_name = runtime["zero"]
        self.stack_name = runtime["Stack"]

    # ---- emitting -----------------------------------------------------------------
    def add(self, gradient: str, contribution: gast.expr, origin: str | None = None) -> gast.Assign:
        """``gradient += contribution``, lazily or eagerly; a deferred contribution carries its ``origin``
        (the original ``file:line``), named when it fails to materialize."""
        if self.eager:
            return assign(gradient, gast.BinOp(left=name(gradient), op=gast.Add(), right=contribution))
        value = call(self.accumulate_name, name(gradient), contribution)
        if self.is_deferred(contribution) and origin is not None:
            value.args.append(const(origin))
        return assign(gradient, value)

    def deferred(self, vjp: str, args: list[gast.expr], keywords: list[gast.keyword]) -> gast.Call:
        """``Thunk(vjp, *args, **keywords)``: a contribution computed when the gradient materializes."""
        return gast.Call(func=name(self.thunk_name), args=[name(vjp)] + args, keywords=keywords)

    def materialized(self, value: gast.expr) -> gast.Call:
        """``unthunk(value)``."""
        return call(self.unthunk_name, value)

    def reset(self, gradient: str) -> gast.Assign:
        """``gradient = zero``."""
        return assign(gradient, name(self.zero_name))

    def stack(self, stack: str, vjp: str, origin: gast.expr | None) -> gast.Assign:
        """``stack = Stack(vjp, origin)``: where a loop's deferred contributions of ``vjp`` collect."""
        return assign(stack, call(self.stack_name, name(vjp), *([origin] if origin is not None else [])))

    @staticmethod
    def stacked(stack: str, deferred: gast.Call) -> gast.Expr:
        """``stack.add(*args)`` for the contribution ``Thunk(vjp, *args)``."""
        return gast.Expr(value=gast.Call(func=gast.Attribute(value=name(stack), attr="add", ctx=gast.Load()),
                                         args=deferred.args[1:], keywords=deferred.keywords))

    def stack_total(self, gradient: str, stack: str) -> gast.Assign:
        """``gradient = accumulate(gradient, stack.total())``."""
        total = gast.Call(func=gast.Attribute(value=name(stack), attr="total", ctx=gast.Load()), args=[], keywords=[])
        return self.add(gradient, total)

    # ---- recognizing --------------------------------------------------------------
    def added(self, value: gast.expr) -> list[gast.expr] | None:
        """``[total, contribution]`` if ``value`` is an accumulation (either form), else None."""
        if self.is_call(value, self.accumulate_name) and len(value.args) >= 2:
            return value.args[:2]
        if isinstance(value, gast.BinOp) and isinstance(value.op, gast.Add):
            return [value.left, value.right]
        return None

    def deferred_add(self, stmt: gast.stmt) -> tuple[str, gast.Call, gast.expr | None] | None:
        """``(gradient, Thunk(...), origin)`` if ``stmt`` is ``d = accumulate(d, Thunk(...)[, origin])``."""
        if not (isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Name)
                and self.is_lazy_add(stmt.value)):
            return None
        args = stmt.value.args
        gradient = stmt.targets[0].id
        if len(args) < 2 or not (isinstance(args[0], gast.Name) and args[0].id == gradient) \
                or not self.is_deferred(args[1]) or not isinstance(args[1].args[0], gast.Name):
            return None
        return gradient, args[1], args[2] if len(args) > 2 else None

    def is_lazy_add(self, value: gast.expr) -> bool:
        return self.is_call(value, self.accumulate_name)

    def is_deferred(self, node: gast.AST) -> bool:
        return self.is_call(node, self.thunk_name)

    def is_materialization(self, node: gast.AST) -> bool:
        return self.is_call(node, self.unthunk_name)

    def is_zero(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Name) and node.id == self.zero_name

    @staticmethod
    def is_call(node: gast.AST, func: str) -> bool:
        return isinstance(node, gast.Call) and isinstance(node.func, gast.Name) and node.func.id == func
