"""``functools.reduce(f, xs[, initial])`` as the loop it runs, where ``f`` is Python code adsrc differentiates.

Python's reduce binds ``value = initial`` and then, for each item of ``xs``
in turn, ``value = f(value, item)``; without ``initial``, ``value`` is the
first item and the loop runs over the others (``xs`` taken as a list once,
and Python's TypeError where it is empty). Where ``f`` is a lambda with two plain
parameters, a function defined in the differentiated function, or a
user function with Python source and no gradient rule, that loop is written
out before the statement that made the call: a lambda's body, its
parameters renamed to the loop's fresh names (the body reads the enclosing
names when each item is folded, as the lambda's own scope would), or a call
of ``f`` for the others, which adsrc inlines or differentiates as any call.
A reduce over a NumPy function (``np.add``) keeps its gradient rule
(rules/spellings.py).
"""
from __future__ import annotations

import copy
import functools
import types

import gast

from ..ir.build import assign, call, const, located, name, store
from ..ir.naming import Rename
from ..rules import registry
from .parse import _MISSING, Parsed


def _resolved(parsed: Parsed, node: gast.AST):
    """The object a name or dotted name (``functools.reduce``) refers to outside the function, else _MISSING."""
    if isinstance(node, gast.Name):
        return parsed.resolve(node.id)
    if isinstance(node, gast.Attribute):
        base = _resolved(parsed, node.value)
        return _MISSING if base is _MISSING else getattr(base, node.attr, _MISSING)
    return _MISSING


def _two_parameter_lambda(node: gast.AST) -> bool:
    if not isinstance(node, gast.Lambda):
        return False
    args = node.args
    return len(args.args) == 2 and not (args.defaults or args.vararg or args.kwarg or args.kwonlyargs
                                         or getattr(args, "posonlyargs", None))


def is_fold(parsed: Parsed, node: gast.AST, local_functions: set[str], bound: set[str]) -> bool:
    """True for ``functools.reduce(f, xs[, initial])`` that :func:`lower_fold` writes out as a loop."""
    if not (isinstance(node, gast.Call) and len(node.args) in (2, 3) and not node.keywords
            and not any(isinstance(a, gast.Starred) for a in node.args)):
        return False
    if isinstance(node.func, gast.Name) and node.func.id in bound:
        return False
    if _resolved(parsed, node.func) is not functools.reduce:
        return False
    if len(node.args) == 2 and ("list" in bound or parsed.resolve("list") is not list
                                or "TypeError" in bound or parsed.resolve("TypeError") is not TypeError):
        return False  # (the loop written out calls them)
    func = node.args[0]
    if _two_parameter_lambda(func):
        return True
    if isinstance(func, gast.Name) and func.id in local_functions:
        return True
    if isinstance(func, gast.Name) and func.id in bound:
        return False
    target = _resolved(parsed, func)
    return isinstance(target, types.FunctionType) and registry.lookup(target) is None \
        and not registry.is_nondifferentiable(target)


def lower_fold(node: gast.Call, fresh, before: list[gast.stmt]) -> gast.expr:
    """Append the loop that ``functools.reduce(f, xs[, initial])`` runs to ``before``; return its result's name."""
    func, items = node.args[:2]
    value, item = fresh("folded"), fresh("item")
    start: list[gast.stmt] = []
    if len(node.args) == 3:
        start.append(assign(value, node.args[2], node))
    else:  # the first item starts the fold; the loop runs over the others
        listed = fresh("folded_items")
        empty = gast.Raise(exc=call("TypeError", const("reduce() of empty iterable with no initial value")),
                           cause=None)
        start += [assign(listed, call("list", items), node),
                  gast.If(test=gast.UnaryOp(op=gast.Not(), operand=name(listed)), body=[empty], orelse=[]),
                  assign(value, gast.Subscript(value=name(listed), slice=const(0), ctx=gast.Load()), node)]
        items = gast.Subscript(value=name(listed), slice=gast.Slice(lower=const(1), upper=None, step=None),
                               ctx=gast.Load())
    if isinstance(func, gast.Lambda):
        first, second = (a.id for a in func.args.args)
        step = Rename({first: value, second: item}).visit(copy.deepcopy(func.body))
    else:
        step = gast.Call(func=func, args=[name(value), name(item)], keywords=[])
    loop = gast.For(target=store(item), iter=items, body=[assign(value, step, node)], orelse=[], type_comment=None)
    before.extend(located(start + [loop], node))
    return name(value)
