"""The same gradient code on Dask arrays: lazy, equal to the NumPy gradient, and run on a local cluster.

Every program below is differentiated twice, on NumPy arrays and on chunked
Dask arrays holding the same numbers. The NumPy gradient is checked against
central finite differences (gradcheck.check, lazy and eager mode); the Dask
gradient must be a Dask array, built without computing anything (the tests
install a Dask scheduler that fails when called), and equal to the NumPy one
once computed, in lazy and in eager mode. The cluster tests run the same
computations on a ``dask.distributed`` LocalCluster of 2 worker processes.
"""
from __future__ import annotations

import contextlib

import numpy as np
import pytest

import adsrc
from adsrc.errors import InvalidArgument, NonScalarOutput
from gradcheck import check

da = pytest.importorskip("dask.array", reason="dask is not installed (pip install 'adsrc[dask]')")
dask = pytest.importorskip("dask")

pytestmark = pytest.mark.dask


# ---- the programs ----------------------------------------------------------------------
def logistic_loss(w, X, y):
    z = X @ w
    return np.mean(np.logaddexp(0.0, -y * z)) + 0.01 * np.sum(w ** 2)


def least_squares(w, X, y):
    r = X @ w - y
    return np.sum(r * r) / X.shape[0]


def mlp(W1, b1, W2, X):
    hidden = np.tanh(X @ W1 + b1)
    return np.mean((hidden @ W2) ** 2)


def loop_accumulate(W, X):
    total = 0.0
    for i in range(3):
        total = total + np.sum(np.tanh(W @ X[i]))  # W's gradient gathers 3 contributions (an AccThunk)
    return total


def reductions(x):
    return np.max(x) + np.linalg.norm(x) + np.sum(np.mean(x * x, axis=0)) + np.sum(np.sqrt(x * x + 1.0))


def joins_and_slices(a, b):
    both = np.concatenate([a, b], axis=1)
    return np.sum(both[:, 1:] * both[:, :-1]) + np.sum(np.stack([a, a * b]) ** 2)


def scalar_bias(b, X):
    return np.sum(np.exp(X * 0.1 + b))


def with_branch(w, X):
    s = np.sum(X @ w)
    if w.shape[0] > 2:  # decided by a shape: nothing computed
        s = s * 2.0
    return s / (1.0 + np.sum(w * w))


rng = np.random.default_rng(7)
N, D = 24, 4
DATA = {
    "X": rng.normal(size=(N, D)),
    "y": np.sign(rng.normal(size=N)),
    "w": rng.normal(size=D) * 0.5,
}
CHUNKS = {"X": (8, 2), "y": 8, "w": 2}

# (function, NumPy arguments, chunks of each argument (None: leave it as it is), wrt)
CASES = {
    "logistic": (logistic_loss, (DATA["w"], DATA["X"], DATA["y"]), ((2,), (8, 2), (8,)), (0,)),
    "least_squares": (least_squares, (DATA["w"], DATA["X"], DATA["X"] @ np.ones(D)), ((2,), (8, 2), (8,)), (0, 1)),
    "mlp": (mlp, (rng.normal(size=(D, 5)), rng.normal(size=5), rng.normal(size=(5, 2)), DATA["X"]),
            ((2, 5), (5,), (5, 2), (8, 2)), (0, 1, 2)),
    "loop": (loop_accumulate, (rng.normal(size=(3, D)), rng.normal(size=(3, D))), ((3, 2), (1, 2)), (0, 1)),
    "reductions": (reductions, (rng.uniform(0.5, 2.0, size=(6, 4)),), ((3, 2),), (0,)),
    "joins": (joins_and_slices, (rng.normal(size=(4, 3)), rng.normal(size=(4, 3))), ((2, 3), (2, 3)), (0, 1)),
    "scalar_bias": (scalar_bias, (0.3, DATA["X"]), (None, (8, 2)), (0, 1)),
    "branch": (with_branch, (DATA["w"], DATA["X"]), ((2,), (8, 2)), (0, 1)),
}


def on_dask(values, chunks):
    return tuple(v if c is None else da.from_array(v, chunks=c) for v, c in zip(values, chunks))


def _refuse_to_compute(*args, **kwargs):
    raise AssertionError("a Dask array was computed while the gradient was being built")


@contextlib.contextmanager
def nothing_computed():
    """Any compute inside the block (np.asarray, float(), bool() of a Dask array...) fails the test."""
    with dask.config.set(scheduler=_refuse_to_compute):
        yield


def computed(value):
    return value.compute(scheduler="sync") if isinstance(value, da.Array) else value


# ---- gradients ------------------------------------------------------------------------
@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
@pytest.mark.parametrize("name", list(CASES))
def test_dask_gradient_is_lazy_and_equals_numpy(name, eager):
    func, values, chunks, wrt = CASES[name]
    expected_value, expected = adsrc.value_and_grad(func, wrt=wrt, eager=eager)(*values)
    dask_values = on_dask(values, chunks)
    with nothing_computed():
        value, grads = adsrc.value_and_grad(func, wrt=wrt, eager=eager)(*dask_values)
    assert isinstance(value, da.Array) and value.shape == ()
    np.testing.assert_allclose(computed(value), expected_value, rtol=1e-12)
    for g, want, i in zip(grads, expected, wrt):
        assert isinstance(g, da.Array), f"the gradient wrt argument {i} is a {type(g).__name__}"
        assert g.shape == np.shape(values[i]) and g.dtype == np.result_type(values[i])
        np.testing.assert_allclose(computed(g), want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name", list(CASES))
def test_the_numpy_gradients_compared_with_are_right(name):
    func, values, _, wrt = CASES[name]
    check(func, *values, wrt=wrt)


def test_a_dask_gradient_keeps_the_chunks_of_its_argument():
    w, X, y = on_dask((DATA["w"], DATA["X"], DATA["y"]), ((2,), (8, 2), (8,)))
    with nothing_computed():
        dX = adsrc.grad(least_squares, wrt=1)(w, X, y)
    assert dX.chunks == X.chunks


def test_float32_dask_arrays_give_float32_gradients():
    w, X, y = on_dask((DATA["w"].astype(np.float32), DATA["X"].astype(np.float32), DATA["y"].astype(np.float32)),
                      ((2,), (8, 2), (8,)))
    with nothing_computed():
        dw = adsrc.grad(logistic_loss)(w, X, y)
    assert dw.dtype == np.float32
    expected = adsrc.grad(logistic_loss)(DATA["w"], DATA["X"], DATA["y"])
    np.testing.assert_allclose(dw.compute(), expected, rtol=1e-4)


def test_numpy_weights_with_dask_data_follow_numpys_dispatch():
    """NumPy's rules make an expression of a NumPy and a Dask array a Dask array: so is the gradient."""
    X, y = on_dask((DATA["X"], DATA["y"]), ((8, 2), (8,)))
    with nothing_computed():
        dw = adsrc.grad(logistic_loss)(DATA["w"], X, y)
    assert isinstance(dw, da.Array)
    np.testing.assert_allclose(dw.compute(), adsrc.grad(logistic_loss)(DATA["w"], DATA["X"], DATA["y"]), rtol=1e-12)


def test_an_argument_that_receives_no_gradient_gets_dask_zeros():
    w, X, y = on_dask((DATA["w"], DATA["X"], DATA["y"]), ((2,), (8, 2), (8,)))

    def ignores_y(w, X, y):
        return np.sum(X @ w)

    with nothing_computed():
        _, dy = adsrc.grad(ignores_y, wrt=(0, 2))(w, X, y)
    assert isinstance(dy, da.Array) and dy.shape == y.shape
    assert not dy.compute().any()


# ---- the other entry points -------------------------------------------------------------
def scores(w, X):
    return np.tanh(X @ w)


def entry_point_results(w, X, y, cotangent, direction):
    """vjp, jvp, hessian, hvp and the decorator at one point: what both array libraries' tests compare."""
    return {
        "vjp": adsrc.vjp(scores, w, X)[1](cotangent),
        "jvp": adsrc.jvp(logistic_loss, (w, X, y), (direction, None, None))[1],
        "hessian": adsrc.hessian(logistic_loss)(w, X, y),
        "hvp": adsrc.hvp(logistic_loss)(w, X, y, direction),
        "decorator": adsrc.differentiate(logistic_loss)(w, X, y),
    }


def test_vjp_jvp_hessian_hvp_and_the_decorator_on_dask():
    w, X, y = on_dask((DATA["w"], DATA["X"], DATA["y"]), ((2,), (8, 2), (8,)))
    wn, Xn, yn = DATA["w"], DATA["X"], DATA["y"]
    cotangent = np.linspace(-1.0, 1.0, N)
    direction = np.arange(1.0, D + 1.0)
    with nothing_computed():
        results = entry_point_results(w, X, y, da.from_array(cotangent, chunks=8), direction)
    expected = entry_point_results(wn, Xn, yn, cotangent, direction)
    for name, got in results.items():
        assert isinstance(got, da.Array), f"{name} gave a {type(got).__name__}"
        np.testing.assert_allclose(got.compute(), expected[name], rtol=1e-10, atol=1e-12, err_msg=name)


# ---- refusals -----------------------------------------------------------------------------
def test_integer_dask_arrays_are_refused_like_integer_numpy_arrays():
    ints = da.arange(6, chunks=3)
    with pytest.raises(InvalidArgument, match="integers"):
        adsrc.grad(least_squares, wrt=1)(DATA["w"][:1], ints.reshape(6, 1), da.ones(6, chunks=3))


def test_a_dask_result_that_is_not_a_scalar_is_refused_before_anything_computes():
    X = da.from_array(DATA["X"], chunks=(8, 2))

    def rows(X):
        return np.sum(X, axis=1)

    with nothing_computed(), pytest.raises(NonScalarOutput, match=r"\(24,\)"):
        adsrc.grad(rows)(X)


# ---- on a cluster: 2 worker processes ------------------------------------------------------
@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed", reason="dask.distributed is not installed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None,
                                       memory_limit="1GiB")
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


@pytest.mark.parametrize("eager", [False, True], ids=["lazy", "eager"])
def test_the_gradient_computes_on_a_local_cluster_of_two_worker_processes(cluster_client, eager):
    from distributed import get_task_stream

    rng = np.random.default_rng(3)
    Xn = rng.normal(size=(4000, 6))
    yn = np.sign(Xn @ np.arange(1.0, 7.0) + rng.normal(size=4000))
    wn = np.zeros(6)
    X, y = da.from_array(Xn, chunks=(500, 6)), da.from_array(yn, chunks=500)
    with nothing_computed():
        dw = adsrc.grad(logistic_loss, eager=eager)(da.from_array(wn, chunks=6), X, y)
    with get_task_stream(cluster_client) as stream:
        got = cluster_client.compute(dw).result()
    assert len(cluster_client.scheduler_info()["workers"]) == 2
    assert {task["worker"] for task in stream.data}, "no task ran on the cluster's workers"
    np.testing.assert_allclose(got, adsrc.grad(logistic_loss)(wn, Xn, yn), rtol=1e-12)


def test_a_gradient_is_never_the_users_own_dask_array_object():
    """x[i] = v rebinds a Dask array in place, so a gradient that is an input must come back as a new object."""
    def identity(x):
        return x

    x = da.from_array(np.arange(4.0), chunks=2)
    cotangent = da.from_array(np.ones(4), chunks=2)
    with nothing_computed():
        dx = adsrc.vjp(identity, x)[1](cotangent)
    assert dx is not cotangent and dx is not x
    dx[0] = 5.0
    assert cotangent.compute().tolist() == [1.0, 1.0, 1.0, 1.0]


def test_the_example_computes_on_a_cluster_the_gradient_numpy_computes():
    """examples/dask_logistic.py, on a smaller matrix: it asserts the agreement with NumPy itself."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "examples", "dask_logistic.py"), "--rows", "40000",
                          "--chunk-rows", "10000"], capture_output=True, text=True, timeout=120, cwd=root)
    assert out.returncode == 0, out.stderr
    assert "is a lazy dask.array.core.Array of shape (50,)" in out.stdout
    assert "% Completed" in out.stdout  # the progress bar
    assert "NumPy in memory gives the same gradient" in out.stdout


def rows_loop(w, X):
    total = 0.0
    for row in X:  # iterates a Dask array row by row, as Python does
        total = total + np.tanh(np.sum(row * w))
    return total


def test_a_loop_over_the_rows_of_a_dask_array():
    Xn, wn = rng.normal(size=(5, 3)), rng.normal(size=3)
    X, w = da.from_array(Xn, chunks=(2, 3)), da.from_array(wn, chunks=3)
    for eager in (False, True):
        with nothing_computed():
            dw, dX = adsrc.grad(rows_loop, wrt=(0, 1), eager=eager)(w, X)
        expected = check(rows_loop, wn, Xn, wrt=(0, 1))
        np.testing.assert_allclose(dw.compute(), expected[0], rtol=1e-12)
        np.testing.assert_allclose(dX.compute(), expected[1], rtol=1e-12)


# ---- every rule, on Dask: right or refused, and lazy unless listed -----------------------------
# Rules whose vjp needs values to build its result, so it computes its Dask inputs (docs/scaling.md);
# Python's max, min and the math module compute them in the forward sweep already, as in plain Python.
COMPUTES_ITS_INPUTS = {
    "builtins.max", "builtins.min", "builtins.sorted", "math.dist", "math.prod", "numpy.cross", "numpy.linalg.cross", "numpy.cumprod",
    "numpy.cumulative_prod", "numpy.diag", "numpy.diagonal", "numpy.linalg.diagonal", "numpy.einsum", "numpy.histogram_bin_edges",
    "numpy.linalg.det", "numpy.linalg.eigvalsh", "numpy.pad", "numpy.sort", "numpy.take_along_axis", "numpy.unique",
    # Rules added after the Dask survey, written for NumPy arrays: they compute their inputs (docs/scaling.md).
    "numpy.linalg.eig", "numpy.linalg.eigvals", "numpy.add_outer", "numpy.multiply_outer", "numpy.subtract_outer",
    "adsrc.rules.assembly.index_concatenate", "numpy.block", "numpy.compress", "numpy.convolve", "numpy.corrcoef",
    "numpy.correlate", "numpy.cov", "numpy.delete", "numpy.ediff1d", "numpy.extract", "numpy.gradient", "numpy.i0",
    "numpy.insert", "numpy.interp", "numpy.linalg.tensorsolve", "numpy.median", "numpy.nancumprod",
    "numpy.nanmedian", "numpy.nanquantile", "numpy.partition", "numpy.percentile", "numpy.poly", "numpy.polyadd",
    "numpy.polyder", "numpy.polyfit", "numpy.polyint", "numpy.polysub", "numpy.polyval", "numpy.quantile",
    "numpy.resize", "numpy.sliding_window_view", "numpy.trapezoid", "numpy.unique_all", "numpy.unique_counts",
    "numpy.unique_inverse", "numpy.unique_values", "numpy.vander",
    "adsrc.rules.spellings.ufunc_at",  # np.add.at into a NumPy array; a Python float's contribution is a float
    # ufunc.outer through the ufunc's rule: a Python float operand's contribution is a float
    "numpy.arctan2_outer", "numpy.divide_outer", "numpy.float_power_outer", "numpy.fmax_outer", "numpy.fmin_outer",
    "numpy.fmod_outer", "numpy.hypot_outer", "numpy.logaddexp2_outer", "numpy.logaddexp_outer", "numpy.maximum_outer",
    "numpy.minimum_outer", "numpy.nextafter_outer", "numpy.power_outer", "numpy.remainder_outer",
}


def _dask_leaves(value):
    if isinstance(value, np.ndarray) and value.dtype.kind == "f" and value.ndim >= 1:
        return da.from_array(value, chunks=tuple(max(1, (n + 1) // 2) for n in value.shape))
    if isinstance(value, (list, tuple)):
        items = [_dask_leaves(v) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)  # NamedTuples too
    if isinstance(value, dict):
        return {k: _dask_leaves(v) for k, v in value.items()}
    return value


def _flat(value):
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in _flat(v)]
    return [computed(value)]


def _rule_names():
    import test_rules

    return sorted(test_rules.RULES)


@pytest.mark.parametrize("name", _rule_names())
def test_every_rule_on_dask_gives_numpys_gradient_or_an_error(name):
    """Each vjp, on the rule's samples turned into Dask arrays: lazy (unless listed above) and equal to
    the vjp on NumPy arrays, or an error (Dask refuses what it cannot do); never a different gradient."""
    import warnings

    from adsrc.values import zero
    from test_rules import RULES, SAMPLES, call_vjp, cotangent, positions, seed_of

    rule = RULES[name]
    computes = []
    for i, case in enumerate(SAMPLES.get(name, [])):
        rng = np.random.default_rng(seed_of(f"{name}{i}"))
        args, kwargs = case.draw(rng)
        ans = rule.func(*args, **kwargs)
        g = cotangent(ans, rng)
        dask_args, dask_g = _dask_leaves(args), _dask_leaves(g)
        for p in positions(rule.vjps, case, args):
            expected = call_vjp(rule.vjps[p], g, ans, args, kwargs)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                try:
                    dask_ans = rule.func(*dask_args, **kwargs)
                    try:
                        with nothing_computed():
                            got = call_vjp(rule.vjps[p], dask_g, dask_ans, dask_args, kwargs)
                    except AssertionError:
                        computes.append(f"{name}[{i}] argument {p}")
                        got = call_vjp(rule.vjps[p], dask_g, dask_ans, dask_args, kwargs)
                    got_leaves = _flat(got)
                except Exception:  # Dask cannot run this form (its error reaches the user): not a wrong gradient
                    continue
            want_leaves = _flat(expected)
            assert len(got_leaves) == len(want_leaves), f"{name}[{i}] argument {p}"
            for a, b in zip(got_leaves, want_leaves):
                if a is zero or b is zero:
                    assert a is b or not np.any(np.asarray(a if b is zero else b)), f"{name}[{i}] argument {p}"
                    continue
                np.testing.assert_allclose(np.asarray(a, dtype=float), np.asarray(b, dtype=float), rtol=1e-10,
                                           atol=1e-12, err_msg=f"{name}[{i}] argument {p}")
    if name not in COMPUTES_ITS_INPUTS and not name.startswith("scipy."):  # SciPy does not dispatch to Dask
        assert not computes, f"computed a Dask array while building the gradient: {computes}"


def test_the_dask_benchmark_runs_and_agrees_with_numpy():
    """benchmarks/dask_scaling.py at a tiny size: it keeps working (no timing is asserted)."""
    import os
    import subprocess
    import sys

    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    out = subprocess.run([sys.executable, os.path.join(root, "benchmarks", "dask_scaling.py"), "--rows", "20000",
                          "--chunk-rows", "5000"], capture_output=True, text=True, timeout=300, cwd=root)
    assert out.returncode == 0, out.stderr[-3000:]
    rows = [line for line in out.stdout.splitlines() if line.startswith("| 20,000 |")]
    assert len(rows) == 3 and "the reference" in rows[0]
    assert all("equals NumPy's" in row for row in rows[1:]), out.stdout
