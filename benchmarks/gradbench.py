"""GradBench's evals, written the plain NumPy way: a loop form and a vectorized form each.

The specifications are GradBench's (github.com/gradbench/gradbench, evals/*/README.md);
the code is written here from them, as a NumPy user would write it, and is
not tuned for adsrc. Each eval is a scalar objective whose gradient is timed
(gmm, kmeans, lstm, ode, llsq, lse, det) or a vector function whose Jacobian
is (ba, ht). Inputs are random, seeded, in three sizes: ``tiny`` (the tests'
finite-difference checks), ``small`` and ``medium`` (the timed ones).

Deviations from GradBench, all of them recorded in docs/performance.md:
kmeans times the gradient of the cost and the Newton direction (gradient over
the Hessian's diagonal, from one Hessian-vector product); det's vectorized form
gets its permutations and their signs as arguments (computed once, outside);
ba's vectorized form assumes no camera has a zero rotation (GradBench's data
has none); ht is its "simple" case (no ``us``), on a made-up 22-bone hand
with the real hand's bone tree shape.

    python -m benchmarks.gradbench_run [--quick] [--eval gmm,lstm]
"""
from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from typing import Callable, Optional

import numpy as np

SIZES = ("tiny", "small", "medium")


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def logsumexp(v):
    a = np.max(v)
    return a + np.log(np.sum(np.exp(v - a)))


# --- lse: log of a sum of exponentials, with the max taken out first ----------

def lse_loop(x):
    a = x[0]
    for xi in x:
        if xi > a:
            a = xi
    total = 0.0
    for xi in x:
        total = total + np.exp(xi - a)
    return a + np.log(total)


def lse_vectorized(x):
    return logsumexp(x)


# --- llsq: least squares fit of a polynomial to sign(t) on [-1, 1] -----------------

def llsq_loop(x, n):
    total = 0.0
    for i in range(n):
        t = -1.0 + i * 2.0 / (n - 1)
        r = np.sign(t)
        power = 1.0
        for j in range(len(x)):
            r = r - x[j] * power
            power = power * t
        total = total + r * r
    return 0.5 * total


def llsq_vectorized(x, n):
    t = -1.0 + np.arange(n) * 2.0 / (n - 1)
    powers = t[:, None] ** np.arange(len(x))
    r = np.sign(t) - powers @ x
    return 0.5 * (r @ r)


# --- det: determinant by expansion along the first row -------------------------

def det_loop(A):
    n = A.shape[0]
    if n == 1:
        return A[0, 0]
    total = 0.0
    sign = 1.0
    for j in range(n):
        minor = np.delete(A[1:], j, axis=1)
        total = total + sign * A[0, j] * det_loop(minor)
        sign = -sign
    return total


def det_vectorized(A, perms, signs):
    """Leibniz's formula: every permutation's product of entries at once."""
    return signs @ np.prod(A[np.arange(A.shape[0]), perms], axis=1)


def permutations_and_signs(n: int) -> tuple[np.ndarray, np.ndarray]:
    perms = np.array(list(itertools.permutations(range(n))))
    # A permutation's sign is (-1) to the number of its inversions.
    inversions = np.sum(np.triu(perms[:, :, None] > perms[:, None, :], 1), axis=(1, 2))
    return perms, np.where(inversions % 2 == 0, 1.0, -1.0)


# --- ode: cmpad's an_ode, Runge-Kutta 4 on y0' = x0, yi' = xi y(i-1); d y_last / d x ----

def ode_field_loop(x, y):
    z = [x[0]]
    for i in range(1, len(x)):
        z.append(x[i] * y[i - 1])
    return np.array(z)


def ode_field_vectorized(x, y):
    return np.concatenate([x[:1], x[1:] * y[:-1]])


def _ode(field, x, s):
    h = 2.0 / s
    y = np.zeros(len(x))
    for _ in range(s):
        k1 = field(x, y)
        k2 = field(x, y + h * k1 / 2)
        k3 = field(x, y + h * k2 / 2)
        k4 = field(x, y + h * k3)
        y = y + h * (k1 + 2 * k2 + 2 * k3 + k4) / 6
    return y[-1]


def ode_loop(x, s):
    return _ode(ode_field_loop, x, s)


def ode_vectorized(x, s):
    return _ode(ode_field_vectorized, x, s)


# --- kmeans: the sum over points of the squared distance to the closest centroid ------

def kmeans_loop(points, centroids):
    cost = 0.0
    for p in points:
        closest = np.inf
        for c in centroids:
            d = np.sum((c - p) ** 2)
            if d < closest:
                closest = d
        cost = cost + closest
    return cost


def kmeans_vectorized(points, centroids):
    d = np.sum((points[:, None, :] - centroids[None, :, :]) ** 2, axis=2)
    return np.sum(np.min(d, axis=1))


# --- gmm: log posterior of a Gaussian mixture with a Wishart prior (GradBench's form) ----

def _log_wishart_constant(k, d, m, gamma):
    n = d + m + 1
    log_gamma_d = d * (d - 1) / 4 * math.log(math.pi) + sum(math.lgamma(0.5 * n - 0.5 * j) for j in range(d))
    return k * (n * d * math.log(gamma / math.sqrt(2.0)) - log_gamma_d)


def gmm_loop(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = len(alpha)
    total = 0.0
    for i in range(n):
        betas = []
        for c in range(k):
            v = x[i] - mu[c]
            sq = 0.0
            for r in range(d):           # (Q v)_r: Q lower triangular, filled column by column
                e = np.exp(q[c, r]) * v[r]
                for col in range(r):
                    e = e + l[c, col * (2 * d - col - 1) // 2 + r - col - 1] * v[col]
                sq = sq + e * e
            betas.append(alpha[c] + np.sum(q[c]) - 0.5 * sq)
        total = total + logsumexp(np.array(betas))
    log_likelihood = total - n * (0.5 * d * math.log(2 * math.pi) + logsumexp(alpha))
    frobenius = np.sum(np.exp(q) ** 2) + np.sum(l ** 2)
    log_prior = _log_wishart_constant(k, d, m, gamma) - 0.5 * gamma ** 2 * frobenius + m * np.sum(q)
    return log_likelihood + log_prior


def gmm_vectorized(alpha, mu, q, l, x, m, gamma):
    n, d = x.shape
    k = len(alpha)
    upper_rows, upper_cols = np.triu_indices(d, 1)   # (c, r) for c < r: column by column below the diagonal
    L = np.zeros((k, d, d))
    L[:, upper_cols, upper_rows] = l
    Q = L + np.exp(q)[:, :, None] * np.eye(d)
    centered = x[:, None, :] - mu[None, :, :]                    # (n, k, d)
    Qx = (Q[None] @ centered[..., None])[..., 0]
    beta = alpha + np.sum(q, axis=1) - 0.5 * np.sum(Qx ** 2, axis=2)
    top = np.max(beta, axis=1, keepdims=True)
    rows = top[:, 0] + np.log(np.sum(np.exp(beta - top), axis=1))
    log_likelihood = np.sum(rows) - n * (0.5 * d * math.log(2 * math.pi) + logsumexp(alpha))
    frobenius = np.sum(np.exp(q) ** 2) + np.sum(l ** 2)
    log_prior = _log_wishart_constant(k, d, m, gamma) - 0.5 * gamma ** 2 * frobenius + m * np.sum(q)
    return log_likelihood + log_prior


# --- lstm: ADBench's LSTM (diagonal weights), mean log-likelihood of the next symbol ----

def lstm_vectorized(main_params, extra_params, state, sequence):
    layers = main_params.shape[0] // 2
    b = sequence.shape[1]
    hidden = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    count = 0
    for t in range(sequence.shape[0] - 1):
        out = sequence[t] * extra_params[0]
        for i in range(layers):
            w, bias = main_params[2 * i], main_params[2 * i + 1]
            forget = sigmoid(out * w[:b] + bias[:b])
            ingate = sigmoid(hidden[i] * w[b:2 * b] + bias[b:2 * b])
            outgate = sigmoid(out * w[2 * b:3 * b] + bias[2 * b:3 * b])
            change = np.tanh(hidden[i] * w[3 * b:] + bias[3 * b:])
            cell[i] = cell[i] * forget + ingate * change
            hidden[i] = outgate * np.tanh(cell[i])
            out = hidden[i]
        ypred = out * extra_params[1] + extra_params[2]
        ynorm = ypred - np.log(np.sum(np.exp(ypred)) + 2)   # ADBench's "+ 2"
        total = total + np.sum(sequence[t + 1] * ynorm)
        count += b
    return -total / count


def lstm_loop(main_params, extra_params, state, sequence):
    layers = main_params.shape[0] // 2
    b = sequence.shape[1]
    hidden = [state[2 * i] for i in range(layers)]
    cell = [state[2 * i + 1] for i in range(layers)]
    total = 0.0
    count = 0
    for t in range(sequence.shape[0] - 1):
        out = [sequence[t, j] * extra_params[0, j] for j in range(b)]
        for i in range(layers):
            w, bias = main_params[2 * i], main_params[2 * i + 1]
            new_hidden = []   # not "new_hidden, new_cell = [], []": adsrc refuses .append on those
            new_cell = []
            for j in range(b):
                forget = sigmoid(out[j] * w[j] + bias[j])
                ingate = sigmoid(hidden[i][j] * w[b + j] + bias[b + j])
                outgate = sigmoid(out[j] * w[2 * b + j] + bias[2 * b + j])
                change = np.tanh(hidden[i][j] * w[3 * b + j] + bias[3 * b + j])
                c = cell[i][j] * forget + ingate * change
                new_cell.append(c)
                new_hidden.append(outgate * np.tanh(c))
            cell[i] = np.array(new_cell)   # not "cell[i], hidden[i] = ...": adsrc refuses that target
            hidden[i] = np.array(new_hidden)
            out = hidden[i]
        ypred = [out[j] * extra_params[1, j] + extra_params[2, j] for j in range(b)]
        norm = 2.0
        for y in ypred:
            norm = norm + np.exp(y)
        lse = np.log(norm)
        for j in range(b):
            total = total + sequence[t + 1, j] * (ypred[j] - lse)
        count += b
    return -total / count


# --- ba: bundle adjustment's reprojection errors (a Jacobian) --------------------------

def ba_project(cam, X):
    """One camera (rotation, center, focal length, principal point, two radial terms) seeing one point."""
    rot = cam[:3]
    Xo = X - cam[3:6]
    sqtheta = np.sum(rot * rot)
    if sqtheta != 0:
        theta = np.sqrt(sqtheta)
        axis = rot / theta
        Xcam = (Xo * np.cos(theta) + np.cross(axis, Xo) * np.sin(theta)
                + axis * (axis @ Xo) * (1 - np.cos(theta)))
    else:
        Xcam = Xo + np.cross(rot, Xo)
    p = Xcam[:2] / Xcam[2]
    rsq = p @ p
    p = p * (1 + cam[9] * rsq + cam[10] * rsq * rsq)
    return p * cam[6] + cam[7:9]


def ba_loop(cams, X, w, obs, feats):
    errors = []
    for i in range(len(obs)):
        errors.append(w[i] * (ba_project(cams[obs[i, 0]], X[obs[i, 1]]) - feats[i]))
    return np.concatenate([np.concatenate(errors), 1 - w * w])


def ba_residuals(cam, Xp, w, feats):
    """Every observation's reprojection error at once; row i uses only row i of each argument."""
    rot = cam[:, :3]
    Xo = Xp - cam[:, 3:6]
    theta = np.sqrt(np.sum(rot * rot, axis=1, keepdims=True))
    axis = rot / theta
    Xcam = (Xo * np.cos(theta) + np.cross(axis, Xo) * np.sin(theta)
            + axis * np.sum(axis * Xo, axis=1, keepdims=True) * (1 - np.cos(theta)))
    p = Xcam[:, :2] / Xcam[:, 2:3]
    rsq = np.sum(p * p, axis=1, keepdims=True)
    p = p * (1 + cam[:, 9:10] * rsq + cam[:, 10:11] * rsq * rsq)
    return w[:, None] * (p * cam[:, 6:7] + cam[:, 7:9] - feats)


def ba_vectorized(cams, X, w, obs, feats):
    reproj = ba_residuals(cams[obs[:, 0]], X[obs[:, 1]], w, feats)
    return np.concatenate([reproj.ravel(), 1 - w * w])


# --- ht: hand tracking, "simple": skinned mesh vertices against points (a Jacobian in theta) ----

def euler_rotation(xzy):
    tx, ty, tz = xzy[0], xzy[2], xzy[1]
    Rx = np.array([[1.0, 0.0, 0.0], [0.0, np.cos(tx), -np.sin(tx)], [0.0, np.sin(tx), np.cos(tx)]])
    Ry = np.array([[np.cos(ty), 0.0, np.sin(ty)], [0.0, 1.0, 0.0], [-np.sin(ty), 0.0, np.cos(ty)]])
    Rz = np.array([[np.cos(tz), -np.sin(tz), 0.0], [np.sin(tz), np.cos(tz), 0.0], [0.0, 0.0, 1.0]])
    return Rz @ Ry @ Rx


def angle_axis_rotation(v):
    norm = np.sqrt(np.sum(v * v))
    if norm < 1e-4:
        return np.eye(3)
    x, y, z = v[0] / norm, v[1] / norm, v[2] / norm
    s, c = np.sin(norm), np.cos(norm)
    return np.array([[x * x + (1 - x * x) * c, x * y * (1 - c) - z * s, x * z * (1 - c) + y * s],
                     [x * y * (1 - c) + z * s, y * y + (1 - y * y) * c, y * z * (1 - c) - x * s],
                     [x * z * (1 - c) - y * s, z * y * (1 - c) + x * s, z * z + (1 - z * z) * c]])


def ht_pose_params(theta, bones):
    """GradBench's map from the 26 angles to one row of 3 parameters per bone (after 3 global rows)."""
    pose = np.zeros((bones + 3, 3))
    pose[0] = theta[:3]
    pose[1] = 1.0
    pose[2] = theta[3:6]
    i_theta, row = 6, 5
    for finger in range(5):
        for i in range(2, 5):
            pose[row, 0] = theta[i_theta]
            i_theta += 1
            if i == 2:
                pose[row, 1] = theta[i_theta]
                i_theta += 1
            row += 1
        row += 1
    return pose


def ht_loop(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
            correspondences, points):
    bones = len(parents)
    pose = ht_pose_params(theta, bones)
    absolutes = []
    for i in range(bones):
        R = euler_rotation(pose[i + 3])
        posed = np.block([[R, np.zeros((3, 1))], [np.zeros((1, 3)), np.ones((1, 1))]])
        relative = base_relatives[i] @ posed
        absolutes.append(relative if parents[i] == -1 else absolutes[parents[i]] @ relative)
    positions = np.zeros((3, base_positions.shape[1]))
    for i in range(bones):
        moved = (absolutes[i] @ inverse_base_absolutes[i]) @ base_positions
        positions = positions + moved[:3] * weights[i]
    R = angle_axis_rotation(pose[0]) * pose[1]
    positions = R @ positions + pose[2][:, None]
    errors = []
    for i in range(len(correspondences)):
        errors.append(points[i] - positions[:, correspondences[i]])
    return np.concatenate(errors)


def ht_vectorized(theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
                  correspondences, points):
    bones = len(parents)
    pose = ht_pose_params(theta, bones)
    rotations = np.stack([euler_rotation(pose[i + 3]) for i in range(bones)])    # (bones, 3, 3)
    posed = np.concatenate([np.concatenate([rotations, np.zeros((bones, 3, 1))], axis=2),
                            np.tile(np.array([0.0, 0.0, 0.0, 1.0]), (bones, 1, 1))], axis=1)
    relatives = base_relatives @ posed
    absolutes = []
    for i in range(bones):
        absolutes.append(relatives[i] if parents[i] == -1 else absolutes[parents[i]] @ relatives[i])
    transforms = np.stack(absolutes) @ inverse_base_absolutes                     # (bones, 4, 4)
    moved = transforms[:, :3, :] @ base_positions                                 # (bones, 3, vertices)
    positions = np.sum(moved * weights[:, None, :], axis=0)
    R = angle_axis_rotation(pose[0]) * pose[1]
    positions = R @ positions + pose[2][:, None]
    return (points - positions[:, correspondences].T).ravel()


# --- inputs ------------------------------------------------------------------------

def _rng():
    return np.random.default_rng(0)


def _pick(size, tiny, small, medium):
    return {"tiny": tiny, "small": small, "medium": medium}[size]


def lse_args(size):
    return (_rng().standard_normal(_pick(size, 5, 1_000, 100_000)),)


def llsq_args(size):
    return (_rng().standard_normal(_pick(size, 3, 8, 16)) * 0.1, _pick(size, 6, 1_000, 10_000))


def det_loop_args(size):
    return (_rng().standard_normal((_pick(size, 3, 5, 7),) * 2),)


def det_vectorized_args(size):
    (A,) = det_loop_args(size)
    return (A,) + permutations_and_signs(A.shape[0])


def ode_args(size):
    n, s = _pick(size, (3, 4), (10, 100), (30, 300))
    return np.linspace(0.5, 1.5, n), s


def kmeans_args(size):
    n, k, d = _pick(size, (6, 2, 2), (100, 5, 4), (1_000, 10, 8))
    points = _rng().standard_normal((n, d))
    # Every centroid next to a point of its own, so that each has one at least (as GradBench guarantees).
    return points, points[:k] + 0.01


def gmm_args(size):
    n, k, d = _pick(size, (3, 2, 2), (50, 5, 4), (200, 10, 6))
    r = _rng()
    return (r.standard_normal(k), r.standard_normal((k, d)), r.standard_normal((k, d)) * 0.2,
            r.standard_normal((k, d * (d - 1) // 2)) * 0.2, r.standard_normal((n, d)), 0, 1.0)


def lstm_args(size):
    layers, b, c = _pick(size, (1, 2, 3), (2, 14, 16), (2, 14, 256))
    r = _rng()
    return (r.standard_normal((2 * layers, 4 * b)) * 0.5, r.standard_normal((3, b)) * 0.5,
            r.standard_normal((2 * layers, b)) * 0.5, r.standard_normal((c, b)))


def ba_args(size):
    n, m, p = _pick(size, (2, 3, 4), (5, 50, 200), (20, 1_000, 4_000))
    r = _rng()
    cams = np.column_stack([r.uniform(-0.3, 0.3, (n, 3)), r.standard_normal((n, 3)) * 0.1 + [0, 0, -5],
                            r.uniform(0.8, 1.2, (n, 1)), r.standard_normal((n, 2)) * 0.1,
                            r.standard_normal((n, 2)) * 0.01])
    X = r.standard_normal((m, 3))
    obs = np.column_stack([np.arange(p) % n, np.arange(p) % m])
    return cams, X, r.uniform(0.5, 1.5, p), obs, r.standard_normal((p, 2)) * 0.1


def _rigid(r, scale):
    R = angle_axis_rotation(r.standard_normal(3) * 0.3)
    T = np.eye(4)
    T[:3, :3], T[:3, 3] = R, r.standard_normal(3) * scale
    return T


def ht_args(size):
    """A made-up hand: the real hand's tree (a root, a wrist, five chains of four bones), random pieces."""
    vertices, n_points = _pick(size, (6, 3), (100, 50), (544, 400))
    r = _rng()
    parents = [-1, 0] + [p for f in range(5) for p in (1, 2 + 4 * f, 3 + 4 * f, 4 + 4 * f)]
    base_relatives = np.stack([_rigid(r, 1.0) for _ in parents])
    absolutes = []
    for i, p in enumerate(parents):
        absolutes.append(base_relatives[i] if p == -1 else absolutes[p] @ base_relatives[i])
    inverse_base_absolutes = np.stack([np.linalg.inv(a) for a in absolutes])
    base_positions = np.vstack([r.standard_normal((3, vertices)), np.ones((1, vertices))])
    weights = r.uniform(0.0, 1.0, (len(parents), vertices))
    weights /= weights.sum(axis=0)
    correspondences = r.integers(0, vertices, n_points)
    points = r.standard_normal((n_points, 3))
    theta = r.standard_normal(26) * 0.3
    return (theta, parents, base_relatives, inverse_base_absolutes, base_positions, weights,
            correspondences, points)


# --- registry ----------------------------------------------------------------------

@dataclass(frozen=True)
class Eval:
    """One form of one eval: the function, what is differentiated, how, its inputs per size."""

    name: str
    form: str                         # "loop" or "vectorized"
    f: Callable
    wrt: tuple[int, ...]
    make_args: Callable[[str], tuple]
    derivative: str = "gradient"      # "gradient", "jacobian" (ba, ht), "newton direction" (kmeans)
    note: Optional[str] = None


def _both(name, loop, vectorized, wrt, make_args, vectorized_args=None, derivative="gradient"):
    return [Eval(name, "loop", loop, wrt, make_args, derivative),
            Eval(name, "vectorized", vectorized, wrt, vectorized_args or make_args, derivative)]


EVALS: list[Eval] = [
    *_both("gmm", gmm_loop, gmm_vectorized, (0, 1, 2, 3), gmm_args),
    *_both("kmeans", kmeans_loop, kmeans_vectorized, (1,), kmeans_args),
    *_both("kmeans", kmeans_loop, kmeans_vectorized, (1,), kmeans_args, derivative="newton direction"),
    *_both("lstm", lstm_loop, lstm_vectorized, (0, 1), lstm_args),
    *_both("ode", ode_loop, ode_vectorized, (0,), ode_args),
    *_both("llsq", llsq_loop, llsq_vectorized, (0,), llsq_args),
    *_both("lse", lse_loop, lse_vectorized, (0,), lse_args),
    *_both("det", det_loop, det_vectorized, (0,), det_loop_args, det_vectorized_args),
    *_both("ba", ba_loop, ba_vectorized, (0, 1, 2), ba_args, derivative="jacobian"),
    *_both("ht", ht_loop, ht_vectorized, (0,), ht_args, derivative="jacobian"),
]
