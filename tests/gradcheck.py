"""Finite-difference checking shared by the tests.

``check(f, *args, wrt=...)`` compares adsrc's gradients, in lazy and in eager
mode, with central finite differences in float64, and checks that both modes
agree with each other and leave the inputs untouched.
"""
from __future__ import annotations

import numpy as np

import adsrc


def numerical_grad(f, args, i, eps=1e-6):
    args = list(args)
    x = args[i]
    if isinstance(x, float):
        hi = f(*args[:i], x + eps, *args[i + 1:])
        lo = f(*args[:i], x - eps, *args[i + 1:])
        return (hi - lo) / (2 * eps)
    x = np.array(x, dtype=np.float64)
    g = np.zeros_like(x)
    for idx in np.ndindex(x.shape):
        xp, xm = x.copy(), x.copy()
        xp[idx] += eps
        xm[idx] -= eps
        g[idx] = (f(*args[:i], xp, *args[i + 1:]) - f(*args[:i], xm, *args[i + 1:])) / (2 * eps)
    return g


def check(f, *args, wrt=0, rtol=1e-5, atol=1e-7):
    """Assert adsrc's gradient of f matches finite differences in both modes; return it."""
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    results = {}
    for eager in (False, True):
        value, grads = adsrc.value_and_grad(f, wrt=positions, eager=eager)(*args)
        assert np.allclose(value, f(*args)), "the adjoint's value differs from f's"
        results[eager] = grads
        for a, b in zip(args, before):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b), "adsrc mutated an input"
    for k, i in enumerate(positions):
        expected = numerical_grad(f, args, i)
        for eager in (False, True):
            got = results[eager][k]
            assert np.shape(got) == np.shape(args[i]), (np.shape(got), np.shape(args[i]))
            assert type(got) is type(args[i]) or isinstance(args[i], np.ndarray)
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                       err_msg=f"gradient wrt argument {i}, eager={eager}")
        np.testing.assert_allclose(results[False][k], results[True][k], rtol=1e-12, atol=1e-12)
    grads = results[False]
    return grads if isinstance(wrt, tuple) else grads[0]
