#!/usr/bin/env python3
"""Run autograd's own test suite with adsrc in autograd's place, and count what passes.

    python3 scripts/autograd_suite/run.py /path/to/autograd/tests [--json summary.json] [--timeout 60]
                                         [--scipy] [--files test_numpy.py,...] [-- extra pytest arguments]

The folder may also be given as ADSRC_AUTOGRAD_TESTS. The tests run in a
pytest subprocess with the shim (a fake ``autograd`` package over adsrc,
scripts/autograd_suite/shim) first on sys.path and this checkout's adsrc
next. Tests that use autograd-only APIs (primitive, vspace, flatten, tracer
internals, its SciPy wrappers unless --scipy) are skipped. Prints the counts
and the failures grouped by cause; writes the JSON summary.
"""
from __future__ import annotations

import argparse
import collections
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
SHIM = HERE / "shim"
ROOT = HERE.parents[1]


def run_pytest(tests: Path, targets: list[str], timeout: float, scipy: bool, extra: list[str]) -> list[dict]:
    """Run the suite in a subprocess; the plugin's records, one per test outcome."""
    with tempfile.TemporaryDirectory() as scratch:
        results = Path(scratch) / "results.jsonl"
        env = dict(os.environ, ADSRC_AUTOGRAD_RESULTS=str(results), ADSRC_AUTOGRAD_TIMEOUT=str(timeout),
                   PYTHONPATH=os.pathsep.join([str(SHIM), str(ROOT), os.environ.get("PYTHONPATH", "")]),
                   PYTHONDONTWRITEBYTECODE="1")
        env["ADSRC_AUTOGRAD_SCIPY"] = "1" if scipy else "0"
        command = [sys.executable, "-m", "pytest", *targets, "-c", str(SHIM / "pytest.ini"),
                   "--rootdir", str(tests), "-p", "adsrc_autograd_plugin", "-q", "--no-header", "-rN",
                   "--tb=no", "--continue-on-collection-errors", *extra]
        subprocess.run(command, env=env, cwd=scratch, stdout=subprocess.DEVNULL if not extra else None)
        if not results.exists():
            raise SystemExit("pytest produced no results (see its output: rerun with -- -q)")
        return [json.loads(line) for line in results.read_text().splitlines()]


def summarize(records: list[dict]) -> dict:
    tests: dict[str, dict] = {}
    for record in records:           # the last word on a test wins (a failed teardown after a pass...)
        previous = tests.get(record["nodeid"])
        if previous is None or previous["outcome"] == "passed" or record["outcome"] != "passed":
            tests[record["nodeid"]] = record
    outcomes = collections.Counter()
    for record in tests.values():
        if record["outcome"] == "skipped":
            kind = ("autograd-only" if record.get("autograd_only")
                    else "beyond second order" if record.get("beyond_second_order") else "other")
            outcomes[f"skipped ({kind})"] += 1
        else:
            outcomes[record["outcome"]] += 1
    failures = [r for r in tests.values() if r["outcome"] in ("failed", "error")]
    causes = collections.Counter(r["cause"] for r in failures)
    runnable = outcomes["passed"] + outcomes["failed"] + outcomes["error"]
    return {
        "collected": len(tests),
        "skipped_autograd_only": outcomes["skipped (autograd-only)"],
        "skipped_beyond_second_order": outcomes["skipped (beyond second order)"],
        "skipped_other": outcomes["skipped (other)"],
        "capped_to_second_order": sum(1 for r in tests.values() if r.get("capped")),
        "runnable": runnable,
        "passed": outcomes["passed"],
        "failed": outcomes["failed"] + outcomes["error"],
        "causes": [{"cause": cause, "count": count,
                    "examples": [r["nodeid"] for r in failures if r["cause"] == cause][:5],
                    "first_error": next(r["error"] for r in failures if r["cause"] == cause)}
                   for cause, count in causes.most_common()],
        "skip_reasons": collections.Counter(r.get("reason", "")[:100] for r in tests.values()
                                            if r["outcome"] == "skipped").most_common(),
        "tests": sorted(tests.values(), key=lambda r: r["nodeid"]),
    }


def table(summary: dict, top: int = 20) -> str:
    lines = [
        "| | tests |", "| --- | ---: |",
        f"| collected | {summary['collected']} |",
        f"| skipped: autograd-only API | {summary['skipped_autograd_only']} |",
        f"| skipped: beyond second order | {summary['skipped_beyond_second_order']} |",
        f"| skipped: other reasons (xarray missing...) | {summary['skipped_other']} |",
        f"| runnable | {summary['runnable']} |",
        f"| passed | {summary['passed']} |",
        f"| failed | {summary['failed']} |",
        f"| of the runnable: asked for order 3, checked to order 2 | {summary['capped_to_second_order']} |",
        "", f"Failures by cause (top {top}):", "",
        "| count | cause | example |", "| ---: | --- | --- |",
    ]
    for cause in summary["causes"][:top]:
        text = cause["cause"].replace("|", "\\|")
        lines.append(f"| {cause['count']} | {text} | {cause['examples'][0].split('::')[-1]} |")
    return "\n".join(lines)


BEGIN, END = "<!-- autograd-suite table: run.py --update-doc writes below -->", "<!-- end of table -->"


def update_doc(path: Path, summary: dict, top: int) -> None:
    """Replace the text between the table markers of ``path`` with the latest table."""
    text = path.read_text()
    if BEGIN not in text or END not in text:
        raise SystemExit(f"{path} has no table markers ({BEGIN} ... {END})")
    head, rest = text.split(BEGIN, 1)
    tail = rest.split(END, 1)[1]
    path.write_text(f"{head}{BEGIN}\n\n{table(summary, top)}\n\n{END}{tail}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("tests", nargs="?", default=os.environ.get("ADSRC_AUTOGRAD_TESTS"),
                        help="autograd's tests/ folder (default: $ADSRC_AUTOGRAD_TESTS)")
    parser.add_argument("--json", default="autograd-suite.json", help="where to write the JSON summary")
    parser.add_argument("--timeout", type=float, default=60.0, help="seconds per test (default 60)")
    parser.add_argument("--scipy", action="store_true",
                        help="map autograd.scipy onto SciPy instead of skipping its tests as autograd-only")
    parser.add_argument("--top", type=int, default=20, help="how many failure causes to list")
    parser.add_argument("--update-doc", default="", metavar="FILE",
                        help="also write the table into FILE (docs/autograd-suite.md) between its table markers")
    parser.add_argument("--files", default="", help="comma-separated test files in the folder to run (default all)")
    argv = sys.argv[1:] if argv is None else argv
    extra = argv[argv.index("--") + 1:] if "--" in argv else []
    options = parser.parse_args(argv[:argv.index("--")] if "--" in argv else argv)
    if not options.tests or not Path(options.tests).is_dir():
        parser.error("give autograd's tests/ folder, or set ADSRC_AUTOGRAD_TESTS")
    tests = Path(options.tests).resolve()
    targets = [str(tests / name) for name in options.files.split(",") if name] or [str(tests)]
    summary = summarize(run_pytest(tests, targets, options.timeout, options.scipy, extra))
    summary["tests_folder"] = str(tests)
    Path(options.json).write_text(json.dumps(summary, indent=1) + "\n")
    print(table(summary, options.top))
    if options.update_doc:
        update_doc(Path(options.update_doc), summary, options.top)
    print(f"\nJSON summary: {options.json}")
    return 0 if summary["failed"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
