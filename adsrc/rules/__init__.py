"""Built-in gradient rules, one module per family. Importing this registers them.

``builtin_rules()`` lists the rules that adsrc itself defines (as opposed to
ones a user registered), for the generated tests and docs/rules.md.
"""
from __future__ import annotations

from .registry import rules as _all_rules
from . import (  # noqa: F401  (imported for their registrations)
    builtins, decompositions, elementwise, indexing, iterables, joins, linalg, nondiff, norms, pymath, reductions,
    nan_reductions, cumulative, histograms, shape,
)
from . import (  # noqa: F401  (issue 13's NumPy families)
    factorizations, least_squares, statistics, signal, assembly, conversions,
)
from . import closures  # noqa: F401  (local functions used as values)
from . import views  # noqa: F401  (writes through a view: the index into its array)
from . import complex_numbers, eig, fft  # noqa: F401  (after the families: it marks their complex-correct rules)
from . import spellings  # noqa: F401  (last: it copies the rules of the operators it spells otherwise)
from ._util import unbroadcast  # noqa: F401  (for users writing their own rules)
from . import optional as _optional
from .registry import on_miss as _on_miss

# The rules of optional libraries (SciPy): those the program has imported now, the others when a lookup
# misses after the program imports them (optional.py).
_optional.load_imported()
_on_miss(_optional.load_imported)
from .reductions import logsumexp  # noqa: F401

FAMILIES = {
    "elementwise": "Elementwise (NumPy ufuncs and operators)",
    "pymath": "The math module",
    "builtins": "Python builtins",
    "iterables": "Containers from containers: list, tuple, dict, a dict's views and get",
    "reductions": "Reductions",
    "nan_reductions": "NaN-ignoring reductions",
    "cumulative": "Scans and differences",
    "histograms": "Counting: bincount and histograms",
    "linalg": "Products and contractions",
    "norms": "Norms",
    "decompositions": "Matrix functions",
    "shape": "Shape, layout and conversions",
    "joins": "Joining and splitting",
    "indexing": "Indexing",
    "factorizations": "Factorizations: svd and qr",
    "least_squares": "Pseudo-inverse, least squares, condition number and tensor solves",
    "statistics": "Order statistics, covariance and nan-scans",
    "signal": "Signals, integration and polynomials",
    "assembly": "Building and selecting arrays",
    "conversions": "Conversions, numbers split in parts, spaced ranges",
    "complex_numbers": "Complex numbers",
    "fft": "Discrete Fourier transforms (np.fft)",
    "eig": "General eigendecomposition (complex outputs)",
    "spellings": "Other spellings: operator functions, constructors, scalar casts, ufunc methods",
    **_optional.FAMILIES,
}


def family(rule) -> str:
    """The family module a rule's vjp functions are defined in, or '' for a user's rule."""
    for vjp in rule.vjps:
        if vjp is not None:
            module = getattr(getattr(vjp, "__wrapped__", vjp), "__module__", "") or ""
            if module.startswith(__name__ + "."):
                return module.rsplit(".", 1)[1]
            return ""
    return ""


def builtin_rules():
    """The rules defined by adsrc's own rule modules, in registration order, those of every optional
    library that is installed included (SciPy is imported for them)."""
    _optional.load()
    return [r for r in _all_rules() if family(r)]
