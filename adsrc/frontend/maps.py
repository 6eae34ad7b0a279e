"""``map(f, xs)`` consumed at once becomes the list comprehension it stands for.

``map`` returns an iterator that calls ``f`` as it is consumed. Where a
builtin consumes it whole, right away (``list``, ``tuple``, ``sum``,
``sorted``, ``min``, ``max``), nothing can run between the calls of ``f``,
so ``[f(x) for x in xs]`` (``zip`` for several iterables, stopping at the
shortest, as ``map`` does) computes the same values in the same order, and
comprehensions are differentiated. ``f`` must be a name or a dotted name, so
that reading it once per item reads the same function, or a lambda with as
many plain parameters as there are iterables: ``sum(map(lambda t: e, r))``
is ``sum([e for t in r])``, whose body, like the lambda's, is a scope of its
own that reads the enclosing names when it runs. Any other ``map`` is left
as written (and refused if it carries a gradient).
"""
from __future__ import annotations

import builtins

import gast

from ..ir.naming import Namer
from .parse import Parsed

_CONSUMERS = ("list", "tuple", "sum", "sorted", "min", "max")


def _is_builtin(parsed: Parsed, node: gast.AST, name: str) -> bool:
    return isinstance(node, gast.Name) and node.id == name and parsed.resolve(name) is getattr(builtins, name)


def _pure_reference(node: gast.AST) -> bool:
    while isinstance(node, gast.Attribute):
        node = node.value
    return isinstance(node, gast.Name)


def _plain_lambda(node: gast.AST, arity: int) -> bool:
    """A lambda of ``arity`` plain positional parameters, without defaults, ``*args`` or keywords."""
    if not isinstance(node, gast.Lambda):
        return False
    args = node.args
    return len(args.args) == arity and not (args.defaults or args.vararg or args.kwarg or args.kwonlyargs
                                             or getattr(args, "posonlyargs", None)) \
        and all(isinstance(a, gast.Name) for a in args.args)


class _Maps(gast.NodeTransformer):
    def __init__(self, parsed: Parsed, namer: Namer, local: set[str]):
        self.parsed, self.namer, self.local = parsed, namer, local

    def visit_Call(self, node: gast.Call) -> gast.Call:
        self.generic_visit(node)
        consumer = isinstance(node.func, gast.Name) and node.func.id in _CONSUMERS \
            and node.func.id not in self.local and _is_builtin(self.parsed, node.func, node.func.id)
        if consumer and node.args and self._is_map(node.args[0]):
            node.args[0] = gast.copy_location(self._comprehension(node.args[0]), node.args[0])
        return node

    def _is_map(self, node: gast.AST) -> bool:
        return isinstance(node, gast.Call) and "map" not in self.local and _is_builtin(self.parsed, node.func, "map") \
            and len(node.args) >= 2 and not node.keywords \
            and (_pure_reference(node.args[0]) or _plain_lambda(node.args[0], len(node.args) - 1)) \
            and not any(isinstance(a, gast.Starred) for a in node.args) \
            and (len(node.args) == 2 or "zip" not in self.local and self.parsed.resolve("zip") is builtins.zip)

    def _comprehension(self, call: gast.Call) -> gast.ListComp:
        func, iterables = call.args[0], call.args[1:]
        if isinstance(func, gast.Lambda):  # the comprehension's variables are the lambda's parameters
            names = [a.id for a in func.args.args]
        else:
            names = [self.namer.fresh("item") for _ in iterables]

        def load(name: str) -> gast.Name:
            return gast.Name(id=name, ctx=gast.Load(), annotation=None, type_comment=None)

        if len(iterables) == 1:
            target: gast.expr = gast.Name(id=names[0], ctx=gast.Store(), annotation=None, type_comment=None)
            source = iterables[0]
        else:
            target = gast.Tuple(elts=[gast.Name(id=n, ctx=gast.Store(), annotation=None, type_comment=None)
                                      for n in names], ctx=gast.Store())
            source = gast.Call(func=load("zip"), args=list(iterables), keywords=[])
        if isinstance(func, gast.Lambda):
            element = func.body
        else:
            element = gast.Call(func=func, args=[load(n) for n in names], keywords=[])
            for child in gast.walk(element):
                gast.copy_location(child, call)
        for child in gast.walk(target):
            gast.copy_location(child, call)
        gast.copy_location(source, call)
        return gast.ListComp(elt=element, generators=[
            gast.comprehension(target=target, iter=source, ifs=[], is_async=0)])


def rewrite_maps(parsed: Parsed, namer: Namer, node: gast.FunctionDef, local: set[str]) -> None:
    """Rewrite, in place, each ``map`` that a builtin consumes at once (see the module's docstring)."""
    maps = _Maps(parsed, namer, local)
    for stmt in node.body:
        maps.visit(stmt)
