"""adsrc: source-transformation automatic differentiation for Python and NumPy.

adsrc rewrites a function's source into adjoint Python code that you can
print, diff and step through. Gradient contributions are lazy thunks,
accumulated into flat AccThunks that fuse and add in place when they are
materialized; ``adsrc.eager_unthunk()`` switches to eager accumulation.
"""
from . import errors, optimizers
from .api import (Derivative, Differentiated, TreeStructure, adjoint_source, check_grads, differentiate, grad,
                  hessian, hvp, jacobian, jvp, jvp_source, ravel_pytree, tree_flatten, tree_leaves, tree_map,
                  tree_structure, tree_unflatten, value_and_grad, vjp)
from .api.checkpointing import checkpoint, checkpoint_loop
from .api.diagnostics import cache_info
from .api.explain import explain
from .api.elementwise import elementwise_grad
from .api.implicit import fixed_point
from .api.minimize import minimize
from .api.vmap import vmap
from .api import derived_tangents as _derived_tangents  # noqa: F401  (installs the tangent of vjp-only rules)
from .config import config, eager_unthunk
from .errors import AdsrcError
from .rules.registry import register_adjoint, register_nondifferentiable
from .values import AccThunk, Thunk, ZeroTangent, accumulate, unthunk, zero
from .values.pytrees import register_pytree

__version__ = "0.1.0"

__all__ = [
    "register_pytree",
    "grad", "value_and_grad", "vjp", "differentiate", "Differentiated", "adjoint_source",
    "config", "eager_unthunk", "errors", "AdsrcError", "register_adjoint",
    "register_nondifferentiable", "Thunk", "AccThunk", "ZeroTangent", "zero", "unthunk",
    "accumulate", "jvp", "jvp_source", "hvp", "hessian", "jacobian", "Derivative", "check_grads", "checkpoint",
    "checkpoint_loop", "cache_info", "explain", "tree_map", "tree_leaves", "tree_structure", "tree_flatten", "tree_unflatten",
    "TreeStructure", "ravel_pytree", "optimizers",
    "elementwise_grad", "fixed_point", "minimize", "vmap",
]
