"""Activity analysis: which variables need adjoints, and which values need the tape.

Input: a desugared (or ANF) FunctionDef. Output: an :class:`Activity` record.

* A variable is *varied* if it depends on a differentiated argument, and
  *useful* if the returned value depends on it; only variables that are both
  (*active*) get adjoints, so nothing is emitted or computed for the rest.
  Reads that cannot carry a gradient (conditions, comparisons, indices,
  ``.shape``, keyword arguments, non-differentiable functions) do not count.
  The analysis is flow-insensitive: it may call a variable active when it is
  not on some path, which costs a little code, never a wrong gradient.
* A variable is *stable* if it is assigned exactly once, outside any loop:
  the backward sweep can then read it directly from the forward sweep's
  scope. Every other value the backward sweep needs is saved on the tape.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

import gast

from ..rules import registry
from ..rules.assembly import INDEX_TRICKS



class _Everything(set):
    """A set that contains everything: forward mode counts every variable as useful."""

    def __contains__(self, item: object) -> bool:
        return True


@dataclass
class Activity:
    varied: set[str] = field(default_factory=set)
    useful: set[str] = field(default_factory=set)
    sites: dict[str, int] = field(default_factory=dict)
    in_loop: set[str] = field(default_factory=set)

    def active(self, name: str) -> bool:
        return name in self.varied and name in self.useful

    def stable(self, name: str) -> bool:
        return self.sites.get(name, 0) <= 1 and name not in self.in_loop


def target_names(target: gast.AST) -> list[str]:
    return [n.id for n in gast.walk(target) if isinstance(n, gast.Name)]


def gradient_reads(expr: gast.AST, resolve: Callable[[gast.AST], object],
                   inert: Callable[[gast.Attribute], bool] | None = None) -> set[str]:
    """Names whose value can flow, differentiably, into the value of ``expr``; ``inert(node)`` says
    whether an attribute read carries no gradient (an array's ``.shape``; by default, any ``.shape``)."""
    found: set[str] = set()

    def visit(node: gast.AST) -> None:
        if isinstance(node, gast.Name):
            found.add(node.id)
        elif isinstance(node, (gast.Compare, gast.BoolOp, gast.Lambda)):
            return  # a lambda (a key= of sorted) is a function, not a value that carries a gradient
        elif isinstance(node, gast.UnaryOp) and isinstance(node.op, gast.Not):
            return
        elif isinstance(node, gast.Subscript):
            visit(node.value)
            if isinstance(resolve(node.value), INDEX_TRICKS):  # np.r_[a, b] concatenates its items
                visit(node.slice)
        elif isinstance(node, gast.Attribute):
            if node.attr not in registry.INERT_ATTRIBUTES or inert is not None and not inert(node):
                visit(node.value)  # (a distribution's .shape parameter is a float)
        elif isinstance(node, gast.IfExp):
            visit(node.body)
            visit(node.orelse)
        elif isinstance(node, gast.Call):
            target = resolve(node.func)
            if target is not None and registry.is_nondifferentiable(target):
                return
            if isinstance(node.func, gast.Attribute):
                visit(node.func.value)
            elif not isinstance(node.func, gast.Name) or target is None:
                visit(node.func)  # a value called (f(x) with f a parameter, layers[i](h)): it may hold weights
            for arg in node.args:
                visit(arg)
            for kw in node.keywords:
                visit(kw.value)
        else:
            for child in gast.iter_child_nodes(node):
                visit(child)

    visit(expr)
    return found


def is_append(stmt: gast.stmt) -> bool:
    """True for ``xs.append(v)`` on a local name: a list that grows by one item."""
    value = getattr(stmt, "value", None)
    return isinstance(stmt, gast.Expr) and isinstance(value, gast.Call) \
        and isinstance(value.func, gast.Attribute) and value.func.attr == "append" \
        and isinstance(value.func.value, gast.Name) and len(value.args) == 1 and not value.keywords


def _is_range(expr: gast.AST) -> bool:
    return isinstance(expr, gast.Call) and isinstance(expr.func, gast.Name) and expr.func.id == "range"


def _closure(start: set[str], edges: dict[str, list]) -> set[str]:
    """Every name reachable from ``start`` through ``edges`` (name -> lists of names)."""
    reached, pending = set(start), list(start)
    while pending:
        for group in edges.get(pending.pop(), ()):
            for other in group:
                if other not in reached:
                    reached.add(other)
                    pending.append(other)
    return reached


def analyze(node: gast.FunctionDef, wrt: set[str], resolve: Callable, every_variable_useful: bool = False,
            inert: Callable[[gast.Attribute], bool] | None = None) -> Activity:
    """Compute activity and stability for a function whose parameters ``wrt`` are differentiated.

    ``every_variable_useful`` is for forward mode, which needs the tangent of
    every variable that depends on the parameters, whatever it flows into:
    "active" then means varied.
    """
    act = Activity()
    flows: list[tuple[list[str], set[str]]] = []
    returned: set[str] = set()
    for arg in node.args.args + node.args.kwonlyargs:
        act.sites[arg.id] = 1

    def walk(stmts: list[gast.stmt], loop: bool) -> None:
        for stmt in stmts:
            if isinstance(stmt, gast.Assign) and isinstance(stmt.targets[0], gast.Subscript):
                # A write in place: the array's value changes, its binding does not (no new site).
                base = stmt.targets[0].value.id
                flows.append(([base], {base} | gradient_reads(stmt.value, resolve, inert)))
            elif isinstance(stmt, gast.Assign):
                targets = target_names(stmt.targets[0])
                flows.append((targets, gradient_reads(stmt.value, resolve, inert)))
                record(targets, loop)
            elif isinstance(stmt, gast.For):
                targets = target_names(stmt.target)
                sources = set() if _is_range(stmt.iter) else gradient_reads(stmt.iter, resolve, inert)
                flows.append((targets, sources))
                record(targets, True)
                walk(stmt.body, True)
            elif isinstance(stmt, gast.While):
                walk(stmt.body, True)
            elif isinstance(stmt, gast.If):
                walk(stmt.body, loop)
                walk(stmt.orelse, loop)
            elif is_append(stmt):
                items = stmt.value.func.value.id
                flows.append(([items], {items} | gradient_reads(stmt.value.args[0], resolve, inert)))
                record([items], loop)
            elif isinstance(stmt, gast.Return) and stmt.value is not None:
                returned.update(gradient_reads(stmt.value, resolve, inert))

    def record(targets: list[str], loop: bool) -> None:
        for t in targets:
            act.sites[t] = act.sites.get(t, 0) + 1
            if loop:
                act.in_loop.add(t)

    walk(node.body, False)
    # Varied flows forward from the parameters, useful backward from the result: two worklists,
    # each name handled once, so the analysis is linear in the number of flows.
    readers: dict[str, list[list[str]]] = {}
    writers: dict[str, list[set[str]]] = {}
    for targets, sources in flows:
        for source in sources:
            readers.setdefault(source, []).append(targets)
        for target in targets:
            writers.setdefault(target, []).append(sources)
    act.varied = _closure(set(wrt), readers)
    act.useful = _closure(set(returned), writers)
    if every_variable_useful:
        act.useful = _Everything()
    return act
