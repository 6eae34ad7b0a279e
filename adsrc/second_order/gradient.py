"""The function that second order differentiates: a gradient computed through an eager adjoint.

``gradient_function(adjoint, *args)`` runs a compiled eager adjoint and its
pullback. The second-order pass transforms it from this source, and so the
adjoint, its pullback and the vjp rules they call, to differentiate a
gradient once more.
"""
from __future__ import annotations

import re
from typing import Any, Callable

import numpy as np

from ..errors import NonScalarOutput
from ..values import seed


# The file name codegen gives an adjoint: "<adsrc adjoint 3 of f (/path/to/file.py:12)>".
_GENERATED = re.compile(r"^<adsrc adjoint \d+ of (.+) \((.+:\d+)\)>$")


def _described(adjoint: Callable | None) -> tuple[str, str]:
    """The differentiated function's name and ``file:line``, read from its adjoint where possible."""
    code = getattr(adjoint, "__code__", None)
    match = _GENERATED.match(code.co_filename) if code is not None else None
    return (match.group(1), match.group(2)) if match else ("the differentiated function", "")


def unit_seed(value: Any, adjoint: Callable | None = None) -> Any:
    """The unit cotangent of a real scalar result; a non-scalar or complex result is refused with
    NonScalarOutput, as grad refuses it (api/arguments.py, check_real_scalar). ``adjoint``, the
    compiled adjoint that computed ``value``, names the function in the message."""
    kind = type(value)
    if kind is float or kind is np.float64:
        return seed(value)
    if np.ndim(value) != 0:
        raise NonScalarOutput("the differentiated function", np.shape(value), "")
    dtype = getattr(value, "dtype", None)
    if (dtype.kind == "c" if isinstance(dtype, np.dtype) else isinstance(value, complex)):
        name, place = _described(adjoint)
        raise NonScalarOutput(name, (), place, f"a complex value ({kind.__name__})",
                              "complex differentiation is not supported yet (a real gradient would "
                              "silently lose the imaginary part); return a real quantity computed "
                              "from real parts instead")
    return seed(value)


def gradient_function(adjoint: Callable, *args: Any) -> tuple[Any, Any]:
    """The value and gradients of a scalar function, through its eager adjoint."""
    value, pullback = adjoint(*args)
    return value, pullback(unit_seed(value, adjoint))
