"""The one module generated code imports, in both modes: ``from adsrc.runtime import ...``.

Everything here is referenced by name from generated code, so a printed
module runs on its own. It gathers the run-time values (adsrc.values), rule
lookup (adsrc.rules) and the links to the derivatives of called user
functions, which compile through the pipeline (adsrc.backend), so it sits
above all three; of adsrc's own modules, only the second-order layer and the
API, above it, import it.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from .backend.pipeline import EAGER, FORWARD, REVERSE, RUNTIME_NAMES, Mode, compile
from .calls import CallDerivative, adjoint_of_call, jvp_of_call  # noqa: F401  (generated code imports them from here)
from .errors import RefusedWhenRun
from .recompute import LoopAdjoint, LoopJvp, refuse_changed, same_value
from .rules import registry
from .rules.assembly import index_concatenate  # noqa: F401  (np.r_[...] and np.c_[...] in generated code)
from .rules.checkpoint import Checkpointed, checkpoint_loop
from .rules.closures import local_function  # noqa: F401  (a local function used as a value, in generated code)
from .rules.spellings import ufunc_at  # noqa: F401  (np.add.at(y, i, v) in generated code: rules/spellings.py)
from .rules.given import in_place, updated_in_place, written_arguments  # noqa: F401  (writes into arguments)
from .rules.iterables import dict_with, unpacked, zip_star, zipped_star  # noqa: F401  (generated code imports them from here)
from .rules.writes import (  # noqa: F401  (generated code imports them from here)
    added_into, cleared, cleared_in_place, detached, drop_last_in_place, owned, written_part, written_tangent,
)
from .values.arrays import is_array, is_dict, is_foreign, is_number  # noqa: F401  (entry checks)
from .values import (  # noqa: F401  (generated code imports them from here)
    AccThunk, OuterStack, Stack, TangentDict, TangentList, TangentTuple, Thunk, accumulate, drop_last, part, unthunk, zero,
)

__all__ = list(RUNTIME_NAMES) + ["AccThunk", "CalleeDerivative", "CallDerivative", "RecomputingDerivative"]


def rebinding(value: Any, where: str, aliased: bool) -> None:
    """Guard ``x op= e``, which adsrc runs as ``x = x op e``, where ``x`` may share an array.

    For a number the two are the same, and for an array nothing else refers
    to. For an array that another name shares (``aliased``: the function gave
    it a second name) or that is a view of another array, Python would change
    it in place and the other name would see the change, so adsrc refuses
    rather than compute another value.
    """
    if isinstance(value, np.ndarray) and (aliased or value.base is not None):
        raise RefusedWhenRun("augmented assignment (x op= e) to an array that another name may share",
                                where, "to change the array it shares, write into that array by index "
                                       "(m[i] = m[i] * 2 for a row of m); for a new array, write x = x op e "
                                       "or copy first (x = x.copy())")


def _rule(qualname: str) -> registry.Rule:
    for rule in registry.rules():
        if rule.qualname == qualname:
            return rule
    raise LookupError(f"no gradient rule named {qualname}")


_SEQUENCES = (list, tuple, range, str, np.ndarray)


def loop_length(where: str, *sequences: Any) -> int:
    """How many times ``for x in xs`` (or ``for a, b in zip(as_, bs)``) runs, as adsrc runs it: by index.

    Refuses, before the loop runs, a sequence that indexing would not iterate
    as Python does (a dict, a set, a generator).
    """
    for sequence in sequences:
        if not isinstance(sequence, _SEQUENCES) and not is_foreign(sequence):  # a Dask or CuPy array indexes too
            raise RefusedWhenRun(f"a differentiated loop over a {type(sequence).__name__} (adsrc indexes the "
                                    f"sequence, which only a list, tuple, range, str or array iterates as Python "
                                    f"does)", where, "loop over list(d) for a dict's keys (and read d[k]), or "
                                                     "over a list made of the values")
    return min(len(sequence) for sequence in sequences)


def rule_vjp(qualname: str, index: int) -> Callable:
    """The vjp function registered for argument ``index`` of the primitive ``qualname``."""
    return _rule(qualname).vjps[index]


def rule_jvp(qualname: str, index: int) -> Callable:
    """The jvp function registered for argument ``index`` of the primitive ``qualname``."""
    return _rule(qualname).jvps[index]


def append_tangent(items_tangent: Any, items: list, value_tangent: Any) -> TangentList:
    """The tangent of ``[*items, value]``: the items' tangents (zeros if none), then the value's."""
    before = [zero] * len(items) if items_tangent is zero else list(items_tangent)
    return TangentList(before + [value_tangent])


class CalleeDerivative:
    """The derivative of a user function called from generated code, looked up at each call.

    Reverse mode: calling it returns ``(value, pullback)``; forward mode:
    called with the arguments, then the tangents of the ``wrt`` arguments, it
    returns ``(value, tangent)``. The pipeline compiles callees along with
    their caller (to report their errors before any code runs); looking them
    up at call time is what makes recursion work, and recompiles one whose
    globals changed.
    """

    __slots__ = ("func", "wrt", "mode")

    def __init__(self, func: Callable, wrt: tuple[int, ...], mode: Mode):
        self.func, self.wrt, self.mode = func, wrt, mode

    def __call__(self, *args: Any) -> tuple[Any, Any]:
        return compile(self.func, self.wrt, self.mode).function(*args)

    def __repr__(self) -> str:
        name = getattr(self.func, "__name__", self.func)
        if self.mode.forward:
            return f"jvp_of({name}, wrt={self.wrt})"
        return f"adjoint_of({name}, wrt={self.wrt}, eager={self.mode.eager})"


class RecomputingDerivative(CalleeDerivative):
    """The adjoint of a checkpointed function (``adsrc.checkpoint(f)``), called from generated code.

    The forward sweep runs plain ``f`` and keeps only its arguments (and its
    result, to check the recomputation against); the pullback runs ``f``'s
    adjoint on them again, then calls that adjoint's pullback. So no tape of
    ``f`` lives between the two sweeps, for one more run of ``f``. Second
    order sees a ``CalleeDerivative`` and differentiates ``f``'s eager adjoint,
    without recomputing.
    """

    __slots__ = ()

    def __call__(self, *args: Any) -> tuple[Any, Any]:
        value = self.func.call_positional(args)

        def pullback(g: Any) -> Any:
            again, inner = compile(self.func, self.wrt, self.mode).function(*args)
            if not same_value(again, value):
                raise refuse_changed(self.func, f"the function {self.func.__qualname__}")
            return inner(g)

        return value, pullback

    def __repr__(self) -> str:
        return f"adjoint_of(checkpoint({self.func.__name__}), wrt={self.wrt}, eager={self.mode.eager})"


def adjoint_of(func: Callable, wrt: tuple[int, ...], eager: bool) -> CalleeDerivative | LoopAdjoint:
    """The adjoint of a called user function: ``helper_adjoint = adjoint_of(helper, wrt=(0,), eager=False)``.

    A checkpointed function's recomputes it in the backward sweep; checkpoint_loop's stores one state per
    segment (recompute.py).
    """
    mode = EAGER if eager else REVERSE
    if func is checkpoint_loop:
        return LoopAdjoint(wrt, mode)
    if isinstance(func, Checkpointed):
        return RecomputingDerivative(func, wrt, mode)
    return CalleeDerivative(func, wrt, mode)


def jvp_of(func: Callable, wrt: tuple[int, ...]) -> CalleeDerivative | LoopJvp:
    """The JVP of a called user function: ``helper_jvp = jvp_of(helper, wrt=(0,))`` (a checkpointed
    function's is its function's: forward mode keeps no tape)."""
    if func is checkpoint_loop:
        return LoopJvp(wrt)
    return CalleeDerivative(func, wrt, FORWARD)
