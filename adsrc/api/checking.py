"""``check_grads``: adsrc's derivatives of a function against central finite differences.

For each argument that holds floats (an array, a float, or a tuple, list or
dict of them), ``check_grads`` draws a random direction ``t`` and compares
the central difference ``(f(x + eps t) - f(x - eps t)) / 2 eps`` with the
forward mode's ``jvp`` in that direction (``"fwd"``), and with the reverse
mode's gradient through a random cotangent ``u``: ``<vjp(u), t>`` against
``<u, difference>`` (``"rev"``). ``order=2`` then checks the gradient itself
the same way: ``jvp(grad(f))`` and ``vjp(grad(f))``, both forward over
reverse. For an ``f`` that is not a real scalar, order 2 checks the
scalar ``sum_k <u_k, f(*args)_k>`` for fixed random ``u`` (its gradient is
the vjp of ``f`` with cotangent ``u``), a function written as Python source
so that adsrc can differentiate it like any other.
"""
from __future__ import annotations

import re
from typing import Any, Callable, Sequence

import numpy as np

from ..backend.codegen import load
from ..errors import InvalidArgument
from .arguments import parameter_names
from .derivative import Derivative
from .forward import jvp
from .gradients import grad, vjp
from .blocks import is_float_leaf
from .trees import flatten, leaf_paths
from .primitives import callable_for
from ..rules.given import repeated

jvp, vjp = repeated(jvp, "check_grads"), repeated(vjp, "check_grads")

_MODES = ("fwd", "rev")


def check_grads(func: Callable, args: Sequence[Any], order: int = 1, modes: Sequence[str] = _MODES, *,
                eps: float | None = None, atol: float | None = None, rtol: float | None = None,
                seed: int = 0) -> None:
    """Check ``func``'s derivatives at ``args`` against central finite differences, like JAX's check_grads.

    ``args`` is the tuple of arguments. Every argument whose leaves are all
    floats (a float, an array, or a tuple, list or dict of them) is checked,
    each in its own random direction; the others (integers, strings, or
    containers holding any) are held fixed. ``modes`` picks forward mode
    (``"fwd"``: jvp) and reverse mode (``"rev"``: vjp with a random
    cotangent); ``order=2`` also checks the derivatives of ``grad(f)`` (jvp
    and vjp of a gradient, forward over reverse), or for an ``f`` that is not
    a real scalar, of ``grad`` of ``sum(u * f)`` for a random ``u``; each
    order above does the same to the gradient of the order below. ``eps`` is the finite-difference step and a check passes where
    ``|adsrc - differences| <= atol + rtol * |differences|``; the defaults
    are eps 1e-6 and atol = rtol = 1e-5 when every float is float64, eps
    1e-3 and atol = rtol = 1e-2 otherwise. ``seed`` seeds the random
    directions. Returns None when every check passes, and raises an
    AssertionError naming the mode, the argument and the largest error when
    one fails.

    >>> import numpy as np, adsrc
    >>> def f(x, y):
    ...     return np.sin(x) * y
    >>> adsrc.check_grads(f, (np.array([0.5, 1.0]), 2.0), order=2)
    >>> def loss(params, x):
    ...     return np.sum(np.tanh(params["w"] @ x + params["b"]) ** 2)
    >>> params = {"w": np.full((2, 3), 0.1), "b": np.zeros(2)}
    >>> adsrc.check_grads(loss, (params, np.ones(3)), order=2)
    >>> def log_with_a_wrong_rule(x):
    ...     return np.log(x)
    >>> _ = adsrc.register_adjoint(log_with_a_wrong_rule, lambda g, ans, x: g * x)  # should be g / x
    >>> def model(x):
    ...     return log_with_a_wrong_rule(x) * 2.0
    >>> adsrc.check_grads(model, (2.0,), modes=("rev",))  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    AssertionError: check_grads: reverse mode (vjp) of model with respect to argument 0 ('x') differs from ...
    """
    if not isinstance(args, (tuple, list)):
        raise InvalidArgument(f"check_grads(f, args): args is the tuple of arguments, not a "
                              f"{type(args).__name__} (write (x,) for a single argument)")
    if isinstance(order, bool) or not isinstance(order, int) or order < 1:
        raise InvalidArgument(f"check_grads checks order 1, 2, 3, ..., not {order!r}")
    unknown = [m for m in modes if m not in _MODES]
    if unknown or not modes or isinstance(modes, str):
        raise InvalidArgument(f"modes is a tuple of 'fwd' and 'rev', not {modes!r}")
    args = tuple(args)
    func = callable_for(func)
    if any(np.iscomplexobj(leaf) for a in args for leaf in flatten(a)[0]
           if isinstance(leaf, (complex, np.ndarray, np.generic))):
        raise InvalidArgument("check_grads checks real floating-point arguments, and this call has a complex one: "
                              "it would pass without checking it. Check a function of the real and imaginary "
                              "parts (z = x + 1j * y) instead")
    floats = [leaf for a in args for leaf in flatten(a)[0] if is_float_leaf(leaf)]
    exact = all(np.result_type(leaf) == np.float64 for leaf in floats)
    eps = (1e-6 if exact else 1e-3) if eps is None else eps
    atol = (1e-5 if exact else 1e-2) if atol is None else atol
    rtol = (1e-5 if exact else 1e-2) if rtol is None else rtol
    check = _Checker(func, args, eps, atol, rtol, np.random.default_rng(seed))
    check.first_order(func, modes, "")
    for level in range(2, order + 1):  # the derivatives of the gradient of the order below
        if not check.checked:
            break
        value = func(*args)
        which = "second order" if level == 2 else f"order {level}"
        if isinstance(value, (tuple, list, dict)) or np.ndim(value) != 0 or not is_float_leaf(value):
            label = f"{which}, through np.sum(u * {_name(func)}(...)) for a random u: "
            func = _contracted(func, len(args), value, check)
        else:
            label = f"{which}: "
        func = grad(func, tuple(check.checked))
        check.first_order(func, modes, label)


def _contracted(func: Callable, count: int, value: Any, check: "_Checker") -> Callable:
    """``sum_k np.sum(f(*args)_k * u_k)`` over the float leaves of ``f``'s output, for random ``u_k``."""
    namespace: dict[str, Any] = {"np": np, "f": func}
    terms = []
    for k, (path, leaf) in enumerate(leaf_paths(value)):
        if not is_float_leaf(leaf):
            continue
        if not all(type(key) in (int, str) for key in path):
            raise InvalidArgument(f"check_grads(order=2): {_name(func)} returned a dict with a key of type "
                                  f"{type(next(key for key in path if type(key) not in (int, str))).__name__}; "
                                  f"order 2 reads non-scalar outputs through keys that are strings or integers")
        namespace[f"u{k}"] = check.random_like(leaf)
        terms.append(f"np.sum(out{''.join(f'[{key!r}]' for key in path)} * u{k})")
    parameters = ", ".join(f"x{i}" for i in range(count))
    name = "contracted_" + re.sub(r"\W", "_", getattr(func, "__name__", "f"))  # a lambda is "<lambda>"
    source = (f"def {name}({parameters}):\n"
              f"    out = f({parameters})\n"
              f"    return {' + '.join(terms) or '0.0'}\n")
    return load(source, f"check_grads of {_name(func)}", namespace, name)


def _name(func: Callable) -> str:
    return func.describe() if isinstance(func, Derivative) else getattr(func, "__name__", repr(func))


class _Checker:
    """One call of check_grads: the arguments, the tolerances, the random directions."""

    def __init__(self, func: Callable, args: tuple, eps: float, atol: float, rtol: float,
                 rng: np.random.Generator):
        self.args, self.eps, self.atol, self.rtol, self.rng = args, eps, atol, rtol, rng
        self.names = parameter_names(func.root if isinstance(func, Derivative) else func)
        self.checked = [i for i, a in enumerate(args) if flatten(a)[0] and all(map(is_float_leaf, flatten(a)[0]))]

    def first_order(self, func: Callable, modes: Sequence[str], label: str) -> None:
        for i in self.checked:
            t = self.random_like(self.args[i])
            difference, floats = self._difference(func, i, t)
            if "fwd" in modes:
                tangents = tuple(t if j == i else None for j in range(len(self.args)))
                tangent = jvp(func, self.args, tangents)[1]
                pairs = [(a, b) for a, b, f in zip(flatten(tangent)[0], flatten(difference)[0], floats) if f]
                self._compare([a for a, _ in pairs], [b for _, b in pairs], f"{label}forward mode (jvp)", func, i)
            if "rev" in modes:
                value, pullback = vjp(func, *self.args, wrt=i)
                u = self.random_like(value)
                gradient = pullback(u)
                self._compare([_inner(gradient, t)], [_inner(u, difference)],
                              f"{label}reverse mode (vjp)", func, i)

    def _difference(self, func: Callable, i: int, t: Any) -> tuple[Any, list[bool]]:
        """The central difference of ``func`` at ``args`` in the direction ``t`` of argument ``i`` (zero
        at the output's leaves that are not floats), and which of the output's leaves are floats."""
        def at(step: float) -> Any:
            moved = _combine(self.args[i], t, step)
            return func(*self.args[:i], moved, *self.args[i + 1:])
        high, high_unflatten = flatten(at(self.eps))
        low = flatten(at(-self.eps))[0]
        floats = [is_float_leaf(h) for h in high]
        return high_unflatten([(np.asarray(h) - np.asarray(lo)) / (2 * self.eps) if f else 0.0
                               for h, lo, f in zip(high, low, floats)]), floats

    def random_like(self, tree: Any) -> Any:
        leaves, unflatten = flatten(tree)
        out = []
        for leaf in leaves:
            if not is_float_leaf(leaf):
                out.append(0.0)
            elif isinstance(leaf, np.ndarray):
                out.append(self.rng.standard_normal(leaf.shape).astype(leaf.dtype))
            elif isinstance(leaf, np.generic):
                out.append(leaf.dtype.type(self.rng.standard_normal()))
            else:
                out.append(float(self.rng.standard_normal()))
        return unflatten(out)

    def _compare(self, got: list, expected: list, what: str, func: Callable, i: int) -> None:
        worst, worst_allowed = 0.0, 0.0
        failed = False
        for a, b in zip(got, expected):
            a, b = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
            error = np.abs(a - b)
            allowed = self.atol + self.rtol * np.abs(b)
            if error.size and (not np.all(np.isfinite(a)) or np.any(error > allowed)):
                failed = True
            if error.size:
                worst, worst_allowed = max(worst, float(np.max(error))), max(worst_allowed, float(np.max(allowed)))
        if failed:
            name = f" ({self.names[i]!r})" if i < len(self.names) else ""
            raise AssertionError(
                f"check_grads: {what} of {_name(func)} with respect to argument {i}{name} differs from central "
                f"finite differences by up to {worst:.3g} (allowed: atol {self.atol:g} + rtol {self.rtol:g} "
                f"* |expected|, up to {worst_allowed:.3g}; eps {self.eps:g})")


def _combine(x: Any, t: Any, step: float) -> Any:
    """``x + step * t`` leaf by leaf, each leaf keeping its type."""
    leaves, unflatten = flatten(x)
    moved = []
    for leaf, d in zip(leaves, flatten(t)[0]):
        if isinstance(leaf, np.ndarray):
            moved.append((leaf + step * d).astype(leaf.dtype))
        elif isinstance(leaf, np.generic):
            moved.append(leaf.dtype.type(leaf + step * d))
        else:
            moved.append(float(leaf + step * d))
    return unflatten(moved)


def _inner(a: Any, b: Any) -> float:
    """The sum of the elementwise products of two trees of the same structure."""
    return float(sum(np.vdot(np.asarray(x, dtype=np.float64), np.asarray(y, dtype=np.float64))
                     for x, y in zip(flatten(a)[0], flatten(b)[0])))
