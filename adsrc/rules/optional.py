"""The rules of optional libraries (SciPy), registered only where the library is used.

adsrc needs only NumPy and gast, and importing it must stay fast: SciPy's
rules are not registered at ``import adsrc`` unless the program has already
imported the part of SciPy they cover. A rule module is loaded

* at import, for every library already in ``sys.modules``;
* when a lookup in the registry misses (``registry.on_miss``), for every
  library imported since: a function that calls ``scipy.special.erf`` is
  compiled after its module imported scipy.special, so its rule is found;
* by :func:`load`, for every library that is installed (the generated tests
  and docs/rules.md list them all).

``MODULES`` maps each rule module (in adsrc/rules) to the library it covers.
"""
from __future__ import annotations

import importlib
import sys

MODULES = {"scipy_special": "scipy.special", "scipy_stats": "scipy.stats", "scipy_multivariate": "scipy.stats",
           "scipy_linalg": "scipy.linalg", "scipy_linalg_solvers": "scipy.linalg", "scipy_signal": "scipy.signal"}
FAMILIES = {
    "scipy_special": "scipy.special (with SciPy installed)",
    "scipy_stats": "scipy.stats (with SciPy installed)",
    "scipy_multivariate": "scipy.stats, multivariate distributions (with SciPy installed)",
    "scipy_linalg": "scipy.linalg (with SciPy installed)",
    "scipy_linalg_solvers": "scipy.linalg: Sylvester equations, square roots, banded solves (with SciPy installed)",
    "scipy_signal": "scipy.signal (with SciPy installed)",
}
_loaded: list[str] = []


def _register(module: str) -> None:
    importlib.import_module(f"{__package__}.{module}")
    _loaded.append(module)


_modules_seen = [-1]  # how many modules were imported when load_imported last looked


def load_imported() -> bool:
    """Register the rules of every covered library the program has imported; True if any were new."""
    if len(sys.modules) == _modules_seen[0]:
        return False  # nothing imported since (the registry asks at every lookup)
    _modules_seen[0] = len(sys.modules)
    new = [m for m, library in MODULES.items() if m not in _loaded and library in sys.modules]
    for module in new:
        _register(module)
    return bool(new)


def load() -> list[str]:
    """Register the rules of every covered library that is installed (importing it); the modules loaded."""
    for module, library in MODULES.items():
        if module in _loaded:
            continue
        try:
            importlib.import_module(library)
        except ImportError:
            continue
        _register(module)
    return list(_loaded)


def loaded() -> list[str]:
    return list(_loaded)
