"""The docs test: every python block of README.md and docs/*.md runs, page by page (one namespace per
page), and every listing (a block of generated code or of what a command prints, marked
``<!-- listing: COMMAND -->``) is what COMMAND prints now (scripts/doc_listings.py rewrites them).
Sybil (https://sybil.readthedocs.io) finds the blocks; ``<!-- skip: next -->`` skips one."""
import importlib.util
import os
import sys
from pathlib import Path

import pytest
from sybil import Region, Sybil
from sybil.parsers.markdown import PythonCodeBlockParser, SkipParser

ROOT = Path(__file__).resolve().parent
_spec = importlib.util.spec_from_file_location("doc_listings", ROOT / "scripts" / "doc_listings.py")
doc_listings = sys.modules["doc_listings"] = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(doc_listings)


def _check_listing(example):
    listing = example.parsed
    if not doc_listings.checkable(listing):
        pytest.skip(f"this listing shows what Python {listing.version} prints")
    diff = doc_listings.stale(listing, example.document.text)
    if diff:
        raise AssertionError(f"stale listing of `{listing.command}`: run python scripts/doc_listings.py\n{diff}")


class ListingParser:
    """A region per listing, checked against what its command prints."""

    def __call__(self, document):
        for listing in doc_listings.listings(document.path, document.text):
            yield Region(listing.start, listing.end, listing, _check_listing)


class PythonBlockParser(PythonCodeBlockParser):
    """Sybil's python blocks, but for listings, which are not run."""

    def __call__(self, document):
        spans = [(listing.start, listing.end) for listing in doc_listings.listings(document.path, document.text)]
        for region in super().__call__(document):
            if not any(start <= region.start < end for start, end in spans):
                yield region


_cwd: list[str] = []


def _setup(namespace):
    # A page runs as a module named adsrc_docs (not __main__: a page's script guarded by
    # `if __name__ == "__main__":` is shown, not run), so that its classes belong to a module, as a script's do.
    namespace["__name__"] = "adsrc_docs"
    _cwd.append(os.getcwd())
    os.chdir(ROOT)  # the pages' paths (examples/...) are relative to the project's root


def _teardown(namespace):
    os.chdir(_cwd.pop())


pytest_collect_file = Sybil(
    parsers=[PythonBlockParser(), ListingParser(), SkipParser()],
    patterns=["README.md", "docs/*.md"],
    setup=_setup, teardown=_teardown,
).pytest()


def pytest_itemcollected(item):
    if item.path.suffix == ".md":
        item.add_marker(pytest.mark.docs)
