"""``scipy.integrate.odeint`` differentiated: the adjoint method backward, the sensitivities forward.

``ys = odeint(func, y0, t, (theta,))`` integrates ``dy/dt = func(y, t, *args)``.
Its vjp (autograd's approach) integrates the adjoint ODE backward from each
time point to the one before, with odeint itself, on the augmented state
``[y, a, a_args]``:

    dy/dt = func(y, t, *args),  da/dt = -a^T df/dy,  da_args/dt = -a^T df/dargs

where ``a^T df/dy`` and ``a^T df/dargs`` come from ``adsrc.vjp`` of ``func``, and
each time point's cotangent is added to ``a`` as the integration passes it. Its
jvp integrates the sensitivity ``s = dy`` forward, ``ds/dt = df/dy s + df/dargs
dargs``, with ``adsrc.jvp`` of ``func``. ``func`` is any function adsrc
differentiates; the tolerances and other keywords of the call are used for
these integrations too. Differentiable: ``y0`` and the float items of ``args``
(a tuple, passed by position); not ``t``, nor what ``func`` captures (refused,
naming the line). A second derivative through odeint is refused.

>>> import numpy as np, adsrc
>>> from scipy.integrate import odeint
>>> def decay(y, t, k):
...     return -k * y
>>> def final(k):
...     return odeint(decay, np.array([1.0]), np.array([0.0, 1.0]), (k,), rtol=1e-10, atol=1e-12)[-1, 0]
>>> bool(np.isclose(adsrc.grad(final)(0.5), -np.exp(-0.5), rtol=1e-6))
True
"""
from __future__ import annotations

import sys
from typing import Any, Callable

import numpy as np

from ..errors import InvalidArgument
from ..rules.registry import computed_once, defjvp, defvjp, on_miss
from ..values import TangentTuple, is_zero, part, unthunk, zero
from .arguments import label, where
from .forward import jvp
from .gradients import vjp

_UNSUPPORTED = ("Dfun", "full_output")


def _float_items(args: tuple) -> list[int]:
    return [i for i, a in enumerate(args) if not isinstance(a, (bool, int, np.integer))
            and np.issubdtype(np.result_type(a), np.floating)]


def _check(func: Callable, y0: Any, options: dict) -> None:
    given = [k for k in _UNSUPPORTED if options.get(k)]
    if given or np.ndim(y0) != 1:
        what = f"{', '.join(given)}=" if given else f"a y0 of shape {np.shape(y0)}"
        raise InvalidArgument(f"differentiating odeint({label(func)}, ...) ({where(func)}) with {what}: adsrc "
                              f"differentiates odeint of a 1-D y0 without Dfun or full_output")


def _in_order(func: Callable, tfirst: bool, args: tuple, floats: list[int]) -> Callable:
    """``func`` as odeint calls it, ``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst``), taking
    the float items of ``args`` as one tuple, ``moving``: its cotangent and tangent are theirs."""
    fixed, at = tuple(args), tuple(floats)

    def ordered(y, s, moving):
        full = [item for item in fixed]
        for k in range(len(at)):
            full[at[k]] = moving[k]
        if tfirst:
            return func(s, y, *full)
        return func(y, s, *full)

    return ordered


@computed_once  # y0's and args' vjps: one backward integration gives both
def _adjoint(g: Any, ans: np.ndarray, func: Callable, y0: Any, t: Any, args: tuple = (), **options: Any) -> tuple:
    """``(cotangent of y0, cotangent of args)`` by the adjoint ODE, integrated backward point by point."""
    from scipy.integrate import odeint

    args = tuple(args)
    _check(func, y0, options)
    g = unthunk(g)
    floats = _float_items(args)
    if is_zero(g):
        return zero, zero
    g = np.asarray(g, dtype=float)
    size, t = len(y0), np.asarray(t, dtype=float)
    tfirst = bool(options.get("tfirst", False))
    f = _in_order(func, tfirst, args, floats)
    moving = tuple(args[i] for i in floats)
    wrt = (0, 2) if floats else (0,)
    shapes = [np.shape(args[i]) for i in floats]
    count = sum(int(np.prod(s)) for s in shapes)

    def augmented(state: np.ndarray, s: float) -> np.ndarray:
        y, a = state[:size], state[size:2 * size]
        dy, pullback = vjp(f, y, s, moving, wrt=wrt)
        pulled = pullback(a)  # a^T df/dy, then a^T df/dargs (a tuple over the float items of args)
        of_args = [part(pulled[1], k) for k in range(len(floats))] if floats else []
        parts = [np.zeros(int(np.prod(shape))) if is_zero(p) else np.ravel(np.asarray(p, dtype=float))
                 for p, shape in zip(of_args, shapes)]
        return np.concatenate([np.asarray(dy, dtype=float), -np.asarray(pulled[0], dtype=float),
                               *(-p for p in parts)])

    a, a_args = g[-1].copy(), np.zeros(count)
    steps = {k: v for k, v in options.items() if k != "tfirst"}
    for i in range(len(t) - 1, 0, -1):
        state = np.concatenate([np.asarray(ans[i], dtype=float), a, a_args])
        out = odeint(augmented, state, np.array([t[i], t[i - 1]]), **steps)[1]
        a, a_args = out[size:2 * size] + g[i - 1], out[2 * size:]
    of_args, start = [], 0
    for i, arg in enumerate(args):
        if i not in floats:
            of_args.append(zero)
            continue
        shape = np.shape(arg)
        n = int(np.prod(shape))
        piece = a_args[start:start + n]
        start += n
        of_args.append(float(piece[0]) if not shape and isinstance(arg, float) else piece.reshape(shape))
    return a, TangentTuple(of_args)


def _sensitivity(func: Callable, y0: Any, t: Any, args: tuple, options: dict, s0: Any, dargs: tuple) -> np.ndarray:
    """The tangent of odeint's result: the sensitivity ``s`` integrated forward beside ``y``."""
    from scipy.integrate import odeint

    _check(func, y0, options)
    size, floats = len(y0), _float_items(args)
    f = _in_order(func, bool(options.get("tfirst", False)), args, floats)
    moving = tuple(args[i] for i in floats)
    dargs = tuple(dargs) + (zero,) * (len(args) - len(dargs))
    d_moving = TangentTuple(zero if dargs[i] is None else dargs[i] for i in floats)

    def augmented(state: np.ndarray, s: float) -> np.ndarray:
        y, sens = state[:size], state[size:]
        dy, ds = jvp(f, (y, s, moving), (sens, None, d_moving if floats else None))
        return np.concatenate([np.asarray(dy, dtype=float),
                               np.zeros(size) if is_zero(ds) else np.asarray(ds, dtype=float)])

    steps = {k: v for k, v in options.items() if k != "tfirst"}
    start = np.concatenate([np.asarray(y0, dtype=float),
                            np.zeros(size) if is_zero(s0) else np.asarray(s0, dtype=float)])
    return odeint(augmented, start, np.asarray(t, dtype=float), **steps)[:, size:]


def _of_y0(g, ans, func, y0, t, args=(), **options):
    return _adjoint(g, ans, func, y0, t, args, **options)[0]


def _of_args(g, ans, func, y0, t, args=(), **options):
    return _adjoint(g, ans, func, y0, t, args, **options)[1]


def _tangent_y0(dy0, ans, func, y0, t, args=(), **options):
    return _sensitivity(func, y0, t, tuple(args), options, unthunk(dy0), ())


def _tangent_args(dargs, ans, func, y0, t, args=(), **options):
    return _sensitivity(func, y0, t, tuple(args), options, zero, tuple(part(unthunk(dargs), i)
                                                                           for i in range(len(args))))


def _of_t(g, ans, func, y0, t, args=(), **options):
    raise InvalidArgument(f"differentiating odeint({label(func)}, ...) ({where(func)}) with respect to t, the "
                          f"times: adsrc differentiates odeint in y0 and the float items of args; integrate "
                          f"over a fixed time grid and scale time by a parameter in args instead")


def _second_order(g, ans, func, *rest, **options):
    return InvalidArgument(f"a second derivative through odeint({label(func)}, ...) ({where(func)}): adsrc "
                           f"differentiates odeint once (its rule integrates the adjoint ODE); write the "
                           f"integration as a loop of steps in Python to differentiate it twice")


_registered: list[bool] = []


def _register() -> bool:
    """Register odeint's rule once scipy.integrate is imported (a registry miss looks again)."""
    if _registered or "scipy.integrate" not in sys.modules:
        return False
    from scipy.integrate import odeint

    _registered.append(True)
    for made in (_of_y0, _of_args, _tangent_y0, _tangent_args):
        made.__adsrc_refuse_again__ = _second_order  # second order's dispatcher raises it
    defvjp(odeint, None, _of_y0, _of_t, _of_args, name="odeint")  # t's raises: a gradient never dropped
    defjvp(odeint, None, _tangent_y0, _of_t, _tangent_args)
    return True


on_miss(_register)
_register()
