"""Reading a variable is an operation: ``read_variable`` links a Variable to the snapshot
tensor its read gives, so that a tape can send the snapshot's gradient to the variable.
Tapes record it when asked ``read_variable`` (the interpreter protocol, ``core/state.py``); it
is the identity on values.
"""
from tapegrad.core.dispatch import Primitive

read_variable_p = Primitive(
    "read_variable", lambda v: v, nin=1, emit="{0}",
    abstract=lambda v: (tuple(v.shape), v.dtype),
    vjp=(lambda g, ans, v: g,), jvp=(lambda t, ans, v: t,),
    batch=lambda args, batched: args[0], complex="real_linear")
