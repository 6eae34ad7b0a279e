"""Regenerate the listings in README.md and docs/*.md: generated code, and what commands print.

A listing is a fenced block right after an HTML comment that names the command
printing it, run from the project's root:

    <!-- listing: adsrc dump examples/loop_accumulate.py:f --eager -->
    ```python
    ...
    ```

The command is one of

* ``adsrc ARGS``: ``python -m adsrc ARGS`` (its standard output and error);
* ``python FILE ARGS``: a script;
* ``pdb FILE: CMD; CMD; ...``: FILE run as ``__main__``, with its
  ``pdb.runcall``/``breakpoint()`` session fed these commands, echoed after
  each ``(Pdb)`` prompt as a terminal shows them;

preceded by ``NAME=VALUE`` settings of the environment if any, and followed
by filters if any, as in a shell: ``| head N``, ``| tail N`` (the first or
last N lines), ``| grep REGEX`` (the lines where Python's ``re.search``
finds REGEX). A file under ``/tmp/`` that a
command names is a python block of the same page marked ``<!-- file:
/tmp/NAME.py -->``, written to a fresh folder that the output calls ``/tmp``
again; paths under the project's root are shown relative to it. What pdb and
a traceback print depends on Python's version: those listings say which one
made them (``<!-- listing (Python 3.11): ... -->``), and are checked on that
version only.

    python scripts/doc_listings.py            # rewrite every stale listing
    python scripts/doc_listings.py --check    # change nothing; exit 1 naming each stale listing

The docs test (conftest.py, with Sybil) checks each listing as an example of
its page, so a listing that differs from what adsrc prints fails the tests.
"""
from __future__ import annotations

import argparse
import difflib
import os
import re
import shlex
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PAGES = ["README.md", *sorted(str(p.relative_to(ROOT)) for p in (ROOT / "docs").glob("*.md"))]

LISTING = re.compile(
    r"^<!-- listing(?: \(Python (?P<version>[0-9.]+)\))?: (?P<command>.+?) -->\n"
    r"(?P<fence>```+)(?P<info>[^\n]*)\n(?P<body>.*?)^(?P=fence)[ \t]*$",
    re.MULTILINE | re.DOTALL)
FILE = re.compile(r"^<!-- file: (?P<path>/tmp/[\w.-]+) -->\n```+python\n(?P<body>.*?)^```+[ \t]*$",
                  re.MULTILINE | re.DOTALL)
_PYTHON = f"{sys.version_info[0]}.{sys.version_info[1]}"
_VERSIONED = ("pdb", "python")  # whose output depends on Python's version (tracebacks, pdb)

# Runs FILE as __main__ under a pdb that reads its commands from argv and echoes each after its prompt.
_PDB_DRIVER = r"""
import io, pdb, runpy, sys
path, commands = sys.argv[1], sys.argv[2]

class Echoing(pdb.Pdb):
    def __init__(self, *args, **kwargs):
        kwargs.update(stdin=io.StringIO(commands), stdout=sys.stdout)
        super().__init__(*args, **kwargs)
        self.use_rawinput = False

    def precmd(self, line):
        self.stdout.write((line if line.strip() else "EOF") + "\n")
        return super().precmd(line)

pdb.Pdb = Echoing
sys.argv = [path]
sys.path.insert(0, ".")
runpy.run_path(path, run_name="__main__")
"""


@dataclass
class Listing:
    page: str
    line: int  # of the comment
    command: str
    version: str | None
    info: str
    body: str
    start: int  # offsets of the whole listing (comment and block) in the page
    end: int

    @property
    def header(self) -> str:
        tag = f" (Python {self.version})" if self.version else ""
        return f"<!-- listing{tag}: {self.command} -->"


def listings(page: str, text: str) -> list[Listing]:
    """The listings of a page, in order."""
    found = []
    for m in LISTING.finditer(text):
        found.append(Listing(page, text.count("\n", 0, m.start()) + 1, m.group("command"), m.group("version"),
                             m.group("info"), m.group("body"), m.start(), m.end()))
    return found


def files(text: str) -> dict[str, str]:
    """The python blocks of a page marked ``<!-- file: /tmp/NAME.py -->``, by path."""
    return {m.group("path"): m.group("body") for m in FILE.finditer(text)}


_SETTING = re.compile(r"\s*([A-Za-z_]\w*)=(\S*)")


def settings(command: str) -> tuple[dict[str, str], str]:
    """The ``NAME=VALUE`` settings a command starts with, and the rest of it."""
    env = {}
    while (m := _SETTING.match(command)) and command[m.end():m.end() + 1].isspace():
        env[m.group(1)] = m.group(2)
        command = command[m.end():].lstrip()
    return env, command


def versioned(command: str) -> bool:
    """Whether what the command prints depends on Python's version (a traceback, a pdb session)."""
    return settings(command)[1].split(" ", 1)[0] in _VERSIONED


def render(command: str, page_text: str) -> str:
    """What ``command`` prints now, as a listing shows it."""
    command, *filters = command.split(" | ")
    settings_, command = settings(command)
    env = {k: v for k, v in os.environ.items() if not k.startswith("ADSRC_")}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])])
    env["COLUMNS"] = "100"
    env.update(settings_)
    program, _, rest = command.partition(" ")
    with tempfile.TemporaryDirectory(prefix="adsrc-listing-") as folder:
        for path, body in files(page_text).items():
            Path(folder, Path(path).name).write_text(body)
        if program == "pdb":
            script, _, commands = rest.partition(": ")
            argv = [sys.executable, "-c", _PDB_DRIVER, script.strip().replace("/tmp/", folder + "/"),
                    "\n".join(c.strip() for c in commands.split(";")) + "\n"]
        else:
            args = [w.replace("/tmp/", folder + "/") for w in shlex.split(rest)]
            if program == "adsrc":
                argv = [sys.executable, "-m", "adsrc", *args]
            elif program == "python":
                argv = [sys.executable, *args]
            else:
                raise ValueError(f"a listing's command is adsrc, python or pdb, not {program!r}")
        done = subprocess.run(argv, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              timeout=300)
        out = done.stdout
        out = out.replace(folder, "/tmp")
    out = out.replace(str(ROOT) + os.sep, "")
    out = out.replace(sys.base_prefix + os.sep, "..." + os.sep)  # the standard library's files (pdb's where)
    out = "\n".join(line.rstrip() for line in out.rstrip("\n").splitlines()) + "\n"
    for step in filters:  # | head N, | tail N, | grep REGEX (Python's re.search), as the shell's
        verb, _, argument = step.strip().partition(" ")
        lines = out.splitlines(keepends=True)
        if verb == "head":
            lines = lines[:int(argument)]
        elif verb == "tail":
            lines = lines[-int(argument):]
        elif verb == "grep":
            pattern = re.compile(shlex.split(argument)[0])
            lines = [line for line in lines if pattern.search(line)]
        else:
            raise ValueError(f"a listing's filter is head, tail or grep, not {verb!r}")
        out = "".join(lines)
    return out


def refreshed(listing: Listing, page_text: str) -> str:
    """The listing's comment and block, with what its command prints now."""
    fence = "```"
    body = render(listing.command, page_text)
    while fence in body:
        fence += "`"
    version = _PYTHON if versioned(listing.command) else None
    tag = f" (Python {version})" if version else ""
    return f"<!-- listing{tag}: {listing.command} -->\n{fence}{listing.info}\n{body}{fence}"


def stale(listing: Listing, page_text: str) -> str | None:
    """A diff if the listing differs from what its command prints now; None if it is current."""
    now = render(listing.command, page_text)
    if now == listing.body:
        return None
    return "".join(difflib.unified_diff(listing.body.splitlines(True), now.splitlines(True),
                                        f"{listing.page}:{listing.line} (in the page)",
                                        f"{listing.command} (prints now)"))


def checkable(listing: Listing) -> bool:
    """Whether this Python can check the listing: its version's, or any for a listing of no version."""
    return listing.version is None or listing.version == _PYTHON


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="change nothing; exit 1 if a listing is stale")
    parser.add_argument("pages", nargs="*", help="the pages to look at (default: README.md and docs/*.md)")
    options = parser.parse_args(argv)
    bad = 0
    for page in options.pages or PAGES:
        path = ROOT / page
        text = path.read_text()
        found = listings(page, text)
        if options.check:
            for listing in found:
                if not checkable(listing):
                    print(f"{page}:{listing.line}: made with Python {listing.version}, not checked on {_PYTHON}")
                    continue
                diff = stale(listing, text)
                if diff:
                    bad += 1
                    print(f"{page}:{listing.line}: stale listing of `{listing.command}`\n{diff}")
            continue
        pieces, at = [], 0
        for listing in found:
            pieces += [text[at:listing.start], refreshed(listing, text)]
            at = listing.end
        new = "".join(pieces) + text[at:]
        if new != text:
            path.write_text(new)
            print(f"rewrote {page}")
    if options.check:
        print(f"{bad} stale listing(s)" if bad else "every listing is current")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
