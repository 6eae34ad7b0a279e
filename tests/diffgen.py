"""Differential checks of adsrc against plain Python, for tests/test_differential.py.

:func:`check_program` runs a function three ways: as plain Python, and
through ``adsrc.value_and_grad`` in lazy and in eager mode, each on its own
copy of the arguments, and compares:

* the adjoint's value with the function's, bit for bit (dtype, shape, the
  bytes of every entry, NaN positions);
* the arguments after each call with copies taken before (dtype, shape,
  bytes): adsrc must never write into user data;
* each gradient with its argument (shape and dtype; a float for a float),
  and no gradient may share memory with another or with an argument;
* the lazy gradients with the eager ones (rtol 1e-10 in float64);
* for a smooth program, the gradients with central finite differences.

A program adsrc refuses with an ``AdsrcError`` must be refused in both modes
and before any of its code ran: generated programs start with ``_tick()``
(:func:`tick`, registered as non-differentiable), and the harness counts the
ticks; an accepted program must run ``_tick()`` as often as plain Python
does. Any other exception, and any failed check, is a problem, returned with
a class name (for grouping) and a detail.

:func:`make_batch` writes a batch of random programs (tests/progen.py's
ExtendedGenerator) and :func:`run_batch` checks them; the seed of a run comes
from ``ADSRC_DIFF_SEED`` (default :data:`DEFAULT_SEED`), so a CI run is
deterministic and another seed explores other programs.
"""
from __future__ import annotations

import importlib.util
import os
import random
import re
import sys
import tempfile
import time
import traceback
import warnings

import numpy as np

import adsrc
from progen import ALIAS_TAG, EXTENDED_HEADER, ExtendedGenerator

DEFAULT_SEED = 20_251
SEED = int(os.environ.get("ADSRC_DIFF_SEED", DEFAULT_SEED))
WRT = (0, 1, 2)
MAX_LINES = 18  # longer random programs are drawn again
LIMIT = 1e6  # a value larger than this (or not finite) overflowed: finite differences say nothing
ADSRC_DIR = os.path.dirname(os.path.abspath(adsrc.__file__))

COUNTER = [0]


def tick() -> None:
    """The side effect generated programs start with; adsrc must not run it when it refuses."""
    COUNTER[0] += 1


_registered: list[bool] = []


def register_tick() -> None:
    """Mark :func:`tick` non-differentiable (once per process; registering invalidates compiled code)."""
    if not _registered:
        adsrc.register_nondifferentiable(tick)
        _registered.append(True)


# -- comparisons -----------------------------------------------------------------------------
def copy_args(args: tuple) -> tuple:
    return tuple(np.array(a, copy=True) if isinstance(a, np.ndarray) else a for a in args)


def bitwise_difference(got, expected) -> str | None:
    """None if ``got`` is ``expected`` bit for bit (NaNs compared by position), else what differs."""
    try:
        a, b = np.asarray(got), np.asarray(expected)
    except Exception as error:  # noqa: BLE001
        return f"cannot compare: {type(error).__name__}: {error}"
    if a.dtype != b.dtype:
        return f"dtype {a.dtype} instead of {b.dtype}"
    if a.shape != b.shape:
        return f"shape {a.shape} instead of {b.shape}"
    if a.dtype.kind in "fc":
        nan_a, nan_b = np.isnan(a), np.isnan(b)
        if not np.array_equal(nan_a, nan_b):
            return "NaN at other positions"
        a, b = np.where(nan_a, 0, a), np.where(nan_b, 0, b)
    if a.dtype.kind == "O":
        return None if all(x is y or x == y for x, y in zip(a.ravel(), b.ravel())) else "objects differ"
    if a.tobytes() != b.tobytes():
        return "entries differ"
    return None


def changed_inputs(args: tuple, before: tuple) -> list[int]:
    return [i for i, (a, b) in enumerate(zip(args, before))
            if isinstance(b, np.ndarray) and (not isinstance(a, np.ndarray) or bitwise_difference(a, b))]


def shape_problem(g, arg) -> str | None:
    if isinstance(arg, np.ndarray):
        if type(g) is not np.ndarray:
            return f"a {type(g).__name__} for an array argument"
        if g.shape != arg.shape or g.dtype != arg.dtype:
            return f"shape {g.shape} dtype {g.dtype} for an argument of shape {arg.shape} dtype {arg.dtype}"
    elif isinstance(arg, float) and (isinstance(g, np.ndarray) or not isinstance(g, float)):
        return f"a {type(g).__name__} for a float argument"
    return None


def sharing(grads: tuple, args: tuple) -> list[str]:
    out = []
    arrays = [(f"gradient {i}", g) for i, g in enumerate(grads) if isinstance(g, np.ndarray)]
    inputs = [(f"argument {i}", a) for i, a in enumerate(args) if isinstance(a, np.ndarray)]
    for k, (name, g) in enumerate(arrays):
        for other, h in arrays[k + 1:] + inputs:
            if g.size and np.size(h) and np.shares_memory(g, h):
                out.append(f"{name} shares memory with {other}" + (" (the same object)" if g is h else ""))
    return out


def close(a, b, rtol: float) -> bool:
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        return False
    finite = np.abs(np.concatenate([a[np.isfinite(a)], b[np.isfinite(b)]]))
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    return bool(np.allclose(a, b, rtol=rtol, atol=rtol * scale, equal_nan=True))


def numerical_grads(func, args, wrt, eps: float) -> list:
    """Central differences at ``args``; every evaluation gets its own copies of the arguments (a program
    that writes into one would otherwise move the point the next evaluation starts from)."""
    def at(i, value):
        return func(*copy_args(args[:i]), value, *copy_args(args[i + 1:]))

    grads = []
    for i in wrt:
        x = args[i]
        if isinstance(x, float):
            grads.append(float((at(i, x + eps) - at(i, x - eps)) / (2 * eps)))
            continue
        g = np.zeros_like(x)
        for idx in np.ndindex(x.shape):
            xp, xm = np.array(x), np.array(x)
            xp[idx] += eps
            xm[idx] -= eps
            g[idx] = (at(i, xp) - at(i, xm)) / (2 * eps)
        grads.append(g)
    return grads


def fd_mismatch(func, args, wrt, grads, value) -> str | None:
    """None if ``grads`` match central differences at eps 1e-6 or at eps 1e-5, else the worst entry."""
    atol = 1e-6 * max(1.0, abs(float(value)))
    worst = None
    for eps in (1e-6, 1e-5):
        numeric = numerical_grads(func, copy_args(args), wrt, eps)
        bad = []
        for k, (g, n) in enumerate(zip(grads, numeric)):
            g, n = np.asarray(g, dtype=float), np.asarray(n, dtype=float)
            if not np.allclose(g, n, rtol=1e-4, atol=atol):
                bad.append(f"gradient {wrt[k]}: adsrc {np.round(g, 6).tolist()} vs finite differences "
                           f"{np.round(n, 6).tolist()}")
        if not bad:
            return None
        worst = worst or "; ".join(bad)
    return worst


def blame(error: BaseException) -> str:
    frames = traceback.extract_tb(error.__traceback__)
    return f"{frames[-1].filename}:{frames[-1].lineno}" if frames else "?"


# -- one program -----------------------------------------------------------------------------
def check_program(func, args: tuple, wrt: tuple = WRT, fd: bool = False, ticks: bool = True,
                  effects: bool = False, path: str | None = None):
    """(outcome, problems, refusal).

    ``outcome`` is 'accepted' (adsrc differentiated it in some mode),
    'refused' (both modes raised an AdsrcError before running anything) or
    'broken' (the program itself fails, or it was refused wrongly);
    ``problems`` a list of (class, detail), empty when every check passed;
    ``refusal`` the AdsrcError's type and gist when refused.

    With ``effects``, the program may write into its arguments as plain Python
    runs it (tests/progen_aliases.py): an accepted program must leave them as
    plain Python does, bit for bit, with the gradient at their values on entry;
    a refused one must leave them as they were, and be refused with an
    ``UnsupportedSyntax`` (or, for a call with no rule, ``NoGradientRule``).
    With ``path``, a refusal must name a line of that file (``path:line``).
    """
    problems: list[tuple[str, str]] = []
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        plain_args = copy_args(args)
        start = COUNTER[0]
        try:
            expected = func(*plain_args)
        except Exception as error:  # noqa: BLE001
            return "broken", [("generator: the program raises", f"{type(error).__name__}: {error}")], None
        plain_ticks = COUNTER[0] - start
        if changed_inputs(plain_args, args) and not effects:
            return "broken", [("generator: the program writes into its arguments", "")], None
        results: dict[bool, object] = {}
        for eager in (False, True):
            mode = "eager" if eager else "lazy"
            call_args = copy_args(args)
            start = COUNTER[0]
            try:
                results[eager] = (adsrc.value_and_grad(func, wrt=wrt, eager=eager)(*call_args), call_args)
            except adsrc.AdsrcError as error:
                results[eager] = error
                # RefusedWhenRun is the documented exception: a check only a value can decide, made
                # right before its statement runs (adsrc/errors.py); everything else before any code runs.
                # So is, for a call of a value (docs/fidelity.md, "Calls of values"), NoGradientRule at that call.
                documented = adsrc.errors.RefusedWhenRun, *((adsrc.errors.NoGradientRule,) if effects else ())
                if ticks and COUNTER[0] != start and not isinstance(error, documented):
                    problems.append(("refused after running code",
                                     f"{mode}: {type(error).__name__} after the function's code ran: {error}"))
                if effects and not isinstance(error, (adsrc.errors.UnsupportedSyntax, adsrc.errors.NoGradientRule)):
                    problems.append((f"refused with {type(error).__name__}", f"{mode}: {error}"))
                if path is not None and not re.search(re.escape(path) + r":\d+", str(error)):
                    problems.append(("refusal names no line of the program", f"{mode}: {error}"))
                if changed_inputs(call_args, args):
                    problems.append(("input mutated by a refused call",
                                     f"{mode}: arguments {changed_inputs(call_args, args)} changed"))
                continue
            except Exception as error:  # noqa: BLE001
                results[eager] = error
                where = blame(error)
                inside = "adsrc" if os.path.abspath(where.rsplit(":", 1)[0]).startswith(ADSRC_DIR) else "generated code"
                problems.append((f"crash: {type(error).__name__} ({inside})",
                                 f"{mode}: {type(error).__name__}: {error} at {where}\n"
                                 + "".join(traceback.format_exception(error)[-4:])))
                continue
            if changed_inputs(call_args, plain_args):  # as plain Python left them (unchanged, but with effects)
                problems.append(("input not left as Python leaves it" if effects else "input mutated",
                                 f"{mode}: arguments {changed_inputs(call_args, plain_args)} differ from Python's"))
            if not isinstance(results[eager], Exception) and ticks and COUNTER[0] - start != plain_ticks:
                problems.append(("side effects ran a different number of times",
                                 f"{mode}: _tick() ran {COUNTER[0] - start} times, plain Python {plain_ticks}"))
        lazy, eager = results.get(False), results.get(True)
        refused = [isinstance(r, adsrc.AdsrcError) for r in (lazy, eager)]
        if all(refused):
            gist = re.sub(r"\b[A-Za-z]+\d+\b", "v", str(lazy).split(": ", 1)[-1].split(";")[0])
            reason = f"{type(lazy).__name__}: {gist[:90]}"
            return ("broken" if problems else "refused"), problems, reason
        if any(refused):
            problems.append(("refused in one mode only",
                             f"lazy: {type(lazy).__name__}, eager: {type(eager).__name__}"))
        done = {}
        for is_eager, result in ((False, lazy), (True, eager)):
            if isinstance(result, BaseException) or result is None:
                continue
            mode = "eager" if is_eager else "lazy"
            (value, grads), call_args = result
            diff = bitwise_difference(value, expected)
            if diff is not None:
                problems.append(("value differs from plain Python",
                                 f"{mode}: {diff}: adsrc {value!r}, Python {expected!r}"))
            if not isinstance(grads, tuple) or len(grads) != len(wrt):
                problems.append(("gradient structure", f"{mode}: {grads!r}"))
                continue
            for k, i in enumerate(wrt):
                shape = shape_problem(grads[k], args[i])
                if shape:
                    problems.append(("gradient shape or type", f"{mode}: gradient {i}: {shape}"))
            for detail in sharing(grads, call_args):
                problems.append(("gradients share memory", f"{mode}: {detail}"))
            done[is_eager] = (value, grads)
        if len(done) == 2:
            for k, i in enumerate(wrt):
                a, b = done[False][1][k], done[True][1][k]
                try:
                    same = close(a, b, rtol=1e-10)
                except Exception:  # noqa: BLE001
                    same = False
                if not same:
                    problems.append(("lazy and eager gradients differ",
                                     f"gradient {i}: lazy {np.asarray(a).tolist()} eager {np.asarray(b).tolist()}"))
        if fd and done:
            value, grads = done.get(False) or done[True]
            if np.ndim(expected) == 0 and np.isfinite(expected) and abs(expected) <= LIMIT:
                try:
                    mismatch = fd_mismatch(func, args, wrt, grads, expected)
                except Exception as error:  # noqa: BLE001
                    mismatch = f"finite differences failed: {type(error).__name__}: {error}"
                if mismatch:
                    problems.append(("gradient differs from finite differences", mismatch))
    return "accepted", problems, None


# -- random batches --------------------------------------------------------------------------
def make_batch(batch: int, count: int, seed: int = SEED) -> list[dict]:
    """The programs of one batch: the same for the same (seed, batch)."""
    rng = random.Random(seed * 1_000_003 + batch)
    programs = []
    for k in range(count):
        dim = rng.randint(1, 3)
        smooth = rng.random() < 0.5
        depth = 2 if rng.random() < 0.05 else 1
        while True:  # compiling dominates the cost of a check, and grows with the size of a program
            gen = ExtendedGenerator(rng, f"dg{batch}_{k}", smooth=smooth, size=rng.randint(1, 3), dim=dim,
                                    max_depth=depth)
            source = gen.program()
            if source.count("\n") < MAX_LINES:
                break
        programs.append({"name": gen.name, "source": source, "dim": dim, "smooth": smooth,
                         "n": rng.randrange(4), "tags": gen.tags, "args_seed": rng.randrange(2 ** 31)})
    return programs


def arguments(program: dict) -> tuple:
    data = np.random.default_rng(program["args_seed"])
    dim = program["dim"]
    return data.uniform(-1.0, 1.0, dim), data.uniform(-1.0, 1.0, (dim, dim)), float(data.uniform(-1, 1)), \
        program["n"]


def args_repr(args: tuple) -> str:
    """The arguments as Python source that rebuilds them exactly."""
    parts = [f"np.array({a.tolist()!r})" if isinstance(a, np.ndarray) else repr(a) for a in args]
    return f"({', '.join(parts)}{',' if len(parts) == 1 else ''})"


def reproducer(program: dict, problems: list, batch: int, seed: int) -> str:
    classes = sorted({c for c, _ in problems})
    lines = [f"--- {program['name']} (seed {seed}, batch {batch}, {'smooth' if program['smooth'] else 'non-smooth'},"
             f" dim {program['dim']}): {'; '.join(classes)}"]
    lines += [f"    [{c}] {d}" for c, d in problems]
    lines.append(f"constructs: {', '.join(program['tags']) or '-'}")
    lines.append(f"args = {args_repr(arguments(program))}")
    lines.append(program["source"])
    return "\n".join(lines)


def load_module(path: str, name: str, source: str):
    with open(path, "w") as fh:
        fh.write(source)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


def run_batch(batch: int, count: int, seed: int = SEED) -> dict:
    """Check every program of a batch (in a worker process): outcomes, failures and feature statistics."""
    register_tick()
    started = time.perf_counter()
    programs = make_batch(batch, count, seed)
    source = EXTENDED_HEADER + "\n\n\n".join(p["source"] for p in programs) + "\n"
    result = {"outcomes": {}, "failures": [], "classes": {}, "tags": {}, "refusals": {}}
    name = f"diff_batch_{seed}_{batch}"
    with tempfile.TemporaryDirectory() as directory:
        module = load_module(os.path.join(directory, f"{name}.py"), name, source)
        try:
            for program in programs:
                outcome, problems, refusal = check_program(getattr(module, program["name"]),
                                                           arguments(program), fd=program["smooth"],
                                                           effects=ALIAS_TAG in program["tags"])
                result["outcomes"][outcome] = result["outcomes"].get(outcome, 0) + 1
                for tag in program["tags"]:
                    counts = result["tags"].setdefault(tag, {})
                    counts[outcome] = counts.get(outcome, 0) + 1
                if refusal:
                    result["refusals"][refusal] = result["refusals"].get(refusal, 0) + 1
                if problems:
                    for c in sorted({c for c, _ in problems}):
                        result["classes"][c] = result["classes"].get(c, 0) + 1
                    result["failures"].append(reproducer(program, problems, batch, seed))
        finally:
            sys.modules.pop(name, None)
    result["seconds"] = time.perf_counter() - started
    return result
