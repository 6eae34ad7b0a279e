"""``elementwise_grad``: the pullback of a cotangent of ones, autograd's elementwise_grad.

For ``y = f(x)`` it returns ``J^T 1``, the gradient of ``sum(f(x))``, with the
shape of ``x``. When ``f`` acts elementwise (its Jacobian is diagonal) that
is the derivative of each output element with respect to its own input
element; for any other ``f`` it is the sum of each column of the Jacobian,
which is not an elementwise derivative.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..values import zero
from .arguments import Wrt, choose_wrt, label
from .gradients import vjp
from .primitives import callable_for
from .blocks import is_float_leaf
from .trees import flatten

__all__ = ["elementwise_grad"]


def _ones_like(value: Any) -> Any:
    """A cotangent of ones with ``value``'s structure, shapes and dtypes (zero for a leaf that is not a float)."""
    leaves, unflatten = flatten(value)
    ones = []
    for leaf in leaves:
        if not is_float_leaf(leaf):
            ones.append(zero)
        elif isinstance(leaf, float):
            ones.append(1.0)
        else:
            ones.append(leaf * 0 + 1)  # the leaf's type, shape, dtype and library (a Dask array stays one)
    return unflatten(ones)


def elementwise_grad(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None,
                     eager: bool | None = None) -> Callable[..., Any]:
    """A function that returns the vjp of ``func`` with a cotangent of ones: the gradient of ``sum(func)``.

    ``wrt`` (or ``argnums``, its alias; position 0 by default) and ``eager``
    are as in ``value_and_grad``; with a tuple ``wrt`` the result is a tuple.
    ``func`` may return an array, a float, or a tuple, list or dict of them
    (each float leaf gets a cotangent of ones). When ``func`` acts
    elementwise (``y[i]`` depends on ``x[i]`` only: ufuncs, and functions
    built from them) the result is the elementwise derivative ``dy[i]/dx[i]``;
    for any other ``func`` it is ``J^T 1``, the sum of the Jacobian's rows,
    which is not. Like autograd's ``elementwise_grad``.

    >>> import numpy as np, adsrc
    >>> adsrc.elementwise_grad(np.tanh)(np.array([0.0, 1.0])).round(4).tolist()
    [1.0, 0.42]
    >>> def cube(x):
    ...     return x ** 3
    >>> adsrc.elementwise_grad(cube)(np.array([1.0, 2.0])).tolist()
    [3.0, 12.0]
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)

    def derivative(*args: Any, **kwargs: Any) -> Any:
        target = functools.partial(func, **kwargs) if kwargs else func
        value, pullback = vjp(target, *args, wrt=wrt, eager=eager)
        return pullback(_ones_like(value))

    derivative.__name__ = f"elementwise_grad_of_{label(func)}"
    derivative.__doc__ = f"The vjp of {label(func)} with a cotangent of ones (adsrc.elementwise_grad)."
    return derivative


