"""The rules of optional libraries, registered only where the library is installed.

adsrc needs only NumPy and gast. Where SciPy imports, the modules named in
``MODULES`` register rules for scipy.special, scipy.stats and scipy.linalg;
where it does not, nothing is registered and nothing fails. ``loaded()``
lists the modules that registered their rules.
"""
from __future__ import annotations

import importlib

# rule module (in adsrc/rules) -> the library it needs
MODULES = {"scipy_special": "scipy", "scipy_stats": "scipy", "scipy_linalg": "scipy"}
FAMILIES = {
    "scipy_special": "scipy.special (with SciPy installed)",
    "scipy_stats": "scipy.stats (with SciPy installed)",
    "scipy_linalg": "scipy.linalg (with SciPy installed)",
}
_loaded: list[str] = []


def _available(library: str) -> bool:
    try:
        importlib.import_module(library)
    except ImportError:
        return False
    return True


def load() -> list[str]:
    """Import the rule module of each optional library that is installed (once)."""
    for module, library in MODULES.items():
        if module not in _loaded and _available(library):
            importlib.import_module(f"{__package__}.{module}")
            _loaded.append(module)
    return list(_loaded)


def loaded() -> list[str]:
    return list(_loaded)
