"""The public API: gradients (reverse mode), forward mode, second order; the Derivative they return.

Layer: the top. ``arguments`` and ``derivative`` are shared by the rest;
``trees`` flattens structured arguments; ``forward`` (jvp) comes before
``gradients`` (grad, vjp), which differentiate a gradient again through it;
``higher`` (hvp, hessian, jacobian) and ``checking`` (check_grads) use both.
"""
from .checking import check_grads
from .checkpointing import checkpoint, checkpoint_loop
from .derivative import Derivative
from .forward import jvp, jvp_source
from .gradients import Differentiated, adjoint_source, differentiate, grad, value_and_grad, vjp
from .higher import hessian, hvp, jacobian

__all__ = ["check_grads", "Derivative", "Differentiated", "adjoint_source", "differentiate", "grad", "hessian", "hvp", "jacobian",
           "jvp", "jvp_source", "value_and_grad", "vjp"]
__all__ += ["checkpoint", "checkpoint_loop"]
