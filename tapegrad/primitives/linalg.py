"""Linear-algebra primitives. Matrices live in the last two axes; leading axes are a batch.

``matmul`` only sees operands of rank >= 2: the op layer lifts vectors to matrices, so the
rules stay short. Batch axes broadcast, and the engine sums cotangents back to each input.
"""
import numpy as np

import tapegrad.ops as T
from tapegrad.core.dispatch import Primitive
from tapegrad.primitives.registry import broadcast_shapes, xp


def _mT(x):
    """Swap the last two axes."""
    return T.linalg.matrix_transpose(x)


def _matmul_abstract(a, b):
    if a.shape[-1] != b.shape[-2]:
        raise ValueError(f"matmul: inner dimensions differ: {tuple(a.shape)} @ {tuple(b.shape)}")
    batch = broadcast_shapes(a.shape[:-2], b.shape[:-2])
    return batch + (a.shape[-2], b.shape[-1]), np.result_type(a.dtype, b.dtype)


matmul_p = Primitive(
    "matmul", xp.matmul, nin=2, abstract=_matmul_abstract,
    vjp=(lambda g, ans, a, b: T.matmul(g, _mT(b)),
         lambda g, ans, a, b: T.matmul(_mT(a), g)),
    jvp=(lambda a_dot, ans, a, b: T.matmul(a_dot, b),
         lambda b_dot, ans, a, b: T.matmul(a, b_dot)),
    emit="{0} @ {1}")


def _matmul_batch(args, batched):
    a, b = args
    ba, bb = batched
    # Align batch ranks so the vmapped axis lines up with the other operand's batch axes.
    if ba and not bb and b.ndim > 2:
        a = T.reshape(a, (a.shape[0],) + (1,) * max(0, b.ndim - (a.ndim - 1)) + tuple(a.shape[1:]))
    if bb and not ba and a.ndim > 2:
        b = T.reshape(b, (b.shape[0],) + (1,) * max(0, a.ndim - (b.ndim - 1)) + tuple(b.shape[1:]))
    if ba and bb:
        ra, rb = a.ndim, b.ndim
        if ra < rb:
            a = T.reshape(a, (a.shape[0],) + (1,) * (rb - ra) + tuple(a.shape[1:]))
        elif rb < ra:
            b = T.reshape(b, (b.shape[0],) + (1,) * (ra - rb) + tuple(b.shape[1:]))
    if ba and not bb and b.ndim == 2 and a.ndim == 3:
        # (B, m, k) @ (k, n): one large GEMM on (B*m, k)
        B, m, k = a.shape
        out = matmul_p.bind_raw(T.reshape(a, (B * m, k)), b)
        return T.reshape(out, (B, m, b.shape[-1]))
    if not ba and bb and a.ndim == 2:
        # a (m, k) @ (B, k, n): broadcasting matmul
        return matmul_p.bind_raw(a, b)
    return matmul_p.bind_raw(a, b)


matmul_p.batch = _matmul_batch
