"""Helpers for tangent (jvp) rules, so that most of them are one line.

Most primitives are *multilinear*: linear in each differentiable argument when
the others are held fixed (reshape, sum, getitem, multiply, matmul, einsum,
concatenate...). Their jvp is the primitive itself applied to the tangent in
place of that argument, which :func:`multilinear` builds (and
``registry.deflinear`` registers along with the vjps). Tangents of containers
(the list argument of concatenate) may hold ``zero`` where an element has no
tangent; :func:`dense` turns those into zero arrays first, since NumPy cannot
concatenate a symbolic zero.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..values import zero
from ..values.arrays import zeros


def dense(t: Any, like: Any) -> Any:
    """``t`` with every ``zero`` leaf replaced by zeros shaped like the matching leaf of ``like``."""
    if t is zero:
        if isinstance(like, (list, tuple)):
            return type(like)(dense(zero, item) for item in like)
        return zeros(np.shape(like), np.result_type(like, 1.0), like)
    if isinstance(t, (list, tuple)) and isinstance(like, (list, tuple)):
        return type(like)(dense(a, b) for a, b in zip(t, like))
    return t


def multilinear(func: Callable, index: int = 0, **fixed: Any) -> Callable:
    """The jvp of argument ``index`` of a multilinear ``func``: ``func`` with the tangent in its place.

    ``fixed`` overrides keyword arguments whose value would make ``func``
    affine rather than linear (``initial=``, ``constant_values=``).
    """

    def jvp(t, ans, *args, **kwargs):
        args = list(args)
        args[index] = dense(t, args[index])
        return func(*args, **{**kwargs, **fixed} if fixed else kwargs)

    jvp.__name__ = f"{getattr(func, '__name__', 'f')}_multilinear_{index}"
    jvp.__adsrc_multilinear__ = (func, index, fixed)  # second order differentiates it as ``func``'s call
    return jvp


def multilinear_all(func: Callable, count: int, **fixed: Any) -> list[Callable]:
    """``multilinear(func, i)`` for each of the first ``count`` arguments."""
    return [multilinear(func, i, **fixed) for i in range(count)]


def without(kwargs: dict, *names: str) -> dict:
    """``kwargs`` minus ``names``."""
    return {k: v for k, v in kwargs.items() if k not in names}
