"""Correctness checks shared by the runner and tests: closeness, finite differences.

A benchmark table is only worth reading if every gradient in it is right, so
the runner checks each system's answer (the 'ok' column) and the tests check
the hand-written reference against central finite differences.
"""
from __future__ import annotations

import numpy as np


def to_numpy(g):
    """A gradient from any system (ndarray, float, jax or torch array) as float64."""
    if hasattr(g, "detach"):  # torch
        g = g.detach().cpu().numpy()
    return np.asarray(g, dtype=np.float64)


def close(a, b, rtol):
    """Tuples of gradients agree to ``rtol``, relative to the largest entry of b.

    The absolute tolerance scales with b so that exact zeros in one system and
    1e-17 in another (different summation order) do not count as a mismatch.
    """
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        x, y = to_numpy(x), to_numpy(y)
        if x.shape != y.shape:
            return False
        scale = max(1.0, float(np.max(np.abs(y)))) if y.size else 1.0
        if not np.allclose(x, y, rtol=rtol, atol=rtol * scale):
            return False
    return True


def _with(args, i, value):
    return args[:i] + (value,) + args[i + 1:]


def directional_fd_ok(f, args, wrt, grads, eps=1e-6, rtol=1e-5):
    """Compare <grads, d> with a central difference of f along a random d.

    Two calls of f check every differentiated argument at once, cheap enough
    to run on the full-size workloads inside the benchmark.
    """
    rng = np.random.default_rng(1)
    plus, minus, predicted = args, args, 0.0
    for i, g in zip(wrt, grads):
        x = args[i]
        d = rng.standard_normal(np.shape(x))
        predicted += float(np.sum(to_numpy(g) * d))
        if isinstance(x, float):
            d = float(d)
        plus = _with(plus, i, x + eps * d)
        minus = _with(minus, i, x - eps * d)
    measured = (float(f(*plus)) - float(f(*minus))) / (2 * eps)
    return abs(measured - predicted) <= rtol * max(1.0, abs(predicted))


def fd_entries(f, args, i, entries, eps=1e-6):
    """Central differences of f wrt the given flat entries of argument i."""
    x = args[i]
    if isinstance(x, float):
        return np.array([(f(*_with(args, i, x + eps)) - f(*_with(args, i, x - eps))) / (2 * eps)])
    out = []
    for k in entries:
        xp, xm = x.copy(), x.copy()
        xp.flat[k] += eps
        xm.flat[k] -= eps
        out.append((f(*_with(args, i, xp)) - f(*_with(args, i, xm))) / (2 * eps))
    return np.array(out)
