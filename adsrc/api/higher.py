"""Forward mode and higher-order derivatives: jvp, hvp, hessian, jacobian, grad of grad.

* ``jvp(f, primals, tangents)`` runs the JVP that forward.py generates for
  ``f`` (the ANF pipeline, readable, ``adsrc dump --mode forward``).
* Second order is forward-over-reverse. ``grad(f)`` returns a function marked
  with what it differentiates; differentiating that function again runs the
  *eager* adjoint of ``f`` (real Python, no thunks: the inner level never
  accumulates lazily) through forward_any.py's pass, which transforms the
  adjoint, its pullback and the vjp rules they call. ``hvp`` is one such
  pass; ``hessian`` and ``jacobian`` of a gradient take one per input element
  (a Hessian is symmetric, so its columns are its rows). ``grad(grad(f))`` of
  a scalar function is the same, with one pass per input element.
* Third and higher derivatives are not supported.
"""
from __future__ import annotations

import functools
from typing import Any, Callable

import numpy as np

from .gradients import Wrt, _bind, _finish, _positions, vjp
from ..errors import InvalidArgument, NonScalarOutput
from ..backend.forward_pipeline import get_jvp
from ..second_order.dispatch import call, ownership
from ..values.containers import to_tangent
from ..values.thunks import zero

__all__ = ["jvp", "jvp_source", "hvp", "hessian", "jacobian", "value_and_grad_of_derivative",
           "gradient_function"]

MARK = "__adsrc_derivative__"


def seed_for(value: Any) -> Any:
    """The unit cotangent of a scalar result, in its dtype."""
    if np.ndim(value) != 0:
        raise NonScalarOutput("the differentiated function", np.shape(value), "")
    dtype = getattr(value, "dtype", None)
    return dtype.type(1) if dtype is not None and dtype.kind == "f" else 1.0



def gradient_function(adjoint: Callable, *args: Any) -> tuple[Any, Any]:
    """The value and gradients of a scalar function, through its eager adjoint.

    forward_any.py transforms this function (and so the adjoint and its
    pullback) to differentiate a gradient once more.
    """
    value, pullback = adjoint(*args)
    return value, pullback(seed_for(value))


def _source_function(func: Callable) -> Callable:
    """The function whose parameters ``func`` takes: for a derivative made by grad, the differentiated one."""
    info = getattr(func, MARK, None)
    return func if info is None else info[1]


def _float_like(value: Any) -> bool:
    if isinstance(value, (list, tuple)):
        return any(_float_like(v) for v in value)
    if isinstance(value, dict):
        return any(_float_like(v) for v in value.values())
    return np.issubdtype(np.result_type(value), np.inexact) if not isinstance(value, bool) else False


def _is_zero(t: Any) -> bool:
    return t is None or t is zero


def _check_pairs(primals: Any, tangents: Any) -> tuple[tuple, tuple]:
    if not isinstance(primals, (tuple, list)) or not isinstance(tangents, (tuple, list)):
        raise InvalidArgument("jvp(f, primals, tangents): primals and tangents must be tuples")
    if len(primals) != len(tangents):
        raise InvalidArgument(f"jvp: {len(primals)} primals but {len(tangents)} tangents")
    for p, t in zip(primals, tangents):
        if not _is_zero(t) and np.shape(p) != np.shape(t) and not isinstance(p, (list, tuple, dict)):
            raise InvalidArgument(f"jvp: a tangent of shape {np.shape(t)} for a primal of shape {np.shape(p)}")
    return tuple(primals), tuple(tangents)


def jvp(func: Callable, primals: Any, tangents: Any) -> tuple[Any, Any]:
    """``(func(*primals), J @ tangents)``: the value and the directional derivative, in forward mode.

    ``primals`` and ``tangents`` are tuples of the same structure (a tangent
    may be None for an argument that is held fixed). The tangent output has
    the structure, shapes and dtypes of the value.
    """
    primals, tangents = _check_pairs(primals, tangents)
    info = getattr(func, MARK, None)
    if info is not None:
        return _derivative_jvp(info, primals, tangents)
    values = _bind(func, primals, {})
    wrt = tuple(i for i, (p, t) in enumerate(zip(primals, tangents)) if not _is_zero(t) and _float_like(p))
    compiled = get_jvp(func, wrt)
    value, tangent = compiled.function(*values, *(to_tangent(tangents[i]) for i in wrt))
    return value, _finish(tangent, value, primals + tangents)


def jvp_source(func: Callable, wrt: Wrt = 0) -> str:
    """The generated forward-mode (JVP) module's source, as ``adsrc dump --mode forward`` prints it."""
    positions, _ = _positions(func, wrt)
    return get_jvp(func, positions).source


def _derivative_jvp(info: tuple, primals: tuple, tangents: tuple) -> tuple[Any, Any]:
    """jvp of a function made by grad/value_and_grad: forward mode over its eager adjoint."""
    kind, func, positions, many = info
    if kind == "higher":
        raise InvalidArgument("adsrc differentiates up to second order: this function is already a second derivative")
    from ..backend.pipeline import get_adjoint

    values = _bind(func, primals, {})
    ts = tuple(zero if _is_zero(t) else to_tangent(t) for t in tangents) + (zero,) * (len(values) - len(tangents))
    adjoint = get_adjoint(func, positions, True).function
    with ownership():
        (value, grads), (dvalue, dgrads) = call(gradient_function, (zero, *ts), {}, adjoint, *values)
    dgrads = (zero,) * len(positions) if dgrads is zero else dgrads
    avoid = tuple(values) + tuple(tangents)
    g = tuple(_finish(grads[k], values[i], avoid) for k, i in enumerate(positions))
    dg = tuple(_finish(dgrads[k], values[i], avoid) for k, i in enumerate(positions))
    g, dg = (g, dg) if many else (g[0], dg[0])
    if kind == "value_and_grad":
        return (value, g), (_finish(dvalue, value, avoid), dg)
    return g, dg


def _basis(like: Any) -> list[Any]:
    """Unit tangents, one per element of ``like`` (a float or a float array)."""
    if np.ndim(like) == 0 and not isinstance(like, np.ndarray):
        return [1.0]
    out = []
    for j in range(np.size(like)):
        e = np.zeros(np.shape(like), dtype=np.result_type(like, 1.0))
        e.flat[j] = 1.0
        out.append(e)
    return out


def _columns(columns: list[Any], out_like: Any, in_like: Any) -> Any:
    """Stack directional derivatives (one per input element) into d out / d in."""
    shape = np.shape(out_like) + np.shape(in_like)
    if not shape:
        return float(columns[0])
    return np.reshape(np.stack([np.asarray(c) for c in columns], axis=-1), shape)


def hvp(func: Callable, wrt: Wrt = 0) -> Callable[..., Any]:
    """``hvp(f)(*args, v)``: the Hessian of scalar ``f`` (w.r.t. ``wrt``) times ``v``, forward-over-reverse.

    ``v`` is the last positional argument; with a tuple ``wrt`` it is a tuple
    of directions and the result a tuple.
    """
    from .gradients import grad

    gradient = grad(func, wrt)
    positions, many = _positions(func, wrt)

    @functools.wraps(func)
    def run(*args: Any) -> Any:
        *primals, v = args
        values = _bind(func, tuple(primals), {})
        directions = v if many else (v,)
        tangents = [None] * len(values)
        for i, d in zip(positions, directions):
            tangents[i] = d
        return jvp(gradient, tuple(values), tuple(tangents))[1]

    return run


def hessian(func: Callable, wrt: Wrt = 0) -> Callable[..., Any]:
    """The Hessian of scalar ``func``: shape ``x.shape + x.shape`` (a tuple of tuples for a tuple ``wrt``)."""
    from .gradients import grad

    positions, many = _positions(func, wrt)
    return jacobian(grad(func, wrt), wrt if many else positions[0], mode="fwd")


def jacobian(func: Callable, wrt: Wrt = 0, *, mode: str = "rev") -> Callable[..., Any]:
    """``d func / d args[wrt]``, of shape ``output.shape + input.shape``.

    ``mode="rev"`` builds it row by row through ``vjp`` (good for few
    outputs), ``mode="fwd"`` column by column through ``jvp`` (good for few
    inputs). The Jacobian of a gradient (a Hessian) is always built forward
    over reverse. Outputs must be arrays or floats (or a tuple of them, from a
    gradient with a tuple ``wrt``).
    """
    if mode not in ("rev", "fwd"):
        raise InvalidArgument(f"mode must be 'rev' or 'fwd', not {mode!r}")
    positions, many = _positions(_source_function(func), wrt)
    forward = mode == "fwd" or getattr(func, MARK, None) is not None

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> Any:
        values = tuple(_bind(_source_function(func), args, kwargs))
        blocks = [_forward_block(func, values, q) for q in positions] if forward else \
            _reverse_blocks(func, values, positions)
        if not many:
            return blocks[0]
        return tuple(zip(*blocks)) if isinstance(blocks[0], tuple) else tuple(blocks)

    return run


def _forward_block(func: Callable, values: tuple, q: int) -> Any:
    """d output / d values[q], one jvp per element of values[q]; a tuple output gives a tuple of blocks."""
    outputs = []
    value = None
    for e in _basis(values[q]):
        tangents = tuple(e if i == q else None for i in range(len(values)))
        value, tangent = jvp(func, values, tangents)
        outputs.append(tangent)
    if isinstance(value, tuple):
        return tuple(_columns([o[k] for o in outputs], value[k], values[q]) for k in range(len(value)))
    return _columns(outputs, value, values[q])


def _reverse_blocks(func: Callable, values: tuple, positions: tuple[int, ...]) -> list[Any]:
    value, pullback = vjp(func, *values, wrt=positions)
    if isinstance(value, (list, tuple, dict)):
        raise InvalidArgument("jacobian: the function must return an array or a float")
    rows = [pullback(e if isinstance(e, np.ndarray) else np.float64(e)) for e in _basis(value)]
    blocks = []
    for k, i in enumerate(positions):
        shape = np.shape(value) + np.shape(values[i])
        mine = [r[k] for r in rows]
        blocks.append(float(mine[0]) if not shape else np.reshape(np.stack([np.asarray(m) for m in mine]), shape))
    return blocks


def value_and_grad_of_derivative(func: Callable, wrt: Wrt = 0) -> Callable[..., tuple[Any, Any]]:
    """``value_and_grad`` of a function made by ``grad``: forward over reverse, one pass per input element."""
    kind, inner, _, inner_many = getattr(func, MARK)
    if kind != "grad" or inner_many:
        raise InvalidArgument("grad of a derivative needs a scalar derivative: grad(f) with a single wrt")
    positions, many = _positions(inner, wrt)

    @functools.wraps(func)
    def run(*args: Any, **kwargs: Any) -> tuple[Any, Any]:
        values = tuple(_bind(inner, args, kwargs))
        value, grads = None, []
        for q in positions:
            parts = []
            for e in _basis(values[q]):
                tangents = tuple(e if i == q else None for i in range(len(values)))
                value, tangent = jvp(func, values, tangents)
                if np.ndim(value) != 0:
                    raise NonScalarOutput(getattr(inner, "__name__", "f"), np.shape(value), "")
                parts.append(tangent)
            grads.append(_columns(parts, value, values[q]))
        if value is None:
            value = func(*values)
        return value, (tuple(grads) if many else grads[0])

    setattr(run, MARK, ("higher", inner, positions, many))
    return run
