"""Tangent (jvp) rules of the products and contractions in linalg.py.

Every product here is multilinear, so each argument's jvp is the product with
that argument's tangent in its place (``_tangent.linear``); the diagonal and
triangle extractions are linear outright. multi_dot takes a list of matrices,
so its tangent is one product per matrix that has a tangent.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, lookup
from ._tangent import linear, linear_all
from ._util import zero

_PRODUCTS = [np.matmul, np.dot, np.inner, np.tensordot, np.outer, np.kron, np.vdot, np.cross]
_PRODUCTS += [getattr(np.linalg, n) for n in ("matmul", "vecdot", "outer", "tensordot", "cross") if hasattr(np.linalg, n)]
_PRODUCTS += [np.vecdot] if hasattr(np, "vecdot") else []
_EXTRACTIONS = [np.trace, np.diagonal, np.diag, np.diagflat, np.triu, np.tril]
_EXTRACTIONS += [getattr(np.linalg, n) for n in ("trace", "diagonal") if hasattr(np.linalg, n)]


def _multi_dot_jvp(t, ans, arrays, *, out=None):
    """The sum over matrices of the chain with that matrix replaced by its tangent."""
    total = zero
    for i, ti in enumerate(t):
        if ti is not zero:
            total = total + np.linalg.multi_dot([*arrays[:i], ti, *arrays[i + 1:]])
    return total


for _f in _PRODUCTS:
    if lookup(_f) is not None:
        defjvp(_f, *linear_all(_f, 2))
for _f in _EXTRACTIONS:
    defjvp(_f, linear(_f), linear=True)
defjvp(np.einsum, None, *(linear(np.einsum, i) for i in range(1, len(lookup(np.einsum).vjps))))
defjvp(np.linalg.multi_dot, _multi_dot_jvp)
