"""``tf.keras.backend``'s activations and losses of the Keras 2 era (``K.relu``,
``K.softmax``, ``K.binary_crossentropy``...): part of ``keras/legacy_backend.py``, which
exports them, kept apart so each module stays small. Each is the TensorFlow operation it
always was, with its clipping of probabilities (``epsilon()``) where Keras 2 had one.

>>> from tapegrad.keras import backend as K
>>> [float(v) for v in K.relu(K.constant([-1.0, 2.0, 9.0]), max_value=6.0)]
[0.0, 2.0, 6.0]
"""
from tapegrad.keras import _tf as tf
from tapegrad.keras import backend as _config
from tapegrad.ops import special_ops as _special
from tapegrad.ops.nn_ops import relu6 as _relu6


def _tensor(x):
    return x if tf.is_tensor(x) else tf.convert_to_tensor(x)



# -- activations --------------------------------------------------------------------------
def relu(x, alpha=0.0, max_value=None, threshold=0.0):
    """Leaky (``alpha``), capped (``max_value``) and shifted (``threshold``) ReLU.

    >>> from tapegrad.keras import backend as K
    >>> K.relu(K.constant([-2.0, 1.0, 9.0]), alpha=0.5, max_value=6.0).numpy()
    array([-1.,  1.,  6.], dtype=float32)
    """
    x = _tensor(x)
    if alpha != 0.0:
        if max_value is None and threshold == 0:
            return tf.nn.leaky_relu(x, alpha=alpha)
        negative_part = tf.nn.relu(-x + threshold) if threshold != 0 else tf.nn.relu(-x)
    clip_max = max_value is not None
    if threshold != 0:
        x = x * tf.cast(tf.greater(x, threshold), x.dtype)
    elif max_value == 6:
        x = _relu6(x)
        clip_max = False
    else:
        x = tf.nn.relu(x)
    if clip_max:
        x = tf.clip_by_value(x, tf.constant(0, dtype=x.dtype),
                             tf.constant(max_value, dtype=x.dtype))
    if alpha != 0.0:
        x = x - tf.constant(alpha, dtype=x.dtype) * negative_part
    return x


def elu(x, alpha=1.0):
    res = tf.nn.elu(x)
    return res if alpha == 1 else tf.where(x > 0, res, alpha * res)


def hard_sigmoid(x):
    """``clip(0.2 x + 0.5, 0, 1)`` (tf.keras's slope, not Keras 3's 1/6)."""
    x = _tensor(x)
    return tf.clip_by_value(x * tf.constant(0.2, x.dtype) + tf.constant(0.5, x.dtype), 0.0, 1.0)


def softsign(x):
    return _special.softsign(x)


def softmax(x, axis=-1):
    """Softmax over ``axis`` (an int or a tuple of axes); rank-1 inputs are refused."""
    x = _tensor(x)
    if len(x.shape) <= 1:
        raise ValueError(f"Cannot apply softmax to a tensor that is 1D. Received input: {x}")
    if isinstance(axis, int):
        return tf.nn.softmax(x, axis=axis)
    numerator = tf.exp(x - tf.reduce_max(x, axis=axis, keepdims=True))
    return numerator / tf.reduce_sum(numerator, axis=axis, keepdims=True)


def l2_normalize(x, axis=None):
    return tf.math.l2_normalize(x, axis=axis)


def stop_gradient(variables):
    if isinstance(variables, (list, tuple)):
        return map(tf.stop_gradient, variables)
    return tf.stop_gradient(variables)


def bias_add(x, bias, data_format=None):
    """Add ``bias`` (1-D, or of the input's rank minus one) along the channels axis."""
    data_format = _config.standardize_data_format(data_format)
    bias_shape = tuple(bias.shape)
    if len(bias_shape) != 1 and len(bias_shape) != len(x.shape) - 1:
        raise ValueError(f"Unexpected bias dimensions {len(bias_shape)}. "
                         f"Expected it to be 1 or {len(x.shape) - 1} dimensions")
    if len(bias_shape) == 1:
        return tf.nn.bias_add(x, bias, data_format="NCHW" if data_format == "channels_first"
                              else "NHWC")
    if data_format == "channels_first":
        return x + tf.reshape(bias, (1, bias_shape[-1]) + bias_shape[:-1])
    return x + tf.reshape(bias, (1,) + bias_shape)


# -- losses (tf.keras's formulas: clipped by epsilon, not the Keras 3 losses) -------------
def binary_crossentropy(target, output, from_logits=False):
    """Elementwise binary cross-entropy; probabilities are clipped to [eps, 1 - eps] and eps
    is added inside the logs."""
    target, output = _tensor(target), _tensor(output)
    if from_logits:
        return tf.nn.sigmoid_cross_entropy_with_logits(labels=target, logits=output)
    eps = _config.epsilon()
    output = tf.clip_by_value(output, tf.constant(eps, output.dtype),
                              tf.constant(1.0 - eps, output.dtype))
    bce = target * tf.math.log(output + eps)
    bce += (1 - target) * tf.math.log(1 - output + eps)
    return -bce


def categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy over ``axis``; probabilities are renormalised and clipped first."""
    target, output = _tensor(target), _tensor(output)
    if tuple(target.shape) != tuple(output.shape):
        raise ValueError(f"Shapes {tuple(target.shape)} and {tuple(output.shape)} are "
                         "incompatible")
    if from_logits:
        return tf.nn.softmax_cross_entropy_with_logits(labels=target, logits=output, axis=axis)
    output = output / tf.reduce_sum(output, axis, True)
    eps = _config.epsilon()
    output = tf.clip_by_value(output, tf.constant(eps, output.dtype),
                              tf.constant(1.0 - eps, output.dtype))
    return -tf.reduce_sum(target * tf.math.log(output), axis)


def sparse_categorical_crossentropy(target, output, from_logits=False, axis=-1):
    """Cross-entropy of integer labels against probabilities (clipped) or logits."""
    target, output = tf.cast(_tensor(target), tf.int64), _tensor(output)
    if not from_logits:
        eps = tf.constant(_config.epsilon(), output.dtype)
        output = tf.math.log(tf.clip_by_value(output, eps, 1 - eps))
    rank = len(output.shape)
    axis %= rank
    if axis != rank - 1:
        output = tf.transpose(output, [*range(axis), *range(axis + 1, rank), axis])
    out_shape = tf.shape(output)
    update_shape = len(target.shape) != rank - 1
    if update_shape:
        target = tf.reshape(target, [-1])
        output = tf.reshape(output, [-1, out_shape[-1]])
    res = tf.nn.sparse_softmax_cross_entropy_with_logits(labels=target, logits=output)
    if update_shape and rank >= 3:
        res = tf.reshape(res, out_shape[:-1])
    return res
