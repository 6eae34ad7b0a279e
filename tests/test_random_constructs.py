"""Random programs over constructs users' code is made of (tests/progen_constructs.py), checked against Python.

Each seed's program ``prog_k(x, a)`` combines a few of: ``zip(*xs)`` (loops,
``list``, comprehensions, unzip), ``adsrc.grad``/``value_and_grad``/``jvp``/
``hvp`` called inside (second order in all: ``hvp`` in its direction only),
lists appended in a loop and returned with a float, helpers with
module-level defaults, the program's own generator functions,
``functools.reduce``/``map``/``partial``, and writes through views (a view of
a view, rows and columns of a matrix, double buffers). It is written to a
module file and imported, so that adsrc reads its source as it reads a
user's. Then, in lazy and in eager mode:

* the value is bit for bit Python's (and the list of a program that returns
  ``(loss, list)``, differentiated with ``has_aux=True``, equal to Python's);
* ``x`` is left untouched;
* the gradients with respect to ``x`` and ``a`` match central finite
  differences in float64.

Every generated program is one adsrc supports: a refusal fails as a wrong
gradient does. Each seed's program is made to use two tags of
:data:`progen_constructs.TAGS` (``wanted``), so that the default seeds reach
every construct (``test_every_construct_is_generated``); set
``ADSRC_CONSTRUCT_SEEDS="1,2,3"`` to run others. ``FIXED_BUGS`` keeps the
programs that found adsrc bugs, fixed since; ``KNOWN_REFUSALS`` those adsrc
still refuses though it need not (strict xfail: a fix makes them pass).
"""
from __future__ import annotations

import os
import random
import sys
import warnings

import diffgen
import numpy as np
import pytest
from progen_constructs import HEADER, TAGS, ConstructsGenerator

import adsrc

ORDERED_TAGS = sorted(TAGS)
DEFAULT_SEEDS = list(range((len(ORDERED_TAGS) + 1) // 2 + 1))  # enough to want every tag once (see wanted)
SEEDS = [int(s) for s in os.environ["ADSRC_CONSTRUCT_SEEDS"].split(",")] if "ADSRC_CONSTRUCT_SEEDS" in os.environ \
    else DEFAULT_SEEDS
EPS = 1e-6


def wanted(seed: int) -> set[str]:
    """Two tags a seed's program must use, half the list apart: seeds 0 to len(TAGS) / 2 want every tag."""
    half = (len(ORDERED_TAGS) + 1) // 2
    return {ORDERED_TAGS[seed % len(ORDERED_TAGS)], ORDERED_TAGS[(seed + half) % len(ORDERED_TAGS)]}


def generate(seed: int) -> tuple[ConstructsGenerator, str, tuple]:
    """The generator (tags, aux), the module's source and the arguments of one seed's program."""
    rng = random.Random(7_919 * seed + 17)
    n = rng.randint(4, 6)
    gen = ConstructsGenerator(rng, seed, n, wanted(seed))
    source = HEADER + gen.program() + "\n"
    data = np.random.default_rng(seed)
    return gen, source, (data.uniform(-1.0, 1.0, n), float(data.uniform(-1.0, 1.0)))


def finite_differences(loss, x: np.ndarray, a: float) -> tuple[np.ndarray, float]:
    gx = np.zeros_like(x)
    for i in range(x.size):
        e = np.zeros_like(x)
        e[i] = EPS
        gx[i] = (loss(x + e, a) - loss(x - e, a)) / (2 * EPS)
    return gx, (loss(x, a + EPS) - loss(x, a - EPS)) / (2 * EPS)


def same_lists(got, expected) -> bool:
    return type(got) is type(expected) and len(got) == len(expected) and all(
        np.array_equal(g, e) and np.shape(g) == np.shape(e) for g, e in zip(got, expected))


def problems_of(func, x0: np.ndarray, a: float, aux: bool) -> list[str]:
    expected = func(x0.copy(), a)
    loss = (lambda x, a: func(x, a)[0]) if aux else func
    gx_ref, ga_ref = finite_differences(loss, x0, a)
    value_ref = expected[0] if aux else expected
    scale = max(1.0, abs(value_ref), float(np.max(np.abs(gx_ref))), abs(ga_ref))
    found = []
    for eager in (False, True):
        mode = "eager" if eager else "lazy"
        x = x0.copy()
        try:
            out, (gx, ga) = adsrc.value_and_grad(func, wrt=(0, 1), eager=eager, has_aux=aux)(x, a)
        except Exception as error:  # noqa: BLE001  (every generated program is supported)
            found.append(f"{mode}: raised {type(error).__name__}: {error}")
            continue
        value = out[0] if aux else out
        if not np.array_equal(x, x0):
            found.append(f"{mode}: x changed")
        if value != value_ref:
            found.append(f"{mode}: value {value!r} != Python's {value_ref!r}")
        if aux and not same_lists(out[1], expected[1]):
            found.append(f"{mode}: aux {out[1]!r} != Python's {expected[1]!r}")
        if not np.allclose(gx, gx_ref, rtol=1e-5, atol=1e-6 * scale):
            found.append(f"{mode}: gradient in x {gx!r} != finite differences {gx_ref!r}")
        if not np.isclose(ga, ga_ref, rtol=1e-5, atol=1e-6 * scale):
            found.append(f"{mode}: gradient in a {ga!r} != finite differences {ga_ref!r}")
    return found


@pytest.fixture
def load(tmp_path):
    """Writes a program's module into tmp_path and imports it; forgets it afterwards."""
    names = []

    def load_source(name: str, source: str):
        names.append(name)
        return diffgen.load_module(str(tmp_path / f"{name}.py"), name, source)

    yield load_source
    for name in names:
        sys.modules.pop(name, None)


@pytest.mark.parametrize("seed", SEEDS)
def test_random_construct_program(seed, load):
    gen, source, (x, a) = generate(seed)
    module = load(f"constructs_{seed}", source)
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # an overflow or a nan would make the check unfair
        found = problems_of(getattr(module, gen.name), x, a, gen.aux)
    assert not found, (f"{gen.name} (seed {seed}; constructs: {', '.join(sorted(gen.tags))}):\n"
                       + "\n".join(found) + f"\nx = np.{x!r}; a = {a!r}\n" + source)


def test_generator_is_deterministic_and_compiles():
    for seed in SEEDS:
        gen, first, args = generate(seed)
        _, again, args_again = generate(seed)
        assert first == again and np.array_equal(args[0], args_again[0]) and args[1] == args_again[1]
        compile(first, f"constructs_{seed}", "exec")
        assert not gen.wanted, f"seed {seed}: the program does not use {sorted(gen.wanted)}"
        assert gen.tags <= TAGS, f"tags missing from TAGS: {sorted(gen.tags - TAGS)}"


def test_every_construct_is_generated():
    """Each tag is used by some program of the seeds (the default seeds want each one, see ``wanted``)."""
    reached = set().union(*(generate(seed)[0].tags for seed in SEEDS))
    missing = TAGS - reached
    assert not missing or SEEDS != DEFAULT_SEEDS, f"no program of the seeds uses: {sorted(missing)}"


# -- adsrc bugs the generator's programs ran into, fixed; kept as regression tests ---------------------------------
def pieces(v):
    yield v[0]
    yield v[1]


def jvp_aux_inner(v):
    return np.sum(np.sin(v)), v * 2.0


def two_local_functions(x, a):  # the second was "called before its definition" (frontend/inline.py)
    def f(u):
        return np.sin(u) * 2.0

    def g(u):
        return u * a
    return np.sum(f(x) + g(x))


def generator_then_local_function(x, a):  # the generator's copy is a local function too: the same bug
    t = sum(pieces(x))

    def f(u):
        return np.sum(np.tanh(u)) * a
    return t + f(x)


def rows_then_comprehension(x, a):  # the comprehension's i made r = M[i] a view adsrc could not follow
    M = np.zeros((3, 2))
    for i in range(3):
        r = M[i]
        r[1] = np.tanh(x[i + 1]) * a
    seq = [x[i:i + 2] * a for i in range(2)]
    return np.sum(M * M) + np.sum(seq[0] * seq[1])


def jvp_aux_with_tangent(x, a):  # the aux data's cotangent was dropped when the tangent had one too
    y, t, aux = adsrc.jvp(jvp_aux_inner, (x,), (x * a,), has_aux=True)
    return y + t + np.sum(aux * x)


FIXED_BUGS = [two_local_functions, generator_then_local_function, rows_then_comprehension, jvp_aux_with_tangent]


@pytest.mark.parametrize("func", FIXED_BUGS, ids=lambda f: f.__name__)
def test_once_broken_construct(func):
    found = problems_of(func, np.array([0.3, -0.7, 0.5, 0.9]), 0.6, aux=False)
    assert not found, "\n".join(found)


# -- constructs adsrc refuses though it need not (strict: a fix makes these pass, then move them to FIXED_BUGS) -------
def swap_after_four_loops(x, a):  # freshness.py: each loop doubled the cases (t); past CASES (8) all merged, now by u, b
    t = 0.0
    for w in [x[0:2], x[1:3]]:
        t = t + np.sum(w)
    for w in [x[0:2], x[1:3]]:
        t = t + np.sum(w)
    for w in [x[0:2], x[1:3]]:
        t = t + np.sum(w)
    for w in [x[0:2], x[1:3]]:
        t = t + np.sum(w)
    u = np.zeros(4)
    b = np.zeros(4)
    for k in range(2):
        b[1:] = u[:-1] * a + x[1:]
        u, b = b, u
    return t + np.sum(u * x) + np.sum(b)


def rotation_after_two_loops(x, a):  # three buffers: two loops are enough
    t = 0.0
    for w in x[:2]:
        t = t * a + w
    for i in range(2):
        t = t + np.sin(x[i])
    u, b, z = np.zeros(4), np.zeros(4), np.zeros(4)
    for k in range(2):
        z[1:] = b[:-1] * a + u[1:] * 0.5 + x[1:]
        u, b, z = b, z, u
    return t + np.sum(u * x) + np.sum(b)


def nested_generator(x, a):  # frontend/generators.py: the generator a generator calls was not lowered
    return sum(np.sum(p) * a for p in doubled(x))


def doubled(v):
    for p in pieces(v):
        yield p * 2.0


KNOWN_REFUSALS: list = []
FIXED_BUGS += [swap_after_four_loops, rotation_after_two_loops, nested_generator]


@pytest.mark.xfail(raises=adsrc.AdsrcError, strict=True)
@pytest.mark.parametrize("func", KNOWN_REFUSALS, ids=lambda f: f.__name__)
def test_refused_though_supported(func):
    x, a = np.array([0.3, -0.7, 0.5, 0.9]), 0.6
    adsrc.grad(func, wrt=(0, 1))(x, a)
    assert not problems_of(func, x, a, aux=False)
