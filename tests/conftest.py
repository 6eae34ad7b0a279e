import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# The slowest modules, marked `slow`: `python -m pytest -m "not slow"` leaves them out, for a quick run while
# developing (README.md says how long each takes). Measured on 2 cores, of about 9 minutes for the whole suite:
# test_dask 2.5 min (a LocalCluster), test_issue13_listed 1.8 min, test_cli 45 s (subprocesses),
# test_benchmarks_quick 30 s, test_dots 25 s, test_example_scripts and test_examples 25 s together.
SLOW_MODULES = frozenset({"test_dask.py", "test_issue13_listed.py", "test_cli.py", "test_benchmarks_quick.py",
                          "test_dots.py", "test_example_scripts.py", "test_examples.py"})


def pytest_itemcollected(item):
    if item.path.name in SLOW_MODULES:
        item.add_marker(pytest.mark.slow)


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Start the generated-program tests in worker processes (see background.py)."""
    import background

    if not config.option.collectonly:
        background.start(items)


def pytest_sessionfinish(session, exitstatus):
    import background

    background.stop()
