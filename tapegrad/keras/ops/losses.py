"""``keras.ops``' cross-entropies, ``sparsemax`` (Keras 3's TensorFlow backend formulas: probabilities clipped
to [epsilon, 1 - epsilon], no epsilon inside the logs), ``multi_hot`` and ``psnr``.

Keras also reads logits hidden on the output of its own ``sigmoid``/``softmax`` layers (a
``_keras_logits`` attribute); tapegrad tensors carry none, so probabilities are always taken
as given (the same values unless they saturate to within epsilon of 0 or 1).

>>> from tapegrad.keras import ops
>>> round(float(ops.binary_crossentropy([1.0], [0.5])[0]), 5)
0.69315
"""
import math

from tapegrad.keras import _tf as tf
from tapegrad.keras import backend
from tapegrad.keras.ops.arrays import one_hot
from tapegrad.keras.ops.extra import _t

__all__ = ["binary_crossentropy", "categorical_crossentropy",
           "sparse_categorical_crossentropy", "multi_hot", "psnr", "sparsemax"]


def _same_shape(target, output, what="the same shape"):
    if len(target.shape) != len(output.shape):
        raise ValueError("Arguments `target` and `output` must have the same rank (ndim). "
                         f"Received: target.shape={target.shape}, output.shape={output.shape}")
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"Arguments `target` and `output` must have {what}. Received: "
                         f"target.shape={target.shape}, output.shape={output.shape}")


def _clip(output):
    eps = backend.epsilon()
    return tf.clip_by_value(output, tf.constant(eps, output.dtype),
                            tf.constant(1.0 - eps, output.dtype))


def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy of probabilities (or logits).

    >>> round(float(binary_crossentropy([0.0], [0.0], from_logits=True)[0]), 5)
    0.69315
    """
    target, output = _t(target), _t(output)
    _same_shape(target, output)
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    output = _clip(output)
    return -(target * tf.math.log(output) + (1 - target) * tf.math.log(1 - output))


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy over ``axis``; probabilities are renormalised to sum to 1, then clipped.

    >>> round(float(categorical_crossentropy([[0.0, 1.0]], [[0.5, 0.5]])[0]), 5)
    0.69315
    """
    target, output = _t(target), _t(output)
    if len(target.shape) < 1:
        raise ValueError("Arguments `target` and `output` must be at least rank 1. Received: "
                         f"target.shape={target.shape}, output.shape={output.shape}")
    _same_shape(target, output)
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    output = _clip(output / tf.reduce_sum(output, axis, keepdims=True))
    return -tf.reduce_sum(target * tf.math.log(output), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer labels against probabilities (clipped) or logits; only the
    last axis, as Keras's TensorFlow backend.

    >>> round(float(sparse_categorical_crossentropy([1], [[0.5, 0.5]])[0]), 5)
    0.69315
    """
    target, output = _t(target), _t(output)
    if axis != -1 and axis != len(output.shape) - 1:
        raise ValueError(f"Only axis=-1 is currently supported. Received: axis={axis}")
    target = tf.cast(target, "int64")
    if len(target.shape) == len(output.shape) and target.shape[-1] == 1:
        target = tf.squeeze(target, axis=-1)
    if len(output.shape) < 1:
        raise ValueError("Argument `output` must be at least rank 1. Received: "
                         f"output.shape={output.shape}")
    if tuple(target.shape) != tuple(output.shape[:-1]):
        raise ValueError("Arguments `target` and `output` must have the same shape up until "
                         f"the last dimension: target.shape={target.shape}, "
                         f"output.shape={output.shape}")
    if not from_logits:
        output = tf.math.log(_clip(output))
    return tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)


def multi_hot(inputs, num_classes=None, axis=-1, dtype=None, sparse=False, **kwargs):
    """One row per sample with 1 at each of its class indices (``float32`` by default).

    >>> multi_hot([[0, 2], [1, 1]], 3).numpy().tolist()
    [[1.0, 0.0, 1.0], [0.0, 1.0, 0.0]]
    """
    if sparse:
        raise NotImplementedError("tapegrad has no sparse multi_hot")
    num_classes = kwargs.pop("num_tokens", num_classes)
    x = _t(inputs)
    reduction_axis = 1 if x.ndim > 1 else 0
    if dtype is not None and tf.as_dtype(dtype).name == "bool":
        # any class present: the int8 one-hot's maximum, as booleans
        out = one_hot(x, num_classes, axis=axis, dtype="int8")
        return tf.cast(tf.reduce_max(out, axis=reduction_axis), "bool")
    return tf.reduce_max(one_hot(x, num_classes, axis=axis, dtype=dtype), axis=reduction_axis)


def psnr(x1, x2, max_val):
    """The peak signal-to-noise ratio, 20 log10(max_val) - 10 log10(mse), in dB.

    >>> round(float(psnr([0.0, 1.0], [0.0, 0.9], 1.0)), 4)
    23.0103
    """
    x1, x2 = _t(x1), _t(x2)
    if tuple(x1.shape) != tuple(x2.shape):
        raise ValueError(f"Input shapes {x1.shape} and {x2.shape} must match for PSNR "
                         "calculation. ")
    max_val = tf.cast(_t(max_val), x2.dtype)
    mse = tf.reduce_mean(tf.square(x1 - x2))
    ln10 = tf.constant(math.log(10.0), x2.dtype)
    return 20 * tf.math.log(max_val) / ln10 - 10 * tf.math.log(mse) / ln10


def sparsemax(x, axis=-1):
    """The Euclidean projection of ``x`` onto the probability simplex along ``axis``
    (Martins and Astudillo 2016): a softmax whose small entries are exactly 0.

    >>> sparsemax([0.0, 1.0, 3.0]).numpy().tolist()
    [0.0, 0.0, 1.0]
    """
    logits = _t(x)
    srt = tf.sort(logits, direction="DESCENDING", axis=axis)
    csum = tf.cumsum(srt, axis=axis)
    shape = [1] * logits.ndim
    shape[axis] = -1
    r = tf.reshape(tf.range(1, logits.shape[axis] + 1, dtype=logits.dtype), shape)
    support = srt - (csum - 1) / r > 0
    k = tf.reduce_sum(tf.cast(support, logits.dtype), axis=axis, keepdims=True)
    tau = (tf.reduce_sum(tf.where(support, csum, tf.zeros_like(csum)), axis=axis,
                         keepdims=True) - 1) / k
    return tf.maximum(logits - tau, tf.zeros_like(logits))
