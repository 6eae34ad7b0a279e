"""``scipy.integrate.solve_ivp`` differentiated, as ``odeint`` is (api/ode.py): adjoint backward, sensitivities forward.

``sol = solve_ivp(fun, t_span, y0, t_eval=times, args=(theta,))`` integrates
``dy/dt = fun(t, y, *args)`` and returns SciPy's ``OdeResult``, a dict read by
attribute: ``sol.y`` (shape ``(n, len(times))``) is ``sol["y"]``, and its
cotangent is a dict by key (values/pytrees.py), whose ``"y"`` this rule reads.
``sol.t`` is ``t_eval``, which has no gradient.

The vjp integrates the adjoint ODE on ``[y, a, a_args]`` backward from each
time point to the one before, and from the first to ``t_span[0]``, with
``solve_ivp`` itself, the call's method and tolerances (api/ode.py's
``adjoint_dynamics`` and ``backward_sweep``). The jvp integrates the
sensitivity ``s = dy`` forward beside ``y`` to the same times. Both call
``adsrc.vjp`` / ``adsrc.jvp`` of ``fun``. Differentiable: ``y0`` (real) and the
float items of ``args``. Refused, naming ``fun``'s file and line: a gradient
with respect to ``t_span`` or ``t_eval``, a call without ``t_eval``,
``dense_output``, ``events``, ``vectorized``, ``jac`` (and ``jac_sparsity``,
``lband``, ``uband``), a complex ``y0``, and a second derivative.

>>> import numpy as np, adsrc
>>> from scipy.integrate import solve_ivp
>>> def decay(t, y, k):
...     return -k * y
>>> def final(k):
...     sol = solve_ivp(decay, (0.0, 1.0), np.array([1.0]), t_eval=[1.0], args=(k,), rtol=1e-10, atol=1e-12)
...     return sol.y[0, -1]
>>> bool(np.isclose(adsrc.grad(final)(0.5), -np.exp(-0.5), rtol=1e-6))
True
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import InvalidArgument, NotConverged, NotDifferentiable
from ..rules.registry import computed_once, defjvp, defvjp
from ..values import TangentDict, is_zero, unthunk, zero
from .arguments import label, where
from .ode import (adjoint_dynamics, arg_tangents, args_cotangent, backward_sweep, float_items, in_order,
                  second_order_refusal, sensitivity_dynamics, when_integrate_imported)

_JACOBIAN = ("jac", "jac_sparsity", "lband", "uband")  # of fun's state: wrong for the augmented systems


def _check(fun: Callable, y0: Any, t_eval: Any, dense_output: Any, events: Any, vectorized: Any,
           options: dict) -> None:
    given = [f"{k}=" for k in _JACOBIAN if options.get(k) is not None]
    given += [f"{k}=" for k, v in (("dense_output", dense_output), ("vectorized", vectorized)) if v]
    given += ["events="] if events is not None else []
    given += ["no t_eval"] if t_eval is None else []
    given += ["a complex y0"] if np.iscomplexobj(y0) else []
    if given:
        raise InvalidArgument(f"differentiating solve_ivp({label(fun)}, ...) ({where(fun)}) with "
                              f"{', '.join(given)}: adsrc differentiates solve_ivp of a real y0 at given times "
                              f"(t_eval=[t_end] for the last state alone), reading sol.y and sol.t, without "
                              f"dense_output, events, vectorized or a Jacobian")


def _tolerance(atol: Any, size: int, more: int) -> Any:
    """``atol`` for an augmented state: a number as it is, a per-component array extended by its least."""
    if np.ndim(atol) == 0:
        return atol
    atol = np.asarray(atol, dtype=float)
    return np.concatenate([np.broadcast_to(atol, (size,)), np.full(more, atol.min())])


def _integrate(step: Callable, t_span: tuple, state: np.ndarray, method: Any, t_eval: Any, size: int,
               options: dict, fun: Callable) -> np.ndarray:
    """``solve_ivp`` of an augmented system (its first ``size`` components are ``y``), with the call's
    method and tolerances: its states at ``t_eval``, or at ``t_span[1]`` alone."""
    from scipy.integrate import solve_ivp

    steps = dict(options)
    steps["atol"] = _tolerance(options.get("atol", 1e-6), size, len(state) - size)
    if t_eval is None:
        steps.pop("first_step", None)  # a backward interval may be shorter than the first step
    out = solve_ivp(lambda s, state: step(state, s), t_span, state, method=method, t_eval=t_eval, **steps)
    if not out.success:
        raise NotConverged(f"differentiating solve_ivp({label(fun)}, ...) ({where(fun)}): the integration of "
                           f"its {'adjoint' if t_eval is None else 'sensitivity'} ODE over {t_span} failed "
                           f"({out.message}); try another method or other tolerances")
    return out.y if t_eval is not None else out.y[:, -1]


@computed_once  # y0's and args' vjps: one backward integration gives both
def _adjoint(g: Any, ans: Any, fun: Callable, t_span: Any, y0: Any, method: Any = "RK45", t_eval: Any = None,
             dense_output: bool = False, events: Any = None, vectorized: bool = False, args: Any = None,
             **options: Any) -> tuple:
    """``(cotangent of y0, cotangent of args)`` by the adjoint ODE, integrated backward point by point."""
    _check(fun, y0, t_eval, dense_output, events, vectorized, options)
    g = unthunk(g)
    if is_zero(g):
        return zero, zero
    others = [k for k, v in g.items() if k not in ("y", "t") and not is_zero(v)] if isinstance(g, dict) else [g]
    if others:  # never dropped: only sol.y carries a gradient, sol.t's is zero (t_eval has none)
        raise NotDifferentiable(f"differentiating solve_ivp({label(fun)}, ...) ({where(fun)}): a gradient reached "
                                f"{', '.join(map(str, others)) if isinstance(g, dict) else 'the result as a whole'}"
                                f"; adsrc differentiates sol.y (and sol['y']) of solve_ivp's result")
    of_y = unthunk(g.get("y", zero))
    if is_zero(of_y):
        return zero, zero
    args = () if args is None else args
    size, floats = len(y0), float_items(args)
    step = adjoint_dynamics(in_order(fun, True, args, floats), size, args, floats)
    count = sum(int(np.prod(np.shape(args[i]))) for i in floats)

    def integrate(state: np.ndarray, t_from: float, t_to: float) -> np.ndarray:
        return _integrate(step, (t_from, t_to), state, method, None, size, options, fun)

    ans = unthunk(ans)
    times = np.concatenate([[float(t_span[0])], np.asarray(ans.t, dtype=float)])
    states = [np.asarray(y0, dtype=float), *np.asarray(ans.y, dtype=float).T]
    of_y = np.broadcast_to(np.asarray(of_y, dtype=float), np.shape(ans.y))
    a, a_args = backward_sweep(integrate, times, states, np.vstack([np.zeros(size), of_y.T]), count)
    return a, args_cotangent(args, floats, a_args)


def _sensitivity(fun: Callable, t_span: Any, y0: Any, method: Any, t_eval: Any, dense_output: Any, events: Any,
                 vectorized: Any, args: Any, options: dict, s0: Any, dargs: tuple) -> TangentDict:
    """The tangent of solve_ivp's result: that of ``sol.y``, the sensitivity integrated forward beside ``y``."""
    _check(fun, y0, t_eval, dense_output, events, vectorized, options)
    args = () if args is None else args
    size, floats = len(y0), float_items(args)
    step = sensitivity_dynamics(in_order(fun, True, args, floats), size, args, floats, dargs)
    start = np.concatenate([np.asarray(y0, dtype=float), np.zeros(size) if is_zero(s0) else
                            np.asarray(s0, dtype=float)])
    span = tuple(float(t) for t in t_span)
    out = _integrate(step, span, start, method, np.asarray(t_eval, dtype=float), size, options, fun)
    return TangentDict({"y": out[size:]})


def _of_y0(g, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
           vectorized=False, args=None, **options):
    return _adjoint(g, ans, fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, **options)[0]


def _of_args(g, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
             vectorized=False, args=None, **options):
    return _adjoint(g, ans, fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, **options)[1]


def _tangent_y0(dy0, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
                vectorized=False, args=None, **options):
    return _sensitivity(fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, options,
                        unthunk(dy0), ())


def _tangent_args(dargs, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
                  vectorized=False, args=None, **options):
    return _sensitivity(fun, t_span, y0, method, t_eval, dense_output, events, vectorized, args, options, zero,
                        arg_tangents(dargs, len(args or ())))


def _refuse_times(fun: Callable, what: str) -> None:
    raise InvalidArgument(f"differentiating solve_ivp({label(fun)}, ...) ({where(fun)}) with respect to {what}, "
                          f"the times: adsrc differentiates solve_ivp in y0 and the float items of args; "
                          f"integrate over fixed times and scale time by a parameter in args instead")


def _of_t_span(g, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
               vectorized=False, args=None, **options):
    _refuse_times(fun, "t_span")


def _of_t_eval(g, ans, fun, t_span, y0, method="RK45", t_eval=None, dense_output=False, events=None,
               vectorized=False, args=None, **options):
    _refuse_times(fun, "t_eval")


def _define(integrate: Any) -> None:
    refusal = second_order_refusal("solve_ivp")
    for made in (_of_y0, _of_args, _tangent_y0, _tangent_args):
        made.__adsrc_refuse_again__ = refusal  # second order's dispatcher raises it
    times = (_of_t_span, _of_t_eval)  # they raise: a gradient never dropped
    defvjp(integrate.solve_ivp, None, times[0], _of_y0, None, times[1], None, None, None, _of_args, name="solve_ivp")
    defjvp(integrate.solve_ivp, None, times[0], _tangent_y0, None, times[1], None, None, None, _tangent_args)


when_integrate_imported(_define)
