"""``fixed_point``: solve ``x = f(a, x)`` by iteration, differentiated by the implicit function theorem.

The forward computation is a plain Python loop; nothing of it is kept. At
the solution ``x*``, ``x* = f(a, x*)``, so a change of ``a`` moves ``x*`` by
``dx = J_x dx + J_a da`` (``J_x``, ``J_a``: the derivatives of ``f`` at
``(a, x*)``). Reverse mode solves ``w = g + J_x^T w`` for the cotangent
``g`` of ``x*`` by the same kind of iteration (one vjp of ``f`` per step)
and returns ``J_a^T w``; forward mode solves ``u = J_x u + J_a t``. Both
converge where the forward iteration does (``J_x`` is then a contraction
near ``x*``). The rules are registered for :func:`fixed_point` itself, so
any differentiated function may call it; ``f`` is a value its rules call
(with ``adsrc.vjp`` and ``adsrc.jvp``), and a local function that captures
differentiated values gets their gradients too.
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import InvalidArgument, NotConverged, NotDifferentiable
from ..rules.closures import captures, lift
from ..rules.registry import defjvp, defvjp
from ..values import TangentTuple, is_zero, zero
from .arguments import Fresh, label
from .forward import jvp
from .gradients import vjp
from .trees import flatten
from ..rules.given import repeated

jvp, vjp = repeated(jvp, "fixed_point's derivative"), repeated(vjp, "fixed_point's derivative")

__all__ = ["fixed_point"]


def _change(new: list[Any], old: list[Any]) -> tuple[float, float]:
    """The largest change of any element between two lists of leaves, and the largest magnitude in ``new``."""
    change, size = 0.0, 0.0
    for n, o in zip(new, old):
        n, o = np.asarray(n), np.asarray(o)
        if n.size:
            if not np.all(np.isfinite(n)):  # inf - inf is NaN, and max() would pass over it
                return float("nan"), float("inf")
            change = max(change, float(np.max(np.abs(n - o))))
            size = max(size, float(np.max(np.abs(n))))
    return change, size


def _iterate(step: Callable[[Any], Any], start: Any, tol: float, max_iter: int, what: str) -> Any:
    """``x = step(x)`` from ``start`` until no element changes by more than ``tol * max(1, max|x|)``."""
    leaves = flatten(start)[0]
    x = start
    change = float("nan")
    for _ in range(max_iter):
        new = step(x)
        new_leaves = flatten(new)[0]
        if len(new_leaves) != len(leaves):
            raise InvalidArgument(f"{what}: the function returned {len(new_leaves)} arrays where its argument "
                                  f"x has {len(leaves)}; it must return a value of x's structure")
        change, size = _change(new_leaves, leaves)
        x, leaves = new, new_leaves
        if not np.isfinite(change):
            break
        if change <= tol * max(1.0, size):
            return x
    if not np.isfinite(change):
        raise NotConverged(f"{what} did not converge: a value became infinite or NaN; check that the "
                           f"iteration is a contraction near its solution, and start it closer to it")
    raise NotConverged(f"{what} did not converge in {max_iter} iterations (the last change was {change:.3g}, "
                       f"the tolerance {tol:g}); raise max_iter, loosen tol, or check that the iteration is a "
                       f"contraction near its solution")


def _check(tol: Any, max_iter: Any) -> None:
    if isinstance(max_iter, bool) or not isinstance(max_iter, (int, np.integer)) or max_iter < 1:
        raise InvalidArgument(f"fixed_point: max_iter must be a positive integer, not {max_iter!r}")
    if isinstance(tol, bool) or not isinstance(tol, (int, float, np.floating)) or not tol > 0:
        raise InvalidArgument(f"fixed_point: tol must be a positive number, not {tol!r}")


def fixed_point(f: Callable[[Any, Any], Any], a: Any, x0: Any, *, tol: float = 1e-10,
                max_iter: int = 1000) -> Any:
    """The solution ``x`` of ``x = f(a, x)``, by iterating ``x = f(a, x)`` from ``x0``.

    ``a`` (the parameters) and ``x0`` (the first guess) may be floats, arrays
    or pytrees; ``f(a, x)`` returns a value of ``x0``'s structure. The
    iteration stops when no element of ``x`` changes by more than
    ``tol * max(1, max|x|)`` in one step, and returns that last iterate; if
    ``max_iter`` steps do not get there (or a value becomes NaN or
    infinite), it raises ``adsrc.errors.NotConverged``. Called in a function
    that adsrc differentiates, its derivative with respect to ``a`` (and to
    the values a local ``f`` captures) is that of the exact solution, by
    the implicit function theorem: the backward sweep solves
    ``w = g + (df/dx)^T w`` by the same iteration, with the same ``tol`` and
    ``max_iter``, and returns ``(df/da)^T w``; forward mode solves
    ``u = (df/dx) u + (df/da) t``. The derivative with respect to ``x0`` is
    zero. The forward iteration keeps no tape. Second derivatives through
    it are not computed (refused).

    >>> import numpy as np, adsrc
    >>> def babylonian(a, x):
    ...     return 0.5 * (x + a / x)
    >>> round(float(adsrc.fixed_point(babylonian, 2.0, 1.0)), 12)
    1.414213562373
    >>> def loss(a):
    ...     return adsrc.fixed_point(babylonian, a, 1.0)
    >>> round(float(adsrc.grad(loss)(4.0)), 12)  # d sqrt(a) / da = 1 / (2 sqrt(a))
    0.25
    """
    _check(tol, max_iter)
    return _iterate(lambda x: f(a, x), x0, tol, max_iter, f"fixed_point({label(f)})")


# ---- the derivatives -----------------------------------------------------------------------------------
def _parts(f: Callable) -> tuple[Callable, tuple]:
    """The function the rules differentiate and the values it takes first: a local function lifted, with its
    captured values (rules/closures.py); any other as it is, with none."""
    captured = captures(f)
    if captured:
        return lift(f), captured
    return f, ()


def _concrete(cotangent: Any, like: Any) -> Any:
    """A cotangent (or tangent) of ``like`` as a value of ``like``'s structure, with zeros where none flowed."""
    return Fresh(like).finish(cotangent, like)


def _options(kwargs: dict) -> tuple[float, int]:
    return kwargs.get("tol", 1e-10), kwargs.get("max_iter", 1000)


def _plus(u: Any, v: Any) -> Any:
    """``u + v`` leaf by leaf for two values of one structure (the first one's)."""
    left, unflatten = flatten(u)
    return unflatten([p + q for p, q in zip(left, flatten(v)[0])])


_solved: dict[str, Any] = {}  # the last adjoint solve, which the rule of ``a`` and of ``f`` share


def _adjoint(g: Any, ans: Any, f: Callable, a: Any, kwargs: dict) -> tuple[Callable, Callable, tuple, Any]:
    """``w`` solving ``w = g + J_x^T w`` at ``x* = ans``, with the pullback of ``f`` at ``(a, x*)``."""
    last = _solved.get("key")
    if last is not None and last[0] is g and last[1] is ans and last[2] is f and last[3] is a:
        return _solved["value"]
    func, captured = _parts(f)
    count = len(captured)
    tol, max_iter = _options(kwargs)
    g = _concrete(g, ans)
    _, pull_x = vjp(func, *captured, a, ans, wrt=count + 1)
    w = _iterate(lambda w: _plus(g, pull_x(w)), g, tol, max_iter,
                 f"the adjoint of fixed_point({label(f)}) (w = g + (df/dx)^T w)")
    value = (func, captured, w)
    _solved["key"], _solved["value"] = (g, ans, f, a), value
    return value


def _vjp_a(g: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    func, captured, w = _adjoint(g, ans, f, a, kwargs)
    _, pull_a = vjp(func, *captured, a, ans, wrt=len(captured))
    return pull_a(w)


def _vjp_f(g: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    """The cotangent of a local ``f``: that of the values it captures, in order (rules/closures.py)."""
    func, captured, w = _adjoint(g, ans, f, a, kwargs)
    if not captured:
        return zero
    _, pull = vjp(func, *captured, a, ans, wrt=tuple(range(len(captured))))
    return TangentTuple(pull(w))


def _vjp_x0(g: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    return zero  # the solution does not depend on where the iteration starts


def _tangent(ans: Any, f: Callable, a: Any, moved: tuple, kwargs: dict) -> Any:
    """``u`` solving ``u = J_x u + (the tangent of f(a, x) at fixed x in the directions moved)``."""
    func, captured = _parts(f)
    tol, max_iter = _options(kwargs)
    primals = (*captured, a, ans)
    fixed = tuple(None if is_zero(t) else t for t in moved)
    _, source = jvp(func, primals, fixed + (None,))
    source = _concrete(source, ans)
    return _iterate(lambda u: _plus(source, jvp(func, primals, (None,) * (len(primals) - 1) + (u,))[1]),
                    source, tol, max_iter, f"the tangent of fixed_point({label(f)}) (u = (df/dx) u + (df/da) t)")


def _jvp_a(t: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    captured = _parts(f)[1]
    return _tangent(ans, f, a, (None,) * len(captured) + (t,), kwargs)


def _jvp_f(t: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    captured = _parts(f)[1]
    if not captured or is_zero(t):
        return zero
    return _tangent(ans, f, a, tuple(t) + (None,), kwargs)


def _jvp_x0(t: Any, ans: Any, f: Callable, a: Any, x0: Any, **kwargs: Any) -> Any:
    return zero


def _second_order(*args: Any, **kwargs: Any) -> Any:
    raise NotDifferentiable("second derivatives through adsrc.fixed_point are not computed (its gradient solves "
                            "a linear fixed point whose own derivative adsrc does not derive); differentiate "
                            "it once, or write the iteration as a Python loop to differentiate it twice")


# The adjoint solve marks where second order would go through the iteration: refused, by a rule of its own.
defvjp(_adjoint, *[_second_order] * 5)
defjvp(_adjoint, *[_second_order] * 5)
defvjp(fixed_point, _vjp_f, _vjp_a, _vjp_x0)
defjvp(fixed_point, _jvp_f, _jvp_a, _jvp_x0)
