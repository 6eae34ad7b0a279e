"""autograd.tracer: boxes and tracing are autograd-only."""
from ._only import AutogradOnly

primitive = AutogradOnly("autograd.tracer.primitive")
isbox = AutogradOnly("autograd.tracer.isbox")
getval = AutogradOnly("autograd.tracer.getval")
Box = AutogradOnly("autograd.tracer.Box")
notrace_primitive = AutogradOnly("autograd.tracer.notrace_primitive")
