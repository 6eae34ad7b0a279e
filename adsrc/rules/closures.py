"""Local functions used as values: the closure Python makes, as a call with a rule.

A function defined inside a differentiated function and used as a value
(passed to another function, returned, stored, given to ``adsrc.grad``) is
made by :func:`local_function`, which the front end writes in place of its
definition (frontend/inline.py)::

    inner = lambda y: x * y         ->  inner = local_function(inner_code, (x,), None)

It builds the function Python would build: the same code object, the same
globals, cells holding the captured values (in ``co_freevars`` order) and the
defaults. The front end refuses a captured variable that is rebound after the
definition, so a cell read later holds what Python's cell would.

The closure's cotangent (and tangent) is that of the tuple of its captured
values: the rule passes it through, and a call of the closure compiles it
with the captured values as leading parameters (``compile(..., lifted=True)``,
adsrc/calls.py), so that gradients reach the enclosing variables it captures.
"""
from __future__ import annotations

import inspect
import types
import weakref
from typing import Any, Callable

from ._util import note
from .registry import defjvp, defvjp


class LocalDefinition:
    """What a local function's definition needs besides its captured values: the code, the globals."""

    __slots__ = ("code", "globals", "qualname", "where")

    def __init__(self, code: types.CodeType, globals_: dict, qualname: str, where: str):
        self.code, self.globals, self.qualname, self.where = code, globals_, qualname, where

    def __repr__(self) -> str:
        return f"<code of the local function {self.qualname} ({self.where})>"


_made: "weakref.WeakSet[Callable]" = weakref.WeakSet()


def local_function(definition: LocalDefinition, captured: tuple, defaults: tuple | None,
                   kwdefaults: dict | None = None) -> Callable:
    """The closure ``def``/``lambda`` makes: ``definition``'s code with cells holding ``captured``."""
    cells = tuple(types.CellType(value) for value in captured)
    func = types.FunctionType(definition.code, definition.globals, definition.code.co_name, defaults or None,
                              cells or None)
    func.__qualname__ = definition.qualname
    if kwdefaults:
        func.__kwdefaults__ = dict(kwdefaults)
    _made.add(func)
    return func


def captures(func: Any) -> tuple | None:
    """The captured values of a closure :func:`local_function` made (``co_freevars`` order), else None."""
    try:
        made = func in _made
    except TypeError:  # not hashable: not one of ours
        return None
    return tuple(cell.cell_contents for cell in func.__closure__ or ()) if made else None


_lifted: "weakref.WeakKeyDictionary[Callable, Callable]" = weakref.WeakKeyDictionary()


def lift(func: Callable) -> Callable:
    """``func`` (made by :func:`local_function`) with its captured values as leading parameters:
    ``lift(g)(*captured, *args)`` is ``g(*args)`` with ``captured`` in its cells. Compiling it compiles
    ``g`` lifted (``compile(g, ..., lifted=True)``), so the API differentiates it like any function."""
    names = func.__code__.co_freevars
    count = len(names)

    def lifted(*args: Any, **kwargs: Any) -> Any:
        again = LocalDefinition(func.__code__, func.__globals__, func.__qualname__, "")
        return local_function(again, args[:count], func.__defaults__, func.__kwdefaults__)(*args[count:], **kwargs)

    signature = inspect.signature(func)
    captured = [inspect.Parameter(n, inspect.Parameter.POSITIONAL_ONLY) for n in names]
    rest = [p.replace(kind=p.POSITIONAL_OR_KEYWORD) if p.kind is p.POSITIONAL_ONLY else p
            for p in signature.parameters.values()]
    lifted.__signature__ = signature.replace(parameters=captured + rest)
    lifted.__name__, lifted.__qualname__, lifted.__module__ = func.__name__, func.__qualname__, func.__module__
    _lifted[lifted] = func
    return lifted


def lifted_from(func: Any) -> Callable | None:
    """The local function :func:`lift` made ``func`` from, else None."""
    try:
        return _lifted.get(func)
    except TypeError:
        return None


def _identity(g: Any, ans: Any, definition: Any, captured: Any, defaults: Any = None, kwdefaults: Any = None) -> Any:
    return g


def _identity_jvp(t: Any, ans: Any, definition: Any, captured: Any, defaults: Any = None,
                  kwdefaults: Any = None) -> Any:
    return t


note("a local function used as a value (the frontend makes it here): its cotangent is that of the values it "
     "captures", defvjp(local_function, None, _identity, None, None))
defjvp(local_function, None, _identity_jvp, None, None, piecewise_linear=True).extra["no_derivative"] = {
    2: "a local function's default values are not differentiated; pass the value as an argument",
    3: "a local function's default values are not differentiated; pass the value as an argument"}
