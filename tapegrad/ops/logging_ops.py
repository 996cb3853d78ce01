"""``tf.print``."""
import builtins

import numpy as np

from tapegrad.core.tensor import Tensor

__all__ = ["print"]


def print(*inputs, output_stream=None, summarize=3, sep=" ", end="\n", name=None):
    """``tf.print``: print tensors' values (to stderr by default, as TensorFlow).

    Runs eagerly only. Inside ``tapegrad.function`` it cannot be staged into the compiled
    program (which has no side effects), and printing once at tracing time would be wrong,
    so it raises; use Python's ``print`` for trace-time messages there.

    >>> import sys, tapegrad as tf
    >>> tf.print("x:", tf.constant([1, 2, 3]), output_stream=sys.stdout)
    x: [1 2 3]
    """
    import sys
    from tapegrad.core.state import STATE
    from tapegrad.util import nest
    if STATE.stack.tracers or any(getattr(t, "_symbolic", False) for t in nest.flatten(inputs)):
        raise NotImplementedError(
            "tapegrad.print cannot run inside tapegrad.function (or vmap): the compiled "
            "program has no side effects. Call it outside, or use Python's print, which "
            "runs once at tracing time.")
    edge = None if summarize is None else int(summarize)
    opts = {"separator": " "}
    if edge is not None and edge >= 0:
        opts.update(threshold=2 * edge, edgeitems=edge)
    else:
        opts.update(threshold=sys.maxsize)

    def fmt(v):
        if isinstance(v, Tensor):
            a = np.asarray(v._value)
            return str(a.item()) if a.ndim == 0 else np.array2string(a, **opts)
        if isinstance(v, (list, tuple)):
            parts = [fmt(e) for e in v]
            return ("[" + ", ".join(parts) + "]") if isinstance(v, list) else \
                ("(" + ", ".join(parts) + ")")
        if isinstance(v, dict):
            return "{" + ", ".join(f"{k!r}: {fmt(e)}" for k, e in v.items()) + "}"
        return str(v)

    stream = sys.stderr if output_stream is None else output_stream
    if isinstance(stream, str):  # TensorFlow's "file://..." and named streams
        stream = sys.stdout if stream in ("stdout", "sys.stdout") else sys.stderr
    builtins.print(sep.join(fmt(v) for v in inputs), end=end, file=stream)
