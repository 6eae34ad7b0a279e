"""The function that second order differentiates: a gradient computed through an eager adjoint.

``gradient_function(adjoint, *args)`` runs a compiled eager adjoint and its
pullback. The second-order pass transforms it from this source, and so the
adjoint, its pullback and the vjp rules they call, to differentiate a
gradient once more.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import NonScalarOutput
from ..values import seed


def unit_seed(value: Any) -> Any:
    """The unit cotangent of a scalar result (a non-scalar result is an error)."""
    if np.ndim(value) != 0:
        raise NonScalarOutput("the differentiated function", np.shape(value), "")
    return seed(value)


def gradient_function(adjoint: Callable, *args: Any) -> tuple[Any, Any]:
    """The value and gradients of a scalar function, through its eager adjoint."""
    value, pullback = adjoint(*args)
    return value, pullback(unit_seed(value))
