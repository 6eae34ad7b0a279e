"""Samples (see tests/rule_samples.py) for the factorizations, statistics, signal and assembly families."""
from __future__ import annotations

import numpy as np

from rule_samples import C, Spec, arr, flt, nonzero, pos, with_nan  # noqa: F401

NUMPY_SAMPLES = {
    # ---- factorizations ---------------------------------------------------------------------------
    "numpy.linalg.svd": [C(arr(3, 4), full_matrices=False), C(arr(4, 3), False), C(arr(3, 3)),
                         C(arr(2, 3, 2), full_matrices=False), C(arr(3, 4), compute_uv=False),
                         C(arr(2, 3, 3), True)],
    "numpy.linalg.qr": [C(arr(4, 3)), C(arr(3, 3)), C(arr(2, 4, 3)), C(arr(3, 5)), C(arr(4, 3), mode="r"),
                        C(arr(3, 3), "complete"), C(arr(2, 4), mode="complete")],
    "numpy.linalg.pinv": [C(arr(3, 4)), C(arr(4, 3)), C(arr(3, 3)), C(arr(2, 3, 2))],
    "numpy.linalg.lstsq": [C(arr(5, 3), arr(5)), C(arr(5, 3), arr(5, 2)), C(arr(3, 5), arr(3)),
                           C(arr(4, 4), arr(4), rcond=None)],
}
