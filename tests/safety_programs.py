"""Functions differentiated by tests/test_safety.py, in a file so that adsrc can read them.

One function per rule family (each reads its inputs several times, so
contributions to one variable may be views of the same buffer), functions for
the thread, scale, numerics and cache tests, and a script for the recursion
test, which runs in a subprocess.
"""
import functools
import textwrap

import numpy as np

rng = np.random.default_rng(42)

G = rng.uniform(0.5, 1.5, (3, 3))  # a global array the functions read
G.setflags(write=False)


def _make_closure_user():
    C = rng.uniform(0.5, 1.5, 3)
    C.setflags(write=False)

    def closure_user(x):
        return np.sum(x * C) + np.sum(x * C) + np.sum(C * x)
    return closure_user, C


closure_user, C_CLOSURE = _make_closure_user()


def elementwise(x, y):
    return np.sum(np.sin(x) * y + np.exp(0.1 * x) - np.tanh(y) / (x * x + 1.0) + np.maximum(x, y) + x ** 2)


def reductions(x, y):
    return np.sum(x) + np.sum(x) + np.mean(x * y) + np.max(y) + np.prod(x[0]) + np.sum(np.cumsum(x, axis=0)) \
        + np.var(y) + np.std(x)


def linalg(x, y):
    return np.sum(x @ y) + np.trace(np.dot(x, y.T)) + np.sum(np.outer(x[0], y[0])) \
        + np.linalg.det(x @ x.T + np.eye(3)) + np.sum(np.linalg.inv(y @ y.T + np.eye(3))) + np.linalg.norm(x)


def shape(x, y):
    return np.sum(x.T * y) + np.sum(np.reshape(x, (9,)) * np.ravel(y)) + np.sum(np.transpose(x)) \
        + np.sum(np.concatenate([x, y])) + np.sum(np.stack([x, y]) ** 2) + np.sum(np.expand_dims(x, 0)) \
        + np.sum(np.squeeze(x[None])) + np.sum(np.broadcast_to(x[0], (3, 3)))


def indexing(x, y):
    return x[0, 0] + np.sum(x[1:]) + np.sum(x[[0, 0, 2]]) + np.sum(y[x > 1.0]) + np.sum(x[:, 1] * y[1]) \
        + np.sum(np.take(x, [1, 1, 4])) + y[-1, -1]


def pass_through(x, y):
    # Gradients that are the cotangent itself, a view of it, or a broadcast.
    return np.sum(x + y) + np.sum(x) + np.sum(x.reshape(-1)) + np.sum(x.T) + np.sum(y - 0.0)


def reads_globals(x, y):
    return np.sum(x * G) + np.sum(x + G) + np.sum(G @ y) + np.sum(G * y * G)


FAMILIES = [elementwise, reductions, linalg, shape, indexing, pass_through, reads_globals]


def same_input_twice(x):
    return np.sum(x) + np.sum(x)


def identity_like(x):
    return x + 0.0


def elementwise_vector(x):
    return np.tanh(x) * x + x


def thread_shared(W, x):
    h = x
    for i in range(3):
        h = np.tanh(W @ h) + h * 0.5
    return np.sum(h * h)


def thread_a(x):
    return np.sum(np.sin(x) * x)


def thread_b(x):
    total = 0.0
    for xi in x:
        total = total + xi * xi * 3.0
    return total


def thread_c(x):
    return np.sum(np.exp(0.2 * x)) + np.sum(x[1:] * x[:-1])


def thread_d(x):
    y = x
    k = 0
    while k < 4:
        y = y * 0.5 + np.cos(y)
        k += 1
    return np.sum(y)


def long_loop(x, n):
    y = x
    for i in range(n):
        y = y * 0.999999 + 1e-6
    return y


def _scale_vjp(g, ans, x):
    return g * x


def _scale_fuse(calls):
    """The batched form a rule may declare: one product for many pending thunks."""
    gs = np.stack([args[0] for args, _ in calls])
    xs = np.stack([args[2] for args, _ in calls])
    return np.einsum("ij,ij->j", gs, xs)


_scale_vjp.fuse = _scale_fuse


RECURSION_SCRIPT = textwrap.dedent("""
    import sys
    import numpy as np
    import adsrc

    def down(x, n):
        if n == 0:
            return x
        return down(x * 1.0001, n - 1) * 1.0

    depth = sys.getrecursionlimit() - 60
    assert down(1.0, depth) > 0  # plain Python manages it
    try:
        g = adsrc.grad(down)(1.0, depth)
    except RecursionError as error:
        print("RecursionError:", error, *getattr(error, "__notes__", []))
    except adsrc.AdsrcError as error:
        print("AdsrcError:", type(error).__name__, error)
    else:
        assert abs(g - 1.0001 ** depth) < 1e-6 * g, g
        print("OK")
""")


def square_sum(x):
    return np.sum(x * x)


def log_sum(x):
    return np.sum(np.log(x))


def float32_loop(W, x):
    h = x
    for i in range(2):
        h = np.tanh(W @ h) * 0.5 + h
    return np.sum(h * h) + np.mean(W) * 2.0


def scaled(x, n):
    return np.sum(x * n)


def make_counter_scaled():
    k = 2.0

    def f(x):
        return np.sum(x * k)

    def set_k(value):
        nonlocal k
        k = value
    return f, set_k


def _inner(x):
    return np.sum(x * x)


@functools.wraps(_inner)
def _wrapper(x):
    return 2.0 * _inner(x)
