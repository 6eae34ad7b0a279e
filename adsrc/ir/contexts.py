"""With statements over NumPy's error state and the warnings filters: flattened for the passes, restored for the code.

``with np.errstate(...)`` and ``with warnings.catch_warnings()`` change how
the statements of their body behave (which floating-point errors raise,
which warnings show) and nothing else, so the forward sweep must run those
statements under the same context, and the backward sweep need not. The
passes between desugar and codegen know only assignments, ifs and loops, so

* :func:`lower_with` (desugar) flattens ``with cm as v: body`` into
  ``__adsrc_with__(cm, 'v')``, then the body, then ``__adsrc_end_with__()``,
  in the same block; every pass keeps a call statement where it is (it is an
  effect), and the backward sweep does not replay it;
* :func:`restore_with` (codegen) turns each such pair back into a ``with``
  statement around what the passes made of the body, so the context is
  exited however the body ends (an exception included), as in Python.

A ``return e`` that ends the body becomes ``result = e`` inside and
``return result`` after it (Python leaves the context before returning);
the fence refuses any other jump out of the body.
"""
from __future__ import annotations

from typing import Callable

import gast

from .build import assign, const, located, name

ENTER = "__adsrc_with__"
EXIT = "__adsrc_end_with__"


def lower_with(stmts: list[gast.stmt], fresh: Callable[[str], str]) -> list[gast.stmt]:
    """``stmts`` with every with statement (at any depth) flattened between markers."""
    out: list[gast.stmt] = []
    for stmt in stmts:
        if isinstance(stmt, (gast.If, gast.For, gast.While)):
            stmt.body = lower_with(stmt.body, fresh)
            stmt.orelse = lower_with(stmt.orelse, fresh)
        if not isinstance(stmt, gast.With):
            out.append(stmt)
            continue
        body = lower_with(stmt.body, fresh)
        tail: list[gast.stmt] = []
        if body and isinstance(body[-1], gast.Return):
            returned = body.pop()
            result = fresh("result")
            body.append(assign(result, returned.value if returned.value is not None else const(None), returned))
            tail = located([gast.Return(value=name(result))], returned)
        enters, exits = [], []
        for item in stmt.items:
            var = item.optional_vars.id if isinstance(item.optional_vars, gast.Name) else None
            enters.append(gast.Expr(value=gast.Call(func=name(ENTER), args=[item.context_expr, const(var)],
                                                    keywords=[])))
            exits.append(gast.Expr(value=gast.Call(func=name(EXIT), args=[], keywords=[])))
        out += located(enters, stmt) + body + located(exits, stmt) + tail
    return out


def _marker(stmt: gast.stmt, which: str) -> bool:
    return isinstance(stmt, gast.Expr) and isinstance(stmt.value, gast.Call) \
        and isinstance(stmt.value.func, gast.Name) and stmt.value.func.id == which


def restore_with(stmts: list[gast.stmt]) -> list[gast.stmt]:
    """``stmts`` (and the blocks and functions inside them) with each marker pair a with statement again."""
    out: list[gast.stmt] = []
    stack: list[tuple[gast.Expr, list[gast.stmt]]] = []
    for stmt in stmts:
        for field in ("body", "orelse"):
            if isinstance(stmt, (gast.If, gast.For, gast.While, gast.FunctionDef, gast.With)) \
                    and hasattr(stmt, field):
                setattr(stmt, field, restore_with(getattr(stmt, field)))
        if _marker(stmt, ENTER):
            stack.append((stmt, out))
            out = []
        elif _marker(stmt, EXIT):
            enter, outer = stack.pop()
            context, var = enter.value.args
            target = gast.Name(id=var.value, ctx=gast.Store(), annotation=None, type_comment=None) \
                if var.value else None
            block = gast.With(items=[gast.withitem(context_expr=context, optional_vars=target)],
                              body=out or [gast.Pass()], type_comment=None)
            out = outer
            out.append(gast.copy_location(block, enter))
        else:
            out.append(stmt)
    if stack:
        raise AssertionError("a with statement's markers lost their pair in the generated code")
    return out
