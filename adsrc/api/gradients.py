"""Reverse mode: grad, value_and_grad, vjp, differentiate, adjoint_source.

A thin layer over the pipeline: it maps ``wrt`` to parameter positions,
binds the call's arguments, picks the mode (``eager=`` or the context's
setting, read at each call), runs the compiled adjoint and turns its results
into gradients shaped like the arguments (arguments.py). ``grad`` and
``value_and_grad`` return a :class:`Derivative`; given one, they
differentiate it once more, forward over reverse.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from ..backend.pipeline import EAGER, Mode, REVERSE, compile
from ..config import resolve_eager
from ..errors import InvalidArgument, NonScalarOutput
from ..values import to_tangent
from .arguments import (Fresh, Wrt, bind, check_differentiable, explain, positions,
                        refuse_subclasses, scalar_seed)
from .derivative import MAX_ORDER, Derivative
from .forward import jvp


def _mode(eager: bool | None) -> Mode:
    return EAGER if resolve_eager(eager) else REVERSE


def value_and_grad(func: Callable, wrt: Wrt = 0, *, eager: bool | None = None) -> Derivative:
    """A function that returns ``(func(*args), gradient)`` for a scalar-valued ``func``.

    ``wrt`` is a parameter position or name, or a tuple or list of them (the
    gradients then come as a tuple). Given a first derivative (``grad(f)``),
    it differentiates that once more.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(x ** 2)
    >>> value, dx = adsrc.value_and_grad(f)(np.array([1.0, 2.0]))
    >>> float(value), dx.tolist()
    (5.0, [2.0, 4.0])
    """
    if isinstance(func, Derivative):
        return _value_and_grad_of_derivative(func, wrt)
    wrt_positions, many = positions(func, wrt)

    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        values = bind(func, args, kwargs)
        check_differentiable(func, values, wrt_positions)
        adjoint = compile(func, wrt_positions, _mode(eager))
        try:
            value, pullback = adjoint.function(*values)
            grads = pullback(scalar_seed(value, func))
        except Exception as error:
            explain(error, func)
            raise
        fresh = Fresh(values, value)
        finished = tuple(fresh.finish(g, values[i]) for g, i in zip(grads, wrt_positions))
        return value, (finished if many else finished[0])

    return Derivative(func, wrt_positions, many, True, eager, run)


def grad(func: Callable, wrt: Wrt = 0, *, eager: bool | None = None) -> Derivative:
    """A function that returns the gradient of a scalar-valued ``func`` at its arguments.

    ``grad(grad(f))`` of a scalar function of a scalar is its second derivative.

    >>> import numpy as np, adsrc
    >>> def f(w, x):
    ...     return np.sum(np.tanh(w @ x))
    >>> dw = adsrc.grad(f)(np.zeros((2, 3)), np.ones(3))
    >>> dw.tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    """
    both = value_and_grad(func, wrt, eager=eager)
    return Derivative(both.of, both.wrt, both.many, False, eager, lambda *a, **k: both(*a, **k)[1])


def vjp(func: Callable, *args: Any, wrt: Wrt = 0, eager: bool | None = None) -> tuple[Any, Callable[[Any], Any]]:
    """``(func(*args), pullback)``; ``pullback(cotangent)`` returns the gradients for ``wrt``.

    The pullback may be called more than once; each call after the first
    re-runs the forward sweep, since a backward sweep consumes its tape.
    ``func`` may be a first derivative (``grad(f)``): its pullback is then a
    Hessian-vector product, computed forward over reverse.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return x * np.array([1.0, 2.0])
    >>> value, pullback = adsrc.vjp(f, 3.0)
    >>> value.tolist(), float(pullback(np.array([1.0, 1.0])))
    ([3.0, 6.0], 3.0)
    """
    if isinstance(func, Derivative):
        return _derivative_vjp(func, args, wrt)
    wrt_positions, many = positions(func, wrt)
    values = bind(func, args, {})
    check_differentiable(func, values, wrt_positions)
    adjoint = compile(func, wrt_positions, _mode(eager))
    try:
        value, first = adjoint.function(*values)
    except RecursionError as error:
        explain(error, func)
        raise
    state = {"pullback": first}

    def pullback(cotangent: Any) -> Any:
        refuse_subclasses(func, "cotangent", cotangent, "pullback's")
        backward = state.pop("pullback", None)
        if backward is None:
            backward = adjoint.function(*values)[1]
        if isinstance(value, (list, tuple, dict)):
            cotangent = to_tangent(cotangent)
        elif np.shape(cotangent) != np.shape(value):
            raise InvalidArgument(f"the cotangent has shape {np.shape(cotangent)}, but "
                                  f"{func.__name__} returned shape {np.shape(value)}")
        try:
            grads = backward(cotangent)
        except Exception as error:
            explain(error, func)
            raise
        fresh = Fresh(values, cotangent, value)
        finished = tuple(fresh.finish(g, values[i]) for g, i in zip(grads, wrt_positions))
        return finished if many else finished[0]

    return value, pullback


def adjoint_source(func: Callable, wrt: Wrt = 0, *, eager: bool = False, optimize: bool = True) -> str:
    """The generated adjoint module's source, as a string.

    ``optimize=False`` shows the raw output of the reverse pass, before the
    optimizer removes dead code, zero contributions and unread tape entries.

    >>> import adsrc
    >>> def f(x):
    ...     return x * x
    >>> "def f_adjoint(x):" in adsrc.adjoint_source(f)
    True
    """
    if isinstance(func, Derivative):
        raise func.refuse("adjoint_source", "a second derivative runs the eager adjoint of the function through "
                                            "the second-order pass at call time; print "
                                            "adjoint_source(f, eager=True) to see the code it transforms")
    wrt_positions, _ = positions(func, wrt)
    return compile(func, wrt_positions, Mode("reverse", bool(eager), bool(optimize))).source


# ---- second order: grad of a gradient, vjp of a gradient --------------------------------
def basis(like: Any) -> list[Any]:
    """Unit tangents, one per element of ``like`` (a float or a float array)."""
    if np.ndim(like) == 0 and not isinstance(like, np.ndarray):
        return [1.0]
    out = []
    for j in range(np.size(like)):
        e = np.zeros(np.shape(like), dtype=np.result_type(like, 1.0))
        e.flat[j] = 1.0
        out.append(e)
    return out


def columns(parts: list[Any], out_like: Any, in_like: Any) -> Any:
    """Stack directional derivatives (one per input element) into d out / d in."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return float(parts[0])
    return np.reshape(np.stack([np.asarray(c) for c in parts], axis=-1), shape)


def _value_and_grad_of_derivative(derivative: Derivative, wrt: Wrt) -> Derivative:
    """``value_and_grad`` of a scalar first derivative: forward over reverse, one pass per input element."""
    if derivative.order >= MAX_ORDER:
        raise derivative.refuse("grad", f"adsrc differentiates up to order {MAX_ORDER}, and this is already a "
                                        f"second derivative")
    if derivative.with_value or derivative.many:
        raise derivative.refuse("grad", "differentiating a gradient again needs a scalar derivative: "
                                        "grad(f) with a single wrt (use adsrc.hessian for the full matrix)")
    inner = derivative.root
    wrt_positions, many = positions(inner, wrt)

    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        values = tuple(bind(inner, args, kwargs))
        value, grads = None, []
        for q in wrt_positions:
            parts = []
            for e in basis(values[q]):
                tangents = tuple(e if i == q else None for i in range(len(values)))
                value, tangent = jvp(derivative, values, tangents)
                if np.ndim(value) != 0:
                    raise NonScalarOutput(derivative.describe(), np.shape(value), derivative.where)
                parts.append(tangent)
            grads.append(columns(parts, value, values[q]))
        if value is None:
            value = derivative(*values)
        return value, (tuple(grads) if many else grads[0])

    return Derivative(derivative, wrt_positions, many, True, derivative.eager, run)


def _derivative_vjp(derivative: Derivative, args: tuple, wrt: Wrt) -> tuple[Any, Callable[[Any], Any]]:
    """The vjp of ``grad(f, wrt=Q)`` with respect to ``P``: ``v -> sum_q d2f/dx_p dx_q v_q`` (a Hessian is
    symmetric), which is the jvp of ``grad(f, wrt=P)`` in the direction ``v`` at the positions ``Q``."""
    if derivative.order >= MAX_ORDER or derivative.with_value:
        raise derivative.refuse("vjp", "adsrc takes the vjp of a plain gradient, grad(f), up to second order")
    func = derivative.root
    wrt_positions, many = positions(func, wrt)
    values = tuple(bind(func, args, {}))
    value = derivative(*values)
    outer = grad(func, wrt_positions if many else wrt_positions[0], eager=True)

    def pullback(cotangent: Any) -> Any:
        directions = cotangent if derivative.many else (cotangent,)
        if len(directions) != len(derivative.wrt):
            raise InvalidArgument(f"the cotangent of {derivative.describe()} is a tuple of "
                                  f"{len(derivative.wrt)} arrays, one per gradient")
        tangents = [None] * len(values)
        for q, d in zip(derivative.wrt, directions):
            tangents[q] = d
        return jvp(outer, values, tuple(tangents))[1]

    return value, pullback


# ---- the decorator -------------------------------------------------------------------------
class Differentiated:
    """What ``@adsrc.differentiate`` returns: call it for gradients.

    ``.value_and_grad(*args)`` returns the value too, ``.source`` is the
    generated adjoint's source and ``__wrapped__`` is the original function.
    """

    def __init__(self, func: Callable, wrt: Wrt = 0, eager: bool | None = None):
        functools.update_wrapper(self, func)
        self.wrt = wrt
        self.eager = eager
        self._value_and_grad = value_and_grad(func, wrt, eager=eager)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._value_and_grad(*args, **kwargs)[1]

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self._value_and_grad(*args, **kwargs)

    @property
    def source(self) -> str:
        return adjoint_source(self.__wrapped__, self.wrt, eager=resolve_eager(self.eager))

    def __repr__(self) -> str:
        return f"<adsrc.differentiate of {self.__wrapped__.__name__}, wrt={self.wrt!r}>"


def differentiate(func: Callable | None = None, *, wrt: Wrt = 0, eager: bool | None = None):
    """Decorator: ``@differentiate`` or ``@differentiate(wrt=(0, 1), eager=False)``.

    >>> import adsrc
    >>> @adsrc.differentiate
    ... def loss(w):
    ...     return w * w
    >>> float(loss(3.0))
    6.0
    """
    if func is None:
        return lambda f: Differentiated(f, wrt, eager)
    return Differentiated(func, wrt, eager)
