"""Every spelling of a workload: a benchmark that cannot be tuned to.

A benchmark of one hand-picked function measures how well a compiler knows
that function. Here each workload family is a source *template* with slots,
and each slot has several spellings that a user might write (``len(x)`` or
``x.shape[0]``, ``s * s`` or ``np.square(s)``, an array write or a list
append, ``Wh @ h`` or ``h @ Wh.T``, ...). The variants are the whole cross
product of the slots' spellings, generated as source text and compiled by
:func:`benchmarks.workloads.function_from_source`, so none is picked for
being fast; each family reports its *worst* variant.

Every variant computes the same function as its family's first variant on
the same inputs. Before its numbers count, a variant's value must match the
first variant's to 1e-10, its lazy and eager gradients must match the first
variant's to 1e-10, and its gradient must agree with a central finite
difference along a random direction. A variant that crashes or disagrees is
marked ``FAIL`` in the table, with the reason.

    python -m benchmarks.spellings                 # full sizes, every family
    python -m benchmarks.spellings --quick         # tiny sizes (smoke test)
    python -m benchmarks.spellings --family ewma,rnn
    python -m benchmarks.spellings --passes 2      # everything twice, each variant's worst pass kept
    python -m benchmarks.spellings --cpu-time      # process CPU time: other load on the machine counts less

Targets (docs/performance.md): gradient / primal <= 3 for every variant,
lazy and eager; lazy <= 1.05x eager.
"""
from __future__ import annotations

import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import argparse  # noqa: E402
import itertools  # noqa: E402
import re  # noqa: E402
import sys  # noqa: E402
from dataclasses import dataclass  # noqa: E402
from typing import Callable  # noqa: E402

import numpy as np  # noqa: E402

from .workloads import function_from_source  # noqa: E402

# One slot's spellings: (label, {slot name: text}). A text may span several
# lines (a block); it may itself contain slots, filled in later passes.
Choice = tuple[str, dict[str, str]]


@dataclass(frozen=True)
class Family:
    """A workload family: a module template defining ``f``, its slots' spellings, its inputs."""

    name: str
    what: str
    template: str
    axes: tuple[tuple[str, tuple[Choice, ...]], ...]
    make_args: Callable[[bool], tuple]
    wrt: tuple[int, ...]


@dataclass(frozen=True)
class Variant:
    family: str
    label: str
    source: str
    f: Callable


_SLOT = re.compile(r"\{([a-z_]+)\}")


def render(template: str, fills: dict[str, str]) -> str:
    """``template`` with every ``{slot}`` replaced, blocks indented where their slot stands.

    A slot alone on its line takes a block, indented like the slot; a slot
    inside a line takes one line of text. Lines left empty by an empty fill
    are dropped. Fills may contain slots: passes repeat until none is left.

    >>> print(render("def f(x):\\n    {body}", {"body": "y = {e}\\nreturn y", "e": "x * x"}))
    def f(x):
        y = x * x
        return y
    """
    text = template
    for _ in range(8):
        if not _SLOT.search(text):
            return text
        out = []
        for line in text.splitlines():
            alone = re.fullmatch(r"(\s*)\{([a-z_]+)\}\s*", line)
            if alone and alone.group(2) in fills:
                indent, value = alone.group(1), fills[alone.group(2)]
                out += [indent + part if part.strip() else "" for part in value.splitlines()]
                continue
            line = _SLOT.sub(lambda m: _inline(m, fills), line)
            out.append(line)
        text = "\n".join(part for part in out if part.strip())
    raise ValueError(f"slots left unfilled in:\n{text}")


def _inline(match, fills):
    value = fills[match.group(1)]
    if "\n" in value:
        raise ValueError(f"block slot {{{match.group(1)}}} used inside a line")
    return value


def variants(family: Family) -> list[Variant]:
    """The cross product of the family's spellings, as compiled functions; the first is the reference."""
    out = []
    names = [name for name, _ in family.axes]
    for combo in itertools.product(*(choices for _, choices in family.axes)):
        fills: dict[str, str] = {}
        for _, slot_fills in combo:
            fills.update(slot_fills)
        label = ", ".join(f"{name}={lab}" for name, (lab, _) in zip(names, combo))
        source = render(family.template, fills)
        filename = f"<spellings: {family.name}: {label}>"
        out.append(Variant(family.name, label, source, function_from_source(source.splitlines(), filename, "f")))
    return out


# --- the families -------------------------------------------------------------

def _block(*lines: str) -> str:
    return "\n".join(lines)


def _rng():
    return np.random.default_rng(0)


_EWMA = Family(
    "ewma", "s[t] = a * x[t] + (1 - a) * s[t - 1], loss sum of s squared",
    _block("def f(x, a):", "    {pre}", "    {carry}"),
    (
        ("length", (
            ("len(x)", {"pre": "", "n": "len(x)"}),
            ("x.shape[0]", {"pre": "", "n": "x.shape[0]"}),
            ("x.size", {"pre": "", "n": "x.size"}),
            ("n = len(x)", {"pre": "n = len(x)", "n": "n"}),
        )),
        ("carry", (
            ("array", {"carry": _block(
                "s = np.zeros({n})", "s[0] = x[0]",
                "for t in range(1, {n}):", "    s[t] = a * x[t] + (1 - a) * s[t - 1]",
                "return np.sum({sq})")}),
            ("scalar", {"carry": _block(
                "s = x[0]", "total = {sq}",
                "for t in range(1, {n}):", "    s = a * x[t] + (1 - a) * s", "    total = total + {sq}",
                "return total")}),
            ("list", {"carry": _block(
                "hist = [x[0]]",
                "for t in range(1, {n}):", "    hist.append(a * x[t] + (1 - a) * hist[-1])",
                "s = np.array(hist)", "return np.sum({sq})")}),
        )),
        ("square", (("s * s", {"sq": "s * s"}), ("s ** 2", {"sq": "s ** 2"}),
                    ("np.square(s)", {"sq": "np.square(s)"}))),
    ),
    lambda quick: (np.sin(np.linspace(0.0, 30.0, 6 if quick else 4000)), 0.3), (0, 1),
)

_ACCUM = Family(
    "accumulate", "s = s + (x . x) * c_i over a vector c of scalars, x an 8-vector",
    _block("def f(x, c):", "    {loop}"),
    (
        ("product", tuple((p, {"p": p}) for p in (
            "np.sum(x * x)", "np.dot(x, x)", "x @ x", "np.inner(x, x)", "np.vdot(x, x)",
            "(x * x).sum()", "np.sum(x ** 2)"))),
        ("loop", (
            ("s = s + ...", {"loop": _block("s = 0.0", "for ci in c:", "    s = s + {p} * ci", "return s")}),
            ("s += ...", {"loop": _block("s = 0.0", "for ci in c:", "    s += {p} * ci", "return s")}),
            ("c[i]", {"loop": _block("s = 0.0", "for i in range(len(c)):", "    s = s + {p} * c[i]",
                                     "return s")}),
            ("sum(genexpr)", {"loop": "return sum({p} * ci for ci in c)"}),
        )),
    ),
    lambda quick: (_rng().standard_normal(8 if not quick else 3), _rng().standard_normal(5 if quick else 20_000)),
    (0,),
)

_RNN = Family(
    "rnn", "h = tanh(Wh h + Wx x_t) over the rows of xs, loss sum(h)",
    _block("def f(Wh, Wx, h0, xs):", "    {state}"),
    (
        ("matvec", (
            ("Wh @ h", {"mh": "Wh @ h", "mx": "Wx @ xt"}),
            ("np.dot(Wh, h)", {"mh": "np.dot(Wh, h)", "mx": "np.dot(Wx, xt)"}),
            ("h @ Wh.T", {"mh": "h @ Wh.T", "mx": "xt @ Wx.T"}),
            ("Wh.dot(h)", {"mh": "Wh.dot(h)", "mx": "Wx.dot(xt)"}),
        )),
        ("loop", (
            ("for xt in xs", {"head": "for xt in xs:", "take": ""}),
            ("range(len(xs))", {"head": "for t in range(len(xs)):", "take": "xt = xs[t]"}),
            ("range(xs.shape[0])", {"head": "for t in range(xs.shape[0]):", "take": "xt = xs[t]"}),
        )),
        ("state", (
            ("rebound", {"state": _block("h = h0", "{head}", "    {take}", "    h = np.tanh({mh} + {mx})",
                                         "return np.sum(h)")}),
            ("list", {"state": _block("hs = [h0]", "{head}", "    {take}", "    h = hs[-1]",
                                      "    hs.append(np.tanh({mh} + {mx}))", "return np.sum(hs[-1])")}),
        )),
    ),
    lambda quick: _rnn_args(quick), (0, 1),
)


def _rnn_args(quick):
    r = _rng()
    steps, hidden, n_in = (3, 3, 2) if quick else (100, 32, 16)
    return (r.standard_normal((hidden, hidden)) * 0.5 / np.sqrt(hidden),
            r.standard_normal((hidden, n_in)) / np.sqrt(n_in), np.zeros(hidden),
            r.standard_normal((steps, n_in)))


_BRANCH = Family(
    "branch", "a loop with an if on the data: sin(w x_i) where x_i > 0, else w x_i^2",
    _block("def f(x, w):", "    s = 0.0", "    {head}", "        {take}", "        {branch}", "    return s"),
    (
        ("loop", (
            ("for xi in x", {"head": "for xi in x:", "take": ""}),
            ("range(len(x))", {"head": "for i in range(len(x)):", "take": "xi = x[i]"}),
            ("enumerate", {"head": "for i, xi in enumerate(x):", "take": ""}),
        )),
        ("branch", (
            ("if/else", {"branch": _block("if xi > 0:", "    s = s + np.sin(w * xi)", "else:",
                                          "    s = s + w * xi * xi")}),
            ("negated", {"branch": _block("if xi <= 0:", "    s = s + w * xi * xi", "else:",
                                          "    s = s + np.sin(w * xi)")}),
            ("ternary", {"branch": "s = s + (np.sin(w * xi) if xi > 0 else w * xi * xi)"}),
            ("continue", {"branch": _block("if xi > 0:", "    s = s + np.sin(w * xi)", "    continue",
                                           "s = s + w * xi * xi")}),
            ("override", {"branch": _block("term = w * xi * xi", "if xi > 0:", "    term = np.sin(w * xi)",
                                           "s = s + term")}),
        )),
    ),
    lambda quick: (_rng().standard_normal(6 if quick else 2000) + 0.05, 0.7), (0, 1),
)

_KERNEL = Family(
    "kernel", "K[i, j] = exp(-(x_i - x_j)^2 / ell) in a nested loop, loss y K y",
    _block("def f(x, y, ell):", "    n = {n}", "    {build}", "    return y @ (K @ y)"),
    (
        ("build", (
            ("K[i, j]", {"build": _block("K = np.zeros((n, n))", "for i in range(n):", "    for j in range(n):",
                                         "        K[i, j] = {entry}")}),
            ("K[i][j]", {"build": _block("K = np.zeros((n, n))", "for i in range(n):", "    for j in range(n):",
                                         "        K[i][j] = {entry}")}),
            ("symmetric", {"build": _block("K = np.zeros((n, n))", "for i in range(n):",
                                           "    for j in range(i + 1):", "        K[i, j] = {entry}",
                                           "        K[j, i] = K[i, j]")}),
            ("lists", {"build": _block("rows = []", "for i in range(n):", "    row = []",
                                       "    for j in range(n):", "        row.append({entry})",
                                       "    rows.append(row)", "K = np.array(rows)")}),
            ("comprehension", {"build": "K = np.array([[{entry} for j in range(n)] for i in range(n)])"}),
        )),
        ("n", (("len(x)", {"n": "len(x)"}), ("x.shape[0]", {"n": "x.shape[0]"}))),
        ("entry", (
            ("(d) ** 2", {"entry": "np.exp(-(x[i] - x[j]) ** 2 / ell)"}),
            ("np.square", {"entry": "np.exp(-np.square(x[i] - x[j]) / ell)"}),
            ("d * d", {"entry": "np.exp(-(x[i] - x[j]) * (x[i] - x[j]) / ell)"}),
        )),
    ),
    lambda quick: (np.linspace(0.0, 2.0, 4 if quick else 30) + 0.1 * np.sin(np.arange(4 if quick else 30)),
                   np.cos(np.arange(4 if quick else 30.0)), 0.8), (0, 2),
)

_HELPER_AXIS = ("helper", (
    ("module def", {"module": _block("def field(y, k):", "    return -k * y + np.sin(y[::-1])"), "local": ""}),
    ("two statements", {"module": _block("def field(y, k):", "    decay = -k * y",
                                         "    return decay + np.sin(y[::-1])"), "local": ""}),
    ("nested def", {"module": "", "local": _block("def field(y, k):", "    return -k * y + np.sin(y[::-1])")}),
    ("lambda", {"module": "", "local": "field = lambda y, k: -k * y + np.sin(y[::-1])"}),
))
_TIME_AXIS = ("loop", (
    ("range(steps)", {"head": "for _ in range(steps):", "tail": ""}),
    ("range(n_steps) with n", {"head": _block("n_steps = int(steps)", "for t in range(n_steps):"), "tail": ""}),
    ("while", {"head": _block("t = 0", "while t < steps:"), "tail": "t += 1"}),
))
_ODE_TEMPLATE = _block("{module}", "def f(y0, k, dt, steps):", "    {local}", "    y = y0", "    {head}",
                       "        {step}", "        {tail}", "    return np.sum(y * y)")


def _ode_args(quick):
    n = 3 if quick else 16
    return np.linspace(0.5, 1.5, n), np.linspace(0.2, 0.8, n), 0.05, (4 if quick else 200)


_EULER = Family(
    "euler", "explicit Euler, y = y + dt * field(y, k), the vector field a helper",
    _ODE_TEMPLATE, (_HELPER_AXIS, _TIME_AXIS,
                    ("update", (("y = y + dt * f", {"step": "y = y + dt * field(y, k)"}),
                                ("y = y + f * dt", {"step": "y = y + field(y, k) * dt"})))),
    _ode_args, (0, 1, 2),
)

_RK4 = Family(
    "rk4", "classical Runge-Kutta 4, the vector field a helper",
    _ODE_TEMPLATE, (_HELPER_AXIS, _TIME_AXIS,
                    ("update", (
                        ("k1..k4", {"step": _block(
                            "k1 = field(y, k)", "k2 = field(y + 0.5 * dt * k1, k)",
                            "k3 = field(y + 0.5 * dt * k2, k)", "k4 = field(y + dt * k3, k)",
                            "y = y + dt / 6 * (k1 + 2 * k2 + 2 * k3 + k4)")}),
                        ("half = dt / 2", {"step": _block(
                            "half = dt / 2", "k1 = field(y, k)", "k2 = field(y + half * k1, k)",
                            "k3 = field(y + half * k2, k)", "k4 = field(y + dt * k3, k)",
                            "y = y + (k1 + 2 * k2 + 2 * k3 + k4) * (dt / 6)")}),
                    ))),
    _ode_args, (0, 1, 2),
)

_HEAT = Family(
    "heat", "1-D heat equation, u_i += r (u_{i-1} - 2 u_i + u_{i+1}), ends fixed, loss sum(u^2)",
    _block("def f(u0, r, steps):", "    u = u0", "    for _ in range(steps):", "        {update}",
           "    return np.sum(u * u)"),
    (
        ("update", (
            ("np.concatenate", {"update": "u = np.concatenate([u[:1], u[1:-1] + r * ({lap}), u[-1:]])"}),
            ("copy + slice write", {"update": _block("v = u.copy()", "v[1:-1] = u[1:-1] + r * ({lap})",
                                                     "u = v")}),
            ("empty_like + writes", {"update": _block("v = np.empty_like(u)", "v[0] = u[0]", "v[-1] = u[-1]",
                                                      "v[1:-1] = u[1:-1] + r * ({lap})", "u = v")}),
            ("np.hstack", {"update": "u = np.hstack([u[0], u[1:-1] + r * ({lap}), u[-1]])"}),
        )),
        ("laplacian", (
            ("u[:-2] - 2u + u[2:]", {"lap": "u[:-2] - 2 * u[1:-1] + u[2:]"}),
            ("np.diff(u, 2)", {"lap": "np.diff(u, 2)"}),
            ("difference of differences", {"lap": "(u[2:] - u[1:-1]) - (u[1:-1] - u[:-2])"}),
        )),
    ),
    lambda quick: (np.sin(np.linspace(0.0, 3.0, 6 if quick else 200)), 0.2, (3 if quick else 100)), (0, 1),
)

FAMILIES: dict[str, Family] = {f.name: f for f in (_EWMA, _ACCUM, _RNN, _BRANCH, _KERNEL, _EULER, _RK4, _HEAT)}


def main(argv=None) -> int:
    from .spellings_run import run_families  # the measuring half (timing, checks, tables)

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="tiny sizes and few repeats (smoke test)")
    ap.add_argument("--family", help="comma-separated subset of: " + ",".join(FAMILIES))
    ap.add_argument("--passes", type=int, default=1, help="measure everything this many times, keep the worst")
    ap.add_argument("--cpu-time", action="store_true", help="time in process CPU time, not wall time")
    ap.add_argument("--list", action="store_true", help="print every variant's source and stop")
    opts = ap.parse_args(argv)
    names = [n.strip() for n in opts.family.split(",")] if opts.family else list(FAMILIES)
    unknown = [n for n in names if n not in FAMILIES]
    if unknown:
        raise SystemExit(f"unknown family: {', '.join(unknown)} (known: {', '.join(FAMILIES)})")
    if opts.list:
        for name in names:
            for v in variants(FAMILIES[name]):
                print(f"# {v.family}: {v.label}\n{v.source}\n")
        return 0
    return run_families([FAMILIES[n] for n in names], opts.quick, opts.passes, opts.cpu_time)


if __name__ == "__main__":
    sys.exit(main())
