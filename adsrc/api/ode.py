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

The parts of these integrations that do not depend on odeint (the augmented
dynamics, the backward sweep over the time points, the registration once SciPy
is imported) are functions here that ``solve_ivp``'s rule (api/ode_ivp.py)
uses too.

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
from typing import Any, Callable, Sequence

import numpy as np

from ..errors import InvalidArgument
from ..rules.registry import computed_once, defjvp, defvjp, on_miss
from ..values import TangentList, TangentTuple, is_zero, part, unthunk, zero
from .arguments import label, where
from .forward import jvp
from .gradients import vjp

_UNSUPPORTED = ("Dfun", "full_output")


def float_items(args: Sequence) -> list[int]:
    """The positions of the float items of ``args`` (what has a gradient; ints and bools are held fixed)."""
    return [i for i, a in enumerate(args) if not isinstance(a, (bool, int, np.integer))
            and np.issubdtype(np.result_type(a), np.floating)]


def _check(func: Callable, y0: Any, options: dict) -> None:
    given = [k for k in _UNSUPPORTED if options.get(k)]
    if given or np.ndim(y0) != 1:
        what = f"{', '.join(given)}=" if given else f"a y0 of shape {np.shape(y0)}"
        raise InvalidArgument(f"differentiating odeint({label(func)}, ...) ({where(func)}) with {what}: adsrc "
                              f"differentiates odeint of a 1-D y0 without Dfun or full_output")


def in_order(func: Callable, tfirst: bool, args: Sequence, floats: list[int]) -> Callable:
    """``func`` as the integrator calls it, ``func(y, t, *args)`` (``func(t, y, *args)`` with ``tfirst``),
    taking the float items of ``args`` as one tuple, ``moving``: its cotangent and tangent are theirs."""
    fixed, at = tuple(args), tuple(floats)

    def ordered(y, s, moving):
        full = [item for item in fixed]
        for k in range(len(at)):
            full[at[k]] = moving[k]
        if tfirst:
            return func(s, y, *full)
        return func(y, s, *full)

    return ordered


def _flat(value: Any, size: int) -> np.ndarray:
    return np.zeros(size) if is_zero(value) else np.ravel(np.asarray(value, dtype=float))


def adjoint_dynamics(f: Callable, size: int, args: Sequence, floats: list[int]) -> Callable:
    """``step(state, s)``: the time derivative of the augmented state ``[y, a, a_args]`` of the adjoint
    ODE, for ``f = in_order(...)``: ``[f(y), -a^T df/dy, -a^T df/dargs]``, by ``adsrc.vjp`` of ``f``."""
    moving = tuple(args[i] for i in floats)
    wrt = (0, 2) if floats else (0,)
    sizes = [int(np.prod(np.shape(m))) for m in moving]

    def step(state: np.ndarray, s: float) -> np.ndarray:
        y, a = state[:size], state[size:2 * size]
        dy, pullback = vjp(f, y, s, moving, wrt=wrt)
        pulled = pullback(a)  # a^T df/dy, then a^T df/dargs (a tuple over the float items of args)
        parts = [_flat(part(pulled[1], k), n) for k, n in enumerate(sizes)]
        return np.concatenate([np.asarray(dy, dtype=float), -_flat(pulled[0], size), *(-p for p in parts)])

    return step


def backward_sweep(integrate: Callable, times: np.ndarray, states: Sequence, cotangents: np.ndarray,
                   count: int) -> tuple[np.ndarray, np.ndarray]:
    """``(a, a_args)`` at ``times[0]``: the adjoint integrated backward from the last time point to the
    first, ``integrate(state, t_from, t_to)`` giving the augmented state at ``t_to``; the cotangent of
    each time point's state (``cotangents[i]``, that of ``states[i]``) is added to ``a`` on passing it."""
    size = len(cotangents[-1])
    a, a_args = np.array(cotangents[-1], dtype=float), np.zeros(count)
    for i in range(len(times) - 1, 0, -1):
        if times[i] != times[i - 1]:
            out = integrate(np.concatenate([np.asarray(states[i], dtype=float), a, a_args]), times[i], times[i - 1])
            a, a_args = out[size:2 * size], out[2 * size:]
        a = a + cotangents[i - 1]
    return a, a_args


def args_cotangent(args: Sequence, floats: list[int], a_args: np.ndarray) -> Any:
    """The cotangent of ``args`` from the flat ``a_args`` (its float items', in order; zero for the rest),
    as a tuple (a list for a list)."""
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
    return TangentList(of_args) if isinstance(args, list) else TangentTuple(of_args)


def sensitivity_dynamics(f: Callable, size: int, args: Sequence, floats: list[int], dargs: Sequence) -> Callable:
    """``step(state, s)``: the time derivative of ``[y, s]``, the state and its sensitivity, for ``f =
    in_order(...)``: ``[f(y), df/dy s + df/dargs dargs]``, by ``adsrc.jvp`` of ``f``."""
    moving = tuple(args[i] for i in floats)
    dargs = tuple(dargs) + (zero,) * (len(args) - len(dargs))
    d_moving = TangentTuple(zero if dargs[i] is None else dargs[i] for i in floats)

    def step(state: np.ndarray, s: float) -> np.ndarray:
        y, sens = state[:size], state[size:]
        dy, ds = jvp(f, (y, s, moving), (sens, None, d_moving if floats else None))
        return np.concatenate([np.asarray(dy, dtype=float), _flat(ds, size)])

    return step


def arg_tangents(dargs: Any, count: int) -> tuple:
    """The tangents of the items of ``args`` from the tangent of ``args``."""
    dargs = unthunk(dargs)
    return tuple(part(dargs, i) for i in range(count))


@computed_once  # y0's and args' vjps: one backward integration gives both
def _adjoint(g: Any, ans: np.ndarray, func: Callable, y0: Any, t: Any, args: tuple = (), **options: Any) -> tuple:
    """``(cotangent of y0, cotangent of args)`` by the adjoint ODE, integrated backward point by point."""
    from scipy.integrate import odeint

    args = tuple(args)
    _check(func, y0, options)
    g = unthunk(g)
    if is_zero(g):
        return zero, zero
    floats = float_items(args)
    f = in_order(func, bool(options.get("tfirst", False)), args, floats)
    augmented = adjoint_dynamics(f, len(y0), args, floats)
    steps = {k: v for k, v in options.items() if k != "tfirst"}
    count = sum(int(np.prod(np.shape(args[i]))) for i in floats)

    def integrate(state: np.ndarray, t_from: float, t_to: float) -> np.ndarray:
        return odeint(augmented, state, np.array([t_from, t_to]), **steps)[1]

    a, a_args = backward_sweep(integrate, np.asarray(t, dtype=float), ans, np.asarray(g, dtype=float), count)
    return a, args_cotangent(args, floats, a_args)


def _sensitivity(func: Callable, y0: Any, t: Any, args: tuple, options: dict, s0: Any, dargs: tuple) -> np.ndarray:
    """The tangent of odeint's result: the sensitivity ``s`` integrated forward beside ``y``."""
    from scipy.integrate import odeint

    _check(func, y0, options)
    size, floats = len(y0), float_items(args)
    f = in_order(func, bool(options.get("tfirst", False)), args, floats)
    augmented = sensitivity_dynamics(f, size, args, floats, dargs)
    steps = {k: v for k, v in options.items() if k != "tfirst"}
    start = np.concatenate([np.asarray(y0, dtype=float), _flat(s0, size)])
    return odeint(augmented, start, np.asarray(t, dtype=float), **steps)[:, size:]


def _of_y0(g, ans, func, y0, t, args=(), **options):
    return _adjoint(g, ans, func, y0, t, args, **options)[0]


def _of_args(g, ans, func, y0, t, args=(), **options):
    return _adjoint(g, ans, func, y0, t, args, **options)[1]


def _tangent_y0(dy0, ans, func, y0, t, args=(), **options):
    return _sensitivity(func, y0, t, tuple(args), options, unthunk(dy0), ())


def _tangent_args(dargs, ans, func, y0, t, args=(), **options):
    return _sensitivity(func, y0, t, tuple(args), options, zero, arg_tangents(dargs, len(args)))


def _of_t(g, ans, func, y0, t, args=(), **options):
    raise InvalidArgument(f"differentiating odeint({label(func)}, ...) ({where(func)}) with respect to t, the "
                          f"times: adsrc differentiates odeint in y0 and the float items of args; integrate "
                          f"over a fixed time grid and scale time by a parameter in args instead")


def second_order_refusal(name: str) -> Callable:
    """What a rule's vjp or jvp answers to a second derivative (``__adsrc_refuse_again__``)."""

    def refusal(g, ans, func, *rest, **options):
        return InvalidArgument(f"a second derivative through {name}({label(func)}, ...) ({where(func)}): adsrc "
                               f"differentiates {name} once (its rule integrates the adjoint ODE); write the "
                               f"integration as a loop of steps in Python to differentiate it twice")

    return refusal


def when_integrate_imported(define: Callable[[Any], None]) -> None:
    """Call ``define(scipy.integrate)`` once SciPy's integrate is imported: now, or at a registry miss
    after (a miss looks again once it defined rules)."""
    done: list[bool] = []

    def register() -> bool:
        if done or "scipy.integrate" not in sys.modules:
            return False
        done.append(True)
        define(sys.modules["scipy.integrate"])
        return True

    on_miss(register)
    register()


def _define(integrate: Any) -> None:
    refusal = second_order_refusal("odeint")
    for made in (_of_y0, _of_args, _tangent_y0, _tangent_args):
        made.__adsrc_refuse_again__ = refusal  # second order's dispatcher raises it
    defvjp(integrate.odeint, None, _of_y0, _of_t, _of_args, name="odeint")  # t's raises: a gradient never dropped
    defjvp(integrate.odeint, None, _tangent_y0, _of_t, _tangent_args)


when_integrate_imported(_define)
