"""Random programs over objects that hold objects (tests/progen_nested.py), checked against Python.

Each program ``prog_k(w, model)`` calls a method of a model whose methods
call their children's through attributes, lists, dicts, properties and class
attributes, 1 to 3 levels deep, with methods named like an array's or a
dict's (``get``, ``sum``, ``dot``...). For each, in lazy and in eager mode:
the value is bit for bit Python's, ``w`` is untouched, and the gradient with
respect to ``w`` matches central finite differences (float64); with respect
to the model too (as ``wrt=(0, 1)``), the gradient of ``w`` is the same.
A zero gradient where the function depends on ``w`` fails, as any other.

The seeds are ``SEEDS`` (``ADSRC_NESTED_SEEDS="1,2,3"`` to choose others),
``PER_SEED`` programs each; a failure lists every failing program with its
source.
"""
from __future__ import annotations

import os
import random

import numpy as np
import pytest
from progen_nested import NestedGenerator
from sources import function_from_source

import adsrc

SEEDS = [int(s) for s in os.environ.get("ADSRC_NESTED_SEEDS", "11,12,13,14,15").split(",")]
PER_SEED = 24
W = np.array([0.3, -0.4, 0.25])


def finite_differences(func, w: np.ndarray, model, eps: float = 1e-6) -> np.ndarray:
    out = np.zeros_like(w)
    for i in range(w.size):
        e = np.zeros_like(w)
        e[i] = eps
        out[i] = (func(w + e, model) - func(w - e, model)) / (2 * eps)
    return out


def problems_of(program: str, name: str, path: str) -> list[str]:
    namespace_func = function_from_source(program, name, path)
    model = namespace_func.__globals__[f"model_{name.split('_', 1)[1]}"]
    expected = namespace_func(W.copy(), model)
    reference = finite_differences(namespace_func, W, model)
    found = []
    for eager in (False, True):
        mode = "eager" if eager else "lazy"
        w = W.copy()
        value, gradient = adsrc.value_and_grad(namespace_func, eager=eager)(w, model)
        if not np.array_equal(w, W):
            found.append(f"{mode}: w changed")
        if value != expected:
            found.append(f"{mode}: value {value!r} != Python's {expected!r}")
        if not np.allclose(gradient, reference, rtol=1e-5, atol=1e-6):
            found.append(f"{mode}: gradient {gradient} != finite differences {reference}")
    return found


@pytest.mark.parametrize("seed", SEEDS)
def test_nested_objects(seed):
    rng = random.Random(seed)
    failures, tags = [], set()
    for k in range(PER_SEED):
        gen = NestedGenerator(rng, f"{seed}_{k}")
        program = gen.program()
        tags |= gen.tags
        try:
            found = problems_of(program, gen.name, f"<nested {seed}_{k}>")
        except Exception as error:  # noqa: BLE001  (an error is a failure here: every program is supported)
            found = [f"raised {type(error).__name__}: {error}"]
        if found:
            failures.append(f"--- {gen.name} (seed {seed}): " + "; ".join(found) + "\n" + program)
    assert not failures, f"{len(failures)} of {PER_SEED} programs failed:\n" + "\n".join(failures)
    # the generator reaches what it is for
    for construct in ("attribute", "list", "dict", "property", "class attribute", "named get"):
        assert construct in tags or len(SEEDS) == 1, construct
