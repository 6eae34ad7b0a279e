"""Building and selecting arrays: select, choose, meshgrid, broadcast_arrays, block, row_stack, compress,
extract, resize, insert, delete, unique_values (counts, inverse, all), and the index tricks np.r_ and np.c_.

Each of them moves, copies or drops elements, so each is linear in its
differentiable arguments and registered with ``deflinear``, or has a jvp
that applies the function itself to the tangents. Where the layout is
awkward to follow (block, insert, delete, the index tricks), the vjp runs
the function once more on *markers*, arrays that hold each element's own
position, and reads off where every element went.

``np.r_[a, b]`` is a subscript of an object, not a call: the frontend sends
a subscript of np.r_ or np.c_ to :func:`index_concatenate`, which does
exactly ``trick[items]``, so that the forward sweep runs unchanged and the
items get their gradients.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, deflinear, defvjp, lookup
from ._tangent import dense
from ._util import cast_like, note, unbroadcast, variadic, zero


def _scatter(g, positions, size, like):
    """Zeros of ``size`` elements with g's elements added at ``positions`` (repeats add), shaped like ``like``."""
    flat = np.bincount(np.ravel(positions), np.ravel(g), minlength=size)[:size] if size else np.zeros(0)
    return cast_like(np.reshape(flat, np.shape(like)), like) if np.ndim(like) else cast_like(flat[0], like)


def _markers(x):
    """Each element's own flat position, as floats, in ``x``'s shape."""
    return np.reshape(np.arange(np.size(x), dtype=float), np.shape(x))


# ---- select and choose -------------------------------------------------------------------------------
def _chosen(condlist, count):
    """For each choice, where np.select takes it (the first true condition), and where none holds."""
    taken = np.zeros(np.broadcast_shapes(*(np.shape(c) for c in condlist)), dtype=bool)
    masks = []
    for condition in condlist[:count]:
        masks.append(np.asarray(condition, dtype=bool) & ~taken)
        taken = taken | np.asarray(condition, dtype=bool)
    return masks, ~taken


def _select_dchoicelist(g, ans, condlist, choicelist, default=0):
    masks, _ = _chosen(condlist, len(choicelist))
    return [unbroadcast(g * mask, choice) for mask, choice in zip(masks, choicelist)]


def _select_ddefault(g, ans, condlist, choicelist, default=0):
    _, none = _chosen(condlist, len(choicelist))
    return unbroadcast(g * none, default)


def _select_jvp(k):
    def jvp(t, ans, condlist, choicelist, default=0):
        if k == 1:
            return np.select(condlist, dense(t, list(choicelist)), 0.0)
        return np.select(condlist, [np.zeros(np.shape(c)) for c in choicelist], t)
    return jvp


defvjp(np.select, None, _select_dchoicelist, _select_ddefault)
defjvp(np.select, None, _select_jvp(1), _select_jvp(2), piecewise_linear=True)


def _choice_index(a, count, mode):
    a = np.asarray(a)
    return a % count if mode == "wrap" else np.clip(a, 0, count - 1) if mode == "clip" else a


def _choose_dchoices(g, ans, a, choices, out=None, mode="raise"):
    index = _choice_index(a, len(choices), mode)
    return [unbroadcast(g * (index == i), choice) for i, choice in enumerate(choices)]


deflinear(np.choose, None, _choose_dchoices)


# ---- meshgrid and broadcast_arrays ------------------------------------------------------------------
def _meshgrid_axis(i, count, indexing):
    if indexing == "xy" and count >= 2 and i < 2:
        return 1 - i
    return i


def _meshgrid_vjp(i):
    def vjp(g, ans, *xi, copy=True, sparse=False, indexing="xy"):
        part = g[i]
        if part is zero:
            return zero
        axis = _meshgrid_axis(i, len(xi), indexing)
        others = tuple(a for a in range(np.ndim(part)) if a != axis)
        return cast_like(np.reshape(np.sum(part, axis=others), np.shape(xi[i])), xi[i])
    return vjp


def _meshgrid_jvp(i):
    def jvp(t, ans, *xi, **kwargs):
        return np.meshgrid(*[t if j == i else np.zeros(np.shape(x)) for j, x in enumerate(xi)], **kwargs)
    return jvp


_GRIDS = 32  # differentiable inputs of meshgrid and broadcast_arrays (NumPy allows more; 32 is plenty)
defvjp(np.meshgrid, *variadic(_meshgrid_vjp, _GRIDS, ("x",)))
defjvp(np.meshgrid, *(_meshgrid_jvp(i) for i in range(_GRIDS)), piecewise_linear=True)


def _broadcast_arrays_vjp(i):
    def vjp(g, ans, *args, subok=False):
        return zero if g[i] is zero else unbroadcast(g[i], args[i])
    return vjp


def _broadcast_arrays_jvp(i):
    def jvp(t, ans, *args, **kwargs):
        return tuple(np.broadcast_to(t, np.shape(out)) if j == i else np.zeros(np.shape(out))
                     for j, out in enumerate(ans))
    return jvp


defvjp(np.broadcast_arrays, *variadic(_broadcast_arrays_vjp, _GRIDS, ("x",)))
defjvp(np.broadcast_arrays, *(_broadcast_arrays_jvp(i) for i in range(_GRIDS)), piecewise_linear=True)


# ---- block and row_stack ----------------------------------------------------------------------------
def _leaves(nested):
    if isinstance(nested, list):
        return [leaf for item in nested for leaf in _leaves(item)]
    return [nested]


def _rebuild(nested, values):
    """``nested``'s list structure with its leaves replaced, in order, by ``values``."""
    values = iter(values)

    def walk(item):
        return [walk(x) for x in item] if isinstance(item, list) else next(values)
    return walk(nested)


def _block_darrays(g, ans, arrays):
    leaves = _leaves(arrays)
    owner = np.block(_rebuild(arrays, [np.full(np.shape(x), float(k)) for k, x in enumerate(leaves)]))
    where = np.block(_rebuild(arrays, [_markers(x) for x in leaves]))
    g = np.asarray(g)
    grads = []
    for k, leaf in enumerate(leaves):
        mine = owner == k
        grads.append(_scatter(g[mine], where[mine].astype(np.intp), np.size(leaf), leaf))
    return _rebuild(arrays, grads) if isinstance(arrays, list) else grads[0]


deflinear(np.block, _block_darrays)
if hasattr(np, "row_stack"):
    deflinear(np.row_stack, lambda g, ans, tup, **kwargs: lookup(np.vstack).vjps[0](g, ans, tup))


# ---- compress, extract, resize, insert, delete ----------------------------------------------------------
def _compress_da(g, ans, condition, a, axis=None, out=None):
    return _scatter(g, np.compress(condition, _markers(a), axis).astype(np.intp), np.size(a), a)


def _extract_darr(g, ans, condition, arr):
    return _scatter(g, np.extract(condition, _markers(arr)).astype(np.intp), np.size(arr), arr)


def _resize_da(g, ans, a, new_shape):
    return _scatter(g, np.resize(_markers(a), new_shape).astype(np.intp), np.size(a), a)


def _delete_darr(g, ans, arr, obj, axis=None):
    return _scatter(g, np.delete(_markers(arr), obj, axis).astype(np.intp), np.size(arr), arr)


def _inserted(arr, obj, values, axis):
    """Where each output element of np.insert comes from: arr's element k is k, values' element j is -1 - j."""
    return np.insert(_markers(arr), obj, -1.0 - _markers(values), axis).astype(np.intp)


def _insert_darr(g, ans, arr, obj, values, axis=None):
    source = _inserted(arr, obj, values, axis)
    return _scatter(np.where(source >= 0, g, 0.0), np.maximum(source, 0), np.size(arr), arr)


def _insert_dvalues(g, ans, arr, obj, values, axis=None):
    source = _inserted(arr, obj, values, axis)
    return _scatter(np.where(source < 0, g, 0.0), np.maximum(-1 - source, 0), np.size(values), values)


deflinear(np.compress, None, _compress_da)
deflinear(np.extract, None, _extract_darr)
deflinear(np.resize, _resize_da)
deflinear(np.delete, _delete_darr)
defvjp(np.insert, _insert_darr, None, _insert_dvalues)
defjvp(np.insert, lambda t, ans, arr, obj, values, axis=None: np.insert(t, obj, np.zeros(np.shape(values)), axis),
       None, lambda t, ans, arr, obj, values, axis=None: np.insert(np.zeros(np.shape(arr)), obj, t, axis),
       piecewise_linear=True)


# ---- sliding windows: every window is a view of the input, so a cotangent element adds where it was read ------
_sliding_window_view = np.lib.stride_tricks.sliding_window_view


def _sliding_window_dx(g, ans, x, window_shape, axis=None, *, subok=False, writeable=False):
    positions = _sliding_window_view(_markers(x), window_shape, axis).astype(np.intp)
    return _scatter(g, positions, np.size(x), x)


deflinear(_sliding_window_view, _sliding_window_dx)


# ---- NumPy 2's unique_values, unique_counts, unique_inverse, unique_all ---------------------------------------
def _first_occurrences(x, values):
    """For each unique value, the flat position of its first occurrence in ``x`` (whatever the values' order)."""
    flat = np.ravel(x)
    order = np.argsort(flat, kind="stable")
    return order[np.searchsorted(flat[order], values, side="left")]


def _unique_vjp(several):
    """The cotangent of each unique value goes to its first occurrence (as np.unique's rule does)."""
    def vjp(g, ans, x):
        g_values = g[0] if several else g
        if g_values is zero:
            return zero
        values = ans[0] if several else ans
        return _scatter(g_values, _first_occurrences(x, values), np.size(x), x)
    return vjp


def _unique_jvp(several):
    def jvp(t, ans, x):
        values = ans[0] if several else ans
        tangent = np.ravel(np.broadcast_to(t, np.shape(x)))[_first_occurrences(x, values)]
        return (tangent,) + (zero,) * (len(ans) - 1) if several else tangent
    return jvp


for _name, _several in (("unique_values", False), ("unique_counts", True), ("unique_inverse", True),
                        ("unique_all", True)):
    if hasattr(np, _name):
        defvjp(getattr(np, _name), _unique_vjp(_several))
        defjvp(getattr(np, _name), _unique_jvp(_several), piecewise_linear=True)


# ---- np.r_ and np.c_ ------------------------------------------------------------------------------------
INDEX_TRICKS = (type(np.r_), type(np.c_))


def index_concatenate(trick, items):
    """``trick[items]``: np.r_[a, b] as a function the frontend can give a rule."""
    return trick[items]


def _is_float(item):
    return isinstance(item, float) or getattr(getattr(item, "dtype", None), "kind", "") == "f"


def _stand_ins(items, float_item):
    """``items`` with every float item replaced by ``float_item(item)``, every other item (ints, ranges
    from slices) by zeros of its length, and the string directives kept."""
    out = []
    for k, item in enumerate(items):
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, slice):
            out.append(np.zeros(len(np.r_[item])))
        else:
            out.append(float_item(k, item) if _is_float(item) else np.zeros(np.shape(item)))
    return out


def _apply(trick, items, single):
    return np.asarray(trick[items[0] if single else tuple(items)])


def _index_concatenate_ditems(g, ans, trick, items):
    """Run the trick on markers (1 + each float item's element positions, counted across the items; 0
    for the rest) and read off where each element went."""
    single = not isinstance(items, tuple)
    parts = (items,) if single else items
    starts, start = [], 1
    for item in parts:
        starts.append(start)
        start += np.size(item) if _is_float(item) and not isinstance(item, str) else 0
    source = _apply(trick, _stand_ins(parts, lambda k, item: _markers(item) + starts[k]), single)
    grads = []
    for item, offset in zip(parts, starts):
        if isinstance(item, (str, slice)) or not _is_float(item):
            grads.append(zero)
            continue
        inside = (source >= offset) & (source < offset + np.size(item))
        grads.append(_scatter(np.asarray(g)[inside], (source[inside] - offset).astype(np.intp), np.size(item), item))
    return grads[0] if single else tuple(grads)


def _index_concatenate_jvp(t, ans, trick, items):
    single = not isinstance(items, tuple)
    parts, tangents = ((items,), (t,)) if single else (items, t)
    return _apply(trick, _stand_ins(parts, lambda k, item: dense(tangents[k], item)), single)


defvjp(index_concatenate, None, _index_concatenate_ditems)
defjvp(index_concatenate, None, _index_concatenate_jvp, piecewise_linear=True)

note("the choices and the default; the conditions have no gradient", lookup(np.select))
note("the choices; the index array has no gradient (modes 'raise', 'wrap', 'clip')", lookup(np.choose))
note("up to 32 arrays; every indexing and sparse=", lookup(np.meshgrid))
note("up to 32 arrays", lookup(np.broadcast_arrays))
note("nested lists of arrays; returns the gradients in the same nesting", lookup(np.block))
note("arr and values; obj has no gradient", lookup(np.insert))
note("np.r_[...] and np.c_[...] (the frontend sends them here): array and float items, with string directives and "
     "slices (ranges) among them", lookup(index_concatenate))
note("the values: each one's cotangent goes to its first occurrence (where a value repeats, as np.unique)",
     *(lookup(getattr(np, n)) for n in ("unique_values", "unique_counts", "unique_inverse", "unique_all")
       if hasattr(np, n)))
note("np.lib.stride_tricks.sliding_window_view: overlapping windows add their cotangents",
     lookup(_sliding_window_view))
