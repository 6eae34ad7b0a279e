"""Programs written by others, ported: each module is one example program that computes a gradient of NumPy code.

Every module was written for this corpus after reading another public project's example (named, with
its path, in the module's docstring: a citation of where the idea came from, not a copy). A module
exposes ``loss`` (the function to differentiate), ``ARGS`` (its arguments: arrays, floats, or lists,
tuples and dicts of them), ``WRT`` (the position or positions to differentiate with respect to) and,
optionally, ``JAX = False`` where the program cannot run under jax.numpy (a write into an array, a class)
and ``JAX_NAMES``, the globals to take from JAX instead (``{"gammaln": "jax.scipy.special.gammaln"}``).
tests/test_others_corpus.py checks each against central finite differences, lazy and eager, and
against JAX where it is installed.
"""
import importlib
import pkgutil

NAMES = sorted(m.name for m in pkgutil.iter_modules(__path__) if not m.name.startswith("_"))


def load(name: str):
    return importlib.import_module(f"{__name__}.{name}")
