"""autograd.extend: defining primitives and vspaces is autograd-only (adsrc: register_adjoint)."""
from ._only import AutogradOnly

primitive = AutogradOnly("autograd.extend.primitive")
defvjp = AutogradOnly("autograd.extend.defvjp")
defjvp = AutogradOnly("autograd.extend.defjvp")
defvjp_argnum = AutogradOnly("autograd.extend.defvjp_argnum")
defjvp_argnum = AutogradOnly("autograd.extend.defjvp_argnum")
def_linear = AutogradOnly("autograd.extend.def_linear")
vspace = AutogradOnly("autograd.extend.vspace")
VSpace = AutogradOnly("autograd.extend.VSpace")
Box = AutogradOnly("autograd.extend.Box")
notrace_primitive = AutogradOnly("autograd.extend.notrace_primitive")
