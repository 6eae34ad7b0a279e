"""Hand-written NumPy gradients: the "hand" baseline of the benchmark table.

Each function takes the workload's arguments and returns a tuple with one
gradient per differentiated argument, in ``Workload.wrt`` order. They are what
a careful NumPy user would write by hand: closed forms where the maths gives
one (loop512, accum100k), one stacked matrix product instead of per-step outer
products (rnn100), and the same ufuncs as the primal where the work is
inherently sequential (scalar_chain), so that "ratio to hand" compares like
with like. tests/test_benchmarks_quick.py checks each against central finite
differences.
"""
from __future__ import annotations

import math

import numpy as np


def regression(w, x):
    # d/dw sum(w @ x) puts the row sums of x in every row of w.
    g = np.empty_like(w)
    g[...] = np.sum(x, axis=1)
    g += w / np.linalg.norm(w)
    return (g,)


def loop512(W, x):
    # Only row 0 of W @ xi is used, so only row 0 of W gets sum_i xi.
    g = np.zeros_like(W)
    g[0] = np.sum(x, axis=0)
    return (g,)


def mlp(W1, b1, W2, b2, X, Y):
    h = np.tanh(X @ W1 + b1)
    out = h @ W2 + b2
    d_out = (2.0 / out.size) * (out - Y)
    d_pre = (d_out @ W2.T) * (1.0 - h * h)
    return X.T @ d_pre, np.sum(d_pre, axis=0), h.T @ d_out, np.sum(d_out, axis=0)


def rnn100(Wh, Wx, h0, xs):
    # Project all inputs with one GEMM, keep every state, run back through time
    # collecting the pre-activation adjoints, then form each weight gradient
    # with one more GEMM: the per-step work is two small ops each way.
    steps = len(xs)
    xin = xs @ Wx.T
    hs = [h0]
    for t in range(steps):
        hs.append(np.tanh(Wh @ hs[-1] + xin[t]))
    H = np.array(hs)
    dtanh = 1.0 - H[1:] ** 2
    d_pre = np.empty((steps, len(h0)))
    dh, WhT = np.ones(len(h0)), Wh.T
    for t in range(steps - 1, -1, -1):
        d_pre[t] = d = dh * dtanh[t]
        dh = WhT @ d
    return d_pre.T @ H[:-1], d_pre.T @ xs


def scalar_chain(x, n):
    # Forward mode fits a scalar input: carry dy/dx alongside y.
    y, dy = x, 1.0
    for _ in range(n):
        y, dy = np.sin(y) * 0.5 + x, np.cos(y) * 0.5 * dy + 1.0
    return (float(dy),)


def accum100k(v, c):
    # sum_i sum(v * c_i) = sum(v) * sum(c): each entry of v gets sum(c).
    return (np.full_like(v, np.sum(c)),)


def scalar_math(x, n):
    y, dy = x, 1.0
    for _ in range(n):
        y, dy = math.sin(y) * 0.5 + x, math.cos(y) * 0.5 * dy + 1.0
    return (dy,)


def ewma(x, a):
    # Forward, then lambda_t = dL/ds_t through the recurrence, backwards; on Python floats (sequential).
    xs = x.tolist()
    s = [xs[0]]
    for t in range(1, len(xs)):
        s.append(a * xs[t] + (1 - a) * s[-1])
    dx = [0.0] * len(xs)
    da, carry = 0.0, 0.0
    for t in range(len(xs) - 1, 0, -1):
        lam = 2.0 * s[t] + carry
        dx[t] = a * lam
        da += lam * (xs[t] - s[t - 1])
        carry = (1 - a) * lam
    dx[0] = 2.0 * s[0] + carry
    return np.array(dx), da


def wide256(W, xs):
    X = np.array(xs)
    D = 1.0 - np.tanh(X @ W.T) ** 2
    return (D.T @ X,)


def straight_line(x, w, statements):
    """Reverse accumulation of workloads._straight_line's recurrence, written out."""
    ys = [x * w]
    for i in range(1, statements):
        ys.append(np.tanh(ys[i - 1]) * w + x if i % 2 else np.sin(ys[i - 1]) + ys[i // 2])
    dys = [np.zeros_like(x) for _ in range(statements)]
    dys[-1] = np.ones_like(x)
    dx, dw = np.zeros_like(x), 0.0
    for i in range(statements - 1, 0, -1):
        d = dys[i]
        if i % 2:
            t = np.tanh(ys[i - 1])
            dys[i - 1] += d * w * (1.0 - t * t)
            dw += float(np.sum(d * t))
            dx += d
        else:
            dys[i - 1] += d * np.cos(ys[i - 1])
            dys[i // 2] += d
    dx += dys[0] * w
    dw += float(np.sum(dys[0] * x))
    return dx, dw


HAND = {
    "regression": regression,
    "loop512": loop512,
    "mlp": mlp,
    "rnn100": rnn100,
    "scalar_chain": scalar_chain,
    "accum100k": accum100k,
    "scalar_math": scalar_math,
    "ewma": ewma,
    "wide256": wide256,
    "straight200": lambda x, w: straight_line(x, w, 200),
    "straight1000": lambda x, w: straight_line(x, w, 1000),
}
