"""Forward mode: ``jvp`` and ``jvp_source``, and the jvp of a gradient (forward over reverse).

``jvp(f, primals, tangents)`` runs the JVP the pipeline generates for ``f``
(readable, ``adsrc dump --mode forward``). The jvp of a first derivative
(``jvp(grad(f), ...)``) runs the *eager* adjoint of ``f`` through the
second-order pass (adsrc.second_order), which transforms the adjoint, its
pullback and the vjp rules they call: second derivatives never see a thunk.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..backend.pipeline import EAGER, FORWARD, compile
from ..errors import InvalidArgument, NonScalarOutput
from ..second_order.gradient import gradient_function
from ..second_order.towers import along, pick
from ..values import is_zero, part, to_tangent, zero
from .arguments import (Fresh, Wrt, bind, choose_wrt, parameter_names, positions, refuse_subclasses,
                        tangents_by_parameter,
                        where)
from .derivative import Derivative
from .primitives import callable_for
from . import written


def _float_like(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_float_like(v) for v in value)
    if isinstance(value, dict):
        return any(_float_like(v) for v in value.values())
    return np.issubdtype(np.result_type(value), np.inexact) if not isinstance(value, bool) else False


def _check_pairs(primals: Any, tangents: Any) -> tuple[tuple, tuple]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise InvalidArgument("jvp(f, primals, tangents): primals and tangents must be tuples")
    if len(primals) != len(tangents):
        raise InvalidArgument(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents):
        if not is_zero(t) and not isinstance(p, (list, tuple, dict)) and np.shape(p) != np.shape(t):
            raise InvalidArgument(f"jvp: a tangent of shape {np.shape(t)} for a primal of shape {np.shape(p)}")
    return tuple(primals), tuple(tangents)


def split_aux(value: Any, func: Callable) -> tuple[Any, Any]:
    """``(output, aux)`` from what a ``has_aux=True`` function returned, which must be such a pair."""
    if not isinstance(value, (tuple, list)) or len(value) != 2:
        what = f"a {type(value).__name__}" + (f" of length {len(value)}" if isinstance(value, (tuple, list)) else "")
        raise InvalidArgument(f"{func.__name__} ({where(func)}) returned {what}; with has_aux=True it must return "
                              f"a pair (output, aux), e.g. `return loss, {{'accuracy': accuracy}}`")
    return value[0], value[1]


def jvp(func: Callable, primals: Any, tangents: Any, *, has_aux: bool = False) -> tuple:
    """``(func(*primals), J @ tangents)``: the value and the directional derivative, in forward mode.

    ``primals`` and ``tangents`` are tuples of the same structure (a tangent
    may be None for an argument that is held fixed). The tangent output has
    the structure, shapes and dtypes of the value. ``func`` may be a gradient
    made by ``grad`` or ``value_and_grad``: that is forward over reverse.
    With ``has_aux=True``, ``func`` returns ``(output, aux)`` and ``jvp``
    returns ``(output, tangent, aux)``, as JAX's jvp does.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sin(x) * 2.0
    >>> value, tangent = adsrc.jvp(f, (0.0,), (1.0,))
    >>> float(value), float(tangent)
    (0.0, 2.0)
    """
    primals, tangents = _check_pairs(primals, tangents)
    func = callable_for(func)
    if not isinstance(func, Derivative) and hasattr(type(func), "__adsrc_pushforward__") and not has_aux:
        return func.__adsrc_pushforward__(primals, tangents)  # a Jacobian (higher.py) gives its own
    _refuse_subclasses(func.root if isinstance(func, Derivative) else func, primals, tangents)
    if isinstance(func, Derivative):
        if has_aux:
            raise func.refuse("has_aux=True in jvp", "it needs a function that returns (output, aux), and a "
                                                     "derivative returns gradients")
        return _derivative_jvp(func, primals, tangents)
    values = bind(func, primals, {})
    # each parameter's tangent: a bound object (a partial's arguments) fixed, those given to *args its tuple's
    by_parameter = tangents_by_parameter(func, tangents, values)
    wrt = tuple(i for i, (v, t) in enumerate(zip(values, by_parameter)) if not is_zero(t) and _float_like(v))
    compiled = compile(func, wrt, FORWARD)
    prepared_call = written.prepared(compiled, values)
    seeds = [to_tangent(by_parameter[i]) for i in wrt]
    if prepared_call is not None:  # a write into an argument writes into its tangent too: never into the caller's
        seeds = [np.array(t) if isinstance(t, np.ndarray) else t for t in seeds]
    value, tangent = written.run(compiled, prepared_call, values, *seeds)
    if has_aux:
        output, aux = split_aux(value, func)
        return output, Fresh(values, tangents, value).finish(part(tangent, 0), output), aux
    return value, Fresh(values, tangents, value).finish(tangent, value)


def _refuse_subclasses(func: Callable, primals: tuple, tangents: tuple) -> None:
    """Refuse ndarray subclasses among the primals and tangents (see arguments.refuse_subclasses)."""
    names = parameter_names(func)
    for i, (p, t) in enumerate(zip(primals, tangents)):
        name = names[i] if i < len(names) else f"argument {i}"
        refuse_subclasses(func, name, p, "argument")
        refuse_subclasses(func, name, t, "tangent for")


def jvp_source(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None) -> str:
    """The generated forward-mode (JVP) module's source, as ``adsrc dump --mode forward`` prints it.

    ``wrt`` (or ``argnums``, its alias; position 0 by default) names the
    parameters that get a tangent.

    >>> import adsrc
    >>> def f(x, y):
    ...     return x * y
    >>> "def f_jvp(x, y, dx, dy):" in adsrc.jvp_source(f, argnums=(0, 1))
    True
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        raise func.refuse("jvp_source", "second derivatives run the second-order pass over the eager adjoint "
                                        "of the function, compiled at call time; print adjoint_source(f, "
                                        "eager=True) to see the code it transforms")
    wrt_positions, _ = positions(func, wrt)
    return compile(func, wrt_positions, FORWARD).source


def _derivative_jvp(derivative: Derivative, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    """jvp of a function made by grad/value_and_grad: forward mode over its eager adjoint."""
    derivative.refuse_aux("jvp")
    values = bind(derivative.root, primals, {})
    value, tangent = pushforward(derivative, values, [tangents_by_parameter(derivative.root, tangents, values)],
                                 [(False,), (True,)])
    return value, tangent


Mask = tuple  # of bools, one per direction: which of them a derivative is taken along


def pushforward(derivative: Derivative, values: Any, directions: list, masks: list[Mask]) -> list:
    """``derivative(*values)`` differentiated along the directions each mask selects, one result per mask.

    ``directions`` are tuples of tangents of the root function's parameters
    (None where fixed), innermost first. Order 1 is forward mode over the
    eager adjoint, once per direction (second_order/towers.py); a higher
    order stacks the one below over unit vectors (its ``_along``, set by
    gradients.py), down to order 1.
    """
    if derivative.order > 1:
        return derivative._along(values, directions, masks)
    func = derivative.root
    values = tuple(values)
    seeds = [(zero, *(zero if is_zero(t) else to_tangent(t) for t in direction)) for direction in directions]
    adjoint = compile(func, derivative.wrt, EAGER).function
    try:
        result = along(gradient_function, (adjoint, *values), seeds)
    except NonScalarOutput as error:  # raised without the function's name: name it
        if error.returned:
            raise
        raise NonScalarOutput(func.__name__, error.shape, where(func)) from None
    primal = pick(result, (False,) * len(directions))[0]
    fresh = Fresh(values, *directions, primal)
    return [_finished(derivative, fresh, values, primal, pick(result, mask), any(mask)) for mask in masks]


def _finished(derivative: Derivative, fresh: Fresh, values: tuple, primal: Any, result: Any, tangent: bool) -> Any:
    """A derivative's result (or a tangent of it), ``(value, gradients)`` from gradient_function, ``zero``
    where no tangent reached it, as the derivative returns it: owned arrays shaped like the arguments."""
    value, grads = (zero, zero) if result is zero else result
    grads = (zero,) * len(derivative.wrt) if grads is zero else grads
    g = tuple(fresh.finish(grads[k], values[i]) for k, i in enumerate(derivative.wrt))
    g = g if derivative.many else g[0]
    if derivative.with_value:
        return (fresh.finish(value, primal) if tangent else value), g
    return g
