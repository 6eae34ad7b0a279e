"""Every rule's jvp, differentiated a second time (forward over forward).

A jvp called inside a function that jvp differentiates (api/nested_jvp.py)
runs second order's forward pass over generated forward code, which calls the
rules' jvps: ``jvp(t, ans, *args)`` is linear in ``t``, and its tangent along
the arguments is differentiated from the jvp's source, or, for a multilinear
rule, as the primitive's call (second_order/dispatch.py ``_jvp_call``). Each
is checked on every sample of tests/rule_samples.py against central finite
differences of the jvp along a random direction.
"""
from __future__ import annotations

import numpy as np
import pytest

from adsrc.second_order.dispatch import call, ownership
from adsrc.values.containers import add_tangents, to_tangent
from adsrc.values.thunks import zero
from rule_samples import SAMPLES
from test_forward import random_direction, shifted, tangent_leaves
from test_rules import RULES, positions, seed_of

EPS = 1e-6


def _low_precision(value):
    if isinstance(value, dict):
        return any(_low_precision(v) for v in value.values())
    if isinstance(value, (list, tuple)):
        return any(_low_precision(v) for v in value)
    return getattr(value, "dtype", None) in (np.float16, np.float32, np.complex64)


def check_jvp_tangent(rule, case, seed, label):
    """The dispatcher's tangent of ``jvp(t, ans, *args)`` against finite differences of the jvp."""
    rng = np.random.default_rng(seed)
    args, kwargs = case.draw(rng)
    ans = rule.func(*args, **kwargs)
    if _low_precision(ans):
        pytest.skip("a float16 or float32 result: central differences in float64 need float64 values")
    moved = [p for p in positions(rule.vjps, case, args) if p < len(rule.jvps) and rule.jvps[p] is not None]
    directions = {p: random_direction(args[p], rng) for p in moved}
    dans = zero
    for p in moved:
        dans = add_tangents(dans, rule.jvps[p](to_tangent(directions[p]), ans, *args, **kwargs))
    targs = tuple(to_tangent(directions[p]) if p in directions else zero for p in range(len(args)))
    for p in moved:
        jvp = rule.jvps[p]
        t, dt = random_direction(args[p], rng), random_direction(args[p], rng)

        def jvp_at(step):
            moved_args = [shifted(a, directions[q], step) if q in directions else a for q, a in enumerate(args)]
            return jvp(to_tangent(shifted(t, dt, step)), rule.func(*moved_args, **kwargs), *moved_args, **kwargs)

        with ownership():
            _, tangent = call(jvp, (to_tangent(dt), dans, *targs), {}, to_tangent(t), ans, *args, **kwargs)
        expected = [None if a is None or b is None else (a - b) / (2 * EPS)
                    for a, b in zip(tangent_leaves(jvp_at(EPS), ans), tangent_leaves(jvp_at(-EPS), ans))]
        for k, (got, want) in enumerate(zip(tangent_leaves(tangent, ans), expected)):
            if got is not None and want is not None:
                np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5, err_msg=f"{label}: argument {p}, leaf {k}")


CASES = [pytest.param(name, i, id=f"{name}[{i}]") for name in RULES for i in range(len(SAMPLES.get(name, [])))]


@pytest.mark.parametrize("name,i", CASES)
def test_jvp_differentiated_again_matches_finite_differences(name, i):
    label = f"{name}[{i}]"
    check_jvp_tangent(RULES[name], SAMPLES[name][i], seed_of("jvp again" + label), label)
