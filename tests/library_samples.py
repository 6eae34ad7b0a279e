"""Samples for the rules of optional libraries (SciPy), merged into rule_samples.SAMPLES.

Keyed by qualified name like the others; a rule that is not registered (SciPy
not installed) has no generated test, so these samples are then unused. Every
differentiable argument of every rule is exercised by at least one case.
"""
from __future__ import annotations

import numpy as np

from rule_samples import C, Spec, arr, binary, flt, pflt, pos, spd, unary, unit, wellcond, with_zero


def inside(*shape):
    """Values in (0.1, 0.9): the domain of logit, and of beta distributions."""
    return arr(*shape, lo=0.1, hi=0.9)


def integers(lo, hi, *shape):
    return Spec(lambda rng: rng.integers(lo, hi, shape))


def lower_triangular(n, *batch):
    """Well-conditioned lower-triangular matrices (for solve_triangular and cho_solve)."""
    return Spec(lambda rng: np.tril(2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, batch + (n, n))))


def upper_triangular(n, *batch):
    return Spec(lambda rng: np.triu(2.0 * np.eye(n) + rng.uniform(-0.5, 0.5, batch + (n, n))))


def small(*shape):
    """Matrices of norm well below 1 (for expm, whose series then converges fast)."""
    return arr(*shape, lo=-0.5, hi=0.5)


SPECIAL = {
    "scipy.special.expit": unary(),
    "scipy.special.logit": unary(inside),
    "scipy.special.erf": unary(),
    "scipy.special.erfc": unary(),
    "scipy.special.erfinv": unary(unit),
    "scipy.special.gamma": unary(pos) + [C(arr(3, lo=-2.7, hi=-2.3))],
    "scipy.special.gammaln": unary(pos) + [C(arr(3, lo=-1.8, hi=-1.2))],
    "scipy.special.digamma": unary(pos),
    "scipy.special.polygamma": [C(1, pos(3)), C(np.array([0, 1, 2]), pos(3)), C(2, pos(2, 1)), C(0, pflt())],
    "scipy.special.beta": binary(pos, pos, pflt),
    "scipy.special.betaln": binary(pos, pos, pflt),
    "scipy.special.xlogy": binary(arr, pos, pflt) + [C(with_zero(arr(3)), pos(3))],
    "scipy.special.xlog1py": binary(arr, pos, pflt) + [C(with_zero(arr(3)), pos(3))],
    "scipy.special.logsumexp": [
        C(arr(3, 4)), C(arr(3, 4), axis=0), C(arr(2, 3, 4), (0, 2), keepdims=True), C(arr(3, 4), 1, pos(3, 4)),
        C(arr(2, 3), None, pos(3), True), C(arr(3, 4), 1, pos(3, 4), False, True), C(arr()),
    ],
    "scipy.special.softmax": [C(arr(3, 4)), C(arr(3, 4), axis=1), C(arr(2, 3, 4), (0, 2)), C(arr(4), 0)],
    "scipy.special.log_softmax": [C(arr(3, 4)), C(arr(3, 4), axis=1), C(arr(2, 3, 4), (0, 2)), C(arr(4), 0)],
}

LIBRARY_SAMPLES = {**SPECIAL}
