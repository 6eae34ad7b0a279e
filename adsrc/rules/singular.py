"""Products with a derivative that may be infinite or undefined: a zero cotangent contributes exactly zero.

Rules whose derivative is infinite or undefined at some input (sqrt and cbrt
at 0, log at 0, arcsin at 1, x**0.5 at 0, a quotient's at a zero divisor)
multiply their cotangent through :func:`times`, and specialized code that
inlines such a rule's template calls it too (``singular.times(g, ...)``,
rules/templates.py), so that both give the same value bit for bit.

>>> import numpy as np
>>> from adsrc.rules.singular import times
>>> float(times(0.0, np.inf)), float(times(2.0, 3.0))
(0.0, 6.0)
"""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from ..values.arrays import is_lazy

__all__ = ["times", "zero_where_zero"]

_SCALARS = (float, np.float64)


def times(g: Any, d: Any) -> Any:
    """``g * d``, except that a zero ``g`` gives exactly zero even where ``d`` is infinite or NaN.

    A zero cotangent (or tangent) means the result does not depend on this
    element (a branch ``np.where`` discarded, an input that does not move), so
    its contribution is zero whatever the derivative there: the convention
    0 * inf = 0. Elementwise rules whose derivative is infinite or undefined at
    some input (sqrt and cbrt at 0, log at 0, arcsin at 1, x**0.5 at 0, sqrt of
    a negative number in a discarded branch) multiply through this, so that
    ``np.where(x > 0, np.sqrt(x), 0.0)`` has gradient 0, not NaN, at x <= 0.
    Where ``g`` is not zero, an infinite derivative stays infinite.
    """
    return zero_where_zero(g * d, g)


def zero_where_zero(out: Any, g: Any) -> Any:
    """``out`` (a product or quotient of ``g``) with exact zeros where ``g`` is zero, if it is not finite.

    The finite case, by far the common one, costs one check; see :func:`times`. A number stays a number of
    its type (a Python float or a NumPy float64).
    """
    if type(out) in _SCALARS:
        if g == 0 and not math.isfinite(out):
            return type(out)(0.0)
        return out
    if not is_lazy(out) and np.isfinite(out).all():  # a Dask array is not computed to decide
        return out
    return np.where(np.equal(g, 0), 0, out)
