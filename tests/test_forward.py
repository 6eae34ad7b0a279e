"""Forward mode: tangent rules generated from the registry, and adsrc.jvp through user code.

Every rule that has a vjp must have a jvp (``test_every_rule_has_a_jvp``), and
every jvp is checked on every sample of tests/rule_samples.py against a
central finite difference of the function along a random direction.
"""
from __future__ import annotations

import math

import numpy as np
import pytest

import adsrc
import adsrc.rules.registry as registry
from adsrc.values.containers import add_tangents, part
from adsrc.values.thunks import zero
from rule_samples import ROUNDED, SAMPLES
from test_rules import RULES, flat, is_float_like, positions, seed_of, working_leaves

EPS = 1e-6


# ---- tangent rules against finite differences -----------------------------------------
def random_direction(value, rng):
    """A random tangent shaped like ``value`` (nested lists, tuples and dicts too; a str key stays)."""
    if isinstance(value, str):
        return value
    if isinstance(value, dict):
        return {k: random_direction(v, rng) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        items = [random_direction(v, rng) for v in value]
        return type(value)(*items) if hasattr(type(value), "_fields") else type(value)(items)  # NamedTuples too
    if isinstance(value, np.ndarray):
        if value.dtype.kind == "c":  # a complex value moves in any complex direction
            return rng.standard_normal(value.shape) + 1j * rng.standard_normal(value.shape)
        return rng.standard_normal(value.shape)
    if isinstance(value, (complex, np.complexfloating)):
        return complex(rng.standard_normal(), rng.standard_normal())
    return float(rng.standard_normal())


def shifted(value, direction, step):
    """``value + step * direction`` leaf by leaf, keeping Python floats as floats."""
    leaves, rebuild = working_leaves(value)
    moved = [leaf + step * np.asarray(d, dtype=leaf.dtype) for leaf, d in zip(leaves, flat_leaves(direction))]
    return rebuild(moved)


def flat_leaves(value):
    if isinstance(value, str) or value is zero:
        return []
    if isinstance(value, dict):
        value = list(value.values())
    if isinstance(value, (list, tuple)):
        return [leaf for v in value for leaf in flat_leaves(v)]
    return [value]


def lower_precision(tangent) -> float:
    """The precision of a tangent given in a lower precision than float64 (np.float16(x)'s), which it is
    checked to; else 0."""
    dtype = getattr(tangent, "dtype", None)
    if dtype is None or dtype.kind not in "fc" or np.finfo(dtype).eps <= np.finfo(np.float64).eps:
        return 0.0
    return float(np.finfo(dtype).eps)


def tangent_leaves(tangent, like):
    """The tangent as arrays aligned with ``flat(like)``; zero stands for zeros."""
    if isinstance(like, dict):
        return [leaf for k, v in like.items() for leaf in tangent_leaves(part(tangent, k), v)]
    if isinstance(like, (type({}.values()), type({}.items()))):
        like = list(like)
    if isinstance(like, (list, tuple)):
        if tangent is zero:
            return [leaf for v in like for leaf in tangent_leaves(zero, v)]
        assert isinstance(tangent, (list, tuple)), f"expected a container tangent, got {type(tangent).__name__}"
        assert len(tangent) == len(like)
        return [leaf for t, v in zip(tangent, like) for leaf in tangent_leaves(t, v)]
    if not is_float_like(like):
        return [None]
    if tangent is zero:
        return [np.zeros(np.shape(like))]
    assert np.shape(tangent) == np.shape(like), f"tangent shape {np.shape(tangent)} != result shape {np.shape(like)}"
    return [np.asarray(tangent, dtype=np.complex128 if np.iscomplexobj(like) else np.float64)]


def check_jvp(f, rule, case, seed, label):
    rng = np.random.default_rng(seed)
    args, kwargs = case.draw(rng)
    ans = f(*args, **kwargs)
    moved = positions(rule.vjps, case, args)
    directions = {p: random_direction(args[p], rng) for p in moved}
    total = zero
    for p in moved:
        jvp = rule.jvps[p]
        assert jvp is not None, f"{label}: argument {p} has a vjp but no jvp"
        total = add_tangents(total, jvp(directions[p], ans, *args, **kwargs))

    def along(step):
        moved_args = list(args)
        for p in moved:
            moved_args[p] = shifted(args[p], directions[p], step)
        return f(*moved_args, **kwargs)

    plus, minus = flat(along(EPS)), flat(along(-EPS))
    rtol = max(1e-5, lower_precision(total))
    got = tangent_leaves(total, ans)
    for i, (g, a, b) in enumerate(zip(got, plus, minus)):
        if g is None or a is None:
            continue
        np.testing.assert_allclose(g, (a - b) / (2 * EPS), rtol=rtol, atol=1e-6, err_msg=f"{label}: output leaf {i}")


JVP_CASES = [pytest.param(name, i, id=f"{name}[{i}]") for name in RULES for i in range(len(SAMPLES.get(name, [])))]


@pytest.mark.parametrize("name,i", JVP_CASES)
def test_jvp_matches_finite_differences(name, i):
    rule = RULES[name]
    check_jvp(ROUNDED.get(name, rule.func), rule, SAMPLES[name][i], seed_of(f"jvp{name}{i}"), f"{name}[{i}]")


def test_every_rule_has_a_jvp():
    missing = [f"{rule.qualname} argument {i}" for rule in RULES.values() for i, vjp in enumerate(rule.vjps)
               if vjp is not None and (i >= len(rule.jvps) or rule.jvps[i] is None)]
    assert not missing, f"built-in rules with a vjp but no jvp: {missing}"


def only_a_vjp(x):
    return x * 3.0


registry.defvjp(only_a_vjp, lambda g, ans, x: 3.0 * g)


def calls_only_a_vjp(x):
    return only_a_vjp(x) + x


def test_a_rule_without_a_jvp_is_an_error_not_a_zero_tangent():
    with pytest.raises(adsrc.errors.NoGradientRule, match="defjvp"):
        adsrc.jvp(calls_only_a_vjp, (1.0,), (1.0,))
    registry.defjvp(only_a_vjp, lambda t, ans, x: 3.0 * t)
    try:
        assert adsrc.jvp(calls_only_a_vjp, (1.0,), (1.0,)) == (4.0, 4.0)
    finally:
        registry.lookup(only_a_vjp).jvps = ()


def test_jvp_names_read_as_math():
    assert RULES["numpy.sin"].jvps[0].__name__ == "sin_jvp"
    assert [j.__name__ for j in RULES["numpy.matmul"].jvps] == ["matmul_jvp_a", "matmul_jvp_b"]
    assert RULES["numpy.where"].jvps[0] is None


def test_defjvp_needs_a_vjp():
    with pytest.raises(LookupError):
        registry.defjvp(lambda x: x, lambda t, ans, x: t)


# ---- adsrc.jvp through user code -------------------------------------------------------
def fd_directional(f, args, tangents):
    """Central difference of f along the tangents (None: held fixed), output leaf by leaf."""
    def at(step):
        moved = [a if t is None else shifted(a, t, step) for a, t in zip(args, tangents)]
        return f(*moved)

    return [None if a is None else (a - b) / (2 * EPS) for a, b in zip(flat(at(EPS)), flat(at(-EPS)))]


def check_user(f, args, tangents, rtol=1e-6, atol=1e-7):
    value, tangent = adsrc.jvp(f, tuple(args), tuple(tangents))
    expected_value = f(*args)
    for got, want in zip(flat(value), flat(expected_value)):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    for got, want in zip(tangent_leaves(tangent, value), fd_directional(f, args, tangents)):
        if got is not None and want is not None:
            np.testing.assert_allclose(got, want, rtol=rtol, atol=atol)
    return value, tangent


def loop_and_branch(x, w):
    s = 0.0
    for i in range(len(x)):
        if x[i] > 0:
            s = s + np.sin(x[i]) * w
        else:
            s = s - x[i] ** 2
    return s + np.sum(np.tanh(x))


def while_loop(x):
    y = x
    n = 0
    while np.sum(y * y) < 50.0 and n < 20:
        y = 1.5 * y + np.cos(y)
        n += 1
    return y


def helper(a, b=2.0):  # a loop: a call adsrc keeps (straight-line helpers are copied in: module_functions.py)
    out = a * b
    for _ in range(1):
        out = out + np.exp(a)
    return out


def calls(x, y):
    return helper(x) * helper(y, b=x[0]) - helper(x * y)


def recursive(x, n):
    if n == 0:
        return x
    return np.sin(recursive(x, n - 1)) + x


def containers(x, y):
    pair = (x * 2.0, np.tanh(y))
    items = []
    for v in (x, y):
        items.append(v ** 2)
    table = {"a": x, "b": pair[1]}
    first, second = pair
    return first + second + items[1] + table["b"] * sum(z * z for z in x)


def early_return(x):
    for i in range(5):
        x = x * 1.1 + 0.1
        if np.max(x) > 2.0:
            return x * x
    return -x


def methods_and_attributes(A, x):
    B = A.T @ A
    return (B @ x).sum() + A.reshape(-1).dot(A.ravel()) + math.exp(float(x[0]))


def subscript_assignment(x):
    y = np.zeros(4)
    y[1:3] = x[:2] ** 2
    y[0] = x[2]
    return y * x[3]


def mixed_tuple_output(x, k):
    total = np.sum(x)
    return total, x * k, k


RNG = np.random.default_rng(7)


@pytest.mark.parametrize("f,args,tangents", [
    (loop_and_branch, [np.array([0.3, -0.5, 1.2]), 2.0], [RNG.normal(size=3), 0.7]),
    (loop_and_branch, [np.array([0.3, -0.5, 1.2]), 2.0], [None, 1.0]),
    (while_loop, [np.array([0.5, -0.2])], [np.array([1.0, 0.3])]),
    (calls, [np.array([0.2, 0.4]), np.array([-0.3, 0.1])], [RNG.normal(size=2), RNG.normal(size=2)]),
    (recursive, [np.array([0.2, 0.9]), 3], [np.array([1.0, -1.0]), None]),
    (containers, [np.array([0.2, 0.4]), np.array([-0.3, 0.1])], [RNG.normal(size=2), RNG.normal(size=2)]),
    (early_return, [np.array([0.2, 0.4])], [np.array([1.0, 0.5])]),
    (early_return, [np.array([-3.0, -2.0])], [np.array([1.0, 0.5])]),
    (methods_and_attributes, [RNG.normal(size=(3, 2)), RNG.normal(size=2)],
     [RNG.normal(size=(3, 2)), RNG.normal(size=2)]),
    (subscript_assignment, [np.array([0.5, -1.0, 2.0, 3.0])], [RNG.normal(size=4)]),
    (mixed_tuple_output, [np.array([1.0, 2.0]), 3.0], [np.array([0.5, 0.5]), 1.0]),
], ids=["loop-branch", "loop-branch-w", "while", "calls", "recursion", "containers", "early-return",
        "no-early-return", "methods", "subscript-assignment", "tuple-output"])
def test_jvp_matches_finite_differences_through_user_code(f, args, tangents):
    check_user(f, args, tangents)


def test_jvp_tangent_has_the_value_structure_and_dtype():
    value, tangent = adsrc.jvp(mixed_tuple_output, (np.array([1.0, 2.0]), 3.0), (np.array([1.0, 0.0]), None))
    assert isinstance(tangent, tuple) and len(tangent) == 3
    assert tangent[0] == 1.0 and tangent[2] == 0.0 and isinstance(tangent[2], float)
    np.testing.assert_allclose(tangent[1], [3.0, 0.0])
    x32 = np.ones(3, dtype=np.float32)
    _, t32 = adsrc.jvp(lambda_free_square, (x32,), (x32,))
    assert t32.dtype == np.float32


def lambda_free_square(x):
    return x * x


def test_jvp_never_aliases_or_writes_its_inputs():
    x, v = np.array([1.0, 2.0]), np.array([0.5, 0.25])
    before = (x.copy(), v.copy())
    _, t = adsrc.jvp(identity, (x,), (v,))
    assert t is not v and not np.shares_memory(t, v)
    np.testing.assert_array_equal(x, before[0])
    np.testing.assert_array_equal(v, before[1])


def identity(x):
    return x


def test_jvp_rejects_mismatched_arguments():
    with pytest.raises(adsrc.errors.InvalidArgument):
        adsrc.jvp(identity, (np.ones(2),), (np.ones(3),))
    with pytest.raises(adsrc.errors.InvalidArgument):
        adsrc.jvp(identity, (np.ones(2),), ())


def test_forward_source_reads_like_the_adjoint():
    source = adsrc.jvp_source(loop_and_branch, wrt=(0, 1))
    assert "def loop_and_branch_jvp(x, w, dx, dw):" in source
    assert "# line " in source and "dsin_x_i = sin_jvp(dx_i, sin_x_i, x_i)" in source
    assert "return (" in source and "tape" not in source


def test_cli_dumps_forward_mode(capsys):
    from adsrc.cli import main

    assert main(["dump", f"{__file__}:calls", "--mode", "forward", "--wrt", "x,y"]) == 0
    out = capsys.readouterr().out
    assert "helper_jvp = jvp_of(helper, wrt=(0,))" in out and "def calls_jvp(x, y, dx, dy):" in out
    assert main(["dump", f"{__file__}:calls", "--mode", "forward", "--eager"]) == 2
