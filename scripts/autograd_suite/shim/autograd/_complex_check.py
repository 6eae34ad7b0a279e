"""check_grads where complex numbers appear, while adsrc.check_grads checks real floats only.

adsrc's convention (docs/complex.md) pairs a vjp with a jvp through
``Re(sum(a * b))``: ``Re(sum(pullback(u) * t)) == Re(sum(u * jvp(t)))``. The
check draws a random direction ``t`` (complex for a complex argument) and
compares central finite differences ``(f(x + eps t) - f(x - eps t)) / 2 eps``
with adsrc.jvp (``"fwd"``) and, through a random cotangent ``u`` (complex
for a complex output), with adsrc.vjp (``"rev"``). Order 2 checks the
gradient of ``Re(sum(u * f(x)))`` the same way, forward over reverse.
"""
from __future__ import annotations

import linecache
from typing import Any, Callable

import numpy as np

import adsrc
from adsrc.api.trees import flatten, leaf_paths

EPS, ATOL, RTOL = 1e-6, 1e-5, 1e-5


def differentiable(leaf: Any) -> bool:
    if isinstance(leaf, (bool, np.bool_)) or not isinstance(leaf, (float, complex, int, np.ndarray, np.generic)):
        return False
    return np.result_type(leaf).kind in "fc"


def has_complex(tree: Any) -> bool:
    return any(differentiable(leaf) and np.iscomplexobj(leaf) for leaf in flatten(tree)[0])


class ComplexCheck:
    def __init__(self, seed: int = 0):
        self.rng = np.random.default_rng(seed)

    def random_like(self, tree: Any) -> Any:
        leaves, unflatten = flatten(tree)
        out = []
        for leaf in leaves:
            if not differentiable(leaf):
                out.append(0.0)
                continue
            shape = np.shape(leaf)
            value = self.rng.standard_normal(shape)
            if np.iscomplexobj(leaf):
                value = value + 1j * self.rng.standard_normal(shape)
            if isinstance(leaf, np.ndarray):
                out.append(value.astype(leaf.dtype))
            elif isinstance(leaf, np.generic):
                out.append(leaf.dtype.type(value))
            else:
                out.append(type(leaf)(value) if not isinstance(leaf, int) else float(value))
        return unflatten(out)

    def first_order(self, f: Callable, xs: tuple, modes: tuple, label: str) -> None:
        for i in range(len(xs)):
            t = self.random_like(xs[i])
            high = f(*xs[:i], _moved(xs[i], t, EPS), *xs[i + 1:])
            low = f(*xs[:i], _moved(xs[i], t, -EPS), *xs[i + 1:])
            pairs = [(h, lo) for h, lo in zip(flatten(high)[0], flatten(low)[0])]
            difference = [(np.asarray(h) - np.asarray(lo)) / (2 * EPS) if differentiable(h) else None
                          for h, lo in pairs]
            name = getattr(f, "__name__", "f")
            if "fwd" in modes:
                tangent = adsrc.jvp(f, xs, tuple(t if j == i else None for j in range(len(xs))))[1]
                for got, expected in zip(flatten(tangent)[0], difference):
                    if expected is not None:
                        _compare(got, expected, f"{label}forward mode (jvp) of {name}, argument {i}")
            if "rev" in modes:
                value, pullback = adsrc.vjp(f, *xs, wrt=i)
                u = self.random_like(value)
                gradient = pullback(u)
                exact = _pairing(flatten(gradient)[0], flatten(t)[0])
                numeric = sum(float(np.real(np.sum(np.asarray(a) * b))) for a, b in zip(flatten(u)[0], difference)
                              if b is not None)
                _compare(exact, numeric, f"{label}reverse mode (vjp) of {name}, argument {i}")

    def check(self, f: Callable, xs: tuple, modes: tuple, order: int) -> None:
        self.first_order(f, xs, modes, "")
        if order >= 2:
            contracted = self.contracted(f, xs)
            gradient = adsrc.grad(contracted, wrt=tuple(range(len(xs))))
            self.first_order(gradient, xs, modes, "second order (complex check): ")

    def contracted(self, f: Callable, xs: tuple) -> Callable:
        """``Re(sum_k sum(u_k * f(*xs)_k))`` for random ``u_k``, as Python source adsrc can read."""
        value = f(*xs)
        namespace: dict[str, Any] = {"np": np, "f": f}
        terms = []
        for k, (path, leaf) in enumerate(leaf_paths(value)):
            if differentiable(leaf):
                namespace[f"u{k}"] = self.random_like(leaf)
                terms.append(f"np.real(np.sum(out{''.join(f'[{key!r}]' for key in path)} * u{k}))")
        parameters = ", ".join(f"x{i}" for i in range(len(xs)))
        source = (f"def contracted({parameters}):\n    out = f({parameters})\n"
                  f"    return {' + '.join(terms) or '0.0'}\n")
        filename = f"<autograd shim complex check {id(namespace)}>"
        linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
        exec(compile(source, filename, "exec"), namespace)
        return namespace["contracted"]


def _moved(x: Any, t: Any, step: float) -> Any:
    leaves, unflatten = flatten(x)
    out = []
    for leaf, d in zip(leaves, flatten(t)[0]):
        if not differentiable(leaf):
            out.append(leaf)
        elif isinstance(leaf, np.ndarray):
            out.append((leaf + step * d).astype(leaf.dtype))
        elif isinstance(leaf, np.generic):
            out.append(leaf.dtype.type(leaf + step * d))
        else:
            out.append(type(leaf)(leaf + step * d) if not isinstance(leaf, int) else float(leaf + step * d))
    return unflatten(out)


def _pairing(a: list, b: list) -> float:
    return sum(float(np.real(np.sum(np.asarray(x) * np.asarray(y)))) for x, y in zip(a, b))


def _compare(got: Any, expected: Any, what: str) -> None:
    got, expected = np.asarray(got, dtype=complex), np.asarray(expected, dtype=complex)
    error = np.abs(got - expected)
    if not np.all(np.isfinite(got)) or np.any(error > ATOL + RTOL * np.abs(expected)):
        raise AssertionError(f"check_grads: {what} differs from central finite differences by up to "
                             f"{float(np.max(error)):.3g} (complex check of the shim)")
