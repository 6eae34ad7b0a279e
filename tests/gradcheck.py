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


# ---- complex values (docs/complex.md) --------------------------------------------------
# adsrc's convention is autograd's: the gradient of a real f at z = x + iy is df/dx - i df/dy,
# and a vjp is the transpose of the derivative: Re(sum(vjp(g) * v)) == Re(sum(g * J v)).
def complex_numerical_grad(f, args, i, eps=1e-6):
    """df/dx - i df/dy for each element of argument ``i`` (a complex scalar or array), by central differences."""
    args = list(args)
    x = args[i]
    scalar = not isinstance(x, np.ndarray)
    x = np.array(x, dtype=np.complex128)
    g = np.zeros_like(x)

    def at(value):
        return f(*args[:i], complex(value) if scalar else value, *args[i + 1:])

    for idx in np.ndindex(x.shape):
        parts = []
        for step in (eps, 1j * eps):
            xp, xm = x.copy(), x.copy()
            xp[idx] += step
            xm[idx] -= step
            parts.append((at(xp) - at(xm)) / (2 * eps))
        g[idx] = parts[0] - 1j * parts[1]
    return complex(g) if scalar else g


def random_like(value, rng):
    """A random direction (or cotangent) with ``value``'s shape, complex if ``value`` is."""
    shape = np.shape(value)
    out = rng.standard_normal(shape)
    if np.iscomplexobj(value):
        out = out + 1j * rng.standard_normal(shape)
    if isinstance(value, np.ndarray):
        return out
    return complex(out) if np.iscomplexobj(value) else float(out)


def numerical_jvp(f, args, tangents, eps=1e-6):
    """The central difference of f along ``tangents`` (one per argument, None for a fixed one)."""
    def moved(sign):
        return [a if t is None else a + sign * eps * t for a, t in zip(args, tangents)]
    return (np.asarray(f(*moved(1))) - np.asarray(f(*moved(-1)))) / (2 * eps)


def check_complex(f, *args, wrt=0, rtol=1e-5, atol=1e-7, second_order=True, seed=0):
    """Assert adsrc's gradient of a real-valued f of complex (or mixed) arguments matches finite differences,
    lazy and eager, and that forward mode and (with ``second_order``) the jvp of the gradient do too."""
    rng = np.random.default_rng(seed)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    before = [np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args]
    results = {}
    for eager in (False, True):
        value, grads = adsrc.value_and_grad(f, wrt=positions, eager=eager)(*args)
        assert np.allclose(value, f(*args))
        results[eager] = grads
        for a, b in zip(args, before):
            if isinstance(a, np.ndarray):
                assert np.array_equal(a, b), "adsrc mutated an input"
    for k, i in enumerate(positions):
        complex_arg = np.iscomplexobj(args[i])
        expected = complex_numerical_grad(f, args, i) if complex_arg else numerical_grad(f, args, i)
        for eager in (False, True):
            got = results[eager][k]
            assert np.shape(got) == np.shape(args[i])
            assert np.iscomplexobj(got) == complex_arg, f"argument {i}: gradient dtype {np.result_type(got)}"
            np.testing.assert_allclose(got, expected, rtol=rtol, atol=atol,
                                       err_msg=f"gradient wrt argument {i}, eager={eager}")
        np.testing.assert_allclose(results[False][k], results[True][k], rtol=1e-12, atol=1e-12)
    tangents = [random_like(a, rng) if i in positions else None for i, a in enumerate(args)]
    _, tangent_out = adsrc.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(tangent_out, numerical_jvp(f, args, tangents), rtol=rtol, atol=1e-6,
                               err_msg="forward mode")
    # The jvp is the transpose pairing of the gradient: Re(sum(grad * v)) == df along v.
    paired = sum(float(np.real(np.sum(results[False][k] * tangents[i]))) for k, i in enumerate(positions))
    np.testing.assert_allclose(paired, tangent_out, rtol=rtol, atol=1e-6, err_msg="gradient against the jvp")
    if second_order:
        gradient = adsrc.grad(f, wrt=positions)
        _, second = adsrc.jvp(gradient, tuple(args), tuple(tangents))
        expected = [numerical_jvp(lambda *a, k=k: np.asarray(gradient(*a)[k]), args, tangents)
                    for k in range(len(positions))]
        for k in range(len(positions)):
            np.testing.assert_allclose(second[k], expected[k], rtol=1e-4, atol=1e-5,
                                       err_msg=f"second order, gradient {k}")
    grads = results[False]
    return grads if isinstance(wrt, tuple) else grads[0]


def check_complex_vjp(f, *args, wrt=0, rtol=1e-5, atol=1e-6, seed=0):
    """Assert the pullback of an array-valued (possibly complex) f is the transpose of its derivative:
    Re(sum(pullback(g) * v)) == Re(sum(g * (f(x + eps v) - f(x - eps v)) / 2 eps)), lazy and eager."""
    rng = np.random.default_rng(seed)
    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    tangents = [random_like(a, rng) if i in positions else None for i, a in enumerate(args)]
    numeric = numerical_jvp(f, args, tangents)
    for eager in (False, True):
        value, pullback = adsrc.vjp(f, *args, wrt=positions, eager=eager)
        g = random_like(value, rng)
        grads = pullback(g)
        for k, i in enumerate(positions):
            assert np.iscomplexobj(grads[k]) == np.iscomplexobj(args[i])
        got = sum(float(np.real(np.sum(grads[k] * tangents[i]))) for k, i in enumerate(positions))
        want = float(np.real(np.sum(g * numeric)))
        np.testing.assert_allclose(got, want, rtol=rtol, atol=atol, err_msg=f"eager={eager}")
    _, tangent_out = adsrc.jvp(f, tuple(args), tuple(tangents))
    np.testing.assert_allclose(tangent_out, numeric, rtol=rtol, atol=atol, err_msg="forward mode")
