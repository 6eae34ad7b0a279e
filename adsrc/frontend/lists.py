"""Writes into lists: which lists ``xs[i] = v`` may write in place, and why the others may not.

Input: a parsed function and its aliasing facts (aliasing.py). Output: for
each local name written by item (``xs[i] = v``, ``xs[i] += v``) that some
assignment gives a list made here, ``""`` if the write is accepted, else the
reason it is refused, with its line. The fence (mutations.py) raises that reason.

Python writes into the list itself, so every other way of reaching the list
would see the write: adsrc accepts a write only where nothing but the name
``xs`` can reach the list, decided from the function's own code, flow-
insensitively (it may refuse a write Python would run the same way, never
the reverse). The list is accepted when

* every value the name takes is a list made here: a display ``[a, b]``, a
  comprehension, ``[v] * n`` (``n`` a name, a constant, ``len(...)`` or
  arithmetic of them: ``[v] * an_array`` is an array), ``list(...)``,
  ``sorted(...)``, or ``+`` of two of them (``xs += [v]`` too, which adsrc
  runs as ``xs = xs + [v]``);
  never a parameter (``args = list(args)`` at the top level of the body
  makes a new variable, assignments.py, which may be written);
* and each read of the name only reads it: an item or a slice (``xs[i]``,
  ``xs[1:]``, new lists), ``*xs`` (its items), ``len(xs)``, ``sum(xs)``
  and the builtins that copy or reduce it, a NumPy or math function (which
  makes an array of it), iteration in a ``for`` loop or comprehension
  (directly or through ``enumerate``/``zip``/``reversed``, which adsrc and
  Python both read item by item, as it is then), ``xs + ys``, ``xs * n``,
  a comparison, a test, ``xs.index``/``xs.count``/``xs.copy()``/
  ``xs.append`` (the last if aliasing.py lets it grow), and ``return xs``
  (adsrc returns a copy, which its backward sweep leaves alone).

Refused: a second name (``ys = xs``), storing it in another container
(``[xs]``, ``(xs, 1)``, ``return xs, y``), passing it to a function of the
user's (which could keep it or return it), a local function or lambda that
reads it (it would see the list as it is when called), ``a or xs``, and
anything else not listed above.
"""
from __future__ import annotations

import gast
import numpy as np

from .aliasing import Aliasing, displays_returned

# Builtins that read a list and return something that does not hold it (a copy, a number, an item).
_READING_BUILTINS = frozenset({len, sum, list, tuple, sorted, min, max, any, all, str, repr, bool, print, isinstance,
                               type})
# Builtins whose result iterates over the list lazily: accepted where a loop or comprehension consumes it
# at once (item by item, as the list is then, in adsrc as in Python).
_ITERATORS = frozenset({enumerate, zip, reversed})
_METHODS = frozenset({"index", "count", "copy", "append"})


def written_lists(aliasing: Aliasing) -> dict[str, str]:
    """``{name: reason}`` for the local names written by item that some assignment gives a new list;
    ``reason`` is ``""`` for a list ``xs[i] = v`` may write in place (see the module docstring)."""
    node = aliasing.parsed.node
    written = {t.value.id for t in gast.walk(node) if isinstance(t, gast.Subscript) and isinstance(t.ctx, gast.Store)
               and isinstance(t.value, gast.Name)}
    made = {n.targets[0].id for n in gast.walk(node) if isinstance(n, gast.Assign) and n.targets
            and isinstance(n.targets[0], gast.Name) and aliasing.makes_fresh_list(n.value)}
    candidates = written & made
    if not candidates:
        return {}
    params = _parameters(node)
    reasons = {name: "" for name in candidates}

    def refuse(name: str, reason: str, where: gast.AST) -> None:
        if name in reasons and not reasons[name]:
            reasons[name] = f"{reason} (line {_line(aliasing, where)})"

    for name in candidates & params:
        refuse(name, "is a parameter, a list its caller holds too", node)
    parents = {id(child): parent for parent in gast.walk(node) for child in gast.iter_child_nodes(parent)}
    returned = {id(d) for n in gast.walk(node) if isinstance(n, gast.Return) for d in displays_returned(n.value)}
    for child in gast.walk(node):
        if not isinstance(child, gast.Name) or child.id not in candidates or id(child) not in parents:
            continue
        parent = parents[id(child)]
        if id(parent) in returned:
            continue  # return parts, n: returned (as a copy) when the function ends
        if isinstance(child.ctx, gast.Store):
            problem = _binding_problem(aliasing, parent, child)
        else:
            problem = _use_problem(aliasing, parent, child)
            call = parents.get(id(parent)) if isinstance(parent, gast.keyword) else parent
            if not problem and isinstance(call, gast.Call):
                problem = call_problem(aliasing, call, _consumed_at_once(call, parents.get(id(call)), aliasing))
        if problem:
            refuse(child.id, problem, child)
    for inner in gast.walk(node):
        if isinstance(inner, (gast.FunctionDef, gast.Lambda)) and inner is not node:
            for n in gast.walk(inner):
                if isinstance(n, gast.Subscript) and isinstance(n.ctx, gast.Store) and isinstance(n.value, gast.Name) \
                        and n.value.id in candidates:
                    refuse(n.value.id, "is written inside a local function (adsrc writes into lists only in the "
                           "body of the function it differentiates; define that function at module level)", n)
            for n in gast.walk(inner):
                if isinstance(n, gast.Name) and n.id in candidates:
                    refuse(n.id, "is read by a local function or lambda, which would see the list as it is "
                           "when called", n)
    return reasons


def _parameters(node: gast.FunctionDef) -> set[str]:
    args = node.args
    found = args.args + args.posonlyargs + args.kwonlyargs + [a for a in (args.vararg, args.kwarg) if a is not None]
    return {a.id for a in found if isinstance(a, gast.Name)}


def _line(aliasing: Aliasing, node: gast.AST) -> int:
    line = getattr(node, "lineno", None)
    return line if line is not None else aliasing.parsed.first_line


def _consumed_at_once(call: gast.Call, parent: gast.AST | None, aliasing: Aliasing) -> bool:
    """Whether the iterator ``call`` makes is consumed where it stands: a loop's or comprehension's iterable,
    or the argument of a builtin that makes a list or tuple of it."""
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is call:
        return True
    return isinstance(parent, gast.Call) and call in parent.args and any(
        aliasing.static(parent.func) is f for f in (list, tuple, sorted, sum))


def _binding_problem(aliasing: Aliasing, parent: gast.AST, target: gast.Name) -> str:
    """Why binding ``target`` here may give it a list made elsewhere, or ''."""
    if isinstance(parent, gast.Assign) and parent.targets[0] is target:
        if aliasing.makes_fresh_list(parent.value):
            return ""
        return "may hold a list not made here (it is assigned something other than a new list)"
    if isinstance(parent, gast.AugAssign) and parent.target is target:
        if isinstance(parent.op, gast.Mult) or isinstance(parent.op, gast.Add) and aliasing.makes_fresh_list(
                parent.value):
            return ""  # run as xs = xs + [...]: a new list
        return "is updated in place with something other than a new list"
    if isinstance(parent, (gast.For, gast.comprehension)):
        return "is a loop variable, an item of another sequence"
    return "is bound to something other than a new list"


def _use_problem(aliasing: Aliasing, parent: gast.AST, use: gast.Name) -> str:
    """Why this read of a written list may let something else reach the list, or ''."""
    if isinstance(parent, gast.Subscript) and parent.value is use:
        return ""
    if isinstance(parent, gast.Starred):
        return ""  # *xs: its items
    if isinstance(parent, gast.Attribute):
        return "" if parent.attr in _METHODS else f"has its attribute .{parent.attr} read"
    if isinstance(parent, (gast.Compare, gast.If, gast.While, gast.Assert, gast.UnaryOp, gast.FormattedValue)):
        return ""
    if isinstance(parent, gast.BinOp) and isinstance(parent.op, (gast.Add, gast.Mult)):
        return ""  # a new list
    if isinstance(parent, gast.Return):
        return ""  # adsrc returns a copy, which its backward sweep leaves alone (transforms/reverse.py)
    if isinstance(parent, (gast.For, gast.comprehension)) and parent.iter is use:
        return ""
    if isinstance(parent, gast.AugAssign) and parent.value is use:
        return ""  # ys += xs: ys gets the items (a list) or the sum (an array)
    if isinstance(parent, gast.Call) and use in parent.args or isinstance(parent, gast.keyword):
        return ""  # checked as a call (call_problem)
    if isinstance(parent, gast.Assign):
        return "is given a second name"
    if isinstance(parent, (gast.List, gast.Tuple, gast.Set, gast.Dict)):
        return "is stored in another container"
    if isinstance(parent, (gast.BoolOp, gast.IfExp)):
        return "may be the value of an `and`/`or`/`if-else` expression, a second name for it"
    if isinstance(parent, (gast.ListComp, gast.GeneratorExp, gast.DictComp, gast.SetComp)):
        return "is stored in another container (a comprehension's items)"
    return f"is used in a {type(parent).__name__} expression, which may keep it"


def call_problem(aliasing: Aliasing, call: gast.Call, loop_iter: bool) -> str:
    """Why passing a written list to this call may let something else reach the list, or ''.
    ``loop_iter``: the call is what a for loop or comprehension iterates over."""
    target = aliasing.static(call.func)
    if (target is min or target is max) and len(call.args) > 1:
        return f"is passed to {target.__name__}(...) with other values, which may return the list itself"
    if any(target is f for f in _READING_BUILTINS):
        return ""
    if any(target is f for f in _ITERATORS):
        return "" if loop_iter else f"is passed to {target.__name__}(...), whose result reads it later"
    module = getattr(target, "__module__", None) or ""
    if isinstance(target, np.ufunc) or module.split(".")[0] in ("numpy", "math", "scipy"):
        return ""  # makes an array (or a number) of it
    if isinstance(call.func, gast.Attribute) and call.func.attr in _METHODS \
            and isinstance(call.func.value, gast.Name):
        return ""
    label = _label(call.func)
    return f"is passed to {label}(...), which may keep it or return it"


def _label(func: gast.AST) -> str:
    if isinstance(func, gast.Name):
        return func.id
    if isinstance(func, gast.Attribute):
        return f"{_label(func.value)}.{func.attr}"
    return "a function"

