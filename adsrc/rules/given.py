"""Writes into the arrays a function was given: the checks generated code makes.

adsrc runs ``x[i] = v`` and ``x op= e`` on a parameter's array as Python
does only in a call it prepares itself (api/written.py: ``grad``,
``value_and_grad``, ``vjp`` and ``jvp`` of the function): the derivative
runs on a private copy of the array, which the backward sweep may restore,
and the call writes the copy's contents after the forward sweep into the
caller's array. The derivative of such a function begins with
:func:`written_arguments`, which refuses any other call (from another
derivative, a Hessian, a checkpointed loop): there the caller's derivative
would not know that its array changed.
"""
from __future__ import annotations

import contextvars
import functools
from typing import Any, Callable

import numpy as np

from ..errors import RefusedWhenRun

# Set by api/written.py around the one call it prepared; the derivative called takes it on entry, so that
# the calls it makes in turn find it unset.
PREPARED: contextvars.ContextVar = contextvars.ContextVar("adsrc_prepared_call", default=False)
# Set while an API function that calls the function it was given more than once runs (a Jacobian column by
# column, check_grads, fixed_point's rules): the name it is refused under (api/written.py).
REPEATED: contextvars.ContextVar = contextvars.ContextVar("adsrc_repeated_calls", default="")


def repeated(run: Callable, label: str) -> Callable:
    """``run`` (``jvp`` or ``vjp``), called by ``label`` which calls it more than once for one call of its
    own: a function that writes into an array it was given is refused there (its writes would add up)."""
    @functools.wraps(run)
    def calling(*args: Any, **kwargs: Any) -> Any:
        token = REPEATED.set(label)
        try:
            return run(*args, **kwargs)
        finally:
            REPEATED.reset(token)
    return calling


def written_arguments(label: str, where: str) -> None:
    """The first statement of the derivative of a function that writes into an array it was given:
    refuses a call that adsrc did not prepare (see the module's docstring)."""
    if not PREPARED.get():
        raise RefusedWhenRun(
            f"a call of {label}, which writes into an array it was given, from code adsrc differentiates "
            f"(another function, a Hessian or a checkpointed loop)", where,
            "the calling derivative would not see the change: copy the array in the function and return "
            "the new values instead, or call the function only through grad, value_and_grad, vjp or jvp of it")
    PREPARED.set(False)


def in_place(value: Any) -> bool:
    """Whether ``x op= e`` changes ``value`` itself, as it does a NumPy array (not a NumPy scalar or a number)."""
    return isinstance(value, np.ndarray)


def updated_in_place(target: np.ndarray, value: Any, where: str) -> None:
    """Before ``x[...] = x op e``, which runs Python's ``x op= e`` on an array: refuse where Python's update
    would refuse to cast the result into ``x`` (a float into an array of integers)."""
    dtype = getattr(value, "dtype", None) or np.result_type(value)
    if not np.can_cast(dtype, target.dtype, casting="same_kind"):
        raise RefusedWhenRun(
            f"x op= e on an array of {target.dtype} with a result of {dtype}", where,
            "Python refuses this update (NumPy casts in place only within a kind): make the array "
            "of the result's type first (x = x.astype(float)), or write x = x op e")
