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

from ..backend.pipeline import Mode, compile
from ..backend.specialized import generic_reason, signature, specialized
from ..config import config, resolve_eager
from ..rules.closures import lift
from ..rules.registry import defjvp, defvjp
from ..errors import InvalidArgument, NonScalarOutput
from ..values import TangentList, TangentTuple, add_tangents, to_tangent, zero
from .reverse import Reverse, reverse_of
from .arguments import (Wrt, bind, choose_wrt, explain, positions, positions_and_picks,
                        refuse_subclasses, scalar_seed)
from .derivative import Derivative
from .forward import jvp, pushforward, split_aux
from .blocks import stack_columns, unit_vectors, zeros_like_leaf
from .trees import flatten
from .primitives import callable_for
from . import written


def _aux_cotangent(value: Any, cotangent: Any) -> Any:
    """The cotangent of a returned ``(output, aux)`` pair: ``cotangent`` for the output, none for aux."""
    return TangentTuple((cotangent, zero)) if isinstance(value, tuple) else TangentList([cotangent, zero])


def value_and_grad(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None,
                   eager: bool | None = None, has_aux: bool = False) -> Derivative:
    """A function that returns ``(func(*args), gradient)`` for a scalar-valued ``func``.

    ``wrt`` (or ``argnums``, its alias; position 0 by default) is a parameter
    position or name, or a tuple or list of them (the gradients then come as a
    tuple). ``eager`` picks eager or lazy accumulation (None: the context's
    setting, read at each call). With ``has_aux=True``, ``func`` returns
    ``(loss, aux)`` and the result is ``((loss, aux), gradient)``: ``aux`` comes
    back as computed, not differentiated. Given a first derivative
    (``grad(f)``), it differentiates that once more.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(x ** 2)
    >>> value, dx = adsrc.value_and_grad(f)(np.array([1.0, 2.0]))
    >>> float(value), dx.tolist()
    (5.0, [2.0, 4.0])
    >>> def g(x, y):
    ...     return np.sum(x * y), {"size": x.size}
    >>> (value, aux), (dx, dy) = adsrc.value_and_grad(g, argnums=(0, 1), has_aux=True)(np.ones(2), np.ones(2))
    >>> float(value), aux, dy.tolist()
    (2.0, {'size': 2}, [1.0, 1.0])
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        if has_aux:
            raise func.refuse("has_aux=True", "it needs a function that returns (output, aux), and a derivative "
                                              "returns gradients")
        return _value_and_grad_of_derivative(func, wrt)
    reverse = Reverse(func, *positions_and_picks(func, wrt))
    run = _gradients(func, reverse, eager, has_aux, with_value=True)
    made = Derivative(func, reverse.wrt, reverse.many, True, eager, run, has_aux=has_aux)
    made.picks = reverse.picks
    return made


def _gradients(func: Callable, reverse: Reverse, eager: bool | None, has_aux: bool,
               with_value: bool) -> Callable[..., Any]:
    """What a call of ``value_and_grad(func)`` runs, ``(value, gradient)``, or of ``grad(func)``: the
    gradient, or ``(gradient, aux)`` with ``has_aux``."""
    fixed = None if eager is None else bool(eager)  # None: the context's setting, read at each call

    def gradients(*args: Any, **kwargs: Any) -> Any:
        values, adjoint = reverse.prepare(func, args, kwargs, fixed, not has_aux)
        try:
            value, pullback = (written.runner(adjoint, values) if adjoint.written else adjoint.function)(*values)
            if has_aux:
                grads = pullback(_aux_cotangent(value, scalar_seed(split_aux(value, func)[0], func)))
            else:
                grads = pullback(scalar_seed(value, func))
        except Exception as error:
            explain(error, func)
            raise
        kind = type(value)
        # a number shares no memory
        gradient = reverse.finish(grads, values) if kind is float or kind is np.float64 \
            else reverse.finish(grads, values, value)
        if with_value:
            return value, gradient
        return (gradient, value[1]) if has_aux else gradient

    return gradients


def grad(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None, eager: bool | None = None,
         has_aux: bool = False) -> Derivative:
    """A function that returns the gradient of a scalar-valued ``func`` at its arguments.

    ``wrt`` or ``argnums``, ``eager``: as in :func:`value_and_grad`. With
    ``has_aux=True``, ``func`` returns ``(loss, aux)`` and the result is
    ``(gradient, aux)``. ``grad(grad(f))`` of a scalar function of a scalar is
    its second derivative.

    >>> import numpy as np, adsrc
    >>> def f(w, x):
    ...     return np.sum(np.tanh(w @ x))
    >>> dw = adsrc.grad(f)(np.zeros((2, 3)), np.ones(3))
    >>> dw.tolist()
    [[1.0, 1.0, 1.0], [1.0, 1.0, 1.0]]
    >>> def cube(x):
    ...     return x ** 3
    >>> float(adsrc.grad(adsrc.grad(cube))(2.0))
    12.0
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        both = value_and_grad(func, wrt, eager=eager, has_aux=has_aux)

        def run(*args: Any, **kwargs: Any) -> Any:
            return both(*args, **kwargs)[1]
        made = Derivative(both.of, both.wrt, both.many, False, eager, run)
        made._along = lambda values, directions, masks: [g for _, g in both._along(values, directions, masks)]
        return made
    reverse = Reverse(func, *positions_and_picks(func, wrt))
    run = _gradients(func, reverse, eager, has_aux, with_value=False)
    made = Derivative(func, reverse.wrt, reverse.many, False, eager, run, has_aux=has_aux)
    made.picks = reverse.picks
    return made


def vjp(func: Callable, *args: Any, wrt: Wrt | None = None, argnums: Wrt | None = None,
        eager: bool | None = None, has_aux: bool = False) -> tuple:
    """``(func(*args), pullback)``; ``pullback(cotangent)`` returns the gradients for ``wrt``.

    ``wrt`` or ``argnums``, ``eager``: as in :func:`value_and_grad`. The
    pullback may be called more than once; each call after the first re-runs
    the forward sweep, since a backward sweep consumes its tape. With
    ``has_aux=True``, ``func`` returns ``(output, aux)`` and ``vjp`` returns
    ``(output, pullback, aux)``. ``func`` may be a first derivative
    (``grad(f)``): its pullback is then a Hessian-vector product, computed
    forward over reverse.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return x * np.array([1.0, 2.0])
    >>> value, pullback = adsrc.vjp(f, 3.0)
    >>> value.tolist(), float(pullback(np.array([1.0, 1.0])))
    ([3.0, 6.0], 3.0)
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        if has_aux:
            raise func.refuse("has_aux=True in vjp", "it needs a function that returns (output, aux), and a "
                                                     "derivative returns gradients")
        return _derivative_vjp(func, args, wrt)
    reverse = reverse_of(func, wrt)
    values, generic = reverse.prepare(func, args, {}, None if eager is None else bool(eager), False)
    # The adjoint specialized for the arguments' kinds, as grad runs it. It takes a scalar result's
    # cotangent to be a float (a gradient's seed); another cotangent is pulled back by the generic one.
    adjoint = (specialized(generic, signature(values)) if config.specialize and not has_aux else None) or generic
    prepared_call = written.prepared(adjoint, values)  # the same for the generic adjoint: both write what f writes
    try:
        returned, first = written.run(adjoint, prepared_call, values)
    except RecursionError as error:
        explain(error, func)
        raise
    value, aux = split_aux(returned, func) if has_aux else (returned, None)
    state = {"pullback": first}

    def pullback(cotangent: Any) -> Any:
        refuse_subclasses(func, "cotangent", cotangent, "pullback's")
        backward = state.pop("pullback", None)
        if adjoint is not generic and type(value) in _NUMBERS and type(cotangent) not in _SEEDS:
            backward = written.run(generic, prepared_call, values)[1]
        elif backward is None:
            backward = written.run(adjoint, prepared_call, values)[1]
        if isinstance(value, (list, tuple, dict)):
            cotangent = to_tangent(cotangent)
        elif _shape(cotangent) != _shape(value):
            raise InvalidArgument(f"the cotangent has shape {np.shape(cotangent)}, but "
                                  f"{func.__name__} returned shape {np.shape(value)}")
        try:
            grads = backward(_aux_cotangent(returned, cotangent) if has_aux else cotangent)
        except Exception as error:
            explain(error, func)
            raise
        return reverse.finish(grads, values, cotangent, returned)

    return (value, pullback, aux) if has_aux else (value, pullback)


_NUMBERS = (float, int, np.float64)  # a result whose cotangent a specialized adjoint takes to be a float
_SEEDS = (float, np.float64)


def _shape(value: Any) -> tuple:
    """``np.shape(value)``, without its call for a float or an array."""
    kind = type(value)
    return value.shape if kind is np.ndarray else () if kind is float else np.shape(value)


def adjoint_source(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None, eager: bool = False,
                   optimize: bool = True, args: tuple | None = None) -> str:
    """The generated adjoint module's source, as a string.

    ``wrt`` or ``argnums``: as in :func:`value_and_grad`. ``optimize=False``
    shows the raw output of the reverse pass, before the optimizer removes
    dead code, zero contributions and unread tape entries. ``args``, a tuple
    of example arguments, shows the adjoint specialized for their kinds
    (types, dtypes and shapes), which ``grad`` runs for such arguments; the
    generic one where the specialization changes nothing. The second line
    of the source says which of them ``grad`` runs: without ``args``, the
    generic adjoint, which calls with floats, ints or NumPy arrays run
    specialized for their kinds.

    >>> import math, adsrc
    >>> def f(x):
    ...     return math.sin(x) * x
    >>> "def f_adjoint(x):" in adsrc.adjoint_source(f)
    True
    >>> print(adsrc.adjoint_source(f, args=(0.5,)).split("def pullback")[1].strip())
    (dsin_x_times_x):
            # line 2: return math.sin(x) * x
            dx = dsin_x_times_x * sin_x
            dx = dx + dsin_x_times_x * x * math.cos(x)
            return (dx,)
        return (sin_x_times_x, pullback)
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        raise func.refuse("adjoint_source", "a second derivative runs the eager adjoint of the function through "
                                            "the second-order pass at call time; print "
                                            "adjoint_source(f, eager=True) to see the code it transforms")
    wrt_positions, _ = positions(func, wrt)
    compiled = compile(func, wrt_positions, Mode("reverse", bool(eager), bool(optimize)))
    if args is None or not optimize:
        return compiled.source
    key = signature(bind(func, tuple(args), {}))
    found = specialized(compiled, key) if config.specialize else None
    if found is not None:
        return found.source
    # grad runs the generic adjoint for these arguments: its second line says why (the line count stays)
    reason = generic_reason(compiled, key) if config.specialize else "adsrc.config.specialize is off"
    lines = compiled.source.split("\n")
    assert lines[1].startswith("# The generic form."), lines[1]  # the generic adjoint's note (backend/pipeline.py)
    lines[1] = f"# The generic form, which grad({getattr(func, '__name__', 'f')}) runs for these arguments: {reason}."
    return "\n".join(lines)


# ---- second order: grad of a gradient, vjp of a gradient --------------------------------
def _value_and_grad_of_derivative(derivative: Derivative, wrt: Wrt) -> Derivative:
    """``value_and_grad`` of a scalar derivative: forward mode over it, one pass per input element, at any
    order (each pass differentiates the order below once more, second_order/towers.py)."""
    derivative.refuse_aux("grad")
    if derivative.with_value or derivative.many:
        raise derivative.refuse("grad", "differentiating a gradient again needs a scalar derivative: "
                                        "grad(f) with a single wrt (use adsrc.hessian for the full matrix)")
    inner = derivative.root
    wrt_positions, many = positions(inner, wrt)

    def along(values: Any, directions: list, masks: list) -> list:
        """``(value, gradients)`` differentiated along the directions each mask selects: the gradient's
        columns are the derivative's own along each unit vector, innermost."""
        values = tuple(values)
        values_of = None  # per mask: derivative(*values) differentiated along it
        grads: list[list] = [[] for _ in masks]  # per mask, per wrt position
        for q in wrt_positions:
            leaves, unflatten = flatten(values[q])
            blocks: list[list] = [[] for _ in masks]
            for k, leaf in enumerate(leaves):
                parts: list[list] = [[] for _ in masks]
                for e in unit_vectors(leaf):
                    direction = unflatten([e if j == k else zeros_like_leaf(x) for j, x in enumerate(leaves)])
                    unit = tuple(direction if i == q else None for i in range(len(values)))
                    own = [(True, *m) for m in masks]
                    results = pushforward(derivative, values, [unit, *directions],
                                          own + ([(False, *m) for m in masks] if values_of is None else []))
                    if values_of is None:
                        values_of = results[len(masks):]
                        _check_scalar(derivative, values_of[0])
                    for n in range(len(masks)):
                        parts[n].append(results[n])
                for n in range(len(masks)):
                    blocks[n].append(stack_columns(parts[n], values_of[0], leaf))
            for n in range(len(masks)):
                grads[n].append(unflatten(blocks[n]))
        if values_of is None:  # no input element at all
            values_of = pushforward(derivative, values, directions, masks) if directions else [derivative(*values)]
            _check_scalar(derivative, values_of[0])
        return [(values_of[n], tuple(grads[n]) if many else grads[n][0]) for n in range(len(masks))]

    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return along(bind(inner, args, kwargs), [], [()])[0]

    made = Derivative(derivative, wrt_positions, many, True, derivative.eager, run)
    made._along = along
    return made


def _check_scalar(derivative: Derivative, value: Any) -> None:
    if np.ndim(value) != 0 or isinstance(value, (tuple, list, dict)):
        raise NonScalarOutput(derivative.describe(), np.shape(value), derivative.where)


def _derivative_vjp(derivative: Derivative, args: tuple, wrt: Wrt) -> tuple[Any, Callable[[Any], Any]]:
    """The vjp of ``grad(f, wrt=Q)`` with respect to ``P``: ``v -> sum_q d2f/dx_p dx_q v_q`` (a Hessian is
    symmetric), which is the jvp of ``grad(f, wrt=P)`` in the direction ``v`` at the positions ``Q``. Of a
    higher derivative, ``grad(g, wrt=Q)`` with ``g`` itself a derivative, the same with ``g`` for ``f``."""
    derivative.refuse_aux("vjp")
    func = derivative.root
    wrt_positions, many = positions(func, wrt)
    values = tuple(bind(func, args, {}))
    value = derivative(*values)
    outer = grad(derivative.of, wrt_positions if many else wrt_positions[0], eager=True)

    def pullback(cotangent: Any) -> Any:
        # value_and_grad(f): the cotangent is (of the value, of the gradients); the value's part pulls back
        # through grad(f, wrt=P), which the jvp below computes on the way
        of_value, cotangent = _of_value_and_gradients(derivative, cotangent) if derivative.with_value \
            else (None, cotangent)
        directions = cotangent if derivative.many else (cotangent,)
        if _is_no_cotangent(cotangent):
            directions = (None,) * len(derivative.wrt)
        if len(directions) != len(derivative.wrt):
            raise InvalidArgument(f"the cotangent of {derivative.describe()} is a tuple of "
                                  f"{len(derivative.wrt)} arrays, one per gradient")
        tangents = [None] * len(values)
        for q, d in zip(derivative.wrt, directions):
            tangents[q] = None if _is_no_cotangent(d) else d
        gradient, result = jvp(outer, values, tuple(tangents))
        if _is_no_cotangent(of_value):
            return result
        scaled = tuple(of_value * part for part in gradient) if many else (of_value * gradient,)
        if all(t is None for t in tangents):
            return scaled if many else scaled[0]
        summed = tuple(a + b for a, b in zip(result if many else (result,), scaled))
        return summed if many else summed[0]

    return value, pullback


def _is_no_cotangent(part: Any) -> bool:
    return part is None or part is zero


def _of_value_and_gradients(derivative: Derivative, cotangent: Any) -> tuple[Any, Any]:
    """The cotangent of ``value_and_grad(f)``'s result split into (of the value, of the gradients)."""
    if _is_no_cotangent(cotangent):
        return None, None
    if not isinstance(cotangent, (tuple, list)) or len(cotangent) != 2:
        raise InvalidArgument(f"the cotangent of {derivative.describe()} is a pair (of the value, of the "
                              f"gradients), as its result is")
    return cotangent[0], cotangent[1]


def _nested_pullback(derivative: Derivative, args: tuple, wrt: tuple[int, ...]) -> tuple[Any, Callable]:
    """A derivative called inside a differentiated function: its vjp, with a tuple of gradients."""
    if not wrt:
        return derivative(*args), lambda cotangent: ()
    value, pullback = _derivative_vjp(derivative, args, wrt)
    return value, pullback


def _nested_pullback_tangent(derivative: Derivative, args: tuple, tangents: tuple, wrt: tuple[int, ...]) -> tuple:
    """A derivative called inside a function differentiated twice: its vjp (``_derivative_vjp``) and the
    derivative of both along the arguments' tangents. The vjp of ``grad(g, Q)`` in ``P`` is the jvp of
    ``grad(g, P)`` along the cotangent at ``Q``, so its derivative is that gradient along the cotangent and
    the tangents, one order more (api/forward.py ``pushforward``), plus the vjp of the cotangent's tangent."""
    if derivative.with_value or derivative.has_aux or derivative.picks:
        raise derivative.refuse("differentiating a function that calls it twice", "only a grad(f) of named "
                                "parameters, without has_aux, is differentiated there three times over")
    value, pullback = _nested_pullback(derivative, args, wrt)
    moved = tuple(None if _is_no_cotangent(t) else t for t in tangents)
    varied = any(t is not None for t in moved)
    tangent = pushforward(derivative, args, [moved], [(True,)])[0] if varied else zero
    outer = grad(derivative.of, wrt, eager=True) if wrt else None

    def at_wrt(cotangent: Any) -> tuple:  # the derivative's cotangent as tangents of its parameters
        directions: list = [None] * len(args)
        for q, d in zip(derivative.wrt, cotangent if derivative.many else (cotangent,)):
            directions[q] = d
        return tuple(directions)

    def pullback_tangent(g: Any, dg: Any) -> tuple[tuple, tuple]:
        grads = pullback(g) if g is not zero else (zero,) * len(wrt)
        dgrads = pullback(dg) if dg is not zero else (zero,) * len(wrt)
        if varied and g is not zero and outer is not None:
            third = pushforward(outer, args, [at_wrt(g), moved], [(True, True)])[0]
            dgrads = tuple(add_tangents(a, b) for a, b in zip(dgrads, third))
        return grads, dgrads

    return (value, pullback), (tangent, pullback_tangent)


def _lifted_derivative(derivative: Derivative) -> Derivative:
    """``grad(g)`` of a local function ``g`` as ``grad(lift(g))`` at the same parameters, counted after
    ``g``'s captured values (see Derivative.__adsrc_lifted__)."""
    count = len(derivative.root.__code__.co_freevars)
    func = derivative.of.__adsrc_lifted__() if isinstance(derivative.of, Derivative) else lift(derivative.root)
    wrt = tuple(count + q for q in derivative.wrt)
    maker = value_and_grad if derivative.with_value else grad
    made = maker(func, wrt if derivative.many else wrt[0], eager=derivative.eager, has_aux=derivative.has_aux)
    made.__class__ = type(derivative)  # a subclass of Derivative stays one (its own __call__)
    return made


Derivative._pullback = _nested_pullback
Derivative._pullback_tangent = _nested_pullback_tangent
Derivative._pushforward = lambda derivative, args, tangents: jvp(derivative, args, tangents)
Derivative._lifted = _lifted_derivative


def _same_cotangent(g: Any, ans: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
    return g


def _same_tangent(t: Any, ans: Any, func: Any, *args: Any, **kwargs: Any) -> Any:
    return t


# grad(g) of a local function g inside a differentiated function: the derivative's cotangent (and tangent) is
# g's own, the tuple of g's captured values' (rules/closures.py), which calls.py hands to its lifted form.
for _maker in (grad, value_and_grad):
    defvjp(_maker, _same_cotangent, None)
    defjvp(_maker, _same_tangent, None, piecewise_linear=True)


# ---- the decorator -------------------------------------------------------------------------
class Differentiated:
    """What ``@adsrc.differentiate`` returns: call it for gradients.

    ``.value_and_grad(*args)`` returns the value too, ``.source`` is the
    generated adjoint's source and ``__wrapped__`` is the original function.
    With ``has_aux=True`` a call returns ``(gradient, aux)`` and
    ``.value_and_grad`` returns ``((loss, aux), gradient)``.

    >>> import adsrc
    >>> @adsrc.differentiate(wrt="w")
    ... def loss(w, x):
    ...     return w * x
    >>> float(loss(2.0, 3.0)), [float(v) for v in loss.value_and_grad(2.0, 3.0)]
    (3.0, [6.0, 3.0])
    """

    def __init__(self, func: Callable, wrt: Wrt | None = None, eager: bool | None = None, *,
                 argnums: Wrt | None = None, has_aux: bool = False):
        func = callable_for(func)
        functools.update_wrapper(self, func)
        self.wrt = choose_wrt(wrt, argnums)
        self.eager = eager
        self.has_aux = has_aux
        self._value_and_grad = value_and_grad(func, self.wrt, eager=eager, has_aux=has_aux)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        value, gradient = self._value_and_grad(*args, **kwargs)
        return (gradient, value[1]) if self.has_aux else gradient

    def value_and_grad(self, *args: Any, **kwargs: Any) -> tuple[Any, Any]:
        return self._value_and_grad(*args, **kwargs)

    @property
    def source(self) -> str:
        return adjoint_source(self.__wrapped__, self.wrt, eager=resolve_eager(self.eager))

    def __repr__(self) -> str:
        aux = ", has_aux=True" if self.has_aux else ""
        return f"<adsrc.differentiate of {self.__wrapped__.__name__}, wrt={self.wrt!r}{aux}>"


def differentiate(func: Callable | None = None, *, wrt: Wrt | None = None, argnums: Wrt | None = None,
                  eager: bool | None = None, has_aux: bool = False):
    """Decorator: ``@differentiate`` or ``@differentiate(wrt=(0, 1), eager=False, has_aux=False)``.

    The options are those of :func:`value_and_grad` (``argnums`` is an alias
    of ``wrt``); see :class:`Differentiated` for what it returns.

    >>> import adsrc
    >>> @adsrc.differentiate
    ... def loss(w):
    ...     return w * w
    >>> float(loss(3.0))
    6.0
    >>> @adsrc.differentiate(has_aux=True)
    ... def loss_and_count(w):
    ...     return w * w, "one step"
    >>> gradient, aux = loss_and_count(3.0)
    >>> float(gradient), aux
    (6.0, 'one step')
    """
    wrt = choose_wrt(wrt, argnums)
    if func is None:
        return lambda f: Differentiated(f, wrt, eager, has_aux=has_aux)
    return Differentiated(func, wrt, eager, has_aux=has_aux)
