"""adsrc.vmap: every batching rule family against a Python loop of the unbatched function, in_axes and
out_axes, pytrees, the loop fallback, what is refused, and vmap(grad(...)) against a loop of grad calls
(lazy and eager) and finite differences."""
import numpy as np
import pytest

import adsrc
from adsrc.api.batch_axes import bind_axes, infos_of, move_in
from adsrc.api.vmap import _compiled
from adsrc.errors import InvalidArgument, UnsupportedSyntax
from adsrc.rules.batching import Info, Seq
from gradcheck import numerical_grad

rng = np.random.default_rng(7)
B = 5
X = rng.normal(size=(B, 3))  # a batch of vectors
M = rng.normal(size=(B, 3, 4))  # a batch of matrices
S = rng.normal(size=B)  # a batch of scalars
W = rng.normal(size=(4, 3))  # shared
V = rng.normal(size=3)
SQ = rng.normal(size=(B, 3, 3)) + 3 * np.eye(3)


def _take(value, axis, k):
    if axis is None:
        return value
    if isinstance(value, dict):
        return {key: _take(v, axis[key] if isinstance(axis, dict) else axis, k) for key, v in value.items()}
    if isinstance(value, (tuple, list)):
        return type(value)(_take(v, axis[j] if isinstance(axis, (tuple, list)) else axis, k)
                           for j, v in enumerate(value))
    return np.take(value, k, axis=axis)


def _stack(results):
    first = results[0]
    if isinstance(first, dict):
        return {k: _stack([r[k] for r in results]) for k in first}
    if isinstance(first, (tuple, list)):
        return type(first)(_stack([r[j] for r in results]) for j in range(len(first)))
    return np.stack([np.asarray(r) for r in results])


def loop_of(f, in_axes, *args):
    """What vmap(f, in_axes) should give on B examples: f of each, stacked (the specification)."""
    axes = in_axes if isinstance(in_axes, tuple) else (in_axes,) * len(args)
    return _stack([f(*[_take(a, ax, k) for a, ax in zip(args, axes)]) for k in range(B)])


def assert_same(got, expected, rtol=1e-12):
    if isinstance(expected, dict):
        assert isinstance(got, dict) and list(got) == list(expected)
        for k in expected:
            assert_same(got[k], expected[k], rtol)
    elif isinstance(expected, (tuple, list)):
        assert type(got) is type(expected) and len(got) == len(expected)
        for a, b in zip(got, expected):
            assert_same(a, b, rtol)
    else:
        assert np.shape(got) == np.shape(expected), (np.shape(got), np.shape(expected))
        np.testing.assert_allclose(got, expected, rtol=rtol, atol=1e-13)


def _claims(info, expected):
    """The transform's claims of each output's rank per example are true."""
    if isinstance(info, Info):
        if info.rank is not None and not isinstance(expected, (tuple, list, dict)):
            assert np.ndim(expected) - 1 == info.rank, (info, np.shape(expected))
    elif isinstance(info, Seq):
        for e in expected:
            _claims(info.item, e)
    elif isinstance(info, dict):
        for k in info:
            _claims(info[k], expected[k])
    else:
        for i, e in zip(info, expected):
            _claims(i, e)


def check(f, in_axes, *args, batched_source=True):
    got = adsrc.vmap(f, in_axes=in_axes)(*args)
    expected = loop_of(f, in_axes, *args)
    assert_same(got, expected)
    values, axes = bind_axes(f, args, {}, in_axes)
    moved = [move_in(a, ax) for a, ax in zip(values, axes)]
    _claims(_compiled(f, [infos_of(v, ax) for v, ax in zip(moved, axes)]).info, expected)
    source = adsrc.vmap(f, in_axes=in_axes).source(*args)
    if batched_source:
        assert "for k in range" not in source, source
    return source


# ---- rule families ----------------------------------------------------------------------------
def elementwise_mix(x, s, v):
    return np.tanh(x) * s + np.exp(-x ** 2) / (1.0 + v ** 2) - np.maximum(x, v) + np.where(x > 0, x, s)


def test_elementwise_ufuncs_align_ranks_after_the_batch_axis():
    source = check(elementwise_mix, (0, 0, None), X, S, V)
    assert "s[:, None]" in source  # a per-example scalar meets per-example vectors


def clipped(x, m):
    return np.clip(x[:, None], -0.5, 0.5) + np.abs(m) ** 0.5 - (x[:, None] * m) % 1.0 + np.sin(m[0])


def test_broadcasting_between_batched_values_of_different_ranks():
    check(clipped, 0, X, rng.normal(size=(B, 3, 4)))


@pytest.mark.parametrize("reduce", [
    lambda m: np.sum(m), lambda m: np.sum(m, axis=0), lambda m: np.sum(m, axis=-1), lambda m: np.mean(m, axis=(0, 1)),
    lambda m: np.max(m, axis=1, keepdims=True), lambda m: np.std(m, axis=0, ddof=1), lambda m: np.var(m),
    lambda m: np.prod(m, 0), lambda m: np.argmax(m, axis=1), lambda m: np.min(m), lambda m: m.sum(axis=1),
    lambda m: m.mean(), lambda m: np.any(m > 0, axis=0), lambda m: np.median(m, axis=1),
], ids=lambda f: str(f.__code__.co_firstlineno))
def test_reductions_shift_their_axes(reduce):
    check(reduce, 0, M)


@pytest.mark.parametrize("product,axes,args", [
    (lambda a, b: a @ b, (0, None), (M, rng.normal(size=(4, 2)))),  # batched matrix @ shared matrix
    (lambda a, b: a @ b, (0, None), (X, W.T)),  # batched vector @ shared matrix
    (lambda a, b: a @ b, (None, 0), (W, X)),  # shared matrix @ batched vector
    (lambda a, b: a @ b, (None, 0), (V, X)),  # vector dot
    (lambda a, b: a @ b, (None, 0), (rng.normal(size=(2, 3)), M)),
    (lambda a, b: a @ b, (0, 0), (M, np.swapaxes(M, 1, 2))),  # both batched matrices
    (lambda a, b: a @ b, (0, 0), (M, rng.normal(size=(B, 4)))),  # batched matrix @ batched vector
    (lambda a, b: a @ b, (0, 0), (X, M)),  # batched vector @ batched matrix
    (lambda a, b: np.dot(a, b), (0, 0), (X, X)),  # batched vector . batched vector
    (lambda a, b: np.matmul(a, b), (None, 0), (W, X)),
    (lambda a, b: np.dot(a, b), (None, 0), (W, X)),
    (lambda a, b: (np.dot(a, b) - 1.0) * a, (0, 0), (X, X)),  # a number per example, then a vector again
    (lambda a, b: (a @ b - 1.0) * b, (None, 0), (V, X)),
], ids=range(13))
def test_matrix_products(product, axes, args):
    check(product, axes, *args)


@pytest.mark.parametrize("layout", [
    lambda m: m.T, lambda m: np.transpose(m), lambda m: np.transpose(m, (1, 0)), lambda m: np.reshape(m, (2, 6)),
    lambda m: m.reshape(12), lambda m: m.reshape(4, 3), lambda m: np.ravel(m), lambda m: np.expand_dims(m, 1),
    lambda m: np.expand_dims(m, -1), lambda m: np.swapaxes(m, 0, 1), lambda m: m[1], lambda m: m[:, 2],
    lambda m: m[None, ..., 0], lambda m: m[1:, ::2], lambda m: m[np.array([0, 2, 2])],
    lambda m: m[0, np.array([1, 3])], lambda m: m.shape[0] * m, lambda m: len(m) + m.ndim + m.size + m,
], ids=lambda f: str(f.__code__.co_firstlineno))
def test_layout_and_indexing(layout):
    check(layout, 0, M)


def joins(x, m):
    a = np.concatenate([x, np.ones(3), x * 2.0])
    b = np.stack([x, V], axis=1)
    c = np.stack((x, x), axis=-1)
    d = np.array([np.sum(x), x[0], 1.0])  # a display of batched and shared numbers
    return np.einsum("ij,i->j", m, x), a, b, c, np.einsum("ij,ij->", m, m), d


def test_concatenate_stack_and_einsum():
    check(joins, 0, X, M)


def test_linear_algebra_of_stacks():
    check(lambda a, v: np.linalg.inv(a) @ v + np.linalg.det(a), (0, 0), SQ, X)
    check(lambda a: np.linalg.slogdet(a)[1] + np.linalg.eigh(a @ a.T)[0][0] + np.linalg.svd(a)[1], 0, SQ)


def test_ufuncs_of_several_outputs_give_tuples():
    check(lambda x: np.divmod(x, 0.3)[1] + np.modf(x)[0], 0, X)


def helper(a, w):
    return np.tanh(w @ a)


def uses_helper(x, w):
    return helper(x, w) + helper(2.0 * x, w)


def test_a_user_function_it_calls_is_batched_too():
    source = check(uses_helper, (0, None), X, W)
    assert "helper_vmap(" in source


# ---- statements ---------------------------------------------------------------------------------
def loops_and_branches(x, n, flag):
    total = 0.0  # unbatched at first, batched after the first pass
    for i in range(n):
        total = total + np.sin(x * i)
    if flag:
        total = total * 2.0
    else:
        total = -total
    a, b = x[0], x[1:]
    for row in np.stack([x, x ** 2]):
        total = total + row
    return total + a + np.sum(b)


def test_loops_branches_and_unpacking():
    for flag in (True, False):
        check(lambda x, n: loops_and_branches(x, n, flag), (0, None), X, 3)


def several_returns(x, which):
    if which:
        return 1.0
    return np.sum(x)


def test_returns_of_different_kinds_meet():
    for which in (True, False):
        check(lambda x: several_returns(x, which), 0, X)


# ---- in_axes and out_axes ----------------------------------------------------------------------
def pair(x, w):
    return w @ x, np.sum(x)


def test_in_axes_other_axes_and_negative():
    check(pair, (1, None), X.T.copy(), W)
    check(pair, (-1, None), X.T.copy(), W)


def test_out_axes_and_unbatched_outputs():
    got = adsrc.vmap(pair, in_axes=(0, None), out_axes=(1, 0))(X, W)
    np.testing.assert_allclose(got[0], (X @ W.T).T, rtol=1e-12)
    shared = adsrc.vmap(lambda x, w: (np.sum(x), np.sum(w)), in_axes=(0, None), out_axes=(0, None))(X, W)
    assert shared[1] == np.sum(W)
    repeated = adsrc.vmap(lambda x, w: np.sum(w), in_axes=(0, None))(X, W)
    np.testing.assert_allclose(repeated, np.full(B, np.sum(W)))
    with pytest.raises(InvalidArgument, match="out_axes is None"):
        adsrc.vmap(pair, in_axes=(0, None), out_axes=None)(X, W)


def test_axis_size_when_nothing_is_batched():
    got = adsrc.vmap(lambda w: w * 2.0, in_axes=None, axis_size=3)(V)
    np.testing.assert_allclose(got, np.stack([V * 2.0] * 3))
    with pytest.raises(InvalidArgument, match="axis_size"):
        adsrc.vmap(lambda w: w, in_axes=None)(V)


def tree_model(params, data):
    h = np.tanh(params["w"] @ data[0] + params["b"])
    return {"out": h * data[1], "norm": np.sum(h ** 2)}


def test_pytrees_of_arguments_axes_and_results():
    params = {"w": W, "b": rng.normal(size=4)}
    data = (X, S)
    check(tree_model, (None, 0), params, data)
    per_leaf = {"w": None, "b": 0}
    bs = rng.normal(size=(B, 4))
    check(tree_model, ({"w": None, "b": 0}, (0, 0)), {"w": W, "b": bs}, data)
    assert per_leaf  # the axes tree matches the dict's keys
    with pytest.raises(InvalidArgument, match="does not match"):
        adsrc.vmap(tree_model, in_axes=({"w": None}, 0))(params, data)


# ---- the loop fallback -------------------------------------------------------------------------
def no_rule(x, w):
    spectrum = np.abs(np.fft.fft(x))  # np.fft.fft has no batching rule
    return np.sum(spectrum) * (w @ np.cos(x))


def test_a_primitive_without_a_rule_runs_once_per_example():
    source = check(no_rule, (0, None), X, W, batched_source=False)
    assert "per_example = [np.fft.fft(x[k]) for k in range(batch_size)]" in source
    assert "examples_are_arrays(per_example, " in source  # checked to be arrays before they are stacked
    assert "w @ np.cos(x)" not in source  # everything else is batched


def printing(x):
    print("example", np.sum(x), sep=":")
    return x


def test_a_call_made_for_its_effect_runs_once_per_example(capsys):
    adsrc.vmap(printing)(X)
    assert capsys.readouterr().out.count("example:") == B


# ---- refused --------------------------------------------------------------------------------------
def batched_if(x):
    if np.sum(x) > 0:
        return x
    return -x


def batched_while(x):
    while np.sum(x) < 10:
        x = x * 2.0
    return x


def writes(x):
    y = np.zeros(3)
    y[0] = x[0]
    return y


def ands(x):
    return np.sum(x) > 0 and np.sum(x) < 1


def draws(x):
    return x + np.random.normal()


@pytest.mark.parametrize("f,what", [(batched_if, "if statement"), (batched_while, "while loop"),
                                    (writes, "writing into"), (ands, "and"), (draws, "random")],
                         ids=lambda v: getattr(v, "__name__", v))
def test_control_flow_on_batched_values_and_writes_are_refused_naming_the_line(f, what):
    with pytest.raises(UnsupportedSyntax, match=what) as info:
        adsrc.vmap(f)(X)
    assert "test_vmap.py:" in str(info.value)


def test_bad_arguments_are_refused():
    with pytest.raises(InvalidArgument, match="batch sizes"):
        adsrc.vmap(pair)(X, rng.normal(size=(B + 1, 3)))
    with pytest.raises(InvalidArgument, match="entries"):
        adsrc.vmap(pair, in_axes=(0,))(X, W)
    with pytest.raises(InvalidArgument, match="out of range"):
        adsrc.vmap(pair, in_axes=(2, None))(X, W)
    with pytest.raises(InvalidArgument, match="in_axes"):
        adsrc.vmap(pair, in_axes="0")


# ---- with grad ------------------------------------------------------------------------------------
def mlp_loss(params, x, y):
    h = np.tanh(params["W1"] @ x + params["b1"])
    out = params["W2"] @ h + params["b2"]
    return 0.5 * np.sum((out - y) ** 2)


def _mlp(batch=B):
    params = {"W1": rng.normal(size=(6, 3)), "b1": rng.normal(size=6), "W2": rng.normal(size=(2, 6)),
              "b2": rng.normal(size=2)}
    return params, rng.normal(size=(batch, 3)), rng.normal(size=(batch, 2))


@pytest.mark.parametrize("eager", [False, True])
def test_per_example_gradients_of_an_mlp_equal_a_loop_of_grad_calls(eager):
    params, xs, ys = _mlp()
    with adsrc.eager_unthunk(eager):
        got = adsrc.vmap(adsrc.grad(mlp_loss), in_axes=(None, 0, 0))(params, xs, ys)
        expected = _stack([adsrc.grad(mlp_loss)(params, x, y) for x, y in zip(xs, ys)])
    assert_same(got, expected)
    batched = adsrc.vmap(adsrc.grad(mlp_loss), in_axes=(None, 0, 0)).source(params, xs, ys)
    assert "for k in range" not in batched and "np.sum((out - y) ** 2, axis=1)" in batched  # batched, no loop
    # and against central differences, example by example
    for k in range(2):
        flat = lambda w1, k=k: mlp_loss({**params, "W1": w1}, xs[k], ys[k])  # noqa: E731
        np.testing.assert_allclose(got["W1"][k], numerical_grad(flat, (params["W1"],), 0), rtol=1e-6, atol=1e-8)


@pytest.mark.parametrize("eager", [False, True])
def test_value_and_grad_several_wrt_and_a_batched_parameter(eager):
    params, xs, ys = _mlp()
    f = adsrc.value_and_grad(mlp_loss, wrt=(0, 1), eager=eager)
    values, (dp, dx) = adsrc.vmap(f, in_axes=(None, 0, 0))(params, xs, ys)
    expected = [f(params, x, y) for x, y in zip(xs, ys)]
    np.testing.assert_allclose(values, [e[0] for e in expected], rtol=1e-12)
    assert_same(dx, np.stack([e[1][1] for e in expected]))
    assert_same(dp, _stack([e[1][0] for e in expected]))
    per = {k: np.broadcast_to(v, (B,) + v.shape).copy() for k, v in params.items()}
    got = adsrc.vmap(adsrc.grad(mlp_loss, eager=eager), in_axes=(0, 0, 0), out_axes=1)(per, xs, ys)
    assert_same(got, {k: np.moveaxis(v, 0, 1) for k, v in _stack([adsrc.grad(mlp_loss)(params, x, y)
                                                                   for x, y in zip(xs, ys)]).items()})


def test_what_it_cannot_batch_in_a_derivative_runs_as_a_loop():
    def cubic(x):
        return np.sum(x ** 3)

    got = adsrc.vmap(adsrc.grad(adsrc.grad(lambda s: s ** 3)))(S)  # second order: a loop of calls
    np.testing.assert_allclose(got, 6 * S, rtol=1e-12)
    aux = adsrc.vmap(adsrc.grad(lambda x: (cubic(x), 1.0), has_aux=True))(X)
    np.testing.assert_allclose(aux[0], 3 * X ** 2, rtol=1e-12)


# ---- the gradient of a function that calls vmap --------------------------------------------------
def features(w, x):
    return np.sum(np.tanh(w @ x)), w @ x


batched_features = adsrc.vmap(features, in_axes=(None, 0), out_axes=(0, 1))


def through_vmap(w, xs):
    a, b = batched_features(w, xs)
    return np.sum(a ** 2) + np.sum(np.sin(b))


def through_loop(w, xs):
    return sum(features(w, x)[0] ** 2 + np.sum(np.sin(features(w, x)[1])) for x in xs)


@pytest.mark.parametrize("eager", [False, True])
def test_the_gradient_of_a_function_that_calls_vmap_matches_differences(eager):
    w, xs = 0.3 * W, X
    np.testing.assert_allclose(through_vmap(w, xs), through_loop(w, xs), rtol=1e-12)
    dw, dxs = adsrc.grad(through_vmap, wrt=(0, 1), eager=eager)(w, xs)
    np.testing.assert_allclose(dw, numerical_grad(through_loop, (w, xs), 0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dxs, numerical_grad(through_loop, (w, xs), 1), rtol=1e-6, atol=1e-8)


shared_output = adsrc.vmap(lambda w, x: (np.sum(w * x), np.sum(w)), in_axes=(None, 0))


def through_shared(w, xs):
    a, b = shared_output(w, xs)
    return np.sum(a) * np.sum(b)  # b is the same for every example: repeated, so its cotangent is summed


def test_a_repeated_output_sums_its_cotangent():
    dw = adsrc.grad(through_shared)(V, X)
    expected = numerical_grad(lambda w: np.sum(X @ w) * B * np.sum(w), (V,), 0)
    np.testing.assert_allclose(dw, expected, rtol=1e-6)


# ---- what the transform must not take for something else -----------------------------------------
def index_by_a_tuple(m, where):
    return m[where]  # a tuple index picks one element per example, not rows


def single_where(x):
    return np.where(x > 0)[0]  # a tuple of indices, run once per example


def appends(x):
    parts = []
    parts.append(x)
    return parts[0]


SCALE = 2.0


def reads_a_global(x):
    return SCALE * x


def test_a_tuple_index_and_np_where_of_one_argument_run_per_example():
    check(lambda m: index_by_a_tuple(m, (1, 2)), 0, M, batched_source=False)
    xs = np.array([[1.0, -1.0, 2.0], [-1.0, 3.0, 4.0]])
    with pytest.raises(adsrc.errors.RefusedWhenRun, match="returns a tuple"):  # stacked, it would be an array
        adsrc.vmap(single_where)(xs)
    idx = np.array([2, 0, 1, 1, 0])
    check(lambda m, i: m[i, 1:], (0, 0), M, idx, batched_source=False)  # a batched index


def test_changing_a_local_list_with_a_batched_value_is_refused():
    with pytest.raises(UnsupportedSyntax, match="changing a local value"):
        adsrc.vmap(appends)(X)


def test_globals_are_read_when_the_batched_function_runs():
    global SCALE
    batched = adsrc.vmap(reads_a_global)
    np.testing.assert_allclose(batched(X), 2.0 * X)
    SCALE = 3.0
    try:
        np.testing.assert_allclose(batched(X), 3.0 * X)
    finally:
        SCALE = 2.0


def test_outputs_never_share_memory_with_the_arguments():
    out = adsrc.vmap(lambda x: x)(X)
    assert not np.shares_memory(out, X)
    np.testing.assert_array_equal(out, X)


def test_the_benchmark_runs_and_checks_its_two_ways_agree(capsys):
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from benchmarks import vmap_per_example

    vmap_per_example.main(["--quick"])  # asserts the two ways agree to 1e-12; times nothing it checks
    assert "| lazy |" in capsys.readouterr().out


# ---- jacobian through vmap -----------------------------------------------------------------------
def layer(x, w):
    return np.tanh(w @ x) * np.sum(x ** 2)


def layer_tree(params, x):
    return params["a"] * np.sin(params["w"] @ x)


def cumulative(x):
    return np.cumsum(x) * x  # np.cumsum has no batching rule: one pullback per row, as before


W8 = rng.normal(size=(8, 3))  # eight rows: MIN_BATCHED_ROWS


@pytest.mark.parametrize("f,args,wrt", [
    (layer, (V, W8), (0, 1)), (layer, (V, W8), 0), (layer_tree, ({"a": 2.0, "w": W8}, V), (0, 1)),
    (lambda s: np.array([s, s ** 2, s, s ** 2, s, s ** 2, s, s ** 2]) * 3.0, (0.7,), 0),
    (cumulative, (np.linspace(0.1, 0.8, 8),), 0), (layer, (V, W), (0, 1)),
], ids=["two", "one", "tree", "number", "fallback", "few rows"])
def test_jacobian_rows_from_one_batched_sweep_equal_a_pullback_per_row(f, args, wrt, monkeypatch):
    import adsrc.api.higher as higher
    from adsrc.api.vmap import MIN_BATCHED_ROWS, vjp_rows

    positions = wrt if isinstance(wrt, tuple) else (wrt,)
    used = vjp_rows(f, list(args), positions, f(*args)) is not None
    # cumsum has no batching rule; four rows are fewer than a batched sweep repays
    assert used == (f is not cumulative and np.size(f(*args)) >= MIN_BATCHED_ROWS)
    got = adsrc.jacobian(f, wrt=wrt)(*args)
    monkeypatch.setattr(higher, "vjp_rows", lambda *a: None)
    expected = adsrc.jacobian(f, wrt=wrt)(*args)
    assert_same(got, expected)
    assert type(got) is type(expected)
    if f is layer:  # and against central differences
        for p in positions:
            column = numerical_grad(lambda *a: layer(*a)[1], args, p)
            np.testing.assert_allclose((got[positions.index(p)] if isinstance(wrt, tuple) else got)[1], column,
                                       rtol=1e-6, atol=1e-8)


# ---- writes: once for the batch only where once per example would do the same -------------------
def writes_its_own(x, n):
    table = np.zeros(3)
    table[0] = 2.0
    names = []
    names.append("w")
    count = 0
    for i in range(n):
        count += 1
    return x * table[0] + count + len(names)


def writes_an_argument(x, shared):
    shared[0] = shared[0] + 1.0  # once per example would add n, once for the batch 1
    return x * shared[0]


def adds_into_an_argument(x, shared):
    shared += 1.0
    return x


def appends_to_an_argument(x, log):
    log.append(1)
    return x


def test_writes_into_values_the_function_made_run_once():
    check(lambda x: writes_its_own(x, 3), 0, X)


@pytest.mark.parametrize("f", [writes_an_argument, adds_into_an_argument, appends_to_an_argument])
def test_writes_into_what_an_argument_may_share_are_refused(f):
    shared = np.ones(3) if f is not appends_to_an_argument else []
    with pytest.raises(UnsupportedSyntax, match="may share"):
        adsrc.vmap(f, in_axes=(0, None))(X, shared)
    assert shared == [] if isinstance(shared, list) else np.all(shared == 1.0)


def test_jvp_of_vmap_and_of_a_function_that_calls_it():
    def f(w, x):
        return np.tanh(w @ x), np.sum(w)

    batched = adsrc.vmap(f, in_axes=(None, 0), out_axes=(1, 0))
    tw, tx = rng.normal(size=W.shape), rng.normal(size=X.shape)
    (value, shared), (tangent, shared_tangent) = adsrc.jvp(batched, (W, X), (tw, tx))
    eps = 1e-6
    hi, lo = batched(W + eps * tw, X + eps * tx), batched(W - eps * tw, X - eps * tx)
    np.testing.assert_allclose(value, batched(W, X)[0], rtol=1e-12)
    np.testing.assert_allclose(tangent, (hi[0] - lo[0]) / (2 * eps), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(shared_tangent, (hi[1] - lo[1]) / (2 * eps), rtol=1e-6, atol=1e-8)


def test_jvp_through_a_function_that_calls_vmap_and_a_second_derivative_refused():
    w, tw, tx = 0.3 * W, np.ones_like(W), np.ones_like(X)
    _, tangent = adsrc.jvp(through_vmap, (w, X), (tw, tx))
    eps = 1e-6
    expected = (through_loop(w + eps * tw, X + eps * tx) - through_loop(w - eps * tw, X - eps * tx)) / (2 * eps)
    np.testing.assert_allclose(tangent, expected, rtol=1e-6)
    with pytest.raises(adsrc.errors.NotDifferentiable, match="second derivative through"):
        adsrc.hessian(through_vmap)(w, X)


# ---- more families: SciPy, methods that keep the shape, while loops, *args ---------------------
def special(x):
    from scipy.special import expit, logsumexp

    return logsumexp(x, axis=-1) + np.sum(expit(x).astype(np.float64).round(3)) + np.nanmax(x)


def steps(x, n):
    k = 0
    h = 0.0
    while k < n:
        h = np.tanh(h + x)
        k += 1
    return h


def star(*xs):
    return xs[0] * np.sum(xs[1])


def test_scipy_methods_while_loops_and_star_args():
    pytest.importorskip("scipy")
    check(special, 0, M)
    check(lambda x: steps(x, 3), 0, X)
    check(star, (0, None), X, V)
    check(star, (None, 0), V, M)


concatenated = adsrc.vmap(lambda w, x: np.concatenate([x, w]) * np.sum(w * x), in_axes=(None, 0))


def through_a_shared_member(w, xs):
    return np.sum(np.sin(concatenated(w, xs)))


def test_the_gradient_reaches_a_shared_argument_repeated_inside():
    assert "np.stack([w] * batch_size)" in concatenated.source(V, X)
    dw = adsrc.grad(through_a_shared_member)(V, X)
    loop = lambda w: sum(np.sum(np.sin(np.concatenate([x, w]) * np.sum(w * x))) for x in X)  # noqa: E731
    np.testing.assert_allclose(dw, numerical_grad(loop, (V,), 0), rtol=1e-6, atol=1e-8)


def rebound_helper(a):
    return a * 2.0


def calls_a_global_helper(x):
    return rebound_helper(x) + SCALE


def test_a_global_rebound_to_another_function_or_rank_compiles_again():
    global rebound_helper, SCALE
    batched = adsrc.vmap(calls_a_global_helper)
    np.testing.assert_allclose(batched(X), X * 2.0 + 2.0)
    old_helper, old_scale = rebound_helper, SCALE
    try:
        rebound_helper = lambda a: a * 3.0  # noqa: E731
        np.testing.assert_allclose(batched(X), X * 3.0 + 2.0)
        SCALE = np.arange(3.0)  # a rank of its own: the cached code assumed a number
        assert_same(batched(X), loop_of(calls_a_global_helper, 0, X))
    finally:
        rebound_helper, SCALE = old_helper, old_scale


def dot_rows(x, y):
    return np.sum(x * y)


def scaled(x, *, scale=1.0):
    return x * scale


def test_vmap_of_vmap_and_keyword_only_arguments():
    A, Bm = rng.normal(size=(2, 3)), rng.normal(size=(4, 3))
    table = adsrc.vmap(adsrc.vmap(dot_rows, in_axes=(None, 0)), in_axes=(0, None))(A, Bm)
    np.testing.assert_allclose(table, A @ Bm.T, rtol=1e-12)
    np.testing.assert_allclose(adsrc.vmap(scaled)(X, scale=3.0), 3.0 * X)
    no_source = adsrc.vmap(np.linalg.norm)  # a function adsrc reads no source of runs once per example
    np.testing.assert_allclose(no_source(X), [np.linalg.norm(x) for x in X], rtol=1e-12)


# ---- comprehensions ------------------------------------------------------------------------------
def comprehensions(x, m, n):
    powers = [x ** i for i in range(n)]
    total = sum(p * 2.0 for p in powers)
    rows = np.stack([np.sum(row * x) for row in m.T])  # over an example's first axis of m.T
    pairs = [p[0] + p[1] for p in zip(range(2), range(2))]
    return total + np.sum(np.array(powers), axis=0), rows, len(powers) + sum(pairs), powers[1:]


def test_comprehensions_of_batched_values():
    check(lambda x, m: comprehensions(x, m, 3), 0, X, M)
    source = adsrc.vmap(lambda x, m: comprehensions(x, m, 3)).source(X, M)
    assert "for k in range" not in source


def batched_condition(x):
    return [v for v in x if v > 0]


def test_a_comprehension_condition_on_a_batched_value_is_refused():
    with pytest.raises(UnsupportedSyntax, match="condition that depends on a batched value"):
        adsrc.vmap(batched_condition)(X)


def accumulates(x, n):
    total = 0.0
    for i in range(n):
        total += np.sum(x) * i  # a number the function made: rebound, as total = total + ...
    return total


def test_an_augmented_assignment_of_a_number_the_function_made():
    check(lambda x: accumulates(x, 3), 0, X)


def unknown_rank(x):
    spectrum = np.abs(np.fft.fft(x)) ** 2  # of a rank the transform cannot tell, after the loop
    return np.sum(spectrum), np.argmax(spectrum), np.mean(spectrum * 2.0)


def test_after_a_loop_elementwise_with_numbers_and_whole_reductions_stay_batched():
    source = check(unknown_rank, 0, M, batched_source=False)
    assert source.count("for k in range") == 1, source
