"""``adsrc.jvp`` called inside a differentiated function: its rule, forward over reverse.

``y, t = adsrc.jvp(f, primals, tangents)`` in a function adsrc differentiates
is a call with a rule. With ``x`` the primals, ``v`` the tangents and ``J`` the
Jacobian of ``f`` at ``x``, the call computes ``y = f(x)`` and ``t = J v``; for
the cotangent ``(c_y, c_t)`` of its result:

* the tangents get ``J^T c_t``;
* the primals get ``J^T c_y + (d/dx J^T c_t) v``, the second term the derivative
  of the pullback of ``c_t`` along ``v``.

A pullback is linear in its cotangent, so one forward sweep over ``f``'s eager
adjoint and its pullback (second order's pass), with the tangent ``v`` on ``x``
and the tangent ``c_y`` on the cotangent ``c_t``, gives both: its value is
``J^T c_t`` and its tangent ``J^T c_y + (d/dx J^T c_t) v``. A local ``f``
differentiates with its captured values first (closures.lift), so gradients
reach what it captures. With ``has_aux=True`` the auxiliary data's cotangent
pulls back with the output's. That is a second derivative. A jvp of a derivative
(``jvp(grad(g), ...)``) inside is a third: its cotangents are the derivative's
pullback and that pullback's derivative along ``v``, and its tangent the
derivative's pushforwards along one direction more (``_of_a_derivative``,
``_pushed_derivative``). A jvp of such a function (forward over forward) pushes
the tangents of the primals and of the tangents through second order's forward
pass over ``f``'s generated forward code (``_pushed``). A Hessian of a
function that calls ``jvp(f, ...)`` is a third derivative: the cotangents'
own tangents are forward sweeps over ``f``'s adjoint and its pullback, one or
two levels deep (``_cotangents_tangent``); for a local ``f`` or with
``has_aux=True`` it is refused with InvalidArgument.

>>> import numpy as np, adsrc
>>> def f(x):
...     return np.sin(x)
>>> def g(x):
...     y, t = adsrc.jvp(f, (x,), (np.ones_like(x),))
...     return np.sum(y * t)
>>> x = np.array([0.5])
>>> bool(np.allclose(adsrc.grad(g)(x), np.cos(2 * x)))
True
"""
from __future__ import annotations

import inspect
from typing import Any, Callable

from ..backend.pipeline import EAGER, FORWARD, compile
from ..errors import InvalidArgument
from ..frontend.parse import bound_parts
from ..rules.closures import captures, lift
from ..rules.registry import computed_once, defjvp, defvjp
from ..second_order.dispatch import call, ownership
from ..second_order.gradient import pulled_back
from ..second_order.towers import along as towers_along, pick
from ..values import TangentTuple, add_tangents, is_zero, part, to_tangent, unthunk, zero
from .arguments import bind, label, star_position, where
from .blocks import zeros_like_leaf
from ..errors import BEYOND_A_CALL
from .derivative import Derivative
from .forward import _float_like, jvp, pushforward


def _refuse_order(func: Callable) -> None:
    if inspect.isfunction(bound_parts(func)[0]) and star_position(func) is not None:
        raise InvalidArgument(f"differentiating jvp({label(func)}) ({where(func)}) inside a differentiated "
                              f"function, where {label(func)} takes *args: give it named parameters")
    order = getattr(func, "order", 0)
    if order or hasattr(type(func), "__adsrc_pushforward__"):
        root = getattr(func, "root", func)
        raise InvalidArgument(f"differentiating jvp({label(func)}) ({where(root)}) inside a differentiated "
                              f"function: that is a derivative of order {max(order, 1) + 2}; {BEYOND_A_CALL}")


def _differentiable_derivative(func: Callable, primals: tuple, has_aux: bool) -> bool:
    """``jvp(grad(f), x, v)`` inside: a derivative whose own derivatives are its pushforwards once more (of
    its named parameters, without aux data)."""
    return isinstance(func, Derivative) and not has_aux and not func.picks \
        and len(bind(func.root, tuple(primals), {})) == len(primals)


def _of_a_derivative(g: Any, func: Derivative, primals: tuple, tangents: tuple) -> tuple:
    """The cotangents of ``(y, t) = jvp(D, x, v)`` for a derivative ``D``: ``J^T c_t`` for ``v`` and
    ``J^T c_y + (d/dx J^T c_t) v`` for ``x``, which are D's pullback and its derivative along ``v``
    (Derivative.__adsrc_pullback_tangent__, one order up through second_order/towers.py)."""
    c_y, c_t = unthunk(part(g, 0)), unthunk(part(g, 1))
    values = tuple(bind(func.root, primals, {}))
    wrt = tuple(i for i, value in enumerate(values) if _float_like(value))
    if not wrt or is_zero(c_y) and is_zero(c_t):
        return zero, zero, zero
    directions = tuple(None if t is None or is_zero(t) else to_tangent(t) for t in tangents)
    _, (_, pullback_tangent) = func.__adsrc_pullback_tangent__(values, directions, wrt)
    of_tangents, of_primals = pullback_tangent(c_t, c_y)
    position = {i: k for k, i in enumerate(wrt)}

    def by_position(grads: Any) -> Any:
        return TangentTuple(zero if i not in position else unthunk(part(grads, position[i]))
                            for i in range(len(values)))

    return zero, by_position(of_primals), by_position(of_tangents)


def _pushed_derivative(func: Derivative, primals: tuple, tangents: tuple, of_primals: Any, of_tangents: Any) -> Any:
    """The tangent of ``(y, t) = jvp(D, x, v)`` given ``dx`` and ``dv``: ``(D'(x) dx, D''(x)[v, dx] + D'(x) dv)``."""
    values = tuple(bind(func.root, tuple(primals), {}))
    dx = tuple(None if is_zero(of_primals) else _none_if_zero(part(of_primals, i)) for i in range(len(values)))
    dv = tuple(None if is_zero(of_tangents) else _none_if_zero(part(of_tangents, i)) for i in range(len(values)))
    v = tuple(None if t is None or is_zero(t) else t for t in tangents)
    moved, turned = any(d is not None for d in dx), any(d is not None for d in dv)
    dy = pushforward(func, values, [dx], [(True,)])[0] if moved else zero
    dt = pushforward(func, values, [v, dx], [(True, True)])[0] if moved and any(t is not None for t in v) else zero
    if turned:
        dt = add_tangents(dt, pushforward(func, values, [dv], [(True,)])[0])
    return TangentTuple((dy, dt))


def _none_if_zero(t: Any) -> Any:
    return None if is_zero(unthunk(t)) else unthunk(t)


def _lifted(func: Callable, primals: tuple) -> tuple[Callable, tuple, int, int]:
    """``(function, values, offset, count)``: what is differentiated, its arguments in signature order,
    where the primals start among them, how many captured values (a local ``func``, lifted) come first."""
    captured = captures(func)
    if captured is not None:
        return lift(func), tuple(captured) + tuple(bind(func, primals, {})), len(captured), len(captured)
    # a bound method's object (a partial's arguments) come first, fixed
    return func, tuple(bind(func, primals, {})), len(bound_parts(func)[1]), 0


def _zeros_as(tree: Any) -> Any:
    """A cotangent shaped like ``tree`` with zero arrays and numbers where it has values. The seed's aux part
    when ``c_aux`` rides on it as its tangent: on the symbolic zero, the forward sweep would drop that tangent."""
    if is_zero(tree):
        return zero
    if isinstance(tree, dict):
        return type(tree)({key: _zeros_as(value) for key, value in tree.items()})
    if isinstance(tree, (tuple, list)):
        return type(tree)(_zeros_as(value) for value in tree)
    return zeros_like_leaf(tree)


@computed_once  # the rule asks once per differentiated argument: one sweep serves them all
def _cotangents(g: Any, ans: Any, func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> tuple:
    """``(of the captured values, of the primals, of the tangents)``, each a TangentTuple (or zero)."""
    primals, tangents = tuple(primals), tuple(tangents)
    if _differentiable_derivative(func, primals, has_aux):
        return _of_a_derivative(g, func, primals, tangents)
    _refuse_order(func)
    c_y, c_t = unthunk(part(g, 0)), unthunk(part(g, 1))
    c_aux = unthunk(part(g, 2)) if has_aux else zero  # the auxiliary data's: pulled back with the output's
    function, values, offset, count = _lifted(func, primals)
    wrt = tuple(i for i, value in enumerate(values) if (i < count or i >= offset) and _float_like(value))
    if not wrt or is_zero(c_y) and is_zero(c_t) and is_zero(c_aux):
        return zero, zero, zero
    position = {i: k for k, i in enumerate(wrt)}
    directions = tuple(zero if is_zero(t) else to_tangent(t) for t in tangents)
    adjoint = compile(function, wrt, EAGER).function

    def seeded(c: Any, of_aux: Any = zero) -> Any:
        return TangentTuple((c, to_tangent(of_aux))) if has_aux else c

    of_value = seeded(to_tangent(c_y), c_aux)
    if is_zero(c_t):  # no tangent is read: a first derivative, J^T c_y
        _, pullback = adjoint(*values)
        along, transposed = pullback(of_value), zero
    else:
        moved = [zero] * len(values)
        for i, d in enumerate(directions):
            if offset + i in position:
                moved[offset + i] = d
        with ownership():
            transposed, along = call(pulled_back, (zero, zero if is_zero(c_y) and is_zero(c_aux) else of_value, *moved),
                                     {}, adjoint, seeded(to_tangent(c_t), _zeros_as(to_tangent(c_aux))), *values)

    def at(grads: Any, i: int) -> Any:
        return zero if is_zero(grads) or i not in position else unthunk(part(grads, position[i]))

    of_captured = TangentTuple(at(along, i) for i in range(count)) if count else zero
    of_primals = TangentTuple(at(along, offset + i) for i in range(len(primals)))
    of_tangents = TangentTuple(at(transposed, offset + i) for i in range(len(tangents)))
    return of_captured, of_primals, of_tangents


def _of_function(g: Any, ans: Any, func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> Any:
    if captures(func) is None:
        raise InvalidArgument(f"differentiating jvp({label(func)}) ({where(func)}) with respect to what the "
                              f"function holds (an object's attributes, a partial's arguments): pass those values "
                              f"in primals, with a None tangent")
    return _cotangents(g, ans, func, primals, tangents, has_aux)[0]


def _of_primals(g: Any, ans: Any, func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> Any:
    return _cotangents(g, ans, func, primals, tangents, has_aux)[1]


def _of_tangents(g: Any, ans: Any, func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> Any:
    return _cotangents(g, ans, func, primals, tangents, has_aux)[2]


def _pushed(func: Callable, primals: tuple, tangents: tuple, has_aux: bool, of_function: Any = zero,
            of_primals: Any = zero, of_tangents: Any = zero) -> Any:
    """The tangent of ``jvp(func, primals, tangents)``'s result given those of its arguments (a jvp of a
    jvp): one forward sweep of second order over ``func``'s generated forward code, with the tangents
    given to the primals (and captured values) and to the seeds it takes for ``tangents``."""
    if _differentiable_derivative(func, primals, has_aux):
        return _pushed_derivative(func, primals, tangents, of_primals, of_tangents)
    _refuse_order(func)
    function, values, offset, count = _lifted(func, primals)
    moved = [offset + i for i, t in enumerate(tangents)
             if not is_zero(t) and t is not None and _float_like(values[offset + i])]
    if not moved:  # t is a constant zero: the tangent of y alone, J d, is a plain jvp
        along = [zero] * len(values)
        for i in range(count):
            along[i] = part(of_function, i)
        for i in range(len(primals)):
            along[offset + i] = part(of_primals, i)
        _, dy = jvp(function, values, tuple(along))
        return TangentTuple((part(dy, 0), zero, part(dy, 1))) if has_aux else TangentTuple((dy, zero))
    compiled = compile(function, tuple(moved), FORWARD).function
    seeds = [to_tangent(tangents[i - offset]) for i in moved]
    d_values = [zero] * len(values)
    for i in range(count):
        d_values[i] = zero if is_zero(of_function) else part(of_function, i)
    for i in range(len(primals)):
        d_values[offset + i] = zero if is_zero(of_primals) else part(of_primals, i)
    d_seeds = [zero if is_zero(of_tangents) else part(of_tangents, i - offset) for i in moved]
    with ownership():
        _, (d_value, d_tangent) = call(compiled, (*d_values, *d_seeds), {}, *values, *seeds)
    if has_aux:
        return TangentTuple((part(d_value, 0), part(d_tangent, 0), part(d_value, 1)))
    return TangentTuple((d_value, d_tangent))


def _forward(position: int) -> Callable:
    def tangent(t: Any, ans: Any, func: Callable, primals: tuple, tangents: tuple, has_aux: bool = False) -> Any:
        if position == 0 and captures(func) is None:
            raise InvalidArgument(f"forward mode through jvp({label(func)}) ({where(func)}) with respect to what "
                                  f"the function holds (an object's attributes, a partial's arguments): pass those "
                                  f"values in primals")
        given = {("of_function", "of_primals", "of_tangents")[position]: unthunk(t)}
        return _pushed(func, tuple(primals), tuple(tangents), has_aux, **given)

    tangent.__name__ = f"jvp_tangent_{position}"
    return tangent


def _cotangents_tangent(position: int) -> Callable:
    """The tangent of the cotangents ``_cotangents`` gives (position 1: of the primals, 2: of the tangents),
    for a second-order pass over a function that calls ``jvp(f, x, v)`` (a Hessian of it: order 3). With
    ``F(c) = J(x)^T c``, linear in ``c``, the cotangents are ``F(c_t)`` and ``F(c_y) + dF(c_t)[v]``; along
    ``dx``, ``dv`` and the cotangents' tangents ``dc_y``, ``dc_t``, they move by ``dF(c_t)[dx] + F(dc_t)``
    and ``dF(c_y)[dx] + F(dc_y) + d2F(c_t)[v, dx] + dF(dc_t)[v] + dF(c_t)[dv]``, each a forward sweep (or
    two, second_order/towers.py) over ``f``'s eager adjoint and its pullback."""
    def tangent(tangents: tuple, args: tuple, kwargs: dict) -> tuple[Any, Any]:
        g, ans, func, primals, directions = args[:5]
        has_aux = args[5] if len(args) > 5 else kwargs.get("has_aux", False)
        t_g, _, t_func, t_primals, t_directions = (tuple(tangents) + (zero,) * 5)[:5]
        value = _cotangents(g, ans, func, primals, directions, has_aux)[position]
        primals, directions = tuple(primals), tuple(directions)
        if has_aux or captures(func) is not None or _differentiable_derivative(func, primals, has_aux) \
                or not is_zero(t_func) or len(bind(func, primals, {})) != len(primals):
            raise _third_order(g, ans, func)
        values = tuple(bind(func, primals, {}))
        wrt = tuple(i for i, v in enumerate(values) if _float_like(v))
        if not wrt:
            return value, zero
        adjoint = compile(func, wrt, EAGER).function

        def per_value(tree: Any) -> tuple:
            return tuple(zero if is_zero(tree) else _as_tangent(part(tree, i)) for i in range(len(values)))

        v, dv, dx = per_value(TangentTuple(directions)), per_value(t_directions), per_value(t_primals)
        c_y, c_t = unthunk(part(g, 0)), unthunk(part(g, 1))
        dc_y, dc_t = (zero, zero) if is_zero(t_g) else (unthunk(part(t_g, 0)), unthunk(part(t_g, 1)))

        def pulled(c: Any, *along: tuple) -> Any:  # F(c), or its derivative along directions of x
            if is_zero(c) or any(all(is_zero(t) for t in d) for d in along):
                return zero
            if not along:
                return pulled_back(adjoint, to_tangent(c), *values)
            seeds = [(zero, zero, *d) for d in along]
            return pick(towers_along(pulled_back, (adjoint, to_tangent(c), *values), seeds), (True,) * len(along))

        if position == 2:
            terms = [pulled(c_t, dx), pulled(dc_t)]
        else:
            terms = [pulled(c_y, dx), pulled(dc_y), pulled(c_t, v, dx), pulled(dc_t, v), pulled(c_t, dv)]
        total: Any = zero
        for term in terms:
            total = add_tangents(total, term)
        where = {i: k for k, i in enumerate(wrt)}
        return value, TangentTuple(zero if is_zero(total) or i not in where else unthunk(part(total, where[i]))
                                   for i in range(len(primals)))

    return tangent


def _as_tangent(t: Any) -> Any:
    t = unthunk(t)
    return zero if t is None or is_zero(t) else to_tangent(t)


def _third_order(g: Any, ans: Any, func: Callable, *rest: Any) -> InvalidArgument:
    root = getattr(func, "root", func)
    return InvalidArgument(f"differentiating a function that calls jvp({label(func)}) ({where(root)}) twice over "
                           f"(a Hessian, hvp or jvp of a derivative of it): that is a derivative of order 3; "
                           f"{BEYOND_A_CALL}")


_RULE = (_of_function, _of_primals, _of_tangents), (_forward(0), _forward(1), _forward(2))
for _made in (*_RULE[0], *_RULE[1]):
    _made.__adsrc_refuse_again__ = _third_order  # second order's dispatcher raises it (dispatch._refuse_once_more)
_of_primals.__adsrc_tangent__, _of_tangents.__adsrc_tangent__ = _cotangents_tangent(1), _cotangents_tangent(2)
defvjp(jvp, *_RULE[0])
defjvp(jvp, *_RULE[1])
