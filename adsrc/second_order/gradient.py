"""The function that second order differentiates: a gradient computed through an eager adjoint.

``gradient_function(adjoint, *args)`` runs a compiled eager adjoint and its
pullback. The second-order pass transforms it from this source, and so the
adjoint, its pullback and the vjp rules they call, to differentiate a
gradient once more.
"""
from __future__ import annotations

import re
from typing import Any, Callable


from ..values import check_real_scalar, seed


# The file name codegen gives an adjoint: "<adsrc adjoint 3 of f (/path/to/file.py:12)>".
_GENERATED = re.compile(r"^<adsrc adjoint \d+ of (.+) \((.+:\d+)\)>$")


def _described(adjoint: Callable | None) -> tuple[str, str]:
    """The differentiated function's name and ``file:line``, read from its adjoint where possible."""
    code = getattr(adjoint, "__code__", None)
    match = _GENERATED.match(code.co_filename) if code is not None else None
    return (match.group(1), match.group(2)) if match else ("the differentiated function", "")


def unit_seed(value: Any, adjoint: Callable | None = None) -> Any:
    """The unit cotangent of a real scalar result; anything else is refused as grad refuses it.
    ``adjoint``, the compiled adjoint that computed ``value``, names the function in the message."""
    if type(value) is not float:
        check_real_scalar(value, *_described(adjoint))
    return seed(value)


def gradient_function(adjoint: Callable, *args: Any) -> tuple[Any, Any]:
    """The value and gradients of a scalar function, through its eager adjoint."""
    value, pullback = adjoint(*args)
    return value, pullback(unit_seed(value, adjoint))


def pulled_back(adjoint: Callable, cotangent: Any, *args: Any) -> Any:
    """The gradients ``J(args)^T cotangent`` of any function, through its eager adjoint's pullback."""
    value, pullback = adjoint(*args)
    return pullback(cotangent)
