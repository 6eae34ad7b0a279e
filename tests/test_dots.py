"""Fused dot products (optimize/dots.py): in lazy mode, a float's gradient from a straight run of vector
statements is one dot product of the concatenated operands; eager adjoints are left as they are. Lazy and
eager agree to rounding and with central finite differences; the memory bounds cut runs into chunks.
"""
from __future__ import annotations

import random

import gast
import numpy as np
import pytest

import adsrc
from adsrc.backend.codegen import unparse
from adsrc.optimize import dots
from adsrc.rules.templates import Kind
from gradcheck import check
from test_specialize import _straight_line_program, compare, specialized_source


def _source_and_program(statements, shape, name, seed=None):
    rng = random.Random(statements if seed is None else seed)
    f = _straight_line_program(rng, statements, name)
    r = np.random.default_rng(statements)
    return f, (r.standard_normal(shape) * 0.3, 0.45)


@pytest.mark.parametrize("statements, shape, seed", [(40, (16,), 1), (200, (64,), 2), (120, (3, 4), 3),
                                                     (9, (5,), 4)])
def test_random_straight_line_programs(statements, shape, seed):
    """Lazy (fused) and eager (not) agree with the generic adjoints and with finite differences; the eager
    source holds no dot product and the lazy one does where a run is long enough."""
    f, args = _source_and_program(statements, shape, f"dots_{statements}_{seed}", seed)
    lazy = specialized_source(f, args, (0, 1))
    eager = specialized_source(f, args, (0, 1), eager=True)
    assert "vdot" not in eager and "_terms" not in eager
    runs = lazy.count("np.vdot(np.concatenate(dw_terms), np.concatenate(dw_factors))")
    if statements >= 40:
        assert runs >= 1
    compare(f, args, (0, 1), exact_lazy=False)
    check(f, *args, wrt=(0, 1), rtol=1e-5, atol=1e-8)  # both modes
    lazy_grads = adsrc.grad(f, wrt=(0, 1))(*args)
    eager_grads = adsrc.grad(f, wrt=(0, 1), eager=True)(*args)
    for a, b in zip(lazy_grads, eager_grads):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
        assert type(a) is type(b)


def _settings(**values):
    saved = {k: getattr(adsrc.config, k) for k in values}
    for k, v in values.items():
        setattr(adsrc.config, k, v)
    return saved


@pytest.mark.parametrize("max_pending, max_bytes, fewest", [(32, 64 * 2**20, 1), (10, 64 * 2**20, 5),
                                                            (1000, 2 * 12 * 64 * 8, 5), (4, 64 * 2**20, 0)])
def test_memory_bounds_cut_runs(max_pending, max_bytes, fewest):
    """A run is cut into dots of at most ``max_pending`` statements and ``max_pending_bytes`` of copies
    (here 12 statements of 64 floats), of about equal lengths (so at least half of ``MIN_RUN``); where the
    bounds allow fewer than ``MIN_RUN`` statements per dot, nothing is fused."""
    saved = _settings(max_pending=max_pending, max_pending_bytes=max_bytes)
    try:
        f, args = _source_and_program(120, (64,), f"bounded_{max_pending}_{max_bytes}", 7)
        lazy = specialized_source(f, args, (0, 1))
        compare(f, args, (0, 1), exact_lazy=False)
    finally:
        _settings(**saved)
    pullback = lazy.split("def pullback", 1)[1]
    lines = [line.strip() for line in pullback.splitlines()]
    made = [i for i, line in enumerate(lines) if line.startswith("dw_terms = [")]
    assert len(made) >= fewest and (fewest or not made)
    for start in made:  # each dot holds at most the bound's statements
        end = next(i for i in range(start, len(lines)) if "np.vdot(" in lines[i])
        appended = sum(line.startswith("dw_terms.append(") for line in lines[start:end])
        assert dots.MIN_RUN // 2 <= appended + 1 <= min(max_pending, max_bytes // (2 * 64 * 8))


# ---- the pass on hand-written pullbacks ------------------------------------------------------------------

def _run_pass(text, n=6):
    tree = gast.parse(text)
    pullback = tree.body[0]
    kind = Kind(np.ndarray, np.dtype(np.float64), (n,))
    arrays = {node.id for node in gast.walk(pullback) if isinstance(node, gast.Name) and node.id[0] in "at"}
    changed = dots.run(pullback, {"np": np}, lambda node: kind if isinstance(node, gast.Name)
                       and node.id in arrays else None, {"dw", "a0"})
    return changed, unparse(pullback)


def _body(statements, middle=None):
    lines = ["def pullback(a, t, s):", "    dw = 0.5"]
    for i in range(statements):
        lines.append(f"    a{i} = a * {i + 1.0}")
        lines.append(f"    dw = dw + np.add.reduce(a{i} * t)")
        if middle is not None and i == statements // 2:
            lines.append(f"    {middle}")
    lines.append("    return dw, s")
    return "\n".join(lines) + "\n"


def _value(text):
    namespace = {"np": np}
    exec(text, namespace)
    r = np.random.default_rng(0)
    return namespace["pullback"](r.standard_normal(6), r.standard_normal(6), np.zeros(6))


@pytest.mark.parametrize("middle", [
    None,
    "s = s + dw",  # a read of dw: the run before it is totalled first, then a new one starts
    "a0 += 1.0",  # an in-place write might change a held operand: the run ends before it
    "s[0] = 1.0",
    "np.add(a, t, out=s)",
    "if s[0] > 0.0:\n        s = s * 2.0",
])
def test_runs_end_where_they_must(middle):
    statements, runs = 20, 1 if middle is None else 2
    text = _body(statements, middle)
    changed, rewritten = _run_pass(text)
    assert changed
    assert rewritten.count("np.vdot(") == runs
    # a run never crosses the statement in the middle
    if middle is not None:
        first = middle.split("\n")[0].strip()
        lines = [line.strip() for line in rewritten.splitlines()]
        at = next(i for i, line in enumerate(lines) if line.startswith(first[:8]))
        assert "np.vdot(" in lines[at - 1]
    before, after = _value(text), _value(rewritten)
    np.testing.assert_allclose(after[0], before[0], rtol=1e-13)
    np.testing.assert_allclose(after[1], before[1], rtol=1e-13)


def test_short_runs_and_other_kinds_are_left_alone():
    changed, rewritten = _run_pass(_body(dots.MIN_RUN - 1))
    assert not changed and "vdot" not in rewritten
    changed, rewritten = _run_pass(_body(20).replace(" * t)", " * u)"))  # u: no known kind
    assert not changed


@pytest.mark.parametrize("jump", ["break", "continue", "return (s, s)"])
def test_runs_end_before_a_jump(jump):
    """A jump that does not mention the gradient still ends its run: the block's end might not be reached."""
    lines = ["def pullback(a, t, s):", "    dw = 0.5", "    for k in range(3):"]
    for i in range(12):
        lines += [f"        a{i} = a * {i + k}.0" for k in (1,)] + [f"        dw = dw + np.add.reduce(a{i} * t)"]
    lines += [f"        {jump}", "    return dw, s"]
    text = "\n".join(lines) + "\n"
    changed, rewritten = _run_pass(text)
    assert changed
    body = [line.strip() for line in rewritten.splitlines()]
    assert "np.vdot(" in body[body.index(jump) - 1]
    np.testing.assert_allclose(_value(rewritten)[0], _value(text)[0], rtol=1e-13)
