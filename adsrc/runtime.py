"""What generated adjoint modules import: thunks, rule lookup and callee adjoints.

Everything here is referenced by name from generated code, so a printed
adjoint module can be run on its own (``from adsrc.runtime import ...``).
"""
from __future__ import annotations

from typing import Any, Callable

from .rules import registry
from .rules.indexing import with_item
from .values.containers import drop_last, part
from .values.thunks import AccThunk, Thunk, accumulate, unthunk, zero

__all__ = ["Thunk", "AccThunk", "accumulate", "unthunk", "zero", "part", "drop_last", "with_item", "rebinding", "rule_vjp", "adjoint_of"]


def rebinding(value: Any, where: str, aliased: bool) -> None:
    """Guard ``x op= e``, which adsrc runs as ``x = x op e``, where ``x`` may share an array.

    For a number the two are the same, and for an array nothing else refers
    to. For an array that another name shares (``aliased``: the function gave
    it a second name) or that is a view of another array, Python would change
    it in place and the other name would see the change, so adsrc refuses
    rather than compute another value.
    """
    import numpy as np

    from .errors import UnsupportedSyntax

    if isinstance(value, np.ndarray) and (aliased or value.base is not None):
        raise UnsupportedSyntax("augmented assignment (x op= e) to an array that another name may share",
                                where, "write x = x op e, or copy the array first (x = x.copy())")


def rule_vjp(qualname: str, index: int) -> Callable:
    """The vjp function registered for argument ``index`` of the primitive ``qualname``."""
    for rule in registry.rules():
        if rule.qualname == qualname:
            return rule.vjps[index]
    raise LookupError(f"no gradient rule named {qualname}")


class adjoint_of:  # noqa: N801 - reads as a function in generated code
    """The adjoint of a user function called from generated code, looked up at each call.

    Calling it returns ``(value, pullback)`` like any generated adjoint. The
    compiler compiles callees' adjoints along with their caller's (to report
    their errors before any code runs); looking them up at call time is what
    makes recursion work, and recompiles one whose globals changed.
    """

    __slots__ = ("func", "wrt", "eager")

    def __init__(self, func: Callable, wrt: tuple[int, ...], eager: bool):
        self.func, self.wrt, self.eager = func, wrt, eager

    def __call__(self, *args: Any) -> tuple[Any, Callable]:
        from .backend.pipeline import get_adjoint

        return get_adjoint(self.func, self.wrt, self.eager).function(*args)

    def __repr__(self) -> str:
        return f"adjoint_of({getattr(self.func, '__name__', self.func)}, wrt={self.wrt}, eager={self.eager})"
