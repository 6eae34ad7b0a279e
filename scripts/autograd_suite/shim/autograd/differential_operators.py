"""autograd's differential operators, each mapped onto adsrc's.

``argnum`` (autograd) is adsrc's ``wrt``; ``fun(*args, **kwargs)`` is bound
by ``_bridge.bind`` so that adsrc differentiates exactly the arguments
autograd would.
"""
import types

import numpy as np

import adsrc
from adsrc.api.derivative import Derivative
from adsrc.api.higher import Jacobian
from adsrc.rules.registry import defjvp, defvjp

from . import _only
from ._bridge import as_type_error, bind


class _TypedDerivative(Derivative):
    """An adsrc Derivative whose refusals of arguments or outputs are also TypeErrors, as autograd's are."""

    def __call__(self, *args, **kwargs):
        _only.derivative_calls.append(self.order)
        return as_type_error(Derivative.__call__)(self, *args, **kwargs)


class _TypedJacobian(Jacobian):
    """An adsrc Jacobian whose calls are counted, like _TypedDerivative's, with TypeErrors as autograd's."""

    def __call__(self, *args, **kwargs):
        _only.derivative_calls.append(self.order)
        return as_type_error(Jacobian.__call__)(self, *args, **kwargs)


def _direct(fun) -> bool:
    """Whether adsrc takes ``fun`` as it is: a Python function, or a derivative or Jacobian adsrc made."""
    return isinstance(fun, (Derivative, Jacobian)) or (isinstance(fun, types.FunctionType)
                                                       and not fun.__module__.startswith("autograd"))


def _nary(name, build, adsrc_operator=None):
    """``op(fun, argnum=0)(*args, **kwargs)`` from ``build(g, xs, wrt)``, g(*xs) being the bound call.

    With ``adsrc_operator`` (adsrc.grad...), a Python function goes to it
    directly: the result is an adsrc Derivative, which adsrc can differentiate
    again when a differentiated function calls it (autograd's grad(grad(f))).
    """
    def operator(fun, argnum=0):
        if isinstance(fun, _only.AutogradOnly):
            _only.skip(fun._name)
        if adsrc_operator is not None and _direct(fun):
            derivative = adsrc_operator(fun, wrt=tuple(argnum) if isinstance(argnum, list) else argnum)
            if type(derivative) is Derivative:
                derivative.__class__ = _TypedDerivative
            elif type(derivative) is Jacobian:
                derivative.__class__ = _TypedJacobian
            return derivative

        @as_type_error
        def run(*args, **kwargs):
            _only.derivative_calls.append(1)
            g, xs, wrt = bind(fun, argnum, args, kwargs)
            return build(g, xs, wrt)
        run.__name__ = getattr(fun, "__name__", "fun")
        return run
    operator.__name__ = operator.__qualname__ = name
    return operator


grad = _nary("grad", lambda g, xs, wrt: adsrc.grad(g, wrt=wrt)(*xs), adsrc.grad)
value_and_grad = _nary("value_and_grad", lambda g, xs, wrt: adsrc.value_and_grad(g, wrt=wrt)(*xs), adsrc.value_and_grad)
grad_and_aux = _nary("grad_and_aux", lambda g, xs, wrt: adsrc.grad(g, wrt=wrt, has_aux=True)(*xs),
                     lambda fun, wrt: adsrc.grad(fun, wrt=wrt, has_aux=True))

# Called inside a differentiated function on a local function g (``grad(inner)(y)`` in f), they make an adsrc
# Derivative of g, whose cotangent is g's own, as adsrc.grad's rule says (adsrc/api/gradients.py).
for _operator in (grad, value_and_grad, grad_and_aux):
    defvjp(_operator, lambda g, ans, fun, argnum=0: g, None)
    defjvp(_operator, lambda t, ans, fun, argnum=0: t, None, piecewise_linear=True)
jacobian = _nary("jacobian", lambda g, xs, wrt: adsrc.jacobian(g, wrt=wrt)(*xs), adsrc.jacobian)
hessian = _nary("hessian", lambda g, xs, wrt: adsrc.hessian(g, wrt=wrt)(*xs), adsrc.hessian)


def _ones_like(value):
    if isinstance(value, (tuple, list)):
        return type(value)(_ones_like(v) for v in value)
    if isinstance(value, dict):
        return {k: _ones_like(v) for k, v in value.items()}
    if np.iscomplexobj(value):
        raise TypeError("elementwise_grad only applies to real-output functions")
    return np.ones_like(value) if isinstance(value, np.ndarray) else type(value)(1.0)


def _elementwise(g, xs, wrt):
    value, pullback = adsrc.vjp(g, *xs, wrt=wrt)
    return pullback(_ones_like(value))


elementwise_grad = _nary("elementwise_grad", _elementwise)


def _make_vjp(g, xs, wrt):
    value, pullback = adsrc.vjp(g, *xs, wrt=wrt)
    return pullback, value


make_vjp = _nary("make_vjp", _make_vjp)


def _make_jvp(g, xs, wrt):
    chosen = wrt if isinstance(wrt, tuple) else (wrt,)

    def jvp(v):
        vs = v if isinstance(wrt, tuple) else (v,)
        tangents = tuple(vs[chosen.index(i)] if i in chosen else None for i in range(len(xs)))
        return adsrc.jvp(g, xs, tangents)
    return jvp


make_jvp = _nary("make_jvp", _make_jvp)


def _deriv(g, xs, wrt):
    x = xs[wrt]
    one = np.ones_like(x) if isinstance(x, np.ndarray) else type(x)(1.0)
    return adsrc.jvp(g, xs, tuple(one if i == wrt else None for i in range(len(xs))))[1]


deriv = _nary("deriv", _deriv)


def _holomorphic(g, xs, wrt):
    # autograd: the gradient of Re f, read as the complex derivative (adsrc's complex convention decides)
    value, pullback = adsrc.vjp(g, *xs, wrt=wrt)
    return pullback(np.ones_like(value) if isinstance(value, np.ndarray) else type(value)(1.0))


holomorphic_grad = _nary("holomorphic_grad", _holomorphic)


def _make_hvp(g, xs, wrt):
    value, pullback = adsrc.vjp(adsrc.grad(g, wrt=wrt), *xs, wrt=wrt)
    return pullback, value


make_hvp = _nary("make_hvp", _make_hvp)


def hessian_tensor_product(fun, argnum=0):
    """``(*args, v) -> H v``: adsrc.hvp (autograd contracts over all of v's axes, as hvp does)."""
    def run(*args, **kwargs):
        *args, vector = args
        g, xs, wrt = bind(fun, argnum, tuple(args), kwargs)
        return adsrc.hvp(g, wrt=wrt)(*xs, vector)
    return run


hessian_vector_product = hessian_tensor_product


def tensor_jacobian_product(fun, argnum=0):
    """``(*args, v) -> tensordot(v, J, ndim(v))``: the vjp of ``fun`` with cotangent ``v`` when ``v`` has the
    output's shape; else ``v`` contracts the output's leading axes, through adsrc's Jacobian."""
    def run(*args, **kwargs):
        *args, vector = args
        g, xs, wrt = bind(fun, argnum, tuple(args), kwargs)
        value, pullback = adsrc.vjp(g, *xs, wrt=wrt)
        if np.shape(vector) == np.shape(value):
            return pullback(vector)
        return np.tensordot(vector, adsrc.jacobian(g, wrt=wrt)(*xs), axes=np.ndim(vector))
    return run


vector_jacobian_product = tensor_jacobian_product


def grad_named(fun, argname):
    return lambda *args, **kwargs: adsrc.grad(fun, wrt=argname)(*args, **kwargs)


def checkpoint(fun):
    """adsrc.checkpoint where adsrc has it (recompute instead of storing); else ``fun``, same derivative."""
    return adsrc.checkpoint(fun) if hasattr(adsrc, "checkpoint") else fun


make_ggnvp = _only.AutogradOnly("autograd.make_ggnvp")
multigrad_dict = _only.AutogradOnly("autograd.multigrad_dict")
