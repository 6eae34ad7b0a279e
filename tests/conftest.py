import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))


@pytest.hookimpl(trylast=True)
def pytest_collection_modifyitems(session, config, items):
    """Start the generated-program tests in worker processes (see background.py)."""
    import background

    if not config.option.collectonly:
        background.start(items)


def pytest_sessionfinish(session, exitstatus):
    import background

    background.stop()
