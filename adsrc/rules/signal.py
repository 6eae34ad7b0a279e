"""Signals, integration and polynomials: convolve, correlate, interp, trapezoid, gradient, unwrap,
ediff1d, polyval, polyadd, polysub, polymul, polyder, polyint, vander, poly, polyfit.

convolve and correlate are bilinear: the cotangent of either operand is the
correlation of the output's cotangent, set into the full-length output at
the offset the mode keeps, with the other operand. gradient is linear in its
data: its transpose is read off three probes of np.gradient itself (every
row of its stencil has at most three neighbouring entries), so every
spacing and edge order is exact. interp is piecewise linear in x (at a knot,
the slope of the segment to its right), linear in fp, left and right, and smooth in the knots xp
between them.
"""
from __future__ import annotations

import numpy as np

from .registry import defjvp, deflinear, defvjp, lookup
from ..errors import InvalidArgument
from ._tangent import dense
from ._util import cast_like, note, unbroadcast, variadic, zero


# ---- convolve and correlate ------------------------------------------------------------------------
def _offset(func, m, n, mode):
    """Where the ``mode`` output starts inside the full one (probed: NumPy's 'same' differs between them)."""
    if mode in ("full", 2):
        return 0
    unit = np.zeros(n)
    unit[0 if func is np.convolve else n - 1] = 1.0
    return int(round(func(np.arange(1.0, m + 1.0), unit, mode)[0])) - 1


def _full_cotangent(g, func, a, v, mode):
    m, n = np.size(a), np.size(v)
    full = np.zeros(m + n - 1, dtype=np.result_type(g, a, v))
    start = _offset(func, m, n, mode)
    full[start:start + np.size(g)] = g
    return full


def _convolve_vjp(k):
    def vjp(g, ans, a, v, mode="full"):
        full = _full_cotangent(g, np.convolve, a, v, mode)
        return np.correlate(full, (v, a)[k], "valid")
    return vjp


def _correlate_vjp(k):
    def vjp(g, ans, a, v, mode="valid"):
        full = _full_cotangent(g, np.correlate, a, v, mode)
        if k == 0:
            return np.correlate(full, np.flip(v), "valid")
        return np.flip(np.correlate(full, a, "valid"))
    return vjp


deflinear(np.convolve, *variadic(_convolve_vjp, 2, ("a", "v")))
deflinear(np.correlate, *variadic(_correlate_vjp, 2, ("a", "v")))


# ---- interp ---------------------------------------------------------------------------------------
def _segments(x, xp, left, right, period):
    """For each x: the segment index i (between xp[i] and xp[i+1]), the weight of xp[i+1], and masks of
    the points left of xp[0] and right of xp[-1] that take ``left`` and ``right`` when those are given."""
    if period is not None:
        raise InvalidArgument("the gradient of np.interp with period= is not supported")
    x, xp = np.asarray(x, dtype=float), np.asarray(xp, dtype=float)
    n = xp.size
    below, above = x < xp[0], x > xp[-1]
    if n == 1:
        return np.zeros(x.shape, np.intp), np.zeros(x.shape), below, above, np.zeros(x.shape)
    index = np.clip(np.searchsorted(xp, x, side="right") - 1, 0, n - 2)
    width = xp[index + 1] - xp[index]
    flat = width <= 0  # a repeated knot (a jump): the value right of it, slope 0
    weight = np.clip(np.divide(x - xp[index], np.where(flat, 1.0, width)), 0.0, 1.0)
    return index, np.where(flat, 1.0, weight), below, above, np.where(flat, np.inf, width)


def _interp_dx(g, ans, x, xp, fp, left=None, right=None, period=None):
    index, weight, below, above, width = _segments(x, xp, left, right, period)
    if np.size(xp) == 1:
        return np.zeros(np.shape(x), dtype=np.result_type(x, g))
    fp = np.asarray(fp)
    slope = np.where(below | above, 0.0, (fp[index + 1] - fp[index]) / width)
    return np.asarray(g * slope, dtype=np.result_type(x, g)).reshape(np.shape(x))[()]


def _fp_weights(x, xp, left, right, period):
    """Each x's two fp indices and their weights (zero where left or right replaces fp)."""
    index, weight, below, above, _ = _segments(x, xp, left, right, period)
    keep = np.ones(np.shape(index))
    if left is not None:
        keep = np.where(below, 0.0, keep)
    if right is not None:
        keep = np.where(above, 0.0, keep)
    high = np.minimum(index + 1, np.size(xp) - 1)
    return index, high, keep * (1.0 - weight), keep * weight


def _interp_dfp(g, ans, x, xp, fp, left=None, right=None, period=None):
    index, high, w_low, w_high = _fp_weights(x, xp, left, right, period)
    g = np.broadcast_to(g, np.shape(index))
    n = np.size(fp)
    total = np.bincount(np.ravel(index), np.ravel(g * w_low), n) + np.bincount(np.ravel(high), np.ravel(g * w_high), n)
    return total.astype(np.result_type(fp, g), copy=False)


def _interp_dxp(g, ans, x, xp, fp, left=None, right=None, period=None):
    """Moving a knot moves the segments beside it: -slope (1 - w) on the lower knot, -slope w on the upper."""
    index, weight, below, above, width = _segments(x, xp, left, right, period)
    n = np.size(xp)
    if n == 1:
        return np.zeros(np.shape(xp), dtype=np.result_type(xp, g))
    fp = np.asarray(fp)
    inside = ~(below | above)
    slope = np.where(inside, (fp[index + 1] - fp[index]) / width, 0.0) * np.broadcast_to(g, np.shape(index))
    total = np.bincount(np.ravel(index), np.ravel(-slope * (1.0 - weight)), n) + np.bincount(
        np.ravel(index + 1), np.ravel(-slope * weight), n)
    return total.astype(np.result_type(xp, g), copy=False)


def _interp_jvp_xp(t, ans, x, xp, fp, left=None, right=None, period=None):
    index, weight, below, above, width = _segments(x, xp, left, right, period)
    if np.size(xp) == 1:
        return np.zeros(np.shape(ans))[()]
    fp, t = np.asarray(fp), np.asarray(t)
    slope = np.where(~(below | above), (fp[index + 1] - fp[index]) / width, 0.0)
    return (-slope * ((1.0 - weight) * t[index] + weight * t[index + 1])).reshape(np.shape(ans))[()]


def _interp_dside(side):
    def vjp(g, ans, x, xp, fp, left=None, right=None, period=None):
        _, _, below, above, _ = _segments(x, xp, left, right, period)
        return np.sum(g * (below if side == 0 else above), dtype=np.result_type(g, 1.0)).astype(
            np.result_type((left, right)[side], 1.0))[()]
    return vjp


def _interp_jvp_fp(t, ans, x, xp, fp, left=None, right=None, period=None):
    index, high, w_low, w_high = _fp_weights(x, xp, left, right, period)
    t = np.asarray(t)
    return (t[index] * w_low + t[high] * w_high).reshape(np.shape(ans))[()]


def _interp_jvp_side(side):
    def jvp(t, ans, x, xp, fp, left=None, right=None, period=None):
        _, _, below, above, _ = _segments(x, xp, left, right, period)
        return (t * (below if side == 0 else above)).reshape(np.shape(ans))[()]
    return jvp


defvjp(np.interp, _interp_dx, _interp_dxp, _interp_dfp, _interp_dside(0), _interp_dside(1))
defjvp(np.interp, lambda t, ans, x, *args, **kwargs: _interp_dx(t, ans, x, *args, **kwargs), _interp_jvp_xp,
       _interp_jvp_fp, _interp_jvp_side(0), _interp_jvp_side(1))


# ---- trapezoid ------------------------------------------------------------------------------------
def _trapezoid_parts(y, x, dx, axis):
    y_last = np.moveaxis(np.asarray(y), axis, -1)
    if x is None:
        steps = np.full(y_last.shape[-1] - 1, float(dx))
    else:
        x = np.asarray(x)
        steps = np.diff(x) if x.ndim == 1 else np.diff(np.moveaxis(x, axis, -1), axis=-1)
    return y_last, steps


def _end_pad(values, before):
    pad = [(0, 0)] * (np.ndim(values) - 1) + [(1, 0) if before else (0, 1)]
    return np.pad(values, pad)


def _trapezoid_dy(g, ans, y, x=None, dx=1.0, axis=-1):
    y_last, steps = _trapezoid_parts(y, x, dx, axis)
    weights = 0.5 * (_end_pad(steps, True) + _end_pad(steps, False))
    grad = np.expand_dims(g, -1) * weights
    return np.moveaxis(unbroadcast(grad, y_last), -1, axis).astype(np.result_type(y, g), copy=False)


def _trapezoid_dx(g, ans, y, x=None, dx=1.0, axis=-1):
    y_last, _ = _trapezoid_parts(y, x, dx, axis)
    pairs = 0.5 * (y_last[..., :-1] + y_last[..., 1:])
    grad = np.expand_dims(g, -1) * (_end_pad(pairs, True) - _end_pad(pairs, False))
    x = np.asarray(x)
    if x.ndim == 1:
        return np.reshape(np.sum(np.reshape(grad, (-1, x.size)), axis=0), x.shape).astype(np.result_type(x, g))
    return np.moveaxis(unbroadcast(grad, np.moveaxis(x, axis, -1)), -1, axis)


def _trapezoid_ddx(g, ans, y, x=None, dx=1.0, axis=-1):
    if x is not None:
        return zero
    return np.sum(g * np.trapezoid(y, axis=axis), dtype=np.result_type(g, 1.0)).astype(np.result_type(dx, 1.0))[()]


deflinear(np.trapezoid, _trapezoid_dy, _trapezoid_dx, _trapezoid_ddx)


# ---- gradient -------------------------------------------------------------------------------------
def _gradient_axes(f, axis):
    ndim = np.ndim(f)
    if axis is None:
        return list(range(ndim))
    return [a % ndim for a in ((axis,) if np.ndim(axis) == 0 else axis)]


def _stencil_transpose(g, n, spacing, edge_order, dtype):
    """Dᵀ g along the last axis, D the (n x n) matrix of np.gradient along one axis with ``spacing``."""
    probes = (np.arange(n)[None, :] % 3 == np.arange(3)[:, None]).astype(float)
    rows = np.gradient(probes, *spacing, axis=1, edge_order=edge_order)  # rows[r, i] = D[i, column of residue r]
    start = np.clip(np.arange(n) - 1, 0, max(n - 3, 0))
    out = np.zeros(np.shape(g), dtype=dtype)
    for k in range(min(3, n)):
        column = start + k
        np.add.at(np.moveaxis(out, -1, 0), column, np.moveaxis(g * rows[column % 3, np.arange(n)], -1, 0))
    return out


def _gradient_df(g, ans, f, *varargs, axis=None, edge_order=1):
    axes = _gradient_axes(f, axis)
    parts = list(g) if isinstance(g, (tuple, list)) else [g]
    total = np.zeros(np.shape(f), dtype=np.result_type(f, 1.0))
    for k, (ax, part) in enumerate(zip(axes, parts)):
        if part is zero:
            continue
        spacing = () if not varargs else (varargs[0],) if len(varargs) == 1 else (varargs[k],)
        moved = np.moveaxis(np.asarray(part), ax, -1)
        total += np.moveaxis(_stencil_transpose(moved, np.shape(f)[ax], spacing, edge_order, total.dtype), -1, ax)
    return total


defvjp(np.gradient, _gradient_df)
defjvp(np.gradient, lambda t, ans, f, *varargs, **kwargs: np.gradient(dense(t, f), *varargs, **kwargs),
       piecewise_linear=True)


# ---- unwrap and ediff1d ---------------------------------------------------------------------------
# unwrap adds a piecewise-constant multiple of the period: its derivative is the identity.
deflinear(np.unwrap, lambda g, ans, p, discont=None, axis=-1, *, period=2 * np.pi: np.reshape(g, np.shape(p)))
defjvp(np.unwrap, lambda t, ans, p, *args, **kwargs: np.broadcast_to(t, np.shape(ans)), piecewise_linear=True)


def _ediff1d_parts(ary, to_end, to_begin):
    return (0 if to_begin is None else np.size(to_begin)), (0 if to_end is None else np.size(to_end))


def _ediff1d_dary(g, ans, ary, to_end=None, to_begin=None):
    begin, end = _ediff1d_parts(ary, to_end, to_begin)
    middle = np.asarray(g)[begin:np.size(g) - end]
    grad = _end_pad(middle, True) - _end_pad(middle, False)  # the transpose of diff
    return np.reshape(grad, np.shape(ary)).astype(np.result_type(ary, g), copy=False)


def _ediff1d_dend(g, ans, ary, to_end=None, to_begin=None):
    return np.reshape(np.asarray(g)[np.size(g) - np.size(to_end):], np.shape(to_end))


def _ediff1d_dbegin(g, ans, ary, to_end=None, to_begin=None):
    return np.reshape(np.asarray(g)[:np.size(to_begin)], np.shape(to_begin))


def _ediff1d_jvp(k):
    def jvp(t, ans, ary, to_end=None, to_begin=None):
        begin, end = _ediff1d_parts(ary, to_end, to_begin)
        out = np.zeros(np.shape(ans), dtype=np.result_type(ans, t))
        if k == 0:
            out[begin:np.size(ans) - end] = np.diff(np.ravel(t))
        elif k == 1:
            out[np.size(ans) - end:] = np.ravel(t)
        else:
            out[:begin] = np.ravel(t)
        return out
    return jvp


defvjp(np.ediff1d, _ediff1d_dary, _ediff1d_dend, _ediff1d_dbegin)
defjvp(np.ediff1d, *(_ediff1d_jvp(k) for k in range(3)), piecewise_linear=False)


# ---- polynomials ----------------------------------------------------------------------------------
def _polyval_dp(g, ans, p, x):
    p = np.asarray(p)
    n = p.shape[0]
    powers = [np.ones_like(np.asarray(x, dtype=np.result_type(x, 1.0)))]
    for _ in range(n - 1):
        powers.append(powers[-1] * x)
    return np.stack([unbroadcast(g * powers[n - 1 - i], p[i]) for i in range(n)]).astype(
        np.result_type(p, g), copy=False)


def _polyval_slope(p, x):
    """d/dx of sum_i p[i] x^(n-1-i), by Horner's rule on the derivative's coefficients."""
    p = np.asarray(p)
    n = p.shape[0]
    slope = np.zeros(np.broadcast_shapes(np.shape(x), p.shape[1:]), dtype=np.result_type(p, x))
    for i in range(n - 1):
        slope = slope * x + (n - 1 - i) * p[i]
    return slope


defvjp(np.polyval, _polyval_dp, lambda g, ans, p, x: unbroadcast(g * _polyval_slope(p, x), x))
defjvp(np.polyval, lambda t, ans, p, x: np.polyval(t, x), lambda t, ans, p, x: t * _polyval_slope(p, x))


def _polyadd_vjp(k, sign=1.0):
    def vjp(g, ans, a1, a2):
        size = np.size((a1, a2)[k])
        part = np.asarray(g)[np.size(g) - size:]
        return np.reshape(part if k == 0 or sign > 0 else -part, np.shape((a1, a2)[k]))
    return vjp


def _polyadd_jvp(func, k):
    # affine in each argument: the other one is held at zero, not at its value
    def jvp(t, ans, a1, a2):
        pair = [np.zeros(np.shape(a1)), np.zeros(np.shape(a2))]
        pair[k] = t
        return func(*pair)
    return jvp


for _func, _sign in ((np.polyadd, 1.0), (np.polysub, -1.0)):
    defvjp(_func, _polyadd_vjp(0), _polyadd_vjp(1, _sign))
    defjvp(_func, _polyadd_jvp(_func, 0), _polyadd_jvp(_func, 1))
def _trimmed(a):
    """``a`` without its leading zeros, as np.polymul reads it (poly1d drops them; all zeros is [0])."""
    a = np.ravel(a)
    nonzero = np.flatnonzero(a)
    return a[nonzero[0]:] if nonzero.size else a[-1:]


def _polymul_vjp(k):
    def vjp(g, ans, a1, a2):
        t1, t2 = _trimmed(a1), _trimmed(a2)
        grad = _convolve_vjp(k)(g, None, t1, t2, "full")  # the dropped leading zeros get nothing
        size = np.size((a1, a2)[k])
        return np.reshape(np.pad(grad, (size - grad.size, 0)), np.shape((a1, a2)[k]))
    return vjp


def _polymul_jvp(k):
    def jvp(t, ans, a1, a2):
        kept = [_trimmed(a1), _trimmed(a2)]
        kept[k] = np.ravel(t)[np.size((a1, a2)[k]) - kept[k].size:]
        return np.convolve(*kept)
    return jvp


defvjp(np.polymul, *variadic(_polymul_vjp, 2, ("a1", "a2")))
defjvp(np.polymul, _polymul_jvp(0), _polymul_jvp(1))


def _falling(n, m):
    """The factor polyder's m-th derivative puts on each of the first n - m coefficients."""
    powers = np.arange(n - 1, m - 1, -1, dtype=float)
    factor = np.ones(n - m)
    for j in range(m):
        factor *= powers - j
    return factor


def _polyder_dp(g, ans, p, m=1):
    n = np.size(p)
    if m >= n:
        return np.zeros(np.shape(p), dtype=np.result_type(p, g))
    return np.pad(np.asarray(g) * _falling(n, m), (0, m)).astype(np.result_type(p, g), copy=False)


def _polyint_dp(g, ans, p, m=1, k=None):
    n = np.size(p)
    return (np.asarray(g)[:n] / _falling(n + m, m)).astype(np.result_type(p, g), copy=False)


deflinear(np.polyder, _polyder_dp)
defvjp(np.polyint, _polyint_dp)
defjvp(np.polyint, lambda t, ans, p, m=1, k=None: np.polyint(t, m), piecewise_linear=True)


def _vander_slopes(x, N=None, increasing=False):
    """d out[i, j] / d x[i]: exponent * x[i] ** (exponent - 1), column by column."""
    columns = np.size(x) if N is None else N
    exponents = np.arange(columns) if increasing else np.arange(columns - 1, -1, -1)
    lower = np.vander(np.asarray(x), columns + 1, increasing=True)[:, np.maximum(exponents - 1, 0)]
    return exponents * lower


defvjp(np.vander, lambda g, ans, x, N=None, increasing=False: np.sum(
    g * _vander_slopes(x, N, increasing), axis=1).astype(np.result_type(x, g), copy=False))
defjvp(np.vander, lambda t, ans, x, N=None, increasing=False: np.expand_dims(t, -1) * _vander_slopes(x, N, increasing))


def _poly_droots(g, ans, seq_of_zeros):
    """c = prod_k (x - r_k): d c / d r_k = -[0, coefficients of the product without r_k]."""
    roots = np.asarray(seq_of_zeros)
    if roots.ndim != 1:
        raise InvalidArgument("the gradient of np.poly is supported for a 1-D sequence of roots (not a matrix)")
    g = np.asarray(g)
    return np.array([-np.dot(g[1:], np.atleast_1d(np.poly(np.delete(roots, k)))) for k in range(roots.size)],
                    dtype=np.result_type(roots, g))


def _poly_jvp(t, ans, seq_of_zeros):
    roots = np.asarray(seq_of_zeros)
    if roots.ndim != 1:
        raise InvalidArgument("the tangent of np.poly is supported for a 1-D sequence of roots (not a matrix)")
    total = np.zeros(np.shape(ans), dtype=np.result_type(roots, t))
    for k in range(roots.size):
        total = total - t[k] * np.concatenate([[0.0], np.atleast_1d(np.poly(np.delete(roots, k)))])
    return total


defvjp(np.poly, _poly_droots)
defjvp(np.poly, _poly_jvp)


def _polyfit_system(x, y, deg, rcond, full, w, cov):
    if full or w is not None or cov is not False:
        raise InvalidArgument("the gradient of np.polyfit is supported without full=, w= and cov=")
    matrix = np.vander(np.asarray(x, dtype=np.result_type(x, 1.0)), deg + 1)
    return matrix, (np.size(x) * np.finfo(matrix.dtype).eps if rcond is None else rcond)


def _polyfit_vjp(k):
    """The least-squares solution of vander(x) p = y: through lstsq's vjps, then vander's for x."""
    def vjp(g, ans, x, y, deg, rcond=None, full=False, w=None, cov=False):
        matrix, cutoff = _polyfit_system(x, y, deg, rcond, full, w, cov)
        solution = (ans, np.zeros(0), 0, zero)
        if k == 1:  # (np.polyfit computes in float64 at least; a contribution keeps its argument's dtype)
            return cast_like(lookup(np.linalg.lstsq).vjps[1]((g, zero, zero, zero), solution, matrix, y, cutoff), y)
        g_matrix = lookup(np.linalg.lstsq).vjps[0]((g, zero, zero, zero), solution, matrix, y, cutoff)
        return cast_like(lookup(np.vander).vjps[0](g_matrix, matrix, x, deg + 1), x)
    return vjp


def _polyfit_jvp(k):
    def jvp(t, ans, x, y, deg, rcond=None, full=False, w=None, cov=False):
        matrix, cutoff = _polyfit_system(x, y, deg, rcond, full, w, cov)
        solution = (ans, np.zeros(0), 0, np.linalg.svd(matrix, compute_uv=False))
        if k == 1:
            return lookup(np.linalg.lstsq).jvps[1](t, solution, matrix, y, cutoff)[0]
        d_matrix = lookup(np.vander).jvps[0](t, matrix, x, deg + 1)
        return lookup(np.linalg.lstsq).jvps[0](d_matrix, solution, matrix, y, cutoff)[0]
    return jvp


defvjp(np.polyfit, _polyfit_vjp(0), _polyfit_vjp(1))
defjvp(np.polyfit, _polyfit_jvp(0), _polyfit_jvp(1))


note("every mode; the cotangent goes through the full-length output", lookup(np.convolve), lookup(np.correlate))
note("x (piecewise linear: at a knot, the slope to its right; 0 outside xp's range), xp, fp, left and right; "
     "period= refused", lookup(np.interp))
note("y, x (an array of sample points) and dx", lookup(np.trapezoid))
note("the data (every spacing and edge order); the spacings have no gradient", lookup(np.gradient))
note("the identity (the added multiples of the period are piecewise constant)", lookup(np.unwrap))
note("p and x", lookup(np.polyval))
note("a 1-D sequence of roots", lookup(np.poly))
note("x and y, through lstsq and vander (the fixed-rank least-squares derivative); full=, w= and cov= refused",
     lookup(np.polyfit))
