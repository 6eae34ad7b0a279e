"""Functions whose output carries no gradient: shapes, indices, comparisons, rounding.

Their results are integers, booleans or piecewise constants (a cast to a
NumPy integer type, ``np.int64(x)``, as ``int(x)``), so the compiler
treats their outputs as constants instead of raising NoGradientRule. A function
whose result carries a gradient through one of its arguments does not belong
here, even if the others are indices: np.bincount (its weights), np.histogram
(weights and edges), np.unique (a selection of elements), np.full and
np.full_like (the fill value), np.arange (start and step) and np.heaviside (x2
where x1 == 0) have rules of their own.
"""
from __future__ import annotations

import builtins
import math
import operator

import numpy as np

from .registry import defmethod, register_nondifferentiable
from ..values.arrays import is_array, is_dict, is_number


def _present(module, *names):
    return [getattr(module, n) for n in names if hasattr(module, n)]


register_nondifferentiable(
    # shapes and sizes
    *_present(np, "shape", "size", "ndim", "result_type", "broadcast_shapes", "iscomplexobj", "isrealobj",
              "isscalar", "may_share_memory", "shares_memory"),
    # indices and counts
    *_present(np, "argmax", "argmin", "argsort", "argwhere", "nonzero", "flatnonzero", "searchsorted", "digitize",
              "count_nonzero", "unravel_index", "ravel_multi_index", "nanargmax", "nanargmin", "argpartition",
              "indices", "tril_indices", "triu_indices", "diag_indices"),
    # rounding and sign: piecewise constant
    *_present(np, "floor", "ceil", "trunc", "fix", "round", "around", "rint", "sign", "signbit",
              "floor_divide", "spacing"),
    # comparisons and logic
    *_present(np, "greater", "greater_equal", "less", "less_equal", "equal", "not_equal", "logical_and",
              "logical_or", "logical_not", "logical_xor", "isnan", "isinf", "isfinite", "isclose", "allclose",
              "array_equal", "array_equiv", "all", "any", "isin", "iscomplex", "isreal"),
    # casts to integer and boolean types (np.int64(x), as int(x)): piecewise constant
    *sorted({getattr(np, n) for n in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
                                       "intp", "uintp", "intc", "uintc", "byte", "ubyte", "short", "ushort",
                                       "longlong", "ulonglong", "bool_") if hasattr(np, n)}, key=str),
    # constructors of constants
    *_present(np, "zeros", "ones", "empty", "eye", "identity", "tri", "zeros_like", "ones_like", "empty_like"),
    operator.lt, operator.le, operator.gt, operator.ge, operator.eq, operator.ne, operator.not_,
    operator.truth, operator.is_, operator.is_not, operator.contains, operator.floordiv,
    builtins.len, builtins.range, builtins.int, builtins.bool, builtins.round, builtins.isinstance,
    builtins.type, builtins.id, builtins.hash,
    math.floor, math.ceil, math.trunc, math.isnan, math.isinf, math.isfinite, math.isclose,
    math.factorial, math.comb, math.perm, math.gcd,
)

register_nondifferentiable(is_array, is_number, is_dict)  # the entry checks of generated code (receivers.py)

for _name in ("argmax", "argmin", "argsort", "nonzero", "round", "all", "any"):
    defmethod(_name, getattr(np, _name))
