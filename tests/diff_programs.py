"""Hand-written programs for tests/test_differential.py, one per construct, in a file adsrc can read.

Each takes ``(x, W, s, n)`` (a 3-vector, a 3x3 matrix, a float, an int) unless
:data:`CUSTOM` gives it other arguments, starts with ``_tick()`` (the harness
checks that a refused program ran none of its code), and is valid Python that
runs without writing into its arguments. ``SMOOTH`` lists the ones whose
gradient is also compared with finite differences (all of them but those
with kinks); ``REFUSED`` the ones adsrc must refuse.
"""
import contextlib
import warnings

import numpy as np

from diffgen import tick as _tick


# -- views read after a write to their base, and bases read after a write through a view ----------
def view_read_after_base_write(x, W, s, n):
    _tick()
    y = x * 2.0
    v = y[:2]
    y[0] = s
    return np.sum(v * v)


def base_read_after_view_write(x, W, s, n):
    _tick()
    y = x * 2.0
    v = y[1:]
    v *= s
    return np.sum(y * y)


def view_read_after_base_inplace(x, W, s, n):
    _tick()
    y = x * 1.0
    v = y[:2]
    y *= s  # in place: v sees it
    return np.sum(v)


def transpose_read_after_write(x, W, s, n):
    _tick()
    m = W * 1.0
    t = m.T
    m[0, 1] = s
    return np.sum(t * x)


def reshape_read_after_write(x, W, s, n):
    _tick()
    m = W.copy()
    flat = m.reshape(-1)
    m[1] = x * s
    return np.sum(flat * flat)


def views_of_an_argument(x, W, s, n):
    _tick()
    v = x[::-1]
    t = W.T
    head = x[:2]
    return np.sum(v * W[0]) + np.sum(t @ x) * s + np.sum(head * head)


# -- writes into arrays the function makes -----------------------------------------------------------
def element_writes(x, W, s, n):
    _tick()
    y = np.zeros(len(x))
    for i in range(len(x)):
        y[i] = x[i] * s
    y[n % 3] += s * s
    return np.sum(y * y)


def slice_writes(x, W, s, n):
    _tick()
    y = np.ones(3)
    y[1:3] = x[:2] * s
    y[0:2] += x[1:]
    y[-1] *= s
    return np.sum(y * y)


def column_and_row_writes(x, W, s, n):
    _tick()
    m = np.zeros((3, 3))
    m[:, 1] = x
    m[2] = W[0] * s
    m[0, 0] -= s
    return np.sum(m * W)


def repeated_index_assignment(x, W, s, n):
    _tick()
    y = np.zeros(3)
    y[[0, 0, 1]] = x  # NumPy keeps the last write: y[0] = x[1]
    return np.sum(y * y)


def repeated_index_add(x, W, s, n):
    _tick()
    y = np.zeros(3)
    y[[0, 0, 1]] += x  # buffered: y[0] gets x[1] only, not x[0] + x[1]
    return np.sum(y * y)


def repeated_index_rows(x, W, s, n):
    _tick()
    m = np.zeros((3, 3))
    m[[2, 0, 2]] = W * s
    return np.sum(m * m)


def repeated_index_scalar(x, W, s, n):
    _tick()
    y = x.copy()
    y[[1, 1]] *= s
    return np.sum(y * y)


def slice_assigned_from_itself(x, W, s, n):
    _tick()
    y = x * s
    y[:] = y
    z = x * 1.0
    z[::-1] = z  # NumPy copies an overlapping right-hand side first
    return np.sum(y * y) + np.sum(z * x)


# -- in-place operators on loop targets and views -----------------------------------------------------
def loop_target_inplace(x, W, s, n):
    _tick()
    m = W * 1.0
    for row in m:
        row *= 2.0
    return np.sum(m * x)


def enumerate_target_inplace(x, W, s, n):
    _tick()
    m = W.copy()
    for i, row in enumerate(m):
        row += x * (i + s)
    return np.sum(m * m)


def row_alias_inplace(x, W, s, n):
    _tick()
    rows = W * 1.0
    r = rows[0]
    r += 1.0
    return np.sum(rows * rows)


def scalar_loop_target_inplace(x, W, s, n):
    _tick()
    y = x * 1.0
    t = 0.0
    for xi in y:
        xi *= s  # a scalar: rebinds xi, leaves y alone
        t = t + xi
    return t + np.sum(y)


# -- zip and enumerate over dicts and lists -------------------------------------------------------------
def zip_dict_and_list(x, W, s, n):
    _tick()
    d = {"a": x, "b": x * 2.0}
    t = 0.0
    for k, c in zip(d, [1.0, s]):
        t = t + np.sum(d[k]) * c
    return t


def enumerate_dict(x, W, s, n):
    _tick()
    d = {"p": x * s, "q": W[0]}
    t = 0.0
    for i, k in enumerate(d):
        t = t + (i + 1.0) * np.sum(d[k] * d[k])
    return t


def zip_dict_items(x, W, s, n):
    _tick()
    d = {"p": x * s, "q": W[1]}
    t = 0.0
    for (k, v), c in zip(d.items(), [s, 2.0]):
        t = t + np.sum(v) * c
    return t


def dict_values_and_items(x, W, s, n):
    _tick()
    d = {"p": np.sin(x), "q": W[2] * s}
    t = 0.0
    for v in d.values():
        t = t + np.sum(v * v)
    for k, v in d.items():
        t = t + np.sum(v)
    return t


def zip_list_and_matrix(x, W, s, n):
    _tick()
    t = 0.0
    for c, row in zip([s, 1.0, 2.0], W):
        t = t + c * np.sum(row * x)
    for i, c in enumerate([s, s * s]):
        t = t + i * c
    return t


# -- local functions and lambdas: defaults are read once, at the definition; closures at the call ----------
def lambda_default_read_early(x, W, s, n):
    _tick()
    a = s
    g = lambda t, a=a: t * a  # noqa: E731
    a = 3.0
    return np.sum(g(x)) + a


def def_default_read_early(x, W, s, n):
    _tick()
    c = x * 2.0

    def h(t, c=c):
        return np.sum(t * c)
    c = W[0]
    return h(x) + np.sum(c)


def closure_read_late(x, W, s, n):
    _tick()
    a = s
    h = lambda t: t * a  # noqa: E731
    a = a * 3.0
    return np.sum(h(x))


def default_overridden(x, W, s, n):
    _tick()
    a = s
    g = lambda t, a=a: np.sum(t) * a  # noqa: E731
    a = 2.0
    return g(x) + g(x, a) + g(W[0], s * s)


# -- shadowed builtin names --------------------------------------------------------------------------------
def local_named_len(x, W, s, n):
    _tick()
    len = s * 2.0
    return np.sum(x) * len


def local_named_len_and_a_loop(x, W, s, n):
    _tick()
    len = 2.0
    t = 0.0
    for xi in x:
        t = t + xi * len
    return t


def parameter_named_range(x, W, s, range):
    _tick()
    t = 0.0
    for row in W:
        t = t + np.sum(row) * s
    return t + range


def parameter_named_len(x, W, s, len):
    _tick()
    return sum(s * w for w in x) + len


def parameters_named_min_and_sum(x, W, min, sum):
    _tick()
    total = 0.0
    for xi in x:
        total = total + xi * min
    return total + sum


def generator_expression_in_a_lambda(x, W, s, n):
    _tick()
    a = s
    g = lambda t, c=a: sum((c * t)[j] * j for j in range(len(t)))  # noqa: E731
    a = np.sum(x * x)
    return g(x) + a


def local_named_sum_with_a_comprehension(x, W, s, n):
    _tick()
    sum = np.sum(x * x)
    lst = [s * xi for xi in x]
    return sum + lst[0] + lst[2]


# -- plain programs (the other checks: lazy vs eager, value, no sharing) ----------------------------------
def recurrent_loop(x, W, s, n):
    _tick()
    h = x
    for i in range(5):
        h = np.tanh(W @ h) + h * s
    return np.sum(h * h)


def many_uses_of_one_input(x, W, s, n):
    _tick()
    t = 0.0
    for i in range(8):
        t = t + np.sum(W * x[i % 3]) + np.sum(x * W[i % 3])
    return t


def kinks(x, W, s, n):
    _tick()
    return np.sum(np.maximum(W @ x, 0.0)) + np.max(x) + abs(s)


# -- refused: an unsupported construct after code that would run ---------------------------------------------
def refused_try(x, W, s, n):
    _tick()
    try:
        y = x * 2.0
    except ValueError:
        y = x
    return np.sum(y)


def refused_with(x, W, s, n):
    _tick()
    with contextlib.nullcontext():
        y = x * 2.0
    return np.sum(y)


# -- everyday syntax -------------------------------------------------------------------------------------------
def with_errstate_and_catch_warnings(x, W, s, n):
    _tick()
    with np.errstate(divide="ignore", invalid="ignore"):
        y = np.log(np.abs(x) + s) * W[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        z = np.sqrt(np.abs(x) + s)
    with np.errstate(over="ignore"):
        return np.sum(y * z)


def star_nested_and_chained_assignment(x, W, s, n):
    _tick()
    first, *middle, last = W
    (a, b), c = (x[0], x[1]), x[2]
    p = q = W @ x * s
    head, *tail = x
    return np.sum(first * last) + sum(np.sum(m) for m in middle) + a * b * c + np.sum(p + q) + head * sum(tail)


def copy_then_write(x, W, s, n):
    _tick()
    W = W.copy()
    W[0] = x * s
    x = x * 2.0
    x[1] = s
    return np.sum(W @ x)


def dict_methods_and_comprehension(x, W, s, n):
    _tick()
    params = {"w": W[0] * s, "b": x, "c": s}
    scaled = {k: v * 2.0 for k, v in params.items()}
    t = sum(np.sum(v) for v in params.values()) + params.get("b", 0.0)[1] + params.get("z", s)
    for k in list(params.keys()):
        t = t + np.sum(scaled[k])
    for i, (k, v) in enumerate(params.items(), 1):
        t = t + i * np.sum(v)
    return t


def reversed_and_enumerate_zip(x, W, s, n):
    _tick()
    t = 0.0
    for v in reversed(x):
        t = t * s + v
    for i, (row, xi) in enumerate(zip(reversed(W), x), 1):
        t = t + i * np.sum(row) * xi
    for k in reversed(list({"a": 1, "b": 2})):
        t = t + len(k) * s
    return t + sum(list(reversed(x))[0:2])


def unpacking_a_dict_gives_its_keys(x, W, s, n):
    _tick()
    d = {1: x, 0: W[0]}
    a, b = d
    u, v = d.values()
    return np.sum(a * u + b * v) * s


# -- programs with other arguments ---------------------------------------------------------------------------
def pass_through_pair(x, y):
    _tick()
    return np.sum(x + y)


def pass_through_same_expression(x, y):
    _tick()
    return np.sum(x) + np.sum(y)


def identity_gradients(x, y, s):
    _tick()
    return np.sum(x * 1.0) + np.sum(y - 0.0) + s


PROGRAMS = [
    view_read_after_base_write, base_read_after_view_write, view_read_after_base_inplace,
    transpose_read_after_write, reshape_read_after_write, views_of_an_argument, element_writes, slice_writes,
    column_and_row_writes, repeated_index_assignment, repeated_index_add, repeated_index_rows,
    repeated_index_scalar, slice_assigned_from_itself, loop_target_inplace, enumerate_target_inplace,
    row_alias_inplace, scalar_loop_target_inplace, zip_dict_and_list, enumerate_dict, zip_dict_items,
    dict_values_and_items, zip_list_and_matrix, lambda_default_read_early, def_default_read_early,
    closure_read_late, default_overridden, generator_expression_in_a_lambda, local_named_len,
    local_named_len_and_a_loop, parameter_named_range, parameter_named_len, parameters_named_min_and_sum,
    local_named_sum_with_a_comprehension, recurrent_loop, many_uses_of_one_input, kinks, refused_try, refused_with,
    with_errstate_and_catch_warnings, star_nested_and_chained_assignment, copy_then_write,
    dict_methods_and_comprehension, reversed_and_enumerate_zip, unpacking_a_dict_gives_its_keys,
    pass_through_pair, pass_through_same_expression, identity_gradients,
]

SMOOTH = {f.__name__ for f in PROGRAMS} - {"kinks"}
REFUSED = {"refused_try", "refused_with"}
# These must run (the everyday syntax of issue 12, and the dict programs it made work).
ACCEPTED = {"with_errstate_and_catch_warnings", "star_nested_and_chained_assignment", "copy_then_write",
            "dict_methods_and_comprehension", "reversed_and_enumerate_zip", "unpacking_a_dict_gives_its_keys",
            "zip_dict_items", "dict_values_and_items", "enumerate_dict", "zip_dict_and_list"}


def _standard(rng):
    return rng.uniform(-1.0, 1.0, 3), rng.uniform(-1.0, 1.0, (3, 3)), float(rng.uniform(0.2, 1.0)), 2


# name -> (a function of a numpy Generator giving the arguments, the positions to differentiate)
CUSTOM = {
    "parameters_named_min_and_sum": (lambda rng: (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, (3, 3)),
                                                  float(rng.uniform(0.2, 1.0)), float(rng.uniform(0.2, 1.0))),
                                     (0, 1, 2, 3)),
    "pass_through_pair": (lambda rng: (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3)), (0, 1)),
    "pass_through_same_expression": (lambda rng: (rng.uniform(-1, 1, (2, 2)), rng.uniform(-1, 1, (2, 2))), (0, 1)),
    "identity_gradients": (lambda rng: (rng.uniform(-1, 1, 3), rng.uniform(-1, 1, 3), 0.5), (0, 1, 2)),
}


def arguments(func, seed: int = 0) -> tuple[tuple, tuple]:
    """(arguments, wrt) for one of :data:`PROGRAMS`."""
    rng = np.random.default_rng(seed)
    make, wrt = CUSTOM.get(func.__name__, (_standard, (0, 1, 2)))
    return make(rng), wrt
