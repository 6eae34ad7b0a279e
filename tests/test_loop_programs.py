"""Random loops of matrix-vector products: the typed stacks of outer products and the hoisted invariants
(optimize/stacks.py ``outer_pushes``, optimize/hoist.py) against the generic adjoint and finite differences.

Each program is a loop over a list or a 2-D array of vectors whose body is drawn from statements that
give a backward loop outer products of one or several cotangents (``W @ h + V @ x``), a sum's or an
element's cotangent that is the same at every step, a running product of the state, and reads of the
loop's counter; the arguments' shapes are drawn too. The specialized adjoint must give the generic one's
value bit for bit and its gradients to rounding, in lazy and eager mode, and match central differences.
"""
from __future__ import annotations

import random

import numpy as np
import pytest

from gradcheck import check
from sources import function_from_source
from test_specialize import compare, specialized_source

_BODIES = [
    "h = np.tanh(W @ h + V @ x)",
    "h = np.tanh(W @ h) * 0.5 + V @ x",
    "s = s + (W @ h)[{k}] * 0.3",
    "s = s + np.sum(np.sin(V @ x) * h)",
    "s = s + np.sum(np.tanh(W @ h))",
    "h = h * 0.9 + np.tanh(V @ x)",
    "s = s + (V @ x)[{k}] * s * 0.01",
]


def _program(rng: random.Random, index: int):
    n = rng.randint(2, 4)
    lines = [f"def loop_program_{index}(W, V, h, xs):", "    s = 0.0", "    for x in xs:"]
    body = rng.sample(_BODIES, rng.randint(2, 4))
    if not any(line.startswith("h =") for line in body):
        body.insert(0, _BODIES[0])
    lines += ["        " + line.format(k=rng.randrange(n)) for line in body]
    lines.append("    return s + np.sum(h * h)")
    source = "\n".join(lines) + "\n"
    f = function_from_source(source, f"loop_program_{index}", f"<test_loop_programs: program {index}>")
    return f, n, source


@pytest.mark.parametrize("index", range(16))
def test_random_loop_programs(index):
    rng = random.Random(1000 + index)
    f, n, source = _program(rng, index)
    m, steps = rng.randint(2, 3), rng.choice([1, 5, 40])
    data = np.random.default_rng(index)
    W, V = data.standard_normal((n, n)) * 0.4, data.standard_normal((n, m)) * 0.4
    h0 = data.standard_normal(n) * 0.5
    rows = data.standard_normal((steps, m)) * 0.5
    xs = rows if index % 2 else list(rows)
    args = (W, V, h0, xs)
    assert "specialized for" in specialized_source(f, args, wrt=(0, 1, 2)), source
    compare(f, args, (0, 1, 2), exact_lazy=False)
    check(f, *args, wrt=(0, 1, 2), rtol=1e-5, atol=1e-6)
