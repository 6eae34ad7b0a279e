"""Turn measured cells into the markdown report (and JSON) that run.py prints.

Ratios are computed here, from cells of the same run: on a 2-core shared
machine absolute microseconds drift between runs, ratios much less.
"""
from __future__ import annotations

import dataclasses
import json
import platform
import textwrap
from importlib import metadata

import numpy as np

from .checks import close

HAND_RTOL = 1e-6    # any system against the hand-written gradient
EAGER_RTOL = 1e-12  # adsrc lazy against adsrc eager: summation order only (Stacks, fused dot products)


# --- machine ----------------------------------------------------------------

def _cpu_model():
    try:
        with open("/proc/cpuinfo") as fh:
            for line in fh:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def _blas():
    try:
        from threadpoolctl import threadpool_info
        for lib in threadpool_info():
            if lib.get("user_api") == "blas":
                return f"{lib['internal_api']} {lib['version']}, {lib['num_threads']} thread(s)"
    except ImportError:
        pass
    try:
        blas = np.show_config(mode="dicts")["Build Dependencies"]["blas"]
        return f"{blas['name']} {blas.get('version', '')} (threads set by environment)"
    except Exception:
        return "unknown"


def _version(dist):
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def machine_info():
    import os
    import sys
    versions = {d: _version(d) for d in ("adsrc", "autograd", "jax", "jaxlib", "torch")}
    if versions["adsrc"] is None and "adsrc" in sys.modules:
        versions["adsrc"] = "source tree"
    return {
        "cpu": _cpu_model(),
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "blas": _blas(),
        "versions": {k: v for k, v in versions.items() if v},
    }


# --- rows -------------------------------------------------------------------

def _ratio(a, b):
    return a / b if a is not None and b else None


def rows(cells):
    """One dict per cell with the table's raw values (also the JSON records)."""
    by = {(c.workload, c.system): c for c in cells}
    out = []
    for c in cells:
        hand, primal = by.get((c.workload, "hand")), by.get((c.workload, "primal"))
        out.append({
            "workload": c.workload, "system": c.system,
            "median_us": c.median_us,
            "ratio_hand": _ratio(c.median_us, hand and hand.median_us),
            "ratio_primal": _ratio(c.median_us, primal and primal.median_us),
            "peak_kib": c.peak_kib, "transform_ms": c.transform_ms,
            "ok": _ok(c, hand, by.get((c.workload, "adsrc-eager"))),
            "samples": c.samples, "traced": c.traced, "error": c.error,
        })
    return out


def _ok(c, hand, eager):
    if c.error:
        return None
    if c.grads is None:
        return "-"
    if c.system == "hand":
        return "yes" if c.self_ok else "NO (finite difference)"
    if hand is None or hand.grads is None:
        return "?"
    if not close(c.grads, hand.grads, HAND_RTOL):
        return "NO (vs hand)"
    if c.system == "adsrc-lazy" and eager is not None and eager.grads is not None:
        if not close(c.grads, eager.grads, EAGER_RTOL):
            return "NO (vs eager)"
    return "yes"


# --- formatting -------------------------------------------------------------

def _fmt(x, small=2):
    if x is None:
        return ""
    if x < 10:
        return f"{x:.{small}f}"
    if x < 100:
        return f"{x:.1f}"
    return f"{x:,.0f}"


class _Notes:
    """Numbered footnotes, one per distinct reason."""

    def __init__(self):
        self.reasons = {}

    def ref(self, reason):
        n = self.reasons.setdefault(reason, len(self.reasons) + 1)
        return f"n/a [{n}]"

    def lines(self):
        return [f"[{n}] {r}" for r, n in self.reasons.items()]


HEADER = ("| workload | system | median µs | / hand | / primal "
          "| peak extra KiB | transform ms | ok |")


def _main_table(rs, notes):
    lines = [HEADER, "| --- | --- | ---: | ---: | ---: | ---: | ---: | --- |"]
    for r in rs:
        if r["error"]:
            cols = [notes.ref(r["error"]), "", "", "", "", ""]
        else:
            mem = _fmt(r["peak_kib"], 1) if r["traced"] else "n/t"
            star = "*" if r["samples"] == 1 else ""
            cols = [_fmt(r["median_us"]) + star, _fmt(r["ratio_hand"]), _fmt(r["ratio_primal"]),
                    mem, _fmt(r["transform_ms"], 1), r["ok"]]
        lines.append("| " + " | ".join([r["workload"], r["system"], *cols]) + " |")
    return lines


def _lazy_eager(cells):
    by = {(c.workload, c.system): c for c in cells if not c.error}
    out = {}
    for w in dict.fromkeys(c.workload for c in cells):
        lazy, eager = by.get((w, "adsrc-lazy")), by.get((w, "adsrc-eager"))
        if lazy and eager:
            out[w] = {
                "time": _ratio(lazy.median_us, eager.median_us),
                "memory": _ratio(lazy.peak_kib, eager.peak_kib),
                "agree": close(lazy.grads, eager.grads, EAGER_RTOL),
            }
    return out


def _lazy_eager_table(le):
    if not le:
        return ["(pending: needs both adsrc-lazy and adsrc-eager to run)"]
    lines = [f"| workload | lazy / eager time | lazy / eager peak memory | grads agree (rtol {EAGER_RTOL:g}) |",
             "| --- | ---: | ---: | --- |"]
    for w, r in le.items():
        lines.append(f"| {w} | {_fmt(r['time'])} | {_fmt(r['memory'])} | "
                     f"{'yes' if r['agree'] else 'NO'} |")
    return lines


_STRAIGHT = ("straight200", "straight1000")


def _issue4_specs(workloads, by, le, lazy):
    return [
        ("gradient / primal, lazy, every workload", 3, workloads,
         lambda w: lazy(w).median_us / by[(w, "primal")].median_us),
        ("regression: lazy / eager", 1.05, ["regression"], lambda w: le[w]["time"]),
        ("regression: lazy / hand", 3, ["regression"],
         lambda w: lazy(w).median_us / by[(w, "hand")].median_us),
        ("loop512: lazy / eager", 0.5, ["loop512"], lambda w: le[w]["time"]),
        ("accum100k: lazy / eager", 0.5, ["accum100k"], lambda w: le[w]["time"]),
        ("peak memory lazy / eager, every workload", 1.2, workloads, lambda w: le[w]["memory"]),
        ("transform ms per function (lazy and eager)", 100, [w for w in workloads if w not in _STRAIGHT],
         lambda w: max(by[(w, s)].transform_ms for s in ("adsrc-lazy", "adsrc-eager"))),
    ]


def _issue14_specs(workloads, by, le, lazy):
    transform = lambda w: max(by[(w, s)].transform_ms for s in ("adsrc-lazy", "adsrc-eager"))  # noqa: E731
    return [
        ("gradient / primal, lazy, every workload", 3, workloads,
         lambda w: lazy(w).median_us / by[(w, "primal")].median_us),
        ("lazy / eager, every workload (lazy no slower, within noise)", 1.05, workloads,
         lambda w: le[w]["time"]),
        ("lazy / eager on loop512, rnn100, wide256", 0.5, ["loop512", "rnn100", "wide256"],
         lambda w: le[w]["time"]),
        ("transform ms, 200 straight-line statements", 500, ["straight200"], transform),
        ("transform ms, 1,000 straight-line statements", 3000, ["straight1000"], transform),
        ("transform ms, every other workload", 100, [w for w in workloads if w not in _STRAIGHT], transform),
        ("ewma (16,000 writes): lazy / primal", 5, ["ewma"],
         lambda w: lazy(w).median_us / by[(w, "primal")].median_us),
        ("ewma: peak extra memory per write, KiB (O(n) memory)", 1.0, ["ewma"],
         lambda w: lazy(w).peak_kib / 16_000),
    ]


def _targets(cells, le, make_specs):
    """A targets table, each target with the worst measured value and whether it is met."""
    by = {(c.workload, c.system): c for c in cells if not c.error}
    workloads = list(dict.fromkeys(c.workload for c in cells))
    lazy = lambda w: by.get((w, "adsrc-lazy"))  # noqa: E731

    def val(fn, w):
        try:
            return fn(w)
        except (TypeError, ZeroDivisionError, KeyError, AttributeError):
            return None

    specs = make_specs(workloads, by, le, lazy)
    lines = ["| target | limit | worst measured | met |", "| --- | ---: | ---: | --- |"]
    for label, limit, ws, fn in specs:
        ws = [w for w in ws if w in workloads]
        if not ws:
            continue
        vals = {w: val(fn, w) for w in ws}
        known = {w: v for w, v in vals.items() if v is not None}
        if not known:
            lines.append(f"| {label} | {limit} | pending | - |")
            continue
        worst = max(known, key=known.get)
        over = [w for w, v in known.items() if v > limit]
        missing = [w for w in ws if w not in known]
        met = "yes" if not over and not missing else "no"
        if over:
            met += ": " + ", ".join(f"{w} {known[w]:.2f}" for w in over)
        if missing:
            met += " (n/a: " + ", ".join(missing) + ")"
        where = f" ({worst})" if len(ws) > 1 else ""
        lines.append(f"| {label} | {limit} | {_fmt(known[worst])}{where} | {met} |")
    return lines


LEGEND = " ".join("""
Columns: median µs of one call (* = one warm call only, too slow to repeat);
/ hand and / primal divide by the hand-written gradient's and the primal's
medians for the same workload in this run; peak extra KiB is tracemalloc's peak
during one separate call above what was live before it (n/t: the system
allocates outside tracemalloc's view); transform ms is a first call on a fresh
function object minus a warm call (adsrc: on the quick-size inputs, as its
transform never sees sizes; jax-jit: on the real ones, as it unrolls loops).
ok: hand = agrees with a central finite difference along a random direction;
others = agree with hand (rtol 1e-6), and adsrc-lazy also with adsrc-eager
(rtol 1e-12); ? = no hand reference in this run.
""".split())


def render(cells, machine, settings):
    notes = _Notes()
    rs = rows(cells)
    le = _lazy_eager(cells)
    v = machine["versions"]
    mode = "quick (tiny sizes: smoke test only, not the benchmark's workloads)" if settings.quick else "full"
    out = [
        f"## adsrc benchmarks: {mode}",
        "",
        f"- machine: {machine['cpu']}, {machine['cpus']} CPUs; Python {machine['python']}; "
        f"NumPy {machine['numpy']} ({machine['blas']})",
        "- versions: " + (", ".join(f"{k} {x}" for k, x in v.items()) or "none of the optional systems"),
        f"- median of up to {settings.repeats} repeats per cell, one BLAS thread, one run",
        "",
        *_main_table(rs, notes),
        "",
        "### adsrc lazy / eager",
        "",
        *_lazy_eager_table(le),
        "",
        "### Targets: making laziness pay",
        "",
        *_targets(cells, le, _issue4_specs),
        "",
        "### Targets: the cheap-gradient principle",
        "",
        *_targets(cells, le, _issue14_specs),
        "",
        textwrap.fill(LEGEND, 80),
    ]
    if notes.reasons:
        out += ["", "Not available:", *notes.lines()]
    return "\n".join(out)


def to_json(cells, machine, settings):
    # A setting that is a function (the clock) is written by its name.
    named = {k: getattr(v, "__name__", v) if callable(v) else v
             for k, v in dataclasses.asdict(settings).items()}
    return json.dumps({"settings": named, "machine": machine,
                       "results": rows(cells)}, indent=2)
