"""The documentation's own rules. conftest.py (with Sybil) runs every python block of README.md and
docs/*.md and checks every listing against what its command prints; this module checks what that
cannot: that listings stay a minority of the blocks, that a stale listing is caught, that the pages speak
of the project alone, and that every install line is safe under PEP 668."""
import importlib.util
import os
import re
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = os.path.join(ROOT, "scripts", "doc_listings.py")


def _listings_module():
    spec = importlib.util.spec_from_file_location("doc_listings_under_test", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


doc_listings = _listings_module()


def pages():
    return [(page, open(os.path.join(ROOT, page), encoding="utf-8").read()) for page in doc_listings.PAGES]


def test_at_most_a_third_of_the_blocks_are_listings():
    runnable = listed = 0
    for page, text in pages():
        found = doc_listings.listings(page, text)
        spans = [(listing.start, listing.end) for listing in found]
        for m in re.finditer(r"^```python\n", text, re.MULTILINE):
            if not any(start <= m.start() < end for start, end in spans):
                runnable += 1
        listed += len(found)
    assert runnable >= 20
    assert listed <= (runnable + listed) / 3, (listed, runnable)


def test_no_python_block_is_skipped():
    for page, text in pages():
        assert "<!-- skip:" not in text, page  # a block that cannot run is a listing, checked, or is rewritten


def test_every_listing_names_a_command_and_every_file_is_a_python_block():
    for page, text in pages():
        commands = [listing.command for listing in doc_listings.listings(page, text)]
        assert all(c.split()[0] in ("adsrc", "python", "pdb") or "=" in c.split()[0] for c in commands), page
        assert text.count("<!-- listing") == len(commands), page  # no malformed marker
        assert text.count("<!-- file:") == len(doc_listings.files(text)), page
        for path in re.findall(r"/tmp/[\w.-]+\.py(?=[: ])", " ".join(commands)):
            assert path in doc_listings.files(text), (page, path)


def test_a_stale_listing_is_caught_and_rewritten(tmp_path):
    page = '''Some text.

<!-- file: /tmp/tiny.py -->
```python
def f(x):
    return x * x
```

<!-- listing: adsrc dump /tmp/tiny.py:f | head 1 -->
```python
# an old title
```
'''
    found = doc_listings.listings("tiny.md", page)
    assert len(found) == 1 and found[0].command == "adsrc dump /tmp/tiny.py:f | head 1"
    diff = doc_listings.stale(found[0], page)
    assert diff and "# an old title" in diff
    fresh = doc_listings.refreshed(found[0], page)
    assert fresh.startswith("<!-- listing: adsrc dump /tmp/tiny.py:f | head 1 -->\n```python\n")
    assert "# Adjoint of f (/tmp/tiny.py:1) with respect to x; lazy accumulation." in fresh
    rewritten = page[:found[0].start] + fresh + page[found[0].end:]
    assert doc_listings.stale(doc_listings.listings("tiny.md", rewritten)[0], rewritten) is None


def test_a_listing_of_python_s_output_says_which_version_made_it():
    version = f"{sys.version_info[0]}.{sys.version_info[1]}"
    page = '''<!-- file: /tmp/hello.py -->
```python
print("hello")
```

<!-- listing: python /tmp/hello.py -->
```
```
'''
    listing = doc_listings.listings("hello.md", page)[0]
    assert doc_listings.refreshed(listing, page) == f"<!-- listing (Python {version}): python /tmp/hello.py -->\n```\nhello\n```"
    other = doc_listings.Listing("hello.md", 1, "python /tmp/hello.py", "2.7", "", "", 0, 0)
    assert not doc_listings.checkable(other) and doc_listings.checkable(listing)


def test_the_script_checks_every_page():
    out = subprocess.run([sys.executable, SCRIPT, "--check"], capture_output=True, text=True, cwd=ROOT, timeout=600)
    assert out.returncode == 0, out.stdout + out.stderr
    assert "every listing is current" in out.stdout


_TEAM_WORDS = re.compile(r"\bissues? \d+|\bissue's\b|\bsessions?\b|\bagents?\b|\bfetch tool\b", re.IGNORECASE)


@pytest.mark.parametrize("folder", ["docs", "examples", "benchmarks"])
def test_the_docs_speak_of_the_project_alone(folder):
    for name in sorted(os.listdir(os.path.join(ROOT, folder))):
        if name.endswith((".md", ".py")):
            with open(os.path.join(ROOT, folder, name), encoding="utf-8") as file:
                for number, line in enumerate(file, 1):
                    assert not _TEAM_WORDS.search(line), f"{folder}/{name}:{number}: {line.strip()}"


def test_every_install_line_is_venv_safe():
    """A bare ``pip install`` fails where the system Python refuses it (PEP 668): every install line runs
    the virtual environment's own pip."""
    files = ["README.md", *(os.path.join("docs", n) for n in os.listdir(os.path.join(ROOT, "docs"))),
             *(os.path.join("examples", n) for n in os.listdir(os.path.join(ROOT, "examples"))),
             "scripts/gen_rules_doc.py"]
    for name in files:
        with open(os.path.join(ROOT, name), encoding="utf-8") as file:
            for number, line in enumerate(file, 1):
                for m in re.finditer(r"\bpip\s+install\b", line):
                    safe = line[:m.start()].endswith(".venv/bin/python -m ") or "PEP 668" in line  # prose about it
                    assert safe, f"{name}:{number}: {line.strip()}"


def test_rules_doc_says_what_complex_values_get():
    with open(os.path.join(ROOT, "docs", "rules.md"), encoding="utf-8") as file:
        text = file.read()
    assert "not supported yet" not in text
    assert re.search(r"^\| `numpy\.fft\.fft` \| a \| yes \| yes \|", text, re.MULTILINE)
    assert re.search(r"\d+ of the \d+ rules are checked correct for complex values", text)
