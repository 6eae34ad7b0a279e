"""The ``adsrc`` command line: print the adjoint code adsrc generates for a function.

    adsrc dump FILE.py:FUNC [--wrt 0,1|name] [--eager]

Bad input exits with status 2 and one line on stderr, never a traceback.
"""
from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Callable, Sequence

from .errors import AdsrcError


class UsageError(Exception):
    """A bad command line, reported as one line on stderr with exit status 2."""


def load_function(target: str) -> Callable:
    """Import FILE.py and return FUNC from ``FILE.py:FUNC``."""
    path, sep, func_name = target.rpartition(":")
    if not sep or not path or not func_name:
        raise UsageError(f"expected FILE.py:FUNC, got {target!r}")
    if not os.path.isfile(path):
        raise UsageError(f"no such file: {path}")
    module_name = "adsrc_cli_" + os.path.splitext(os.path.basename(path))[0]
    spec = importlib.util.spec_from_file_location(module_name, path)
    module = importlib.util.module_from_spec(spec)
    sys.path.insert(0, os.path.dirname(os.path.abspath(path)))
    try:
        spec.loader.exec_module(module)
    except SyntaxError as error:
        raise UsageError(f"{path}:{error.lineno}: syntax error: {error.msg}") from None
    finally:
        sys.path.pop(0)
    func = getattr(module, func_name, None)
    if func is None:
        raise UsageError(f"{path} has no function named {func_name!r}")
    return getattr(func, "__wrapped__", func)


def parse_wrt(text: str | None):
    if text is None:
        return 0
    items = []
    for part in text.split(","):
        part = part.strip()
        if not part:
            raise UsageError(f"bad --wrt {text!r}: expected positions or names separated by commas")
        items.append(int(part) if part.lstrip("-").isdigit() else part)
    return items[0] if len(items) == 1 else tuple(items)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="adsrc", description="Source-transformation AD for Python and NumPy.")
    commands = parser.add_subparsers(dest="command", required=True)
    dump = commands.add_parser("dump", help="print the generated adjoint code of FILE.py:FUNC",
                               description="Print the adjoint module adsrc generates for FILE.py:FUNC.")
    dump.add_argument("target", metavar="FILE.py:FUNC", help="the file and the function in it")
    dump.add_argument("--wrt", help="parameters to differentiate: positions or names, comma-separated (default 0)")
    dump.add_argument("--eager", action="store_true", help="show the eager-unthunking form instead of the lazy one")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from .api import adjoint_source

    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        func = load_function(args.target)
        print(adjoint_source(func, parse_wrt(args.wrt), eager=args.eager), end="")
    except (UsageError, AdsrcError) as error:
        print(f"adsrc: error: {error}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
