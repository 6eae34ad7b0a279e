"""Second order and Jacobians: hvp, hessian, jacobian.

Second order is forward over reverse (see forward.py): ``hvp`` is one jvp of
a gradient; ``hessian`` and ``jacobian`` of a gradient take one per input
element (a Hessian is symmetric, so its columns are its rows). A plain
Jacobian is built row by row through ``vjp`` (``mode="rev"``) or column by
column through ``jvp`` (``mode="fwd"``). Third and higher derivatives are
refused (Derivative.order).
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import numpy as np

from ..errors import BEYOND_A_CALL, InvalidArgument
from ..second_order.towers import along, pick
from ..values import add_tangents, to_tangent, zero
from .arguments import Fresh, Wrt, bind, check_differentiable, choose_wrt, label, positions
from .arguments import where as _where
from .derivative import Derivative
from .forward import jvp, pushforward
from .gradients import grad, vjp, _same_cotangent, _same_tangent
from .blocks import is_float_leaf, stack_columns, stack_rows, unit_vectors, zeros_like_leaf
from .trees import flatten
from .primitives import callable_for
from .vmap import vjp_rows
from ..rules.closures import lift
from ..rules.given import repeated
from ..rules.registry import defjvp, defvjp

jvp = repeated(jvp, "a Jacobian or Hessian built column by column")


def _root(func: Callable) -> Callable:
    """The function whose parameters ``func`` takes: for a derivative or Jacobian, the user's function."""
    return func.root if isinstance(func, (Derivative, Jacobian)) else func


class Jacobian:
    """What :func:`jacobian` returns: a callable that knows what it differentiates.

    ``of`` is the function, ``root`` the user's function, ``wrt`` the
    positions, ``order`` 1 (2 for the Jacobian of a gradient, a Hessian).
    Given to ``jacobian`` again, or called inside a differentiated function,
    a first-order Jacobian gives its own derivatives: the rows of the
    Jacobian of an array-valued ``f`` are the gradients of its elements, and
    differentiating those is forward over reverse (a jvp, or the vjp, of
    ``grad``), so ``jacobian(jacobian(f))`` is a second derivative.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return x ** 3
    >>> adsrc.jacobian(adsrc.jacobian(f))(np.array([1.0, 2.0])).tolist()
    [[[6.0, 0.0], [0.0, 0.0]], [[0.0, 0.0], [0.0, 12.0]]]
    """

    def __init__(self, of: Callable, wrt: tuple[int, ...], many: bool, run: Callable[..., Any]):
        functools.update_wrapper(self, _root(of))
        self.of, self.root, self.wrt, self.many, self._run = of, _root(of), wrt, many, run
        self.order = (of.order if isinstance(of, (Derivative, Jacobian)) else 0) + 1

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._run(*args, **kwargs)

    def __repr__(self) -> str:
        return f"<adsrc jacobian({getattr(self.root, '__name__', 'f')}), wrt={self.wrt if self.many else self.wrt[0]!r}>"

    def __adsrc_lifted__(self) -> "Jacobian":
        """This Jacobian of a local function ``g`` (``jacobian(lambda z: f(z, a))`` inside a differentiated
        function) as one of ``g`` lifted, taking ``g``'s captured values first (rules/closures.py): its
        pullback then reaches them too, as :meth:`Derivative.__adsrc_lifted__` does for ``grad(g)``."""
        where = f"{getattr(self.root, '__name__', 'f')} ({_where(self.root)})"
        if self.order > 1 or self.of is not self.root:
            raise InvalidArgument(f"differentiating {self!r} of {where}, a local function: a second derivative "
                                  f"of a local function inside a differentiated function is a third derivative; "
                                  f"{BEYOND_A_CALL}")
        count = len(self.root.__code__.co_freevars)
        wrt = tuple(count + q for q in self.wrt)
        return jacobian(lift(self.root), wrt if self.many else wrt[0])

    def _element_gradients(self, args: tuple) -> tuple[Any, Any, list]:
        """The input differentiated, ``of``'s value, and the gradient (a Derivative) of each of its elements."""
        where = f"{getattr(self.root, '__name__', 'f')} ({_where(self.root)})"
        if self.order > 1:
            raise InvalidArgument(f"differentiating {self!r} of {where} in reverse mode: {BEYOND_A_CALL} in "
                                  f"reverse mode; forward mode (jvp, jacobian(..., mode='fwd')) differentiates it")
        value = self.of(*args)
        x = bind(self.root, args, {})[self.wrt[0]]
        if self.many or any(isinstance(v, (tuple, list, dict)) for v in (value, x)):
            raise InvalidArgument(f"differentiating {self!r} of {where}: adsrc differentiates the Jacobian of a "
                                  f"function of one array that returns one array; flatten the others")
        if np.ndim(value) == 0:
            return x, value, [grad(self.of, self.wrt[0])]
        return x, value, [grad(_element(self.of, e), self.wrt[0]) for e in np.ndindex(np.shape(value))]

    _along: Callable[[Any, list, list], list]  # set by jacobian(): see derivatives_along

    def __adsrc_pushforward__(self, args: tuple, tangents: tuple) -> tuple[Any, Any]:
        """``(self(*args), its tangent)``: each row's tangent is the jvp of that element's gradient; above
        first order, each column's is the derivative's own, once more (``_along``)."""
        if self.order > 1:
            value, tangent = self._along(bind(self.root, args, {}), [tangents], [(False,), (True,)])
            return value, tangent
        x, value, grads = self._element_gradients(args)
        pairs = [jvp(g, args, tangents) for g in grads]
        return stack_rows([r for r, _ in pairs], value, x), stack_rows([t for _, t in pairs], value, x)

    def __adsrc_pullback__(self, args: tuple, wrt: tuple[int, ...], eager: bool) -> tuple[Any, Callable]:
        """``(self(*args), pullback)``: a cotangent's row ``e`` goes through the vjp of element ``e``'s gradient;
        for the Jacobian of a derivative (a Hessian), column ``j`` through the derivative's pullback
        differentiated along the unit vector ``e_j`` (Derivative.__adsrc_pullback_tangent__)."""
        if self.order > 1 and isinstance(self.of, Derivative) and not self.many:
            return self._pullback_of_columns(args, wrt)
        x, value, grads = self._element_gradients(args)
        pullbacks = [vjp(g, *args, wrt=wrt) for g in grads]

        def pullback(cotangent: Any) -> tuple:
            total: tuple = (zero,) * len(wrt)
            if cotangent is zero or not wrt:
                return total
            rows = [cotangent] if np.ndim(value) == 0 else [np.asarray(cotangent)[e] for e in np.ndindex(np.shape(value))]
            for (_, back), row in zip(pullbacks, rows):
                total = tuple(add_tangents(t, d) for t, d in zip(total, back(row)))
            return total

        return stack_rows([row for row, _ in pullbacks], value, x), pullback


    def _pullback_of_columns(self, args: tuple, wrt: tuple[int, ...]) -> tuple[Any, Callable]:
        values = tuple(bind(self.root, args, {}))
        x = values[self.wrt[0]]
        if isinstance(x, (tuple, list, dict)) or not isinstance(x, (np.ndarray, float)):
            raise InvalidArgument(f"differentiating {self!r} in reverse mode: adsrc pulls back through the Jacobian "
                                  f"of a derivative of one array or float; flatten the others")
        value = self(*args)
        columns = []
        for e in unit_vectors(x):
            direction = tuple(e if i == self.wrt[0] else None for i in range(len(values)))
            columns.append(self.of.__adsrc_pullback_tangent__(values, direction, wrt)[1][1])

        def pullback(cotangent: Any) -> tuple:
            total: tuple = (zero,) * len(wrt)
            if cotangent is zero or not wrt:
                return total
            c = np.asarray(cotangent).reshape(np.shape(value)[: np.ndim(value) - np.ndim(x)] + (-1,))
            for j, column in enumerate(columns):
                _, moved = column(c[..., j] if np.ndim(c) > 1 else c[j], zero)
                total = tuple(add_tangents(t, d) for t, d in zip(total, moved))
            return total

        return value, pullback


def _element(func: Callable, index: tuple) -> Callable:
    """``func``'s element ``index``, as a function adsrc differentiates (a wrapper with ``func``'s signature)."""

    @functools.wraps(func)
    def element(*args: Any, **kwargs: Any) -> Any:
        return func(*args, **kwargs)[index]

    return element


def hvp(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None) -> Callable[..., Any]:
    """``hvp(f)(*args, v)``: the Hessian of scalar ``f`` (w.r.t. ``wrt``) times ``v``, forward over reverse.

    ``wrt`` (or ``argnums``, its alias; position 0 by default) is a parameter
    position or name, or a tuple or list of them. ``f``'s arguments come by
    position, then ``v``, the last positional argument or ``v=``, shaped like
    the argument (a dict for a dict); with a tuple ``wrt`` it is a tuple of
    directions and the result a tuple.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> adsrc.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    return HessianVectorProduct(func, grad(func, wrt), *positions(func, wrt))


# hvp(f) made inside a differentiated function: the function's cotangent passes through, as grad(f)'s does
defvjp(hvp, _same_cotangent, None)
defjvp(hvp, _same_tangent, None, piecewise_linear=True)


class HessianVectorProduct:
    """What :func:`hvp` returns: ``(*args, v) -> H v``, a second derivative that knows what it differentiates.

    ``root`` is the user's function, ``wrt`` the positions, ``order`` 2.
    Called inside a differentiated function, it is differentiable in its
    direction ``v`` (a Hessian is symmetric: the cotangent ``c`` pulls back
    to ``H c``, the tangent ``dv`` pushes forward to ``H dv``); in the
    arguments it would be a third derivative, which is refused.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> H = adsrc.hvp(f)
    >>> def g(v):
    ...     return np.sum(H(np.array([1.0, 2.0]), v) ** 2)
    >>> adsrc.grad(g)(np.array([1.0, 1.0])).tolist()
    [72.0, 288.0]
    """

    order = 2

    def __init__(self, func: Callable, gradient: Callable, wrt: tuple[int, ...], many: bool):
        functools.update_wrapper(self, func)
        self.root, self.gradient, self.wrt, self.many = func, gradient, wrt, many
        self.label = f"hvp({label(func)})"  # read by api/arguments.py's refusal

    def __repr__(self) -> str:
        return f"<adsrc {self.label}, wrt={self.wrt if self.many else self.wrt[0]!r}>"

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        func = self.root
        if set(kwargs) - {"v"} or not args and "v" not in kwargs:
            given = ", ".join(f"{k}=" for k in kwargs if k != "v")
            raise InvalidArgument(f"hvp({label(func)}) takes {label(func)}'s arguments by position, then the "
                                  f"direction v, by position or as v=...: hvp(f)(x, v) or hvp(f)(x, v=v)"
                                  + (f"; it got {given}" if given else "; it got no arguments"))
        if "v" in kwargs:
            primals, v = list(args), kwargs["v"]
        else:
            *primals, v = args
        values = bind(func, tuple(primals), {})
        directions = v if self.many else (v,)
        tangents = [None] * len(values)
        for i, d in zip(self.wrt, directions):
            tangents[i] = d
        return jvp(self.gradient, tuple(values), tuple(tangents))[1]

    def _directions(self, args: tuple, v: Any) -> tuple:
        """``v`` (a direction per position of ``wrt``) as tangents of all of the function's parameters."""
        tangents: list = [None] * (len(args) - 1)
        for i, d in zip(self.wrt, v if self.many else (v,)):
            tangents[i] = d
        return tuple(tangents)

    def __adsrc_pullback__(self, args: tuple, wrt: tuple[int, ...], eager: bool) -> tuple[Any, Callable]:
        """``(self(*args), pullback)``: a cotangent ``c`` of ``H v`` gives ``v`` the cotangent ``H c`` (a
        Hessian is symmetric), and an argument ``x_p`` the gradient in ``x_p`` differentiated along ``v`` and
        ``c`` (a third derivative is symmetric too)."""
        value = self(*args)
        primals, v = args[:-1], args[-1]
        moved = tuple(i for i in wrt if i < len(primals))
        outer = grad(self.root, moved if len(moved) != 1 else moved[0]) if moved else None

        def pullback(cotangent: Any) -> tuple:
            if cotangent is zero:
                return (zero,) * len(wrt)
            third = () if outer is None else pushforward(outer, bind(self.root, primals, {}), [
                self._directions(args, v), self._directions(args, cotangent)], [(True, True)])[0]
            third = third if outer is None or len(moved) != 1 else (third,)
            by_position = dict(zip(moved, third))
            return tuple(by_position[i] if i in by_position else self(*primals, cotangent) for i in wrt)

        return value, pullback

    def __adsrc_pushforward__(self, args: tuple, tangents: tuple) -> tuple[Any, Any]:
        """``(self(*args), its tangent)``: ``H dv`` for the tangent ``dv`` of ``v``, plus the gradient
        differentiated along ``v`` and the tangent of the arguments (a third derivative)."""
        value = self(*args)
        primals, v = args[:-1], args[-1]
        dv = tangents[-1] if len(tangents) == len(args) else None
        moved = tuple(tangents[:len(primals)]) + (None,) * (len(primals) - len(tangents[:len(primals)]))
        tangent: Any = zero if dv is None or dv is zero else self(*primals, dv)
        if any(t is not None and t is not zero for t in moved):
            third = pushforward(self.gradient, bind(self.root, primals, {}), [self._directions(args, v), moved],
                                [(True, True)])[0]
            tangent = third if tangent is zero else add_tangents(tangent, third)
        return value, tangent


def hessian(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None) -> Jacobian:
    """The Hessian of scalar ``func``, forward over reverse, nested as JAX nests it.

    For an array ``x`` it has shape ``x.shape + x.shape``. For structured
    arguments it is the argument's structure nested twice: ``H[i][j]`` is
    the block ``d2f / dx_i dx_j`` of shape ``x_i.shape + x_j.shape``, where
    ``i`` and ``j`` are positions in a tuple ``wrt`` (or ``argnums``), indices
    of a tuple or list argument, or keys of a dict argument (and both, for a
    tuple ``wrt`` of dicts: ``H[i][key_i][j][key_j]``).

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return x[0] * x[1]
    >>> adsrc.hessian(f)(np.array([1.0, 2.0])).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    >>> def g(p):
    ...     return p["a"] ** 2 * p["b"]
    >>> H = adsrc.hessian(g)({"a": 1.0, "b": 3.0})
    >>> H["a"]["a"], H["a"]["b"], H["b"]["b"]
    (6.0, 2.0, 0.0)
    """
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        func.refuse_aux("hessian")
    if isinstance(func, (Derivative, Jacobian)):  # of any output: the Jacobian of its Jacobian, as JAX's is
        return jacobian(jacobian(func, wrt, mode="fwd"), wrt, mode="fwd")
    return jacobian(grad(func, wrt), wrt, mode="fwd")


def jacobian(func: Callable, wrt: Wrt | None = None, *, argnums: Wrt | None = None,
             mode: str = "rev") -> Jacobian:
    """``d func / d args[wrt]``: blocks of shape ``output.shape + input.shape``, nested as JAX nests them.

    ``wrt`` (or ``argnums``, its alias; position 0 by default) is a parameter
    position or name, or a tuple or list of them. The result has the
    structure of the output; each output leaf holds the structure of the
    arguments (a tuple over a tuple ``wrt``, inside it each argument's own
    tuple, list or dict), and each input leaf there holds the block
    ``d output_leaf / d input_leaf``. ``mode="rev"`` builds it row by row
    through ``vjp`` (good for few outputs; every row from one batched sweep
    where the output is one float array and ``adsrc.vmap`` batches every call
    of ``func``, docs/vmap.md), ``mode="fwd"`` column by column
    through ``jvp`` (good for few inputs). The Jacobian of a gradient (a
    Hessian) is always built forward over reverse.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return 2.0 * x
    >>> adsrc.jacobian(f)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    >>> def g(x, y):
    ...     return {"sum": x + y, "product": x * y}
    >>> J = adsrc.jacobian(g, argnums=(0, 1))(2.0, 3.0)
    >>> J["sum"], J["product"]
    ((1.0, 1.0), (3.0, 2.0))
    """
    if mode not in ("rev", "fwd"):
        raise InvalidArgument(f"mode must be 'rev' or 'fwd', not {mode!r}")
    wrt = choose_wrt(wrt, argnums)
    func = callable_for(func)
    if isinstance(func, Derivative):
        func.refuse_aux("jacobian")
    wrt_positions, many = positions(_root(func), wrt)
    forward = mode == "fwd" or isinstance(func, (Derivative, Jacobian))

    def nest(value: Any, blocks: list, inputs: list) -> Any:
        out_leaves, out_unflatten = flatten(value)
        nested = []
        for k in range(len(out_leaves)):  # blocks[k][p][n]: output leaf k, the p-th wrt, its input leaf n
            per_argument = tuple(unflatten(blocks[k][p]) for p, (_, unflatten) in enumerate(inputs))
            nested.append(per_argument if many else per_argument[0])
        return out_unflatten(nested)

    def run(*args: Any, **kwargs: Any) -> Any:
        values = tuple(bind(_root(func), args, kwargs))
        check_differentiable(_root(func), values, wrt_positions)
        inputs = [flatten(values[q]) for q in wrt_positions]
        if forward:
            value, blocks = _forward_blocks(func, values, wrt_positions, inputs, [], [()])[0]
        else:
            value, blocks = _reverse_blocks(func, values, wrt_positions, inputs)
        return nest(value, blocks, inputs)

    def along(values: Any, directions: list, masks: list) -> list:
        """The Jacobian of a derivative (a Hessian, or higher) differentiated along the directions each mask
        selects: its columns are the derivative's own along each unit vector, innermost."""
        values = tuple(values)
        inputs = [flatten(values[q]) for q in wrt_positions]
        return [nest(value, blocks, inputs)
                for value, blocks in _forward_blocks(func, values, wrt_positions, inputs, directions, masks)]

    made = Jacobian(func, wrt_positions, many, run)
    made._along = along
    return made


def _forward_blocks(func: Callable, values: tuple, wrt_positions: tuple[int, ...],
                    inputs: list[tuple[list, Callable]], directions: list, masks: list) -> list:
    """The output, and its Jacobian's blocks [output leaf][wrt][input leaf], one jvp per input element; each
    differentiated along the directions a mask selects, one pair per mask."""
    columns: list[list[list[list[list[Any]]]]] = [[] for _ in masks]  # [mask][p][n][e] -> the tangent's leaves
    value_of = None  # per mask: the output differentiated along it
    for q, (leaves, unflatten) in zip(wrt_positions, inputs):
        per_leaf: list[list] = [[] for _ in masks]
        for k, leaf in enumerate(leaves):
            tangents_out: list[list] = [[] for _ in masks]
            for e in unit_vectors(leaf):
                direction = unflatten([e if j == k else zeros_like_leaf(x) for j, x in enumerate(leaves)])
                unit = tuple(direction if i == q else None for i in range(len(values)))
                results = derivatives_along(func, values, [unit, *directions], [(True, *m) for m in masks]
                                            + ([(False, *m) for m in masks] if value_of is None else []))
                if value_of is None:
                    value_of = results[len(masks):]
                for n in range(len(masks)):
                    tangents_out[n].append(flatten(results[n])[0])
            for n in range(len(masks)):
                per_leaf[n].append(tangents_out[n])
        for n in range(len(masks)):
            columns[n].append(per_leaf[n])
    if value_of is None:  # no input element at all
        value_of = derivatives_along(func, values, directions, masks) if directions else [func(*values)]
    made = []
    for n, value in enumerate(value_of):
        out_leaves = flatten(value)[0]
        made.append((value, [[[stack_columns([t[k] for t in columns[n][p][m]], out, leaf)
                               for m, leaf in enumerate(inputs[p][0])]
                              for p in range(len(inputs))] for k, out in enumerate(out_leaves)]))
    return made


def derivatives_along(func: Callable, values: tuple, directions: list, masks: list) -> list:
    """``func(*values)`` differentiated along the directions each mask selects (tuples of tangents of the
    parameters, innermost first), one result per mask: a derivative or a Jacobian of one by its own
    ``along``, a function along one direction by jvp, along more by forward mode over forward mode."""
    if isinstance(func, Derivative):
        return pushforward(func, values, directions, masks)
    if hasattr(func, "_along") and not (len(directions) == 1 and func.order == 1):
        return func._along(values, directions, masks)  # (a first-order Jacobian has its own jvp, below)
    if len(directions) == 1:
        pair = jvp(func, values, directions[0])
        return [pair[1] if mask[0] else pair[0] for mask in masks]
    if not inspect.isfunction(func):
        raise InvalidArgument(f"differentiating {func!r} more than once: adsrc differentiates a Python function, "
                              f"a derivative or a Jacobian of one that many times")
    result = along(func, values, [tuple(zero if t is None else to_tangent(t) for t in d) for d in directions])
    fresh = Fresh(values, *directions)
    primal = pick(result, (False,) * len(directions))
    return [fresh.finish(pick(result, mask), primal) if any(mask) else primal for mask in masks]


def _reverse_blocks(func: Callable, values: tuple, wrt_positions: tuple[int, ...],
                    inputs: list[tuple[list, Callable]]) -> tuple[Any, list]:
    """The output, and its Jacobian's blocks [output leaf][wrt][input leaf]: every row from one batched
    sweep where vmap batches every call (vmap.py ``vjp_rows``), else one vjp per output element. The
    function runs once for the value (the vjp's forward sweep), then in the batched sweep if there is one."""
    value, pullback = vjp(func, *values, wrt=wrt_positions)
    rows = vjp_rows(func, list(values), wrt_positions, value)
    if rows is not None:
        return value, [[[stack_rows(list(row), value, leaf) for row, leaf in zip(flatten(rows[p])[0], inputs[p][0])]
                        for p in range(len(inputs))]]
    out_leaves, out_unflatten = flatten(value)
    blocks = []
    for k, out in enumerate(out_leaves):
        if not is_float_leaf(out):  # an integer (or other) output is piecewise constant: zero blocks, as in "fwd"
            blocks.append([[_zero_block(out, x) for x in leaves] for leaves, _ in inputs])
            continue
        rows = []  # [e][p] -> the gradient's leaves
        for e in unit_vectors(out):
            grads = pullback(out_unflatten([e if j == k else zeros_like_leaf(x) for j, x in enumerate(out_leaves)]))
            rows.append([flatten(g)[0] for g in grads])
        blocks.append([[stack_rows([r[p][n] for r in rows], out, leaf) for n, leaf in enumerate(inputs[p][0])]
                       for p in range(len(inputs))])
    return value, blocks


def _zero_block(out: Any, x: Any) -> Any:
    shape = np.shape(out) + np.shape(x)
    return np.zeros(shape) if shape else 0.0


# jacobian(g) and hessian(g) of a local function g inside a differentiated function, as grad(g)'s: the cotangent
# (and tangent) is g's own, the tuple of its captured values', which calls.py hands to the lifted Jacobian.
for _maker in (jacobian, hessian):
    defvjp(_maker, _same_cotangent, None)
    defjvp(_maker, _same_tangent, None, piecewise_linear=True)
