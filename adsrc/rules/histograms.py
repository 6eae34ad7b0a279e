"""Counting: bincount, histogram and histogram_bin_edges.

Takes NumPy's counting functions and gives their vjps and jvps. Their counts
are piecewise constant in the data, but a weighted count is linear in the
weights, and a histogram's edges (and a density's bin widths) move with the
data's extremes, the bins given as edges, and the range. Where the range of the
edges is empty (all values equal), NumPy widens it and the edges jump: a
cotangent or tangent on them is refused there with InvalidArgument.
"""
from __future__ import annotations

import numpy as np

from ..errors import InvalidArgument
from .registry import defjvp, deflinear, defvjp, lookup
from ._util import cast_like, is_zero, note, zero


def _inexact(value):
    return np.issubdtype(np.result_type(value), np.inexact)


def _bincount_dweights(g, ans, x, weights=None, minlength=0):
    """bincount(x, weights)[k] sums the weights of the x_i == k: each weight gets g[x_i]."""
    if weights is None or not _inexact(ans):
        return zero
    return np.reshape(np.asarray(g)[np.asarray(x)], np.shape(weights))


deflinear(np.bincount, None, _bincount_dweights)


def _histogram_layout(a, bins, range_, weights):
    """The edges of np.histogram(a, bins, range, weights=weights), each element's bin (-1: outside),
    the (weighted) counts, and where the edges came from: the bins array, the range, or min/max of a."""
    a = np.ravel(a)
    edges = np.histogram_bin_edges(a, bins, range_, None if weights is None else np.ravel(weights))
    which = np.searchsorted(edges, a, side="right") - 1
    which[a == edges[-1]] = len(edges) - 2  # the last bin is closed
    which[(a < edges[0]) | (a > edges[-1]) | np.isnan(a)] = -1
    inside = which >= 0
    w = np.ones(a.shape) if weights is None else np.ravel(weights)
    counts = np.bincount(which[inside], w[inside], minlength=len(edges) - 1)
    source = "bins" if np.ndim(bins) == 1 else ("range" if range_ is not None else "data")
    return edges, which, inside, counts, source


def _edge_weights(edges):
    """t with edges = lo (1 - t) + hi t, for edges spaced evenly from lo to hi."""
    n = len(edges) - 1
    return np.arange(n + 1) / max(n, 1)


def _extreme_shares(a):
    """d min(a)/da and d max(a)/da, ties sharing evenly (as np.min/np.max); as float arrays shaped like a."""
    a = np.asarray(a, dtype=float)
    if a.size == 0:
        return np.zeros(a.shape), np.zeros(a.shape)
    low, high = a == np.min(a), a == np.max(a)
    return low / np.sum(low), high / np.sum(high)


def _histogram_vjp(position):
    """The vjp of np.histogram's argument at ``position``: a (0), bins (1), range (2) or weights (4)."""

    def vjp(g, ans, a, bins=10, range=None, density=None, weights=None):
        g_hist, g_edges = g
        hist, edges_out = ans
        edges, which, inside, counts, source = _histogram_layout(a, bins, range, weights)
        g_hist = 0.0 * hist if is_zero(g_hist) or not _inexact(hist) else np.asarray(g_hist, dtype=float)
        g_edges = np.zeros(edges.shape) if is_zero(g_edges) else np.asarray(g_edges, dtype=float)
        if density:
            total, widths = np.sum(counts), np.diff(edges)
            g_counts = g_hist / (total * widths) - np.sum(g_hist * hist) / total
            g_widths = -g_hist * hist / widths
            g_edges = g_edges + np.concatenate([[0.0], g_widths]) - np.concatenate([g_widths, [0.0]])
        else:
            g_counts = g_hist
        if position == 4:
            if weights is None:
                return zero
            return cast_like(np.where(inside, g_counts[np.maximum(which, 0)], 0.0).reshape(np.shape(weights)),
                             weights)
        return _edges_grad(position, g_edges, edges, source, a, bins, range)

    return vjp


def _check_spread(source, a, range_, moving):
    """Where the range of the edges is empty (all of a equal, or range=(v, v)), NumPy widens it to
    (v - 0.5, v + 0.5): the edges jump as soon as it opens, so they have no derivative there."""
    if source == "bins" or not moving:
        return
    lo, hi = (np.min(a), np.max(a)) if source == "data" else range_
    if np.size(a) and lo == hi:
        raise InvalidArgument(
            f"np.histogram: the bin edges are not differentiable where their range is empty ({lo} to {hi}, "
            f"widened to +-0.5 by NumPy: they jump as soon as it opens); pass the edges as bins, or a range "
            f"that does not depend on the differentiated values")


def _edges_grad(position, g_edges, edges, source, a, bins, range_):
    """The cotangent of the bin edges sent to a (0), bins (1) or range (2), whichever they came from."""
    if position == 1:
        return cast_like(np.reshape(g_edges, np.shape(bins)), bins) if source == "bins" else zero
    t = _edge_weights(edges)
    g_lo, g_hi = np.sum(g_edges * (1.0 - t)), np.sum(g_edges * t)
    mine = (position == 0 and source == "data") or (position == 2 and source == "range")
    _check_spread(source, a, range_, mine and (g_lo != 0 or g_hi != 0))
    if position == 2:
        return type(range_)((g_lo, g_hi)) if source == "range" else zero
    if source != "data":  # position 0: the data moves the edges only through its extremes
        return zero
    low, high = _extreme_shares(a)
    return cast_like(g_lo * low + g_hi * high, a)


def _edges_tangent(position, t, edges, source, a, range_=None):
    _check_spread(source, a, range_, (position == 0 and source == "data") or (position == 2 and source == "range"))
    if position == 1:
        return np.asarray(t, dtype=float).reshape(edges.shape) if source == "bins" else np.zeros(edges.shape)
    spread = _edge_weights(edges)
    if position == 2 and source == "range":
        return t[0] * (1.0 - spread) + t[1] * spread
    if position == 0 and source == "data":
        low, high = _extreme_shares(a)
        return np.sum(t * low) * (1.0 - spread) + np.sum(t * high) * spread
    return np.zeros(edges.shape)


def _histogram_jvp(position):
    def jvp(t, ans, a, bins=10, range=None, density=None, weights=None):
        hist, _ = ans
        edges, which, inside, counts, source = _histogram_layout(a, bins, range, weights)
        t_counts = np.zeros(counts.shape)
        t_edges = np.zeros(edges.shape)
        if position == 4:
            tw = np.ravel(t)
            t_counts = np.bincount(which[inside], tw[inside], minlength=len(counts)).astype(float)
        else:
            t_edges = _edges_tangent(position, t, edges, source, a, range)
        if density:
            total, widths = np.sum(counts), np.diff(edges)
            t_hist = t_counts / (total * widths) - hist * np.sum(t_counts) / total - hist * np.diff(t_edges) / widths
        else:
            t_hist = t_counts if _inexact(hist) else zero
        return (t_hist, t_edges)

    return jvp


defvjp(np.histogram, _histogram_vjp(0), _histogram_vjp(1), _histogram_vjp(2), None, _histogram_vjp(4))
defjvp(np.histogram, _histogram_jvp(0), _histogram_jvp(1), _histogram_jvp(2), None, _histogram_jvp(4))


def _bin_edges_vjp(position):
    def vjp(g, ans, a, bins=10, range=None, weights=None):
        source = "bins" if np.ndim(bins) == 1 else ("range" if range is not None else "data")
        return _edges_grad(position, np.asarray(g, dtype=float), ans, source, a, bins, range)

    return vjp


def _bin_edges_jvp(position):
    def jvp(t, ans, a, bins=10, range=None, weights=None):
        source = "bins" if np.ndim(bins) == 1 else ("range" if range is not None else "data")
        return _edges_tangent(position, t, ans, source, a, range)

    return jvp


defvjp(np.histogram_bin_edges, *(_bin_edges_vjp(i) for i in range(3)))
defjvp(np.histogram_bin_edges, *(_bin_edges_jvp(i) for i in range(3)), piecewise_linear=True)

note("the weights (the counts are linear in them); the minlength bins get nothing", lookup(np.bincount))
note("hist is piecewise constant in a; weights, density, and the edges (a bins array, the range, or "
     "min/max of a, ties sharing evenly) are differentiable", lookup(np.histogram))
note("the edges: a bins array, the range, or min/max of a (ties sharing evenly)", lookup(np.histogram_bin_edges))
