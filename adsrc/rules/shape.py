"""Shape and layout: reshape, transpose and axis moves, tiling, flips, padding, conversions.

Each vjp undoes the layout change on the cotangent (reshape back, inverse
permutation, sum over tiles and repeats, slice the padding off). Array methods
whose signature differs from the function's (``x.reshape(2, 3)``,
``x.transpose(1, 0)``, ``x.astype(np.float32)``) are accepted in both
spellings. ``flatten`` and ``astype`` have no NumPy function of the method's
signature, so this module defines them as primitives of its own.
"""
from __future__ import annotations

import inspect

import numpy as np

from ..errors import NotDifferentiable
from .guards import integer_dtype
from .registry import defattribute, defjvp, deflinear, defmethod, defvjp, lookup
from ._tangent import dense, without
from ._util import as_array, cast_like, is_zero, note, unbroadcast, variadic, zero
from .templates import arrays, deftemplate

__all__ = ["flatten", "astype", "item"]


def flatten(a, order="C"):
    """``a.flatten(order)``: a 1-D copy (the primitive behind the ``flatten`` method)."""
    a = as_array(a)
    return a.flatten() if order == "C" else a.flatten(order)  # a Dask array's flatten takes no order


def astype(x, dtype, *args, **kwargs):
    """``x.astype(dtype, ...)`` (the primitive behind the ``astype`` method)."""
    return as_array(x).astype(dtype, *args, **kwargs)


def item(x, *args):
    """``x.item(*args)``: one element as a Python scalar."""
    return np.asarray(x).item(*args)


def _order(args, kwargs):
    """The memory order a reshape/ravel was given, positionally or by keyword."""
    order = kwargs.get("order", "C")
    for value in args:
        if isinstance(value, str):
            order = value
    return order if order in ("C", "F") else "C"


def _reshape_dx(g, ans, x, *args, **kwargs):
    return np.reshape(g, np.shape(x), order=_order(args, kwargs))


def _axes(axes, kwargs):
    """The permutation a transpose was given: one tuple, separate ints (``x.transpose(1, 0)``), or none."""
    return kwargs.get("axes", axes[0] if len(axes) == 1 else axes or None)


def _transpose_dx(g, ans, x, *axes, **kwargs):
    """Inverse permutation; ``axes`` may be one tuple, separate ints, or absent."""
    axes = _axes(axes, kwargs)
    if axes is None:
        return np.transpose(g)
    return np.transpose(g, np.argsort([a % np.ndim(x) for a in axes]))


def _rollaxis_dx(g, ans, a, axis, start=0):
    n = np.ndim(a)
    order = list(range(n))
    axis, start = axis % n, start + n if start < 0 else start
    order.remove(axis)
    order.insert(start - 1 if axis < start else start, axis)
    return np.transpose(g, np.argsort(order))


def _atleast_vjp(k):
    def vjp(g, ans, *arys):
        mine = g[k] if len(arys) > 1 else g
        return zero if is_zero(mine) else np.reshape(mine, np.shape(arys[k]))

    return vjp


def _atleast_jvp(func, k):
    def jvp(t, ans, *arys):
        mine = func(dense(t, arys[k]))
        return mine if len(arys) == 1 else [zero] * k + [mine] + [zero] * (len(arys) - k - 1)

    return jvp


# Every layout change is linear, so its jvp is itself applied to the tangent (deflinear).
deflinear(np.reshape, _reshape_dx)
# x.reshape(2, 2) passes the shape as separate arguments, which np.reshape(t, 2, 2) would take for an order.
defjvp(np.reshape, lambda t, ans, x, *args, **kwargs: np.reshape(dense(t, x), np.shape(ans),
                                                                 order=_order(args, kwargs)), piecewise_linear=True)
deflinear(np.ravel, _reshape_dx)
deflinear(flatten, _reshape_dx)
deflinear(np.transpose, _transpose_dx)
deftemplate(lookup(np.transpose), 0, "g.T", arrays({"x": None}))  # no axes: every axis reversed, a view
defjvp(np.transpose, lambda t, ans, x, *axes, **kwargs: np.transpose(dense(t, x), _axes(axes, kwargs)),
       piecewise_linear=True)  # x.transpose(1, 0), as the reshape above
deflinear(np.swapaxes, lambda g, ans, a, axis1, axis2: np.swapaxes(g, axis1, axis2))
deflinear(np.moveaxis, lambda g, ans, a, source, destination: np.moveaxis(g, destination, source))
deflinear(np.rollaxis, _rollaxis_dx)
deflinear(np.expand_dims, lambda g, ans, a, axis: np.reshape(g, np.shape(a)))
deflinear(np.squeeze, lambda g, ans, a, axis=None: np.reshape(g, np.shape(a)))
deflinear(np.broadcast_to, lambda g, ans, array, shape, subok=False: unbroadcast(g, array))
for _f in (np.atleast_1d, np.atleast_2d, np.atleast_3d):
    defvjp(_f, *variadic(_atleast_vjp, 8, ("a", "b", "c")))
    defjvp(_f, *(_atleast_jvp(_f, k) for k in range(8)), piecewise_linear=True)
if hasattr(np, "matrix_transpose"):
    deflinear(np.matrix_transpose, lambda g, ans, x, /: np.swapaxes(g, -1, -2))
    deflinear(np.linalg.matrix_transpose, lambda g, ans, x, /: np.swapaxes(g, -1, -2))


# ---- copies and conversions ------------------------------------------------
def _cast_dx(g, ans, x, *args, **kwargs):
    if args and integer_dtype(args[0]):  # x.astype(int): piecewise constant
        return zero
    return cast_like(g, x)


_FLOATS = (float, np.float64)


def _array_dobject(g, ans, obj, *args, **kwargs):
    """Split the cotangent back into the nested lists the array was built from."""
    if isinstance(obj, (list, tuple)):
        if type(g) is np.ndarray and g.dtype == np.float64 and g.shape == (len(obj),) \
                and all(type(item) in _FLOATS for item in obj):
            return list(g)  # a list of doubles (a long recurrence's history): its elements, as NumPy floats
        return [_array_dobject(g[i], None, item) for i, item in enumerate(obj)]
    return cast_like(np.reshape(g, np.shape(obj)), obj)


def _item_dx(g, ans, x, *args):
    out = np.zeros(np.shape(x), dtype=np.result_type(x, 1.0))
    if args:
        index = args[0] if len(args) == 1 else args
        if isinstance(index, tuple):
            out[index] = g
        else:
            out.flat[index] = g
    else:
        out[...] = g
    return out


for _f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray):
    deflinear(_f, _array_dobject)
deflinear(np.copy, lambda g, ans, a, *args, **kwargs: g)
deftemplate(lookup(np.copy), 0, "g", lambda k: k["g"].type is np.ndarray and set(k) == {"g", "ans", "a"})  # g itself
deflinear(astype, _cast_dx)
if hasattr(np, "astype"):
    deflinear(np.astype, _cast_dx)
deflinear(item, _item_dx)


# ---- tiling, repeating, reordering -----------------------------------------
def _tile_dA(g, ans, A, reps):
    reps = (reps,) if np.ndim(reps) == 0 else tuple(reps)
    nd = max(len(reps), np.ndim(A))
    shape = (1,) * (nd - np.ndim(A)) + np.shape(A)
    reps = (1,) * (nd - len(reps)) + reps
    blocks = np.reshape(g, [n for pair in zip(reps, shape) for n in pair])
    return np.reshape(np.sum(blocks, axis=tuple(range(0, 2 * nd, 2))), np.shape(A))


def _repeat_da(g, ans, a, repeats, axis=None):
    a_shape = np.shape(a)
    if axis is None:
        g, axis, shape = np.ravel(g), 0, (int(np.prod(a_shape, dtype=np.int64)),)
    else:
        axis, shape = axis % len(a_shape), a_shape
    if np.ndim(repeats) == 0 or np.size(repeats) == 1:
        r = int(np.ravel(repeats)[0])
        split = np.reshape(g, shape[:axis] + (shape[axis], r) + shape[axis + 1 :])
        return np.reshape(np.sum(split, axis=axis + 1), a_shape)
    owners = np.repeat(np.arange(shape[axis]), repeats)
    out = np.zeros(shape[:axis] + (shape[axis],) + shape[axis + 1 :], dtype=np.result_type(a, g))
    np.add.at(np.moveaxis(out, axis, 0), owners, np.moveaxis(g, axis, 0))
    return np.reshape(out, a_shape)


def _roll_da(g, ans, a, shift, axis=None):
    back = -shift if np.ndim(shift) == 0 else tuple(-s for s in shift)
    return np.roll(g, back, axis)


def _pad_darray(g, ans, array, pad_width, mode="constant", **kwargs):
    """Constant padding: slice it off. Modes that copy input entries: scatter the copies back."""
    ndim = np.ndim(array)
    widths = np.broadcast_to(np.asarray(pad_width, dtype=np.int64), (ndim, 2))
    if mode == "constant":
        return g[tuple(slice(lo, lo + n) for (lo, _), n in zip(widths, np.shape(array)))]
    if mode not in ("edge", "reflect", "symmetric", "wrap"):
        raise NotDifferentiable(f"the gradient of pad with mode={mode!r} is not supported")
    source = np.pad(np.arange(np.size(array)).reshape(np.shape(array)), widths, mode=mode, **kwargs)
    weights = np.ravel(g)
    flat = np.bincount(source.ravel(), weights=np.real(weights), minlength=np.size(array))
    if np.iscomplexobj(weights):  # bincount adds real weights only
        flat = flat + 1j * np.bincount(source.ravel(), weights=np.imag(weights), minlength=np.size(array))
    return np.reshape(flat.astype(np.result_type(array, g), copy=False), np.shape(array))


def _sort_da(g, ans, a, axis=-1, kind=None, order=None):
    if axis is None:
        return np.reshape(_sort_da(g, None, np.ravel(a), -1), np.shape(a))
    perm = np.argsort(a, axis=axis, kind="stable")
    out = np.zeros(np.shape(a), dtype=np.result_type(a, g))
    np.put_along_axis(out, perm, g, axis=axis)
    return out


def _sort_jvp(t, ans, a, axis=-1, kind=None, order=None):
    """The directional derivative along t: tied elements come out in the order of their tangents
    (sort(a + h t) for small h > 0), so that where a tie has a derivative (a middle element of
    three equal values) the tangent is exact."""
    if axis is None:
        a, t, axis = np.ravel(a), np.ravel(t), -1
    t = np.broadcast_to(t, np.shape(a))
    return np.take_along_axis(t, np.lexsort((t, a), axis=axis), axis)


deflinear(np.tile, _tile_dA)
deflinear(np.repeat, _repeat_da)
deflinear(np.flip, lambda g, ans, m, axis=None: np.flip(g, axis))
deflinear(np.fliplr, lambda g, ans, m: np.fliplr(g))
deflinear(np.flipud, lambda g, ans, m: np.flipud(g))
deflinear(np.rot90, lambda g, ans, m, k=1, axes=(0, 1): np.rot90(g, -k, axes))
deflinear(np.roll, _roll_da)
defvjp(np.pad, _pad_darray)
# The padding values would make pad affine, not linear: the tangent is padded with zeros.
defjvp(np.pad, lambda t, ans, array, pad_width, *args, **kwargs: np.pad(
    t, pad_width, *args, **without(kwargs, "constant_values", "end_values")), piecewise_linear=True)
defvjp(np.sort, _sort_da)
defjvp(np.sort, _sort_jvp, piecewise_linear=True)


def _linspace_vjp(k):
    """start/stop of linspace: the output is start + t (stop - start), t from 0 to 1."""

    def vjp(g, ans, start, stop, num=50, endpoint=True, retstep=False, dtype=None, axis=0, **kwargs):
        steps = max(num - 1 if endpoint else num, 1)
        g_step = 0.0
        if retstep:
            g, g_step = g
            g_step = 0.0 if is_zero(g_step) else g_step / steps
            if is_zero(g):
                return unbroadcast(np.asarray(g_step if k == 1 else -g_step), (start, stop)[k])
        t = np.arange(num) / steps
        shape = [num if i == axis % np.ndim(g) else 1 for i in range(np.ndim(g))]
        t = np.reshape(t, shape).astype(np.result_type(g, 1.0))
        weight = t if k == 1 else 1.0 - t
        total = np.sum(g * weight, axis=axis) + (g_step if k == 1 else -g_step)
        return unbroadcast(total, (start, stop)[k])

    return vjp


defvjp(np.linspace, *variadic(_linspace_vjp, 2, ("start", "stop")))
defjvp(np.linspace, lambda t, ans, start, stop, *args, **kwargs: np.linspace(t, np.zeros(np.shape(stop)), *args, **kwargs),
       lambda t, ans, start, stop, *args, **kwargs: np.linspace(np.zeros(np.shape(start)), t, *args, **kwargs),
       piecewise_linear=True)

# ---- constructors whose values come from an argument ----------------------------------
# np.full(shape, v) and np.full_like(a, v) are v broadcast (a gives only a shape), and
# np.arange(start, stop, step) is start + i * step: differentiable in v, start and step (the
# number of elements is piecewise constant). An integer result (a cast) has no gradient.
def _fill_dvalue(g, ans, first, fill_value, *args, **kwargs):
    if not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return cast_like(unbroadcast(g, fill_value), fill_value)


def _fill_jvp(t, ans, first, fill_value, *args, **kwargs):
    if not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return np.broadcast_to(t, np.shape(ans)).astype(np.result_type(ans), copy=False)


defvjp(np.full, None, _fill_dvalue)
defjvp(np.full, None, _fill_jvp, piecewise_linear=True)
defvjp(np.full_like, None, _fill_dvalue)
defjvp(np.full_like, None, _fill_jvp, piecewise_linear=True)


def _arange_steps(ans):
    return np.arange(np.size(ans), dtype=np.result_type(ans))


def _arange_dstart(g, ans, start_or_stop, *args, **kwargs):
    """With one argument it is the stop, whose value moves nothing; else each element moves with start."""
    if not args or not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return cast_like(np.sum(g), start_or_stop)


def _arange_dstep(g, ans, start_or_stop, stop=None, step=1, **kwargs):
    if not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return cast_like(np.sum(g * _arange_steps(ans)), step)


def _arange_jvp_start(t, ans, start_or_stop, *args, **kwargs):
    if not args or not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return np.full(np.shape(ans), t, dtype=np.result_type(ans))


def _arange_jvp_step(t, ans, start_or_stop, stop=None, step=1, **kwargs):
    if not np.issubdtype(np.result_type(ans), np.inexact):
        return zero
    return t * _arange_steps(ans)


_arange_dstart.__signature__ = inspect.signature(lambda g, ans, start, stop=None, step=1: None)
defvjp(np.arange, _arange_dstart, None, _arange_dstep)
defjvp(np.arange, _arange_jvp_start, None, _arange_jvp_step, piecewise_linear=True)


# ---- unique ----------------------------------------------------------------------------
# The unique values are a selection of input elements: each is its first occurrence
# (np.unique's return_index), so its cotangent goes there, as sort's goes by the stable
# order. Where a value is repeated, unique is not differentiable (moving one copy adds
# an element to the result); this is the choice adsrc makes there.
def _unique_index(ar, axis, kwargs):
    options = {k: v for k, v in kwargs.items() if k in ("equal_nan", "sorted")}
    return np.unique(np.asarray(ar), return_index=True, axis=axis, **options)[1]


def _unique_dar(g, ans, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kwargs):
    several = return_index or return_inverse or return_counts
    g_values = g[0] if several else g
    if is_zero(g_values):
        return zero
    index = _unique_index(ar, axis, kwargs)
    shape = np.shape(ar)
    out = np.zeros(shape, dtype=np.result_type(np.asarray(ar), g_values))
    if axis is None:
        out.reshape(-1)[index] = np.ravel(g_values)
    else:
        np.moveaxis(out, axis, 0)[index] = np.moveaxis(np.asarray(g_values), axis, 0)
    return out.tolist() if isinstance(ar, (list, tuple)) else out


def _unique_jvp(t, ans, ar, return_index=False, return_inverse=False, return_counts=False, axis=None, **kwargs):
    index = _unique_index(ar, axis, kwargs)
    t = dense(t, ar)
    values = np.ravel(t)[index] if axis is None else np.take(np.asarray(t), index, axis=axis)
    if return_index or return_inverse or return_counts:
        return (values,) + (zero,) * (len(ans) - 1)
    return values


defvjp(np.unique, _unique_dar)
defjvp(np.unique, _unique_jvp, piecewise_linear=True)


# ---- array methods and attributes -------------------------------------------
defattribute("T", np.transpose)
defattribute("real", np.real, receivers="number")
defattribute("mT", np.matrix_transpose if hasattr(np, "matrix_transpose") else np.transpose)
for _name, _f in [("reshape", np.reshape), ("transpose", np.transpose), ("ravel", np.ravel),
                  ("flatten", flatten), ("copy", np.copy), ("astype", astype), ("squeeze", np.squeeze),
                  ("swapaxes", np.swapaxes), ("repeat", np.repeat), ("item", item)]:
    defmethod(_name, _f)

note("of (nested) lists of values: returns (nested) lists of gradients",
     *(lookup(f) for f in (np.array, np.asarray, np.asanyarray, np.ascontiguousarray)))
note("modes constant, edge, reflect, symmetric, wrap", lookup(np.pad))
note("the primitive behind x.flatten()", lookup(flatten))
note("the primitive behind x.astype(); the gradient keeps the input's dtype", lookup(astype))
note("the primitive behind x.item()", lookup(item))
note("up to 8 arrays; with several, the cotangent is a tuple",
     *(lookup(f) for f in (np.atleast_1d, np.atleast_2d, np.atleast_3d)))
note("ties: the vjp takes the stable argsort order; the jvp is the directional derivative "
     "(tied elements ordered by their tangents)", lookup(np.sort))
note("start and stop; retstep=True takes a tuple cotangent", lookup(np.linspace))
note("the fill value (broadcast: its gradient is summed); none for an integer result",
     lookup(np.full), lookup(np.full_like))
note("start + i * step: start and step (the stop only sets the length); none for an integer result",
     lookup(np.arange))
note("each unique value's cotangent goes to its first occurrence (return_index); "
     "with return_index/inverse/counts the cotangent is a tuple", lookup(np.unique))
