"""The interpreter: evaluate a program by calling ``bind`` for each equation.

Because every step goes through the dispatcher, evaluation under an active tape records the
operations (so a compiled function stays differentiable), under ``vmap`` it batches, and
inside a trace it stages equations (so a program can be inlined into another).
"""
from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, convert_to_tensor


def evaluate(program, inputs, captures=()):
    """Run ``program``; return ``(outputs, updates)``, lists of tensors.

    ``inputs`` and ``captures`` are tensors (or arrays) in the order of ``program.inputs`` and
    ``program.captures``. ``updates[k]`` is the new value for capture
    ``program.updates[k][0]``; applying it is the caller's business.

    >>> import numpy as np, tapegrad as tf
    >>> from tapegrad.ir import Var, Equation, Program, evaluate
    >>> from tapegrad.core.dispatch import PRIMITIVES
    >>> x = Var("x", (2,), np.dtype("float32")); y = Var("y", (2,), np.dtype("float32"))
    >>> p = Program((x,), (), (), (Equation(PRIMITIVES["neg"], (x,), (), (y,)),), (y,))
    >>> evaluate(p, [tf.constant([1.0, 2.0])])[0][0].numpy().tolist()
    [-1.0, -2.0]
    """
    if len(inputs) != len(program.inputs):
        raise TypeError(f"{program.name} takes {len(program.inputs)} inputs, "
                        f"got {len(inputs)}")
    if len(captures) != len(program.captures):
        raise TypeError(f"{program.name} takes {len(program.captures)} captured values, "
                        f"got {len(captures)}")
    env = {}
    for v, x in zip(program.inputs, inputs):
        env[v.name] = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=v.dtype)
    for v, x in zip(program.captures, captures):
        env[v.name] = x if isinstance(x, Tensor) else convert_to_tensor(x, dtype=v.dtype)
    for c in program.constants:
        env[c.var.name] = Tensor._wrap(c.value)
    for e in program.equations:
        out = bind(e.prim, *[env[v.name] for v in e.inputs], **dict(e.params))
        if len(e.outs) == 1:
            env[e.outs[0].name] = out
        else:
            for v, o in zip(e.outs, out):
                env[v.name] = o
    outputs = [env[v.name] for v in program.outputs]
    updates = [env[v.name] for _, v in program.updates]
    return outputs, updates
