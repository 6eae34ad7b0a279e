"""Jumps: every ``break``, ``continue`` and ``return`` last in its block, and one exit.

A mixin of :class:`~adsrc.frontend.desugar.Desugar` (which gives it the
parsed function and the namer). Input: a desugared body whose loops are
lowered. Output: the same body in which

* a ``return`` inside a loop sets a result and a flag and breaks, and the
  loop is followed by ``if returned: break`` (or ``return result`` outside
  any loop): :meth:`JumpLowering.convert_returns`;
* every ``break``, ``continue`` and ``return`` is the last statement of its
  block, and nothing follows a statement that may jump: what followed is
  copied into each branch that falls through
  (:meth:`JumpLowering.normalize_jumps`), so the reverse pass needs only
  branch records and iteration counts;
* the function has either one ``return`` at its end or a ``result``
  variable; a function that may end without a return returns None
  (:meth:`JumpLowering.single_exit`).

The mixin keeps the names of the result variable and of the flag in
``result`` and ``flag``, made on first need (None until then); Desugar.run
sets the flag to False at the top of the body.
"""
from __future__ import annotations

import copy

import gast

from ..ir.build import assign, const, located, name


class JumpLowering:
    """Lowers returns inside loops, and puts every jump last in its block with a single exit."""

    def convert_returns(self, stmts: list[gast.stmt], depth: int) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for stmt in stmts:
            if isinstance(stmt, gast.Return) and depth > 0:
                value = stmt.value if stmt.value is not None else const(None)
                out += located([assign(self._result(), value), assign(self._flag(), const(True)),
                                gast.Break()], stmt)
                continue
            if isinstance(stmt, (gast.For, gast.While)):
                has_return = any(isinstance(n, gast.Return) for n in gast.walk(stmt))
                stmt.body = self.convert_returns(stmt.body, depth + 1)
                out.append(stmt)
                if has_return:
                    jump = gast.Break() if depth > 0 else gast.Return(value=name(self._result()))
                    out.append(gast.copy_location(gast.If(test=name(self._flag()), body=located([jump], stmt), orelse=[]), stmt))
                continue
            if isinstance(stmt, gast.If):
                stmt.body = self.convert_returns(stmt.body, depth)
                stmt.orelse = self.convert_returns(stmt.orelse, depth)
            out.append(stmt)
        return out

    def _result(self) -> str:
        if self.result is None:
            self.result = self.namer.fresh("result")
        return self.result

    def _flag(self) -> str:
        if self.flag is None:
            self.flag = self.namer.fresh("returned")
        return self.flag

    def normalize_jumps(self, stmts: list[gast.stmt]) -> list[gast.stmt]:
        out: list[gast.stmt] = []
        for i, stmt in enumerate(stmts):
            if isinstance(stmt, gast.If):
                stmt.body = self.normalize_jumps(stmt.body)
                stmt.orelse = self.normalize_jumps(stmt.orelse)
            elif isinstance(stmt, (gast.For, gast.While)):
                stmt.body = self.normalize_jumps(stmt.body)
            out.append(stmt)
            if _is_jump(stmt):
                return out
            if isinstance(stmt, gast.If) and _may_jump(stmt):
                rest = self.normalize_jumps(stmts[i + 1:])
                if rest:
                    _append_rest(stmt, rest)
                return out
        return out

    def single_exit(self, body: list[gast.stmt]) -> list[gast.stmt]:
        """One ``return`` at the end; a function that may end without one returns None, as in Python."""
        returns = [n for s in body for n in gast.walk(s) if isinstance(n, gast.Return)]
        if len(returns) == 1 and body and body[-1] is returns[0] and self.result is None:
            if returns[0].value is None:
                returns[0].value = located([const(None)], returns[0])[0]
            return body
        if not returns:
            return body + located([gast.Return(value=const(None))], body[-1] if body else self.parsed.node)
        result = self._result()
        start = located([assign(result, const(None))], body[0]) if _falls_through(body) else []
        body = [_ReturnToResult(result).visit(s) for s in body]
        end = gast.Return(value=name(result))
        return start + body + located([end], body[-1] if body else self.parsed.node)


class _ReturnToResult(gast.NodeTransformer):
    """``return e`` becomes ``result = e``; the function then ends in ``return result``."""

    def __init__(self, result: str):
        self.result = result

    def visit_Return(self, node: gast.Return) -> gast.stmt:
        value = node.value if node.value is not None else const(None)
        if isinstance(value, gast.Name) and value.id == self.result:
            return gast.copy_location(gast.Pass(), node)
        return assign(self.result, value, node)


def _falls_through(block: list[gast.stmt]) -> bool:
    """True if control may reach the end of ``block`` (its last statement is no return or raise)."""
    if not block:
        return True
    last = block[-1]
    if isinstance(last, (gast.Return, gast.Raise)):
        return False
    if isinstance(last, gast.If):
        return _falls_through(last.body) or _falls_through(last.orelse)
    return True


def _is_jump(stmt: gast.stmt) -> bool:
    return isinstance(stmt, (gast.Break, gast.Continue, gast.Return))


def _may_jump(stmt: gast.stmt) -> bool:
    """True if control may leave ``stmt`` by break, continue or return."""
    if _is_jump(stmt):
        return True
    if isinstance(stmt, gast.If):
        return any(_may_jump(s) for s in stmt.body + stmt.orelse)
    if isinstance(stmt, (gast.For, gast.While)):
        return any(isinstance(n, gast.Return) for n in gast.walk(stmt))
    return False


def _append_rest(node: gast.If, rest: list[gast.stmt]) -> None:
    for block in (node.body, node.orelse):
        if block and _is_jump(block[-1]):
            continue
        if block and isinstance(block[-1], gast.If) and _may_jump(block[-1]):
            _append_rest(block[-1], rest)
            continue
        block.extend(copy.deepcopy(rest))

