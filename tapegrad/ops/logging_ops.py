"""``tf.print``."""
import sys

import numpy as np

from tapegrad.core.dispatch import bind
from tapegrad.core.tensor import Tensor, Variable
from tapegrad.primitives import effects

__all__ = ["print"]


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: print tensors' values (to stderr by default, as TensorFlow).

    Eagerly it prints at once. Inside ``tapegrad.function`` it is staged: the compiled
    program prints the values each time it runs, in the order of the source, also inside
    converted ``if`` branches and loops (a ``print`` primitive that advances a token
    variable, ``primitives/effects.py``). Python's ``print`` runs once, while tracing.

    >>> import sys, tapegrad as tf
    >>> tf.print("x:", tf.constant([1, 2, 3]), output_stream=sys.stdout)
    x: [1 2 3]
    >>> @tf.function
    ... def f(x):
    ...     tf.print("x + 1 =", x + 1, output_stream=sys.stdout)
    ...     return x
    >>> _ = f(tf.constant(1)); _ = f(tf.constant(2))
    x + 1 = 2
    x + 1 = 3
    """
    from tapegrad.core.state import STATE
    stream = "stderr" if output_stream is None else output_stream
    if isinstance(stream, str):  # TensorFlow's "file://..." and named streams
        stream = "stdout" if stream in ("stdout", "sys.stdout") else "stderr"
    elif stream is sys.stdout or stream is sys.stderr:
        stream = "stdout" if stream is sys.stdout else "stderr"
    edge = None if summarize is None else int(summarize)
    tensors = []
    template = tuple(effects.encode(v, tensors, lambda t: isinstance(t, Tensor))
                     for v in inputs)
    if STATE.stack.tracers:
        token = _token()
        token.assign(bind(effects.print_p, token.read_value(), *tensors, template=template,
                          summarize=edge, sep=effects.codes(sep), end=effects.codes(end),
                          stream=stream))
        return None
    if any(getattr(t, "_symbolic", False) for t in tensors):
        raise NotImplementedError("tapegrad.print cannot print the examples of a vmap "
                                  "eagerly; call it outside the vmap, or in a tf.function.")
    effects.write(template, [np.asarray(t._value) for t in tensors], edge, effects.codes(sep),
                  effects.codes(end), stream)


_TOKEN = []


def _token():
    """The variable ``tf.print`` advances inside a trace (made once, outside every trace)."""
    if not _TOKEN:
        from tapegrad.core.state import interpreters
        with interpreters(()):
            _TOKEN.append(Variable(np.int32(0), trainable=False, name="print_token"))
    return _TOKEN[0]
