"""What derivatives are made of at run time: the zero, thunks and accumulators, container cotangents.

Layer 1: imports only ``adsrc.config``. Generated code reaches these through
``adsrc.runtime``; rules and the public API import them from here.
"""
from .containers import (TangentDict, TangentList, TangentTuple, add_tangents, as_tangent, drop_last, leaves,
                         part, to_tangent)
from .stacks import OuterStack, Stack
from .thunks import AccThunk, Thunk, accumulate, depth, unthunk
from .zero import Deferred, ZeroTangent, check_real_scalar, is_zero, is_zero_tree, seed, zero

__all__ = ["AccThunk", "Deferred", "OuterStack", "Stack", "TangentDict", "TangentList", "TangentTuple", "Thunk", "ZeroTangent",
           "accumulate", "add_tangents", "as_tangent", "check_real_scalar", "depth", "drop_last", "is_zero",
           "is_zero_tree", "leaves", "part", "seed", "to_tangent", "unthunk", "zero"]
