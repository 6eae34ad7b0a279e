"""The public API: gradients (reverse mode), forward mode, second order; the Derivative they return.

Layer: the top. ``arguments`` and ``derivative`` are shared by the rest;
``trees`` flattens structured arguments (the pytree functions), ``ravel`` makes them one vector; ``forward`` (jvp) comes before
``gradients`` (grad, vjp), which differentiate a gradient again through it;
``higher`` (hvp, hessian, jacobian) and ``checking`` (check_grads) use both.
"""
from .checking import check_grads
from .checkpointing import checkpoint, checkpoint_loop
from .derivative import Derivative
from .forward import jvp, jvp_source
from .gradients import Differentiated, adjoint_source, differentiate, grad, value_and_grad, vjp
from .higher import hessian, hvp, jacobian
from . import nested_jvp  # noqa: F401  (the rule of jvp called inside a differentiated function)
from . import ode  # noqa: F401  (scipy.integrate.odeint's rule, registered once SciPy's integrate is imported)
from . import ode_ivp  # noqa: F401  (scipy.integrate.solve_ivp's, likewise)
from .ravel import ravel_pytree
from .trees import TreeStructure, tree_flatten, tree_leaves, tree_map, tree_structure, tree_unflatten

__all__ = ["check_grads", "Derivative", "Differentiated", "adjoint_source", "differentiate", "grad", "hessian", "hvp", "jacobian",
           "jvp", "jvp_source", "value_and_grad", "vjp"]
__all__ += ["checkpoint", "checkpoint_loop"]
__all__ += ["TreeStructure", "ravel_pytree", "tree_flatten", "tree_leaves", "tree_map", "tree_structure",
            "tree_unflatten"]
