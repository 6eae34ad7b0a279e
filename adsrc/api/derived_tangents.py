"""The tangent of a user rule registered with a vjp only, derived by transposing the vjp.

A vjp ``g -> J^T g`` is linear in its cotangent ``g``; the tangent ``t -> J t``
is its transpose, which is the vjp of the vjp with respect to ``g`` (at any
``g``; zero is used) pulled back along ``t``. adsrc reads the user's vjp like
any other function, so forward mode (``jvp``), forward over reverse (``hvp``,
``hessian``) and ``jacobian`` reach a rule given only as ``register_adjoint(f, vjp)``.
A vjp adsrc cannot differentiate is refused with NoGradientRule naming the rule
and the vjp's file:line, with the remedy (``defjvp``).

>>> import numpy as np, adsrc
>>> def cube(x):
...     return x ** 3
>>> def cube_vjp(g, ans, x):
...     return 3.0 * g * x ** 2
>>> rule = adsrc.register_adjoint(cube, cube_vjp)
>>> def f(x):
...     return np.sum(cube(x))
>>> float(adsrc.jvp(f, (np.array([1.0, 2.0]),), (np.ones(2),))[1])
15.0
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import AdsrcError, NoGradientRule
from ..rules.registry import Rule, set_tangent_deriver
from ..values import unthunk
from .arguments import where
from .gradients import vjp


def _zero_like(ans: Any) -> Any:
    if isinstance(ans, (tuple, list)):
        return type(ans)(_zero_like(a) for a in ans)
    if isinstance(ans, (float, int, complex)):
        return 0.0 * ans
    return np.zeros_like(ans)


def transposed_vjp(source: Callable, index: int | None, t: Any, ans: Any, args: tuple, kwargs: dict,
                   rule: Rule, i: int) -> Any:
    """``J t`` for argument ``i`` of ``rule``: the pullback along ``t`` of ``g -> source(g, ans, *args)``
    (its ``index``-th result when ``source`` returns every argument's contribution)."""
    def refuse(why: str) -> NoGradientRule:
        return NoGradientRule(
            f"{rule.qualname} (argument {i}) in forward mode: the rule has a vjp and no tangent, and deriving the "
            f"tangent by differentiating that vjp failed ({why})", where(source),
            remedy=f"adsrc.rules.registry.defjvp({rule.name}, jvp), one jvp(t, ans, *args) per argument "
                   f"(docs/higher-order.md)")

    if kwargs:
        raise refuse("the call passes keyword arguments")
    try:
        contributions, pullback = vjp(source, _zero_like(unthunk(ans)), ans, *args, wrt=0)
        if index is not None:
            t = tuple(t if k == index else None for k in range(len(contributions)))
        return pullback(t)
    except AdsrcError as error:
        raise refuse(str(error).splitlines()[0]) from error


set_tangent_deriver(transposed_vjp)
