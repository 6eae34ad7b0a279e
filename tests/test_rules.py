"""Tests generated from the rule registry.

Every built-in rule, for every differentiable argument and every sample in
``rule_samples.SAMPLES``, is checked against central finite differences in
float64 (with a random cotangent), and in float32 for the dtype of its
contribution. A rule with no samples fails ``test_every_rule_has_samples``,
so a rule cannot be added without a test. Batched (``fuse``) and in-place
(``add_into``) forms are checked against the sum of the plain vjps.
"""
from __future__ import annotations

import importlib.util
import math
import operator
import pathlib
import zlib

import numpy as np
import pytest

import adsrc.rules.registry as registry
import adsrc.rules as builtin
from adsrc.values.thunks import zero
from rule_samples import ATTRIBUTE_SAMPLES, METHOD_SAMPLES, ROUNDED, SAMPLES, TIES

ROOT = pathlib.Path(__file__).resolve().parents[1]
RULES = {rule.qualname: rule for rule in builtin.builtin_rules()}
EPS = 1e-6
RTOL, ATOL = 1e-5, 1e-7


# ---- pytrees of floats ---------------------------------------------------------
_VIEWS = (type({}.values()), type({}.items()))


def is_float_like(value) -> bool:
    """A differentiable value: a float array or scalar, or a non-empty list/tuple/dict of them (strings
    among them are keys: ``[("a", x)]``, what ``dict`` takes)."""
    if isinstance(value, (bool, np.bool_)):
        return False
    if isinstance(value, (float, complex, np.inexact)):
        return True
    if isinstance(value, np.ndarray):
        return np.issubdtype(value.dtype, np.inexact)
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)) and value:
        return all(is_float_like(v) or isinstance(v, str) for v in value) and any(is_float_like(v) for v in value)
    return False


def working_leaves(value):
    """float64 copies of the floats in ``value``, and a function rebuilding ``value`` from them."""
    if isinstance(value, str) or value is zero:  # a key, or the cotangent of one
        return [], lambda ls: value
    if isinstance(value, dict):
        leaves, rebuild = working_leaves(list(value.values()))
        return leaves, lambda ls: dict(zip(value.keys(), rebuild(ls)))
    if isinstance(value, (list, tuple)):
        parts = [working_leaves(v) for v in value]
        leaves = [leaf for sub, _ in parts for leaf in sub]

        def rebuild(ls, kind=type(value)):
            out, i = [], 0
            for sub, sub_rebuild in parts:
                out.append(sub_rebuild(ls[i : i + len(sub)]))
                i += len(sub)
            if hasattr(kind, "_fields"):  # a NamedTuple
                return kind(*out)
            return tuple(out) if kind is tuple else out

        return leaves, rebuild
    if isinstance(value, np.ndarray) and value.dtype.kind in "biu":  # pivots, indices: not moved
        return [], lambda ls: value
    if isinstance(value, np.ndarray):
        return [value.astype(_working(value))], lambda ls: ls[0]
    if isinstance(value, np.inexact):
        return [np.array(value, dtype=_working(value))], lambda ls: _working(value).type(ls[0])
    if isinstance(value, complex):
        return [np.array(value, dtype=np.complex128)], lambda ls: complex(ls[0])
    return [np.array(value, dtype=np.float64)], lambda ls: float(ls[0])


def _working(value):
    """The dtype finite differences work in: complex128 for complex values, else float64."""
    return np.dtype(np.complex128 if np.iscomplexobj(value) else np.float64)


def flat(value):
    """The leaves of an output or cotangent pytree; non-float leaves and zero become None."""
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, _VIEWS):
        value = list(value)
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flat(v)]
    if value is zero or value is None or not is_float_like(value):
        return [None]
    return [np.array(value, dtype=_working(value))]  # a copy: outputs may be views of the inputs


def cotangent(value, rng, dtype=np.float64):
    """A random cotangent with the structure of ``value`` (zero for integer outputs)."""
    if isinstance(value, dict):
        return {k: cotangent(v, rng, dtype) for k, v in value.items()}
    if isinstance(value, _VIEWS):
        value = list(value)
    if isinstance(value, (list, tuple)):
        return [cotangent(v, rng, dtype) for v in value] if isinstance(value, list) else tuple(
            cotangent(v, rng, dtype) for v in value
        )
    if not is_float_like(value):
        return zero
    if np.iscomplexobj(value) and dtype is np.float64:
        # docs/complex.md: the cotangent of a complex output is complex
        return cotangent(np.real(value), rng) + 1j * cotangent(np.real(value), rng)
    if isinstance(value, float) and dtype is np.float64:
        return float(rng.standard_normal())
    if isinstance(value, (float, np.floating)):
        return dtype(rng.standard_normal())
    return rng.standard_normal(np.shape(value)).astype(dtype)


def inner(g, y) -> float:
    """The pairing of a cotangent with a tangent: Re(sum(g * y)), no conjugate (docs/complex.md)."""
    return sum(float(np.real(np.sum(a * b))) for a, b in zip(flat(g), flat(y)) if a is not None and b is not None)


def result_leaves(result, like):
    """A vjp's result as arrays aligned with ``working_leaves(like)``, checking its structure."""
    if isinstance(like, str):
        return []
    if isinstance(like, dict):
        if result is not zero:
            assert isinstance(result, dict), f"expected a dict of gradients, got {type(result).__name__}"
            assert set(result) <= set(like), f"gradients for keys {set(result) - set(like)} the dict lacks"
        return [leaf for k, v in like.items() for leaf in result_leaves(zero if result is zero else
                                                                         result.get(k, zero), v)]
    if isinstance(like, (list, tuple)):
        if result is zero:
            return [leaf for v in like for leaf in result_leaves(zero, v)]
        assert isinstance(result, (list, tuple)), f"expected a list of gradients, got {type(result).__name__}"
        assert len(result) == len(like), f"expected {len(like)} gradients, got {len(result)}"
        return [leaf for r, v in zip(result, like) for leaf in result_leaves(r, v)]
    if isinstance(like, np.ndarray) and like.dtype.kind in "biu":  # no leaf (working_leaves)
        return []
    if result is zero:
        return [np.zeros(np.shape(like))]
    assert np.shape(result) == np.shape(like), f"gradient shape {np.shape(result)} != argument shape {np.shape(like)}"
    return [np.asarray(result)]


def to_float32(value):
    if isinstance(value, np.ndarray) and value.dtype == np.float64:
        return value.astype(np.float32)
    if isinstance(value, list):
        return [to_float32(v) for v in value]
    if isinstance(value, tuple):
        items = [to_float32(v) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else tuple(items)
    if isinstance(value, dict):
        return {k: to_float32(v) for k, v in value.items()}
    return value


# ---- the generic checks ----------------------------------------------------------
def positions(vjps, case, args):
    if case.wrt is not None:
        return list(case.wrt)
    return [i for i, vjp in enumerate(vjps) if vjp is not None and i < len(args) and is_float_like(args[i])]


def finite_differences(f, args, kwargs, p):
    """For each input element of argument ``p``: the output pytree's central difference."""
    leaves, rebuild = working_leaves(args[p])

    def call():
        return f(*args[:p], rebuild(leaves), *args[p + 1 :], **kwargs)

    columns = []
    for leaf in leaves:
        per_element = []
        for j in range(leaf.size):
            old = leaf.flat[j]
            directions = []
            # a complex element moves along its real and its imaginary axis
            for step in ((EPS, 1j * EPS) if leaf.dtype.kind == "c" else (EPS,)):
                leaf.flat[j] = old + step
                plus = flat(call())
                leaf.flat[j] = old - step
                minus = flat(call())
                leaf.flat[j] = old
                directions.append([None if a is None else (a - b) / (2 * EPS) for a, b in zip(plus, minus)])
            per_element.append(directions)
        columns.append(per_element)
    return columns


def fd_gradient(columns, g, like_leaves):
    g_leaves = flat(g)
    out = []
    for per_element, leaf in zip(columns, like_leaves):
        grad = np.zeros(leaf.shape, dtype=leaf.dtype)
        for j, directions in enumerate(per_element):
            # docs/complex.md: Re(vjp(g) * v) == Re(sum(g * J v)) for v = 1 and v = i, so the real part
            # pairs with the real direction and minus the imaginary part with the imaginary one
            along = [sum(float(np.real(np.sum(gl * d))) for gl, d in zip(g_leaves, diffs)
                         if gl is not None and d is not None) for diffs in directions]
            grad.flat[j] = along[0] - 1j * along[1] if len(along) == 2 else along[0]
        out.append(grad)
    return out


def call_vjp(vjp, g, ans, args, kwargs):
    """Call a vjp as the compiler does: values it never reads (per ``vjp.uses``) are passed as None."""
    uses = getattr(vjp, "uses", None)
    values = [ans, *args]
    if uses is not None:
        values = [v if uses(k + 1) else None for k, v in enumerate(values)]
    return vjp(g, *values, **kwargs)


def check_against_fd(f, vjps, case, seed, label):
    rng = np.random.default_rng(seed)
    args, kwargs = case.draw(rng)
    ans = f(*args, **kwargs)
    g = cotangent(ans, rng)
    variants = [g]
    if isinstance(g, (list, tuple)) and len(g) > 1 and not isinstance(g[0], (list, tuple, dict)):
        # a piece with no gradient arrives as zero
        variants.append(type(g)([zero, *g[1:]]) if isinstance(g, tuple) else [zero, *g[1:]])
    checked = positions(vjps, case, args)
    assert checked, f"{label}: the sample has no differentiable argument"
    for p in checked:
        columns = finite_differences(f, args, kwargs, p)
        like_leaves, _ = working_leaves(args[p])
        for gv in variants:
            got = result_leaves(call_vjp(vjps[p], gv, ans, args, kwargs), args[p])
            want = fd_gradient(columns, gv, like_leaves)
            for i, (a, b) in enumerate(zip(got, want)):
                np.testing.assert_allclose(
                    a, b, rtol=RTOL, atol=ATOL, equal_nan=False,
                    err_msg=f"{label}: argument {p}, leaf {i}, args {args!r}, {kwargs!r}"
                )


def check_float32(f, vjps, case, seed, label):
    rng = np.random.default_rng(seed)
    args, kwargs = case.draw(rng)
    args, kwargs = to_float32(args), to_float32(kwargs)
    ans = f(*args, **kwargs)
    g = cotangent(ans, rng, np.float32)
    for p in positions(vjps, case, args):
        result = call_vjp(vjps[p], g, ans, args, kwargs)
        arg_leaves = args[p] if isinstance(args[p], (list, tuple)) else [args[p]]
        res_leaves = result if isinstance(args[p], (list, tuple)) else [result]
        for a, r in zip(arg_leaves, res_leaves):
            if isinstance(a, np.ndarray) and a.dtype == np.float32 and r is not zero:
                assert np.result_type(r) == np.float32, f"{label}: argument {p} gives {np.result_type(r)}"


def seed_of(label: str) -> int:
    return zlib.crc32(label.encode())


def has_float32_array(case) -> bool:
    args, kwargs = case.draw(np.random.default_rng(0))

    def walk(v):
        if isinstance(v, (list, tuple)):
            return any(walk(x) for x in v)
        return isinstance(v, np.ndarray) and v.dtype == np.float64

    return walk(args)


RULE_CASES = [
    pytest.param(name, i, id=f"{name}[{i}]")
    for name in RULES
    for i in range(len(SAMPLES.get(name, [])))
]
FLOAT32_CASES = [p for p in RULE_CASES if has_float32_array(SAMPLES[p.values[0]][p.values[1]])]


@pytest.mark.parametrize("name,i", RULE_CASES)
def test_rule_matches_finite_differences(name, i):
    rule = RULES[name]
    check_against_fd(ROUNDED.get(name, rule.func), rule.vjps, SAMPLES[name][i], seed_of(f"{name}{i}"), f"{name}[{i}]")


@pytest.mark.parametrize("name,i", FLOAT32_CASES)
def test_rule_keeps_float32(name, i):
    rule = RULES[name]
    check_float32(rule.func, rule.vjps, SAMPLES[name][i], seed_of(f"{name}{i}"), f"{name}[{i}]")


# ---- methods and attributes --------------------------------------------------------
def _method_call(name):
    return lambda obj, *args, **kwargs: getattr(obj, name)(*args, **kwargs)


def _differentiable(table):
    return {name: prim for name, prim in table.items() if registry.lookup(prim) is not None}


# Read directly: if the registry's tables are renamed, this fails loudly instead of
# generating no method or attribute cases at all.
METHODS = _differentiable(registry._methods)
ATTRIBUTES = _differentiable(registry._attributes)
METHOD_CASES = [pytest.param(n, i, id=f"{n}[{i}]") for n in METHODS for i in range(len(METHOD_SAMPLES.get(n, [])))]
ATTRIBUTE_CASES = [
    pytest.param(n, i, id=f"{n}[{i}]") for n in ATTRIBUTES for i in range(len(ATTRIBUTE_SAMPLES.get(n, [])))
]


@pytest.mark.parametrize("name,i", METHOD_CASES)
def test_method_matches_finite_differences(name, i):
    rule = registry.lookup(METHODS[name])
    case = METHOD_SAMPLES[name][i]
    check_against_fd(_method_call(name), rule.vjps, case, seed_of(name + str(i)), f"x.{name}[{i}]")
    check_float32(_method_call(name), rule.vjps, case, seed_of(name + str(i)), f"x.{name}[{i}]")


@pytest.mark.parametrize("name,i", ATTRIBUTE_CASES)
def test_attribute_matches_finite_differences(name, i):
    rule = registry.lookup(ATTRIBUTES[name])
    attribute = lambda obj: getattr(obj, name)  # noqa: E731
    check_against_fd(attribute, rule.vjps, ATTRIBUTE_SAMPLES[name][i], seed_of(name + str(i)), f"x.{name}[{i}]")


# ---- coverage of the tables ------------------------------------------------------
# Rules whose value is not an array or number, so that no finite difference reads it: a local function made as
# a value has its captured values' gradients checked through the programs of tests/test_closures.py.
NOT_SAMPLED = {"adsrc.rules.closures.local_function"}


def test_every_rule_has_samples():
    missing = sorted(name for name in RULES if name not in SAMPLES and name not in NOT_SAMPLED)
    assert not missing, f"rules without samples in tests/rule_samples.py: {missing}"
    uncovered = []
    for name, rule in RULES.items():
        tested = set()
        for case in SAMPLES.get(name, ()):
            args, _ = case.draw(np.random.default_rng(0))
            tested.update(positions(rule.vjps, case, args))
        uncovered += [f"{name} argument {i}" for i, vjp in enumerate(rule.vjps)
                      if vjp is not None and i not in tested and name not in NOT_SAMPLED]
    assert not uncovered, f"differentiable arguments no sample exercises: {uncovered}"


def test_every_method_and_attribute_has_samples():
    assert not sorted(set(METHODS) - set(METHOD_SAMPLES))
    assert not sorted(set(ATTRIBUTES) - set(ATTRIBUTE_SAMPLES))
    for name in ("sum", "mean", "prod", "max", "min", "std", "var", "reshape", "transpose", "dot", "ravel",
                 "flatten", "copy", "clip", "astype", "squeeze", "cumsum"):
        assert name in METHODS, f"x.{name}() has no rule"
    assert "T" in ATTRIBUTES


def test_enough_generated_cases():
    # The parametrized tests above are generated from the tables; an empty table
    # (a renamed key, a lookup that finds nothing) would quietly give no tests.
    assert len(registry._methods) >= 20 and len(METHODS) >= 20, sorted(METHODS)
    assert len(METHOD_CASES) >= 40, f"only {len(METHOD_CASES)} method cases"
    assert len(ATTRIBUTES) >= 3 and len(ATTRIBUTE_CASES) >= 3, f"only {len(ATTRIBUTE_CASES)} attribute cases"
    assert len(RULE_CASES) >= 500 and len(FLOAT32_CASES) >= 400, (len(RULE_CASES), len(FLOAT32_CASES))
    assert len(FUSED) >= 10 and len(ADD_INTO) >= 1, (FUSED, ADD_INTO)


def test_rule_count():
    assert len(RULES) >= 150, f"only {len(RULES)} differentiable operations"
    names = [rule.qualname for rule in builtin.builtin_rules()]
    assert len(names) == len(set(names)), "two rules share a qualname"


def test_generated_names_read_as_math():
    assert RULES["numpy.sin"].vjps[0].__name__ == "sin_dx"
    assert [v.__name__ for v in RULES["numpy.matmul"].vjps] == ["matmul_da", "matmul_db"]
    # einsum's first argument is the subscripts, or in the sublist form einsum(a, [0, 1], ...) the first operand
    assert [RULES["numpy.einsum"].vjps[i].__name__ for i in (0, 2)] == ["einsum_doperand", "einsum_db"]
    assert [v.__name__ for v in RULES["numpy.clip"].vjps] == ["clip_da", "clip_da_min", "clip_da_max"]


@pytest.mark.parametrize(
    "func",
    [np.shape, np.argmax, np.argmin, np.floor, np.ceil, np.round, np.sign, np.greater, np.less_equal, np.equal,
     operator.lt, operator.ge, operator.eq, len, range, np.zeros, np.ones, np.eye, np.size, np.ndim,
     isinstance, int, np.zeros_like, np.ones_like, np.empty_like, np.floor_divide, math.floor],
    ids=lambda f: getattr(f, "__name__", repr(f)),
)
def test_nondifferentiable(func):
    assert registry.is_nondifferentiable(func)
    assert registry.lookup(func) is None


def test_public_logsumexp_is_stable():
    from adsrc.rules.reductions import logsumexp

    x = np.array([1000.0, 1000.0])
    assert logsumexp(x) == pytest.approx(1000.0 + math.log(2.0))
    assert np.shape(logsumexp(np.zeros((2, 3)), axis=1)) == (2,)
    assert np.all(np.isfinite(RULES["adsrc.rules.reductions.logsumexp"].vjps[0](1.0, logsumexp(x), x)))


# ---- ties and repeated indices -----------------------------------------------------
@pytest.mark.parametrize("name,args,kwargs,expected", TIES, ids=[t[0] for t in TIES])
def test_ties_split_evenly(name, args, kwargs, expected):
    rule = RULES[name]
    ans = rule.func(*args, **kwargs)
    got = rule.vjps[0](np.ones_like(ans, dtype=float) if np.ndim(ans) else 1.0, ans, *args, **kwargs)
    if isinstance(got, list):
        got = [0.0 if v is zero else v for v in got]
    np.testing.assert_allclose(got, expected)


def test_elementwise_and_builtin_ties():
    x = np.array([1.0, 2.0, 3.0])
    g = np.array([2.0, 4.0, 6.0])
    for f in (np.maximum, np.minimum, np.fmax, np.fmin):
        dx, dy = RULES[f"numpy.{f.__name__}"].vjps
        np.testing.assert_allclose(dx(g, x, x, x), g / 2)
        np.testing.assert_allclose(dy(g, x, x, x), g / 2)
    vjps = RULES["builtins.max"].vjps
    assert [vjps[i](1.0, 2.0, 2.0, 2.0, 1.0) for i in range(3)] == [0.5, 0.5, zero]


def test_fancy_getitem_accumulates_repeated_indices():
    dx = RULES["operator.getitem"].vjps[0]
    x = np.zeros(5)
    g = np.array([1.0, 2.0, 3.0, 4.0])
    np.testing.assert_allclose(dx(g, None, x, np.array([0, 0, 3, 0])), [7.0, 0, 0, 3.0, 0])
    np.testing.assert_allclose(dx(g[:2], None, x, [-1, -1]), [0, 0, 0, 0, 3.0])
    mask = np.array([True, False, True, False, False])
    np.testing.assert_allclose(dx(g[:2], None, x, mask), [1.0, 0, 2.0, 0, 0])
    x2 = np.zeros((2, 3))
    np.testing.assert_allclose(dx(np.ones((1, 2)), None, x2, (None, 1, slice(0, 2))), [[0, 0, 0], [1, 1, 0]])
    np.testing.assert_allclose(dx(np.ones(2), None, x2, (Ellipsis, -1)), [[0, 0, 1], [0, 0, 1]])
    rows = (np.array([1, 1]), np.array([2, 2]))
    np.testing.assert_allclose(dx(np.array([1.0, 2.0]), None, x2, rows), [[0, 0, 0], [0, 0, 3.0]])


def test_getitem_of_containers_keeps_their_structure():
    dx = RULES["operator.getitem"].vjps[0]
    result = np.linalg.slogdet(2.0 * np.eye(2))
    assert dx(1.0, None, result, 1) == (zero, 1.0)
    assert dx(2.0, None, {"w": 1.0, "b": 2.0}, "b") == {"w": zero, "b": 2.0}
    assert dx([1.0, 2.0], None, [0.0, 0.0, 0.0], slice(1, None)) == [zero, 1.0, 2.0]


# ---- fused and in-place forms --------------------------------------------------------
FUSED = [(n, p) for n, r in RULES.items() for p, v in enumerate(r.vjps) if v is not None and v.fuse is not None]
ADD_INTO = [(n, p) for n, r in RULES.items() for p, v in enumerate(r.vjps) if v is not None and v.add_into is not None]


def compiler_values(vjp, ans, args):
    """(ans, *args) as a thunk holds them: None where the vjp never reads the value."""
    uses = getattr(vjp, "uses", None)
    return tuple(v if uses is None or uses(k + 1) else None for k, v in enumerate([ans, *args]))


def _calls(rule, case, p, count=3):
    """Calls of one case's vjp at ``p``; for a batched form that sums the cotangents of calls of one layout
    first (a linear rule's, registry.py), one draw of the arguments, each call with a cotangent of its own."""
    one_layout = getattr(getattr(rule.vjps[p].fuse, "__wrapped__", None), "one_layout", False)
    calls = []
    for k in range(count):
        rng = np.random.default_rng(100 + (0 if one_layout else k))
        args, kwargs = case.draw(rng)
        if p >= len(args) or not is_float_like(args[p]):
            return None
        ans = rule.func(*args, **kwargs)
        calls.append(((cotangent(ans, np.random.default_rng(200 + k)), *compiler_values(rule.vjps[p], ans, args)),
                      kwargs))
    return calls


@pytest.mark.parametrize("name,p", FUSED, ids=[f"{n}:{p}" for n, p in FUSED])
def test_fuse_equals_sum_of_vjps(name, p):
    rule = RULES[name]
    vjp = rule.vjps[p]
    fused_any = False
    for case in SAMPLES[name]:
        calls = _calls(rule, case, p)
        if calls is None:
            continue
        fused = vjp.fuse(calls)
        if fused is None:
            continue
        expected = sum(np.asarray(vjp(*args, **kwargs)) for args, kwargs in calls)
        assert np.shape(fused) == np.shape(vjp(*calls[0][0], **calls[0][1]))
        np.testing.assert_allclose(fused, expected, rtol=1e-10, atol=1e-12)
        fused_any = True
    if not fused_any and getattr(getattr(vjp.fuse, "__wrapped__", None), "one_layout", False):
        # a linear rule's form sums cotangents that are arrays, of calls of one layout; these cases'
        # cotangents are lists (split), numbers (item), or their arguments sequences (concatenate)
        pytest.skip(f"{name}: no case has array cotangents of one layout")
    assert fused_any, f"no sample of {name} could be fused"


def test_multiply_fuse_batches_shared_cotangent_and_scalars():
    rule = RULES["numpy.multiply"]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 3))
    g = rng.standard_normal((4, 3))
    scalars = [1.5, np.float64(-0.5), 2.0]
    calls = [((g, None, x, s), {}) for s in scalars]  # acc = acc + s_i * x: one cotangent
    np.testing.assert_allclose(rule.vjps[0].fuse(calls), g * sum(scalars))
    gs = [rng.standard_normal((4, 3)).astype(np.float32) for _ in scalars]
    calls = [((gi, None, x.astype(np.float32), s), {}) for gi, s in zip(gs, [1.5, -0.5, 2.0])]
    fused = rule.vjps[0].fuse(calls)
    assert fused.dtype == np.float32
    np.testing.assert_allclose(fused, sum(gi * s for gi, s in zip(gs, [1.5, -0.5, 2.0])), rtol=1e-6)
    mixed = [((g, None, x, 1.0), {}), ((g[:1], None, x[:1], 1.0), {})]
    assert rule.vjps[0].fuse(mixed) is None


def test_multiply_fuse_batches_products_of_arrays():
    # r * u_i over a loop's steps: each contribution to r is sum(g_i * u_i), k of them one dot product;
    # to a vector v of (w_i * v), with a matrix cotangent, the steps broadcast one by one, never together
    rule = RULES["numpy.multiply"]
    rng = np.random.default_rng(1)
    gs = [rng.standard_normal(7) for _ in range(5)]
    us = [rng.standard_normal(7) for _ in range(5)]
    for side, scalar in ((0, 0.3), (1, np.float64(0.3))):
        calls = [((g, None, scalar, u) if side == 0 else (g, None, u, scalar), {}) for g, u in zip(gs, us)]
        fused = rule.vjps[side].fuse(calls)
        expected = sum(rule.vjps[side](*args) for args, _ in calls)
        assert np.shape(fused) == np.shape(expected)
        np.testing.assert_allclose(fused, expected, rtol=1e-12)
    gs = [rng.standard_normal((3, 4)) for _ in range(2)]
    vs = [rng.standard_normal(4) for _ in range(2)]
    calls = [((g, None, np.ones(4), v), {}) for g, v in zip(gs, vs)]
    np.testing.assert_allclose(rule.vjps[0].fuse(calls), sum(rule.vjps[0](*a) for a, _ in calls), rtol=1e-12)
    calls = [((g.astype(np.float32), None, np.float32(2.0), v.astype(np.float32)), {}) for g, v in zip(gs, vs)]
    fused = rule.vjps[0].fuse(calls)
    expected = sum(rule.vjps[0](*a) for a, _ in calls)
    assert np.result_type(fused) == np.result_type(expected)
    np.testing.assert_allclose(fused, expected, rtol=1e-5)


def test_matmul_fuse_refuses_unbatchable_calls():
    vjp = RULES["numpy.matmul"].vjps[0]
    a = np.ones((2, 3))
    calls = [
        ((np.ones((2, 4)), None, a, np.ones((3, 4))), {}),
        ((np.ones((2, 2, 4)), None, np.ones((2, 2, 3)), np.ones((3, 4))), {}),  # batched: no 2-D factors
    ]
    assert vjp.fuse(calls) is None


@pytest.mark.parametrize("name,p", ADD_INTO, ids=[f"{n}:{p}" for n, p in ADD_INTO])
def test_add_into_equals_vjp(name, p):
    rule = RULES[name]
    vjp = rule.vjps[p]
    for i, case in enumerate(SAMPLES[name]):
        rng = np.random.default_rng(i)
        args, kwargs = case.draw(rng)
        if not isinstance(args[p], np.ndarray):  # in place only into an array buffer
            continue
        ans = rule.func(*args, **kwargs)
        g = cotangent(ans, rng)
        buffer = rng.standard_normal(np.shape(args[p]))
        values = compiler_values(vjp, ans, args)
        expected = buffer + vjp(g, *values, **kwargs)
        vjp.add_into(buffer, g, *values, **kwargs)
        np.testing.assert_allclose(buffer, expected, err_msg=f"{name}[{i}]")


# ---- docs/rules.md --------------------------------------------------------------------
def _doc_script():
    spec = importlib.util.spec_from_file_location("gen_rules_doc", ROOT / "scripts" / "gen_rules_doc.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_rules_doc_is_current():
    from adsrc.rules import optional

    if set(optional.loaded()) != set(optional.MODULES):  # docs/rules.md lists the rules of SciPy too
        pytest.skip(f"an optional library is not installed (rules loaded: {optional.loaded()})")
    committed = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
    assert committed == _doc_script().render(), "docs/rules.md is stale: run python scripts/gen_rules_doc.py"
