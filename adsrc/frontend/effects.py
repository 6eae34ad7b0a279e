"""Effects: the functions a differentiated function calls, checked for what they change.

A user function called where no gradient flows through its value (a
statement ``fill_(out, x)``, a result never read) runs as written, as Python
runs it, and is not differentiated. If it changed what it was given (wrote
into an array, appended to a list, set an attribute), the caller's values would change behind the compiler's back and
their gradients silently lose that change. So every user function the
differentiated function calls by name, and those they call in turn, is
checked before anything runs for the fence's mutations (frontend/mutations.py):
one that has any is refused, naming its line and the call. (``v /= n`` on an
array parameter is not seen here: it is a rebinding where ``v`` is a number.)

What a call of a value (``self.step(x)``, ``f(x)`` for a parameter ``f``)
runs is only known when it runs: those are not checked here.
"""
from __future__ import annotations

import inspect
from typing import Callable

import gast

from ..errors import SourceUnavailable, UnsupportedSyntax
from ..rules import registry
from ..rules.checkpoint import recomputes
from .aliasing import Aliasing, static_value
from .libraries import is_library_function
from .mutations import MutationChecks
from .parse import Parsed, parse_function

_MAX_DEPTH = 8


class _NotGiven(Exception):
    """A change to something the function was not given (a module's list it logs into): not refused."""


class EffectsFence(MutationChecks, gast.NodeVisitor):
    """The fence's checks of what a function changes, and nothing else of its syntax."""

    def __init__(self, parsed: Parsed):
        self.parsed = parsed
        self.aliasing = Aliasing(parsed)
        self.locals = self.aliasing.locals
        args = parsed.node.args
        self.params = {a.id for a in args.posonlyargs + args.args + args.kwonlyargs}
        self.params |= {a.id for a in (args.vararg, args.kwarg) if a is not None}
        # a parameter the function rebinds (args = list(args)) may hold its own copy when it is written
        self.rebound = {n.id for n in gast.walk(parsed.node) if isinstance(n, gast.Name)
                        and isinstance(n.ctx, gast.Store) and n.id in self.params}

    def fail(self, node: gast.AST, construct: str, hint: str = "") -> None:
        """Raise where what would change is one of the parameters (or what they hold): a module's own list
        that a helper logs into is not something the caller gave it."""
        root = _root(node)
        if root is None or root in self.params and root not in self.rebound:
            raise UnsupportedSyntax(construct, self.parsed.where(node), hint)
        raise _NotGiven  # what changes was not given to the function: the rest of this statement is not checked

    def static(self, node: gast.AST) -> object:
        return static_value(self.parsed, self.locals, node)

    def visit_FunctionDef(self, node: gast.FunctionDef) -> None:  # a nested function: its own scope
        return None

    visit_Lambda = visit_ClassDef = visit_FunctionDef

    def visit_Assign(self, node: gast.Assign) -> None:
        self._top_targets = list(node.targets)  # (read by _check_subscript_target)
        for target in node.targets:
            self._target(target)
            self._check_module_binding(target, node.value)
        self.visit(node.value)

    def visit_AugAssign(self, node: gast.AugAssign) -> None:
        self._top_targets = [node.target]
        self._target(node.target)
        self.visit(node.value)

    def _target(self, target: gast.AST) -> None:
        if isinstance(target, (gast.Tuple, gast.List)):
            for elt in target.elts:
                self._target(elt)
        elif isinstance(target, gast.Starred):
            self._target(target.value)
        elif isinstance(target, gast.Subscript):
            self._check_subscript_target(target)
        elif isinstance(target, gast.Attribute):
            self.fail(target, "assignment to an attribute", "return the new value instead")


def _root(node: gast.AST) -> str | None:
    """The name a changed value is reached from: ``out`` in ``out[i] = v``, ``items.append(v)``,
    ``self.w = v``; None where it is not a name."""
    while True:
        if isinstance(node, gast.Expr):
            node = node.value
        elif isinstance(node, gast.Call):
            node = node.func
        elif isinstance(node, (gast.Attribute, gast.Subscript)):
            node = node.value
        elif isinstance(node, gast.Name):
            return node.id
        else:
            return None


def callees(parsed: Parsed) -> list[tuple[Callable, gast.Call]]:
    """The user functions ``parsed`` calls by a name from outside it (``helper(x)``, ``mod.helper(x)``)."""
    locals_ = Aliasing(parsed).locals
    found = []
    for node in gast.walk(parsed.node):
        if not isinstance(node, gast.Call):
            continue
        target = static_value(parsed, locals_, node.func)
        if inspect.isfunction(target) and not is_library_function(target) and registry.lookup(target) is None \
                and (getattr(target, "__module__", None) or "").split(".")[0] != "adsrc" \
                and not registry.is_nondifferentiable(target) and not recomputes(target):
            found.append((target, node))
    return found


def check_effects(parsed: Parsed, seen: set | None = None, depth: int = 0) -> None:
    """Refuse, before anything runs, a user function that ``parsed`` calls (at any depth) which changes what
    it is given (see the module docstring)."""
    seen = {parsed.func} if seen is None else seen
    if depth >= _MAX_DEPTH:
        return
    for func, call in callees(parsed):
        if func in seen:
            continue
        seen.add(func)
        try:
            inner = parse_function(func)
        except SourceUnavailable:
            continue
        try:
            fence = EffectsFence(inner)
            for stmt in inner.node.body:
                try:
                    fence.visit(stmt)
                except _NotGiven:
                    continue
        except UnsupportedSyntax as error:
            raise UnsupportedSyntax(f"calling {func.__qualname__}, which changes what it is given "
                                    f"({error.construct} at {error.where})", parsed.where(call),
                                    f"adsrc differentiates values, not effects: make {func.__name__} return "
                                    f"what it computes, and use that") from None
        check_effects(inner, seen, depth + 1)
