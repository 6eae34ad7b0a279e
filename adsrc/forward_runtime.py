"""What generated forward-mode (JVP) modules import: tangent containers, rule lookup, callee JVPs.

Everything here is referenced by name from generated code, so a printed JVP
module can be run on its own (``from adsrc.forward_runtime import ...``).
"""
from __future__ import annotations

from typing import Any, Callable

from .rules import registry
from .values.containers import TangentDict, TangentList, TangentTuple
from .values.thunks import zero

__all__ = ["zero", "TangentTuple", "TangentList", "TangentDict", "append_tangent", "rule_jvp", "jvp_of"]


def rule_jvp(qualname: str, index: int) -> Callable:
    """The jvp function registered for argument ``index`` of the primitive ``qualname``."""
    for rule in registry.rules():
        if rule.qualname == qualname:
            return rule.jvps[index]
    raise LookupError(f"no tangent rule named {qualname}")


def append_tangent(items_tangent: Any, items: list, value_tangent: Any) -> TangentList:
    """The tangent of ``[*items, value]``: the items' tangents (zeros if none), then the value's."""
    before = [zero] * len(items) if items_tangent is zero else list(items_tangent)
    return TangentList(before + [value_tangent])


class jvp_of:  # noqa: N801 - reads as a function in generated code
    """The JVP of a user function called from generated code, looked up at each call.

    Calling it with the arguments, then the tangents of the ``wrt`` arguments,
    returns ``(value, tangent)``. Looking it up at call time is what makes
    recursion work, and recompiles one whose globals changed.
    """

    __slots__ = ("func", "wrt")

    def __init__(self, func: Callable, wrt: tuple[int, ...]):
        self.func, self.wrt = func, wrt

    def __call__(self, *args: Any) -> tuple[Any, Any]:
        from .backend.forward_pipeline import get_jvp

        return get_jvp(self.func, self.wrt).function(*args)

    def __repr__(self) -> str:
        return f"jvp_of({getattr(self.func, '__name__', self.func)}, wrt={self.wrt})"
