"""Elementwise operations: arithmetic operators, ufuncs and their ``math`` twins."""
from __future__ import annotations

import numpy as np

from ..registry import defvjp, register_nondifferentiable
from ._util import replace_zero, unbroadcast

# Arithmetic. Operators in user code (+ - * / ** unary -) map to these ufuncs.
defvjp(np.add, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(g, y))
defvjp(np.subtract, lambda g, ans, x, y: unbroadcast(g, x), lambda g, ans, x, y: unbroadcast(-g, y))
defvjp(np.multiply, lambda g, ans, x, y: unbroadcast(g * y, x), lambda g, ans, x, y: unbroadcast(g * x, y))
defvjp(np.true_divide, lambda g, ans, x, y: unbroadcast(g / y, x), lambda g, ans, x, y: unbroadcast(-g * ans / y, y))
defvjp(
    np.power,
    lambda g, ans, x, y: unbroadcast(g * y * np.power(x, np.subtract(y, 1)), x),
    lambda g, ans, x, y: unbroadcast(g * ans * np.log(replace_zero(x, 1.0)), y),
)
defvjp(np.negative, lambda g, ans, x: -g)
defvjp(np.positive, lambda g, ans, x: g)

# Exponentials, logarithms, roots.
defvjp(np.exp, lambda g, ans, x: g * ans)
defvjp(np.log, lambda g, ans, x: g / x)
defvjp(np.sqrt, lambda g, ans, x: g / (2 * ans))

# Trigonometric and hyperbolic.
defvjp(np.sin, lambda g, ans, x: g * np.cos(x))
defvjp(np.cos, lambda g, ans, x: -g * np.sin(x))
defvjp(np.tanh, lambda g, ans, x: g * (1 - ans * ans))

register_nondifferentiable(np.floor_divide, np.sign, np.floor, np.ceil, np.round, np.rint)
