"""Fuzz: adsrc.vmap of random valid Python functions (tests/progen.py) either equals the loop of calls it
stands for, or refuses with an AdsrcError, or raises where the loop raises; never a different value.

Each program ``f(x, W, s, n)`` is batched over ``x`` alone, and over ``x``, ``W`` and ``s`` together.
"""
from __future__ import annotations

import os
import random
import tempfile
import warnings

import numpy as np
import pytest

import adsrc
from diffgen import load_module
from progen import MODULE_HEADER, Generator

PER_BATCH = 30
B = 3


def _loop(func, args, axes):
    results = []
    for k in range(B):
        example = [a[k] if ax == 0 else a for a, ax in zip(args, axes)]
        results.append(func(*[np.array(e) if isinstance(e, np.ndarray) else e for e in example]))
    return np.stack([np.asarray(r) for r in results])


def _outcome(func, args, axes):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        try:
            expected = _loop(func, args, axes)
        except Exception as error:  # the program's own error, or examples of different shapes
            expected = error
        try:
            got = adsrc.vmap(func, in_axes=axes)(*[np.array(a) if isinstance(a, np.ndarray) else a for a in args])
        except adsrc.AdsrcError:
            return "refused", None
        except Exception as error:
            if isinstance(expected, Exception):
                return "user error", None
            return "crash", f"vmap raised {type(error).__name__}: {error}; the loop did not"
    if isinstance(expected, Exception):
        return "ok", f"the loop raises {type(expected).__name__} ({expected}) but vmap did not"
    if np.shape(got) != np.shape(expected):
        return "ok", f"shape {np.shape(got)} instead of the loop's {np.shape(expected)}"
    if not np.allclose(got, expected, rtol=1e-9, atol=1e-12, equal_nan=True):
        return "ok", f"values differ from the loop's: {got} vs {expected}"
    return "ok", None


@pytest.mark.parametrize("batch", range(3))
def test_random_programs_batch_as_their_loop_or_are_refused(batch):
    rng = random.Random(7100 + batch)
    dim = 2 + batch % 2
    programs = [Generator(rng, f"vz{batch}_{k}", size=8, dim=dim) for k in range(PER_BATCH)]
    sources = [g.program() for g in programs]
    data = np.random.default_rng(batch)
    xs, Ws, ss = data.normal(size=(B, dim)), data.normal(size=(B, dim, dim)), data.normal(size=B)
    outcomes, problems = {}, []
    with tempfile.TemporaryDirectory() as directory:
        module = load_module(os.path.join(directory, f"vmap_fuzz_{batch}.py"), f"vmap_fuzz_{batch}",
                             MODULE_HEADER + "\n\n\n".join(sources) + "\n")
        for gen, source in zip(programs, sources):
            func = getattr(module, gen.name)
            for args, axes in (((xs, Ws[0], 0.7, 2), (0, None, None, None)), ((xs, Ws, ss, 2), (0, 0, 0, None))):
                outcome, problem = _outcome(func, args, axes)
                outcomes[outcome] = outcomes.get(outcome, 0) + 1
                if problem:
                    problems.append(f"{gen.name} in_axes={axes}: {problem}\n{source}")
    assert not problems, "\n\n".join(problems[:3])
    assert outcomes.get("ok", 0) >= PER_BATCH // 2, outcomes  # most programs batch
