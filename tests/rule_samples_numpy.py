"""Samples (see tests/rule_samples.py) for the factorizations, statistics, signal and assembly families."""
from __future__ import annotations

import numpy as np

from rule_samples import C, Spec, arr, flt, nonzero, pflt, pos, with_nan  # noqa: F401

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
    # ---- statistics -------------------------------------------------------------------------------
    "numpy.quantile": [C(arr(7), 0.3), C(arr(3, 5), np.array([0.1, 0.5, 0.95]), axis=1),
                       C(arr(2, 3, 4), 0.25, (0, 2), keepdims=True), C(arr(6), 0.4, method="nearest"),
                       C(arr(6), np.array([[0.2], [0.7]]), method="median_unbiased"), C(arr(4, 3), 0.6, 0)],
    "numpy.percentile": [C(arr(7), 30.0), C(arr(3, 5), [10.0, 90.0], 1), C(arr(5), 50.0, method="midpoint")],
    "numpy.median": [C(arr(7)), C(arr(6)), C(arr(3, 4), axis=0), C(arr(2, 3, 4), (1, 2), keepdims=True)],
    "numpy.nanquantile": [C(with_nan(arr(7)), 0.3), C(with_nan(arr(3, 5)), np.array([0.2, 0.8]), axis=1)],
    "numpy.nanpercentile": [C(with_nan(arr(7)), 40.0), C(with_nan(arr(3, 4)), 75.0, 0, keepdims=True)],
    "numpy.nanmedian": [C(with_nan(arr(7))), C(with_nan(arr(3, 4)), axis=1), C(arr(2, 5), 1)],
    "numpy.partition": [C(arr(6), 2), C(arr(3, 5), [1, 3]), C(arr(4, 3), 1, axis=0), C(arr(2, 3), 4, None)],
    "numpy.cov": [C(arr(3, 6)), C(arr(6), arr(6)), C(arr(6, 2), rowvar=False), C(arr(2, 5), arr(5), bias=True),
                  C(arr(2, 5), ddof=2), C(arr(7))],
    "numpy.corrcoef": [C(arr(3, 6)), C(arr(6), arr(6)), C(arr(5, 2), None, False), C(arr(2, 5), arr(1, 5))],
    "numpy.nancumsum": [C(with_nan(arr(5))), C(with_nan(arr(3, 4)), axis=1), C(arr(2, 3))],
    "numpy.nancumprod": [C(with_nan(nonzero(5))), C(with_nan(nonzero(3, 4)), 0), C(nonzero(2, 3))],
    # ---- signal -------------------------------------------------------------------------------------
    "numpy.convolve": [C(arr(5), arr(3)), C(arr(3), arr(5), "same"), C(arr(4), arr(2), "same"), C(arr(6), arr(3), "valid"),
                       C(arr(2), arr(5), mode="valid"), C(arr(3), arr(4), "same"), C(arr(1), arr(3))],
    "numpy.correlate": [C(arr(5), arr(3)), C(arr(2), arr(3), "same"), C(arr(4), arr(5), "same"), C(arr(5), arr(2), "full"),
                        C(arr(3), arr(6), mode="valid"), C(arr(4), arr(4), "same")],
    # (xp as integers: the singular-point test would move a float xp out of increasing order, where NumPy's
    # result means nothing)
    "numpy.interp": [C(arr(6, lo=-1.5, hi=3.5), np.array([-1, 0, 2, 3]), arr(4)),
                     C(arr(2, 3, lo=-1.5, hi=3.5), np.array([-1, 0, 2, 3]), arr(4), flt(), flt()),
                     C(flt(-0.9, 2.9), np.array([-1, 0, 2, 3]), arr(4)),
                     C(arr(5, lo=-3.0, hi=3.0), np.array([1]), arr(1), None, flt())],
    "numpy.trapezoid": [C(arr(5)), C(arr(3, 4), arr(4)), C(arr(3, 4), arr(3, 4), axis=0), C(arr(3, 4), None, flt()),
                        C(arr(2, 5), dx=0.3), C(arr(4, 3), np.array([0.0, 0.5, 2.0, 2.5]), axis=0)],
    "numpy.gradient": [C(arr(6)), C(arr(5), 0.5), C(arr(5), np.array([0.0, 0.3, 1.0, 1.2, 2.0])), C(arr(4, 5)),
                       C(arr(4, 5), axis=1), C(arr(6), edge_order=2), C(arr(3, 4), 2.0, 0.5, edge_order=2),
                       C(arr(2)), C(arr(3, 5), np.array([0.0, 1.0, 3.0]), axis=0, edge_order=2)],
    "numpy.unwrap": [C(arr(6, lo=-6.0, hi=6.0)), C(arr(3, 4, lo=-6.0, hi=6.0), axis=0), C(arr(5, lo=-4, hi=4), period=3.0)],
    "numpy.ediff1d": [C(arr(5)), C(arr(2, 3), arr(2), flt()), C(arr(4), None, arr(3)), C(arr(3), to_end=flt())],
    "numpy.polyval": [C(arr(4), arr(5)), C(arr(3), flt()), C(arr(1), arr(2)), C(arr(3, 2), arr(2))],
    "numpy.polyadd": [C(arr(3), arr(5)), C(arr(4), arr(2)), C(arr(3), arr(3))],
    "numpy.polysub": [C(arr(3), arr(5)), C(arr(4), arr(2))],
    "numpy.polymul": [C(arr(3), arr(4)), C(arr(1), arr(3))],
    "numpy.polyder": [C(arr(5)), C(arr(5), 2), C(arr(4), 3)],
    "numpy.polyint": [C(arr(4)), C(arr(3), 2), C(arr(3), 2, [1.0, 2.0])],
    "numpy.vander": [C(arr(4)), C(arr(3), 5), C(arr(3), 2, True), C(arr(4), increasing=True)],
    # ---- assembly -----------------------------------------------------------------------------------
    "numpy.select": [C([np.array([True, False, False]), np.array([False, True, False])], [arr(3), arr(3)], flt()),
                     C([np.array([[True], [False]]), np.array([True, True, False])], [arr(2, 3), arr(3)], arr(2, 3)),
                     C([np.array([False, True])], [arr(2)])],
    "numpy.choose": [C(np.array([0, 2, 1, 0]), [arr(4), arr(4), arr(4)]), C(np.array([[0], [1]]), [arr(3), arr(2, 3)]),
                     C(np.array([3, -1, 1]), [arr(3), arr(3)], mode="wrap"), C(np.array([5, 0]), [arr(2), flt()], None,
                                                                                "clip")],
    "numpy.meshgrid": [C(arr(3), arr(2)), C(arr(3), arr(2), indexing="ij"), C(arr(2), arr(3), arr(4)),
                       C(arr(3), arr(2), sparse=True), C(arr(4)), C(arr(2), arr(3), arr(2), indexing="ij", sparse=True),
                       C(*[arr(1) for _ in range(31)], arr(2))],  # every one of the 32 positions
    "numpy.broadcast_arrays": [C(arr(3), arr(2, 1)), C(arr(2, 3), flt(), arr(1, 3)), C(*[arr(1) for _ in range(31)], arr(2))],
    "numpy.block": [C([arr(2), arr(3)]), C([[arr(2, 2), arr(2, 1)], [arr(1, 3)]]), C([[arr(2, 2), arr(2, 2)]]),
                    C([[flt(), flt()], [flt(), flt()]])],
    "numpy.row_stack": [C([arr(3), arr(2, 3)])],
    "numpy.compress": [C(np.array([True, False, True]), arr(3)), C([False, True], arr(2, 3), axis=1),
                       C(np.array([1, 0, 1]), arr(3, 2), 0), C([True, False, True, True], arr(2, 2))],
    "numpy.extract": [C(np.array([[True, False], [True, True]]), arr(2, 2)), C(np.array([1, 0, 3]), arr(3))],
    "numpy.resize": [C(arr(3), (2, 4)), C(arr(2, 3), 4), C(arr(2, 2), (3, 3))],
    "numpy.delete": [C(arr(5), 1), C(arr(3, 4), [0, 2], 1), C(arr(3, 2), slice(0, 2), axis=0)],
    "numpy.insert": [C(arr(4), 1, flt()), C(arr(4), [1, 3], arr(2)), C(arr(2, 3), 1, arr(3), 0),
                     C(arr(2, 3), [0, 0], arr(2, 1), axis=1), C(arr(3), 2, arr(2))],
    "adsrc.rules.assembly.index_concatenate": [
        # (items mixed with directives, slices and integers: tests/test_numpy_rules.py, through adsrc.grad)
        C(np.r_, (arr(3), arr(2))), C(np.c_, (arr(3), arr(3, 2))), C(np.r_, arr(3)), C(np.c_, (arr(2), arr(2))),
        C(np.r_, (flt(), arr(2), flt()))],
    # ---- conversions --------------------------------------------------------------------------------
    "numpy.asfortranarray": [C(arr(2, 3)), C([flt(), flt()])],
    "numpy.asarray_chkfinite": [C(arr(3)), C(arr(2, 2), np.float64)],
    "numpy.require": [C(arr(2, 3)), C(arr(3), None, ["F"])],
    "numpy.real_if_close": [C(arr(4))],
    "numpy.frexp": [C(nonzero(5)), C(arr(2, 3)), C(flt())],
    "numpy.modf": [C(arr(5, lo=-3.0, hi=3.0)), C(flt(0.1, 0.9))],
    "numpy.divmod": [C(arr(4, lo=-5.0, hi=5.0), pos(4)), C(arr(2, 3, lo=-5.0, hi=5.0), flt(0.7, 1.3)),
                     C(arr(3, lo=-5.0, hi=5.0), arr(2, 1, lo=0.6, hi=1.5))],
    "numpy.nextafter": [C(arr(4), arr(4)), C(arr(2, 3), flt())],
    "numpy.geomspace": [C(pflt(), flt(3.0, 5.0), 5), C(flt(-2.0, -0.5), flt(-5.0, -3.0), 4, False),
                        C(pos(2), pos(2), 3, axis=1), C(pos(2), pflt(), 4)],
    "numpy.logspace": [C(flt(), flt(), 5), C(flt(), flt(), 4, False, 2), C(arr(2), arr(2), 3, axis=1),
                       C(flt(), flt(), 4, base=3)],  # (an int base: the singular points move float arguments)
}
