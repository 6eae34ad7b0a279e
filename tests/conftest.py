import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))

# The slowest modules, marked `slow`: `python -m pytest -m "not slow"` leaves them out, for a quick run while
# developing (README.md says how long it takes). Of the whole suite's CPU time (about 20 minutes: 9 to 10 minutes
# on 2 cores), the generated-program tests that run in worker processes (test_properties, test_fuzz,
# test_differential, test_random_objects) take about 7.5 minutes; test_dask about 4 (a LocalCluster),
# test_issue13_listed 3, test_cli 1.3 (subprocesses), test_benchmarks_quick, test_dots, test_example_scripts
# and test_examples 2 together; test_others_corpus_jax about 1 (JAX, where installed, runs op by op).
SLOW_MODULES = frozenset({"test_properties.py", "test_fuzz.py", "test_differential.py", "test_random_objects.py",
                          "test_dask.py", "test_issue13_listed.py", "test_cli.py", "test_benchmarks_quick.py",
                          "test_dots.py", "test_example_scripts.py", "test_examples.py", "test_random_nested.py",
                          "test_random_aliases.py", "test_others_corpus_jax.py", "test_random_constructs.py"})


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
