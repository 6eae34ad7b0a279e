"""``Derivative``: what ``grad`` and ``value_and_grad`` return.

A Derivative is a callable that computes a gradient, and knows what it is
the gradient of: the function (``of``), the positions (``wrt``), whether it
returns the value too, and its order. Every entry point that takes a
function (``grad``, ``value_and_grad``, ``vjp``, ``jvp``, ``hessian``,
``adjoint_source``, the CLI) asks a Derivative what it is, so that a second
derivative goes forward over reverse, and what cannot be done is refused
with an error that names the user's function and where it is defined.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

from ..errors import InvalidArgument
from .arguments import where



class Derivative:
    """A derivative of a user's function, callable with that function's arguments.

    ``of`` is the function differentiated (itself a Derivative for a second
    derivative), ``root`` the user's original function, ``wrt`` the parameter
    positions, ``many`` whether gradients come as a tuple, ``with_value``
    whether the value comes first (value_and_grad), ``order`` 1, 2 or more,
    ``has_aux`` whether ``of`` returns ``(loss, aux)`` (then the derivative
    returns ``(gradient, aux)``, or ``((loss, aux), gradient)`` with the value).

    >>> import adsrc
    >>> def f(x):
    ...     return x ** 3
    >>> d2f = adsrc.grad(adsrc.grad(f))
    >>> d2f.order, d2f.root is f, float(d2f(2.0))
    (2, True, 12.0)
    """

    def __init__(self, of: Callable, wrt: tuple[int, ...], many: bool, with_value: bool,
                 eager: bool | None, run: Callable[..., Any], has_aux: bool = False):
        functools.update_wrapper(self, of)
        self.of = of
        self.root: Callable = of.root if isinstance(of, Derivative) else of
        self.order = of.order + 1 if isinstance(of, Derivative) else 1
        self.wrt = wrt
        self.many = many
        self.with_value = with_value
        self.eager = eager
        self.has_aux = has_aux
        self.picks: tuple[int | None, ...] = ()  # items of wrt that count into *args (api/reverse.py)
        self._run = run

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(*args, **kwargs)

    # Called inside a differentiated function (``adsrc.grad(g)(x)`` in ``f``), a derivative is a call of a
    # value (adsrc/calls.py), which asks it for its own derivatives; gradients.py and forward.py provide them.
    _pullback: Callable[..., Any]
    _pushforward: Callable[..., Any]

    def __adsrc_pullback__(self, args: tuple, wrt: tuple[int, ...], eager: bool) -> tuple[Any, Callable]:
        """``(self(*args), pullback)``, ``pullback(cotangent)`` giving a tuple of gradients for ``wrt``."""
        return type(self)._pullback(self, args, wrt)

    _pullback_tangent: Callable[..., Any]

    def __adsrc_pullback_tangent__(self, args: tuple, tangents: tuple, wrt: tuple[int, ...]) -> tuple:
        """``((value, pullback), (tangent, pullback_tangent))``: :meth:`__adsrc_pullback__` and its derivative
        along ``tangents`` of ``args``, ``pullback_tangent(g, dg)`` giving the gradients and their tangents (a
        derivative called inside a function differentiated twice, second_order/dispatch.py)."""
        return type(self)._pullback_tangent(self, args, tangents, wrt)

    def __adsrc_pushforward__(self, args: tuple, tangents: tuple) -> tuple[Any, Any]:
        """``(self(*args), its tangent)`` given the arguments' tangents."""
        return type(self)._pushforward(self, args, tangents)

    _lifted: Callable[..., Any]

    def __adsrc_lifted__(self) -> "Derivative":
        """This derivative of a local function (``grad(g)`` for ``g`` defined inside a differentiated
        function) as one of ``g`` lifted, which takes ``g``'s captured values first (rules/closures.py):
        its pullback then reaches them too."""
        return type(self)._lifted(self)

    @property
    def where(self) -> str:
        """``file:line`` of the user's function."""
        return where(self.root)

    def describe(self) -> str:
        kind = "value_and_grad" if self.with_value else "grad"
        inner = self.of.describe() if isinstance(self.of, Derivative) else getattr(self.of, "__name__", repr(self.of))
        return f"{kind}({inner}, has_aux=True)" if self.has_aux else f"{kind}({inner})"

    def refuse(self, what: str, remedy: str) -> InvalidArgument:
        """The error for something adsrc cannot do with this derivative, naming the user's function."""
        return InvalidArgument(f"{what} of {self.describe()} ({self.where}): {remedy}")

    def refuse_aux(self, what: str) -> None:
        """Refuse to differentiate once more a derivative made with ``has_aux=True``, or with a ``wrt`` that
        counts into ``*args``."""
        if self.picks:
            raise self.refuse(what, "its wrt counts into the function's *args, and adsrc differentiates such a "
                                    "derivative only once; give the function named parameters for those arguments")
        if self.has_aux:
            raise self.refuse(what, "a derivative made with has_aux=True returns its auxiliary data beside the "
                                    "gradient, and adsrc does not differentiate it again; differentiate "
                                    "grad(f) of a function that returns only the loss (has_aux=False)")

    def __repr__(self) -> str:
        return f"<adsrc {self.describe()}, wrt={self.wrt if self.many else self.wrt[0]!r}>"


def derivative_order(func: Callable) -> int:
    return func.order if isinstance(func, Derivative) else 0
