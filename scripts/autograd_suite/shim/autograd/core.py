"""autograd.core: make_vjp and make_jvp of a one-argument function; the rest is autograd-only."""
import adsrc

from ._only import AutogradOnly


def make_vjp(fun, x):
    value, pullback = adsrc.vjp(fun, x)
    return pullback, value


def make_jvp(fun, x):
    return lambda v: adsrc.jvp(fun, (x,), (v,))


vspace = AutogradOnly("autograd.core.vspace")
primitive_vjps = AutogradOnly("autograd.core.primitive_vjps")
primitive_jvps = AutogradOnly("autograd.core.primitive_jvps")
defvjp = AutogradOnly("autograd.core.defvjp")
defjvp = AutogradOnly("autograd.core.defjvp")
VSpace = AutogradOnly("autograd.core.VSpace")
primitive_with_deprecation_warnings = AutogradOnly("autograd.core.primitive")
primitive = AutogradOnly("autograd.core.primitive")
defgrad = AutogradOnly("autograd.core.defgrad")
