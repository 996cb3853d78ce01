"""``keras.ops``' ``dot_product_attention``, ``batch_normalization`` and
``layer_normalization``, with the numerics of Keras 3's TensorFlow backend: attention's
logits and softmax in at least float32, normalizations computed in at least float32 and
returned in the input's dtype.

>>> import numpy as np
>>> from tapegrad.keras import ops
>>> q = np.ones((1, 3, 2, 4), "float32")
>>> tuple(ops.dot_product_attention(q, q, q, is_causal=True).shape)
(1, 3, 2, 4)
"""
import warnings

import numpy as np

from tapegrad.errors import InvalidArgumentError
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.extra import _t
from tapegrad.keras.ops.numeric import result_type
from tapegrad.ops.gather_ops import repeat as _repeat

__all__ = ["dot_product_attention", "batch_normalization", "layer_normalization"]

# Keras's "minus infinity" for masked logits: finite, so a fully masked row is uniform
_LARGE_NEGATIVE = -0.7 * 3.38953e38


def _at_least_float32(dtype):
    return "float64" if np.dtype(dtype) == np.float64 else "float32"


def _einsum(subscripts, a, b):
    """A contraction of one index; half precision adds the (rounded) products one at a time
    in half precision, as TensorFlow's CPU kernel does (float32 sums round differently)."""
    if a.dtype.name not in ("float16", "bfloat16"):
        return tf.einsum(subscripts, a, b)
    inputs, out = subscripts.split("->")
    sa, sb = inputs.split(",")
    (index,) = set(sa) & set(sb) - set(out)
    reduced = f"{sa.replace(index, '')},{sb.replace(index, '')}->{out}"
    total = None
    for i in range(a.shape[sa.index(index)]):
        term = tf.einsum(reduced, tf.gather(a, i, axis=sa.index(index)),
                         tf.gather(b, i, axis=sb.index(index)))
        total = term if total is None else total + term
    return total


def _masked(logits, mask, is_causal):
    keep = None if mask is None else tf.cast(_t(mask), "bool")
    if is_causal:
        t, s = logits.shape[-2], logits.shape[-1]
        # query i sees keys j <= i (the lower triangle, also when T != S)
        causal = tf.expand_dims(tf.range(t), 1) >= tf.expand_dims(tf.range(s), 0)
        keep = causal if keep is None else tf.logical_and(keep, causal)
    if keep is None:
        return logits
    keep = tf.logical_and(tf.ones_like(logits, dtype="bool"), keep)
    return tf.where(keep, logits, tf.constant(_LARGE_NEGATIVE, logits.dtype))


def dot_product_attention(query, key, value, bias=None, mask=None, scale=None,
                          is_causal=False, flash_attention=None, attn_logits_soft_cap=None):
    """softmax(scale * Q K^T + bias, masked) V over inputs ``(batch, length, heads, dim)``.

    ``scale`` defaults to 1 / sqrt(dim); ``mask`` (booleans, broadcast to
    ``(batch, heads, T, S)``) keeps the logits where it is True; ``is_causal`` lets query
    ``i`` see keys ``j <= i``. Fewer key/value heads than query heads (more than one) are
    repeated, grouped-query attention. The logits and softmax are computed in at least
    float32, the result has the inputs' promoted dtype.

    >>> import numpy as np
    >>> q = np.zeros((1, 2, 1, 2), "float32"); v = np.array([1.0, 3.0], "float32").reshape(1, 2, 1, 1)
    >>> ops_out = dot_product_attention(q, q, v, is_causal=True)
    >>> ops_out.numpy().reshape(-1).tolist()
    [1.0, 2.0]
    """
    if flash_attention:
        raise ValueError("Flash attention is not supported in tensorflow backend.")
    if attn_logits_soft_cap is not None:
        raise ValueError("attn_logits_soft_cap is only supported for JAX on TPU. "
                         "Set attn_logits_soft_cap=None when not using JAX on TPU.")
    q, k, v = _t(query), _t(key), _t(value)
    if q.ndim != 4:
        raise ValueError("`dot_product_attention` only supports 4D inputs. Received: "
                         f"query.shape={tuple(q.shape)}, key.shape={tuple(k.shape)}, "
                         f"value.shape={tuple(v.shape)}.")
    dtype = result_type(q, k, v)
    q, k, v = tf.cast(q, dtype), tf.cast(k, dtype), tf.cast(v, dtype)
    heads, kv_heads = q.shape[2], k.shape[2]
    if heads > kv_heads > 1:
        k = _repeat(k, heads // kv_heads, axis=2)
        v = _repeat(v, heads // kv_heads, axis=2)
    if k.shape[2] != heads or v.shape[2] != k.shape[2]:
        raise InvalidArgumentError(f"query has {heads} heads, key {k.shape[2]} and value "
                                   f"{v.shape[2]}: they must be equal (or divide) [Op:Einsum]")
    if scale is None:
        # 1 / sqrt(dim) in float32 whatever the inputs' dtype, as Keras's backend
        scale = tf.math.rsqrt(tf.constant(float(k.shape[-1]), "float32"))
    logits_dtype = _at_least_float32(dtype)
    logits = tf.cast(_einsum("btnh,bsnh->bnts", q, k), logits_dtype)
    logits = logits * tf.cast(_t(scale), logits_dtype)
    if bias is not None:
        logits = logits + tf.cast(tf.cast(_t(bias), dtype), logits_dtype)
    logits = _masked(logits, mask, is_causal)
    probs = tf.cast(tf.nn.softmax(logits, axis=-1), dtype)
    return _einsum("bnts,bsnh->btnh", probs, v)


def batch_normalization(x, mean, variance, axis, offset=None, scale=None, epsilon=1e-3):
    """(x - mean) * scale / sqrt(variance + epsilon) + offset, the statistics given along
    ``axis`` (vectors of ``x.shape[axis]``), computed as ``tf.nn.batch_normalization``.

    >>> batch_normalization([[1.0, 3.0]], [2.0, 2.0], [1.0, 1.0], -1, epsilon=0.0).numpy().tolist()
    [[-1.0, 1.0]]
    """
    x = _t(x)
    stats = [None if s is None else _t(s) for s in (mean, variance, offset, scale)]
    if axis != -1:
        shape = [1] * x.ndim
        shape[axis] = stats[0].shape[0]
        stats = [None if s is None else tf.reshape(s, shape) for s in stats]
    mean, variance, offset, scale = stats
    return tf.nn.batch_normalization(x, mean, variance, offset, scale, epsilon)


def layer_normalization(x, gamma=None, beta=None, axis=-1, epsilon=None, **kwargs):
    """Each example normalized to mean 0 and variance 1 over ``axis`` (an int or a list),
    then times ``gamma`` plus ``beta``; computed in at least float32, returned in ``x``'s
    dtype (``epsilon`` defaults to ``keras.config.epsilon()``).

    >>> [round(v, 4) for v in layer_normalization([1.0, 3.0]).numpy().tolist()]
    [-1.0, 1.0]
    """
    rms_scaling = kwargs.pop("rms_scaling", False)
    if rms_scaling:
        warnings.warn("You passed `rms_scaling=True`, which is deprecated. This argument "
                      "incorrectly scales the input by the variance, not the root mean square. "
                      "To correctly use RMS Normalization, please use "
                      "`keras.ops.rms_normalization` / `keras.ops.nn.rms_normalization` instead.",
                      stacklevel=2)
    epsilon = backend.epsilon() if epsilon is None else epsilon
    x = _t(x)
    original = x.dtype
    x = tf.cast(x, _at_least_float32(x.dtype))
    gamma = None if gamma is None else tf.cast(_t(gamma), x.dtype)
    beta = None if beta is None else tf.cast(_t(beta), x.dtype)
    axes = sorted(a % x.ndim for a in ([axis] if isinstance(axis, int) else axis))
    shape = [x.shape[d] if d in axes else 1 for d in range(x.ndim)]

    def broadcast(w):
        # a weight of the normalized axes' shape lines up with them
        if w is None or w.ndim == x.ndim or axes == [x.ndim - 1]:
            return w
        return tf.reshape(w, shape)

    eps = tf.constant(epsilon, x.dtype)
    if rms_scaling:
        _, variance = tf.nn.moments(x, axes=axes, keepdims=True)
        out = x * tf.math.rsqrt(variance + eps)
        if gamma is not None:
            out = out * broadcast(gamma)
        return tf.cast(out, original)
    mean, variance = tf.nn.moments(x, axes=axes, keepdims=True)
    inv = tf.math.rsqrt(variance + eps)
    if gamma is not None:
        inv = inv * broadcast(gamma)
    shift = -mean * inv
    if beta is not None:
        shift = shift + broadcast(beta)
    return tf.cast(x * inv + shift, original)
