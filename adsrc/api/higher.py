"""Second order and Jacobians: hvp, hessian, jacobian.

Second order is forward over reverse (see forward.py): ``hvp`` is one jvp of
a gradient; ``hessian`` and ``jacobian`` of a gradient take one per input
element (a Hessian is symmetric, so its columns are its rows). A plain
Jacobian is built row by row through ``vjp`` (``mode="rev"``) or column by
column through ``jvp`` (``mode="fwd"``). Third and higher derivatives are
refused (Derivative.order).
"""
from __future__ import annotations

from typing import Any, Callable

import numpy as np

from ..errors import InvalidArgument
from .arguments import Wrt, bind, positions
from .derivative import Derivative
from .forward import jvp
from .gradients import basis, columns, grad, vjp


def _root(func: Callable) -> Callable:
    """The function whose parameters ``func`` takes: for a derivative, the user's function."""
    return func.root if isinstance(func, Derivative) else func


def hvp(func: Callable, wrt: Wrt = 0) -> Callable[..., Any]:
    """``hvp(f)(*args, v)``: the Hessian of scalar ``f`` (w.r.t. ``wrt``) times ``v``, forward over reverse.

    ``v`` is the last positional argument; with a tuple ``wrt`` it is a tuple
    of directions and the result a tuple.

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return np.sum(x ** 3)
    >>> adsrc.hvp(f)(np.array([1.0, 2.0]), np.array([1.0, 0.0])).tolist()
    [6.0, 0.0]
    """
    gradient = grad(func, wrt)
    wrt_positions, many = positions(func, wrt)

    def run(*args: Any) -> Any:
        *primals, v = args
        values = bind(func, tuple(primals), {})
        directions = v if many else (v,)
        tangents = [None] * len(values)
        for i, d in zip(wrt_positions, directions):
            tangents[i] = d
        return jvp(gradient, tuple(values), tuple(tangents))[1]

    return run


def hessian(func: Callable, wrt: Wrt = 0) -> Callable[..., Any]:
    """The Hessian of scalar ``func``: shape ``x.shape + x.shape`` (a tuple of tuples for a tuple ``wrt``).

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return x[0] * x[1]
    >>> adsrc.hessian(f)(np.array([1.0, 2.0])).tolist()
    [[0.0, 1.0], [1.0, 0.0]]
    """
    wrt_positions, many = positions(func, wrt)
    return jacobian(grad(func, wrt), wrt if many else wrt_positions[0], mode="fwd")


def jacobian(func: Callable, wrt: Wrt = 0, *, mode: str = "rev") -> Callable[..., Any]:
    """``d func / d args[wrt]``, of shape ``output.shape + input.shape``.

    ``mode="rev"`` builds it row by row through ``vjp`` (good for few
    outputs), ``mode="fwd"`` column by column through ``jvp`` (good for few
    inputs). The Jacobian of a gradient (a Hessian) is always built forward
    over reverse. Outputs must be arrays or floats (or a tuple of them, from a
    gradient with a tuple ``wrt``).

    >>> import numpy as np, adsrc
    >>> def f(x):
    ...     return 2.0 * x
    >>> adsrc.jacobian(f)(np.array([1.0, 2.0])).tolist()
    [[2.0, 0.0], [0.0, 2.0]]
    """
    if mode not in ("rev", "fwd"):
        raise InvalidArgument(f"mode must be 'rev' or 'fwd', not {mode!r}")
    wrt_positions, many = positions(_root(func), wrt)
    forward = mode == "fwd" or isinstance(func, Derivative)

    def run(*args: Any, **kwargs: Any) -> Any:
        values = tuple(bind(_root(func), args, kwargs))
        blocks = [_forward_block(func, values, q) for q in wrt_positions] if forward else \
            _reverse_blocks(func, values, wrt_positions)
        if not many:
            return blocks[0]
        return tuple(zip(*blocks)) if isinstance(blocks[0], tuple) else tuple(blocks)

    return run


def _forward_block(func: Callable, values: tuple, q: int) -> Any:
    """d output / d values[q], one jvp per element of values[q]; a tuple output gives a tuple of blocks."""
    outputs = []
    value = None
    for e in basis(values[q]):
        tangents = tuple(e if i == q else None for i in range(len(values)))
        value, tangent = jvp(func, values, tangents)
        outputs.append(tangent)
    if isinstance(value, tuple):
        return tuple(columns([o[k] for o in outputs], value[k], values[q]) for k in range(len(value)))
    return columns(outputs, value, values[q])


def _reverse_blocks(func: Callable, values: tuple, wrt_positions: tuple[int, ...]) -> list[Any]:
    value, pullback = vjp(func, *values, wrt=wrt_positions)
    if isinstance(value, (list, tuple, dict)):
        raise InvalidArgument("jacobian: the function must return an array or a float")
    rows = [pullback(e if isinstance(e, np.ndarray) else np.float64(e)) for e in basis(value)]
    blocks = []
    for k, i in enumerate(wrt_positions):
        shape = np.shape(value) + np.shape(values[i])
        mine = [r[k] for r in rows]
        blocks.append(float(mine[0]) if not shape else np.reshape(np.stack([np.asarray(m) for m in mine]), shape))
    return blocks
