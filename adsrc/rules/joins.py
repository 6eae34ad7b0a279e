"""Joining and splitting: concatenate, stack, vstack, hstack, dstack, column_stack, append, split.

The joins take a LIST of arrays as their first argument, so their vjp returns
a list: the cotangent cut back into one piece per input, each reshaped to its
input's own shape (a 1-D row of vstack comes back 1-D). The splits return a
list, so their cotangent is a list, in which a piece that received no
gradient is ``adsrc.zero``; those count as zeros.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, deflinear, defvjp, lookup
from ._util import cast_like, is_zero, note, zero


def _cut(g, arrays, promoted, axis):
    """Cut ``g`` along ``axis`` into pieces as long as each promoted input, reshaped to the input."""
    dense = type(g) is np.ndarray and all(type(a) is np.ndarray and a.dtype == g.dtype and type(p) is np.ndarray
                                          and p.shape == a.shape for a, p in zip(arrays, promoted))
    axis = axis % (g.ndim if dense else np.ndim(g))
    before = (slice(None),) * axis
    pieces, start = [], 0
    for p in promoted:  # np.split by Python ints, for any array library
        end = start + (p.shape if dense else np.shape(p))[axis]
        pieces.append(g[before + (slice(start, end),)])
        start = end
    if dense:
        return pieces  # each already of its input's dtype and shape: no cast or reshape per piece
    return [cast_like(np.reshape(piece, np.shape(a)), a) for piece, a in zip(pieces, arrays)]


def _concatenate_darrays(g, ans, arrays, axis=0, out=None, **kwargs):
    if axis is None:
        return _cut(g, arrays, [np.ravel(a) for a in arrays], 0)
    return _cut(g, arrays, arrays, axis)


def _stack_darrays(g, ans, arrays, axis=0, out=None, **kwargs):
    slices = np.moveaxis(g, axis, 0)
    return [cast_like(np.reshape(slices[i], np.shape(a)), a) for i, a in enumerate(arrays)]


def _vstack_dtup(g, ans, tup, **kwargs):
    return _cut(g, tup, [np.atleast_2d(a) for a in tup], 0)


def _hstack_dtup(g, ans, tup, **kwargs):
    promoted = [np.atleast_1d(a) for a in tup]
    return _cut(g, tup, promoted, 0 if promoted[0].ndim == 1 else 1)


def _dstack_dtup(g, ans, tup):
    return _cut(g, tup, [np.atleast_3d(a) for a in tup], 2)


def _column_stack_dtup(g, ans, tup):
    promoted = [np.reshape(a, (-1, 1)) if np.ndim(a) < 2 else a for a in tup]
    return _cut(g, tup, promoted, 1)


def _append_vjp(k):
    def vjp(g, ans, arr, values, axis=None):
        parts = (arr, values)
        if axis is None:
            return _cut(g, parts, [np.ravel(p) for p in parts], 0)[k]
        return _cut(g, parts, parts, axis)[k]

    return vjp


deflinear(np.concatenate, _concatenate_darrays)
deflinear(np.stack, _stack_darrays)
deflinear(np.vstack, _vstack_dtup)
deflinear(np.hstack, _hstack_dtup)
deflinear(np.dstack, _dstack_dtup)
deflinear(np.column_stack, _column_stack_dtup)
defvjp(np.append, _append_vjp(0), _append_vjp(1))
defjvp(np.append, lambda t, ans, arr, values, axis=None: np.append(t, np.zeros(np.shape(values)), axis),
       lambda t, ans, arr, values, axis=None: np.append(np.zeros(np.shape(arr)), t, axis), piecewise_linear=True)


def _join_cotangents(g, ans, ary, axis):
    """Concatenate the pieces' cotangents, with zeros where a piece got none."""
    live = [gi for gi in g if not is_zero(gi)]
    if not live:
        return zero
    dtype = np.result_type(ary, live[0])
    pieces = [np.zeros(np.shape(p), dtype) if is_zero(gi) else gi for gi, p in zip(g, ans)]
    return np.concatenate(pieces, axis=axis)


def _split_dary(g, ans, ary, indices_or_sections, axis=0):
    return _join_cotangents(g, ans, ary, axis)


deflinear(np.split, _split_dary, None)
deflinear(np.array_split, _split_dary, None)
deflinear(
    np.hsplit,
    lambda g, ans, ary, indices_or_sections: _join_cotangents(g, ans, ary, 1 if np.ndim(ary) > 1 else 0),
    None,
)
deflinear(np.vsplit, lambda g, ans, ary, indices_or_sections: _join_cotangents(g, ans, ary, 0), None)
deflinear(np.dsplit, lambda g, ans, ary, indices_or_sections: _join_cotangents(g, ans, ary, 2), None)


def _unstack_dx(g, ans, x, /, *, axis=0):
    live = [gi for gi in g if not is_zero(gi)]
    if not live:
        return zero
    dtype = np.result_type(x, live[0])
    return np.stack([np.zeros(np.shape(p), dtype) if is_zero(gi) else gi for gi, p in zip(g, ans)], axis=axis)


if hasattr(np, "unstack"):
    deflinear(np.unstack, _unstack_dx)

note("takes a list of arrays; returns a list of gradients",
     *(lookup(f) for f in (np.concatenate, np.stack, np.vstack, np.hstack, np.dstack, np.column_stack)))
note("returns a list; pieces without a gradient may be adsrc.zero",
     *(lookup(f) for f in (np.split, np.array_split, np.hsplit, np.vsplit, np.dsplit, getattr(np, "unstack", None))
       if lookup(f)))
